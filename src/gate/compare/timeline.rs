//! The GPU timeline compared metric by metric, with a ratio interval over
//! the per-step values and their step-to-step spread when both sides have
//! steps.

use super::model::TimelineComparison;
use super::rows::{Context, median_or_zero};
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
    candidate
        .timeline
        .rows()
        .iter()
        .enumerate()
        .map(|(index, &(metric, candidate_value))| {
            let per_run: Vec<f64> = baselines
                .iter()
                .map(|b| b.timeline.rows()[index].1 * scale(b))
                .collect();
            let baseline_us = median_or_zero(per_run.iter().copied());
            let candidate_us = candidate_value * scale(candidate);
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
