//! The code blocks the Markdown documents embed: each kernel-selection diff
//! in a fence nothing inside can close, and a Mermaid bar chart of the
//! largest changes by op.

use std::fmt::Write;

use crate::gate::judge::{shapes_text, summed_shapes};
use crate::gate::verdict::{Finding, FindingGroup};
use crate::render::text::{escape, only_ascii, printable, shorten};

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

/// A Mermaid bar chart of the largest changes, one bar per group (an op
/// with all its shapes, or a timeline metric): the candidate as a
/// percentage of the baseline (100 = unchanged; bars start at 0, which is
/// how Mermaid draws them), with a line at 100. Each bar is labelled with
/// its op and shape (`aten::mm 1024x4096 4096x4096`, `aten::mm 8 shapes`).
/// The axis is scaled to the bulk of the bars, not to an outlier: a bar
/// beyond [`axis_top`] is cut there, its label says so with its real
/// change, and a line under the chart names it. Empty with fewer than two
/// bars (a table says one change as well).
pub(super) fn chart(groups: &[&FindingGroup], findings: &[Finding]) -> String {
    let mut changes: Vec<&FindingGroup> = groups
        .iter()
        .copied()
        .filter(|g| g.delta_percent.is_some_and(f64::is_finite))
        .collect();
    if changes.len() < 2 {
        return String::new();
    }
    let size = |g: &FindingGroup| {
        (
            g.impact_percent
                .filter(|v| v.is_finite())
                .unwrap_or(0.0)
                .abs(),
            g.delta_percent.unwrap_or(0.0).abs(),
        )
    };
    changes.sort_by(|a, b| {
        let (x, y) = (size(a), size(b));
        y.0.total_cmp(&x.0).then(y.1.total_cmp(&x.1))
    });
    changes.truncate(CHART_BARS);
    let values: Vec<f64> = changes
        .iter()
        .map(|g| (100.0 + g.delta_percent.unwrap_or(0.0)).max(0.0))
        .collect();
    let cap = axis_top(&values);
    let mut cut: Vec<String> = Vec::new();
    let labels: Vec<String> = changes
        .iter()
        .zip(&values)
        .map(|(g, &v)| {
            let label = bar_label(g, findings);
            let text = if v > cap {
                let delta = format!("{:+.0}%", v - 100.0);
                cut.push(escape(&format!("{label} {delta}")));
                let suffix = format!(" {delta} cut");
                format!(
                    "{}{suffix}",
                    mermaid_label(&shorten(&label, MERMAID_LABEL.saturating_sub(suffix.len())))
                )
            } else {
                mermaid_label(&label)
            };
            format!("\"{text}\"")
        })
        .collect();
    let bars: Vec<String> = values
        .iter()
        .map(|v| format!("{:.1}", v.min(cap)))
        .collect();
    let top = values.iter().map(|v| v.min(cap)).fold(100.0, f64::max) * 1.1;
    let top = (top / 10.0).ceil() * 10.0;
    let line: Vec<&str> = values.iter().map(|_| "100").collect();
    let note = if cut.is_empty() {
        String::new()
    } else {
        format!(
            "\n\nBars cut at {cap:.0}% of baseline so the others stay readable: {}.",
            cut.join(", ")
        )
    };
    format!(
        "```mermaid\nxychart-beta\n    title \"Candidate as % of baseline (100 = unchanged)\"\n    x-axis [{}]\n    y-axis \"% of baseline\" 0 --> {top:.0}\n    bar [{}]\n    line [{}]\n```{note}",
        labels.join(", "),
        bars.join(", "),
        line.join(", ")
    )
}

/// Where the chart's axis ends: three times the median bar (at least 200%
/// of baseline), so that one +15,000% bar does not flatten the rest; never
/// below the bars when none is far from the others.
fn axis_top(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let median = sorted.get(sorted.len() / 2).copied().unwrap_or(100.0);
    (median * 3.0).max(200.0)
}

/// A bar's label: the op and its shape in short (`1024x4096 4096x4096`, with
/// the group's layout tag), or the number of shapes.
fn bar_label(group: &FindingGroup, findings: &[Finding]) -> String {
    let op = group
        .findings
        .first()
        .and_then(|&i| findings.get(i))
        .and_then(|f| f.op.as_ref());
    match op {
        Some(op) if group.shapes > 1 || summed_shapes(op).is_some() => {
            format!("{} {}", group.label, shapes_text(group.shapes))
        }
        Some(op) => {
            let shape: String = op
                .input_dims
                .split("), (")
                .map(|part| {
                    part.chars()
                        .filter(|c| c.is_ascii_digit() || *c == ',')
                        .collect::<String>()
                        .replace(',', "x")
                })
                .filter(|part| !part.is_empty())
                .collect::<Vec<_>>()
                .join(" ");
            let tag = group.tags.first().cloned().flatten().unwrap_or_default();
            format!("{} {shape} {tag}", group.label)
                .trim_end()
                .to_string()
        }
        None => group.label.clone(),
    }
}

/// The longest Mermaid label, in characters.
const MERMAID_LABEL: usize = 40;

/// A Mermaid string label: at most 40 characters from a safe set (no quotes,
/// brackets, `#` entities or backticks).
fn mermaid_label(text: &str) -> String {
    shorten(&only_ascii(text, " _:.-/+=,()", '?'), MERMAID_LABEL)
}
