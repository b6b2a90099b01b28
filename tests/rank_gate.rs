//! Rank sets gated end to end (`snapshot --ranks`, `check --ranks`): the
//! fixture job of tests/ranks.rs against itself, with its all-reduces
//! slower, with another rank straggling, and 64 per-rank snapshots merged.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use tracegate::driver::ReadOptions;
use tracegate::driver::check::Baseline;
use tracegate::driver::inputs;
use tracegate::gate::policy::Policy;
use tracegate::render::gate;
use tracegate::render::terminal::Style;

use crate::driver::{check_reading, read};
use crate::ranks::write_rank_of;
use crate::util::{read_gz_json, tracegate};

/// A 4-rank job in a new directory `dir/name`: rank `late` delayed 50 µs
/// before each all-reduce, every all-reduce `scale` times as long.
fn job(dir: &Path, name: &str, late: u32, scale: f64) -> PathBuf {
    let path = dir.join(name);
    fs::create_dir(&path).unwrap();
    for rank in 0..4 {
        write_rank_of(&path, 4, rank, rank == late, 50.0, scale);
    }
    path
}

/// `check --ranks` of `baseline` against `candidate` through the library
/// (`tracegate::driver`, which tests/driver.rs holds to what the binary
/// writes byte for byte), its report.json, comment.md and candidate
/// snapshots written into `out`: the exit code, the terminal text and
/// report.json.
fn check(baseline: &Path, candidate: &Path, out: &Path) -> (i32, String, Value) {
    check_with(None, baseline, candidate, out)
}

/// [`check`] with `--rank-regex REGEX`.
fn check_with(
    rank_regex: Option<&str>,
    baseline: &Path,
    candidate: &Path,
    out: &Path,
) -> (i32, String, Value) {
    let baselines = [baseline.to_path_buf()];
    let read = ReadOptions {
        ranks: true,
        rank_regex: rank_regex.map(|r| inputs::rank_regex(r).unwrap_or_else(|e| panic!("{e}"))),
        ..read()
    };
    let checked = check_reading(
        Baseline::Paths(&baselines),
        candidate,
        &Policy::default(),
        read,
    );
    let verdict = &checked.verdict;
    let report = gate::render_report_json(verdict);
    fs::create_dir_all(out).unwrap();
    fs::write(out.join("report.json"), &report).unwrap();
    let comment = gate::render_comment(verdict, "default", None).expect("renders");
    fs::write(out.join("comment.md"), comment).unwrap();
    for file in &checked.snapshots {
        fs::write(out.join(&file.path), &file.bytes).unwrap();
    }
    let style = Style {
        color: false,
        width: 120,
    };
    (
        i32::from(verdict.outcome.exit_code()),
        gate::render_terminal(verdict, 15, style),
        serde_json::from_str(&report).unwrap(),
    )
}

fn rules(report: &Value) -> Vec<String> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_rank_set_against_itself_has_no_collective_findings() {
    let dir = tempfile::tempdir().unwrap();
    let set = job(dir.path(), "job", 2, 1.0);
    let (code, text, report) = check(&set, &set, &dir.path().join("out"));
    assert_eq!(code, 0, "{text}");
    assert!(
        rules(&report).iter().all(|r| !r.starts_with("collectives")),
        "{report}"
    );
}

#[test]
fn slower_all_reduces_fail_naming_the_collective_first() {
    let dir = tempfile::tempdir().unwrap();
    let base = job(dir.path(), "base", 2, 1.0);
    let slow = job(dir.path(), "slow", 2, 1.3);
    let out = dir.path().join("out");
    let (code, text, report) = check(&base, &slow, &out);
    assert_eq!(code, 1, "{text}");
    let first = &report["findings"][0];
    assert_eq!(first["rule"], "collectives", "{report}");
    assert_eq!(first["kind"], "collective", "{report}");
    assert_eq!(first["severity"], "fail", "{report}");
    assert_eq!(first["op"]["name"], "all_reduce (pg 0)", "{report}");
    let delta = first["delta_percent"].as_f64().unwrap();
    assert!((delta - 30.0).abs() < 1e-6, "{delta}");
    assert!(
        first["message"].as_str().unwrap().contains("algbw"),
        "{first}"
    );
    let fail_line = text.lines().find(|l| l.contains("FAIL")).unwrap();
    assert!(fail_line.contains("all_reduce (pg 0)"), "{text}");
    let comment = fs::read_to_string(out.join("comment.md")).unwrap();
    assert!(comment.contains("all_reduce (pg 0)"), "{comment}");
    // The op rows are the lowest rank's two kernels (its elementwise kernel
    // once, its all-reduce kernel three times): the collective is no op
    // row, neither matched nor in the single-sample note.
    let workload = &report["workloads"][0];
    assert_eq!(workload["matched"], 2, "{workload}");
    assert_eq!(workload["unchanged"], 2, "{workload}");
    assert!(
        workload["notes"].as_array().unwrap().iter().any(|n| n
            .as_str()
            .unwrap()
            .starts_with("1 of 2 matched op rows have a single")),
        "{workload}"
    );
}

#[test]
fn another_rank_straggling_is_a_new_straggler() {
    let dir = tempfile::tempdir().unwrap();
    let base = job(dir.path(), "base", 2, 1.0);
    let other = job(dir.path(), "other", 1, 1.0);
    let (_, text, report) = check(&base, &other, &dir.path().join("out"));
    let straggler = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "collectives.straggler")
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(straggler["kind"], "straggler", "{straggler}");
    let label = "rank 1 arrives last in 3 of 3 all_reduce (pg 0) calls";
    assert_eq!(straggler["op"]["name"], label, "{straggler}");
    let message = straggler["message"].as_str().unwrap();
    // Rank 1 makes three ranks wait 50 µs at each of three all-reduces:
    // the wait rank 2 made them sit through before, so nothing is added.
    assert!(
        message.starts_with(
            "rank 1 is a new straggler: last in 3 of 3 all_reduce (pg 0) calls, the other ranks \
             wait 150.0 µs per call for it (112.5 µs per rank in all)"
        ),
        "{message}"
    );
    assert_eq!(straggler["delta_percent"], 0.0, "{straggler}");
    assert_eq!(straggler["impact_percent"], 0.0, "{straggler}");
    assert!(
        message.contains("baseline's straggler was rank 2"),
        "{message}"
    );
    // The reviewer's line says what happened and why; no replay package is
    // missed for it.
    let comment = fs::read_to_string(dir.path().join("out/comment.md")).unwrap();
    let line = comment
        .lines()
        .find(|l| l.starts_with("| ⚠️ rank 1 arrives last"))
        .unwrap_or_else(|| panic!("{comment}"));
    assert!(
        line.contains("| +0.0%/run | +0.0% | straggler |"),
        "{comment}"
    );
    assert!(!comment.contains("no replay package"), "{comment}");
    // Under it, the message: who waits for whom and how long per call.
    assert!(
        comment.contains("the other ranks wait 150.0 µs per call for it"),
        "{comment}"
    );
    // The same straggler in both is no finding.
    let (_, _, same) = check(&base, &base, &dir.path().join("same"));
    assert!(!rules(&same).contains(&"collectives.straggler".to_string()));
}

#[test]
fn sixty_four_per_rank_snapshots_merge_as_the_set_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let (traces, snapshots) = (dir.path().join("traces"), dir.path().join("snapshots"));
    fs::create_dir(&traces).unwrap();
    fs::create_dir(&snapshots).unwrap();
    for rank in 0..64 {
        write_rank_of(&traces, 64, rank, rank == 17, 50.0, 1.0);
    }
    // Each rank's snapshot where its trace is, as a job array would.
    for entry in fs::read_dir(&traces).unwrap() {
        let trace = entry.unwrap().path();
        let name = trace.file_stem().unwrap().to_string_lossy().into_owned();
        tracegate()
            .args(["snapshot", "-q", "-o"])
            .arg(snapshots.join(format!("{name}.snapshot.json.gz")))
            .arg(&trace)
            .assert()
            .success();
    }
    let set = dir.path().join("set.snapshot.json.gz");
    tracegate()
        .args(["snapshot", "--ranks", "-q", "-o"])
        .arg(&set)
        .arg(&traces)
        .assert()
        .success();
    let out = dir.path().join("out");
    let (code, text, report) = check(&set, &snapshots, &out);
    assert_eq!(code, 0, "{text}");
    assert!(
        rules(&report).iter().all(|r| !r.starts_with("collectives")),
        "{report}"
    );
    let merged = read_gz_json(&out.join("candidate.snapshot.json.gz"));
    let whole = read_gz_json(&set);
    assert_eq!(merged["ranks"].as_array().unwrap().len(), 64);
    assert_eq!(merged["ranks"], whole["ranks"]);
    assert_eq!(merged["ops"], whole["ops"]);
    // The rank-set report reads the same 64 ranks' straggler from traces.
    let output = tracegate()
        .args(["report", "--format", "json"])
        .arg(&traces)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["ranks"]["stragglers"][17]["last"], 3);
}

#[test]
fn a_rank_twice_or_a_rank_missing_is_a_one_line_error() {
    let dir = tempfile::tempdir().unwrap();
    let set = job(dir.path(), "job", 2, 1.0);
    let partial = dir.path().join("partial");
    fs::create_dir(&partial).unwrap();
    for rank in [0, 1, 3] {
        write_rank_of(&partial, 4, rank, false, 0.0, 1.0);
    }
    let run = |baseline: &Path, candidate: &Path| {
        tracegate()
            .args(["check", "--ranks", "--baseline"])
            .arg(baseline)
            .arg("--candidate")
            .arg(candidate)
            .output()
            .unwrap()
    };
    let output = run(&set, &partial);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains("the candidate lacks rank(s) 2 of the baseline"),
        "{stderr}"
    );
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    fs::copy(set.join("worker0.json"), set.join("copy.json")).unwrap();
    let output = run(&set, &set);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains("are both rank 0"), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
}

#[test]
fn history_add_records_a_rank_set_as_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let set = job(dir.path(), "job", 2, 1.0);
    let history = dir.path().join("history");
    let output = tracegate()
        .args(["history", "add", "--ranks", "-q", "--commit", "abc1234"])
        .args(["--branch", "main", "--dir"])
        .arg(&history)
        .arg(&set)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8(output.stdout).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.starts_with("added job at abc1234"), "{text}");
    // That run is the window of the same job with slower all-reduces.
    let later = dir.path().join("later");
    fs::create_dir(&later).unwrap();
    let slow = job(&later, "job", 2, 1.3);
    let output = tracegate()
        .args([
            "check", "--ranks", "--color", "never", "--commit", "def5678",
        ])
        .arg("--history")
        .arg(&history)
        .arg("--candidate")
        .arg(&slow)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        text.contains("1 failing: all_reduce (pg 0) +30.0%"),
        "{text}"
    );
    assert!(text.contains("1 run(s) of the history on `main`"), "{text}");
}

#[test]
fn globs_and_rank_regex_name_the_ranks_as_report_does() {
    let dir = tempfile::tempdir().unwrap();
    let base = job(dir.path(), "base", 2, 1.0);
    // The candidate's files say no rank (no distributedInfo, no `rank<N>`
    // in their names) and sit among other files: the glob and the regex
    // pick them and tell their ranks.
    let other = job(dir.path(), "other", 1, 1.0);
    let renamed = dir.path().join("renamed");
    fs::create_dir(&renamed).unwrap();
    for entry in fs::read_dir(&other).unwrap() {
        let path = entry.unwrap().path();
        let mut trace: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        // Rank 2's file records no rank: its name says it.
        let rank = trace["distributedInfo"]["rank"].as_u64().unwrap_or(2);
        trace.as_object_mut().unwrap().remove("distributedInfo");
        fs::write(renamed.join(format!("gpu-{rank}.json")), trace.to_string()).unwrap();
    }
    fs::write(renamed.join("notes.txt"), "not a trace").unwrap();
    let glob = format!("{}/gpu-*.json", renamed.display());
    let regex = r"(?:gpu-|worker|rank)(\d+)";
    let (code, text, report) = check_with(
        Some(regex),
        &base,
        Path::new(&glob),
        &dir.path().join("out"),
    );
    assert_eq!(code, 0, "{text}");
    let straggler = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "straggler")
        .unwrap_or_else(|| panic!("{report}"));
    assert_eq!(
        straggler["op"]["name"],
        "rank 1 arrives last in 3 of 3 all_reduce (pg 0) calls"
    );
    // Named after the glob's directory, as a directory would be.
    assert_eq!(report["workloads"][0]["name"], "renamed", "{report}");
    // `snapshot --ranks` reads the same glob alike; without --ranks the
    // regex is refused.
    let set = dir.path().join("set.snapshot.json.gz");
    tracegate()
        .args(["snapshot", "--ranks", "-q", "--rank-regex", regex, "-o"])
        .arg(&set)
        .arg(&glob)
        .assert()
        .success();
    let snapshot = read_gz_json(&set);
    let ranks: Vec<(u64, &str)> = snapshot["ranks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["rank"].as_u64().unwrap(), r["source"].as_str().unwrap()))
        .collect();
    assert_eq!(
        ranks,
        [
            (0, "gpu-0.json"),
            (1, "gpu-1.json"),
            (2, "gpu-2.json"),
            (3, "gpu-3.json")
        ]
    );
    tracegate()
        .args(["snapshot", "--rank-regex", regex, "-o"])
        .arg(dir.path().join("one.snapshot.json.gz"))
        .arg(renamed.join("gpu-0.json"))
        .assert()
        .code(2)
        .stderr(predicates::str::contains("give --ranks too"));
}

/// `check --ranks` reads a rank other than the lowest for its
/// communication alone (as `report DIR` does); the merged snapshot is the
/// one the whole per-rank snapshots give, a rank without communication
/// (merged from its timeline) included.
#[test]
fn a_rank_set_read_for_its_communication_merges_as_whole_snapshots_do() {
    use tracegate::analysis::analyse::AnalysisOptions;
    use tracegate::driver::ranks::rank_set;
    use tracegate::driver::read::snapshot_of_input;
    use tracegate::gate::snapshot::Snapshot;

    let dir = tempfile::tempdir().unwrap();
    let path = job(dir.path(), "job", 2, 1.3);
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/launcher_descent.json");
    fs::copy(&fixture, path.join("trace_rank4.json")).unwrap();
    let options = AnalysisOptions::default();
    let read = ReadOptions {
        ranks: true,
        ..read()
    };
    let mut files: Vec<PathBuf> = fs::read_dir(&path)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort();
    let parts = files
        .iter()
        .map(|file| {
            let whole = snapshot_of_input(file, None, &options, &read).unwrap();
            let name = file.file_name().unwrap().to_string_lossy().into_owned();
            (name, whole.without_rows())
        })
        .collect();
    let workload = inputs::workload_of(&path, true);
    let (merged, index) = Snapshot::merge_ranks(parts, &workload).unwrap();
    let expected = snapshot_of_input(&files[index], None, &options, &read)
        .unwrap()
        .with_ranks_of(merged);
    let got = rank_set(&path, None, &options, &read).unwrap();
    assert_eq!(got.rank_numbers(), vec![0, 1, 2, 3, 4]);
    assert!(
        got.ranks.iter().any(|r| r.kernels.is_empty()),
        "rank 4 has no communication"
    );
    assert!(
        got == expected,
        "the rank set differs from the whole snapshots' merge"
    );
}
