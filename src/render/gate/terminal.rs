//! The gate's terminal view: the verdict line, the counts, a table of the
//! most important findings and the workloads' notes, all fitted to the
//! width the binary measured. Prose wraps at spaces; the table picks the
//! widest of three layouts that fits (one line per finding with its
//! priority, the same without it, then op and shape stacked in one cell)
//! and wraps cells at word and identifier boundaries
//! ([`fit`](crate::render::fit)). Colour is comfy-table's cell styling,
//! never escape codes inside a cell, so it costs no width. Every trace
//! string goes through [`printable`]: it reaches a terminal or a CI log.

use std::fmt::Write;

use comfy_table::{Attribute, Cell, CellAlignment, Color};

use super::finding::{Row, headline_text, op_label, shape_of, status};
use crate::gate::verdict::{Finding, Severity, Verdict};
use crate::render::fit::{NAME_BREAKS, Rule, Wrap, fit, paragraph, table};
use crate::render::terminal::Style;
use crate::render::text::{NAME_CHARS, compact_dims, printable, shorten};

/// The columns a finding's row may have, in the order they are drawn.
#[derive(Clone, Copy, PartialEq)]
enum Column {
    Finding,
    Workload,
    Op,
    Shape,
    /// Op and shape on lines of one cell.
    OpShape,
    Base,
    Cand,
    Delta,
    Impact,
    Priority,
}

impl Column {
    fn header(self) -> &'static str {
        match self {
            Column::Finding => "finding",
            Column::Workload => "workload",
            Column::Op => "op",
            Column::Shape => "shape",
            Column::OpShape => "op · shape",
            Column::Base => "base",
            Column::Cand => "cand",
            Column::Delta => "Δ",
            Column::Impact => "impact",
            Column::Priority => "priority",
        }
    }

    /// The column's width rule; `stacked`: the layout with op and shape
    /// in one cell, where that cell gets the room first.
    fn rule(self, stacked: bool) -> Rule {
        let name = Wrap {
            breaks: NAME_BREAKS,
            ..Wrap::new(8)
        };
        match self {
            // "FAIL regression" on one line when there is room, else
            // "FAIL" over "regression".
            Column::Finding if stacked => Rule::Wrap(Wrap {
                max: 11,
                ..Wrap::new(10)
            }),
            Column::Finding => Rule::Wrap(Wrap::new(10)),
            Column::Workload => Rule::Wrap(Wrap { max: 24, ..name }),
            Column::Op => Rule::Wrap(Wrap { min: 20, ..name }),
            Column::Shape => Rule::Wrap(Wrap {
                max: 28,
                lines: 3,
                ..Wrap::new(16)
            }),
            Column::OpShape => Rule::Wrap(Wrap {
                min: 16,
                max: 40,
                lines: 4,
                ..name
            }),
            _ => Rule::Fixed,
        }
    }

    fn is_number(self) -> bool {
        matches!(
            self,
            Column::Base | Column::Cand | Column::Delta | Column::Impact
        )
    }

    /// The cell's text (not yet wrapped).
    fn text(self, f: &Finding, row: &Row) -> String {
        let op = printable(&shorten(&op_label(f), NAME_CHARS));
        let shape = printable(&shorten(&compact_dims(shape_of(f)), 80));
        match self {
            Column::Finding => format!("{} {}", severity_word(f.severity), row.kind),
            Column::Workload => printable(&row.workload),
            Column::Op => op,
            Column::Shape => shape,
            Column::OpShape if shape.is_empty() => op,
            Column::OpShape => format!("{op}\n{shape}"),
            Column::Base => printable(&row.baseline),
            Column::Cand => printable(&row.candidate),
            Column::Delta => row.delta.clone(),
            Column::Impact => row.impact.clone(),
            Column::Priority => row.priority.to_string(),
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

/// The layouts, widest first: the first whose narrowest columns fit wins.
fn layouts(multi_workload: bool) -> Vec<Vec<Column>> {
    use Column::*;
    let numbers = [Base, Cand, Delta, Impact];
    let lead = |op: &[Column]| {
        let mut columns = vec![Finding];
        if multi_workload {
            columns.push(Workload);
        }
        columns.extend_from_slice(op);
        columns.extend_from_slice(&numbers);
        columns
    };
    let mut wide = lead(&[Op, Shape]);
    let without_priority = wide.clone();
    wide.push(Priority);
    vec![wide, without_priority, lead(&[OpShape])]
}

/// The terminal view: the verdict line, the counts, then the first `top`
/// findings (most important first) as a table, and the workloads' notes,
/// fitted to `style.width` columns.
pub fn render_terminal(verdict: &Verdict, top: usize, style: Style) -> String {
    let mut out = headline(verdict, style);
    let c = &verdict.counts;
    // Non-breaking spaces keep each count with its label when the line wraps.
    let counts = format!(
        "regressions\u{a0}{} · warnings\u{a0}{} · improvements\u{a0}{} · unchanged\u{a0}{} · new\u{a0}ops\u{a0}{} · missing\u{a0}ops\u{a0}{}{}",
        c.regressions,
        c.warnings,
        c.improvements,
        c.unchanged,
        c.new,
        c.missing,
        accepted_count(c.accepted)
    );
    out.push_str(&paragraph(&counts, style.width, "  ", "  ").replace('\u{a0}', " "));
    if !verdict.findings.is_empty() && top > 0 {
        let shown: Vec<&Finding> = verdict.findings.iter().take(top).collect();
        let _ = writeln!(out, "{}", findings_table(&shown, verdict, style));
        let more = verdict.findings.len() - shown.len();
        if more > 0 {
            let text = format!("… and {more} more findings (report.json has them all)");
            out.push_str(&paragraph(&text, style.width, "  ", "  "));
        }
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
        paragraph(&format!("{status} · {summary}"), style.width, &first, "   ")
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

/// The findings as a table in the widest layout that fits.
fn findings_table(shown: &[&Finding], verdict: &Verdict, style: Style) -> comfy_table::Table {
    let rows: Vec<Row> = shown.iter().map(|f| Row::new(f)).collect();
    let candidates = layouts(verdict.workloads.len() > 1);
    let fitted = candidates.iter().find_map(|columns| {
        let header: Vec<&str> = columns.iter().map(|c| c.header()).collect();
        let stacked = columns.contains(&Column::OpShape);
        let rules: Vec<Rule> = columns.iter().map(|c| c.rule(stacked)).collect();
        let cells: Vec<Vec<String>> = shown
            .iter()
            .zip(&rows)
            .map(|(f, row)| columns.iter().map(|c| c.text(f, row)).collect())
            .collect();
        let cells = fit(&header, &cells, &rules, style.width)?;
        Some((columns, table(&header, style.color, None), cells))
    });
    // Narrower than any layout: the stacked one, wrapped by comfy-table.
    let (columns, mut table, cells) = fitted.unwrap_or_else(|| {
        let columns = candidates.last().expect("three layouts");
        let header: Vec<&str> = columns.iter().map(|c| c.header()).collect();
        let cells = shown
            .iter()
            .zip(&rows)
            .map(|(f, row)| columns.iter().map(|c| c.text(f, row)).collect())
            .collect();
        (
            columns,
            table(&header, style.color, Some(style.width)),
            cells,
        )
    });
    for (f, row) in shown.iter().zip(cells) {
        table.add_row(row.into_iter().zip(columns).map(|(text, &column)| {
            let cell = Cell::new(text);
            match (column, f.severity, style.color) {
                (Column::Finding, Severity::Fail, true) => {
                    cell.fg(Color::Red).add_attribute(Attribute::Bold)
                }
                (Column::Finding, Severity::Warn, true) => cell.fg(Color::Yellow),
                (Column::Finding, Severity::Accepted, true) => cell.fg(Color::Cyan),
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
        format!(" · accepted\u{a0}{accepted}")
    }
}
