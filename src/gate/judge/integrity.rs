//! Integrity: whether the rows the gate judges can support a verdict. Each
//! side's rows must hold the policy's share of its GPU busy time, and
//! neither trace may say it is under-recorded (graph launches without GPU
//! work, dropped profiler records); otherwise one finding names the shares
//! and the causes — never a silent pass. When too little of either side's
//! work matches the other's, the two look like different workloads
//! ([`different_workloads`]).

use crate::analysis::profile::Coverage;
use crate::gate::compare::Comparison;
use crate::gate::policy::Policy;
use crate::gate::verdict::{Finding, FindingKind, FindingPriority, Severity};

/// The causes on one side, in words; empty when the side is sound.
/// `versus_other` is this side's GPU busy time as a share of the other
/// side's, %, which shows how much an under-recorded trace lacks.
fn causes(
    side: &str,
    coverage: &Coverage,
    min_percent: f64,
    versus_other: Option<f64>,
) -> Vec<String> {
    let mut causes = Vec::new();
    // 100% without GPU work: a share below the minimum has busy time.
    let share = coverage.in_rows_percent();
    if share < min_percent {
        causes.push(format!(
            "only {share:.1}% of the {side}'s GPU time is in rows the gate can judge (at least \
             {min_percent:.0}% needed): {:.1}% was launched outside any op",
            coverage.outside_rows_us / coverage.busy_us * 100.0
        ));
    }
    if coverage.graph_launches_without_work > 0 {
        causes.push(format!(
            "{} graph launch(es) of the {side} recorded no GPU work: the trace lacks the \
             kernels the graphs replayed{}",
            coverage.graph_launches_without_work,
            versus_other.map_or(String::new(), |share| format!(
                " (its rows hold {:.1}% of its recorded GPU time, which is {share:.1}% of the \
                 other side's)",
                coverage.in_rows_percent()
            ))
        ));
    }
    if let Some(first) = coverage.dropped.first() {
        causes.push(format!(
            "the {side}'s profiler reports lost records ({first})"
        ));
    }
    causes
}

/// The integrity finding of a workload, when a side cannot support a verdict.
pub(super) fn integrity_findings(
    comparison: &Comparison,
    policy: &Policy,
    findings: &mut Vec<Finding>,
) {
    let min_percent = policy.integrity.min_judged_share * 100.0;
    let candidate = &comparison.candidate_coverage;
    let mut all = Vec::new();
    let (b, c) = (comparison.baseline_total_us, comparison.candidate_total_us);
    let ratio = |part: f64, whole: f64| (whole > 0.0).then(|| part / whole * 100.0);
    if let Some(baseline) = &comparison.baseline_coverage {
        all.extend(causes("baseline", baseline, min_percent, ratio(b, c)));
    }
    all.extend(causes("candidate", candidate, min_percent, ratio(c, b)));
    if all.is_empty() {
        return;
    }
    let baseline_share = comparison
        .baseline_coverage
        .as_ref()
        .map(Coverage::in_rows_percent);
    let workload = &comparison.workload;
    findings.push(Finding {
        metric: "share of GPU time in judged rows".into(),
        baseline: baseline_share,
        candidate: Some(candidate.in_rows_percent()),
        unit: "%".into(),
        limit: Some(min_percent),
        // First among its severity after the slowdowns: every other finding
        // rests on the rows this one doubts.
        priority: FindingPriority::Critical,
        ..Finding::new(
            "integrity",
            policy.integrity.on_inconclusive,
            FindingKind::Integrity,
            workload.clone(),
            format!("`{workload}` cannot be judged: {}", all.join("; ")),
        )
    });
}

/// The rule of the different-workloads finding.
pub const DIFFERENT_WORKLOADS_RULE: &str = "integrity.min_matched_share";

/// When the rows both sides have (matched by name and arguments) hold less
/// than the policy's `integrity.min_matched_share` of either side's time in
/// rows, the two sides look like different workloads: one finding says so
/// and nothing else of the workload is judged (a model against another
/// model is not a regression of either; the timeline's deltas would be
/// meaningless five-digit percentages). The verdict is then
/// [`Outcome::DifferentWorkloads`] (exit 2, like any input error).
///
/// [`Outcome::DifferentWorkloads`]: crate::gate::verdict::Outcome::DifferentWorkloads
pub(super) fn different_workloads(comparison: &Comparison, policy: &Policy) -> Option<Finding> {
    let min = policy.integrity.min_matched_share;
    // An under-recorded side (graph replays without their kernels, work
    // outside ops) explains rows that do not match: that is the integrity
    // finding's to say.
    let min_percent = policy.integrity.min_judged_share * 100.0;
    let doubted = |coverage: &Coverage| !causes("", coverage, min_percent, None).is_empty();
    if comparison.baseline_coverage.as_ref().is_some_and(doubted)
        || doubted(&comparison.candidate_coverage)
    {
        return None;
    }
    let rows = |sides: &mut dyn Iterator<Item = &crate::gate::compare::OpSide>| {
        sides
            .filter(|side| !side.is_whole_graph())
            .fold((0usize, 0.0f64), |(n, us), side| (n + 1, us + side.time_us))
    };
    let (matched, matched_baseline_us) = rows(&mut comparison.ops.iter().map(|op| &op.baseline));
    let matched_candidate_us = rows(&mut comparison.ops.iter().map(|op| &op.candidate)).1;
    let shape_changed = |baseline: bool| {
        comparison.shape_changed.iter().map(move |change| {
            if baseline {
                &change.baseline
            } else {
                &change.candidate
            }
        })
    };
    let (only_baseline, only_baseline_us) =
        rows(&mut comparison.missing_ops.iter().chain(shape_changed(true)));
    let (only_candidate, only_candidate_us) =
        rows(&mut comparison.new_ops.iter().chain(shape_changed(false)));
    let share = |matched_us: f64, other_us: f64| {
        let all = matched_us + other_us;
        (all > 0.0).then(|| matched_us / all)
    };
    let baseline = share(matched_baseline_us, only_baseline_us)?;
    let candidate = share(matched_candidate_us, only_candidate_us)?;
    if baseline.min(candidate) >= min {
        return None;
    }
    let of = matched + only_baseline.max(only_candidate);
    let workload = &comparison.workload;
    Some(Finding {
        metric: "share of the time in rows that both sides have".into(),
        baseline: Some(baseline * 100.0),
        candidate: Some(candidate * 100.0),
        unit: "%".into(),
        limit: Some(min * 100.0),
        priority: FindingPriority::Critical,
        ..Finding::new(
            DIFFERENT_WORKLOADS_RULE,
            Severity::Fail,
            FindingKind::NothingToCompare,
            workload.clone(),
            format!(
                "`{workload}`: these look like different workloads ({matched} of {of} ops \
                 matched): the ops both sides ran hold {:.1}% of the baseline's and {:.1}% of \
                 the candidate's time in ops, below the {:.0}% `integrity.min_matched_share` \
                 asks; nothing else is judged. Compare runs of one workload, or lower that \
                 share if the work really changed this much",
                baseline * 100.0,
                candidate * 100.0,
                min * 100.0
            ),
        )
    })
}
