//! The store's file work: paths checked to stay inside the history,
//! file names, atomic writes, folder listings, symbolic links refused.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Component, Path};
use std::time::{SystemTime, UNIX_EPOCH};

use super::{StoreError, TEMPORARY_SUFFIX, io_error};
use crate::gate::snapshot::sha256_hex;
use crate::history::entry::EntryMeta;

pub(super) fn read_sidecar(path: &Path) -> Result<EntryMeta, StoreError> {
    let text = fs::read_to_string(path).map_err(|e| io_error(path, "cannot read", e))?;
    serde_json::from_str(&text).map_err(|e| StoreError::Sidecar {
        path: path.display().to_string(),
        message: format!("not a history entry: {e}"),
    })
}

/// `file` as a path inside the history: relative, `/`-separated, no `..`
/// (an index line must not make `load` read outside the directory).
pub(super) fn check_relative(file: &str) -> Result<&Path, String> {
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
pub(super) fn slug(text: &str, max: usize) -> String {
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
pub(super) fn unique(entry: &EntryMeta, trace_sha256: &str) -> String {
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
pub(super) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let temporary = path.with_file_name(format!(
        ".{name}.{}-{nanos}{TEMPORARY_SUFFIX}",
        std::process::id()
    ));
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

/// The names in folder `dir`.
pub(super) fn list(dir: &Path) -> Result<Vec<String>, StoreError> {
    let mut names = Vec::new();
    for name in fs::read_dir(dir).map_err(|e| io_error(dir, "cannot read directory", e))? {
        let name = name.map_err(|e| io_error(dir, "cannot read directory", e))?;
        names.push(name.file_name().to_string_lossy().into_owned());
    }
    names.sort();
    Ok(names)
}

/// Whether `name` is a temporary file of [`write_atomic`].
pub(super) fn is_temporary(name: &str) -> bool {
    name.starts_with('.') && name.ends_with(TEMPORARY_SUFFIX)
}

/// Creates folder `path` unless it is one; a symbolic link or a file there
/// is refused.
pub(super) fn ensure_folder(path: &Path) -> Result<(), StoreError> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(StoreError::Refused {
            path: path.display().to_string(),
            message: "not a folder (a symbolic link?): the history writes only inside itself",
        }),
        Err(_) => fs::create_dir(path).map_err(|e| io_error(path, "cannot create directory", e)),
    }
}

/// Refuses `relative` (inside `dir`) when it or a folder on the way is a
/// symbolic link: the history never reads, writes or deletes outside itself.
pub(super) fn refuse_links(dir: &Path, relative: &Path) -> Result<(), StoreError> {
    let mut path = dir.to_path_buf();
    for part in relative.components() {
        path.push(part);
        match fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(StoreError::Refused {
                    path: path.display().to_string(),
                    message: "a symbolic link: the history reads and writes only inside itself",
                });
            }
            Ok(_) => {}
            Err(_) => return Ok(()), // not there: nothing below it either
        }
    }
    Ok(())
}
