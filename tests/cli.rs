//! The command line as a user runs it: formats, exit codes, bad input.
//!
//! The figures asserted here were computed by hand from
//! `tests/fixtures/small_cuda.json` (all times in µs):
//!
//! | GPU work                        | interval   | bucket  | linked to        |
//! |---------------------------------|------------|---------|------------------|
//! | `sm90_xmma_gemm_f32_tn_kernel`  | [100, 120) | compute | aten::addmm      |
//! | `ncclDevKernel_AllReduce_...`   | [110, 140) | comm    | nccl:all_reduce  |
//! | `Memcpy HtoD`                   | [130, 160) | memcpy  | aten::copy_      |
//! | `vectorized_elementwise_kernel` | [200, 210) | compute | cudaGraphLaunch  |
//! | `reduce_kernel`                 | [212, 220) | compute | cudaGraphLaunch  |
//! | `orphan_kernel`                 | [300, 310) | compute | (no launch)      |
//!
//! Linked work only: COMP = 20 + 10 + 8 = 38; COMM − COMP = [120, 140) = 20;
//! (MEMCPY − COMP) − COMM = [140, 160) = 20; busy = [100, 160) + 10 + 8 = 78;
//! total = 220 − 100 = 120; idle = 42 (and 38 + 20 + 20 + 42 = 120).
//! Counting the orphan too: COMP 48, busy 88, total 210, idle 122.

use std::path::{Path, PathBuf};

use assert_cmd::assert::Assert;
use serde_json::Value;

use crate::util::{Csv, assert_input_error, tracegate};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn small_cuda() -> PathBuf {
    fixture("small_cuda.json")
}

fn stdout_of(assert: &Assert) -> String {
    String::from_utf8(assert.get_output().stdout.clone()).expect("UTF-8 stdout")
}

fn stderr_of(assert: &Assert) -> String {
    String::from_utf8_lossy(&assert.get_output().stderr).into_owned()
}

fn json_report(trace: &Path) -> Value {
    let assert = tracegate()
        .args(["report", "--format", "json"])
        .arg(trace)
        .assert()
        .success();
    serde_json::from_str(&stdout_of(&assert)).expect("stdout is JSON")
}

fn f64_at(value: &Value, pointer: &str) -> f64 {
    value
        .pointer(pointer)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("no number at {pointer}"))
}

fn u64_at(value: &Value, pointer: &str) -> u64 {
    value
        .pointer(pointer)
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("no integer at {pointer}"))
}

/// The element of the array at `pointer` whose `name` is `name`.
fn named<'a>(value: &'a Value, pointer: &str, name: &str) -> &'a Value {
    value
        .pointer(pointer)
        .and_then(Value::as_array)
        .unwrap_or_else(|| panic!("no array at {pointer}"))
        .iter()
        .find(|item| item["name"] == name)
        .unwrap_or_else(|| panic!("no {name:?} in {pointer}"))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

// ---------------------------------------------------------------- formats

#[test]
fn terminal_report_names_the_timeline_and_a_kernel() {
    let assert = tracegate()
        .arg("report")
        .arg(small_cuda())
        .env_remove("NO_COLOR")
        .assert()
        .success();
    let stdout = stdout_of(&assert);
    assert!(stdout.contains("GPU timeline"), "{stdout}");
    assert!(stdout.contains("sm90_xmma_gemm_f32_tn_kernel"), "{stdout}");
    assert!(stdout.contains("aten::addmm"), "{stdout}");
    // 38 µs of computation in 120 µs.
    assert!(stdout.contains("38.0 µs"), "{stdout}");
    assert!(stdout.contains("31.7%"), "{stdout}");
    assert!(!stdout.contains("No GPU activity"), "{stdout}");
    assert!(!stderr_of(&assert).contains("panicked"));
}

#[test]
fn json_report_has_schema_version_and_hand_computed_timeline() {
    let report = json_report(&small_cuda());
    assert_eq!(report["schema_version"], 1);
    assert_eq!(report["has_gpu_activity"], true);

    let expected = [
        ("computation_time", 38.0),
        ("exposed_comm_time", 20.0),
        ("exposed_memcpy_time", 20.0),
        ("busy_time", 78.0),
        ("idle_time", 42.0),
        ("total_time", 120.0),
        ("total_comm_time", 30.0),
        ("total_memcpy_time", 30.0),
    ];
    for (key, value) in expected {
        assert_eq!(f64_at(&report, &format!("/timeline/{key}")), value, "{key}");
    }
    // The orphan kernel is left out above and counted here.
    let all = [
        ("computation_time", 48.0),
        ("exposed_comm_time", 20.0),
        ("exposed_memcpy_time", 20.0),
        ("busy_time", 88.0),
        ("idle_time", 122.0),
        ("total_time", 210.0),
    ];
    for (key, value) in all {
        assert_eq!(
            f64_at(&report, &format!("/timeline_all_gpu_work/{key}")),
            value,
            "all work {key}"
        );
    }
}

#[test]
fn json_report_has_hand_computed_ops_kernels_and_anomalies() {
    let report = json_report(&small_cuda());

    // Direct kernel time per op: the union of the op's own GPU work.
    // Ops with direct GPU work, and the two kernels the graph launch replays
    // (rows of their own, by kernel name).
    let ops = report["ops"].as_array().expect("ops");
    assert_eq!(ops.len(), 5, "{ops:#?}");
    let replayed = named(
        &report,
        "/unique_args",
        "void at::native::reduce_kernel<512, 1>",
    );
    assert_eq!(replayed["graph"]["graph"], "launch #0");
    assert_eq!(replayed["direct"]["sum"].as_f64(), Some(8.0));
    for (name, us) in [
        ("aten::addmm", 20.0),
        ("aten::copy_", 30.0),
        ("nccl:all_reduce", 30.0),
    ] {
        let op = named(&report, "/ops", name);
        assert_eq!(
            op["total_direct_kernel_time_us"].as_f64(),
            Some(us),
            "{name}"
        );
        assert_eq!(
            op["total_subtree_kernel_time_us"].as_f64(),
            Some(us),
            "{name}"
        );
        assert_eq!(op["count"], 1, "{name}");
    }
    // aten::linear owns no kernel itself (aten::addmm below it does).
    assert!(!ops.iter().any(|o| o["name"] == "aten::linear"));
    assert_eq!(
        named(&report, "/ops", "aten::addmm")["categories"][0],
        "GEMM"
    );

    // Kernels: the launcher is the first CPU op above the launch; graph
    // kernels belong to cudaGraphLaunch; the orphan has no parent.
    let gemm = named(&report, "/kernels", "sm90_xmma_gemm_f32_tn_kernel");
    assert_eq!(gemm["parent_op"], "aten::addmm");
    assert_eq!(gemm["parent_category"], "GEMM");
    assert_eq!(gemm["stream"], 7);
    // 20 of 78 µs of kernel time (30 + 20 + 10 + 10 + 8; copies are not kernels).
    assert!(close(
        gemm["percent_of_kernel_time"].as_f64().unwrap(),
        20.0 / 78.0 * 100.0
    ));
    for name in [
        "void at::native::vectorized_elementwise_kernel<4>",
        "void at::native::reduce_kernel<512, 1>",
    ] {
        assert_eq!(
            named(&report, "/kernels", name)["parent_op"],
            "cudaGraphLaunch"
        );
    }
    let orphan = named(&report, "/kernels", "orphan_kernel");
    assert!(orphan["parent_category"].is_null(), "{orphan}");
    assert_eq!(orphan["parent_op"], "");
    assert_eq!(
        named(
            &report,
            "/kernels",
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL"
        )["parent_op"],
        "nccl:all_reduce"
    );

    // Unique args: module path and Python-style shapes.
    let addmm = named(&report, "/unique_args", "aten::addmm");
    assert_eq!(addmm["module_path"], "Foo_0");
    assert_eq!(addmm["input_dims"], "((16,), (4, 8), (8, 16), (), ())");
    assert_eq!(addmm["thread_name"], "main");
    assert_eq!(addmm["process_name"], "python");
    assert!(named(&report, "/unique_args", "aten::copy_")["module_path"].is_null());

    // One step holding everything that was launched.
    let steps = report["steps"].as_array().expect("steps");
    assert_eq!(steps.len(), 1);
    assert_eq!(steps[0]["number"], 1);
    assert_eq!(steps[0]["host_duration_us"].as_f64(), Some(1000.0));
    // The ops' 80 µs and the 18 µs the graph launch replayed.
    assert_eq!(steps[0]["kernel_time_us"].as_f64(), Some(98.0));
    assert_eq!(steps[0]["timeline"]["busy_time"].as_f64(), Some(78.0));

    let link = &report["anomalies"]["link"];
    assert_eq!(link["gpu_without_launch"], 1, "the orphan kernel");
    assert_eq!(link["launches_without_gpu"], 1, "correlation 15");
    assert_eq!(link["duplicate_correlations"], 0);
    assert_eq!(link["improper_nesting"], 0);
    assert_eq!(report["anomalies"]["stream_overlaps"], 0);

    assert_eq!(report["environment"]["platform"], "CUDA");
    assert_eq!(
        report["environment"]["devices"][0]["name"],
        "NVIDIA H100 80GB HBM3"
    );
    assert_eq!(
        report["environment"]["active_devices"],
        serde_json::json!([0])
    );
    // 20 entries: 2 metadata, 17 timed, 1 instant.
    assert_eq!(u64_at(&report, "/source/counts/events"), 20);
    assert_eq!(u64_at(&report, "/source/counts/timed"), 17);
    assert_eq!(u64_at(&report, "/source/counts/metadata"), 2);
    assert_eq!(u64_at(&report, "/source/counts/skipped"), 1);
}

#[test]
fn markdown_report_has_the_timeline_heading_and_table() {
    let assert = tracegate()
        .args(["report", "--format", "markdown"])
        .arg(small_cuda())
        .assert()
        .success();
    let stdout = stdout_of(&assert);
    assert!(stdout.contains("## GPU timeline"), "{stdout}");
    assert!(stdout.contains("|---|---:|---:|"), "{stdout}");
    assert!(
        stdout.contains("| computation time | 38.0 µs | 31.7% |"),
        "{stdout}"
    );
    assert!(
        stdout.contains("| idle time | 42.0 µs | 35.0% |"),
        "{stdout}"
    );
    // Markdown metacharacters from the trace are escaped.
    assert!(stdout.contains("aten::copy\\_"), "{stdout}");
}

#[test]
fn markdown_top_limits_the_op_rows() {
    let assert = tracegate()
        .args(["report", "--format", "markdown", "--top", "1"])
        .arg(small_cuda())
        .assert()
        .success();
    let stdout = stdout_of(&assert);
    let section = stdout
        .split("## Top ops by kernel time")
        .nth(1)
        .expect("ops section")
        .split("\n## ")
        .next()
        .unwrap();
    let rows = section
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| op |"))
        .count();
    assert_eq!(rows, 1, "{section}");
}

#[test]
fn csv_writes_tracelens_files_with_tracelens_headers() {
    let out = tempfile::tempdir().expect("temp dir");
    let dir = out.path().join("new/sub dir");
    tracegate()
        .args(["report", "--format", "csv", "--out-dir"])
        .arg(&dir)
        .arg(small_cuda())
        .assert()
        .success()
        .stdout("");
    let headers = [
        ("gpu_timeline.csv", "type,time ms,percent"),
        (
            "ops_summary.csv",
            "name,total_direct_kernel_time_sum,total_subtree_kernel_time_sum,\
             total_direct_kernel_time_ms,total_subtree_kernel_time_ms,Count,Categories,\
             Percentage (%),Cumulative Percentage (%)",
        ),
        (
            "ops_summary_by_category.csv",
            "op category,Count,total_direct_kernel_time_ms,Percentage (%),Cumulative Percentage (%)",
        ),
        (
            "ops_unique_args.csv",
            "name,op category,process_name,process_label,thread_name,Input Dims,Input type,\
             Input Strides,Concrete Inputs,operation_count,total_direct_kernel_time_mean,\
             total_subtree_kernel_time_mean,total_direct_kernel_time_median,\
             total_subtree_kernel_time_median,total_direct_kernel_time_std,\
             total_subtree_kernel_time_std,total_direct_kernel_time_min,\
             total_subtree_kernel_time_min,total_direct_kernel_time_max,\
             total_subtree_kernel_time_max,total_direct_kernel_time_sum,\
             total_subtree_kernel_time_sum,ex_UID,kernel_details_summary,trunc_kernel_details,\
             Percentage (%),Cumulative Percentage (%)",
        ),
        (
            "kernel_summary.csv",
            "Parent op category,Parent cpu_op,Kernel name,Kernel stream,\
             Kernel duration (µs)_sum,Kernel duration (µs)_count,Kernel duration (µs)_mean,\
             Kernel duration (µs)_min,Kernel duration (µs)_max,Percent of kernels time (%),\
             Percent of total time (%)",
        ),
    ];
    for (name, header) in headers {
        let path = dir.join(name);
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(text.lines().next(), Some(header), "{name}");
    }

    let timeline = Csv::read(&dir.join("gpu_timeline.csv"));
    let rows: Vec<(String, f64, f64)> = timeline
        .rows
        .iter()
        .map(|r| (r[0].clone(), r[1].parse().unwrap(), r[2].parse().unwrap()))
        .collect();
    let expected = [
        ("computation_time", 38.0),
        ("exposed_comm_time", 20.0),
        ("exposed_memcpy_time", 20.0),
        ("busy_time", 78.0),
        ("idle_time", 42.0),
        ("total_time", 120.0),
        ("total_comm_time", 30.0),
        ("total_memcpy_time", 30.0),
    ];
    assert_eq!(rows.len(), expected.len());
    for ((name, ms, percent), (want_name, want_us)) in rows.iter().zip(expected) {
        assert_eq!(name, want_name);
        assert!(close(*ms, want_us / 1000.0), "{name}: {ms} ms");
        assert!(
            close(*percent, want_us / 120.0 * 100.0),
            "{name}: {percent}%"
        );
    }

    let ops = Csv::read(&dir.join("ops_summary.csv"));
    let (name, ms, count) = (
        ops.column("name"),
        ops.column("total_direct_kernel_time_ms"),
        ops.column("Count"),
    );
    let addmm = ops
        .rows
        .iter()
        .find(|r| r[name] == "aten::addmm")
        .expect("addmm row");
    assert!(close(addmm[ms].parse().unwrap(), 0.020));
    assert_eq!(addmm[count], "1");
}

#[test]
fn output_flag_writes_the_file_and_nothing_to_stdout() {
    let out = tempfile::tempdir().expect("temp dir");
    for (format, file, check) in [
        ("json", "report.json", "\"schema_version\": 1"),
        ("markdown", "report.md", "## GPU timeline"),
        ("terminal", "report.txt", "GPU timeline"),
    ] {
        let path = out.path().join(file);
        tracegate()
            .args(["report", "--format", format, "-o"])
            .arg(&path)
            .arg(small_cuda())
            .assert()
            .success()
            .stdout("");
        let text = std::fs::read_to_string(&path).expect("output written");
        assert!(text.contains(check), "{format}: {text}");
        if format == "json" {
            let value: Value = serde_json::from_str(&text).expect("JSON file");
            assert_eq!(f64_at(&value, "/timeline/total_time"), 120.0);
        }
        // A file is not a terminal: no colour by default.
        assert!(!text.contains('\x1b'), "{format}: ESC in file");
    }
}

#[test]
fn colour_follows_no_color_and_the_flag() {
    let run = |args: &[&str], no_color: bool| {
        let mut command = tracegate();
        command.arg("report").args(args).arg(small_cuda());
        if no_color {
            command.env("NO_COLOR", "1");
        } else {
            command.env_remove("NO_COLOR");
        }
        stdout_of(&command.assert().success())
    };
    assert!(!run(&[], true).contains('\x1b'), "NO_COLOR=1");
    assert!(!run(&["--color", "never"], false).contains('\x1b'));
    assert!(
        !run(&["--color", "auto"], false).contains('\x1b'),
        "not a TTY"
    );
    let coloured = run(&["--color", "always"], false);
    assert!(coloured.contains('\x1b'), "--color always: {coloured}");
    assert!(coloured.contains("GPU timeline"));
}

#[test]
fn cpu_only_trace_says_no_gpu_activity() {
    let trace = fixture("cpu_only.json");
    let assert = tracegate().arg("report").arg(&trace).assert().success();
    assert!(stdout_of(&assert).contains("No GPU activity"));
    let report = json_report(&trace);
    assert_eq!(report["has_gpu_activity"], false);
    assert_eq!(f64_at(&report, "/timeline/total_time"), 0.0);
    assert_eq!(report["ops"].as_array().map(Vec::len), Some(0));
    assert_eq!(report["steps"][0]["number"], 0);
    let assert = tracegate()
        .args(["report", "--format", "markdown"])
        .arg(&trace)
        .assert()
        .success();
    assert!(stdout_of(&assert).contains("No GPU activity"));
}

#[test]
fn help_and_version_exit_zero() {
    let assert = tracegate().arg("--help").assert().success();
    assert!(stdout_of(&assert).contains("report"));
    let assert = tracegate().arg("--version").assert().success();
    assert!(stdout_of(&assert).contains(env!("CARGO_PKG_VERSION")));
}

// ---------------------------------------------------------------- bad input

#[test]
fn truncated_gzip_is_an_input_error() {
    use std::io::Write;
    let bytes = std::fs::read(small_cuda()).expect("fixture");
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(&bytes).expect("gzip");
    let gz = encoder.finish().expect("gzip");
    let dir = tempfile::tempdir().expect("temp dir");

    // The whole file loads (and is detected as gzip by its bytes).
    let whole = dir.path().join("whole.json.gz");
    std::fs::write(&whole, &gz).expect("write");
    assert_eq!(f64_at(&json_report(&whole), "/timeline/total_time"), 120.0);

    let cut = dir.path().join("cut.json.gz");
    std::fs::write(&cut, &gz[..gz.len() / 2]).expect("write");
    let path = cut.display().to_string();
    assert_input_error(
        tracegate().arg("report").arg(&cut).assert(),
        &[&path, "gzip"],
    );
}

#[test]
fn not_json_is_an_input_error_at_byte_zero() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("notes.json");
    std::fs::write(&path, "this is not JSON\n").expect("write");
    let label = path.display().to_string();
    assert_input_error(
        tracegate().arg("report").arg(&path).assert(),
        &[&label, "byte 0"],
    );
}

#[test]
fn empty_file_is_an_input_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("empty.json");
    std::fs::write(&path, "").expect("write");
    let label = path.display().to_string();
    assert_input_error(
        tracegate().arg("report").arg(&path).assert(),
        &[&label, "empty"],
    );
}

#[test]
fn json_without_trace_events_is_an_input_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("other.json");
    std::fs::write(&path, r#"{"schemaVersion": 1, "events": []}"#).expect("write");
    let label = path.display().to_string();
    assert_input_error(
        tracegate().arg("report").arg(&path).assert(),
        &[&label, "traceEvents"],
    );
}

#[test]
fn broken_event_is_reported_by_index_and_byte() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("broken.json");
    let good =
        r#"{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2}"#;
    let bad =
        r#"{"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": "soon", "dur": 2}"#;
    let text = format!("{{\"traceEvents\": [\n  {good},\n  {bad}\n]}}\n");
    std::fs::write(&path, &text).expect("write");
    let label = path.display().to_string();
    let stderr = assert_input_error(
        tracegate().arg("report").arg(&path).assert(),
        &[&label, "event 1", "byte"],
    );
    // The byte offset lies within the broken event.
    let offset: usize = stderr
        .split("byte ")
        .nth(1)
        .and_then(|rest| {
            rest.split(|c: char| !c.is_ascii_digit())
                .next()
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or_else(|| panic!("no byte offset in {stderr}"));
    let start = text.find(bad).expect("bad event in text");
    assert!(
        (start..start + bad.len()).contains(&offset),
        "byte {offset} outside the broken event at {start}..{}",
        start + bad.len()
    );
}

#[test]
fn missing_file_is_an_input_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("no such trace.json");
    let label = path.display().to_string();
    assert_input_error(
        tracegate().arg("report").arg(&path).assert(),
        &[&label, "cannot read"],
    );
}

#[test]
fn directory_as_trace_is_an_input_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let label = dir.path().display().to_string();
    assert_input_error(
        tracegate().arg("report").arg(dir.path()).assert(),
        &[&label],
    );
}

#[test]
fn csv_without_out_dir_is_a_usage_error() {
    assert_input_error(
        tracegate()
            .args(["report", "--format", "csv"])
            .arg(small_cuda())
            .assert(),
        &["--out-dir"],
    );
}

#[test]
fn unwritable_outputs_are_input_errors() {
    let dir = tempfile::tempdir().expect("temp dir");
    let missing_parent = dir.path().join("missing/report.json");
    let label = missing_parent.display().to_string();
    assert_input_error(
        tracegate()
            .args(["report", "--format", "json", "-o"])
            .arg(&missing_parent)
            .arg(small_cuda())
            .assert(),
        &[&label, "cannot write"],
    );
    let file = dir.path().join("a file");
    std::fs::write(&file, "x").expect("write");
    let label = file.display().to_string();
    assert_input_error(
        tracegate()
            .args(["report", "--format", "csv", "--out-dir"])
            .arg(&file)
            .arg(small_cuda())
            .assert(),
        &[&label],
    );
}

#[test]
fn unknown_flag_is_a_clap_usage_error() {
    let assert = tracegate()
        .args(["report", "--bogus"])
        .arg(small_cuda())
        .assert()
        .code(2);
    let stderr = stderr_of(&assert);
    assert!(stderr.contains("--bogus"), "{stderr}");
    assert!(stderr.contains("Usage"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let assert = tracegate()
        .args(["report", "--format", "yaml"])
        .arg(small_cuda())
        .assert()
        .code(2);
    assert!(stderr_of(&assert).contains("yaml"));
    tracegate().assert().code(2);
}

fn json_report_with(args: &[&str]) -> Value {
    let output = tracegate()
        .arg("report")
        .args(args)
        .arg(fixture("small_cuda.json"))
        .args(["--format", "json"])
        .output()
        .expect("runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("json")
}

#[test]
fn hardware_is_detected_or_given() {
    let detected = json_report_with(&[]);
    assert_eq!(detected["hardware"]["how"], "detected");
    assert_eq!(detected["hardware"]["name"], "H100 SXM");
    let given = json_report_with(&["--hardware", "MI300X"]);
    assert_eq!(given["hardware"]["how"], "given");
    assert_eq!(given["hardware"]["hbm_tb_s"], 5.3);
    let inline = json_report_with(&["--hardware", "name=lab,hbm=2,bf16=100"]);
    assert_eq!(inline["hardware"]["name"], "lab");
    assert_eq!(inline["diagnosis"]["peaks"]["hbm_tb_s"], 2.0);
}

#[test]
fn bad_hardware_is_a_usage_error() {
    let output = tracegate()
        .args(["report", "--hardware", "hbm=fast"])
        .arg(fixture("small_cuda.json"))
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--hardware") && stderr.contains("hbm"),
        "{stderr}"
    );
    let output = tracegate()
        .args(["report", "--hardware", "NoSuchGPU"])
        .arg(fixture("small_cuda.json"))
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn hardware_list_prints_the_catalog_with_sources() {
    let output = tracegate()
        .args(["hardware", "list"])
        .env("COLUMNS", "200")
        .output()
        .expect("runs");
    assert!(output.status.success());
    let text = String::from_utf8_lossy(&output.stdout);
    for gpu in [
        "MI300X",
        "H100 SXM",
        "H200 SXM",
        "A100 80GB",
        "B200",
        "MI250X",
        "L40S",
        "V100",
    ] {
        assert!(text.contains(gpu), "{gpu} missing from:\n{text}");
    }
    assert!(text.contains("datasheet"), "sources listed");
}

#[test]
fn user_hardware_file_errors_name_line_and_column() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("gpus.yaml");
    std::fs::write(&file, "gpus:\n  - name: x\n    hbm_tb_s: [oops\n").expect("write");
    let output = tracegate()
        .args(["hardware", "list", "--hardware-file"])
        .arg(&file)
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("gpus.yaml:"), "{stderr}");
}

// ------------------------------------------------- inputs, outputs, help

fn examples(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(name)
}

/// The help `args` print, its lines joined (clap wraps them).
fn help_text(args: &[&str]) -> String {
    let help = stdout_of(&tracegate().args(args).assert().success());
    help.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Writes the snapshot of `small_cuda.json` to `path`.
fn write_snapshot(path: &Path) {
    tracegate()
        .args(["snapshot", "--quiet"])
        .arg(small_cuda())
        .arg("-o")
        .arg(path)
        .assert()
        .success();
}

#[test]
fn a_snapshot_given_for_a_trace_is_named_as_one() {
    let dir = tempfile::tempdir().expect("temp dir");
    let snapshot = dir.path().join("small.snapshot.json.gz");
    write_snapshot(&snapshot);
    // The same snapshot as plain JSON with its keys sorted: `format` is no
    // longer first, so only reading it as a snapshot tells.
    let mut json = String::new();
    std::io::Read::read_to_string(
        &mut flate2::read::GzDecoder::new(std::fs::File::open(&snapshot).expect("open")),
        &mut json,
    )
    .expect("gunzip");
    let sorted: Value = serde_json::from_str(&json).expect("JSON");
    let resaved = dir.path().join("resaved.json");
    std::fs::write(&resaved, serde_json::to_string(&sorted).unwrap()).expect("write");
    assert!(
        !std::fs::read_to_string(&resaved)
            .unwrap()
            .starts_with("{\"format\"")
    );
    for path in [&snapshot, &resaved] {
        let label = path.display().to_string();
        assert_input_error(
            tracegate().arg("report").arg(path).assert(),
            &[
                &label,
                "this is a tracegate snapshot; `report` reads traces (use `check` to compare snapshots)",
            ],
        );
        assert_input_error(
            tracegate()
                .args(["replay", "--op", "aten::addmm"])
                .arg(path)
                .assert(),
            &["this is a tracegate snapshot; `replay` reads traces"],
        );
    }
    assert_input_error(
        tracegate()
            .arg("snapshot")
            .arg(&snapshot)
            .arg("-o")
            .arg(dir.path().join("again.json.gz"))
            .assert(),
        &["this is a tracegate snapshot; `snapshot` reads traces"],
    );
    assert!(!dir.path().join("again.json.gz").exists());
}

#[test]
fn output_flag_with_csv_points_to_out_dir() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (file, csvs) = (dir.path().join("ops.csv"), dir.path().join("csvs"));
    assert_input_error(
        tracegate()
            .args(["report", "--format", "csv", "-o"])
            .arg(&file)
            .arg("--out-dir")
            .arg(&csvs)
            .arg(small_cuda())
            .assert(),
        &["--format csv writes several files", "--out-dir"],
    );
    assert!(!file.exists() && !csvs.exists(), "nothing written");
    let help = help_text(&["report", "--help"]);
    assert!(
        help.contains("--format csv writes several files: give --out-dir"),
        "{help}"
    );
}

#[test]
fn policy_init_creates_missing_directories() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("a/b/policy.yaml");
    tracegate()
        .args(["policy", "init", "-o"])
        .arg(&file)
        .assert()
        .success()
        .stdout("");
    tracegate()
        .args(["policy", "check"])
        .arg(&file)
        .assert()
        .success();
    // The existing file is still not overwritten without --force.
    assert_input_error(
        tracegate()
            .args(["policy", "init", "-o"])
            .arg(&file)
            .assert(),
        &["already exists", "--force"],
    );
}

/// The `replay_package` entries of a report.json.
fn replay_packages_named(out_dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(out_dir.join("report.json")).expect("report.json");
    let report: Value = serde_json::from_str(&text).expect("JSON");
    let mut named: Vec<String> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter_map(|f| f["replay_package"].as_str().map(str::to_string))
        .collect();
    named.sort();
    named.dedup();
    named
}

/// The files in `dir/replay`, as `replay/NAME`, sorted.
fn replay_files(out_dir: &Path) -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(out_dir.join("replay"))
        .map(|entries| {
            entries
                .map(|e| format!("replay/{}", e.unwrap().file_name().to_string_lossy()))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

#[test]
fn a_reused_out_dir_keeps_only_this_runs_replay_packages() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("out");
    let check = |candidate: &Path| {
        tracegate()
            .args(["check", "--quiet", "--color", "never", "--baseline"])
            .arg(examples("baseline.json.gz"))
            .arg("--candidate")
            .arg(candidate)
            .arg("--out-dir")
            .arg(&out)
            .output()
            .expect("runs")
    };
    // An earlier run on a workload named `old`.
    let old = dir.path().join("old.json.gz");
    std::fs::copy(examples("candidate.json.gz"), &old).expect("copy");
    check(&old);
    let earlier = replay_files(&out);
    assert!(!earlier.is_empty() && earlier.iter().all(|f| f.starts_with("replay/old-")));
    // The user's files: a note, a tarball of their own, and one named like
    // a package whose content is not one.
    let keep = [
        "replay/notes.txt",
        "replay/mine.tar.gz",
        "replay/lookalike-aten_mm-0123abcd.tar.gz",
    ];
    for file in keep {
        std::fs::write(out.join(file), "the user's").expect("write");
    }
    // A copy of a package under another package's name is not ours either.
    let renamed = "replay/old-aten_mm-00000000.tar.gz";
    std::fs::copy(out.join(&earlier[0]), out.join(renamed)).expect("copy");

    check(&examples("candidate.json.gz"));
    let named = replay_packages_named(&out);
    assert!(!named.is_empty() && named.iter().all(|f| f.starts_with("replay/candidate-")));
    let mut expected: Vec<String> = named.clone();
    expected.extend(keep.iter().map(|f| f.to_string()));
    expected.push(renamed.to_string());
    expected.sort();
    assert_eq!(replay_files(&out), expected);
    for file in keep {
        assert_eq!(
            std::fs::read_to_string(out.join(file)).unwrap(),
            "the user's"
        );
    }

    // A run that writes no packages removes the earlier ones all the same.
    let out_clean = dir.path().join("clean");
    std::fs::create_dir_all(out_clean.join("replay")).unwrap();
    std::fs::copy(out.join(&named[0]), out_clean.join(&named[0])).expect("copy");
    tracegate()
        .args(["check", "--quiet", "--color", "never", "--baseline"])
        .arg(examples("baseline.json.gz"))
        .arg("--candidate")
        .arg(examples("baseline.json.gz"))
        .arg("--out-dir")
        .arg(&out_clean)
        .assert()
        .success();
    assert!(replay_packages_named(&out_clean).is_empty());
    assert!(
        !out_clean.join("replay").exists(),
        "{:?}",
        replay_files(&out_clean)
    );
}

#[test]
fn snapshot_help_names_the_file_that_pairs_in_a_directory_check() {
    let help = help_text(&["snapshot", "--help"]);
    assert!(help.contains("NAME.snapshot.json.gz"), "{help}");
    assert!(!help.contains("e.g. baseline.json.gz"), "{help}");
    // Named so, the snapshot pairs with the candidate trace NAME.json.
    let dir = tempfile::tempdir().expect("temp dir");
    let (base, cand, out) = (
        dir.path().join("baseline"),
        dir.path().join("candidate"),
        dir.path().join("out"),
    );
    std::fs::create_dir_all(&base).unwrap();
    std::fs::create_dir_all(&cand).unwrap();
    write_snapshot(&base.join("small.snapshot.json.gz"));
    std::fs::copy(small_cuda(), cand.join("small.json")).expect("copy");
    tracegate()
        .args(["check", "--quiet", "--color", "never", "--baseline"])
        .arg(&base)
        .arg("--candidate")
        .arg(&cand)
        .arg("--out-dir")
        .arg(&out)
        .assert()
        .success();
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let workloads = report["workloads"].as_array().expect("workloads");
    assert_eq!(workloads.len(), 1, "{workloads:?}");
    assert_eq!(workloads[0]["name"], "small");
    // Three op rows, and the graph launch's two kernel rows and its
    // whole-graph row.
    assert_eq!(workloads[0]["matched"], 6);
}

// ------------------------------------------------- accepting a regression

/// `check` of the bundled example (eight aten::mm slowdowns and the busy
/// time they add) with `args`, writing into `out`; its report.json.
fn example_check(out: &Path, args: &[&str]) -> (Assert, Value) {
    let assert = tracegate()
        .args(["check", "--quiet", "--color", "never", "--baseline"])
        .arg(examples("baseline.json.gz"))
        .arg("--candidate")
        .arg(examples("candidate.json.gz"))
        .arg("--out-dir")
        .arg(out)
        .args(args)
        .assert();
    let report = serde_json::from_str(
        &std::fs::read_to_string(out.join("report.json")).expect("report.json"),
    )
    .expect("JSON");
    (assert, report)
}

fn findings_of<'a>(report: &'a Value, severity: &str) -> Vec<&'a Value> {
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["severity"] == severity)
        .collect()
}

#[test]
fn accepted_regressions_are_shown_and_do_not_fail() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (assert, report) = example_check(dir.path(), &[]);
    assert.code(1);
    assert!(!findings_of(&report, "fail").is_empty());
    // The candidate's snapshot is kept, to promote to the next baseline.
    assert!(dir.path().join("candidate.snapshot.json.gz").is_file());

    let (assert, report) = example_check(
        dir.path(),
        &[
            "--accept",
            "aten::mm",
            "--accept",
            "rule:timeline.computation_time",
            "--accept",
            "rule:end_to_end",
            "--accept-reason",
            "Tracegate-Accept trailer of abc123",
        ],
    );
    let stdout = stdout_of(&assert.code(0));
    assert!(findings_of(&report, "fail").is_empty(), "{report}");
    let accepted = findings_of(&report, "accepted");
    assert_eq!(report["counts"]["accepted"], accepted.len());
    assert!(accepted.len() >= 9, "{}", accepted.len());
    for finding in &accepted {
        assert_eq!(finding["accepted"]["by"], "--accept");
        assert_eq!(
            finding["accepted"]["reason"],
            "Tracegate-Accept trailer of abc123"
        );
        assert!(
            finding["accepted"]["severity"] == "fail" || finding["accepted"]["severity"] == "warn"
        );
    }
    assert_eq!(
        report["schema_minor"],
        tracegate::gate::verdict::VERDICT_SCHEMA_MINOR
    );
    assert!(
        stdout
            .lines()
            .any(|l| l.contains("accepted") && l.contains("aten::mm")),
        "{stdout}"
    );
    assert!(
        stdout.contains("accepted (--accept, name=aten::mm): Tracegate-Accept trailer of abc123"),
        "{stdout}"
    );
    let comment = std::fs::read_to_string(dir.path().join("comment.md")).expect("comment");
    assert!(
        comment
            .contains("accepted by --accept (name=aten::mm): Tracegate-Accept trailer of abc123"),
        "{comment}"
    );
    // `comment` reads the accepted severity back.
    tracegate()
        .args(["comment", "--report"])
        .arg(dir.path().join("report.json"))
        .assert()
        .code(0);
}

#[test]
fn policy_accept_entries_expire_and_unused_entries_warn() {
    let dir = tempfile::tempdir().expect("temp dir");
    let policy = dir.path().join("policy.yaml");
    std::fs::write(
        &policy,
        "version: 1\n\
         budgets:\n  - match: {name: \"aten::no_such_op\"}\n    max_count: 3\n\
         accept:\n  - match: {name: \"aten::mm\"}\n    reason: \"#12 on purpose\"\n    expires: 2999-12-31\n\
         \x20 - rule: \"timeline.*\"\n    reason: follows from aten::mm\n\
         \x20 - match: {name: \"aten::*\"}\n    reason: long ago\n    expires: 2000-01-01\n",
    )
    .expect("write policy");
    let policy = policy.to_str().expect("UTF-8 path");
    let out = dir.path().join("out");
    let (assert, report) = example_check(&out, &["--policy", policy]);
    assert.code(0);
    let mut warnings: Vec<String> = findings_of(&report, "warn")
        .iter()
        .filter(|f| f["kind"] == "policy")
        .map(|f| f["message"].as_str().unwrap().to_string())
        .collect();
    warnings.sort();
    assert_eq!(
        warnings,
        [
            format!(
                "accept[2] (`name=aten::*`, {policy}:11) expired on 2000-01-01: it accepts \
                 nothing now; renew its `expires` or remove it"
            ),
            format!(
                "budgets[0] (`name=aten::no_such_op`, {policy}:3) matches no op in any workload: \
                 check its patterns against the report's op names, or remove it"
            ),
        ]
    );
    let accepted = findings_of(&report, "accepted");
    assert!(accepted.iter().any(|f| f["accepted"]["by"] == "accept[0]"));
    assert!(accepted.iter().any(|f| f["accepted"]["by"] == "accept[1]"));
    assert!(!accepted.iter().any(|f| f["accepted"]["by"] == "accept[2]"));
}

#[test]
fn a_bad_accept_pattern_is_a_usage_error() {
    assert_input_error(
        tracegate()
            .args(["check", "--accept", "re:(", "--baseline"])
            .arg(examples("baseline.json.gz"))
            .arg("--candidate")
            .arg(examples("candidate.json.gz"))
            .assert(),
        &["--accept re:(: invalid regex"],
    );
}

#[test]
fn a_module_matcher_on_a_trace_without_modules_says_what_the_profiler_needs() {
    let dir = tempfile::tempdir().expect("temp dir");
    let policy = dir.path().join("policy.yaml");
    std::fs::write(
        &policy,
        "version: 1\nignore:\n  - module: \"**/Attention*\"\n",
    )
    .expect("write policy");
    // The small trace without its nn.Module events: no op has a module path.
    let mut trace: Value =
        serde_json::from_str(&std::fs::read_to_string(small_cuda()).expect("read")).expect("JSON");
    trace["traceEvents"]
        .as_array_mut()
        .expect("events")
        .retain(|e| e["cat"] != "python_function");
    let plain = dir.path().join("plain.json");
    std::fs::write(&plain, trace.to_string()).expect("write trace");
    tracegate()
        .args(["check", "--quiet", "--policy"])
        .arg(&policy)
        .arg("--baseline")
        .arg(&plain)
        .arg("--candidate")
        .arg(&plain)
        .arg("--out-dir")
        .arg(dir.path().join("out"))
        .assert()
        .code(0);
    let report: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("out/report.json")).expect("report.json"),
    )
    .expect("JSON");
    let messages: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "policy")
        .map(|f| f["message"].as_str().unwrap())
        .collect();
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(
        messages[0].starts_with("ignore[0] (`module=**/Attention*`, ")
            && messages[0].contains("policy.yaml:3) matches no op: it names a `module`")
            && messages[0].contains("with_stack=True, with_modules=True"),
        "{}",
        messages[0]
    );
}

/// `deep_ep_dispatch.json`: `aten::mm`'s GEMM on [100, 140) and DeepEP's
/// `dispatch` kernel on [120, 200). tracegate does not know DeepEP's
/// kernels as communication; `--comm-kernel` and the policy's
/// `communication.kernels` make them so (issue #11).
#[test]
fn comm_kernel_patterns_count_a_kernel_as_communication() {
    let trace = fixture("deep_ep_dispatch.json");
    let report = |extra: &[&str]| -> Value {
        let assert = tracegate()
            .args(["report", "--format", "json"])
            .args(extra)
            .arg(&trace)
            .assert()
            .success();
        serde_json::from_str(&stdout_of(&assert)).expect("stdout is JSON")
    };
    let categories = |report: &Value| -> Vec<String> {
        report["categories"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["category"].as_str().unwrap().to_string())
            .collect()
    };
    let plain = report(&[]);
    assert!(!categories(&plain).contains(&"comm".to_string()));
    assert!(close(f64_at(&plain, "/timeline/computation_time"), 100.0));
    assert!(close(f64_at(&plain, "/timeline/exposed_comm_time"), 0.0));
    let with = report(&["--comm-kernel", "DISPATCH<*>"]);
    assert!(categories(&with).contains(&"comm".to_string()));
    assert!(close(f64_at(&with, "/timeline/computation_time"), 40.0));
    assert!(close(f64_at(&with, "/timeline/exposed_comm_time"), 60.0));

    // check: the candidate's dispatch kernel takes twice as long. Counted
    // as computation, computation time fails (+80%); counted as
    // communication, computation time is unchanged and the kernel fails as
    // a slower collective.
    let dir = tempfile::tempdir().expect("temp dir");
    let candidate = dir.path().join("deep_ep_dispatch.json");
    let text = std::fs::read_to_string(&trace).unwrap();
    assert_eq!(text.matches("\"dur\": 80,").count(), 1);
    std::fs::write(&candidate, text.replace("\"dur\": 80,", "\"dur\": 160,")).unwrap();
    let policy = dir.path().join("policy.yaml");
    std::fs::write(
        &policy,
        "version: 1\ncommunication:\n  kernels: ['re:deep_ep::\\w+::dispatch']\n",
    )
    .unwrap();
    let check = |extra: &[&std::ffi::OsStr], out: &str| {
        let out = dir.path().join(out);
        let output = tracegate()
            .args(["check", "--quiet", "--color", "never", "--baseline"])
            .arg(&trace)
            .arg("--candidate")
            .arg(&candidate)
            .arg("--out-dir")
            .arg(&out)
            .args(extra)
            .output()
            .expect("runs");
        let report: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap())
                .unwrap();
        let timeline = &report["workloads"][0]["timeline"];
        let metric = |name: &str| {
            timeline
                .as_array()
                .unwrap()
                .iter()
                .find(|m| m["metric"] == name)
                .unwrap_or_else(|| panic!("no {name} in {timeline}"))["candidate_us"]
                .as_f64()
                .unwrap()
        };
        let first = &report["groups"][0];
        (
            output.status.code(),
            metric("computation_time"),
            metric("exposed_comm_time"),
            format!("{} {}", first["kind"], first["label"]),
        )
    };
    let (code, computation, exposed, first) = check(&[], "plain");
    assert_eq!((code, computation, exposed), (Some(1), 180.0, 0.0));
    assert!(!first.starts_with("\"collective\""), "{first}");
    // As communication, the kernel's one call is its own floor: twice as
    // long fails as a slower collective, named after the kernel, and
    // computation time is unchanged.
    let dispatch = "\"collective\" \"void deep_ep::intranode::dispatch";
    let flag = [
        std::ffi::OsStr::new("--comm-kernel"),
        std::ffi::OsStr::new("dispatch"),
    ];
    let (code, computation, exposed, first) = check(&flag, "flag");
    assert_eq!((code, computation, exposed), (Some(1), 40.0, 140.0));
    assert!(first.starts_with(dispatch), "{first}");
    let from_policy = [std::ffi::OsStr::new("--policy"), policy.as_os_str()];
    let (code, computation, exposed, first) = check(&from_policy, "policy");
    assert_eq!((code, computation, exposed), (Some(1), 40.0, 140.0));
    assert!(first.starts_with(dispatch), "{first}");

    assert_input_error(
        tracegate()
            .args(["report", "--comm-kernel", "re:("])
            .arg(&trace)
            .assert(),
        &["--comm-kernel", "unclosed group"],
    );
}
