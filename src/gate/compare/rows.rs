//! One op row, both sides: the figures of each side over its runs, and for
//! a matched row the samples, the ratio of medians with its bootstrap
//! interval, the run-to-run noise and the impact.

use super::expected::expectation;
use super::kernels::kernel_diff;
use super::learned::{LearnedRatio, LearnedRatios};
use super::matching::RunRows;
use super::model::{
    CompareOptions, Expectation, ExpectationBasis, OpComparison, OpSide, SamplesBasis,
};
use crate::analysis::hardware::Hardware;
use crate::analysis::ops::stats::percent;
use crate::gate::snapshot::{OpKey, OpSnapshot, Snapshot};
use crate::gate::stats;

/// What every row comparison needs.
pub(super) struct Context<'a> {
    /// The baseline runs.
    pub(super) baselines: &'a [Snapshot],
    /// The candidate.
    pub(super) candidate: &'a Snapshot,
    /// How to compare.
    pub(super) options: &'a CompareOptions,
    /// The factor that puts a run's totals on the comparison's basis.
    pub(super) scale: &'a dyn Fn(&Snapshot) -> f64,
    /// The denominator of every impact, µs.
    pub(super) baseline_total_us: f64,
    /// Baseline and candidate hardware, when the sides differ and both are known.
    pub(super) hardware_pair: Option<(&'a Hardware, &'a Hardware)>,
    /// Ratios learned from earlier paired runs, when the sides differ.
    pub(super) learned: Option<&'a LearnedRatios>,
}

impl Context<'_> {
    /// The baseline side of a row: medians over the runs.
    pub(super) fn baseline_side(&self, rows: &RunRows<'_>) -> OpSide {
        let present: Vec<&OpSnapshot> = rows.iter().flatten().copied().collect();
        let last = *present.last().expect("a pooled key has a row");
        let totals = rows.iter().map(|row| row.map_or(0.0, |op| op.direct.sum));
        let times = rows
            .iter()
            .zip(self.baselines)
            .map(|(row, run)| row.map_or(0.0, |op| op.direct.sum) * (self.scale)(run));
        let counts: Vec<u64> = present.iter().map(|op| op.direct.count).collect();
        OpSide {
            key: last.key(),
            category: last.category,
            module_path: present.iter().find_map(|op| op.module_path.clone()),
            runs: present.len(),
            count: lower_median(&counts),
            total_us: median_or_zero(totals),
            time_us: median_or_zero(times),
            median_us: median_or_zero(present.iter().map(|op| op.direct.median)),
            mean_us: median_or_zero(present.iter().map(|op| op.direct.mean)),
            min_us: present
                .iter()
                .map(|op| op.direct.min)
                .fold(f64::INFINITY, f64::min),
            max_us: present
                .iter()
                .map(|op| op.direct.max)
                .fold(f64::NEG_INFINITY, f64::max),
            kernel_sequence: last.kernel_sequence.clone(),
            model: present.iter().find_map(|op| op.model.clone()),
            graph: last.graph.clone(),
            kernel_us: last.kernel_us.clone(),
        }
    }

    /// The candidate side of a row.
    pub(super) fn candidate_side(&self, op: &OpSnapshot) -> OpSide {
        OpSide {
            key: op.key(),
            category: op.category,
            module_path: op.module_path.clone(),
            runs: 1,
            count: op.direct.count,
            total_us: op.direct.sum,
            time_us: op.direct.sum * (self.scale)(self.candidate),
            median_us: op.direct.median,
            mean_us: op.direct.mean,
            min_us: op.direct.min,
            max_us: op.direct.max,
            kernel_sequence: op.kernel_sequence.clone(),
            model: op.model.clone(),
            graph: op.graph.clone(),
            kernel_us: op.kernel_us.clone(),
        }
    }

    /// A row matched by its exact key: samples, interval, noise, impact.
    pub(super) fn compare_row(
        &self,
        key: &OpKey,
        rows: &RunRows<'_>,
        candidate: &OpSnapshot,
    ) -> OpComparison {
        let present: Vec<&OpSnapshot> = rows.iter().flatten().copied().collect();
        let baseline_steps: Vec<f64> = present
            .iter()
            .flat_map(|op| op.step_us.iter().map(|&(_, us)| us))
            .collect();
        let candidate_steps: Vec<f64> = candidate.step_us.iter().map(|&(_, us)| us).collect();
        // Per-step totals are what the user experiences, but only comparable
        // when both sides call the op equally often per step; otherwise (a
        // different batch split, another platform's schedule) per-call times are.
        let calls_per_step = |op: &OpSnapshot| {
            (!op.step_us.is_empty()).then(|| op.direct.count as f64 / op.step_us.len() as f64)
        };
        let same_rate = present
            .iter()
            .all(|op| calls_per_step(op) == calls_per_step(candidate));
        let (samples_basis, base_samples, cand_samples) =
            if baseline_steps.len() >= 2 && candidate_steps.len() >= 2 && same_rate {
                (SamplesBasis::Steps, baseline_steps, candidate_steps)
            } else {
                let pooled: Vec<f64> = present
                    .iter()
                    .flat_map(|op| op.samples_us.iter().copied())
                    .collect();
                (
                    SamplesBasis::Invocations,
                    pooled,
                    candidate.samples_us.clone(),
                )
            };
        let mut parts: Vec<&str> = vec![
            &key.name,
            &key.input_dims,
            &key.input_type,
            &key.input_strides,
            &key.concrete_inputs,
        ];
        if !key.graph.is_empty() {
            parts.push(&key.graph);
        }
        let seed = stats::seed_from_parts(self.options.seed, &parts);
        let single_run = self.baselines.len() == 1;
        let estimate = if single_run {
            stats::paired_ratio_of_medians_ci(
                &base_samples,
                &cand_samples,
                self.options.confidence,
                self.options.resamples,
                seed,
            )
        } else {
            stats::ratio_of_medians_ci(
                &base_samples,
                &cand_samples,
                self.options.confidence,
                self.options.resamples,
                seed,
            )
        };
        let run_medians: Vec<f64> = present
            .iter()
            .filter_map(|op| match samples_basis {
                SamplesBasis::Steps => {
                    stats::median(&op.step_us.iter().map(|&(_, us)| us).collect::<Vec<_>>())
                }
                SamplesBasis::Invocations => Some(op.direct.median),
                SamplesBasis::Runs => Some(op.direct.sum),
            })
            .collect();
        let baseline = self.baseline_side(rows);
        let candidate_side = self.candidate_side(candidate);
        let learned = self.learned.and_then(|l| l.rows.get(key));
        let expected = match learned {
            Some(learned) => Some(learned_expectation(learned)),
            None => self
                .hardware_pair
                .and_then(|(b, c)| expectation(&baseline, b, c)),
        };
        let impact_us = candidate_side.time_us - baseline.time_us;
        OpComparison {
            baseline_sample_median_us: stats::median(&base_samples).unwrap_or(0.0),
            candidate_sample_median_us: stats::median(&cand_samples).unwrap_or(0.0),
            kernel_diff: kernel_diff(&baseline.kernel_sequence, &candidate_side.kernel_sequence)
                .or_else(|| launched_kernels_diff(present.last().copied(), candidate)),
            estimate,
            samples_basis,
            noise: stats::max_relative_deviation(&run_medians),
            expected,
            impact_percent: percent(impact_us, self.baseline_total_us),
            impact_us,
            baseline,
            candidate: candidate_side,
        }
    }
}

/// For a row whose calls launch different kernels on both sides (each
/// kernel's launches recorded): a diff of the names any call launches, in
/// first-launch order, so a kernel only later calls launch is still a
/// kernel-selection change (the kernel sequence is the earliest call's).
fn launched_kernels_diff(baseline: Option<&OpSnapshot>, candidate: &OpSnapshot) -> Option<String> {
    let names = |op: &OpSnapshot| -> Vec<String> {
        op.kernel_samples_us
            .iter()
            .map(|k| k.name.clone())
            .collect()
    };
    let baseline = baseline?;
    if baseline.kernel_samples_us.is_empty() || candidate.kernel_samples_us.is_empty() {
        return None;
    }
    kernel_diff(&names(baseline), &names(candidate))
}

/// The expectation a row carries for a learned ratio.
pub(super) fn learned_expectation(learned: &LearnedRatio) -> Expectation {
    Expectation {
        ratio: learned.ratio,
        basis: ExpectationBasis::History {
            runs: learned.runs,
            spread: learned.spread,
        },
        spec: None,
    }
}

/// The median, 0 for no values.
pub(super) fn median_or_zero(values: impl Iterator<Item = f64>) -> f64 {
    let values: Vec<f64> = values.collect();
    stats::median(&values).unwrap_or(0.0)
}

/// The lower median of counts (an integer); 0 for none.
fn lower_median(values: &[u64]) -> u64 {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    sorted
        .get(sorted.len().saturating_sub(1) / 2)
        .copied()
        .unwrap_or(0)
}

/// The ratio of medians of `candidate` over `baseline` with its interval:
/// paired sample by sample when `paired` (one baseline run of as many
/// samples), else the sides resampled apart.
pub(super) fn ratio_estimate(
    options: &CompareOptions,
    seed: u64,
    paired: bool,
    baseline: &[f64],
    candidate: &[f64],
) -> stats::RatioEstimate {
    let (confidence, resamples) = (options.confidence, options.resamples);
    if paired {
        stats::paired_ratio_of_medians_ci(baseline, candidate, confidence, resamples, seed)
    } else {
        stats::ratio_of_medians_ci(baseline, candidate, confidence, resamples, seed)
    }
}
