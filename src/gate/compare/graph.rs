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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::ops::category::Category;
    use crate::analysis::profile::{GraphPlace, GraphRole};
    use crate::gate::compare::model::SamplesBasis;
    use crate::gate::snapshot::OpKey;
    use crate::gate::stats;

    /// A row named `name`, in `graph` with `role` when given.
    fn side(name: &str, graph: Option<(&str, GraphRole)>) -> OpSide {
        let key = OpKey {
            name: name.to_string(),
            ..OpKey::default()
        };
        OpSide {
            graph: graph.map(|(graph, role)| GraphPlace {
                graph: graph.to_string(),
                role,
                launch: "cudaGraphLaunch".to_string(),
                variant: None,
            }),
            ..OpSide::from_samples(key, Category::Gemm, &[1.0])
        }
    }

    /// A matched row of `side` on both sides, with a kernel diff or not.
    fn matched(side: OpSide, diff: bool) -> OpComparison {
        OpComparison {
            baseline: side.clone(),
            candidate: side,
            estimate: stats::ratio_of_medians_ci(&[1.0], &[1.0], 0.95, 0, 1),
            samples_basis: SamplesBasis::Invocations,
            baseline_sample_median_us: 1.0,
            candidate_sample_median_us: 1.0,
            noise: None,
            expected: None,
            impact_us: 0.0,
            impact_percent: 0.0,
            kernel_diff: diff.then(|| "--- baseline\n+++ candidate\n".to_string()),
        }
    }

    fn shape_change(side: OpSide) -> ShapeChange {
        ShapeChange {
            baseline: side.clone(),
            candidate: side,
            impact_us: 0.0,
            impact_percent: 0.0,
            kernel_diff: None,
        }
    }

    fn names(sides: &[OpSide]) -> Vec<&str> {
        sides.iter().map(|s| s.key.name.as_str()).collect()
    }

    /// Graph `g1` launches other kernels: its rows' own diffs, new, missing
    /// and re-paired rows fold into its whole-graph row, with a note that
    /// counts them. Graph `g2` launches the same kernels: its rows keep
    /// theirs, as rows outside graphs do. Whole-graph rows are never new
    /// or missing.
    #[test]
    fn a_graph_that_launches_other_kernels_holds_its_rows_changes() {
        let (g1, g2) = (
            Some(("g1", GraphRole::Graph)),
            Some(("g2", GraphRole::Graph)),
        );
        let in_g1 = Some(("g1", GraphRole::CapturedOp));
        let in_g2 = Some(("g2", GraphRole::Kernel));
        let mut ops = vec![
            matched(side("graph g1", g1), true),
            matched(side("inside g1", in_g1), true),
            matched(side("graph g2", g2), false),
            matched(side("inside g2", in_g2), true),
            matched(side("outside", None), true),
        ];
        let mut shape_changed = vec![
            shape_change(side("re-paired in g1", in_g1)),
            shape_change(side("re-paired outside", None)),
        ];
        let mut new_ops = vec![
            side("new in g1", in_g1),
            side("new outside", None),
            side("new graph g3", Some(("g3", GraphRole::Graph))),
        ];
        let mut missing_ops = vec![side("missing in g1", in_g1), side("missing in g2", in_g2)];
        let mut notes = Vec::new();
        fold_graph_changes(
            &mut ops,
            &mut shape_changed,
            &mut new_ops,
            &mut missing_ops,
            &mut notes,
        );
        let with_diff: Vec<&str> = ops
            .iter()
            .filter(|op| op.kernel_diff.is_some())
            .map(|op| op.candidate.key.name.as_str())
            .collect();
        assert_eq!(with_diff, ["graph g1", "inside g2", "outside"]);
        assert_eq!(names(&new_ops), ["new outside"]);
        assert_eq!(names(&missing_ops), ["missing in g2"]);
        let repaired: Vec<&str> = shape_changed
            .iter()
            .map(|c| c.candidate.key.name.as_str())
            .collect();
        assert_eq!(repaired, ["re-paired outside"]);
        assert_eq!(
            notes,
            [
                "graph g1 launches a different kernel sequence: its 1 new, 1 missing and 1 \
              re-paired row(s) are part of that kernel-selection finding"
            ]
        );
    }

    /// A changed graph's note comes with any one kind of folded row alone,
    /// and not without one.
    #[test]
    fn a_changed_graph_is_noted_when_it_folds_any_row() {
        let in_g1 = Some(("g1", GraphRole::Kernel));
        for (new, missing, repaired) in [(1, 0, 0), (0, 1, 0), (0, 0, 1), (0, 0, 0)] {
            let mut ops = vec![matched(
                side("graph g1", Some(("g1", GraphRole::Graph))),
                true,
            )];
            let mut new_ops = vec![side("new", in_g1); new];
            let mut missing_ops = vec![side("missing", in_g1); missing];
            let mut shape_changed = vec![shape_change(side("re-paired", in_g1)); repaired];
            let mut notes = Vec::new();
            fold_graph_changes(
                &mut ops,
                &mut shape_changed,
                &mut new_ops,
                &mut missing_ops,
                &mut notes,
            );
            let expected = (new + missing + repaired > 0).then(|| {
                format!(
                    "graph g1 launches a different kernel sequence: its {new} new, {missing} \
                     missing and {repaired} re-paired row(s) are part of that kernel-selection \
                     finding"
                )
            });
            assert_eq!(
                notes,
                Vec::from_iter(expected),
                "{new} {missing} {repaired}"
            );
        }
    }
}
