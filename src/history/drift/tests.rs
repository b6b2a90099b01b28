//! Drift tests: the fixture of five +1.5% merges (drift fails on
//! the fifth and lists the five commits, no single merge fails a single
//! check — with the gate's own compare and judge on a corpus snapshot ×1.015
//! under the default policy), short histories, improvements, per-op drift
//! and the finding.

use super::*;
use crate::analysis::ops::stats::Stats;
use crate::analysis::timeline::Breakdown;
use crate::gate::judge::tests::verdict_of;
use crate::gate::snapshot::tests::{corpus_snapshot, example_snapshot};
use crate::gate::verdict::Outcome;
use crate::history::entry::Origin;

/// A run of workload `w` at `commit` with `us` of computation per step
/// (4 steps, busy time 10% above computation).
fn entry(commit: &str, us: f64) -> EntryMeta {
    EntryMeta {
        workload: "w".into(),
        commit: commit.into(),
        branch: Some("main".into()),
        time: String::new(),
        pr: None,
        run_url: None,
        hardware: None,
        gpus: String::new(),
        runtime: None,
        pytorch: None,
        steps: 4,
        computation_time_us: us * 4.0,
        busy_time_us: us * 4.4,
        file: String::new(),
    }
}

/// `flat` runs at 10 ms per step, then `merges` runs each 1.5% slower than
/// the one before: commits `base0`…, `merge1`….
fn fixture(flat: usize, merges: usize) -> Vec<EntryMeta> {
    let mut runs: Vec<EntryMeta> = (0..flat)
        .map(|i| entry(&format!("base{i}"), 10_000.0))
        .collect();
    runs.extend((1..=merges).map(|k| {
        entry(
            &format!("merge{k}aaaaaaa"),
            10_000.0 * 1.015f64.powi(k as i32),
        )
    }));
    runs
}

fn rule(merges: usize, limit_percent: f64) -> DriftRule {
    DriftRule {
        merges,
        limit_percent,
        ..DriftRule::default()
    }
}

#[test]
fn five_merges_of_one_and_a_half_percent_fail_on_the_fifth_listing_them() {
    let runs = fixture(1, 5);
    let rule = rule(5, 5.0);
    // Each merge as the candidate against the runs before it: the first
    // four have no run five merges back.
    for k in 1..5 {
        assert_eq!(
            workload_drift(&runs[..k], &runs[k], &rule),
            None,
            "merge {k}"
        );
    }
    let drift = workload_drift(&runs[..5], &runs[5], &rule).expect("the fifth drifts");
    assert_eq!(drift.reference_commit, "base0");
    let commits: Vec<&str> = drift.steps.iter().map(|s| s.commit.as_str()).collect();
    assert_eq!(
        commits,
        [1, 2, 3, 4, 5].map(|k| format!("merge{k}aaaaaaa")),
        "oldest first, the candidate last"
    );
    for step in &drift.steps {
        assert!((step.delta_percent - 1.5).abs() < 1e-9, "{step:?}");
    }
    assert!((drift.total_percent - 7.728).abs() < 0.001, "{drift:?}");
    assert_eq!(drift.workload, "w");
    // No single merge exceeds a single check's limit (the gate's is the
    // noise floor, 3%, at least: see the corpus test below).
    let single = DriftRule {
        merges: 1,
        limit_percent: 3.0,
        ..DriftRule::default()
    };
    for k in 1..=5 {
        assert_eq!(workload_drift(&runs[..k], &runs[k], &single), None);
    }
}

#[test]
fn with_a_longer_history_the_limit_is_reached_after_its_share_of_merges() {
    // +1.5% compounds to +4.6% over three merges, +6.1% over four and
    // +7.7% over five: a 5% limit fails on the fourth, a 7% one on the
    // fifth.
    let runs = fixture(6, 5);
    let first_failure = |limit: f64| {
        (6..11)
            .find(|&i| workload_drift(&runs[..i], &runs[i], &rule(5, limit)).is_some())
            .map(|i| i - 5)
    };
    assert_eq!(first_failure(5.0), Some(4));
    assert_eq!(first_failure(7.0), Some(5));
    assert_eq!(first_failure(8.0), None);
}

#[test]
fn faster_is_never_drift_and_short_histories_say_nothing() {
    let mut runs = fixture(1, 0);
    runs.extend((1..=5).map(|k| entry(&format!("m{k}"), 10_000.0 * 0.98f64.powi(k))));
    assert_eq!(workload_drift(&runs[..5], &runs[5], &rule(5, 5.0)), None);
    assert_eq!(workload_drift(&[], &runs[0], &rule(5, 5.0)), None);
    assert_eq!(workload_drift(&runs[..5], &runs[5], &rule(0, 5.0)), None);
}

#[test]
fn the_finding_names_the_rule_the_total_and_every_commit() {
    let runs = fixture(1, 5);
    let drift = workload_drift(&runs[..5], &runs[5], &rule(5, 5.0)).expect("drift");
    let finding = drift.finding(Severity::Fail);
    assert_eq!(finding.rule, "drift");
    assert_eq!(finding.severity, Severity::Fail);
    assert_eq!(finding.kind, FindingKind::Timeline);
    assert_eq!(finding.workload, "w");
    assert_eq!(
        finding.message,
        "computation time +7.7% over the last 5 merges, beyond the 5% drift limit \
         (since base0: merge1a +1.5%, merge2a +1.5%, merge3a +1.5%, merge4a +1.5%, merge5a +1.5%)"
    );
    assert_eq!(finding.baseline, Some(10_000.0));
    assert_eq!(finding.limit, Some(5.0));
    assert_eq!(finding.statistics.per, Some(Per::Step));
    // 773 µs added to 11,000 µs of busy time per step: 7.0%.
    assert_eq!(finding.priority, FindingPriority::Critical);
    assert_eq!(finding.metric, "computation_time_per_step");
}

/// The message names up to ten merges and counts the rest: ten are all
/// named, twelve are ten named and "2 more".
#[test]
fn the_finding_lists_ten_merges_and_counts_the_others() {
    for (merges, listed, more) in [
        (10, 10, None),
        (11, 10, Some("1 more")),
        (12, 10, Some("2 more")),
    ] {
        let runs = fixture(1, merges);
        let drift =
            workload_drift(&runs[..merges], &runs[merges], &rule(merges, 5.0)).expect("drift");
        let message = drift.finding(Severity::Fail).message;
        let commits = message.matches("merge").count() - 1; // "the last N merges"
        assert_eq!(commits, listed, "{message}");
        let counted = message.trim_end_matches(')').rsplit(", ").next();
        match more {
            Some(more) => assert_eq!(counted, Some(more), "{message}"),
            None => assert!(!message.contains(" more"), "{message}"),
        }
    }
}

/// The example snapshot with every row of `op` `factor` times slower.
fn op_scaled(snapshot: &Snapshot, op: &str, factor: f64) -> Snapshot {
    let mut copy = snapshot.clone();
    for row in copy.ops.iter_mut().filter(|row| row.name == op) {
        scale_stats(&mut row.direct, factor);
    }
    copy
}

fn scale_stats(stats: &mut Stats, factor: f64) {
    stats.sum *= factor;
    stats.mean *= factor;
    stats.median *= factor;
    stats.min *= factor;
    stats.max *= factor;
    stats.std = stats.std.map(|s| s * factor);
}

#[test]
fn an_op_drifting_alone_is_named_and_the_others_are_not() {
    let example = example_snapshot();
    let times = op_times_per_step(&example);
    let busy = example.timeline.busy_time / example.steps.len().max(1) as f64;
    let (top, _) = times
        .iter()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .expect("the example has ops");
    assert!(times[top] / busy >= 0.01);
    let runs: Vec<(EntryMeta, Snapshot)> = (0..=5)
        .map(|k| {
            let snapshot = op_scaled(&example, top, 1.03f64.powi(k));
            let origin = Origin {
                commit: format!("c{k}"),
                ..Origin::default()
            };
            (EntryMeta::of_snapshot(&snapshot, origin), snapshot)
        })
        .collect();
    let drifts = op_drift(&runs[..5], &runs[5], &rule(5, 10.0));
    assert_eq!(drifts.len(), 1, "{drifts:#?}");
    let drift = &drifts[0];
    assert_eq!(
        drift.op.as_ref().map(|op| op.name.as_str()),
        Some(top.as_str())
    );
    assert!((drift.total_percent - 15.927).abs() < 0.01, "{drift:?}");
    // Its impact is the time it added over the reference run's GPU busy
    // time per step (the op's own growth is its total).
    let added = drift.candidate_us - drift.reference_us;
    assert!(
        (drift.impact_percent - added / busy * 100.0).abs() < 1e-9,
        "{drift:?}"
    );
    assert!(drift.impact_percent < drift.total_percent, "{drift:?}");
    assert_eq!(drift.steps.len(), 5);
    let finding = drift.finding(Severity::Warn);
    assert_eq!(finding.kind, FindingKind::Regression);
    assert_eq!(finding.metric, "GPU time per step (all shapes)");
    // The finding carries the drift's figures, per step, as the comment
    // and report.json show them.
    assert_eq!(finding.baseline, Some(drift.reference_us));
    assert_eq!(finding.candidate, Some(drift.candidate_us));
    assert_eq!(finding.delta_percent, Some(drift.total_percent));
    assert_eq!(finding.limit, Some(10.0));
    assert_eq!(finding.impact_percent, Some(drift.impact_percent));
    assert_eq!(
        finding.priority,
        FindingPriority::of_impact(drift.impact_percent)
    );
    assert_eq!(finding.unit, "µs");
    assert_eq!(finding.statistics.per, Some(Per::Step));
    assert_eq!(finding.statistics.limit_unit.as_deref(), Some("%"));
    // The finding is the op's: the comment's row, `accept` and the replay
    // selection read its name there, not in the message.
    assert_eq!(finding.op, drift.op);
    assert_eq!(
        finding.op.as_ref().map(|op| op.name.as_str()),
        Some(top.as_str())
    );
    // It is the candidate's workload's, as the workload's own drift is.
    assert_eq!(drift.workload, runs[5].0.workload);
    assert!(!drift.workload.is_empty());
    // Its category is its own row's (the comment groups rows by it).
    let category = example
        .ops
        .iter()
        .find(|op| &op.name == top)
        .map(|op| op.category.as_str());
    assert_eq!(drift.op.as_ref().map(|op| op.category.as_str()), category);
    assert!(
        finding
            .message
            .starts_with(&format!("{top} GPU time +15.9% over the last 5 merges"))
    );
    // Within the limit, or below the share floor, nothing.
    assert!(op_drift(&runs[..5], &runs[5], &rule(5, 20.0)).is_empty());
    let floor = DriftRule {
        min_share_percent: 100.0,
        ..rule(5, 10.0)
    };
    assert!(op_drift(&runs[..5], &runs[5], &floor).is_empty());
    // A candidate without a busy time gives no op a share to weigh.
    let mut idle = runs[5].clone();
    idle.0.busy_time_us = 0.0;
    assert!(op_drift(&runs[..5], &idle, &rule(5, 10.0)).is_empty());
}

fn scale_breakdown(timeline: &mut Breakdown, factor: f64) {
    for time in [
        &mut timeline.computation_time,
        &mut timeline.exposed_comm_time,
        &mut timeline.exposed_memcpy_time,
        &mut timeline.busy_time,
        &mut timeline.idle_time,
        &mut timeline.total_time,
        &mut timeline.total_comm_time,
        &mut timeline.total_memcpy_time,
    ] {
        *time *= factor;
    }
}

/// A snapshot with every time `factor` times longer: the whole run
/// uniformly slower, as one +1.5% merge makes it.
fn scaled(snapshot: &Snapshot, factor: f64) -> Snapshot {
    let mut copy = snapshot.clone();
    scale_breakdown(&mut copy.timeline, factor);
    for step in &mut copy.steps {
        step.host_duration_us *= factor;
        step.kernel_time_us *= factor;
        scale_breakdown(&mut step.timeline, factor);
    }
    for op in &mut copy.ops {
        scale_stats(&mut op.direct, factor);
        op.samples_us.iter_mut().for_each(|us| *us *= factor);
        op.step_us.iter_mut().for_each(|(_, us)| *us *= factor);
        op.kernel_us.iter_mut().for_each(|(_, us)| *us *= factor);
    }
    copy.short_kernels.time_us *= factor;
    copy.idle.host_wait_us *= factor;
    copy.idle.kernel_wait_us *= factor;
    copy
}

/// The other half of the fixture: one +1.5% merge passes the gate's single
/// check under the default policy, on every h100 corpus workload.
#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn one_merge_of_one_and_a_half_percent_passes_a_verdict_of() {
    for relative in [
        "tracelens/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
        "tracelens/h100/gaunernst_bert-small-uncased__1016001.json.gz",
        "tracelens/h100/facebook_timesformer-base-finetuned-k400__1016002.json.gz",
    ] {
        let baseline = corpus_snapshot(relative);
        let verdict = verdict_of(&baseline, &scaled(&baseline, 1.015));
        assert_ne!(
            verdict.outcome,
            Outcome::Fail,
            "{relative}: {:#?}",
            verdict.findings
        );
        assert!(
            verdict
                .findings
                .iter()
                .all(|f| f.severity != Severity::Fail),
            "{relative}: {:#?}",
            verdict.findings
        );
    }
    // The same check sees the five merges together: +7.7% fails.
    let baseline = corpus_snapshot("tracelens/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz");
    let verdict = verdict_of(&baseline, &scaled(&baseline, 1.015f64.powi(5)));
    assert_eq!(verdict.outcome, Outcome::Fail, "{:#?}", verdict.findings);
}

/// A deterministic factor in [1 − share, 1 + share] for `seed` (a 64-bit
/// mix).
fn within(seed: u64, share: f64) -> f64 {
    let mut x = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    let unit = (x ^ (x >> 31)) as f64 / u64::MAX as f64;
    1.0 + 2.0 * share * (unit - 0.5)
}

/// Runs whose value carries correlated noise: the run ±`share` and the
/// value's own ±`share` (a kernel name's), none of it a change of the code.
fn noisy(runs: u64, salt: u64, share: f64) -> Vec<EntryMeta> {
    (0..runs)
        .map(|i| {
            let us = 10_000.0 * within(salt + 2 * i, share) * within(salt + 2 * i + 1, share);
            entry(&format!("noisy{i}"), us)
        })
        .collect()
}

#[test]
fn correlated_run_noise_does_not_drift_but_two_merges_beyond_it_do() {
    let rule = rule(5, 5.0);
    for salt in 0..40 {
        let runs = noisy(21, salt * 100, 0.02);
        let (history, candidate) = runs.split_at(20);
        // The candidate a +1.5% merge on a noisy run: within the noise.
        let mut merged = candidate[0].clone();
        merged.computation_time_us *= 1.015;
        assert_eq!(workload_drift(history, &merged, &rule), None, "salt {salt}");
        // Two merges of a tenth each are beyond any noise the history
        // measured (one merge holding it all would be a step, not drift).
        let mut drifted = history.to_vec();
        let last = drifted.len() - 1;
        drifted[last].computation_time_us *= 1.1;
        let mut jumped = candidate[0].clone();
        jumped.computation_time_us *= 1.1 * 1.1;
        let drift = workload_drift(&drifted, &jumped, &rule).expect("two tenths drift");
        assert!(drift.limit_percent >= 5.0, "{drift:?}");
    }
    // Without noise in the history, the limit stays the policy's.
    let runs = fixture(6, 5);
    let drift = workload_drift(&runs[..10], &runs[10], &rule).expect("drifts");
    assert_eq!(drift.limit_percent, 5.0);
}

/// Runs ±6% twice over: one run against another can differ by more than
/// the policy's 5% with several merges adding to it, and the limit raised
/// to three times the spread the history measured keeps that from
/// drifting; a real drift is judged against exactly that raised limit.
#[test]
fn the_noise_the_history_measured_raises_the_limit() {
    let five = rule(5, 5.0);
    let mut beyond_the_policy = 0;
    for salt in 0..40 {
        let runs = noisy(21, salt * 100, 0.06);
        let (history, candidate) = runs.split_at(20);
        assert_eq!(
            workload_drift(history, &candidate[0], &five),
            None,
            "salt {salt}"
        );
        let points = workload_series(&history[15..]);
        let candidate_point = workload_series(candidate).remove(0);
        beyond_the_policy +=
            usize::from(drift_of(&points, &candidate_point, &five, None, 1.0).is_some());
    }
    assert!(
        beyond_the_policy >= 2,
        "{beyond_the_policy} of 40 beyond 5% by noise alone"
    );
    // Ten merges of +4% each on the noisy history: drift, at the limit its
    // spread gives, the changes' deviation about their median, tripled.
    let mut runs = noisy(30, 7, 0.06);
    for (k, run) in runs[20..].iter_mut().enumerate() {
        run.computation_time_us *= 1.04f64.powi(k as i32 + 1);
    }
    let (history, candidate) = runs.split_at(29);
    let drift = workload_drift(history, &candidate[0], &rule(10, 5.0)).expect("ten merges of 4%");
    let values: Vec<f64> = history[9..].iter().map(|r| r.computation_time_us).collect();
    let changes: Vec<f64> = values.windows(2).map(|w| (w[1] / w[0]).ln()).collect();
    let mut sorted = changes.clone();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    let sigma =
        (changes.iter().map(|c| (c - median).powi(2)).sum::<f64>() / changes.len() as f64).sqrt();
    let expected = ((3.0 * sigma).exp() - 1.0) * 100.0;
    assert!(expected > 5.0, "{expected}");
    assert!(
        (drift.limit_percent - expected).abs() < 1e-9,
        "{} against {expected}",
        drift.limit_percent
    );
}

/// A run where the value is 0 (an op that one run did not call) has no
/// change to or from it: the spread is measured on the other runs, and
/// five merges of +1.5% still drift.
#[test]
fn a_run_without_the_value_is_left_out_of_the_spread() {
    let mut runs = fixture(10, 5);
    runs[4].computation_time_us = 0.0;
    let drift = workload_drift(&runs[..14], &runs[14], &rule(5, 5.0)).expect("drift");
    assert_eq!(drift.limit_percent, 5.0);
}

/// Runs `run0`, `run1`, … at these µs of computation per step.
fn runs_at(values: &[f64]) -> Vec<EntryMeta> {
    values
        .iter()
        .enumerate()
        .map(|(i, &us)| entry(&format!("run{i}"), us))
        .collect()
}

/// Three changes between runs measure a spread; two do not, and the
/// policy's limit stands alone.
#[test]
fn three_changes_measure_the_spread_and_two_do_not() {
    let history = runs_at(&[10_000.0, 10_600.0, 10_000.0, 10_600.0]);
    let candidate = entry("next", 14_000.0);
    // ±6% from run to run: three times that spread is about 22%.
    let drift = workload_drift(&history, &candidate, &rule(3, 5.0)).expect("+32%");
    assert!((20.0..25.0).contains(&drift.limit_percent), "{drift:?}");
    let drift = workload_drift(&history[1..], &candidate, &rule(3, 5.0)).expect("+32%");
    assert_eq!(drift.limit_percent, 5.0);
}

/// A merge is measured from the run before it: from 0 (the value absent,
/// an op not called) to any time it is an infinite change, from 0 to 0 no
/// change, and only merges that grew the value add to the drift.
#[test]
fn a_merge_from_an_absent_value_is_measured_from_zero() {
    let history = runs_at(&[10_000.0, 0.0, 0.0, 11_000.0, 11_500.0]);
    let candidate = entry("next", 12_000.0);
    let drift = workload_drift(&history, &candidate, &rule(5, 5.0)).expect("+20%");
    let deltas: Vec<f64> = drift.steps.iter().map(|s| s.delta_percent).collect();
    assert_eq!(deltas[..3], [-100.0, 0.0, f64::INFINITY], "{deltas:?}");
    assert!(drift.finding(Severity::Fail).message.contains("run2 +0.0%"));
}

/// A reference run without a busy time (an entry that recorded none) gives
/// the drift's own growth as its impact.
#[test]
fn without_the_references_busy_time_the_impact_is_the_growth() {
    let mut runs = fixture(1, 5);
    runs[0].busy_time_us = 0.0;
    let drift = workload_drift(&runs[..5], &runs[5], &rule(5, 5.0)).expect("drift");
    assert_eq!(drift.impact_percent, drift.total_percent);
    assert!(drift.impact_percent.is_finite());
}

/// `flat` runs at 10 ms, then one merge each of `deltas` (%), the last of
/// them the candidate; the drift over those merges.
fn drift_after(flat: usize, deltas: &[f64]) -> Option<Drift> {
    let mut us = 10_000.0;
    let mut runs: Vec<EntryMeta> = (0..flat).map(|i| entry(&format!("base{i}"), us)).collect();
    for (k, delta) in deltas.iter().enumerate() {
        us *= 1.0 + delta / 100.0;
        runs.push(entry(&format!("merge{k}"), us));
    }
    let (history, candidate) = runs.split_at(runs.len() - 1);
    workload_drift(history, &candidate[0], &rule(deltas.len(), 5.0))
}

/// A merge adds to a drift when it grew the value by at least half an even
/// share of the whole (12% over five merges: 1.2%): a +1.5% merge beside a
/// +10.3% one makes two, a drift; a +0.1% merge beside a +20% one adds
/// nothing, so that one is a step.
#[test]
fn a_merge_adds_to_a_drift_from_half_an_even_share() {
    let drift = drift_after(8, &[1.5, 10.3, 0.0, 0.0, 0.0]).expect("two merges add to it");
    assert!((drift.total_percent - 11.95).abs() < 0.01, "{drift:?}");
    assert_eq!(drift_after(8, &[1.0, 10.8, 0.0, 0.0, 0.0]), None);
    assert_eq!(drift_after(8, &[0.1, 20.0, 0.0, 0.0, 0.0]), None);
}

#[test]
fn a_jump_in_one_merge_is_a_step_not_drift() {
    // Four flat merges, then one PR +21% (issue 23): one merge holds it all.
    let mut history: Vec<EntryMeta> = (0..8)
        .map(|i| entry(&format!("base{i}"), 10_000.0))
        .collect();
    let candidate = entry("jump", 12_100.0);
    assert_eq!(workload_drift(&history, &candidate, &rule(5, 5.0)), None);
    // Two merges of +5% each are drift.
    history.push(entry("first", 10_500.0));
    let candidate = entry("second", 11_025.0);
    let drift = workload_drift(&history, &candidate, &rule(5, 5.0)).expect("drift");
    assert!(drift.total_percent > 10.0, "{drift:?}");
}

#[test]
fn the_window_starts_after_a_confirmed_step() {
    use crate::history::window::{WindowQuery, baseline_window};
    // main ×1.2 at c5, then c6…c8 at the new level: a PR equal to c8 has no
    // drift, and its baseline window holds no run from before the step.
    let history: Vec<EntryMeta> = (1..=8)
        .map(|i| entry(&format!("c{i}"), if i < 5 { 10_000.0 } else { 12_000.0 }))
        .collect();
    let candidate = entry("pr", 12_000.0);
    let query = WindowQuery {
        workload: "w",
        hardware: "",
        branch: "main",
        exclude_commit: None,
        size: usize::MAX,
    };
    let window: Vec<EntryMeta> = baseline_window(&history, &query)
        .into_iter()
        .cloned()
        .collect();
    assert_eq!(
        window.first().map(|e| e.commit.as_str()),
        Some("c5"),
        "{window:?}"
    );
    assert_eq!(workload_drift(&window, &candidate, &rule(5, 5.0)), None);
    assert_eq!(workload_drift(&history, &candidate, &rule(5, 5.0)), None);
}

#[test]
fn on_a_pull_request_drift_is_information_saying_what_the_change_adds() {
    let history = fixture(3, 4);
    let candidate = entry("pr", 10_000.0 * 1.015f64.powi(5));
    let drift = workload_drift(&history, &candidate, &rule(5, 5.0)).expect("drift");
    let finding = drift.finding(Severity::Info);
    assert_eq!(finding.severity, Severity::Info);
    assert!(
        finding.message.contains("this change adds +1.5%"),
        "{}",
        finding.message
    );
}
