//! The rank-set rules on small hand-made rank sets.

use super::*;
use crate::analysis::ranks::collective::Collective;
use crate::analysis::timeline::Breakdown;
use crate::gate::snapshot::{CommKernelSnapshot, RankSnapshot};

/// A snapshot of `ranks` ranks running `calls` all-reduces 1000 µs apart,
/// each `duration` µs once all are in; `late` arrives `delay` µs late.
fn set(ranks: u32, calls: u32, duration: f64, late: u32, delay: f64, exposed: f64) -> Snapshot {
    let mut snapshot = crate::gate::snapshot::tests::tiny_snapshot();
    snapshot.timeline = Breakdown {
        busy_time: 10_000.0,
        ..Breakdown::default()
    };
    snapshot.ranks = (0..ranks)
        .map(|rank| RankSnapshot {
            rank: Some(rank),
            source: format!("rank{rank}.json"),
            exposed_comm_us: exposed,
            total_comm_us: exposed,
            kernel_families: Vec::new(),
            kernels: (0..calls)
                .map(|call| {
                    let start = 1000.0 * f64::from(call);
                    let (start_us, duration_us) = if rank == late {
                        (start + delay, duration)
                    } else {
                        (start, duration + delay)
                    };
                    CommKernelSnapshot {
                        start_us,
                        duration_us,
                        collective: Collective::AllReduce,
                        stream: Some(20),
                        process_group: Some("0".to_string()),
                        seq: None,
                        bytes: Some(1 << 20),
                        dtype: None,
                        group_size: Some(ranks),
                    }
                })
                .collect(),
        })
        .collect();
    snapshot
}

#[test]
fn the_same_set_has_no_findings() {
    let baseline = set(4, 20, 100.0, 1, 30.0, 500.0);
    let findings = judge("job", &[&baseline], &baseline, &Policy::default());
    assert!(findings.is_empty(), "{findings:?}");
}

#[test]
fn a_slower_collective_is_a_regression_with_its_bandwidth() {
    let baseline = set(4, 20, 100.0, 1, 30.0, 500.0);
    let candidate = set(4, 20, 150.0, 1, 30.0, 500.0);
    let findings = judge("job", &[&baseline], &candidate, &Policy::default());
    assert_eq!(findings.len(), 1, "{findings:?}");
    let finding = &findings[0];
    assert_eq!(finding.rule, COLLECTIVES_RULE);
    assert_eq!(finding.kind, FindingKind::Collective);
    assert_eq!(finding.severity, Severity::Fail);
    assert_eq!(finding.op.as_ref().unwrap().name, "all_reduce (pg 0)");
    assert_eq!(finding.delta_percent, Some(50.0));
    // 20 calls × 50 µs over 10 ms of busy time.
    assert_eq!(finding.impact_percent, Some(10.0));
    assert!(
        finding.message.contains("algbw 10.5 → 7.0 GB/s"),
        "{}",
        finding.message
    );
    assert_eq!(
        finding.statistics.interval_kind,
        Some(IntervalKind::Confidence)
    );
}

#[test]
fn a_slowdown_below_the_impact_minimum_is_no_finding() {
    let baseline = set(4, 2, 10.0, 1, 0.0, 0.0);
    let candidate = set(4, 2, 13.0, 1, 0.0, 0.0);
    assert!(judge("job", &[&baseline], &candidate, &Policy::default()).is_empty());
}

#[test]
fn a_new_straggler_names_the_rank_and_its_wait() {
    let baseline = set(4, 10, 100.0, 1, 40.0, 500.0);
    let candidate = set(4, 10, 100.0, 3, 40.0, 500.0);
    let findings = judge("job", &[&baseline], &candidate, &Policy::default());
    assert_eq!(findings.len(), 1, "{findings:?}");
    let finding = &findings[0];
    assert_eq!(finding.rule, STRAGGLER_RULE);
    assert_eq!(finding.kind, FindingKind::Straggler);
    assert_eq!(
        finding.op.as_ref().unwrap().name,
        "rank 3 arrives last in 10 of 10 all_reduce (pg 0) calls"
    );
    assert!(
        finding.message.starts_with(
            "rank 3 is a new straggler: last in 10 of 10 all_reduce (pg 0) calls, the other ranks \
             wait 120.0 µs per call for it (300.0 µs per rank in all); every rank's wait for the \
             last arrival, per rank: 300.0 µs → 300.0 µs (+0.00% of GPU time)"
        ),
        "{}",
        finding.message
    );
    // It took over rank 1's wait: nothing added.
    assert_eq!(finding.delta_percent, Some(0.0));
    assert_eq!(finding.impact_percent, Some(0.0));
    // No baseline straggler: still new.
    let even = set(4, 10, 100.0, 1, 0.0, 500.0);
    let findings = judge("job", &[&even], &candidate, &Policy::default());
    assert!(findings[0].message.ends_with("the baseline had none"));
    // Its wait is all added: 10 calls × 3 ranks × 40 µs over 4 ranks, of
    // 10 ms busy; no Δ from no wait.
    assert_eq!(findings[0].candidate, Some(300.0));
    assert_eq!(findings[0].delta_percent, None);
    assert_eq!(findings[0].impact_percent, Some(3.0));
}

#[test]
fn exposed_communication_growth_beyond_the_limit_is_a_finding() {
    let baseline = set(4, 10, 100.0, 1, 0.0, 1000.0);
    let mut candidate = set(4, 10, 100.0, 1, 0.0, 1000.0);
    candidate.ranks[2].exposed_comm_us = 2000.0;
    let findings = judge("job", &[&baseline], &candidate, &Policy::default());
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0].rule, EXPOSED_RULE);
    assert_eq!(findings[0].kind, FindingKind::Timeline);
    assert_eq!(findings[0].delta_percent, Some(100.0));
    assert!(
        findings[0]
            .message
            .contains("largest over ranks 1.00 ms → 2.00 ms (+100.0%), mean 1.00 ms → 1.25 ms"),
        "{}",
        findings[0].message
    );
}

#[test]
fn a_side_without_ranks_is_not_judged() {
    let candidate = set(4, 10, 150.0, 1, 0.0, 500.0);
    let single = crate::gate::snapshot::tests::tiny_snapshot();
    assert!(judge("job", &[&single], &candidate, &Policy::default()).is_empty());
}
