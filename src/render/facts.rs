//! Facts both text reports state, the terminal and the Markdown one: the
//! environment lines they lead with and the anomaly sentences they end with.
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
    lines
}
