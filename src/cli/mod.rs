//! Command-line surface: dispatch, output files, exit codes (the clap
//! definitions are in `args.rs`).
//!
//! Exit codes: 0 ok (a passed gate, warnings allowed), 1 the gate failed (a
//! fail-severity finding), 2 bad usage or unreadable input, 3 internal error
//! (a bug: please report it).

mod args;
mod check;
mod history;
mod history_gate;
mod history_report;
mod history_store;
mod jobs;
mod rank_check;
mod ranks;
mod read;
mod replay_files;

use args::*;

use std::fs;
use std::io::{self, IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};

use tracegate::analysis::analyse::{self, AnalysisOptions};
use tracegate::analysis::hardware::{self, Catalog};
use tracegate::analysis::profile::Profile;
use tracegate::echo;
use tracegate::gate::judge::JudgeOptions;
use tracegate::gate::policy::{self, Accept, Date, Pattern, Policy};
use tracegate::gate::snapshot;
use tracegate::gate::verdict::{VERDICT_SCHEMA_VERSION, Verdict};
use tracegate::publish::github;
use tracegate::publish::replay::{self, PackageContext};
use tracegate::render;
use tracegate::trace::link;
use tracegate::trace::{self, LoadLimits, Trace};

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

impl From<tracegate::trace::error::LoadError> for Failure {
    fn from(error: tracegate::trace::error::LoadError) -> Failure {
        Failure::input(error.to_string())
    }
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
        Command::Check(args) => check_command(&args),
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
            let catalog = catalog(hardware_file.as_deref())?;
            emit(
                None,
                &render::hardware_table::render(&catalog, terminal_width()),
            )
            .map(|()| 0)
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
    let (_, profile) = read::profile_of_trace(
        &args.trace,
        args.capture.as_deref(),
        &options,
        args.quiet,
        &args.load.limits(),
    )
    .map_err(|failure| snapshot_or(&args.trace, "report", failure))?;
    match args.format {
        Format::Csv => {
            let dir = args.out_dir.as_deref().expect("checked above");
            write_csvs(dir, &profile)?;
        }
        Format::Json => emit(args.output.as_deref(), &render::json::render(&profile))?,
        Format::Markdown => emit(
            args.output.as_deref(),
            &render::markdown::render(&profile, args.top),
        )?,
        Format::Terminal => {
            let color = match args.color {
                ColorChoice::Always => true,
                ColorChoice::Never => false,
                ColorChoice::Auto => {
                    args.output.is_none()
                        && io::stdout().is_terminal()
                        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                }
            };
            let style = render::terminal::Style {
                color,
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

/// The built-in catalog, merged with the user's file when given.
fn catalog(user_file: Option<&Path>) -> Result<Catalog, Failure> {
    let builtin = hardware::builtin_catalog();
    match user_file {
        Some(path) => {
            let user = Catalog::load_file(path).map_err(|e| Failure::input(e.to_string()))?;
            Ok(builtin.merged_with(user))
        }
        None => Ok(builtin),
    }
}

fn color_enabled(choice: ColorChoice) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    }
}

fn snapshot_command(args: &SnapshotArgs) -> Result<(), Failure> {
    let options = AnalysisOptions {
        comm: args.comm.kernels()?,
        ..args.hardware.options()?
    };
    let rank_regex = ranks::rank_regex_of(&args.rank, args.ranks)?;
    let snapshot = if args.ranks {
        let read = read::ReadOptions {
            quiet: args.quiet,
            limits: args.load.limits(),
            jobs: args.jobs.jobs(),
            ranks: true,
            rank_regex,
        };
        let set = rank_check::rank_set(&args.trace, args.capture.as_deref(), &options, &read)?;
        rank_check::writable(&set, &args.trace)?;
        set
    } else {
        read::snapshot_of_trace(
            &args.trace,
            args.capture.as_deref(),
            &options,
            args.quiet,
            &args.load.limits(),
        )
        .map_err(|failure| snapshot_or(&args.trace, "snapshot", failure))?
    };
    snapshot
        .write_path(&args.output)
        .map_err(|e| Failure::input(format!("{}: cannot write: {e}", args.output.display())))
}

fn check_command(args: &CheckArgs) -> Result<u8, Failure> {
    let mut policy = Policy::for_check(args.policy.as_deref(), args.cross_platform)
        .map_err(|e| Failure::input(e.to_string()))?;
    let reason = args.accept_reason.as_deref().unwrap_or("");
    let accept = args
        .accept
        .iter()
        .map(|text| {
            Accept::from_arg(text, reason)
                .map_err(|e| Failure::input(format!("--accept {}: {}", echo::message(text), e)))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let options = JudgeOptions {
        today: Some(today()),
        accept,
        findings: Vec::new(),
    };
    policy.communication.kernels = policy.communication.kernels.merged(&args.comm.kernels()?);
    let commit = args
        .commit
        .clone()
        .or_else(|| history_store::env_value("GITHUB_SHA"));
    let baseline = match &args.history {
        Some(dir) if args.baseline.is_empty() => check::Baseline::History {
            dir,
            commit: commit.as_deref(),
        },
        Some(dir) => check::Baseline::PathsLearning {
            paths: &args.baseline,
            dir,
            commit: commit.as_deref(),
        },
        None => check::Baseline::Paths(&args.baseline),
    };
    let verdict = check::check(
        &baseline,
        &args.candidate,
        check::Captures {
            baseline: args.baseline_capture.as_deref(),
            candidate: args.candidate_capture.as_deref(),
        },
        &policy,
        &read::ReadOptions {
            quiet: args.quiet,
            limits: args.load.limits(),
            jobs: args.jobs.jobs(),
            ranks: args.ranks,
            rank_regex: ranks::rank_regex_of(&args.rank, args.ranks)?,
        },
        args.out_dir.as_deref(),
        &options,
    )?;
    let annotations = check::write_outputs(
        &verdict,
        &check::OutputOptions {
            out_dir: args.out_dir.as_deref(),
            template_dir: args.template_dir.as_deref(),
            comment_key: &args.comment_key,
        },
    )?;
    let style = render::terminal::Style {
        color: color_enabled(args.color),
        width: terminal_width(),
    };
    let mut text = render::gate::render_terminal(&verdict, args.top, style);
    for line in annotations {
        text.push_str(&line);
        text.push('\n');
    }
    emit(None, &text)?;
    if args.github {
        let comment =
            render::gate::render_comment(&verdict, &args.comment_key, args.template_dir.as_deref())
                .map_err(|e| Failure::input(e.to_string()))?;
        return publish(&args.publish, &args.comment_key, &verdict, &comment);
    }
    Ok(verdict.outcome.exit_code())
}

/// Today's date (UTC), from the clock: `accept` entries expire by it.
fn today() -> Date {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    Date::from_unix_days(i64::try_from(seconds / 86_400).unwrap_or(i64::MAX))
}

fn comment_command(args: &CommentArgs) -> Result<u8, Failure> {
    let path = &args.report;
    let text = fs::read_to_string(path)
        .map_err(|e| Failure::input(format!("{}: cannot read: {e}", path.display())))?;
    let verdict: Verdict = serde_json::from_str(&text).map_err(|e| {
        Failure::input(format!(
            "{}: not a report.json from `tracegate check`: {e}",
            path.display()
        ))
    })?;
    if verdict.schema_version != VERDICT_SCHEMA_VERSION {
        return Err(Failure::input(format!(
            "{}: report schema version {}, this tracegate reads {VERDICT_SCHEMA_VERSION}",
            path.display(),
            verdict.schema_version
        )));
    }
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
    let name = Pattern::name(&args.op).map_err(|e| Failure::input(format!("--op: {e}")))?;
    let dims = args
        .dims
        .as_deref()
        .map(Pattern::shape)
        .transpose()
        .map_err(|e| Failure::input(format!("--dims: {e}")))?;
    let trace = load_trace(&args.trace, args.quiet, &args.load.limits(), "replay")?;
    let tree = link::link(&trace);
    let profile = analyse::analyse(&trace, &tree);
    let rows = replay::rows_matching(&profile.unique_args, &name, dims.as_ref());
    let built: Vec<_> = if rows.is_empty() {
        replay::events_matching(&trace, &name, dims.as_ref())
            .into_iter()
            .take(args.top)
            .map(|index| replay::ir_for_event(&trace, index))
            .collect()
    } else {
        rows.into_iter()
            .take(args.top)
            .map(|row| replay::ir_for_row(&trace, row))
            .collect()
    };
    if built.is_empty() {
        return Err(Failure::input(format!(
            "{}: no call of `{}`{} with recorded shapes",
            args.trace.display(),
            args.op,
            args.dims
                .as_deref()
                .map_or(String::new(), |d| format!(" with dims `{d}`"))
        )));
    }
    fs::create_dir_all(&args.out).map_err(|e| {
        Failure::input(format!(
            "{}: cannot create directory: {e}",
            args.out.display()
        ))
    })?;
    let workload = snapshot::workload_name(&args.trace);
    let (mut written, mut errors) = (String::new(), Vec::new());
    for ir in built {
        match ir {
            Ok(ir) => {
                let (file_name, bytes) =
                    replay::write_package(&ir, &PackageContext::on_demand(&workload));
                let path = args.out.join(file_name);
                fs::write(&path, bytes).map_err(|e| {
                    Failure::input(format!("{}: cannot write: {e}", path.display()))
                })?;
                written.push_str(&format!("{}\n", path.display()));
            }
            Err(error) => errors.push(error.to_string()),
        }
    }
    if written.is_empty() {
        return Err(Failure::input(errors.join("; ")));
    }
    for error in errors {
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

fn write_csvs(dir: &Path, profile: &Profile) -> Result<(), Failure> {
    ranks::write_files(dir, render::csv::render_all(profile))
}

/// Creates the directories `path` is to be written in.
fn create_parent(path: &Path) -> Result<(), Failure> {
    match path.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(dir) => fs::create_dir_all(dir).map_err(|e| {
            Failure::input(format!("{}: cannot create directory: {e}", dir.display()))
        }),
        None => Ok(()),
    }
}

fn emit(output: Option<&Path>, text: &str) -> Result<(), Failure> {
    match output {
        Some(path) => fs::write(path, text)
            .map_err(|e| Failure::input(format!("{}: cannot write: {e}", path.display()))),
        None => {
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
    }
}

/// Loads the trace `command` reads ([`load_with_progress`]); a snapshot in
/// its place is named as one ([`snapshot_or`]).
fn load_trace(
    path: &Path,
    quiet: bool,
    limits: &LoadLimits,
    command: &str,
) -> Result<Trace, Failure> {
    load_with_progress(path, quiet, limits).map_err(|failure| snapshot_or(path, command, failure))
}

/// `failure`, the reason the trace at `path` did not load; or, when `path`
/// holds a tracegate snapshot, the error that says so and that `command`
/// reads traces. A snapshot is recognised from its first kilobyte, or,
/// re-saved with its keys reordered, by reading it as one. Only a regular
/// file is looked into (a FIFO would block).
fn snapshot_or(path: &Path, command: &str, failure: Failure) -> Failure {
    let snapshot = path.is_file()
        && (snapshot::is_snapshot(path).unwrap_or(false)
            || snapshot::Snapshot::load_path(path).is_ok());
    if snapshot {
        Failure::input(format!(
            "{}: this is a tracegate snapshot; `{command}` reads traces (use `check` to compare snapshots)",
            path.display()
        ))
    } else {
        failure
    }
}

/// Loads a trace, with a progress bar on stderr for large files on a terminal.
fn load_with_progress(path: &Path, quiet: bool, limits: &LoadLimits) -> Result<Trace, Failure> {
    const BAR_THRESHOLD: u64 = 32 << 20;
    let size = fs::metadata(path)
        .map_err(|e| Failure::input(format!("{}: cannot read: {e}", path.display())))?
        .len();
    if quiet || size < BAR_THRESHOLD || !io::stderr().is_terminal() {
        return Ok(trace::load_file_with(path, limits, &mut |_| {})?);
    }
    let bar = ProgressBar::new(size);
    bar.set_style(
        ProgressStyle::with_template("{msg} [{bar:40}] {bytes}/{total_bytes} ({eta})")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_message(format!("loading {}", path.display()));
    bar.enable_steady_tick(Duration::from_millis(200));
    let result = trace::load_file_with(path, limits, &mut |read| bar.set_position(read));
    bar.finish_and_clear();
    Ok(result?)
}
