//! `--jobs N` (issue 15): `check` reads its inputs N at a time, and what it
//! reports does not depend on N — the same report.json, terminal text and
//! candidate snapshots with one job as with four, and with a bad input
//! among several the same one-line error about the first bad one in input
//! order (workloads by name, each's baselines before its candidate).

use std::fs;
use std::path::{Path, PathBuf};

use tempfile::TempDir;

use super::{check_output, corpus, example, repo, text};

/// What one `check --jobs N` gives: its exit code, its terminal text and
/// the out dir's files (report.json, comment.md, summary.md, snapshots/).
type Run = (i32, String, Vec<(String, Vec<u8>)>);

fn check_with_jobs(base: &Path, cand: &Path, jobs: &str, extra: &[&str]) -> Run {
    let mut args = vec!["--jobs", jobs];
    args.extend_from_slice(extra);
    let (output, out) = check_output(&[base], cand, &args);
    let code = output.status.code().expect("exit code");
    assert!(
        matches!(code, 0 | 1),
        "--jobs {jobs}: exit {code}: {}",
        text(&output.stderr)
    );
    let snapshots = fs::read_dir(out.path().join("snapshots"))
        .expect("snapshots/ of a directory check")
        .map(|e| Path::new("snapshots").join(e.expect("entry").file_name()));
    let mut files: Vec<(String, Vec<u8>)> = ["report.json", "comment.md", "summary.md"]
        .into_iter()
        .map(PathBuf::from)
        .chain(snapshots)
        .map(|name| {
            let bytes = fs::read(out.path().join(&name)).expect("an out dir file");
            (name.display().to_string(), bytes)
        })
        .collect();
    files.sort();
    (code, text(&output.stdout), files)
}

/// The text of report.json in a [`Run`].
fn report(run: &Run) -> String {
    text(
        &run.2
            .iter()
            .find(|(name, _)| name == "report.json")
            .expect("report.json")
            .1,
    )
}

/// A baseline and a candidate directory of five workloads from the files
/// every checkout has: the examples, and fixtures against themselves.
fn fixture_dirs(root: &Path) -> (PathBuf, PathBuf) {
    let (base, cand) = (root.join("base"), root.join("cand"));
    fs::create_dir_all(&base).expect("mkdir");
    fs::create_dir_all(&cand).expect("mkdir");
    let copy = |from: &Path, to: PathBuf| {
        fs::copy(from, &to).unwrap_or_else(|e| panic!("{}: {e}", to.display()));
    };
    copy(&example("baseline.json.gz"), base.join("example.json.gz"));
    copy(&example("candidate.json.gz"), cand.join("example.json.gz"));
    copy(&example("candidate.json.gz"), base.join("swapped.json.gz"));
    copy(&example("baseline.json.gz"), cand.join("swapped.json.gz"));
    for fixture in ["small_cuda", "inference_phases", "launcher_descent"] {
        let path = repo("tests/fixtures").join(format!("{fixture}.json"));
        copy(&path, base.join(format!("{fixture}.json")));
        copy(&path, cand.join(format!("{fixture}.json")));
    }
    (base, cand)
}

#[test]
fn one_job_and_four_give_the_same_report_on_a_directory_pair() {
    let root = TempDir::new().expect("tempdir");
    let (base, cand) = fixture_dirs(root.path());
    let one = check_with_jobs(&base, &cand, "1", &[]);
    assert!(report(&one).contains("\"swapped\""), "{}", report(&one));
    for jobs in ["2", "4"] {
        assert!(
            one == check_with_jobs(&base, &cand, jobs, &[]),
            "--jobs {jobs}"
        );
    }
}

#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn one_job_and_four_give_the_same_report_on_h100_against_mi300() {
    let (h100, mi300) = (
        corpus("tracelens/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"),
        corpus("tracelens/mi300/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"),
    );
    let (base, cand) = (
        h100.parent().expect("h100/"),
        mi300.parent().expect("mi300/"),
    );
    let policy = repo("policies/cross-platform.yaml");
    let policy = ["--policy", policy.to_str().expect("UTF-8 path")];
    let one = check_with_jobs(base, cand, "1", &policy);
    assert!(report(&one).contains("google_owlv2"), "all five workloads");
    assert!(one == check_with_jobs(base, cand, "4", &policy), "--jobs 4");
}

#[test]
fn a_bad_input_among_several_is_the_same_one_line_error_whatever_the_jobs() {
    let root = TempDir::new().expect("tempdir");
    let (base, cand) = fixture_dirs(root.path());
    // Two bad inputs: the candidate of `inference_phases` comes first in
    // input order (workloads by name), the baseline of `swapped` after it.
    fs::write(cand.join("inference_phases.json"), "{\"traceEvents\": [").expect("write");
    fs::write(base.join("swapped.json.gz"), "not gzip").expect("write");
    let mut errors = Vec::new();
    for jobs in ["1", "4"] {
        let (output, _out) = check_output(&[&base], &cand, &["--jobs", jobs]);
        assert_eq!(output.status.code(), Some(2), "--jobs {jobs}");
        let stderr = text(&output.stderr);
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        assert!(stderr.contains("inference_phases.json"), "{stderr}");
        errors.push(stderr);
    }
    assert_eq!(errors[0], errors[1]);
}

#[test]
fn jobs_must_be_a_positive_number() {
    let root = TempDir::new().expect("tempdir");
    let (base, cand) = fixture_dirs(root.path());
    let (output, _out) = check_output(&[&base], &cand, &["--jobs", "0"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("--jobs"),
        "{}",
        text(&output.stderr)
    );
}
