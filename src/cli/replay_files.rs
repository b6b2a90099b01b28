//! The replay packages an earlier `check --out-dir` left: told from a
//! user's files by name and content, and removed before a check writes its
//! own.

use std::fs;
use std::io;
use std::path::Path;

use tracegate::publish::replay::PACKAGE_FILES;

use super::Failure;

/// Removes from `dir` the replay packages tracegate wrote there (see
/// [`is_replay_package`]), leaving every other file alone; returns how many.
pub(super) fn remove_earlier_packages(dir: &Path) -> Result<usize, Failure> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => {
            return Err(Failure::input(format!(
                "{}: cannot read directory: {e}",
                dir.display()
            )));
        }
    };
    let mut removed = 0;
    for entry in entries {
        let path = entry
            .map_err(|e| Failure::input(format!("{}: {e}", dir.display())))?
            .path();
        if is_replay_package(&path) {
            fs::remove_file(&path).map_err(|e| {
                Failure::input(format!(
                    "{}: cannot remove this replay package of an earlier run: {e}",
                    path.display()
                ))
            })?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// Whether `path` is a replay package as [`replay::write_package`] writes
/// them: a file `<stem>.tar.gz` whose stem ends in `-` and 8 lowercase hex
/// digits, holding exactly `<stem>/` and the [`PACKAGE_FILES`] in it, in
/// that order. A user's file, even a tarball of the same name, is not.
fn is_replay_package(path: &Path) -> bool {
    let Some(stem) = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(".tar.gz"))
    else {
        return false;
    };
    let hashed = stem.rsplit_once('-').is_some_and(|(_, hash)| {
        hash.len() == 8 && hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    });
    if !hashed || !path.is_file() {
        return false;
    }
    let Ok(file) = fs::File::open(path) else {
        return false;
    };
    let expected: Vec<String> = std::iter::once(format!("{stem}/"))
        .chain(PACKAGE_FILES.iter().map(|name| format!("{stem}/{name}")))
        .collect();
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(file));
    let Ok(entries) = archive.entries() else {
        return false;
    };
    let mut found = Vec::new();
    for entry in entries {
        let Ok(entry) = entry else {
            return false;
        };
        found.push(String::from_utf8_lossy(&entry.path_bytes()).into_owned());
        if found.len() > expected.len() {
            return false;
        }
    }
    found == expected
}
