//! The terminal summary: environment, timeline, categories, top ops and
//! kernels, anomalies. Colour only when asked (the binary decides from the
//! TTY and `NO_COLOR`). Every string from the trace goes through
//! [`printable`] (it reaches a terminal or a CI log), and names are
//! shortened before a table lays them out: comfy-table's layout costs grow
//! faster than a cell's length.

use std::fmt::Write;

use comfy_table::presets::UTF8_BORDERS_ONLY;
use comfy_table::{Cell, CellAlignment, ContentArrangement, Table};

use super::facts::{anomaly_lines, environment_lines};
use super::text::{NAME_CHARS, human_us, percent, printable, terminal_cell as cell};
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
    fn heading(&self, text: &str) -> String {
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

fn table(style: Style, header: &[&str]) -> Table {
    let mut table = Table::new();
    table.load_preset(UTF8_BORDERS_ONLY);
    table.set_content_arrangement(ContentArrangement::Dynamic);
    table.set_width(style.width);
    if !style.color {
        table.force_no_tty();
    }
    table.set_header(header.iter().map(Cell::new));
    table
}

fn right_align(table: &mut Table, from_column: usize) {
    for index in from_column..table.column_count() {
        if let Some(column) = table.column_mut(index) {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
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
    let mut timeline = table(style, &["", "time", "share"]);
    for (name, us) in t.rows() {
        timeline.add_row(vec![
            name.replace('_', " "),
            human_us(us),
            format!("{:.1}%", percent(us, t.total_time)),
        ]);
    }
    right_align(&mut timeline, 1);
    let _ = writeln!(out, "{timeline}");

    let idle = &profile.idle;
    if t.idle_time > 0.0 {
        let _ = writeln!(
            out,
            "  Idle gaps: {} waiting for the host to launch, {} with the launch already queued",
            human_us(idle.host_wait_us),
            human_us(idle.kernel_wait_us)
        );
    }
    if profile.sync.time_us > 0.0 {
        let _ = writeln!(
            out,
            "  Host blocked in synchronisation: {} over {} calls ({:.1}% of the host span)",
            human_us(profile.sync.time_us),
            profile.sync.calls,
            percent(profile.sync.time_us, profile.sync.host_span_us)
        );
    }

    if let Some(diagnosis) = &profile.diagnosis {
        append_diagnosis(&mut out, profile, diagnosis, top, style);
    }

    if profile.steps.len() > 1 {
        let _ = writeln!(out, "\n{}", style.heading("Steps"));
        let mut steps = table(style, &["step", "host", "GPU total", "GPU busy", "idle"]);
        for step in &profile.steps {
            let st = &step.timeline;
            steps.add_row(vec![
                step.number.to_string(),
                human_us(step.host_duration_us),
                human_us(st.total_time),
                human_us(st.busy_time),
                format!("{:.1}%", percent(st.idle_time, st.total_time)),
            ]);
        }
        right_align(&mut steps, 1);
        let _ = writeln!(out, "{steps}");
    }

    if !profile.categories.is_empty() {
        let total: f64 = profile
            .categories
            .iter()
            .map(|c| c.total_direct_kernel_time_us)
            .sum();
        let _ = writeln!(out, "\n{}", style.heading("Op categories"));
        let mut categories = table(style, &["category", "ops", "kernel time", "share"]);
        for c in &profile.categories {
            categories.add_row(vec![
                c.category.to_string(),
                c.count.to_string(),
                human_us(c.total_direct_kernel_time_us),
                format!("{:.1}%", percent(c.total_direct_kernel_time_us, total)),
            ]);
        }
        right_align(&mut categories, 1);
        let _ = writeln!(out, "{categories}");
    }

    if !profile.unique_args.is_empty() {
        let total: f64 = profile.unique_args.iter().map(|r| r.direct.sum).sum();
        let _ = writeln!(
            out,
            "\n{}",
            style.heading(&format!("Top {top} ops by kernel time"))
        );
        let mut ops = table(style, &["op", "shapes", "calls", "total", "mean", "share"]);
        for row in profile.unique_args.iter().take(top) {
            ops.add_row(vec![
                cell(&row.name, NAME_CHARS),
                cell(&row.input_dims, 48),
                row.direct.count.to_string(),
                human_us(row.direct.sum),
                human_us(row.direct.mean),
                format!("{:.1}%", percent(row.direct.sum, total)),
            ]);
        }
        right_align(&mut ops, 2);
        let _ = writeln!(out, "{ops}");
    }

    if !profile.kernels.is_empty() {
        let _ = writeln!(out, "\n{}", style.heading(&format!("Top {top} kernels")));
        let mut kernels = table(
            style,
            &["kernel", "parent op", "count", "total", "mean", "share"],
        );
        for k in profile.kernels.iter().take(top) {
            kernels.add_row(vec![
                cell(&k.name, 60),
                if k.parent_category.is_none() {
                    "(unlinked)".to_string()
                } else {
                    cell(&k.parent_op, NAME_CHARS)
                },
                k.duration.count.to_string(),
                human_us(k.duration.sum),
                human_us(k.duration.mean),
                format!("{:.1}%", k.percent_of_kernel_time),
            ]);
        }
        right_align(&mut kernels, 2);
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
        let _ = writeln!(
            out,
            "  {}: {}  ({})",
            printable(&e.metric),
            printable(&e.value),
            printable(&e.threshold)
        );
    }
    let hardware = match &profile.hardware.name {
        Some(name) => format!("{name} ({})", profile.hardware.how),
        None => format!(
            "unknown GPU: {} (no efficiency figures; --hardware NAME supplies them)",
            profile.hardware.detail
        ),
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
        let mut ops = table(
            style,
            &[
                "priority",
                "op",
                "shapes",
                "time",
                "share",
                "efficiency",
                "bound",
            ],
        );
        for op in flagged {
            ops.add_row(vec![
                format!("{:?}", op.priority).to_lowercase(),
                cell(&op.name, NAME_CHARS),
                cell(&op.input_dims, 40),
                human_us(op.kernel_time_us),
                format!("{:.1}%", op.share_of_compute),
                op.efficiency
                    .map_or("—".to_string(), |e| format!("{e:.1}%")),
                match op.bound {
                    Some(Bound::Compute) => "compute".to_string(),
                    Some(Bound::Memory) => "memory".to_string(),
                    None => "—".to_string(),
                },
            ]);
        }
        right_align(&mut ops, 3);
        let _ = writeln!(out, "{ops}");
    }
    for pattern in &diagnosis.patterns {
        let _ = writeln!(out, "  Pattern: {}", printable(&pattern.evidence));
    }
    for line in &diagnosis.below_elementwise_baseline {
        let _ = writeln!(out, "  Below the elementwise baseline: {}", printable(line));
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
