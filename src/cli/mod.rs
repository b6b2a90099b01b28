//! Command-line surface: clap definitions, dispatch, output files, exit codes.
//!
//! Exit codes: 0 ok (a passed gate, warnings allowed), 1 the gate failed (a
//! fail-severity finding), 2 bad usage or unreadable input, 3 internal error
//! (a bug: please report it).

mod check;

use std::fs;
use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};

use tracegate::analysis::analyse::{self, AnalysisOptions};
use tracegate::analysis::hardware::{self, Catalog};
use tracegate::analysis::profile::Profile;
use tracegate::gate::policy::{self, Pattern, Policy};
use tracegate::gate::snapshot;
use tracegate::gate::verdict::{VERDICT_SCHEMA_VERSION, Verdict};
use tracegate::publish::github;
use tracegate::publish::replay::{self, PackageContext};
use tracegate::render;
use tracegate::trace::link;
use tracegate::trace::{self, Trace};

/// Stops GPU performance regressions before they merge: reads PyTorch profiler
/// traces (Kineto JSON, .json or .json.gz, CUDA and ROCm) and says where GPU time goes.
#[derive(Debug, Parser)]
#[command(name = "tracegate", version, about, max_term_width = 100)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Analyse one trace: GPU timeline, op categories, top ops and kernels, anomalies.
    Report(ReportArgs),
    /// Write the compact, versioned profile of a trace to store as a baseline.
    Snapshot(SnapshotArgs),
    /// The gate: compare a candidate with its baseline under a policy (exit 1 on a failing finding).
    Check(CheckArgs),
    /// Post a report written earlier by `check --out-dir` as the pull-request comment.
    Comment(CommentArgs),
    /// Package op calls of a trace as self-contained reproducers (replay_ir.json, replay.py, README).
    Replay(ReplayArgs),
    /// Validate a policy file, or write the commented default one.
    Policy {
        #[command(subcommand)]
        command: PolicyCommand,
    },
    /// The hardware catalog used for roofline efficiency.
    Hardware {
        #[command(subcommand)]
        command: HardwareCommand,
    },
}

#[derive(Debug, clap::Args)]
struct ReplayArgs {
    /// The trace: Kineto JSON, plain or gzip-compressed.
    trace: PathBuf,
    /// The op: an exact name (aten::mm), a glob (aten::*mm) or re:REGEX.
    #[arg(long, value_name = "NAME")]
    op: String,
    /// Only calls whose Input Dims match this shape pattern, e.g. "((2048, 4096), *)" or "[[2048,*],*]".
    #[arg(long, value_name = "SHAPE")]
    dims: Option<String>,
    /// Directory for the packages (created if missing).
    #[arg(long, value_name = "DIR", default_value = ".")]
    out: PathBuf,
    /// How many argument sets to package, most GPU time first.
    #[arg(long, default_value_t = 1, value_name = "N")]
    top: usize,
    /// No progress bar, even on a terminal.
    #[arg(short, long)]
    quiet: bool,
}

#[derive(Debug, Subcommand)]
enum PolicyCommand {
    /// Check a policy file: exit 0 and a summary when valid, exit 2 with FILE:LINE:COLUMN when not.
    Check {
        /// The policy file (YAML).
        file: PathBuf,
    },
    /// Write the commented default policy (to stdout, or to FILE).
    Init {
        /// Where to write it; refuses to overwrite an existing file without --force.
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
        /// Overwrite FILE if it exists.
        #[arg(long)]
        force: bool,
    },
}

#[derive(Debug, clap::Args)]
struct SnapshotArgs {
    /// The trace: Kineto JSON, plain or gzip-compressed.
    trace: PathBuf,

    /// Where to write the snapshot (gzip JSON, e.g. baseline.json.gz).
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,

    /// The trace recorded while the CUDA/HIP graphs were captured: replayed
    /// kernels are attributed to the ops that launched them there.
    #[arg(long, value_name = "TRACE")]
    capture: Option<PathBuf>,

    /// No progress bar, even on a terminal.
    #[arg(short, long)]
    quiet: bool,

    #[command(flatten)]
    hardware: HardwareArgs,
}

#[derive(Debug, clap::Args)]
struct CheckArgs {
    /// Baseline: a trace or snapshot, or a directory of them (one per workload,
    /// paired with the candidate's by file name). Repeat for a window of
    /// earlier runs: run-to-run noise is then measured from them.
    #[arg(long, required = true, value_name = "PATH")]
    baseline: Vec<PathBuf>,

    /// Candidate: a trace or snapshot, or a directory of them.
    #[arg(long, value_name = "PATH")]
    candidate: PathBuf,

    /// The capture trace of the baseline trace(s) given as files (in a
    /// directory, NAME.capture.json.gz beside workload NAME is used).
    #[arg(long, value_name = "TRACE")]
    baseline_capture: Option<PathBuf>,

    /// The capture trace of the candidate trace given as a file.
    #[arg(long, value_name = "TRACE")]
    candidate_capture: Option<PathBuf>,

    /// The policy (YAML); default: the built-in policies/default.yaml.
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,

    /// Write report.json, comment.md and summary.md here.
    #[arg(long, value_name = "DIR")]
    out_dir: Option<PathBuf>,

    /// A directory whose comment.md.j2 / summary.md.j2 replace the built-in templates.
    #[arg(long, value_name = "DIR")]
    template_dir: Option<PathBuf>,

    /// Key of the hidden comment marker, so a matrix of jobs keeps one comment each.
    #[arg(long, default_value = "default", value_name = "KEY")]
    comment_key: String,

    /// How many findings the terminal table lists.
    #[arg(long, default_value_t = 15, value_name = "N")]
    top: usize,

    /// Colour the terminal output.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    color: ColorChoice,

    /// No progress bar, even on a terminal.
    #[arg(short, long)]
    quiet: bool,

    /// Post the comment to the pull request (GitHub Actions: GITHUB_TOKEN,
    /// GITHUB_REPOSITORY, GITHUB_EVENT_PATH, GITHUB_API_URL).
    #[arg(long)]
    github: bool,

    #[command(flatten)]
    publish: PublishArgs,
}

#[derive(Debug, clap::Args)]
struct CommentArgs {
    /// The report.json that `check --out-dir` wrote.
    #[arg(long, value_name = "FILE")]
    report: PathBuf,

    /// A directory whose comment.md.j2 replaces the built-in template.
    #[arg(long, value_name = "DIR")]
    template_dir: Option<PathBuf>,

    /// Key of the hidden comment marker, so a matrix of jobs keeps one comment each.
    #[arg(long, default_value = "default", value_name = "KEY")]
    comment_key: String,

    /// Link this URL (the workflow artifact: replay packages and report.json)
    /// at the end of the comment; empty for none.
    #[arg(long, value_name = "URL")]
    artifact_url: Option<String>,

    #[command(flatten)]
    publish: PublishArgs,
}

/// How the comment is published (`check --github`, `comment`).
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Publishing the comment")]
struct PublishArgs {
    /// The environment variable that holds the token.
    #[arg(long, default_value = "GITHUB_TOKEN", value_name = "NAME")]
    token_env: String,

    /// The pull request to comment on, instead of the event's.
    #[arg(long, value_name = "N")]
    pr: Option<u64>,

    /// The commit the report is for: a --pr whose head is elsewhere gets no
    /// comment (default: the event's workflow_run.head_sha or PR head).
    #[arg(long, value_name = "SHA")]
    head_sha: Option<String>,

    /// Edit our comment in place, post it anew (deleting the old), or write nothing.
    #[arg(long, value_enum, default_value_t = CommentMode::Update)]
    comment_mode: CommentMode,

    /// When a comment is posted; an earlier one is always brought up to date.
    #[arg(long, value_enum, default_value_t = CommentOn::Always)]
    comment_on: CommentOn,

    /// The login the token comments as, for a token that cannot read its own
    /// identity (a GitHub App's `NAME[bot]`); by default asked of GitHub, or
    /// github-actions[bot].
    #[arg(long, value_name = "LOGIN", value_parser = clap::builder::NonEmptyStringValueParser::new())]
    comment_author: Option<String>,

    /// Give up publishing after this many seconds in all (every request,
    /// page, retry and wait; one request gets at most 30 of them).
    #[arg(long, value_name = "SECONDS", default_value_t = github::DEFAULT_DEADLINE.as_secs(),
          value_parser = clap::value_parser!(u64).range(1..))]
    comment_timeout: u64,

    /// Exit 2 when the comment cannot be written (by default a warning: the
    /// exit code is the verdict's).
    #[arg(long)]
    require_comment: bool,
}

/// `--comment-mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum CommentMode {
    /// Edit our earlier comment; create one when there is none.
    Update,
    /// Post a new comment and delete our earlier ones.
    Recreate,
    /// Write nothing to GitHub.
    Off,
}

/// `--comment-on`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum CommentOn {
    /// Every run.
    Always,
    /// When there is a fail or warn finding.
    Findings,
    /// When the gate fails or is inconclusive (exit 1).
    Fail,
}

#[derive(Debug, Subcommand)]
enum HardwareCommand {
    /// List the GPUs the catalog knows, with their peaks and datasheet sources.
    List {
        /// A YAML catalog that adds GPUs or overrides built-in entries
        /// (same format as policies/hardware.yaml).
        #[arg(long, value_name = "FILE")]
        hardware_file: Option<PathBuf>,
    },
}

/// Output formats of `report`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    /// A readable summary for the terminal.
    Terminal,
    /// The versioned JSON document (docs/REPORT.md).
    Json,
    /// A Markdown summary.
    Markdown,
    /// TraceLens-compatible CSV files (needs --out-dir).
    Csv,
}

/// When to colour terminal output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ColorChoice {
    /// Colour when stdout is a terminal and NO_COLOR is unset.
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

#[derive(Debug, clap::Args)]
struct ReportArgs {
    /// The trace: Kineto JSON, plain or gzip-compressed (detected from the bytes).
    trace: PathBuf,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Terminal)]
    format: Format,

    /// Directory for the CSV files (required with --format csv; created if missing).
    #[arg(long, value_name = "DIR")]
    out_dir: Option<PathBuf>,

    /// Write the json, markdown or terminal output to this file instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,

    /// How many ops and kernels the terminal and Markdown summaries list.
    #[arg(long, default_value_t = 10, value_name = "N")]
    top: usize,

    /// The trace recorded while the CUDA/HIP graphs were captured: replayed
    /// kernels are attributed to the ops that launched them there.
    #[arg(long, value_name = "TRACE")]
    capture: Option<PathBuf>,

    /// Colour the terminal summary.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    color: ColorChoice,

    /// No progress bar, even on a terminal.
    #[arg(short, long)]
    quiet: bool,

    #[command(flatten)]
    hardware: HardwareArgs,
}

/// Which GPU efficiency is judged against.
#[derive(Debug, clap::Args)]
struct HardwareArgs {
    /// The GPU the trace ran on, overriding detection from deviceProperties: a
    /// catalog name (`tracegate hardware list`) or an inline spec such as
    /// `name=mygpu,hbm=3.35,bf16=990,fp32=67` (`base=H100 SXM,hbm=3.0` edits an entry).
    #[arg(long, value_name = "NAME|SPEC")]
    hardware: Option<String>,

    /// A YAML catalog that adds GPUs or overrides built-in entries
    /// (same format as policies/hardware.yaml).
    #[arg(long, value_name = "FILE")]
    hardware_file: Option<PathBuf>,
}

impl HardwareArgs {
    fn options(&self) -> Result<AnalysisOptions, Failure> {
        let catalog = catalog(self.hardware_file.as_deref())?;
        let hardware = match &self.hardware {
            Some(spec) => Some(
                catalog
                    .resolve(spec)
                    .map_err(|e| Failure::input(format!("--hardware: {e}")))?,
            ),
            None => None,
        };
        Ok(AnalysisOptions { catalog, hardware })
    }
}

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
            eprintln!("error: {}", failure.message);
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
            target => emit(target.as_deref(), policy::init_text()).map(|()| 0),
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
    if args.format == Format::Csv && args.out_dir.is_none() {
        return Err(Failure::input(
            "--format csv writes several files: give --out-dir DIR",
        ));
    }
    let options = args.hardware.options()?;
    let (_, profile) =
        check::profile_of_trace(&args.trace, args.capture.as_deref(), &options, args.quiet)?;
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
    let options = args.hardware.options()?;
    let snapshot =
        check::snapshot_of_trace(&args.trace, args.capture.as_deref(), &options, args.quiet)?;
    snapshot
        .write_path(&args.output)
        .map_err(|e| Failure::input(format!("{}: cannot write: {e}", args.output.display())))
}

fn check_command(args: &CheckArgs) -> Result<u8, Failure> {
    let policy = match &args.policy {
        Some(path) => Policy::load(path).map_err(|e| Failure::input(e.to_string()))?,
        None => Policy::default(),
    };
    let verdict = check::check(
        &args.baseline,
        &args.candidate,
        check::Captures {
            baseline: args.baseline_capture.as_deref(),
            candidate: args.candidate_capture.as_deref(),
        },
        &policy,
        args.quiet,
        args.out_dir.as_deref(),
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
    let mut comment =
        render::gate::render_comment(&verdict, &args.comment_key, args.template_dir.as_deref())
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
    let trace = load_with_progress(&args.trace, args.quiet)?;
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
        eprintln!("warning: {error}");
    }
    emit(None, &written)
}

fn terminal_width() -> u16 {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(120)
}

fn write_csvs(dir: &Path, profile: &Profile) -> Result<(), Failure> {
    fs::create_dir_all(dir)
        .map_err(|e| Failure::input(format!("{}: cannot create directory: {e}", dir.display())))?;
    for (name, contents) in render::csv::render_all(profile) {
        let path = dir.join(name);
        fs::write(&path, contents)
            .map_err(|e| Failure::input(format!("{}: cannot write: {e}", path.display())))?;
    }
    Ok(())
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

/// Loads a trace, with a progress bar on stderr for large files on a terminal.
fn load_with_progress(path: &Path, quiet: bool) -> Result<Trace, Failure> {
    const BAR_THRESHOLD: u64 = 32 << 20;
    let size = fs::metadata(path)
        .map_err(|e| Failure::input(format!("{}: cannot read: {e}", path.display())))?
        .len();
    if quiet || size < BAR_THRESHOLD || !io::stderr().is_terminal() {
        return Ok(trace::load_file(path, &mut |_| {})?);
    }
    let bar = ProgressBar::new(size);
    bar.set_style(
        ProgressStyle::with_template("{msg} [{bar:40}] {bytes}/{total_bytes} ({eta})")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_message(format!("loading {}", path.display()));
    bar.enable_steady_tick(Duration::from_millis(200));
    let result = trace::load_file(path, &mut |read| bar.set_position(read));
    bar.finish_and_clear();
    Ok(result?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn verify_cli() {
        Cli::command().debug_assert();
    }
}
