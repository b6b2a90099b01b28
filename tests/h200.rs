//! Real traces from one H200 (tests/fixtures/h200, README there): five
//! separate-process runs of a BERT and a Llama, inference and training, in
//! eager, compiled and CUDA-graph modes. Under the default policy every
//! run compared with every other passes (the run-to-run noise real runs
//! have), and a run with its largest kernel ×1.2 fails on that op's row.
//! The fixtures are in the repository: nothing here is ignored.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::Value;
use tempfile::TempDir;

use tracegate::driver::check::{Baseline, Checked};
use tracegate::gate::policy::Policy;
use tracegate::gate::verdict::{Finding, Severity};

use crate::driver::check_files;
use crate::graph::{read_json, slowed, write_json};
use crate::util::tracegate;

const MODELS: [&str; 2] = ["bert", "llama"];
const TASKS: [&str; 2] = ["infer", "train"];
const MODES: [&str; 3] = ["eager", "compiled", "graph"];
const RUNS: usize = 5;

/// The fixture folder.
pub(crate) fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/h200")
}

/// Every model, task and mode, as the files name them (`bert-infer-eager`).
fn workloads() -> Vec<String> {
    let mut all = Vec::new();
    for model in MODELS {
        for task in TASKS {
            for mode in MODES {
                all.push(format!("{model}-{task}-{mode}"));
            }
        }
    }
    all
}

/// The trace of run `run` (1-based) of a workload.
fn trace(workload: &str, run: usize) -> PathBuf {
    fixtures().join(format!("{workload}-run{run}.json.gz"))
}

/// Snapshots of every run, made once by `tracegate snapshot` (what a CI job
/// stores as its baseline).
fn snapshots() -> &'static Path {
    static DIR: OnceLock<TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = TempDir::new().expect("temp dir");
        for workload in workloads() {
            for run in 1..=RUNS {
                tracegate()
                    .arg("snapshot")
                    .arg(trace(&workload, run))
                    .arg("--output")
                    .arg(
                        dir.path()
                            .join(format!("{workload}-run{run}.snapshot.json.gz")),
                    )
                    .assert()
                    .success();
            }
        }
        dir
    })
    .path()
}

fn snapshot(workload: &str, run: usize) -> PathBuf {
    snapshots().join(format!("{workload}-run{run}.snapshot.json.gz"))
}

/// `check --baseline B… --candidate C` under the default policy, through
/// the library (which tests/driver.rs holds to the binary byte for byte).
fn check(baselines: &[PathBuf], candidate: &Path) -> Checked {
    check_files(Baseline::Paths(baselines), candidate, &Policy::default())
}

fn describe(findings: &[Finding]) -> String {
    findings
        .iter()
        .map(|f| format!("  {:?} {}: {}", f.severity, f.rule, f.message))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every ordered pair of runs of every workload (240 checks): exit 0, no
/// failure and no warning. The runs differ as real runs do: the GPU's
/// computation per step by under 1%, its idle time waiting for the host
/// by up to 136% (docs/RELIABILITY.md).
#[test]
fn every_run_against_every_other_passes_quietly() {
    for workload in workloads() {
        for baseline in 1..=RUNS {
            for candidate in (1..=RUNS).filter(|&c| c != baseline) {
                let checked = check(
                    &[snapshot(&workload, baseline)],
                    &snapshot(&workload, candidate),
                );
                let loud: Vec<Finding> = checked
                    .verdict
                    .findings
                    .iter()
                    .filter(|f| matches!(f.severity, Severity::Fail | Severity::Warn))
                    .cloned()
                    .collect();
                assert!(
                    checked.verdict.outcome.exit_code() == 0 && loud.is_empty(),
                    "{workload} run {baseline} → run {candidate}:\n{}",
                    describe(&loud)
                );
            }
        }
    }
}

/// Each run against a window of the other four: passes.
#[test]
fn every_run_against_a_window_of_the_others_passes() {
    for workload in workloads() {
        for candidate in 1..=RUNS {
            let window: Vec<PathBuf> = (1..=RUNS)
                .filter(|&b| b != candidate)
                .map(|b| snapshot(&workload, b))
                .collect();
            let checked = check(&window, &snapshot(&workload, candidate));
            assert_eq!(
                checked.verdict.outcome.exit_code(),
                0,
                "{workload} run {candidate} against the other runs:\n{}",
                describe(&checked.verdict.findings)
            );
        }
    }
}

/// The kernel with the most GPU time in a trace.
fn largest_kernel(trace: &Value) -> String {
    let mut time: Vec<(String, f64)> = Vec::new();
    for event in trace["traceEvents"].as_array().expect("events") {
        if event["cat"] != "kernel" {
            continue;
        }
        let name = event["name"].as_str().expect("kernel name");
        let dur = event["dur"].as_f64().expect("dur");
        match time.iter_mut().find(|(n, _)| n == name) {
            Some((_, t)) => *t += dur,
            None => time.push((name.to_string(), dur)),
        }
    }
    time.into_iter()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .expect("a kernel")
        .0
}

/// Run 2 with its largest kernel ×1.2 (later GPU work moved by the added
/// time) against run 1: the gate fails on an op-level regression of the
/// row holding that kernel, in every mode.
#[test]
fn a_largest_kernel_a_fifth_slower_fails_on_its_row() {
    let dir = TempDir::new().expect("temp dir");
    for workload in workloads() {
        let original = read_json(&trace(&workload, 2));
        let kernel = largest_kernel(&original);
        let candidate = write_json(
            &dir,
            &format!("{workload}.json"),
            &slowed(&original, &kernel, 1.2),
        );
        let checked = check(&[snapshot(&workload, 1)], &candidate);
        let failing: Vec<&Finding> = checked
            .verdict
            .findings
            .iter()
            .filter(|f| f.severity == Severity::Fail)
            .collect();
        assert_eq!(
            checked.verdict.outcome.exit_code(),
            1,
            "{workload}, {kernel} ×1.2:\n{}",
            describe(&checked.verdict.findings)
        );
        let regression = failing.iter().find(|f| f.rule == "regression");
        let regression = regression.unwrap_or_else(|| {
            panic!(
                "{workload}, {kernel} ×1.2: no failing regression:\n{}",
                describe(&checked.verdict.findings)
            )
        });
        let delta = regression.delta_percent.expect("a regression's Δ");
        // The row may hold other kernels too: at most the kernel's own +20%
        // and the row's own difference between the runs (about 1% here).
        assert!(
            (5.0..=22.0).contains(&delta),
            "{workload}: Δ {delta:.1}% for a kernel ×1.2 ({})",
            regression.message
        );
        fs::remove_file(&candidate).expect("remove");
    }
}

/// What a reviewer reads of the info findings agrees with report.json: the
/// terminal's `+ N info findings` and the comment's `N more findings for
/// information` count the report's findings at `info` (a run whose step
/// idled longer, and the efficiency hints).
#[test]
fn the_info_counts_agree_with_the_report() {
    let out = TempDir::new().expect("temp dir");
    let output = tracegate()
        .args(["check", "--color", "never", "--baseline"])
        .arg(trace("bert-infer-eager", 2))
        .arg("--candidate")
        .arg(trace("bert-infer-eager", 1))
        .arg("--out-dir")
        .arg(out.path())
        .output()
        .expect("run tracegate");
    assert_eq!(output.status.code(), Some(0));
    let report: Value =
        serde_json::from_str(&fs::read_to_string(out.path().join("report.json")).expect("report"))
            .expect("JSON");
    let info = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["severity"] == "info")
        .count();
    assert!(
        report["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .any(|f| f["rule"] == "end_to_end" && f["severity"] == "info"),
        "{report}"
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains(&format!("+ {info} info findings")),
        "{info} info findings:\n{stdout}"
    );
    let comment = fs::read_to_string(out.path().join("comment.md")).expect("comment");
    assert!(
        comment.contains(&format!("{info} more findings for information")),
        "{info} info findings:\n{comment}"
    );
}
