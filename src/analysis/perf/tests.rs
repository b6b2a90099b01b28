//! Tests of the perf table: synthetic traces, and TraceLens's own
//! `unified_perf_summary.csv` files from the corpus as the oracle.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::agg::pairwise_sum;
use super::*;
use crate::analysis::perf_model::Family;

// ------------------------------------------------------------------
// Synthetic traces.

fn linked(json: &str) -> (Trace, Tree) {
    let trace =
        crate::trace::load_reader("synthetic", json.as_bytes(), &mut || {}).expect("valid trace");
    let tree = crate::trace::link::link(&trace);
    (trace, tree)
}

fn cpu_op(name: &str, ts: f64, dur: f64, dims: &str, types: &str, concrete: &str) -> String {
    format!(
        r#"{{"ph": "X", "cat": "cpu_op", "name": "{name}", "pid": 1, "tid": 1, "ts": {ts}, "dur": {dur},
               "args": {{"Input Dims": {dims}, "Input type": {types}, "Input Strides": [], "Concrete Inputs": {concrete}}}}}"#
    )
}

fn launch(ts: f64, correlation: u64) -> String {
    format!(
        r#"{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": {ts}, "dur": 1, "args": {{"correlation": {correlation}}}}}"#
    )
}

fn kernel(name: &str, ts: f64, dur: f64, correlation: u64) -> String {
    format!(
        r#"{{"ph": "X", "cat": "kernel", "name": "{name}", "pid": 0, "tid": 7, "ts": {ts}, "dur": {dur}, "args": {{"correlation": {correlation}, "stream": 7}}}}"#
    )
}

fn synthetic() -> String {
    let events = [
        // layer_norm → native_layer_norm → two launches.
        cpu_op(
            "aten::layer_norm",
            0.0,
            100.0,
            "[[2, 8], [], [8], [8], [], []]",
            r#"["float", "ScalarList", "float", "float", "Scalar", "Scalar"]"#,
            r#"["", "[8]", "", "", "1e-05", "True"]"#,
        ),
        cpu_op(
            "aten::native_layer_norm",
            1.0,
            90.0,
            "[[2, 8], [], [8], [8], []]",
            r#"["float", "ScalarList", "float", "float", "Scalar"]"#,
            r#"["", "[8]", "", "", "1e-05"]"#,
        ),
        launch(2.0, 1),
        launch(10.0, 2),
        kernel("layer_norm_kernel", 200.0, 10.0, 1),
        kernel("layer_norm_kernel", 205.0, 10.0, 2),
        // An unmodelled launcher, twice.
        cpu_op(
            "aten::cat",
            110.0,
            20.0,
            "[[], []]",
            r#"["TensorList", "Scalar"]"#,
            r#"["", "0"]"#,
        ),
        launch(111.0, 3),
        kernel("CatArrayBatchedCopy", 220.0, 4.0, 3),
        cpu_op(
            "aten::cat",
            140.0,
            20.0,
            "[[], []]",
            r#"["TensorList", "Scalar"]"#,
            r#"["", "0"]"#,
        ),
        launch(141.0, 4),
        kernel("CatArrayBatchedCopy", 230.0, 6.0, 4),
        // A CPU-only modelled op: in the sheets, not in the unified table.
        cpu_op(
            "aten::add",
            170.0,
            5.0,
            "[[2, 8], [2, 8], []]",
            r#"["float", "float", "Scalar"]"#,
            r#"["", "", "1"]"#,
        ),
    ];
    format!(r#"{{"traceEvents": [{}]}}"#, events.join(",\n"))
}

#[test]
fn modelled_ops_take_their_subtree_and_launchers_get_rows() {
    let (trace, tree) = linked(&synthetic());
    let report = perf_report(&trace, &tree);
    let names: Vec<&str> = report.rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["aten::layer_norm", "aten::cat"]);
    let norm = &report.rows[0];
    assert!(norm.has_perf_model);
    assert_eq!(norm.family, Some(Family::NormFwd));
    // Two overlapping 10 µs kernels, 200–215: 15 µs busy.
    assert_eq!(norm.kernel_time_us.sum, 15.0);
    assert_eq!(
        norm.input_dims.as_deref(),
        Some("((2, 8), (), (8,), (8,), (), ())")
    );
    // 6·8 + 5·16 flops.
    assert_eq!(norm.gflops, Some(128.0 / 1e9));
    let tflops = norm.tflops_per_s.expect("timed");
    assert_eq!(tflops.mean, (128.0 / 1e9 / 1e3) / (15.0 / 1e6));
    let cat = &report.rows[1];
    assert!(!cat.has_perf_model);
    assert_eq!(cat.count, 2);
    assert_eq!(cat.kernel_time_us.sum, 10.0);
    assert_eq!(cat.kernel_time_us.std, Some(2f64.sqrt()));
    assert_eq!(cat.gflops, None);
    assert!(cat.no_model.as_deref().unwrap_or("").contains("aten::cat"));
    assert_eq!(norm.percentage, 60.0);
    assert_eq!(cat.cumulative_percentage, 100.0);
    let missing = unmodelled(&report.rows);
    assert_eq!(missing.len(), 1);
    assert_eq!(
        (missing[0].name.as_str(), missing[0].count),
        ("aten::cat", 2)
    );
    // Sheets list nested and CPU-only invocations too.
    let sheet_names: Vec<&str> = report.sheets.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        sheet_names,
        ["aten::add", "aten::layer_norm", "aten::native_layer_norm"]
    );
    assert_eq!(report.sheets[0].kernel_time_us.sum, 0.0);
    assert_eq!(report.sheets[0].tflops_per_s, None);
    assert_eq!(report.sheets[2].kernel_time_us.sum, 15.0);
}

/// A forward conv and its autograd node, whose kernels are launched by
/// `inner` (an op under `ConvolutionBackward0`).
fn conv_backward_rows(inner: &str) -> Vec<PerfRow> {
    let conv_dims = "[[1, 4, 8, 8], [8, 4, 3, 3], [], [], [], [], [], [], []]";
    let conv_types = r#"["float", "float", "", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"]"#;
    let conv_concrete = r#"["", "", "", "[1, 1]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1"]"#;
    let with_seq = |event: String, tid: u32| {
        event
            .replace(r#""tid": 1"#, &format!(r#""tid": {tid}"#))
            .replace(r#""args": {"#, r#""args": {"Sequence number": 42, "#)
    };
    let on_thread =
        |event: String, tid: u32| event.replace(r#""tid": 1"#, &format!(r#""tid": {tid}"#));
    let events = [
        with_seq(
            cpu_op(
                "aten::convolution",
                0.0,
                20.0,
                conv_dims,
                conv_types,
                conv_concrete,
            ),
            1,
        ),
        launch(1.0, 1),
        kernel("conv_fwd", 100.0, 10.0, 1),
        with_seq(
            cpu_op(
                "autograd::engine::evaluate_function: ConvolutionBackward0",
                50.0,
                40.0,
                "[]",
                "[]",
                "[]",
            ),
            2,
        ),
        on_thread(
            cpu_op("ConvolutionBackward0", 51.0, 38.0, "[]", "[]", "[]"),
            2,
        ),
        on_thread(
            cpu_op(
                inner,
                52.0,
                36.0,
                "[[1, 8, 6, 6], [1, 4, 8, 8], [8, 4, 3, 3], [], [], [], [], [], [], [], []]",
                r#"["float", "float", "float", "ScalarList", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar", "ScalarList"]"#,
                r#"["", "", "", "[8]", "[1, 1]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1", "[True, True, False]"]"#,
            ),
            2,
        ),
        on_thread(launch(53.0, 2), 2),
        on_thread(launch(54.0, 3), 2),
        kernel("conv_dgrad", 200.0, 20.0, 2),
        kernel("conv_wgrad", 220.0, 30.0, 3),
    ];
    let json = format!(r#"{{"traceEvents": [{}]}}"#, events.join(",\n"));
    let (trace, tree) = linked(&json);
    perf_rows(&trace, &tree)
}

#[test]
fn backward_rows_are_the_modelled_op_under_the_autograd_node() {
    // TraceLens #582: `aten::convolution_backward` has a model of its own,
    // so it is the row, keyed by its own shapes.
    let rows = conv_backward_rows("aten::convolution_backward");
    let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["aten::convolution_backward", "aten::convolution"]);
    let backward = &rows[0];
    assert_eq!(backward.family, Some(Family::ConvBwd));
    assert_eq!(backward.backward_of, None);
    assert_eq!(backward.kernel_time_us.sum, 50.0);
    assert!(
        backward
            .input_dims
            .as_deref()
            .is_some_and(|d| d.starts_with("((1, 8, 6, 6), (1, 4, 8, 8), (8, 4, 3, 3)"))
    );
    // Input and weight gradients (output_mask): twice the forward's 2·4·9
    // flops per output element of (1, 8, 6, 6).
    assert_eq!(backward.gflops, Some((2 * 288 * 72) as f64 / 1e9));
}

#[test]
fn autograd_backward_ops_are_modelled_from_their_forward() {
    // No modelled op under the node: the node is the row, modelled from
    // the forward op's arguments.
    let rows = conv_backward_rows("aten::unmodelled_conv_backward");
    let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["ConvolutionBackward0", "aten::convolution"]);
    let backward = &rows[0];
    assert_eq!(backward.family, Some(Family::ConvBwd));
    assert_eq!(backward.backward_of.as_deref(), Some("aten::convolution"));
    assert_eq!(backward.kernel_time_us.sum, 50.0);
    assert_eq!(backward.gflops, Some((2 * 288 * 72) as f64 / 1e9));
}

#[test]
fn statistics_follow_pandas() {
    let agg = Agg::of([1.0, 2.0, 4.0, f64::NAN]).expect("samples");
    assert_eq!(
        (agg.count, agg.sum, agg.median, agg.min, agg.max),
        (3, 7.0, 2.0, 1.0, 4.0)
    );
    assert!((agg.std.expect("std") - 1.527_525_231_651_946_6).abs() < 1e-12);
    assert_eq!(Agg::of([3.0]).expect("one").std, None);
    assert_eq!(Agg::of([f64::NAN]), None);
    let values: Vec<f64> = (0..300).map(|i| i as f64 * 0.1).collect();
    assert!((pairwise_sum(&values) - 4485.0).abs() < 1e-9);
}

// ------------------------------------------------------------------
// TraceLens's own unified_perf_summary.csv as the oracle.

/// A tiny quote-aware CSV reader (pandas `to_csv` output).
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => row.push(std::mem::take(&mut field)),
            ('\n', false) => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            (c, _) => field.push(c),
        }
    }
    if !field.is_empty() || !row.is_empty() {
        row.push(field);
        rows.push(row);
    }
    rows
}

/// The rows of a CSV file as column → value maps.
fn read_csv(path: &Path) -> Vec<HashMap<String, String>> {
    let text = std::fs::read_to_string(path).expect("readable CSV");
    let mut rows = parse_csv(&text).into_iter();
    let header = rows.next().unwrap_or_default();
    rows.map(|row| header.iter().cloned().zip(row).collect())
        .collect()
}

/// `((4, 3), (), (768,))` → `[[4, 3], [], [768]]`.
fn tuple_dims(text: &str) -> Vec<Vec<u64>> {
    let inner = text
        .trim()
        .strip_prefix('(')
        .and_then(|t| t.strip_suffix(')'))
        .unwrap_or("");
    let mut out = Vec::new();
    let mut depth = 0;
    let mut current = String::new();
    for c in inner.chars() {
        match c {
            '(' => {
                depth += 1;
                current.clear();
            }
            ')' => {
                depth -= 1;
                out.push(
                    current
                        .split(',')
                        .filter_map(|n| n.trim().parse().ok())
                        .collect(),
                );
            }
            c if depth > 0 => current.push(c),
            _ => {}
        }
    }
    out
}

/// `('c10::BFloat16', '', None)` → `["c10::BFloat16", "", "None"]`.
fn tuple_strings(text: &str) -> Vec<String> {
    let inner = text
        .trim()
        .strip_prefix('(')
        .and_then(|t| t.strip_suffix(')'))
        .unwrap_or("");
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    for c in inner.chars() {
        match (c, quote) {
            ('\'' | '"', None) => quote = Some(c),
            (c, Some(q)) if c == q => {
                quote = None;
                out.push(std::mem::take(&mut current));
            }
            (c, Some(_)) => current.push(c),
            (c, None) if c.is_alphanumeric() => current.push(c),
            (',', None) if !current.is_empty() => out.push(std::mem::take(&mut current)),
            _ => {}
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// Bytes per element, the test's own table (the C++ type sizes of the
/// dtypes PyTorch's profiler records: `c10::Half` and `c10::BFloat16` are
/// 16-bit, `long int` is int64).
fn bpe(type_name: &str) -> u64 {
    match type_name {
        "double" | "long int" => 8,
        "float" | "int" | "Scalar" => 4,
        "c10::BFloat16" | "c10::Half" => 2,
        "bool" | "signed char" | "unsigned char" => 1,
        other => panic!("no size for {other}"),
    }
}

fn close(ours: f64, theirs: f64) -> bool {
    let scale = ours.abs().max(theirs.abs());
    scale == 0.0 || (ours - theirs).abs() <= 1e-4 * scale
}

fn number(row: &HashMap<String, String>, column: &str) -> Option<f64> {
    row.get(column).and_then(|v| v.parse().ok())
}

/// What TraceLens's value should have been, where it is wrong
/// (docs/PERF_MODELS.md), computed here from the row's own arguments:
/// (GFLOPS, Data Moved (MB), which divergence).
fn corrected(row: &HashMap<String, String>) -> (Option<f64>, Option<f64>, Option<&'static str>) {
    const MIB: f64 = 1024.0 * 1024.0;
    let gflops = number(row, "GFLOPS");
    let mb = number(row, "Data Moved (MB)");
    let name = row["name"].as_str();
    let dims = tuple_dims(&row["Input Dims"]);
    let types = tuple_strings(&row["Input type"]);
    let concrete = tuple_strings(&row["Concrete Inputs"]);
    let numel = |shape: &[u64]| shape.iter().product::<u64>();
    match name {
        // Conv bias: TraceLens tests `len(Input Dims) == 3`; traces record 9 inputs.
        "aten::convolution" if !dims[2].is_empty() => {
            let per_output = 2 * numel(&dims[1][1..]);
            let flops = gflops.expect("GFLOPS") * 1e9;
            let outputs = flops / per_output as f64;
            let bias_bytes = (dims[2][0] * bpe(&types[2])) as f64;
            (
                Some((flops + outputs) / 1e9),
                Some(mb.expect("MB") + bias_bytes / MIB),
                Some("conv bias"),
            )
        }
        // Reductions: TraceLens writes one output element whatever dim/keepdim say.
        "aten::mean" | "aten::sum" | "aten::amax" | "aten::amin" | "aten::linalg_norm" => {
            let dim_index = if name == "aten::linalg_norm" { 2 } else { 1 };
            let dim_text = concrete[dim_index].trim_matches(|c| c == '[' || c == ']');
            let keepdim = concrete[dim_index + 1] == "True";
            let shape = &dims[0];
            let mut out: Vec<u64> = Vec::new();
            let reduced: Vec<usize> = dim_text
                .split(',')
                .map(|d| {
                    let d: i64 = d.trim().parse().expect("dim");
                    (if d < 0 { d + shape.len() as i64 } else { d }) as usize
                })
                .collect();
            for (axis, &size) in shape.iter().enumerate() {
                if !reduced.contains(&axis) {
                    out.push(size);
                } else if keepdim {
                    out.push(1);
                }
            }
            let size = bpe(&types[0]) as f64;
            let fixed = mb.expect("MB") + (numel(&out) as f64 - 1.0) * size / MIB;
            let label = (numel(&out) != 1).then_some("reduce output size");
            (gflops, Some(fixed), label)
        }
        // SDPA: TraceLens assumes 2 bytes per element whatever the dtype.
        "aten::_scaled_dot_product_flash_attention" => {
            let size = bpe(&types[0]);
            let label = (size != 2).then_some("sdpa dtype");
            (gflops, mb.map(|m| m / 2.0 * size as f64), label)
        }
        // In-place binary ops store into `self`; TraceLens sizes the result as
        // the wider input.
        "aten::add_" | "aten::mul_" | "aten::div_" if bpe(&types[0]) != bpe(&types[1]) => {
            let out: u64 = numel(&dims[0]);
            let wider = bpe(&types[0]).max(bpe(&types[1]));
            let fixed =
                mb.expect("MB") - (out * wider) as f64 / MIB + (out * bpe(&types[0])) as f64 / MIB;
            (gflops, Some(fixed), Some("in-place output type"))
        }
        // TraceLens has no size for bool, so it writes no bytes at all.
        "aten::copy_" if mb.is_none() && types.iter().any(|t| t == "bool") => {
            let bytes = numel(&dims[0]) * bpe(&types[0]) + numel(&dims[1]) * bpe(&types[1]);
            (gflops, Some(bytes as f64 / MIB), Some("bool size"))
        }
        _ => (gflops, mb, None),
    }
}

fn corpus() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/corpus/tracelens"
    ))
}

/// (trace, its unified_perf_summary.csv) for every corpus trace with CPU ops.
fn oracle_pairs(corpus: &Path) -> Vec<(PathBuf, PathBuf)> {
    let mut pairs = Vec::new();
    for platform in std::fs::read_dir(corpus).expect("corpus").flatten() {
        for entry in std::fs::read_dir(platform.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let path = entry.path();
            let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            let Some(stem) = name.strip_suffix(".json.gz") else {
                continue;
            };
            let csv = path
                .with_file_name(format!("{stem}_perf_report_csvs"))
                .join("unified_perf_summary.csv");
            if csv.is_file() {
                pairs.push((path, csv));
            }
        }
    }
    pairs.sort();
    pairs
}

/// Checks one trace against its oracle; returns (rows checked, divergences seen).
fn check_against_tracelens(trace_path: &Path, csv: &Path) -> (usize, Vec<&'static str>) {
    let trace = crate::trace::load_file(trace_path, &mut |_| {}).expect("corpus trace loads");
    let tree = crate::trace::link::link(&trace);
    let report = perf_report(&trace, &tree);
    let rows = &report.rows;
    let label = trace_path.display();
    let files = crate::render::csv::perf::render_all(&report);
    let oracle_text = std::fs::read_to_string(csv).expect("oracle CSV");
    assert_eq!(
        files[0].1.lines().next(),
        oracle_text.lines().next(),
        "{label}: unified_perf_summary.csv header"
    );
    let key = |name: &str, cells: [&str; 4]| -> String { format!("{name}|{}", cells.join("|")) };
    let ours: HashMap<String, &PerfRow> = rows
        .iter()
        .map(|r| {
            let cell = |v: &Option<String>| v.clone().unwrap_or_default();
            let cells = [
                cell(&r.input_dims),
                cell(&r.input_type),
                cell(&r.input_strides),
                cell(&r.concrete_inputs),
            ];
            (key(&r.name, cells.each_ref().map(String::as_str)), r)
        })
        .collect();
    let oracle = read_csv(csv);
    let mut checked = 0;
    let mut divergences = Vec::new();
    for row in &oracle {
        let name = row["name"].as_str();
        let k = key(
            name,
            [
                &row["Input Dims"],
                &row["Input type"],
                &row["Input Strides"],
                &row["Concrete Inputs"],
            ],
        );
        let Some(mine) = ours.get(&k) else {
            panic!("{label}: TraceLens row {k} missing from ours");
        };
        let kernel_sum = number(row, "Kernel Time (µs)_sum").expect("kernel time");
        assert!(
            close(mine.kernel_time_us.sum, kernel_sum),
            "{label}: {k}: kernel time {} vs TraceLens {kernel_sum}",
            mine.kernel_time_us.sum
        );
        assert_eq!(
            mine.count.to_string(),
            row["operation_count"],
            "{label}: {k}: count"
        );
        if row["has_perf_model"] != "True" {
            continue;
        }
        assert!(mine.has_perf_model, "{label}: {k}: {:?}", mine.no_model);
        let (gflops, mb, divergence) = corrected(row);
        let gflops = gflops.expect("GFLOPS");
        let mb = mb.expect("Data Moved");
        assert!(
            close(mine.gflops.expect("ours"), gflops),
            "{label}: {k}: GFLOPS {:?} vs expected {gflops}",
            mine.gflops
        );
        assert!(
            close(mine.data_moved_mb.expect("ours"), mb),
            "{label}: {k}: Data Moved {:?} vs expected {mb}",
            mine.data_moved_mb
        );
        divergences.extend(divergence);
        checked += 1;
    }
    assert_eq!(rows.len(), oracle.len(), "{label}: row count");
    (checked, divergences)
}

fn check_corpus(select: impl Fn(&Path) -> bool) {
    let corpus = corpus();
    let pairs: Vec<(PathBuf, PathBuf)> = oracle_pairs(&corpus)
        .into_iter()
        .filter(|(trace, _)| select(trace))
        .collect();
    assert!(!pairs.is_empty(), "no traces selected");
    for (trace, csv) in pairs {
        let (checked, divergences) = check_against_tracelens(&trace, &csv);
        assert!(checked > 0, "{}: no modelled rows", trace.display());
        #[allow(clippy::print_stdout)]
        {
            println!(
                "{}: {checked} modelled rows match; diverging on purpose: {divergences:?}",
                trace.display()
            );
        }
    }
}

fn is_large(trace: &Path) -> bool {
    trace.to_string_lossy().contains("owlv2")
}

#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
#[test]
fn unified_table_matches_tracelens() {
    check_corpus(|trace| !is_large(trace));
}

#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
#[test]
fn unified_table_matches_tracelens_on_the_largest_traces() {
    check_corpus(is_large);
}

/// Issue #11 (TraceLens #796): a launcher (`xfuser::fused_block`, which
/// launches a kernel of its own) wraps, through a Python function and a
/// custom op of its own, `aten::mm` and `aten::add`. Only direct children
/// used to count, so the whole block was one opaque row; the modelled ops
/// below it are now the rows.
#[test]
fn launchers_are_descended_into_when_any_descendant_is_modelled() {
    let (trace, tree) = linked(include_str!(
        "../../../tests/fixtures/launcher_descent.json"
    ));
    let report = perf_report(&trace, &tree);
    let rows: Vec<(&str, bool, f64)> = report
        .rows
        .iter()
        .map(|r| (r.name.as_str(), r.has_perf_model, r.kernel_time_us.sum))
        .collect();
    assert_eq!(rows, [("aten::mm", true, 20.0), ("aten::add", true, 5.0)]);
    assert_eq!(
        report.rows[0].gflops,
        Some(2.0 * 64.0 * 256.0 * 128.0 / 1e9)
    );
    assert_eq!(report.rows[0].family, Some(Family::Gemm));
}
