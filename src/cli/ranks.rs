//! `report DIR|GLOB`: a rank set's report (the library reads the traces and
//! tells their ranks, [`driver::ranks::report`]) drawn as terminal text,
//! JSON or Markdown, or written as TraceLens-compatible CSVs; and
//! `--rank-regex` compiled for every command that reads rank sets.

use regex::Regex;

use super::args::{Format, RankRegexArgs, ReportArgs};
use super::files::{emit, write_files};
use super::{Failure, color_enabled, read_options, terminal_width};
use tracegate::analysis::analyse::AnalysisOptions;
use tracegate::driver::{self, ReadOptions, inputs};
use tracegate::render;

/// Whether `report` reads `path` as a rank set: a directory, a glob that
/// names no existing file, or any input when `--rank-regex` is given.
pub(super) fn is_rank_set(args: &ReportArgs) -> bool {
    args.trace.is_dir() || args.rank.rank_regex.is_some() || inputs::is_glob(&args.trace)
}

/// `report DIR|GLOB`: the traces as the ranks of one job.
pub(super) fn report(args: &ReportArgs) -> Result<(), Failure> {
    if args.capture.is_some() {
        return Err(Failure::input(
            "--capture takes one trace's capture, not a rank set's",
        ));
    }
    let read = ReadOptions {
        ranks: true,
        rank_regex: rank_regex_of(&args.rank, true)?,
        ..read_options(args.quiet, &args.load)
    };
    let label = args.trace.display().to_string();
    let options = AnalysisOptions {
        comm: args.comm.kernels()?,
        ..args.hardware.options()?
    };
    let set = driver::ranks::report(&args.trace, &options, &read)?;
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
                color: args.output.is_none() && color_enabled(args.color, true),
                width: terminal_width(),
            },
        ),
    };
    emit(args.output.as_deref(), &text)
}

/// The compiled `--rank-regex` of `args`; an error when it is given and
/// the command reads no rank set (`ranks` false: no `--ranks`).
pub(super) fn rank_regex_of(args: &RankRegexArgs, ranks: bool) -> Result<Option<Regex>, Failure> {
    match &args.rank_regex {
        Some(_) if !ranks => Err(Failure::input(
            "--rank-regex names the ranks of a rank set: give --ranks too",
        )),
        Some(text) => Ok(Some(inputs::rank_regex(text)?)),
        None => Ok(None),
    }
}
