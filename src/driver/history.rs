//! The history as the commands use it: `history add` ([`add`]), `history
//! report`'s site ([`site`]), and what `check` takes from it — a workload's
//! baseline window, the drift rule's findings, and the cross-platform
//! ratios learned from earlier comparisons. Reads snapshots from the store;
//! the gate itself never sees the history.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::analysis::analyse::AnalysisOptions;
use crate::gate::compare::{LearnedRatios, learning_note};
use crate::gate::policy::Policy;
use crate::gate::snapshot::Snapshot;
use crate::gate::verdict::{Finding, Severity};
use crate::history::dashboard::{self, SiteFile};
use crate::history::drift::{self, DriftRule};
use crate::history::entry::{EntryMeta, Origin};
use crate::history::ratios;
use crate::history::report::{PairSeries, RunSeries, site_input};
use crate::history::series::{self, Point};
use crate::history::store::{self, Store, StoreError};
use crate::history::window::{self, PairQuery, WindowQuery};

use super::inputs::workload_of;
use super::{Error, Progress, ReadOptions, jobs, ranks, read};

/// One recorded run with its snapshot.
pub type Run = (EntryMeta, Snapshot);

/// An opened history as `check` reads it: the store, its entries, and
/// where a damaged run's warning goes.
#[derive(Clone, Copy)]
pub struct Opened<'a> {
    /// The store.
    pub store: &'a Store,
    /// Its entries, oldest first.
    pub entries: &'a [EntryMeta],
    /// Told each run skipped as damaged.
    pub progress: &'a dyn Progress,
}

/// A store error as a request's error.
pub fn store_error(error: StoreError) -> Error {
    Error(error.to_string())
}

/// Opens the history at `dir`, refusing a path that is not a directory.
pub fn open(dir: &Path) -> Result<Store, Error> {
    Store::open(dir).map_err(store_error)
}

/// The history at `dir` with its entries, oldest first; what does not add
/// up between its index and files goes to `progress` as warnings.
pub fn entries(dir: &Path, progress: &dyn Progress) -> Result<(Store, Vec<EntryMeta>), Error> {
    let store = open(dir)?;
    let scan = store.scan().map_err(store_error)?;
    for problem in scan.problems() {
        progress.warning(&problem);
    }
    Ok((store, scan.entries))
}

/// One run's snapshot from the store; a damaged one is `None`, with a
/// warning naming it to `progress` (the rest of the history is still used).
pub fn load(
    store: &Store,
    entry: &EntryMeta,
    progress: &dyn Progress,
) -> Result<Option<Snapshot>, Error> {
    match store.load(entry) {
        Ok(snapshot) => Ok(Some(snapshot)),
        Err(e) if e.is_damaged_run() => {
            progress.warning(&format!("{e}: run skipped"));
            Ok(None)
        }
        Err(e) => Err(store_error(e)),
    }
}

/// What `history add`'s flags say about the run; what they leave out
/// comes from GitHub Actions' environment ([`origin`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct OriginFlags<'a> {
    /// `--commit`.
    pub commit: Option<&'a str>,
    /// `--branch`.
    pub branch: Option<&'a str>,
    /// `--pr`.
    pub pr: Option<u64>,
    /// `--run-url`.
    pub run_url: Option<&'a str>,
    /// `--time`, RFC 3339.
    pub time: Option<&'a str>,
}

/// The run's origin: the flags, else GitHub Actions' environment as the
/// caller reads it (`env`: the library reads none); no commit at all is an
/// error naming the flag.
pub fn origin(
    flags: &OriginFlags<'_>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Origin, Error> {
    let commit = flags
        .commit
        .map(str::to_string)
        .or_else(|| env("GITHUB_SHA"))
        .ok_or_else(|| {
            Error::new(
                "history add: no commit known: pass --commit SHA (GitHub Actions sets GITHUB_SHA)",
            )
        })?;
    let branch = flags
        .branch
        .map(str::to_string)
        .or_else(|| env("GITHUB_HEAD_REF"))
        .or_else(|| env("GITHUB_REF_NAME"));
    let pr = flags.pr.or_else(|| {
        env("GITHUB_REF")?
            .strip_prefix("refs/pull/")?
            .strip_suffix("/merge")?
            .parse()
            .ok()
    });
    let run_url = flags.run_url.map(str::to_string).or_else(|| {
        Some(format!(
            "{}/{}/actions/runs/{}",
            env("GITHUB_SERVER_URL")?,
            env("GITHUB_REPOSITORY")?,
            env("GITHUB_RUN_ID")?
        ))
    });
    let time = match flags.time {
        Some(text) => store::parse_time(text)
            .map_err(|e| Error(format!("--time: {e}")))?
            .to_rfc3339(),
        None => String::new(),
    };
    Ok(Origin {
        commit,
        branch,
        time,
        pr,
        run_url,
    })
}

/// `history add`: records each input (a trace or snapshot, or with
/// `read.ranks` a rank set) as a run of `origin` in the history at `dir`,
/// named by [`workload_of`] its file name. The inputs are read `--jobs` at
/// a time and added in input order; `added` is told each run as it is
/// added, so the runs before a failed input stay added and reported.
pub fn add(
    dir: &Path,
    inputs: &[PathBuf],
    origin: &Origin,
    options: &AnalysisOptions,
    read: &ReadOptions,
    added: &mut dyn FnMut(&EntryMeta),
) -> Result<(), Error> {
    let store = open(dir)?;
    let size = |p: &PathBuf| jobs::json_size(p);
    let mut snapshots = jobs::read_all(
        inputs,
        read.jobs,
        read.quiet,
        read.progress,
        size,
        |input, quiet| {
            let read = read.with_quiet(quiet);
            if read.ranks {
                ranks::rank_set(input, None, options, &read)
            } else {
                read::snapshot_of_input(input, None, options, &read)
            }
        },
    )?;
    for input in inputs {
        let mut snapshot = snapshots.next().expect("one result per input")?;
        snapshot.workload = workload_of(input, read.ranks);
        let entry = store.add(&snapshot, origin.clone()).map_err(store_error)?;
        added(&entry);
    }
    Ok(())
}

/// Whether the entry is on `branch` (any entry when `None`).
pub fn on_branch(entry: &EntryMeta, branch: Option<&str>) -> bool {
    branch.is_none_or(|b| entry.branch.as_deref() == Some(b))
}

/// What `history show` shows: a workload's runs and their series.
pub struct Shown {
    /// The workload's runs (on the branch, when given), oldest first.
    pub runs: Vec<EntryMeta>,
    /// The series, one point per run.
    pub points: Vec<Point>,
    /// What the series measures: `computation/step`, or `OP /step`.
    pub what: String,
}

/// `history show`: the runs of `workload` in the history at `dir` (on
/// `branch` when given) and their series: computation time per step, or
/// with `op` that op's time per step (read from each run's snapshot). An
/// error names the workloads there are, or says no run has the op.
pub fn show(
    dir: &Path,
    workload: &str,
    op: Option<&str>,
    branch: Option<&str>,
    progress: &dyn Progress,
) -> Result<Shown, Error> {
    let (store, entries) = entries(dir, progress)?;
    let runs: Vec<EntryMeta> = entries
        .iter()
        .filter(|e| e.workload == workload && on_branch(e, branch))
        .cloned()
        .collect();
    if runs.is_empty() {
        let mut known: Vec<&str> = entries.iter().map(|e| e.workload.as_str()).collect();
        known.sort_unstable();
        known.dedup();
        return Err(Error(format!(
            "{}: no runs of workload `{workload}`{} (workloads: {})",
            dir.display(),
            branch.map_or(String::new(), |b| format!(" on branch `{b}`")),
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            }
        )));
    }
    let Some(op) = op else {
        let points = series::workload_series(&runs);
        let what = "computation/step".to_string();
        return Ok(Shown { runs, points, what });
    };
    let loaded = runs
        .iter()
        .filter_map(|e| {
            load(&store, e, progress)
                .map(|s| Some((e.clone(), s?)))
                .transpose()
        })
        .collect::<Result<Vec<_>, Error>>()?;
    if !loaded
        .iter()
        .any(|(_, s)| series::op_times_per_step(s).contains_key(op))
    {
        return Err(Error(format!(
            "--op {op}: in none of the {} run(s) of `{workload}` (an exact op name, as `report` lists it)",
            runs.len(),
        )));
    }
    let points = series::op_series(&loaded, op);
    let what = format!("{op} /step");
    Ok(Shown { runs, points, what })
}

/// `history report`'s site: the files of the dashboard of the history at
/// `dir`'s runs on `branch`, and how many series, pairs and runs it shows.
pub struct Site {
    /// The site's files, by path relative to its folder.
    pub files: Vec<SiteFile>,
    /// Workload pages: one per workload and piece of hardware.
    pub series: usize,
    /// Pair pages: one per workload and pair of hardware.
    pub pairs: usize,
    /// Runs on the branch.
    pub runs: usize,
}

/// `history report`: every run of the history at `dir` on `branch` read
/// with its snapshot, each workload's series per piece of hardware (the
/// first recorded the reference of the others' pairs), and the dashboard
/// built from them; `repository` links commits.
pub fn site(
    dir: &Path,
    branch: &str,
    repository: Option<String>,
    progress: &dyn Progress,
) -> Result<Site, Error> {
    let (store, entries) = entries(dir, progress)?;
    let entries: Vec<EntryMeta> = entries
        .into_iter()
        .filter(|e| e.branch.as_deref() == Some(branch))
        .collect();
    // Each workload's series per piece of hardware, in first-seen order.
    let mut by_workload: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for entry in &entries {
        let hardware = window::entry_hardware(entry);
        let known = by_workload.entry(entry.workload.clone()).or_default();
        if !known.contains(&hardware) {
            known.push(hardware);
        }
    }
    let mut series = Vec::new();
    let mut pairs = Vec::new();
    for (workload, hardware) in &by_workload {
        for key in hardware {
            let name = if hardware.len() > 1 {
                format!("{workload} · {key}")
            } else {
                workload.clone()
            };
            let runs = entries
                .iter()
                .filter(|e| e.workload == *workload && window::entry_hardware(e) == *key)
                .filter_map(|e| {
                    load(&store, e, progress)
                        .map(|s| Some((e.clone(), s?)))
                        .transpose()
                })
                .collect::<Result<Vec<_>, Error>>()?;
            series.push(RunSeries { name, runs });
        }
        pairs.extend(pair_series(
            &store, &entries, workload, hardware, branch, progress,
        )?);
    }
    let footer = format!(
        "tracegate {} · {} run(s) on branch {branch}",
        env!("CARGO_PKG_VERSION"),
        entries.len(),
    );
    let input = site_input(&series, &pairs, repository, footer);
    Ok(Site {
        files: dashboard::site(&input),
        series: series.len(),
        pairs: pairs.len(),
        runs: entries.len(),
    })
}

/// The pairs of `workload`'s runs on its first `hardware` (the reference)
/// and on each other, commit by commit.
fn pair_series(
    store: &Store,
    entries: &[EntryMeta],
    workload: &str,
    hardware: &[String],
    branch: &str,
    progress: &dyn Progress,
) -> Result<Vec<PairSeries>, Error> {
    let mut pairs = Vec::new();
    for candidate in hardware.iter().skip(1) {
        let query = PairQuery {
            workload,
            baseline_hardware: &hardware[0],
            candidate_hardware: candidate,
            branch,
            exclude_commit: None,
            size: usize::MAX,
        };
        let chosen = window::pair_window(entries, &query);
        if chosen.is_empty() {
            continue;
        }
        let mut loaded = Vec::with_capacity(chosen.len());
        for (b, c) in chosen {
            if let (Some(bs), Some(cs)) = (load(store, b, progress)?, load(store, c, progress)?) {
                loaded.push(((b.clone(), bs), (c.clone(), cs)));
            }
        }
        pairs.push(PairSeries {
            name: format!("{workload}: {} → {candidate}", hardware[0]),
            pairs: loaded,
        });
    }
    Ok(pairs)
}

/// The baseline window of a candidate from the history (the policy's
/// `history` section: the newest `window` runs of the same workload and
/// hardware on `branch`, `commit` left out) with their snapshots, and a
/// note naming it; or, when no run matches, why not.
pub fn history_window(
    history: Opened<'_>,
    name: &str,
    candidate: &Snapshot,
    policy: &Policy,
    commit: Option<&str>,
) -> Result<Result<(Vec<Run>, String), String>, Error> {
    let Opened {
        store,
        entries,
        progress,
    } = history;
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
        runs.extend(load(store, entry, progress)?.map(|s| (entry.clone(), s)));
    }
    if runs.is_empty() {
        return Ok(Err("every run of it in the window is damaged".to_string()));
    }
    let note = format!(
        "baseline: {} run(s) of the history on `{}` ({} … {})",
        runs.len(),
        policy.history.branch,
        first.commit.chars().take(7).collect::<String>(),
        last.commit.chars().take(7).collect::<String>(),
    );
    Ok(Ok((runs, note)))
}

/// The drift rule over the history (the policy's `history.drift`): the
/// candidate's computation time per step, and each op's above a share of
/// its GPU time, against the run `merges` merges before it on the same
/// hardware on `history.branch`; a finding of `severity` per value that grew beyond
/// the limit (an op's when its added time is at least the policy's
/// `noise.min_impact_percent` of GPU time), naming every merge between.
/// Snapshots already in `window` (the baseline window) are not read again.
pub fn drift_findings(
    history: Opened<'_>,
    window: &[Run],
    name: &str,
    candidate: &Snapshot,
    policy: &Policy,
    commit: Option<&str>,
    severity: Severity,
) -> Result<Vec<Finding>, Error> {
    let Opened {
        store,
        entries,
        progress,
    } = history;
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
                Some((_, snapshot)) => Some(snapshot.clone()),
                None => load(store, entry, progress)?,
            };
            loaded.extend(snapshot.map(|s| (entry.clone(), s)));
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
pub fn learned_ratios(
    history: Opened<'_>,
    name: &str,
    baseline: &Snapshot,
    candidate: &Snapshot,
    policy: &Policy,
    commit: Option<&str>,
) -> Result<(Option<LearnedRatios>, String), Error> {
    let Opened {
        store,
        entries,
        progress,
    } = history;
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
             {candidate_hardware} on `{}`; {}",
            policy.history.branch,
            learning_note(0)
        );
        return Ok((None, note));
    }
    let mut pairs = Vec::with_capacity(chosen.len());
    for (b, c) in &chosen {
        if let (Some(b), Some(c)) = (load(store, b, progress)?, load(store, c, progress)?) {
            pairs.push((b, c));
        }
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn flags(commit: Option<&str>) -> OriginFlags<'_> {
        OriginFlags {
            commit,
            ..OriginFlags::default()
        }
    }

    #[test]
    fn the_origin_comes_from_github_actions_unless_given() {
        let vars: BTreeMap<&str, &str> = [
            ("GITHUB_SHA", "0123456789abcdef"),
            ("GITHUB_HEAD_REF", "feature"),
            ("GITHUB_REF_NAME", "12/merge"),
            ("GITHUB_REF", "refs/pull/12/merge"),
            ("GITHUB_SERVER_URL", "https://github.com"),
            ("GITHUB_REPOSITORY", "o/r"),
            ("GITHUB_RUN_ID", "99"),
        ]
        .into_iter()
        .collect();
        let env = |name: &str| vars.get(name).map(|v| v.to_string());
        let Ok(origin) = origin(&flags(None), &env) else {
            panic!("an origin")
        };
        assert_eq!(origin.commit, "0123456789abcdef");
        assert_eq!(origin.branch.as_deref(), Some("feature"));
        assert_eq!(origin.pr, Some(12));
        assert_eq!(
            origin.run_url.as_deref(),
            Some("https://github.com/o/r/actions/runs/99")
        );
        assert_eq!(origin.time, "");
        let given = OriginFlags {
            branch: Some("main"),
            time: Some("2026-01-01T01:00:00+01:00"),
            ..flags(Some("abc"))
        };
        let Ok(origin) = super::origin(&given, &env) else {
            panic!("an origin")
        };
        assert_eq!(
            (origin.commit.as_str(), origin.branch.as_deref()),
            ("abc", Some("main"))
        );
        assert_eq!(origin.time, "2026-01-01T00:00:00+00:00");
    }

    #[test]
    fn without_a_commit_the_flag_is_named() {
        // The binary exits 2 with it (tests/history.rs, `add_needs_a_commit`).
        let failure = origin(&flags(None), &|_| None).err().unwrap();
        assert!(failure.0.contains("--commit"), "{failure}");
        let bad = OriginFlags {
            time: Some("noon"),
            ..flags(Some("abc"))
        };
        let failure = origin(&bad, &|_| None).err().unwrap();
        assert!(failure.0.starts_with("--time: time `noon`"), "{failure}");
    }
}
