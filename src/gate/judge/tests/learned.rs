//! A cross-platform row judged against the ratio it showed over earlier
//! paired runs (`learned.rs`): its tolerance, the change and its impact in
//! either side's terms, the p-value from the learned spread, and an op's
//! shapes that each rose a little judged together.

use super::*;
use crate::gate::compare::{Expectation, ExpectationBasis, OpComparison};
use crate::gate::judge::learned::{is_learned, judge_learned, judge_risen_rows, risen_impact};
use crate::gate::stats::normal_upper_tail;
use crate::gate::verdict::{FindingPriority, LearnedFrom};

/// The example's comparison with its GPU totals set to 1,000 µs
/// (baseline) and 2,000 µs (candidate), and a row of it: `times` µs a
/// side, its observed ratio `ratio`, learned as `expected` over `runs`
/// runs with the spread `spread` (a fraction).
fn learned_row(
    times: (f64, f64),
    ratio: f64,
    expected: f64,
    runs: usize,
    spread: f64,
) -> (Comparison, OpComparison) {
    let (mut comparison, row, ..) = small_slower_row();
    comparison.baseline_total_us = 1000.0;
    comparison.candidate_total_us = 2000.0;
    let mut op = comparison.ops[row].clone();
    op.baseline.time_us = times.0;
    op.candidate.time_us = times.1;
    op.estimate.ratio = ratio;
    op.expected = Some(Expectation {
        ratio: expected,
        basis: ExpectationBasis::History { runs, spread },
        spec: None,
    });
    (comparison, op)
}

/// The policy with no impact minimum and a 10% history tolerance.
fn any_impact() -> Policy {
    let mut policy = Policy::default();
    policy.noise.min_impact_percent = 0.0;
    policy.cross_platform.history_tolerance_percent = 10.0;
    policy
}

/// The learned ratio's upper limit with a tolerance of `percent`.
fn upper(expected: f64, percent: f64) -> f64 {
    expected * (1.0 + percent / 100.0)
}

/// Three spreads of `spread` (a fraction), %.
fn three_spreads(spread: f64) -> f64 {
    3.0 * spread * 100.0
}

/// The p-value of `ratio` beyond `limit` under the learned spread widened
/// by the median's own uncertainty.
fn p_beyond(ratio: f64, limit: f64, runs: usize, spread: f64) -> f64 {
    let sigma = spread * (1.0 + 1.0 / runs as f64).sqrt();
    normal_upper_tail((ratio / limit).ln().abs() / sigma)
}

/// A learned row fails when its point ratio is beyond the learned ratio
/// times the tolerance (max of the policy's and three spreads; at exactly
/// the limit it is not), is information when below the ratio over it, and
/// carries the learned ratio, what it rests on, the limit, and a p-value
/// from the learned spread.
#[test]
fn a_learned_row_is_judged_against_its_ratio_and_the_larger_tolerance() {
    let policy = any_impact();
    // Three spreads of 5% (15%) exceed the policy's 10%.
    let limit = upper(2.0, three_spreads(0.05));
    let (comparison, at_limit) = learned_row((100.0, 600.0), limit, 2.0, 4, 0.05);
    assert!(is_learned(&at_limit));
    assert!(judge_learned(&at_limit, &policy, "w", &comparison).is_none());
    assert_eq!(risen_impact(&at_limit, &policy, &comparison), None);

    let ratio = 2.5;
    let (comparison, op) = learned_row((100.0, 600.0), ratio, 2.0, 4, 0.05);
    let pending = judge_learned(&op, &policy, "w", &comparison).expect("a rise beyond 15%");
    let f = &pending.finding;
    assert_eq!(f.severity, Severity::Fail);
    assert_eq!(f.kind, FindingKind::UnexpectedRatio);
    assert_eq!(f.expected_ratio, Some(2.0));
    assert_eq!(f.limit, Some(limit));
    assert_eq!(f.statistics.limit_unit.as_deref(), Some("×"));
    assert_eq!(
        f.statistics.expected_learned,
        Some(LearnedFrom {
            runs: 4,
            spread_percent: 5.0
        })
    );
    assert!(
        f.message.contains(" 2.50 rose +25.0% from the ×2.00 learned over 4 runs ±5.0% (tolerance 15%): the op got slower"),
        "{}",
        f.message
    );
    let p = p_beyond(ratio, limit, 4, 0.05);
    assert!(
        (pending.p_value - p).abs() < 1e-12,
        "{} against {p}",
        pending.p_value
    );
    assert!(!pending.one_call_noise);

    // The policy's tolerance when three spreads are less: ×2.25 is beyond
    // 10% of ×2 (and within 15%).
    let (comparison, op) = learned_row((100.0, 600.0), 2.25, 2.0, 4, 0.02);
    let pending = judge_learned(&op, &policy, "w", &comparison).expect("a rise beyond 10%");
    assert_eq!(pending.finding.limit, Some(upper(2.0, 10.0)));
    assert!(pending.finding.message.contains("(tolerance 10%)"));
    let mut tolerant = policy.clone();
    tolerant.cross_platform.history_tolerance_percent = 15.0;
    assert!(judge_learned(&op, &tolerant, "w", &comparison).is_none());
    tolerant.cross_platform.history_severity = Severity::Warn;
    tolerant.cross_platform.history_tolerance_percent = 10.0;
    let warned = judge_learned(&op, &tolerant, "w", &comparison).expect("a rise");
    assert_eq!(warned.finding.severity, Severity::Warn);

    // Below the learned ratio over its tolerance: information, with the
    // p-value below that limit.
    let lower = 2.0 / (1.0 + three_spreads(0.05) / 100.0);
    let (comparison, at_lower) = learned_row((100.0, 600.0), lower, 2.0, 4, 0.05);
    assert!(judge_learned(&at_lower, &policy, "w", &comparison).is_none());
    let (comparison, op) = learned_row((100.0, 600.0), 1.6, 2.0, 4, 0.05);
    let pending = judge_learned(&op, &policy, "w", &comparison).expect("a fall beyond 15%");
    assert_eq!(pending.finding.severity, Severity::Info);
    assert!(
        pending
            .finding
            .message
            .contains(" 1.60 fell -20.0% from the ×2.00 "),
        "{}",
        pending.finding.message
    );
    let p = p_beyond(1.6, lower, 4, 0.05);
    assert!(
        (pending.p_value - p).abs() < 1e-12,
        "{} against {p}",
        pending.p_value
    );
    assert_eq!(risen_impact(&op, &policy, &comparison), None);
}

/// A row without a learned ratio, or whose change against it is not a
/// positive number, is not judged here.
#[test]
fn only_a_positive_finite_change_against_a_learned_ratio_is_judged() {
    let policy = any_impact();
    let (comparison, mut roofline) = learned_row((100.0, 600.0), 2.5, 2.0, 4, 0.05);
    roofline.expected = Some(Expectation {
        ratio: 2.0,
        basis: ExpectationBasis::Bandwidth,
        spec: None,
    });
    assert!(!is_learned(&roofline));
    assert!(judge_learned(&roofline, &policy, "w", &comparison).is_none());
    roofline.expected = None;
    assert!(!is_learned(&roofline));
    assert!(judge_learned(&roofline, &policy, "w", &comparison).is_none());
    for (ratio, expected) in [(2.5, 0.0), (0.0, 2.0), (-2.5, 2.0), (f64::NAN, 2.0)] {
        let (comparison, op) = learned_row((100.0, 600.0), ratio, expected, 4, 0.05);
        assert!(
            judge_learned(&op, &policy, "w", &comparison).is_none(),
            "{ratio} over {expected}"
        );
        assert_eq!(
            risen_impact(&op, &policy, &comparison),
            None,
            "{ratio} over {expected}"
        );
    }
}

/// The change's impact is the larger of its two readings: the baseline
/// time it would add at the new ratio, and the candidate time beyond the
/// learned ratio, each as a share of its side's GPU time; below the
/// impact minimum (at exactly it, judged) the row is not judged alone.
#[test]
fn a_learned_changes_impact_is_the_larger_of_each_sides_reading() {
    let policy = any_impact();
    // ×1.25: 100 µs of 1,000 would add 2.5%; 600 µs of 2,000 beyond the
    // learned ratio are 6%; with 100 µs, 1%.
    for (candidate_us, impact) in [(600.0, 6.0), (100.0, 2.5)] {
        let (comparison, op) = learned_row((100.0, candidate_us), 2.5, 2.0, 4, 0.05);
        let pending = judge_learned(&op, &policy, "w", &comparison).expect("a rise");
        let found = pending.finding.impact_percent.expect("an impact");
        assert!((found - impact).abs() < 1e-9, "{found} against {impact}");
        assert_eq!(pending.finding.priority, FindingPriority::of_impact(found));
        assert_eq!(risen_impact(&op, &policy, &comparison), Some(found));

        let mut at_minimum = policy.clone();
        at_minimum.noise.min_impact_percent = found;
        assert!(judge_learned(&op, &at_minimum, "w", &comparison).is_some());
        at_minimum.noise.min_impact_percent = found * 1.01;
        assert!(judge_learned(&op, &at_minimum, "w", &comparison).is_none());
    }
    // A fall's impact is a saving, held to the minimum by its size.
    let (comparison, op) = learned_row((100.0, 600.0), 1.6, 2.0, 4, 0.05);
    let saving = judge_learned(&op, &policy, "w", &comparison)
        .and_then(|p| p.finding.impact_percent)
        .expect("a saving");
    // ×0.8: 100 µs would save 2%; 600 µs are 7.5% below the learned ratio.
    assert!((saving + 7.5).abs() < 1e-9, "{saving}");
    let mut above = policy.clone();
    above.noise.min_impact_percent = 7.5 * 1.01;
    assert!(judge_learned(&op, &above, "w", &comparison).is_none());
    above.noise.min_impact_percent = 7.4;
    assert!(judge_learned(&op, &above, "w", &comparison).is_some());
    // A rise with no time on either side adds nothing: not risen.
    let (comparison, idle) = learned_row((0.0, 0.0), 2.5, 2.0, 4, 0.05);
    assert_eq!(risen_impact(&idle, &policy, &comparison), None);
}

/// Shapes of one op that each rose a little are judged together when
/// there are two or more and their impacts add up to the minimum: the
/// learned ratio of their summed time, the widest tolerance with its
/// spread, the fewest runs (not the widest row's), the largest p-value; how
/// many of the op's shapes rose.
#[test]
fn shapes_that_each_rose_a_little_are_judged_together() {
    let (mut comparison, wide) = learned_row((100.0, 250.0), 2.5, 2.0, 6, 0.05);
    let (_, narrow) = learned_row((300.0, 390.0), 1.3, 1.0, 4, 0.02);
    let name = wide.candidate.key.name.clone();
    let mut unrisen = wide.clone();
    unrisen.candidate.key.input_dims = "[[1]]".to_string();
    let mut other_op = wide.clone();
    other_op.candidate.key.name = "other::op".to_string();
    comparison.ops = vec![wide.clone(), narrow.clone(), unrisen, other_op];
    let mut policy = any_impact();
    policy.noise.min_impact_percent = 1.0;
    let rows = [(&wide, 0.5), (&narrow, 0.5)];

    let pending = judge_risen_rows(&name, &rows, &policy, &comparison).expect("risen together");
    let f = &pending.finding;
    // Learned: (2 × 100 + 1 × 300) / 400 = 1.25; observed 640 / 400 = 1.6.
    let expected = 1.25;
    assert_eq!(f.expected_ratio, Some(expected));
    assert_eq!(f.limit, Some(upper(expected, three_spreads(0.05))));
    assert_eq!(
        f.statistics.expected_learned,
        Some(LearnedFrom {
            runs: 4,
            spread_percent: 5.0
        })
    );
    assert_eq!((f.baseline, f.candidate), (Some(400.0), Some(640.0)));
    assert_eq!(f.delta_percent, Some((640.0 / 400.0 - 1.0) * 100.0));
    assert_eq!(f.impact_percent, Some(1.0));
    assert_eq!(f.priority, FindingPriority::of_impact(1.0));
    assert_eq!(f.severity, policy.cross_platform.history_severity);
    assert_eq!(
        f.op.as_ref().map(|op| op.input_dims.as_str()),
        Some("2 shapes")
    );
    let change = (640.0 / 400.0 / expected - 1.0) * 100.0;
    assert!(
        f.message.starts_with(&format!(
            "{name}: the candidate/baseline time ratio rose beyond its learned ratio in 2 of its 3 shapes (together {change:+.1}% from ×1.25, learned over 4 runs ±5.0%; tolerance 15%), +1.00% of GPU time together"
        )),
        "{}",
        f.message
    );
    let p = p_beyond(2.5, upper(2.0, three_spreads(0.05)), 6, 0.05).max(p_beyond(
        1.3,
        upper(1.0, 10.0),
        4,
        0.02,
    ));
    assert!(
        (pending.p_value - p).abs() < 1e-12,
        "{} against {p}",
        pending.p_value
    );

    // One row, or impacts short of the minimum (at it, judged), or no
    // baseline time: nothing.
    assert!(judge_risen_rows(&name, &rows[..1], &policy, &comparison).is_none());
    assert!(judge_risen_rows(&name, &[(&wide, 1.0)], &policy, &comparison).is_none());
    let three = [(&wide, 0.5), (&narrow, 0.5), (&narrow, 0.5)];
    assert!(judge_risen_rows(&name, &three, &policy, &comparison).is_some());
    policy.noise.min_impact_percent = 1.01;
    assert!(judge_risen_rows(&name, &rows, &policy, &comparison).is_none());
    policy.noise.min_impact_percent = 1.0;
    let (mut idle_wide, mut idle_narrow) = (wide.clone(), narrow.clone());
    idle_wide.baseline.time_us = 0.0;
    idle_narrow.baseline.time_us = 0.0;
    let idle = [(&idle_wide, 0.5), (&idle_narrow, 0.5)];
    assert!(judge_risen_rows(&name, &idle, &policy, &comparison).is_none());
}
