//! The commands that read one trace (or one job's ranks) and decide
//! nothing: `report` ([`report`]), `snapshot` ([`snapshot`]) and `replay`
//! ([`replay`]).

use std::path::Path;

use crate::analysis::analyse::{self, AnalysisOptions};
use crate::analysis::comm::CommKernels;
use crate::analysis::hardware::{self, Catalog};
use crate::analysis::profile::Profile;
use crate::gate::policy::Pattern;
use crate::gate::snapshot::Snapshot;
use crate::publish::replay::{self, PackageContext};
use crate::trace::link;

use super::inputs::workload_of;
use super::read::{load_trace, profile_of_trace, snapshot_of_trace, snapshot_or};
use super::{Error, OutFile, ReadOptions, ranks};

/// The built-in hardware catalog, merged with the user's file when given.
pub fn catalog(user_file: Option<&Path>) -> Result<Catalog, Error> {
    let builtin = hardware::builtin_catalog();
    match user_file {
        Some(path) => {
            let user = Catalog::load_file(path).map_err(|e| Error(e.to_string()))?;
            Ok(builtin.merged_with(user))
        }
        None => Ok(builtin),
    }
}

/// `--hardware` and `--hardware-file` as analysis options: the catalog
/// ([`catalog`]) and the GPU `spec` names in it (or describes inline).
pub fn hardware_options(
    spec: Option<&str>,
    user_file: Option<&Path>,
) -> Result<AnalysisOptions, Error> {
    let catalog = catalog(user_file)?;
    let hardware = match spec {
        Some(spec) => Some(
            catalog
                .resolve(spec)
                .map_err(|e| Error(format!("--hardware: {e}")))?,
        ),
        None => None,
    };
    Ok(AnalysisOptions {
        catalog,
        hardware,
        comm: CommKernels::default(),
    })
}

/// `report TRACE`: the trace's profile, its graph replays attributed to the
/// ops of `capture` when given.
pub fn report(
    path: &Path,
    capture: Option<&Path>,
    options: &AnalysisOptions,
    read: &ReadOptions,
) -> Result<Profile, Error> {
    profile_of_trace(path, capture, options, read)
        .map(|(_, profile)| profile)
        .map_err(|error| snapshot_or(path, "report", error))
}

/// `snapshot TRACE`: the trace's snapshot; with `read.ranks`, that of one
/// job's ranks, refused when it would be more than a snapshot may hold
/// ([`ranks::writable`]).
pub fn snapshot(
    path: &Path,
    capture: Option<&Path>,
    options: &AnalysisOptions,
    read: &ReadOptions,
) -> Result<Snapshot, Error> {
    if read.ranks {
        let set = ranks::rank_set(path, capture, options, read)?;
        ranks::writable(&set, path)?;
        return Ok(set);
    }
    snapshot_of_trace(path, capture, options, read)
        .map_err(|error| snapshot_or(path, "snapshot", error))
}

/// What `replay` made: the packages, and why the calls left out could not
/// be packaged.
pub struct Replayed {
    /// `<workload>-<op>-<hash>.tar.gz`, by file name.
    pub packages: Vec<OutFile>,
    /// One line per call that could not be packaged.
    pub errors: Vec<String>,
}

/// `replay TRACE --op NAME`: the packages of the op rows of the trace named
/// like `name` (most GPU time first, at most `top`), or, for an op that
/// launched no GPU work itself, its calls (`dims`: only those of this
/// shape pattern); an error when no call has recorded shapes. The caller
/// says why the others failed (`errors`), or that all did.
pub fn replay(
    path: &Path,
    (op, dims): (&str, Option<&str>),
    top: usize,
    read: &ReadOptions,
) -> Result<Replayed, Error> {
    let name = &Pattern::name(op).map_err(|e| Error(format!("--op: {e}")))?;
    let pattern = dims
        .map(Pattern::shape)
        .transpose()
        .map_err(|e| Error(format!("--dims: {e}")))?;
    let trace = load_trace(path, read, "replay")?;
    let tree = link::link(&trace);
    let profile = analyse::analyse(&trace, &tree);
    let rows = replay::rows_matching(&profile.unique_args, name, pattern.as_ref());
    let built: Vec<_> = if rows.is_empty() {
        replay::events_matching(&trace, name, pattern.as_ref())
            .into_iter()
            .take(top)
            .map(|index| replay::ir_for_event(&trace, index))
            .collect()
    } else {
        rows.into_iter()
            .take(top)
            .map(|row| replay::ir_for_row(&trace, row))
            .collect()
    };
    if built.is_empty() {
        return Err(Error(format!(
            "{}: no call of `{op}`{} with recorded shapes",
            path.display(),
            dims.map_or(String::new(), |d| format!(" with dims `{d}`"))
        )));
    }
    let workload = workload_of(path, false);
    let mut replayed = Replayed {
        packages: Vec::new(),
        errors: Vec::new(),
    };
    for ir in built {
        match ir {
            Ok(ir) => {
                let (file_name, bytes) =
                    replay::write_package(&ir, &PackageContext::on_demand(&workload));
                replayed.packages.push(OutFile {
                    path: file_name.into(),
                    bytes,
                });
            }
            Err(error) => replayed.errors.push(error.to_string()),
        }
    }
    Ok(replayed)
}
