//! The end-to-end guard (`end_to_end.rs`) on hand-made timelines: where
//! the step's growth starts to fail (the limit raised to the floor and the
//! measured noise, the time floor, the steps' bounds), the idle time the
//! host's noise explains, and the words saying where the time went.

use super::timeline::{timeline_row, with_timeline};
use super::*;
use crate::analysis::profile::{GraphPlace, GraphRole};
use crate::gate::compare::ShapeChange;
use crate::gate::judge::end_to_end::end_to_end_finding;
use crate::gate::policy::TimelineMetric;
use crate::gate::stats::RatioInterval;

/// A 5% end-to-end limit, a 3% noise floor, a 1,000 µs time floor, no
/// idle allowance.
fn guard_policy() -> Policy {
    let mut policy = Policy::default();
    policy.end_to_end.max_regression_percent = Some(5.0);
    policy.end_to_end.idle_noise_percent = None;
    policy.noise.noise_floor_percent = 3.0;
    policy.noise.min_time_us = 1000.0;
    policy
}

/// A step of 1,024 µs grown to 1,088 (+6.25%) with `noise`, idle 32 → 96.
fn longer_step(noise: Option<f64>) -> Comparison {
    with_timeline(
        vec![
            timeline_row("total_time", (1024.0, 1088.0), noise, None),
            timeline_row("idle_time", (32.0, 96.0), None, None),
        ],
        Vec::new(),
    )
}

/// The limit the guard's finding names, if it fails.
fn guard_limit(comparison: &Comparison, policy: &Policy) -> Option<f64> {
    end_to_end_finding(comparison, policy).map(|f| f.limit.expect("a limit"))
}

/// The step fails beyond the largest of the limit, the noise floor and
/// its measured noise (at exactly that, it passes), from the time floor up
/// (at exactly it, judged).
#[test]
fn the_step_fails_beyond_its_limit_raised_to_the_floor_and_the_noise() {
    let step = longer_step(None);
    let with = |change: &dyn Fn(&mut Policy)| {
        let mut policy = guard_policy();
        change(&mut policy);
        guard_limit(&step, &policy)
    };
    assert_eq!(with(&|_| ()), Some(5.0));
    assert_eq!(
        with(&|p| p.end_to_end.max_regression_percent = Some(6.25)),
        None
    );
    assert_eq!(with(&|p| p.noise.noise_floor_percent = 6.0), Some(6.0));
    assert_eq!(with(&|p| p.noise.noise_floor_percent = 6.25), None);
    assert_eq!(with(&|p| p.noise.min_time_us = 1024.0), Some(5.0));
    assert_eq!(with(&|p| p.noise.min_time_us = 1024.5), None);
    assert_eq!(with(&|p| p.end_to_end.max_regression_percent = None), None);
    assert_eq!(
        guard_limit(&longer_step(Some(0.0625)), &guard_policy()),
        None
    );
    let noisy = end_to_end_finding(&longer_step(Some(0.06)), &guard_policy()).expect("a finding");
    assert_eq!(noisy.limit, Some(6.0));
    assert!(
        noisy
            .message
            .contains("above the 6.0% limit (raised to the measured noise): +64.00 µs"),
        "{}",
        noisy.message
    );
    let plain = end_to_end_finding(&step, &guard_policy()).expect("a finding");
    assert!(
        plain.message.contains("above the 5.0% limit: +64.00 µs"),
        "{}",
        plain.message
    );

    // A step of no time is no step, whatever the floor.
    let mut no_floor = guard_policy();
    no_floor.noise.min_time_us = 0.0;
    let empty = with_timeline(
        vec![timeline_row("total_time", (0.0, 1088.0), None, None)],
        Vec::new(),
    );
    assert_eq!(guard_limit(&empty, &no_floor), None);
    // Across platforms the hardware changes the step: not judged.
    let mut across = step.clone();
    across.cross_platform = true;
    assert_eq!(guard_limit(&across, &guard_policy()), None);
}

/// The guard judges busy time when asked, else total time; without the
/// row, nothing; with steps on both sides, only when the steps' bounds lie
/// wholly above no change.
#[test]
fn the_guard_reads_its_metrics_row_and_needs_the_steps_to_agree() {
    let busy = with_timeline(
        vec![timeline_row("busy_time", (1024.0, 1088.0), None, None)],
        Vec::new(),
    );
    let mut policy = guard_policy();
    assert_eq!(guard_limit(&busy, &policy), None);
    policy.end_to_end.metric = TimelineMetric::BusyTime;
    let finding = end_to_end_finding(&busy, &policy).expect("a finding");
    assert_eq!(finding.metric, "busy_time");
    policy.end_to_end.metric = TimelineMetric::ComputationTime;
    assert_eq!(
        end_to_end_finding(&longer_step(None), &policy).map(|f| f.metric),
        Some("total_time".to_string())
    );

    let mut step = longer_step(None);
    let mut estimate = step.ops[0].estimate.clone();
    estimate.interval = None;
    for (low, judged) in [(1.01, true), (1.0, false), (0.98, false)] {
        estimate.range = Some(RatioInterval { low, high: 1.1 });
        step.timeline[0].estimate = Some(estimate.clone());
        assert_eq!(
            guard_limit(&step, &guard_policy()).is_some(),
            judged,
            "{low}"
        );
    }
    // No bounds (one step a side): the medians alone.
    estimate.range = None;
    step.timeline[0].estimate = Some(estimate);
    assert!(guard_limit(&step, &guard_policy()).is_some());
}

/// Idle time the candidate added within `idle_noise_percent` of the
/// baseline's idle time is left out of the judged growth: the step fails
/// when what is left still exceeds the limit, and is information when it
/// does not; busy time holds no idle time to leave out.
#[test]
fn idle_time_the_hosts_noise_explains_is_left_out_of_the_judged_growth() {
    let step = longer_step(None);
    let mut policy = guard_policy();
    policy.noise.noise_floor_percent = 3.0;
    policy.end_to_end.max_regression_percent = Some(3.0);
    // 100% of 32 µs: 32 of the 64 added are the host's; 1,056 against
    // 1,024 is +3.125%, beyond 3%.
    policy.end_to_end.idle_noise_percent = Some(100.0);
    let f = end_to_end_finding(&step, &policy).expect("a finding");
    assert_eq!(f.severity, policy.end_to_end.severity);
    assert!(
        f.message.ends_with(
            "; 3.1% without the 32.00 µs of idle time the host's run-to-run noise explains"
        ),
        "{}",
        f.message
    );
    // The figures are still the step's own.
    assert_eq!(f.delta_percent, Some(6.25));
    // What is left at exactly the limit is not judged.
    let mut at_limit = policy.clone();
    at_limit.end_to_end.max_regression_percent = Some(3.125);
    let f = end_to_end_finding(&step, &at_limit).expect("a finding");
    assert_eq!(f.severity, Severity::Info, "{}", f.message);
    // 200%: all 64 µs are the host's, nothing is left.
    policy.end_to_end.idle_noise_percent = Some(200.0);
    let f = end_to_end_finding(&step, &policy).expect("a finding");
    assert_eq!(f.severity, Severity::Info);
    assert!(
        f.message.ends_with("; not judged: 64.00 µs of it is idle time within the host's run-to-run noise (up to +200% of the baseline's idle time, end_to_end.idle_noise_percent), the GPU waiting for a host whose pace differs between runs"),
        "{}",
        f.message
    );
    // 50% of 32 µs: 16 µs left out, 1,072 against 1,024 (+4.7%).
    policy.end_to_end.idle_noise_percent = Some(50.0);
    let f = end_to_end_finding(&step, &policy).expect("a finding");
    assert!(
        f.message.contains("; 4.7% without the 16.00 µs"),
        "{}",
        f.message
    );
    // Idle time that fell leaves nothing out, and no words on it.
    let less_idle = with_timeline(
        vec![
            timeline_row("total_time", (1024.0, 1088.0), None, None),
            timeline_row("idle_time", (96.0, 32.0), None, None),
        ],
        Vec::new(),
    );
    let f = end_to_end_finding(&less_idle, &policy).expect("a finding");
    assert_eq!(f.severity, policy.end_to_end.severity);
    assert!(!f.message.contains("without the"), "{}", f.message);
    // Busy time: no idle time to leave out.
    let busy = with_timeline(
        vec![
            timeline_row("busy_time", (1024.0, 1088.0), None, None),
            timeline_row("idle_time", (32.0, 96.0), None, None),
        ],
        Vec::new(),
    );
    policy.end_to_end.metric = TimelineMetric::BusyTime;
    policy.end_to_end.idle_noise_percent = Some(200.0);
    let f = end_to_end_finding(&busy, &policy).expect("a finding");
    assert_eq!(f.severity, policy.end_to_end.severity);
    assert!(!f.message.contains("idle"), "{}", f.message);
}

/// `side` renamed `name`, its time `us`, in a whole graph when `whole`.
pub(super) fn named(side: &OpSide, name: &str, us: f64, whole: bool) -> OpSide {
    let mut side = side.clone();
    side.key.name = name.to_string();
    side.time_us = us;
    side.graph = whole.then(|| GraphPlace {
        graph: "graph 0".to_string(),
        role: GraphRole::Graph,
        launch: "cudaGraphLaunch #0".to_string(),
        variant: None,
    });
    side
}

/// The finding says where the added time went, largest part first with
/// its share (parts that did not grow left out, idle time only for total
/// time), and the three op names that added most (matched rows, shapes
/// that changed, new and missing rows summed by name; whole graphs left
/// out; ties by name).
#[test]
fn the_finding_says_where_the_added_time_went_and_who_added_most() {
    let parts = |metric: &str, computation: f64, idle: f64| {
        with_timeline(
            vec![
                timeline_row(metric, (1024.0, 1088.0), None, None),
                timeline_row("computation_time", (600.0, 600.0 + computation), None, None),
                timeline_row("exposed_comm_time", (100.0, 112.0), None, None),
                timeline_row("exposed_memcpy_time", (50.0, 50.0), None, None),
                timeline_row("idle_time", (32.0, 32.0 + idle), None, None),
            ],
            Vec::new(),
        )
    };
    let mut comparison = parts("total_time", 48.0, 4.0);
    let template = comparison.ops[0].clone();
    let row = |name: &str, impact_us: f64, whole: bool| {
        let mut row = template.clone();
        row.candidate = named(&row.candidate, name, 0.0, whole);
        row.impact_us = impact_us;
        row
    };
    comparison.ops = vec![
        row("aten::mm", 30.0, false),
        row("aten::mm", 10.0, false),
        row("aten::relu", 20.0, false),
        row("aten::gelu", -5.0, false),
        row("graph", 100.0, true),
    ];
    let changed = row("aten::bmm", 15.0, false);
    comparison.shape_changed = vec![ShapeChange {
        baseline: changed.baseline.clone(),
        candidate: changed.candidate.clone(),
        impact_us: 15.0,
        impact_percent: 0.0,
        kernel_diff: None,
    }];
    let side = &template.candidate;
    comparison.new_ops = vec![
        named(side, "aten::new", 25.0, false),
        named(side, "aten::add", 20.0, false),
        named(side, "aten::abs", 20.0, false),
        named(side, "new graph", 1000.0, true),
    ];
    // A missing row takes its time off its name; a missing whole graph
    // holds its rows' time and is left out.
    comparison.missing_ops = vec![
        named(side, "aten::add", 15.0, false),
        named(side, "aten::new", 1000.0, true),
        named(side, "aten::old", 10.0, false),
    ];
    let f = end_to_end_finding(&comparison, &guard_policy()).expect("a finding");
    assert!(
        f.message.ends_with(": +64.00 µs, of which computation +48.00 µs (75%), exposed communication +12.00 µs (19%), idle +4.00 µs (6%); most added by aten::mm +40.00 µs, aten::new +25.00 µs, aten::abs +20.00 µs"),
        "{}",
        f.message
    );

    // Busy time holds no idle time; an op that added nothing is no name.
    let mut busy = parts("busy_time", 48.0, 4.0);
    busy.ops.truncate(1);
    busy.ops[0].impact_us = 0.0;
    let mut policy = guard_policy();
    policy.end_to_end.metric = TimelineMetric::BusyTime;
    let f = end_to_end_finding(&busy, &policy).expect("a finding");
    assert!(
        f.message.ends_with(
            ", of which computation +48.00 µs (80%), exposed communication +12.00 µs (20%)"
        ),
        "{}",
        f.message
    );
    let mut flat = parts("total_time", 0.0, 0.0);
    flat.timeline.retain(|t| t.metric != "exposed_comm_time");
    flat.ops.clear();
    let f = end_to_end_finding(&flat, &guard_policy()).expect("a finding");
    assert!(
        f.message
            .ends_with(", of which no part of the step grew on its own"),
        "{}",
        f.message
    );
}
