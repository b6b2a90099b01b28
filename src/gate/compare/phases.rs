//! Prefill and decode compared apart: one timeline-like row per phase both
//! sides ran, `decode GPU time per step` / `prefill GPU time per step`,
//! from the snapshot's tagged inference steps. A prefill step costs far more
//! than a decode step, so a candidate that ran a different mix is not slower
//! or faster; comparing each phase with itself is what says so. A phase on
//! one side only is a note.

use super::model::{CompareOptions, TimelineComparison};
use crate::analysis::ops::stats::median;
use crate::analysis::profile::Phase;
use crate::gate::snapshot::Snapshot;
use crate::gate::stats;

/// The name of a phase's row: `decode GPU time per step`.
pub fn phase_metric(phase: Phase) -> String {
    format!("{} GPU time per step", phase.as_str())
}

/// The GPU time of each step of `phase` in a snapshot, µs.
fn step_times(snapshot: &Snapshot, phase: Phase) -> Vec<f64> {
    snapshot
        .inference_steps
        .iter()
        .filter(|s| s.phase == phase)
        .map(|s| s.gpu_time_us)
        .collect()
}

/// One row per phase both sides ran; a note for a phase on one side only.
pub(super) fn compare_phases(
    baselines: &[Snapshot],
    candidate: &Snapshot,
    options: &CompareOptions,
    notes: &mut Vec<String>,
) -> Vec<TimelineComparison> {
    let mut rows = Vec::new();
    for phase in Phase::ALL {
        let runs: Vec<Vec<f64>> = baselines
            .iter()
            .map(|b| step_times(b, phase))
            .filter(|times| !times.is_empty())
            .collect();
        let cand = step_times(candidate, phase);
        match (runs.is_empty(), cand.is_empty()) {
            (true, true) => continue,
            (false, true) | (true, false) => {
                let (has, lacks) = if cand.is_empty() {
                    ("the baseline", "the candidate")
                } else {
                    ("the candidate", "the baseline")
                };
                notes.push(format!(
                    "{has} ran {} steps and {lacks} none: that phase is not compared",
                    phase.as_str()
                ));
                continue;
            }
            (false, false) => {}
        }
        let run_medians: Vec<f64> = runs.iter().filter_map(|t| median(t)).collect();
        let baseline_us = median(&run_medians).unwrap_or(0.0);
        let candidate_us = median(&cand).unwrap_or(0.0);
        let base: Vec<f64> = runs.iter().flatten().copied().collect();
        let with_steps = base.len() >= 2 && cand.len() >= 2;
        let step_spread = with_steps.then(|| {
            runs.iter()
                .chain(std::iter::once(&cand))
                .filter_map(|t| stats::max_relative_deviation(t))
                .fold(0.0, f64::max)
        });
        let metric = phase_metric(phase);
        let estimate = with_steps.then(|| {
            let seed = stats::seed_from_parts(options.seed, &["phase", &metric]);
            stats::ratio_of_medians_ci(&base, &cand, options.confidence, options.resamples, seed)
        });
        rows.push(TimelineComparison {
            metric,
            baseline_us,
            candidate_us,
            delta_percent: (baseline_us > 0.0).then(|| (candidate_us / baseline_us - 1.0) * 100.0),
            noise: stats::max_relative_deviation(&run_medians),
            estimate,
            step_spread,
        });
    }
    rows
}
