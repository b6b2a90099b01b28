//! What did not add up: loading and linking anomalies, GPU work that starts
//! before the previous work on the same stream has ended, and ops whose
//! recorded arguments are implausible.

use std::collections::BTreeMap;

use crate::analysis::gpu_work::{GpuWork, Work};
use crate::analysis::perf::ImplausibleArgs;
use crate::analysis::profile::{Anomalies, KernelSummary};
use crate::trace::Trace;
use crate::trace::link::Tree;

/// (device, stream, track): one GPU queue.
type StreamKey = (Option<i64>, Option<i64>, u32);

/// How many overlap examples the anomalies quote.
const EXAMPLES: usize = 5;

/// The trace's loading and linking anomalies, GPU work overlapping the
/// previous work on its stream, and perf-table invocations whose arguments
/// are implausible.
pub(super) fn anomalies(
    trace: &Trace,
    tree: &Tree,
    gpu: &GpuWork,
    implausible: ImplausibleArgs,
    kernels: &[KernelSummary],
) -> Anomalies {
    let mut result = Anomalies {
        negative_durations: trace.counts.negative_durations,
        missing_times: trace.counts.missing_times,
        link: tree.anomalies.clone(),
        implausible_op_args: implausible.invocations,
        implausible_op_args_examples: implausible.examples,
        ..Anomalies::default()
    };
    for row in kernels.iter().filter(|k| k.percent_of_total_time > 100.0) {
        result.kernel_rows_over_total_time += 1;
        if result.kernel_rows_over_total_time_examples.len() < EXAMPLES {
            result.kernel_rows_over_total_time_examples.push(format!(
                "`{}` on stream {}: {:.1}% of the total time in {} launches that overlap one another",
                row.name,
                row.stream.map_or("?".to_string(), |s| s.to_string()),
                row.percent_of_total_time,
                row.duration.count
            ));
        }
    }
    let mut by_stream: BTreeMap<StreamKey, Vec<&Work>> = BTreeMap::new();
    for work in &gpu.items {
        let track = trace.events[work.event as usize].track;
        by_stream
            .entry((work.device, work.stream, track))
            .or_default()
            .push(work);
    }
    for ((_, stream, _), mut works) in by_stream {
        works.sort_by(|a, b| a.interval.start.total_cmp(&b.interval.start));
        let mut previous: Option<&Work> = None;
        for work in works {
            if let Some(prev) = previous {
                let overlap = prev.interval.end - work.interval.start;
                if overlap > 0.0 {
                    result.stream_overlaps += 1;
                    result.max_stream_overlap_us = result.max_stream_overlap_us.max(overlap);
                    if result.examples.len() < EXAMPLES {
                        result.examples.push(format!(
                            "`{}` overlaps the next work `{}` by {overlap:.3} µs on stream {}",
                            trace.name(&trace.events[prev.event as usize]),
                            trace.name(&trace.events[work.event as usize]),
                            stream.map_or("?".to_string(), |s| s.to_string()),
                        ));
                    }
                }
                if work.interval.end <= prev.interval.end {
                    continue;
                }
            }
            previous = Some(work);
        }
    }
    result
}
