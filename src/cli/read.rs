//! Reading one input of `snapshot`, `check` and `history add`: a trace
//! (loaded, linked, analysed, with its capture trace) or a snapshot, told
//! apart by content, into a snapshot; a trace with communication kernels
//! keeps its rank's part ([`RankSnapshot`]).

use std::path::Path;

use tracegate::analysis::analyse::{self, AnalysisOptions};
use tracegate::analysis::graph::{self, Capture};
use tracegate::analysis::profile::Profile;
use tracegate::analysis::ranks::input::{comm_time, rank_input, rank_of};
use tracegate::gate::snapshot::{self, RankSnapshot, Snapshot};
use tracegate::trace::capture_folder::capture_files;
use tracegate::trace::{self, LoadLimits, Trace, link};

use super::jobs::Jobs;
use super::{Failure, load_with_progress};
use regex::Regex;

/// How inputs are read: `--quiet`, the input limits and `--jobs`.
pub struct ReadOptions {
    /// No progress bar.
    pub quiet: bool,
    /// What one trace may cost to load.
    pub limits: LoadLimits,
    /// How many inputs are read at once.
    pub jobs: Jobs,
    /// `--ranks`: a directory is one job's ranks, not a set of workloads.
    pub ranks: bool,
    /// `--rank-regex`: each rank's file's rank from its name.
    pub rank_regex: Option<Regex>,
}

impl ReadOptions {
    /// These options with `quiet` as [`super::jobs::read_all`] asks for one input.
    pub fn with_quiet(&self, quiet: bool) -> ReadOptions {
        ReadOptions {
            quiet,
            limits: self.limits.clone(),
            jobs: self.jobs,
            ranks: self.ranks,
            rank_regex: self.rank_regex.clone(),
        }
    }
}

/// Reads one trace or snapshot (detected by content) into a snapshot, as
/// `check` and `history add` read their inputs: a trace is analysed with
/// `options` (its graph replays merged with `capture` when given).
pub fn snapshot_of_input(
    path: &Path,
    capture: Option<&Path>,
    options: &AnalysisOptions,
    read: &ReadOptions,
) -> Result<Snapshot, Failure> {
    // Before anything reads it: a FIFO would block, /dev/zero never end.
    trace::check_file_type(path, &read.limits)?;
    let is_snapshot = snapshot::is_snapshot(path)
        .map_err(|e| Failure::input(format!("{}: cannot read: {e}", path.display())))?;
    if is_snapshot {
        return Snapshot::load_path(path).map_err(|e| Failure::input(e.to_string()));
    }
    match snapshot_of_trace(path, capture, options, read.quiet, &read.limits) {
        Ok(snapshot) => Ok(snapshot),
        // A snapshot re-saved with its keys reordered is not recognised
        // from its first kilobyte; it is still a snapshot.
        Err(failure) => Snapshot::load_path(path).map_err(|_| failure),
    }
}

/// Loads, links and analyses a trace, attributing its graph replays to the
/// ops of `capture` (a trace recorded while the graphs were captured, or a
/// folder of them with its `execution_details.json`) when given.
pub fn profile_of_trace(
    path: &Path,
    capture: Option<&Path>,
    options: &AnalysisOptions,
    quiet: bool,
    limits: &LoadLimits,
) -> Result<(Trace, Profile), Failure> {
    let trace = load_with_progress(path, quiet, limits)?;
    let tree = link::link(&trace);
    let Some(capture_path) = capture else {
        let profile = analyse::analyse_with(&trace, &tree, options);
        return Ok((trace, profile));
    };
    trace::check_file_type(capture_path, limits)?;
    let listed = capture_files(capture_path)?;
    let mut loaded = Vec::new();
    for index in graph::wanted(&trace, &listed.files) {
        let file = &listed.files[index];
        trace::check_file_type(&file.path, limits)?;
        let capture = load_with_progress(&file.path, quiet, limits)?;
        let capture_tree = link::link(&capture);
        loaded.push((capture, capture_tree, file));
    }
    let captures: Vec<Capture> = loaded
        .iter()
        .map(|(capture, tree, file)| Capture::listed(capture, tree, file))
        .collect();
    let mut profile = analyse::analyse_with_captures(&trace, &tree, options, &captures);
    if let Some(merge) = profile
        .graph_replay
        .as_mut()
        .and_then(|r| r.capture.as_mut())
    {
        merge.notes.extend(listed.notes);
    }
    Ok((trace, profile))
}

/// Loads, links and analyses a trace (with its capture trace, when given)
/// into a snapshot.
pub fn snapshot_of_trace(
    path: &Path,
    capture: Option<&Path>,
    options: &AnalysisOptions,
    quiet: bool,
    limits: &LoadLimits,
) -> Result<Snapshot, Failure> {
    trace::check_file_type(path, limits)?;
    let (sha256, bytes) = snapshot::sha256_file(path)
        .map_err(|e| Failure::input(format!("{}: cannot read: {e}", path.display())))?;
    let (trace, profile) = profile_of_trace(path, capture, options, quiet, limits)?;
    let mut snapshot = Snapshot::from_profile(&profile, sha256, bytes);
    snapshot.fingerprint.pytorch_version = snapshot::pytorch_version(&trace.metadata);
    Ok(snapshot.with_rank(rank_part(&trace, path, options)))
}

/// The rank's communication: its kernels as the rank-set analysis reads
/// them and its communication time as `report DIR` does, its rank from
/// `distributedInfo.rank` or the file name.
fn rank_part(trace: &Trace, path: &Path, options: &AnalysisOptions) -> RankSnapshot {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let rank = rank_of(trace, name);
    let input = rank_input(trace, rank.unwrap_or(0), &options.comm);
    let comm_time = comm_time(trace, &options.comm);
    RankSnapshot::of(rank, name, &input.kernels, &comm_time)
}
