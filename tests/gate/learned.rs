//! Learned cross-platform ratios (issue 14, "Cross-platform with history"):
//! on the H100/MI300X corpus pairs, both directions, three earlier paired
//! runs (as many as a scheduled job has on its fourth run) teach each op's
//! ratio; then the same code passes with no failure
//! and no warning, and a ×1.3 slowdown of any op holding ≥ 5% of GPU time
//! on one side fails, naming that op first (ops both platforms run: one
//! run by one platform only, cuDNN's convolution against MIOpen's, has no
//! ratio to learn; the test counts and names those).
//!
//! The runs are snapshots, not traces: each earlier run (and the run
//! judged) is a copy of the side's snapshot with every op row's times
//! scaled by a deterministic factor in [0.98, 1.02] (seeded per run and
//! row); a slowdown scales every row of one op name on the candidate by 1.3
//! and adds the time to its GPU busy time.

use std::collections::BTreeMap;
use std::path::Path;

use tracegate::analysis::analyse;
use tracegate::analysis::hardware::{Hardware, builtin_catalog};
use tracegate::gate::compare::{self, CompareOptions, LearnedRatios};
use tracegate::gate::judge::{self, Workload};
use tracegate::gate::policy::Policy;
use tracegate::gate::snapshot::Snapshot;
use tracegate::gate::verdict::{FindingKind, Outcome, Severity, Verdict};
use tracegate::history::ratios::learn;
use tracegate::trace::{self, link};

use super::{corpus, repo};

/// The five models of the corpus profiled on both platforms.
pub(super) const MODELS: [&str; 5] = [
    "Falconsai_nsfw_image_detection__1016002",
    "Qwen_Qwen1.5-0.5B-Chat__1016005",
    "facebook_timesformer-base-finetuned-k400__1016002",
    "gaunernst_bert-small-uncased__1016001",
    "google_owlv2-large-patch14-ensemble__1016001",
];

/// Earlier paired runs the ratios are learned from: as few as a
/// scheduled job has on its fourth run.
const RUNS: u64 = tracegate::gate::compare::MIN_LEARNED_RUNS as u64;

/// The slowdown that must fail.
const SLOWDOWN: f64 = 1.3;

/// The share of a side's GPU time, %, from which an op's slowdown must fail.
const MIN_SHARE_PERCENT: f64 = 5.0;

pub(super) fn snapshot_of(path: &Path) -> Snapshot {
    let trace = trace::load_file(path, &mut |_| {}).expect("a corpus trace loads");
    let tree = link::link(&trace);
    let profile = analyse::analyse(&trace, &tree);
    Snapshot::from_profile(&profile, String::new(), 0)
}

pub(super) fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Every time of an op row times `factor`; its GPU busy and computation
/// time grow by what it added.
pub(super) fn scale_row(snapshot: &mut Snapshot, index: usize, factor: f64) {
    let op = &mut snapshot.ops[index];
    let added = op.direct.sum * (factor - 1.0);
    for value in [
        &mut op.direct.sum,
        &mut op.direct.mean,
        &mut op.direct.median,
        &mut op.direct.min,
        &mut op.direct.max,
    ] {
        *value *= factor;
    }
    if let Some(std) = op.direct.std.as_mut() {
        *std *= factor;
    }
    op.samples_us.iter_mut().for_each(|us| *us *= factor);
    op.step_us.iter_mut().for_each(|(_, us)| *us *= factor);
    op.kernel_us.iter_mut().for_each(|(_, us)| *us *= factor);
    snapshot.timeline.busy_time += added;
    snapshot.timeline.computation_time += added;
}

/// A run of `snapshot`: each row's times scaled by its own factor in
/// [0.98, 1.02], seeded by `seed` and the row.
pub(super) fn jittered(snapshot: &Snapshot, seed: u64) -> Snapshot {
    let mut run = snapshot.clone();
    for index in 0..run.ops.len() {
        let bits = splitmix64(splitmix64(seed) ^ index as u64) >> 11;
        let unit = bits as f64 / (1u64 << 53) as f64;
        scale_row(&mut run, index, 0.98 + 0.04 * unit);
    }
    run
}

/// `run` with every row of op `name` `factor` times slower.
pub(super) fn slowed(run: &Snapshot, name: &str, factor: f64) -> Snapshot {
    let mut run = run.clone();
    for index in 0..run.ops.len() {
        if run.ops[index].name == name && run.ops[index].graph.is_none() {
            scale_row(&mut run, index, factor);
        }
    }
    run
}

/// Op names holding at least [`MIN_SHARE_PERCENT`] of a side's GPU time
/// (their rows' direct kernel time summed).
pub(super) fn weighty_ops(snapshot: &Snapshot, into: &mut BTreeMap<String, f64>) {
    let mut by_name: BTreeMap<&str, f64> = BTreeMap::new();
    for op in snapshot.ops.iter().filter(|op| op.graph.is_none()) {
        *by_name.entry(&op.name).or_default() += op.direct.sum;
    }
    for (name, us) in by_name {
        let share = 100.0 * us / snapshot.timeline.busy_time;
        if share >= MIN_SHARE_PERCENT {
            let entry = into.entry(name.to_string()).or_default();
            *entry = entry.max(share);
        }
    }
}

/// One directed pair's check of `candidate` against `baseline` with the
/// learned ratios.
pub(super) fn check(
    baseline: &Snapshot,
    candidate: &Snapshot,
    hardware: &(Option<Hardware>, Option<Hardware>),
    learned: &LearnedRatios,
    policy: &Policy,
) -> Verdict {
    let verdict = judged(baseline, candidate, hardware, Some(learned), policy);
    assert!(verdict.workloads.iter().all(|w| w.cross_platform));
    verdict
}

/// The catalog hardware of both sides, on the policy's peak basis.
pub(super) fn hardware_pair(
    baseline: &Snapshot,
    candidate: &Snapshot,
    policy: &Policy,
) -> (Option<Hardware>, Option<Hardware>) {
    let catalog = builtin_catalog();
    match (
        baseline.fingerprint.catalog_hardware(&catalog),
        candidate.fingerprint.catalog_hardware(&catalog),
    ) {
        (Some(b), Some(c)) => {
            let (b, c) = Hardware::pair_on_basis(&b, &c, policy.hardware.peak);
            (Some(b), Some(c))
        }
        sides => sides,
    }
}

/// `candidate` compared with `baseline` and judged, as `check` does.
pub(super) fn judged(
    baseline: &Snapshot,
    candidate: &Snapshot,
    hardware: &(Option<Hardware>, Option<Hardware>),
    learned: Option<&LearnedRatios>,
    policy: &Policy,
) -> Verdict {
    let options = CompareOptions {
        baseline_hardware: hardware.0.clone(),
        candidate_hardware: hardware.1.clone(),
        confidence: policy.noise.confidence,
        resamples: policy.noise.resamples as usize,
        seed: policy.noise.seed,
        learned: learned.cloned(),
    };
    let comparison = compare::compare(std::slice::from_ref(baseline), candidate, &options);
    let workloads = [Workload::Compared {
        comparison,
        candidate,
        baseline_hardware: hardware.0.clone(),
        candidate_hardware: hardware.1.clone(),
    }];
    judge::judge(&workloads, policy)
}

/// What a verdict fails or warns about, in words.
pub(super) fn complaints(verdict: &Verdict) -> Vec<String> {
    verdict
        .findings
        .iter()
        .filter(|f| matches!(f.severity, Severity::Fail | Severity::Warn))
        .map(|f| format!("{} {}: {}", f.severity.as_str(), f.rule, f.message))
        .collect()
}

#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn learned_ratios_pass_the_same_code_and_fail_a_slowed_op_naming_it_first() {
    let policy = Policy::load(&repo("policies/cross-platform.yaml")).expect("shipped policy");
    let (mut quiet, mut caught, mut cases) = (0, 0, 0);
    let mut misses: Vec<String> = Vec::new();
    let mut one_sided: Vec<String> = Vec::new();
    for model in MODELS {
        let h100 = snapshot_of(&corpus(&format!("tracelens/h100/{model}.json.gz")));
        let mi300 = snapshot_of(&corpus(&format!("tracelens/mi300/{model}.json.gz")));
        for (direction, baseline, candidate) in [
            ("H100→MI300X", &h100, &mi300),
            ("MI300X→H100", &mi300, &h100),
        ] {
            let what = format!("{model} {direction}");
            let hardware = hardware_pair(baseline, candidate, &policy);
            assert!(
                hardware.0.is_some() && hardware.1.is_some(),
                "{what}: both GPUs are in the catalog"
            );
            let earlier: Vec<(Snapshot, Snapshot)> = (0..RUNS)
                .map(|run| {
                    (
                        jittered(baseline, 2 * run),
                        jittered(candidate, 2 * run + 1),
                    )
                })
                .collect();
            let learned = learn(&earlier);
            assert!(!learned.is_empty(), "{what}: nothing learned");
            assert_eq!(learned.runs(), RUNS as usize, "{what}");
            let (base_now, cand_now) = (jittered(baseline, 1000), jittered(candidate, 1001));

            let same = check(&base_now, &cand_now, &hardware, &learned, &policy);
            let said = complaints(&same);
            if same.outcome == Outcome::Pass && said.is_empty() {
                quiet += 1;
            } else {
                misses.push(format!("{what}, same code: {:?} {said:#?}", same.outcome));
            }

            let mut weighty = BTreeMap::new();
            weighty_ops(baseline, &mut weighty);
            weighty_ops(candidate, &mut weighty);
            for (name, share) in weighty {
                // An op one platform does not run (cuDNN on one side,
                // MIOpen on the other) has no ratio to learn.
                let runs_it = |s: &Snapshot| s.ops.iter().any(|op| op.name == name);
                if !(runs_it(baseline) && runs_it(candidate)) {
                    one_sided.push(format!("{what}: {name} ({share:.1}%)"));
                    continue;
                }
                cases += 1;
                let verdict = check(
                    &base_now,
                    &slowed(&cand_now, &name, SLOWDOWN),
                    &hardware,
                    &learned,
                    &policy,
                );
                let first = verdict.groups.first();
                let named_first = first.is_some_and(|g| {
                    g.label == name
                        && g.severity == Severity::Fail
                        && g.kind == FindingKind::UnexpectedRatio
                });
                if verdict.outcome == Outcome::Fail && named_first {
                    caught += 1;
                } else {
                    misses.push(format!(
                        "{what}, {name} ({share:.1}% of a side) ×{SLOWDOWN}: {:?}, first group {:?}; {:#?}",
                        verdict.outcome,
                        first.map(|g| (&g.label, g.severity)),
                        complaints(&verdict)
                    ));
                }
            }
        }
    }
    eprintln!(
        "learned ratios: same code quiet in {quiet} of 10 directed pairs; \
         ×{SLOWDOWN} of an op with ≥ {MIN_SHARE_PERCENT}% of a side's GPU time failed naming it first in {caught} of {cases}; \
         {} such ops run on one platform only (no ratio): {one_sided:?}",
        one_sided.len()
    );
    assert!(misses.is_empty(), "{misses:#?}");
    assert_eq!(quiet, 10);
}
