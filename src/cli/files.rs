//! Writing what a command decided: files under the folder it was given,
//! text to stdout, lines appended to GitHub Actions' files. Every failure
//! names the path and what could not be done to it.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::Failure;

/// The failure of `action` on `path`: "PATH: cannot ACTION: ERROR".
pub(super) fn cannot(action: &str, path: &Path) -> impl FnOnce(io::Error) -> Failure {
    let path = path.display().to_string();
    move |e| Failure::input(format!("{path}: cannot {action}: {e}"))
}

/// Creates `dir` and the directories above it.
pub(super) fn create_dir(dir: &Path) -> Result<(), Failure> {
    fs::create_dir_all(dir).map_err(cannot("create directory", dir))
}

/// Creates the directories `path` is to be written in.
pub(super) fn create_parent(path: &Path) -> Result<(), Failure> {
    match path.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(dir) => create_dir(dir),
        None => Ok(()),
    }
}

/// Writes `bytes` to `dir/path`, creating the directories it is in.
pub(super) fn write_file(dir: &Path, path: &Path, bytes: &[u8]) -> Result<PathBuf, Failure> {
    let path = dir.join(path);
    create_parent(&path)?;
    fs::write(&path, bytes).map_err(cannot("write", &path))?;
    Ok(path)
}

/// Writes `files` (names and texts) into `dir`, creating it.
pub(super) fn write_files(dir: &Path, files: Vec<(&'static str, String)>) -> Result<(), Failure> {
    create_dir(dir)?;
    for (name, contents) in files {
        write_file(dir, Path::new(name), contents.as_bytes())?;
    }
    Ok(())
}

/// Appends `text` to `path` (a GitHub Actions step summary or output file).
pub(super) fn append(path: &Path, text: &str) -> Result<(), Failure> {
    let mut file = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(cannot("open", path))?;
    file.write_all(text.as_bytes())
        .map_err(cannot("write", path))
}

/// Writes `text` to `output`, or to stdout when there is none.
pub(super) fn emit(output: Option<&Path>, text: &str) -> Result<(), Failure> {
    if let Some(path) = output {
        return fs::write(path, text).map_err(cannot("write", path));
    }
    let mut stdout = io::stdout().lock();
    // A closed pipe (`| head`) is not an error worth reporting.
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            Err(Failure::input(format!("cannot write to stdout: {e}")))
        }
        _ => Ok(()),
    }
}
