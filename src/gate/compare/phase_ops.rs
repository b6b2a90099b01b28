//! Op rows per phase: for an inference trace whose steps are tagged prefill
//! and decode (more than one phase on a side), each op name is compared
//! within each phase both sides ran — decode's attention against decode's,
//! prefill's against prefill's — so a regression in one phase only is
//! named with its phase, not diluted in the run's rows, where the other
//! phase's calls of the op (often of the same shapes, always of the same
//! name) hide it.
//!
//! The samples are the op's GPU time in each step of the phase (0 in a
//! step without it), from the snapshot's per-step op times; its time is
//! the phase's steps' total, the candidate's scaled to the baseline's
//! number of steps of that phase (the two runs may have run a different
//! mix of steps).

use std::collections::BTreeSet;

use super::model::{OpComparison, OpSide, PhaseOpComparison, SamplesBasis};
use super::rows::{Context, median_or_zero, ratio_estimate};
use crate::analysis::ops::category::Category;
use crate::analysis::ops::stats::percent;
use crate::analysis::profile::Phase;
use crate::gate::snapshot::{OpKey, Snapshot};
use crate::gate::stats;

/// The per-step op times of the snapshot's steps of `phase`.
fn phase_steps(snapshot: &Snapshot, phase: Phase) -> Vec<&[(String, f64)]> {
    snapshot
        .inference_steps
        .iter()
        .filter(|s| s.phase == phase)
        .map(|s| s.ops.as_slice())
        .collect()
}

/// The op's time in each of `steps`, 0 where it did not run.
fn samples(steps: &[&[(String, f64)]], name: &str) -> Vec<f64> {
    steps
        .iter()
        .map(|ops| {
            ops.iter()
                .filter(|(n, _)| n == name)
                .map(|(_, us)| us)
                .sum()
        })
        .collect()
}

/// Whether a snapshot records per-step op times (it has more than one
/// phase).
fn records_step_ops(snapshot: &Snapshot) -> bool {
    snapshot.inference_steps.iter().any(|s| !s.ops.is_empty())
}

/// The per-phase op rows: each op name both sides ran in a phase both
/// sides ran, when every side records per-step op times; largest absolute
/// impact first.
pub(super) fn phase_ops(context: &Context<'_>) -> Vec<PhaseOpComparison> {
    let candidate = context.candidate;
    if !records_step_ops(candidate) || !context.baselines.iter().all(records_step_ops) {
        return Vec::new();
    }
    let mut rows = Vec::new();
    for phase in Phase::ALL {
        let cand_steps = phase_steps(candidate, phase);
        let base_steps: Vec<Vec<&[(String, f64)]>> = context
            .baselines
            .iter()
            .map(|b| phase_steps(b, phase))
            .collect();
        if cand_steps.is_empty() || base_steps.iter().any(Vec::is_empty) {
            continue;
        }
        let names = |steps: &[&[(String, f64)]]| -> BTreeSet<String> {
            steps
                .iter()
                .flat_map(|ops| ops.iter().map(|(n, _)| n.clone()))
                .collect()
        };
        let mut common = names(&cand_steps);
        for steps in &base_steps {
            let theirs = names(steps);
            common.retain(|n| theirs.contains(n));
        }
        for name in common {
            rows.push(PhaseOpComparison {
                phase,
                comparison: compare_phase_op(context, phase, &name, &base_steps, &cand_steps),
            });
        }
    }
    rows.sort_by(|a, b| a.comparison.most_impact_first(&b.comparison));
    rows
}

/// One op within one phase.
fn compare_phase_op(
    context: &Context<'_>,
    phase: Phase,
    name: &str,
    base_steps: &[Vec<&[(String, f64)]>],
    cand_steps: &[&[(String, f64)]],
) -> OpComparison {
    let options = context.options;
    let runs: Vec<Vec<f64>> = base_steps.iter().map(|s| samples(s, name)).collect();
    let base: Vec<f64> = runs.iter().flatten().copied().collect();
    let cand = samples(cand_steps, name);
    let (samples_basis, estimate) = {
        let seed = stats::seed_from_parts(options.seed, &["phase op", phase.as_str(), name]);
        let basis = if base.len() >= 2 && cand.len() >= 2 {
            SamplesBasis::Steps
        } else {
            SamplesBasis::Runs
        };
        let estimate = ratio_estimate(
            options,
            seed,
            runs.len() == 1 && base.len() == cand.len(),
            &base,
            &cand,
        );
        (basis, estimate)
    };
    // The phase's total over the baseline's number of its steps.
    let steps = median_or_zero(runs.iter().map(|r| r.len() as f64));
    let base_time = median_or_zero(
        runs.iter()
            .zip(context.baselines)
            .map(|(r, run)| r.iter().sum::<f64>() * (context.scale)(run)),
    );
    let cand_time = cand.iter().sum::<f64>() * steps / cand.len().max(1) as f64
        * (context.scale)(context.candidate);
    // The category of the op's rows (a kernel's, for work outside ops).
    let category = context
        .candidate
        .ops
        .iter()
        .find(|op| op.name == name)
        .map_or(Category::Other, |op| op.category);
    let side = |samples: &[f64], time_us: f64, runs: usize| {
        let key = OpKey {
            name: name.to_string(),
            ..OpKey::default()
        };
        OpSide {
            runs,
            count: samples.len() as u64,
            total_us: samples.iter().sum(),
            time_us,
            ..OpSide::from_samples(key, category, samples)
        }
    };
    let impact_us = cand_time - base_time;
    OpComparison {
        baseline_sample_median_us: stats::median(&base).unwrap_or(0.0),
        candidate_sample_median_us: stats::median(&cand).unwrap_or(0.0),
        kernel_diff: None,
        estimate,
        samples_basis,
        noise: stats::max_relative_deviation(
            &runs
                .iter()
                .map(|r| median_or_zero(r.iter().copied()))
                .collect::<Vec<_>>(),
        ),
        expected: None,
        impact_percent: percent(impact_us, context.baseline_total_us),
        impact_us,
        baseline: side(&base, base_time, runs.len()),
        candidate: side(&cand, cand_time, 1),
    }
}

#[cfg(test)]
mod tests {
    use crate::analysis::profile::Phase::{self, Decode, Mixed, Prefill};
    use crate::gate::compare::tests::steps_of;
    use crate::gate::compare::{CompareOptions, SamplesBasis, compare};
    use crate::gate::snapshot::tests::tiny_snapshot;
    use crate::gate::snapshot::{InferenceStepSnapshot, Snapshot};
    use crate::gate::stats::Resampling;

    /// Steps of `(phase, [(op, µs)])`.
    fn steps(steps: &[(Phase, &[(&str, f64)])]) -> Snapshot {
        Snapshot {
            inference_steps: steps
                .iter()
                .map(|&(phase, ops)| InferenceStepSnapshot {
                    phase,
                    host_duration_us: 1.0,
                    gpu_time_us: ops.iter().map(|(_, us)| us).sum(),
                    ops: ops.iter().map(|&(n, us)| (n.to_string(), us)).collect(),
                })
                .collect(),
            ..tiny_snapshot()
        }
    }

    /// Each op both sides ran in a phase both ran is compared over that
    /// phase's steps (0 in a step without it), its candidate time scaled to
    /// the baseline's number of steps of the phase; largest impact first.
    #[test]
    fn an_op_is_compared_within_each_phase_both_sides_ran() {
        let baseline = steps(&[
            (Decode, &[("aten::mm", 4.0), ("add", 1.0)]),
            (Decode, &[("aten::mm", 6.0)]),
            (Decode, &[("aten::mm", 5.0), ("add", 1.0)]),
            (Prefill, &[("aten::mm", 50.0), ("only_before", 3.0)]),
        ]);
        let candidate = steps(&[
            (Decode, &[("aten::mm", 8.0), ("add", 1.0)]),
            (Prefill, &[("aten::mm", 60.0)]),
            (Decode, &[("aten::mm", 8.0)]),
            (Prefill, &[("aten::mm", 40.0)]),
            (Mixed, &[("aten::mm", 9.0)]),
        ]);
        let comparison = compare(
            std::slice::from_ref(&baseline),
            &candidate,
            &CompareOptions::default(),
        );
        let rows: Vec<(Phase, &str)> = comparison
            .phase_ops
            .iter()
            .map(|r| (r.phase, r.comparison.baseline.key.name.as_str()))
            .collect();
        assert_eq!(
            rows,
            [(Decode, "aten::mm"), (Decode, "add"), (Prefill, "aten::mm")]
        );
        let mm = &comparison.phase_ops[0].comparison;
        assert_eq!(mm.samples_basis, SamplesBasis::Steps);
        assert!((mm.estimate.ratio - 8.0 / 5.0).abs() < 1e-12);
        assert_eq!((mm.baseline.count, mm.candidate.count), (3, 2));
        assert_eq!((mm.baseline.total_us, mm.candidate.total_us), (15.0, 16.0));
        assert_eq!(
            (mm.baseline.time_us, mm.candidate.time_us),
            (15.0, 16.0 * 3.0 / 2.0)
        );
        assert_eq!(mm.impact_us, 9.0);
        assert_eq!((mm.baseline.runs, mm.candidate.runs), (1, 1));
        assert_eq!(mm.baseline.category, tiny_snapshot().ops[0].category);
        let add = &comparison.phase_ops[1].comparison;
        assert_eq!(add.candidate.time_us, 1.0 * 3.0 / 2.0);
        assert_eq!(add.impact_us, 1.5 - 2.0);
        let prefill = &comparison.phase_ops[2].comparison;
        assert_eq!(prefill.samples_basis, SamplesBasis::Runs);
        assert_eq!(
            (prefill.baseline.time_us, prefill.candidate.time_us),
            (50.0, 50.0)
        );
        assert_eq!(prefill.estimate.interval, None);
    }

    /// Without per-step op times on every side, or across platforms, there
    /// are no phase op rows.
    #[test]
    fn phase_ops_need_every_sides_step_ops() {
        let with_ops = steps(&[
            (Decode, &[("aten::mm", 4.0)]),
            (Decode, &[("aten::mm", 5.0)]),
        ]);
        let without = steps(&[(Decode, &[]), (Decode, &[])]);
        for (baseline, candidate) in [(&with_ops, &without), (&without, &with_ops)] {
            let comparison = compare(
                std::slice::from_ref(baseline),
                candidate,
                &CompareOptions::default(),
            );
            assert!(comparison.phase_ops.is_empty());
        }
        let comparison = compare(
            std::slice::from_ref(&with_ops),
            &with_ops,
            &CompareOptions::default(),
        );
        assert_eq!(comparison.phase_ops.len(), 1);
        // Profiled steps that differ in number: each side per its own step.
        let profiled = |steps: u64| Snapshot {
            steps: steps_of(steps),
            ..with_ops.clone()
        };
        let per_step = compare(
            std::slice::from_ref(&profiled(2)),
            &profiled(4),
            &CompareOptions::default(),
        );
        let mm = &per_step.phase_ops[0].comparison;
        assert_eq!(
            (mm.baseline.time_us, mm.candidate.time_us),
            (9.0 / 2.0, 9.0 / 4.0)
        );
        // One baseline run of as many steps: paired step by step.
        let estimate = &comparison.phase_ops[0].comparison.estimate;
        assert_eq!(estimate.resampling, Resampling::Paired);
        let one_step = steps(&[(Decode, &[("aten::mm", 4.0)])]);
        let window = [one_step.clone(), one_step];
        let comparison = compare(&window, &with_ops, &CompareOptions::default());
        let estimate = &comparison.phase_ops[0].comparison.estimate;
        assert_eq!(estimate.resampling, Resampling::Independent);
    }
}
