//! The gate's terminal view: the verdict line, the counts, a table of the
//! flagged lines (one per finding group, as in the PR comment: an op's
//! shapes together, with its Δ, impact and why), the advice of the top
//! lines, one line for the info findings, and the workloads' notes, all
//! fitted to the width the binary measured. Prose wraps at spaces; the
//! table wraps cells at word and identifier boundaries
//! ([`fit`](crate::render::fit)), tighter on a narrow terminal. Colour is
//! comfy-table's cell styling, never escape codes inside a cell, so it
//! costs no width. Every trace string goes through [`printable`]: it
//! reaches a terminal or a CI log.

use std::fmt::Write;

use comfy_table::{Attribute, Cell, CellAlignment, Color};

use super::finding::{headline_text, kind_label, status, title};
use super::gaps::{PATH_B, gap_sections};
use super::group::{GroupView, findings_in, group_views, line_counts};
use crate::gate::judge::verdict_groups;
use crate::gate::verdict::{Severity, Verdict};
use crate::render::fit::{NAME_BREAKS, Rule, Wrap, fit, paragraph, table};
use crate::render::terminal::Style;
use crate::render::text::{NAME_CHARS, compact_dims, printable, shorten};

/// The columns of a group's line, in the order they are drawn.
#[derive(Clone, Copy, PartialEq)]
enum Column {
    /// `FAIL`, `warn` or `accepted`.
    Severity,
    Workload,
    Op,
    Shapes,
    Delta,
    Impact,
    Why,
}

impl Column {
    fn header(self) -> &'static str {
        match self {
            Column::Severity => "",
            Column::Workload => "workload",
            Column::Op => "op",
            Column::Shapes => "shapes",
            Column::Delta => "Δ",
            Column::Impact => "impact",
            Column::Why => "why",
        }
    }

    /// The column's width rule; `narrow`: the layout for a narrow
    /// terminal, where names may take three lines and the rest gives way.
    fn rule(self, narrow: bool) -> Rule {
        let name = Wrap {
            breaks: NAME_BREAKS,
            ..Wrap::new(8)
        };
        match self {
            Column::Severity | Column::Delta | Column::Impact => Rule::Fixed,
            Column::Workload => Rule::Wrap(Wrap { max: 24, ..name }),
            Column::Op if narrow => Rule::Wrap(Wrap {
                min: 12,
                max: 40,
                lines: 3,
                ..name
            }),
            Column::Op => Rule::Wrap(Wrap {
                min: 20,
                max: 48,
                ..name
            }),
            Column::Shapes => Rule::Wrap(Wrap {
                min: if narrow { 8 } else { 12 },
                max: 28,
                lines: 2,
                breaks: &[','],
            }),
            Column::Why => Rule::Wrap(Wrap {
                min: if narrow { 10 } else { 12 },
                max: 32,
                lines: 3,
                breaks: &[','],
            }),
        }
    }

    fn is_number(self) -> bool {
        matches!(self, Column::Delta | Column::Impact)
    }

    /// The cell's text (not yet wrapped).
    fn text(self, g: &GroupView) -> String {
        match self {
            Column::Severity if g.inconclusive => "UNSURE".to_string(),
            Column::Severity => severity_word(g.level).to_string(),
            Column::Workload => printable(&g.workload),
            Column::Op => printable(&shorten(&g.op, NAME_CHARS)),
            Column::Shapes => printable(&match &g.dims {
                Some(dims) => shorten(&compact_dims(dims), 80),
                None => g.shapes.clone(),
            }),
            Column::Delta => g.delta.clone(),
            Column::Impact => g.impact.clone(),
            Column::Why => printable(&g.why),
        }
    }
}

fn severity_word(severity: Severity) -> &'static str {
    match severity {
        Severity::Fail => "FAIL",
        Severity::Warn => "warn",
        Severity::Accepted => "accepted",
        Severity::Info => "info",
    }
}

/// The columns: a workload column only when there are several workloads.
fn columns(multi_workload: bool) -> Vec<Column> {
    use Column::*;
    let mut columns = vec![Severity];
    if multi_workload {
        columns.push(Workload);
    }
    columns.extend_from_slice(&[Op, Shapes, Delta, Impact, Why]);
    columns
}

/// How many failing or warning lines get their advice printed under the
/// table: the reader's next step for the top lines, not a report.
const ADVISED: usize = 2;

/// The terminal view: the verdict line, the counts, then the first `top`
/// flagged lines (one per group: an op's shapes together, most important
/// first) as a table, the advice of the top ones, one line for the info
/// findings, who accepted what, and the workloads' notes, fitted to
/// `style.width` columns.
pub fn render_terminal(verdict: &Verdict, top: usize, style: Style) -> String {
    let mut out = headline(verdict, style);
    let groups = verdict_groups(verdict);
    let (flagged, info) = group_views(verdict, &groups, None);
    let lines = line_counts(&groups);
    let (failing, warning) = (lines.failing, lines.warning);
    let c = &verdict.counts;
    let inconclusive = if lines.inconclusive > 0 {
        format!(" · {}\u{a0}inconclusive", lines.inconclusive)
    } else {
        String::new()
    };
    // Non-breaking spaces keep each count with its label when the line wraps.
    let counts = format!(
        "{failing}\u{a0}failing{inconclusive} · {warning}\u{a0}warning{} · {}\u{a0}improvement{} · {}\u{a0}unchanged · {}\u{a0}new\u{a0}ops · {}\u{a0}missing\u{a0}ops{}",
        plural(warning),
        lines.improvements,
        plural(lines.improvements),
        c.unchanged,
        c.new,
        c.missing,
        accepted_count(lines.accepted)
    );
    out.push_str(&paragraph(&counts, style.width, "  ", "  ").replace('\u{a0}', " "));
    let shown: Vec<&GroupView> = flagged.iter().take(top).collect();
    if !shown.is_empty() {
        let multi_workload = verdict.workloads.len() > 1;
        let _ = writeln!(out, "{}", groups_table(&shown, multi_workload, style));
        let more = flagged.len() - shown.len();
        if more > 0 {
            let text = format!("… and {more} more lines (report.json has them all)");
            out.push_str(&paragraph(&text, style.width, "  ", "  "));
        }
        let advised = shown
            .iter()
            .filter(|g| matches!(g.level, Severity::Fail | Severity::Warn) && g.advice.is_some());
        for g in advised.take(ADVISED) {
            let text = format!(
                "{}: {}",
                printable(&g.op),
                printable(g.advice.as_deref().unwrap_or_default())
            );
            out.push_str(&paragraph(&text, style.width, "  ", "    "));
        }
    }
    gap_tables(verdict, style, &mut out);
    if let Some(line) = info_line(&info) {
        out.push_str(&paragraph(&line, style.width, "  ", "    "));
    }
    accepted_lines(verdict, style.width, &mut out);
    for w in &verdict.workloads {
        for note in &w.notes {
            let text = format!("note ({}): {}", printable(&w.name), printable(note));
            out.push_str(&paragraph(&text, style.width, "  ", "    "));
        }
    }
    out
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Info findings in one line: they never change the outcome, and most
/// (efficiency) have no Δ or impact to put in a row.
fn info_line(info: &[GroupView]) -> Option<String> {
    let findings = findings_in(info);
    if findings == 0 {
        return None;
    }
    let mut kinds: Vec<&str> = Vec::new();
    for g in info {
        let kind = kind_label(g.kind);
        if !kinds.contains(&kind) {
            kinds.push(kind);
        }
    }
    Some(format!(
        "+ {findings} info finding{} ({}): --out-dir writes {} to report.json",
        plural(findings),
        kinds.join(", "),
        if findings == 1 { "it" } else { "them" }
    ))
}

/// The verdict line, coloured by outcome: the status and the headline's
/// summary, then the top finding it quotes on lines of its own.
fn headline(verdict: &Verdict, style: Style) -> String {
    let (icon, status) = status(verdict);
    let text = printable(headline_text(&verdict.headline));
    let top = verdict.findings.first().map(|f| printable(&f.message));
    // The headline is "summary: top finding's message"; split it there so
    // the summary gets a line of its own at any width.
    let (summary, detail) = top
        .as_deref()
        .filter(|m| !m.is_empty())
        .and_then(|m| text.strip_suffix(m))
        .and_then(|s| s.strip_suffix(": "))
        .map_or((text.as_str(), ""), |summary| {
            (summary, &text[summary.len() + 2..])
        });
    let first = format!("{icon} tracegate: ");
    let mut lines = if summary.is_empty() {
        paragraph(status, style.width, &first, "   ")
    } else {
        paragraph(&title(status, summary), style.width, &first, "   ")
    };
    if !detail.is_empty() {
        lines.push_str(&paragraph(detail, style.width, "   ", "   "));
    }
    if !style.color {
        return lines;
    }
    let colour = match status {
        "fail" => "1;31",
        "pass" => "1;32",
        _ => "1;33",
    };
    lines
        .lines()
        .map(|line| format!("\x1b[{colour}m{line}\x1b[0m\n"))
        .collect()
}

/// The lines as a table: the normal layout, else the narrow one, else
/// (narrower than either) the narrow one wrapped by comfy-table.
fn groups_table(shown: &[&GroupView], multi_workload: bool, style: Style) -> comfy_table::Table {
    let columns = columns(multi_workload);
    let header: Vec<&str> = columns.iter().map(|c| c.header()).collect();
    let cells: Vec<Vec<String>> = shown
        .iter()
        .map(|g| columns.iter().map(|c| c.text(g)).collect())
        .collect();
    let fitted = [false, true].into_iter().find_map(|narrow| {
        let rules: Vec<Rule> = columns.iter().map(|c| c.rule(narrow)).collect();
        fit(&header, &cells, &rules, style.width)
    });
    let (mut table, cells) = match fitted {
        Some(fitted) => (table(&header, style.color, None), fitted),
        None => (table(&header, style.color, Some(style.width)), cells),
    };
    for (g, row) in shown.iter().zip(cells) {
        table.add_row(row.into_iter().zip(&columns).map(|(text, &column)| {
            let cell = Cell::new(text);
            match (column, g.level, style.color) {
                (Column::Severity, Severity::Fail, true) => {
                    cell.fg(Color::Red).add_attribute(Attribute::Bold)
                }
                (Column::Severity, Severity::Warn, true) => cell.fg(Color::Yellow),
                (Column::Severity, Severity::Accepted, true) => cell.fg(Color::Cyan),
                _ => cell,
            }
        }));
    }
    for (index, column) in columns.iter().enumerate() {
        if column.is_number() {
            if let Some(c) = table.column_mut(index) {
                c.set_cell_alignment(CellAlignment::Right);
            }
        }
    }
    table
}

/// The cross-platform day-one report ([`gaps`](super::gaps)): per
/// workload, the ops furthest behind what the candidate's hardware
/// explains, then what the kernel team does with them.
fn gap_tables(verdict: &Verdict, style: Style, out: &mut String) {
    let sections = gap_sections(verdict, None);
    let multi_workload = verdict.workloads.len() > 1;
    for section in &sections {
        let title = format!(
            "{}where {} is behind what its hardware explains ({}), for information:",
            if multi_workload {
                format!("{}: ", printable(&section.workload))
            } else {
                String::new()
            },
            printable(&section.candidate),
            printable(&section.platforms),
        );
        out.push_str(&paragraph(&title, style.width, "  ", "    "));
        let header = ["op", "measured", "expected", "behind", "eff. b→c", "beyond"];
        let cells: Vec<Vec<String>> = section
            .rows
            .iter()
            .map(|r| {
                vec![
                    printable(&format!("{} {}", r.op, shorten(&r.shape, 30))),
                    r.measured.clone(),
                    r.expected.clone(),
                    r.behind.clone(),
                    r.efficiency.replace(" → ", "→"),
                    r.beyond.clone(),
                ]
            })
            .collect();
        let op = Rule::Wrap(Wrap {
            min: 12,
            max: 44,
            lines: 3,
            breaks: NAME_BREAKS,
        });
        let mut rules = vec![op];
        rules.extend([Rule::Fixed; 5]);
        let (mut table, cells) = match fit(&header, &cells, &rules, style.width) {
            Some(fitted) => (table(&header, style.color, None), fitted),
            None => (table(&header, style.color, Some(style.width)), cells),
        };
        for row in cells {
            table.add_row(row);
        }
        for index in 1..header.len() {
            if let Some(c) = table.column_mut(index) {
                c.set_cell_alignment(CellAlignment::Right);
            }
        }
        let _ = writeln!(out, "{table}");
        if section.more > 0 {
            let text = format!("… and {} more in report.json", section.more);
            out.push_str(&paragraph(&text, style.width, "  ", "  "));
        }
    }
    if !sections.is_empty() {
        out.push_str(&paragraph(PATH_B, style.width, "  ", "    "));
    }
}

/// One line per accept entry that covered findings: which, and why.
fn accepted_lines(verdict: &Verdict, width: u16, out: &mut String) {
    let mut seen: Vec<(&str, &str, &str)> = Vec::new();
    for a in verdict.findings.iter().filter_map(|f| f.accepted.as_ref()) {
        let key = (a.by.as_str(), a.matcher.as_str(), a.reason.as_str());
        if !seen.contains(&key) {
            seen.push(key);
            let text = format!(
                "accepted ({}, {}): {}",
                printable(&a.by),
                printable(&a.matcher),
                printable(&a.reason)
            );
            out.push_str(&paragraph(&text, width, "  ", "    "));
        }
    }
}

/// ` · accepted N` when findings were accepted, else nothing.
fn accepted_count(accepted: usize) -> String {
    if accepted == 0 {
        String::new()
    } else {
        format!(" · {accepted}\u{a0}accepted")
    }
}
