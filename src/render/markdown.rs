//! The Markdown summary: the same facts as the terminal view, as GitHub-
//! flavoured Markdown. Strings from traces go through [`escape`], the one
//! Markdown escape, so a kernel name cannot break a table, inject HTML,
//! mention anyone or link anywhere; long names are shortened.

use std::fmt::Write;

use super::analysis;
use super::facts::{anomaly_lines, environment_lines};
use super::text::{NAME_CHARS, escape, human_us, percent, shorten};
use crate::analysis::profile::Profile;

/// Renders the Markdown summary, listing `top` ops and kernels.
pub fn render(profile: &Profile, top: usize) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# tracegate report: {}\n",
        escape(&file_name(&profile.source.path))
    );
    environment(&mut out, profile);
    if !profile.has_gpu_activity {
        out.push_str("\n**No GPU activity**: the trace records no kernels, copies or sets.\n");
        anomalies(&mut out, profile);
        return out;
    }
    if let Some(diagnosis) = &profile.diagnosis {
        analysis::executive_summary(&mut out, profile, diagnosis, top);
        analysis::recommendations(&mut out, diagnosis, top);
        analysis::detailed(&mut out, diagnosis, top);
    }
    timeline(&mut out, profile);
    steps(&mut out, profile);
    phases(&mut out, profile, top);
    categories(&mut out, profile);
    ops(&mut out, profile, top);
    kernels(&mut out, profile, top);
    analysis::unmodelled(&mut out, profile, top);
    anomalies(&mut out, profile);
    if let Some(diagnosis) = &profile.diagnosis {
        analysis::appendix(&mut out, profile, diagnosis);
    }
    let _ = writeln!(
        out,
        "\n<sub>tracegate {} · report schema {}</sub>",
        profile.tracegate_version, profile.schema_version
    );
    out
}

fn file_name(path: &str) -> String {
    std::path::Path::new(path)
        .file_name()
        .map_or(path.to_string(), |n| n.to_string_lossy().into_owned())
}

fn environment(out: &mut String, profile: &Profile) {
    out.push_str("| | |\n|---|---|\n");
    for (label, value) in environment_lines(profile) {
        let _ = writeln!(out, "| {label} | {} |", escape(&value));
    }
    let _ = writeln!(
        out,
        "| Trace | {:.1} MB, {} events |",
        profile.source.json_bytes as f64 / 1e6,
        profile.source.counts.events
    );
}

fn timeline(out: &mut String, profile: &Profile) {
    let t = &profile.timeline;
    out.push_str("\n## GPU timeline\n\n| | time | share |\n|---|---:|---:|\n");
    for (name, us) in t.rows() {
        let _ = writeln!(
            out,
            "| {} | {} | {:.1}% |",
            name.replace('_', " "),
            human_us(us),
            percent(us, t.total_time)
        );
    }
    if let Some(all) = &profile.timeline_all_gpu_work {
        let _ = writeln!(
            out,
            "\nGPU work not linked to any launch is left out above (TraceLens's convention); \
             counting it, busy time is {} of {}.",
            human_us(all.busy_time),
            human_us(all.total_time)
        );
    }
}

fn steps(out: &mut String, profile: &Profile) {
    if profile.steps.len() < 2 {
        return;
    }
    out.push_str(
        "\n## Steps\n\n| step | host | GPU total | GPU busy | idle |\n|---:|---:|---:|---:|---:|\n",
    );
    for step in &profile.steps {
        let t = &step.timeline;
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {:.1}% |",
            step.number,
            human_us(step.host_duration_us),
            human_us(t.total_time),
            human_us(t.busy_time),
            percent(t.idle_time, t.total_time)
        );
    }
}

/// The prefill/decode split: GPU time per phase and each phase's top ops
/// (at most `top`, and 5).
fn phases(out: &mut String, profile: &Profile, top: usize) {
    let Some(phases) = &profile.phases else {
        return;
    };
    let _ = writeln!(
        out,
        "\n## Inference phases\n\n{} inference step(s), recognised by their {}.\n\n| phase | steps | GPU time | per step | share |\n|---|---:|---:|---:|---:|",
        phases.steps.len(),
        escape(&phases.recognised_by)
    );
    let total: f64 = phases.summaries.iter().map(|p| p.gpu_time_us).sum();
    for p in &phases.summaries {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {:.1}% |",
            p.phase.as_str(),
            p.steps,
            human_us(p.gpu_time_us),
            human_us(p.gpu_time_per_step_us),
            percent(p.gpu_time_us, total)
        );
    }
    for summary in &phases.summaries {
        let phase_total: f64 = summary.ops.iter().map(|o| o.gpu_time_us).sum();
        let _ = writeln!(
            out,
            "\n| {} op | GPU work | GPU time | share |\n|---|---:|---:|---:|",
            summary.phase.as_str()
        );
        for op in summary.ops.iter().take(top.min(5)) {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {:.1}% |",
                escape(&shorten(&op.name, NAME_CHARS)),
                op.work_items,
                human_us(op.gpu_time_us),
                percent(op.gpu_time_us, phase_total)
            );
        }
    }
}

fn categories(out: &mut String, profile: &Profile) {
    if profile.categories.is_empty() {
        return;
    }
    let total: f64 = profile
        .categories
        .iter()
        .map(|c| c.total_direct_kernel_time_us)
        .sum();
    out.push_str(
        "\n## Op categories\n\n| category | ops | kernel time | share |\n|---|---:|---:|---:|\n",
    );
    for c in &profile.categories {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {:.1}% |",
            c.category,
            c.count,
            human_us(c.total_direct_kernel_time_us),
            percent(c.total_direct_kernel_time_us, total)
        );
    }
}

fn ops(out: &mut String, profile: &Profile, top: usize) {
    if profile.unique_args.is_empty() {
        return;
    }
    let total: f64 = profile.unique_args.iter().map(|r| r.direct.sum).sum();
    let _ = writeln!(
        out,
        "\n## Top ops by kernel time\n\n| op | shapes | dtypes | calls | total | mean | share |\n|---|---|---|---:|---:|---:|---:|"
    );
    for row in profile.unique_args.iter().take(top) {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {:.1}% |",
            escape(&shorten(&row.name, NAME_CHARS)),
            escape(&shorten(&row.input_dims, 60)),
            escape(&shorten(&row.input_type, 40)),
            row.direct.count,
            human_us(row.direct.sum),
            human_us(row.direct.mean),
            percent(row.direct.sum, total)
        );
    }
}

fn kernels(out: &mut String, profile: &Profile, top: usize) {
    if profile.kernels.is_empty() {
        return;
    }
    out.push_str("\n## Top kernels\n\n| kernel | parent op | count | total | mean | share of kernel time |\n|---|---|---:|---:|---:|---:|\n");
    for k in profile.kernels.iter().take(top) {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {:.1}% |",
            escape(&shorten(&k.name, 80)),
            escape(&shorten(
                if k.parent_category.is_none() {
                    "(unlinked)"
                } else {
                    &k.parent_op
                },
                NAME_CHARS
            )),
            k.duration.count,
            human_us(k.duration.sum),
            human_us(k.duration.mean),
            k.percent_of_kernel_time
        );
    }
}

fn anomalies(out: &mut String, profile: &Profile) {
    let lines = anomaly_lines(profile);
    if lines.is_empty() {
        return;
    }
    out.push_str("\n## Anomalies\n\n");
    for line in lines {
        let _ = writeln!(out, "- {}", escape(&line));
    }
}
