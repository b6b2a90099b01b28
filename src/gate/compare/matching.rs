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
