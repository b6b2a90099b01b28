//! Runs a check through the library, as anything that embeds tracegate
//! would (a service, a notebook, a Python wheel): one call,
//! [`tracegate::driver::check::check`], decides; nothing is printed or
//! written but what this program chooses to. It prints the verdict's
//! headline and the files `check --out-dir` would write, and exits with
//! the verdict's code.
//!
//! ```text
//! cargo run --example library_check [-- BASELINE CANDIDATE]
//! ```
//!
//! Without arguments it checks the bundled example traces, whose candidate
//! has `aten::mm` 30% slower.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use tracegate::driver::check::{Baseline, CheckRequest, check};
use tracegate::driver::inputs::Captures;
use tracegate::driver::jobs::Jobs;
use tracegate::driver::{ReadOptions, Silent};
use tracegate::gate::judge::JudgeOptions;
use tracegate::gate::policy::Policy;
use tracegate::trace::LoadLimits;

fn main() -> ExitCode {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut args = std::env::args_os().skip(1).map(PathBuf::from);
    let baseline = args
        .next()
        .unwrap_or_else(|| examples.join("baseline.json.gz"));
    let candidate = args
        .next()
        .unwrap_or_else(|| examples.join("candidate.json.gz"));
    let policy = Policy::default();
    let baselines = [baseline];
    let request = CheckRequest {
        baseline: Baseline::Paths(&baselines),
        candidate: &candidate,
        captures: Captures::default(),
        policy: &policy,
        read: ReadOptions {
            quiet: true,
            limits: LoadLimits::default(),
            jobs: Jobs::new(None),
            ranks: false,
            rank_regex: None,
            progress: &Silent,
        },
        judge: JudgeOptions::default(),
        files: true,
        pull_request: false,
    };
    match check(&request) {
        Ok(checked) => {
            println!("{}", checked.verdict.headline);
            for file in checked.snapshots.iter().chain(&checked.packages) {
                println!("  {} ({} bytes)", file.path.display(), file.bytes.len());
            }
            ExitCode::from(checked.verdict.outcome.exit_code())
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(2)
        }
    }
}
