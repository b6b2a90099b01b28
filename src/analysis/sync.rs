//! Host time blocked on the device: synchronising runtime calls and
//! `cuda_sync` spans, against the host span of the trace.

use std::collections::BTreeMap;

use crate::analysis::profile::SyncSummary;
use crate::trace::{Kind, Trace};

/// Whether a runtime call blocks the host until the device catches up.
fn is_sync_call(name: &str) -> bool {
    const SYNC: &[&str] = &[
        "cudaDeviceSynchronize",
        "cudaStreamSynchronize",
        "cudaEventSynchronize",
        "cudaStreamWaitEvent",
        "cudaMemcpy",
        "cudaMemcpy2D",
        "hipDeviceSynchronize",
        "hipStreamSynchronize",
        "hipEventSynchronize",
        "hipStreamWaitEvent",
        "hipMemcpy",
        "hipMemcpyWithStream",
        "hipMemcpy2D",
        "cuCtxSynchronize",
        "cuStreamSynchronize",
    ];
    SYNC.contains(&name)
}

/// Host time blocked in synchronising calls, by call name, with the host span.
pub(super) fn sync_summary(trace: &Trace) -> SyncSummary {
    let mut by_name: BTreeMap<&str, (u64, f64)> = BTreeMap::new();
    let (mut first, mut last) = (f64::INFINITY, f64::NEG_INFINITY);
    for event in &trace.events {
        if event.kind.is_host() {
            first = first.min(event.ts);
            last = last.max(event.end());
        } else if event.kind != Kind::CudaSync {
            continue;
        }
        let name = trace.name(event);
        let is_sync = event.kind == Kind::CudaSync
            || (matches!(event.kind, Kind::Runtime | Kind::Driver) && is_sync_call(name));
        if is_sync {
            let entry = by_name.entry(name).or_default();
            entry.0 += 1;
            entry.1 += event.dur.max(0.0);
        }
    }
    let mut by_name: Vec<(String, u64, f64)> = by_name
        .into_iter()
        .map(|(name, (calls, us))| (name.to_string(), calls, us))
        .collect();
    by_name.sort_by(|a, b| b.2.total_cmp(&a.2));
    SyncSummary {
        calls: by_name.iter().map(|e| e.1).sum(),
        time_us: by_name.iter().fold(0.0, |total, e| total + e.2),
        host_span_us: if last > first { last - first } else { 0.0 },
        by_name,
    }
}
