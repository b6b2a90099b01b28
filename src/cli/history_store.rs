//! The history directory as the commands open it: errors as input
//! failures (exit 2), and what does not add up between its index and its
//! files reported as warnings on stderr.

use std::path::Path;

use tracegate::gate::snapshot::Snapshot;
use tracegate::history::entry::EntryMeta;
use tracegate::history::store::{Scan, Store, StoreError};
use tracegate::render::text::printable;

use super::Failure;

/// Opens the history at `dir`, refusing a path that is not a directory.
pub(super) fn open(dir: &Path) -> Result<Store, Failure> {
    Store::open(dir).map_err(store_failure)
}

/// A store error as an input failure.
pub(super) fn store_failure(error: StoreError) -> Failure {
    Failure::input(error.to_string())
}

/// The entries of the history at `dir`, oldest first; what does not add up
/// between its index and files is reported on stderr ([`warn`]).
pub(super) fn entries(dir: &Path) -> Result<(Store, Vec<EntryMeta>), Failure> {
    let store = open(dir)?;
    let scan = store.scan().map_err(store_failure)?;
    warn(&scan);
    Ok((store, scan.entries))
}

/// A history scan's problems, as warnings on stderr.
pub(super) fn warn(scan: &Scan) {
    for problem in scan.problems() {
        eprintln!("warning: {}", printable(&problem));
    }
}

/// One run's snapshot from the store; a damaged one is `None`, with a
/// warning naming it (the rest of the history is still used).
pub(super) fn load(store: &Store, entry: &EntryMeta) -> Result<Option<Snapshot>, Failure> {
    match store.load(entry) {
        Ok(snapshot) => Ok(Some(snapshot)),
        Err(e) if e.is_damaged_run() => {
            eprintln!("warning: {}: run skipped", printable(&e.to_string()));
            Ok(None)
        }
        Err(e) => Err(store_failure(e)),
    }
}

/// An environment variable that is set and not empty (GitHub Actions sets
/// some to empty strings outside their events).
pub(super) fn env_value(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}
