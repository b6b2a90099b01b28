//! Where the GPU waited: idle gaps before each piece of GPU work, split by
//! whether the host had issued the launch yet (host-wait) or not
//! (kernel-wait), over the whole timeline and per stream.

use std::collections::BTreeMap;

use crate::analysis::gpu_work::{GpuWork, Work};
use crate::analysis::profile::{IdleSplit, StreamIdle};
use crate::analysis::timeline::IntervalSet;
use crate::trace::Trace;

/// Splits gaps before each piece of work (sorted by start) into host-wait
/// and kernel-wait; returns (host-wait µs, kernel-wait µs).
fn split_gaps(trace: &Trace, works: &mut [&Work]) -> (f64, f64) {
    works.sort_by(|a, b| a.interval.start.total_cmp(&b.interval.start));
    let (mut host_wait, mut kernel_wait) = (0.0, 0.0);
    let mut frontier = f64::NEG_INFINITY;
    for work in works.iter() {
        let gap = work.interval.start - frontier;
        if frontier.is_finite() && gap > 0.0 {
            if trace.events[work.launch as usize].ts >= frontier {
                host_wait += gap;
            } else {
                kernel_wait += gap;
            }
        }
        frontier = frontier.max(work.interval.end);
    }
    (host_wait, kernel_wait)
}

/// The GPU's idle time split into host-wait and kernel-wait, overall and per
/// stream (see [`IdleSplit`]).
pub(super) fn idle_split(trace: &Trace, gpu: &GpuWork) -> IdleSplit {
    let mut all: Vec<&Work> = gpu.linked().collect();
    let (host_wait_us, kernel_wait_us) = split_gaps(trace, &mut all);
    let mut by_stream: BTreeMap<(Option<i64>, Option<i64>), Vec<&Work>> = BTreeMap::new();
    for work in all {
        by_stream
            .entry((work.device, work.stream))
            .or_default()
            .push(work);
    }
    let mut streams: Vec<StreamIdle> = by_stream
        .into_iter()
        .map(|((device, stream), mut works)| {
            let (host_wait_us, kernel_wait_us) = split_gaps(trace, &mut works);
            StreamIdle {
                device,
                stream,
                work_items: works.len() as u64,
                busy_us: IntervalSet::from_intervals(works.iter().map(|w| w.interval).collect())
                    .len(),
                host_wait_us,
                kernel_wait_us,
            }
        })
        .collect();
    streams.sort_by(|a, b| b.busy_us.total_cmp(&a.busy_us));
    IdleSplit {
        host_wait_us,
        kernel_wait_us,
        streams,
    }
}
