//! The gate as library calls (`tracegate::driver`): the library's check
//! decides exactly what `tracegate check` writes and prints, byte for byte,
//! on the bundled example, the corpus's folders (same platform and
//! `--cross-platform`), a rank set and a `--history` baseline; and behaviour that needs no process, tested in-process —
//! workloads named by their files in every command, so that `history add`
//! and `check --history` find each other.

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};

use tracegate::driver::check::{Baseline, CheckRequest, Checked, check};
use tracegate::driver::history::{self, OriginFlags};
use tracegate::driver::inputs::{Captures, pair_inputs, workload_of};
use tracegate::driver::jobs::Jobs;
use tracegate::driver::{ReadOptions, Silent, analyse};
use tracegate::gate::judge::JudgeOptions;
use tracegate::gate::policy::Policy;
use tracegate::render::gate;
use tracegate::render::terminal::Style;
use tracegate::trace::LoadLimits;

use crate::ranks::write_rank_of;
use crate::util::{corpus_dir, today, tracegate};

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(name)
}

/// How the tests read inputs: quietly, default limits and jobs, no rank set.
pub(crate) fn read() -> ReadOptions<'static> {
    ReadOptions {
        quiet: true,
        limits: LoadLimits::default(),
        jobs: Jobs::new(None),
        ranks: false,
        rank_regex: None,
        progress: &Silent,
    }
}

/// A check of `candidate` against `baseline` through the library, with the
/// files an out dir holds.
pub(crate) fn check_files(baseline: Baseline<'_>, candidate: &Path, policy: &Policy) -> Checked {
    check_reading(baseline, candidate, policy, read())
}

/// [`check_files`] reading the inputs with `read`.
pub(crate) fn check_reading(
    baseline: Baseline<'_>,
    candidate: &Path,
    policy: &Policy,
    read: ReadOptions<'_>,
) -> Checked {
    let request = CheckRequest {
        baseline,
        candidate,
        captures: Captures::default(),
        policy,
        read,
        judge: JudgeOptions {
            today: Some(today()),
            ..JudgeOptions::default()
        },
        files: true,
        pull_request: false,
    };
    check(&request).unwrap_or_else(|e| panic!("{e}"))
}

/// Every file under `dir`, by path relative to it, sorted.
fn files_under(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        for entry in fs::read_dir(&current).expect("readable") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let relative = path.strip_prefix(dir).expect("under dir").to_path_buf();
                found.push((relative, fs::read(&path).expect("readable")));
            }
        }
    }
    found.sort();
    found
}

/// Runs `tracegate check ARGS --out-dir TMP` outside GitHub Actions and
/// asserts that it exits, prints and writes byte for byte what the library
/// decided in `checked`: report.json, comment.md, summary.md, the snapshots
/// and the replay packages.
fn assert_binary_writes(args: &[&OsStr], checked: &Checked) {
    let out = tempfile::tempdir().expect("tempdir");
    let output = tracegate()
        .arg("check")
        .args(args)
        .arg("--out-dir")
        .arg(out.path())
        .args(["--quiet", "--color", "never"])
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_SHA")
        .env_remove("GITHUB_EVENT_NAME")
        .env("COLUMNS", "120")
        .output()
        .expect("runs");
    let verdict = &checked.verdict;
    assert_eq!(
        output.status.code(),
        Some(i32::from(verdict.outcome.exit_code())),
        "{output:?}"
    );
    let stdout = String::from_utf8(output.stdout).expect("UTF-8");
    let style = Style {
        color: false,
        width: 120,
    };
    assert_eq!(stdout, gate::render_terminal(verdict, 15, style));
    let mut expected: Vec<(PathBuf, Vec<u8>)> = [
        ("report.json", gate::render_report_json(verdict)),
        (
            "comment.md",
            gate::render_comment(verdict, "default", None).expect("renders"),
        ),
        (
            "summary.md",
            gate::render_summary(verdict, None).expect("renders"),
        ),
    ]
    .into_iter()
    .map(|(name, text)| (PathBuf::from(name), text.into_bytes()))
    .collect();
    for file in checked.snapshots.iter().chain(&checked.packages) {
        expected.push((file.path.clone(), file.bytes.clone()));
    }
    expected.sort();
    let written = files_under(out.path());
    let names = |files: &[(PathBuf, Vec<u8>)]| -> Vec<PathBuf> {
        files.iter().map(|(path, _)| path.clone()).collect()
    };
    assert_eq!(names(&written), names(&expected));
    for ((path, bytes), (_, want)) in written.iter().zip(&expected) {
        assert!(bytes == want, "{} differs", path.display());
    }
}

#[test]
fn the_driver_decides_what_check_writes_and_prints_for_the_example() {
    let policy = Policy::default();
    let baselines = [example("baseline.json.gz")];
    let candidate = example("candidate.json.gz");
    let checked = check_files(Baseline::Paths(&baselines), &candidate, &policy);
    let args = [
        "--baseline".as_ref(),
        baselines[0].as_os_str(),
        "--candidate".as_ref(),
        candidate.as_os_str(),
    ];
    assert_binary_writes(&args, &checked);
    // The example's regression is selected for a replay package, which the
    // report names: the comparison above covered one.
    assert!(!checked.packages.is_empty(), "no replay package");
}

/// The corpus's H100 and MI300X folders checked as directories of
/// workloads, same platform and across platforms (`--cross-platform`).
#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn the_driver_decides_what_check_writes_for_corpus_directories_and_across_platforms() {
    let corpus = corpus_dir().join("tracelens");
    let (h100, mi300) = (corpus.join("h100"), corpus.join("mi300"));
    for (baseline, candidate, cross_platform) in [(&h100, &h100, false), (&h100, &mi300, true)] {
        let policy = Policy::for_check(None, cross_platform).unwrap_or_else(|e| panic!("{e}"));
        let baselines = [baseline.clone()];
        let checked = check_files(Baseline::Paths(&baselines), candidate, &policy);
        assert!(
            checked.verdict.workloads.len() >= 5,
            "{:?}",
            checked.verdict.workloads
        );
        let mut args = vec![
            "--baseline".as_ref(),
            baseline.as_os_str(),
            "--candidate".as_ref(),
            candidate.as_os_str(),
        ];
        if cross_platform {
            args.push("--cross-platform".as_ref());
        }
        assert_binary_writes(&args, &checked);
    }
}

/// A 4-rank job against itself with its all-reduces 1.5× as long, read as
/// rank sets (`--ranks`).
#[test]
fn the_driver_decides_what_check_writes_for_a_rank_set() {
    let dir = tempfile::tempdir().expect("tempdir");
    let job = |name: &str, scale: f64| {
        let path = dir.path().join(name);
        fs::create_dir(&path).expect("mkdir");
        for rank in 0..4 {
            write_rank_of(&path, 4, rank, rank == 2, 50.0, scale);
        }
        path
    };
    let (baseline, candidate) = (job("base", 1.0), job("cand", 1.5));
    let policy = Policy::default();
    let baselines = [baseline.clone()];
    let ranks = ReadOptions {
        ranks: true,
        ..read()
    };
    let checked = check_reading(Baseline::Paths(&baselines), &candidate, &policy, ranks);
    assert!(
        checked.verdict.outcome.exit_code() == 1,
        "{:?}",
        checked.verdict.findings
    );
    let args = [
        "--ranks".as_ref(),
        "--baseline".as_ref(),
        baseline.as_os_str(),
        "--candidate".as_ref(),
        candidate.as_os_str(),
    ];
    assert_binary_writes(&args, &checked);
}

#[test]
fn history_add_and_check_history_name_a_snapshot_by_its_file_as_the_binary_does() {
    let dir = tempfile::tempdir().expect("tempdir");
    // A snapshot of `baseline.json.gz` (its stored workload `baseline`),
    // saved as `b.snapshot.json.gz`: both commands call it `b`.
    let options = analyse::hardware_options(None, None).unwrap_or_else(|e| panic!("{e}"));
    let snapshot = analyse::snapshot(&example("baseline.json.gz"), None, &options, &read())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(snapshot.workload, "baseline");
    let file = dir.path().join("b.snapshot.json.gz");
    snapshot.write_path(&file).expect("writable");
    let store = dir.path().join("history");
    let mut added = Vec::new();
    for commit in ["c1", "c2"] {
        let flags = OriginFlags {
            commit: Some(commit),
            branch: Some("main"),
            ..OriginFlags::default()
        };
        let origin = history::origin(&flags, &|_| None).unwrap_or_else(|e| panic!("{e}"));
        history::add(
            &store,
            std::slice::from_ref(&file),
            &origin,
            &options,
            &read(),
            &mut |entry| added.push(entry.workload.clone()),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }
    assert_eq!(added, ["b", "b"]);
    let policy = Policy::default();
    let checked = check_files(
        Baseline::History {
            dir: &store,
            commit: Some("c3"),
        },
        &file,
        &policy,
    );
    let verdict = &checked.verdict;
    let names: Vec<&str> = verdict.workloads.iter().map(|w| w.name.as_str()).collect();
    assert_eq!(names, [workload_of(&file, false)]);
    assert!(
        verdict.workloads[0].matched > 0,
        "{:?}",
        verdict.workloads[0]
    );
    assert!(
        verdict.workloads[0]
            .notes
            .iter()
            .any(|n| n.starts_with("baseline: 2 run(s) of the history")),
        "{:?}",
        verdict.workloads[0].notes
    );
    assert!(
        verdict
            .findings
            .iter()
            .all(|f| f.rule != "nothing_to_compare"),
        "{:?}",
        verdict.findings
    );
    let args = [
        "--history".as_ref(),
        store.as_os_str(),
        "--commit".as_ref(),
        "c3".as_ref(),
        "--candidate".as_ref(),
        file.as_os_str(),
    ];
    assert_binary_writes(&args, &checked);
}

#[test]
fn directories_pair_a_trace_with_a_snapshot_of_the_same_name() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (baseline, candidate) = (dir.path().join("b"), dir.path().join("c"));
    for (side, files) in [
        (&baseline, ["bert.snapshot.json.gz", "qwen.json"]),
        (&candidate, ["bert.json.gz", "vit.json"]),
    ] {
        fs::create_dir(side).expect("mkdir");
        for file in files {
            fs::write(side.join(file), "{}").expect("write");
        }
    }
    let pairs = pair_inputs(
        std::slice::from_ref(&baseline),
        &candidate,
        Captures::default(),
        false,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let sides: Vec<(&str, usize, bool)> = pairs
        .iter()
        .map(|(name, baselines, candidate)| (name.as_str(), baselines.len(), candidate.is_some()))
        .collect();
    assert_eq!(
        sides,
        [("bert", 1, true), ("qwen", 1, false), ("vit", 0, true)]
    );
    for (name, baselines, candidate) in &pairs {
        for input in baselines.iter().chain(candidate) {
            assert_eq!(workload_of(&input.path, false), *name);
        }
    }
}
