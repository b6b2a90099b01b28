//! The gate's terminal view: the verdict line, the counts and a table of
//! the most important findings, wrapped only when wider than the terminal.
//! Every trace string goes through [`printable`]: it reaches a terminal or
//! a CI log.

use std::fmt::Write;

use comfy_table::presets::UTF8_BORDERS_ONLY;
use comfy_table::{Cell, CellAlignment, ContentArrangement, Table};

use super::finding::{Row, headline_text, op_label, shape_of, status};
use crate::gate::verdict::{Severity, Verdict};
use crate::render::terminal::Style;
use crate::render::text::{printable, terminal_cell as cell};

/// The terminal view: the verdict line, the counts, then the first `top`
/// findings (most important first) as a table, and the workloads' notes.
pub fn render_terminal(verdict: &Verdict, top: usize, style: Style) -> String {
    let (icon, status) = status(verdict);
    let paint = |code: &str, text: &str| {
        if style.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    };
    let colour = match status {
        "fail" => "1;31",
        "pass" => "1;32",
        _ => "1;33",
    };
    let headline = printable(headline_text(&verdict.headline));
    let mut out = String::new();
    let line = if headline.is_empty() {
        format!("{icon} tracegate: {status}")
    } else {
        format!("{icon} tracegate: {status} · {headline}")
    };
    let _ = writeln!(out, "{}", paint(colour, &line));
    let c = &verdict.counts;
    let _ = writeln!(
        out,
        "  regressions {} · warnings {} · improvements {} · unchanged {} · new ops {} · missing ops {}{}",
        c.regressions,
        c.warnings,
        c.improvements,
        c.unchanged,
        c.new,
        c.missing,
        accepted_count(c.accepted)
    );
    if !verdict.findings.is_empty() && top > 0 {
        let mut table = Table::new();
        table.load_preset(UTF8_BORDERS_ONLY);
        if !style.color {
            table.force_no_tty();
        }
        table.set_header(
            [
                "finding",
                "op",
                "shape",
                "baseline",
                "candidate",
                "Δ",
                "impact",
                "priority",
            ]
            .into_iter()
            .map(Cell::new),
        );
        for f in verdict.findings.iter().take(top) {
            let row = Row::new(f);
            let finding = match f.severity {
                Severity::Fail => paint("31", &format!("FAIL {}", row.kind)),
                Severity::Warn => paint("33", &format!("warn {}", row.kind)),
                Severity::Accepted => paint("36", &format!("accepted {}", row.kind)),
                Severity::Info => format!("info {}", row.kind),
            };
            table.add_row(vec![
                finding,
                cell(&op_label(f), 48),
                cell(shape_of(f), 40),
                // The unit comes from the verdict, which `comment` reads from a file.
                cell(&row.baseline, 40),
                cell(&row.candidate, 40),
                row.delta,
                row.impact,
                row.priority.to_string(),
            ]);
        }
        for index in 3..=6 {
            if let Some(column) = table.column_mut(index) {
                column.set_cell_alignment(CellAlignment::Right);
            }
        }
        // Wrap cells only when the table is wider than the terminal.
        let natural = table.to_string();
        if natural
            .lines()
            .any(|l| l.chars().count() > usize::from(style.width))
        {
            table.set_content_arrangement(ContentArrangement::Dynamic);
            table.set_width(style.width);
            let _ = writeln!(out, "{table}");
        } else {
            let _ = writeln!(out, "{natural}");
        }
        let more = verdict.findings.len().saturating_sub(top);
        if more > 0 {
            let _ = writeln!(
                out,
                "  … and {more} more findings (report.json has them all)"
            );
        }
    }
    accepted_lines(verdict, &mut out);
    for w in &verdict.workloads {
        for note in &w.notes {
            let _ = writeln!(out, "  note ({}): {}", printable(&w.name), printable(note));
        }
    }
    out
}

/// One line per accept entry that covered findings: which, and why.
fn accepted_lines(verdict: &Verdict, out: &mut String) {
    let mut seen: Vec<(&str, &str, &str)> = Vec::new();
    for a in verdict.findings.iter().filter_map(|f| f.accepted.as_ref()) {
        let key = (a.by.as_str(), a.matcher.as_str(), a.reason.as_str());
        if !seen.contains(&key) {
            seen.push(key);
            let _ = writeln!(
                out,
                "  accepted ({}, {}): {}",
                printable(&a.by),
                printable(&a.matcher),
                printable(&a.reason)
            );
        }
    }
}

/// ` · accepted N` when findings were accepted, else nothing.
fn accepted_count(accepted: usize) -> String {
    if accepted == 0 {
        String::new()
    } else {
        format!(" · accepted {accepted}")
    }
}
