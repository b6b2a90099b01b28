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
pub fn workload_name(path: &Path) -> String {
    let mut name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    const SUFFIXES: [&str; 5] = [".gz", ".json", ".snapshot", ".trace", ".pt"];
    while let Some(stripped) = SUFFIXES
        .iter()
        .find_map(|suffix| name.strip_suffix(suffix).filter(|s| !s.is_empty()))
    {
        name = stripped.to_string();
    }
    name
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
