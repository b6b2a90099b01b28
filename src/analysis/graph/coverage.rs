//! Coverage: how much of the GPU's busy time the rows the gate judges hold
//! (op rows and graph rows), what lies outside them, and what the trace
//! says it did not record — the facts behind an inconclusive verdict.

use serde_json::Value;

use crate::analysis::gpu_work::{GpuWork, Work};
use crate::analysis::profile::Coverage;
use crate::analysis::timeline::IntervalSet;
use crate::trace::link::NONE;
use crate::trace::{Metadata, Trace};

/// At most this many profiler warnings are kept.
const MAX_DROPPED: usize = 5;

/// The coverage of a trace's GPU work by rows. `graph_launches_without_work`
/// counts graph launch calls whose replay recorded no GPU work.
pub(super) fn coverage(trace: &Trace, gpu: &GpuWork, graph_launches_without_work: u64) -> Coverage {
    let set = |keep: &dyn Fn(&Work) -> bool| {
        IntervalSet::from_intervals(
            gpu.items
                .iter()
                .filter(|w| keep(w))
                .map(|w| w.interval)
                .collect(),
        )
        .len()
    };
    let in_row = |w: &Work| w.linked && (w.graph || w.op != NONE);
    let busy_us = set(&|w| w.linked);
    let in_rows_us = set(&in_row);
    // An exact zero when nothing is outside, whatever the float rounding.
    let outside_rows_us = if gpu.items.iter().all(|w| !w.linked || in_row(w)) {
        0.0
    } else {
        (busy_us - in_rows_us).max(0.0)
    };
    Coverage {
        busy_us,
        in_rows_us,
        outside_rows_us,
        graph_launches_without_work,
        dropped: dropped_records(&trace.metadata),
    }
}

/// What the profiler says it dropped: a top-level number under a key naming
/// dropped records or events, or a warning line (Kineto writes its logger's
/// warnings as top-level arrays of strings) that speaks of dropped records,
/// events, activities or a full buffer.
fn dropped_records(metadata: &Metadata) -> Vec<String> {
    let speaks_of_loss = |text: &str| {
        let lower = text.to_ascii_lowercase();
        (lower.contains("drop") || lower.contains("overflow") || lower.contains("buffer full"))
            && ["record", "event", "activit", "buffer"]
                .iter()
                .any(|w| lower.contains(w))
    };
    let mut found = Vec::new();
    for (key, value) in &metadata.fields {
        match value {
            Value::Number(n) if speaks_of_loss(key) && n.as_f64().is_some_and(|v| v > 0.0) => {
                found.push(format!("{key}: {n}"));
            }
            Value::String(text) if speaks_of_loss(text) => found.push(text.clone()),
            Value::Array(items) => found.extend(
                items
                    .iter()
                    .filter_map(Value::as_str)
                    .filter(|text| speaks_of_loss(text))
                    .map(str::to_string),
            ),
            _ => {}
        }
    }
    found.truncate(MAX_DROPPED);
    found
}
