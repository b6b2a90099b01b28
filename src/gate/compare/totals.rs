//! Op totals: one row per op name and call site (`nn.Module` path) summing
//! every shape of it, so that an op whose shapes change from step to step
//! (an embedding lookup over a different number of indices each step) is
//! judged at all. Each of its shapes alone is a one-step row that appears
//! on one side only, or a single sample below the impact bar.
//!
//! The samples are the name's per-step totals over every step of each side
//! (0 in a step without a call), when both sides have two or more steps;
//! otherwise one sample per side, the run's total.

use std::collections::BTreeMap;

use super::learned::TotalKey;
use super::model::{OpComparison, OpSide, SamplesBasis};
use super::rows::{Context, learned_expectation, median_or_zero};
use crate::analysis::ops::stats::percent;
use crate::gate::snapshot::{OpKey, OpSnapshot, Snapshot};
use crate::gate::stats;

/// The rows of one op name and call site on each side.
#[derive(Default)]
struct Group<'a> {
    /// Per baseline run, its rows.
    baseline: Vec<Vec<&'a OpSnapshot>>,
    /// The candidate's rows.
    candidate: Vec<&'a OpSnapshot>,
}

/// The op totals worth comparing: names (and call sites) present on both
/// sides with more than one row on a side, or whose rows' keys differ
/// between the sides. Rows of graph-replayed work are left out (their
/// place in the graph is their key). Largest absolute impact first.
pub(super) fn op_totals(context: &Context<'_>) -> Vec<OpComparison> {
    let runs = context.baselines.len();
    let mut groups: BTreeMap<TotalKey, Group<'_>> = BTreeMap::new();
    // CUDA against ROCm, as the traces record it (learned ratios compare
    // earlier pairs without hardware figures, and must pair the same way).
    let platform = |s: &Snapshot| s.fingerprint.platform.clone();
    let across_platforms = context
        .baselines
        .iter()
        .any(|b| platform(b) != platform(context.candidate));
    let key_of = |op: &OpSnapshot| {
        let name = match vendor_twin(&op.name) {
            Some(both) if across_platforms => both.to_string(),
            _ => op.name.clone(),
        };
        (name, op.module_path.clone())
    };
    for (run, baseline) in context.baselines.iter().enumerate() {
        for op in baseline.ops.iter().filter(|op| op.graph.is_none()) {
            let group = groups.entry(key_of(op)).or_default();
            group.baseline.resize(runs, Vec::new());
            group.baseline[run].push(op);
        }
    }
    for op in context.candidate.ops.iter().filter(|op| op.graph.is_none()) {
        groups.entry(key_of(op)).or_default().candidate.push(op);
    }
    let mut totals: Vec<OpComparison> = groups
        .into_iter()
        .filter(|(_, group)| worth_a_total(group))
        .map(|(key, group)| compare_total(context, &key, &group))
        .collect();
    totals.sort_by(OpComparison::most_impact_first);
    totals
}

/// One op under the two vendor libraries' names (PyTorch dispatches it to
/// cuDNN on CUDA and MIOpen on ROCm, with other arguments): across
/// platforms its totals pair under both names, so its time ratio can be
/// expected and judged like any other op's.
const VENDOR_TWINS: [(&str, &str, &str); 6] = [
    (
        "aten::cudnn_convolution",
        "aten::miopen_convolution",
        "aten::cudnn_convolution / aten::miopen_convolution",
    ),
    (
        "aten::cudnn_convolution_transpose",
        "aten::miopen_convolution_transpose",
        "aten::cudnn_convolution_transpose / aten::miopen_convolution_transpose",
    ),
    (
        "aten::cudnn_batch_norm",
        "aten::miopen_batch_norm",
        "aten::cudnn_batch_norm / aten::miopen_batch_norm",
    ),
    (
        "aten::cudnn_batch_norm_backward",
        "aten::miopen_batch_norm_backward",
        "aten::cudnn_batch_norm_backward / aten::miopen_batch_norm_backward",
    ),
    (
        "aten::_cudnn_rnn",
        "aten::miopen_rnn",
        "aten::_cudnn_rnn / aten::miopen_rnn",
    ),
    (
        "aten::cudnn_grid_sampler",
        "aten::miopen_grid_sampler",
        "aten::cudnn_grid_sampler / aten::miopen_grid_sampler",
    ),
];

/// The name an op's total has across platforms when it is a vendor twin.
fn vendor_twin(name: &str) -> Option<&'static str> {
    VENDOR_TWINS
        .iter()
        .find(|(cuda, rocm, _)| name == *cuda || name == *rocm)
        .map(|(_, _, both)| *both)
}

/// Present on both sides, and either several shapes on a side or shapes
/// that differ between the sides.
fn worth_a_total(group: &Group<'_>) -> bool {
    let present = group.baseline.iter().any(|rows| !rows.is_empty());
    if !present || group.candidate.is_empty() {
        return false;
    }
    let several = group.candidate.len() > 1 || group.baseline.iter().any(|rows| rows.len() > 1);
    let keys = |rows: &[&OpSnapshot]| {
        let mut keys: Vec<OpKey> = rows.iter().map(|op| op.key()).collect();
        keys.sort();
        keys
    };
    let candidate_keys = keys(&group.candidate);
    several
        || group
            .baseline
            .iter()
            .filter(|rows| !rows.is_empty())
            .any(|rows| keys(rows) != candidate_keys)
}

/// One side's rows summed into a single row.
fn summed(context: &Context<'_>, rows: &[&OpSnapshot], snapshot: &Snapshot) -> (f64, Vec<f64>) {
    let total: f64 = rows.iter().map(|op| op.direct.sum).sum();
    let per_step = snapshot
        .steps
        .iter()
        .map(|step| {
            rows.iter()
                .flat_map(|op| op.step_us.iter())
                .filter(|(number, _)| *number == step.number)
                .map(|(_, us)| us)
                .sum()
        })
        .collect();
    (total * (context.scale)(snapshot), per_step)
}

/// The side of a total: the summed time, shapes counted in the key;
/// `rows` is not empty.
fn total_side(
    key: &TotalKey,
    rows: &[&OpSnapshot],
    runs: usize,
    totals: &[f64],
    time_us: f64,
) -> OpSide {
    let mut shapes: Vec<OpKey> = rows.iter().map(|op| op.key()).collect();
    shapes.sort();
    shapes.dedup();
    let count = rows.iter().map(|op| op.direct.count).sum();
    let samples: Vec<f64> = rows
        .iter()
        .flat_map(|op| op.samples_us.iter().copied())
        .collect();
    let module_path = key.1.clone();
    let key = OpKey {
        name: key.0.clone(),
        input_dims: match shapes.len() {
            1 => "1 shape".to_string(),
            n => format!("{n} shapes"),
        },
        ..OpKey::default()
    };
    OpSide {
        module_path,
        runs,
        count,
        total_us: median_or_zero(totals.iter().copied()),
        time_us,
        ..OpSide::from_samples(key, rows[0].category, &samples)
    }
}

/// Compares one op total: per-step samples when both sides have steps.
fn compare_total(context: &Context<'_>, key: &TotalKey, group: &Group<'_>) -> OpComparison {
    let candidate = context.candidate;
    let base_sums: Vec<(f64, Vec<f64>)> = group
        .baseline
        .iter()
        .zip(context.baselines)
        .map(|(rows, run)| summed(context, rows, run))
        .collect();
    let (cand_time, cand_steps) = summed(context, &group.candidate, candidate);
    let base_time = median_or_zero(base_sums.iter().map(|(time, _)| *time));
    let base_steps: Vec<f64> = base_sums
        .iter()
        .flat_map(|(_, steps)| steps.iter().copied())
        .collect();
    let (samples_basis, base_samples, cand_samples) =
        if base_steps.len() >= 2 && cand_steps.len() >= 2 {
            (SamplesBasis::Steps, base_steps, cand_steps)
        } else {
            (SamplesBasis::Runs, vec![base_time], vec![cand_time])
        };
    let options = context.options;
    let seed = stats::seed_from_parts(
        options.seed,
        &["total", &key.0, key.1.as_deref().unwrap_or("")],
    );
    let estimate = if context.baselines.len() == 1 {
        stats::paired_ratio_of_medians_ci(
            &base_samples,
            &cand_samples,
            options.confidence,
            options.resamples,
            seed,
        )
    } else {
        stats::ratio_of_medians_ci(
            &base_samples,
            &cand_samples,
            options.confidence,
            options.resamples,
            seed,
        )
    };
    let base_rows: Vec<&OpSnapshot> = group.baseline.iter().flatten().copied().collect();
    let runs = group
        .baseline
        .iter()
        .filter(|rows| !rows.is_empty())
        .count();
    let run_totals: Vec<f64> = group
        .baseline
        .iter()
        .map(|rows| rows.iter().map(|op| op.direct.sum).sum())
        .collect();
    let baseline = total_side(key, &base_rows, runs, &run_totals, base_time);
    let candidate_side = total_side(
        key,
        &group.candidate,
        1,
        &[group.candidate.iter().map(|op| op.direct.sum).sum()],
        cand_time,
    );
    let impact_us = cand_time - base_time;
    OpComparison {
        baseline_sample_median_us: stats::median(&base_samples).unwrap_or(0.0),
        candidate_sample_median_us: stats::median(&cand_samples).unwrap_or(0.0),
        estimate,
        samples_basis,
        noise: stats::max_relative_deviation(
            &base_sums.iter().map(|(time, _)| *time).collect::<Vec<_>>(),
        ),
        // Only a learned ratio: a total has no perf model to derive one from.
        expected: context
            .learned
            .and_then(|l| l.totals.get(key))
            .map(learned_expectation),
        impact_percent: percent(impact_us, context.baseline_total_us),
        impact_us,
        baseline,
        candidate: candidate_side,
        kernel_diff: None,
    }
}
