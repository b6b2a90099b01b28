//! drive: each command's work as one library call — a request (paths, a
//! policy, options) in, what was decided out (a verdict, a profile, a
//! snapshot, notes, and the files to write as names and bytes). Above the
//! stages (trace … gate, history, publish), below the binary: it reads the
//! inputs (loading is the pipeline's input edge) and never prints, writes,
//! exits or reads the environment. What it has to tell while it runs
//! (progress, warnings) goes to the caller's [`Progress`].
//!
//! - [`check::check`]: `tracegate check` — workloads paired, read, compared,
//!   judged; the candidate snapshots and replay packages an out dir holds.
//! - [`analyse::report`], [`ranks::report`]: `tracegate report` of one trace
//!   or a rank set; [`analyse::snapshot`], [`analyse::replay`]: `tracegate
//!   snapshot` and `replay`.
//! - [`history::add`], [`history::site`]: `tracegate history add` and
//!   `history report`.
//!
//! Workloads are found and named by [`inputs`] (one naming rule,
//! [`inputs::workload_of`]), and many inputs are read at once by [`jobs`].

pub mod analyse;
pub mod check;
pub mod history;
pub mod inputs;
pub mod jobs;
pub mod ranks;
pub mod read;

use std::fmt;
use std::path::{Path, PathBuf};

use regex::Regex;

use crate::trace::LoadLimits;
use crate::trace::error::LoadError;

/// Why a request failed: one line naming the file and place (bad input;
/// the binary exits 2 with it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error(pub String);

impl Error {
    /// An error with `message`.
    pub fn new(message: impl Into<String>) -> Error {
        Error(message.into())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl From<LoadError> for Error {
    fn from(error: LoadError) -> Error {
        Error(error.to_string())
    }
}

/// A file a request made for the caller to write: its path relative to the
/// output directory, and its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutFile {
    /// Where it goes, relative to the output directory.
    pub path: PathBuf,
    /// What it holds.
    pub bytes: Vec<u8>,
}

/// What a request tells its caller while it runs: progress bars and
/// warnings. The library draws nothing: the binary's implementation draws
/// on a terminal, [`Silent`] drops everything.
pub trait Progress: Sync {
    /// A bar for loading the trace at `path`, `size` bytes long, told the
    /// bytes read so far.
    fn bytes(&self, path: &Path, size: u64) -> Box<dyn Bar>;
    /// A bar counting `count` files read at once.
    fn files(&self, count: usize) -> Box<dyn Bar>;
    /// Something the user should read that does not stop the request (a
    /// history whose index and files do not add up, say).
    fn warning(&self, text: &str);
}

/// One progress bar ([`Progress`]).
pub trait Bar: Send + Sync {
    /// The position: bytes read, or files done.
    fn set_position(&self, position: u64);
    /// One more file done.
    fn inc(&self);
    /// Done: the bar is cleared.
    fn finish(&self);
}

/// Progress nobody watches: no bars, warnings dropped.
pub struct Silent;

impl Progress for Silent {
    fn bytes(&self, _: &Path, _: u64) -> Box<dyn Bar> {
        Box::new(Silent)
    }
    fn files(&self, _: usize) -> Box<dyn Bar> {
        Box::new(Silent)
    }
    fn warning(&self, _: &str) {}
}

impl Bar for Silent {
    fn set_position(&self, _: u64) {}
    fn inc(&self) {}
    fn finish(&self) {}
}

/// A size flag (`--max-event-bytes`): `123`, `64KiB`, `64MiB`, `1GiB` (also `K`, `M`, `G`), in bytes.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let shift = match unit.trim() {
        "" | "B" => 0,
        "K" | "KiB" => 10,
        "M" | "MiB" => 20,
        "G" | "GiB" => 30,
        other => return Err(format!("unknown unit `{other}`: use KiB, MiB or GiB")),
    };
    number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(1 << shift))
        .filter(|&n| n > 0)
        .ok_or_else(|| format!("`{text}` is not a positive size in bytes"))
}

/// How inputs are read: quietly or not, the input limits, how many at once,
/// and whether a directory is one job's ranks.
#[derive(Clone)]
pub struct ReadOptions<'a> {
    /// No progress bars.
    pub quiet: bool,
    /// What one trace may cost to load.
    pub limits: LoadLimits,
    /// How many inputs are read at once.
    pub jobs: jobs::Jobs,
    /// `--ranks`: a directory is one job's ranks, not a set of workloads.
    pub ranks: bool,
    /// `--rank-regex`: each rank's file's rank from its name.
    pub rank_regex: Option<Regex>,
    /// Where progress and warnings go.
    pub progress: &'a dyn Progress,
}

impl<'a> ReadOptions<'a> {
    /// These options, quiet or not as [`jobs::read_all`] asks for one input.
    pub fn with_quiet(&self, quiet: bool) -> ReadOptions<'a> {
        ReadOptions {
            quiet,
            ..self.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_units() {
        assert_eq!(parse_size("1000"), Ok(1000));
        assert_eq!(parse_size("64MiB"), Ok(64 << 20));
        assert_eq!(parse_size("2 G"), Ok(2 << 30));
        assert!(parse_size("0").is_err());
        assert!(parse_size("12 furlongs").is_err());
        assert!(parse_size("99999999999GiB").is_err());
    }
}
