//! The Markdown analysis sections: executive summary, prioritised
//! recommendations, detailed analysis per category, what a trace cannot show,
//! and the hardware appendix — the report the analysis guides walk an
//! engineer through by hand.

use std::fmt::Write;

use super::text::{NAME_CHARS, escape, human_us, percent, shorten};
use crate::analysis::diagnose::{Bound, Diagnosis, OpAssessment, Priority};
use crate::analysis::profile::Profile;

fn priority_label(priority: Priority) -> &'static str {
    match priority {
        Priority::Critical => "critical",
        Priority::High => "high",
        Priority::Medium => "medium",
        Priority::Low => "low",
    }
}

fn bound_label(bound: Option<Bound>) -> &'static str {
    match bound {
        Some(Bound::Compute) => "compute",
        Some(Bound::Memory) => "memory",
        None => "—",
    }
}

fn efficiency_cell(op: &OpAssessment) -> String {
    op.efficiency
        .map_or("—".to_string(), |e| format!("{e:.1}%"))
}

/// Executive summary: the primary bottleneck with its evidence, the metrics
/// table and the top operations.
pub fn executive_summary(out: &mut String, profile: &Profile, diagnosis: &Diagnosis, top: usize) {
    let t = &profile.timeline;
    out.push_str("\n## Executive summary\n\n");
    let _ = writeln!(
        out,
        "**Primary bottleneck: {}.**\n",
        diagnosis.primary.label()
    );
    out.push_str("| evidence | value | rule |\n|---|---:|---|\n");
    for e in &diagnosis.evidence {
        let _ = writeln!(out, "| {} | {} | {} |", e.metric, e.value, e.threshold);
    }
    out.push_str("\n| metric | value |\n|---|---:|\n");
    let _ = writeln!(
        out,
        "| GPU time (first to last kernel) | {} |",
        human_us(t.total_time)
    );
    let _ = writeln!(
        out,
        "| computation | {:.1}% |",
        percent(t.computation_time, t.total_time)
    );
    let _ = writeln!(out, "| idle | {:.1}% |", percent(t.idle_time, t.total_time));
    let _ = writeln!(
        out,
        "| exposed communication | {:.1}% |",
        percent(t.exposed_comm_time, t.total_time)
    );
    let _ = writeln!(
        out,
        "| exposed memcpy | {:.1}% |",
        percent(t.exposed_memcpy_time, t.total_time)
    );
    let kernels: u64 = profile.kernels.iter().map(|k| k.duration.count).sum();
    let _ = writeln!(out, "| kernels | {kernels} |");
    if let Some(gpu) = &profile.hardware.name {
        let _ = writeln!(
            out,
            "| hardware | {} ({}) |",
            escape(gpu),
            profile.hardware.how
        );
    }
    if diagnosis.ops.is_empty() {
        return;
    }
    let mut by_time: Vec<&OpAssessment> = diagnosis.ops.iter().collect();
    by_time.sort_by(|a, b| b.kernel_time_us.total_cmp(&a.kernel_time_us));
    out.push_str("\n**Top operations** (modelled ops, by kernel time)\n\n");
    out.push_str(
        "| op | shapes | calls | time | share of compute | efficiency | bound | priority |\n",
    );
    out.push_str("|---|---|---:|---:|---:|---:|---|---|\n");
    for op in by_time.into_iter().take(top) {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {:.1}% | {} | {} | {} |",
            escape(&shorten(&op.name, NAME_CHARS)),
            escape(&shorten(&op.input_dims, 50)),
            op.count,
            human_us(op.kernel_time_us),
            op.share_of_compute,
            efficiency_cell(op),
            bound_label(op.bound),
            priority_label(op.priority)
        );
    }
}

/// Prioritised recommendations: critical and high ops (at most `top`) with
/// Path A, Path B and the impact projection; then the detected patterns.
pub fn recommendations(out: &mut String, diagnosis: &Diagnosis, top: usize) {
    out.push_str("\n## Prioritised recommendations\n");
    let flagged: Vec<&OpAssessment> = diagnosis
        .ops
        .iter()
        .filter(|op| op.priority <= Priority::High)
        .take(top)
        .collect();
    if flagged.is_empty() && diagnosis.patterns.is_empty() {
        out.push_str(
            "\nNo op is flagged: nothing takes a large share of compute time at low efficiency.\n",
        );
    }
    for (rank, op) in flagged.iter().enumerate() {
        let _ = writeln!(
            out,
            "\n### {}. [{}] {} {}\n",
            rank + 1,
            priority_label(op.priority),
            escape(&shorten(&op.name, NAME_CHARS)),
            escape(&shorten(&op.input_dims, 70))
        );
        let efficiency = op
            .efficiency
            .map_or(String::new(), |e| format!(", {e:.1}% of roofline"));
        let _ = writeln!(
            out,
            "{:.1}% of compute time ({} over {} calls){}; {:.1} FLOP/byte, {}-bound; achieved {:.2} TFLOP/s and {:.2} TB/s.\n",
            op.share_of_compute,
            human_us(op.kernel_time_us),
            op.count,
            efficiency,
            op.intensity,
            bound_label(op.bound),
            op.achieved_tflops,
            op.achieved_tb_s
        );
        let _ = writeln!(out, "- **Path A** (fusion / algorithmic): {}", op.path_a);
        let _ = writeln!(out, "- **Path B** (kernel tuning only): {}", op.path_b);
        if !op.projections.is_empty() {
            out.push_str(
                "\n| if it reached | op time | end-to-end GPU time saved |\n|---:|---:|---:|\n",
            );
            for p in &op.projections {
                let _ = writeln!(
                    out,
                    "| {:.0}% of roofline | {} | {:.1}% |",
                    p.target_efficiency,
                    human_us(p.time_us),
                    p.e2e_saving_percent
                );
            }
        }
    }
    if !diagnosis.patterns.is_empty() {
        out.push_str("\n### Patterns\n\n");
        for pattern in &diagnosis.patterns {
            let _ = writeln!(out, "- {}", escape(&pattern.evidence));
        }
    }
    if let Some(baseline) = diagnosis.elementwise_baseline_tb_s {
        let _ = writeln!(
            out,
            "\n**Elementwise baseline:** simple elementwise ops reach up to {baseline:.2} TB/s in this trace."
        );
        for line in &diagnosis.below_elementwise_baseline {
            let _ = writeln!(out, "- {}", escape(line));
        }
    }
}

/// Detailed analysis: every modelled op, grouped by family.
pub fn detailed(out: &mut String, diagnosis: &Diagnosis, top: usize) {
    if diagnosis.ops.is_empty() {
        return;
    }
    out.push_str("\n## Detailed analysis by category\n");
    let mut families: Vec<&str> = diagnosis.ops.iter().map(|op| op.family.as_str()).collect();
    families.sort_unstable();
    families.dedup();
    let family_time = |family: &str| -> f64 {
        diagnosis
            .ops
            .iter()
            .filter(|op| op.family == family)
            .map(|op| op.kernel_time_us)
            .sum()
    };
    families.sort_by(|a, b| family_time(b).total_cmp(&family_time(a)));
    for family in families {
        let mut ops: Vec<&OpAssessment> = diagnosis
            .ops
            .iter()
            .filter(|op| op.family == family)
            .collect();
        ops.sort_by(|a, b| b.kernel_time_us.total_cmp(&a.kernel_time_us));
        let _ = writeln!(out, "\n### {family} ({})\n", human_us(family_time(family)));
        out.push_str("| op | shapes | dtypes | calls | time | TFLOP/s | TB/s | FLOP/B | efficiency | bound |\n");
        out.push_str("|---|---|---|---:|---:|---:|---:|---:|---:|---|\n");
        for op in ops.iter().take(top) {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {:.2} | {:.3} | {:.1} | {} | {} |",
                escape(&shorten(&op.name, NAME_CHARS)),
                escape(&shorten(&op.input_dims, 50)),
                escape(&shorten(&op.input_type, 30)),
                op.count,
                human_us(op.kernel_time_us),
                op.achieved_tflops,
                op.achieved_tb_s,
                op.intensity,
                efficiency_cell(op),
                bound_label(op.bound)
            );
        }
        if ops.len() > top {
            let _ = writeln!(
                out,
                "\n…and {} more rows (`--format csv` has them all).",
                ops.len() - top
            );
        }
    }
}

/// Ops with GPU time but no perf model.
pub fn unmodelled(out: &mut String, profile: &Profile, top: usize) {
    let rows = crate::analysis::perf::unmodelled(&profile.perf.rows);
    let rows: Vec<_> = rows
        .into_iter()
        .filter(|u| u.kernel_time_us > 0.0)
        .collect();
    if rows.is_empty() {
        return;
    }
    out.push_str(
        "\n## No perf model\n\nThese ops are timed but not judged against the roofline:\n\n",
    );
    out.push_str("| op | calls | kernel time |\n|---|---:|---:|\n");
    for row in rows.iter().take(top) {
        let _ = writeln!(
            out,
            "| {} | {} | {} |",
            escape(&shorten(&row.name, NAME_CHARS)),
            row.count,
            human_us(row.kernel_time_us)
        );
    }
}

/// What a trace cannot show, and the hardware appendix.
pub fn appendix(out: &mut String, profile: &Profile, diagnosis: &Diagnosis) {
    out.push_str("\n## What this trace cannot show\n\n| not observable | instead |\n|---|---|\n");
    for (what, instead) in &diagnosis.cannot_infer {
        let _ = writeln!(out, "| {what} | {instead} |");
    }
    out.push_str("\n## Appendix: hardware\n\n");
    let hw = &profile.hardware;
    let _ = writeln!(out, "{} ({}).\n", escape(&hw.detail), hw.how);
    match &diagnosis.peaks {
        Some(peaks) => {
            let _ = writeln!(
                out,
                "| figure | value |\n|---|---:|\n| HBM bandwidth | {} TB/s |",
                peaks.hbm_tb_s
            );
            for (spec, tflops) in &peaks.tflops {
                let _ = writeln!(out, "| {spec} | {tflops} TFLOP/s |");
            }
            if let Some(source) = &hw.source {
                let _ = writeln!(out, "\nSource: {}.", escape(source));
            }
        }
        None => out.push_str(
            "The GPU is not in the catalog, so no efficiency figures are given; \
             `--hardware NAME` or an inline spec supplies them.\n",
        ),
    }
}
