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
//! # Writers, crashes and damage
//!
//! Every writer ([`Store::add`], [`Store::prune`], [`Store::repair`],
//! [`Store::rebuild_index`]) holds the directory's lock file ([`lock`]), so
//! an `add` and a `prune` at once lose nothing. [`Store::add`] writes the
//! snapshot and the sidecar each to a temporary file in the same folder and
//! renames it into place (a reader never sees half a file), then appends the
//! index line with one `write` to the index opened with `O_APPEND`. On a git
//! branch, `.gitattributes` merges the index with the `union` driver: two
//! pushes that each appended a line merge without a conflict, and the run
//! files never collide (each name is unique).
//!
//! A writer killed at any point leaves one of: its lock (broken once
//! stale), a `.tmp` file (readers skip it, the next writer removes it), a
//! snapshot without sidecar (an orphan, reported, removed by `repair`), a
//! run without index line (read from its sidecar), or half an index line (a
//! torn tail: skipped with a warning, and the next writer rewrites the index
//! before appending). A damaged index line or sidecar is skipped with a
//! warning naming it; a symbolic link inside the directory is never
//! followed, written through or deleted through.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use chrono::{DateTime, SecondsFormat, Utc};

use super::entry::{EntryMeta, Origin};
use crate::echo;
use crate::gate::snapshot::{Snapshot, SnapshotError};
use files::{
    check_relative, ensure_folder, is_temporary, list, read_sidecar, refuse_links, slug, unique,
    write_atomic,
};
use lock::{LockError, WriteLock};

/// The index file, in the history directory.
pub const INDEX_FILE: &str = "index.jsonl";

/// The folder of the run files, in the history directory.
pub const RUNS_DIR: &str = "runs";

/// The line of `.gitattributes` that merges concurrent appends to the index.
pub const UNION_MERGE: &str = "index.jsonl merge=union";

/// The line of `.gitignore` that keeps the writers' lock out of git.
pub const IGNORE_LOCK: &str = ".tracegate.lock*";

const SNAPSHOT_SUFFIX: &str = ".snapshot.json.gz";
const TEMPORARY_SUFFIX: &str = ".tmp";
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
    /// A path inside the history is a symbolic link or not what it should
    /// be (a folder, a file): nothing is written or deleted through it.
    #[error("{}: refused: {message}", echo::label(path))]
    Refused {
        /// The path.
        path: String,
        /// Why.
        message: &'static str,
    },
    /// Another writer held the lock for the whole wait.
    #[error(
        "{}: the history is locked by another writer ({}); remove the file if no tracegate runs",
        echo::label(path),
        echo::echo(holder, echo::MAX_ECHO_CHARS)
    )]
    Locked {
        /// The lock file.
        path: String,
        /// Its process id and host.
        holder: String,
    },
    /// A snapshot file of the history could not be read.
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
}

impl StoreError {
    /// Whether the error is one run's snapshot that cannot be read (damaged,
    /// truncated, refused): the run is skipped with a warning and the rest
    /// of the history still used.
    pub fn is_damaged_run(&self) -> bool {
        matches!(self, StoreError::Snapshot(_) | StoreError::Refused { .. })
    }
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
    /// What was skipped, one line each naming the file (and index line): a
    /// damaged index line or sidecar, a torn index tail, a symbolic link.
    pub damaged: Vec<String>,
    /// Whether an index line was skipped (damaged, or a torn last line: a
    /// write cut short): the next writer rewrites the index.
    pub index_damaged: bool,
    /// Temporary files of writers that were killed (relative).
    pub temporaries: Vec<String>,
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
                "{}: not in {INDEX_FILE}: read from its sidecar (the next writer or `history \
                 fsck --repair` writes it back)",
                entry.file
            ));
        }
        for file in &self.orphans {
            lines.push(format!(
                "{file}: a snapshot without index line or sidecar: not an entry"
            ));
        }
        lines.extend(self.damaged.iter().cloned());
        for file in &self.temporaries {
            lines.push(format!(
                "{file}: a temporary file of a writer that stopped (the next writer removes it)"
            ));
        }
        lines.into_iter().map(|l| echo::message(&l)).collect()
    }
}

impl Scan {
    /// `history fsck`'s text and exit code: each problem on a line and 1,
    /// or the entries counted and 0.
    pub fn fsck(&self) -> (String, u8) {
        let problems = self.problems();
        if problems.is_empty() {
            (
                format!("{} run(s), no problem found\n", self.entries.len()),
                0,
            )
        } else {
            let mut text = problems.join("\n");
            text.push_str(&format!(
                "\n{} run(s), {} problem(s): `history fsck --repair` repairs them\n",
                self.entries.len(),
                problems.len()
            ));
            (text, 1)
        }
    }
}

/// What [`Store::repair`] did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Repaired {
    /// What the scan before repairing found.
    pub scan: Scan,
    /// Entries in the rewritten index.
    pub entries: usize,
    /// Files removed: temporaries, orphan snapshots, sidecars of missing
    /// snapshots (relative).
    pub removed: Vec<String>,
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

impl Repaired {
    /// `history fsck --repair`'s text (each problem found, then what was
    /// done) and exit code 0.
    pub fn summary(&self) -> (String, u8) {
        let mut text = String::new();
        for problem in self.scan.problems() {
            text.push_str(&format!("found: {problem}\n"));
        }
        for file in &self.removed {
            text.push_str(&format!("removed {}\n", echo::label(file)));
        }
        text.push_str(&format!(
            "repaired: the index holds {} run(s)\n",
            self.entries
        ));
        (text, 0)
    }
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
    /// `runs/<workload-slug>/` and appends its index line, holding the
    /// writers' lock. An index with a torn tail or a damaged line is first
    /// rewritten from what the scan finds. An empty `origin.time` means now
    /// (whole seconds); any other is RFC 3339 and stored in UTC.
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
        fs::create_dir_all(&self.dir)
            .map_err(|e| io_error(&self.dir, "cannot create directory", e))?;
        let _lock = self.lock()?;
        let folder = format!("{RUNS_DIR}/{}", slug(&entry.workload, 100));
        let folder_path = self.dir.join(&folder);
        for path in [self.dir.join(RUNS_DIR), folder_path.clone()] {
            ensure_folder(&path)?;
        }
        self.ensure_git_files()?;
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
        let scan = self.scan()?;
        self.remove_temporaries(&scan)?;
        // Runs of writers killed before their index line, and damaged lines,
        // are written back; the new run is in the scan already (its sidecar).
        if scan.index_damaged || scan.unindexed.iter().any(|e| e.file != entry.file) {
            self.write_index(&scan.entries)?;
        } else {
            self.append_index(&entry)?;
        }
        Ok(entry)
    }

    /// The entries whose snapshot is there, oldest first (see [`Scan`]; use
    /// [`Store::scan`] to hear about the rest).
    pub fn entries(&self) -> Result<Vec<EntryMeta>, StoreError> {
        Ok(self.scan()?.entries)
    }

    /// Reads the index and the run files and reconciles them: index
    /// entries whose file is missing, sidecars the index lacks, snapshot
    /// files with neither, damaged lines and files, symbolic links and
    /// temporary files are each reported and left out.
    pub fn scan(&self) -> Result<Scan, StoreError> {
        fs::read_dir(&self.dir).map_err(|e| io_error(&self.dir, "cannot read directory", e))?;
        let mut scan = Scan::default();
        let indexed = self.read_index(&mut scan)?;
        let files = self.read_runs(&mut scan)?;
        let mut known: BTreeSet<String> = BTreeSet::new();
        for entry in indexed {
            if !known.insert(entry.file.clone()) {
                continue;
            }
            if files.snapshots.contains(&entry.file) {
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

    /// The snapshot of an entry; a snapshot that is a symbolic link is
    /// refused.
    pub fn load(&self, entry: &EntryMeta) -> Result<Snapshot, StoreError> {
        let relative = check_relative(&entry.file).map_err(|message| StoreError::Sidecar {
            path: entry.file.clone(),
            message,
        })?;
        let path = self.dir.join(relative);
        refuse_links(&self.dir, relative)?;
        Ok(Snapshot::load_path(&path)?)
    }

    /// Keeps the newest `keep_per_workload` entries of each workload,
    /// holding the writers' lock: deletes the others' sidecar and snapshot,
    /// then rewrites the index with the kept (temporary file and rename), so
    /// a prune killed half-way never brings a removed run back. Entries
    /// whose snapshot was missing leave the index too.
    pub fn prune(&self, keep_per_workload: usize) -> Result<Pruned, StoreError> {
        let _lock = self.lock()?;
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
        self.remove_temporaries(&scan)?;
        for entry in removed.iter().chain(&scan.missing) {
            self.remove_run(&entry.file)?;
        }
        self.write_index(&kept)?;
        Ok(Pruned {
            kept,
            removed,
            scan,
        })
    }

    /// Makes the history consistent, holding the writers' lock: removes
    /// temporary files, orphan snapshots and the sidecars of missing
    /// snapshots, and rewrites the index with every entry the scan found
    /// (index lines and sidecars), dropping torn and damaged lines.
    /// Symbolic links are left alone (reported by the scan).
    pub fn repair(&self) -> Result<Repaired, StoreError> {
        let _lock = self.lock()?;
        let scan = self.scan()?;
        let mut removed = self.remove_temporaries(&scan)?;
        for file in &scan.orphans {
            self.remove_run(file)?;
            removed.push(file.clone());
        }
        for entry in &scan.missing {
            self.remove_run(&entry.file)?;
            removed.push(entry.file.replace(SNAPSHOT_SUFFIX, META_SUFFIX));
        }
        self.write_index(&scan.entries)?;
        Ok(Repaired {
            entries: scan.entries.len(),
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
        let _lock = self.lock()?;
        let mut scan = Scan::default();
        let files = self.read_runs(&mut scan)?;
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

    fn lock(&self) -> Result<WriteLock, StoreError> {
        lock::lock(&self.dir).map_err(|e| match e {
            LockError::Io(path, source) => io_error(&path, "cannot lock", source),
            LockError::Busy(path, holder) => StoreError::Locked {
                path: path.display().to_string(),
                holder,
            },
        })
    }

    fn index_path(&self) -> PathBuf {
        self.dir.join(INDEX_FILE)
    }

    /// The index's entries in file order (none when there is no index). A
    /// line that is not an entry is skipped and named in `scan.damaged`;
    /// a last line without its newline is a torn tail. An
    /// index that is a symbolic link is refused.
    fn read_index(&self, scan: &mut Scan) -> Result<Vec<EntryMeta>, StoreError> {
        let path = self.index_path();
        refuse_links(&self.dir, Path::new(INDEX_FILE))?;
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_error(&path, "cannot read", e)),
        };
        let text = String::from_utf8_lossy(&bytes);
        let label = path.display();
        let torn = !text.is_empty() && !text.ends_with('\n');
        // Even a whole last entry without its newline is rewritten: the next
        // append would join it.
        scan.index_damaged = torn;
        let count = text.lines().count();
        let mut entries = Vec::new();
        for (number, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let entry = serde_json::from_str::<EntryMeta>(line)
                .map_err(|e| format!("not a history entry: {e}"))
                .and_then(|entry| match check_relative(&entry.file) {
                    Ok(_) => Ok(entry),
                    Err(message) => Err(message),
                });
            match entry {
                Ok(entry) => entries.push(entry),
                Err(message) => {
                    scan.index_damaged = true;
                    let what = if torn && number + 1 == count {
                        "a torn last line (a write cut short)".to_string()
                    } else {
                        message
                    };
                    scan.damaged.push(format!(
                        "{label}:{}: {what}: skipped (its run is still read from its sidecar; \
                         the next writer or `history fsck --repair` rewrites the index)",
                        number + 1
                    ));
                }
            }
        }
        Ok(entries)
    }

    /// The sidecars (by their snapshot's relative path) and the snapshot
    /// files under `runs/`; damaged sidecars and symbolic links are named
    /// in `scan.damaged`, temporary files in `scan.temporaries`.
    fn read_runs(&self, scan: &mut Scan) -> Result<RunFiles, StoreError> {
        let mut files = RunFiles::default();
        let runs = self.dir.join(RUNS_DIR);
        match fs::symlink_metadata(&runs) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(files),
            Ok(m) if !m.is_dir() => {
                scan.damaged.push(format!(
                    "{RUNS_DIR}: not a folder (a symbolic link?): not read"
                ));
                return Ok(files);
            }
            _ => {}
        }
        for name in list(&self.dir)? {
            if is_temporary(&name) {
                scan.temporaries.push(name);
            }
        }
        for folder_name in list(&runs)? {
            let folder_path = runs.join(&folder_name);
            let relative_folder = format!("{RUNS_DIR}/{folder_name}");
            let kind = fs::symlink_metadata(&folder_path)
                .map_err(|e| io_error(&folder_path, "cannot read", e))?;
            if kind.file_type().is_symlink() {
                scan.damaged
                    .push(format!("{relative_folder}: a symbolic link: not followed"));
                continue;
            }
            if !kind.is_dir() {
                continue;
            }
            for name in list(&folder_path)? {
                let relative = format!("{relative_folder}/{name}");
                if is_temporary(&name) {
                    scan.temporaries.push(relative);
                    continue;
                }
                if name.starts_with('.') {
                    continue;
                }
                let path = folder_path.join(&name);
                let is_link = fs::symlink_metadata(&path)
                    .map_err(|e| io_error(&path, "cannot read", e))?
                    .file_type()
                    .is_symlink();
                if is_link {
                    scan.damaged
                        .push(format!("{relative}: a symbolic link: not followed"));
                } else if name.ends_with(SNAPSHOT_SUFFIX) {
                    files.snapshots.insert(relative);
                } else if let Some(stem) = name.strip_suffix(META_SUFFIX) {
                    match read_sidecar(&path) {
                        Ok(mut entry) => {
                            entry.file = format!("{relative_folder}/{stem}{SNAPSHOT_SUFFIX}");
                            files.sidecars.insert(entry.file.clone(), entry);
                        }
                        Err(e) => scan.damaged.push(format!("{e}: skipped")),
                    }
                }
            }
        }
        Ok(files)
    }

    /// Removes the temporary files the scan found (the lock is held: no
    /// writer is writing them); returns them.
    fn remove_temporaries(&self, scan: &Scan) -> Result<Vec<String>, StoreError> {
        for file in &scan.temporaries {
            let path = self.dir.join(file);
            match fs::remove_file(&path) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => {
                    return Err(io_error(&path, "cannot remove", e));
                }
                _ => {}
            }
        }
        Ok(scan.temporaries.clone())
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
            .and_then(|()| file.sync_data())
            .map_err(|e| io_error(&path, "cannot write", e))
    }

    /// Replaces the index with `entries` (temporary file and rename).
    fn write_index(&self, entries: &[EntryMeta]) -> Result<(), StoreError> {
        let mut text = String::new();
        for entry in entries {
            text.push_str(&serde_json::to_string(entry).expect("an entry serialises"));
            text.push('\n');
        }
        refuse_links(&self.dir, Path::new(INDEX_FILE))?;
        write_atomic(&self.index_path(), text.as_bytes())
    }

    /// Deletes one run's sidecar and snapshot (either may be gone), and its
    /// workload folder when that is left empty; never through a symbolic
    /// link.
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
        for path in [&sidecar, &snapshot] {
            let inside = path.strip_prefix(&self.dir).unwrap_or(path);
            match refuse_links(&self.dir, inside) {
                Err(StoreError::Refused { .. }) => continue,
                other => other?,
            }
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

    /// Writes `.gitattributes` with the index's union merge and
    /// `.gitignore` with the lock, or adds the line to one that lacks it.
    fn ensure_git_files(&self) -> Result<(), StoreError> {
        for (name, line) in [(".gitattributes", UNION_MERGE), (".gitignore", IGNORE_LOCK)] {
            let path = self.dir.join(name);
            refuse_links(&self.dir, Path::new(name))?;
            let text = match fs::read_to_string(&path) {
                Ok(text) => text,
                Err(e) if e.kind() == io::ErrorKind::NotFound => String::new(),
                Err(e) => return Err(io_error(&path, "cannot read", e)),
            };
            if text.lines().any(|l| l.trim() == line) {
                continue;
            }
            let separator = if text.is_empty() || text.ends_with('\n') {
                ""
            } else {
                "\n"
            };
            write_atomic(&path, format!("{text}{separator}{line}\n").as_bytes())?;
        }
        Ok(())
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

fn io_error(path: &Path, action: &'static str, source: io::Error) -> StoreError {
    StoreError::Io {
        path: path.display().to_string(),
        action,
        source,
    }
}

mod files;
pub mod lock;

#[cfg(test)]
mod fuzz;
#[cfg(test)]
mod tests;
