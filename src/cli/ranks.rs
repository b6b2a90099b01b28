//! `report DIR|GLOB`: a rank set's traces found (a directory's `*.json` and
//! `*.json.gz`, or the files a glob matches), each rank told (from
//! `distributedInfo.rank` or the file name, or by `--rank-regex`), each
//! trace read into its communication kernels and context, and the set's
//! report written (terminal, JSON, Markdown, or TraceLens-compatible CSVs).

use std::fs;
use std::path::{Path, PathBuf};

use globset::GlobBuilder;
use regex::Regex;

use super::args::{Format, RankRegexArgs, ReportArgs};
use super::{Failure, color_enabled, emit, load_trace, terminal_width};
use tracegate::analysis::ranks::{self, RankContext, RankInput};
use tracegate::render;

/// The longest glob accepted, in characters (globset compiles it to a
/// regex, and panics on one it cannot build).
const MAX_GLOB_CHARS: usize = 1000;

/// How many directory levels a glob with `**` is followed down.
const MAX_GLOB_DEPTH: usize = 16;

/// Whether `report` reads `path` as a rank set: a directory, a glob that
/// names no existing file, or any input when `--rank-regex` is given.
pub(super) fn is_rank_set(args: &ReportArgs) -> bool {
    args.trace.is_dir() || args.rank.rank_regex.is_some() || is_glob(&args.trace)
}

/// Whether `path` is a glob: it names no existing file and holds `*`, `?`
/// or `[`.
pub(super) fn is_glob(path: &Path) -> bool {
    !path.exists() && path.to_string_lossy().contains(['*', '?', '['])
}

/// `report DIR|GLOB`: the traces as the ranks of one job.
pub(super) fn report(args: &ReportArgs) -> Result<(), Failure> {
    if args.capture.is_some() {
        return Err(Failure::input(
            "--capture takes one trace's capture, not a rank set's",
        ));
    }
    let rank_regex = rank_regex_of(&args.rank, true)?;
    let label = args.trace.display().to_string();
    let paths = rank_set_files(&args.trace, rank_regex.as_ref())?;
    let options = args.hardware.options()?;
    let comm = args.comm.kernels()?;
    let mut inputs: Vec<RankInput> = Vec::new();
    let mut contexts: Vec<RankContext> = Vec::new();
    for path in &paths {
        let trace = load_trace(path, args.quiet, &args.load.limits(), "report")?;
        let rank = match &rank_regex {
            Some(regex) => rank_by_regex(regex, path)?,
            None => ranks::input::rank_of(&trace, file_name(path)).ok_or_else(|| {
                Failure::input(format!(
                    "{}: cannot tell its rank: no distributedInfo.rank and no rank<N> in the file name (give --rank-regex)",
                    path.display()
                ))
            })?,
        };
        if let Some(other) = inputs.iter().find(|input| input.rank == rank) {
            return Err(Failure::input(format!(
                "{} and {} are both rank {rank}",
                other.source,
                path.display()
            )));
        }
        inputs.push(ranks::input::rank_input(&trace, rank, &comm));
        contexts.push(ranks::input::rank_context(
            &trace,
            rank,
            &comm,
            &options.catalog,
            options.hardware.as_ref(),
        ));
    }
    inputs.sort_by_key(|input| input.rank);
    let set = ranks::analyse_with(&inputs, &contexts);
    let text = match args.format {
        Format::Csv => {
            let dir = args.out_dir.as_deref().expect("report checks --out-dir");
            return write_files(dir, render::csv::ranks::render_all(&set));
        }
        Format::Json => render::ranks::json(&set),
        Format::Markdown => render::ranks::markdown(&set, &label),
        Format::Terminal => render::ranks::terminal(
            &set,
            &label,
            render::terminal::Style {
                color: args.output.is_none() && color_enabled(args.color),
                width: terminal_width(),
            },
        ),
    };
    emit(args.output.as_deref(), &text)
}

fn file_name(path: &Path) -> &str {
    path.file_name().and_then(|n| n.to_str()).unwrap_or("")
}

/// The files of a rank set at `input`: a directory's traces and snapshots
/// ([`directory_traces`]) or the files a glob matches, kept to those whose
/// names `regex` matches when given; an error when there are none, or
/// when `input` is one existing file.
pub(super) fn rank_set_files(input: &Path, regex: Option<&Regex>) -> Result<Vec<PathBuf>, Failure> {
    let label = input.display().to_string();
    let paths = if input.is_dir() {
        directory_traces(input)?
    } else if is_glob(input) {
        glob_traces(&label)?
    } else {
        return Err(Failure::input(format!(
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
        return Err(Failure::input(format!("{label}: {what}")));
    }
    Ok(paths)
}

/// A directory's `*.json` and `*.json.gz` files, sorted.
fn directory_traces(dir: &Path) -> Result<Vec<PathBuf>, Failure> {
    let mut paths: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(|e| Failure::input(format!("{}: cannot read: {e}", dir.display())))?
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
fn glob_traces(pattern: &str) -> Result<Vec<PathBuf>, Failure> {
    if pattern.chars().count() > MAX_GLOB_CHARS {
        return Err(Failure::input(format!(
            "the glob is longer than {MAX_GLOB_CHARS} characters"
        )));
    }
    let matcher = GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map_err(|e| Failure::input(format!("{pattern}: not a valid glob: {}", e.kind())))?
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
pub(super) fn set_directory(input: &Path) -> PathBuf {
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

/// The compiled `--rank-regex` of `args`; an error when it is given and
/// the command reads no rank set (`ranks` false: no `--ranks`).
pub(super) fn rank_regex_of(args: &RankRegexArgs, ranks: bool) -> Result<Option<Regex>, Failure> {
    match &args.rank_regex {
        Some(_) if !ranks => Err(Failure::input(
            "--rank-regex names the ranks of a rank set: give --ranks too",
        )),
        Some(text) => rank_regex(text).map(Some),
        None => Ok(None),
    }
}

/// `--rank-regex`: a regex with one capture group (or a group named
/// `rank`) that holds the rank's digits.
pub(super) fn rank_regex(text: &str) -> Result<Regex, Failure> {
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
        Failure::input(format!(
            "--rank-regex `{text}`: not a valid regex: {reason}"
        ))
    })?;
    let groups = regex.captures_len() - 1;
    let named = regex.capture_names().flatten().any(|name| name == "rank");
    if groups == 0 {
        return Err(Failure::input(format!(
            "--rank-regex `{text}` has no capture group: put the rank's digits in one, as in `rank(\\d+)`"
        )));
    }
    if groups > 1 && !named {
        return Err(Failure::input(format!(
            "--rank-regex `{text}` has {groups} capture groups: keep one, or name the rank's `(?P<rank>\\d+)`"
        )));
    }
    Ok(regex)
}

/// The rank `regex` reads from `path`'s file name (the caller kept only
/// names it matches).
pub(super) fn rank_by_regex(regex: &Regex, path: &Path) -> Result<u32, Failure> {
    let name = file_name(path);
    let captures = regex.captures(name);
    let digits = captures
        .as_ref()
        .and_then(|c| c.name("rank").or_else(|| c.get(1)))
        .map_or("", |m| m.as_str());
    digits.parse().map_err(|_| {
        Failure::input(format!(
            "{}: --rank-regex's group matched `{digits}`, not a rank number",
            path.display()
        ))
    })
}

/// Writes `files` into `dir`, creating it.
pub(super) fn write_files(dir: &Path, files: Vec<(&'static str, String)>) -> Result<(), Failure> {
    fs::create_dir_all(dir)
        .map_err(|e| Failure::input(format!("{}: cannot create directory: {e}", dir.display())))?;
    for (name, contents) in files {
        let path = dir.join(name);
        fs::write(&path, contents)
            .map_err(|e| Failure::input(format!("{}: cannot write: {e}", path.display())))?;
    }
    Ok(())
}
