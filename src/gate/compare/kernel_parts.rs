//! Kernel parts: a matched row whose calls launch different kernels (a
//! trace without shapes keeps every `aten::mm` in one row, whatever GEMM
//! each call runs) is also compared kernel by kernel, over each kernel's
//! own launches. A kernel family slowed ×1.3 that some of the row's calls
//! launch barely moves the row's median call, but every one of its own
//! launches. Only rows compared per call (no per-step totals, which hold
//! every kernel's time already) and outside graphs (their rows name their
//! kernels) have parts.

use super::matching::RunRows;
use super::model::{KernelPart, OpComparison, OpSide, SamplesBasis};
use super::rows::{Context, median_or_zero, ratio_estimate};
use crate::analysis::ops::stats::{Stats, percent};
use crate::gate::snapshot::{KernelSamples, OpKey, OpSnapshot};
use crate::gate::stats;

/// The kernel parts of one matched row (`row` its comparison): one per
/// kernel every side's row launches, when every side records its kernels'
/// launches; none otherwise (a side that records none launches no kernel
/// of the candidate's).
pub(super) fn kernel_parts(
    context: &Context<'_>,
    key: &OpKey,
    rows: &RunRows<'_>,
    candidate: &OpSnapshot,
    row: &OpComparison,
) -> Vec<KernelPart> {
    let present: Vec<&OpSnapshot> = rows.iter().flatten().copied().collect();
    if row.samples_basis != SamplesBasis::Invocations
        || candidate.graph.is_some()
        || present.len() != rows.len()
    {
        return Vec::new();
    }
    let kernel_of = |op: &'_ OpSnapshot, name: &str| -> Option<KernelSamples> {
        op.kernel_samples_us
            .iter()
            .find(|k| k.name == name)
            .cloned()
    };
    candidate
        .kernel_samples_us
        .iter()
        .filter_map(|kernel| {
            let baseline: Vec<KernelSamples> = present
                .iter()
                .map(|op| kernel_of(op, &kernel.name))
                .collect::<Option<_>>()?;
            Some(part(context, key, &baseline, kernel, row))
        })
        .collect()
}

/// One kernel's part: each side's launches against the other's, paired
/// launch by launch with one baseline run of as many launches.
fn part(
    context: &Context<'_>,
    key: &OpKey,
    baseline: &[KernelSamples],
    candidate: &KernelSamples,
    row: &OpComparison,
) -> KernelPart {
    let kernel = candidate.name.as_str();
    let options = context.options;
    let seed = stats::seed_from_parts(
        options.seed,
        &[
            "kernel",
            kernel,
            &key.name,
            &key.input_dims,
            &key.input_type,
            &key.input_strides,
            &key.concrete_inputs,
        ],
    );
    // A side's time is its row's time in the kernel's share of the row's
    // kernel time (the row's time is on the comparison's basis).
    let side = |row_side: &OpSide, kernels: &[&KernelSamples]| {
        let launches: Vec<f64> = kernels
            .iter()
            .flat_map(|k| k.samples_us.iter().copied())
            .collect();
        let stats = Stats::of(&launches);
        let total_us = median_or_zero(kernels.iter().map(|k| k.total_us));
        let share = (total_us / row_side.total_us.max(f64::MIN_POSITIVE)).min(1.0);
        let mut counts: Vec<u64> = kernels.iter().map(|k| k.launches).collect();
        counts.sort_unstable();
        OpSide {
            count: counts[counts.len().saturating_sub(1) / 2],
            total_us,
            time_us: row_side.time_us * share,
            median_us: stats.median,
            mean_us: stats.mean,
            min_us: stats.min,
            max_us: stats.max,
            kernel_sequence: vec![kernel.to_string()],
            kernel_us: Vec::new(),
            ..row_side.clone()
        }
    };
    let base_side = side(&row.baseline, &baseline.iter().collect::<Vec<_>>());
    let cand_side = side(&row.candidate, &[candidate]);
    KernelPart {
        kernel: kernel.to_string(),
        comparison: per_launch(context, seed, baseline, candidate, base_side, cand_side),
    }
}

/// The comparison of one kernel's launches (a kernel part's, a kernel
/// family's): the baseline runs' launches pooled, paired launch by launch
/// with one run of as many launches.
pub(super) fn per_launch<K: std::borrow::Borrow<KernelSamples>>(
    context: &Context<'_>,
    seed: u64,
    baseline: &[K],
    candidate: &KernelSamples,
    base_side: OpSide,
    cand_side: OpSide,
) -> OpComparison {
    let pooled: Vec<f64> = baseline
        .iter()
        .flat_map(|k| k.borrow().samples_us.iter().copied())
        .collect();
    let estimate = ratio_estimate(
        context.options,
        seed,
        baseline.len() == 1 && pooled.len() == candidate.samples_us.len(),
        &pooled,
        &candidate.samples_us,
    );
    let impact_us = cand_side.time_us - base_side.time_us;
    OpComparison {
        baseline_sample_median_us: stats::median(&pooled).unwrap_or(0.0),
        candidate_sample_median_us: stats::median(&candidate.samples_us).unwrap_or(0.0),
        kernel_diff: None,
        estimate,
        samples_basis: SamplesBasis::Invocations,
        noise: stats::max_relative_deviation(
            &baseline
                .iter()
                .map(|k| median_or_zero(k.borrow().samples_us.iter().copied()))
                .collect::<Vec<_>>(),
        ),
        expected: None,
        impact_percent: percent(impact_us, context.baseline_total_us),
        impact_us,
        baseline: base_side,
        candidate: cand_side,
    }
}
