//! `check`: the flags and the environment turned into a check request for
//! the library ([`driver::check`]), and what it decided written out — the
//! candidate snapshots and replay packages, report.json, comment.md,
//! summary.md, the GitHub Actions outputs — and shown.

use std::fs;
use std::path::Path;

use tracegate::driver::check::{Baseline, CheckRequest, Checked};
use tracegate::driver::inputs::Captures;
use tracegate::driver::{self, OutFile};
use tracegate::echo;
use tracegate::gate::judge::JudgeOptions;
use tracegate::gate::policy::{Accept, Date, Policy};
use tracegate::gate::verdict::Verdict;
use tracegate::render::{self, actions, gate};

use super::args::CheckArgs;
use super::files::{append, cannot, create_dir, emit, write_file};
use super::{Failure, color_enabled, env_value, many_read_options, publish, terminal_width};

/// `tracegate check`: judges, writes the report files, prints the verdict,
/// comments when asked; the exit code is the verdict's.
pub(super) fn check_command(args: &CheckArgs) -> Result<u8, Failure> {
    // Flags are checked in this order: the policy file, `--accept`,
    // `--comm-kernel`, `--rank-regex`.
    let mut policy = Policy::for_check(args.policy.as_deref(), args.cross_platform)
        .map_err(|e| Failure::input(e.to_string()))?;
    let judge = judge_options(args)?;
    policy.communication.kernels = policy.communication.kernels.merged(&args.comm.kernels()?);
    let commit = args.commit.clone().or_else(|| env_value("GITHUB_SHA"));
    let baseline = match &args.history {
        Some(dir) if args.baseline.is_empty() => Baseline::History {
            dir,
            commit: commit.as_deref(),
        },
        Some(dir) => Baseline::PathsLearning {
            paths: &args.baseline,
            dir,
            commit: commit.as_deref(),
        },
        None => Baseline::Paths(&args.baseline),
    };
    let request = CheckRequest {
        baseline,
        candidate: &args.candidate,
        captures: Captures {
            baseline: args.baseline_capture.as_deref(),
            candidate: args.candidate_capture.as_deref(),
        },
        policy: &policy,
        read: many_read_options((args.quiet, &args.load), &args.jobs, args.ranks, &args.rank)?,
        judge,
        files: args.out_dir.is_some(),
        pull_request: env_value("GITHUB_EVENT_NAME").is_some_and(|e| e.starts_with("pull_request")),
    };
    let Checked {
        verdict,
        snapshots,
        packages,
    } = driver::check::check(&request)?;
    if let Some(dir) = args.out_dir.as_deref() {
        write_files(dir, &snapshots, &packages)?;
    }
    show(args, &verdict)
}

/// Today's date and the `--accept` entries.
fn judge_options(args: &CheckArgs) -> Result<JudgeOptions, Failure> {
    let reason = args.accept_reason.as_deref().unwrap_or("");
    let accept = args
        .accept
        .iter()
        .map(|text| {
            Accept::from_arg(text, reason)
                .map_err(|e| Failure::input(format!("--accept {}: {}", echo::message(text), e)))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(JudgeOptions {
        today: Some(today()),
        accept,
        findings: Vec::new(),
    })
}

/// Today's date (UTC), from the clock: `accept` entries expire by it.
fn today() -> Date {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    Date::from_unix_days(i64::try_from(seconds / 86_400).unwrap_or(i64::MAX))
}

/// Writes the report files, prints the verdict (and the annotations under
/// GitHub Actions), comments with `--github`.
fn show(args: &CheckArgs, verdict: &Verdict) -> Result<u8, Failure> {
    let annotations = write_outputs(verdict, args)?;
    let style = render::terminal::Style {
        color: color_enabled(args.color, true),
        width: terminal_width(),
    };
    let mut text = gate::render_terminal(verdict, args.top, style);
    for line in annotations {
        text.push_str(&line);
        text.push('\n');
    }
    emit(None, &text)?;
    if args.github {
        let comment =
            gate::render_comment(verdict, &args.comment_key, args.template_dir.as_deref())
                .map_err(|e| Failure::input(e.to_string()))?;
        return publish(&args.publish, &args.comment_key, verdict, &comment);
    }
    Ok(verdict.outcome.exit_code())
}

/// Writes the candidate snapshots and the replay packages into `out_dir`.
/// The packages an earlier run left in `replay/` are removed first, so that
/// a re-used out dir holds only the ones this report names.
fn write_files(out_dir: &Path, snapshots: &[OutFile], packages: &[OutFile]) -> Result<(), Failure> {
    for file in snapshots {
        write_file(out_dir, &file.path, &file.bytes)?;
    }
    let dir = out_dir.join("replay");
    let earlier = driver::check::earlier_packages(&dir)?;
    for path in &earlier {
        let action = "remove this replay package of an earlier run";
        fs::remove_file(path).map_err(cannot(action, path))?;
    }
    if packages.is_empty() {
        if !earlier.is_empty() {
            // Emptied of our own packages: gone, as after a first run that
            // wrote none; a folder still holding anything else stays.
            let _ = fs::remove_dir(&dir);
        }
        return Ok(());
    }
    packages
        .iter()
        .try_for_each(|file| write_file(out_dir, &file.path, &file.bytes).map(drop))
}

/// Writes report.json, comment.md and summary.md; under GitHub Actions also
/// the step summary, the step outputs and the annotations (to stdout).
fn write_outputs(verdict: &Verdict, args: &CheckArgs) -> Result<Vec<String>, Failure> {
    let (key, templates) = (&args.comment_key, args.template_dir.as_deref());
    let template_error = |e: gate::TemplateError| Failure::input(e.to_string());
    let comment = gate::render_comment(verdict, key, templates).map_err(template_error)?;
    let summary = gate::render_summary(verdict, templates).map_err(template_error)?;
    let mut paths = (None, None, None);
    if let Some(dir) = args.out_dir.as_deref() {
        create_dir(dir)?;
        let write = |name: &str, text: &str| write_file(dir, Path::new(name), text.as_bytes());
        paths = (
            Some(write("report.json", &gate::render_report_json(verdict))?),
            Some(write("comment.md", &comment)?),
            Some(write("summary.md", &summary)?),
        );
    }
    let mut annotations = Vec::new();
    if std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true") {
        if let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY") {
            append(Path::new(&path), &summary)?;
        }
        if let Some(path) = std::env::var_os("GITHUB_OUTPUT") {
            let outputs = actions::OutputPaths {
                report: paths.0.as_deref(),
                comment: paths.1.as_deref(),
                summary: paths.2.as_deref(),
            };
            append(
                Path::new(&path),
                &actions::github_output_lines(verdict, &outputs),
            )?;
        }
        annotations = actions::annotations(verdict);
    }
    Ok(annotations)
}
