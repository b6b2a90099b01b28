//! The command line as clap reads it: the commands, their flags and the
//! help text (every doc comment here is `--help` output). Turning flags into
//! the library's options happens beside each flag group.

use std::num::NonZeroUsize;
use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

use tracegate::analysis::analyse::AnalysisOptions;
use tracegate::analysis::comm::CommKernels;
use tracegate::driver::{self, analyse};
use tracegate::echo;
use tracegate::publish::github;
use tracegate::trace::LoadLimits;

use super::Failure;
use tracegate::driver::jobs::Jobs;

/// Stops GPU performance regressions before they merge: reads PyTorch profiler
/// traces (Kineto JSON, .json or .json.gz, CUDA and ROCm) and says where GPU time goes.
#[derive(Debug, Parser)]
#[command(name = "tracegate", version, about, max_term_width = 100)]
pub(super) struct Cli {
    #[command(subcommand)]
    pub(super) command: Command,
}

#[derive(Debug, Subcommand)]
pub(super) enum Command {
    /// Analyse one trace: GPU timeline, op categories, top ops and kernels, anomalies.
    Report(ReportArgs),
    /// Write the compact, versioned profile of a trace to store as a baseline.
    Snapshot(SnapshotArgs),
    /// The gate: compare a candidate with its baseline under a policy (exit 1 on a failing finding).
    Check(Box<CheckArgs>),
    /// Post a report written earlier by `check --out-dir` as the pull-request comment.
    Comment(CommentArgs),
    /// Package op calls of a trace as self-contained reproducers (replay_ir.json, replay.py, README).
    Replay(ReplayArgs),
    /// The per-commit record of every workload: record runs, list and show them, prune.
    History {
        #[command(subcommand)]
        command: HistoryCommand,
    },
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

#[derive(Debug, Subcommand)]
pub(super) enum HistoryCommand {
    /// Record traces or snapshots as runs of one commit (commit, branch, PR
    /// and run URL default to GitHub Actions' environment).
    Add(HistoryAddArgs),
    /// List the recorded runs, oldest first.
    List(HistoryListArgs),
    /// One workload's series (or one op's), oldest first, with the change from the run before.
    Show(HistoryShowArgs),
    /// Keep the newest N runs of each workload and delete the others.
    Prune(HistoryPruneArgs),
    /// Check the history for damage (torn or damaged index lines, damaged
    /// sidecars, symbolic links, orphan and temporary files): exit 1 when
    /// something is found; --repair rewrites the index and removes debris.
    Fsck(HistoryFsckArgs),
    /// Write the dashboard: a static, self-contained HTML site (series with
    /// noise bands, change points, environment changes, top ops, platform pairs).
    Report(HistoryReportArgs),
}

#[derive(Debug, clap::Args)]
pub(super) struct HistoryAddArgs {
    /// The history directory (created if missing).
    #[arg(long, value_name = "DIR")]
    pub(super) dir: PathBuf,
    /// The commit the runs measured (default: $GITHUB_SHA).
    #[arg(long, value_name = "SHA")]
    pub(super) commit: Option<String>,
    /// The branch of the commit (default: $GITHUB_HEAD_REF in a pull
    /// request, else $GITHUB_REF_NAME).
    #[arg(long, value_name = "BRANCH")]
    pub(super) branch: Option<String>,
    /// The pull request of the runs (default: N of $GITHUB_REF `refs/pull/N/merge`).
    #[arg(long, value_name = "N")]
    pub(super) pr: Option<u64>,
    /// The CI run's URL (default:
    /// $GITHUB_SERVER_URL/$GITHUB_REPOSITORY/actions/runs/$GITHUB_RUN_ID).
    #[arg(long, value_name = "URL")]
    pub(super) run_url: Option<String>,
    /// When the runs were recorded, RFC 3339 (default: now, UTC).
    #[arg(long, value_name = "TIME")]
    pub(super) time: Option<String>,
    /// The traces or snapshots, one run of one workload each (the workload
    /// is the file name without `.json`, `.gz`, `.snapshot`, `.pt.trace`,
    /// as `check` names it).
    #[arg(required = true, value_name = "TRACE_OR_SNAPSHOT")]
    pub(super) inputs: Vec<PathBuf>,
    /// Each input is one distributed job's ranks: a directory of per-rank
    /// traces or snapshots (merged into one run named after the directory),
    /// a glob of them, or a rank set's snapshot, as `check --ranks` reads
    /// them.
    #[arg(long)]
    pub(super) ranks: bool,

    #[command(flatten)]
    pub(super) rank: RankRegexArgs,
    /// No progress bar, even on a terminal.
    #[arg(short, long)]
    pub(super) quiet: bool,

    #[command(flatten)]
    pub(super) jobs: JobsArgs,

    #[command(flatten)]
    pub(super) hardware: HardwareArgs,

    #[command(flatten)]
    pub(super) load: LoadArgs,
}

#[derive(Debug, clap::Args)]
pub(super) struct HistoryListArgs {
    /// The history directory.
    #[arg(long, value_name = "DIR")]
    pub(super) dir: PathBuf,
    /// Only this workload's runs.
    #[arg(long, value_name = "NAME")]
    pub(super) workload: Option<String>,
    /// Only the runs of this branch.
    #[arg(long, value_name = "BRANCH")]
    pub(super) branch: Option<String>,
}

#[derive(Debug, clap::Args)]
pub(super) struct HistoryShowArgs {
    /// The history directory.
    #[arg(long, value_name = "DIR")]
    pub(super) dir: PathBuf,
    /// The workload.
    pub(super) workload: String,
    /// This op's GPU time per step instead of the workload's computation
    /// time per step (an exact op name, as in `report`).
    #[arg(long, value_name = "NAME")]
    pub(super) op: Option<String>,
    /// Only the runs of this branch.
    #[arg(long, value_name = "BRANCH")]
    pub(super) branch: Option<String>,
}

#[derive(Debug, clap::Args)]
pub(super) struct HistoryReportArgs {
    /// The history directory.
    #[arg(long, value_name = "DIR")]
    pub(super) dir: PathBuf,
    /// Where to write the site (created if missing; open its index.html).
    #[arg(short, long, value_name = "DIR")]
    pub(super) out: PathBuf,
    /// The branch whose runs are charted.
    #[arg(long, value_name = "BRANCH", default_value = "main")]
    pub(super) branch: String,
    /// The repository's URL, for links to commits (default:
    /// $GITHUB_SERVER_URL/$GITHUB_REPOSITORY).
    #[arg(long, value_name = "URL")]
    pub(super) repository: Option<String>,
}

#[derive(Debug, clap::Args)]
pub(super) struct HistoryPruneArgs {
    /// The history directory.
    #[arg(long, value_name = "DIR")]
    pub(super) dir: PathBuf,
    /// How many of each workload's newest runs to keep.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub(super) keep: u64,
}

#[derive(Debug, clap::Args)]
pub(super) struct HistoryFsckArgs {
    /// The history directory.
    #[arg(long, value_name = "DIR")]
    pub(super) dir: PathBuf,
    /// Repair: rewrite the index from every run found and remove temporary
    /// files, orphan snapshots and sidecars whose snapshot is gone.
    #[arg(long)]
    pub(super) repair: bool,
}

#[derive(Debug, clap::Args)]
pub(super) struct ReplayArgs {
    /// The trace: Kineto JSON, plain or gzip-compressed (of a rank set, one
    /// rank's file: the calls it replays are that rank's).
    pub(super) trace: PathBuf,

    /// The op: an exact name (aten::mm), a glob (aten::*mm) or re:REGEX.
    #[arg(long, value_name = "NAME")]
    pub(super) op: String,
    /// Only calls whose Input Dims match this shape pattern, e.g. "((2048, 4096), *)" or "[[2048,*],*]".
    #[arg(long, value_name = "SHAPE")]
    pub(super) dims: Option<String>,
    /// Directory for the packages (created if missing).
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub(super) out: PathBuf,
    /// How many argument sets to package, most GPU time first.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub(super) top: usize,
    /// No progress bar, even on a terminal.
    #[arg(short, long)]
    pub(super) quiet: bool,

    #[command(flatten)]
    pub(super) load: LoadArgs,
}

#[derive(Debug, Subcommand)]
pub(super) enum PolicyCommand {
    /// Check a policy file: exit 0 and a summary when valid, exit 2 with FILE:LINE:COLUMN when not.
    Check {
        /// The policy file (YAML).
        file: PathBuf,
    },
    /// Write the commented default policy (to stdout, or to FILE).
    Init {
        /// Where to write it (missing directories are created); refuses to
        /// overwrite an existing file without --force.
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
        /// Overwrite FILE if it exists.
        #[arg(long)]
        force: bool,
    },
}

#[derive(Debug, clap::Args)]
pub(super) struct SnapshotArgs {
    /// The trace: Kineto JSON, plain or gzip-compressed. With --ranks: a
    /// directory of one job's per-rank traces (or per-rank snapshots).
    pub(super) trace: PathBuf,

    /// TRACE is a directory of one distributed job's per-rank traces or
    /// snapshots (rank from distributedInfo.rank or `rank<N>` in the file
    /// name): write one snapshot of the whole set, the lowest rank's op rows
    /// with every rank's communication kernels, for `check` to match the
    /// collectives across ranks. A snapshot of one rank's trace keeps that
    /// rank's communication anyway: per-rank snapshots made on each node
    /// merge in `check --ranks`. A glob (quoted) names the files instead of
    /// a directory.
    #[arg(long)]
    pub(super) ranks: bool,

    #[command(flatten)]
    pub(super) rank: RankRegexArgs,

    /// Where to write the snapshot (gzip JSON), e.g. `baseline/NAME.snapshot.json.gz`
    /// for the trace NAME.json.gz: `check` on directories pairs files by workload
    /// name (the file name without `.snapshot`, `.json`, `.gz`), so give the
    /// snapshot the name of the candidate trace it is the baseline of.
    #[arg(short, long, value_name = "FILE")]
    pub(super) output: PathBuf,

    /// The trace recorded while the CUDA/HIP graphs were captured, or a
    /// folder of them (vLLM's capture_traces/, with its
    /// execution_details.json): replayed kernels are attributed to the ops
    /// that launched them there, each step's to the capture of its batch
    /// size and mode.
    #[arg(long, value_name = "TRACE|DIR")]
    pub(super) capture: Option<PathBuf>,

    /// No progress bar, even on a terminal.
    #[arg(short, long)]
    pub(super) quiet: bool,

    #[command(flatten)]
    pub(super) hardware: HardwareArgs,

    #[command(flatten)]
    pub(super) comm: CommArgs,

    #[command(flatten)]
    pub(super) load: LoadArgs,

    #[command(flatten)]
    pub(super) jobs: JobsArgs,
}

#[derive(Debug, clap::Args)]
pub(super) struct CheckArgs {
    /// Baseline: a trace or snapshot, or a directory of them (one per workload,
    /// paired with the candidate's by name: NAME.snapshot.json.gz with
    /// NAME.json.gz). Repeat for a window of
    /// earlier runs: run-to-run noise is then measured from them.
    #[arg(long, required_unless_present = "history", value_name = "PATH")]
    pub(super) baseline: Vec<PathBuf>,

    /// A history directory (`tracegate history add`). Instead of
    /// --baseline: each workload's baseline window is its newest runs on the
    /// same hardware on the policy's `history.branch` (`history.window` of
    /// them), the candidate's commit left out. With --baseline on other
    /// hardware (a cross-platform comparison): each op's expected ratio is
    /// the one learned from the commits the history recorded on both.
    #[arg(long, value_name = "DIR")]
    pub(super) history: Option<PathBuf>,

    /// The candidate's commit, left out of the --history window and of the
    /// learned ratios (default: $GITHUB_SHA).
    #[arg(long, value_name = "SHA", requires = "history")]
    pub(super) commit: Option<String>,

    /// Candidate: a trace or snapshot, or a directory of them.
    #[arg(long, value_name = "PATH")]
    pub(super) candidate: PathBuf,

    /// Each --baseline and the --candidate is ONE distributed job: a
    /// directory of its per-rank traces or per-rank snapshots (made
    /// anywhere: a CI matrix, a Slurm array), or a snapshot of the set
    /// (`snapshot DIR --ranks`). The ranks are merged; collectives are
    /// matched across ranks and judged (time per call, new stragglers,
    /// exposed communication); op rows are the lowest rank's. A glob
    /// (quoted: `'job/*/rank*.json.gz'`) names the files instead of a
    /// directory. Without it a directory is a set of workloads paired by
    /// file name.
    #[arg(long)]
    pub(super) ranks: bool,

    #[command(flatten)]
    pub(super) rank: RankRegexArgs,

    /// The capture trace, or capture folder, of the baseline trace(s)
    /// given as files (in a directory, NAME.capture.json.gz or the folder
    /// NAME.capture/ beside workload NAME is used).
    #[arg(long, value_name = "TRACE|DIR")]
    pub(super) baseline_capture: Option<PathBuf>,

    /// The capture trace, or capture folder, of the candidate trace given
    /// as a file.
    #[arg(long, value_name = "TRACE|DIR")]
    pub(super) candidate_capture: Option<PathBuf>,

    /// The policy (YAML); default: the built-in policies/default.yaml.
    #[arg(long, value_name = "FILE")]
    pub(super) policy: Option<PathBuf>,

    /// Write report.json, comment.md, summary.md and the candidate's snapshot(s) here.
    #[arg(long, value_name = "DIR")]
    pub(super) out_dir: Option<PathBuf>,

    /// The two sides may run on different GPUs: judge each op against its
    /// expected hardware ratio instead of failing with "different GPUs"
    /// (exit 2). Without --policy: the built-in policies/cross-platform.yaml
    /// (the same judgement as passing that file); with --policy: that
    /// policy's `cross_platform` section, every other key as the file says.
    #[arg(long)]
    pub(super) cross_platform: bool,

    /// A directory whose comment.md.j2 / summary.md.j2 replace the built-in templates.
    #[arg(long, value_name = "DIR")]
    pub(super) template_dir: Option<PathBuf>,

    /// Key of the hidden comment marker, so a matrix of jobs keeps one comment each.
    #[arg(long, default_value = "default", value_name = "KEY")]
    pub(super) comment_key: String,

    /// Accept the fail and warn findings of these ops (a name, glob or
    /// re:regex, as a policy's `match: {name: …}`) or, as `rule:PATTERN`, of
    /// these rules (`rule:timeline.*`): shown as accepted, not failing.
    /// Repeatable; the Action passes Tracegate-Accept commit trailers and
    /// PR labels here.
    #[arg(long, value_name = "PATTERN")]
    pub(super) accept: Vec<String>,

    /// Why the `--accept` entries are intended (shown with their findings).
    #[arg(long, value_name = "TEXT", requires = "accept")]
    pub(super) accept_reason: Option<String>,

    /// How many lines (finding groups: an op with its shapes) the terminal table lists.
    #[arg(long, default_value_t = 15, value_name = "N")]
    pub(super) top: usize,

    /// Colour the terminal output.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub(super) color: ColorChoice,

    /// No progress bar, even on a terminal.
    #[arg(short, long)]
    pub(super) quiet: bool,

    #[command(flatten)]
    pub(super) jobs: JobsArgs,

    /// Post the comment to the pull request (GitHub Actions: GITHUB_TOKEN,
    /// GITHUB_REPOSITORY, GITHUB_EVENT_PATH, GITHUB_API_URL).
    #[arg(long)]
    pub(super) github: bool,

    #[command(flatten)]
    pub(super) comm: CommArgs,

    #[command(flatten)]
    pub(super) load: LoadArgs,

    #[command(flatten)]
    pub(super) publish: PublishArgs,
}

#[derive(Debug, clap::Args)]
pub(super) struct CommentArgs {
    /// The report.json that `check --out-dir` wrote.
    #[arg(long, value_name = "FILE")]
    pub(super) report: PathBuf,

    /// A directory whose comment.md.j2 replaces the built-in template.
    #[arg(long, value_name = "DIR")]
    pub(super) template_dir: Option<PathBuf>,

    /// Key of the hidden comment marker, so a matrix of jobs keeps one comment each.
    #[arg(long, default_value = "default", value_name = "KEY")]
    pub(super) comment_key: String,

    /// Link this URL (the workflow artifact: replay packages and report.json)
    /// at the end of the comment; empty for none.
    #[arg(long, value_name = "URL")]
    pub(super) artifact_url: Option<String>,

    #[command(flatten)]
    pub(super) publish: PublishArgs,
}

/// How the comment is published (`check --github`, `comment`).
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Publishing the comment")]
pub(super) struct PublishArgs {
    /// The environment variable that holds the token.
    #[arg(long, default_value = "GITHUB_TOKEN", value_name = "NAME")]
    pub(super) token_env: String,

    /// The pull request to comment on, instead of the event's.
    #[arg(long, value_name = "N")]
    pub(super) pr: Option<u64>,

    /// The commit the report is for: a --pr whose head is elsewhere gets no
    /// comment (default: the event's workflow_run.head_sha or PR head).
    #[arg(long, value_name = "SHA")]
    pub(super) head_sha: Option<String>,

    /// Edit our comment in place, post it anew (deleting the old), or write nothing.
    #[arg(long, value_enum, default_value_t = CommentMode::Update)]
    pub(super) comment_mode: CommentMode,

    /// When a comment is posted; an earlier one is always brought up to date.
    #[arg(long, value_enum, default_value_t = CommentOn::Always)]
    pub(super) comment_on: CommentOn,

    /// The login the token comments as, for a token that cannot read its own
    /// identity (a GitHub App's `NAME[bot]`); by default asked of GitHub, or
    /// github-actions[bot].
    #[arg(long, value_name = "LOGIN", value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub(super) comment_author: Option<String>,

    /// Give up publishing after this many seconds in all (every request,
    /// page, retry and wait; one request gets at most 30 of them).
    #[arg(long, value_name = "SECONDS", default_value_t = github::DEFAULT_DEADLINE.as_secs(),
          value_parser = clap::value_parser!(u64).range(1..))]
    pub(super) comment_timeout: u64,

    /// Exit 2 when the comment cannot be written (by default a warning: the
    /// exit code is the verdict's).
    #[arg(long)]
    pub(super) require_comment: bool,
}

/// `--comment-mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(super) enum CommentMode {
    /// Edit our earlier comment; create one when there is none.
    Update,
    /// Post a new comment and delete our earlier ones.
    Recreate,
    /// Write nothing to GitHub.
    Off,
}

/// `--comment-on`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(super) enum CommentOn {
    /// Every run.
    Always,
    /// When there is a fail or warn finding.
    Findings,
    /// When the gate fails or is inconclusive (exit 1).
    Fail,
}

#[derive(Debug, Subcommand)]
pub(super) enum HardwareCommand {
    /// List the GPUs the catalog knows, with their peaks and datasheet sources.
    List {
        /// A YAML catalog that adds GPUs or overrides built-in entries
        /// (same format as hardware/catalog.yaml).
        #[arg(long, value_name = "FILE")]
        hardware_file: Option<PathBuf>,
    },
}

/// Output formats of `report`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(super) enum Format {
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
pub(super) enum ColorChoice {
    /// Colour when stdout is a terminal and NO_COLOR is unset.
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

#[derive(Debug, clap::Args)]
pub(super) struct ReportArgs {
    /// The trace: Kineto JSON, plain or gzip-compressed (detected from the bytes).
    /// A directory is a rank set: its `*.json` and `*.json.gz` files are the
    /// ranks of one job, and the report matches their collectives. So is a
    /// glob (quoted: `'traces/*/rank*.json.gz'`; `**` crosses directories).
    pub(super) trace: PathBuf,

    #[command(flatten)]
    pub(super) rank: RankRegexArgs,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Terminal)]
    pub(super) format: Format,

    /// Directory for the CSV files (required with --format csv; created if missing).
    #[arg(long, value_name = "DIR")]
    pub(super) out_dir: Option<PathBuf>,

    /// Write the json, markdown or terminal output to this file instead of stdout
    /// (--format csv writes several files: give --out-dir).
    #[arg(short, long, value_name = "FILE")]
    pub(super) output: Option<PathBuf>,

    /// How many ops and kernels the terminal and Markdown summaries list.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub(super) top: usize,

    /// The trace recorded while the CUDA/HIP graphs were captured, or a
    /// folder of them (vLLM's capture_traces/, with its
    /// execution_details.json): replayed kernels are attributed to the ops
    /// that launched them there, each step's to the capture of its batch
    /// size and mode.
    #[arg(long, value_name = "TRACE|DIR")]
    pub(super) capture: Option<PathBuf>,

    /// Colour the terminal summary.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub(super) color: ColorChoice,

    /// No progress bar, even on a terminal.
    #[arg(short, long)]
    pub(super) quiet: bool,

    #[command(flatten)]
    pub(super) hardware: HardwareArgs,

    #[command(flatten)]
    pub(super) comm: CommArgs,

    #[command(flatten)]
    pub(super) load: LoadArgs,
}

/// How a rank set's files get their ranks (`report`, and `--ranks` on
/// `snapshot`, `check` and `history add`).
#[derive(Debug, clap::Args)]
pub(super) struct RankRegexArgs {
    /// For a rank set: a regex with one capture group that gives each
    /// file's rank from its name (`trace_(\d+)\.json`); only the files
    /// whose names match are read. Default: `distributedInfo.rank`, else
    /// the number after `rank` in the file name.
    #[arg(long, value_name = "REGEX")]
    pub(super) rank_regex: Option<String>,
}

/// How many inputs are read at once.
#[derive(Debug, clap::Args)]
pub(super) struct JobsArgs {
    /// Read N inputs at once, each on its own thread, so at most N traces
    /// are in memory at once (default: the number of cores, with no more
    /// JSON read at once than 1.2 times the largest input's, or 512 MiB);
    /// 1 reads them one after another. The results do not depend on N.
    #[arg(short, long, value_name = "N")]
    pub(super) jobs: Option<NonZeroUsize>,
}

impl JobsArgs {
    pub(super) fn jobs(&self) -> Jobs {
        Jobs::new(self.jobs)
    }
}

/// What reading one trace may cost (docs/RELIABILITY.md).
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Input limits")]
pub(super) struct LoadArgs {
    /// Refuse a trace whose one event or top-level metadata value is larger
    /// than this, uncompressed: a number of bytes, or with KiB, MiB or GiB.
    #[arg(long, value_name = "SIZE", default_value = "64MiB", value_parser = driver::parse_size)]
    pub(super) max_event_bytes: u64,

    /// Read a FIFO, device or socket as a trace (refused by default: reading
    /// one may never end).
    #[arg(long)]
    pub(super) allow_special_files: bool,
}

impl LoadArgs {
    pub(super) fn limits(&self) -> LoadLimits {
        LoadLimits {
            max_event_bytes: self.max_event_bytes,
            allow_special_files: self.allow_special_files,
            ..LoadLimits::default()
        }
    }
}

/// Which kernels are collective communication, besides those tracegate knows.
#[derive(Debug, clap::Args)]
pub(super) struct CommArgs {
    /// Count kernels matching PATTERN as communication (repeatable):
    /// case-insensitive, anywhere in the kernel name; `*` and `?` are
    /// wildcards, `re:` starts a regex. Adds to the policy's
    /// `communication.kernels`.
    #[arg(long = "comm-kernel", value_name = "PATTERN")]
    pub(super) comm_kernel: Vec<String>,
}

impl CommArgs {
    pub(super) fn kernels(&self) -> Result<CommKernels, Failure> {
        CommKernels::with_patterns(&self.comm_kernel)
            .map_err(|e| Failure::input(format!("--comm-kernel: {}", echo::message(&e))))
    }
}

/// Which GPU efficiency is judged against.
#[derive(Debug, clap::Args)]
pub(super) struct HardwareArgs {
    /// The GPU the trace ran on, overriding detection from deviceProperties: a
    /// catalog name (`tracegate hardware list`) or an inline spec such as
    /// `name=mygpu,hbm=3.35,bf16=990,fp32=67` (`base=H100 SXM,hbm=3.0` edits an entry).
    #[arg(long, value_name = "NAME|SPEC")]
    pub(super) hardware: Option<String>,

    /// A YAML catalog that adds GPUs or overrides built-in entries
    /// (same format as hardware/catalog.yaml).
    #[arg(long, value_name = "FILE")]
    pub(super) hardware_file: Option<PathBuf>,
}

impl HardwareArgs {
    pub(super) fn options(&self) -> Result<AnalysisOptions, Failure> {
        let file = self.hardware_file.as_deref();
        Ok(analyse::hardware_options(self.hardware.as_deref(), file)?)
    }
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
