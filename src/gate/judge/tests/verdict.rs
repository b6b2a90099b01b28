//! The verdict the judge assembles (`mod.rs`) from hand-made findings
//! (given as measured outside the comparisons, as the drift rule's are):
//! what each count counts, which outcome wins, the lines counted by
//! severity, the nothing-to-compare lines of lone workloads, and the
//! groups the renderers trust or rebuild.

use super::*;
use crate::gate::judge::groups::group_findings;
use crate::gate::verdict::{FindingPriority, LearnedFrom};
use std::collections::{BTreeSet, HashMap};

/// The example judged against itself with `findings` added.
fn judged_with(findings: Vec<Finding>) -> Verdict {
    let example = example_snapshot();
    let options = JudgeOptions {
        findings,
        ..JudgeOptions::default()
    };
    judge_with(
        &[Workload::Compared {
            comparison: compared_with_itself(&example),
            candidate: &example,
            baseline_hardware: None,
            candidate_hardware: None,
        }],
        &Policy::default(),
        &options,
    )
}

/// A finding of `kind` and `severity` on the `k`-th of the example's
/// matched rows that each have an op of their own (none for `None`), in
/// the example's workload.
fn on_row(kind: FindingKind, severity: Severity, k: Option<usize>) -> Finding {
    let comparison = compared_with_itself(&example_snapshot());
    let mut names = BTreeSet::new();
    let own_op: Vec<&OpSide> = comparison
        .ops
        .iter()
        .map(|op| &op.candidate)
        .filter(|side| names.insert(side.key.name.clone()))
        .collect();
    let mut finding = Finding::new(
        "rule",
        severity,
        kind,
        &comparison.workload,
        "m".to_string(),
    );
    finding.op = k.map(|k| own_op[k].op_ref());
    finding
}

/// `finding` made inconclusive.
fn unconfirmed(mut finding: Finding) -> Finding {
    finding.statistics.inconclusive = true;
    finding
}

/// `finding` with the change `delta` %.
fn changed(mut finding: Finding, delta: f64) -> Finding {
    finding.delta_percent = Some(delta);
    finding
}

/// Regressions are confirmed failing slowdowns: op rows and collectives,
/// and cross-platform ratios that rose (or that broke a learned ratio
/// either way); improvements, warnings, failures and accepted findings
/// are counted by kind or severity; a row is unchanged unless a
/// regression, improvement, ratio or kernel-selection finding of its
/// workload names it (once however many do).
#[test]
fn each_count_counts_what_it_names() {
    let base = judged_with(Vec::new());
    assert_eq!(base.outcome, Outcome::Pass);
    let matched = base.workloads[0].matched;
    assert_eq!(base.counts.unchanged, matched);

    let mut learned = changed(
        on_row(FindingKind::UnexpectedRatio, Severity::Fail, Some(3)),
        -10.0,
    );
    learned.statistics.expected_learned = Some(LearnedFrom {
        runs: 4,
        spread_percent: 1.0,
    });
    let mut elsewhere = on_row(FindingKind::Regression, Severity::Fail, Some(6));
    elsewhere.workload = "elsewhere".to_string();
    let findings = vec![
        on_row(FindingKind::Regression, Severity::Fail, Some(0)),
        on_row(FindingKind::Regression, Severity::Warn, Some(0)),
        unconfirmed(on_row(FindingKind::Regression, Severity::Fail, Some(1))),
        on_row(FindingKind::Collective, Severity::Fail, None),
        unconfirmed(on_row(FindingKind::Collective, Severity::Fail, None)),
        changed(
            on_row(FindingKind::UnexpectedRatio, Severity::Fail, Some(2)),
            10.0,
        ),
        changed(
            on_row(FindingKind::UnexpectedRatio, Severity::Fail, Some(2)),
            20.0,
        ),
        changed(
            on_row(FindingKind::UnexpectedRatio, Severity::Fail, Some(2)),
            -10.0,
        ),
        on_row(FindingKind::UnexpectedRatio, Severity::Fail, Some(2)),
        learned,
        on_row(FindingKind::Improvement, Severity::Info, Some(4)),
        on_row(FindingKind::KernelSelection, Severity::Accepted, Some(5)),
        on_row(FindingKind::Efficiency, Severity::Warn, Some(7)),
        elsewhere,
        on_row(FindingKind::Timeline, Severity::Accepted, None),
    ];
    let verdict = judged_with(findings);
    let counts = verdict.counts;
    // Row 0, the collective, row 2's two risen ratios (not the one that
    // fell, nor the one with no change), row 3's learned one, and the
    // regression in another workload.
    assert_eq!(counts.regressions, 6, "{:#?}", verdict.findings);
    assert_eq!(counts.failures, 10);
    assert_eq!(counts.warnings, 2);
    assert_eq!(counts.improvements, 1);
    assert_eq!(counts.accepted, 2);
    // Rows 0–5 are flagged; 6 is another workload's, 7 an efficiency.
    assert_eq!(counts.unchanged, matched - 6);
    assert_eq!(verdict.workloads[0].unchanged, matched - 6);
}

/// The outcome: different workloads over everything, then a confirmed
/// failure, then a failing doubt (integrity, an unconfirmed change), else
/// a pass; warnings of any of these do not count.
#[test]
fn a_confirmed_failure_outranks_a_doubt_and_different_workloads_outrank_both() {
    let integrity = |severity| on_row(FindingKind::Integrity, severity, None);
    let different = |severity| {
        let mut finding = on_row(FindingKind::NothingToCompare, severity, None);
        finding.rule = crate::gate::judge::integrity::DIFFERENT_WORKLOADS_RULE.to_string();
        finding
    };
    let fail = || on_row(FindingKind::Regression, Severity::Fail, Some(0));
    let doubt = || unconfirmed(on_row(FindingKind::Regression, Severity::Fail, Some(1)));
    let cases = [
        (vec![integrity(Severity::Fail)], Outcome::Inconclusive),
        (vec![doubt()], Outcome::Inconclusive),
        (vec![integrity(Severity::Warn)], Outcome::Pass),
        (vec![fail(), doubt()], Outcome::Fail),
        (vec![integrity(Severity::Fail), fail()], Outcome::Fail),
        (
            vec![different(Severity::Fail), fail()],
            Outcome::DifferentWorkloads,
        ),
        (vec![different(Severity::Warn)], Outcome::Pass),
    ];
    for (findings, outcome) in cases {
        let rules: Vec<String> = findings.iter().map(|f| f.rule.clone()).collect();
        assert_eq!(judged_with(findings).outcome, outcome, "{rules:?}");
    }
}

/// Lines are counted by severity: failing ones apart from the
/// inconclusive ones, and warnings.
#[test]
fn lines_are_counted_by_severity_and_doubt() {
    let verdict = judged_with(vec![
        on_row(FindingKind::Regression, Severity::Fail, Some(0)),
        on_row(FindingKind::Collective, Severity::Fail, None),
        unconfirmed(on_row(FindingKind::Regression, Severity::Fail, Some(1))),
        on_row(FindingKind::Regression, Severity::Warn, Some(2)),
        on_row(FindingKind::Efficiency, Severity::Warn, Some(3)),
        on_row(FindingKind::Budget, Severity::Warn, Some(4)),
        on_row(FindingKind::Improvement, Severity::Info, Some(5)),
    ]);
    let counts = verdict.counts;
    assert_eq!(
        (
            counts.failing_groups,
            counts.inconclusive_groups,
            counts.warning_groups
        ),
        (2, 1, 3),
        "{:#?}",
        verdict.groups
    );
    assert!(verdict.headline.starts_with("❌ tracegate: 2 failing:"));
}

/// A workload on one side only, or without a baseline, is a
/// nothing-to-compare line saying so (of high priority, about the
/// comparison); new and missing rows are counted
/// over every compared workload.
#[test]
fn lone_workloads_have_nothing_to_compare_and_new_rows_add_up() {
    let example = example_snapshot();
    let mut comparison = compared_with_itself(&example);
    let side = comparison.ops[0].candidate.clone();
    comparison.new_ops = vec![side.clone(), side.clone()];
    comparison.missing_ops = vec![side];
    let compared = || Workload::Compared {
        comparison: comparison.clone(),
        candidate: &example,
        baseline_hardware: None,
        candidate_hardware: None,
    };
    let verdict = judge(
        &[
            compared(),
            compared(),
            Workload::OnlyBaseline("gone".to_string()),
            Workload::OnlyCandidate("fresh".to_string()),
            Workload::NoBaseline {
                name: "first".to_string(),
                reason: "no run of it in the history".to_string(),
            },
        ],
        &Policy::default(),
    );
    assert_eq!((verdict.counts.new, verdict.counts.missing), (4, 2));
    let said = |workload: &str| {
        let finding = verdict
            .findings
            .iter()
            .find(|f| f.workload == workload && f.kind == FindingKind::NothingToCompare)
            .unwrap_or_else(|| panic!("{:#?}", verdict.findings));
        assert_eq!(
            (finding.metric.as_str(), finding.priority),
            ("comparison", FindingPriority::High)
        );
        finding.message.clone()
    };
    assert_eq!(
        said("gone"),
        "workload `gone` exists only on the baseline side: nothing to compare it with"
    );
    assert_eq!(
        said("fresh"),
        "workload `fresh` exists only on the candidate side: nothing to compare it with"
    );
    assert_eq!(
        said("first"),
        "workload `first`: no run of it in the history: nothing to compare it with"
    );
}

/// The renderers keep a verdict's groups when each indexes its findings
/// (none empty, a tag per finding, every finding in exactly one group);
/// otherwise they group the findings again.
#[test]
fn groups_that_do_not_index_their_findings_are_rebuilt() {
    let verdict = judged_with(vec![
        on_row(FindingKind::Regression, Severity::Fail, Some(0)),
        on_row(FindingKind::Regression, Severity::Warn, Some(1)),
        on_row(FindingKind::Collective, Severity::Fail, None),
    ]);
    assert!(verdict.groups.len() >= 3, "{:#?}", verdict.groups);
    assert_eq!(verdict_groups(&verdict), verdict.groups);
    let rebuilt = group_findings(&verdict.findings, &HashMap::new(), &verdict.workloads);
    assert_ne!(rebuilt, verdict.groups, "the matched rows add figures");
    let n = verdict.findings.len();
    // Each breaks the groups of a verdict with this many findings.
    type Corruption = fn(&mut Vec<FindingGroup>, usize);
    let corruptions: [(&str, Corruption); 5] = [
        ("an empty group", |groups, _| {
            let mut empty = groups[0].clone();
            empty.findings.clear();
            empty.tags.clear();
            groups.push(empty);
        }),
        ("a tag short", |groups, _| {
            groups[0].tags.pop();
        }),
        ("an index past the findings", |groups, n| {
            groups[0].findings.push(n);
            groups[0].tags.push(None);
        }),
        ("a finding in two groups", |groups, _| {
            groups.push(groups[0].clone());
        }),
        ("a finding in none", |groups, _| {
            groups.pop();
        }),
    ];
    for (what, corrupt) in corruptions {
        let mut broken = verdict.clone();
        corrupt(&mut broken.groups, n);
        assert_eq!(verdict_groups(&broken), rebuilt, "{what}");
    }
}
