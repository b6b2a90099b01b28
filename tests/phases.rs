//! Prefill / decode end to end: inference steps recognised from their
//! annotations and tagged by phase (`report`), recorded in the snapshot,
//! and compared phase with phase (`check`), each op within its phase too.
//! The corpus traces are decode only; `tests/fixtures/inference_phases.json`
//! is one prefill step and four decode steps (vLLM's annotation) for the
//! split itself. With the step
//! annotations stripped, the steps come from the repeating structure.

use std::path::{Path, PathBuf};

use serde_json::Value;
use tempfile::TempDir;

use crate::graph::{
    SGLANG, SGLANG_TRACE, VLLM, VLLM_TRACE, check, inference, read_json, report, write_json,
};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/inference_phases.json")
}

/// `trace` without its step annotations (vLLM's and SGLang's).
fn without_step_annotations(trace: &Value) -> Value {
    let mut trace = trace.clone();
    trace["traceEvents"]
        .as_array_mut()
        .expect("events")
        .retain(|e| {
            let name = e["name"].as_str().unwrap_or("");
            !(e["cat"] == "user_annotation"
                && (name.starts_with("execute_") || name.starts_with("step[")))
        });
    trace
}

/// The report of `trace` written to `dir`.
fn report_of(dir: &TempDir, trace: &Value) -> Value {
    report(&write_json(dir, "trace.json", trace), None)
}

/// `(phase, steps)` of a report's phase summaries.
fn phase_steps(report: &Value) -> Vec<(String, u64)> {
    report["phases"]["summaries"]
        .as_array()
        .expect("summaries")
        .iter()
        .map(|s| {
            (
                s["phase"].as_str().expect("phase").to_string(),
                s["steps"].as_u64().expect("steps"),
            )
        })
        .collect()
}

/// The fixture with every kernel of the steps of `phase` (by annotation
/// text) `factor`× as long; later kernels of the step move by the added time.
fn slowed_phase(trace: &Value, prefill: bool, factor: f64) -> Value {
    let mut trace = trace.clone();
    let events = trace["traceEvents"].as_array_mut().expect("events");
    let steps: Vec<(f64, f64)> = events
        .iter()
        .filter(|e| e["cat"] == "user_annotation")
        .filter(|e| e["name"].as_str().expect("name").contains("_context_0(") != prefill)
        .map(|e| {
            let ts = e["ts"].as_f64().expect("ts");
            (ts, ts + e["dur"].as_f64().expect("dur"))
        })
        .collect();
    for (start, end) in steps {
        let mut shift = 0.0;
        for event in events.iter_mut().filter(|e| {
            let ts = e["ts"].as_f64().unwrap_or(-1.0);
            e["cat"] == "kernel" && ts >= start && ts < end
        }) {
            let dur = event["dur"].as_f64().expect("dur");
            event["ts"] = (event["ts"].as_f64().expect("ts") + shift).into();
            event["dur"] = (dur * factor).into();
            shift += dur * (factor - 1.0);
        }
    }
    trace
}

#[test]
fn the_fixture_has_one_prefill_and_four_decode_steps_with_their_ops() {
    let report = report(&fixture(), None);
    assert_eq!(report["phases"]["recognised_by"], "vllm annotation");
    assert_eq!(
        phase_steps(&report),
        vec![("prefill".to_string(), 1), ("decode".to_string(), 4)]
    );
    let summaries = report["phases"]["summaries"].as_array().expect("summaries");
    assert_eq!(summaries[0]["gpu_time_us"], 900.0);
    assert_eq!(summaries[1]["gpu_time_per_step_us"], 140.0);
    let decode_ops: Vec<(&str, u64)> = summaries[1]["ops"]
        .as_array()
        .expect("ops")
        .iter()
        .map(|o| {
            (
                o["name"].as_str().expect("name"),
                o["work_items"].as_u64().expect("n"),
            )
        })
        .collect();
    assert_eq!(decode_ops, vec![("aten::mm", 4), ("aten::mul", 4)]);
}

#[test]
fn without_annotations_the_repeating_forward_gives_the_same_steps_and_phases() {
    let dir = TempDir::new().expect("tempdir");
    let annotated = report(&fixture(), None);
    let inferred = report_of(&dir, &without_step_annotations(&read_json(&fixture())));
    assert_eq!(
        inferred["phases"]["recognised_by"],
        "repeating structure: 5 forwards of 3 ops"
    );
    assert_eq!(phase_steps(&inferred), phase_steps(&annotated));
    // Same work per step, so the same figures and ops per phase.
    assert_eq!(
        inferred["phases"]["summaries"],
        annotated["phases"]["summaries"]
    );
    let phases = |report: &Value| -> Vec<Value> {
        let steps = report["phases"]["steps"].as_array().expect("steps");
        steps.iter().map(|s| s["phase"].clone()).collect()
    };
    assert_eq!(phases(&inferred), phases(&annotated));
}

#[test]
fn without_annotations_a_trace_that_does_not_repeat_has_no_phases() {
    let dir = TempDir::new().expect("tempdir");
    let mut trace = without_step_annotations(&read_json(&fixture()));
    // The last step loses its `aten::mul`: no longer whole repeats.
    let events = trace["traceEvents"].as_array_mut().expect("events");
    let last_mul = events
        .iter()
        .rposition(|e| e["name"] == "aten::mul")
        .expect("a mul");
    events.remove(last_mul);
    assert!(report_of(&dir, &trace)["phases"].is_null());
    // Nor does a repeating forward whose attention shapes do not tell.
    let mut untold = without_step_annotations(&read_json(&fixture()));
    untold["traceEvents"]
        .as_array_mut()
        .expect("events")
        .retain(|e| e["name"] != "aten::scaled_dot_product_attention");
    assert!(report_of(&dir, &untold)["phases"].is_null());
}

#[test]
fn slower_prefill_fails_naming_prefill_while_decode_is_unchanged() {
    let dir = TempDir::new().expect("tempdir");
    let trace = read_json(&fixture());
    let candidate = write_json(
        &dir,
        "inference_phases.json",
        &slowed_phase(&trace, true, 1.3),
    );
    let gate = check(&fixture(), &candidate, &[]);
    assert_eq!(gate.code, 1, "{}", gate.stdout);
    let prefill: Vec<&Value> = gate
        .findings()
        .iter()
        .filter(|f| f["metric"] == "prefill GPU time per step")
        .collect();
    assert_eq!(prefill.len(), 1, "{}", gate.stdout);
    assert_eq!(prefill[0]["severity"], "fail");
    let delta = prefill[0]["delta_percent"].as_f64().expect("delta");
    assert!((delta - 30.0).abs() < 0.01, "{delta}");
    assert!(
        gate.findings()
            .iter()
            .all(|f| f["metric"] != "decode GPU time per step"),
        "{}",
        gate.stdout
    );
    assert!(
        gate.stdout.contains("prefill GPU time per step"),
        "{}",
        gate.stdout
    );
}

#[test]
fn a_phase_on_one_side_only_is_a_note() {
    let dir = TempDir::new().expect("tempdir");
    let mut decode_only = read_json(&fixture());
    decode_only["traceEvents"]
        .as_array_mut()
        .expect("events")
        .retain(|e| {
            !e["name"]
                .as_str()
                .is_some_and(|n| n.contains("_context_1("))
        });
    let candidate = write_json(&dir, "inference_phases.json", &decode_only);
    let gate = check(&fixture(), &candidate, &[]);
    assert!(
        gate.findings()
            .iter()
            .all(|f| !f["metric"].as_str().unwrap_or("").contains("per step")),
        "{}",
        gate.stdout
    );
    let notes = gate.report.to_string();
    assert!(
        notes.contains("the baseline ran prefill steps and the candidate none"),
        "{notes}"
    );
}

#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
#[test]
fn the_corpus_inference_traces_are_one_decode_step_each() {
    let vllm = report(&inference(VLLM, VLLM_TRACE), None);
    assert_eq!(vllm["phases"]["recognised_by"], "vllm annotation");
    assert_eq!(phase_steps(&vllm), vec![("decode".to_string(), 1)]);
    // The step holds the graph replay: its GPU time is the trace's busy time.
    let step = &vllm["phases"]["steps"][0];
    assert_eq!(step["gpu_time_us"], vllm["timeline"]["busy_time"]);
    let sglang = report(&inference(SGLANG, SGLANG_TRACE), None);
    assert_eq!(
        sglang["phases"]["recognised_by"],
        "vllm annotation, sglang annotation"
    );
    assert_eq!(phase_steps(&sglang), vec![("decode".to_string(), 1)]);
}

#[test]
fn an_op_slower_in_decode_only_is_named_with_its_phase() {
    let dir = TempDir::new().expect("tempdir");
    let mut trace = read_json(&fixture());
    // aten::mul's kernel ×1.3 in the decode steps (launched at ≥ 1000 µs),
    // the prefill step's untouched.
    for event in trace["traceEvents"]
        .as_array_mut()
        .expect("events")
        .iter_mut()
        .filter(|e| {
            e["cat"] == "kernel"
                && e["name"] == "vectorized_elementwise_kernel"
                && e["ts"].as_f64().is_some_and(|ts| ts >= 1000.0)
        })
    {
        let dur = event["dur"].as_f64().expect("dur");
        event["dur"] = (dur * 1.3).into();
    }
    let candidate = write_json(&dir, "inference_phases.json", &trace);
    let gate = check(&fixture(), &candidate, &[]);
    assert_eq!(gate.code, 1, "{}", gate.stdout);
    let in_decode: Vec<&Value> = gate
        .findings()
        .iter()
        .filter(|f| f["metric"] == "op time per decode step")
        .collect();
    assert_eq!(in_decode.len(), 1, "{}", gate.stdout);
    assert_eq!(in_decode[0]["op"]["name"], "aten::mul");
    assert_eq!(in_decode[0]["severity"], "fail");
    let message = in_decode[0]["message"].as_str().expect("message");
    assert!(
        message.starts_with("aten::mul in decode steps is 30.0% slower per decode step"),
        "{message}"
    );
    assert!(
        gate.findings()
            .iter()
            .all(|f| f["metric"] != "op time per prefill step"),
        "{}",
        gate.stdout
    );
    // The trace against itself: no per-phase finding.
    let itself = check(&fixture(), &fixture(), &[]);
    assert_eq!(itself.code, 0, "{}", itself.stdout);
    assert!(
        itself.findings().iter().all(|f| !f["metric"]
            .as_str()
            .unwrap_or("")
            .starts_with("op time per")),
        "{}",
        itself.stdout
    );
}

#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
#[test]
fn the_corpus_inference_traces_without_annotations_are_one_graph_replayed_decode_step() {
    let dir = TempDir::new().expect("tempdir");
    for (workload, file) in [(VLLM, VLLM_TRACE), (SGLANG, SGLANG_TRACE)] {
        let trace = without_step_annotations(&read_json(&inference(workload, file)));
        let report = report_of(&dir, &trace);
        assert_eq!(
            report["phases"]["recognised_by"], "repeating structure: 1 graph replay",
            "{workload}"
        );
        assert_eq!(phase_steps(&report), vec![("decode".to_string(), 1)]);
        let step = &report["phases"]["steps"][0];
        assert_eq!(step["annotation"], "hipGraphLaunch", "{workload}");
        assert!(step["gpu_time_us"].as_f64().expect("gpu time") > 0.0);
        // A graph replay is a decode step only where the engine is named.
        let mut anonymous = trace.clone();
        anonymous["traceEvents"]
            .as_array_mut()
            .expect("events")
            .retain(|e| {
                let name = e["name"].as_str().unwrap_or("");
                !(name.contains("vllm") || name.contains("sglang"))
            });
        assert!(
            report_of(&dir, &anonymous)["phases"].is_null(),
            "{workload}"
        );
    }
}
