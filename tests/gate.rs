//! The gate end to end, as a CI job runs it: `tracegate check` (and
//! `snapshot`, `policy`) on real traces, judged by the exit code and by
//! `report.json`. These are issue 4's "How we will know it works".
//!
//! The candidates are corpus traces edited here, through `serde_json::Value`:
//!
//! - **jittered**: every `cat: "kernel"` event's `dur` times a deterministic
//!   factor in [0.97, 1.03] (splitmix64 of a seed and the kernel's index);
//! - **one op slowed**: the kernels launched from inside one op's host spans
//!   (runtime calls on the op's thread within one of its `cpu_op` events,
//!   joined to kernels by `correlation`) take 1.3× as long; nothing moves;
//! - **kernels renamed**: the same kernels, with another name.
//!
//! Edited traces and snapshots are written once per test process under
//! `CARGO_TARGET_TMPDIR/gate/` (never into the repository) and shared by the
//! tests that need them. Tests that need the corpus are compiled as ignored
//! when it is missing (build.rs); those on `examples/` always run.

use std::collections::{HashMap, HashSet};
use std::fs::{self, File};
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::{Arc, LazyLock, Mutex, OnceLock};

use flate2::read::MultiGzDecoder;
use serde_json::Value;
use tempfile::TempDir;

use crate::util::{corpus_dir, read_gz_json, tracegate};

mod consistency;
mod floor;
mod jobs;
mod learned;
mod noise;
mod own_snapshot;
mod sweep;
mod verdict;
mod xplat;

const QWEN_H100: &str = "tracelens/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz";
const QWEN_MI300: &str = "tracelens/mi300/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz";
const BERT_H100: &str = "tracelens/h100/gaunernst_bert-small-uncased__1016001.json.gz";
const BERT_MI300: &str = "tracelens/mi300/gaunernst_bert-small-uncased__1016001.json.gz";
const FALCON_H100: &str = "tracelens/h100/Falconsai_nsfw_image_detection__1016002.json.gz";
/// Six `ProfilerStep`s, ~35 MB of JSON: used for one snapshot and one check.
const A100_STEPS: &str = "hta/trace_diff_control_a100.json.gz";
/// Another job's six steps on a V100 (used only by an ignored test).
const V100_STEPS: &str = "hta/trace_diff_test_v100.json.gz";

// ------------------------------------------------------------------ inputs

fn repo(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)
}

fn example(name: &str) -> PathBuf {
    repo("examples").join(name)
}

/// A corpus trace; its absence is a failure (scripts/fetch-corpus gets them all).
fn corpus(relative: &str) -> PathBuf {
    let path = corpus_dir().join(relative);
    assert!(
        path.is_file(),
        "{relative} is not in the corpus: run scripts/fetch-corpus"
    );
    path
}

/// A short, file-name-safe label for a corpus path (`h100-Qwen_Qwen1.5-...`).
fn label(relative: &str) -> String {
    relative
        .trim_end_matches(".gz")
        .trim_end_matches(".json")
        .replace('/', "-")
}

/// A derived input file, made once per test process by `make(path)` and
/// shared by every test that asks for `name`.
fn derived(name: &str, make: impl FnOnce(&Path)) -> PathBuf {
    type Cells = Mutex<HashMap<String, Arc<OnceLock<PathBuf>>>>;
    static CELLS: LazyLock<Cells> = LazyLock::new(Cells::default);
    let cell = CELLS
        .lock()
        .expect("cache lock")
        .entry(name.to_string())
        .or_default()
        .clone();
    cell.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("gate");
        fs::create_dir_all(&dir).expect("create the cache dir");
        let path = dir.join(name);
        // Written under a private name and renamed: a concurrent test
        // process never reads a half-written file.
        let partial = dir.join(format!(".{}.{name}", std::process::id()));
        make(&partial);
        fs::rename(&partial, &path).expect("rename into place");
        path
    })
    .clone()
}

/// `tracegate snapshot` of a corpus trace.
fn snapshot(relative: &str) -> PathBuf {
    let trace = corpus(relative);
    derived(&format!("{}.snapshot.json.gz", label(relative)), |out| {
        let output = command()
            .arg("snapshot")
            .arg(&trace)
            .arg("-o")
            .arg(out)
            .arg("--quiet")
            .output()
            .expect("run tracegate snapshot");
        assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    })
}

/// Reads a trace (plain or gzip, by its first bytes) as JSON.
fn read_json(path: &Path) -> Value {
    let mut bytes = Vec::new();
    File::open(path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut plain = Vec::new();
        MultiGzDecoder::new(bytes.as_slice())
            .read_to_end(&mut plain)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        bytes = plain;
    }
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn write_json(path: &Path, value: &Value) {
    let mut out = BufWriter::new(File::create(path).expect("create"));
    serde_json::to_writer(&mut out, value).expect("write JSON");
    out.flush().expect("flush");
}

/// Writes an edited snapshot. `serde_json::Map` sorts its keys, but a
/// snapshot is recognised by `"format"` being its first key
/// (`snapshot::is_snapshot`), so that key is written first.
fn write_snapshot_json(path: &Path, snapshot: &Value) {
    let object = snapshot.as_object().expect("a snapshot is an object");
    let mut text = format!("{{\"format\":{}", object["format"]);
    for (key, value) in object.iter().filter(|(key, _)| *key != "format") {
        text.push_str(&format!(",{}:{value}", Value::from(key.as_str())));
    }
    text.push('}');
    fs::write(path, text).expect("write snapshot");
}

fn events_mut(trace: &mut Value) -> &mut Vec<Value> {
    match trace {
        Value::Array(events) => events,
        Value::Object(top) => top
            .get_mut("traceEvents")
            .and_then(Value::as_array_mut)
            .expect("traceEvents"),
        _ => panic!("not a trace"),
    }
}

fn is_kernel(event: &Value) -> bool {
    event.get("cat").and_then(Value::as_str) == Some("kernel")
}

fn dur(event: &Value) -> f64 {
    event["dur"].as_f64().expect("a kernel with a numeric dur")
}

fn scale_dur(event: &mut Value, factor: f64) {
    event["dur"] = Value::from(dur(event) * factor);
}

fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// A deterministic factor in [0.97, 1.03] for the `index`-th kernel.
fn jitter_factor(seed: u64, index: u64) -> f64 {
    let bits = splitmix64(splitmix64(seed) ^ index) >> 11;
    let unit = bits as f64 / (1u64 << 53) as f64;
    0.97 + 0.06 * unit
}

/// Every kernel's `dur` times [`jitter_factor`]; returns how many changed.
fn jitter(trace: &mut Value, seed: u64) -> u64 {
    let mut index = 0;
    for event in events_mut(trace).iter_mut().filter(|e| is_kernel(e)) {
        scale_dur(event, jitter_factor(seed, index));
        index += 1;
    }
    index
}

/// A copy of a corpus trace with every kernel jittered by ±3%.
fn jittered(relative: &str, seed: u64) -> PathBuf {
    let source = corpus(relative);
    derived(&format!("{}.jitter{seed}.json", label(relative)), |out| {
        let mut trace = read_json(&source);
        assert!(jitter(&mut trace, seed) > 0, "{relative} has no kernels");
        write_json(out, &trace);
    })
}

/// `(pid, tid)` of an event, as text (ids are numbers or strings).
fn thread_of(event: &Value) -> (String, String) {
    (event["pid"].to_string(), event["tid"].to_string())
}

/// The `correlation` ids of the GPU work launched from inside `op`: runtime
/// or driver calls on the op's thread that start within one of its
/// `cpu_op` events.
fn launched_by(events: &[Value], op: &str) -> HashSet<u64> {
    let mut spans: HashMap<(String, String), Vec<(f64, f64)>> = HashMap::new();
    for event in events {
        if event.get("cat").and_then(Value::as_str) == Some("cpu_op")
            && event.get("name").and_then(Value::as_str) == Some(op)
        {
            let start = event["ts"].as_f64().expect("ts");
            let end = start + event["dur"].as_f64().expect("dur");
            spans
                .entry(thread_of(event))
                .or_default()
                .push((start, end));
        }
    }
    for list in spans.values_mut() {
        list.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let mut correlations = HashSet::new();
    for event in events {
        let cat = event.get("cat").and_then(Value::as_str);
        if !matches!(cat, Some("cuda_runtime" | "cuda_driver")) {
            continue;
        }
        let (Some(list), Some(ts)) = (spans.get(&thread_of(event)), event["ts"].as_f64()) else {
            continue;
        };
        // Inside one of the last few spans that start at or before the
        // call (more than one only where the op nests in itself).
        let i = list.partition_point(|span| span.0 <= ts);
        let inside = list[..i].iter().rev().take(4).any(|s| ts <= s.1);
        if let (true, Some(id)) = (inside, event["args"]["correlation"].as_u64()) {
            correlations.insert(id);
        }
    }
    correlations
}

/// The kernels `op` launched; returns their total `dur` before the edit.
fn edit_kernels_of(trace: &mut Value, op: &str, mut edit: impl FnMut(&mut Value)) -> f64 {
    let launched = launched_by(events_mut(trace), op);
    let mut total = 0.0;
    for event in events_mut(trace).iter_mut().filter(|e| is_kernel(e)) {
        if event["args"]["correlation"]
            .as_u64()
            .is_some_and(|id| launched.contains(&id))
        {
            total += dur(event);
            edit(event);
        }
    }
    total
}

/// A copy of a corpus trace where `op`'s kernels take `factor` times as
/// long. `op_kernel_us` is the op's direct kernel time from `report`: the
/// edited kernels must account for nearly all of it.
fn op_slowed(relative: &str, op: &str, factor: f64, op_kernel_us: f64) -> PathBuf {
    let source = corpus(relative);
    let name = format!(
        "{}.{}x{factor}.json",
        label(relative),
        op.replace("::", "-")
    );
    derived(&name, |out| {
        let mut trace = read_json(&source);
        let slowed = edit_kernels_of(&mut trace, op, |e| scale_dur(e, factor));
        assert!(
            slowed >= 0.95 * op_kernel_us && slowed <= 1.0001 * op_kernel_us,
            "{relative}: slowed {slowed} µs of {op}'s {op_kernel_us} µs"
        );
        write_json(out, &trace);
    })
}

fn renamed(kernel: &str) -> String {
    format!("{kernel}__renamed_by_test")
}

/// A copy of a corpus trace where `op`'s kernels have [`renamed`] names.
fn op_kernels_renamed(relative: &str, op: &str) -> PathBuf {
    let source = corpus(relative);
    let name = format!("{}.{}-renamed.json", label(relative), op.replace("::", "-"));
    derived(&name, |out| {
        let mut trace = read_json(&source);
        let touched = edit_kernels_of(&mut trace, op, |e| {
            let name = renamed(e["name"].as_str().expect("kernel name"));
            e["name"] = Value::from(name);
        });
        assert!(touched > 0.0, "{relative}: no kernels under {op}");
        write_json(out, &trace);
    })
}

// ------------------------------------------------------------------ running

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `tracegate` with the GitHub Actions variables of the environment removed
/// (so a test run inside Actions never writes to the job's own outputs).
fn command() -> assert_cmd::Command {
    let mut command = tracegate();
    command
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_OUTPUT")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env("COLUMNS", "120")
        .env("NO_COLOR", "1");
    command
}

/// One `tracegate check` run with `--out-dir`.
struct Gate {
    code: i32,
    stdout: String,
    stderr: String,
    report: Value,
    out: TempDir,
}

impl Gate {
    fn findings(&self) -> &[Value] {
        self.report["findings"].as_array().expect("findings")
    }

    /// Findings as one line each, for assertion messages.
    fn describe(&self) -> String {
        self.findings()
            .iter()
            .map(|f| {
                format!(
                    "{} {} {}",
                    f["severity"].as_str().unwrap_or("?"),
                    f["kind"].as_str().unwrap_or("?"),
                    f["message"].as_str().unwrap_or("?")
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn of_kind(&self, kind: &str) -> Vec<&Value> {
        self.findings()
            .iter()
            .filter(|f| f["kind"] == kind)
            .collect()
    }

    fn workloads(&self) -> &[Value] {
        self.report["workloads"].as_array().expect("workloads")
    }

    fn file(&self, name: &str) -> String {
        let path = self.out.path().join(name);
        fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }
}

fn run_check(baselines: &[&Path], candidate: &Path, extra: &[&str]) -> Gate {
    let (output, out) = check_output(baselines, candidate, extra);
    gate_of(output, out)
}

/// `tracegate check` with `--out-dir`, whatever its exit code.
fn check_output(baselines: &[&Path], candidate: &Path, extra: &[&str]) -> (Output, TempDir) {
    let out = TempDir::new().expect("tempdir");
    let mut command = command();
    command.arg("check");
    for baseline in baselines {
        command.arg("--baseline").arg(baseline);
    }
    command
        .arg("--candidate")
        .arg(candidate)
        .arg("--out-dir")
        .arg(out.path())
        .args(["--quiet", "--color", "never"])
        .args(extra);
    (command.output().expect("run tracegate check"), out)
}

fn gate_of(output: Output, out: TempDir) -> Gate {
    let stdout = text(&output.stdout);
    let stderr = text(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    let code = output.status.code().expect("exit code");
    assert!(matches!(code, 0 | 1), "exit {code}: {stderr}");
    let path = out.path().join("report.json");
    let report: Value = serde_json::from_str(
        &fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .expect("report.json is JSON");
    Gate {
        code,
        stdout,
        stderr,
        report,
        out,
    }
}

/// `tracegate report --format json`.
fn report_json(trace: &Path) -> Value {
    let output = command()
        .args(["report", "--format", "json", "--quiet"])
        .arg(trace)
        .output()
        .expect("run tracegate report");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    serde_json::from_slice(&output.stdout).expect("JSON report")
}

fn f64_of(value: &Value) -> f64 {
    value
        .as_f64()
        .unwrap_or_else(|| panic!("not a number: {value}"))
}

// ------------------------------------------------------------------ shared assertions

/// Exit 0, outcome pass, no fail or warn finding, nothing flagged on any
/// matched row: what an unchanged (or merely noisy) candidate must give.
fn assert_quiet(gate: &Gate, what: &str) {
    let findings = gate.describe();
    assert_eq!(gate.code, 0, "{what}: exit {}\n{findings}", gate.code);
    assert_eq!(gate.report["outcome"], "pass", "{what}");
    for finding in gate.findings() {
        assert_eq!(
            finding["severity"], "info",
            "{what}: a {} finding:\n{findings}",
            finding["severity"]
        );
        assert!(
            !matches!(
                finding["kind"].as_str(),
                Some("regression" | "improvement" | "kernel_selection" | "timeline")
            ),
            "{what}: {findings}"
        );
    }
    let counts = &gate.report["counts"];
    assert_eq!(counts["regressions"], 0, "{what}");
    assert_eq!(counts["failures"], 0, "{what}");
    assert_eq!(counts["warnings"], 0, "{what}");
    let workloads = gate.workloads();
    assert!(!workloads.is_empty(), "{what}");
    let mut matched = 0;
    for workload in workloads {
        let m = workload["matched"].as_u64().expect("matched");
        assert!(m > 0, "{what}: no op row matched");
        assert_eq!(workload["unchanged"], m, "{what}: a matched row changed");
        matched += m;
    }
    assert_eq!(counts["unchanged"], matched, "{what}");
    // A passing PR gets a short comment on every push.
    let comment = gate.file("comment.md");
    assert!(
        comment.chars().count() <= 1_500,
        "{what}: a {}-character passing comment\n{comment}",
        comment.chars().count()
    );
}

fn timeline_delta(workload: &Value, metric: &str) -> Option<f64> {
    workload["timeline"]
        .as_array()
        .expect("timeline")
        .iter()
        .find(|row| row["metric"] == metric)
        .unwrap_or_else(|| panic!("no {metric} row"))["delta_percent"]
        .as_f64()
}

// ------------------------------------------------------------------ 1. itself

#[test]
fn the_example_trace_against_itself_passes_with_nothing_flagged() {
    // examples/ has three ProfilerSteps: the per-step statistics path.
    let steps = example("baseline.json.gz");
    let gate = run_check(&[&steps], &steps, &[]);
    assert_quiet(&gate, "examples baseline vs itself");
}

#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn a_trace_against_itself_passes_with_nothing_flagged() {
    let (qwen, bert, qwen_snapshot) = (corpus(QWEN_H100), corpus(BERT_H100), snapshot(QWEN_H100));
    for (what, baseline, candidate) in [
        ("qwen trace vs trace", &qwen, &qwen),
        ("qwen snapshot vs trace", &qwen_snapshot, &qwen),
        ("bert trace vs trace", &bert, &bert),
    ] {
        let gate = run_check(&[baseline], candidate, &[]);
        assert_quiet(&gate, what);
        let workload = &gate.workloads()[0];
        assert_eq!(workload["cross_platform"], false, "{what}");
        for row in workload["timeline"].as_array().expect("timeline") {
            assert_eq!(row["baseline_us"], row["candidate_us"], "{what}: {row}");
        }
    }
}

// ------------------------------------------------------------------ 2. jitter

#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn three_percent_kernel_jitter_passes_quietly() {
    // Multi-step (six ProfilerSteps: per-step samples) and single-step traces.
    let mut cases = vec![(
        "a100 6 steps",
        snapshot(A100_STEPS),
        jittered(A100_STEPS, 1),
    )];
    for seed in [1, 2] {
        cases.push(("qwen h100", snapshot(QWEN_H100), jittered(QWEN_H100, seed)));
    }
    cases.push(("bert h100", corpus(BERT_H100), jittered(BERT_H100, 3)));
    for (what, baseline, candidate) in &cases {
        let gate = run_check(&[baseline], candidate, &[]);
        assert_quiet(&gate, what);
        // The candidate really differs: its busy time moved, by less than
        // the jitter's bound.
        let busy = timeline_delta(&gate.workloads()[0], "busy_time").expect("busy delta");
        assert!(busy != 0.0 && busy.abs() < 3.0, "{what}: busy {busy:+}%");
    }
}

// ------------------------------------------------------------------ 3. one op 30% slower

#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn one_op_thirty_percent_slower_fails_on_that_op() {
    for relative in [QWEN_H100, BERT_H100] {
        let trace = corpus(relative);
        let report = report_json(&trace);
        let top = &report["ops"][0];
        let op = top["name"].as_str().expect("ops[0].name").to_string();
        let op_us = f64_of(&top["total_direct_kernel_time_us"]);
        let candidate = op_slowed(relative, &op, 1.3, op_us);
        let gate = run_check(&[&trace], &candidate, &[]);
        let findings = gate.describe();
        assert_eq!(gate.code, 1, "{relative}: {findings}");
        assert_eq!(gate.report["outcome"], "fail");
        let first = &gate.findings()[0];
        assert_eq!(first["kind"], "regression", "{relative}: {findings}");
        assert_eq!(first["severity"], "fail", "{relative}: {findings}");
        assert_eq!(first["op"]["name"], op.as_str(), "{relative}: {findings}");
        let regressions = gate.of_kind("regression");
        for finding in &regressions {
            assert_eq!(finding["op"]["name"], op.as_str(), "{relative}: {findings}");
            let delta = f64_of(&finding["delta_percent"]);
            assert!((25.0..=30.5).contains(&delta), "{relative}: {delta}");
            assert!(f64_of(&finding["impact_percent"]) > 0.0);
        }
        // The counter counts confirmed failing regressions (a warning is a
        // warning; a row measured once a side that its noise cannot confirm,
        // bert's LM head, is inconclusive).
        let failing = regressions
            .iter()
            .filter(|f| f["severity"] == "fail" && f["inconclusive"] != true)
            .count();
        assert_eq!(gate.report["counts"]["regressions"], failing, "{relative}");
        // No other op moved: nothing else is flagged as changed.
        for finding in gate.findings() {
            if let Some(name) = finding["op"]["name"].as_str() {
                if finding["kind"] != "efficiency" {
                    assert_eq!(name, op, "{relative}: {findings}");
                }
            }
        }
    }
}

/// The same 30% on an op whose time is spread over many rows: `aten::mm` on
/// the A100 trace is 86 rows (different shapes), 10.8% of GPU time. Every row
/// is 1.3× slower with a tight interval, +3.0% of GPU time together, but
/// each row adds less than `min_impact_percent` (0.5%), nothing adds rows up
/// by op name, and `busy_time` (+5%) does not trip: the gate passes and calls
/// all 546 rows "unchanged".
#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn one_op_thirty_percent_slower_over_many_rows_fails() {
    let (trace, baseline) = (corpus(A100_STEPS), snapshot(A100_STEPS));
    let report = report_json(&trace);
    let op = report["ops"]
        .as_array()
        .expect("ops")
        .iter()
        .find(|o| o["name"] == "aten::mm")
        .expect("aten::mm");
    let candidate = op_slowed(
        A100_STEPS,
        "aten::mm",
        1.3,
        f64_of(&op["total_direct_kernel_time_us"]),
    );
    let gate = run_check(&[&baseline], &candidate, &[]);
    let findings = gate.describe();
    assert_eq!(gate.code, 1, "{findings}");
    assert_eq!(gate.findings()[0]["op"]["name"], "aten::mm", "{findings}");
}

// ------------------------------------------------------------------ 4. kernel selection

#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn renamed_kernels_are_a_kernel_selection_finding_with_their_diff() {
    let trace = corpus(QWEN_H100);
    let report = report_json(&trace);
    // The largest GEMM op: a new cuBLAS picking another kernel is the case.
    let op = report["ops"]
        .as_array()
        .expect("ops")
        .iter()
        .find(|o| {
            o["categories"]
                .as_array()
                .is_some_and(|c| c.contains(&"GEMM".into()))
        })
        .expect("a GEMM op")["name"]
        .as_str()
        .expect("name")
        .to_string();
    let old_names: Vec<String> = report["kernels"]
        .as_array()
        .expect("kernels")
        .iter()
        .filter(|k| k["parent_op"] == op.as_str())
        .map(|k| k["name"].as_str().expect("kernel name").to_string())
        .collect();
    assert!(!old_names.is_empty(), "{op} launches kernels");
    let (baseline, candidate) = (snapshot(QWEN_H100), op_kernels_renamed(QWEN_H100, &op));
    let gate = run_check(&[&baseline], &candidate, &[]);
    let findings = gate.describe();
    let selections = gate.of_kind("kernel_selection");
    assert!(!selections.is_empty(), "{findings}");
    let rows = report["unique_args"]
        .as_array()
        .expect("unique_args")
        .iter()
        .filter(|r| r["name"] == op.as_str())
        .count();
    assert!(rows > 0, "{op} has rows");
    assert_eq!(
        selections.len(),
        1,
        "one per op, not per row of {op}: {findings}"
    );
    for finding in &selections {
        assert_eq!(finding["op"]["name"], op.as_str(), "{findings}");
        assert_eq!(finding["severity"], "warn", "default policy");
        let diff = finding["kernel_diff"].as_str().expect("kernel_diff");
        assert!(diff.starts_with("--- baseline\n+++ candidate\n"), "{diff}");
        let lines: Vec<&str> = diff.lines().collect();
        let removed = old_names
            .iter()
            .any(|old| lines.contains(&format!("-{old}").as_str()));
        let added = old_names
            .iter()
            .any(|old| lines.contains(&format!("+{}", renamed(old)).as_str()));
        assert!(removed && added, "{diff}");
        // The time did not change.
        assert!(f64_of(&finding["delta_percent"]).abs() < 1e-6, "{finding}");
    }
    // A warning, not a failure: the gate passes and nothing else is flagged.
    assert_eq!(gate.code, 0, "{findings}");
    assert!(gate.of_kind("regression").is_empty(), "{findings}");
    assert_eq!(gate.report["counts"]["warnings"], selections.len());
    let comment = gate.file("comment.md");
    assert!(
        comment.contains(&renamed(&old_names[0])),
        "comment shows the diff"
    );
}

// ------------------------------------------------------------------ 5. cross-platform

fn cross_platform_gate(baseline: &str, candidate: &str) -> Gate {
    let (baseline, candidate) = (corpus(baseline), corpus(candidate));
    let policy = repo("policies/cross-platform.yaml");
    run_check(
        &[&baseline],
        &candidate,
        &["--policy", policy.to_str().expect("UTF-8 path")],
    )
}

/// The five TraceLens models profiled on both an H100 and an MI300X.
const H100_MI300_MODELS: [&str; 5] = [
    "Falconsai_nsfw_image_detection__1016002",
    "Qwen_Qwen1.5-0.5B-Chat__1016005",
    "facebook_timesformer-base-finetuned-k400__1016002",
    "gaunernst_bert-small-uncased__1016001",
    "google_owlv2-large-patch14-ensemble__1016001",
];

#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn same_code_on_h100_and_mi300_never_fails_and_kernel_names_are_information() {
    for model in H100_MI300_MODELS {
        let (h100, mi300) = (
            format!("tracelens/h100/{model}.json.gz"),
            format!("tracelens/mi300/{model}.json.gz"),
        );
        for (baseline, candidate) in [(&h100, &mi300), (&mi300, &h100)] {
            let gate = cross_platform_gate(baseline, candidate);
            assert_eq!(gate.code, 0, "{candidate}: {}", gate.describe());
            assert_eq!(gate.workloads()[0]["cross_platform"], true);
            assert!(
                gate.findings().iter().all(|f| f["severity"] != "fail"),
                "{candidate}: {}",
                gate.describe()
            );
            // Kernel names differ across vendors: information, never a warning.
            let kernels = gate.of_kind("kernel_selection");
            assert!(!kernels.is_empty(), "{candidate}");
            assert!(
                kernels.iter().all(|f| f["severity"] == "info"),
                "{candidate}: {}",
                gate.describe()
            );
        }
    }
}

#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn a_same_platform_policy_refuses_different_gpus_unless_asked() {
    let (baseline, candidate) = (corpus(QWEN_H100), corpus(QWEN_MI300));
    let (output, _out) = check_output(&[&baseline], &candidate, &[]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    for needle in [
        "H100 SXM",
        "MI300X",
        "--cross-platform",
        "cross-platform policy",
    ] {
        assert!(stderr.contains(needle), "{needle}: {stderr}");
    }
    // The flag allows it under the same policy, with kernel names as
    // information although default.yaml makes kernel selection a warning.
    let gate = run_check(&[&baseline], &candidate, &["--cross-platform"]);
    assert_eq!(gate.workloads()[0]["cross_platform"], true);
    let kernels = gate.of_kind("kernel_selection");
    assert!(!kernels.is_empty());
    assert!(kernels.iter().all(|f| f["severity"] == "info"));
}

#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn h100_vs_mi300_ops_are_judged_against_expected_ratios() {
    for (baseline, candidate) in [(QWEN_H100, QWEN_MI300), (BERT_H100, BERT_MI300)] {
        let gate = cross_platform_gate(baseline, candidate);
        let findings = gate.describe();
        let workload = &gate.workloads()[0];
        assert_eq!(workload["cross_platform"], true, "{candidate}");
        assert_eq!(workload["baseline"]["hardware"], "H100 SXM");
        assert_eq!(workload["candidate"]["hardware"], "MI300X");
        assert!(workload["matched"].as_u64().expect("matched") > 0);
        assert!(
            gate.report["policy"]
                .as_str()
                .expect("policy")
                .contains("cross-platform")
        );

        let judged = gate.of_kind("unexpected_ratio");
        assert!(!judged.is_empty(), "{candidate}: {findings}");
        for finding in &judged {
            let expected = f64_of(&finding["expected_ratio"]);
            assert!(expected > 0.0 && expected.is_finite(), "{finding}");
            let ratio = 1.0 + f64_of(&finding["delta_percent"]) / 100.0;
            // Default slack 25% (comm: 100%); min effect 10% < 25%.
            let slack = if finding["op"]["category"] == "comm" {
                2.0
            } else {
                1.25
            };
            let (low, high) = match finding["interval_percent"].as_array() {
                Some(i) => (1.0 + f64_of(&i[0]) / 100.0, 1.0 + f64_of(&i[1]) / 100.0),
                None => (ratio, ratio),
            };
            let message = finding["message"].as_str().expect("message");
            // The hardware's ratio never fails or warns: information either way.
            assert_eq!(finding["severity"], "info", "{finding}");
            if ratio > expected {
                // Slower than the hardware explains: the whole interval above the band.
                let limit = f64_of(&finding["limit"]);
                assert!((limit - expected * slack).abs() < 1e-9, "{finding}");
                assert!(low > limit, "{finding}");
                assert!(message.contains("improve the target"), "{message}");
            } else {
                assert!(high < expected / slack, "{finding}");
            }
            for word in ["better", "worse", "NVIDIA", "AMD"] {
                assert!(!message.contains(word), "neutral wording: {message}");
            }
        }
        // The policy: the hardware's ratios and efficiency inform, kernel selection, new and missing ops inform, no timeline
        // gates; only `nothing_to_compare` (and same-hardware regressions,
        // not applicable) could fail. So the gate passes.
        assert!(
            gate.findings().iter().all(|f| f["severity"] != "fail"),
            "{findings}"
        );
        assert_eq!(gate.code, 0, "{findings}");
        assert!(gate.of_kind("timeline").is_empty());
        for finding in gate.of_kind("kernel_selection") {
            assert_eq!(finding["severity"], "info");
        }
        let warns = gate
            .findings()
            .iter()
            .filter(|f| f["severity"] == "warn")
            .count();
        assert_eq!(gate.report["counts"]["warnings"], warns);
        assert!(gate.file("comment.md").contains("MI300X"));
    }
}

/// docs/POLICY.md, `cross_platform`: "The noise settings still apply:
/// `min_time_us`, `min_impact_percent` and the false-discovery rate."
#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn cross_platform_findings_have_a_material_impact() {
    for (baseline, candidate) in [(QWEN_H100, QWEN_MI300), (BERT_H100, BERT_MI300)] {
        let gate = cross_platform_gate(baseline, candidate);
        for finding in gate.of_kind("unexpected_ratio") {
            // policies/cross-platform.yaml: min_impact_percent: 1.0
            let impact = f64_of(&finding["impact_percent"]).abs();
            assert!(impact >= 1.0, "{candidate}: {finding}");
        }
    }
}

/// An op finding's `baseline` and `candidate` are the figures its `metric`
/// names (median kernel time per call), so its `delta_percent` must say how
/// they differ. On traces with profiler steps the delta is the ratio of
/// per-step totals instead: on the A100/V100 pair, `aten::copy_
/// ((1024, 128), …)` shows 76.5 µs → 4.0 µs per call as "+192.8%" (one
/// call per step on the baseline, 16–17 on the candidate), and that ratio is
/// what is compared with the per-call expected hardware ratio.
#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn op_finding_deltas_agree_with_the_figures_they_show() {
    let (baseline, candidate) = (snapshot(A100_STEPS), corpus(V100_STEPS));
    let policy = repo("policies/cross-platform.yaml");
    let gate = run_check(
        &[&baseline],
        &candidate,
        &["--policy", policy.to_str().expect("UTF-8 path")],
    );
    assert_eq!(gate.workloads()[0]["cross_platform"], true);
    let mut checked = 0;
    for finding in gate.findings() {
        if finding["metric"] != "median kernel time per call" {
            continue;
        }
        let (Some(b), Some(c), Some(delta)) = (
            finding["baseline"].as_f64(),
            finding["candidate"].as_f64(),
            finding["delta_percent"].as_f64(),
        ) else {
            continue;
        };
        if b <= 0.0 || c <= 0.0 {
            continue;
        }
        checked += 1;
        let (shown, stated) = (c / b, 1.0 + delta / 100.0);
        // Generous: per-step and per-call figures differ a little anyway.
        assert!(
            stated / shown < 2.0 && shown / stated < 2.0,
            "{b} µs → {c} µs is ×{shown:.2}, but delta_percent says ×{stated:.2}: {finding}"
        );
    }
    assert!(checked > 0);
}

// ------------------------------------------------------------------ 6. directories

#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn directories_pair_workloads_and_flag_the_unpaired_one() {
    let (bert, falcon, bert_jitter, extra) = (
        corpus(BERT_H100),
        corpus(FALCON_H100),
        jittered(BERT_H100, 4),
        corpus(BERT_MI300),
    );
    let root = TempDir::new().expect("tempdir");
    let (base, cand) = (root.path().join("base"), root.path().join("cand"));
    fs::create_dir_all(&base).expect("mkdir");
    fs::create_dir_all(&cand).expect("mkdir");
    let copy = |from: &Path, to: PathBuf| {
        fs::copy(from, &to).unwrap_or_else(|e| panic!("{}: {e}", to.display()));
    };
    copy(&bert, base.join("encoder.json.gz"));
    copy(&falcon, base.join("vision.json.gz"));
    copy(&bert_jitter, cand.join("encoder.json"));
    copy(&falcon, cand.join("vision.json.gz"));
    copy(&extra, cand.join("newcomer.json.gz"));

    let gate = run_check(&[&base], &cand, &[]);
    let findings = gate.describe();
    let names: Vec<&str> = gate
        .workloads()
        .iter()
        .map(|w| w["name"].as_str().expect("name"))
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(
        names.contains(&"encoder") && names.contains(&"vision"),
        "{names:?}"
    );
    for workload in gate.workloads() {
        assert_eq!(workload["unchanged"], workload["matched"], "{findings}");
    }
    let unpaired = gate.of_kind("nothing_to_compare");
    assert_eq!(unpaired.len(), 1, "{findings}");
    assert_eq!(unpaired[0]["workload"], "newcomer");
    assert_eq!(unpaired[0]["severity"], "fail", "the default policy");
    assert!(
        unpaired[0]["message"]
            .as_str()
            .expect("message")
            .contains("candidate")
    );
    // Nothing else fails: the unpaired workload alone decides the exit code.
    let fails = gate
        .findings()
        .iter()
        .filter(|f| f["severity"] == "fail")
        .count();
    assert_eq!(fails, 1, "{findings}");
    assert_eq!(gate.code, 1, "{findings}");
    assert_eq!(gate.report["outcome"], "fail");

    // With `nothing_to_compare: warn`, the same check passes.
    let policy = root.path().join("warn.yaml");
    fs::write(
        &policy,
        "version: 1\nnothing_to_compare:\n  severity: warn\n",
    )
    .expect("write");
    let gate = run_check(
        &[&base],
        &cand,
        &["--policy", policy.to_str().expect("UTF-8")],
    );
    assert_eq!(gate.code, 0, "{}", gate.describe());
    assert_eq!(gate.of_kind("nothing_to_compare").len(), 1);
}

// ------------------------------------------------------------------ 7. window of baselines

#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn a_window_of_baselines_measures_noise_and_still_catches_a_regression() {
    let (a, b, c, candidate) = (
        jittered(QWEN_H100, 11),
        jittered(QWEN_H100, 12),
        jittered(QWEN_H100, 13),
        jittered(QWEN_H100, 14),
    );
    let window = [a.as_path(), b.as_path(), c.as_path()];
    let gate = run_check(&window, &candidate, &[]);
    assert_quiet(&gate, "jittered candidate against three jittered baselines");
    let workload = &gate.workloads()[0];
    assert_eq!(workload["baseline"]["runs"], 3, "{workload}");
    assert_eq!(workload["candidate"]["runs"], 1);

    // The noise the window measured (≤ 3%) does not hide a 30% slowdown.
    let trace = corpus(QWEN_H100);
    let report = report_json(&trace);
    let top = &report["ops"][0];
    let op = top["name"].as_str().expect("name");
    let slowed = op_slowed(
        QWEN_H100,
        op,
        1.3,
        f64_of(&top["total_direct_kernel_time_us"]),
    );
    let gate = run_check(&window, &slowed, &[]);
    assert_eq!(gate.code, 1, "{}", gate.describe());
    let first = &gate.findings()[0];
    assert_eq!(first["kind"], "regression", "{}", gate.describe());
    assert_eq!(first["op"]["name"], op, "{}", gate.describe());
    // The threshold is the policy's 5%, raised at most to the measured noise.
    let limit = f64_of(&first["limit"]);
    assert!((5.0..=6.0).contains(&limit), "limit {limit}");
}

// ------------------------------------------------------------------ 8. policies

fn policy_file(dir: &TempDir, name: &str, text: &str) -> PathBuf {
    let path = dir.path().join(name);
    fs::write(&path, text).expect("write policy");
    path
}

/// Exit 2, one `error: FILE:LINE:COLUMN: …` line, no stdout.
fn assert_policy_error(output: Output, location: &str, needles: &[&str]) {
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(output.stdout.is_empty(), "{}", text(&output.stdout));
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert!(stderr.contains(location), "{location} not in {stderr}");
    for needle in needles {
        assert!(stderr.contains(needle), "{needle:?} not in {stderr}");
    }
}

#[test]
fn invalid_policies_are_input_errors_with_line_and_column() {
    let dir = TempDir::new().expect("tempdir");
    let cases = [
        (
            "unknown.yaml",
            "version: 1\nnoise:\n  min_efect_percent: 3\n",
            "unknown.yaml:3:3:",
            vec!["min_efect_percent", "did you mean `min_effect_percent`"],
        ),
        (
            "type.yaml",
            "version: 1\nnoise:\n  min_time_us: abc\n",
            "type.yaml:3:16:",
            vec!["noise.min_time_us", "invalid type"],
        ),
        (
            "severity.yaml",
            "version: 1\nregression:\n  severity: fial\n",
            "severity.yaml:3:13:",
            vec!["did you mean `fail`"],
        ),
        (
            "version.yaml",
            "version: 2\n",
            "version.yaml:1:10:",
            vec!["unsupported policy version 2"],
        ),
    ];
    let (baseline, candidate) = (example("baseline.json.gz"), example("candidate.json.gz"));
    for (name, yaml, location, needles) in cases {
        let path = policy_file(&dir, name, yaml);
        let output = command()
            .args(["policy", "check"])
            .arg(&path)
            .output()
            .expect("run");
        assert_policy_error(output, location, &needles);
        // `check` refuses the policy before reading any trace.
        let output = command()
            .arg("check")
            .arg("--baseline")
            .arg(&baseline)
            .arg("--candidate")
            .arg(&candidate)
            .arg("--policy")
            .arg(&path)
            .output()
            .expect("run");
        assert_policy_error(output, location, &needles);
    }
}

#[test]
fn shipped_policies_check_and_init_writes_one_that_checks() {
    for name in ["default", "cross-platform", "strict"] {
        let path = repo(&format!("policies/{name}.yaml"));
        let output = command()
            .args(["policy", "check"])
            .arg(&path)
            .output()
            .expect("run");
        assert_eq!(
            output.status.code(),
            Some(0),
            "{name}: {}",
            text(&output.stderr)
        );
        assert!(text(&output.stdout).contains("valid policy, version 1"));
    }
    let dir = TempDir::new().expect("tempdir");
    let target = dir.path().join("tracegate.yaml");
    let init = |force: bool| {
        let mut command = command();
        command.args(["policy", "init", "-o"]).arg(&target);
        if force {
            command.arg("--force");
        }
        command.output().expect("run")
    };
    let output = init(false);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let written = fs::read_to_string(&target).expect("written");
    assert!(
        written.contains("version: 1") && written.contains('#'),
        "commented"
    );
    let output = command()
        .args(["policy", "check"])
        .arg(&target)
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));

    // It refuses to overwrite without --force, and leaves the file alone.
    fs::write(&target, "version: 1\n# mine\n").expect("write");
    let output = init(false);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("--force"),
        "{}",
        text(&output.stderr)
    );
    assert_eq!(
        fs::read_to_string(&target).expect("read"),
        "version: 1\n# mine\n"
    );
    let output = init(true);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(fs::read_to_string(&target).expect("read"), written);
}

// ------------------------------------------------------------------ 9. outputs

#[test]
fn out_dir_files_and_github_actions_outputs() {
    let (baseline, candidate) = (example("baseline.json.gz"), example("candidate.json.gz"));
    let out = TempDir::new().expect("tempdir");
    let github = TempDir::new().expect("tempdir");
    let (outputs, summary) = (github.path().join("output"), github.path().join("summary"));
    fs::write(&summary, "earlier step\n").expect("write");
    let output = tracegate()
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_OUTPUT", &outputs)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("NO_COLOR", "1")
        .arg("check")
        .arg("--baseline")
        .arg(&baseline)
        .arg("--candidate")
        .arg(&candidate)
        .arg("--out-dir")
        .arg(out.path())
        .args(["--quiet", "--color", "never"])
        .output()
        .expect("run");
    let gate = gate_of(output, out);
    assert_eq!(gate.code, 1, "{}", gate.stderr);
    assert_eq!(gate.report["schema_version"], 1);
    assert_eq!(gate.report["outcome"], "fail");

    let comment = gate.file("comment.md");
    assert!(
        comment.starts_with("<!-- tracegate:default -->"),
        "{comment}"
    );
    assert!(comment.chars().count() <= 65_536);
    assert!(comment.contains("aten::mm"));
    let summary_md = gate.file("summary.md");
    assert!(!summary_md.trim().is_empty());

    let step_summary = fs::read_to_string(&summary).expect("step summary");
    assert_eq!(step_summary, format!("earlier step\n{summary_md}"));
    let lines = fs::read_to_string(&outputs).expect("GITHUB_OUTPUT");
    let lines: Vec<&str> = lines.lines().collect();
    assert!(lines.contains(&"verdict=fail"), "{lines:?}");
    // The outputs count the comment's lines (one per op), as
    // report.json's `failing_groups` does.
    let failures = gate.report["counts"]["failing_groups"]
        .as_u64()
        .expect("failing_groups");
    assert!(
        lines.contains(&format!("failures={failures}").as_str()),
        "{lines:?}"
    );
    let report_line = format!(
        "report-path={}",
        gate.out.path().join("report.json").display()
    );
    assert!(lines.contains(&report_line.as_str()), "{lines:?}");

    let errors: Vec<&str> = gate
        .stdout
        .lines()
        .filter(|l| l.starts_with("::error "))
        .collect();
    assert!(!errors.is_empty(), "{}", gate.stdout);
    assert!(errors.len() <= 10, "capped: {}", errors.len());
    assert!(
        errors[0].contains("aten%3A%3Amm") && errors[0].contains("::aten::mm"),
        "{}",
        errors[0]
    );
    assert!(
        gate.stdout.lines().any(|l| l.starts_with("::warning ")),
        "{}",
        gate.stdout
    );

    // Without GITHUB_ACTIONS: no annotations. With --comment-key: its marker.
    let gate = run_check(&[&baseline], &candidate, &["--comment-key", "matrix-1"]);
    assert!(!gate.stdout.contains("::error"), "{}", gate.stdout);
    let comment = gate.file("comment.md");
    assert!(
        comment.starts_with("<!-- tracegate:matrix-1 -->"),
        "{comment}"
    );
    assert!(!comment.contains("tracegate:default"));
}

/// The cells of a Markdown table row (`| a | b \\| c |` has two).
fn table_cells(line: &str) -> usize {
    let unescaped = line
        .char_indices()
        .filter(|&(i, c)| c == '|' && !line[..i].ends_with('\\'))
        .count();
    unescaped.saturating_sub(1)
}

/// The quick start's comment: one line per op (`aten::mm` once, its eight
/// shapes collapsed under it), at most six columns in its tables, and
/// counters that agree with the verdict and the table.
#[test]
fn quick_start_comment_groups_findings_by_op() {
    let (baseline, candidate) = (example("baseline.json.gz"), example("candidate.json.gz"));
    let policy = repo("policies/default.yaml");
    let gate = run_check(
        &[&baseline],
        &candidate,
        &["--policy", policy.to_str().expect("UTF-8 path")],
    );
    assert_eq!(gate.code, 1, "{}", gate.describe());
    let comment = gate.file("comment.md");
    for line in comment.lines().filter(|l| l.starts_with('|')) {
        assert!(table_cells(line) <= 6, "{line}");
    }
    // The main table: the first table after the headline.
    let main: Vec<&str> = comment
        .lines()
        .skip_while(|l| !l.starts_with("| op |"))
        .take_while(|l| l.starts_with('|'))
        .collect();
    // Every aten::mm shape of the example is slower: one line for all.
    let shapes = gate
        .findings()
        .iter()
        .filter(|f| f["op"]["name"] == "aten::mm" && f["kind"] == "regression")
        .count();
    assert!(shapes >= 8, "{}", gate.describe());
    let mm: Vec<&&str> = main.iter().filter(|l| l.contains("aten::mm")).collect();
    assert_eq!(mm.len(), 1, "{comment}");
    assert!(mm[0].contains(&format!("{shapes} shapes")), "{}", mm[0]);
    assert!(
        comment.contains(&format!("<details><summary>❌ aten::mm — {shapes} shapes")),
        "{comment}"
    );

    let report = &gate.report;
    let groups = report["groups"].as_array().expect("groups");
    let mm_groups: Vec<&Value> = groups
        .iter()
        .filter(|g| g["label"] == "aten::mm" && g["kind"] == "regression")
        .collect();
    assert_eq!(mm_groups.len(), 1);
    let group = mm_groups[0];
    assert_eq!(
        group["findings"].as_array().expect("findings").len(),
        shapes
    );
    // The group's change is the ratio of its rows' totals, inside their range.
    let delta = f64_of(&group["delta_percent"]);
    let range = group["delta_range_percent"].as_array().expect("range");
    assert!(
        f64_of(&range[0]) <= delta && delta <= f64_of(&range[1]),
        "{group}"
    );
    // Rows with the same dims are told apart by their layout.
    let tags: Vec<&str> = group["tags"]
        .as_array()
        .expect("tags")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(tags.contains(&"NT") && tags.contains(&"TN"), "{tags:?}");
    assert_eq!(comment.matches("Path A (").count(), 1, "{comment}");

    // Counters: the table's failing and warning lines, and the verdict's.
    let counts = &report["counts"];
    let failing = main.iter().filter(|l| l.starts_with("| ❌")).count();
    let warning = main.iter().filter(|l| l.starts_with("| ⚠️")).count();
    assert_eq!(counts["failing_groups"], failing, "{comment}");
    assert_eq!(counts["warning_groups"], warning, "{comment}");
    let line = format!("{failing} failing · {warning} warning");
    assert!(comment.contains(&line), "{line}\n{comment}");
    assert!(
        counts["regressions"].as_u64() <= counts["failures"].as_u64(),
        "{counts}"
    );
    let headline = report["headline"].as_str().expect("headline");
    assert!(
        headline.starts_with(&format!("❌ tracegate: {failing} failing: aten::mm")),
        "{headline}"
    );
    assert!(headline.chars().count() <= 120, "{headline}");
}

// ------------------------------------------------------------------ 10. snapshots

/// `check --out-dir` writes the candidate's snapshot, the same bytes
/// `tracegate snapshot` writes, so the uploaded artifact can be promoted to
/// the next baseline: `candidate.snapshot.json.gz` for a file, and
/// `snapshots/NAME.snapshot.json.gz` per workload for a directory, which
/// pairs by name with the next candidate directory.
#[test]
fn the_out_dir_holds_the_candidates_snapshot_to_promote_to_baseline() {
    let (baseline, candidate) = (example("baseline.json.gz"), example("candidate.json.gz"));
    let gate = run_check(&[&baseline], &candidate, &[]);
    assert_eq!(gate.code, 1, "{}", gate.describe());
    let written = gate.out.path().join("candidate.snapshot.json.gz");
    let by_snapshot = gate.out.path().join("by-snapshot-command.json.gz");
    let output = command()
        .arg("snapshot")
        .arg(&candidate)
        .arg("-o")
        .arg(&by_snapshot)
        .output()
        .expect("run tracegate snapshot");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(
        fs::read(&written).expect("check wrote candidate.snapshot.json.gz"),
        fs::read(&by_snapshot).expect("snapshot wrote its file")
    );
    let promoted = run_check(&[&written], &candidate, &[]);
    assert_quiet(&promoted, "the candidate against its promoted snapshot");

    let root = TempDir::new().expect("tempdir");
    let (base, cand) = (root.path().join("base"), root.path().join("cand"));
    for dir in [&base, &cand] {
        fs::create_dir_all(dir).expect("mkdir");
        for name in ["encoder", "decoder"] {
            fs::copy(&baseline, dir.join(format!("{name}.json.gz"))).expect("copy");
        }
    }
    let gate = run_check(&[&base], &cand, &[]);
    assert_eq!(gate.code, 0, "{}", gate.describe());
    let mut names: Vec<String> = fs::read_dir(gate.out.path().join("snapshots"))
        .expect("check wrote snapshots/")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["decoder.snapshot.json.gz", "encoder.snapshot.json.gz"]
    );
    assert!(!gate.out.path().join("candidate.snapshot.json.gz").exists());
    let promoted = run_check(&[&gate.out.path().join("snapshots")], &cand, &[]);
    assert_quiet(&promoted, "candidates against their promoted snapshots");
    let paired: Vec<&str> = promoted
        .workloads()
        .iter()
        .map(|w| w["name"].as_str().expect("name"))
        .collect();
    assert_eq!(paired, ["decoder", "encoder"]);
}

/// `bert:bs32` (a colon, which upload-artifact refuses) is written as
/// `snapshots/bert%3Abs32.snapshot.json.gz`, holds its real name, and pairs
/// with the candidate again when promoted.
#[test]
fn a_workload_named_bert_colon_bs32_is_written_under_an_artifact_safe_name() {
    let baseline = example("baseline.json.gz");
    let root = TempDir::new().expect("tempdir");
    let (base, cand) = (root.path().join("base"), root.path().join("cand"));
    for dir in [&base, &cand] {
        fs::create_dir_all(dir).expect("mkdir");
        fs::copy(&baseline, dir.join("bert:bs32.json.gz")).expect("copy");
    }
    let gate = run_check(&[&base], &cand, &[]);
    assert_eq!(gate.code, 0, "{}", gate.describe());
    let written = gate
        .out
        .path()
        .join("snapshots/bert%3Abs32.snapshot.json.gz");
    assert_eq!(read_gz_json(&written)["workload"], "bert:bs32");
    let promoted = run_check(&[&gate.out.path().join("snapshots")], &cand, &[]);
    assert_quiet(&promoted, "the candidate against its promoted snapshot");
    assert_eq!(promoted.workloads()[0]["name"], "bert:bs32");
}

fn uncompressed_len(path: &Path) -> u64 {
    let file = File::open(path).expect("open");
    std::io::copy(&mut MultiGzDecoder::new(file), &mut std::io::sink()).expect("gunzip")
}

#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn a_snapshot_is_small_and_stands_in_for_its_trace() {
    let (trace, snapshot) = (corpus(QWEN_H100), snapshot(QWEN_H100));
    let size = fs::metadata(&snapshot).expect("snapshot").len();
    let trace_size = uncompressed_len(&trace);
    assert!(
        size * 20 <= trace_size,
        "snapshot {size} B, trace {trace_size} B: over 5%"
    );
    let gate = run_check(&[&snapshot], &trace, &[]);
    assert_quiet(&gate, "snapshot vs its trace");

    let dir = TempDir::new().expect("tempdir");
    let json = read_json(&snapshot);
    assert_eq!(json["version"]["major"], 1);

    // A newer minor version with fields this tracegate does not know: read.
    let mut newer = json.clone();
    newer["version"]["minor"] = 99.into();
    newer["field_from_the_future"] = serde_json::json!({"x": [1, 2, 3]});
    let newer_path = dir.path().join("newer-minor.json");
    write_snapshot_json(&newer_path, &newer);
    let gate = run_check(&[&newer_path], &trace, &[]);
    assert_quiet(&gate, "snapshot of minor version 99");

    // Another major version: a clear input error naming the file.
    let mut major = json;
    major["version"]["major"] = 2.into();
    major["version"]["minor"] = 0.into();
    let major_path = dir.path().join("major-two.json");
    write_snapshot_json(&major_path, &major);
    let output = command()
        .arg("check")
        .arg("--baseline")
        .arg(&major_path)
        .arg("--candidate")
        .arg(&trace)
        .arg("--quiet")
        .output()
        .expect("run");
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert!(
        stderr.contains(&major_path.display().to_string()),
        "{stderr}"
    );
    assert!(stderr.contains("version 2.0"), "{stderr}");
    assert!(output.stdout.is_empty());
}

// ------------------------------------------------------------------ 11. examples

#[test]
fn the_bundled_examples_fail_on_mm_and_show_the_softmax_kernel_change() {
    let policy = repo("policies/default.yaml");
    let gate = run_check(
        &[&example("baseline.json.gz")],
        &example("candidate.json.gz"),
        &["--policy", policy.to_str().expect("UTF-8")],
    );
    let findings = gate.describe();
    assert_eq!(gate.code, 1, "{findings}");
    let first = &gate.findings()[0];
    assert_eq!(first["kind"], "regression", "{findings}");
    assert_eq!(first["op"]["name"], "aten::mm", "{findings}");
    // Only aten::mm regressed; everything else is seed-to-seed noise.
    for finding in gate.of_kind("regression") {
        assert_eq!(finding["op"]["name"], "aten::mm", "{findings}");
        let delta = f64_of(&finding["delta_percent"]);
        assert!((20.0..=40.0).contains(&delta), "{finding}");
    }
    assert!(gate.of_kind("improvement").is_empty(), "{findings}");
    let softmax: Vec<&Value> = gate
        .of_kind("kernel_selection")
        .into_iter()
        .filter(|f| f["op"]["name"] == "aten::_softmax")
        .collect();
    assert_eq!(softmax.len(), 1, "{findings}");
    assert_eq!(gate.of_kind("kernel_selection").len(), 1, "{findings}");
    let diff = softmax[0]["kernel_diff"].as_str().expect("diff");
    assert!(
        diff.lines()
            .any(|l| l.starts_with("-void (anonymous namespace)::softmax_warp_forward")),
        "{diff}"
    );
    assert!(
        diff.lines()
            .any(|l| l.starts_with("+void at::native::(anonymous namespace)::cunn_SoftMaxForward")),
        "{diff}"
    );
}

/// The trailers a failing comment's first screen suggests, in order.
fn suggested_trailers(comment: &str) -> Vec<String> {
    let line = comment
        .lines()
        .find(|l| l.starts_with("> **Intended?**"))
        .unwrap_or_else(|| panic!("no Intended? line in\n{comment}"));
    let head = line.split(" to the PR's head commit").next().unwrap_or("");
    head.split('`')
        .filter_map(|span| span.strip_prefix("Tracegate-Accept: "))
        .map(str::to_string)
        .collect()
}

#[test]
fn following_the_comments_accept_advice_passes_the_gate() {
    // The first screen says how to accept an intended slowdown: doing
    // exactly that must pass, timeline lines that moved with the op included.
    let policy = repo("policies/default.yaml");
    let policy = policy.to_str().expect("UTF-8 path");
    let (baseline, candidate) = (example("baseline.json.gz"), example("candidate.json.gz"));
    let gate = run_check(&[&baseline], &candidate, &["--policy", policy]);
    assert_eq!(gate.code, 1, "{}", gate.stdout);
    let trailers = suggested_trailers(&gate.file("comment.md"));
    let failing = gate.report["counts"]["failing_groups"]
        .as_u64()
        .expect("failing_groups");
    assert_eq!(trailers.len() as u64, failing, "{trailers:?}");
    let mut extra = vec!["--policy", policy];
    for trailer in &trailers {
        extra.extend(["--accept", trailer.as_str()]);
    }
    let accepted = run_check(&[&baseline], &candidate, &extra);
    assert_eq!(accepted.code, 0, "{trailers:?}\n{}", accepted.stdout);
}
