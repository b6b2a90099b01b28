//! Pairs the op rows of the baseline runs with the candidate's: by exact
//! key, then by name and call site (shape changed), then a GPU-only
//! trace's renamed kernels; the rest is new or missing (see the module doc
//! of [`crate::gate::compare`]).

use std::collections::{HashMap, HashSet};

use crate::gate::snapshot::{OpKey, OpSnapshot, Snapshot};

/// The baseline rows of one key: one entry per baseline run, `None` where
/// the run lacks it.
pub(super) type RunRows<'a> = Vec<Option<&'a OpSnapshot>>;

/// The result of matching rows.
pub(super) struct Matching<'a> {
    /// Rows with the same key on both sides.
    pub(super) matched: Vec<(OpKey, RunRows<'a>, &'a OpSnapshot)>,
    /// Kernel rows of a trace without CPU ops paired across a rename: the
    /// only left-over kernel row on each side with its launch count.
    pub(super) renamed: Vec<(RunRows<'a>, &'a OpSnapshot)>,
    /// Rows paired by name and call site, shapes differing.
    pub(super) shape_changed: Vec<(RunRows<'a>, &'a OpSnapshot)>,
    /// Candidate rows without a partner.
    pub(super) new: Vec<&'a OpSnapshot>,
    /// Baseline rows without a partner.
    pub(super) missing: Vec<RunRows<'a>>,
}

/// Matches the candidate's rows against the rows pooled over the baseline runs.
pub(super) fn match_rows<'a>(baselines: &'a [Snapshot], candidate: &'a Snapshot) -> Matching<'a> {
    // Baseline keys in first-seen order (first run's order, then later runs').
    let mut order: Vec<OpKey> = Vec::new();
    let mut pooled: HashMap<OpKey, RunRows<'a>> = HashMap::new();
    for (run, baseline) in baselines.iter().enumerate() {
        for op in &baseline.ops {
            let key = op.key();
            let rows = pooled.entry(key.clone()).or_insert_with(|| {
                order.push(key);
                vec![None; baselines.len()]
            });
            rows[run].get_or_insert(op);
        }
    }
    let mut matched = Vec::new();
    let mut seen: HashSet<OpKey> = HashSet::new();
    let mut unmatched_candidate: Vec<&OpSnapshot> = Vec::new();
    for op in &candidate.ops {
        let key = op.key();
        if !seen.insert(key.clone()) {
            continue; // a snapshot keeps keys unique; tolerate hand-made duplicates
        }
        match pooled.remove(&key) {
            Some(rows) => matched.push((key, rows, op)),
            None => unmatched_candidate.push(op),
        }
    }
    let mut unmatched_baseline: Vec<RunRows<'a>> = order
        .into_iter()
        .filter_map(|key| pooled.remove(&key))
        .collect();

    // Shape changes: same name and call site.
    let representative = |rows: &RunRows<'a>| -> &'a OpSnapshot {
        rows.iter()
            .rev()
            .flatten()
            .next()
            .copied()
            .expect("a pooled key has a row")
    };
    let baseline_time =
        |rows: &RunRows<'a>| -> f64 { rows.iter().flatten().map(|op| op.direct.sum).sum() };
    unmatched_baseline.sort_by(|a, b| baseline_time(b).total_cmp(&baseline_time(a)));
    unmatched_candidate.sort_by(|a, b| b.direct.sum.total_cmp(&a.direct.sum));
    let mut shape_changed = Vec::new();
    let mut used_baseline = vec![false; unmatched_baseline.len()];
    let mut new = Vec::new();
    for op in unmatched_candidate.iter().copied() {
        let partner = unmatched_baseline.iter().enumerate().position(|(i, rows)| {
            let base = representative(rows);
            !used_baseline[i]
                && base.name == op.name
                && match (&base.module_path, &op.module_path) {
                    (Some(a), Some(b)) => a == b,
                    (None, None) => {
                        let count_base = unmatched_baseline
                            .iter()
                            .filter(|r| {
                                let r = representative(r);
                                r.name == op.name && r.module_path.is_none()
                            })
                            .count();
                        let count_cand = unmatched_candidate
                            .iter()
                            .filter(|c| c.name == op.name && c.module_path.is_none())
                            .count();
                        count_base == 1 && count_cand == 1
                    }
                    _ => false,
                }
        });
        match partner {
            Some(i) => {
                used_baseline[i] = true;
                shape_changed.push((unmatched_baseline[i].clone(), op));
            }
            None => new.push(op),
        }
    }
    let missing: Vec<RunRows<'a>> = unmatched_baseline
        .into_iter()
        .zip(used_baseline)
        .filter(|(_, used)| !used)
        .map(|(rows, _)| rows)
        .collect();
    let (renamed, new, missing) = pair_renamed_kernels(new, missing);
    Matching {
        matched,
        renamed,
        shape_changed,
        new,
        missing,
    }
}

/// Whether a row is a kernel row of a trace without CPU ops: named after
/// its one kernel, with no arguments, call site or graph.
fn is_kernel_row(op: &OpSnapshot) -> bool {
    op.graph.is_none()
        && op.module_path.is_none()
        && op.input_dims.is_empty()
        && op.input_type.is_empty()
        && op.input_strides.is_empty()
        && op.concrete_inputs.is_empty()
        && op.kernel_sequence.len() == 1
        && op.kernel_sequence[0] == op.name
}

/// Pairs a new kernel row with a missing one when each is the only
/// left-over kernel row on its side with that launch count: a GPU-only
/// trace's rows are its kernel names, so a kernel the library swapped for
/// another (launched as often) is one row compared across the rename, a
/// kernel-selection change, not a missing and a new op. Ambiguous counts
/// stay new and missing. Returns the pairs and what is left of each list.
#[allow(clippy::type_complexity)]
fn pair_renamed_kernels<'a>(
    new: Vec<&'a OpSnapshot>,
    missing: Vec<RunRows<'a>>,
) -> (
    Vec<(RunRows<'a>, &'a OpSnapshot)>,
    Vec<&'a OpSnapshot>,
    Vec<RunRows<'a>>,
) {
    let base_kernel = |rows: &RunRows<'a>| -> Option<u64> {
        let present: Vec<&OpSnapshot> = rows.iter().flatten().copied().collect();
        let count = present.first()?.direct.count;
        present
            .iter()
            .all(|op| is_kernel_row(op) && op.direct.count == count)
            .then_some(count)
    };
    let cand_kernel = |op: &OpSnapshot| is_kernel_row(op).then_some(op.direct.count);
    let unique = |counts: &[Option<u64>], count: u64| {
        counts.iter().filter(|&&c| c == Some(count)).count() == 1
    };
    let base_counts: Vec<Option<u64>> = missing.iter().map(base_kernel).collect();
    let cand_counts: Vec<Option<u64>> = new.iter().map(|op| cand_kernel(op)).collect();
    let mut pairs = Vec::new();
    let mut used = vec![false; missing.len()];
    let mut left_new = Vec::new();
    for (op, count) in new.into_iter().zip(&cand_counts) {
        let partner = count
            .filter(|&c| c > 0 && unique(&cand_counts, c) && unique(&base_counts, c))
            .and_then(|c| base_counts.iter().position(|&b| b == Some(c)));
        match partner {
            Some(i) => {
                used[i] = true;
                pairs.push((missing[i].clone(), op));
            }
            None => left_new.push(op),
        }
    }
    let left_missing = missing
        .into_iter()
        .zip(used)
        .filter(|(_, used)| !used)
        .map(|(rows, _)| rows)
        .collect();
    (pairs, left_new, left_missing)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::ops::stats::Stats;
    use crate::analysis::profile::{GraphPlace, GraphRole};
    use crate::gate::snapshot::tests::tiny_snapshot;

    /// An op row called `calls` times for `us` µs each.
    fn op(
        name: &str,
        input_dims: &str,
        module_path: Option<&str>,
        calls: usize,
        us: f64,
    ) -> OpSnapshot {
        let samples = vec![us; calls];
        OpSnapshot {
            name: name.to_string(),
            input_dims: input_dims.to_string(),
            module_path: module_path.map(str::to_string),
            direct: Stats::of(&samples),
            samples_us: samples,
            ..tiny_snapshot().ops[0].clone()
        }
    }

    /// A GPU-only trace's row: named after its one kernel, no arguments.
    fn kernel_row(name: &str, launches: usize) -> OpSnapshot {
        OpSnapshot {
            input_type: String::new(),
            input_strides: String::new(),
            concrete_inputs: String::new(),
            kernel_sequence: vec![name.to_string()],
            ..op(name, "", None, launches, 5.0)
        }
    }

    fn snapshot(ops: Vec<OpSnapshot>) -> Snapshot {
        Snapshot {
            ops,
            ..tiny_snapshot()
        }
    }

    fn first_name(rows: &RunRows<'_>) -> String {
        rows.iter().flatten().next().expect("a row").name.clone()
    }

    fn dims(rows: &RunRows<'_>) -> String {
        rows.iter()
            .flatten()
            .next()
            .expect("a row")
            .input_dims
            .clone()
    }

    /// Renamed pairs, new and missing rows, by name.
    type Outcome = (Vec<(String, String)>, Vec<String>, Vec<String>);

    fn outcome(matching: &Matching<'_>) -> Outcome {
        (
            matching
                .renamed
                .iter()
                .map(|(rows, cand)| (first_name(rows), cand.name.clone()))
                .collect(),
            matching.new.iter().map(|op| op.name.clone()).collect(),
            matching.missing.iter().map(first_name).collect(),
        )
    }

    fn strings(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn a_kernel_renamed_with_its_launch_count_is_one_row() {
        let baselines = [snapshot(vec![
            kernel_row("shared", 2),
            kernel_row("gemm_v1", 4),
        ])];
        let candidate = snapshot(vec![kernel_row("shared", 2), kernel_row("gemm_v2", 4)]);
        let matching = match_rows(&baselines, &candidate);
        let matched: Vec<&str> = matching
            .matched
            .iter()
            .map(|(k, _, _)| k.name.as_str())
            .collect();
        assert_eq!(matched, ["shared"]);
        assert_eq!(
            outcome(&matching),
            (
                vec![("gemm_v1".to_string(), "gemm_v2".to_string())],
                vec![],
                vec![]
            )
        );
        // Over a window, every run that has the row launched it as often.
        for (counts, paired) in [([4, 4], true), ([4, 5], false), ([0, 4], true)] {
            let window: Vec<Snapshot> = counts
                .iter()
                .map(|&n| {
                    snapshot(if n == 0 {
                        vec![]
                    } else {
                        vec![kernel_row("a", n)]
                    })
                })
                .collect();
            let matching = match_rows(&window, &candidate);
            let renamed = matching
                .renamed
                .iter()
                .any(|(rows, _)| first_name(rows) == "a");
            assert_eq!(renamed, paired, "{counts:?}");
        }
    }

    #[test]
    fn ambiguous_other_or_no_launch_counts_stay_new_and_missing() {
        let cases = [
            (
                vec![kernel_row("a", 4)],
                vec![kernel_row("b", 4), kernel_row("c", 4)],
            ),
            (
                vec![kernel_row("a", 4), kernel_row("b", 4)],
                vec![kernel_row("c", 4)],
            ),
            (vec![kernel_row("a", 4)], vec![kernel_row("b", 5)]),
            (vec![kernel_row("a", 0)], vec![kernel_row("b", 0)]),
        ];
        for (baseline, candidate) in cases {
            let (baselines, candidate) = ([snapshot(baseline)], snapshot(candidate));
            let matching = match_rows(&baselines, &candidate);
            let (renamed, new, missing) = outcome(&matching);
            assert!(renamed.is_empty(), "{new:?} {missing:?}");
            assert_eq!(
                new.len() + missing.len(),
                baselines[0].ops.len() + candidate.ops.len()
            );
        }
    }

    /// A row with arguments, a call site, a graph, several kernels or a
    /// kernel of another name is no GPU-only kernel row: it never pairs
    /// across a rename, on either side.
    #[test]
    fn only_a_kernel_row_pairs_across_a_rename() {
        type Change = fn(&mut OpSnapshot);
        let changes: [(&str, Change); 8] = [
            ("graph", |op| {
                op.graph = Some(GraphPlace {
                    graph: "graph 1".to_string(),
                    role: GraphRole::Kernel,
                    launch: "cudaGraphLaunch".to_string(),
                    variant: None,
                })
            }),
            ("call site", |op| {
                op.module_path = Some("Model_0".to_string())
            }),
            ("dims", |op| op.input_dims = "((4,),)".to_string()),
            ("type", |op| op.input_type = "('float',)".to_string()),
            ("strides", |op| op.input_strides = "((1,),)".to_string()),
            ("concrete", |op| op.concrete_inputs = "('2',)".to_string()),
            ("two kernels", |op| {
                op.kernel_sequence.push("other".to_string())
            }),
            ("another kernel", |op| {
                op.kernel_sequence = strings(&["other"])
            }),
        ];
        for (what, change) in changes {
            for on_baseline in [true, false] {
                let (mut old, mut new) = (kernel_row("gemm_v1", 4), kernel_row("gemm_v2", 4));
                change(if on_baseline { &mut old } else { &mut new });
                let (baselines, candidate) = ([snapshot(vec![old])], snapshot(vec![new]));
                let matching = match_rows(&baselines, &candidate);
                assert_eq!(
                    outcome(&matching),
                    (vec![], strings(&["gemm_v2"]), strings(&["gemm_v1"])),
                    "{what}, on the baseline: {on_baseline}"
                );
            }
        }
    }

    /// Left-over rows of one name pair by call site; rows without one pair
    /// only when each side has exactly one such row; every baseline row
    /// pairs once, the largest first.
    #[test]
    fn changed_shapes_pair_by_name_and_call_site_once_each() {
        let baselines = [snapshot(vec![
            op("aten::add", "((9,),)", Some("P1"), 1, 900.0),
            op("aten::mm", "A", Some("P1"), 1, 50.0),
            op("aten::mm", "B", Some("P2"), 1, 40.0),
            op("aten::mm", "C", None, 1, 30.0),
            op("aten::bmm", "D", None, 1, 20.0),
            op("aten::bmm", "E", None, 1, 10.0),
        ])];
        let candidate = snapshot(vec![
            op("aten::mm", "A2", Some("P1"), 1, 55.0),
            op("aten::mm", "A3", Some("P1"), 1, 45.0),
            op("aten::mm", "B2", Some("P3"), 1, 40.0),
            op("aten::mm", "C2", None, 1, 30.0),
            op("aten::bmm", "D2", None, 1, 20.0),
        ]);
        let matching = match_rows(&baselines, &candidate);
        let pairs: Vec<(String, String)> = matching
            .shape_changed
            .iter()
            .map(|(rows, cand)| (dims(rows), cand.input_dims.clone()))
            .collect();
        assert_eq!(
            pairs,
            [
                ("A".to_string(), "A2".to_string()),
                ("C".to_string(), "C2".to_string())
            ]
        );
        let new: Vec<&str> = matching
            .new
            .iter()
            .map(|op| op.input_dims.as_str())
            .collect();
        assert_eq!(new, ["A3", "B2", "D2"]);
        let missing: Vec<String> = matching.missing.iter().map(dims).collect();
        assert_eq!(missing, ["((9,),)", "B", "D", "E"]);
        assert!(matching.matched.is_empty() && matching.renamed.is_empty());
    }

    /// A candidate key seen twice (a hand-made snapshot) is matched once.
    #[test]
    fn a_key_is_matched_once() {
        let row = op("aten::mm", "A", Some("P1"), 2, 10.0);
        let baselines = [snapshot(vec![row.clone()])];
        let candidate = snapshot(vec![row.clone(), row]);
        let matching = match_rows(&baselines, &candidate);
        assert_eq!(matching.matched.len(), 1);
        assert!(matching.new.is_empty() && matching.missing.is_empty());
    }
}
