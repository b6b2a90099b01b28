//! History on series built from the corpus: change-point detection held to
//! the bar of issue #14 — on 50 series with ±2% run-to-run noise and a 4%
//! step at a known commit, the step is found within ±1 commit in ≥ 95% of
//! them, with ≤ 1 false step over 50 noise-only series. The levels are real:
//! the per-step GPU computation times of the h100/mi300 TraceLens traces.
//! Without the corpus the test is compiled as ignored (build.rs), like the
//! other corpus tests.

use std::path::Path;

use tracegate::gate::snapshot::{Snapshot, sha256_file};
use tracegate::gate::stats::SplitMix64;
use tracegate::history::changepoint::{ChangeLabel, ChangeOptions, detect_points};
use tracegate::history::series::Point;

use crate::util::{corpus_dir, corpus_traces};

/// The snapshot of a corpus trace, analysed in process.
fn snapshot(path: &Path) -> Snapshot {
    let trace = tracegate::trace::load_file(path, &mut |_| {}).expect("corpus trace loads");
    let tree = tracegate::trace::link::link(&trace);
    let profile = tracegate::analysis::analyse::analyse(&trace, &tree);
    let (sha, bytes) = sha256_file(path).expect("corpus trace readable");
    Snapshot::from_profile(&profile, sha, bytes)
}

/// GPU computation time of every profiler step of the h100 and mi300
/// traces, µs: one level per synthetic series.
fn step_levels() -> Vec<f64> {
    let corpus = corpus_dir();
    let mut per_trace: Vec<Vec<f64>> = ["tracelens/h100", "tracelens/mi300"]
        .iter()
        .flat_map(|folder| corpus_traces(&corpus.join(folder)))
        .map(|path| {
            snapshot(&path)
                .steps
                .iter()
                .map(|step| step.timeline.computation_time)
                .filter(|&us| us > 0.0)
                .collect()
        })
        .collect();
    per_trace.retain(|steps: &Vec<f64>| !steps.is_empty());
    assert!(
        per_trace.len() >= 8,
        "expected the h100/mi300 traces with steps, found {}",
        per_trace.len()
    );
    // Round-robin over the traces, so every trace gives levels.
    let most = per_trace.iter().map(Vec::len).max().unwrap_or(0);
    (0..most)
        .flat_map(|i| per_trace.iter().filter_map(move |steps| steps.get(i)))
        .copied()
        .collect()
}

/// A uniform draw in [-1, 1).
fn unit(rng: &mut SplitMix64) -> f64 {
    2.0 * ((rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64) - 1.0
}

/// `n` runs of `level` µs, each times a factor uniform in 1 ± 2%, times
/// `1 + step` from run `at` on; commits `c0`, `c1`, ….
fn series(level: f64, n: usize, at: usize, step: f64, rng: &mut SplitMix64) -> Vec<Point> {
    (0..n)
        .map(|i| {
            let stepped = if i >= at { 1.0 + step } else { 1.0 };
            Point {
                commit: format!("c{i}"),
                time: String::new(),
                run_url: None,
                value_us: level * stepped * (1.0 + 0.02 * unit(rng)),
            }
        })
        .collect()
}

#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn four_percent_steps_in_corpus_series_are_found_within_one_commit() {
    let levels = step_levels();
    let options = ChangeOptions::default();
    let mut rng = SplitMix64::new(14);
    let (mut found, mut false_steps, mut missed) = (0, 0, Vec::new());
    for i in 0..50 {
        let level = levels[i % levels.len()];
        // 30 to 60 runs, the step at least 8 runs from either end; half of
        // the steps are slowdowns, half speed-ups.
        let n = 30 + (rng.next_u64() % 31) as usize;
        let at = 8 + (rng.next_u64() % (n as u64 - 15)) as usize;
        let (step, label) = if i % 2 == 0 {
            (0.04, ChangeLabel::Regression)
        } else {
            (-0.04, ChangeLabel::Improvement)
        };
        let detection = detect_points(&series(level, n, at, step, &mut rng), &options);
        let hit = detection.label == label
            && detection.steps.iter().any(|s| {
                let commits = s.commits.as_ref().expect("points give commits");
                s.confirmed && s.index.abs_diff(at) <= 1 && commits.first_after.starts_with('c')
            });
        if hit {
            found += 1;
        } else {
            missed.push(format!("series {i} (step at {at} of {n}): {detection:?}"));
        }
        let noise = detect_points(&series(level, n, n, 0.0, &mut rng), &options);
        false_steps += noise.steps.len();
    }
    eprintln!(
        "change points on 50 corpus series: {found}/50 steps found within ±1 commit, \
         {false_steps} false steps over 50 noise-only series"
    );
    assert!(found >= 48, "{found}/50 found:\n{}", missed.join("\n"));
    assert!(false_steps <= 1, "{false_steps} false steps over 50 series");
}
