//! The terminal summary: environment, timeline, categories, top ops and
//! kernels, anomalies. Colour only when asked (the binary decides from the
//! TTY and `NO_COLOR`). Every string from the trace goes through
//! [`printable`] (it reaches a terminal or a CI log), and names are
//! shortened before a table lays them out: comfy-table's layout costs grow
//! faster than a cell's length. Tables are fitted to the width by
//! [`fit`](super::fit), as the gate's are: op and kernel names wrap at
//! `_ : / . , -` or end in `…`, never mid-word.

use std::fmt::Write;

use comfy_table::{CellAlignment, Table};

use super::facts::{anomaly_lines, environment_lines};
use super::fit::{NAME_BREAKS, Rule, Wrap, fit, paragraph, table as fit_table};
use super::text::{NAME_CHARS, compact_dims, human_us, percent, printable, terminal_cell as cell};
use crate::analysis::diagnose::{Bound, Diagnosis, Priority};
use crate::analysis::profile::Profile;

/// How to draw.
#[derive(Clone, Copy, Debug)]
pub struct Style {
    /// ANSI colour and bold headings.
    pub color: bool,
    /// Terminal width in columns.
    pub width: u16,
}

impl Style {
    pub(super) fn heading(&self, text: &str) -> String {
        if self.color {
            format!("\x1b[1;36m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    fn warn(&self, text: &str) -> String {
        if self.color {
            format!("\x1b[33m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }
}

/// A trace name's column (op, kernel): wrapped at identifier boundaries,
/// at least `min` wide, at most `lines` lines.
fn name(min: usize, lines: usize) -> Rule {
    Rule::Wrap(Wrap {
        min,
        lines,
        breaks: NAME_BREAKS,
        ..Wrap::new(min)
    })
}

/// A shapes column: wrapped after commas, at most two lines.
const SHAPES: Rule = Rule::Wrap(Wrap {
    max: 48,
    lines: 2,
    breaks: &[','],
    ..Wrap::new(10)
});

/// `rows` as a table fitted to the style's width ([`fit`]): names wrap at
/// their boundaries or end in `…`, never mid-word; numbers (columns from
/// `numbers_from` on) align right. A terminal too narrow for even the
/// narrowest columns gets comfy-table's own wrapping.
pub(super) fn fitted(
    style: Style,
    header: &[&str],
    rows: Vec<Vec<String>>,
    rules: &[Rule],
    numbers_from: usize,
) -> Table {
    let (mut table, rows) = match fit(header, &rows, rules, style.width) {
        Some(cells) => (fit_table(header, style.color, None), cells),
        None => (fit_table(header, style.color, Some(style.width)), rows),
    };
    for row in rows {
        table.add_row(row);
    }
    for index in numbers_from..header.len() {
        if let Some(column) = table.column_mut(index) {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    table
}

/// Renders the summary, listing `top` ops and kernels.
pub fn render(profile: &Profile, top: usize, style: Style) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}",
        style.heading(&format!(
            "tracegate report: {}",
            printable(&profile.source.path)
        ))
    );
    for (label, value) in environment_lines(profile) {
        let _ = writeln!(out, "  {label}: {}", printable(&value));
    }
    let _ = writeln!(
        out,
        "  Trace: {:.1} MB of JSON, {} events, {} profiler step(s)",
        profile.source.json_bytes as f64 / 1e6,
        profile.source.counts.events,
        profile.steps.len()
    );
    if !profile.has_gpu_activity {
        let _ = writeln!(
            out,
            "\n{}",
            style.warn("No GPU activity: the trace records no kernels, copies or sets.")
        );
        append_anomalies(&mut out, profile, style);
        return out;
    }

    let t = &profile.timeline;
    let _ = writeln!(out, "\n{}", style.heading("GPU timeline"));
    let rows = t
        .rows()
        .into_iter()
        .map(|(name, us)| {
            vec![
                name.replace('_', " "),
                human_us(us),
                format!("{:.1}%", percent(us, t.total_time)),
            ]
        })
        .collect();
    let timeline = fitted(style, &["", "time", "share"], rows, &[Rule::Fixed; 3], 1);
    let _ = writeln!(out, "{timeline}");

    let idle = &profile.idle;
    if t.idle_time > 0.0 {
        let text = format!(
            "Idle gaps: {} waiting for the host to launch, {} with the launch already queued",
            human_us(idle.host_wait_us),
            human_us(idle.kernel_wait_us)
        );
        out.push_str(&paragraph(&text, style.width, "  ", "    "));
    }
    if profile.sync.time_us > 0.0 {
        let text = format!(
            "Host blocked in synchronisation: {} over {} calls ({:.1}% of the host span)",
            human_us(profile.sync.time_us),
            profile.sync.calls,
            percent(profile.sync.time_us, profile.sync.host_span_us)
        );
        out.push_str(&paragraph(&text, style.width, "  ", "    "));
    }

    if let Some(diagnosis) = &profile.diagnosis {
        append_diagnosis(&mut out, profile, diagnosis, top, style);
    }

    if profile.steps.len() > 1 {
        let _ = writeln!(out, "\n{}", style.heading("Steps"));
        let header = ["step", "host", "GPU total", "GPU busy", "idle"];
        let rows = profile
            .steps
            .iter()
            .map(|step| {
                let st = &step.timeline;
                vec![
                    step.number.to_string(),
                    human_us(step.host_duration_us),
                    human_us(st.total_time),
                    human_us(st.busy_time),
                    format!("{:.1}%", percent(st.idle_time, st.total_time)),
                ]
            })
            .collect();
        let steps = fitted(style, &header, rows, &[Rule::Fixed; 5], 1);
        let _ = writeln!(out, "{steps}");
    }

    append_phases(&mut out, profile, top, style);

    if !profile.categories.is_empty() {
        let total: f64 = profile
            .categories
            .iter()
            .map(|c| c.total_direct_kernel_time_us)
            .sum();
        let _ = writeln!(out, "\n{}", style.heading("Op categories"));
        let header = ["category", "ops", "kernel time", "share"];
        let rows = profile
            .categories
            .iter()
            .map(|c| {
                vec![
                    c.category.to_string(),
                    c.count.to_string(),
                    human_us(c.total_direct_kernel_time_us),
                    format!("{:.1}%", percent(c.total_direct_kernel_time_us, total)),
                ]
            })
            .collect();
        let categories = fitted(style, &header, rows, &[Rule::Fixed; 4], 1);
        let _ = writeln!(out, "{categories}");
    }

    if !profile.unique_args.is_empty() {
        let total: f64 = profile.unique_args.iter().map(|r| r.direct.sum).sum();
        let _ = writeln!(
            out,
            "\n{}",
            style.heading(&format!("Top {top} ops by kernel time"))
        );
        let header = ["op", "shapes", "calls", "total", "mean", "share"];
        let rows = profile
            .unique_args
            .iter()
            .take(top)
            .map(|row| {
                vec![
                    cell(&row.name, NAME_CHARS),
                    cell(&compact_dims(&row.input_dims), 96),
                    row.direct.count.to_string(),
                    human_us(row.direct.sum),
                    human_us(row.direct.mean),
                    format!("{:.1}%", percent(row.direct.sum, total)),
                ]
            })
            .collect();
        let mut rules = [Rule::Fixed; 6];
        rules[..2].copy_from_slice(&[name(16, 3), SHAPES]);
        let ops = fitted(style, &header, rows, &rules, 2);
        let _ = writeln!(out, "{ops}");
    }

    if !profile.kernels.is_empty() {
        let _ = writeln!(out, "\n{}", style.heading(&format!("Top {top} kernels")));
        let header = ["kernel", "parent op", "count", "total", "mean", "share"];
        let rows = profile
            .kernels
            .iter()
            .take(top)
            .map(|k| {
                vec![
                    cell(&k.name, 120),
                    if k.parent_category.is_none() {
                        "(unlinked)".to_string()
                    } else {
                        cell(&k.parent_op, NAME_CHARS)
                    },
                    k.duration.count.to_string(),
                    human_us(k.duration.sum),
                    human_us(k.duration.mean),
                    format!("{:.1}%", k.percent_of_kernel_time),
                ]
            })
            .collect();
        let mut rules = [Rule::Fixed; 6];
        rules[..2].copy_from_slice(&[name(20, 3), name(12, 2)]);
        let kernels = fitted(style, &header, rows, &rules, 2);
        let _ = writeln!(out, "{kernels}");
    }
    let short_count: u64 = profile
        .short_kernel_histogram
        .iter()
        .map(|bin| bin.count)
        .sum();
    if short_count > 0 {
        let short_us = profile.short_kernel_time_us;
        let _ = writeln!(
            out,
            "\nShort kernels (< 10 µs): {short_count}, {} in all ({:.1}% of GPU time)",
            human_us(short_us),
            percent(short_us, t.total_time)
        );
    }
    append_anomalies(&mut out, profile, style);
    out
}

fn append_diagnosis(
    out: &mut String,
    profile: &Profile,
    diagnosis: &Diagnosis,
    top: usize,
    style: Style,
) {
    let _ = writeln!(
        out,
        "\n{} {}",
        style.heading("Primary bottleneck:"),
        style.warn(diagnosis.primary.label())
    );
    for e in &diagnosis.evidence {
        let text = format!(
            "{}: {}  ({})",
            printable(&e.metric),
            printable(&e.value),
            printable(&e.threshold)
        );
        out.push_str(&paragraph(&text, style.width, "  ", "    "));
    }
    let hardware = match &profile.hardware.name {
        Some(name) => format!("{name} ({})", profile.hardware.how),
        // The detail says what detection saw ("unknown GPU: …; name one
        // with --hardware NAME|SPEC", "no GPU recorded …") itself.
        None => format!("{} (no efficiency figures)", profile.hardware.detail),
    };
    let _ = writeln!(out, "  Hardware: {}", printable(&hardware));
    let flagged: Vec<_> = diagnosis
        .ops
        .iter()
        .filter(|op| op.priority <= Priority::High)
        .take(top)
        .collect();
    if !flagged.is_empty() {
        let _ = writeln!(
            out,
            "\n{}",
            style.heading("Prioritised ops (details: --format markdown)")
        );
        let header = [
            "priority",
            "op",
            "shapes",
            "time",
            "share",
            "efficiency",
            "bound",
        ];
        let rows = flagged
            .into_iter()
            .map(|op| {
                vec![
                    format!("{:?}", op.priority).to_lowercase(),
                    cell(&op.name, NAME_CHARS),
                    cell(&compact_dims(&op.input_dims), 96),
                    human_us(op.kernel_time_us),
                    format!("{:.1}%", op.share_of_compute),
                    op.efficiency
                        .map_or("—".to_string(), |e| format!("{e:.1}%")),
                    match op.bound {
                        Some(Bound::Compute) => "compute".to_string(),
                        Some(Bound::Memory) => "memory".to_string(),
                        None => "—".to_string(),
                    },
                ]
            })
            .collect();
        let mut rules = [Rule::Fixed; 7];
        rules[1..3].copy_from_slice(&[name(14, 3), SHAPES]);
        let ops = fitted(style, &header, rows, &rules, 3);
        let _ = writeln!(out, "{ops}");
    }
    for pattern in &diagnosis.patterns {
        let text = format!("Pattern: {}", printable(&pattern.evidence));
        out.push_str(&paragraph(&text, style.width, "  ", "    "));
    }
    for line in &diagnosis.below_elementwise_baseline {
        let text = format!("Below the elementwise baseline: {}", printable(line));
        out.push_str(&paragraph(&text, style.width, "  ", "    "));
    }
}

/// The prefill/decode split of an inference trace: GPU time per phase and
/// each phase's top ops (at most `top`, and 5).
fn append_phases(out: &mut String, profile: &Profile, top: usize, style: Style) {
    let Some(phases) = &profile.phases else {
        return;
    };
    let _ = writeln!(out, "\n{}", style.heading("Inference phases"));
    let text = format!(
        "{} inference step(s), recognised by their {}",
        phases.steps.len(),
        phases.recognised_by
    );
    out.push_str(&paragraph(&text, style.width, "  ", "    "));
    let total: f64 = phases.summaries.iter().map(|p| p.gpu_time_us).sum();
    let rows = phases
        .summaries
        .iter()
        .map(|p| {
            vec![
                p.phase.as_str().to_string(),
                p.steps.to_string(),
                human_us(p.gpu_time_us),
                human_us(p.gpu_time_per_step_us),
                format!("{:.1}%", percent(p.gpu_time_us, total)),
            ]
        })
        .collect();
    let header = ["phase", "steps", "GPU time", "per step", "share"];
    let table = fitted(style, &header, rows, &[Rule::Fixed; 5], 1);
    let _ = writeln!(out, "{table}");
    for summary in &phases.summaries {
        let phase_total: f64 = summary.ops.iter().map(|o| o.gpu_time_us).sum();
        let rows = summary
            .ops
            .iter()
            .take(top.min(5))
            .map(|op| {
                vec![
                    printable(&op.name),
                    op.work_items.to_string(),
                    human_us(op.gpu_time_us),
                    format!("{:.1}%", percent(op.gpu_time_us, phase_total)),
                ]
            })
            .collect();
        let header = [summary.phase.as_str(), "GPU work", "GPU time", "share"];
        let rules = [name(24, 2), Rule::Fixed, Rule::Fixed, Rule::Fixed];
        let table = fitted(style, &header, rows, &rules, 1);
        let _ = writeln!(out, "{table}");
    }
}

fn append_anomalies(out: &mut String, profile: &Profile, style: Style) {
    let lines = anomaly_lines(profile);
    if lines.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n{}", style.warn("Anomalies"));
    for line in lines {
        let _ = writeln!(out, "  - {}", printable(&line));
    }
}
