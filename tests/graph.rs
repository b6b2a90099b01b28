//! Graph replay end to end: rows for the kernels CUDA/HIP graph launches
//! replay, the capture-trace merge, and the integrity rule, through the
//! binary (`report`, `check`).
//!
//! The corpus tests read the two inference traces with full graph capture
//! (vLLM and SGLang decode on MI300X, with their capture traces and
//! TraceLens's inference report as the oracle) and edit copies in a temp
//! directory: one kernel inside the graph 1.5× as long (later GPU work moves
//! by the added time, as it would), one kernel renamed, or every kernel of
//! the replay removed. A small hand-made trace runs the same gate checks
//! without the corpus.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use flate2::read::MultiGzDecoder;
use serde_json::{Value, json};
use tempfile::TempDir;

use crate::util::{Csv, assert_input_error, corpus_dir, relative_difference, tracegate};

pub(crate) const VLLM: &str = "tracelens/inference/vllm_decode_full";
pub(crate) const VLLM_TRACE: &str = "graph_execution.json.gz";
const VLLM_CAPTURE: &str =
    "capture_traces/graph_capture_rank_0.1773709742341309550.pt.trace.json.gz";
pub(crate) const SGLANG: &str = "tracelens/inference/sglang_decode";
pub(crate) const SGLANG_TRACE: &str = "sglang_Qwen3-8B_decode.json.gz";
const SGLANG_CAPTURE: &str = "capture_traces/bs_32_rank0.json.gz";
const ROTARY: &str = "void rotary_embedding_kernel<c10::BFloat16, true>(long const*, c10::BFloat16*, c10::BFloat16*, c10::BFloat16 const*, int, long, long, long, int, int, int)";

// ------------------------------------------------------------------ helpers

/// A file of an inference workload in the corpus (the tests that call it
/// are ignored without the corpus).
pub(crate) fn inference(workload: &str, file: &str) -> PathBuf {
    corpus_dir().join(workload).join(file)
}

pub(crate) fn read_json(path: &Path) -> Value {
    let mut bytes = Vec::new();
    File::open(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .read_to_end(&mut bytes)
        .expect("readable");
    let mut text = Vec::new();
    if bytes.starts_with(&[0x1f, 0x8b]) {
        MultiGzDecoder::new(&bytes[..])
            .read_to_end(&mut text)
            .expect("gzip");
    } else {
        text = bytes;
    }
    serde_json::from_slice(&text).expect("JSON")
}

pub(crate) fn write_json(dir: &TempDir, name: &str, value: &Value) -> PathBuf {
    let path = dir.path().join(name);
    File::create(&path)
        .and_then(|mut f| f.write_all(value.to_string().as_bytes()))
        .expect("writable temp dir");
    path
}

fn is_gpu_work(event: &Value) -> bool {
    matches!(
        event["cat"].as_str(),
        Some("kernel" | "gpu_memcpy" | "gpu_memset")
    )
}

/// The trace with every GPU event named `kernel` `factor` times as long and
/// all GPU work after it moved later by the added time.
pub(crate) fn slowed(trace: &Value, kernel: &str, factor: f64) -> Value {
    let mut trace = trace.clone();
    let events = trace["traceEvents"].as_array_mut().expect("events");
    let mut gpu: Vec<usize> = (0..events.len())
        .filter(|&i| is_gpu_work(&events[i]))
        .collect();
    gpu.sort_by(|&a, &b| {
        let ts = |i: usize| events[i]["ts"].as_f64().expect("ts");
        ts(a).total_cmp(&ts(b))
    });
    let mut shift = 0.0;
    for i in gpu {
        let event = &mut events[i];
        let ts = event["ts"].as_f64().expect("ts") + shift;
        event["ts"] = json!(ts);
        if event["name"] == kernel {
            let dur = event["dur"].as_f64().expect("dur");
            event["dur"] = json!(dur * factor);
            shift += dur * (factor - 1.0);
        }
    }
    trace
}

/// The trace with GPU events named `from` renamed `to`.
fn renamed(trace: &Value, from: &str, to: &str) -> Value {
    let mut trace = trace.clone();
    for event in trace["traceEvents"].as_array_mut().expect("events") {
        if is_gpu_work(event) && event["name"] == from {
            event["name"] = json!(to);
        }
    }
    trace
}

/// The trace without the GPU work of its graph launches.
fn without_replayed_work(trace: &Value) -> Value {
    let mut trace = trace.clone();
    let events = trace["traceEvents"].as_array_mut().expect("events");
    let graph_correlations: Vec<Value> = events
        .iter()
        .filter(|e| {
            e["name"]
                .as_str()
                .is_some_and(|n| n.contains("GraphLaunch"))
        })
        .map(|e| e["args"]["correlation"].clone())
        .collect();
    events.retain(|e| !(is_gpu_work(e) && graph_correlations.contains(&e["args"]["correlation"])));
    trace
}

pub(crate) fn report(trace: &Path, capture: Option<&Path>) -> Value {
    let mut command = tracegate();
    command
        .args(["report", "--format", "json", "--quiet"])
        .arg(trace);
    if let Some(capture) = capture {
        command.arg("--capture").arg(capture);
    }
    let output = command.output().expect("run report");
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("JSON report")
}

/// A check's exit code, report.json and terminal text.
pub(crate) struct Gate {
    pub(crate) code: i32,
    pub(crate) report: Value,
    pub(crate) stdout: String,
}

impl Gate {
    pub(crate) fn findings(&self) -> &Vec<Value> {
        self.report["findings"].as_array().expect("findings")
    }

    fn kinds(&self, kind: &str) -> Vec<&Value> {
        self.findings()
            .iter()
            .filter(|f| f["kind"] == kind)
            .collect()
    }
}

pub(crate) fn check(baseline: &Path, candidate: &Path, extra: &[&std::ffi::OsStr]) -> Gate {
    let out = TempDir::new().expect("tempdir");
    let output = tracegate()
        .env_remove("GITHUB_ACTIONS")
        .env("COLUMNS", "200")
        .args(["check", "--quiet", "--color", "never", "--baseline"])
        .arg(baseline)
        .arg("--candidate")
        .arg(candidate)
        .arg("--out-dir")
        .arg(out.path())
        .args(extra)
        .output()
        .expect("run check");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    let report = std::fs::read_to_string(out.path().join("report.json")).expect("report.json");
    Gate {
        code: output.status.code().expect("exit code"),
        report: serde_json::from_str(&report).expect("JSON"),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
    }
}

fn captures<'a>(baseline: &'a Path, candidate: &'a Path) -> Vec<&'a std::ffi::OsStr> {
    vec![
        "--baseline-capture".as_ref(),
        baseline.as_os_str(),
        "--candidate-capture".as_ref(),
        candidate.as_os_str(),
    ]
}

/// Share of the timeline's busy time held by the op rows, %.
fn rows_share(report: &Value) -> f64 {
    let busy = report["timeline"]["busy_time"].as_f64().expect("busy");
    let rows: f64 = report["unique_args"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| r["direct"]["sum"].as_f64().expect("sum"))
        .sum();
    rows / busy * 100.0
}

fn assert_pass_without_findings(gate: &Gate, what: &str) {
    assert_eq!(gate.code, 0, "{what}: {}", gate.stdout);
    assert_eq!(gate.report["outcome"], "pass", "{what}");
    assert!(gate.findings().is_empty(), "{what}: {:#?}", gate.findings());
}

/// A slowdown fails the gate, its first finding a regression naming `name`.
fn assert_regression_first(gate: &Gate, name: &str, message_has: &str) {
    assert_eq!(gate.code, 1, "{}", gate.stdout);
    assert_eq!(gate.report["outcome"], "fail");
    let first = &gate.findings()[0];
    assert_eq!(first["kind"], "regression", "{first:#}");
    assert_eq!(first["op"]["name"], name, "{first:#}");
    let message = first["message"].as_str().expect("message");
    assert!(message.contains(message_has), "{message}");
}

/// A rename inside the graph: exactly one finding, kernel selection, with
/// both names in its diff; no new or missing rows.
fn assert_one_kernel_selection(gate: &Gate, old: &str, new: &str) {
    assert_eq!(gate.findings().len(), 1, "{:#?}", gate.findings());
    let finding = &gate.findings()[0];
    assert_eq!(finding["kind"], "kernel_selection");
    let diff = finding["kernel_diff"].as_str().expect("a diff");
    assert!(diff.contains(&format!("-{old}\n")), "{diff}");
    assert!(diff.contains(&format!("+{new}\n")), "{diff}");
    assert_eq!(gate.report["counts"]["new"], 0);
    assert_eq!(gate.report["counts"]["missing"], 0);
}

// ------------------------------------------------------------------ hand-made

/// Eight profiler steps, each replaying one graph (`gemm_k`, `norm_k`,
/// `gemm_k`) from a `cudaGraphLaunch` and running one ordinary op, with a
/// little jitter.
fn small_graph_trace() -> Value {
    let mut events = Vec::new();
    for step in 0..8u64 {
        let base = step as f64 * 1000.0;
        let jitter = 1.0 + (step % 3) as f64 * 0.01;
        let (graph, op) = (step + 1, step + 100);
        let host = [
            (
                "user_annotation",
                format!("ProfilerStep#{step}"),
                0.0,
                900.0,
                json!({}),
            ),
            (
                "cuda_runtime",
                "cudaGraphLaunch".into(),
                10.0,
                5.0,
                json!({"correlation": graph}),
            ),
            (
                "cpu_op",
                "aten::add".into(),
                600.0,
                30.0,
                json!({"Input Dims": [[64], [64]], "Input type": ["float", "float"]}),
            ),
            (
                "cuda_runtime",
                "cudaLaunchKernel".into(),
                605.0,
                5.0,
                json!({"correlation": op}),
            ),
        ];
        for (cat, name, at, dur, args) in host {
            events.push(
                json!({"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1,
                               "ts": base + at, "dur": dur, "args": args}),
            );
        }
        let gpu = [
            ("gemm_k", 50.0, 100.0, graph),
            ("norm_k", 200.0, 40.0, graph),
            ("gemm_k", 350.0, 100.0, graph),
            ("add_k", 620.0, 4.0, op),
        ];
        for (name, at, dur, correlation) in gpu {
            events.push(
                json!({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7,
                "ts": base + at, "dur": dur * jitter,
                "args": {"correlation": correlation, "stream": 7, "device": 0,
                         "grid": [8, 1, 1], "block": [256, 1, 1]}}),
            );
        }
    }
    json!({"traceEvents": events})
}

#[test]
fn hand_made_graph_replay_gates_slowdowns_renames_and_missing_kernels() {
    let dir = TempDir::new().expect("tempdir");
    let trace = small_graph_trace();
    let base = write_json(&dir, "base.json", &trace);
    assert_pass_without_findings(&check(&base, &base, &[]), "identical");

    let slow = write_json(&dir, "slow.json", &slowed(&trace, "norm_k", 1.5));
    let gate = check(&base, &slow, &[]);
    assert_regression_first(
        &gate,
        "norm_k",
        "in cudaGraphLaunch launch #0 is 50.0% slower",
    );

    let renamed_trace = write_json(
        &dir,
        "renamed.json",
        &renamed(&trace, "norm_k", "norm_k_v2"),
    );
    let gate = check(&base, &renamed_trace, &[]);
    assert_one_kernel_selection(&gate, "norm_k", "norm_k_v2");
    assert_eq!(gate.report["outcome"], "pass");
    // The renamed kernel's own rows (norm_k missing, norm_k_v2 new) left the
    // lists for the graph's finding; a note says so, counting them.
    let notes = gate.report["workloads"][0]["notes"].to_string();
    assert!(
        notes.contains("its 1 new, 1 missing and 0 re-paired row(s) are part of that"),
        "{notes}"
    );
    // Slowing a kernel changes no row's kernels: no such note.
    let notes = check(&base, &slow, &[]).report["workloads"][0]["notes"].to_string();
    assert!(!notes.contains("re-paired row(s)"), "{notes}");

    let empty = write_json(&dir, "empty.json", &without_replayed_work(&trace));
    let gate = check(&base, &empty, &[]);
    assert_eq!(gate.code, 1, "{}", gate.stdout);
    assert_eq!(gate.report["outcome"], "inconclusive");
    let integrity = gate.kinds("integrity");
    assert_eq!(integrity.len(), 1);
    let message = integrity[0]["message"].as_str().expect("message");
    assert!(
        message.contains("8 graph launch(es) of the candidate recorded no GPU work"),
        "{message}"
    );
    assert!(
        gate.stdout.starts_with("❔ tracegate: inconclusive"),
        "{}",
        gate.stdout
    );
}

#[test]
fn an_inconclusive_verdict_passes_when_the_policy_only_warns() {
    let dir = TempDir::new().expect("tempdir");
    let trace = small_graph_trace();
    let base = write_json(&dir, "base.json", &trace);
    let empty = write_json(&dir, "empty.json", &without_replayed_work(&trace));
    let policy = dir.path().join("policy.yaml");
    std::fs::write(&policy, "version: 1\nintegrity:\n  on_inconclusive: warn\n").expect("write");
    let gate = check(&base, &empty, &["--policy".as_ref(), policy.as_os_str()]);
    assert_eq!(gate.code, 0, "{}", gate.stdout);
    assert_eq!(gate.report["outcome"], "pass");
    assert_eq!(gate.findings()[0]["kind"], "integrity");
    assert_eq!(gate.findings()[0]["severity"], "warn");
}

#[test]
fn a_capture_trace_beside_a_workload_in_a_directory_is_used() {
    let dir = TempDir::new().expect("tempdir");
    let (base, cand) = (dir.path().join("base"), dir.path().join("cand"));
    for side in [&base, &cand] {
        std::fs::create_dir(side).expect("mkdir");
    }
    let trace = small_graph_trace().to_string();
    let capture = json!({"traceEvents": [
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamBeginCapture", "pid": 1, "tid": 1, "ts": 0, "dur": 1},
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 20,
         "args": {"Input Dims": [[8, 8], [8, 8]], "Input type": ["float", "float"]}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 15, "dur": 2,
         "args": {"kernel": "gemm_k"}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamEndCapture", "pid": 1, "tid": 1, "ts": 100, "dur": 1}
    ]})
    .to_string();
    for side in [&base, &cand] {
        std::fs::write(side.join("w.json"), &trace).expect("write");
        std::fs::write(side.join("w.capture.json"), &capture).expect("write");
    }
    let gate = check(&base, &cand, &[]);
    assert_pass_without_findings(&gate, "directories with capture traces");
    // The first gemm_k of each replay is the captured aten::mm; the second
    // and norm_k matched no captured launch and stay kernel rows.
    let snapshot = dir.path().join("w.snap.json.gz");
    tracegate()
        .args(["snapshot", "--quiet", "-o"])
        .arg(&snapshot)
        .arg(base.join("w.json"))
        .arg("--capture")
        .arg(base.join("w.capture.json"))
        .assert()
        .success();
    let snapshot = read_json(&snapshot);
    // 1.4: gemm_k runs in two rows, a kernel family.
    assert_eq!(snapshot["version"], json!({"major": 1, "minor": 4}));
    assert_eq!(snapshot["kernel_families"][0]["name"], "gemm_k");
    let names: Vec<&str> = snapshot["ops"]
        .as_array()
        .expect("ops")
        .iter()
        .map(|op| op["name"].as_str().expect("name"))
        .collect();
    assert!(names.contains(&"aten::mm"), "{names:?}");
    assert!(names.contains(&"norm_k"), "{names:?}");
    assert!(names.contains(&"graph replay"), "{names:?}");
}

// ------------------------------------------------------------------ H200 traces

/// How many kernels, copies and sets the graph launches of a trace replayed
/// (GPU work sharing a correlation id with a `…GraphLaunch` call).
fn graph_work_items(trace: &Value) -> usize {
    let events = trace["traceEvents"].as_array().expect("events");
    let launches: Vec<&Value> = events
        .iter()
        .filter(|e| matches!(e["cat"].as_str(), Some("cuda_runtime" | "cuda_driver")))
        .filter(|e| {
            e["name"]
                .as_str()
                .is_some_and(|n| n.contains("GraphLaunch"))
        })
        .map(|e| &e["args"]["correlation"])
        .collect();
    events
        .iter()
        .filter(|e| is_gpu_work(e) && launches.contains(&&e["args"]["correlation"]))
        .count()
}

/// The CUDA-graph runs of tests/fixtures/h200 merged with their capture
/// traces: every replayed kernel is attributed, BERT's included, whose
/// captures hold a memset the replays show no work for.
#[test]
fn h200_graph_replays_merge_fully_with_their_captures() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/h200");
    for model in ["bert", "llama"] {
        for task in ["infer", "train"] {
            let trace = dir.join(format!("{model}-{task}-graph-run1.json.gz"));
            let capture = dir.join(format!("{model}-{task}-graph_capture-run1.json.gz"));
            let replayed = graph_work_items(&read_json(&trace));
            assert!(replayed > 0, "{model}-{task}: no replayed work");
            let report = report(&trace, Some(&capture));
            let replay = &report["graph_replay"];
            let merge = &replay["capture"];
            assert_eq!(replay["work_items"], replayed, "{model}-{task}");
            assert_eq!(merge["unmatched"], 0, "{model}-{task}: {}", merge["notes"]);
            assert_eq!(
                merge["matched"], replayed,
                "{model}-{task}: {}",
                merge["notes"]
            );
        }
    }
}

// ------------------------------------------------------------------ corpus

#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
#[test]
fn graph_rows_hold_nearly_all_gpu_time_of_the_inference_traces() {
    let vllm = inference(VLLM, VLLM_TRACE);
    for (workload, trace, capture) in [
        (VLLM, vllm, VLLM_CAPTURE),
        (SGLANG, inference(SGLANG, SGLANG_TRACE), SGLANG_CAPTURE),
    ] {
        let capture = inference(workload, capture);
        for with_capture in [None, Some(capture.as_path())] {
            let report = report(&trace, with_capture);
            let share = rows_share(&report);
            assert!(share >= 95.0, "{workload} {with_capture:?}: {share:.1}%");
            // Each replayed kernel is in exactly one row: graph rows add up
            // to the replay's kernel time.
            let replay = &report["graph_replay"];
            let graph_rows: f64 = report["unique_args"]
                .as_array()
                .expect("rows")
                .iter()
                .filter(|r| r["graph"].is_object())
                .map(|r| r["direct"]["sum"].as_f64().expect("sum"))
                .sum();
            let busy = replay["busy_us"].as_f64().expect("busy");
            assert!(
                relative_difference(graph_rows, busy) < 1e-9,
                "{workload}: {graph_rows} vs {busy}"
            );
            if with_capture.is_some() {
                assert_eq!(replay["capture"]["unmatched"], 0, "{workload}");
            }
        }
    }
}

/// The merged rows against TraceLens's inference report (ops_unique_args.csv):
/// every TraceLens row of a graph-replayed op has a row of ours with its
/// name, shapes, count and kernel time. Differences are in docs/TRACELENS.md.
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
#[test]
fn merged_rows_match_tracelens_inference_report() {
    let corpus = corpus_dir();
    for (workload, trace, capture) in [
        (VLLM, VLLM_TRACE, VLLM_CAPTURE),
        (SGLANG, SGLANG_TRACE, SGLANG_CAPTURE),
    ] {
        let dir = corpus.join(workload);
        let report = report(&dir.join(trace), Some(&dir.join(capture)));
        let ours = report["unique_args"].as_array().expect("rows");
        let oracle = Csv::read(&dir.join("perf_csvs/ops_unique_args.csv"));
        let (name, dims, count, sum) = (
            oracle.column("name"),
            oracle.column("Input Dims"),
            oracle.column("operation_count"),
            oracle.column("total_direct_kernel_time_sum"),
        );
        let mut compared = 0;
        for row in &oracle.rows {
            // TraceLens's rows for kernels launched outside any op are
            // named after the launch call; ours leaves them out (coverage).
            if row[name].starts_with("hip") {
                continue;
            }
            let expected_sum: f64 = row[sum].parse().expect("number");
            let found = ours.iter().any(|r| {
                tracelens_name(r["name"].as_str().expect("name")) == row[name]
                    && r["input_dims"] == row[dims].as_str()
                    && r["direct"]["count"].as_u64() == row[count].parse().ok()
                    && relative_difference(r["direct"]["sum"].as_f64().expect("sum"), expected_sum)
                        < 1e-6
            });
            assert!(
                found,
                "{workload}: no row like {} {} ×{}",
                row[name], row[dims], row[count]
            );
            compared += 1;
        }
        assert!(compared >= 20, "{workload}: {compared}");
    }
}

/// TraceLens drops the registration number SGLang's profiler appends to
/// its wrapper ops (`sglang_profiler::attention_…_ragged_100`).
fn tracelens_name(name: &str) -> &str {
    match name.rsplit_once('_') {
        Some((stem, number))
            if name.starts_with("sglang_profiler::")
                && !number.is_empty()
                && number.bytes().all(|b| b.is_ascii_digit()) =>
        {
            stem
        }
        _ => name,
    }
}

#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
#[test]
fn vllm_gate_names_a_slower_kernel_in_the_graph_and_one_rename() {
    let base = inference(VLLM, VLLM_TRACE);
    let capture = inference(VLLM, VLLM_CAPTURE);
    let trace = read_json(&base);
    let dir = TempDir::new().expect("tempdir");
    assert_pass_without_findings(&check(&base, &base, &[]), "identical");
    assert_pass_without_findings(
        &check(&base, &base, &captures(&capture, &capture)),
        "identical, with capture",
    );

    let kernel = "kernel_unified_attention_3d";
    let slow = write_json(&dir, "slow.json", &slowed(&trace, kernel, 1.5));
    let gate = check(&base, &slow, &[]);
    assert_regression_first(&gate, kernel, "is 50.0% slower");
    let impact = gate.findings()[0]["impact_percent"]
        .as_f64()
        .expect("impact");
    assert!((2.2..2.4).contains(&impact), "{impact}");
    // With the capture trace the row is the attention op, and the finding
    // names the kernel that slowed.
    let gate = check(&base, &slow, &captures(&capture, &capture));
    assert_regression_first(
        &gate,
        "vllm::unified_attention_with_output",
        &format!("mostly {kernel} (+50.0%)"),
    );

    let renamed_trace = write_json(
        &dir,
        "renamed.json",
        &renamed(&trace, kernel, "attention_3d_v2"),
    );
    assert_one_kernel_selection(
        &check(&base, &renamed_trace, &[]),
        kernel,
        "attention_3d_v2",
    );
    assert_one_kernel_selection(
        &check(&base, &renamed_trace, &captures(&capture, &capture)),
        kernel,
        "attention_3d_v2",
    );
}

#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
#[test]
fn sglang_gate_names_a_slower_kernel_in_the_graph_and_one_rename() {
    let base = inference(SGLANG, SGLANG_TRACE);
    let capture = inference(SGLANG, SGLANG_CAPTURE);
    let trace = read_json(&base);
    let dir = TempDir::new().expect("tempdir");
    assert_pass_without_findings(&check(&base, &base, &[]), "identical");

    let slow = write_json(&dir, "slow.json", &slowed(&trace, ROTARY, 1.5));
    assert_regression_first(&check(&base, &slow, &[]), ROTARY, "is 50.0% slower");
    assert_regression_first(
        &check(&base, &slow, &captures(&capture, &capture)),
        "sgl_kernel::rotary_embedding",
        "is 50.0% slower",
    );

    let renamed_trace = write_json(&dir, "renamed.json", &renamed(&trace, ROTARY, "rotary_v2"));
    assert_one_kernel_selection(&check(&base, &renamed_trace, &[]), ROTARY, "rotary_v2");
}

#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
#[test]
fn vllm_trace_without_its_replayed_kernels_is_inconclusive() {
    let base = inference(VLLM, VLLM_TRACE);
    let dir = TempDir::new().expect("tempdir");
    let empty = write_json(
        &dir,
        "empty.json",
        &without_replayed_work(&read_json(&base)),
    );
    let gate = check(&base, &empty, &[]);
    assert_eq!(gate.code, 1, "{}", gate.stdout);
    assert_eq!(gate.report["outcome"], "inconclusive");
    // Minor 1 added the inconclusive outcome; later minors keep it.
    assert_eq!(
        gate.report["schema_minor"],
        tracegate::gate::verdict::VERDICT_SCHEMA_MINOR
    );
    let first = &gate.findings()[0];
    assert_eq!(first["kind"], "integrity");
    let message = first["message"].as_str().expect("message");
    assert!(
        message.contains("1 graph launch(es) of the candidate recorded no GPU work"),
        "{message}"
    );
    assert!(message.contains("3.1% of the other side's"), "{message}");
}

/// The perf table of each inference trace merged with its capture folder
/// (as TraceLens's inference report is made: `execution_details.json`
/// picks the capture) against TraceLens's `unified_perf_summary.csv`: every
/// row both model has the same GFLOPs and bytes (1e-4), MoE pseudo-op rows
/// (vLLM's GPT-OSS `moe_triton_unfused_up`/`_down`) included, the table
/// covers as much GPU time as TraceLens's does, or 95%, its modelled rows
/// at least the given share of it (vLLM: 27% before MoE had a model, 92.7%
/// since), and that share is within 2 points of TraceLens's (rows with
/// GFLOPS).
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
#[test]
fn replayed_perf_rows_match_tracelens_models_and_cover_gpu_time() {
    let corpus = corpus_dir();
    for (workload, trace, capture, least, moe_rows, least_modelled) in [
        (VLLM, VLLM_TRACE, VLLM_CAPTURE, 10, 2, 0.92),
        (SGLANG, SGLANG_TRACE, SGLANG_CAPTURE, 20, 0, 0.99),
    ] {
        let dir = corpus.join(workload);
        let report = report(&dir.join(trace), Some(&dir.join("capture_traces")));
        let chosen = &report["graph_replay"]["capture"]["chosen"][0];
        assert!(
            chosen
                .as_str()
                .is_some_and(|c| c.contains(capture)
                    && c.ends_with("batch 32 FULL, for 1 step(s) of batch 32")),
            "{workload}: {chosen}"
        );
        let ours = report["perf"]["rows"].as_array().expect("perf rows");
        let oracle = Csv::read(&dir.join("perf_csvs/unified_perf_summary.csv"));
        let column = |name: &str| oracle.column(name);
        let (name, dims, count, sum, gflops, mb) = (
            column("name"),
            column("Input Dims"),
            column("operation_count"),
            column("Kernel Time (µs)_sum"),
            column("GFLOPS"),
            column("Data Moved (MB)"),
        );
        let mut compared = 0;
        let mut compared_moe = 0;
        for row in &oracle.rows {
            let (Ok(their_gflops), Ok(their_mb)) =
                (row[gflops].parse::<f64>(), row[mb].parse::<f64>())
            else {
                continue;
            };
            let expected_sum: f64 = row[sum].parse().expect("number");
            let Some(mine) = ours.iter().find(|r| {
                tracelens_name(r["name"].as_str().expect("name")) == row[name]
                    && r["input_dims"].as_str() == Some(row[dims].as_str())
                    && r["count"].as_u64() == row[count].parse().ok()
                    && relative_difference(
                        r["kernel_time_us"]["sum"].as_f64().expect("sum"),
                        expected_sum,
                    ) < 1e-6
            }) else {
                continue;
            };
            if mine["has_perf_model"] != true {
                continue;
            }
            let my_gflops = mine["gflops"].as_f64().expect("gflops");
            let my_mb = mine["data_moved_mb"].as_f64().expect("bytes");
            // Deliberate (docs/PERF_MODELS.md): TraceLens gives a Triton
            // kernel's `float` (fp32) tensors 0 bytes; tracegate sizes them.
            let types = row[column("Input type")].as_str();
            if row[name].starts_with("triton_") && types.contains("'float'") {
                assert!(
                    my_mb > their_mb,
                    "{workload} {}: fp32 bytes counted",
                    row[name]
                );
                continue;
            }
            assert!(
                relative_difference(my_gflops, their_gflops) < 1e-4,
                "{workload} {} {}: GFLOPs {my_gflops} vs {their_gflops}",
                row[name],
                row[dims]
            );
            assert!(
                relative_difference(my_mb, their_mb) < 1e-4,
                "{workload} {} {}: MB {my_mb} vs {their_mb}",
                row[name],
                row[dims]
            );
            compared += 1;
            if row[name].starts_with("pseudo_op::moe_triton_unfused_") {
                compared_moe += 1;
            }
        }
        assert!(compared >= least, "{workload}: {compared} rows compared");
        assert_eq!(compared_moe, moe_rows, "{workload}: MoE rows compared");
        // Coverage: the table's kernel time over the GPU's busy time.
        let busy = report["timeline"]["busy_time"].as_f64().expect("busy");
        let covered: f64 = ours
            .iter()
            .map(|r| r["kernel_time_us"]["sum"].as_f64().expect("sum"))
            .sum();
        let timeline = Csv::read(&dir.join("perf_csvs/gpu_timeline.csv"));
        let their_busy_ms: f64 = timeline
            .rows
            .iter()
            .find(|r| r[timeline.column("type")] == "busy_time")
            .map(|r| r[timeline.column("time ms")].parse().expect("number"))
            .expect("busy_time");
        let theirs: f64 = oracle
            .rows
            .iter()
            .map(|r| r[sum].parse::<f64>().expect("number"))
            .sum::<f64>()
            / (their_busy_ms * 1000.0);
        let share = covered / busy;
        assert!(
            share >= theirs.min(0.95),
            "{workload}: the perf table covers {:.1}% of GPU time, TraceLens's {:.1}%",
            share * 100.0,
            theirs * 100.0
        );
        let modelled: f64 = ours
            .iter()
            .filter(|r| r["has_perf_model"] == true)
            .map(|r| r["kernel_time_us"]["sum"].as_f64().expect("sum"))
            .sum();
        assert!(
            modelled / busy >= least_modelled,
            "{workload}: modelled rows hold {:.1}% of GPU time",
            modelled / busy * 100.0
        );
        let their_modelled: f64 = oracle
            .rows
            .iter()
            .filter(|r| r[gflops].parse::<f64>().is_ok())
            .map(|r| r[sum].parse::<f64>().expect("number"))
            .sum::<f64>()
            / (their_busy_ms * 1000.0);
        assert!(
            (modelled / busy - their_modelled).abs() <= 0.02,
            "{workload}: modelled rows hold {:.1}% of GPU time, TraceLens's {:.1}%",
            modelled / busy * 100.0,
            their_modelled * 100.0
        );
    }
}

// ------------------------------------------------------------------ vLLM piecewise

/// A file of the vLLM piecewise fixture: twelve decode steps (eight of
/// batch 12, four of batch 30), each three graph pieces with eager
/// attention between them, and `capture_traces/` listing PIECEWISE captures
/// of batch 8, 16 and 32 and a FULL one of batch 16 in its
/// `execution_details.json`. Every capture runs the same kernels: only the
/// batch size and the mode tell them apart.
fn piecewise(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/vllm_piecewise")
        .join(file)
}

/// The capture rows of a report: (graph, name, input dims).
fn captured_rows(report: &Value) -> Vec<(String, String, String)> {
    report["unique_args"]
        .as_array()
        .expect("rows")
        .iter()
        .filter(|r| r["graph"].is_object())
        .map(|r| {
            (
                r["graph"]["graph"].as_str().expect("graph").to_string(),
                r["name"].as_str().expect("name").to_string(),
                r["input_dims"].as_str().expect("dims").to_string(),
            )
        })
        .collect()
}

/// Every replayed kernel is attributed to a captured op whose shapes have
/// the batch size of the capture its step chose.
fn assert_attached_by_batch(report: &Value) {
    let capture = &report["graph_replay"]["capture"];
    assert_eq!(capture["unmatched"], 0, "{capture:#}");
    let rows = captured_rows(report);
    let graph_rows: Vec<_> = rows.iter().filter(|r| r.1 != "graph replay").collect();
    assert_eq!(graph_rows.len(), 2 * 10, "{rows:#?}");
    for (graph, name, dims) in graph_rows {
        assert!(!name.starts_with("Cijk_"), "{name}: a kernel row");
        let batch = graph.rsplit(' ').next().expect("batch");
        assert!(graph.starts_with("PIECEWISE graph #"), "{graph}");
        assert!(
            dims.starts_with(&format!("(({batch}, ")),
            "{graph} {name} {dims}"
        );
    }
}

#[test]
fn a_piecewise_capture_folder_attaches_each_steps_capture_by_batch_size_and_mode() {
    let trace = piecewise("trace.json");
    let report = report(&trace, Some(&piecewise("capture_traces")));
    assert_attached_by_batch(&report);
    let chosen: Vec<&str> = report["graph_replay"]["capture"]["chosen"]
        .as_array()
        .expect("chosen")
        .iter()
        .map(|c| c.as_str().expect("line"))
        .collect();
    assert_eq!(chosen.len(), 2, "{chosen:?}");
    assert!(
        chosen[0].ends_with("piecewise_bs16.json: batch 16 PIECEWISE, for 8 step(s) of batch 12")
    );
    assert!(
        chosen[1].ends_with("piecewise_bs32.json: batch 32 PIECEWISE, for 4 step(s) of batch 30")
    );

    // Without execution_details.json each capture is classified as
    // TraceLens classifies it (three captures: PIECEWISE; the most common
    // first input dimension: its batch size), with the same outcome.
    let dir = TempDir::new().expect("tempdir");
    for name in [
        "piecewise_bs8.json",
        "piecewise_bs16.json",
        "piecewise_bs32.json",
        "full_bs16.json",
    ] {
        std::fs::copy(
            piecewise(&format!("capture_traces/{name}")),
            dir.path().join(name),
        )
        .expect("copy");
    }
    assert_attached_by_batch(&super::graph::report(&trace, Some(dir.path())));

    // The eager attention between the pieces is modelled with the step's
    // annotation: one row per batch, the larger batch reading more.
    let attention: Vec<&Value> = report["perf"]["rows"]
        .as_array()
        .expect("perf rows")
        .iter()
        .filter(|r| r["name"] == "vllm::unified_attention_with_output")
        .collect();
    assert_eq!(attention.len(), 2);
    assert!(
        attention.iter().all(|r| r["has_perf_model"] == true),
        "{attention:#?}"
    );
    let bytes = |r: &Value| r["data_moved_mb"].as_f64().expect("bytes");
    let (small, large) = if attention[0]["count"] == 16 {
        (attention[0], attention[1])
    } else {
        (attention[1], attention[0])
    };
    assert!(bytes(large) > bytes(small), "{attention:#?}");
}

#[test]
fn a_slower_captured_op_in_a_piecewise_graph_fails_named_by_its_op() {
    let base = piecewise("trace.json");
    let folder = piecewise("capture_traces");
    let dir = TempDir::new().expect("tempdir");
    assert_pass_without_findings(
        &check(&base, &base, &captures(&folder, &folder)),
        "identical, with the capture folder",
    );
    let slow = write_json(
        &dir,
        "slow.json",
        &slowed(&read_json(&base), "Cijk_gemm_up", 1.3),
    );
    let gate = check(&base, &slow, &captures(&folder, &folder));
    assert_regression_first(&gate, "aten::mm", "30.0% slower");
    let first = &gate.findings()[0];
    assert_eq!(
        first["op"]["input_dims"], "((16, 512), (512, 2048))",
        "{first:#}"
    );

    // Directories: the folder `NAME.capture/` beside workload `NAME`.
    let (base_dir, cand_dir) = (dir.path().join("base"), dir.path().join("cand"));
    for (side, trace) in [(&base_dir, &base), (&cand_dir, &slow)] {
        let folder_copy = side.join("decode.capture");
        std::fs::create_dir_all(&folder_copy).expect("mkdir");
        std::fs::copy(trace, side.join("decode.json")).expect("copy");
        for entry in std::fs::read_dir(&folder).expect("fixture folder") {
            let path = entry.expect("entry").path();
            std::fs::copy(&path, folder_copy.join(path.file_name().expect("name"))).expect("copy");
        }
    }
    let gate = check(&base_dir, &cand_dir, &[]);
    assert_regression_first(&gate, "aten::mm", "30.0% slower");
    assert_eq!(
        gate.findings()[0]["op"]["input_dims"],
        "((16, 512), (512, 2048))"
    );
}

#[test]
fn a_capture_folder_without_traces_or_with_unreadable_details_is_a_one_line_error() {
    let dir = TempDir::new().expect("tempdir");
    let trace = piecewise("trace.json");
    let run = |folder: &Path| {
        tracegate()
            .args(["report", "--quiet", "--format", "json"])
            .arg(&trace)
            .arg("--capture")
            .arg(folder)
            .assert()
    };
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).expect("mkdir");
    assert_input_error(
        run(&empty),
        &["empty", "no .json or .json.gz capture traces"],
    );
    let bad = dir.path().join("bad");
    std::fs::create_dir(&bad).expect("mkdir");
    std::fs::write(bad.join("execution_details.json"), "{\"file\": 3}").expect("write");
    assert_input_error(run(&bad), &["execution_details.json", "expected a list"]);
}
