//! The timeline rules (`judge/timeline.rs`): a GPU-timeline metric that
//! grew beyond its limit, raised to the noise floor and the measured noise,
//! or beyond an absolute maximum; each inference phase judged by the
//! policy's first relative rule on busy, computation or total time.

use super::*;
use crate::gate::compare::TimelineComparison;
use crate::gate::judge::findings::{priority_of, time_per};
use crate::gate::judge::timeline::{phase_findings, timeline_findings};
use crate::gate::policy::{TimelineMetric, TimelineRule};
use crate::gate::verdict::FindingPriority;

/// A timeline row: `metric` from `baseline` to `candidate` µs, with its
/// run-to-run noise and step-to-step spread (fractions).
pub(super) fn timeline_row(
    metric: &str,
    (baseline, candidate): (f64, f64),
    noise: Option<f64>,
    step_spread: Option<f64>,
) -> TimelineComparison {
    TimelineComparison {
        metric: metric.to_string(),
        baseline_us: baseline,
        candidate_us: candidate,
        delta_percent: (baseline > 0.0).then(|| (candidate / baseline - 1.0) * 100.0),
        noise,
        estimate: None,
        step_spread,
    }
}

/// The example's comparison with `rows` for its timeline and `phases`,
/// its baseline GPU time 10,000 µs.
pub(super) fn with_timeline(
    rows: Vec<TimelineComparison>,
    phases: Vec<TimelineComparison>,
) -> Comparison {
    let mut comparison = compared_with_itself(&example_snapshot());
    comparison.timeline = rows;
    comparison.phases = phases;
    comparison.baseline_total_us = 10_000.0;
    comparison
}

fn rule(metric: TimelineMetric, relative: Option<f64>, max: Option<f64>) -> TimelineRule {
    TimelineRule {
        metric,
        max_regression_percent: relative,
        max,
        severity: Severity::Warn,
    }
}

/// A policy of `rules`, a 3% noise floor and a 1,000 µs time floor.
fn timeline_policy(rules: Vec<TimelineRule>) -> Policy {
    let mut policy = Policy {
        timeline: rules,
        ..Policy::default()
    };
    policy.noise.noise_floor_percent = 3.0;
    policy.noise.min_time_us = 1000.0;
    policy
}

fn timeline_of(comparison: &Comparison, policy: &Policy) -> Vec<Finding> {
    let mut findings = Vec::new();
    timeline_findings(comparison, policy, &mut findings);
    findings
}

fn phases_of(comparison: &Comparison, policy: &Policy) -> Vec<Finding> {
    let mut findings = Vec::new();
    phase_findings(comparison, policy, &mut findings);
    findings
}

/// Busy time 1,024 → 1,088 µs (+6.25%), with `noise` and `spread`, under a
/// relative busy-time limit of `limit` % and a noise floor of `floor` %:
/// the limit each finding names.
fn busy_limits(limit: f64, floor: f64, noise: Option<f64>, spread: Option<f64>) -> Vec<f64> {
    let comparison = with_timeline(
        vec![timeline_row("busy_time", (1024.0, 1088.0), noise, spread)],
        Vec::new(),
    );
    let mut policy = timeline_policy(vec![rule(TimelineMetric::BusyTime, Some(limit), None)]);
    policy.noise.noise_floor_percent = floor;
    timeline_of(&comparison, &policy)
        .iter()
        .map(|f| f.limit.expect("a limit"))
        .collect()
}

/// A metric fails when it grew beyond the largest of its limit, the noise
/// floor and its measured noise (the larger of run-to-run noise and
/// step-to-step spread); at exactly that limit it passes.
#[test]
fn a_timeline_metric_fails_beyond_its_limit_raised_to_the_floor_and_its_noise() {
    assert_eq!(busy_limits(6.25, 3.0, None, None), [0.0; 0]);
    assert_eq!(busy_limits(5.0, 3.0, None, None), [5.0]);
    assert_eq!(busy_limits(1.0, 6.25, None, None), [0.0; 0]);
    assert_eq!(busy_limits(1.0, 6.0, None, None), [6.0]);
    // Each noise alone, or the larger of the two, at 6.25% (the growth:
    // passes) and at 6% (fails at 6%); 1 marks the level, 0 a 1% figure.
    for (noise, spread) in [
        (Some(1), None),
        (None, Some(1)),
        (Some(1), Some(0)),
        (Some(0), Some(1)),
    ] {
        for (level, limits) in [(0.0625, &[][..]), (0.06, &[6.0][..])] {
            let at = |marks: Option<i32>| marks.map(|m| if m == 1 { level } else { 0.01 });
            assert_eq!(
                busy_limits(5.0, 3.0, at(noise), at(spread)),
                limits,
                "{noise:?} {spread:?} at {level}"
            );
        }
    }
}

/// A failing metric's finding: its rule's index and severity, the metric
/// and its figures per what the comparison's times are per, the limit it
/// crossed, its impact on the baseline's GPU time, and why the limit is
/// what it is.
#[test]
fn a_grown_metric_names_its_rule_figures_limit_and_impact() {
    let comparison = with_timeline(
        vec![timeline_row(
            "busy_time",
            (1024.0, 1088.0),
            Some(0.06),
            None,
        )],
        Vec::new(),
    );
    let policy = timeline_policy(vec![
        rule(TimelineMetric::ExposedCommTime, Some(1.0), None),
        rule(TimelineMetric::BusyTime, Some(5.0), None),
    ]);
    let findings = timeline_of(&comparison, &policy);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    let f = &findings[0];
    assert_eq!(
        (
            f.rule.as_str(),
            f.severity,
            f.kind,
            f.metric.as_str(),
            f.unit.as_str()
        ),
        (
            "timeline[1]",
            Severity::Warn,
            FindingKind::Timeline,
            "busy_time",
            "µs"
        )
    );
    assert_eq!(
        (f.baseline, f.candidate, f.delta_percent),
        (Some(1024.0), Some(1088.0), Some(6.25))
    );
    assert_eq!(f.statistics.per, Some(time_per(&comparison)));
    assert_eq!(f.limit, Some(6.0));
    assert_eq!(f.statistics.limit_unit.as_deref(), Some("%"));
    // 64 µs more of the baseline's 10,000.
    assert_eq!(f.impact_percent, Some(0.64));
    assert_eq!(f.priority, priority_of(6.25));
    assert_eq!(
        f.message,
        "GPU busy time grew 6.2% (1024 → 1088 µs), above the 6.0% limit (raised to the measured noise)"
    );
    let at_floor = with_timeline(
        vec![timeline_row(
            "busy_time",
            (1024.0, 1088.0),
            Some(0.05),
            None,
        )],
        Vec::new(),
    );
    let f = timeline_of(&at_floor, &policy).remove(0);
    assert_eq!(
        f.message,
        "GPU busy time grew 6.2% (1024 → 1088 µs), above the 5.0% limit"
    );
}

/// A relative limit judges a metric in µs from the time floor up (at
/// exactly it, judged) and with a baseline; an absolute maximum is judged
/// beyond it, in the metric's unit, idle time as a share of total time.
#[test]
fn relative_limits_need_time_and_a_baseline_and_maxima_are_in_the_metrics_unit() {
    let busy = vec![timeline_row("busy_time", (1024.0, 1088.0), None, None)];
    let relative = timeline_policy(vec![rule(TimelineMetric::BusyTime, Some(5.0), None)]);
    let mut floor = relative.clone();
    floor.noise.min_time_us = 1024.0;
    assert_eq!(
        timeline_of(&with_timeline(busy.clone(), Vec::new()), &floor).len(),
        1
    );
    floor.noise.min_time_us = 1024.5;
    assert!(timeline_of(&with_timeline(busy.clone(), Vec::new()), &floor).is_empty());
    let from_nothing = vec![timeline_row("busy_time", (0.0, 1088.0), None, None)];
    let mut no_floor = relative.clone();
    no_floor.noise.min_time_us = 0.0;
    assert!(timeline_of(&with_timeline(from_nothing, Vec::new()), &no_floor).is_empty());

    // Both limits on one rule: two findings, the maximum's in µs.
    let both = timeline_policy(vec![rule(
        TimelineMetric::BusyTime,
        Some(5.0),
        Some(1000.0),
    )]);
    let findings = timeline_of(&with_timeline(busy.clone(), Vec::new()), &both);
    assert_eq!(findings.len(), 2, "{findings:#?}");
    let max = &findings[1];
    assert_eq!(max.limit, Some(1000.0));
    assert_eq!(max.statistics.limit_unit.as_deref(), Some("µs"));
    assert_eq!(max.priority, FindingPriority::High);
    assert_eq!(
        max.message,
        "GPU busy time is 1088 µs, above the 1000 µs limit"
    );
    let at_max = timeline_policy(vec![rule(TimelineMetric::BusyTime, None, Some(1088.0))]);
    assert!(timeline_of(&with_timeline(busy, Vec::new()), &at_max).is_empty());

    // Idle time as a share of total time: 20% → 35%, no relative limit
    // (a share's growth is no time), a maximum of 30%.
    let idle = vec![
        timeline_row("idle_time", (2000.0, 3500.0), None, None),
        timeline_row("total_time", (10_000.0, 10_000.0), None, None),
    ];
    let policy = timeline_policy(vec![rule(
        TimelineMetric::IdlePercent,
        Some(1.0),
        Some(30.0),
    )]);
    let findings = timeline_of(&with_timeline(idle.clone(), Vec::new()), &policy);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    let f = &findings[0];
    assert_eq!(
        (f.baseline, f.candidate, f.unit.as_str()),
        (Some(20.0), Some(35.0), "%")
    );
    assert_eq!(f.statistics.per, None);
    assert_eq!(f.statistics.limit_unit.as_deref(), Some("%"));
    assert_eq!(
        f.message,
        "GPU idle percent is 35.00 %, above the 30.00 % limit"
    );
    // Without the total time there is no share; a rule whose metric is
    // missing leaves the next rule judged.
    let policy = timeline_policy(vec![
        rule(TimelineMetric::IdlePercent, None, Some(30.0)),
        rule(TimelineMetric::IdleTime, None, Some(3000.0)),
    ]);
    let findings = timeline_of(&with_timeline(idle[..1].to_vec(), Vec::new()), &policy);
    let metrics: Vec<&str> = findings.iter().map(|f| f.metric.as_str()).collect();
    assert_eq!(metrics, ["idle_time"]);
}

/// Each phase's GPU time per step is judged by the policy's first relative
/// rule on busy time, else computation time, else total time (rules with
/// only a maximum do not count), raised to the floor and the phase's noise.
#[test]
fn a_phase_is_judged_by_the_first_relative_busy_computation_or_total_rule() {
    let decode = timeline_row("decode GPU time per step", (1024.0, 1088.0), None, None);
    let comparison = with_timeline(Vec::new(), vec![decode.clone()]);
    let mut rules = vec![
        rule(TimelineMetric::TotalTime, Some(1.0), None),
        rule(TimelineMetric::BusyTime, None, Some(1.0)),
        rule(TimelineMetric::ComputationTime, Some(2.0), None),
        rule(TimelineMetric::BusyTime, Some(4.0), None),
    ];
    rules[3].severity = Severity::Fail;
    let judged_by = |rules: &[TimelineRule]| -> Vec<(String, f64, Severity)> {
        phases_of(&comparison, &timeline_policy(rules.to_vec()))
            .into_iter()
            .map(|f| (f.rule, f.limit.expect("a limit"), f.severity))
            .collect()
    };
    assert_eq!(
        judged_by(&rules),
        [("timeline[3]".to_string(), 4.0, Severity::Fail)]
    );
    // Its floor is the noise floor: 3%.
    assert_eq!(
        judged_by(&rules[..3]),
        [("timeline[2]".to_string(), 3.0, Severity::Warn)]
    );
    assert_eq!(
        judged_by(&rules[..2]),
        [("timeline[0]".to_string(), 3.0, Severity::Warn)]
    );
    assert_eq!(judged_by(&rules[1..2]), []);

    let f = phases_of(&comparison, &timeline_policy(rules.clone())).remove(0);
    assert_eq!(
        (f.metric.as_str(), f.unit.as_str(), f.kind),
        ("decode GPU time per step", "µs", FindingKind::Timeline)
    );
    assert_eq!(
        (f.baseline, f.candidate, f.delta_percent),
        (Some(1024.0), Some(1088.0), Some(6.25))
    );
    assert_eq!(f.priority, priority_of(6.25));
    assert_eq!(f.statistics.limit_unit.as_deref(), Some("%"));
    assert_eq!(
        f.message,
        "decode GPU time per step grew 6.2% (1024 → 1088 µs), above the 4.0% limit"
    );

    // Raised to the measured noise, the larger of its two; at exactly the
    // limit, or below the time floor (at it, judged), or without a Δ: no finding.
    let phase = |noise: Option<f64>, spread: Option<f64>, min_time_us: f64| {
        let mut row = decode.clone();
        row.noise = noise;
        row.step_spread = spread;
        let mut policy = timeline_policy(rules.clone());
        policy.noise.min_time_us = min_time_us;
        phases_of(&with_timeline(Vec::new(), vec![row]), &policy)
    };
    for (noise, spread) in [
        (Some(0.06), None),
        (None, Some(0.06)),
        (Some(0.06), Some(0.01)),
        (Some(0.01), Some(0.06)),
    ] {
        let found = phase(noise, spread, 1000.0);
        assert_eq!(found.len(), 1, "{noise:?} {spread:?}");
        assert_eq!(found[0].limit, Some(6.0));
        assert!(
            found[0]
                .message
                .ends_with("above the 6.0% limit (raised to the measured noise)")
        );
        assert!(phase(noise.map(|_| 0.0625), spread.map(|_| 0.0625), 1000.0).is_empty());
    }
    assert_eq!(phase(None, None, 1024.0).len(), 1);
    assert!(phase(None, None, 1024.5).is_empty());
    let mut no_delta = decode;
    no_delta.delta_percent = None;
    assert!(
        phases_of(
            &with_timeline(Vec::new(), vec![no_delta]),
            &timeline_policy(rules)
        )
        .is_empty()
    );
}
