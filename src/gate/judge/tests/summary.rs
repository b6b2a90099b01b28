//! The headline (`summary.rs`) on hand-made groups: what each outcome
//! lists and counts, each kind of line in a few words, the workload named
//! only among several, and the room the listed lines get.

use super::*;
use crate::gate::judge::summary::headline;
use crate::gate::verdict::{Counts, FindingGroup};

/// A line of workload `w`: `label`, its kind, severity and Δ, one finding.
fn line(label: &str, kind: FindingKind, severity: Severity, delta: Option<f64>) -> FindingGroup {
    FindingGroup {
        workload: "w".to_string(),
        label: label.to_string(),
        kind,
        severity,
        inconclusive: false,
        findings: vec![0],
        tags: vec![None],
        shapes: 1,
        delta_percent: delta,
        delta_per: None,
        delta_range_percent: None,
        impact_percent: None,
        same_kernels: None,
        per_call_delta_percent: None,
        calls: None,
        environment_changes: String::new(),
        summary: String::new(),
        advice: None,
        path_a: None,
        path_b: None,
    }
}

/// A failing regression line with `shapes` shapes.
fn failing(label: &str, delta: f64, shapes: usize) -> FindingGroup {
    FindingGroup {
        shapes,
        ..line(label, FindingKind::Regression, Severity::Fail, Some(delta))
    }
}

/// The headline of a verdict with this outcome, counts and lines, over
/// `workloads` workloads (the example's summary repeated).
fn headline_with(
    outcome: Outcome,
    counts: Counts,
    groups: Vec<FindingGroup>,
    workloads: usize,
) -> String {
    let example = example_snapshot();
    let mut verdict = verdict_of(&example, &example);
    let summary = verdict.workloads[0].clone();
    verdict.workloads = vec![summary; workloads];
    verdict.outcome = outcome;
    verdict.counts = counts;
    verdict.groups = groups;
    headline(&verdict)
}

/// Each outcome lists only its own lines, with the count it names: failing
/// lines (not the inconclusive ones), warnings, accepted findings, the
/// unconfirmed lines; a pass counts the unchanged rows.
#[test]
fn each_outcome_lists_its_own_lines_and_counts_them() {
    let unconfirmed = FindingGroup {
        inconclusive: true,
        ..failing("aten::bmm", 8.0, 1)
    };
    let warned = line(
        "aten::add",
        FindingKind::Regression,
        Severity::Warn,
        Some(3.0),
    );
    let accepted = line(
        "aten::mul",
        FindingKind::Regression,
        Severity::Accepted,
        Some(4.0),
    );
    let busy = line(
        "busy time",
        FindingKind::Timeline,
        Severity::Fail,
        Some(12.44),
    );
    let lines = vec![
        failing("aten::mm", 29.46, 9),
        unconfirmed.clone(),
        warned.clone(),
        accepted.clone(),
        busy,
    ];
    let counts = |set: &dyn Fn(&mut Counts)| {
        let mut counts = Counts::default();
        set(&mut counts);
        counts
    };
    let failed = counts(&|c| c.failing_groups = 2);
    assert_eq!(
        headline_with(Outcome::Fail, failed, lines.clone(), 1),
        "❌ tracegate: 2 failing: aten::mm +29.5% (9 shapes), busy time +12.4%"
    );
    let one_warning = counts(&|c| c.warning_groups = 1);
    assert_eq!(
        headline_with(Outcome::Pass, one_warning, lines.clone(), 1),
        "⚠️ tracegate: passed with 1 warning: aten::add +3.0%"
    );
    let warnings = counts(&|c| {
        c.warning_groups = 2;
        c.accepted = 1;
    });
    let two_warned = vec![warned.clone(), accepted.clone(), warned];
    assert_eq!(
        headline_with(Outcome::Pass, warnings, two_warned, 1),
        "⚠️ tracegate: passed with 2 warnings: aten::add +3.0%, aten::add +3.0%"
    );
    let one_accepted = counts(&|c| c.accepted = 1);
    assert_eq!(
        headline_with(Outcome::Pass, one_accepted, lines.clone(), 1),
        "☑️ tracegate: passed with 1 accepted finding: aten::mul +4.0%"
    );
    let accepted_two = counts(&|c| c.accepted = 2);
    assert_eq!(
        headline_with(Outcome::Pass, accepted_two, vec![accepted.clone(); 2], 1),
        "☑️ tracegate: passed with 2 accepted findings: aten::mul +4.0%, aten::mul +4.0%"
    );
    for (unchanged, words) in [(1, "1 op row unchanged"), (3, "3 op rows unchanged")] {
        let clean = counts(&|c| c.unchanged = unchanged);
        assert_eq!(
            headline_with(Outcome::Pass, clean, Vec::new(), 1),
            format!("✅ tracegate: no regressions ({words})")
        );
    }
    let unsure = counts(&|c| c.inconclusive_groups = 1);
    assert_eq!(
        headline_with(Outcome::Inconclusive, unsure, lines, 1),
        "❔ tracegate: inconclusive · 1 unconfirmed: aten::bmm +8.0%"
    );
}

/// An inconclusive verdict with no unconfirmed line says its first
/// finding; different workloads say how many ops matched, even when the
/// workload's name has a parenthesis of its own.
#[test]
fn a_verdict_without_lines_to_list_says_its_first_finding() {
    let example = example_snapshot();
    let mut verdict = verdict_of(&example, &example);
    verdict.outcome = Outcome::Inconclusive;
    verdict.findings = vec![Finding::new(
        "integrity",
        Severity::Fail,
        FindingKind::Integrity,
        "w",
        "`w` cannot be judged: only 50.0% of …".to_string(),
    )];
    assert_eq!(
        headline(&verdict),
        "❔ tracegate: `w` cannot be judged: only 50.0% of …"
    );
    verdict.outcome = Outcome::DifferentWorkloads;
    verdict.findings[0].rule = crate::gate::judge::integrity::DIFFERENT_WORKLOADS_RULE.to_string();
    verdict.findings[0].message = "`llama (8B)`: these look like different workloads (2 of 4 \
                                   ops matched): the ops both sides ran hold 10.0% (…)"
        .to_string();
    assert_eq!(
        headline(&verdict),
        "❔ tracegate: these look like different workloads (2 of 4 ops matched)"
    );
}

/// A line in a few words: a figure for the kinds that have one, the kind's
/// name for the others (what nothing-to-compare and policy lines say
/// instead), its shapes when more than one, and its workload when the
/// verdict has several (not for a workload's nothing-to-compare line,
/// whose label names it).
#[test]
fn a_line_is_its_label_figure_kind_shapes_and_workload() {
    let fail_with = |group: FindingGroup, workloads: usize| {
        let counts = Counts {
            failing_groups: 1,
            ..Counts::default()
        };
        headline_with(Outcome::Fail, counts, vec![group], workloads)
            .strip_prefix("❌ tracegate: 1 failing: ")
            .expect("the failing prefix")
            .to_string()
    };
    let cases = [
        (FindingKind::Improvement, Some(-10.0), "op -10.0%"),
        (FindingKind::UnexpectedRatio, Some(51.0), "op +51.0%"),
        (FindingKind::Collective, Some(47.0), "op +47.0%"),
        (
            FindingKind::KernelSelection,
            Some(5.0),
            "op: kernel selection",
        ),
        (FindingKind::Regression, None, "op: regression"),
        (
            FindingKind::NothingToCompare,
            None,
            "op: nothing to compare",
        ),
        (FindingKind::Policy, None, "op matches nothing"),
    ];
    for (kind, delta, words) in cases {
        assert_eq!(
            fail_with(line("op", kind, Severity::Fail, delta), 1),
            words,
            "{kind:?}"
        );
    }
    assert_eq!(
        fail_with(failing("op", 1.0, 2), 2),
        "op +1.0% (2 shapes) in w"
    );
    let nothing = line("w", FindingKind::NothingToCompare, Severity::Fail, None);
    assert_eq!(fail_with(nothing, 2), "w: nothing to compare");
    let unnamed = FindingGroup {
        workload: String::new(),
        ..failing("op", 1.0, 1)
    };
    assert_eq!(fail_with(unnamed, 2), "op +1.0%");
}

/// The lines after the first fit in 80 characters, the rest counted; the
/// first is listed however long.
#[test]
fn lines_beyond_the_headlines_room_are_counted() {
    // Each line 40 characters: `name` (24) + ` matches nothing` (16).
    let entry = |i: usize| {
        line(
            &format!("{i}{}", "x".repeat(23)),
            FindingKind::Policy,
            Severity::Fail,
            None,
        )
    };
    let counts = Counts {
        failing_groups: 5,
        ..Counts::default()
    };
    let listed = |lines: Vec<FindingGroup>| {
        headline_with(Outcome::Fail, counts, lines, 1)
            .strip_prefix("❌ tracegate: 5 failing: ")
            .expect("the failing prefix")
            .to_string()
    };
    let five: Vec<FindingGroup> = (0..5).map(entry).collect();
    let first_two = format!("{}, {}", brief_of(&five[0]), brief_of(&five[1]));
    assert_eq!(listed(five.clone()), format!("{first_two}, 3 more"));
    let mut longer = five.clone();
    longer[1].label.push('x');
    assert_eq!(listed(longer), format!("{}, 4 more", brief_of(&five[0])));
    let mut long_first = five;
    long_first[0].label = "y".repeat(90);
    assert_eq!(
        listed(long_first),
        format!("{} matches nothing, 4 more", "y".repeat(90))
    );
}

/// A policy line's words: its label and ` matches nothing`.
fn brief_of(group: &FindingGroup) -> String {
    format!("{} matches nothing", group.label)
}
