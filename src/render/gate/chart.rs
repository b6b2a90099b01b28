//! The code blocks the Markdown documents embed: each kernel-selection diff
//! in a fence nothing inside can close, and a Mermaid bar chart of the
//! largest changes.

use std::fmt::Write;

use super::finding::op_label;
use crate::gate::verdict::Finding;
use crate::render::text::{only_ascii, printable, shorten};

const CHART_BARS: usize = 10;
const DIFF_MAX_LINES: usize = 80;
const DIFF_MAX_CHARS: usize = 6_000;

/// A diff in a fenced `diff` block whose fence is longer than any run of
/// backticks inside, so nothing in a kernel name can close it; control and
/// bidi characters in it are shown as escapes ([`printable`]), as in a
/// terminal, since a code block shows them as they are. Long diffs are cut,
/// with a line saying so.
pub(super) fn fenced_diff(diff: &str) -> String {
    let mut body = String::new();
    let lines: Vec<&str> = diff.lines().collect();
    let mut shown = 0;
    for line in &lines {
        let line = printable(line);
        if shown == DIFF_MAX_LINES || body.len() + line.len() > DIFF_MAX_CHARS {
            break;
        }
        body.push_str(&line);
        body.push('\n');
        shown += 1;
    }
    if shown < lines.len() {
        let _ = writeln!(
            body,
            "… {} more lines (report.json has the whole diff)",
            lines.len() - shown
        );
    }
    let longest_run = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest_run.max(2) + 1);
    format!("{fence}diff\n{body}{fence}")
}

/// A Mermaid bar chart of the largest changes: each bar is the candidate as a
/// percentage of the baseline (100 = unchanged; bars start at 0, which is how
/// Mermaid draws them), with a line at 100. Empty when no finding has a
/// change.
pub(super) fn chart(findings: &[Finding]) -> String {
    let mut changes: Vec<&Finding> = findings
        .iter()
        .filter(|f| f.delta_percent.is_some_and(f64::is_finite))
        .collect();
    if changes.is_empty() {
        return String::new();
    }
    let size = |f: &Finding| {
        (
            f.impact_percent
                .filter(|v| v.is_finite())
                .unwrap_or(0.0)
                .abs(),
            f.delta_percent.unwrap_or(0.0).abs(),
        )
    };
    changes.sort_by(|a, b| {
        let (x, y) = (size(a), size(b));
        y.0.total_cmp(&x.0).then(y.1.total_cmp(&x.1))
    });
    changes.truncate(CHART_BARS);
    let labels: Vec<String> = changes
        .iter()
        .enumerate()
        .map(|(i, f)| format!("\"{}. {}\"", i + 1, mermaid_label(&op_label(f))))
        .collect();
    let values: Vec<f64> = changes
        .iter()
        .map(|f| (100.0 + f.delta_percent.unwrap_or(0.0)).max(0.0))
        .collect();
    let top = values.iter().copied().fold(100.0, f64::max) * 1.1;
    let top = (top / 10.0).ceil() * 10.0;
    let bars: Vec<String> = values.iter().map(|v| format!("{v:.1}")).collect();
    let line: Vec<&str> = values.iter().map(|_| "100").collect();
    format!(
        "```mermaid\nxychart-beta\n    title \"Candidate as % of baseline (100 = unchanged)\"\n    x-axis [{}]\n    y-axis \"% of baseline\" 0 --> {top:.0}\n    bar [{}]\n    line [{}]\n```",
        labels.join(", "),
        bars.join(", "),
        line.join(", ")
    )
}

/// A Mermaid string label: at most 28 characters from a safe set (no quotes,
/// brackets, `#` entities or backticks).
fn mermaid_label(text: &str) -> String {
    shorten(&only_ascii(text, " _:.-/+=,()", '?'), 28)
}
