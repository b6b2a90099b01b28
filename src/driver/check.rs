//! `check`: every workload of a check paired ([`inputs::pair_inputs`]),
//! read `--jobs` at a time, its baselines taken from files or from the
//! history's window (with drift findings and learned ratios), compared,
//! given its rank-set or collective-floor findings, and all judged with one
//! policy; with `files`, the candidates' snapshots and the replay packages
//! the policy selects, as files for the caller to write.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::analysis::analyse::AnalysisOptions;
use crate::analysis::hardware::Hardware;
use crate::analysis::profile::GraphRole;
use crate::gate::compare::{self, CompareOptions};
use crate::gate::judge::{self, JudgeOptions, Workload};
use crate::gate::policy::{HardwareChoice, Policy};
use crate::gate::snapshot::{self, Snapshot};
use crate::gate::verdict::{Finding, Severity, VERDICT_SCHEMA_VERSION, Verdict};
use crate::history::drift;
use crate::publish::replay::{self, PACKAGE_FILES, PackageContext, ReplayError};

use super::inputs::{Captures, Input, pair_inputs};
use super::read::snapshot_of_input;
use super::{Error, OutFile, Progress, ReadOptions, history, jobs, ranks};

/// What `check` is asked.
pub struct CheckRequest<'a> {
    /// Where the baselines come from.
    pub baseline: Baseline<'a>,
    /// The candidate: a trace or snapshot, a directory of them, or with
    /// `read.ranks` one job's ranks.
    pub candidate: &'a Path,
    /// The capture traces given for file inputs.
    pub captures: Captures<'a>,
    /// The policy every workload is judged with.
    pub policy: &'a Policy,
    /// How the inputs are read.
    pub read: ReadOptions<'a>,
    /// Today's date, accepted findings, findings to add.
    pub judge: JudgeOptions,
    /// Make the files an out dir holds ([`Checked::snapshots`],
    /// [`Checked::packages`]); the verdict then names its packages.
    pub files: bool,
    /// The check gates a pull request: it is judged on what it adds, so
    /// drift the history's branch already took is information, not a
    /// failure (that drift fails on the branch's own runs).
    pub pull_request: bool,
}

/// What `check` decided.
pub struct Checked {
    /// The verdict (what report.json holds).
    pub verdict: Verdict,
    /// Each workload's candidate snapshot ([`candidate_snapshot_path`]);
    /// empty unless [`CheckRequest::files`].
    pub snapshots: Vec<OutFile>,
    /// The replay packages, `replay/<workload>-<op>-<hash>.tar.gz`; empty
    /// unless [`CheckRequest::files`].
    pub packages: Vec<OutFile>,
}

/// A snapshot with the hardware it was judged on.
pub struct Side {
    /// The profile.
    pub snapshot: Snapshot,
    /// Catalog hardware, when known.
    pub hardware: Option<Hardware>,
}

/// Reads one trace or snapshot (detected by content) into a snapshot; a
/// trace's graph replays are merged with `capture` when given. With
/// `--ranks`, `path` is one job's ranks, merged ([`ranks::rank_set`]).
pub fn read_input(
    path: &Path,
    capture: Option<&Path>,
    choice: &HardwareChoice,
    policy: &Policy,
    read: &ReadOptions,
) -> Result<Side, Error> {
    let options = AnalysisOptions {
        catalog: policy.hardware.catalog.clone(),
        hardware: choice.hardware().cloned(),
        comm: policy.communication.kernels.clone(),
    };
    let snapshot = if read.ranks {
        ranks::rank_set(path, capture, &options, read)?
    } else {
        snapshot_of_input(path, capture, &options, read)?
    };
    let hardware = match choice.hardware() {
        Some(given) => Some(given.clone()),
        None => snapshot
            .fingerprint
            .catalog_hardware(&policy.hardware.catalog),
    };
    Ok(Side { snapshot, hardware })
}

/// A history opened for a check: the store, its entries, the candidate's
/// commit (left out of windows and learned pairs).
type History<'a> = (
    (
        crate::history::store::Store,
        Vec<crate::history::entry::EntryMeta>,
    ),
    Option<&'a str>,
);

/// One workload's name, baseline sides and candidate side.
type Sides = (String, Vec<Side>, Option<Side>);

/// What reading the sides found besides them: workloads the history has no
/// window for (and why), notes per workload, and findings to add.
#[derive(Default)]
struct Found {
    no_baseline: BTreeMap<String, String>,
    notes: Vec<(String, String)>,
    added: Vec<Finding>,
}

/// `check`: compares every workload and judges them; with
/// [`CheckRequest::files`], also makes the candidate snapshots and the
/// replay packages the policy selects.
pub fn check(request: &CheckRequest<'_>) -> Result<Checked, Error> {
    let (policy, read) = (request.policy, &request.read);
    let (paths, history, learning) = match request.baseline {
        Baseline::Paths(paths) => (paths, None, None),
        Baseline::History { dir, commit } => (
            &[][..],
            Some((history::entries(dir, read.progress)?, commit)),
            None,
        ),
        Baseline::PathsLearning { paths, dir, commit } => (
            paths,
            None,
            Some((history::entries(dir, read.progress)?, commit)),
        ),
    };
    let pairs = pair_inputs(paths, request.candidate, request.captures, read.ranks)?;
    let mut found = Found::default();
    let drift_severity = if request.pull_request {
        Severity::Info
    } else {
        Severity::Fail
    };
    let history = history.as_ref().map(|h| (h, drift_severity));
    let sides = read_sides(pairs, policy, read, history, &mut found)?;
    let mut workloads = Vec::new();
    for (name, baseline_sides, candidate_side) in &sides {
        let workload = match (baseline_sides.is_empty(), candidate_side) {
            (true, _) if found.no_baseline.contains_key(name) => Workload::NoBaseline {
                name: name.clone(),
                reason: found.no_baseline[name].clone(),
            },
            (true, _) => Workload::OnlyCandidate(name.clone()),
            (false, None) => Workload::OnlyBaseline(name.clone()),
            (false, Some(candidate)) => compared(
                name,
                baseline_sides,
                candidate,
                policy,
                learning.as_ref(),
                read.progress,
                &mut found,
            )?,
        };
        workloads.push(workload);
    }
    let options = JudgeOptions {
        findings: request
            .judge
            .findings
            .iter()
            .cloned()
            .chain(found.added)
            .collect(),
        ..request.judge.clone()
    };
    let mut verdict = judge::judge_with(&workloads, policy, &options);
    for (name, note) in found.notes {
        if let Some(summary) = verdict.workloads.iter_mut().find(|w| w.name == name) {
            summary.notes.push(note);
        }
    }
    let (mut snapshots, mut packages) = (Vec::new(), Vec::new());
    if request.files {
        let directory_mode = request.candidate.is_dir() && !read.ranks;
        snapshots = candidate_snapshots(&sides, directory_mode);
        packages = replay_packages(&mut verdict, &sides, policy);
    }
    Ok(Checked {
        verdict,
        snapshots,
        packages,
    })
}

/// Reads every workload's inputs, `--jobs` at a time; with a history, a
/// workload's baselines are its window of earlier runs (and its drift
/// findings are added), or it has none and `found` says why.
fn read_sides(
    pairs: Vec<super::inputs::WorkloadInputs>,
    policy: &Policy,
    read: &ReadOptions,
    history: Option<(&History<'_>, Severity)>,
    found: &mut Found,
) -> Result<Vec<Sides>, Error> {
    // Every input, in the order the loop below takes them: read `--jobs` at
    // a time, their results come back in this order.
    let inputs: Vec<(&Input, &HardwareChoice)> = pairs
        .iter()
        .flat_map(|(_, baselines, candidate)| {
            let baselines = baselines.iter().map(|i| (i, &policy.hardware.baseline));
            baselines.chain(candidate.iter().map(|i| (i, &policy.hardware.candidate)))
        })
        .collect();
    let size = |(i, _): &(&Input, _)| {
        jobs::json_size(&i.path) + i.capture.as_deref().map_or(0, jobs::json_size)
    };
    let mut read_sides = jobs::read_all(
        &inputs,
        read.jobs,
        read.quiet,
        read.progress,
        size,
        |(i, choice), quiet| {
            let capture = i.capture.as_deref();
            read_input(&i.path, capture, choice, policy, &read.with_quiet(quiet))
        },
    )?;
    let mut next_side = || read_sides.next().expect("one result per input");
    let mut sides: Vec<Sides> = Vec::new();
    for (name, baseline_inputs, candidate_input) in &pairs {
        let mut baseline_sides = baseline_inputs
            .iter()
            .map(|_| next_side())
            .collect::<Result<Vec<_>, _>>()?;
        let mut candidate_side = candidate_input.as_ref().map(|_| next_side()).transpose()?;
        // One name per workload: the one its files are paired by, not the
        // one stored inside a snapshot (made when it was another file).
        for side in baseline_sides.iter_mut().chain(&mut candidate_side) {
            side.snapshot.workload.clone_from(name);
        }
        if let (Some((((store, entries), commit), drift_severity)), Some(candidate)) =
            (history, &candidate_side)
        {
            let snapshot = &candidate.snapshot;
            let opened = history::Opened {
                store,
                entries,
                progress: read.progress,
            };
            match history::history_window(opened, name, snapshot, policy, *commit)? {
                Ok((window, note)) => {
                    found.added.extend(history::drift_findings(
                        opened,
                        &window,
                        name,
                        snapshot,
                        policy,
                        *commit,
                        drift_severity,
                    )?);
                    baseline_sides = window
                        .into_iter()
                        .map(|(_, snapshot)| Side {
                            hardware: snapshot
                                .fingerprint
                                .catalog_hardware(&policy.hardware.catalog),
                            snapshot,
                        })
                        .collect();
                    found.notes.push((name.clone(), note));
                }
                Err(reason) => {
                    found.no_baseline.insert(name.clone(), reason);
                }
            }
        }
        sides.push((name.clone(), baseline_sides, candidate_side));
    }
    Ok(sides)
}

/// Workload `name` compared: its sides on one peak basis, with the ratios
/// learned from the history when `learning`, refused across GPUs under a
/// same-platform policy, its rank-set or collective-floor findings added.
fn compared<'s>(
    name: &str,
    baseline_sides: &[Side],
    candidate: &'s Side,
    policy: &Policy,
    learning: Option<&History<'_>>,
    progress: &dyn Progress,
    found: &mut Found,
) -> Result<Workload<'s>, Error> {
    let (baseline_hardware, candidate_hardware) = on_basis(
        baseline_sides.iter().find_map(|s| s.hardware.as_ref()),
        candidate.hardware.as_ref(),
        policy,
    );
    let learned = match learning {
        Some(((store, entries), commit)) => {
            let opened = history::Opened {
                store,
                entries,
                progress,
            };
            let (learned, note) = history::learned_ratios(
                opened,
                name,
                &baseline_sides[0].snapshot,
                &candidate.snapshot,
                policy,
                *commit,
            )?;
            found.notes.push((name.to_string(), note));
            learned
        }
        None => None,
    };
    let options = CompareOptions {
        baseline_hardware: baseline_hardware.clone(),
        candidate_hardware: candidate_hardware.clone(),
        confidence: policy.noise.confidence,
        resamples: policy.noise.resamples as usize,
        seed: policy.noise.seed,
        learned,
    };
    let snapshots: Vec<Snapshot> = baseline_sides.iter().map(|s| s.snapshot.clone()).collect();
    let comparison = compare::compare(&snapshots, &candidate.snapshot, &options);
    if comparison.cross_platform && !policy.cross_platform.enabled {
        return Err(mixed_gpus(
            name,
            policy,
            &comparison,
            &snapshots,
            &candidate.snapshot,
        ));
    }
    found.added.extend(ranks::findings(
        name,
        &snapshots,
        &candidate.snapshot,
        judge::one_call_noise(&comparison, policy),
        policy,
    )?);
    Ok(Workload::Compared {
        comparison,
        candidate: &candidate.snapshot,
        baseline_hardware,
        candidate_hardware,
    })
}

/// Where the baselines come from.
#[derive(Clone, Copy, Debug)]
pub enum Baseline<'a> {
    /// `--baseline`: trace or snapshot files, or directories of them.
    Paths(&'a [PathBuf]),
    /// `--history DIR`: each workload's window of earlier runs.
    History {
        /// The history directory.
        dir: &'a Path,
        /// The candidate's commit, left out of the window.
        commit: Option<&'a str>,
    },
    /// `--baseline` and `--history DIR`: the baselines as given; across
    /// platforms, expected ratios learned from the history's earlier pairs.
    PathsLearning {
        /// The baseline files or directories.
        paths: &'a [PathBuf],
        /// The history directory.
        dir: &'a Path,
        /// Today's commit, left out of the learned pairs.
        commit: Option<&'a str>,
    },
}

/// The two sides' hardware on the policy's peak basis (`hardware.peak`):
/// one common basis when both are known, so that expected ratios never
/// divide a measured peak by a datasheet one.
fn on_basis(
    baseline: Option<&Hardware>,
    candidate: Option<&Hardware>,
    policy: &Policy,
) -> (Option<Hardware>, Option<Hardware>) {
    let basis = policy.hardware.peak;
    match (baseline, candidate) {
        (Some(b), Some(c)) => {
            let (b, c) = Hardware::pair_on_basis(b, c, basis);
            (Some(b), Some(c))
        }
        (b, c) => (b.map(|h| h.on_basis(basis)), c.map(|h| h.on_basis(basis))),
    }
}

/// The error for sides on different GPUs under a same-platform policy: a
/// mixed GPU pool must not turn a PR gate into hardware-ratio judging
/// without anyone asking for it.
fn mixed_gpus(
    workload: &str,
    policy: &Policy,
    comparison: &compare::Comparison,
    baselines: &[Snapshot],
    candidate: &Snapshot,
) -> Error {
    let gpus = |hardware: &Option<String>, snapshot: Option<&Snapshot>| {
        hardware.clone().unwrap_or_else(|| {
            let names: Vec<String> = snapshot
                .map(|s| s.fingerprint.gpus.iter().map(|g| g.name.clone()).collect())
                .unwrap_or_default();
            if names.is_empty() {
                "an unknown GPU".to_string()
            } else {
                names.join(" + ")
            }
        })
    };
    Error(format!(
        "{workload}: the baseline ran on {} and the candidate on {}, but the policy judges one \
         platform; to compare across GPUs use a cross-platform policy (policies/cross-platform.yaml, \
         or `cross_platform: {{enabled: true}}`) or pass --cross-platform (it {})",
        gpus(&comparison.baseline_hardware, baselines.first()),
        gpus(&comparison.candidate_hardware, Some(candidate)),
        policy.cross_platform_flag_effect(),
    ))
}

/// Where in `check --out-dir DIR` the candidate's snapshot of workload
/// `name` goes: `candidate.snapshot.json.gz` for a file, and for a directory
/// `snapshots/NAME.snapshot.json.gz` (NAME made artifact-safe and read back
/// as the workload: `bert%3Abs32`), the name a later check pairs with the
/// candidate's `NAME.json.gz`. Either can be promoted to the baseline as
/// it is.
pub fn candidate_snapshot_path(directory_mode: bool, name: &str) -> PathBuf {
    if directory_mode {
        Path::new("snapshots").join(format!(
            "{}.snapshot.json.gz",
            snapshot::artifact_file_name(name)
        ))
    } else {
        PathBuf::from("candidate.snapshot.json.gz")
    }
}

/// The snapshot of every workload's candidate (see
/// [`candidate_snapshot_path`]), so the uploaded report carries the next
/// baseline.
fn candidate_snapshots(sides: &[Sides], directory_mode: bool) -> Vec<OutFile> {
    sides
        .iter()
        .filter_map(|(name, _, candidate)| {
            Some(OutFile {
                path: candidate_snapshot_path(directory_mode, name),
                bytes: candidate.as_ref()?.snapshot.to_gz_bytes(),
            })
        })
        .collect()
}

/// The packages `replay/<workload>-<op>-<hash>.tar.gz` of the findings the
/// policy's `replay` section selects (docs/REPLAY.md), built from the
/// candidate's op row (the baseline's when only it has the op), each named
/// in its findings' `replay_package`. Findings left without one get a note
/// in their workload's summary.
fn replay_packages(verdict: &mut Verdict, sides: &[Sides], policy: &Policy) -> Vec<OutFile> {
    // Kernels a graph replayed with no op known: nothing to call, one note.
    let mut graph_kernels: Vec<usize> = Vec::new();
    // A drift finding sums an op's shapes over merges: no one call to replay.
    let mut drifts: Vec<usize> = Vec::new();
    let selection = replay::select_packages(verdict, &policy.replay, |finding, op| {
        if finding.rule == drift::DRIFT_RULE {
            drifts.extend(
                verdict
                    .findings
                    .iter()
                    .position(|f| std::ptr::eq(f, finding)),
            );
            return Err(ReplayError::NoSuchRow {
                name: op.name.clone(),
            });
        }
        let (_, baselines, candidate) = sides
            .iter()
            .find(|(name, ..)| *name == finding.workload)
            .ok_or_else(|| ReplayError::NoSuchRow {
            name: op.name.clone(),
        })?;
        let snapshots = candidate.iter().chain(baselines).map(|side| &side.snapshot);
        let is_graph_kernel = snapshots.clone().flat_map(|s| &s.ops).any(|row| {
            row.name == op.name
                && row.input_dims == op.input_dims
                && row
                    .graph
                    .as_ref()
                    .is_some_and(|g| g.role != GraphRole::CapturedOp)
        });
        if is_graph_kernel {
            graph_kernels.extend(
                verdict
                    .findings
                    .iter()
                    .position(|f| std::ptr::eq(f, finding)),
            );
            return Err(ReplayError::NoShapes {
                name: op.name.clone(),
            });
        }
        replay::ir_for_op_ref(snapshots, op)
    });
    let mut graph_kernel_rows: BTreeMap<String, usize> = BTreeMap::new();
    for (index, reason) in &selection.skipped {
        let workload = verdict.findings[*index].workload.clone();
        if drifts.contains(index) {
            continue;
        }
        if graph_kernels.contains(index) {
            *graph_kernel_rows.entry(workload).or_default() += 1;
        } else if let Some(summary) = verdict.workloads.iter_mut().find(|w| w.name == workload) {
            summary.notes.push(format!("no replay package: {reason}"));
        }
    }
    for (workload, count) in graph_kernel_rows {
        if let Some(summary) = verdict.workloads.iter_mut().find(|w| w.name == workload) {
            summary.notes.push(format!(
                "no replay package for {count} row(s) of graph-replayed kernels: no op is known to \
                 call (give the capture trace to attribute them to ops)"
            ));
        }
    }
    let mut files = Vec::with_capacity(selection.packages.len());
    for package in &selection.packages {
        let (file_name, bytes) = replay::write_package(
            &package.ir,
            &PackageContext::for_finding(verdict, package.findings[0]),
        );
        for &index in &package.findings {
            verdict.findings[index].replay_package = Some(format!("replay/{file_name}"));
        }
        files.push(OutFile {
            path: Path::new("replay").join(file_name),
            bytes,
        });
    }
    files
}

/// The replay packages an earlier `check --out-dir` left in `dir` (see
/// [`is_replay_package`]), for the caller to remove before it writes this
/// check's, so that a re-used out dir holds only the ones the report
/// names; every other file is left alone. None when `dir` does not exist.
pub fn earlier_packages(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(Error(format!(
                "{}: cannot read directory: {e}",
                dir.display()
            )));
        }
    };
    let mut found = Vec::new();
    for entry in entries {
        let path = entry
            .map_err(|e| Error(format!("{}: {e}", dir.display())))?
            .path();
        if is_replay_package(&path) {
            found.push(path);
        }
    }
    Ok(found)
}

/// Whether `path` is a replay package as [`replay::write_package`] writes
/// them: a file `<stem>.tar.gz` whose stem ends in `-` and 8 lowercase hex
/// digits, holding exactly `<stem>/` and the [`PACKAGE_FILES`] in it, in
/// that order. A user's file, even a tarball of the same name, is not.
fn is_replay_package(path: &Path) -> bool {
    let Some(stem) = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(".tar.gz"))
    else {
        return false;
    };
    let hashed = stem.rsplit_once('-').is_some_and(|(_, hash)| {
        hash.len() == 8 && hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    });
    if !hashed || !path.is_file() {
        return false;
    }
    let Ok(file) = fs::File::open(path) else {
        return false;
    };
    let expected: Vec<String> = std::iter::once(format!("{stem}/"))
        .chain(PACKAGE_FILES.iter().map(|name| format!("{stem}/{name}")))
        .collect();
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(file));
    let Ok(entries) = archive.entries() else {
        return false;
    };
    let mut found = Vec::new();
    for entry in entries {
        let Ok(entry) = entry else {
            return false;
        };
        found.push(String::from_utf8_lossy(&entry.path_bytes()).into_owned());
        if found.len() > expected.len() {
            return false;
        }
    }
    found == expected
}

/// The verdict in a `report.json` an earlier `check` wrote (for `tracegate
/// comment`); an error when it is not one, or of another schema version.
pub fn read_report(path: &Path) -> Result<Verdict, Error> {
    let text = fs::read_to_string(path)
        .map_err(|e| Error(format!("{}: cannot read: {e}", path.display())))?;
    let verdict: Verdict = serde_json::from_str(&text).map_err(|e| {
        Error(format!(
            "{}: not a report.json from `tracegate check`: {e}",
            path.display()
        ))
    })?;
    if verdict.schema_version != VERDICT_SCHEMA_VERSION {
        return Err(Error(format!(
            "{}: report schema version {}, this tracegate reads {VERDICT_SCHEMA_VERSION}",
            path.display(),
            verdict.schema_version
        )));
    }
    Ok(verdict)
}
