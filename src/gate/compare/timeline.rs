//! The GPU timeline compared metric by metric, with a ratio interval over
//! the per-step values and their step-to-step spread when both sides have
//! steps; then each run's value is its steps' sum.

use super::model::TimelineComparison;
use super::rows::{Context, median_or_zero};
use crate::gate::snapshot::Snapshot;
use crate::gate::stats;

/// Every timeline metric, baseline (median over runs) against candidate.
pub(super) fn compare_timeline(context: &Context<'_>) -> Vec<TimelineComparison> {
    let Context {
        baselines,
        candidate,
        options,
        scale,
        ..
    } = context;
    let pooled_steps: usize = baselines.iter().map(|b| b.steps.len()).sum();
    let with_steps = pooled_steps >= 2 && candidate.steps.len() >= 2;
    // Within the profiled steps where every run has them: the host's time
    // between steps (the profiler's own step work, a loop's bookkeeping)
    // is not the workload's, and on real runs it is the noisiest part of
    // the timeline (docs/RELIABILITY.md).
    let within_steps = with_steps && baselines.iter().all(|b| !b.steps.is_empty());
    candidate
        .timeline
        .rows()
        .iter()
        .enumerate()
        .map(|(index, &(metric, _))| {
            let value = |snapshot: &Snapshot| {
                let us = if within_steps {
                    snapshot
                        .steps
                        .iter()
                        .map(|s| s.timeline.rows()[index].1)
                        .sum()
                } else {
                    snapshot.timeline.rows()[index].1
                };
                us * scale(snapshot)
            };
            let per_run: Vec<f64> = baselines.iter().map(value).collect();
            let baseline_us = median_or_zero(per_run.iter().copied());
            let candidate_us = value(candidate);
            let base: Vec<f64> = baselines
                .iter()
                .flat_map(|b| b.steps.iter().map(move |s| s.timeline.rows()[index].1))
                .collect();
            let cand: Vec<f64> = candidate
                .steps
                .iter()
                .map(|s| s.timeline.rows()[index].1)
                .collect();
            let step_spread = with_steps.then(|| {
                // Each baseline run around its own median, like the candidate.
                let mut spreads: Vec<f64> = baselines
                    .iter()
                    .filter_map(|b| {
                        let steps: Vec<f64> =
                            b.steps.iter().map(|s| s.timeline.rows()[index].1).collect();
                        stats::max_relative_deviation(&steps)
                    })
                    .collect();
                spreads.extend(stats::max_relative_deviation(&cand));
                spreads.into_iter().fold(0.0, f64::max)
            });
            let estimate = with_steps.then(|| {
                let seed = stats::seed_from_parts(options.seed, &["timeline", metric]);
                if baselines.len() == 1 {
                    stats::paired_ratio_of_medians_ci(
                        &base,
                        &cand,
                        options.confidence,
                        options.resamples,
                        seed,
                    )
                } else {
                    stats::ratio_of_medians_ci(
                        &base,
                        &cand,
                        options.confidence,
                        options.resamples,
                        seed,
                    )
                }
            });
            TimelineComparison {
                metric: metric.to_string(),
                baseline_us,
                candidate_us,
                delta_percent: (baseline_us > 0.0)
                    .then(|| (candidate_us / baseline_us - 1.0) * 100.0),
                noise: stats::max_relative_deviation(&per_run),
                estimate,
                step_spread,
            }
        })
        .collect()
}
