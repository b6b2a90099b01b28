//! Command-line surface: dispatch, output files, exit codes (the clap
//! definitions are in `args.rs`).
//!
//! Exit codes: 0 ok (a passed gate, warnings allowed), 1 the gate failed (a
//! fail-severity finding), 2 bad usage or unreadable input, 3 internal error
//! (a bug: please report it).

mod args;
mod check;
mod files;
mod history;
mod ranks;

use args::*;

use std::io::{self, IsTerminal};
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};

use files::{cannot, create_dir, create_parent, emit};

use tracegate::analysis::analyse::AnalysisOptions;
use tracegate::driver::{self, Bar, Progress, ReadOptions, Silent, analyse};
use tracegate::gate::policy;
use tracegate::gate::verdict::Verdict;
use tracegate::publish::github;
use tracegate::render;

/// A failure with its exit code.
struct Failure {
    code: u8,
    message: String,
}

impl Failure {
    fn input(message: impl Into<String>) -> Failure {
        Failure {
            code: 2,
            message: message.into(),
        }
    }
}

impl From<driver::Error> for Failure {
    fn from(error: driver::Error) -> Failure {
        Failure::input(error.0)
    }
}

/// Progress on stderr: a bar for a large trace's bytes or for the files
/// read at once, on a terminal; warnings always.
struct Bars;

/// The one [`Bars`] every command reports to.
static BARS: Bars = Bars;

impl Progress for Bars {
    fn bytes(&self, path: &Path, size: u64) -> Box<dyn Bar> {
        const BAR_THRESHOLD: u64 = 32 << 20;
        if size < BAR_THRESHOLD || !io::stderr().is_terminal() {
            return Box::new(Silent);
        }
        let bar = drawn(size, "{msg} [{bar:40}] {bytes}/{total_bytes} ({eta})");
        bar.0.set_message(format!("loading {}", path.display()));
        Box::new(bar)
    }

    fn files(&self, count: usize) -> Box<dyn Bar> {
        if !io::stderr().is_terminal() {
            return Box::new(Silent);
        }
        let template = "reading [{bar:40}] {pos}/{len} files ({elapsed})";
        Box::new(drawn(count as u64, template))
    }

    fn warning(&self, text: &str) {
        eprintln!("warning: {}", render::text::printable(text));
    }
}

/// A bar drawn on stderr.
struct Drawn(ProgressBar);

/// A bar of `length` drawn with `template`, ticking.
fn drawn(length: u64, template: &str) -> Drawn {
    let bar = ProgressBar::new(length);
    let style = ProgressStyle::with_template(template).expect("valid template");
    bar.set_style(style.progress_chars("=> "));
    bar.enable_steady_tick(Duration::from_millis(200));
    Drawn(bar)
}

impl Bar for Drawn {
    fn set_position(&self, position: u64) {
        self.0.set_position(position);
    }
    fn inc(&self) {
        self.0.inc(1);
    }
    fn finish(&self) {
        self.0.finish_and_clear();
    }
}

/// The options commands that read one trace read it with.
fn read_options(quiet: bool, load: &LoadArgs) -> ReadOptions<'static> {
    ReadOptions {
        quiet,
        limits: load.limits(),
        jobs: driver::jobs::Jobs::new(None),
        ranks: false,
        rank_regex: None,
        progress: &BARS,
    }
}

/// The options commands that read many inputs, or rank sets, read them
/// with: `--jobs`, `--ranks`, `--rank-regex` besides [`read_options`].
fn many_read_options(
    (quiet, load): (bool, &LoadArgs),
    jobs: &JobsArgs,
    ranks: bool,
    rank: &RankRegexArgs,
) -> Result<ReadOptions<'static>, Failure> {
    Ok(ReadOptions {
        jobs: jobs.jobs(),
        ranks,
        rank_regex: ranks::rank_regex_of(rank, ranks)?,
        ..read_options(quiet, load)
    })
}

/// An environment variable that is set and not empty (GitHub Actions sets
/// some to empty strings outside their events).
fn env_value(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// Parses the command line and runs it.
pub fn run() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            return ExitCode::from(if error.use_stderr() { 2 } else { 0 });
        }
    };
    let outcome = std::panic::catch_unwind(|| dispatch(cli));
    match outcome {
        Ok(Ok(code)) => ExitCode::from(code),
        Ok(Err(failure)) => {
            eprintln!("error: {}", render::text::printable(&failure.message));
            ExitCode::from(failure.code)
        }
        Err(_) => {
            eprintln!(
                "error: internal error (a bug in tracegate); please report it with the command line"
            );
            ExitCode::from(3)
        }
    }
}

fn dispatch(cli: Cli) -> Result<u8, Failure> {
    match cli.command {
        Command::Report(args) => report_command(&args).map(|()| 0),
        Command::Snapshot(args) => snapshot_command(&args).map(|()| 0),
        Command::Check(args) => check::check_command(&args),
        Command::Comment(args) => comment_command(&args),
        Command::Replay(args) => replay_command(&args).map(|()| 0),
        Command::History { command } => history::history_command(&command, terminal_width()),
        Command::Policy {
            command: PolicyCommand::Check { file },
        } => {
            let summary = policy::check_file(&file).map_err(|e| Failure::input(e.to_string()))?;
            emit(None, &summary.to_string()).map(|()| 0)
        }
        Command::Policy {
            command: PolicyCommand::Init { output, force },
        } => match output {
            Some(path) if path.exists() && !force => Err(Failure::input(format!(
                "{}: already exists; pass --force to overwrite it",
                path.display()
            ))),
            target => {
                if let Some(path) = &target {
                    create_parent(path)?;
                }
                emit(target.as_deref(), policy::init_text()).map(|()| 0)
            }
        },
        Command::Hardware {
            command: HardwareCommand::List { hardware_file },
        } => {
            let catalog = analyse::catalog(hardware_file.as_deref())?;
            let table = render::hardware_table::render(&catalog, terminal_width());
            emit(None, &table).map(|()| 0)
        }
    }
}

fn report_command(args: &ReportArgs) -> Result<(), Failure> {
    if args.format == Format::Csv && args.output.is_some() {
        return Err(Failure::input(
            "--format csv writes several files, not one: give --out-dir DIR instead of -o/--output",
        ));
    }
    if args.format == Format::Csv && args.out_dir.is_none() {
        return Err(Failure::input(
            "--format csv writes several files: give --out-dir DIR",
        ));
    }
    if ranks::is_rank_set(args) {
        return ranks::report(args);
    }
    let options = AnalysisOptions {
        comm: args.comm.kernels()?,
        ..args.hardware.options()?
    };
    let read = read_options(args.quiet, &args.load);
    let profile = analyse::report(&args.trace, args.capture.as_deref(), &options, &read)?;
    match args.format {
        Format::Csv => {
            let dir = args.out_dir.as_deref().expect("checked above");
            files::write_files(dir, render::csv::render_all(&profile))?;
        }
        Format::Json => emit(args.output.as_deref(), &render::json::render(&profile))?,
        Format::Markdown => emit(
            args.output.as_deref(),
            &render::markdown::render(&profile, args.top),
        )?,
        Format::Terminal => {
            let style = render::terminal::Style {
                color: color_enabled(args.color, args.output.is_none()),
                width: terminal_width(),
            };
            emit(
                args.output.as_deref(),
                &render::terminal::render(&profile, args.top, style),
            )?;
        }
    }
    Ok(())
}

/// Whether `choice` colours text: `auto` does for text to stdout
/// (`to_stdout`) on a terminal unless `NO_COLOR` is set.
fn color_enabled(choice: ColorChoice, to_stdout: bool) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            to_stdout
                && io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    }
}

fn snapshot_command(args: &SnapshotArgs) -> Result<(), Failure> {
    let options = AnalysisOptions {
        comm: args.comm.kernels()?,
        ..args.hardware.options()?
    };
    let read = many_read_options((args.quiet, &args.load), &args.jobs, args.ranks, &args.rank)?;
    let snapshot = analyse::snapshot(&args.trace, args.capture.as_deref(), &options, &read)?;
    snapshot
        .write_path(&args.output)
        .map_err(cannot("write", &args.output))
}

fn comment_command(args: &CommentArgs) -> Result<u8, Failure> {
    let verdict = driver::check::read_report(&args.report)?;
    let mut comment = render::gate::render_comment_linked(
        &verdict,
        &args.comment_key,
        args.template_dir.as_deref(),
        args.artifact_url.as_deref(),
    )
    .map_err(|e| Failure::input(e.to_string()))?;
    if let Some(url) = args.artifact_url.as_deref().filter(|u| !u.is_empty()) {
        comment =
            github::with_artifact_link(&comment, url).map_err(|e| Failure::input(e.to_string()))?;
    }
    publish(&args.publish, &args.comment_key, &verdict, &comment)
}

/// Publishes `comment` for `verdict`; the exit code is the verdict's, or 2
/// when the comment could not be written and `--require-comment` was given.
fn publish(args: &PublishArgs, key: &str, verdict: &Verdict, comment: &str) -> Result<u8, Failure> {
    let options = github::Options {
        token_env: args.token_env.clone(),
        pr: args.pr,
        head_sha: args.head_sha.clone(),
        key: key.to_string(),
        mode: match args.comment_mode {
            CommentMode::Update => github::CommentMode::Update,
            CommentMode::Recreate => github::CommentMode::Recreate,
            CommentMode::Off => github::CommentMode::Off,
        },
        on: match args.comment_on {
            CommentOn::Always => github::CommentOn::Always,
            CommentOn::Findings => github::CommentOn::Findings,
            CommentOn::Fail => github::CommentOn::Fail,
        },
        author: args.comment_author.clone(),
        retry: github::Retry {
            deadline: Duration::from_secs(args.comment_timeout),
            ..github::Retry::default()
        },
    };
    let env = |name: &str| std::env::var(name).ok();
    match github::publish_blocking(&env, &options, verdict, comment) {
        Ok(report) => {
            for note in &report.notes {
                eprintln!("note: {note}");
            }
            eprintln!("tracegate: {}", report.outcome);
        }
        Err(error) if args.require_comment => {
            return Err(Failure::input(format!("could not comment: {error}")));
        }
        Err(error) => eprintln!("warning: could not comment: {error}"),
    }
    Ok(verdict.outcome.exit_code())
}

/// `tracegate replay`: packages the op rows of one trace named like --op
/// (most GPU time first), or, for an op that launched no GPU work itself,
/// its calls; prints the paths written.
fn replay_command(args: &ReplayArgs) -> Result<(), Failure> {
    let read = read_options(args.quiet, &args.load);
    let op = (args.op.as_str(), args.dims.as_deref());
    let replayed = analyse::replay(&args.trace, op, args.top, &read)?;
    create_dir(&args.out)?;
    let mut written = String::new();
    for package in &replayed.packages {
        let path = files::write_file(&args.out, &package.path, &package.bytes)?;
        written.push_str(&format!("{}\n", path.display()));
    }
    if written.is_empty() {
        return Err(Failure::input(replayed.errors.join("; ")));
    }
    for error in replayed.errors {
        eprintln!("warning: {}", render::text::printable(&error));
    }
    emit(None, &written)
}

/// The width terminal views are drawn to: `$COLUMNS` when set (a user's or
/// a test's choice), else the width of the terminal stdout is, else that of
/// the terminal stderr is (stdout piped into `less` or `tee`), else 120.
fn terminal_width() -> u16 {
    let columns = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse().ok())
        .filter(|&width: &u16| width > 0);
    columns
        .or_else(|| terminal_size::terminal_size_of(io::stdout()).map(|(width, _)| width.0))
        .or_else(|| terminal_size::terminal_size_of(io::stderr()).map(|(width, _)| width.0))
        .unwrap_or(120)
}
