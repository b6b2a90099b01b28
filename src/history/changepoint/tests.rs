//! Change-point tests on made-up series: clean steps in both directions,
//! noise alone, an outlier, an unconfirmed step at the end, too few runs,
//! steps too small to count, commit ranges, and seeded noisy series.

use super::*;
use crate::gate::stats::SplitMix64;

/// `n` runs at `level`, then at `level × (1 + step)` from run `at` on, each
/// times a factor uniform in `1 ± noise`, from `seed`.
fn series(n: usize, at: usize, step: f64, noise: f64, seed: u64) -> Vec<f64> {
    let mut rng = SplitMix64::new(seed);
    (0..n)
        .map(|i| {
            let base = if i >= at { 1.0 + step } else { 1.0 };
            1000.0 * base * (1.0 + noise * (2.0 * unit(&mut rng) - 1.0))
        })
        .collect()
}

/// A uniform draw in [0, 1) from the generator's top 53 bits.
fn unit(rng: &mut SplitMix64) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

fn points(values: &[f64]) -> Vec<Point> {
    values
        .iter()
        .enumerate()
        .map(|(i, &value_us)| Point {
            commit: format!("c{i}"),
            time: String::new(),
            run_url: None,
            value_us,
        })
        .collect()
}

#[test]
fn a_clean_step_up_is_a_regression_at_its_run() {
    let values = series(30, 17, 0.04, 0.0, 1);
    let found = detect(&values, &ChangeOptions::default());
    assert_eq!(found.label, ChangeLabel::Regression);
    assert_eq!(found.steps.len(), 1, "{found:#?}");
    let step = &found.steps[0];
    assert_eq!((step.index, step.uncertainty), (17, (17, 17)));
    assert!((step.change_percent - 4.0).abs() < 1e-9);
    assert!(step.confirmed);
    assert_eq!(found.label.as_str(), "regression");
    // Without noise σ is floored at 1e-4 of the series' typical value.
    let noise = found.noise_percent.expect("a non-zero series");
    assert!((noise - MIN_NOISE_SHARE * 100.0).abs() < 1e-12, "{noise}");
}

#[test]
fn a_step_down_is_an_improvement() {
    let values = series(40, 12, -0.05, 0.01, 2);
    let found = detect(&values, &ChangeOptions::default());
    assert_eq!(found.label, ChangeLabel::Improvement, "{found:#?}");
    assert!((found.steps[0].index as i64 - 12).abs() <= 1);
    assert!(found.steps[0].change_percent < -4.0);
}

#[test]
fn noise_alone_has_no_step() {
    for seed in 0..20 {
        let values = series(50, 50, 0.0, 0.02, seed);
        let found = detect(&values, &ChangeOptions::default());
        assert_eq!(
            found.label,
            ChangeLabel::NoChange,
            "seed {seed}: {found:#?}"
        );
        let noise = found.noise_percent.expect("a scale");
        assert!((0.5..2.0).contains(&noise), "seed {seed}: noise {noise}%");
    }
}

#[test]
fn one_outlier_is_no_step() {
    let mut values = series(30, 30, 0.0, 0.005, 3);
    values[14] *= 1.5;
    let found = detect(&values, &ChangeOptions::default());
    assert_eq!(found.label, ChangeLabel::NoChange, "{found:#?}");
}

#[test]
fn a_step_in_the_newest_runs_is_suspicious_until_confirmed() {
    let options = ChangeOptions::default();
    let values = series(24, 22, 0.06, 0.005, 4);
    let found = detect(&values, &options);
    assert_eq!(found.label, ChangeLabel::Suspicious, "{found:#?}");
    let step = found.steps.last().expect("a step");
    assert_eq!(step.index, 22);
    assert!(!step.confirmed);
    // The newest run alone at a new level, no step before it.
    let values = series(24, 23, 0.06, 0.005, 4);
    let found = detect(&values, &options);
    assert_eq!(found.label, ChangeLabel::Suspicious, "{found:#?}");
    assert_eq!(found.steps.len(), 1, "{found:#?}");
    assert_eq!(found.steps[0].index, 23);
    // One more run at the new level confirms it.
    let values = series(25, 22, 0.06, 0.005, 4);
    let found = detect(&values, &options);
    assert_eq!(found.label, ChangeLabel::Regression, "{found:#?}");
    assert!(found.steps[0].confirmed);
}

/// A step in the newest runs is measured from a level of at least
/// `confirm_runs` runs: right after a confirmed step of exactly that many
/// runs, a further change in the newest run has no level of its own to
/// step from, so the series is the confirmed step's regression.
#[test]
fn a_newest_run_step_needs_a_confirmed_level_before_it() {
    // Runs after the first step (20% up), the newest then 25% further up:
    // with three, the series is the first step's regression (at run 10,
    // confirmed); with four, the newest run has a level to step from and
    // is suspicious.
    let cases = [
        (3, ChangeLabel::Regression, 10),
        (4, ChangeLabel::Suspicious, 13),
    ];
    for seed in 0..5 {
        for (after, label, newest_step) in cases {
            let mut values = series(10 + after, 10, 0.2, 0.002, seed);
            values[9 + after] *= 1.25;
            let found = detect(&values, &ChangeOptions::default());
            assert_eq!(found.label, label, "seed {seed}, {after} after: {found:#?}");
            assert_eq!(found.steps[0].index, 10, "seed {seed}: {found:#?}");
            assert!(found.steps[0].confirmed, "seed {seed}: {found:#?}");
            let newest = found.steps.last().map(|s| s.index);
            assert_eq!(newest, Some(newest_step), "seed {seed}: {found:#?}");
        }
    }
}

#[test]
fn a_step_below_the_minimum_change_does_not_count() {
    let values = series(30, 15, 0.01, 0.0, 5);
    let found = detect(&values, &ChangeOptions::default());
    assert_eq!(found.label, ChangeLabel::NoChange, "{found:#?}");
    let strict = ChangeOptions {
        min_change_percent: 0.5,
        ..ChangeOptions::default()
    };
    assert_eq!(detect(&values, &strict).label, ChangeLabel::Regression);
}

/// The minimum is the smallest step that counts: a step of exactly that
/// size is one.
#[test]
fn a_step_of_exactly_the_minimum_change_counts() {
    // 1000 → 1250 µs: a step of 25% exactly in binary floating point.
    for at in [10, 15, 20] {
        let values = series(30, at, 0.25, 0.0, 5);
        let at_minimum = ChangeOptions {
            min_change_percent: 25.0,
            ..ChangeOptions::default()
        };
        let found = detect(&values, &at_minimum);
        assert_eq!(found.label, ChangeLabel::Regression, "{found:#?}");
        assert_eq!(found.steps.len(), 1, "{found:#?}");
        assert_eq!(found.steps[0].change_percent, 25.0);
        let above = ChangeOptions {
            min_change_percent: 25.0 + 1e-9,
            ..at_minimum
        };
        assert_eq!(detect(&values, &above).label, ChangeLabel::NoChange);
    }
}

#[test]
fn too_few_runs_or_a_bad_value_is_insufficient_data() {
    let options = ChangeOptions::default();
    let short = series(5, 3, 0.2, 0.0, 6);
    assert_eq!(
        detect(&short, &options).label,
        ChangeLabel::InsufficientData
    );
    let mut bad = series(20, 20, 0.0, 0.01, 6);
    bad[3] = f64::NAN;
    let found = detect(&bad, &options);
    assert_eq!(found.label, ChangeLabel::InsufficientData);
    assert!(found.steps.is_empty() && found.noise_percent.is_none());
}

/// A step needs `confirm_runs` runs on each side, so a series shorter than
/// twice that is too short whatever `min_runs` says.
#[test]
fn a_series_needs_two_confirmed_segments_whatever_min_runs_says() {
    let options = ChangeOptions {
        confirm_runs: 5,
        min_runs: 2,
        ..ChangeOptions::default()
    };
    let short = series(9, 5, 0.2, 0.0, 6);
    assert_eq!(
        detect(&short, &options).label,
        ChangeLabel::InsufficientData
    );
    let long = series(10, 5, 0.2, 0.0, 6);
    assert_eq!(detect(&long, &options).label, ChangeLabel::Regression);
}

#[test]
fn constant_and_all_zero_series_have_no_step() {
    let options = ChangeOptions::default();
    assert_eq!(detect(&[7.0; 12], &options).label, ChangeLabel::NoChange);
    let zeros = detect(&[0.0; 12], &options);
    assert_eq!(zeros.label, ChangeLabel::NoChange);
    assert_eq!(zeros.noise_percent, None);
}

#[test]
fn an_op_that_appears_is_an_infinite_regression() {
    let mut values = vec![0.0; 8];
    values.extend([5.0; 8]);
    let found = detect(&values, &ChangeOptions::default());
    assert_eq!(found.label, ChangeLabel::Regression);
    assert_eq!(found.steps[0].index, 8);
    assert_eq!(found.steps[0].change_percent, f64::INFINITY);
    // Mostly zero runs (the typical value is 0) but noisy once it appears:
    // the noise has no scale to be a percentage of.
    let mut values = vec![0.0; 10];
    values.extend(series(9, 0, 0.0, 0.01, 8));
    let found = detect(&values, &ChangeOptions::default());
    assert_eq!(found.label, ChangeLabel::Regression, "{found:#?}");
    assert_eq!(found.noise_percent, None);
}

#[test]
fn two_steps_are_both_found_and_the_newest_labels_the_series() {
    let mut values = series(20, 10, 0.08, 0.005, 7);
    values.extend(series(15, 0, 0.0, 0.005, 8));
    let found = detect(&values, &ChangeOptions::default());
    assert_eq!(found.steps.len(), 2, "{found:#?}");
    assert_eq!(found.steps[0].index, 10);
    assert_eq!(found.steps[1].index, 20);
    assert_eq!(found.label, ChangeLabel::Improvement);
}

#[test]
fn points_name_the_commits_around_the_step_and_its_uncertainty() {
    let values = series(30, 17, 0.04, 0.0, 9);
    let found = detect_points(&points(&values), &ChangeOptions::default());
    assert_eq!(
        found.steps[0].commits,
        Some(CommitRange {
            last_before: "c16".into(),
            first_after: "c17".into(),
        })
    );
    // A small step in more noise: the range widens with the uncertainty.
    let values = series(40, 20, 0.03, 0.02, 10);
    let found = detect_points(&points(&values), &ChangeOptions::default());
    for step in &found.steps {
        let (first, last) = step.uncertainty;
        assert!(first <= step.index && step.index <= last);
        let commits = step.commits.as_ref().expect("commits");
        assert_eq!(commits.last_before, format!("c{}", first - 1));
        assert_eq!(commits.first_after, format!("c{last}"));
    }
}

/// The bar on made-up levels (the corpus version is in
/// tests/history.rs): a 4% step in ±2% noise found within ±1 run.
#[test]
fn four_percent_steps_in_two_percent_noise_are_found_within_one_run() {
    let options = ChangeOptions::default();
    let (mut found, mut false_steps) = (0, 0);
    for seed in 0..200u64 {
        let n = 30 + (seed as usize * 7) % 31;
        let at = 8 + (seed as usize * 13) % (n - 16);
        let detection = detect(&series(n, at, 0.04, 0.02, seed), &options);
        found += usize::from(
            detection.label == ChangeLabel::Regression
                && detection
                    .steps
                    .iter()
                    .any(|s| s.confirmed && s.index.abs_diff(at) <= 1),
        );
        let noise = detect(&series(n, n, 0.0, 0.02, seed + 1000), &options);
        false_steps += usize::from(noise.label != ChangeLabel::NoChange);
    }
    assert!(found >= 190, "found {found} of 200");
    assert!(false_steps <= 2, "{false_steps} false steps in 200");
}

/// Uniform noise of ±2% has σ = 2/√3 = 1.155%: the estimate from the
/// successive differences (each √2 σ) is that σ, not √2 times it.
#[test]
fn the_noise_estimate_is_the_sigma_of_one_run() {
    let sigma = 2.0 / 3f64.sqrt();
    for seed in 0..5 {
        let values = series(2000, 2000, 0.0, 0.02, seed);
        let noise = detect(&values, &ChangeOptions::default())
            .noise_percent
            .expect("a scale");
        assert!(
            (noise / sigma - 1.0).abs() < 0.08,
            "seed {seed}: {noise}% against {sigma}%"
        );
    }
}

/// A steady climb of 1% a run moves every difference alike: it is a trend,
/// not run-to-run noise, so σ stays near that of the ±0.1% noise on top
/// of it (0.1/√3 = 0.058%; averaged over seeds, as 30 runs estimate it
/// within about ±30%), not the 0.7% the climb would add.
#[test]
fn a_steady_climb_is_not_noise() {
    let sigma = 0.1 / 3f64.sqrt();
    let seeds = 20;
    let mean_noise = (0..seeds)
        .map(|seed| {
            let values: Vec<f64> = series(30, 30, 0.0, 0.001, seed)
                .iter()
                .enumerate()
                .map(|(i, v)| v * (1.0 + 0.01 * i as f64))
                .collect();
            detect(&values, &ChangeOptions::default())
                .noise_percent
                .expect("a scale")
        })
        .sum::<f64>()
        / seeds as f64;
    assert!(
        (mean_noise / sigma - 1.0).abs() < 0.3,
        "{mean_noise}% against {sigma}%"
    );
}

/// Σ (x − mean)² over `values` in units of σ², from its definition.
fn squared_deviations(values: &[f64], sigma: f64) -> f64 {
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    values.iter().map(|v| ((v - mean) / sigma).powi(2)).sum()
}

/// The places whose two-segment fit is within `cut` of the best one's.
fn places_within(values: &[f64], sigma: f64, cut: f64) -> (usize, usize) {
    let costs: Vec<(usize, f64)> = (1..values.len())
        .map(|k| {
            let cost =
                squared_deviations(&values[..k], sigma) + squared_deviations(&values[k..], sigma);
            (k, cost)
        })
        .collect();
    let best = costs.iter().map(|c| c.1).fold(f64::INFINITY, f64::min);
    let plausible: Vec<usize> = costs
        .iter()
        .filter(|c| c.1 - best <= cut)
        .map(|c| c.0)
        .collect();
    (plausible[0], plausible[plausible.len() - 1])
}

/// A step's uncertainty is the 95% profile-likelihood interval: every
/// place whose fit is within χ²₁'s 95% quantile (1.96² = 3.84) of the best.
#[test]
fn the_uncertainty_of_a_step_is_its_95_percent_likelihood_interval() {
    let chi2_95 = 1.959_964f64.powi(2);
    let (mut checked, mut narrower_at_half) = (0, 0);
    for seed in 0..60 {
        let values = series(40, 20, 0.03, 0.02, seed);
        let found = detect(&values, &ChangeOptions::default());
        let [step] = found.steps.as_slice() else {
            continue;
        };
        let scale = median(&values).expect("values");
        let sigma = robust_sigma(&values).max(MIN_NOISE_SHARE * scale);
        let expected = places_within(&values, sigma, chi2_95);
        assert_eq!(step.uncertainty, expected, "seed {seed}: {step:#?}");
        checked += 1;
        narrower_at_half += usize::from(places_within(&values, sigma, chi2_95 / 2.0) != expected);
    }
    assert!(checked >= 30, "{checked} single steps");
    // The level matters: half the cut gives another interval on many series.
    assert!(narrower_at_half >= 5, "{narrower_at_half} of {checked}");
}

/// One step's place in a window: on an exact tie of fits PELT's place
/// stands, and every plausible place keeps at least one run on each side
/// (the window's first run is the previous change point, not a place for
/// this one). Small integers at σ 1 keep every cost exact, so the tie is one.
#[test]
fn a_step_keeps_pelts_place_on_a_tie_and_a_run_on_each_side() {
    let cost = Cost::new(&[0.0, 0.0, 0.0, 1.0, 2.0, 2.0, 2.0], 1.0);
    // Splitting before or after the halfway run costs 0.75 either way.
    assert_eq!(cost.of(0, 3) + cost.of(3, 7), cost.of(0, 4) + cost.of(4, 7));
    assert_eq!(best_split(&cost, 0, 3, 7).0, 3);
    assert_eq!(best_split(&cost, 0, 4, 7).0, 4);
    // A weak step (the whole window fits within 3.84 of the best split):
    // every place from the second run to the last is plausible.
    let cost = Cost::new(&[5.0, 5.0, 5.0, 6.0, 6.0, 6.0], 1.0);
    assert!(cost.of(0, 6) - (cost.of(0, 3) + cost.of(3, 6)) < LOCATION_CHI2_95);
    assert_eq!(best_split(&cost, 0, 3, 6), (3, (1, 5)));
    let mut rng = SplitMix64::new(9);
    for _ in 0..200 {
        let values: Vec<f64> = (0..12).map(|_| (rng.next_u64() % 4) as f64).collect();
        let cost = Cost::new(&values, 1.0);
        let start = (rng.next_u64() % 4) as usize;
        let end = start + 2 + (rng.next_u64() % (11 - start as u64)) as usize;
        let at = start + 1 + (rng.next_u64() % (end - start - 1) as u64) as usize;
        let (index, (first, last)) = best_split(&cost, start, at, end);
        assert!(
            start < first && first <= index && index <= last && last < end,
            "{values:?} {start}..{end} at {at}: {index} in {first}..={last}"
        );
    }
}

/// The newest-run step is the tail split that gains the most over the
/// penalty and changes the level enough, against a search over every
/// split from the costs' definition; noisy tails with their newest runs
/// moved by up to ±10% give both outcomes.
#[test]
fn the_tail_step_is_the_best_gain_beyond_the_penalty() {
    let options = ChangeOptions::default();
    let (mut found, mut none) = (0, 0);
    let mut rng = SplitMix64::new(17);
    for seed in 0..300 {
        let mut values = series(12, 12, 0.0, 0.03, seed);
        for v in &mut values[10..] {
            *v *= 0.9 + 0.2 * unit(&mut rng);
        }
        let n = values.len();
        let scale = median(&values).expect("values");
        let sigma = robust_sigma(&values).max(MIN_NOISE_SHARE * scale);
        let penalty = options.penalty_factor * (n as f64).ln();
        let whole = squared_deviations(&values, sigma);
        let best = (1..options.confirm_runs)
            .map(|k| n - k)
            .map(|at| {
                let gain = whole
                    - squared_deviations(&values[..at], sigma)
                    - squared_deviations(&values[at..], sigma);
                (at, gain)
            })
            .filter(|&(at, gain)| {
                let change = change_percent(level(&values[..at]), level(&values[at..]));
                gain > penalty && change.abs() >= options.min_change_percent
            })
            .max_by(|a, b| a.1.total_cmp(&b.1));
        let cost = Cost::new(&values, sigma);
        let expected =
            best.map(|(at, _)| step_in(&values, &cost, (0, at, n), options.confirm_runs));
        assert_eq!(
            tail_step(&values, &cost, 0, penalty, &options),
            expected,
            "seed {seed}"
        );
        if expected.is_some() {
            found += 1;
        } else {
            none += 1;
        }
    }
    assert!(found >= 30 && none >= 30, "{found} steps, {none} none");
}

/// A tail split that gains nothing is no step, even with no penalty and
/// no minimum change: a step must fit the runs strictly better.
#[test]
fn a_tail_split_that_gains_nothing_is_no_step() {
    let values = [1000.0; 8];
    let options = ChangeOptions {
        penalty_factor: 0.0,
        min_change_percent: 0.0,
        ..ChangeOptions::default()
    };
    let cost = Cost::new(&values, 1.0);
    assert_eq!(tail_step(&values, &cost, 0, 0.0, &options), None);
}
