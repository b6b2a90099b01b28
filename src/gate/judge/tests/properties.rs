//! Properties of the judge that a plausible one-line bug breaks: false
//! discovery control over a family of rows, the improvement limit as the
//! reciprocal of the regression limit, the time floor on either side (of
//! rows, and of the rule kernel parts and families share), and savings as
//! material as slowdowns (the bundled pair swapped).

use std::path::Path;
use std::sync::OnceLock;

use super::*;
use crate::gate::judge::findings::Pending;
use crate::gate::judge::rows::{false_discovery_control, judge_if_large_enough};
use crate::gate::snapshot::sha256_file;
use crate::gate::verdict::SampleCounts;

/// A finding awaiting false-discovery control with p-value `p`, named by
/// its message; `samples` a side, `inconclusive` as given.
fn pending(message: &str, p: f64, samples: usize, inconclusive: bool) -> Pending {
    let mut finding = Finding::new(
        "regression",
        Severity::Fail,
        FindingKind::Regression,
        "w",
        message.to_string(),
    );
    finding.statistics.samples = Some(SampleCounts {
        per: Per::Step,
        baseline: samples,
        candidate: samples,
    });
    finding.statistics.inconclusive = inconclusive;
    Pending {
        finding,
        p_value: p,
        one_call_noise: false,
    }
}

fn kept(pending: Vec<Pending>, rate: f64) -> Vec<String> {
    let mut messages: Vec<String> = false_discovery_control(pending, rate)
        .into_iter()
        .map(|f| f.message)
        .collect();
    messages.sort();
    messages
}

#[test]
fn false_discovery_control_drops_rows_whose_adjusted_p_value_fails() {
    // Raw p-values at q = 0.05: `a` and `b` pass on their own, but over a
    // family of five BH adjusts `b` to 0.04 · 5 / 2 = 0.1 (and `a` to
    // 0.005): only `a` is a discovery.
    let family = |p: [f64; 5]| {
        ["a", "b", "c", "d", "e"]
            .iter()
            .zip(p)
            .map(|(name, p)| pending(name, p, 10, false))
            .collect::<Vec<_>>()
    };
    assert_eq!(kept(family([0.001, 0.04, 0.3, 0.3, 0.3]), 0.05), ["a"]);
    // Every raw p-value of `a` alone passes, adjusted ones all fail: 0.04 · 5 = 0.2.
    assert!(kept(family([0.04, 0.2, 0.2, 0.2, 0.2]), 0.05).is_empty());
    // The same row alone is a discovery: its adjusted p-value is its own.
    let mut alone = family([0.04, 0.2, 0.2, 0.2, 0.2]);
    alone.truncate(1);
    assert_eq!(kept(alone, 0.05), ["a"]);
    // Rows that claim no significance (inconclusive, one sample) are kept
    // without entering the family; a one-sample row judged against the
    // noise of one call is tested like any other.
    let mut rows = vec![
        pending("inconclusive", 0.9, 10, true),
        pending("one sample", 0.9, 1, false),
        pending("tested", 0.04, 10, false),
    ];
    let mut one_call = pending("one call", 0.04, 1, false);
    one_call.one_call_noise = true;
    rows.push(one_call);
    assert_eq!(
        kept(rows, 0.05),
        ["inconclusive", "one call", "one sample", "tested"]
    );
    let mut rows = vec![pending("tested", 0.04, 10, false)];
    let mut one_call = pending("one call", 0.9, 1, false);
    one_call.one_call_noise = true;
    rows.push(one_call);
    // Two tests: 0.04 · 2 / 1 = 0.08 > 0.05, so neither survives.
    assert!(kept(rows, 0.05).is_empty());
    // Two samples a side give a range: a test, not a single measurement.
    assert!(kept(vec![pending("two steps", 0.9, 2, false)], 0.05).is_empty());
}

/// A snapshot of the bundled example trace `file` (`baseline.json.gz` or
/// `candidate.json.gz`).
fn bundled(file: &'static str) -> Snapshot {
    static CANDIDATE: OnceLock<Snapshot> = OnceLock::new();
    if file == "baseline.json.gz" {
        return example_snapshot();
    }
    assert_eq!(file, "candidate.json.gz");
    CANDIDATE
        .get_or_init(|| {
            let path = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("examples")
                .join(file);
            let trace = crate::trace::load_file(&path, &mut |_| {}).expect("the example loads");
            let tree = crate::trace::link::link(&trace);
            let profile = crate::analysis::analyse::analyse(&trace, &tree);
            let (sha, bytes) = sha256_file(&path).expect("the example reads");
            Snapshot::from_profile(&profile, sha, bytes)
        })
        .clone()
}

/// The shaped op rows (name and shapes) of the findings of `kind` that
/// are not inconclusive, sorted.
fn rows_of(verdict: &Verdict, kind: FindingKind) -> Vec<String> {
    let mut rows: Vec<String> = verdict
        .findings
        .iter()
        .filter(|f| f.kind == kind && !f.statistics.inconclusive)
        .filter_map(|f| f.op.as_ref())
        .filter(|op| !op.input_dims.is_empty())
        .map(|op| format!("{} {} {}", op.name, op.input_dims, op.input_type))
        .collect();
    rows.sort();
    rows.dedup();
    rows
}

#[test]
fn the_bundled_pair_swapped_reports_its_savings_as_improvements() {
    let (baseline, candidate) = (bundled("baseline.json.gz"), bundled("candidate.json.gz"));
    let swapped = verdict_of(&candidate, &baseline);
    // The forward pair's aten::mm is ×1.3 on every shape: read the other
    // way, each of those savings is material (a `material` that forgot the
    // sign would report none).
    assert!(swapped.counts.improvements > 0, "{:#?}", swapped.findings);
    assert_eq!(
        swapped.counts.improvements,
        swapped
            .findings
            .iter()
            .filter(|f| f.kind == FindingKind::Improvement)
            .count()
    );
    // Each saving is a slowdown read the other way: the shapes the swapped
    // pair calls faster are shapes the forward pair calls slower.
    let forward = verdict_of(&baseline, &candidate);
    let slower = rows_of(&forward, FindingKind::Regression);
    let faster = rows_of(&swapped, FindingKind::Improvement);
    assert!(!faster.is_empty());
    assert!(
        faster.iter().all(|row| slower.contains(row)),
        "faster {faster:#?}\nslower {slower:#?}"
    );
}

/// The example's default policy with the regression threshold at `percent`.
fn with_threshold(percent: f64) -> Policy {
    let mut policy = Policy::default();
    policy.noise.min_effect_percent = percent;
    policy
}

#[test]
fn the_improvement_limit_is_the_reciprocal_of_the_regression_limit() {
    // At a 20% threshold a ×1.22 slowdown is a regression, and read the
    // other way (×1/1.22 = ×0.820, faster than 1/1.2 = 0.833 but not than
    // 2 − 1.2 = 0.8) an improvement: the limits are symmetric in log terms.
    let policy = with_threshold(20.0);
    let baseline = example_snapshot();
    let index = row_with_share(&baseline, 3.0, 100.0);
    let slower = scaled(&baseline, index, 1.22, [1.22; 3]);
    let forward = verdict_under(&baseline, &slower, &policy);
    assert_eq!(
        regression_on(&forward, &baseline, index).severity,
        Severity::Fail
    );
    let swapped = verdict_under(&slower, &baseline, &policy);
    let found = findings_on(&swapped, &baseline, index);
    assert!(
        found.iter().any(|f| f.kind == FindingKind::Improvement),
        "{:#?}",
        swapped.findings
    );
    assert_eq!(swapped.counts.improvements, 1);
    // Just inside the limit (×1/1.18 = ×0.847) is no improvement.
    let inside = scaled(&baseline, index, 1.18, [1.18; 3]);
    let swapped = verdict_under(&inside, &baseline, &policy);
    assert_eq!(swapped.counts.improvements, 0, "{:#?}", swapped.findings);
}

#[test]
fn the_time_floor_holds_back_a_row_only_when_both_sides_are_below_it() {
    // A row far below the floor in the baseline that grows far beyond it
    // in the candidate is judged: the floor is on the larger side.
    let baseline = example_snapshot();
    let policy = Policy::default();
    let busy = baseline.timeline.busy_time;
    let floor = policy.noise.min_time_for(busy);
    let index = largest_row_where(&baseline, |op| {
        op.step_us.len() == 3
            && op.graph.is_none()
            && op.direct.sum > 0.0
            && op.direct.sum < floor / 2.0
    })
    .expect("a row below the example's time floor");
    // Its time grows to 5% of the baseline's GPU time.
    let factor = busy * 0.05 / baseline.ops[index].direct.sum;
    assert!(baseline.ops[index].direct.sum * factor > 10.0 * floor);
    let grown = scaled(&baseline, index, factor, [factor; 3]);
    let verdict = verdict_under(&baseline, &grown, &policy);
    let finding = regression_on(&verdict, &baseline, index);
    assert_eq!(finding.severity, Severity::Fail, "{}", finding.message);
    // The rule kernel parts, kernel families and per-phase rows share
    // holds the same floor: the grown row is judged, a row below the
    // floor on both sides is not.
    let judged = |candidate: &Snapshot| {
        let comparison = compare(
            std::slice::from_ref(&baseline),
            candidate,
            &CompareOptions::default(),
        );
        let op = &baseline.ops[index];
        let row = comparison
            .ops
            .iter()
            .find(|o| {
                let key = &o.candidate.key;
                key.name == op.name
                    && key.input_dims == op.input_dims
                    && key.input_type == op.input_type
            })
            .expect("the row is matched");
        judge_if_large_enough(row, &policy, &comparison).map(|p| p.finding.kind)
    };
    assert_eq!(judged(&grown), Some(FindingKind::Regression));
    assert_eq!(judged(&scaled(&baseline, index, 1.5, [1.5; 3])), None);
    // And shrinking back below the floor is an improvement.
    let shrunk = verdict_under(&grown, &baseline, &policy);
    assert!(
        findings_on(&shrunk, &baseline, index)
            .iter()
            .any(|f| f.kind == FindingKind::Improvement),
        "{:#?}",
        shrunk.findings
    );
}
