//! Judge tests on the bundled example (three profiler steps, so per-step
//! samples): what a finding claims about its statistics — a range over too
//! few steps, one sample that cannot fail unless the noise of one call
//! (borrowed, else the policy's prior, raised to the timing jitter of a
//! short call) says so, and is inconclusive when it cannot; an
//! inconclusive change with its minimum detectable effect, the share warning below the impact minimum,
//! and the units of its limit.

use super::*;
use crate::analysis::ops::category::Category;
use crate::analysis::ops::stats::Stats;
use crate::analysis::profile::Phase;
use crate::gate::compare::tests::matched_row;
use crate::gate::compare::{CompareOptions, OpSide, PhaseOpComparison, compare};
use crate::gate::snapshot::OpSnapshot;
use crate::gate::snapshot::tests::example_snapshot;
use crate::gate::stats::IntervalKind;
use crate::gate::verdict::{Finding, NoiseSource, Per, SingleSampleNoise};

mod accept;
mod end_to_end;
mod families;
mod findings;
mod group_words;
mod groups;
mod integrity;
mod learned;
mod limits;
mod properties;
mod rows;
mod summary;
mod timeline;
mod verdict;
mod workload;

/// The verdict of `candidate` against `baseline` under the default policy,
/// as `check` judges one pair.
pub(crate) fn verdict_of(baseline: &Snapshot, candidate: &Snapshot) -> Verdict {
    verdict_under(baseline, candidate, &Policy::default())
}

/// The verdict of `candidate` against `baseline` under `policy`.
fn verdict_under(baseline: &Snapshot, candidate: &Snapshot, policy: &Policy) -> Verdict {
    let comparison = compare(
        std::slice::from_ref(baseline),
        candidate,
        &CompareOptions::default(),
    );
    verdict_of_comparison(comparison, candidate, policy)
}

/// `snapshot` compared with itself: every row matched and unchanged.
fn compared_with_itself(snapshot: &Snapshot) -> Comparison {
    compare(
        std::slice::from_ref(snapshot),
        snapshot,
        &CompareOptions::default(),
    )
}

/// A policy's ignore list covering the ops named by `names` (patterns as
/// a policy file writes them), parsed as the policy loader reads it.
fn ignore_list(names: &[&str]) -> Vec<crate::gate::policy::OpMatcher> {
    let entries: String = names
        .iter()
        .map(|name| format!("  - name: \"{name}\"\n"))
        .collect();
    Policy::from_yaml(&format!("version: 1\nignore:\n{entries}"), "policy.yaml")
        .expect("a valid policy")
        .ignore
}

/// The verdict on one comparison of one platform, as `check` judges a pair.
fn verdict_of_comparison(comparison: Comparison, candidate: &Snapshot, policy: &Policy) -> Verdict {
    judge(
        &[Workload::Compared {
            comparison,
            candidate,
            baseline_hardware: None,
            candidate_hardware: None,
        }],
        policy,
    )
}

/// The index of the row with the most time among those `keep` accepts.
fn largest_row_where(snapshot: &Snapshot, keep: impl Fn(&OpSnapshot) -> bool) -> Option<usize> {
    (0..snapshot.ops.len())
        .filter(|&i| keep(&snapshot.ops[i]))
        .max_by(|&a, &b| {
            snapshot.ops[a]
                .direct
                .sum
                .total_cmp(&snapshot.ops[b].direct.sum)
        })
}

/// The index of the row with the most time among those holding between
/// `low` and `high` % of the example's GPU time in all three steps.
fn row_with_share(snapshot: &Snapshot, low: f64, high: f64) -> usize {
    let busy = snapshot.timeline.busy_time;
    largest_row_where(snapshot, |op| {
        let share = op.direct.sum / busy * 100.0;
        op.step_us.len() == 3 && op.graph.is_none() && (low..high).contains(&share)
    })
    .unwrap_or_else(|| panic!("no row holds {low}–{high}% of the example's GPU time"))
}

/// The indices of `name`'s rows that run in all three of the example's
/// steps.
fn rows_in_every_step(snapshot: &Snapshot, name: &str) -> Vec<usize> {
    (0..snapshot.ops.len())
        .filter(|&i| snapshot.ops[i].name == name && snapshot.ops[i].step_us.len() == 3)
        .collect()
}

/// Two rows of one op that run in every step of `snapshot`.
fn two_shapes_of_one_op(snapshot: &Snapshot) -> [usize; 2] {
    snapshot
        .ops
        .iter()
        .map(|op| rows_in_every_step(snapshot, &op.name))
        .find(|rows| rows.len() >= 2)
        .map(|rows| [rows[0], rows[1]])
        .expect("an op of the example with two shapes in every step")
}

/// Row `index` with its calls ×`calls` and its steps ×`steps[i]`.
fn scaled(snapshot: &Snapshot, index: usize, calls: f64, steps: [f64; 3]) -> Snapshot {
    let mut copy = snapshot.clone();
    let op = &mut copy.ops[index];
    for sample in &mut op.samples_us {
        *sample *= calls;
    }
    for ((_, us), factor) in op.step_us.iter_mut().zip(steps) {
        *us *= factor;
    }
    op.direct = Stats::of(&op.samples_us);
    copy
}

fn findings_on<'a>(verdict: &'a Verdict, snapshot: &Snapshot, index: usize) -> Vec<&'a Finding> {
    let op = &snapshot.ops[index];
    verdict
        .findings
        .iter()
        .filter(|f| {
            f.op.as_ref().is_some_and(|r| {
                r.name == op.name && r.input_dims == op.input_dims && r.input_type == op.input_type
            })
        })
        .collect()
}

/// The regression finding on row `index`; panics, listing the findings,
/// when there is none.
fn regression_on<'a>(verdict: &'a Verdict, snapshot: &Snapshot, index: usize) -> &'a Finding {
    findings_on(verdict, snapshot, index)
        .into_iter()
        .find(|f| f.kind == FindingKind::Regression)
        .unwrap_or_else(|| panic!("{:#?}", verdict.findings))
}

#[test]
fn the_example_against_itself_has_no_finding_to_act_on() {
    let baseline = example_snapshot();
    let verdict = verdict_of(&baseline, &baseline);
    assert_eq!(verdict.outcome, Outcome::Pass);
    assert!(
        verdict
            .findings
            .iter()
            .all(|f| f.severity == Severity::Info),
        "{:#?}",
        verdict.findings
    );
}

#[test]
fn three_steps_give_a_range_and_a_confident_slowdown_fails() {
    let baseline = example_snapshot();
    let index = row_with_share(&baseline, 3.0, 100.0);
    let candidate = scaled(&baseline, index, 1.3, [1.3, 1.3, 1.3]);
    let verdict = verdict_of(&baseline, &candidate);
    let finding = regression_on(&verdict, &baseline, index);
    assert_eq!(finding.severity, Severity::Fail);
    let statistics = &finding.statistics;
    assert_eq!(statistics.interval_kind, Some(IntervalKind::Range));
    assert_eq!(statistics.confidence, None);
    assert_eq!(statistics.per, Some(Per::Step));
    assert_eq!(statistics.limit_unit.as_deref(), Some("%"));
    assert_eq!(finding.limit, Some(5.0));
    assert!(!statistics.inconclusive);
    assert!(
        finding
            .message
            .contains("slower per step (range over 3 steps +30.0% to +30.0%)"),
        "{}",
        finding.message
    );
    assert!(!finding.message.contains("95%"), "{}", finding.message);
    assert_eq!(verdict.counts.regressions, 1, "{:#?}", verdict.findings);
}

#[test]
fn steps_that_disagree_are_inconclusive_with_a_minimum_detectable_effect() {
    let baseline = example_snapshot();
    let index = row_with_share(&baseline, 3.0, 100.0);
    // Two steps 30% slower, one 3%: the median says +30%, the range
    // reaches back to +3%, surely slower but not surely beyond 5%.
    let candidate = scaled(&baseline, index, 1.2, [1.03, 1.3, 1.3]);
    let verdict = verdict_of(&baseline, &candidate);
    let found = findings_on(&verdict, &baseline, index);
    assert_eq!(found.len(), 1, "{:#?}", verdict.findings);
    let finding = found[0];
    assert_eq!(finding.kind, FindingKind::Regression);
    assert_eq!(finding.severity, Severity::Warn);
    assert!(finding.statistics.inconclusive);
    let mde = finding
        .statistics
        .min_detectable_effect_percent
        .expect("an MDE");
    assert!(mde > 30.0, "{mde}");
    assert!(
        finding.message.contains("inconclusive") && finding.message.contains("range over 3 steps"),
        "{}",
        finding.message
    );
    assert_eq!(verdict.outcome, Outcome::Pass);
    assert_eq!(verdict.counts.regressions, 0);
    assert_eq!(verdict.counts.warnings, 1);
    // A step 2% faster: the bounds hold no change, so it is information.
    let candidate = scaled(&baseline, index, 1.2, [0.98, 1.3, 1.3]);
    let verdict = verdict_of(&baseline, &candidate);
    let finding = regression_on(&verdict, &baseline, index);
    assert!(finding.statistics.inconclusive);
    assert_eq!(finding.severity, Severity::Info);
    assert_eq!(verdict.counts.warnings, 0);
}

/// The example with row `index` measured once, its call ×`factor`.
fn single(snapshot: &Snapshot, index: usize, factor: f64) -> Snapshot {
    let mut copy = snapshot.clone();
    let op = &mut copy.ops[index];
    op.samples_us = vec![op.direct.sum * factor];
    op.step_us.truncate(1);
    op.direct = Stats::of(&op.samples_us);
    copy
}

#[test]
fn one_sample_on_a_side_warns_and_says_why_without_a_noise_of_one_call() {
    let baseline = example_snapshot();
    let index = row_with_share(&baseline, 3.0, 100.0);
    let (before, after) = (single(&baseline, index, 1.0), single(&baseline, index, 1.5));
    let mut policy = Policy::default();
    policy.noise.borrow_for_single_samples = false;
    policy.noise.single_sample_sigma_percent = None;
    let verdict = verdict_under(&before, &after, &policy);
    let finding = regression_on(&verdict, &baseline, index);
    assert_eq!(finding.severity, Severity::Warn);
    assert_eq!(finding.statistics.single_sample_noise, None);
    assert_eq!(finding.interval_percent, None);
    assert_eq!(finding.statistics.per, Some(Per::Call));
    assert!(
        finding.message.contains("one call on a side: no interval")
            && finding.message.contains("cannot fail the build on its own"),
        "{}",
        finding.message
    );
    assert_eq!(verdict.outcome, Outcome::Pass);
}

#[test]
fn one_sample_far_beyond_the_borrowed_noise_fails_and_says_whose_noise() {
    let baseline = example_snapshot();
    let index = row_with_share(&baseline, 3.0, 100.0);
    let before = single(&baseline, index, 1.0);
    let comparison = compare(
        std::slice::from_ref(&before),
        &before,
        &CompareOptions::default(),
    );
    let noise = comparison
        .borrowed_noise
        .expect("the example's rows repeat");
    assert!(noise.rows >= 5 && noise.sigma > 0.0, "{noise:?}");
    // The borrowed noise alone, no timing jitter over the call's time.
    let mut policy = Policy::default();
    policy.noise.single_sample_jitter_us = None;
    // Beyond 5% + 3 × √2 σ: fails, and enters the false-discovery control.
    let far = 1.05 * (3.5 * std::f64::consts::SQRT_2 * noise.sigma).exp();
    let verdict = verdict_under(&before, &single(&baseline, index, far), &policy);
    let finding = regression_on(&verdict, &baseline, index);
    assert_eq!(finding.severity, Severity::Fail, "{}", finding.message);
    assert!(
        finding.message.contains(&format!(
            "one call a side; noise of one call ±{:.1}% from {} repeating rows of this trace",
            noise.sigma * 100.0,
            noise.rows
        )),
        "{}",
        finding.message
    );
    assert_eq!(verdict.outcome, Outcome::Fail);
    // Beyond 5% but within the noise: inconclusive, never a pass.
    let near = 1.05 * (2.0 * std::f64::consts::SQRT_2 * noise.sigma).exp();
    let verdict = verdict_under(&before, &single(&baseline, index, near), &policy);
    let finding = regression_on(&verdict, &baseline, index);
    assert_eq!(finding.severity, Severity::Fail, "{}", finding.message);
    assert!(finding.statistics.inconclusive);
    assert!(
        finding.message.contains("cannot tell from noise")
            && finding
                .message
                .contains("repeating rows of this trace): cannot tell"),
        "{}",
        finding.message
    );
    assert_eq!(verdict.outcome, Outcome::Inconclusive);
    assert_eq!(verdict.counts.regressions, 0);
    // Its line is inconclusive, not failing, and says what would settle it.
    let group = &verdict.groups[0];
    assert!(group.inconclusive && group.severity == Severity::Fail);
    assert!(finding.path_a.is_some() && group.path_a.is_none() && group.path_b.is_none());
    assert!(
        group
            .advice
            .as_deref()
            .is_some_and(|a| a.contains("Profile more steps")),
        "{:?}",
        group.advice
    );
    assert_eq!(
        (
            verdict.counts.failing_groups,
            verdict.counts.inconclusive_groups
        ),
        (0, 1)
    );
    // The same single call against itself: nothing.
    assert_eq!(
        verdict_under(&before, &before, &policy).outcome,
        Outcome::Pass
    );
}

/// The policy with no borrowed noise and a prior noise of one call of
/// `sigma_percent`, as when too few rows of a trace repeat.
fn prior_only(sigma_percent: f64) -> Policy {
    let mut policy = Policy::default();
    policy.noise.borrow_for_single_samples = false;
    policy.noise.single_sample_sigma_percent = Some(sigma_percent);
    policy.noise.single_sample_jitter_us = None;
    policy
}

#[test]
fn one_sample_beyond_the_prior_noise_fails_and_says_it_was_assumed() {
    let baseline = example_snapshot();
    let index = row_with_share(&baseline, 3.0, 100.0);
    let before = single(&baseline, index, 1.0);
    let policy = prior_only(3.0);
    // ×1.3 is beyond 5% + 3 × √2 × 3% (×1.20): fails, and says which noise.
    let verdict = verdict_under(&before, &single(&baseline, index, 1.3), &policy);
    let finding = regression_on(&verdict, &baseline, index);
    assert_eq!(finding.severity, Severity::Fail, "{}", finding.message);
    assert!(
        finding.message.contains(
            "one call a side; noise of one call assumed ±3% (policy \
             noise.single_sample_sigma_percent): too few rows of this trace repeat to measure it"
        ),
        "{}",
        finding.message
    );
    assert_eq!(
        finding.statistics.single_sample_noise,
        Some(SingleSampleNoise {
            sigma_percent: 3.0,
            source: NoiseSource::Prior,
            rows: None,
            call_us: Some(baseline.ops[index].direct.sum),
            jitter_us: None,
        })
    );
    assert_eq!(verdict.outcome, Outcome::Fail);
    // ×1.15 is beyond 5% but within the prior's noise: inconclusive.
    let verdict = verdict_under(&before, &single(&baseline, index, 1.15), &policy);
    let finding = regression_on(&verdict, &baseline, index);
    assert_eq!(finding.severity, Severity::Fail, "{}", finding.message);
    assert!(finding.statistics.inconclusive);
    assert!(
        finding
            .message
            .contains("strays ±3.0% here (assumed: policy"),
        "{}",
        finding.message
    );
    assert_eq!(verdict.outcome, Outcome::Inconclusive);
    // The same single call against itself: nothing.
    let itself = verdict_under(&before, &before, &policy);
    assert_eq!(itself.outcome, Outcome::Pass);
    assert!(itself.findings.is_empty(), "{:?}", itself.findings);
}

#[test]
fn borrowed_noise_comes_before_the_prior_and_is_named() {
    let baseline = example_snapshot();
    let index = row_with_share(&baseline, 3.0, 100.0);
    let before = single(&baseline, index, 1.0);
    // A prior so wide nothing fails under it: the borrowed noise decides.
    let mut policy = Policy::default();
    policy.noise.single_sample_sigma_percent = Some(100.0);
    let verdict = verdict_under(&before, &single(&baseline, index, 2.0), &policy);
    let finding = regression_on(&verdict, &baseline, index);
    assert_eq!(finding.severity, Severity::Fail, "{}", finding.message);
    let noise = finding
        .statistics
        .single_sample_noise
        .expect("judged on noise");
    assert_eq!(noise.source, NoiseSource::Borrowed);
    assert!(noise.rows.is_some_and(|rows| rows >= 5), "{noise:?}");
}

#[test]
fn a_fifth_slower_op_with_a_material_share_warns_below_the_impact_minimum() {
    let baseline = example_snapshot();
    // ×1.2 of 0.6–1.4% adds 0.12–0.28%: below the 0.3% minimum.
    let index = row_with_share(&baseline, 0.6, 1.4);
    let candidate = scaled(&baseline, index, 1.2, [1.2, 1.2, 1.2]);
    let verdict = verdict_of(&baseline, &candidate);
    let finding = regression_on(&verdict, &baseline, index);
    assert_eq!(finding.severity, Severity::Warn);
    assert!(
        finding
            .message
            .contains("less than the 0.3% impact minimum"),
        "{}",
        finding.message
    );
    assert_eq!(verdict.outcome, Outcome::Pass);
}

/// Below the material share (twice the impact minimum) a confident ×1.2
/// slowdown adding less than the minimum is no warning.
#[test]
fn a_fifth_slower_op_below_the_material_share_is_not_warned() {
    let baseline = example_snapshot();
    // ×1.2 of 0.05–0.5% adds at most 0.1%, and the row holds under 0.6%.
    let index = row_with_share(&baseline, 0.05, 0.5);
    let candidate = scaled(&baseline, index, 1.2, [1.2, 1.2, 1.2]);
    let verdict = verdict_of(&baseline, &candidate);
    let warned = findings_on(&verdict, &baseline, index)
        .into_iter()
        .any(|f| f.severity >= Severity::Warn);
    assert!(!warned, "{:#?}", verdict.findings);
    assert_eq!(verdict.outcome, Outcome::Pass);
}

#[test]
fn the_time_floor_follows_a_short_traces_scale() {
    let noise = Policy::default().noise;
    assert_eq!(noise.min_time_for(309.0), 3.09);
    assert_eq!(noise.min_time_for(1e6), 10.0);
}

/// The prior policy of `prior_only` with a timing jitter that makes the
/// noise of one call of row `index` `percent`%.
fn jitter_of(baseline: &Snapshot, index: usize, percent: f64) -> Policy {
    let mut policy = prior_only(3.0);
    policy.noise.single_sample_jitter_us = Some(baseline.ops[index].direct.sum * percent / 100.0);
    policy
}

#[test]
fn the_noise_of_one_call_is_its_floor_for_long_calls_and_the_jitter_over_short_ones() {
    let noise = Policy::default().noise;
    assert_eq!(noise.single_sample_sigma_percent, Some(3.5));
    assert_eq!(noise.single_sample_jitter_us, Some(2.5));
    // A long call: the floor (or the borrowed noise) holds.
    assert_eq!(noise.one_call_sigma_percent(3.5, 1000.0), 3.5);
    // A 41 µs call: 2.5 / 41 = 6.1%.
    let short = noise.one_call_sigma_percent(3.5, 41.0);
    assert!((short - 100.0 * 2.5 / 41.0).abs() < 1e-9, "{short}");
    // A borrowed 1% is raised for a 2.5 µs call.
    assert_eq!(noise.one_call_sigma_percent(1.0, 2.5), 100.0);
    // No jitter: the base alone.
    let mut off = noise.clone();
    off.single_sample_jitter_us = None;
    assert_eq!(off.one_call_sigma_percent(1.0, 2.5), 1.0);
}

#[test]
fn a_short_call_is_judged_against_its_jitter_and_says_so() {
    let baseline = example_snapshot();
    let index = row_with_share(&baseline, 3.0, 100.0);
    let before = single(&baseline, index, 1.0);
    // Jitter 10% of the call: ×1.3 is within 5% + 3 × √2 × 10% (×1.605).
    let policy = jitter_of(&baseline, index, 10.0);
    let verdict = verdict_under(&before, &single(&baseline, index, 1.3), &policy);
    let finding = regression_on(&verdict, &baseline, index);
    let noise = finding.statistics.single_sample_noise.expect("a noise");
    assert_eq!(noise.source, NoiseSource::Jitter);
    assert!((noise.sigma_percent - 10.0).abs() < 1e-9, "{noise:?}");
    assert!(finding.statistics.inconclusive);
    assert!(
        finding
            .message
            .contains("measured once a side is 30.0% slower")
            && finding
                .message
                .contains("strays ±10.0% here (timing jitter")
            && finding.message.contains("beyond the 5% threshold")
            && finding
                .message
                .contains("profile more steps or pass several baseline runs"),
        "{}",
        finding.message
    );
    let mde = finding
        .statistics
        .min_detectable_effect_percent
        .expect("MDE");
    assert!((mde - 60.5).abs() < 0.1, "{mde}");
    assert_eq!(verdict.outcome, Outcome::Inconclusive);
    // The borrowed noise is raised by the jitter too.
    let mut policy = Policy::default();
    policy.noise.single_sample_jitter_us = jitter_of(&baseline, index, 10.0)
        .noise
        .single_sample_jitter_us;
    let verdict = verdict_under(&before, &single(&baseline, index, 1.3), &policy);
    let noise = regression_on(&verdict, &baseline, index)
        .statistics
        .single_sample_noise
        .expect("a noise");
    assert_eq!(noise.source, NoiseSource::Jitter);
    assert!(noise.rows.is_some(), "{noise:?}");
}

#[test]
fn an_unconfirmed_single_sample_warns_under_its_knob_and_below_the_impact_minimum() {
    let baseline = example_snapshot();
    let index = row_with_share(&baseline, 3.0, 100.0);
    let before = single(&baseline, index, 1.0);
    let mut policy = jitter_of(&baseline, index, 10.0);
    policy.noise.on_unconfirmed_single_sample = Severity::Warn;
    let verdict = verdict_under(&before, &single(&baseline, index, 1.3), &policy);
    let finding = regression_on(&verdict, &baseline, index);
    assert_eq!(finding.severity, Severity::Warn);
    assert!(finding.statistics.inconclusive);
    assert_eq!(verdict.outcome, Outcome::Pass);
    // Below the impact minimum on a row holding a material share: a
    // warning as before, not inconclusive.
    let index = row_with_share(&baseline, 0.6, 1.4);
    let before = single(&baseline, index, 1.0);
    let policy = jitter_of(&baseline, index, 10.0);
    let verdict = verdict_under(&before, &single(&baseline, index, 1.2), &policy);
    let finding = regression_on(&verdict, &baseline, index);
    assert_eq!(finding.severity, Severity::Warn, "{}", finding.message);
    assert!(!finding.statistics.inconclusive);
    assert!(
        finding
            .message
            .contains("less than the 0.3% impact minimum")
    );
    assert_eq!(verdict.outcome, Outcome::Pass);
}

#[test]
fn an_unconfirmed_single_sample_is_named_before_the_timeline() {
    let baseline = example_snapshot();
    let index = row_with_share(&baseline, 3.0, 100.0);
    let before = single(&baseline, index, 1.0);
    let policy = jitter_of(&baseline, index, 10.0);
    let mut verdict = verdict_under(&before, &single(&baseline, index, 1.3), &policy);
    // A failing timeline finding adding more: the op still comes first.
    verdict.findings.insert(
        0,
        Finding {
            impact_percent: Some(50.0),
            priority: crate::gate::verdict::FindingPriority::Critical,
            ..Finding::new(
                "timeline",
                Severity::Fail,
                FindingKind::Timeline,
                "baseline",
                "busy time +50%".into(),
            )
        },
    );
    verdict.sort_findings();
    let first = &verdict.findings[0];
    assert_eq!(
        first.kind,
        FindingKind::Regression,
        "{:?}",
        verdict.findings
    );
    assert!(first.statistics.inconclusive);
    assert_eq!(verdict.findings[1].kind, FindingKind::Timeline);
}

/// The example with every op renamed: the same time, none of its rows.
fn renamed_ops(snapshot: &Snapshot) -> Snapshot {
    let mut copy = snapshot.clone();
    for op in &mut copy.ops {
        op.name = format!("other::{}", op.name);
    }
    copy
}

#[test]
fn sides_with_too_little_work_in_common_are_different_workloads_and_nothing_else() {
    let baseline = example_snapshot();
    let verdict = verdict_of(&baseline, &renamed_ops(&baseline));
    assert_eq!(verdict.outcome, Outcome::DifferentWorkloads);
    assert_eq!(verdict.outcome.exit_code(), 2);
    assert_eq!(verdict.findings.len(), 1, "{:#?}", verdict.findings);
    let finding = &verdict.findings[0];
    assert_eq!(finding.rule, "integrity.min_matched_share");
    assert!(
        finding
            .message
            .contains("these look like different workloads (0 of"),
        "{}",
        finding.message
    );
    assert!(
        verdict.headline.contains("different workloads"),
        "{}",
        verdict.headline
    );
    // Off at 0: judged as usual (nothing matches, which is its own finding).
    let mut policy = Policy::default();
    policy.integrity.min_matched_share = 0.0;
    let verdict = verdict_under(&baseline, &renamed_ops(&baseline), &policy);
    assert_ne!(verdict.outcome, Outcome::DifferentWorkloads);
    // The same work is one workload.
    assert_ne!(
        verdict_of(&baseline, &baseline).outcome,
        Outcome::DifferentWorkloads
    );
}

/// The example with `added_us` of idle time in each step (and the run).
fn idler(snapshot: &Snapshot, added_us: f64) -> Snapshot {
    let mut copy = snapshot.clone();
    let steps = copy.steps.len().max(1) as f64;
    for step in &mut copy.steps {
        step.timeline.idle_time += added_us;
        step.timeline.total_time += added_us;
    }
    copy.timeline.idle_time += added_us * steps;
    copy.timeline.total_time += added_us * steps;
    copy
}

/// The example with `added_us` of computation in each step (and the run).
fn busier(snapshot: &Snapshot, added_us: f64) -> Snapshot {
    let mut copy = snapshot.clone();
    let steps = copy.steps.len().max(1) as f64;
    for step in &mut copy.steps {
        step.timeline.computation_time += added_us;
        step.timeline.busy_time += added_us;
        step.timeline.total_time += added_us;
    }
    copy.timeline.computation_time += added_us * steps;
    copy.timeline.busy_time += added_us * steps;
    copy.timeline.total_time += added_us * steps;
    copy
}

/// The end-to-end finding of `candidate` against `baseline`, if any.
fn guard_of(baseline: &Snapshot, candidate: &Snapshot, policy: &Policy) -> Option<Finding> {
    verdict_under(baseline, candidate, policy)
        .findings
        .into_iter()
        .find(|f| f.rule == "end_to_end")
}

/// A host-bound step (idle five times the example's step): idle time added
/// within `idle_noise_percent` of the baseline's is reported, not judged;
/// beyond it, or with the allowance off, or beside added computation, the
/// step fails.
#[test]
fn idle_time_within_the_hosts_noise_is_reported_not_judged() {
    let example = example_snapshot();
    let baseline = idler(&example, 5.0 * example.steps[0].timeline.total_time);
    let idle_us = baseline.steps[0].timeline.idle_time;
    let policy = Policy::default();
    assert_eq!(policy.end_to_end.idle_noise_percent, Some(200.0));

    let within = guard_of(&baseline, &idler(&baseline, idle_us), &policy).expect("a finding");
    assert_eq!(within.severity, Severity::Info, "{}", within.message);
    assert!(within.message.contains("not judged"), "{}", within.message);
    let verdict = verdict_under(&baseline, &idler(&baseline, idle_us), &policy);
    assert_eq!(verdict.outcome, Outcome::Pass);

    let beyond = guard_of(&baseline, &idler(&baseline, 3.0 * idle_us), &policy).expect("a finding");
    assert_eq!(beyond.severity, Severity::Fail, "{}", beyond.message);
    assert!(
        beyond.message.contains("µs of idle time the host's"),
        "{}",
        beyond.message
    );

    let mut strict = Policy::default();
    strict.end_to_end.idle_noise_percent = None;
    let judged = guard_of(&baseline, &idler(&baseline, idle_us), &strict).expect("a finding");
    assert_eq!(judged.severity, Severity::Fail, "{}", judged.message);

    let step_us = baseline.steps[0].timeline.total_time;
    let computed = busier(&idler(&baseline, idle_us), 0.1 * step_us);
    let both = guard_of(&baseline, &computed, &policy).expect("a finding");
    assert_eq!(both.severity, Severity::Fail, "{}", both.message);
    // A tenth more computation alone is judged the same way.
    let alone = guard_of(&baseline, &busier(&baseline, 0.1 * step_us), &policy).expect("a finding");
    assert_eq!(alone.severity, Severity::Fail, "{}", alone.message);
    // Busy time holds no idle time: nothing to leave out of it.
    let mut busy = Policy::default();
    busy.end_to_end.metric = crate::gate::policy::TimelineMetric::BusyTime;
    let busy_step_us = baseline.steps[0].timeline.busy_time;
    let longer = busier(&idler(&baseline, idle_us), 0.1 * busy_step_us);
    let guard = guard_of(&baseline, &longer, &busy).expect("a finding");
    assert_eq!(guard.severity, Severity::Fail, "{}", guard.message);
    assert!(!guard.message.contains("idle time"), "{}", guard.message);
}

/// The guard's finding carries the figures its message states: the
/// timeline row it judged, its unit, the limit and the impact over the
/// baseline's GPU time.
#[test]
fn the_end_to_end_finding_carries_the_figures_it_judged() {
    let baseline = example_snapshot();
    let mut policy = Policy::default();
    policy.end_to_end.idle_noise_percent = None;
    let candidate = idler(&baseline, 0.2 * baseline.steps[0].timeline.total_time);
    let comparison = compare(
        std::slice::from_ref(&baseline),
        &candidate,
        &CompareOptions::default(),
    );
    let row = comparison
        .timeline
        .iter()
        .find(|t| t.metric == "total_time")
        .expect("a total_time row");
    let finding = guard_of(&baseline, &candidate, &policy).expect("a finding");
    assert_eq!(finding.metric, "total_time");
    assert_eq!(finding.unit, "µs");
    assert_eq!(finding.baseline, Some(row.baseline_us));
    assert_eq!(finding.candidate, Some(row.candidate_us));
    let delta = (row.candidate_us / row.baseline_us - 1.0) * 100.0;
    assert_eq!(finding.delta_percent, Some(delta));
    assert_eq!(finding.limit, Some(5.0));
    let added = row.candidate_us - row.baseline_us;
    let impact = added / comparison.baseline_total_us * 100.0;
    assert_eq!(finding.impact_percent, Some(impact));
    assert_eq!(finding.priority, super::findings::priority_of(delta));
    assert!(
        finding.message.contains(&format!("grew {delta:.1}%")),
        "{}",
        finding.message
    );
}

/// Where both sides have steps, time the run spent between its steps is
/// not the step's: a candidate longer only there has no end-to-end finding.
#[test]
fn time_between_steps_is_not_the_steps() {
    let baseline = example_snapshot();
    let mut candidate = baseline.clone();
    let added = baseline.timeline.total_time;
    candidate.timeline.idle_time += added;
    candidate.timeline.total_time += added;
    let mut strict = Policy::default();
    strict.end_to_end.idle_noise_percent = None;
    assert!(guard_of(&baseline, &candidate, &strict).is_none());
    // The same time inside the steps fails.
    let steps = baseline.steps.len() as f64;
    let inside = idler(&baseline, added / steps);
    let guard = guard_of(&baseline, &inside, &strict).expect("a finding");
    assert_eq!(guard.severity, Severity::Fail, "{}", guard.message);
}

#[test]
fn a_longer_step_fails_once_saying_where_the_time_went() {
    let baseline = example_snapshot();
    let step_us = baseline.steps[0].timeline.total_time;
    // A fifth of the step is within 200% of the example's idle time, the
    // host's noise (`idle_time_within_the_hosts_noise_is_reported_…`): off.
    let mut policy = Policy::default();
    policy.end_to_end.idle_noise_percent = None;
    let verdict = verdict_under(&baseline, &idler(&baseline, 0.2 * step_us), &policy);
    let guard: Vec<&Finding> = verdict
        .findings
        .iter()
        .filter(|f| f.rule == "end_to_end")
        .collect();
    assert_eq!(guard.len(), 1, "{:#?}", verdict.findings);
    assert_eq!(guard[0].severity, Severity::Fail);
    assert_eq!(verdict.outcome, Outcome::Fail);
    let message = &guard[0].message;
    assert!(message.contains("of which idle +"), "{message}");
    assert!(message.contains("(100%)"), "{message}");
    // Within the limit: nothing.
    let verdict = verdict_under(&baseline, &idler(&baseline, 0.02 * step_us), &policy);
    assert!(
        verdict.findings.iter().all(|f| f.rule != "end_to_end"),
        "{:#?}",
        verdict.findings
    );
    // Off with a null limit.
    let mut policy = Policy::default();
    policy.end_to_end.max_regression_percent = None;
    let verdict = verdict_under(&baseline, &idler(&baseline, 0.2 * step_us), &policy);
    assert!(verdict.findings.iter().all(|f| f.rule != "end_to_end"));
}

/// An op slowed in several shapes, none beyond the impact minimum alone, is
/// judged as one op, and its finding counts the op's shapes, not the
/// workload's other rows.
#[test]
fn an_op_slower_in_several_shapes_counts_its_own_shapes() {
    let snapshot = example_snapshot();
    let mut names: Vec<&str> = snapshot.ops.iter().map(|op| op.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    let mut grouped = 0;
    for name in names {
        let rows = rows_in_every_step(&snapshot, name);
        if rows.len() < 2 {
            continue;
        }
        let shapes = snapshot.ops.iter().filter(|op| op.name == name).count();
        for factor in [1.08, 1.12, 1.2, 1.3] {
            let candidate = rows.iter().fold(snapshot.clone(), |copy, &index| {
                scaled(&copy, index, factor, [factor; 3])
            });
            let verdict = verdict_of(&snapshot, &candidate);
            for finding in &verdict.findings {
                if finding
                    .message
                    .starts_with(&format!("{name} is slower in "))
                {
                    assert!(
                        finding
                            .message
                            .contains(&format!(" of its {shapes} shapes ")),
                        "{name} has {shapes} shapes: {}",
                        finding.message
                    );
                    grouped += 1;
                }
            }
        }
    }
    assert!(
        grouped > 0,
        "no op of the example was judged over its shapes"
    );
}

/// Across platforms, each ratio finding names the ratio the hardware model
/// gave its row and where it came from.
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
#[test]
fn a_cross_platform_finding_names_its_rows_expected_ratio() {
    use crate::gate::snapshot::tests::corpus_snapshot;
    let h100 = corpus_snapshot("tracelens/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz");
    let mi300 = corpus_snapshot("tracelens/mi300/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz");
    let catalog = crate::analysis::hardware::builtin_catalog();
    let hardware = |s: &Snapshot| s.fingerprint.catalog_hardware(&catalog);
    let (b, c) = (hardware(&h100), hardware(&mi300));
    let options = CompareOptions {
        baseline_hardware: b.clone(),
        candidate_hardware: c.clone(),
        ..CompareOptions::default()
    };
    let comparison = compare(std::slice::from_ref(&h100), &mi300, &options);
    let expected: Vec<(String, String)> = comparison
        .ops
        .iter()
        .filter_map(|op| {
            let ratio = op.expected?.ratio;
            Some((op.candidate.key.name.clone(), format!("{ratio:.2}")))
        })
        .collect();
    let verdict = judge(
        &[Workload::Compared {
            comparison,
            candidate: &mi300,
            baseline_hardware: b,
            candidate_hardware: c,
        }],
        &Policy::default(),
    );
    let mut named = 0;
    for finding in &verdict.findings {
        if !finding.message.contains("the hardware explains") {
            continue;
        }
        let op = finding.op.as_ref().expect("a row's finding");
        let matches = expected.iter().any(|(name, ratio)| {
            name == &op.name
                && finding
                    .message
                    .contains(&format!("than the {ratio} the hardware explains (roofline"))
        });
        assert!(matches, "{}", finding.message);
        named += 1;
    }
    assert!(named > 0, "{:#?}", verdict.findings);
}

/// A shape confidently slower per call whose time did not change (fewer
/// calls, each slower) adds nothing to its op's grouped slowdown: the group
/// counts only the shapes whose time rose. The group's Δ is its rows'
/// median, its times their sums.
#[test]
fn a_shape_slower_per_call_but_not_in_time_stays_out_of_its_ops_group() {
    let snapshot = example_snapshot();
    let mut rows = snapshot
        .ops
        .iter()
        .map(|op| rows_in_every_step(&snapshot, &op.name))
        .find(|rows| rows.len() >= 3)
        .expect("an op of the example with three shapes in every step");
    // The two smallest shapes slow down; the largest stays.
    rows.sort_by(|&a, &b| {
        snapshot.ops[a]
            .direct
            .sum
            .total_cmp(&snapshot.ops[b].direct.sum)
    });
    let rows = [rows[0], rows[1], rows[rows.len() - 1]];
    let name = snapshot.ops[rows[0]].name.clone();
    let grouped = |verdict: &Verdict| -> Option<Finding> {
        verdict
            .findings
            .iter()
            .find(|f| f.message.starts_with(&format!("{name} is slower in ")))
            .cloned()
    };
    // Two shapes slower by a factor that leaves each under the impact
    // minimum and the two together above it.
    let (factor, candidate, group) = [1.08, 1.12, 1.2, 1.3, 1.5]
        .into_iter()
        .find_map(|factor| {
            let candidate = rows[..2].iter().fold(snapshot.clone(), |copy, &index| {
                scaled(&copy, index, factor, [factor; 3])
            });
            let group = grouped(&verdict_of(&snapshot, &candidate))?;
            Some((factor, candidate, group))
        })
        .expect("a factor that groups the two shapes");
    // The group's figures: its rows' median Δ (both ×factor) and summed
    // times, as its message says.
    let delta = group.delta_percent.expect("a Δ");
    assert!(
        (delta - (factor - 1.0) * 100.0).abs() < 1e-9,
        "{delta} at ×{factor}"
    );
    assert!(
        group.message.contains(&format!("(median {delta:+.1}%")),
        "{}",
        group.message
    );
    let (before, after) = (
        group.baseline.expect("baseline"),
        group.candidate.expect("candidate"),
    );
    assert!(
        (after / before - factor).abs() < 1e-9,
        "{before} → {after} at ×{factor}"
    );
    let impact = group.impact_percent.expect("an impact");
    assert!(
        group
            .message
            .contains(&format!("{impact:+.2}% of total GPU time together")),
        "{}",
        group.message
    );
    let mut comparison = compare(
        std::slice::from_ref(&snapshot),
        &candidate,
        &CompareOptions::default(),
    );
    let (slowed, unchanged) = (
        matched_row(&comparison, &snapshot.ops[rows[0]]),
        matched_row(&comparison, &snapshot.ops[rows[2]]),
    );
    let slower = comparison.ops[slowed].clone();
    let still = &mut comparison.ops[unchanged];
    still.estimate = slower.estimate;
    still.noise = slower.noise;
    still.impact_us = 0.0;
    still.impact_percent = 0.0;
    let verdict = verdict_of_comparison(comparison, &candidate, &Policy::default());
    let message = grouped(&verdict)
        .expect("the two shapes still grouped")
        .message;
    assert!(
        message.starts_with(&format!("{name} is slower in 2 of its ")),
        "{message}"
    );
}

/// A pass whose only failing finding was accepted says so in its headline;
/// a pass with nothing to report says there are no regressions.
#[test]
fn the_headline_of_a_pass_names_its_accepted_findings() {
    let baseline = example_snapshot();
    let index = row_with_share(&baseline, 3.0, 100.0);
    let candidate = scaled(&baseline, index, 1.3, [1.3; 3]);
    let name = baseline.ops[index].name.clone();
    let mut policy = Policy::default();
    policy
        .accept
        .push(crate::gate::policy::Accept::from_arg(&name, "#12").expect("an accept entry"));
    let verdict = verdict_under(&baseline, &candidate, &policy);
    assert_eq!(verdict.outcome, Outcome::Pass, "{:#?}", verdict.findings);
    let accepted = verdict.counts.accepted;
    assert!(accepted > 0, "{:#?}", verdict.findings);
    let plural = if accepted == 1 { "" } else { "s" };
    assert!(
        verdict.headline.starts_with(&format!(
            "☑️ tracegate: passed with {accepted} accepted finding{plural}: "
        )) && verdict.headline.contains(&name),
        "{}",
        verdict.headline
    );
    let unchanged = verdict_of(&baseline, &baseline);
    assert!(
        unchanged
            .headline
            .starts_with("✅ tracegate: no regressions ("),
        "{}",
        unchanged.headline
    );
}

/// The regression findings on ops named `name`.
/// Asserts that `verdict` has `expected` regressions about op `name`,
/// listing its findings when not.
fn assert_regressions_named(verdict: &Verdict, name: &str, expected: usize) {
    assert_eq!(
        regressions_named(verdict, name),
        expected,
        "{:#?}",
        verdict.findings
    );
}

fn regressions_named(verdict: &Verdict, name: &str) -> usize {
    verdict
        .findings
        .iter()
        .filter(|f| f.kind == FindingKind::Regression)
        .filter(|f| f.op.as_ref().is_some_and(|op| op.name == name))
        .count()
}

/// A collective's row is left to the timeline's exposed-communication
/// rule: the same slowdown that fails a compute row raises nothing on it.
#[test]
fn a_slower_collective_is_not_judged_as_compute() {
    let baseline = example_snapshot();
    let index = row_with_share(&baseline, 3.0, 100.0);
    let candidate = scaled(&baseline, index, 1.5, [1.5, 1.5, 1.5]);
    let verdict = verdict_of(&baseline, &candidate);
    assert_eq!(
        regression_on(&verdict, &baseline, index).severity,
        Severity::Fail
    );

    let as_collective = |snapshot: &Snapshot| {
        let mut copy = snapshot.clone();
        copy.ops[index].category = Category::Comm;
        copy
    };
    let (baseline, candidate) = (as_collective(&baseline), as_collective(&candidate));
    let verdict = verdict_of(&baseline, &candidate);
    let name = &baseline.ops[index].name;
    assert_eq!(
        regressions_named(&verdict, name),
        0,
        "{:#?}",
        verdict.findings
    );
}

/// An op whose shapes changed is judged by its total: its new and missing
/// shapes raise no finding of their own. An op of another name at the
/// same call site, or of the same name at another, is new on its own.
#[test]
fn new_and_missing_shapes_of_an_op_with_a_total_are_left_to_the_total() {
    let snapshot = example_snapshot();
    let index = row_with_share(&snapshot, 3.0, 100.0);
    let mut comparison = compared_with_itself(&snapshot);
    let row = comparison.ops[matched_row(&comparison, &snapshot.ops[index])].clone();
    let reshaped = |mut side: OpSide| {
        side.key.input_dims = "[[12345]]".to_string();
        side
    };
    comparison.op_totals.push(row.clone());
    comparison.new_ops.push(reshaped(row.candidate.clone()));
    comparison.missing_ops.push(reshaped(row.baseline.clone()));
    let mut other_name = row.candidate.clone();
    other_name.key.name = "aten::other_op".to_string();
    let mut other_site = row.candidate.clone();
    other_site.module_path = Some("Elsewhere/Linear".to_string());
    comparison.new_ops.extend([other_name, other_site]);

    let verdict = verdict_of_comparison(comparison, &snapshot, &Policy::default());
    let of_kind = |kind: FindingKind| -> Vec<(&str, Option<&str>)> {
        verdict
            .findings
            .iter()
            .filter(|f| f.kind == kind)
            .filter_map(|f| f.op.as_ref())
            .map(|op| (op.name.as_str(), op.module_path.as_deref()))
            .collect()
    };
    assert_eq!(
        of_kind(FindingKind::NewOp),
        [
            ("aten::other_op", row.candidate.module_path.as_deref()),
            (row.candidate.key.name.as_str(), Some("Elsewhere/Linear")),
        ]
    );
    assert_eq!(of_kind(FindingKind::MissingOp), []);
}

/// The example with one row ×`factor` slower, compared, that row moved
/// from the matched rows to the op totals (as an op whose shapes all
/// changed is compared); the row's name and the candidate.
fn slower_total(factor: f64) -> (Comparison, String, Snapshot) {
    let baseline = example_snapshot();
    let index = row_with_share(&baseline, 3.0, 100.0);
    let candidate = scaled(&baseline, index, factor, [factor; 3]);
    let mut comparison = compare(
        std::slice::from_ref(&baseline),
        &candidate,
        &CompareOptions::default(),
    );
    let total = comparison
        .ops
        .remove(matched_row(&comparison, &candidate.ops[index]));
    comparison.op_totals = vec![total];
    // Only the total speaks for the op: its phase rows, kernel parts and
    // kernel families would judge the same slowdown.
    comparison.phase_ops.clear();
    comparison.kernel_parts.clear();
    comparison.kernel_families.clear();
    (comparison, baseline.ops[index].name.clone(), candidate)
}

/// The example's comparison with one row below the time floor 1.5×
/// slower and nothing else judging it (no op total, phase rows, kernel
/// parts or families); the row's index in it, its op name, the candidate,
/// and a policy under which the row alone fails: its floor exactly the
/// row's larger side, no impact minimum.
fn small_slower_row() -> (Comparison, usize, String, Snapshot, Policy) {
    let baseline = example_snapshot();
    let floor = Policy::default()
        .noise
        .min_time_for(baseline.timeline.busy_time);
    let index = largest_row_where(&baseline, |op| {
        op.step_us.len() == 3
            && op.graph.is_none()
            && op.direct.sum > 0.0
            && op.direct.sum * 1.5 < floor
    })
    .expect("a row below the example's time floor");
    let candidate = scaled(&baseline, index, 1.5, [1.5; 3]);
    let mut comparison = compare(
        std::slice::from_ref(&baseline),
        &candidate,
        &CompareOptions::default(),
    );
    comparison.op_totals.clear();
    comparison.phase_ops.clear();
    comparison.kernel_parts.clear();
    comparison.kernel_families.clear();
    let row = matched_row(&comparison, &candidate.ops[index]);
    let op = &comparison.ops[row];
    let mut policy = Policy::default();
    policy.noise.min_time_us = op.baseline.time_us.max(op.candidate.time_us);
    policy.noise.min_impact_percent = 0.0;
    let name = baseline.ops[index].name.clone();
    (comparison, row, name, candidate, policy)
}

/// An op total is judged as a row is: a slower total fails once; not
/// again when a row of the op is already flagged, not for a collective,
/// and not when both sides are below a row's time floor (at exactly the
/// floor it is judged).
#[test]
fn a_slower_op_total_fails_once_unless_left_to_another_rule() {
    let policy = Policy::default();
    let (comparison, name, candidate) = slower_total(1.5);
    let verdict = verdict_of_comparison(comparison.clone(), &candidate, &policy);
    assert_regressions_named(&verdict, &name, 1);

    let mut flagged_row_too = comparison.clone();
    flagged_row_too.ops.push(comparison.op_totals[0].clone());
    let verdict = verdict_of_comparison(flagged_row_too, &candidate, &policy);
    assert_regressions_named(&verdict, &name, 1);

    let mut collective = comparison.clone();
    collective.op_totals[0].candidate.category = Category::Comm;
    let verdict = verdict_of_comparison(collective, &candidate, &policy);
    assert_regressions_named(&verdict, &name, 0);

    // The floor is a row's, min(`min_time_us`, 1% of the workload's GPU
    // time): a total holding several percent is judged however high
    // `min_time_us` is; a total below the floor on both sides is not, one
    // exactly at it is.
    let mut high_floor = Policy::default();
    high_floor.noise.min_time_us = 1e12;
    let verdict = verdict_of_comparison(comparison.clone(), &candidate, &high_floor);
    assert_regressions_named(&verdict, &name, 1);
    let (mut small, row, small_name, small_candidate, at_floor) = small_slower_row();
    small.op_totals = vec![small.ops.remove(row)];
    let mut above_floor = at_floor.clone();
    above_floor.noise.min_time_us *= 1.01;
    for (policy, judged) in [(&at_floor, 1), (&above_floor, 0)] {
        let verdict = verdict_of_comparison(small.clone(), &small_candidate, policy);
        assert_eq!(
            regressions_named(&verdict, &small_name),
            judged,
            "minimum {} µs",
            policy.noise.min_time_us
        );
    }

    // The total's measured run-to-run noise (a fraction) raises its
    // threshold: a 50% slowdown passes 40% of noise and not 60%.
    for (noise, judged) in [(0.4, 1), (0.6, 0)] {
        let mut noisy = comparison.clone();
        noisy.op_totals[0].noise = Some(noise);
        let verdict = verdict_of_comparison(noisy, &candidate, &policy);
        assert_eq!(regressions_named(&verdict, &name), judged, "noise {noise}");
    }
}

/// An op row of one phase is judged as a row is, its finding naming the
/// phase; a collective's is left to the timeline.
#[test]
fn a_slower_op_in_one_phase_fails_naming_the_phase() {
    let policy = Policy::default();
    let (mut comparison, name, candidate) = slower_total(1.5);
    let row = comparison.op_totals.remove(0);
    comparison.phase_ops = vec![PhaseOpComparison {
        phase: Phase::Decode,
        comparison: row,
    }];
    let verdict = verdict_of_comparison(comparison.clone(), &candidate, &policy);
    let found: Vec<&Finding> = verdict
        .findings
        .iter()
        .filter(|f| f.kind == FindingKind::Regression)
        .collect();
    assert_eq!(found.len(), 1, "{:#?}", verdict.findings);
    assert_eq!(found[0].metric, "op time per decode step");
    let message = &found[0].message;
    assert!(
        message.starts_with(&format!("{name} in decode steps"))
            && message.contains(" is 50.0% slower per decode step (range over 3 decode steps "),
        "{message}"
    );

    comparison.phase_ops[0].comparison.candidate.category = Category::Comm;
    let verdict = verdict_of_comparison(comparison, &candidate, &policy);
    assert_regressions_named(&verdict, &name, 0);
}
