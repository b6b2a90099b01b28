//! The history store: a directory of snapshot files and a compact index,
//! laid out so that it can live on a git branch (`tracegate-history`) or in
//! an Actions cache or artifact. This is the one file of `history/` that
//! does I/O (as `gate/snapshot/io.rs` is for snapshots); everything else in
//! `history/` is a plain function of entries and snapshots.
//!
//! # Layout
//!
//! ```text
//! DIR/
//!   .gitattributes   index.jsonl merge=union
//!   index.jsonl      one EntryMeta as JSON per line, appended
//!   runs/<workload-slug>/<time>-<commit7>-<unique>.snapshot.json.gz
//!   runs/<workload-slug>/<time>-<commit7>-<unique>.meta.json
//! ```
//!
//! Each run is its snapshot (gzip JSON, as `tracegate snapshot` writes it)
//! and a sidecar `.meta.json` holding its [`EntryMeta`], the same JSON as its
//! index line: the index can always be rebuilt from the files
//! ([`Store::rebuild_index`]), and a run whose index line was lost is still
//! found ([`Store::scan`]).
//!
//! # Concurrent appends
//!
//! [`Store::add`] writes the snapshot and the sidecar each to a temporary
//! file in the same folder and renames it into place (a reader never sees
//! half a file), then appends the index line with one `write` to the index
//! opened with `O_APPEND`, so appends from a matrix of processes do not lose
//! or interleave lines. On a git branch, `.gitattributes` merges the index
//! with the `union` driver: two pushes that each appended a line merge
//! without a conflict, and the run files never collide (each name is
//! unique). [`Store::prune`] and [`Store::rebuild_index`] rewrite the index
//! (temporary file and rename): run them where no `add` runs at the same
//! time.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use chrono::{DateTime, SecondsFormat, Utc};

use super::entry::{EntryMeta, Origin};
use crate::echo;
use crate::gate::snapshot::{Snapshot, SnapshotError, sha256_hex};

/// The index file, in the history directory.
pub const INDEX_FILE: &str = "index.jsonl";

/// The folder of the run files, in the history directory.
pub const RUNS_DIR: &str = "runs";

/// The line of `.gitattributes` that merges concurrent appends to the index.
pub const UNION_MERGE: &str = "index.jsonl merge=union";

const SNAPSHOT_SUFFIX: &str = ".snapshot.json.gz";
const META_SUFFIX: &str = ".meta.json";

/// Why the history could not be read or written. Every message is one line
/// naming the file (and the index line).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A file or folder could not be read, written or removed.
    #[error("{}: {action}: {source}", echo::label(path))]
    Io {
        /// The file or folder.
        path: String,
        /// What was tried: `cannot read`, `cannot write`, …
        action: &'static str,
        /// What the OS said.
        source: io::Error,
    },
    /// A line of the index is not an entry.
    #[error("{}:{line}: {}", echo::label(path), echo::message(message))]
    Index {
        /// The index file.
        path: String,
        /// The line, from 1.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
    /// A sidecar is not an entry.
    #[error("{}: {}", echo::label(path), echo::message(message))]
    Sidecar {
        /// The sidecar file.
        path: String,
        /// What is wrong with it.
        message: String,
    },
    /// An entry's time is not RFC 3339.
    #[error("time `{}`: {message}", echo::message(time))]
    Time {
        /// The time as given.
        time: String,
        /// What the parser said.
        message: String,
    },
    /// A snapshot file of the history could not be read.
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
}

/// What reading the history found: its entries, and what does not add up
/// between the index and the run files (reported, never dropped silently).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scan {
    /// The entries whose snapshot is there, oldest first (by time, then
    /// commit): the index's, plus those only a sidecar names.
    pub entries: Vec<EntryMeta>,
    /// Entries (of the index or of a sidecar) whose snapshot file is
    /// missing; not in `entries`.
    pub missing: Vec<EntryMeta>,
    /// Entries read from their sidecar because the index lacks them (an
    /// append that stopped half-way, an index merged by hand); in `entries`.
    pub unindexed: Vec<EntryMeta>,
    /// Snapshot files under `runs/` with neither an index line nor a
    /// sidecar (relative, `/`-separated): not entries, kept on disk.
    pub orphans: Vec<String>,
}

impl Scan {
    /// One line per problem, for warnings.
    pub fn problems(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for entry in &self.missing {
            lines.push(format!(
                "{}: missing: the entry of `{}` at {} is left out",
                entry.file, entry.workload, entry.commit
            ));
        }
        for entry in &self.unindexed {
            lines.push(format!(
                "{}: not in {INDEX_FILE}: read from its sidecar (`history prune` or a rebuild \
                 writes it back)",
                entry.file
            ));
        }
        for file in &self.orphans {
            lines.push(format!(
                "{file}: a snapshot without index line or sidecar: not an entry"
            ));
        }
        lines.into_iter().map(|l| echo::message(&l)).collect()
    }
}

/// What [`Store::prune`] did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Pruned {
    /// Entries kept, oldest first.
    pub kept: Vec<EntryMeta>,
    /// Entries removed (their files deleted), oldest first.
    pub removed: Vec<EntryMeta>,
    /// What the scan before pruning found (its `missing` entries are gone
    /// from the rewritten index).
    pub scan: Scan,
}

/// A history directory.
#[derive(Clone, Debug)]
pub struct Store {
    dir: PathBuf,
}

impl Store {
    /// The history in `dir`. Nothing is created until [`Store::add`]; a
    /// path that exists and is not a directory is an error.
    pub fn open(dir: &Path) -> Result<Store, StoreError> {
        if dir.exists() && !dir.is_dir() {
            return Err(io_error(
                dir,
                "not a history directory",
                io::Error::other("not a directory"),
            ));
        }
        Ok(Store {
            dir: dir.to_path_buf(),
        })
    }

    /// The history directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Records one run: writes its snapshot and sidecar under
    /// `runs/<workload-slug>/` and appends its index line. An empty
    /// `origin.time` means now (whole seconds); any other is RFC 3339 and stored in UTC.
    pub fn add(&self, snapshot: &Snapshot, origin: Origin) -> Result<EntryMeta, StoreError> {
        let time = if origin.time.is_empty() {
            // Whole seconds: what a reader of `history list` needs.
            let now = Utc::now();
            DateTime::from_timestamp(now.timestamp(), 0).unwrap_or(now)
        } else {
            parse_time(&origin.time)?
        };
        let origin = Origin {
            time: time.to_rfc3339_opts(SecondsFormat::AutoSi, true),
            ..origin
        };
        let mut entry = EntryMeta::of_snapshot(snapshot, origin);
        let folder = format!("{RUNS_DIR}/{}", slug(&entry.workload, 100));
        let folder_path = self.dir.join(&folder);
        fs::create_dir_all(&folder_path)
            .map_err(|e| io_error(&folder_path, "cannot create directory", e))?;
        self.ensure_gitattributes()?;
        let stem = format!(
            "{}-{}-{}",
            time.format("%Y%m%dT%H%M%S%.fZ"),
            slug(&entry.commit, 7),
            unique(&entry, &snapshot.fingerprint.trace_sha256)
        );
        entry.file = format!("{folder}/{stem}{SNAPSHOT_SUFFIX}");
        write_atomic(&self.dir.join(&entry.file), &snapshot.to_gz_bytes())?;
        let mut sidecar = serde_json::to_vec_pretty(&entry).expect("an entry serialises");
        sidecar.push(b'\n');
        write_atomic(&folder_path.join(format!("{stem}{META_SUFFIX}")), &sidecar)?;
        self.append_index(&entry)?;
        Ok(entry)
    }

    /// The entries whose snapshot is there, oldest first (see [`Scan`]; use
    /// [`Store::scan`] to hear about the rest).
    pub fn entries(&self) -> Result<Vec<EntryMeta>, StoreError> {
        Ok(self.scan()?.entries)
    }

    /// Reads the index and the run files and reconciles them: index
    /// entries whose file is missing, sidecars the index lacks and
    /// snapshot files with neither are each reported.
    pub fn scan(&self) -> Result<Scan, StoreError> {
        fs::read_dir(&self.dir).map_err(|e| io_error(&self.dir, "cannot read directory", e))?;
        let indexed = self.read_index()?;
        let files = self.read_runs()?;
        let mut scan = Scan::default();
        let mut known: BTreeSet<String> = BTreeSet::new();
        for entry in indexed {
            if !known.insert(entry.file.clone()) {
                continue;
            }
            if self.dir.join(&entry.file).is_file() {
                scan.entries.push(entry);
            } else {
                scan.missing.push(entry);
            }
        }
        for (file, entry) in files.sidecars {
            if known.contains(&file) {
                continue;
            }
            known.insert(file.clone());
            if files.snapshots.contains(&file) {
                scan.unindexed.push(entry.clone());
                scan.entries.push(entry);
            } else {
                scan.missing.push(entry);
            }
        }
        scan.orphans = files
            .snapshots
            .into_iter()
            .filter(|file| !known.contains(file))
            .collect();
        sort_entries(&mut scan.entries);
        sort_entries(&mut scan.unindexed);
        sort_entries(&mut scan.missing);
        Ok(scan)
    }

    /// The snapshot of an entry.
    pub fn load(&self, entry: &EntryMeta) -> Result<Snapshot, StoreError> {
        let relative = check_relative(&entry.file).map_err(|message| StoreError::Sidecar {
            path: entry.file.clone(),
            message,
        })?;
        Ok(Snapshot::load_path(&self.dir.join(relative))?)
    }

    /// Keeps the newest `keep_per_workload` entries of each workload:
    /// rewrites the index with them (temporary file and rename), then
    /// deletes the others' snapshot and sidecar. Entries whose snapshot was
    /// missing leave the index too.
    pub fn prune(&self, keep_per_workload: usize) -> Result<Pruned, StoreError> {
        let scan = self.scan()?;
        let mut by_workload: BTreeMap<&str, Vec<&EntryMeta>> = BTreeMap::new();
        for entry in &scan.entries {
            by_workload.entry(&entry.workload).or_default().push(entry);
        }
        let mut removed_files: BTreeSet<&str> = BTreeSet::new();
        for entries in by_workload.values() {
            let excess = entries.len().saturating_sub(keep_per_workload);
            removed_files.extend(entries[..excess].iter().map(|e| e.file.as_str()));
        }
        let (removed, kept): (Vec<EntryMeta>, Vec<EntryMeta>) = scan
            .entries
            .iter()
            .cloned()
            .partition(|e| removed_files.contains(e.file.as_str()));
        self.write_index(&kept)?;
        for entry in &removed {
            self.remove_run(&entry.file)?;
        }
        for entry in &scan.missing {
            self.remove_run(&entry.file)?;
        }
        Ok(Pruned {
            kept,
            removed,
            scan,
        })
    }

    /// Writes the index anew from the sidecars (temporary file and rename),
    /// oldest first, without reading the old index (which may be damaged).
    /// Returns what the rebuild found: `entries` as written, `missing`
    /// sidecars whose snapshot is gone, `orphans` snapshots without sidecar.
    pub fn rebuild_index(&self) -> Result<Scan, StoreError> {
        fs::read_dir(&self.dir).map_err(|e| io_error(&self.dir, "cannot read directory", e))?;
        let files = self.read_runs()?;
        let mut scan = Scan::default();
        for (file, entry) in &files.sidecars {
            if files.snapshots.contains(file) {
                scan.entries.push(entry.clone());
            } else {
                scan.missing.push(entry.clone());
            }
        }
        scan.orphans = files
            .snapshots
            .iter()
            .filter(|file| !files.sidecars.contains_key(*file))
            .cloned()
            .collect();
        sort_entries(&mut scan.entries);
        sort_entries(&mut scan.missing);
        self.write_index(&scan.entries)?;
        Ok(scan)
    }

    fn index_path(&self) -> PathBuf {
        self.dir.join(INDEX_FILE)
    }

    /// The index's entries in file order (none when there is no index).
    fn read_index(&self) -> Result<Vec<EntryMeta>, StoreError> {
        let path = self.index_path();
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_error(&path, "cannot read", e)),
        };
        let mut entries = Vec::new();
        for (number, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let index_error = |message: String| StoreError::Index {
                path: path.display().to_string(),
                line: number + 1,
                message,
            };
            let entry: EntryMeta = serde_json::from_str(line)
                .map_err(|e| index_error(format!("not a history entry: {e}")))?;
            check_relative(&entry.file).map_err(index_error)?;
            entries.push(entry);
        }
        Ok(entries)
    }

    /// The sidecars (by their snapshot's relative path) and the snapshot
    /// files under `runs/`.
    fn read_runs(&self) -> Result<RunFiles, StoreError> {
        let mut files = RunFiles::default();
        let runs = self.dir.join(RUNS_DIR);
        let folders = match fs::read_dir(&runs) {
            Ok(folders) => folders,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(files),
            Err(e) => return Err(io_error(&runs, "cannot read directory", e)),
        };
        for folder in folders {
            let folder = folder.map_err(|e| io_error(&runs, "cannot read directory", e))?;
            let folder_path = folder.path();
            if !folder_path.is_dir() {
                continue;
            }
            let folder_name = folder.file_name().to_string_lossy().into_owned();
            let names = fs::read_dir(&folder_path)
                .map_err(|e| io_error(&folder_path, "cannot read directory", e))?;
            for name in names {
                let name = name.map_err(|e| io_error(&folder_path, "cannot read directory", e))?;
                let name = name.file_name().to_string_lossy().into_owned();
                if name.starts_with('.') {
                    continue; // a temporary file of an add in progress
                }
                let relative = |stem: &str| format!("{RUNS_DIR}/{folder_name}/{stem}");
                if name.ends_with(SNAPSHOT_SUFFIX) {
                    files.snapshots.insert(relative(&name));
                } else if let Some(stem) = name.strip_suffix(META_SUFFIX) {
                    let path = folder_path.join(&name);
                    let mut entry = read_sidecar(&path)?;
                    entry.file = relative(&format!("{stem}{SNAPSHOT_SUFFIX}"));
                    files.sidecars.insert(entry.file.clone(), entry);
                }
            }
        }
        Ok(files)
    }

    /// Appends one entry's line with a single write to the index opened
    /// for appending, so concurrent appends neither interleave nor clobber.
    fn append_index(&self, entry: &EntryMeta) -> Result<(), StoreError> {
        let path = self.index_path();
        let mut line = serde_json::to_string(entry).expect("an entry serialises");
        line.push('\n');
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| io_error(&path, "cannot open", e))?;
        file.write_all(line.as_bytes())
            .map_err(|e| io_error(&path, "cannot write", e))
    }

    /// Replaces the index with `entries` (temporary file and rename).
    fn write_index(&self, entries: &[EntryMeta]) -> Result<(), StoreError> {
        let mut text = String::new();
        for entry in entries {
            text.push_str(&serde_json::to_string(entry).expect("an entry serialises"));
            text.push('\n');
        }
        write_atomic(&self.index_path(), text.as_bytes())
    }

    /// Deletes one run's snapshot and sidecar (either may be gone), and its
    /// workload folder when that is left empty.
    fn remove_run(&self, file: &str) -> Result<(), StoreError> {
        let relative = check_relative(file).map_err(|message| StoreError::Sidecar {
            path: file.to_string(),
            message,
        })?;
        let snapshot = self.dir.join(relative);
        let sidecar = snapshot.with_file_name(
            snapshot
                .file_name()
                .map(|n| n.to_string_lossy().replace(SNAPSHOT_SUFFIX, META_SUFFIX))
                .unwrap_or_default(),
        );
        for path in [&snapshot, &sidecar] {
            match fs::remove_file(path) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => {
                    return Err(io_error(path, "cannot remove", e));
                }
                _ => {}
            }
        }
        if let Some(folder) = snapshot.parent() {
            // Only an empty folder goes; a folder still holding runs stays.
            let _ = fs::remove_dir(folder);
        }
        Ok(())
    }

    /// Writes `.gitattributes` with the index's union merge, or adds the
    /// line to one that lacks it.
    fn ensure_gitattributes(&self) -> Result<(), StoreError> {
        let path = self.dir.join(".gitattributes");
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(io_error(&path, "cannot read", e)),
        };
        if text.lines().any(|line| line.trim() == UNION_MERGE) {
            return Ok(());
        }
        let separator = if text.is_empty() || text.ends_with('\n') {
            ""
        } else {
            "\n"
        };
        write_atomic(
            &path,
            format!("{text}{separator}{UNION_MERGE}\n").as_bytes(),
        )
    }
}

/// The files under `runs/`, by relative path.
#[derive(Default)]
struct RunFiles {
    sidecars: BTreeMap<String, EntryMeta>,
    snapshots: BTreeSet<String>,
}

/// An RFC 3339 time, in UTC.
pub fn parse_time(text: &str) -> Result<DateTime<Utc>, StoreError> {
    DateTime::parse_from_rfc3339(text.trim())
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| StoreError::Time {
            time: text.to_string(),
            message: format!("not an RFC 3339 time such as 2026-11-24T09:30:00Z ({e})"),
        })
}

/// Sorts entries oldest first: by time (parsed; an unparsable time sorts
/// first), then commit, then file.
fn sort_entries(entries: &mut [EntryMeta]) {
    entries.sort_by(|a, b| {
        let time = |e: &EntryMeta| parse_time(&e.time).ok();
        time(a)
            .cmp(&time(b))
            .then_with(|| a.commit.cmp(&b.commit))
            .then_with(|| a.file.cmp(&b.file))
    });
}

fn read_sidecar(path: &Path) -> Result<EntryMeta, StoreError> {
    let text = fs::read_to_string(path).map_err(|e| io_error(path, "cannot read", e))?;
    serde_json::from_str(&text).map_err(|e| StoreError::Sidecar {
        path: path.display().to_string(),
        message: format!("not a history entry: {e}"),
    })
}

/// `file` as a path inside the history: relative, `/`-separated, no `..`
/// (an index line must not make `load` read outside the directory).
fn check_relative(file: &str) -> Result<&Path, String> {
    let path = Path::new(file);
    let inside = !file.is_empty()
        && path
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if inside {
        Ok(path)
    } else {
        Err(format!(
            "file `{file}` is not a relative path inside the history directory"
        ))
    }
}

/// `text` as a file-name part: ASCII letters, digits, `.`, `-` and `_`
/// kept, anything else `_`, at most `max` characters, never empty or dots
/// only.
fn slug(text: &str, max: usize) -> String {
    let slug: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .take(max)
        .collect();
    if slug.chars().all(|c| c == '.') {
        format!("_{slug}")
    } else {
        slug
    }
}

/// Eight hex digits no other add picks: a hash of the process, the clock
/// and the run, so that concurrent adds on one machine or many never name
/// the same file.
fn unique(entry: &EntryMeta, trace_sha256: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let seed = format!(
        "{}-{nanos}-{}-{}-{trace_sha256}",
        std::process::id(),
        entry.workload,
        entry.commit
    );
    sha256_hex(seed.as_bytes())[..8].to_string()
}

/// Writes `bytes` to a temporary file beside `path` and renames it there,
/// so a reader sees the old file or the whole new one.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let temporary = path.with_file_name(format!(".{name}.{}-{nanos}.tmp", std::process::id()));
    let written = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temporary)?;
        file.write_all(bytes)?;
        file.sync_all()
    })();
    if let Err(e) = written {
        let _ = fs::remove_file(&temporary);
        return Err(io_error(&temporary, "cannot write", e));
    }
    fs::rename(&temporary, path).map_err(|e| {
        let _ = fs::remove_file(&temporary);
        io_error(path, "cannot write", e)
    })
}

fn io_error(path: &Path, action: &'static str, source: io::Error) -> StoreError {
    StoreError::Io {
        path: path.display().to_string(),
        action,
        source,
    }
}

#[cfg(test)]
mod tests;
