//! What a snapshot records about its source besides the profile: the
//! workload named after the file, and the PyTorch version from the trace
//! metadata.

use std::path::Path;

use crate::trace::Metadata;

/// The workload a file holds: its name without the directory and without
/// the suffixes `.gz`, `.json`, `.snapshot`, `.trace`, `.pt` (repeatedly,
/// in any order), so `bert.json.gz`, `bert.snapshot.json.gz` and
/// `bert.pt.trace.json` all name `bert`. Other dots stay
/// (`Qwen1.5-0.5B.json` → `Qwen1.5-0.5B`).
///
/// A name [`artifact_file_name`] wrote is read back as the workload it
/// encodes (`bert%3Abs32.snapshot.json.gz` → `bert:bs32`).
pub fn workload_name(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut name = decode_artifact_name(&name);
    const SUFFIXES: [&str; 5] = [".gz", ".json", ".snapshot", ".trace", ".pt"];
    while let Some(stripped) = SUFFIXES
        .iter()
        .find_map(|suffix| name.strip_suffix(suffix).filter(|s| !s.is_empty()))
    {
        name = stripped.to_string();
    }
    name
}

/// Whether `c` is written as `%XX` in a file name: what GitHub's
/// upload-artifact refuses (`" : < > | * ?`, CR and LF), path separators,
/// other control characters, and `%` itself (so the mapping is
/// reversible). Everything else, non-ASCII letters included, stays.
fn is_encoded(c: char) -> bool {
    matches!(
        c,
        '"' | ':' | '<' | '>' | '|' | '*' | '?' | '/' | '\\' | '%'
    ) || c.is_ascii_control()
}

/// The file name (without suffix) under which tracegate writes a file of
/// workload `workload` (a candidate snapshot `snapshots/NAME.snapshot.json.gz`):
/// every character GitHub's upload-artifact refuses, path separators,
/// ASCII controls and `%` as `%XX` (upper-case hex), so that no upload
/// fails on it and [`workload_name`] reads the workload back exactly
/// (`bert:bs32` → `bert%3Abs32`). A name of dots only starts `%2E`, an
/// empty one is `_`; the real name stays inside the file.
pub fn artifact_file_name(workload: &str) -> String {
    let mut out = String::with_capacity(workload.len());
    for c in workload.chars() {
        if is_encoded(c) {
            out.push_str(&format!("%{:02X}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    if out.is_empty() {
        return "_".to_string();
    }
    if out.chars().all(|c| c == '.') {
        out.replace_range(..1, "%2E");
    }
    out
}

/// [`artifact_file_name`] undone: each `%XX` that it would have written
/// (an encoded character) decoded; any other `%` left as it is, so names it
/// never wrote read as before.
fn decode_artifact_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let decoded = rest
            .get(at + 1..at + 3)
            .and_then(|hex| u8::from_str_radix(hex, 16).ok())
            .map(char::from)
            .filter(|&c| is_encoded(c) || c == '.');
        match decoded {
            Some(c)
                if rest.as_bytes()[at + 1..at + 3]
                    .iter()
                    .all(|b| !b.is_ascii_lowercase()) =>
            {
                out.push(c);
                rest = &rest[at + 3..];
            }
            _ => {
                out.push('%');
                rest = &rest[at + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The PyTorch version a trace's top-level metadata records, if any: a
/// string under a key `pytorch_version`, `torch_version` or
/// `torch.__version__`, searched through nested objects (not arrays) up to
/// four levels deep, top level first. For example the TraceLens corpus
/// traces keep it at `metadata.system.torch_env_info.torch_version`.
pub fn pytorch_version(metadata: &Metadata) -> Option<String> {
    const KEYS: [&str; 3] = ["pytorch_version", "torch_version", "torch.__version__"];
    let mut level: Vec<(&str, &serde_json::Value)> = metadata
        .fields
        .iter()
        .map(|(k, v)| (k.as_str(), v))
        .collect();
    for _ in 0..4 {
        if let Some(found) = level.iter().find_map(|(key, value)| {
            KEYS.contains(key)
                .then(|| value.as_str())
                .flatten()
                .map(str::to_string)
        }) {
            return Some(found);
        }
        level = level
            .iter()
            .filter_map(|(_, value)| value.as_object())
            .flat_map(|object| object.iter().map(|(k, v)| (k.as_str(), v)))
            .collect();
    }
    None
}
