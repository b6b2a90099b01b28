//! Workload discovery: the trace or snapshot files of a check's sides paired
//! into workloads by file name (each with the capture trace beside it), the
//! files of a rank set (a directory or a glob, each rank told by
//! `--rank-regex` when given), and the one rule that names a workload.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use globset::GlobBuilder;
use regex::Regex;

use crate::gate::snapshot;

use super::Error;

/// The workload an input is: its file name without the `.json`, `.gz`,
/// `.snapshot`, `.trace` and `.pt` suffixes ([`snapshot::workload_name`]),
/// or for a rank set (`ranks`) that of the directory it is in
/// ([`set_directory`]). Every command names a workload by this rule, not
/// by the name stored inside a snapshot: `history add b.snapshot.json.gz`
/// records workload `b`, which `check --history` finds for a candidate
/// `b.json.gz` or `b.snapshot.json.gz`, and a directory check pairs
/// `b.json.gz` with `b.snapshot.json.gz`.
pub fn workload_of(path: &Path, ranks: bool) -> String {
    if ranks {
        snapshot::workload_name(&set_directory(path))
    } else {
        snapshot::workload_name(path)
    }
}

/// The longest glob accepted, in characters (globset compiles it to a
/// regex, and panics on one it cannot build).
const MAX_GLOB_CHARS: usize = 1000;

/// How many directory levels a glob with `**` is followed down.
const MAX_GLOB_DEPTH: usize = 16;

/// Whether `path` is a glob: it names no existing file and holds `*`, `?`
/// or `[`.
pub fn is_glob(path: &Path) -> bool {
    !path.exists() && path.to_string_lossy().contains(['*', '?', '['])
}

/// The name suffix of a capture trace beside its workload in a directory:
/// `NAME.capture.json.gz` is the capture trace of workload `NAME`, and a
/// folder `NAME.capture/` its capture folder.
const CAPTURE_SUFFIX: &str = ".capture";

/// One workload file of a directory, with the capture trace beside it.
#[derive(Clone, Debug)]
pub struct Input {
    /// The trace or snapshot.
    pub path: PathBuf,
    /// `NAME.capture.json[.gz]` or `NAME.capture/` beside it, or the
    /// `--…-capture` flag.
    pub capture: Option<PathBuf>,
}

/// The trace or snapshot files of a directory, by workload name, each with
/// its capture trace or capture folder when the directory has one.
fn workload_inputs(dir: &Path) -> Result<BTreeMap<String, Input>, Error> {
    let mut files = workload_files(dir)?;
    let captures: Vec<String> = files
        .keys()
        .filter(|name| name.ends_with(CAPTURE_SUFFIX))
        .cloned()
        .collect();
    let mut inputs: BTreeMap<String, Input> = BTreeMap::new();
    let mut capture_of: BTreeMap<String, PathBuf> = BTreeMap::new();
    let folders = capture_folders(dir)?;
    let capture_files: Vec<(String, PathBuf)> = captures
        .into_iter()
        .map(|name| {
            let path = files.remove(&name).expect("listed");
            (name, path)
        })
        .collect();
    for (name, path) in capture_files.into_iter().chain(folders) {
        let workload = name.trim_end_matches(CAPTURE_SUFFIX).to_string();
        if !files.contains_key(&workload) {
            return Err(Error(format!(
                "{}: a capture trace without a workload `{workload}` beside it",
                path.display()
            )));
        }
        if let Some(other) = capture_of.insert(workload, path.clone()) {
            return Err(Error(format!(
                "{} and {} are the same workload's captures: keep one",
                other.display(),
                path.display()
            )));
        }
    }
    for (name, path) in files {
        let capture = capture_of.remove(&name);
        inputs.insert(name, Input { path, capture });
    }
    Ok(inputs)
}

/// The capture folders of a directory (`NAME.capture/`), by name.
fn capture_folders(dir: &Path) -> Result<Vec<(String, PathBuf)>, Error> {
    let mut found: Vec<(String, PathBuf)> = dir_entries(dir)?
        .into_iter()
        .filter_map(|path| {
            let name = path.file_name()?.to_str()?.to_string();
            (path.is_dir() && name.ends_with(CAPTURE_SUFFIX)).then_some((name, path))
        })
        .collect();
    found.sort();
    Ok(found)
}

/// The entries of a directory.
fn dir_entries(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let entries = fs::read_dir(dir)
        .map_err(|e| Error(format!("{}: cannot read directory: {e}", dir.display())))?;
    entries
        .map(|entry| {
            entry
                .map(|e| e.path())
                .map_err(|e| Error(format!("{}: {e}", dir.display())))
        })
        .collect()
}

/// The trace or snapshot files of a directory, by workload name.
fn workload_files(dir: &Path) -> Result<BTreeMap<String, PathBuf>, Error> {
    let mut files = BTreeMap::new();
    for path in dir_entries(dir)? {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if path.is_file() && (name.ends_with(".json") || name.ends_with(".json.gz")) {
            if let Some(previous) = files.insert(workload_of(&path, false), path.clone()) {
                return Err(Error(format!(
                    "{} and {} are the same workload: keep one",
                    previous.display(),
                    path.display()
                )));
            }
        }
    }
    if files.is_empty() {
        return Err(Error(format!(
            "{}: no .json or .json.gz traces or snapshots",
            dir.display()
        )));
    }
    Ok(files)
}

/// One workload's inputs: its name, its baseline runs, its candidate.
pub type WorkloadInputs = (String, Vec<Input>, Option<Input>);

/// The capture traces given on the command line, per side.
#[derive(Clone, Copy, Debug, Default)]
pub struct Captures<'a> {
    /// `--baseline-capture`: for every baseline file.
    pub baseline: Option<&'a Path>,
    /// `--candidate-capture`: for the candidate file.
    pub candidate: Option<&'a Path>,
}

/// Pairs baselines with the candidate into workloads: files compare as one
/// workload (with the capture traces given for each side), and so do
/// directories of one job's `ranks`; other directories pair files by
/// workload name (each with the `NAME.capture.json[.gz]` beside it).
pub fn pair_inputs(
    baselines: &[PathBuf],
    candidate: &Path,
    captures: Captures<'_>,
    ranks: bool,
) -> Result<Vec<WorkloadInputs>, Error> {
    if ranks || !candidate.is_dir() {
        if let Some(dir) = baselines.iter().find(|b| b.is_dir() && !ranks) {
            return Err(Error(format!(
                "--baseline {} is a directory but --candidate {} is a file: give both as files or both as directories",
                dir.display(),
                candidate.display()
            )));
        }
        let input = |path: &Path, capture: Option<&Path>| Input {
            path: path.to_path_buf(),
            capture: capture.map(Path::to_path_buf),
        };
        return Ok(vec![(
            workload_of(candidate, ranks),
            baselines
                .iter()
                .map(|b| input(b, captures.baseline))
                .collect(),
            Some(input(candidate, captures.candidate)),
        )]);
    }
    if let Some(flag) = captures.baseline.or(captures.candidate) {
        return Err(Error(format!(
            "--baseline-capture/--candidate-capture {} is for file inputs: in a directory, \
             put NAME.capture.json.gz or a NAME.capture/ folder beside workload NAME",
            flag.display()
        )));
    }
    let candidates = workload_inputs(candidate)?;
    let mut by_name: BTreeMap<String, (Vec<Input>, Option<Input>)> = BTreeMap::new();
    for baseline in baselines {
        if !baseline.is_dir() {
            return Err(Error(format!(
                "--candidate {} is a directory but --baseline {} is a file: give both as directories",
                candidate.display(),
                baseline.display()
            )));
        }
        for (name, path) in workload_inputs(baseline)? {
            by_name.entry(name).or_default().0.push(path);
        }
    }
    for (name, path) in candidates {
        by_name.entry(name).or_default().1 = Some(path);
    }
    Ok(by_name
        .into_iter()
        .map(|(name, (b, c))| (name, b, c))
        .collect())
}

pub fn file_name(path: &Path) -> &str {
    path.file_name().and_then(|n| n.to_str()).unwrap_or("")
}

/// The files of a rank set at `input`: a directory's traces and snapshots
/// ([`directory_traces`]) or the files a glob matches, kept to those whose
/// names `regex` matches when given; an error when there are none, or
/// when `input` is one existing file.
pub fn rank_set_files(input: &Path, regex: Option<&Regex>) -> Result<Vec<PathBuf>, Error> {
    let label = input.display().to_string();
    let paths = if input.is_dir() {
        directory_traces(input)?
    } else if is_glob(input) {
        glob_traces(&label)?
    } else {
        return Err(Error(format!(
            "{label}: --rank-regex reads a rank set: give a directory or a glob, not one file"
        )));
    };
    let paths: Vec<PathBuf> = match regex {
        Some(regex) => paths
            .into_iter()
            .filter(|path| regex.is_match(file_name(path)))
            .collect(),
        None => paths,
    };
    if paths.is_empty() {
        let what = match (regex, input.is_dir()) {
            (Some(regex), _) => format!("no trace's file name matches --rank-regex `{regex}`"),
            (None, true) => {
                "no traces or snapshots (*.json, *.json.gz) in this directory".to_string()
            }
            (None, false) => "no traces match this glob".to_string(),
        };
        return Err(Error(format!("{label}: {what}")));
    }
    Ok(paths)
}

/// A directory's `*.json` and `*.json.gz` files, sorted.
fn directory_traces(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut paths: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(|e| Error(format!("{}: cannot read: {e}", dir.display())))?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| {
            let name = file_name(path);
            path.is_file() && (name.ends_with(".json") || name.ends_with(".json.gz"))
        })
        .collect();
    paths.sort();
    Ok(paths)
}

/// The files a glob matches, sorted: `*` and `?` stay within one path
/// component, `**` crosses them. The walk starts at the glob's longest
/// prefix of plain components and does not follow symbolic links to
/// directories.
fn glob_traces(pattern: &str) -> Result<Vec<PathBuf>, Error> {
    if pattern.chars().count() > MAX_GLOB_CHARS {
        return Err(Error(format!(
            "the glob is longer than {MAX_GLOB_CHARS} characters"
        )));
    }
    let matcher = GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map_err(|e| Error(format!("{pattern}: not a valid glob: {}", e.kind())))?
        .compile_matcher();
    let (base, plain) = glob_base(pattern);
    let components = pattern.split('/').count();
    let depth = if pattern.contains("**") {
        MAX_GLOB_DEPTH
    } else {
        components - plain
    };
    let mut found = Vec::new();
    walk(Path::new(&base), plain == 0, depth, &mut |path| {
        if matcher.is_match(path) {
            found.push(path.to_path_buf());
        }
    });
    found.sort();
    Ok(found)
}

/// Where a glob's walk starts: its longest prefix of plain components
/// (`.` when none), and how many components that is.
fn glob_base(pattern: &str) -> (String, usize) {
    let components: Vec<&str> = pattern.split('/').collect();
    let plain = components
        .iter()
        .take_while(|c| !c.contains(['*', '?', '[', '{']))
        .count()
        .min(components.len() - 1);
    let base = match components[..plain].join("/") {
        prefix if prefix.is_empty() && pattern.starts_with('/') => "/".to_string(),
        prefix if prefix.is_empty() => ".".to_string(),
        prefix => prefix,
    };
    (base, plain)
}

/// The directory a rank set at `input` is named after: `input` itself, or
/// for a glob the directory its walk starts at (`job` for
/// `job/*/rank*.json.gz`), made absolute so that `.` has a name.
pub fn set_directory(input: &Path) -> PathBuf {
    let dir = if is_glob(input) {
        PathBuf::from(glob_base(&input.to_string_lossy()).0)
    } else {
        input.to_path_buf()
    };
    std::path::absolute(&dir).unwrap_or(dir)
}

/// Calls `visit` with every file under `dir`, at most `depth` levels down;
/// `strip` leaves out the `./` a relative glob's paths do not have.
fn walk(dir: &Path, strip: bool, depth: usize, visit: &mut dyn FnMut(&Path)) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let path = match path.strip_prefix(".") {
            Ok(relative) if strip => relative.to_path_buf(),
            _ => path,
        };
        match entry.file_type() {
            Ok(kind) if kind.is_dir() && depth > 1 => walk(&path, false, depth - 1, visit),
            Ok(kind) if !kind.is_dir() && path.is_file() => visit(&path),
            _ => {}
        }
    }
}

/// `--rank-regex`: a regex with one capture group (or a group named
/// `rank`) that holds the rank's digits.
pub fn rank_regex(text: &str) -> Result<Regex, Error> {
    let regex = Regex::new(text).map_err(|e| {
        let reason = e.to_string();
        let reason = reason
            .lines()
            .rev()
            .find(|line| !line.trim().is_empty())
            .unwrap_or("")
            .trim()
            .trim_start_matches("error: ")
            .to_string();
        Error(format!(
            "--rank-regex `{text}`: not a valid regex: {reason}"
        ))
    })?;
    let groups = regex.captures_len() - 1;
    let named = regex.capture_names().flatten().any(|name| name == "rank");
    if groups == 0 {
        return Err(Error(format!(
            "--rank-regex `{text}` has no capture group: put the rank's digits in one, as in `rank(\\d+)`"
        )));
    }
    if groups > 1 && !named {
        return Err(Error(format!(
            "--rank-regex `{text}` has {groups} capture groups: keep one, or name the rank's `(?P<rank>\\d+)`"
        )));
    }
    Ok(regex)
}

/// The rank `regex` reads from `path`'s file name (the caller kept only
/// names it matches).
pub fn rank_by_regex(regex: &Regex, path: &Path) -> Result<u32, Error> {
    let name = file_name(path);
    let captures = regex.captures(name);
    let digits = captures
        .as_ref()
        .and_then(|c| c.name("rank").or_else(|| c.get(1)))
        .map_or("", |m| m.as_str());
    digits.parse().map_err(|_| {
        Error(format!(
            "{}: --rank-regex's group matched `{digits}`, not a rank number",
            path.display()
        ))
    })
}
