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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::snapshot::InferenceStepSnapshot;
    use crate::gate::snapshot::tests::tiny_snapshot;
    use Phase::{Decode, Mixed, Prefill};

    fn steps(times: &[(Phase, f64)]) -> Snapshot {
        Snapshot {
            inference_steps: times
                .iter()
                .map(|&(phase, gpu_time_us)| InferenceStepSnapshot {
                    phase,
                    host_duration_us: gpu_time_us,
                    gpu_time_us,
                    ops: Vec::new(),
                })
                .collect(),
            ..tiny_snapshot()
        }
    }

    fn compared(
        baselines: &[Snapshot],
        candidate: &Snapshot,
    ) -> (Vec<TimelineComparison>, Vec<String>) {
        let mut notes = Vec::new();
        let rows = compare_phases(baselines, candidate, &CompareOptions::default(), &mut notes);
        (rows, notes)
    }

    /// Each phase both sides ran is a row of its per-step GPU times; one
    /// step on a side gives no interval or spread; a phase one side lacks
    /// is a note.
    #[test]
    fn each_phase_both_sides_ran_is_compared_with_itself() {
        let baseline = steps(&[
            (Prefill, 100.0),
            (Prefill, 100.0),
            (Decode, 10.0),
            (Decode, 12.0),
            (Decode, 11.0),
            (Mixed, 50.0),
        ]);
        let candidate = steps(&[
            (Decode, 20.0),
            (Decode, 22.0),
            (Prefill, 300.0),
            (Decode, 21.0),
        ]);
        let (rows, notes) = compared(std::slice::from_ref(&baseline), &candidate);
        let metrics: Vec<&str> = rows.iter().map(|r| r.metric.as_str()).collect();
        assert_eq!(
            metrics,
            ["prefill GPU time per step", "decode GPU time per step"]
        );
        assert_eq!(
            notes,
            ["the baseline ran mixed steps and the candidate none: that phase is not compared"]
        );
        let prefill = &rows[0];
        assert_eq!((prefill.baseline_us, prefill.candidate_us), (100.0, 300.0));
        assert_eq!(prefill.delta_percent, Some(200.0));
        assert_eq!(
            (
                prefill.estimate.is_some(),
                prefill.step_spread,
                prefill.noise
            ),
            (false, None, None)
        );
        let decode = &rows[1];
        assert_eq!((decode.baseline_us, decode.candidate_us), (11.0, 21.0));
        assert!((decode.delta_percent.unwrap() - (21.0 / 11.0 - 1.0) * 100.0).abs() < 1e-9);
        let estimate = decode.estimate.as_ref().expect("three steps a side");
        assert!((estimate.ratio - 21.0 / 11.0).abs() < 1e-12);
        assert_eq!((estimate.n_baseline, estimate.n_candidate), (3, 3));
        assert!((decode.step_spread.unwrap() - 1.0 / 11.0).abs() < 1e-12);
        assert_eq!(decode.noise, None);
    }

    /// Over a window, each run that ran the phase gives a median; their
    /// median is the baseline, their spread its noise; a baseline of no
    /// time has no Δ; a phase only the candidate ran is a note.
    #[test]
    fn a_window_measures_each_phases_run_to_run_noise() {
        let window = [
            steps(&[(Decode, 10.0), (Decode, 10.0), (Prefill, 0.0)]),
            steps(&[(Decode, 12.0), (Decode, 12.0)]),
            steps(&[(Prefill, 0.0)]),
        ];
        let candidate = steps(&[(Decode, 11.0), (Decode, 11.0), (Prefill, 5.0), (Mixed, 7.0)]);
        let (rows, notes) = compared(&window, &candidate);
        assert_eq!(
            notes,
            ["the candidate ran mixed steps and the baseline none: that phase is not compared"]
        );
        let prefill = &rows[0];
        assert_eq!((prefill.baseline_us, prefill.delta_percent), (0.0, None));
        let decode = &rows[1];
        assert_eq!(decode.baseline_us, 11.0);
        assert!((decode.noise.unwrap() - 1.0 / 11.0).abs() < 1e-12);
        assert_eq!(decode.estimate.as_ref().map(|e| e.n_baseline), Some(4));
    }
}
