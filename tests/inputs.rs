//! Hostile gate inputs through the real binary: policies and baseline
//! snapshots that a fuzz campaign found to hang, exhaust memory or panic.
//! Each must end with exit 2 and one clear line (the file, the place, the
//! limit) within 5 seconds, under a 1 GiB address-space limit where the
//! platform has `ulimit -v`.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;
use tempfile::TempDir;

/// The time a refused input may take: a watchdog, not a benchmark: a hang fails it, a loaded machine does not.
const DEADLINE: Duration = Duration::from_secs(60);

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(name)
}

/// Runs the binary with `args` under `ulimit -v 1 GiB` (Unix), timing it.
fn run(args: &[&str]) -> (Output, Duration) {
    let binary = assert_cmd::cargo::cargo_bin("tracegate");
    let mut command = if cfg!(unix) {
        let mut shell = Command::new("sh");
        shell
            .arg("-c")
            .arg("ulimit -v 1048576 && exec \"$0\" \"$@\"")
            .arg(binary);
        shell
    } else {
        Command::new(binary)
    };
    command
        .args(args)
        .env_remove("GITHUB_ACTIONS")
        .env("NO_COLOR", "1");
    let started = Instant::now();
    let output = command.output().expect("the binary runs");
    (output, started.elapsed())
}

/// Asserts exit 2 within the deadline, nothing on stdout, and one line on
/// stderr, `error: …`, holding every needle; returns that line.
fn refused(args: &[&str], needles: &[&str]) -> String {
    let (output, took) = run(args);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let line = match stderr.lines().collect::<Vec<_>>()[..] {
        [line] if line.starts_with("error: ") => line.to_string(),
        _ => panic!("expected one line `error: …`, got: {stderr}"),
    };
    assert!(
        output.status.code() == Some(2) && output.stdout.is_empty() && took < DEADLINE,
        "{:?} after {took:?}, stdout {} bytes: {line}",
        output.status,
        output.stdout.len()
    );
    let missing: Vec<&&str> = needles.iter().filter(|n| !line.contains(**n)).collect();
    assert!(missing.is_empty(), "{missing:?} not in: {line}");
    line
}

fn write_policy(dir: &TempDir, text: &str) -> String {
    let path = dir.path().join("policy.yaml");
    std::fs::write(&path, text).expect("write the policy");
    path.to_str().expect("UTF-8 path").to_string()
}

fn policy_check(text: &str, needles: &[&str]) -> String {
    let dir = TempDir::new().expect("temp dir");
    let path = write_policy(&dir, text);
    refused(&["policy", "check", &path], needles)
}

#[test]
fn policy_resamples_of_1e8_is_refused_at_load() {
    policy_check(
        "version: 1\nnoise:\n  resamples: 100000000\n",
        &[
            "policy.yaml:3:14: noise.resamples: must be at most 20000",
            "not 100000000",
        ],
    );
    policy_check(
        "version: 1\nnoise:\n  resamples: 1e8\n",
        &["policy.yaml:3:14: noise.resamples:", "from 100 to 20000"],
    );
}

#[test]
fn policy_glob_with_nested_braces_is_an_input_error_not_an_internal_one() {
    let mut glob = String::from("c");
    for _ in 0..200 {
        glob = format!("{{a,{glob}}}");
    }
    policy_check(
        &format!("version: 1\nignore:\n  - name: \"{glob}\"\n"),
        &[
            "policy.yaml:3:11: ignore[0].name: invalid glob",
            "at most 8 deep",
        ],
    );
}

#[test]
fn policy_nested_100000_levels_is_refused_within_seconds() {
    let flow = format!("version: 1\nignore: {}\n", "[".repeat(100_000));
    policy_check(&flow, &["policy.yaml:2:", "more than 32 levels"]);
    let block = format!("version: 1\nignore:\n{}x\n", "- ".repeat(100_000));
    policy_check(&block, &["policy.yaml:3:", "more than 32 levels"]);
}

#[test]
fn policy_billion_laughs_is_refused() {
    // Mappings this time (the unit test has the classic lists).
    let mut text = String::from("version: 1\nx0: &x0 lol\n");
    for level in 1..10 {
        text.push_str(&format!("x{level}: &x{level}\n"));
        for key in 0..10 {
            text.push_str(&format!("  k{key}: *x{}\n", level - 1));
        }
    }
    policy_check(&text, &["policy.yaml:", "more than 64 aliases"]);
}

#[test]
fn policy_error_with_a_newline_in_a_key_stays_on_one_line() {
    let line = policy_check(
        "version: 1\n\"a\\n::error title=injected::boom\": 1\n",
        &["policy.yaml:2:1: unknown field `a\\n::error title=injected::boom`"],
    );
    assert!(!line.contains('\r'));
}

/// The examples' baseline as snapshot JSON, made by `tracegate snapshot`.
fn baseline_snapshot(dir: &TempDir) -> Value {
    let path = dir.path().join("baseline.snapshot.json.gz");
    let output = Command::new(assert_cmd::cargo::cargo_bin("tracegate"))
        .args(["snapshot", "--quiet"])
        .arg(example("baseline.json.gz"))
        .arg("-o")
        .arg(&path)
        .output()
        .expect("snapshot runs");
    assert!(output.status.success(), "{output:?}");
    let mut json = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(&path).expect("snapshot written"))
        .read_to_end(&mut json)
        .expect("gzip");
    serde_json::from_slice(&json).expect("snapshot JSON")
}

/// `snapshot` as JSON text with `format` first (as tracegate writes it, and
/// as `check` tells a snapshot from a trace); serde_json's maps sort keys.
fn snapshot_text(snapshot: &Value) -> String {
    let mut rest = snapshot.clone();
    let format = rest
        .as_object_mut()
        .and_then(|object| object.remove("format"))
        .expect("a format key");
    let rest = serde_json::to_string(&rest).expect("JSON");
    format!("{{\"format\":{format},{}", &rest[1..])
}

/// Writes `snapshot` gzip-compressed and runs `check` with it as the baseline.
fn check_with_baseline(dir: &TempDir, snapshot: &Value, needles: &[&str]) -> String {
    let path = dir.path().join("tampered.snapshot.json.gz");
    let mut encoder = flate2::write::GzEncoder::new(
        std::fs::File::create(&path).expect("create"),
        flate2::Compression::best(),
    );
    encoder
        .write_all(snapshot_text(snapshot).as_bytes())
        .expect("write");
    encoder.finish().expect("gzip");
    let candidate = example("candidate.json.gz");
    refused(
        &[
            "check",
            "--quiet",
            "--baseline",
            path.to_str().expect("UTF-8"),
            "--candidate",
            candidate.to_str().expect("UTF-8"),
        ],
        needles,
    )
}

#[test]
fn snapshot_with_2m_samples_in_a_row_is_refused_within_seconds() {
    let dir = TempDir::new().expect("temp dir");
    let mut snapshot = baseline_snapshot(&dir);
    snapshot["ops"][0]["samples_us"] = Value::from(vec![1.0; 2_000_000]);
    let line = check_with_baseline(
        &dir,
        &snapshot,
        &["tampered.snapshot.json.gz: invalid snapshot: ops[0].samples_us: more than 64 samples"],
    );
    let compressed = std::fs::metadata(dir.path().join("tampered.snapshot.json.gz"))
        .expect("written")
        .len();
    assert!(compressed < 100_000, "{compressed} bytes: {line}");
}

#[test]
fn snapshot_with_negative_huge_or_string_times_is_refused() {
    let dir = TempDir::new().expect("temp dir");
    let original = baseline_snapshot(&dir);
    let cases: [(&str, Value, &str); 4] = [
        (
            "/ops/1/direct/mean",
            Value::from(-5.0),
            "ops[1].direct.mean: -5 is negative",
        ),
        (
            "/ops/1/samples_us/0",
            Value::from(1e300),
            "ops[1].samples_us[0]: 1e300 µs is more than 1e15 µs",
        ),
        (
            "/ops/1/samples_us/0",
            Value::from("NaN"),
            "ops[1].samples_us[0]: invalid type: string \"NaN\", expected f64",
        ),
        (
            "/timeline/busy_time",
            Value::from(-1.0),
            "timeline.busy_time: -1 is negative",
        ),
    ];
    for (pointer, value, needle) in cases {
        let mut snapshot = original.clone();
        *snapshot.pointer_mut(pointer).expect("field exists") = value;
        check_with_baseline(&dir, &snapshot, &[needle]);
    }
}

#[test]
fn snapshot_error_with_a_newline_in_a_value_stays_on_one_line() {
    let dir = TempDir::new().expect("temp dir");
    let mut snapshot = baseline_snapshot(&dir);
    snapshot["ops"][2]["category"] = Value::from("x\n::error title=injected::boom");
    check_with_baseline(
        &dir,
        &snapshot,
        &["ops[2].category: unknown variant `x\\n::error title=injected::boom`"],
    );
}
