//! What `check` takes from the history: a workload's baseline window, the
//! drift rule's findings, and the cross-platform ratios learned from
//! earlier comparisons. Reads snapshots from the store; the gate itself
//! never sees the history.

use tracegate::gate::compare::LearnedRatios;
use tracegate::gate::policy::Policy;
use tracegate::gate::snapshot::Snapshot;
use tracegate::gate::verdict::{Finding, Severity};
use tracegate::history::drift::{self, DriftRule};
use tracegate::history::entry::{EntryMeta, Origin};
use tracegate::history::ratios;
use tracegate::history::store::Store;
use tracegate::history::window::{self, PairQuery, WindowQuery};

use super::Failure;
use super::history_store::load;

/// One recorded run with its snapshot.
pub(super) type Run = (EntryMeta, Snapshot);

/// The baseline window of a candidate from the history (the policy's
/// `history` section: the newest `window` runs of the same workload and
/// hardware on `branch`, `commit` left out) with their snapshots, and a
/// note naming it; or, when no run matches, why not.
pub(super) fn history_window(
    store: &Store,
    entries: &[EntryMeta],
    name: &str,
    candidate: &Snapshot,
    policy: &Policy,
    commit: Option<&str>,
) -> Result<Result<(Vec<Run>, String), String>, Failure> {
    let hardware = hardware_of(candidate);
    let query = window_query(name, &hardware, policy, commit, policy.history.window);
    let chosen = window::baseline_window(entries, &query);
    let (Some(first), Some(last)) = (chosen.first(), chosen.last()) else {
        let runs = entries.iter().filter(|e| e.workload == name).count();
        return Ok(Err(if runs == 0 {
            "the history has no run of it".to_string()
        } else {
            format!(
                "no run of it in the history on branch `{}` on {hardware}{} ({runs} on other \
                 branches, hardware or commits)",
                policy.history.branch,
                commit.map_or(String::new(), |c| format!(" other than commit {c}")),
            )
        }));
    };
    let mut runs = Vec::new();
    for &entry in &chosen {
        runs.push((entry.clone(), load(store, entry)?));
    }
    let note = format!(
        "baseline: {} run(s) of the history on `{}` ({} … {})",
        chosen.len(),
        policy.history.branch,
        first.commit.chars().take(7).collect::<String>(),
        last.commit.chars().take(7).collect::<String>(),
    );
    Ok(Ok((runs, note)))
}

/// The drift rule over the history (the policy's `history.drift`): the
/// candidate's computation time per step, and each op's above a share of
/// its GPU time, against the run `merges` merges before it on the same
/// hardware on `history.branch`; a fail finding per value that grew beyond
/// the limit (an op's when its added time is at least the policy's
/// `noise.min_impact_percent` of GPU time), naming every merge between.
/// Snapshots already in `window` (the baseline window) are not read again.
pub(super) fn drift_findings(
    store: &Store,
    entries: &[EntryMeta],
    window: &[Run],
    name: &str,
    candidate: &Snapshot,
    policy: &Policy,
    commit: Option<&str>,
) -> Result<Vec<Finding>, Failure> {
    let hardware = hardware_of(candidate);
    let query = window_query(name, &hardware, policy, commit, usize::MAX);
    let runs: Vec<EntryMeta> = window::baseline_window(entries, &query)
        .into_iter()
        .cloned()
        .collect();
    let rule = DriftRule {
        merges: policy.history.drift.merges,
        limit_percent: policy.history.drift.limit_percent,
        ..DriftRule::default()
    };
    let origin = Origin {
        commit: commit.unwrap_or("candidate").to_string(),
        ..Origin::default()
    };
    let candidate_entry = EntryMeta::of_snapshot(candidate, origin);
    // A pull request is judged on what it adds: the branch's drift is information there.
    let pull_request =
        std::env::var("GITHUB_EVENT_NAME").is_ok_and(|e| e.starts_with("pull_request"));
    let severity = if pull_request {
        Severity::Info
    } else {
        Severity::Fail
    };
    let mut findings: Vec<Finding> = drift::workload_drift(&runs, &candidate_entry, &rule)
        .map(|d| d.finding(severity))
        .into_iter()
        .collect();
    // Op drift reads only the runs from the reference on.
    let recent = &runs[runs.len().saturating_sub(rule.merges)..];
    if recent.len() == rule.merges {
        let mut loaded = Vec::with_capacity(recent.len());
        for entry in recent {
            let snapshot = match window.iter().find(|(e, _)| e.file == entry.file) {
                Some((_, snapshot)) => snapshot.clone(),
                None => load(store, entry)?,
            };
            loaded.push((entry.clone(), snapshot));
        }
        let candidate_run = (candidate_entry, candidate.clone());
        // An op's drift counts when it matters on its own, as a row must.
        findings.extend(
            drift::op_drift(&loaded, &candidate_run, &rule)
                .iter()
                .filter(|d| d.impact_percent >= policy.noise.min_impact_percent)
                .map(|d| d.finding(severity)),
        );
    }
    Ok(findings)
}

/// The ratios learned from the history's earlier comparisons of the two
/// sides' hardware (the policy's `history.branch`, the newest
/// `history.window` commits recorded on both, `commit` left out), with a
/// note saying how many; `None` when the two sides are on the same hardware
/// or the history has no such pair (the roofline ratio is then expected).
pub(super) fn learned_ratios(
    store: &Store,
    entries: &[EntryMeta],
    name: &str,
    baseline: &Snapshot,
    candidate: &Snapshot,
    policy: &Policy,
    commit: Option<&str>,
) -> Result<(Option<LearnedRatios>, String), Failure> {
    let (baseline_hardware, candidate_hardware) = (hardware_of(baseline), hardware_of(candidate));
    if baseline_hardware == candidate_hardware {
        let note = "history: both sides on the same hardware, nothing to learn".to_string();
        return Ok((None, note));
    }
    let query = PairQuery {
        workload: name,
        baseline_hardware: &baseline_hardware,
        candidate_hardware: &candidate_hardware,
        branch: &policy.history.branch,
        exclude_commit: commit,
        size: policy.history.window,
    };
    let chosen = window::pair_window(entries, &query);
    if chosen.is_empty() {
        let note = format!(
            "history: no earlier commit recorded on both {baseline_hardware} and \
             {candidate_hardware} on `{}`: roofline ratios expected",
            policy.history.branch
        );
        return Ok((None, note));
    }
    let mut pairs = Vec::with_capacity(chosen.len());
    for (b, c) in &chosen {
        pairs.push((load(store, b)?, load(store, c)?));
    }
    let note = format!(
        "history: the earlier comparisons are commits {} … {} on `{}`",
        chosen[0].1.commit.chars().take(7).collect::<String>(),
        chosen[chosen.len() - 1]
            .1
            .commit
            .chars()
            .take(7)
            .collect::<String>(),
        policy.history.branch,
    );
    Ok((Some(ratios::learn(&pairs)), note))
}

/// The hardware a snapshot's runs are compared within ([`window::hardware_key`]).
fn hardware_of(snapshot: &Snapshot) -> String {
    let fingerprint = &snapshot.fingerprint;
    window::hardware_key(fingerprint.hardware.as_deref(), &fingerprint.gpus_text())
}

/// The runs of `name` on `hardware` on the policy's branch, `commit` left
/// out, at most `size`.
fn window_query<'a>(
    name: &'a str,
    hardware: &'a str,
    policy: &'a Policy,
    commit: Option<&'a str>,
    size: usize,
) -> WindowQuery<'a> {
    WindowQuery {
        workload: name,
        hardware,
        branch: &policy.history.branch,
        exclude_commit: commit,
        size,
    }
}
