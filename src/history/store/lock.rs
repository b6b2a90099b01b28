//! The writers' lock of a history directory: a lock file created with
//! `O_EXCL` (`create_new`), holding the writer's process id and host, and
//! removed when the writer is done. `File::lock` (flock) needs Rust 1.89
//! and the crate builds with 1.86, so the lock is a file, and a writer
//! killed while holding it (kill -9, a runner stopped) leaves it behind: a
//! lock whose process is gone (same host) or that is older than
//! [`STALE_AFTER`] is stale and broken, under a second lock file so that
//! two writers that both find it stale cannot each break the other's new
//! lock.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// The lock file, in the history directory.
pub const LOCK_FILE: &str = ".tracegate.lock";

/// The lock file taken while a stale lock is broken.
const BREAK_FILE: &str = ".tracegate.lock.break";

/// A lock older than this is stale whoever holds it: an `add` holds it for
/// milliseconds and a `prune` of thousands of runs for seconds.
pub const STALE_AFTER: Duration = Duration::from_secs(120);

/// How long a writer waits for the lock before giving up: past the time
/// after which any lock is stale.
const WAIT: Duration = Duration::from_secs(150);

/// The writers' lock, held until dropped.
#[derive(Debug)]
pub struct WriteLock {
    path: PathBuf,
}

impl Drop for WriteLock {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// Why the lock was not taken.
#[derive(Debug)]
pub enum LockError {
    /// Creating or reading the lock file failed.
    Io(PathBuf, io::Error),
    /// Another writer held it for the whole wait.
    Busy(PathBuf, String),
}

/// Takes the writers' lock of `dir`, waiting for another writer to finish
/// and breaking a stale lock.
pub fn lock(dir: &Path) -> Result<WriteLock, LockError> {
    let path = dir.join(LOCK_FILE);
    let deadline = Instant::now() + WAIT;
    let mut pause = Duration::from_millis(2);
    loop {
        match try_create(&path) {
            Ok(true) => return Ok(WriteLock { path }),
            Ok(false) => {}
            Err(e) => return Err(LockError::Io(path, e)),
        }
        if is_stale(&path) {
            break_stale(dir, &path);
            continue;
        }
        if Instant::now() >= deadline {
            let holder = fs::read_to_string(&path).unwrap_or_default();
            return Err(LockError::Busy(path, holder.trim().to_string()));
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(100));
    }
}

/// Creates the lock file with this process's id and host; `false` when it
/// exists.
fn try_create(path: &Path) -> io::Result<bool> {
    match OpenOptions::new().write(true).create_new(true).open(path) {
        Ok(mut file) => {
            writeln!(file, "{} {}", std::process::id(), host())?;
            Ok(true)
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(e),
    }
}

/// Whether the lock at `path` is stale: its process is gone from this
/// host, or it is older than [`STALE_AFTER`] (a lock file without a
/// process id, from a writer killed between creating and writing it,
/// after a second).
fn is_stale(path: &Path) -> bool {
    let Ok(metadata) = fs::symlink_metadata(path) else {
        return false; // released meanwhile: try again
    };
    let age = metadata
        .modified()
        .ok()
        .and_then(|m| SystemTime::now().duration_since(m).ok())
        .unwrap_or_default();
    if age > STALE_AFTER {
        return true;
    }
    let text = fs::read_to_string(path).unwrap_or_default();
    let mut words = text.split_whitespace();
    match (
        words.next().and_then(|p| p.parse::<u32>().ok()),
        words.next(),
    ) {
        (Some(pid), Some(holder_host)) => {
            let here = host();
            here != "-" && holder_host == here && !process_alive(pid)
        }
        _ => age > Duration::from_secs(1),
    }
}

/// Removes a stale lock, holding [`BREAK_FILE`] while it checks again, so
/// that a writer that found the same lock stale cannot remove the lock a
/// third writer took meanwhile. A break file left by a killed breaker is
/// itself stale after a second.
fn break_stale(dir: &Path, path: &Path) {
    let breaker = dir.join(BREAK_FILE);
    match try_create(&breaker) {
        Ok(true) => {
            if is_stale(path) {
                let _ = fs::remove_file(path);
            }
            let _ = fs::remove_file(&breaker);
        }
        _ => {
            let old = fs::symlink_metadata(&breaker)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|m| SystemTime::now().duration_since(m).ok())
                .is_some_and(|age| age > Duration::from_secs(1));
            if old {
                let _ = fs::remove_file(&breaker);
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

/// This machine's name (`-` where it cannot be read): a lock's process id
/// is only checked on the host that wrote it.
fn host() -> String {
    fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty() && !h.contains(char::is_whitespace))
        .unwrap_or_else(|| "-".to_string())
}

/// Whether process `pid` runs on this host (Linux's `/proc`; elsewhere
/// every process counts as running and only the age breaks a lock).
fn process_alive(pid: u32) -> bool {
    if !Path::new("/proc/self").exists() {
        return true;
    }
    Path::new("/proc").join(pid.to_string()).exists()
}
