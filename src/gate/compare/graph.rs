//! Graph replay in a comparison: a kernel changed inside a CUDA/HIP graph
//! is one kernel-selection finding, on the graph's whole-graph row, rather
//! than a changed sequence on every row it touches plus a new and a missing
//! row; and the coverage of each side's GPU time by rows, which the judge
//! reads to tell a conclusive verdict from an inconclusive one.

use std::collections::BTreeSet;

use super::model::{OpComparison, OpSide, ShapeChange};
use crate::analysis::profile::Coverage;
use crate::gate::snapshot::Snapshot;

/// Folds the changes inside every graph whose whole-graph row launches a
/// different kernel sequence into that row: the graph's other matched rows
/// lose their own kernel diff, and its new, missing and shape-changed rows
/// leave the lists (a note counts them). Whole-graph rows never count as new or missing:
/// their time is their graph's rows' time.
pub(super) fn fold_graph_changes(
    ops: &mut [OpComparison],
    shape_changed: &mut Vec<ShapeChange>,
    new_ops: &mut Vec<OpSide>,
    missing_ops: &mut Vec<OpSide>,
    notes: &mut Vec<String>,
) {
    let graph_of = |side: &OpSide| side.graph.as_ref().map(|g| g.graph.clone());
    let changed: BTreeSet<String> = ops
        .iter()
        .filter(|op| op.candidate.is_whole_graph() && op.kernel_diff.is_some())
        .filter_map(|op| graph_of(&op.candidate))
        .collect();
    for op in ops.iter_mut() {
        let inside = graph_of(&op.candidate).is_some_and(|g| changed.contains(&g));
        if inside && !op.candidate.is_whole_graph() {
            op.kernel_diff = None;
        }
    }
    new_ops.retain(|side| !side.is_whole_graph());
    missing_ops.retain(|side| !side.is_whole_graph());
    for graph in &changed {
        let inside = |side: &OpSide| graph_of(side).as_ref() == Some(graph);
        let (new, missing, changed_shape) = (
            new_ops.iter().filter(|s| inside(s)).count(),
            missing_ops.iter().filter(|s| inside(s)).count(),
            shape_changed
                .iter()
                .filter(|c| inside(&c.candidate))
                .count(),
        );
        new_ops.retain(|side| !inside(side));
        missing_ops.retain(|side| !inside(side));
        shape_changed.retain(|change| !inside(&change.candidate));
        if new + missing + changed_shape > 0 {
            notes.push(format!(
                "graph {graph} launches a different kernel sequence: its {new} new, \
                 {missing} missing and {changed_shape} re-paired row(s) are part of that \
                 kernel-selection finding"
            ));
        }
    }
}

/// A side's coverage of GPU time by rows: what its snapshot records, else
/// (every piece of GPU work in a row) its whole busy time.
pub(super) fn coverage_of(snapshot: &Snapshot) -> Coverage {
    snapshot.coverage.clone().unwrap_or_else(|| Coverage {
        busy_us: snapshot.timeline.busy_time,
        in_rows_us: snapshot.timeline.busy_time,
        ..Coverage::default()
    })
}
