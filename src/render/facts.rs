//! Facts both text reports state, the terminal and the Markdown one: the
//! environment lines they lead with (graph replay among them) and the
//! anomaly sentences they end with (coverage and the capture merge among
//! them).
//! Each report formats them its own way.

use super::text::{human_us, summarise_names};
use crate::analysis::profile::Profile;

/// The environment facts the text renderers lead with, as (label, value):
/// GPUs, and platform and rank where the trace records them.
pub fn environment_lines(profile: &Profile) -> Vec<(&'static str, String)> {
    let env = &profile.environment;
    let gpus: Vec<String> = env
        .devices
        .iter()
        .map(|d| {
            if d.name.is_empty() {
                "(unnamed GPU)".to_string()
            } else {
                d.name.clone()
            }
        })
        .collect();
    let mut lines = vec![("GPUs", summarise_names(&gpus))];
    if let Some(platform) = &env.platform {
        let version = env
            .cuda_runtime_version
            .as_ref()
            .or(env.hip_runtime_version.as_ref());
        let runtime = version
            .map(|v| format!(" (runtime {v})"))
            .unwrap_or_default();
        lines.push(("Platform", format!("{platform}{runtime}")));
    }
    if let (Some(rank), Some(world)) = (env.rank, env.world_size) {
        lines.push(("Rank", format!("{rank} of {world}")));
    }
    if let Some(replay) = &profile.graph_replay {
        let busy = profile.coverage.busy_us;
        let capture =
            replay
                .capture
                .as_ref()
                .map_or("; no capture trace: rows by kernel".to_string(), |c| {
                    // Which capture each step took, when steps chose them.
                    let chosen = match c.chosen.len() {
                        0 => String::new(),
                        n => format!(
                            ", each step's from the capture of its batch size and mode ({n} capture trace(s): {})",
                            c.chosen.join("; ")
                        ),
                    };
                    format!(
                        "; capture trace: {} of {} work items attributed to its ops{chosen}",
                        c.matched,
                        c.matched + c.unmatched
                    )
                });
        lines.push((
            "Graph replay",
            format!(
                "{} launch(es), {} kernels/copies/sets, {} ({:.1}% of GPU busy time){capture}",
                replay.launches,
                replay.work_items,
                human_us(replay.busy_us),
                if busy > 0.0 {
                    replay.busy_us / busy * 100.0
                } else {
                    0.0
                }
            ),
        ));
    }
    lines
}

/// One sentence per non-zero anomaly counter, shared by the text renderers.
pub fn anomaly_lines(profile: &Profile) -> Vec<String> {
    let a = &profile.anomalies;
    let mut lines = Vec::new();
    let mut add = |count: u64, what: &str| {
        if count > 0 {
            lines.push(format!("{count} {what}"));
        }
    };
    add(
        a.negative_durations,
        "events with a negative duration (left out)",
    );
    add(a.missing_times, "timed events without ts or dur (skipped)");
    add(
        a.implausible_op_args,
        "op calls with implausible arguments (a negative or oversized size; left without a perf model)",
    );
    let load = &profile.source.counts;
    add(
        load.non_finite_times,
        "events with a NaN or infinite ts or dur (left out)",
    );
    add(
        load.out_of_range_times,
        "events with an absurd ts or dur (over 1e15 µs long, or ts beyond ±1e16 µs; left out)",
    );
    add(
        load.oversized_args,
        "shape arguments over 1 MiB (dropped from their op)",
    );
    add(
        a.link.gpu_without_launch,
        "GPU events with no launch in the trace (left out of the timeline and op tables)",
    );
    add(
        a.link.launches_without_gpu,
        "kernel launches with no GPU event in the trace",
    );
    add(
        a.link.duplicate_correlations,
        "launches reusing a correlation id (the first one is linked)",
    );
    add(
        a.link.improper_nesting,
        "host events that start over 1 µs inside another and end after it (partial overlap; kept as its child)",
    );
    if a.stream_overlaps > 0 {
        lines.push(format!(
            "{} GPU events start before the previous one on their stream ends (largest overlap {})",
            a.stream_overlaps,
            human_us(a.max_stream_overlap_us)
        ));
        lines.extend(a.examples.iter().map(|e| format!("  e.g. {e}")));
    }
    if a.kernel_rows_over_total_time > 0 {
        lines.push(format!(
            "{} kernel row(s) take over 100% of the total time: their launches overlap (duplicated events, or work overlapping on one stream)",
            a.kernel_rows_over_total_time
        ));
        let examples = &a.kernel_rows_over_total_time_examples;
        lines.extend(examples.iter().map(|e| format!("  e.g. {e}")));
    }
    lines.extend(coverage_lines(profile));
    lines
}

/// What the rows the gate judges leave out, and what graph replay and the
/// capture merge could not place.
fn coverage_lines(profile: &Profile) -> Vec<String> {
    let c = &profile.coverage;
    let mut lines = Vec::new();
    if c.busy_us > 0.0 && c.in_rows_percent() < 100.0 {
        lines.push(format!(
            "op rows hold {:.1}% of GPU busy time ({} launched outside any op)",
            c.in_rows_percent(),
            human_us(c.outside_rows_us)
        ));
    }
    if c.graph_launches_without_work > 0 {
        lines.push(format!(
            "{} graph launches recorded no GPU work (the trace lacks the kernels they replayed)",
            c.graph_launches_without_work
        ));
    }
    lines.extend(
        c.dropped
            .iter()
            .map(|d| format!("the profiler reports lost records: {d}")),
    );
    if let Some(capture) = profile
        .graph_replay
        .as_ref()
        .and_then(|r| r.capture.as_ref())
    {
        if capture.unmatched > 0 {
            lines.push(format!(
                "{} replayed work items matched no call of the capture trace (kept as kernel rows)",
                capture.unmatched
            ));
        }
        lines.extend(capture.notes.iter().map(|n| format!("  {n}")));
    }
    lines
}
