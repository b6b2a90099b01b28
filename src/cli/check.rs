//! `check`: the I/O around the gate — reading traces and snapshots (files
//! or directories of workloads, through `read.rs` and, for rank sets,
//! `rank_check.rs`), pairing workloads, writing the report files and the
//! GitHub Actions outputs.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use tracegate::analysis::analyse::AnalysisOptions;
use tracegate::analysis::hardware::Hardware;
use tracegate::analysis::profile::GraphRole;
use tracegate::gate::compare::{self, CompareOptions};
use tracegate::gate::judge::{self, JudgeOptions, Workload};
use tracegate::gate::policy::{HardwareChoice, Policy};
use tracegate::gate::snapshot::{self, Snapshot};
use tracegate::gate::verdict::{Finding, Verdict};
use tracegate::history::drift;
use tracegate::publish::replay::{self, PackageContext, ReplayError};
use tracegate::render::{actions, gate};

use super::jobs;
use super::read::{ReadOptions, snapshot_of_input};
use super::{Failure, history_gate, history_store, rank_check, replay_files};

/// A snapshot with the hardware it was judged on.
pub struct Side {
    /// The profile.
    pub snapshot: Snapshot,
    /// Catalog hardware, when known.
    pub hardware: Option<Hardware>,
}

/// Reads one trace or snapshot (detected by content) into a snapshot; a
/// trace's graph replays are merged with `capture` when given. With
/// `--ranks`, `path` is one job's ranks, merged ([`rank_check::rank_set`]).
pub fn read_input(
    path: &Path,
    capture: Option<&Path>,
    choice: &HardwareChoice,
    policy: &Policy,
    read: &ReadOptions,
) -> Result<Side, Failure> {
    let options = AnalysisOptions {
        catalog: policy.hardware.catalog.clone(),
        hardware: choice.hardware().cloned(),
        comm: policy.communication.kernels.clone(),
    };
    let snapshot = if read.ranks {
        rank_check::rank_set(path, capture, &options, read)?
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

/// The name suffix of a capture trace beside its workload in a directory:
/// `NAME.capture.json.gz` is the capture trace of workload `NAME`.
const CAPTURE_SUFFIX: &str = ".capture";

/// One workload file of a directory, with the capture trace beside it.
#[derive(Clone, Debug)]
pub struct Input {
    /// The trace or snapshot.
    pub path: PathBuf,
    /// `NAME.capture.json[.gz]` beside it, or the `--…-capture` flag.
    pub capture: Option<PathBuf>,
}

/// The trace or snapshot files of a directory, by workload name, each with
/// its capture trace when the directory has one.
fn workload_inputs(dir: &Path) -> Result<BTreeMap<String, Input>, Failure> {
    let mut files = workload_files(dir)?;
    let captures: Vec<String> = files
        .keys()
        .filter(|name| name.ends_with(CAPTURE_SUFFIX))
        .cloned()
        .collect();
    let mut inputs: BTreeMap<String, Input> = BTreeMap::new();
    let mut capture_of: BTreeMap<String, PathBuf> = BTreeMap::new();
    for name in captures {
        let path = files.remove(&name).expect("listed");
        let workload = name.trim_end_matches(CAPTURE_SUFFIX).to_string();
        if !files.contains_key(&workload) {
            return Err(Failure::input(format!(
                "{}: a capture trace without a workload `{workload}` beside it",
                path.display()
            )));
        }
        capture_of.insert(workload, path);
    }
    for (name, path) in files {
        let capture = capture_of.remove(&name);
        inputs.insert(name, Input { path, capture });
    }
    Ok(inputs)
}

/// The trace or snapshot files of a directory, by workload name.
fn workload_files(dir: &Path) -> Result<BTreeMap<String, PathBuf>, Failure> {
    let entries = fs::read_dir(dir)
        .map_err(|e| Failure::input(format!("{}: cannot read directory: {e}", dir.display())))?;
    let mut files = BTreeMap::new();
    for entry in entries {
        let path = entry
            .map_err(|e| Failure::input(format!("{}: {e}", dir.display())))?
            .path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if path.is_file() && (name.ends_with(".json") || name.ends_with(".json.gz")) {
            if let Some(previous) = files.insert(snapshot::workload_name(&path), path.clone()) {
                return Err(Failure::input(format!(
                    "{} and {} are the same workload: keep one",
                    previous.display(),
                    path.display()
                )));
            }
        }
    }
    if files.is_empty() {
        return Err(Failure::input(format!(
            "{}: no .json or .json.gz traces or snapshots",
            dir.display()
        )));
    }
    Ok(files)
}

/// One workload's inputs: its name, its baseline runs, its candidate.
type WorkloadInputs = (String, Vec<Input>, Option<Input>);

/// The capture traces given on the command line, per side.
#[derive(Clone, Copy, Debug, Default)]
pub struct Captures<'a> {
    /// `--baseline-capture`: for every baseline file.
    pub baseline: Option<&'a Path>,
    /// `--candidate-capture`: for the candidate file.
    pub candidate: Option<&'a Path>,
}

/// Pairs baselines with the candidate into workloads: files compare as one
/// workload (with the capture traces given for each side), and so do
/// directories of one job's `ranks`; other directories pair files by
/// workload name (each with the `NAME.capture.json[.gz]` beside it).
pub fn pair_inputs(
    baselines: &[PathBuf],
    candidate: &Path,
    captures: Captures<'_>,
    ranks: bool,
) -> Result<Vec<WorkloadInputs>, Failure> {
    if ranks || !candidate.is_dir() {
        if let Some(dir) = baselines.iter().find(|b| b.is_dir() && !ranks) {
            return Err(Failure::input(format!(
                "--baseline {} is a directory but --candidate {} is a file: give both as files or both as directories",
                dir.display(),
                candidate.display()
            )));
        }
        let input = |path: &Path, capture: Option<&Path>| Input {
            path: path.to_path_buf(),
            capture: capture.map(Path::to_path_buf),
        };
        return Ok(vec![(
            snapshot::workload_name(candidate),
            baselines
                .iter()
                .map(|b| input(b, captures.baseline))
                .collect(),
            Some(input(candidate, captures.candidate)),
        )]);
    }
    if let Some(flag) = captures.baseline.or(captures.candidate) {
        return Err(Failure::input(format!(
            "--baseline-capture/--candidate-capture {} is for file inputs: in a directory, \
             put NAME.capture.json.gz beside workload NAME",
            flag.display()
        )));
    }
    let candidates = workload_inputs(candidate)?;
    let mut by_name: BTreeMap<String, (Vec<Input>, Option<Input>)> = BTreeMap::new();
    for baseline in baselines {
        if !baseline.is_dir() {
            return Err(Failure::input(format!(
                "--candidate {} is a directory but --baseline {} is a file: give both as directories",
                candidate.display(),
                baseline.display()
            )));
        }
        for (name, path) in workload_inputs(baseline)? {
            by_name.entry(name).or_default().0.push(path);
        }
    }
    for (name, path) in candidates {
        by_name.entry(name).or_default().1 = Some(path);
    }
    Ok(by_name
        .into_iter()
        .map(|(name, (b, c))| (name, b, c))
        .collect())
}

/// Compares every workload and judges them; with an out dir, also writes the
/// replay packages the policy selects.
pub fn check(
    baseline: &Baseline<'_>,
    candidate: &Path,
    captures: Captures<'_>,
    policy: &Policy,
    read: &ReadOptions,
    out_dir: Option<&Path>,
    options: &JudgeOptions,
) -> Result<Verdict, Failure> {
    let (paths, history, learning) = match baseline {
        Baseline::Paths(paths) => (*paths, None, None),
        Baseline::History { dir, commit } => {
            (&[][..], Some((history_store::entries(dir)?, *commit)), None)
        }
        Baseline::PathsLearning { paths, dir, commit } => {
            (*paths, None, Some((history_store::entries(dir)?, *commit)))
        }
    };
    let pairs = pair_inputs(paths, candidate, captures, read.ranks)?;
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
        jobs::file_size(&i.path) + i.capture.as_deref().map_or(0, jobs::file_size)
    };
    let mut read_sides = jobs::read_all(
        &inputs,
        read.jobs,
        read.quiet,
        size,
        |(i, choice), quiet| {
            let capture = i.capture.as_deref();
            read_input(&i.path, capture, choice, policy, &read.with_quiet(quiet))
        },
    )?;
    let mut next_side = || read_sides.next().expect("one result per input");
    let mut sides: Vec<(String, Vec<Side>, Option<Side>)> = Vec::new();
    // Workloads the history has no window for, and why; windows' notes.
    let mut no_baseline: BTreeMap<String, String> = BTreeMap::new();
    let mut notes: Vec<(String, String)> = Vec::new();
    // Drift and rank-set findings, for the judge to add.
    let mut added: Vec<Finding> = Vec::new();
    for (name, baseline_inputs, candidate_input) in pairs {
        let mut baseline_sides = baseline_inputs
            .iter()
            .map(|_| next_side())
            .collect::<Result<Vec<_>, _>>()?;
        let candidate_side = candidate_input.map(|_| next_side()).transpose()?;
        if let (Some(((store, entries), commit)), Some(candidate)) = (&history, &candidate_side) {
            let snapshot = &candidate.snapshot;
            match history_gate::history_window(store, entries, &name, snapshot, policy, *commit)? {
                Ok((window, note)) => {
                    added.extend(history_gate::drift_findings(
                        store, entries, &window, &name, snapshot, policy, *commit,
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
                    notes.push((name.clone(), note));
                }
                Err(reason) => {
                    no_baseline.insert(name.clone(), reason);
                }
            }
        }
        sides.push((name, baseline_sides, candidate_side));
    }
    let mut workloads = Vec::new();
    for (name, baseline_sides, candidate_side) in &sides {
        let workload = match (baseline_sides.is_empty(), candidate_side) {
            (true, _) if no_baseline.contains_key(name) => Workload::NoBaseline {
                name: name.clone(),
                reason: no_baseline[name].clone(),
            },
            (true, _) => Workload::OnlyCandidate(name.clone()),
            (false, None) => Workload::OnlyBaseline(name.clone()),
            (false, Some(candidate)) => {
                let (baseline_hardware, candidate_hardware) = on_basis(
                    baseline_sides.iter().find_map(|s| s.hardware.as_ref()),
                    candidate.hardware.as_ref(),
                    policy,
                );
                let learned = match &learning {
                    Some(((store, entries), commit)) => {
                        let (learned, note) = history_gate::learned_ratios(
                            store,
                            entries,
                            name,
                            &baseline_sides[0].snapshot,
                            &candidate.snapshot,
                            policy,
                            *commit,
                        )?;
                        notes.push((name.clone(), note));
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
                let snapshots: Vec<Snapshot> =
                    baseline_sides.iter().map(|s| s.snapshot.clone()).collect();
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
                added.extend(rank_check::findings(
                    name,
                    &snapshots,
                    &candidate.snapshot,
                    judge::one_call_noise(&comparison, policy),
                    policy,
                )?);
                Workload::Compared {
                    comparison,
                    candidate: &candidate.snapshot,
                    baseline_hardware,
                    candidate_hardware,
                }
            }
        };
        workloads.push(workload);
    }
    let options = JudgeOptions {
        findings: options.findings.iter().cloned().chain(added).collect(),
        ..options.clone()
    };
    let mut verdict = judge::judge_with(&workloads, policy, &options);
    for (name, note) in notes {
        if let Some(summary) = verdict.workloads.iter_mut().find(|w| w.name == name) {
            summary.notes.push(note);
        }
    }
    if let Some(dir) = out_dir {
        write_candidate_snapshots(&sides, candidate.is_dir() && !read.ranks, dir)?;
        write_replay_packages(&mut verdict, &sides, policy, dir)?;
    }
    Ok(verdict)
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
) -> Failure {
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
    Failure::input(format!(
        "{workload}: the baseline ran on {} and the candidate on {}, but the policy judges one \
         platform; to compare across GPUs use a cross-platform policy (policies/cross-platform.yaml, \
         or `cross_platform: {{enabled: true}}`) or pass --cross-platform (it {})",
        gpus(&comparison.baseline_hardware, baselines.first()),
        gpus(&comparison.candidate_hardware, Some(candidate)),
        policy.cross_platform_flag_effect(),
    ))
}

/// Where `check --out-dir DIR` writes the candidate's snapshot of workload
/// `name`: `DIR/candidate.snapshot.json.gz` for a file, and for a directory
/// `DIR/snapshots/NAME.snapshot.json.gz`, the name a later check pairs with
/// the candidate's `NAME.json.gz`. Either can be promoted to the baseline
/// as it is.
fn candidate_snapshot_path(out_dir: &Path, directory_mode: bool, name: &str) -> PathBuf {
    if directory_mode {
        out_dir
            .join("snapshots")
            .join(format!("{name}.snapshot.json.gz"))
    } else {
        out_dir.join("candidate.snapshot.json.gz")
    }
}

/// Writes the snapshot of every workload's candidate (see
/// [`candidate_snapshot_path`]), so the uploaded report carries the next
/// baseline.
fn write_candidate_snapshots(
    sides: &[(String, Vec<Side>, Option<Side>)],
    directory_mode: bool,
    out_dir: &Path,
) -> Result<(), Failure> {
    for (name, _, candidate) in sides {
        let Some(candidate) = candidate else { continue };
        let path = candidate_snapshot_path(out_dir, directory_mode, name);
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).map_err(|e| {
                Failure::input(format!("{}: cannot create directory: {e}", dir.display()))
            })?;
        }
        candidate
            .snapshot
            .write_path(&path)
            .map_err(|e| Failure::input(format!("{}: cannot write: {e}", path.display())))?;
    }
    Ok(())
}

/// Writes `DIR/replay/<workload>-<op>-<hash>.tar.gz` for the findings the
/// policy's `replay` section selects (docs/REPLAY.md), built from the
/// candidate's op row (the baseline's when only it has the op), and names
/// each package in its findings' `replay_package`. Findings left without
/// one get a note in their workload's summary. The packages an earlier run
/// left in `DIR/replay/` are removed first, so that a re-used out dir
/// holds only the ones this report names.
fn write_replay_packages(
    verdict: &mut Verdict,
    sides: &[(String, Vec<Side>, Option<Side>)],
    policy: &Policy,
    out_dir: &Path,
) -> Result<(), Failure> {
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
    let dir = out_dir.join("replay");
    let removed = replay_files::remove_earlier_packages(&dir)?;
    if selection.packages.is_empty() {
        if removed > 0 {
            // Emptied of our own packages: gone, as after a first run that
            // wrote none; a folder still holding anything else stays.
            let _ = fs::remove_dir(&dir);
        }
        return Ok(());
    }
    fs::create_dir_all(&dir)
        .map_err(|e| Failure::input(format!("{}: cannot create directory: {e}", dir.display())))?;
    for package in &selection.packages {
        let (file_name, bytes) = replay::write_package(
            &package.ir,
            &PackageContext::for_finding(verdict, package.findings[0]),
        );
        let path = dir.join(&file_name);
        fs::write(&path, bytes)
            .map_err(|e| Failure::input(format!("{}: cannot write: {e}", path.display())))?;
        for &index in &package.findings {
            verdict.findings[index].replay_package = Some(format!("replay/{file_name}"));
        }
    }
    Ok(())
}

/// Where the report files go and how the comment is rendered.
pub struct OutputOptions<'a> {
    /// `--out-dir`.
    pub out_dir: Option<&'a Path>,
    /// `--template-dir`.
    pub template_dir: Option<&'a Path>,
    /// `--comment-key`.
    pub comment_key: &'a str,
}

/// Writes report.json, comment.md and summary.md; under GitHub Actions also
/// the step summary, the step outputs and the annotations (to stdout).
pub fn write_outputs(verdict: &Verdict, options: &OutputOptions) -> Result<Vec<String>, Failure> {
    let template_error = |e: gate::TemplateError| Failure::input(e.to_string());
    let comment = gate::render_comment(verdict, options.comment_key, options.template_dir)
        .map_err(template_error)?;
    let summary = gate::render_summary(verdict, options.template_dir).map_err(template_error)?;
    let mut paths = (None, None, None);
    if let Some(dir) = options.out_dir {
        fs::create_dir_all(dir).map_err(|e| {
            Failure::input(format!("{}: cannot create directory: {e}", dir.display()))
        })?;
        let write = |name: &str, text: &str| -> Result<PathBuf, Failure> {
            let path = dir.join(name);
            fs::write(&path, text)
                .map_err(|e| Failure::input(format!("{}: cannot write: {e}", path.display())))?;
            Ok(path)
        };
        paths = (
            Some(write("report.json", &gate::render_report_json(verdict))?),
            Some(write("comment.md", &comment)?),
            Some(write("summary.md", &summary)?),
        );
    }
    let mut annotations = Vec::new();
    if std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true") {
        if let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY") {
            append(Path::new(&path), &summary)?;
        }
        if let Some(path) = std::env::var_os("GITHUB_OUTPUT") {
            let outputs = actions::OutputPaths {
                report: paths.0.as_deref(),
                comment: paths.1.as_deref(),
                summary: paths.2.as_deref(),
            };
            append(
                Path::new(&path),
                &actions::github_output_lines(verdict, &outputs),
            )?;
        }
        annotations = actions::annotations(verdict);
    }
    Ok(annotations)
}

fn append(path: &Path, text: &str) -> Result<(), Failure> {
    let mut file = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| Failure::input(format!("{}: cannot open: {e}", path.display())))?;
    file.write_all(text.as_bytes())
        .map_err(|e| Failure::input(format!("{}: cannot write: {e}", path.display())))
}
