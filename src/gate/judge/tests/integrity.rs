//! The integrity rules (`integrity.rs`) on hand-made coverages and rows:
//! the judged share at its exact limit, each cause in its words (work
//! outside ops, graph launches without work beside the side's time against
//! the other's, lost records), and the different-workloads rule's matched
//! share at its limit, counted without whole graphs and with changed shapes
//! on their own sides.

use super::end_to_end::named;
use super::*;
use crate::analysis::profile::Coverage;
use crate::gate::compare::ShapeChange;
use crate::gate::judge::integrity::integrity_findings;
use crate::gate::judge::integrity::{DIFFERENT_WORKLOADS_RULE, different_workloads};
use crate::gate::verdict::FindingPriority;

/// A coverage of `busy_us` GPU time, `in_rows_us` of it in rows and
/// `outside_us` launched outside any op; nothing else missing.
fn coverage(busy_us: f64, in_rows_us: f64, outside_us: f64) -> Coverage {
    Coverage {
        busy_us,
        in_rows_us,
        outside_rows_us: outside_us,
        ..Coverage::default()
    }
}

/// The example compared with itself, with these coverages and GPU times
/// (baseline, candidate).
fn covered(baseline: Option<Coverage>, candidate: Coverage, totals: (f64, f64)) -> Comparison {
    let mut comparison = compared_with_itself(&example_snapshot());
    comparison.baseline_coverage = baseline;
    comparison.candidate_coverage = candidate;
    (comparison.baseline_total_us, comparison.candidate_total_us) = totals;
    comparison
}

/// The integrity findings of `comparison` under `policy`.
fn integrity_of(comparison: &Comparison, policy: &Policy) -> Vec<Finding> {
    let mut findings = Vec::new();
    integrity_findings(comparison, policy, &mut findings);
    findings
}

/// The one integrity finding's causes, after the workload's name.
fn causes_of(comparison: &Comparison) -> String {
    let findings = integrity_of(comparison, &Policy::default());
    assert_eq!(findings.len(), 1, "{findings:#?}");
    let prefix = format!("`{}` cannot be judged: ", comparison.workload);
    findings[0]
        .message
        .strip_prefix(&prefix)
        .unwrap_or_else(|| panic!("{}", findings[0].message))
        .to_string()
}

/// Rows holding exactly the policy's share (80%) of a side's GPU time are
/// enough; 79.9% is one finding with both sides' shares, the limit and the
/// policy's severity, naming the time launched outside any op. A side
/// without GPU work doubts nothing.
#[test]
fn rows_below_the_judged_share_make_one_finding_with_both_shares() {
    let sound = coverage(1000.0, 900.0, 100.0);
    let policy = Policy::default();
    let at_limit = covered(
        Some(sound.clone()),
        coverage(1000.0, 800.0, 200.0),
        (1e3, 1e3),
    );
    assert!(integrity_of(&at_limit, &policy).is_empty());
    let idle = covered(Some(coverage(0.0, 0.0, 0.0)), sound.clone(), (1e3, 1e3));
    assert!(integrity_of(&idle, &policy).is_empty());

    let below = covered(
        Some(sound.clone()),
        coverage(1000.0, 799.0, 125.0),
        (1e3, 1e3),
    );
    let findings = integrity_of(&below, &policy);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    let f = &findings[0];
    assert_eq!(
        (f.rule.as_str(), f.kind, f.severity, f.priority),
        (
            "integrity",
            FindingKind::Integrity,
            Severity::Fail,
            FindingPriority::Critical
        )
    );
    assert_eq!(
        (f.metric.as_str(), f.unit.as_str()),
        ("share of GPU time in judged rows", "%")
    );
    assert_eq!(
        (f.baseline, f.candidate, f.limit),
        (Some(90.0), Some(79.9), Some(80.0))
    );
    assert_eq!(
        causes_of(&below),
        "only 79.9% of the candidate's GPU time is in rows the gate can judge (at least 80% \
         needed): 12.5% was launched outside any op"
    );

    let mut lenient = Policy::default();
    lenient.integrity.min_judged_share = 0.75;
    assert!(integrity_of(&below, &lenient).is_empty());
    lenient.integrity.min_judged_share = 0.85;
    lenient.integrity.on_inconclusive = Severity::Warn;
    let warned = integrity_of(&at_limit, &lenient);
    assert_eq!(warned.len(), 1, "{warned:#?}");
    assert_eq!(
        (warned[0].severity, warned[0].limit),
        (Severity::Warn, Some(85.0))
    );

    let no_baseline = covered(None, coverage(1000.0, 500.0, 500.0), (1e3, 1e3));
    let findings = integrity_of(&no_baseline, &policy);
    assert_eq!(
        (findings[0].baseline, findings[0].candidate),
        (None, Some(50.0))
    );
}

/// Each side's causes in its words, the baseline's first: graph launches
/// that recorded no work beside the side's share in rows and its GPU time
/// as a share of the other side's (left out when the other side has none),
/// then the first record the profiler says it lost.
#[test]
fn each_cause_is_named_on_its_side() {
    let sound = coverage(1000.0, 900.0, 0.0);
    let graphs = |launches: u64| Coverage {
        graph_launches_without_work: launches,
        ..sound.clone()
    };
    assert_eq!(
        causes_of(&covered(Some(sound.clone()), graphs(1), (1000.0, 400.0))),
        "1 graph launch(es) of the candidate recorded no GPU work: the trace lacks the kernels \
         the graphs replayed (its rows hold 90.0% of its recorded GPU time, which is 40.0% of \
         the other side's)"
    );
    assert_eq!(
        causes_of(&covered(Some(graphs(2)), sound.clone(), (1000.0, 400.0))),
        "2 graph launch(es) of the baseline recorded no GPU work: the trace lacks the kernels \
         the graphs replayed (its rows hold 90.0% of its recorded GPU time, which is 250.0% of \
         the other side's)"
    );
    assert_eq!(
        causes_of(&covered(Some(sound.clone()), graphs(3), (0.0, 400.0))),
        "3 graph launch(es) of the candidate recorded no GPU work: the trace lacks the kernels \
         the graphs replayed"
    );
    let lossy = Coverage {
        dropped: vec!["12 events lost".to_string(), "ring full".to_string()],
        ..sound.clone()
    };
    assert_eq!(
        causes_of(&covered(
            Some(coverage(1000.0, 700.0, 300.0)),
            lossy,
            (1e3, 1e3)
        )),
        "only 70.0% of the baseline's GPU time is in rows the gate can judge (at least 80% \
         needed): 30.0% was launched outside any op; the candidate's profiler reports lost \
         records (12 events lost)"
    );
}

/// Two matched rows (30 and 10 µs a side); the baseline alone has an op
/// of 60 µs and a whole graph of 1,000 (left out: its time is its rows'),
/// the candidate alone two ops of 5 µs; with sound coverages.
fn partly_matched() -> Comparison {
    let mut comparison = covered(
        Some(coverage(1000.0, 1000.0, 0.0)),
        coverage(1000.0, 1000.0, 0.0),
        (1e3, 1e3),
    );
    comparison.ops.truncate(2);
    for (op, us) in comparison.ops.iter_mut().zip([30.0, 10.0]) {
        op.baseline.time_us = us;
        op.candidate.time_us = us;
    }
    let side = comparison.ops[0].baseline.clone();
    comparison.missing_ops = vec![
        named(&side, "gone::op", 60.0, false),
        named(&side, "gone::graph", 1000.0, true),
    ];
    comparison.new_ops = vec![
        named(&side, "new::a", 5.0, false),
        named(&side, "new::b", 5.0, false),
    ];
    comparison.shape_changed.clear();
    comparison
}

/// The shares of time in matched rows (40% of the baseline's, 80% of the
/// candidate's) against the policy's minimum share: exactly at it the
/// sides are one workload, below it one failing finding says how many ops
/// matched of the larger side's. A shape that changed counts on each side
/// with that side's time.
#[test]
fn too_little_time_in_matched_rows_is_a_different_workload() {
    let comparison = partly_matched();
    let mut policy = Policy::default();
    policy.integrity.min_matched_share = 0.4;
    assert_eq!(different_workloads(&comparison, &policy), None);
    policy.integrity.min_matched_share = 0.45;
    let f = different_workloads(&comparison, &policy).expect("different workloads");
    assert_eq!(
        (f.rule.as_str(), f.kind, f.severity, f.priority),
        (
            DIFFERENT_WORKLOADS_RULE,
            FindingKind::NothingToCompare,
            Severity::Fail,
            FindingPriority::Critical
        )
    );
    assert_eq!(
        (f.baseline, f.candidate, f.limit, f.unit.as_str()),
        (Some(40.0), Some(80.0), Some(45.0), "%")
    );
    assert_eq!(f.metric, "share of the time in rows that both sides have");
    assert_eq!(
        f.message,
        format!(
            "`{}`: these look like different workloads (2 of 4 ops matched): the ops both \
             sides ran hold 40.0% of the baseline's and 80.0% of the candidate's time in ops, \
             below the 45% `integrity.min_matched_share` asks; nothing else is judged. Compare \
             runs of one workload, or lower that share if the work really changed this much",
            comparison.workload
        )
    );

    let mut changed = partly_matched();
    let side = &changed.ops[0].baseline;
    changed.shape_changed = vec![ShapeChange {
        baseline: named(side, "changed::op", 20.0, false),
        candidate: named(side, "changed::op", 60.0, false),
        impact_us: 40.0,
        impact_percent: 0.0,
        kernel_diff: None,
    }];
    let f = different_workloads(&changed, &policy).expect("different workloads");
    assert!(
        f.message.contains(
            "(2 of 5 ops matched): the ops both sides ran hold 33.3% of the baseline's and \
             36.4% of the candidate's"
        ),
        "{}",
        f.message
    );
}

/// An under-recorded side (on either side: graph launches without work,
/// rows below the judged share) explains rows that do not match: that is
/// the integrity finding's to say. A side with no time in
/// rows has no share, so no verdict on it.
#[test]
fn an_under_recorded_or_empty_side_is_not_a_different_workload() {
    let mut policy = Policy::default();
    policy.integrity.min_matched_share = 0.45;
    let doubted = Coverage {
        graph_launches_without_work: 1,
        ..coverage(1000.0, 1000.0, 0.0)
    };
    let mut candidate_doubted = partly_matched();
    candidate_doubted.candidate_coverage = doubted.clone();
    assert_eq!(different_workloads(&candidate_doubted, &policy), None);
    let mut baseline_doubted = partly_matched();
    baseline_doubted.baseline_coverage = Some(doubted);
    assert_eq!(different_workloads(&baseline_doubted, &policy), None);
    // Rows holding less than the judged share (80%) doubt the side too.
    let mut outside_ops = partly_matched();
    outside_ops.candidate_coverage = coverage(1000.0, 799.0, 201.0);
    assert_eq!(different_workloads(&outside_ops, &policy), None);
    outside_ops.candidate_coverage = coverage(1000.0, 800.0, 200.0);
    assert!(different_workloads(&outside_ops, &policy).is_some());
    let mut no_baseline_run = partly_matched();
    no_baseline_run.baseline_coverage = None;
    assert!(different_workloads(&no_baseline_run, &policy).is_some());

    // No baseline time in rows, and a candidate with 40 of 140 µs matched.
    let mut empty = partly_matched();
    for op in &mut empty.ops {
        op.baseline.time_us = 0.0;
    }
    empty.missing_ops.clear();
    empty.new_ops[0].time_us = 100.0;
    assert_eq!(different_workloads(&empty, &policy), None);
    empty.ops[0].baseline.time_us = 1.0;
    assert!(different_workloads(&empty, &policy).is_some());
}
