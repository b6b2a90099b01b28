//! Statistics tests: the generator against its reference, medians, the
//! bootstrap intervals and p-values, and the false-discovery adjustment.

use super::*;

#[test]
fn splitmix64_matches_the_reference_sequence() {
    // Vigna's splitmix64.c seeded with 1234567.
    let mut rng = SplitMix64::new(1_234_567);
    assert_eq!(rng.next_u64(), 6_457_827_717_110_365_317);
    assert_eq!(rng.next_u64(), 3_203_168_211_198_807_973);
    assert_eq!(rng.next_u64(), 9_817_491_932_198_370_423);
    let mut counts = [0u32; 4];
    for _ in 0..4000 {
        counts[rng.below(4)] += 1;
    }
    assert!(
        counts.iter().all(|&c| (900..1100).contains(&c)),
        "{counts:?}"
    );
}

#[test]
fn medians_and_quantiles() {
    assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
    assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
    assert_eq!(median(&[]), None);
    let sorted = [1.0, 2.0, 3.0, 4.0, 5.0];
    assert_eq!(quantile_sorted(&sorted, 0.0), Some(1.0));
    assert_eq!(quantile_sorted(&sorted, 0.5), Some(3.0));
    assert_eq!(quantile_sorted(&sorted, 0.1), Some(1.4));
    assert_eq!(quantile_sorted(&sorted, 1.0), Some(5.0));
    assert_eq!(quantile_sorted(&[], 0.5), None);
    assert_eq!(ratio(0.0, 0.0), 1.0);
    assert_eq!(ratio(1.0, 0.0), f64::INFINITY);
}

fn spread_sample(n: usize, center: f64) -> Vec<f64> {
    // Deterministic, asymmetric spread of ±20% around `center`.
    (0..n)
        .map(|i| center * (0.8 + 0.4 * ((i * 7919) % n) as f64 / n as f64))
        .collect()
}

#[test]
fn identical_samples_give_ratio_one_and_an_interval_containing_one() {
    let sample = spread_sample(40, 100.0);
    for estimate in [
        ratio_of_medians_ci(&sample, &sample, 0.95, 2000, 7),
        paired_ratio_of_medians_ci(&sample, &sample, 0.95, 2000, 7),
    ] {
        assert_eq!(estimate.ratio, 1.0);
        let interval = estimate.interval.expect("40 samples a side");
        assert!(
            (interval.low..=interval.high).contains(&1.0),
            "{interval:?}"
        );
        assert_eq!(estimate.replicates.len(), 2000);
    }
    let paired = paired_ratio_of_medians_ci(&sample, &sample, 0.95, 500, 7);
    assert_eq!(paired.resampling, Resampling::Paired);
    assert_eq!(
        paired.interval,
        Some(RatioInterval {
            low: 1.0,
            high: 1.0
        })
    );
}

#[test]
fn a_clean_thirty_percent_shift_excludes_one_point_two() {
    let baseline = spread_sample(50, 100.0);
    let candidate: Vec<f64> = spread_sample(50, 100.0).iter().map(|x| x * 1.3).collect();
    let independent = ratio_of_medians_ci(&baseline, &candidate, 0.95, 2000, 11);
    assert!((independent.ratio - 1.3).abs() < 1e-12);
    let interval = independent.interval.expect("interval");
    assert!(
        interval.low > 1.2 && (interval.low..=interval.high).contains(&1.3) && interval.high < 1.45,
        "{interval:?}"
    );
    // The 95% lower bound exceeds 1.2, so fewer than 2.5% of replicates lie at or below it.
    assert!(independent.p_value_above(1.2).expect("replicates") < 0.025);
    assert!(independent.p_value_below(1.2).expect("replicates") > 0.975);
    let paired = paired_ratio_of_medians_ci(&baseline, &candidate, 0.95, 2000, 11);
    let interval = paired.interval.expect("interval");
    assert!((interval.low - 1.3).abs() < 1e-12 && (interval.high - 1.3).abs() < 1e-12);
    assert_eq!(paired.p_value_above(1.2), Some(0.0));
    // A wider interval at a higher confidence level, from the same replicates.
    let wide = independent.interval_at(0.999).expect("replicates");
    let narrow = independent.interval.expect("interval");
    assert!(wide.low <= narrow.low && wide.high >= narrow.high);
}

#[test]
fn the_same_seed_gives_the_same_interval() {
    let baseline = spread_sample(30, 10.0);
    let candidate = spread_sample(37, 11.0);
    let a = ratio_of_medians_ci(&baseline, &candidate, 0.9, 1000, 42);
    let b = ratio_of_medians_ci(&baseline, &candidate, 0.9, 1000, 42);
    assert_eq!(a, b);
    let c = ratio_of_medians_ci(&baseline, &candidate, 0.9, 1000, 43);
    assert_ne!(a.replicates, c.replicates);
    // Unequal lengths cannot be paired.
    let fallback = paired_ratio_of_medians_ci(&baseline, &candidate, 0.9, 1000, 42);
    assert_eq!(fallback.resampling, Resampling::Independent);
    assert_eq!(fallback, a);
}

/// Two samples a side are enough to resample (the interval may still be
/// too wide to support a confidence, which is another rule's).
#[test]
fn two_samples_a_side_are_resampled() {
    for (baseline, candidate) in [
        (&[10.0, 11.0][..], &[12.0, 13.0][..]),
        (&[10.0, 11.0][..], &[12.0, 13.0, 12.5][..]),
        (&[10.0, 11.0, 10.5][..], &[12.0, 13.0][..]),
    ] {
        let estimate = ratio_of_medians_ci(baseline, candidate, 0.95, 1000, 1);
        assert_eq!(
            estimate.resampling,
            Resampling::Independent,
            "{baseline:?} {candidate:?}"
        );
        assert!(!estimate.replicates.is_empty());
    }
}

#[test]
fn one_sample_on_a_side_gives_no_interval() {
    let estimate = ratio_of_medians_ci(&[10.0], &[12.0, 13.0, 11.0], 0.95, 1000, 1);
    assert!((estimate.ratio - 1.2).abs() < 1e-12);
    assert_eq!(estimate.interval, None);
    assert!(!estimate.has_interval());
    assert_eq!(estimate.resampling, Resampling::None);
    assert_eq!(estimate.p_value_above(1.0), None);
    // Either side: one candidate call is no sample to resample either.
    let estimate = ratio_of_medians_ci(&[10.0, 11.0, 9.0], &[12.0], 0.95, 1000, 1);
    assert!((estimate.ratio - 1.2).abs() < 1e-12);
    assert_eq!(estimate.interval, None);
    assert_eq!(estimate.resampling, Resampling::None);
    assert!(estimate.replicates.is_empty());
    // No resamples asked for: none made, with samples enough on both sides.
    let estimate = ratio_of_medians_ci(&[10.0, 11.0, 9.0], &[12.0, 13.0], 0.95, 0, 1);
    assert_eq!(estimate.interval, None);
    assert_eq!(estimate.resampling, Resampling::None);
    assert!(ratio_of_medians_ci(&[], &[1.0], 0.95, 10, 1).ratio.is_nan());
}

#[test]
fn benjamini_hochberg_reproduces_the_paper() {
    // Benjamini & Hochberg (1995), section 4: 15 p-values; at q = 0.05
    // the procedure rejects the four smallest.
    let p = [
        0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459, 0.3240, 0.4262,
        0.5719, 0.6528, 0.7590, 1.0000,
    ];
    let adjusted = bh_adjust(&p);
    let rejected = adjusted.iter().filter(|&&a| a <= 0.05).count();
    assert_eq!(rejected, 4);
    assert!((adjusted[3] - 0.0095 * 15.0 / 4.0).abs() < 1e-12);
    assert!((adjusted[4] - 0.0201 * 15.0 / 5.0).abs() < 1e-12);
}

#[test]
fn benjamini_hochberg_by_hand() {
    // Sorted 0.01, 0.03, 0.04, 0.2 → m/i·p = 0.04, 0.06, 0.0533, 0.2;
    // running minimum from the top: 0.04, 0.0533, 0.0533, 0.2.
    let adjusted = bh_adjust(&[0.01, 0.04, 0.03, 0.2]);
    let expected = [0.04, 0.16 / 3.0, 0.16 / 3.0, 0.2];
    for (a, e) in adjusted.iter().zip(expected) {
        assert!((a - e).abs() < 1e-12, "{adjusted:?}");
    }
    assert_eq!(bh_adjust(&[]), Vec::<f64>::new());
    assert_eq!(bh_adjust(&[f64::NAN, 0.9]), vec![1.0, 1.0]);
}

#[test]
fn noise_is_the_largest_relative_deviation_from_the_median() {
    assert_eq!(max_relative_deviation(&[100.0]), None);
    assert_eq!(max_relative_deviation(&[100.0, 100.0]), Some(0.0));
    let noise = max_relative_deviation(&[100.0, 104.0, 98.0]).expect("three runs");
    assert!((noise - 0.04).abs() < 1e-12);
}

#[test]
fn row_seeds_depend_on_every_part() {
    let a = seed_from_parts(1, &["aten::mm", "((2, 3),)"]);
    assert_eq!(a, seed_from_parts(1, &["aten::mm", "((2, 3),)"]));
    assert_ne!(a, seed_from_parts(2, &["aten::mm", "((2, 3),)"]));
    assert_ne!(a, seed_from_parts(1, &["aten::m", "m((2, 3),)"]));
}

/// FNV-1a 64 as published (offset basis, then xor-and-multiply a byte at
/// a time), checked on the reference vectors of the FNV test suite.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xCBF2_9CE4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01B3)
    })
}

#[test]
fn row_seeds_are_fnv1a_of_the_parts_each_ended_by_0xff() {
    assert_eq!(fnv1a(b"a"), 0xAF63_DC4C_8601_EC8C);
    assert_eq!(fnv1a(b"foobar"), 0x8594_4171_F739_67E8);
    assert_eq!(seed_from_parts(0, &["a"]), fnv1a(b"a\xFF"));
    assert_eq!(
        seed_from_parts(0, &["aten::mm", "((2, 3),)"]),
        fnv1a(b"aten::mm\xFF((2, 3),)\xFF")
    );
}

/// The policy's seed enters the hash by a bijection (and every FNV-1a step
/// is one), so no two seeds give a row the same seed: a changed
/// `noise.seed` resamples every row differently.
#[test]
fn every_seed_bit_changes_the_row_seed() {
    let parts = ["aten::mm", "((2, 3),)"];
    let unseeded = seed_from_parts(0, &parts);
    for bit in 0..64 {
        assert_ne!(
            seed_from_parts(1 << bit, &parts),
            unseeded,
            "seed bit {bit} is lost"
        );
    }
}

#[test]
fn resamples_of_1e8_are_cut_to_the_bound() {
    let base = spread_sample(8, 100.0);
    let cand = spread_sample(8, 110.0);
    let estimate = ratio_of_medians_ci(&base, &cand, 0.95, 100_000_000, 7);
    assert_eq!(estimate.resamples, MAX_RESAMPLES);
    assert_eq!(estimate.replicates.len(), MAX_RESAMPLES);
    let paired = paired_ratio_of_medians_ci(&base, &cand, 0.95, MAX_RESAMPLES + 1, 7);
    assert_eq!(paired.resamples, MAX_RESAMPLES);
}

#[test]
fn few_samples_give_a_range_not_a_confidence_interval() {
    let baseline = [100.0, 102.0, 98.0];
    let candidate = [120.0, 123.0, 117.0];
    let paired = paired_ratio_of_medians_ci(&baseline, &candidate, 0.95, 2000, 3);
    assert!(paired.interval.is_some() && !paired.supports_confidence());
    let bounds = paired.bounds().expect("two or more samples a side");
    assert_eq!(bounds.kind, IntervalKind::Range);
    // Per-pair ratios: 1.2, 123/102 ≈ 1.206, 117/98 ≈ 1.194.
    assert_eq!(bounds.interval.low, 117.0 / 98.0, "{bounds:?}");
    assert_eq!(bounds.interval.high, 123.0 / 102.0);
    // Independent: every candidate against every baseline sample.
    let independent = ratio_of_medians_ci(&baseline, &candidate, 0.95, 2000, 3);
    let range = independent.bounds().expect("range").interval;
    assert_eq!((range.low, range.high), (117.0 / 102.0, 123.0 / 98.0));
    // Eight a side: the bootstrap interval is a confidence interval.
    let sample = spread_sample(8, 100.0);
    let eight = ratio_of_medians_ci(&sample, &sample, 0.95, 2000, 3);
    assert!(eight.supports_confidence());
    assert_eq!(
        eight.bounds().expect("bounds").kind,
        IntervalKind::Confidence
    );
    assert_eq!(
        eight.bounds().expect("bounds").interval,
        eight.interval.unwrap()
    );
    // One sample on a side: nothing to bound the point estimate with.
    let one = ratio_of_medians_ci(&[100.0], &candidate, 0.95, 2000, 3);
    assert_eq!((one.bounds(), one.range), (None, None));
    assert_eq!(one.min_detectable_slowdown_percent(1.05), None);
}

#[test]
fn the_range_holds_the_point_estimate() {
    // Pair ratios 2.0 and 0.5 around medians 15 → 15: the point (1.0) is
    // inside; a lopsided pair set still widens to hold it.
    let range = sample_range(&[10.0, 20.0], &[20.0, 10.0], true, 1.0).expect("range");
    assert_eq!((range.low, range.high), (0.5, 2.0));
    let widened = sample_range(&[10.0, 10.0], &[12.0, 12.0], true, 1.5).expect("range");
    assert_eq!((widened.low, widened.high), (1.2, 1.5));
    assert_eq!(sample_range(&[1.0], &[1.0, 2.0], true, 1.0), None);
}

#[test]
fn minimum_detectable_effect_grows_with_the_spread() {
    let baseline = [100.0, 102.0, 98.0];
    let tight = paired_ratio_of_medians_ci(&baseline, &[110.0, 112.2, 107.8], 0.95, 500, 1);
    let wide = paired_ratio_of_medians_ci(&baseline, &[110.0, 140.0, 90.0], 0.95, 500, 1);
    let tight_mde = tight.min_detectable_slowdown_percent(1.05).expect("mde");
    let wide_mde = wide.min_detectable_slowdown_percent(1.05).expect("mde");
    // Identical per-pair ratios: the range is a point, the MDE the threshold.
    assert!((tight_mde - 5.0).abs() < 1e-9, "{tight_mde}");
    assert!(wide_mde > 20.0, "{wide_mde}");
}

#[test]
fn normal_upper_tail_matches_tables() {
    assert!((normal_upper_tail(0.0) - 0.5).abs() < 1e-7);
    assert!((normal_upper_tail(1.959_964) - 0.025).abs() < 1e-6);
    assert!((normal_upper_tail(-1.644_854) - 0.95).abs() < 1e-6);
    assert!(normal_upper_tail(10.0) < 1e-20);
}

#[test]
fn a_ratio_of_quantiles_scales_with_the_samples_and_is_the_median_at_one_half() {
    let baseline: Vec<f64> = (1..=40).map(|i| f64::from(i * i)).collect();
    let slower: Vec<f64> = baseline.iter().map(|v| v * 1.3).collect();
    let estimate = ratio_of_quantiles_ci((&baseline, &slower), 0.1, true, (0.95, 500, 7));
    assert!((estimate.ratio - 1.3).abs() < 1e-12);
    assert_eq!(estimate.resampling, Resampling::Paired);
    let interval = estimate.interval.expect("an interval");
    assert!((interval.low - 1.3).abs() < 1e-12 && (interval.high - 1.3).abs() < 1e-12);
    let unpaired = ratio_of_quantiles_ci((&baseline, &slower), 0.5, false, (0.95, 500, 7));
    let medians = ratio_of_medians_ci(&baseline, &slower, 0.95, 500, 7);
    assert_eq!(unpaired.ratio, medians.ratio);
    assert_eq!(unpaired.resampling, Resampling::Independent);
}

/// The `q` quantile of `values` by Hyndman & Fan's type 7, computed here
/// from its definition (h = (n − 1)·q, interpolated between the order
/// statistics around h) rather than through [`quantile_sorted`].
fn type7(values: &[f64], q: f64) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let h = (sorted.len() - 1) as f64 * q;
    let (below, above) = (h.floor() as usize, h.ceil() as usize);
    sorted[below] + (h - h.floor()) * (sorted[above] - sorted[below])
}

#[test]
fn the_interval_is_the_two_sided_percentile_of_the_replicates() {
    let baseline = spread_sample(30, 10.0);
    let candidate: Vec<f64> = spread_sample(43, 10.0).iter().map(|x| x * 1.1).collect();
    for confidence in [0.95, 0.9, 0.99] {
        let estimate = ratio_of_medians_ci(&baseline, &candidate, confidence, 4000, 3);
        let interval = estimate.interval.expect("30 and 43 samples");
        let alpha = 1.0 - confidence;
        let (low, high) = (
            type7(&estimate.replicates, alpha / 2.0),
            type7(&estimate.replicates, 1.0 - alpha / 2.0),
        );
        assert!(
            (interval.low - low).abs() < 1e-12 && (interval.high - high).abs() < 1e-12,
            "{confidence}: {interval:?} against {low}..{high}"
        );
        // Equal tails: about α/2 of the replicates lie beyond each bound.
        let n = estimate.replicates.len() as f64;
        let below = estimate
            .replicates
            .iter()
            .filter(|&&r| r < interval.low)
            .count() as f64;
        let above = estimate
            .replicates
            .iter()
            .filter(|&&r| r > interval.high)
            .count() as f64;
        for tail in [below / n, above / n] {
            assert!(tail <= alpha / 2.0 + 1e-9, "{confidence}: tail {tail}");
        }
        assert!(
            (below + above) / n > alpha / 2.0,
            "{confidence}: {below} + {above} of {n}"
        );
    }
}

#[test]
fn a_confidence_interval_needs_enough_samples_on_the_smaller_side() {
    let sample = |n: usize| spread_sample(n, 100.0);
    let kind = |b: usize, c: usize| {
        ratio_of_medians_ci(&sample(b), &sample(c), 0.95, 200, 5)
            .bounds()
            .map(|b| b.kind)
    };
    let limit = MIN_CONFIDENCE_SAMPLES;
    // 3 baseline steps against 40 candidate calls is a range, either way round.
    assert_eq!(kind(3, 40), Some(IntervalKind::Range));
    assert_eq!(kind(40, 3), Some(IntervalKind::Range));
    assert_eq!(kind(limit - 1, limit + 30), Some(IntervalKind::Range));
    assert_eq!(kind(limit + 30, limit - 1), Some(IntervalKind::Range));
    assert_eq!(kind(limit, limit + 30), Some(IntervalKind::Confidence));
    assert_eq!(kind(limit + 30, limit), Some(IntervalKind::Confidence));
    assert_eq!(kind(1, 40), None);
}

#[test]
fn a_replicate_at_the_threshold_counts_for_no_change() {
    // Every candidate sample exactly ×1.25 its baseline: every paired
    // replicate is 1.25, so "ratio > 1.25" is never shown (p = 1) and
    // "ratio > 1.2" always is (p = 0).
    let baseline = [4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0];
    let candidate: Vec<f64> = baseline.iter().map(|x| x * 1.25).collect();
    let estimate = paired_ratio_of_medians_ci(&baseline, &candidate, 0.95, 500, 9);
    assert!(estimate.replicates.iter().all(|&r| r == 1.25));
    assert_eq!(estimate.p_value_above(1.25), Some(1.0));
    assert_eq!(estimate.p_value_below(1.25), Some(1.0));
    assert_eq!(estimate.p_value_above(1.2), Some(0.0));
    assert_eq!(estimate.p_value_below(1.3), Some(0.0));
}

#[test]
fn a_candidate_at_zero_confirms_no_finite_slowdown() {
    // The bounds reach 0 with a point estimate of 0: no slowdown of any
    // finite size could be shown from these samples.
    let estimate = ratio_of_medians_ci(&[10.0, 11.0, 12.0], &[0.0, 0.0, 0.0], 0.95, 200, 1);
    assert_eq!(estimate.ratio, 0.0);
    assert_eq!(
        estimate.min_detectable_slowdown_percent(1.05),
        Some(f64::INFINITY)
    );
}
