//! Graph replay on hand-made traces: rows with and without a capture trace,
//! attribution, an unmatched kernel counted, and the alignment rules.

use serde_json::{Value, json};

use super::align::align;
use super::capture::Label;
use crate::analysis::analyse::{AnalysisOptions, analyse, analyse_with_capture};
use crate::analysis::graph::Capture;
use crate::analysis::profile::{GraphRole, Profile, UniqueArgs};
use crate::trace::link::link;
use crate::trace::{Trace, load_reader};

fn load(events: Vec<Value>) -> Trace {
    let text = json!({ "traceEvents": events }).to_string();
    load_reader("fixture.json", text.as_bytes(), &mut || {}).expect("valid trace")
}

fn span(cat: &str, name: &str, ts: f64, dur: f64, args: Value) -> Value {
    json!({"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur, "args": args})
}

fn kernel(name: &str, ts: f64, dur: f64, correlation: u64) -> Value {
    json!({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": dur,
           "args": {"correlation": correlation, "stream": 7, "device": 0,
                    "grid": [4, 1, 1], "block": [128, 1, 1]}})
}

/// Two profiler steps, each replaying one graph of four kernels (the last,
/// `mystery_k`, was not captured), and one ordinary op.
fn replay_trace() -> Trace {
    let mut events = Vec::new();
    for (step, base, correlation, scale) in [(1, 0.0, 10, 1.0), (2, 1000.0, 20, 1.5)] {
        events.push(span(
            "user_annotation",
            &format!("ProfilerStep#{step}"),
            base,
            900.0,
            json!({}),
        ));
        events.push(span(
            "cuda_runtime",
            "cudaGraphLaunch",
            base + 100.0,
            10.0,
            json!({"correlation": correlation}),
        ));
        let mut ts = base + 120.0;
        for (name, dur) in [
            ("gemm_a", 10.0),
            ("relu_k", 5.0),
            ("gemm_a", 12.0),
            ("mystery_k", 3.0),
        ] {
            events.push(kernel(name, ts, dur * scale, correlation));
            ts += 20.0;
        }
    }
    events.push(span(
        "cpu_op",
        "aten::add",
        500.0,
        20.0,
        json!({"Input Dims": [[4], [4]], "Input type": ["float", "float"]}),
    ));
    events.push(span(
        "cuda_runtime",
        "cudaLaunchKernel",
        505.0,
        5.0,
        json!({"correlation": 30}),
    ));
    events.push(kernel("add_kernel", 520.0, 2.0, 30));
    load(events)
}

/// The capture of that graph: two matrix multiplies of different shapes
/// and a relu, each launching one kernel named in `args.kernel`.
fn capture_trace() -> Trace {
    let op = |name: &str, ts: f64, dims: Value, kernel: &str| {
        vec![
            span(
                "cpu_op",
                name,
                ts,
                20.0,
                json!({"Input Dims": dims, "Input type": ["float", "float"],
                       "Input Strides": [[64, 1], [64, 1]]}),
            ),
            span(
                "cuda_runtime",
                "cudaLaunchKernel",
                ts + 5.0,
                2.0,
                json!({"kernel": kernel, "correlation": ts as u64}),
            ),
        ]
    };
    let mut events = vec![span(
        "cuda_runtime",
        "cudaStreamBeginCapture",
        0.0,
        1.0,
        json!({}),
    )];
    events.extend(op("aten::mm", 10.0, json!([[64, 64], [64, 64]]), "gemm_a"));
    events.extend(op("aten::relu", 40.0, json!([[64, 64], []]), "relu_k"));
    events.extend(op("aten::mm", 70.0, json!([[32, 64], [64, 64]]), "gemm_a"));
    events.push(span(
        "cuda_runtime",
        "cudaStreamEndCapture",
        100.0,
        1.0,
        json!({}),
    ));
    load(events)
}

/// A capture trace: `events` between a stream capture's begin (at 0) and
/// end (at 100).
fn captured(events: Vec<Value>) -> Trace {
    let mark = |name: &str, ts: f64| span("cuda_runtime", name, ts, 1.0, json!({}));
    let mut all = vec![mark("cudaStreamBeginCapture", 0.0)];
    all.extend(events);
    all.push(mark("cudaStreamEndCapture", 100.0));
    load(all)
}

/// The replay trace analysed with `capture` as its capture trace.
fn merged(trace: &Trace, capture: &Trace) -> Profile {
    let (tree, capture_tree) = (link(trace), link(capture));
    analyse_with_capture(
        trace,
        &tree,
        &AnalysisOptions::default(),
        Some(Capture::new(capture, &capture_tree)),
    )
}

fn with_capture() -> Profile {
    merged(&replay_trace(), &capture_trace())
}

fn row<'a>(profile: &'a Profile, name: &str, dims: &str) -> &'a UniqueArgs {
    profile
        .unique_args
        .iter()
        .find(|r| r.name == name && r.input_dims == dims)
        .unwrap_or_else(|| panic!("no row {name} {dims}"))
}

#[test]
fn without_a_capture_every_replayed_kernel_is_a_row_by_name_and_launch_configuration() {
    let trace = replay_trace();
    let profile = analyse(&trace, &link(&trace));
    let gemm = row(&profile, "gemm_a", "grid [4, 1, 1] block [128, 1, 1]");
    assert_eq!(gemm.samples_us, vec![10.0, 12.0, 15.0, 18.0]);
    assert_eq!(gemm.step_us, vec![(1, 22.0), (2, 33.0)]);
    let place = gemm.graph.as_ref().expect("a graph row");
    assert_eq!(
        (place.graph.as_str(), place.role),
        ("launch #0", GraphRole::Kernel)
    );
    assert_eq!(place.launch, "cudaGraphLaunch");
    assert_eq!(gemm.category.as_str(), "GEMM");
    let relu = row(&profile, "relu_k", "grid [4, 1, 1] block [128, 1, 1]");
    assert_eq!(relu.direct.count, 2);
    // The ordinary op keeps its row; nothing is counted twice.
    assert!(row(&profile, "aten::add", "((4,), (4,))").graph.is_none());
    let replayed: f64 = profile
        .unique_args
        .iter()
        .filter(|r| r.graph.is_some())
        .map(|r| r.direct.sum)
        .sum();
    assert_eq!(replayed, 30.0 + 45.0);
    assert!(profile.coverage.is_complete(), "{:?}", profile.coverage);
    // Steps count the replayed kernels once, like the timeline.
    assert_eq!(profile.steps[0].kernel_time_us, 30.0 + 2.0);
    assert_eq!(profile.steps[0].timeline.busy_time, 30.0 + 2.0);
    let replay = profile.graph_replay.as_ref().expect("graph replay");
    assert_eq!((replay.launches, replay.work_items), (2, 8));
    let graph = &replay.graphs[0];
    assert_eq!(
        graph.kernel_sequence,
        ["gemm_a", "relu_k", "gemm_a", "mystery_k"]
    );
    assert_eq!(graph.samples_us, vec![30.0, 45.0]);
    assert_eq!(graph.graph.as_ref().map(|g| g.role), Some(GraphRole::Graph));
}

#[test]
fn a_capture_trace_attributes_replayed_kernels_to_its_ops_and_counts_the_rest() {
    let profile = with_capture();
    let large = row(&profile, "aten::mm", "((64, 64), (64, 64))");
    assert_eq!(large.samples_us, vec![10.0, 15.0]);
    assert_eq!(large.input_type, "('float', 'float')");
    assert_eq!(large.input_strides, "((64, 1), (64, 1))");
    assert_eq!(large.kernel_sequence, ["gemm_a"]);
    assert_eq!(large.category.as_str(), "GEMM");
    assert_eq!(
        large.model.as_ref().map(|m| m.family.as_str()),
        Some("GEMM")
    );
    let place = large.graph.as_ref().expect("a graph row");
    assert_eq!(place.role, GraphRole::CapturedOp);
    let small = row(&profile, "aten::mm", "((32, 64), (64, 64))");
    assert_eq!(small.samples_us, vec![12.0, 18.0]);
    assert_eq!(
        row(&profile, "aten::relu", "((64, 64), ())").direct.sum,
        12.5
    );
    // The kernel no captured call launched keeps a kernel row, counted.
    let mystery = row(&profile, "mystery_k", "grid [4, 1, 1] block [128, 1, 1]");
    assert_eq!(
        mystery.graph.as_ref().map(|g| g.role),
        Some(GraphRole::Kernel)
    );
    let capture = profile
        .graph_replay
        .as_ref()
        .and_then(|r| r.capture.as_ref())
        .expect("a capture merge");
    assert_eq!(
        (capture.captures, capture.matched, capture.unmatched),
        (1, 6, 2)
    );
    assert_eq!(
        capture.notes,
        [
            "launch #0: 1 of 4 replayed work items matched no captured call (renamed or added since the capture)"
        ]
    );
}

#[test]
fn a_capture_whose_launches_do_not_fit_attaches_nothing() {
    let trace = replay_trace();
    let capture = captured(vec![
        span(
            "cpu_op",
            "aten::mm",
            10.0,
            20.0,
            json!({"Input Dims": [[1, 1], [1, 1]]}),
        ),
        span(
            "cuda_runtime",
            "cudaLaunchKernel",
            15.0,
            2.0,
            json!({"kernel": "other_k"}),
        ),
    ]);
    let profile = merged(&trace, &capture);
    assert!(profile.unique_args.iter().all(|r| r.name != "aten::mm"));
    let merge = profile.graph_replay.and_then(|r| r.capture).expect("merge");
    assert_eq!((merge.matched, merge.unmatched), (0, 8));
    assert_eq!(merge.notes.len(), 1, "{:?}", merge.notes);
}

#[test]
fn graph_launches_without_kernels_make_coverage_incomplete() {
    let trace = load(vec![
        span(
            "cuda_runtime",
            "hipGraphLaunch",
            100.0,
            10.0,
            json!({"correlation": 5}),
        ),
        span("cpu_op", "aten::add", 200.0, 20.0, json!({})),
        span(
            "cuda_runtime",
            "hipLaunchKernel",
            205.0,
            5.0,
            json!({"correlation": 6}),
        ),
        kernel("add_kernel", 220.0, 2.0, 6),
    ]);
    let profile = analyse(&trace, &link(&trace));
    assert_eq!(profile.coverage.graph_launches_without_work, 1);
    assert!(!profile.coverage.is_complete());
    assert_eq!(profile.coverage.in_rows_percent(), 100.0);
    assert_eq!(
        profile
            .graph_replay
            .as_ref()
            .map(|r| r.launches_without_work),
        Some(1)
    );
}

#[test]
fn kineto_graph_ids_name_the_graph_and_driver_launches_count() {
    let mut first = kernel("k", 20.0, 1.0, 3);
    first["args"]["graph id"] = json!(42);
    first["args"]["graph node id"] = json!(7);
    let trace = load(vec![
        span(
            "cuda_driver",
            "cuGraphLaunch",
            10.0,
            5.0,
            json!({"correlation": 3}),
        ),
        first,
    ]);
    let profile = analyse(&trace, &link(&trace));
    let place = profile.unique_args[0].graph.clone().expect("a graph row");
    assert_eq!(
        (place.graph.as_str(), place.launch.as_str()),
        ("graph 42", "cuGraphLaunch")
    );
}

#[test]
fn dropped_records_the_trace_reports_are_kept() {
    let text = json!({
        "traceEvents": [kernel("k", 1.0, 1.0, 1)],
        "WARNING": ["CUPTI: 1234 activity records dropped (buffer full)", "unrelated"],
    })
    .to_string();
    let trace = load_reader("t.json", text.as_bytes(), &mut || {}).expect("valid");
    let profile = analyse(&trace, &link(&trace));
    assert_eq!(
        profile.coverage.dropped,
        ["CUPTI: 1234 activity records dropped (buffer full)"]
    );
    // The kernel has no launch: no busy time to cover, nothing outside rows.
    assert_eq!(profile.coverage.in_rows_percent(), 100.0);
}

fn kernels(names: &[&'static str]) -> Vec<Label<'static>> {
    names.iter().map(|n| Label::Kernel(n)).collect()
}

#[test]
fn alignment_skips_a_renamed_kernel_and_keeps_the_rest() {
    let captured = kernels(&["a", "b", "c", "d"]);
    let replayed: Vec<_> = kernels(&["a", "b2", "c", "d"])
        .into_iter()
        .map(|l| (l, Some(0)))
        .collect();
    let aligned = align(&captured, &replayed);
    assert_eq!(aligned.pairs, vec![Some(0), None, Some(2), Some(3)]);
}

#[test]
fn alignment_across_streams_follows_each_stream_in_order() {
    // Capture order interleaves two streams differently from the replay.
    let captured = kernels(&["x", "y", "x", "z"]);
    let replayed = vec![
        (Label::Kernel("x"), Some(1)),
        (Label::Kernel("x"), Some(1)),
        (Label::Kernel("y"), Some(2)),
        (Label::Kernel("z"), Some(2)),
    ];
    let aligned = align(&captured, &replayed);
    assert_eq!(aligned.pairs, vec![Some(0), Some(2), Some(1), Some(3)]);
}

#[test]
fn unnamed_launches_pair_position_by_position() {
    let replayed = vec![(Label::Kernel("a"), None), (Label::Copy, None)];
    let fits = align(&[Label::UnnamedKernel, Label::Copy], &replayed);
    assert_eq!(fits.pairs, vec![Some(0), Some(1)]);
    assert_eq!(fits.note, None);
}

#[test]
fn unnamed_launches_pair_kernel_by_kernel_past_a_set_the_replay_lacks() {
    // Captured: two launches, a memset, two launches; the replay shows the
    // four kernels only (CUPTI recorded no work for the memset node).
    let captured = [
        Label::UnnamedKernel,
        Label::UnnamedKernel,
        Label::Set,
        Label::UnnamedKernel,
        Label::UnnamedKernel,
    ];
    let replayed: Vec<_> = kernels(&["a", "b", "c", "d"])
        .into_iter()
        .map(|l| (l, Some(7)))
        .collect();
    let aligned = align(&captured, &replayed);
    assert_eq!(aligned.pairs, vec![Some(0), Some(1), Some(3), Some(4)]);
    assert_eq!(aligned.note, None);
    // A copy the replay does show pairs with the captured copy, past the set.
    let captured = [
        Label::UnnamedKernel,
        Label::Set,
        Label::Copy,
        Label::UnnamedKernel,
    ];
    let replayed = vec![
        (Label::Kernel("a"), None),
        (Label::Copy, None),
        (Label::Kernel("b"), None),
    ];
    assert_eq!(
        align(&captured, &replayed).pairs,
        vec![Some(0), Some(2), Some(3)]
    );
}

#[test]
fn unnamed_launches_as_many_as_the_replayed_kernels_or_none_pair() {
    let replayed: Vec<_> = kernels(&["a", "b"])
        .into_iter()
        .map(|l| (l, None))
        .collect();
    for captured in [
        vec![Label::UnnamedKernel, Label::Set],
        vec![
            Label::UnnamedKernel,
            Label::Set,
            Label::UnnamedKernel,
            Label::UnnamedKernel,
        ],
    ] {
        let misfit = align(&captured, &replayed);
        assert_eq!(misfit.pairs, vec![None, None], "{captured:?}");
        let note = misfit.note.expect("a reason");
        assert!(note.contains("do not name their kernels"), "{note}");
        let launches = captured.len() - 1;
        assert!(
            note.contains(&format!("{launches} launches captured, 2 kernels replayed")),
            "{note}"
        );
    }
}

/// A captured `vllm::moe_forward` (top-2 of 8 experts over 4 tokens) whose
/// replayed `matmul_ogs` kernels become TraceLens's pseudo-op rows.
#[test]
fn a_replayed_moe_forward_splits_into_modelled_pseudo_ops() {
    const UP: &str = "_matmul_ogs_NNT_bf16xbf16xmxfp4_swiglu";
    const DOWN: &str = "_matmul_ogs_NNT_bf16xbf16xmxfp4";
    const SCATTER: &str = "_finalize_matmul_scatter_bf16";
    let launch = |ts: f64, kernel: &str| {
        span(
            "cuda_runtime",
            "cudaLaunchKernel",
            ts,
            2.0,
            json!({"kernel": kernel, "correlation": ts as u64}),
        )
    };
    let bf16 = json!(["c10::BFloat16", "c10::BFloat16", "", ""]);
    let capture = captured(vec![
        span(
            "cpu_op",
            "vllm::moe_forward",
            10.0,
            80.0,
            json!({"Input Dims": [[4, 64], [4, 8], [], []], "Input type": bf16,
                   "Concrete Inputs": ["", "", "", ""]}),
        ),
        span(
            "cpu_op",
            "TopK",
            12.0,
            10.0,
            json!({"Input Dims": [[4, 8], [], []], "Input type": ["c10::BFloat16", "Scalar", "Scalar"],
                   "Concrete Inputs": ["", "2", "True"]}),
        ),
        launch(14.0, "_topk_forward"),
        launch(30.0, UP),
        launch(45.0, DOWN),
        launch(60.0, SCATTER),
    ]);
    let mut events = vec![
        span("user_annotation", "ProfilerStep#1", 0.0, 900.0, json!({})),
        span(
            "cuda_runtime",
            "cudaGraphLaunch",
            100.0,
            10.0,
            json!({"correlation": 10}),
        ),
    ];
    for (i, name) in ["_topk_forward", UP, DOWN, SCATTER].iter().enumerate() {
        events.push(kernel(name, 120.0 + 20.0 * i as f64, 10.0, 10));
    }
    let profile = merged(&load(events), &capture);
    let rows = &profile.perf.rows;
    let by_name = |name: &str| {
        rows.iter()
            .find(|r| r.name == name)
            .unwrap_or_else(|| panic!("no row {name}: {rows:#?}"))
    };
    let up = by_name("pseudo_op::moe_triton_unfused_up");
    let down = by_name("pseudo_op::moe_triton_unfused_down");
    let scatter = by_name("pseudo_op::moe_triton_unfused_finalize_matmul_scatter");
    assert_eq!(up.input_dims.as_deref(), Some("((4, 64), (4, 8), (), ())"));
    // E_active = 8·(1 − (6/8)^4) = 5.46875 experts of 64×64 fp4 weights.
    assert_eq!(up.gflops, Some(2.0 * 4.0 * 64.0 * 64.0 * 2.0 * 2.0 / 1e9));
    assert_eq!(
        up.data_moved_mb,
        Some((512.0 + 22400.0 + 1024.0) / 1048576.0)
    );
    assert_eq!(down.gflops, Some(2.0 * 4.0 * 64.0 * 64.0 * 2.0 / 1e9));
    assert_eq!(
        down.data_moved_mb,
        Some((1024.0 + 11200.0 + 512.0) / 1048576.0)
    );
    assert!(!scatter.has_perf_model);
    assert!(rows.iter().any(|r| r.name == "TopK"));
    assert!(rows.iter().all(|r| r.name != "vllm::moe_forward"));
}
