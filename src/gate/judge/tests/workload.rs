//! The per-row rules of `workload.rs`: what decides whether a matched row
//! is judged (its measured noise, the time floor) and which rows join their
//! op's grouped slowdown (only those confidently beyond the threshold).

use super::*;
use crate::analysis::ops::stats::percent;
use crate::analysis::profile::{GraphPlace, GraphRole};
use crate::gate::compare::{Expectation, ExpectationBasis, KernelPart};
use crate::gate::stats::RatioInterval;

/// A row's measured run-to-run noise raises its threshold, and a row below
/// the time floor on both sides is not judged (at exactly the floor it is).
#[test]
fn a_rows_measured_noise_and_the_time_floor_decide_whether_it_is_judged() {
    let (comparison, row, name, candidate, policy) = small_slower_row();
    let verdict = verdict_of_comparison(comparison.clone(), &candidate, &policy);
    assert_regressions_named(&verdict, &name, 1);

    // A 50% slowdown passes 40% of noise (a fraction) and not 60%.
    for (noise, judged) in [(0.4, 1), (0.6, 0)] {
        let mut noisy = comparison.clone();
        noisy.ops[row].noise = Some(noise);
        let verdict = verdict_of_comparison(noisy, &candidate, &policy);
        assert_eq!(regressions_named(&verdict, &name), judged, "noise {noise}");
    }

    let mut higher = policy.clone();
    higher.noise.min_time_us *= 1.01;
    let verdict = verdict_of_comparison(comparison, &candidate, &higher);
    assert_regressions_named(&verdict, &name, 0);
}

/// The example compared with two shapes of one op (both in every step)
/// scaled — each its calls ×`calls`, its steps ×`steps` — and, when given,
/// the low end of their bounds set to `low`; a policy whose impact minimum
/// is `min_impact` of the two rows' impacts. Also the candidate and the
/// op's name.
fn two_shapes_compared(
    scales: [(f64, [f64; 3]); 2],
    low: Option<f64>,
    min_impact: fn([f64; 2]) -> f64,
) -> (Comparison, Policy, Snapshot, String) {
    let snapshot = example_snapshot();
    let rows = two_shapes_of_one_op(&snapshot);
    let candidate = rows
        .iter()
        .zip(scales)
        .fold(snapshot.clone(), |copy, (&index, (calls, steps))| {
            scaled(&copy, index, calls, steps)
        });
    let mut comparison = compare(
        std::slice::from_ref(&snapshot),
        &candidate,
        &CompareOptions::default(),
    );
    let matched = rows.map(|index| matched_row(&comparison, &snapshot.ops[index]));
    if let Some(low) = low {
        for &index in &matched {
            let estimate = &mut comparison.ops[index].estimate;
            let high = estimate.range.map_or(low, |range| range.high.max(low));
            estimate.range = Some(RatioInterval { low, high });
        }
    }
    let impacts = matched.map(|index| comparison.ops[index].impact_percent);
    assert!(impacts.iter().all(|&impact| impact > 0.0), "{impacts:?}");
    let mut policy = Policy::default();
    policy.noise.min_impact_percent = min_impact(impacts);
    let name = snapshot.ops[rows[0]].name.clone();
    (comparison, policy, candidate, name)
}

/// The verdict on [`two_shapes_compared`]'s comparison, and the op's name.
fn two_shapes_slower(
    scales: [(f64, [f64; 3]); 2],
    low: Option<f64>,
    min_impact: fn([f64; 2]) -> f64,
) -> (Verdict, String) {
    let (comparison, policy, candidate, name) = two_shapes_compared(scales, low, min_impact);
    (verdict_of_comparison(comparison, &candidate, &policy), name)
}

/// Whether the verdict judged `name`'s shapes together.
fn grouped(verdict: &Verdict, name: &str) -> bool {
    verdict.findings.iter().any(|f| {
        f.message
            .starts_with(&format!("{name} is slower in 2 of its "))
    })
}

/// An impact minimum above each row's impact and below the two together:
/// the two can fail only as a group.
fn between(impacts: [f64; 2]) -> f64 {
    (impacts[0].max(impacts[1]) + impacts[0] + impacts[1]) / 2.0
}

/// Shapes each confidently slower but below the impact minimum fail as
/// their op when together they reach it (exactly at it included), not
/// when they fall short.
#[test]
fn shapes_slower_together_by_the_impact_minimum_fail_as_their_op() {
    let beyond = 1.0 + Policy::default().noise.min_effect_percent / 100.0 + 0.01;
    let (verdict, name) = two_shapes_slower([(1.1, [1.1; 3]); 2], Some(beyond), between);
    assert!(grouped(&verdict, &name), "{:#?}", verdict.findings);
    let (verdict, name) = two_shapes_slower([(1.1, [1.1; 3]); 2], Some(beyond), |[a, b]| a + b);
    assert!(grouped(&verdict, &name), "{:#?}", verdict.findings);
    let (verdict, name) =
        two_shapes_slower([(1.1, [1.1; 3]); 2], Some(beyond), |[a, b]| (a + b) * 1.01);
    assert!(!grouped(&verdict, &name), "{:#?}", verdict.findings);

    // The rows' own warnings (each below the impact minimum, holding a
    // material share) give way to the op's finding.
    let (verdict, name) = two_shapes_slower([(1.1, [1.1; 3]); 2], Some(beyond), between);
    let about_the_op = verdict
        .findings
        .iter()
        .filter(|f| f.op.as_ref().is_some_and(|op| op.name == name))
        .count();
    assert_eq!(about_the_op, 1, "{:#?}", verdict.findings);

    // Rows too slight to be named alone (impact and share below their
    // minimums) still add up to their op's slowdown.
    let (verdict, name) = two_shapes_slower([(1.6, [1.6; 3]); 2], None, between);
    assert!(grouped(&verdict, &name), "{:#?}", verdict.findings);

    // The group's Δ is its rows' median: of two, their mean.
    let (verdict, name) =
        two_shapes_slower([(1.1, [1.1; 3]), (1.3, [1.3; 3])], Some(beyond), between);
    let group = verdict
        .findings
        .iter()
        .find(|f| {
            f.message
                .starts_with(&format!("{name} is slower in 2 of its "))
        })
        .unwrap_or_else(|| panic!("{:#?}", verdict.findings));
    let delta = group.delta_percent.expect("a Δ");
    assert!((delta - 20.0).abs() < 1e-6, "{delta}");
}

/// Only rows confidently beyond the threshold join their op's grouped
/// slowdown: not rows whose bounds reach back to the threshold (exactly
/// at it included), nor rows slower by less than it, nor inconclusive ones.
#[test]
fn only_rows_confidently_beyond_the_threshold_join_their_ops_group() {
    let threshold = 1.0 + Policy::default().noise.min_effect_percent / 100.0;
    let (verdict, name) = two_shapes_slower([(1.1, [1.1; 3]); 2], Some(threshold), between);
    assert!(!grouped(&verdict, &name), "{:#?}", verdict.findings);

    let (verdict, name) = two_shapes_slower([(1.04, [1.04; 3]); 2], None, between);
    assert!(!grouped(&verdict, &name), "{:#?}", verdict.findings);

    // The group's p-value is of a slowdown beyond the minimum effect, the
    // largest of its rows': rows whose resampled ratios all sit below it
    // do not fail together, whatever their bounds say.
    let beyond = threshold + 0.01;
    let (verdict, name) = two_shapes_slower([(1.04, [1.04; 3]); 2], Some(beyond), between);
    assert!(!grouped(&verdict, &name), "{:#?}", verdict.findings);

    // Two steps 30% slower, one 3%: each row is inconclusive, a warning
    // of its own, never part of a group.
    let (verdict, name) = two_shapes_slower([(1.2, [1.03, 1.3, 1.3]); 2], None, between);
    assert!(!grouped(&verdict, &name), "{:#?}", verdict.findings);
    let inconclusive = verdict
        .findings
        .iter()
        .filter(|f| f.op.as_ref().is_some_and(|op| op.name == name))
        .filter(|f| f.statistics.inconclusive)
        .count();
    assert_eq!(inconclusive, 2, "{:#?}", verdict.findings);
}

/// A new op is reported from its share of the candidate's GPU time, a
/// missing one from its share of the baseline's (exactly the policy's
/// minimum included); neither when the policy ignores it.
#[test]
fn new_and_missing_ops_are_reported_from_their_share_unless_ignored() {
    let snapshot = example_snapshot();
    let busy = snapshot.timeline.busy_time;
    let index = largest_row_where(&snapshot, |op| {
        snapshot.ops.iter().filter(|o| o.name == op.name).count() == 1
            && op.graph.is_none()
            && op.direct.sum / busy > 0.01
    })
    .expect("an op of the example with one row and 1% of its GPU time");
    let (old, new) = (snapshot.ops[index].name.clone(), "aten::brand_new_op");
    let mut candidate = snapshot.clone();
    candidate.ops[index].name = new.into();
    let comparison = compare(
        std::slice::from_ref(&snapshot),
        &candidate,
        &CompareOptions::default(),
    );
    let side = |sides: &[OpSide], name: &str| -> f64 {
        sides
            .iter()
            .find(|side| side.key.name == name)
            .unwrap_or_else(|| panic!("{name} is not there"))
            .time_us
    };
    let new_share = percent(
        side(&comparison.new_ops, new),
        comparison.candidate_total_us,
    );
    let gone_share = percent(
        side(&comparison.missing_ops, &old),
        comparison.baseline_total_us,
    );
    let reported = |policy: &Policy| -> [usize; 2] {
        let verdict = verdict_of_comparison(comparison.clone(), &candidate, policy);
        let count = |kind: FindingKind, name: &str| {
            verdict
                .findings
                .iter()
                .filter(|f| f.kind == kind && f.op.as_ref().is_some_and(|op| op.name == name))
                .count()
        };
        [
            count(FindingKind::NewOp, new),
            count(FindingKind::MissingOp, &old),
        ]
    };
    let mut at_minimum = Policy::default();
    at_minimum.new_ops.min_share_percent = new_share;
    at_minimum.missing_ops.min_share_percent = gone_share;
    assert_eq!(reported(&at_minimum), [1, 1]);
    // A gone op's impact is the time it saved: its share, negative.
    let verdict = verdict_of_comparison(comparison.clone(), &candidate, &at_minimum);
    let gone = verdict
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::MissingOp)
        .expect("the gone op's finding");
    assert_eq!(gone.impact_percent, Some(-gone_share));

    let mut above = at_minimum.clone();
    above.new_ops.min_share_percent *= 1.01;
    above.missing_ops.min_share_percent *= 1.01;
    assert_eq!(reported(&above), [0, 0]);

    let mut ignoring_at_minimum = at_minimum.clone();
    ignoring_at_minimum.ignore = ignore_list(&[new, &old]);
    assert_eq!(reported(&ignoring_at_minimum), [0, 0]);
}

/// Across platforms, an op whose ratio rose beyond its learned ratio in
/// several shapes, each below the impact minimum, fails as the op.
#[test]
fn shapes_risen_beyond_their_learned_ratio_together_fail_as_their_op() {
    let (mut comparison, policy, candidate, name) =
        two_shapes_compared([(1.3, [1.3; 3]); 2], None, between);
    comparison.cross_platform = true;
    for op in &mut comparison.ops {
        op.expected = Some(Expectation {
            ratio: 1.0,
            basis: ExpectationBasis::History {
                runs: 10,
                spread: 0.01,
            },
            spec: None,
        });
    }
    let risen = |policy: &Policy| {
        let verdict = verdict_of_comparison(comparison.clone(), &candidate, policy);
        verdict
            .findings
            .iter()
            .filter(|f| {
                f.message.starts_with(&format!(
                    "{name}: the candidate/baseline time ratio rose beyond its learned ratio in 2 of its "
                ))
            })
            .count()
    };
    assert_eq!(risen(&policy), 1);
}

/// A kernel of a row whose calls launch different kernels is judged over
/// its own launches, its finding about the row naming the kernel; not when
/// the row already fails on its own, is a collective's, or is ignored.
#[test]
fn a_kernel_part_is_judged_unless_its_row_fails_or_is_left_out() {
    let policy = Policy::default();
    let (mut comparison, name, candidate) = slower_total(1.5);
    let row = comparison.op_totals.remove(0);
    comparison.kernel_parts = vec![KernelPart {
        kernel: "part_kernel_under_test".into(),
        comparison: row.clone(),
    }];
    let parts = |comparison: &Comparison, policy: &Policy| -> Vec<Finding> {
        verdict_of_comparison(comparison.clone(), &candidate, policy)
            .findings
            .into_iter()
            .filter(|f| f.metric == "median kernel time per launch")
            .collect()
    };
    let found = parts(&comparison, &policy);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(
        found[0]
            .message
            .contains(": its kernel part_kernel_under_test is 50.0% slower "),
        "{}",
        found[0].message
    );
    assert_eq!(
        found[0].op.as_ref().map(|op| op.name.as_str()),
        Some(name.as_str())
    );

    let mut failing_row = comparison.clone();
    failing_row.ops.push(row);
    assert!(parts(&failing_row, &policy).is_empty());
    let verdict = verdict_of_comparison(failing_row, &candidate, &policy);
    assert_regressions_named(&verdict, &name, 1);

    let mut collective = comparison.clone();
    collective.kernel_parts[0].comparison.candidate.category = Category::Comm;
    assert!(parts(&collective, &policy).is_empty());

    let ignoring = Policy {
        ignore: ignore_list(&[&name]),
        ..Policy::default()
    };
    assert!(parts(&comparison, &ignoring).is_empty());
}

/// The verdict's one kernel-selection finding; panics, listing the
/// findings, unless there is exactly one.
fn the_kernel_selection(verdict: &Verdict) -> Finding {
    let found: Vec<&Finding> = verdict
        .findings
        .iter()
        .filter(|f| f.kind == FindingKind::KernelSelection)
        .collect();
    assert_eq!(found.len(), 1, "{:#?}", verdict.findings);
    found[0].clone()
}

/// A changed kernel sequence is one finding per op: a whole graph's names
/// the graph and its replays, a captured op's in a graph names the op;
/// outside graphs, several shapes of one op are counted among its shapes.
#[test]
fn a_changed_kernel_selection_names_the_graph_only_for_a_whole_graph() {
    let snapshot = example_snapshot();
    let index = row_with_share(&snapshot, 3.0, 100.0);
    let mut comparison = compared_with_itself(&snapshot);
    let row = matched_row(&comparison, &snapshot.ops[index]);
    comparison.ops[row].kernel_diff = Some("-old_kernel\n+new_kernel\n".into());
    let message = |role: GraphRole| -> String {
        let mut comparison = comparison.clone();
        comparison.ops[row].candidate.graph = Some(GraphPlace {
            graph: "graph 7".into(),
            role,
            launch: "cudaGraphLaunch".into(),
            variant: None,
        });
        the_kernel_selection(&verdict_of_comparison(
            comparison,
            &snapshot,
            &Policy::default(),
        ))
        .message
    };
    let whole = message(GraphRole::Graph);
    assert!(
        whole.starts_with("the kernels cudaGraphLaunch graph 7 replays changed: "),
        "{whole}"
    );
    let captured = message(GraphRole::CapturedOp);
    assert!(
        captured.starts_with(&format!("{} ", snapshot.ops[index].name))
            && captured.ends_with(": the kernels it launches changed"),
        "{captured}"
    );

    // Outside graphs, an op whose kernels changed in several shapes gets
    // one finding counting them among its shapes; in one shape, the shape.
    let rows = two_shapes_of_one_op(&snapshot);
    let name = &snapshot.ops[rows[0]].name;
    let shapes = snapshot.ops.iter().filter(|op| op.name == *name).count();
    let selection = |changed: &[usize]| -> Finding {
        let mut comparison = compared_with_itself(&snapshot);
        for &index in changed {
            let row = matched_row(&comparison, &snapshot.ops[index]);
            comparison.ops[row].kernel_diff = Some("-old_kernel\n+new_kernel\n".into());
        }
        the_kernel_selection(&verdict_of_comparison(
            comparison,
            &snapshot,
            &Policy::default(),
        ))
    };
    // The finding's op reads as the rows it sums, as its message counts.
    let dims = |finding: &Finding| finding.op.as_ref().map(|op| op.input_dims.clone());
    let several = selection(&rows[..2]);
    assert!(
        several.message.starts_with(&format!(
            "{name}: the kernels it launches changed in 2 of its {shapes} shapes ("
        )),
        "{}",
        several.message
    );
    assert_eq!(dims(&several).as_deref(), Some("2 shapes"));
    let one = selection(&rows[..1]);
    assert!(
        one.message.ends_with(": the kernels it launches changed")
            && !one.message.contains(" shapes"),
        "{}",
        one.message
    );
    assert_eq!(dims(&one), Some(snapshot.ops[rows[0]].input_dims.clone()));
}

/// A kernel-selection finding's words: the kernels one sequence lacks and
/// the other has, each named once, at most three of each, the rest counted.
#[test]
fn kernel_changes_name_three_of_each_side_and_count_the_rest() {
    use crate::gate::judge::workload::kernel_changes;
    let names = |text: &str| -> Vec<String> { text.split_whitespace().map(String::from).collect() };
    assert_eq!(
        kernel_changes(&names("a b c"), &names("c b a b")),
        "the same kernels in another order or number"
    );
    assert_eq!(kernel_changes(&names("a b"), &names("a c")), "−b, +c");
    assert_eq!(kernel_changes(&names("a a b"), &names("c c")), "−a, −b, +c");
    assert_eq!(
        kernel_changes(&names("g1 g2 g3 g4 g5 kept"), &names("kept n1 n2 n3 n4")),
        "−g1, −g2, −g3, +n1, +n2, +n3, 3 more"
    );
    assert_eq!(
        kernel_changes(&names("g1 g2 g3"), &names("n1 n2 n3")),
        "−g1, −g2, −g3, +n1, +n2, +n3"
    );
}
