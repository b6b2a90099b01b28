//! Limits on the candidate (`limits.rs`): efficiency floors per category,
//! against the hardware's roofline, and budgets over the rows a matcher
//! selects, together.

use super::*;
use crate::analysis::hardware::{Hardware, builtin_catalog};
use crate::analysis::ops::stats::percent;
use crate::gate::policy::EfficiencyRule;
use crate::gate::verdict::FindingPriority;

/// The verdict's findings of `kind` on `comparison` with the candidate on
/// `hardware`.
fn findings_of(
    comparison: &Comparison,
    candidate: &Snapshot,
    hardware: Option<&Hardware>,
    policy: &Policy,
    kind: FindingKind,
) -> Vec<Finding> {
    judge(
        &[Workload::Compared {
            comparison: comparison.clone(),
            candidate,
            baseline_hardware: hardware.cloned(),
            candidate_hardware: hardware.cloned(),
        }],
        policy,
    )
    .findings
    .into_iter()
    .filter(|f| f.kind == kind)
    .collect()
}

/// Every modelled row of a category under its floor is named with its
/// efficiency: roofline time over its median call, the roofline from its
/// compute spec, or, for a model of bytes alone, the time at the HBM
/// bandwidth. Not above the floor, not below the rule's share, not when
/// ignored, not without hardware.
#[test]
fn rows_below_their_categorys_efficiency_floor_are_named_with_their_efficiency() {
    let snapshot = example_snapshot();
    let mut comparison = compared_with_itself(&snapshot);
    // One modelled row as a model of bytes alone (a copy, say), so both
    // rooflines are exercised.
    let bytes_only = comparison
        .ops
        .iter_mut()
        .find_map(|op| op.candidate.model.as_mut())
        .expect("a modelled row");
    bytes_only.flops = 0.0;
    bytes_only.compute_spec = None;
    let catalog = builtin_catalog();
    let hardware = catalog
        .by_name("H100 SXM")
        .expect("the H100 in the catalog");
    let expected_efficiency = |side: &OpSide| -> Option<f64> {
        let model = side.model.as_ref()?;
        let roofline = match model.compute_spec {
            Some(spec) => hardware.roofline_time_us(model.flops, model.bytes, spec)?,
            None if model.flops == 0.0 => model.bytes / (hardware.hbm_tb_s * 1e6),
            None => return None,
        };
        (side.median_us > 0.0 && !side.is_whole_graph()).then(|| roofline / side.median_us * 100.0)
    };
    let mut expected: Vec<(String, Category, f64)> = comparison
        .ops
        .iter()
        .filter_map(|op| {
            let side = &op.candidate;
            Some((
                side.key.name.clone(),
                side.category,
                expected_efficiency(side)?,
            ))
        })
        .collect();
    assert!(
        expected
            .iter()
            .any(|(_, category, _)| *category == Category::Gemm)
            && expected.len() > 3,
        "{expected:?}"
    );
    let mut categories: Vec<Category> = expected.iter().map(|(_, c, _)| *c).collect();
    categories.sort_by_key(|c| c.as_str());
    categories.dedup();
    let rules = |min_percent: f64, min_share_percent: f64| -> Policy {
        Policy {
            efficiency: categories
                .iter()
                .map(|&category| EfficiencyRule {
                    category,
                    min_percent,
                    min_share_percent,
                    severity: Severity::Warn,
                })
                .collect(),
            ..Policy::default()
        }
    };
    let found = findings_of(
        &comparison,
        &snapshot,
        Some(hardware),
        &rules(1e9, 0.0),
        FindingKind::Efficiency,
    );
    let mut named: Vec<(String, f64)> = found
        .iter()
        .map(|f| {
            let op = f.op.as_ref().expect("an op");
            (op.name.clone(), f.candidate.expect("its efficiency"))
        })
        .collect();
    named.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    expected.sort_by(|a, b| a.0.cmp(&b.0).then(a.2.total_cmp(&b.2)));
    assert_eq!(named.len(), expected.len(), "{named:?}\n{expected:?}");
    for ((name, efficiency), (want_name, _, want)) in named.iter().zip(&expected) {
        assert_eq!(name, want_name);
        assert!(
            (efficiency - want).abs() <= 1e-9 * want.abs(),
            "{name}: {efficiency} ≠ {want}"
        );
    }
    assert!(
        found[0].message.contains("% of its roofline on ")
            && found[0].message.contains(&hardware.name),
        "{}",
        found[0].message
    );

    // At exactly the floor a row passes; at exactly the rule's share it
    // is judged.
    let lowest = expected
        .iter()
        .map(|(_, _, e)| *e)
        .fold(f64::INFINITY, f64::min);
    let found = findings_of(
        &comparison,
        &snapshot,
        Some(hardware),
        &rules(lowest, 0.0),
        FindingKind::Efficiency,
    );
    assert!(found.is_empty(), "{found:#?}");
    let busy = snapshot.timeline.busy_time;
    let largest_share = comparison
        .ops
        .iter()
        .filter(|op| expected_efficiency(&op.candidate).is_some())
        .map(|op| percent(op.candidate.total_us, busy))
        .fold(0.0, f64::max);
    let found = findings_of(
        &comparison,
        &snapshot,
        Some(hardware),
        &rules(1e9, largest_share),
        FindingKind::Efficiency,
    );
    assert_eq!(found.len(), 1, "{found:#?}");
    // Where to optimise: medium priority from 15% of GPU time, else low.
    let priority = if largest_share >= 15.0 {
        FindingPriority::Medium
    } else {
        FindingPriority::Low
    };
    assert_eq!(found[0].priority, priority, "{largest_share}%");

    let none = |policy: &Policy, hardware: Option<&Hardware>| {
        findings_of(
            &comparison,
            &snapshot,
            hardware,
            policy,
            FindingKind::Efficiency,
        )
        .is_empty()
    };
    assert!(none(&rules(0.0, 0.0), Some(hardware)));
    assert!(none(&rules(1e9, 100.0), Some(hardware)));
    assert!(none(&rules(1e9, 0.0), None));
    let mut ignoring = rules(1e9, 0.0);
    ignoring.ignore = ignore_list(&["re:.*"]);
    assert!(none(&ignoring, Some(hardware)));
}

/// A budget covers the rows it matches together (here an op's several
/// shapes, named by their count): their time per step,
/// share of GPU time, calls per step and regression against the baseline
/// (raised to the noise floor), each failing only beyond its limit.
#[test]
fn a_budget_sums_the_rows_it_matches_and_fails_beyond_each_limit() {
    let baseline = example_snapshot();
    let rows = two_shapes_of_one_op(&baseline);
    let name = baseline.ops[rows[0]].name.clone();
    let matched: Vec<usize> = (0..baseline.ops.len())
        .filter(|&i| baseline.ops[i].name == name)
        .collect();
    let budget = |extra: &str| -> Policy {
        Policy::from_yaml(
            &format!(
                "version: 1\nbudgets:\n  - label: under test\n    match: {{ name: \"{name}\" }}\n{extra}"
            ),
            "policy.yaml",
        )
        .expect("a valid policy")
    };
    let steps = baseline.steps.len().max(1) as f64;
    let comparison = compared_with_itself(&baseline);
    let sides: Vec<&OpSide> = comparison
        .ops
        .iter()
        .map(|op| &op.candidate)
        .filter(|side| side.key.name == name)
        .collect();
    assert_eq!(sides.len(), matched.len());
    let total_us: f64 = sides.iter().map(|side| side.total_us).sum();
    let calls: f64 = sides.iter().map(|side| side.count as f64).sum();
    let figures = [
        ("max_time_per_step_us", total_us / steps),
        (
            "max_share_percent",
            percent(total_us, baseline.timeline.busy_time),
        ),
    ];
    let over = |policy: &Policy| -> Vec<Finding> {
        findings_of(&comparison, &baseline, None, policy, FindingKind::Budget)
    };
    for (key, value) in figures {
        assert!(
            over(&budget(&format!("    {key}: {value}\n"))).is_empty(),
            "{key} at {value}"
        );
        let found = over(&budget(&format!("    {key}: {}\n", value * 0.99)));
        assert_eq!(found.len(), 1, "{key}: {found:#?}");
        assert_eq!(found[0].candidate, Some(value), "{key}");
        // Time is per step; a share has no per.
        let per = (key == "max_time_per_step_us").then_some(Per::Step);
        assert_eq!(found[0].statistics.per, per, "{key}");
        assert!(
            found[0]
                .message
                .starts_with(&format!("{} rows matching `under test`: ", matched.len())),
            "{}",
            found[0].message
        );
    }
    let per_step = calls / steps;
    let below = (per_step.ceil() as u64).saturating_sub(1);
    let found = over(&budget(&format!("    max_count: {below}\n")));
    assert_eq!(
        found.len(),
        usize::from(per_step > below as f64),
        "{found:#?}"
    );
    assert!(
        over(&budget(&format!(
            "    max_count: {}\n",
            per_step.ceil() as u64
        )))
        .is_empty()
    );

    // The matched rows 10% slower: beyond a 5% limit, within 20%; a 1%
    // limit is raised to the 3% noise floor, which 2% stays within.
    let slower = |factor: f64| {
        let candidate = matched.iter().fold(baseline.clone(), |copy, &index| {
            scaled(&copy, index, factor, [factor; 3])
        });
        let comparison = compare(
            std::slice::from_ref(&baseline),
            &candidate,
            &CompareOptions::default(),
        );
        move |limit: f64| {
            findings_of(
                &comparison,
                &candidate,
                None,
                &budget(&format!("    max_regression_percent: {limit}\n")),
                FindingKind::Budget,
            )
            .len()
        }
    };
    let ten_percent = slower(1.1);
    assert_eq!((ten_percent(5.0), ten_percent(20.0)), (1, 0));
    assert_eq!(slower(1.02)(1.0), 0);
    assert_eq!(slower(1.05)(1.0), 1);

    // Matched rows with no baseline GPU time have no regression to read
    // (not +inf%): the budget stays silent on them.
    let mut without_baseline_time = comparison.clone();
    for op in &mut without_baseline_time.ops {
        if op.candidate.key.name == name {
            op.baseline.time_us = 0.0;
        }
    }
    let unmeasured = findings_of(
        &without_baseline_time,
        &baseline,
        None,
        &budget("    max_regression_percent: 5\n"),
        FindingKind::Budget,
    );
    assert!(unmeasured.is_empty(), "{unmeasured:#?}");

    let mut ignoring = budget("    max_time_per_step_us: 0\n");
    assert_eq!(over(&ignoring).len(), 1);
    ignoring.ignore = ignore_list(&[&name]);
    assert!(over(&ignoring).is_empty());
}
