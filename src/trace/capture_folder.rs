//! Capture traces given as a folder: the traces recorded while CUDA/HIP
//! graphs were captured, one per captured batch size (vLLM's
//! `capture_traces/`), and the `execution_details.json` listing each with
//! its batch size and mode — `FULL` (the whole forward is one graph) or
//! `PIECEWISE` (one graph per piece, attention run eagerly between them).
//! TraceLens's inference report reads the same layout
//! (`Trace2Tree/trace_capture_merge_experimental.py`, `load_capture_folder`).
//!
//! Only the list is read here. Which traces a replay needs is the
//! analysis's choice (`analysis::graph::wanted`), and the caller loads those.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::error::LoadError;

/// The file in a capture folder that lists the captures.
pub const EXECUTION_DETAILS: &str = "execution_details.json";

/// The most bytes `execution_details.json` may have (a few hundred bytes per
/// captured batch size).
const MAX_DETAILS_BYTES: u64 = 4 << 20;

/// How a capture trace's graphs cover one forward.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CaptureMode {
    /// The whole forward is one graph: one graph launch per step.
    Full,
    /// One graph per piece between eager ops: several launches per step.
    Piecewise,
}

impl CaptureMode {
    /// `FULL` or `PIECEWISE`, as vLLM writes them; `None` otherwise.
    pub fn parse(text: &str) -> Option<CaptureMode> {
        match text {
            "FULL" => Some(CaptureMode::Full),
            "PIECEWISE" => Some(CaptureMode::Piecewise),
            _ => None,
        }
    }

    /// The mode as vLLM writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            CaptureMode::Full => "FULL",
            CaptureMode::Piecewise => "PIECEWISE",
        }
    }
}

/// One capture trace, with what `execution_details.json` says of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaptureFile {
    /// The trace.
    pub path: PathBuf,
    /// The batch size its graphs were captured for, when listed.
    pub batch_size: Option<u64>,
    /// Its mode, when listed.
    pub mode: Option<CaptureMode>,
}

/// The capture traces a `--capture` path names.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CaptureFiles {
    /// The traces, in listing order (file name order without
    /// `execution_details.json`).
    pub files: Vec<CaptureFile>,
    /// Entries of `execution_details.json` left out, and why.
    pub notes: Vec<String>,
}

/// The capture traces of `path`: the file itself, or a folder's traces as
/// its `execution_details.json` lists them (entries TraceLens would skip —
/// a mode other than `FULL`/`PIECEWISE`, a batch size that is no integer,
/// a file not in the folder — are left out with a note), else every
/// `.json`/`.json.gz` file in it, with nothing known of them.
pub fn capture_files(path: &Path) -> Result<CaptureFiles, LoadError> {
    let io = |source| LoadError::Io {
        path: path.display().to_string(),
        source,
    };
    if !fs::metadata(path).map_err(io)?.is_dir() {
        return Ok(CaptureFiles {
            files: vec![CaptureFile {
                path: path.to_path_buf(),
                batch_size: None,
                mode: None,
            }],
            notes: Vec::new(),
        });
    }
    let details = path.join(EXECUTION_DETAILS);
    let found = if details.is_file() {
        listed(path, &details)?
    } else {
        CaptureFiles {
            files: traces_in(path)?
                .into_iter()
                .map(|path| CaptureFile {
                    path,
                    batch_size: None,
                    mode: None,
                })
                .collect(),
            notes: Vec::new(),
        }
    };
    if found.files.is_empty() {
        return Err(LoadError::CaptureFolder {
            path: path.display().to_string(),
            message: if details.is_file() {
                format!("{EXECUTION_DETAILS} lists no capture trace found in the folder")
            } else {
                "no .json or .json.gz capture traces in the folder".to_string()
            },
        });
    }
    Ok(found)
}

/// The `.json` and `.json.gz` files of a folder, by name.
fn traces_in(dir: &Path) -> Result<Vec<PathBuf>, LoadError> {
    let io = |source| LoadError::Io {
        path: dir.display().to_string(),
        source,
    };
    let mut found = Vec::new();
    for entry in fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if path.is_file()
            && name != EXECUTION_DETAILS
            && (name.ends_with(".json") || name.ends_with(".json.gz"))
        {
            found.push(path);
        }
    }
    found.sort();
    Ok(found)
}

/// The entries of `execution_details.json` (`[{"file", "batch_size", "mode"}]`).
fn listed(dir: &Path, details: &Path) -> Result<CaptureFiles, LoadError> {
    let bad = |message: String| LoadError::CaptureFolder {
        path: details.display().to_string(),
        message,
    };
    let io = |source| LoadError::Io {
        path: details.display().to_string(),
        source,
    };
    if fs::metadata(details).map_err(io)?.len() > MAX_DETAILS_BYTES {
        return Err(bad(format!("larger than {MAX_DETAILS_BYTES} bytes")));
    }
    let text = fs::read_to_string(details).map_err(io)?;
    let value: Value = serde_json::from_str(&text).map_err(|e| {
        bad(format!(
            "line {} column {}: {e}: expected a list of {{\"file\", \"batch_size\", \"mode\"}}",
            e.line(),
            e.column()
        ))
    })?;
    let Value::Array(entries) = value else {
        return Err(bad(
            "expected a list of {\"file\", \"batch_size\", \"mode\"}".to_string(),
        ));
    };
    let mut found = CaptureFiles::default();
    for (index, entry) in entries.iter().enumerate() {
        let file = entry.get("file").and_then(Value::as_str);
        let batch_size = entry.get("batch_size").and_then(Value::as_u64);
        let mode = entry
            .get("mode")
            .and_then(Value::as_str)
            .and_then(CaptureMode::parse);
        let skipped = |why: &str| format!("{EXECUTION_DETAILS} entry {index} skipped: {why}");
        let (Some(file), Some(batch_size), Some(mode)) = (file, batch_size, mode) else {
            found.notes.push(skipped(
                "it needs a \"file\" name, an integer \"batch_size\" and a \"mode\" of FULL or PIECEWISE",
            ));
            continue;
        };
        // A name, not a path: the folder's own files only.
        let plain = Path::new(file).file_name().and_then(|n| n.to_str()) == Some(file);
        let path = dir.join(file);
        if !plain || !path.is_file() {
            found.notes.push(skipped(&format!(
                "no file `{}` in the folder",
                super::error::printable(file)
            )));
            continue;
        }
        found.files.push(CaptureFile {
            path,
            batch_size: Some(batch_size),
            mode: Some(mode),
        });
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::TempDir::new().expect("tempdir");
        for (name, text) in files {
            fs::write(dir.path().join(name), text).expect("write");
        }
        dir
    }

    #[test]
    fn execution_details_list_the_captures_and_bad_entries_are_noted() {
        let dir = folder(&[
            ("bs8.json", "{}"),
            ("bs16.json.gz", "{}"),
            (
                EXECUTION_DETAILS,
                r#"[{"file": "bs16.json.gz", "batch_size": 16, "mode": "PIECEWISE"},
                    {"file": "bs8.json", "batch_size": 8, "mode": "FULL"},
                    {"file": "gone.json", "batch_size": 4, "mode": "FULL"},
                    {"file": "../bs8.json", "batch_size": 4, "mode": "FULL"},
                    {"file": "bs8.json", "batch_size": null, "mode": "FULL"},
                    {"file": "bs8.json", "batch_size": 2, "mode": "NONE"}]"#,
            ),
        ]);
        let found = capture_files(dir.path()).expect("read");
        let listed: Vec<(String, Option<u64>, Option<CaptureMode>)> = found
            .files
            .iter()
            .map(|f| {
                (
                    f.path.file_name().unwrap().to_string_lossy().into_owned(),
                    f.batch_size,
                    f.mode,
                )
            })
            .collect();
        assert_eq!(
            listed,
            [
                (
                    "bs16.json.gz".into(),
                    Some(16),
                    Some(CaptureMode::Piecewise)
                ),
                ("bs8.json".into(), Some(8), Some(CaptureMode::Full)),
            ]
        );
        assert_eq!(found.notes.len(), 4, "{:?}", found.notes);
        assert!(found.notes[0].contains("entry 2") && found.notes[0].contains("gone.json"));
        assert!(found.notes[1].contains("../bs8.json"));
    }

    #[test]
    fn a_folder_without_details_lists_its_traces_and_a_file_is_itself() {
        let dir = folder(&[("b.json", "{}"), ("a.json.gz", "{}"), ("notes.txt", "")]);
        let found = capture_files(dir.path()).expect("read");
        let names: Vec<_> = found
            .files
            .iter()
            .map(|f| f.path.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["a.json.gz", "b.json"]);
        assert!(found.files.iter().all(|f| f.batch_size.is_none()));
        let one = capture_files(&dir.path().join("b.json")).expect("read");
        assert_eq!(one.files.len(), 1);
        assert_eq!(one.files[0].path, dir.path().join("b.json"));
    }

    #[test]
    fn unreadable_details_and_empty_folders_are_one_line_errors() {
        for (text, expected) in [
            ("{\"file\": 1}", "expected a list"),
            ("[{", "line 1 column 2"),
            ("[]", "lists no capture trace"),
        ] {
            let dir = folder(&[(EXECUTION_DETAILS, text)]);
            let error = capture_files(dir.path()).expect_err("refused").to_string();
            assert!(error.contains(EXECUTION_DETAILS), "{error}");
            assert!(error.contains(expected), "{error}");
            assert!(!error.contains('\n'), "{error}");
        }
        let empty = folder(&[]);
        let error = capture_files(empty.path())
            .expect_err("refused")
            .to_string();
        assert!(
            error.contains("no .json or .json.gz capture traces"),
            "{error}"
        );
    }
}
