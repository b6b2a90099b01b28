//! One matched row judged (`rows.rs`): which rows are judged at all, where
//! a slowdown stops being one (the threshold, the impact, the bounds), what
//! severity and words an inconclusive one gets.

use super::*;
use crate::analysis::hardware::{ComputeSpec, builtin_catalog};
use crate::analysis::ops::stats::percent;
use crate::gate::compare::OpComparison;
use crate::gate::judge::rows::{judge_cross_platform, judge_if_large_enough, judge_same_platform};
use crate::gate::stats::RatioInterval;
use crate::gate::verdict::trimmed_number;

/// A row is judged from the time floor up (at exactly the floor it is),
/// its threshold raised to its measured noise, a fraction.
#[test]
fn a_row_is_judged_from_the_time_floor_with_its_threshold_raised_to_its_noise() {
    let (comparison, row, _, _, policy) = small_slower_row();
    let op = &comparison.ops[row];
    let floor = policy.noise.min_time_for(comparison.baseline_total_us);
    assert_eq!(op.baseline.time_us.max(op.candidate.time_us), floor);
    assert!(judge_if_large_enough(op, &policy, &comparison).is_some());
    let mut higher = policy.clone();
    higher.noise.min_time_us *= 1.01;
    assert!(judge_if_large_enough(op, &higher, &comparison).is_none());

    // ×1.5 is beyond 40% of noise, within 60%.
    for (noise, judged) in [(0.4, true), (0.6, false)] {
        let mut noisy = op.clone();
        noisy.noise = Some(noise);
        assert_eq!(
            judge_if_large_enough(&noisy, &policy, &comparison).is_some(),
            judged,
            "noise {noise}"
        );
    }
}

/// [`small_slower_row`]'s row with its bounds set to `low`..`high` and
/// its ratio to `ratio`, judged at a 10% threshold.
fn judged_with(
    op: &OpComparison,
    policy: &Policy,
    ratio: f64,
    low: f64,
    high: f64,
) -> Option<Finding> {
    let op = with_estimate(op, ratio, Some(RatioInterval { low, high }));
    judge_same_platform(&op, policy, "w", THRESHOLD, None).map(|p| p.finding)
}

/// The policy's prior noise of one call, `sigma_percent`, not yet at a call.
fn prior_noise(sigma_percent: f64) -> SingleSampleNoise {
    SingleSampleNoise {
        sigma_percent,
        source: NoiseSource::Prior,
        rows: None,
        call_us: None,
        jitter_us: None,
    }
}

const THRESHOLD: f64 = 10.0;

/// The threshold's ratio as the judge computes it.
fn up() -> f64 {
    1.0 + THRESHOLD / 100.0
}

/// A slowdown is one beyond the threshold, not at it; confident when its
/// bounds are beyond it, not at it; an inconclusive one warns when its
/// bounds are above no change (not at it), without a reason appended when
/// there is none.
#[test]
fn a_slowdown_starts_beyond_the_threshold_and_is_confident_beyond_it() {
    let (comparison, row, _, _, policy) = small_slower_row();
    let op = &comparison.ops[row];
    assert!(op.impact_percent > 0.0);
    assert!(
        op.estimate
            .bounds()
            .is_some_and(|b| b.kind == IntervalKind::Range)
    );

    assert!(judged_with(op, &policy, up(), up(), up() * 1.1).is_none());

    let at_threshold = judged_with(op, &policy, 1.3, up(), 1.4).expect("a slowdown");
    assert!(at_threshold.statistics.inconclusive, "{at_threshold:#?}");
    let beyond = judged_with(op, &policy, 1.3, up() * 1.01, 1.4).expect("a slowdown");
    assert!(!beyond.statistics.inconclusive, "{beyond:#?}");
    assert_eq!(beyond.severity, Severity::Fail);

    let at_no_change = judged_with(op, &policy, 1.3, 1.0, 1.4).expect("a slowdown");
    assert_eq!(at_no_change.severity, Severity::Info);
    let above = judged_with(op, &policy, 1.3, 1.01, 1.4).expect("a slowdown");
    assert_eq!(above.severity, Severity::Warn);
    assert!(!above.message.contains("a warning:"), "{}", above.message);

    // No added time, no slowdown, whatever the ratio.
    let mut no_impact = op.clone();
    no_impact.impact_percent = 0.0;
    assert!(judged_with(&no_impact, &policy, 1.3, 1.2, 1.4).is_none());
}

/// An improvement is a row whose bounds are below the threshold's inverse
/// (not at it) and whose time fell (not stayed) by the impact minimum.
#[test]
fn an_improvement_needs_bounds_below_the_threshold_and_a_material_saving() {
    let (comparison, row, _, _, policy) = small_slower_row();
    let down = 1.0 / up();
    let mut faster = comparison.ops[row].clone();
    faster.impact_percent = -0.5;
    let improvement = |op: &OpComparison, policy: &Policy, high: f64| {
        judged_with(op, policy, 0.8, 0.75, high).map(|f| f.kind)
    };
    assert_eq!(
        improvement(&faster, &policy, down * 0.99),
        Some(FindingKind::Improvement)
    );
    assert_eq!(improvement(&faster, &policy, down), None);

    let mut unchanged = faster.clone();
    unchanged.impact_percent = 0.0;
    assert_eq!(improvement(&unchanged, &policy, down * 0.99), None);
    let mut slower = faster.clone();
    slower.impact_percent = 0.5;
    assert_eq!(improvement(&slower, &policy, down * 0.99), None);

    let mut minimum = policy.clone();
    minimum.noise.min_impact_percent = 0.6;
    assert_eq!(improvement(&faster, &minimum, down * 0.99), None);
}

/// The noise of one call is raised to the policy's timing jitter over a
/// short call, and then carries that jitter and the call's time, so that
/// its words name them; a long call keeps its own noise and source.
#[test]
fn the_noise_of_a_short_call_carries_the_policys_jitter() {
    use crate::gate::judge::rows::at_call;
    let noise = Policy::default().noise;
    let jitter = noise.single_sample_jitter_us.expect("a default jitter");
    let prior = prior_noise(1.0);
    let short = at_call(prior, &noise, 10.0 * jitter);
    assert_eq!(short.source, NoiseSource::Jitter);
    assert_eq!(short.sigma_percent, 10.0);
    assert_eq!(
        (short.call_us, short.jitter_us),
        (Some(10.0 * jitter), Some(jitter))
    );
    let words = short.describe();
    assert!(
        words.contains(&format!("timing jitter {} µs", trimmed_number(jitter))),
        "{words}"
    );
    let long = at_call(prior, &noise, 1000.0 * jitter);
    assert_eq!((long.source, long.sigma_percent), (NoiseSource::Prior, 1.0));
}

/// A policy with one cross-platform rule for `name`'s rows (`rule`: its
/// YAML lines after `match`), `top` more lines of the section, and no
/// impact minimum.
fn cross_platform_policy(name: &str, top: &str, rule: &str) -> Policy {
    let mut policy = Policy::from_yaml(
        &format!(
            "version: 1\ncross_platform:\n  enabled: true\n{top}  rules:\n    - match: {{ name: \"{name}\" }}\n{rule}"
        ),
        "policy.yaml",
    )
    .expect("a valid policy");
    policy.noise.min_impact_percent = 0.0;
    policy
}

/// `op` judged across platforms under `policy` at the 10% threshold, with
/// the given hardware; the pending finding's finding.
fn across(
    op: &OpComparison,
    comparison: &Comparison,
    policy: &Policy,
    hardware: (Option<&Hardware>, Option<&Hardware>),
) -> Option<Finding> {
    judge_cross_platform(
        op,
        policy,
        hardware.0,
        hardware.1,
        "w",
        THRESHOLD,
        comparison.baseline_total_us,
    )
    .map(|p| p.finding)
}

/// `op` with its ratio `ratio` and its bounds `range` (no interval).
fn with_estimate(op: &OpComparison, ratio: f64, range: Option<RatioInterval>) -> OpComparison {
    let mut op = op.clone();
    op.estimate.ratio = ratio;
    op.estimate.interval = None;
    op.estimate.range = range;
    op
}

/// A cross-platform rule asking for the bandwidth or the peak compute
/// expects the baseline's figure over the candidate's (an H100 against an
/// MI300X), and names it.
#[test]
fn a_bandwidth_or_compute_expectation_is_the_baselines_figure_over_the_candidates() {
    let (h100, mi300) = h100_and_mi300();
    let (comparison, row, name, _, _) = small_slower_row();
    let op = &comparison.ops[row];
    let spec = op
        .candidate
        .model
        .as_ref()
        .and_then(|m| m.compute_spec)
        .unwrap_or(ComputeSpec::MatrixBf16);
    let peak = |h: &Hardware| h.peak_tflops(spec).expect("a peak");
    for (expected, ratio, basis) in [
        ("bandwidth", h100.hbm_tb_s / mi300.hbm_tb_s, "bandwidth"),
        ("compute", peak(&h100) / peak(&mi300), "peak compute"),
    ] {
        let policy = cross_platform_policy(&name, "", &format!("      expected: {expected}\n"));
        let finding = across(op, &comparison, &policy, (Some(&h100), Some(&mi300)))
            .unwrap_or_else(|| panic!("{expected}: ×1.5 is beyond {ratio:.2}"));
        assert_eq!(finding.expected_ratio, Some(ratio), "{expected}");
        assert!(
            finding.message.contains(&format!(
                "than the {ratio:.2} the hardware explains ({basis}"
            )),
            "{}",
            finding.message
        );
    }
}

/// The catalog's H100 SXM and MI300X.
fn h100_and_mi300() -> (Hardware, Hardware) {
    let catalog = builtin_catalog();
    let entry = |name: &str| catalog.by_name(name).cloned().expect(name);
    (entry("H100 SXM"), entry("MI300X"))
}

/// A cross-platform finding on a modelled row carries each side's roofline
/// efficiency on its own hardware: roofline time over the median call.
#[test]
fn a_cross_platform_finding_carries_each_sides_efficiency_on_its_hardware() {
    let (h100, mi300) = h100_and_mi300();
    let baseline = example_snapshot();
    let index = largest_row_where(&baseline, |op| {
        op.step_us.len() == 3
            && op.graph.is_none()
            && op
                .model
                .as_ref()
                .is_some_and(|m| m.flops > 0.0 && m.compute_spec.is_some())
    })
    .expect("a modelled row");
    let candidate = scaled(&baseline, index, 1.5, [1.5; 3]);
    let comparison = compare(
        std::slice::from_ref(&baseline),
        &candidate,
        &CompareOptions::default(),
    );
    let op = &comparison.ops[matched_row(&comparison, &candidate.ops[index])];
    let policy = cross_platform_policy(&baseline.ops[index].name, "", "      ratio: 1.0\n");
    let efficiency = |side: &OpSide, hardware: &Hardware| {
        let model = side.model.as_ref().expect("a model");
        let roofline = hardware
            .roofline_time_us(
                model.flops,
                model.bytes,
                model.compute_spec.expect("a spec"),
            )
            .expect("a roofline");
        100.0 * roofline / side.median_us
    };
    let expected = (
        efficiency(&op.baseline, &h100),
        efficiency(&op.candidate, &mi300),
    );
    assert!(expected.0 > 0.0 && expected.1 > 0.0, "{expected:?}");
    let judged = |op: &OpComparison| {
        across(op, &comparison, &policy, (Some(&h100), Some(&mi300)))
            .expect("×1.5 is beyond the written 1.0")
            .statistics
            .efficiency_percent
    };
    assert_eq!(judged(op), Some(expected));

    // No efficiency without a measured call, or without a roofline time.
    let mut unmeasured = op.clone();
    unmeasured.candidate.median_us = 0.0;
    assert_eq!(judged(&unmeasured), None);
    let mut no_work = op.clone();
    let model = no_work.candidate.model.as_mut().expect("a model");
    (model.flops, model.bytes) = (0.0, 0.0);
    assert_eq!(judged(&no_work), None);
}

/// Across platforms a row is slower than expected when its bounds are
/// above the expected ratio times (1 + the larger of the slack and the
/// threshold), faster when below it divided so; its limit is that upper
/// ratio and its impact the time beyond what the expected ratio explains,
/// judged from the impact minimum up.
#[test]
fn a_cross_platform_row_is_judged_against_its_expected_ratio_and_slack() {
    let (comparison, row, name, _, _) = small_slower_row();
    let (expected, slack) = (1.2, 25.0);
    let mut policy = cross_platform_policy(
        &name,
        "",
        &format!("      ratio: {expected}\n      slack_percent: {slack}\n"),
    );
    let tolerance = 1.0 + f64::max(slack, THRESHOLD) / 100.0;
    let (upper, lower) = (expected * tolerance, expected / tolerance);
    let op = &comparison.ops[row];
    let judged = |policy: &Policy, ratio: f64, low: f64, high: f64| {
        let op = with_estimate(op, ratio, Some(RatioInterval { low, high }));
        across(&op, &comparison, policy, (None, None))
    };

    let slower = judged(&policy, 1.6, upper * 1.01, 1.7).expect("beyond the upper ratio");
    assert!(
        slower
            .message
            .contains("is slower than the 1.20 the policy expects")
    );
    assert_eq!(slower.limit, Some(upper));
    let excess = percent(
        op.candidate.time_us - expected * op.baseline.time_us,
        comparison.baseline_total_us,
    );
    assert_eq!(slower.impact_percent, Some(excess));
    assert!(judged(&policy, 1.6, upper * 0.99, 1.7).is_none());
    assert!(judged(&policy, 1.6, upper, 1.7).is_none());

    let faster = judged(&policy, 0.9, 0.85, lower * 0.99).expect("below the lower ratio");
    assert!(
        faster.message.contains("is faster than the 1.20"),
        "{}",
        faster.message
    );
    assert!(judged(&policy, 0.9, 0.85, lower * 1.01).is_none());
    assert!(judged(&policy, 0.9, 0.85, lower).is_none());

    policy.noise.min_impact_percent = excess.abs();
    assert!(judged(&policy, 1.6, upper * 1.01, 1.7).is_some());
    policy.noise.min_impact_percent = excess.abs() * 1.01;
    assert!(judged(&policy, 1.6, upper * 1.01, 1.7).is_none());
}

/// One sample a side cannot fail across platforms either: a written ratio's
/// failing finding becomes a warning that says why. Only then: not with
/// bounds, not on information, not on a warning the policy asked for.
#[test]
fn one_sample_across_platforms_warns_and_says_why_only_when_it_warns() {
    let (comparison, row, name, _, _) = small_slower_row();
    let why = "; a warning: one sample on a side is a single measurement";
    let judged = |severity: &str, ratio: f64, bounds: bool| {
        let policy = cross_platform_policy(
            &name,
            &format!("  severity: {severity}\n"),
            "      ratio: 1.0\n",
        );
        let range = bounds.then_some(RatioInterval {
            low: ratio,
            high: ratio,
        });
        let op = with_estimate(&comparison.ops[row], ratio, range);
        let finding = across(&op, &comparison, &policy, (None, None)).expect("not 1.0");
        (finding.severity, finding.message.contains(why))
    };
    assert_eq!(judged("fail", 1.5, false), (Severity::Warn, true));
    assert_eq!(judged("fail", 1.5, true), (Severity::Fail, false));
    assert_eq!(judged("fail", 0.5, false), (Severity::Info, false));
    assert_eq!(judged("warn", 1.5, true), (Severity::Warn, false));
}

/// A graph row's finding names the kernel whose time changed most, by its
/// share of the row's time on each side: a fall as well as a rise; not
/// when no kernel changed, nor when the most-changed one had no time
/// before, nor for a row of one kernel.
#[test]
fn a_graph_rows_finding_names_the_kernel_that_changed_most() {
    let (comparison, row, _, _, policy) = small_slower_row();
    let with_kernels = |before: &[(&str, f64)], after: &[(&str, f64)], scales: [f64; 2]| {
        let mut op = comparison.ops[row].clone();
        let list = |kernels: &[(&str, f64)]| -> Vec<(String, f64)> {
            kernels
                .iter()
                .map(|(name, us)| (name.to_string(), *us))
                .collect()
        };
        op.baseline.kernel_us = list(before);
        op.candidate.kernel_us = list(after);
        op.baseline.time_us = op.baseline.total_us * scales[0];
        op.candidate.time_us = op.candidate.total_us * scales[1];
        judged_with(&op, &policy, 1.3, 1.2, 1.4)
            .expect("a slowdown")
            .message
    };
    let rose = with_kernels(
        &[("k1", 10.0), ("k2", 20.0)],
        &[("k1", 10.0), ("k2", 30.0)],
        [1.0; 2],
    );
    assert!(rose.ends_with("; mostly k2 (+50.0%)"), "{rose}");
    let fell = with_kernels(
        &[("k1", 10.0), ("k2", 20.0)],
        &[("k1", 2.0), ("k2", 25.0)],
        [1.0; 2],
    );
    assert!(fell.ends_with("; mostly k1 (-80.0%)"), "{fell}");
    // A row twice its kernels' sum: each kernel's time doubled, on either
    // side.
    let scaled = with_kernels(
        &[("k1", 10.0), ("k2", 20.0)],
        &[("k1", 10.0), ("k2", 30.0)],
        [1.0, 2.0],
    );
    assert!(scaled.ends_with("; mostly k2 (+200.0%)"), "{scaled}");
    let scaled_before = with_kernels(
        &[("k1", 10.0), ("k2", 20.0)],
        &[("k1", 10.0), ("k2", 60.0)],
        [2.0, 1.0],
    );
    assert!(
        scaled_before.ends_with("; mostly k2 (+50.0%)"),
        "{scaled_before}"
    );
    for (before, after) in [
        (
            vec![("k1", 10.0), ("k2", 20.0)],
            vec![("k1", 10.0), ("k2", 20.0)],
        ),
        (
            vec![("k1", 10.0), ("k2", 0.0)],
            vec![("k1", 10.0), ("k2", 30.0)],
        ),
        (vec![("k1", 10.0)], vec![("k1", 30.0)]),
    ] {
        let message = with_kernels(&before, &after, [1.0; 2]);
        assert!(
            !message.contains("; mostly"),
            "{before:?} → {after:?}: {message}"
        );
    }
}

/// One sample a side fails only when it lies more than
/// [`SINGLE_SAMPLE_Z`] deviations of one call's noise beyond the
/// threshold: exactly that many is inconclusive.
#[test]
fn one_sample_exactly_three_deviations_beyond_the_threshold_is_inconclusive() {
    use crate::gate::judge::rows::{SINGLE_SAMPLE_Z, single_sample_z};
    let (comparison, row, _, _, policy) = small_slower_row();
    let ratio = 1.5;
    let mut op = with_estimate(&comparison.ops[row], ratio, None);
    // Calls long enough that the timing jitter does not raise the noise.
    (op.baseline_sample_median_us, op.candidate_sample_median_us) = (1e9, 1e9);
    // The noise at which the ratio is exactly three deviations beyond.
    let mut sigma = (ratio / up()).ln() * 100.0 / (SINGLE_SAMPLE_Z * std::f64::consts::SQRT_2);
    for _ in 0..64 {
        let z = single_sample_z(ratio, up(), &prior_noise(sigma));
        if z == SINGLE_SAMPLE_Z {
            break;
        }
        sigma = if z > SINGLE_SAMPLE_Z {
            sigma.next_up()
        } else {
            sigma.next_down()
        };
    }
    assert_eq!(
        single_sample_z(ratio, up(), &prior_noise(sigma)),
        SINGLE_SAMPLE_Z
    );
    let judged = |sigma: f64| {
        judge_same_platform(&op, &policy, "w", THRESHOLD, Some(prior_noise(sigma)))
            .expect("beyond the threshold")
            .finding
    };
    let exactly = judged(sigma);
    assert!(exactly.statistics.inconclusive, "{exactly:#?}");
    let beyond = judged(sigma * 0.99);
    assert!(!beyond.statistics.inconclusive, "{beyond:#?}");
    assert!(beyond.statistics.single_sample_noise.is_some());
}
