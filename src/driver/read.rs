//! Reading one input: a trace (loaded with its progress bar, linked,
//! analysed, with its capture trace) or a snapshot, told apart by content,
//! into a profile or a snapshot; a trace with communication kernels keeps
//! its rank's part ([`RankSnapshot`]).

use std::fs;
use std::path::Path;

use crate::analysis::analyse::{self, AnalysisOptions};
use crate::analysis::graph::{self, Capture};
use crate::analysis::profile::Profile;
use crate::analysis::ranks::input::{comm_time, rank_input, rank_of};
use crate::gate::snapshot::{self, RankSnapshot, Snapshot};
use crate::trace::capture_folder::capture_files;
use crate::trace::{self, Trace, link};

use super::{Error, ReadOptions};

/// Reads one trace or snapshot (detected by content) into a snapshot, as
/// `check` and `history add` read their inputs: a trace is analysed with
/// `options` (its graph replays merged with `capture` when given).
pub fn snapshot_of_input(
    path: &Path,
    capture: Option<&Path>,
    options: &AnalysisOptions,
    read: &ReadOptions,
) -> Result<Snapshot, Error> {
    snapshot_or_trace(path, read, || {
        snapshot_of_trace(path, capture, options, read)
    })
}

/// One rank's part of a rank set: what [`snapshot_of_input`] gives once
/// its op rows are dropped ([`Snapshot::without_rows`]) as far as
/// [`Snapshot::merge_ranks`] reads it. A trace with communication kernels
/// is read for them alone, as `report DIR` reads a rank (its op rows,
/// timeline and fingerprint are never merged); one without is analysed
/// whole, since the merge takes its communication time from its timeline.
pub fn rank_part_of_input(
    path: &Path,
    options: &AnalysisOptions,
    read: &ReadOptions,
) -> Result<Snapshot, Error> {
    let snapshot = snapshot_or_trace(path, read, || {
        let trace = load_with_progress(path, read)?;
        let part = rank_part(&trace, path, options);
        if !part.kernels.is_empty() {
            return Ok(Snapshot::of_rank(part));
        }
        let hash = sha256_of(path)?;
        snapshot_of_loaded(&trace, hash, part, None, options, read)
    })?;
    Ok(snapshot.without_rows())
}

/// The snapshot at `path` when its content says it is one, else what
/// `of_trace` reads there.
fn snapshot_or_trace(
    path: &Path,
    read: &ReadOptions,
    of_trace: impl FnOnce() -> Result<Snapshot, Error>,
) -> Result<Snapshot, Error> {
    // Before anything reads it: a FIFO would block, /dev/zero never end.
    trace::check_file_type(path, &read.limits)?;
    let is_snapshot = snapshot::is_snapshot(path)
        .map_err(|e| Error(format!("{}: cannot read: {e}", path.display())))?;
    if is_snapshot {
        return Snapshot::load_path(path).map_err(|e| Error(e.to_string()));
    }
    match of_trace() {
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
    read: &ReadOptions,
) -> Result<(Trace, Profile), Error> {
    let trace = load_with_progress(path, read)?;
    let profile = profile_of_loaded(&trace, capture, options, read)?;
    Ok((trace, profile))
}

/// [`profile_of_trace`] of a trace already loaded.
fn profile_of_loaded(
    trace: &Trace,
    capture: Option<&Path>,
    options: &AnalysisOptions,
    read: &ReadOptions,
) -> Result<Profile, Error> {
    let tree = link::link(trace);
    let Some(capture_path) = capture else {
        return Ok(analyse::analyse_with(trace, &tree, options));
    };
    trace::check_file_type(capture_path, &read.limits)?;
    let listed = capture_files(capture_path)?;
    let mut loaded = Vec::new();
    for index in graph::wanted(trace, &listed.files) {
        let file = &listed.files[index];
        trace::check_file_type(&file.path, &read.limits)?;
        let capture = load_with_progress(&file.path, read)?;
        let capture_tree = link::link(&capture);
        loaded.push((capture, capture_tree, file));
    }
    let captures: Vec<Capture> = loaded
        .iter()
        .map(|(capture, tree, file)| Capture::listed(capture, tree, file))
        .collect();
    let mut profile = analyse::analyse_with_captures(trace, &tree, options, &captures);
    if let Some(merge) = profile
        .graph_replay
        .as_mut()
        .and_then(|r| r.capture.as_mut())
    {
        merge.notes.extend(listed.notes);
    }
    Ok(profile)
}

/// Loads, links and analyses a trace (with its capture trace, when given)
/// into a snapshot.
pub fn snapshot_of_trace(
    path: &Path,
    capture: Option<&Path>,
    options: &AnalysisOptions,
    read: &ReadOptions,
) -> Result<Snapshot, Error> {
    trace::check_file_type(path, &read.limits)?;
    let hash = sha256_of(path)?;
    let trace = load_with_progress(path, read)?;
    let part = rank_part(&trace, path, options);
    snapshot_of_loaded(&trace, hash, part, capture, options, read)
}

/// The file's SHA-256 and size, as a snapshot records them.
fn sha256_of(path: &Path) -> Result<(String, u64), Error> {
    snapshot::sha256_file(path).map_err(|e| Error(format!("{}: cannot read: {e}", path.display())))
}

/// [`snapshot_of_trace`] of a trace already loaded, whose file hashed to
/// `(sha256, bytes)` and whose rank's communication is `part`.
fn snapshot_of_loaded(
    trace: &Trace,
    (sha256, bytes): (String, u64),
    part: RankSnapshot,
    capture: Option<&Path>,
    options: &AnalysisOptions,
    read: &ReadOptions,
) -> Result<Snapshot, Error> {
    let profile = profile_of_loaded(trace, capture, options, read)?;
    let mut snapshot = Snapshot::from_profile(&profile, sha256, bytes);
    snapshot.fingerprint.pytorch_version = snapshot::pytorch_version(&trace.metadata);
    Ok(snapshot.with_rank(part))
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

/// Loads the trace `command` reads ([`load_with_progress`]); a snapshot in
/// its place is named as one ([`snapshot_or`]).
pub fn load_trace(path: &Path, read: &ReadOptions, command: &str) -> Result<Trace, Error> {
    load_with_progress(path, read).map_err(|error| snapshot_or(path, command, error))
}

/// `error`, the reason the trace at `path` did not load; or, when `path`
/// holds a tracegate snapshot, the error that says so and that `command`
/// reads traces. A snapshot is recognised from its first kilobyte, or,
/// re-saved with its keys reordered, by reading it as one. Only a regular
/// file is looked into (a FIFO would block).
pub fn snapshot_or(path: &Path, command: &str, error: Error) -> Error {
    let snapshot = path.is_file()
        && (snapshot::is_snapshot(path).unwrap_or(false)
            || snapshot::Snapshot::load_path(path).is_ok());
    if snapshot {
        Error(format!(
            "{}: this is a tracegate snapshot; `{command}` reads traces (use `check` to compare snapshots)",
            path.display()
        ))
    } else {
        error
    }
}

/// Loads a trace, with a progress bar for its bytes unless `quiet`.
fn load_with_progress(path: &Path, read: &ReadOptions) -> Result<Trace, Error> {
    let limits = &read.limits;
    let size = fs::metadata(path)
        .map_err(|e| Error(format!("{}: cannot read: {e}", path.display())))?
        .len();
    if read.quiet {
        return Ok(trace::load_file_with(path, limits, &mut |_| {})?);
    }
    let bar = read.progress.bytes(path, size);
    let result = trace::load_file_with(path, limits, &mut |read| bar.set_position(read));
    bar.finish();
    Ok(result?)
}
