//! Kernel families judged (`families.rs`): a kernel slower over all its
//! launches fails naming the kernel, or the one op that launches it, unless
//! its impact is below the minimum, it is a collective's, or failing
//! findings about the ops launching it already hold half its added time.

use super::*;
use crate::gate::compare::{KernelPart, OpComparison};
use crate::gate::snapshot::OpKey;

/// The name the family under test carries; no row of the example launches
/// a kernel of this name until a test says so.
const KERNEL: &str = "family_kernel_under_test";

/// What a kernel family's finding measures.
const FAMILY_METRIC: &str = "median kernel time per launch, kernel family";

/// The example's comparison where the only change is a kernel family
/// named [`KERNEL`], 1.5× slower (a row's figures under the kernel's name),
/// and the slowed row itself; no row launches the kernel.
fn slower_family() -> (Comparison, Snapshot, OpComparison) {
    let (mut comparison, _, candidate) = slower_total(1.5);
    let row = comparison.op_totals.remove(0);
    let mut family = row.clone();
    for side in [&mut family.baseline, &mut family.candidate] {
        side.key = OpKey {
            name: KERNEL.into(),
            ..OpKey::default()
        };
    }
    comparison.kernel_families = vec![family];
    (comparison, candidate, row)
}

/// The family findings of the verdict on `comparison` under `policy`.
fn family_verdicts(comparison: &Comparison, candidate: &Snapshot, policy: &Policy) -> Vec<Finding> {
    verdict_of_comparison(comparison.clone(), candidate, policy)
        .findings
        .into_iter()
        .filter(|f| f.metric == FAMILY_METRIC)
        .collect()
}

/// Two matched rows of different op names, unchanged in the example.
fn two_rows_of_different_ops(comparison: &Comparison) -> (usize, usize) {
    let first = 0;
    let other = (1..comparison.ops.len())
        .find(|&i| comparison.ops[i].candidate.key.name != comparison.ops[first].candidate.key.name)
        .expect("the example has rows of several ops");
    (first, other)
}

/// A kernel slower over all its launches fails once, named as a kernel
/// with its launches; not when it is a collective's (the timeline judges
/// those), and not below the impact minimum (at exactly the minimum it is
/// judged).
#[test]
fn a_kernel_slower_over_all_its_launches_fails_unless_immaterial_or_a_collective() {
    let policy = Policy::default();
    let (comparison, candidate, _) = slower_family();
    let found = family_verdicts(&comparison, &candidate, &policy);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].severity, Severity::Fail);
    assert_eq!(found[0].kind, FindingKind::Regression);
    let launches = comparison.kernel_families[0].candidate.count;
    let message = &found[0].message;
    assert!(
        message.starts_with(&format!(
            "kernel {KERNEL}, all its {launches} launches over the rows that launch it, "
        )) && message.contains("50.0% slower"),
        "{message}"
    );

    let mut collective = comparison.clone();
    collective.kernel_families[0].candidate.category = Category::Comm;
    assert!(family_verdicts(&collective, &candidate, &policy).is_empty());

    let impact = comparison.kernel_families[0].impact_percent.abs();
    for (min_impact_percent, judged) in [(impact, 1), (impact * 1.01, 0)] {
        let mut policy = Policy::default();
        policy.noise.min_impact_percent = min_impact_percent;
        assert_eq!(
            family_verdicts(&comparison, &candidate, &policy).len(),
            judged,
            "impact minimum {min_impact_percent}%"
        );
    }
}

/// A family is about the op when one op name launches the kernel — by its
/// kernel sequence, by a graph row's kernel times, or through a kernel part
/// of its row; with two op names launching it, it is about the kernel.
#[test]
fn a_kernel_launched_by_one_op_is_reported_as_that_ops() {
    let policy = Policy::default();
    let (comparison, candidate, _) = slower_family();
    let (first, other) = two_rows_of_different_ops(&comparison);
    let name = comparison.ops[first].candidate.key.name.clone();
    let launches = comparison.kernel_families[0].candidate.count;
    let about_the_op = |comparison: &Comparison, how: &str| {
        let found = family_verdicts(comparison, &candidate, &policy);
        assert_eq!(found.len(), 1, "{how}: {found:#?}");
        let message = &found[0].message;
        assert!(
            message.starts_with(&format!(
                "{name}: its kernel {KERNEL}, all its {launches} launches over the op's rows,"
            )),
            "{how}: {message}"
        );
        let op = found[0].op.as_ref().expect("the finding names the op");
        assert_eq!(
            (op.name.as_str(), op.input_dims.as_str()),
            (name.as_str(), "")
        );
    };

    let mut by_sequence = comparison.clone();
    by_sequence.ops[first].candidate.kernel_sequence = vec![KERNEL.into()];
    by_sequence.ops[first].candidate.kernel_us.clear();
    about_the_op(&by_sequence, "kernel sequence");

    let mut by_graph_times = comparison.clone();
    by_graph_times.ops[first].candidate.kernel_sequence.clear();
    by_graph_times.ops[first].candidate.kernel_us = vec![(KERNEL.into(), 1.0)];
    about_the_op(&by_graph_times, "graph kernel times");

    let mut by_part = comparison.clone();
    by_part.kernel_parts = vec![KernelPart {
        kernel: KERNEL.into(),
        comparison: comparison.ops[first].clone(),
    }];
    about_the_op(&by_part, "kernel part");

    let mut by_two_ops = by_sequence.clone();
    by_two_ops.ops[other].candidate.kernel_sequence = vec![KERNEL.into()];
    let found = family_verdicts(&by_two_ops, &candidate, &policy);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(
        found[0].message.starts_with(&format!("kernel {KERNEL}, ")),
        "{}",
        found[0].message
    );
}

/// A family is not reported again when failing findings about the ops
/// launching it hold at least half its added time; when they hold less, it
/// is. Findings that do not fail explain nothing.
#[test]
fn a_family_its_ops_failing_findings_explain_is_not_reported_again() {
    let policy = Policy::default();
    let (mut comparison, candidate, mut row) = slower_family();
    row.candidate.kernel_sequence = vec![KERNEL.into()];
    row.candidate.kernel_us.clear();
    let name = row.candidate.key.name.clone();
    comparison.ops.push(row);
    let verdict = verdict_of_comparison(comparison.clone(), &candidate, &policy);
    assert_regressions_named(&verdict, &name, 1);
    assert!(family_verdicts(&comparison, &candidate, &policy).is_empty());

    // The row's finding holds its impact I; a family adding an even number
    // of percent above 2·I is explained by less than half.
    let held = comparison
        .ops
        .last()
        .map(|row| row.impact_percent)
        .unwrap_or_default();
    let mut larger = comparison.clone();
    larger.kernel_families[0].impact_percent = 2.0 * (held.ceil() + 1.0);
    assert_eq!(family_verdicts(&larger, &candidate, &policy).len(), 1);

    // A row finding that only warns holds none of the family's time.
    let mut warning = Policy::default();
    warning.regression.severity = Severity::Warn;
    let verdict = verdict_of_comparison(comparison.clone(), &candidate, &warning);
    assert!(
        verdict.findings.iter().any(|f| f.metric == FAMILY_METRIC),
        "{:#?}",
        verdict.findings
    );
}
