//! Analysis-wide tests from traces built in memory (and the corpus): shapes
//! no tensor can have become an anomaly rather than 0 FLOPs, argument text
//! is held once per row rather than once per call (its cost is timed in
//! benches/complexity.rs), and every figure that reaches the report is finite.

use std::path::{Path, PathBuf};

use crate::analysis::analyse::analyse;
use crate::analysis::diagnose::patterns::PatternKind;
use crate::analysis::profile::Profile;
use crate::trace::link::{Tree, link};
use crate::trace::{Trace, load_reader};

fn linked(json: &str) -> (Trace, Tree) {
    let trace = load_reader("synthetic", json.as_bytes(), &mut || {}).expect("valid trace");
    let tree = link(&trace);
    (trace, tree)
}

fn trace_json(events: &[String]) -> String {
    format!(r#"{{"traceEvents": [{}]}}"#, events.join(",\n"))
}

/// A CPU op with recorded arguments (JSON texts), launching one kernel.
#[derive(Clone, Copy)]
struct Launch<'a> {
    name: &'a str,
    dims: &'a str,
    types: &'a str,
    strides: &'a str,
    concrete: &'a str,
}

impl Launch<'_> {
    /// The op at `ts`, its launch and its kernel (correlation `id`).
    fn events(&self, ts: f64, id: u64) -> [String; 3] {
        let Launch {
            name,
            dims,
            types,
            strides,
            concrete,
        } = self;
        [
            format!(
                r#"{{"ph": "X", "cat": "cpu_op", "name": "{name}", "pid": 1, "tid": 1, "ts": {ts}, "dur": 10,
                    "args": {{"Input Dims": {dims}, "Input type": {types}, "Input Strides": {strides}, "Concrete Inputs": {concrete}}}}}"#
            ),
            format!(
                r#"{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": {}, "dur": 2, "args": {{"correlation": {id}}}}}"#,
                ts + 1.0
            ),
            format!(
                r#"{{"ph": "X", "cat": "kernel", "name": "kernel_of_{name}", "pid": 0, "tid": 7, "ts": {}, "dur": 3, "args": {{"correlation": {id}, "device": 0, "stream": 7}}}}"#,
                ts + 5.0
            ),
        ]
    }
}

/// Every launch in order, 20 µs apart.
fn launches(ops: &[Launch]) -> String {
    let events: Vec<String> = ops
        .iter()
        .enumerate()
        .flat_map(|(i, op)| op.events(i as f64 * 20.0, i as u64 + 1))
        .collect();
    trace_json(&events)
}

const FLOATS: &str = r#"["float", "float", "float", "float", "float"]"#;

/// A 4×4 by 4×4 matrix multiply.
fn small_mm() -> Launch<'static> {
    Launch {
        name: "aten::mm",
        dims: "[[4, 4], [4, 4]]",
        types: FLOATS,
        strides: "[]",
        concrete: r#"["", ""]"#,
    }
}

#[test]
fn implausible_dims_are_an_anomaly_not_zero_flops() {
    let huge =
        "[[9223372036854775807, 9223372036854775807], [9223372036854775807, 9223372036854775807]]";
    let json = launches(&[
        Launch {
            name: "aten::mm",
            dims: huge,
            types: FLOATS,
            strides: "[]",
            concrete: r#"["", ""]"#,
        },
        Launch {
            name: "aten::add",
            dims: "[[-1, 4], [4]]",
            types: FLOATS,
            strides: "[]",
            concrete: r#"["", "", ""]"#,
        },
        small_mm(),
    ]);
    let (trace, tree) = linked(&json);
    let profile = analyse(&trace, &tree);
    let anomalies = &profile.anomalies;
    assert_eq!(anomalies.implausible_op_args, 2, "{anomalies:?}");
    let examples = anomalies.implausible_op_args_examples.join("\n");
    assert!(
        examples.contains("`aten::mm`: FLOPs or bytes overflow"),
        "{examples}"
    );
    assert!(
        examples.contains("`aten::add`: input 0 has a dimension of -1"),
        "{examples}"
    );
    // The text reports say so too, not only the JSON.
    let lines = crate::render::facts::anomaly_lines(&profile);
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("2 op calls with implausible arguments")),
        "{lines:?}"
    );
    let mm_rows: Vec<_> = profile
        .perf
        .rows
        .iter()
        .filter(|r| r.name == "aten::mm")
        .collect();
    assert_eq!(mm_rows.len(), 2);
    for row in mm_rows {
        let huge_row = row
            .input_dims
            .as_deref()
            .is_some_and(|d| d.contains("9223372036854775807"));
        assert_eq!(row.has_perf_model, !huge_row, "{row:?}");
        if huge_row {
            assert_eq!((row.gflops, row.data_moved_mb), (None, None));
        } else {
            assert_eq!(row.gflops, Some(2.0 * 64.0 / 1e9));
        }
    }
    assert!(
        profile
            .unique_args
            .iter()
            .filter(|u| u.input_dims.contains("9223372036854775807"))
            .all(|u| u.model.is_none())
    );
    let json = serde_json::to_value(&profile).expect("serialises");
    assert_eq!(json["anomalies"]["implausible_op_args"], 2);
    // A clean trace's report is unchanged: the fields appear only when non-zero.
    let clean = launches(&[small_mm()]);
    let (trace, tree) = linked(&clean);
    let json = serde_json::to_value(analyse(&trace, &tree)).expect("serialises");
    assert!(json["anomalies"].get("implausible_op_args").is_none());
}

/// A small convolution (so the layout pattern looks at copies).
fn convolution() -> Launch<'static> {
    Launch {
        name: "aten::convolution",
        dims: "[[1, 3, 8, 8], [4, 3, 3, 3], [], [], [], [], [], [], []]",
        types: r#"["float", "float", "", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"]"#,
        strides: "[]",
        concrete: r#"["", "", "", "[1, 1]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1"]"#,
    }
}

/// `n` invocations of `copy_` whose `Input Dims` and `Input Strides` hold
/// two tensors of `len` sizes each, after a convolution (so the layout
/// pattern reads the copies' shapes).
fn copies(n: usize, len: usize) -> String {
    let big = format!("[{}]", vec!["1"; len].join(", "));
    let pair = format!("[{big}, {big}]");
    let mut ops = vec![convolution()];
    ops.extend((0..n).map(|_| Launch {
        name: "aten::copy_",
        dims: &pair,
        types: FLOATS,
        strides: &pair,
        concrete: r#"["", "", "False"]"#,
    }));
    launches(&ops)
}

#[test]
fn long_argument_text_is_kept_once_per_row_not_once_per_call() {
    // Regression: a 10-million-size `Input Dims` called repeatedly took
    // seconds and most of a gigabyte: argument text was copied, hashed and
    // re-parsed once per call. What it costs is timed in
    // benches/complexity.rs (wall-clock ratios do not belong in `cargo
    // test`); here, that the text is held once per row.
    let many = linked(&copies(64, 100_000));
    // The long text is in the report once per table row, not once per call.
    let profile = analyse(&many.0, &many.1);
    let copy_rows: Vec<_> = profile
        .unique_args
        .iter()
        .filter(|u| u.name == "aten::copy_")
        .collect();
    assert_eq!(copy_rows.len(), 1);
    assert_eq!(copy_rows[0].direct.count, 64);
    // The whole report holds each call's four lists (two tensors' dims and
    // strides, 300 KB of text each) a few times (once per table that shows
    // arguments: 24 lists today), not once per call (256 lists).
    let list_bytes = "1, ".len() * 100_000;
    let report = serde_json::to_string(&profile).expect("serialises");
    assert!(
        report.len() < 64 * list_bytes,
        "{} bytes for 64 calls of a {list_bytes}-byte list",
        report.len()
    );
}

#[test]
fn layout_and_tiny_gemm_patterns_read_each_argument_set_once() {
    let bmm = Launch {
        name: "aten::bmm",
        dims: "[[128, 8, 8], [128, 8, 8]]",
        types: FLOATS,
        strides: "[]",
        concrete: r#"["", ""]"#,
    };
    let baddbmm = Launch {
        name: "aten::baddbmm",
        dims: "[[128, 8, 8], [128, 8, 8], [128, 8, 8], [], []]",
        types: FLOATS,
        strides: "[]",
        concrete: r#"["", "", "", "1", "1"]"#,
    };
    let json = launches(&[bmm, baddbmm, bmm]);
    let tiny = evidence(&json, PatternKind::TinyBatchedGemms);
    assert!(tiny.starts_with("3 batched GEMM calls"), "{tiny}");

    let nhwc_to_nchw = Launch {
        name: "aten::copy_",
        dims: "[[1, 3, 8, 8], [1, 3, 8, 8], []]",
        types: FLOATS,
        strides: "[[192, 1, 24, 3], [192, 64, 8, 1], []]",
        concrete: r#"["", "", "False"]"#,
    };
    let transposing = launches(&[convolution(), nhwc_to_nchw, nhwc_to_nchw]);
    let layout = evidence(&transposing, PatternKind::ConvLayoutTransposes);
    assert!(layout.starts_with("2 copies"), "{layout}");
}

/// The evidence of the pattern `kind` the diagnosis of a trace finds.
fn evidence(json: &str, kind: PatternKind) -> String {
    let (trace, tree) = linked(json);
    let diagnosis = analyse(&trace, &tree).diagnosis.expect("diagnosed");
    let pattern = diagnosis.patterns.into_iter().find(|p| p.kind == kind);
    pattern
        .unwrap_or_else(|| panic!("{kind:?} not found"))
        .evidence
}

/// Every number in a profile's serialised form. serde_json writes NaN and
/// ±∞ as `null` without complaint, so the profile goes through YAML, which
/// writes them as `.nan`/`.inf`, and is read back.
fn non_finite_numbers(profile: &Profile) -> Vec<String> {
    fn walk(value: &serde_yaml::Value, path: &str, found: &mut Vec<String>) {
        match value {
            serde_yaml::Value::Number(n) if n.as_f64().is_some_and(|f| !f.is_finite()) => {
                found.push(format!("{path} = {n}"));
            }
            serde_yaml::Value::Sequence(items) => {
                for (i, item) in items.iter().enumerate() {
                    walk(item, &format!("{path}[{i}]"), found);
                }
            }
            serde_yaml::Value::Mapping(map) => {
                for (key, item) in map {
                    let key = key
                        .as_str()
                        .map_or_else(|| format!("{key:?}"), str::to_string);
                    walk(item, &format!("{path}.{key}"), found);
                }
            }
            _ => {}
        }
    }
    let text = serde_yaml::to_string(profile).expect("serialises");
    let value: serde_yaml::Value = serde_yaml::from_str(&text).expect("reads back");
    let mut found = Vec::new();
    walk(&value, "profile", &mut found);
    found
}

#[test]
fn the_finiteness_check_sees_nan() {
    let (trace, tree) = linked(&trace_json(&[]));
    let mut profile = analyse(&trace, &tree);
    profile.short_kernel_time_us = f64::NAN;
    profile.idle.host_wait_us = f64::INFINITY;
    assert_eq!(
        non_finite_numbers(&profile),
        [
            "profile.short_kernel_time_us = .nan",
            "profile.idle.host_wait_us = .inf"
        ]
    );
}

#[test]
fn degenerate_traces_have_finite_figures() {
    let kernel = |ts: f64, dur: f64| {
        format!(
            r#"{{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": {ts}, "dur": {dur}, "args": {{"stream": 7}}}}"#
        )
    };
    let zero_time_op = launches(&[small_mm()])
        .replace(r#""dur": 3"#, r#""dur": 0"#)
        .replace(r#""dur": 10"#, r#""dur": 0"#);
    let cases = [
        ("no events", trace_json(&[])),
        (
            "a CPU op only",
            trace_json(&[r#"{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0, "dur": 5, "args": {}}"#.to_string()]),
        ),
        ("unlinked GPU work only", trace_json(&[kernel(0.0, 5.0), kernel(10.0, 0.0)])),
        ("zero-duration kernels", trace_json(&[kernel(0.0, 0.0), kernel(0.0, 0.0)])),
        ("a modelled op with zero kernel time", zero_time_op),
        (
            "a modelled op on empty tensors (no bytes, no FLOPs)",
            launches(&[Launch {
                name: "aten::add",
                dims: "[[0, 4], [0, 4]]",
                types: FLOATS,
                strides: "[]",
                concrete: r#"["", "", ""]"#,
            }]),
        ),
    ];
    for (what, json) in cases {
        let (trace, tree) = linked(&json);
        let profile = analyse(&trace, &tree);
        let bad = non_finite_numbers(&profile);
        assert!(bad.is_empty(), "{what}: {bad:?}");
    }
}

/// Every trace in ../shared/corpus (as tracegate's golden run finds them).
fn corpus_traces() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    assert!(
        root.is_dir(),
        "{} went away after the build",
        root.display()
    );
    let mut found = Vec::new();
    let mut pending = vec![root];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).expect("readable corpus").flatten() {
            let path = entry.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if path.is_dir() {
                if !name.ends_with("csvs") {
                    pending.push(path);
                }
            } else if (name.ends_with(".json") || name.ends_with(".json.gz"))
                && name != "execution_details.json"
            {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn every_float_of_every_corpus_profile_is_finite() {
    let traces = corpus_traces();
    assert!(traces.len() >= 20, "{traces:?}");
    for path in traces {
        let trace = crate::trace::load_file(&path, &mut |_| {}).expect("corpus trace loads");
        let tree = link(&trace);
        let bad = non_finite_numbers(&analyse(&trace, &tree));
        assert!(bad.is_empty(), "{}: {bad:?}", path.display());
    }
}

/// `n` ops each nested in the one before, the innermost launching `n`
/// kernels: every kernel sits below all `n` ops.
fn deep_nesting(n: usize) -> String {
    let mut events = Vec::with_capacity(3 * n);
    for i in 0..n {
        events.push(format!(
            r#"{{"ph": "X", "cat": "cpu_op", "name": "op{i}", "pid": 1, "tid": 1, "ts": {i}, "dur": {}}}"#,
            4 * n - 2 * i
        ));
    }
    for i in 0..n {
        let ts = n + 2 * i;
        events.push(format!(
            r#"{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": {ts}, "dur": 1, "args": {{"correlation": {i}}}}}"#
        ));
        events.push(format!(
            r#"{{"ph": "X", "cat": "kernel", "name": "k{i}", "pid": 0, "tid": 7, "ts": {ts}.5, "dur": 1, "args": {{"correlation": {i}, "device": 0, "stream": 7}}}}"#
        ));
    }
    trace_json(&events)
}

#[test]
fn deep_nesting_over_many_kernels_counts_each_kernel_at_most_256_levels_up() {
    // Regression: 8,000 nested ops over 8,000 kernels took 20 s and 1.5 GB,
    // and 12,000 × 12,000 aborted on a 2 GiB allocation: every kernel was
    // recorded below every op above it (depth × kernels pairs). Now at most
    // `MAX_SUBTREE_DEPTH` op levels above a kernel count it, so the pairs
    // grow with the kernels alone: of 2,000 nested ops, exactly the 256
    // innermost hold GPU work in their subtree.
    use crate::analysis::comm::CommKernels;
    use crate::analysis::gpu_work::{GpuWork, Invocations};
    use crate::analysis::groups::MAX_SUBTREE_DEPTH;
    let n = 2_000;
    let (trace, tree) = linked(&deep_nesting(n));
    let comm = CommKernels::default();
    let gpu = GpuWork::collect(&trace, &tree, &comm);
    let invocations = Invocations::collect(&trace, &tree, &gpu);
    let depth_of = |name: &str| name.strip_prefix("op")?.parse::<usize>().ok();
    let holding: Vec<usize> = (0..trace.events.len())
        .filter_map(|index| {
            let depth = depth_of(trace.name(&trace.events[index]))?;
            (invocations.subtree_us(&gpu, index as u32) > 0.0).then_some(depth)
        })
        .collect();
    assert_eq!(holding.len(), MAX_SUBTREE_DEPTH, "{holding:?}");
    assert!(holding.iter().all(|&depth| depth >= n - MAX_SUBTREE_DEPTH));
    let profile = analyse(&trace, &tree);
    assert_eq!(profile.kernels.len(), n);
}

/// `percent_of_total_time` above 100 (issue 25): one short kernel filling a
/// trace at absolute timestamps near 1e12 µs is 100% (the total carries the
/// timestamps' rounding, the recorded duration does not; it read 100.013%
/// on the corpus's `hta/triton_example`, and 99.9994% here), while the same kernel event
/// recorded eleven times is kept at 1,100% and counted as an anomaly with
/// its cause.
#[test]
fn percent_of_total_time_above_100_is_rounding_or_an_anomaly() {
    let kernel = |id: u64| {
        format!(
            r#"{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1718153112340.5, "dur": 2, "args": {{"correlation": {id}}}}},
               {{"ph": "X", "cat": "kernel", "name": "triton_poi_fused_add_cos_sin_0", "pid": 0, "tid": 7, "ts": 1718153112345.678, "dur": 1.76, "args": {{"correlation": {id}, "device": 0, "stream": 7}}}}"#
        )
    };
    let (trace, tree) = linked(&trace_json(&[kernel(1)]));
    let profile = analyse(&trace, &tree);
    let total = profile.timeline.total_time;
    assert!(total != 1.76, "the total carries the rounding: {total}");
    assert_eq!(profile.kernels[0].percent_of_total_time, 100.0);
    assert_eq!(profile.anomalies.kernel_rows_over_total_time, 0);
    assert!(!profile.anomalies.any(), "{:?}", profile.anomalies);

    let (trace, tree) = linked(&trace_json(&(1..=11).map(kernel).collect::<Vec<_>>()));
    let profile = analyse(&trace, &tree);
    let share = profile.kernels[0].percent_of_total_time;
    assert!((share - 1_100.0).abs() < 0.5, "{share}");
    let anomalies = &profile.anomalies;
    assert_eq!(anomalies.kernel_rows_over_total_time, 1);
    assert!(anomalies.any());
    let example = &anomalies.kernel_rows_over_total_time_examples[0];
    assert!(
        example.contains("triton_poi_fused_add_cos_sin_0")
            && example.contains("1100.0%")
            && example.contains("11 launches that overlap"),
        "{example}"
    );
    let facts = crate::render::facts::anomaly_lines(&profile);
    assert!(
        facts
            .iter()
            .any(|l| l.starts_with("1 kernel row(s) take over 100% of the total time")),
        "{facts:?}"
    );
}
