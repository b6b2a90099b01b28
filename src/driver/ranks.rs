//! Rank sets: `report DIR|GLOB`'s traces read as the ranks of one job
//! ([`report`]); in `snapshot --ranks`, `check --ranks` and `history add
//! --ranks`, a directory or a glob (or a file) of one job's per-rank
//! traces or snapshots, wherever each was made, each rank told as `report`
//! tells it (`--rank-regex` too), read into one snapshot
//! ([`Snapshot::merge_ranks`]); and the rank-set findings `check` adds for
//! a workload whose sides hold several ranks ([`collectives::judge`]), or
//! the floors of one rank's collectives ([`collectives::floor::judge`]).

use std::path::{Path, PathBuf};

use regex::Regex;

use crate::analysis::analyse::AnalysisOptions;
use crate::analysis::ranks::{self, RankContext, RankInput, RankSet};
use crate::gate::collectives;
use crate::gate::policy::Policy;
use crate::gate::snapshot::{self, Snapshot, missing_ranks};
use crate::gate::verdict::{Finding, SingleSampleNoise};

use super::inputs::{file_name, is_glob, rank_by_regex, rank_set_files, workload_of};
use super::read::{load_trace, rank_part_of_input, snapshot_of_input};
use super::{Error, ReadOptions, jobs};

/// `report DIR|GLOB`: the traces at `input` (a directory's, a glob's, or
/// with `--rank-regex` those whose names it matches) as the ranks of one
/// job, each rank told from `distributedInfo.rank` or the file name (or by
/// the regex), analysed together.
pub fn report(
    input: &Path,
    options: &AnalysisOptions,
    read: &ReadOptions,
) -> Result<RankSet, Error> {
    let paths = rank_set_files(input, read.rank_regex.as_ref())?;
    let comm = &options.comm;
    let mut inputs: Vec<RankInput> = Vec::new();
    let mut contexts: Vec<RankContext> = Vec::new();
    for path in &paths {
        let trace = load_trace(path, read, "report")?;
        let rank = match &read.rank_regex {
            Some(regex) => rank_by_regex(regex, path)?,
            None => ranks::input::rank_of(&trace, file_name(path)).ok_or_else(|| {
                Error(format!(
                    "{}: cannot tell its rank: no distributedInfo.rank and no rank<N> in the file name (give --rank-regex)",
                    path.display()
                ))
            })?,
        };
        if let Some(other) = inputs.iter().find(|input| input.rank == rank) {
            return Err(Error(format!(
                "{} and {} are both rank {rank}",
                other.source,
                path.display()
            )));
        }
        inputs.push(ranks::input::rank_input(&trace, rank, comm));
        contexts.push(ranks::input::rank_context(
            &trace,
            rank,
            comm,
            &options.catalog,
            options.hardware.as_ref(),
        ));
    }
    inputs.sort_by_key(|input| input.rank);
    Ok(ranks::analyse_with(&inputs, &contexts))
}

/// The snapshot of one job's ranks at `path`: a directory of per-rank
/// traces or snapshots (`*.json`, `*.json.gz`), or one file (a rank, or a
/// set already merged). Each rank's file is read `--jobs` at a time
/// without its op rows; the lowest rank's is read again whole for the rows
/// the merged snapshot carries.
pub fn rank_set(
    path: &Path,
    capture: Option<&Path>,
    options: &AnalysisOptions,
    read: &ReadOptions,
) -> Result<Snapshot, Error> {
    if let Some(capture) = capture {
        return Err(Error(format!(
            "{}: a capture trace is one trace's, not a rank set's (--ranks)",
            capture.display()
        )));
    }
    let regex = read.rank_regex.as_ref();
    let files = rank_files(path, regex)?;
    let name_of = |file: &PathBuf| {
        file.file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
    };
    let one = |file: &PathBuf, quiet: bool| {
        let snapshot = rank_part_of_input(file, options, &read.with_quiet(quiet))?;
        let Some(regex) = regex else {
            return Ok(snapshot);
        };
        let rank = rank_by_regex(regex, file)?;
        snapshot.as_rank(rank).ok_or_else(|| {
            Error(format!(
                "{}: holds several ranks already: --rank-regex names one rank per file",
                file.display()
            ))
        })
    };
    let size = |f: &PathBuf| jobs::json_size(f);
    let parts = jobs::read_all(&files, read.jobs, read.quiet, read.progress, size, one)?
        .zip(&files)
        .map(|(snapshot, file)| snapshot.map(|s| (name_of(file), s)))
        .collect::<Result<Vec<_>, _>>()?;
    let workload = workload_of(path, true);
    let (merged, index) = Snapshot::merge_ranks(parts, &workload)
        .map_err(|e| Error(format!("{}: {e}", path.display())))?;
    let whole = snapshot_of_input(&files[index], None, options, read)?;
    Ok(whole.with_ranks_of(merged))
}

/// `snapshot --ranks`: refuses a set whose snapshot would be more JSON than
/// a snapshot may hold ([`snapshot::MAX_JSON_BYTES`]), which no reader
/// would take; its per-rank snapshots merge in `check --ranks` instead.
pub fn writable(set: &Snapshot, path: &Path) -> Result<(), Error> {
    let bytes = serde_json::to_vec(set).map_or(usize::MAX, |json| json.len());
    if bytes <= snapshot::MAX_JSON_BYTES {
        return Ok(());
    }
    Err(Error(format!(
        "{}: the snapshot of these {} ranks would hold {} MiB of JSON, more than a snapshot may \
         ({} MiB): snapshot each rank's trace and give the per-rank snapshots to `check --ranks`",
        path.display(),
        set.ranks.len(),
        bytes >> 20,
        snapshot::MAX_JSON_BYTES >> 20
    )))
}

/// The trace or snapshot files of a rank set: a directory's or a glob's
/// (as `report` lists them, [`rank_set_files`]), or the one file
/// given (a rank, or a set already merged) without `--rank-regex`.
fn rank_files(path: &Path, regex: Option<&Regex>) -> Result<Vec<PathBuf>, Error> {
    if regex.is_none() && !path.is_dir() && !is_glob(path) {
        return Ok(vec![path.to_path_buf()]);
    }
    rank_set_files(path, regex)
}

/// The collective findings of workload `name`: the rank-set rules when its
/// candidate holds two ranks or more (the sides must hold the same ranks),
/// the floors of one rank's collectives when it holds one
/// ([`collectives::floor::judge`], a one-call floor tested against
/// `one_call`, the noise of one call of the comparison's one-sample rows).
pub fn findings(
    name: &str,
    baselines: &[Snapshot],
    candidate: &Snapshot,
    one_call: Option<SingleSampleNoise>,
    policy: &Policy,
) -> Result<Vec<Finding>, Error> {
    if candidate.ranks.len() < 2 {
        let baselines: Vec<&Snapshot> = baselines.iter().collect();
        return Ok(collectives::floor::judge(
            name, &baselines, candidate, one_call, policy,
        ));
    }
    let ranks = candidate.rank_numbers();
    for baseline in baselines {
        if let Some(error) = missing_ranks(&baseline.rank_numbers(), &ranks) {
            return Err(Error(format!("{name}: {error}")));
        }
    }
    let baselines: Vec<&Snapshot> = baselines.iter().collect();
    Ok(collectives::judge(name, &baselines, candidate, policy))
}
