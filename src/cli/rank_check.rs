//! Rank sets in `snapshot --ranks`, `check --ranks` and `history add
//! --ranks`: a directory or a glob (or a file) of one job's per-rank
//! traces or snapshots, wherever each was made, each rank told as `report`
//! tells it (`--rank-regex` too), read into one snapshot
//! ([`Snapshot::merge_ranks`]); and the rank-set findings `check` adds for
//! a workload whose sides hold several ranks ([`collectives::judge`]), or
//! the floors of one rank's collectives ([`collectives::floor::judge`]).

use std::path::{Path, PathBuf};

use regex::Regex;

use tracegate::analysis::analyse::AnalysisOptions;
use tracegate::gate::collectives;
use tracegate::gate::policy::Policy;
use tracegate::gate::snapshot::{self, Snapshot, missing_ranks};
use tracegate::gate::verdict::{Finding, SingleSampleNoise};

use super::Failure;
use super::jobs;
use super::ranks;
use super::read::{ReadOptions, snapshot_of_input};

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
) -> Result<Snapshot, Failure> {
    if let Some(capture) = capture {
        return Err(Failure::input(format!(
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
        let snapshot = snapshot_of_input(file, None, options, &read.with_quiet(quiet))?;
        let Some(regex) = regex else {
            return Ok(snapshot.without_rows());
        };
        let rank = ranks::rank_by_regex(regex, file)?;
        snapshot.without_rows().as_rank(rank).ok_or_else(|| {
            Failure::input(format!(
                "{}: holds several ranks already: --rank-regex names one rank per file",
                file.display()
            ))
        })
    };
    let parts = jobs::read_all(&files, read.jobs, read.quiet, |f| jobs::file_size(f), one)?
        .zip(&files)
        .map(|(snapshot, file)| snapshot.map(|s| (name_of(file), s)))
        .collect::<Result<Vec<_>, _>>()?;
    let workload = snapshot::workload_name(&ranks::set_directory(path));
    let (merged, index) = Snapshot::merge_ranks(parts, &workload)
        .map_err(|e| Failure::input(format!("{}: {e}", path.display())))?;
    let whole = snapshot_of_input(&files[index], None, options, read)?;
    Ok(whole.with_ranks_of(merged))
}

/// `snapshot --ranks`: refuses a set whose snapshot would be more JSON than
/// a snapshot may hold ([`snapshot::MAX_JSON_BYTES`]), which no reader
/// would take; its per-rank snapshots merge in `check --ranks` instead.
pub fn writable(set: &Snapshot, path: &Path) -> Result<(), Failure> {
    let bytes = serde_json::to_vec(set).map_or(usize::MAX, |json| json.len());
    if bytes <= snapshot::MAX_JSON_BYTES {
        return Ok(());
    }
    Err(Failure::input(format!(
        "{}: the snapshot of these {} ranks would hold {} MiB of JSON, more than a snapshot may \
         ({} MiB): snapshot each rank's trace and give the per-rank snapshots to `check --ranks`",
        path.display(),
        set.ranks.len(),
        bytes >> 20,
        snapshot::MAX_JSON_BYTES >> 20
    )))
}

/// The trace or snapshot files of a rank set: a directory's or a glob's
/// (as `report` lists them, [`ranks::rank_set_files`]), or the one file
/// given (a rank, or a set already merged) without `--rank-regex`.
fn rank_files(path: &Path, regex: Option<&Regex>) -> Result<Vec<PathBuf>, Failure> {
    if regex.is_none() && !path.is_dir() && !ranks::is_glob(path) {
        return Ok(vec![path.to_path_buf()]);
    }
    ranks::rank_set_files(path, regex)
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
) -> Result<Vec<Finding>, Failure> {
    if candidate.ranks.len() < 2 {
        let baselines: Vec<&Snapshot> = baselines.iter().collect();
        return Ok(collectives::floor::judge(
            name, &baselines, candidate, one_call, policy,
        ));
    }
    let ranks = candidate.rank_numbers();
    for baseline in baselines {
        if let Some(error) = missing_ranks(&baseline.rank_numbers(), &ranks) {
            return Err(Failure::input(format!("{name}: {error}")));
        }
    }
    let baselines: Vec<&Snapshot> = baselines.iter().collect();
    Ok(collectives::judge(name, &baselines, candidate, policy))
}
