//! Rank sets end to end: a directory of per-rank traces, written here as
//! Kineto writes NCCL kernels (with `record_param_comms`'s arguments), read
//! by `report DIR`; the rank delayed before each all-reduce is the
//! straggler and the wait it causes is exact, in every format. Also: bus
//! bandwidth against the GPU's link, communication hidden under
//! computation per rank, custom all-reduce kernels matched by their order,
//! globs and `--rank-regex`.

use std::fs;
use std::path::Path;

use serde_json::{Value, json};

use crate::util::{read_gz_json, tracegate};

/// One rank's trace: three all-reduces of 1 Mi bf16 elements 1000 µs
/// apart, each `delay` µs late when `late`; a late rank runs 100 µs, the
/// others 100 µs plus their wait. Rank 2 records no `distributedInfo` (its
/// file name says its rank).
fn write_rank(dir: &Path, rank: u32, late: bool, delay: f64) {
    write_rank_with(dir, rank, late, delay, &[], None);
}

/// [`write_rank`] with `extra` events added and, when given, a
/// `deviceProperties` entry naming `device`.
fn write_rank_with(
    dir: &Path,
    rank: u32,
    late: bool,
    delay: f64,
    extra: &[Value],
    device: Option<&str>,
) {
    write_rank_full(dir, 4, rank, (late, delay), 1.0, extra, device);
}

/// [`write_rank`] for a job of `world` ranks whose all-reduces take
/// `scale` times as long (100 µs × `scale` once every rank is in).
pub(crate) fn write_rank_of(dir: &Path, world: u32, rank: u32, late: bool, delay: f64, scale: f64) {
    write_rank_full(dir, world, rank, (late, delay), scale, &[], None);
}

/// The rank's trace as [`write_rank_with`] and [`write_rank_of`] describe
/// it, each of its kernels with its launch (`extra` events have none).
fn write_rank_full(
    dir: &Path,
    world: u32,
    rank: u32,
    (late, delay): (bool, f64),
    scale: f64,
    extra: &[Value],
    device: Option<&str>,
) {
    let mut events = vec![json!({
        "ph": "X", "cat": "kernel", "name": "void at::native::vectorized_elementwise_kernel<4>",
        "pid": 0, "tid": 7, "ts": 10.0, "dur": 5.0,
        "args": {"device": 0, "stream": 7, "correlation": 1}
    })];
    for seq in 0..3u32 {
        let start = 1000.0 * f64::from(seq + 1);
        let (ts, dur) = if late {
            (start + delay, 100.0 * scale)
        } else {
            (start, 100.0 * scale + delay)
        };
        events.push(json!({
            "ph": "X", "cat": "kernel",
            "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
            "pid": 0, "tid": 20, "ts": ts, "dur": dur,
            "args": {
                "External id": 100 + seq, "device": rank, "stream": 20, "correlation": 10 + seq,
                "Collective name": "allreduce", "In msg nelems": 1048576,
                "Out msg nelems": 1048576, "Group size": world, "dtype": "BFloat16",
                "In split size": "[]", "Out split size": "[]",
                "Process Group Name": "0", "Process Group Description": "default_pg",
                "Process Group Ranks": format!("{:?}", (0..world).collect::<Vec<_>>())
            }
        }));
    }
    // Each kernel's launch, so the GPU timeline (busy and exposed
    // communication time) counts it.
    let launches: Vec<Value> = events
        .iter()
        .map(|kernel| {
            json!({
                "ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
                "pid": 0, "tid": 1, "ts": kernel["ts"].as_f64().unwrap() - 5.0, "dur": 2.0,
                "args": {"correlation": kernel["args"]["correlation"]}
            })
        })
        .collect();
    events.extend(launches);
    events.extend_from_slice(extra);
    let mut trace = json!({ "schemaVersion": 1, "traceEvents": events });
    if let Some(device) = device {
        trace["deviceProperties"] = json!([{"id": 0, "name": device,
            "totalGlobalMem": 85045690368u64, "computeMajor": 9, "computeMinor": 0}]);
    }
    let name = if rank == 2 {
        "trace_rank2.json".to_string()
    } else {
        trace["distributedInfo"] = json!({"backend": "nccl", "rank": rank, "world_size": world});
        format!("worker{rank}.json")
    };
    fs::write(dir.join(name), trace.to_string()).unwrap();
}

/// `tracegate report ARGS INPUT`'s standard output; it must succeed.
fn run_report(args: &[&str], input: impl AsRef<std::ffi::OsStr>) -> String {
    let output = tracegate()
        .arg("report")
        .args(args)
        .arg(input)
        .env("COLUMNS", "100")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap()
}

/// `report --format json ARGS INPUT`, parsed.
fn report_json_with(args: &[&str], input: impl AsRef<std::ffi::OsStr>) -> Value {
    let args: Vec<&str> = ["--format", "json"].iter().chain(args).copied().collect();
    serde_json::from_str(&run_report(&args, input)).unwrap()
}

fn report_json(dir: &Path) -> Value {
    report_json_with(&[], dir)
}

#[test]
fn the_rank_delayed_before_each_all_reduce_is_the_straggler() {
    let dir = tempfile::tempdir().unwrap();
    for rank in 0..4 {
        write_rank(dir.path(), rank, rank == 2, 50.0);
    }
    let report = report_json(dir.path());
    let ranks = &report["ranks"];
    assert_eq!(ranks["unmatched"], 0);
    assert_eq!(ranks["ranks"].as_array().unwrap().len(), 4);
    assert_eq!(ranks["ranks"][2]["comm_kernels"], 3);
    let all_reduce = &ranks["collectives"][0];
    assert_eq!(all_reduce["collective"], "all_reduce");
    assert_eq!(all_reduce["count"], 3);
    assert_eq!(all_reduce["group_size"], 4);
    assert_eq!(all_reduce["total_us"], 300.0);
    assert_eq!(all_reduce["mean_skew_us"], 50.0);
    assert_eq!(all_reduce["max_skew_us"], 50.0);
    assert_eq!(all_reduce["bytes"], 3 * 2 * 1048576);
    let algbw = all_reduce["algbw_gbps"].as_f64().unwrap();
    assert!((algbw - 20.97152).abs() < 1e-9, "{algbw}");
    let busbw = all_reduce["busbw_gbps"].as_f64().unwrap();
    assert!((busbw - 1.5 * 20.97152).abs() < 1e-9, "{busbw}");
    for row in ranks["stragglers"].as_array().unwrap() {
        let (last, caused, waited) = if row["rank"] == 2 {
            (3, 450.0, 0.0)
        } else {
            (0, 0.0, 150.0)
        };
        assert_eq!(row["collectives"], 3, "{row}");
        assert_eq!(row["last"], last, "{row}");
        assert_eq!(row["caused_wait_us"], caused, "{row}");
        assert_eq!(row["waited_us"], waited, "{row}");
    }

    let text = run_report(&["--color", "never"], dir.path());
    for expected in [
        "(4 ranks)",
        "Collectives",
        "all_reduce",
        "Stragglers",
        "450.0 µs",
    ] {
        assert!(text.contains(expected), "{expected} in\n{text}");
    }
    assert!(
        text.lines().all(|line| line.chars().count() <= 100),
        "{text}"
    );
}

#[test]
fn identical_ranks_show_no_skew() {
    let dir = tempfile::tempdir().unwrap();
    for rank in 0..4 {
        write_rank(dir.path(), rank, false, 0.0);
    }
    let ranks = &report_json(dir.path())["ranks"];
    assert_eq!(ranks["collectives"][0]["max_skew_us"], 0.0);
    for row in ranks["stragglers"].as_array().unwrap() {
        assert_eq!(row["last"], 0, "{row}");
        assert_eq!(row["caused_wait_us"], 0.0, "{row}");
        assert_eq!(row["waited_us"], 0.0, "{row}");
    }
}

#[test]
fn a_rank_set_refuses_a_trace_without_a_rank_and_a_rank_twice() {
    let dir = tempfile::tempdir().unwrap();
    write_rank(dir.path(), 0, false, 0.0);
    fs::copy(
        dir.path().join("worker0.json"),
        dir.path().join("copy.json"),
    )
    .unwrap();
    tracegate()
        .arg("report")
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(predicates::str::contains("are both rank 0"));
    let unnamed = tempfile::tempdir().unwrap();
    write_rank(unnamed.path(), 2, false, 0.0);
    fs::rename(
        unnamed.path().join("trace_rank2.json"),
        unnamed.path().join("mystery.json"),
    )
    .unwrap();
    tracegate()
        .arg("report")
        .arg(unnamed.path())
        .assert()
        .code(2)
        .stderr(predicates::str::contains("cannot tell its rank"));
    let empty = tempfile::tempdir().unwrap();
    tracegate()
        .arg("report")
        .arg(empty.path())
        .assert()
        .code(2)
        .stderr(predicates::str::contains("no traces"));
}

/// A compute kernel on stream 7 from `ts` for `dur` µs.
fn compute(ts: f64, dur: f64) -> Value {
    json!({
        "ph": "X", "cat": "kernel", "name": "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn",
        "pid": 0, "tid": 7, "ts": ts, "dur": dur,
        "args": {"device": 0, "stream": 7, "correlation": 99}
    })
}

/// `report DIR --format csv` into a new directory.
fn report_csvs(dir: &Path) -> tempfile::TempDir {
    let out = tempfile::tempdir().unwrap();
    tracegate()
        .args(["report", "--format", "csv", "--out-dir"])
        .arg(out.path())
        .arg(dir)
        .assert()
        .success();
    out
}

/// The CSV at `path` as its header and rows of cells (no quoted commas in
/// these files).
fn csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text = fs::read_to_string(path).unwrap();
    let mut lines = text
        .lines()
        .map(|l| l.split(',').map(str::to_string).collect());
    let header = lines.next().unwrap();
    (header, lines.collect())
}

fn cell<'a>(header: &[String], row: &'a [String], column: &str) -> &'a str {
    let index = header.iter().position(|h| h == column).unwrap_or_else(|| {
        panic!("no column {column} in {header:?}");
    });
    &row[index]
}

fn number(text: &str) -> f64 {
    text.parse()
        .unwrap_or_else(|_| panic!("{text} is a number"))
}

#[test]
fn the_csvs_name_the_straggler_and_read_bus_bandwidth_against_the_link() {
    let dir = tempfile::tempdir().unwrap();
    for rank in 0..4 {
        write_rank_with(
            dir.path(),
            rank,
            rank == 2,
            50.0,
            &[],
            Some("NVIDIA H100 80GB HBM3"),
        );
    }
    let out = report_csvs(dir.path());

    let (header, rows) = csv(&out.path().join("coll_analysis.csv"));
    assert_eq!(
        header,
        [
            "Collective name",
            "Group size",
            "count",
            "Total comm latency (ms)",
            "comm_latency_mean",
            "skew in start time_mean",
            "skew in start time_max",
            "Total msg size (MB)",
            "algo bw (GB/s)",
            "bus bw (GB/s)",
            "bus bw % of link",
            "link",
            "link GB/s per direction",
        ]
    );
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    let get = |column| cell(&header, row, column);
    assert_eq!(get("Collective name"), "all_reduce");
    assert_eq!(get("Group size"), "4");
    assert_eq!(get("count"), "3");
    assert_eq!(get("Total comm latency (ms)"), "0.3");
    assert_eq!(get("comm_latency_mean"), "100.0");
    assert_eq!(get("skew in start time_mean"), "50.0");
    assert_eq!(get("skew in start time_max"), "50.0");
    assert_eq!(get("Total msg size (MB)"), "6.0");
    assert!((number(get("algo bw (GB/s)")) - 20.97152).abs() < 1e-9);
    let busbw = number(get("bus bw (GB/s)"));
    assert!((busbw - 31.45728).abs() < 1e-9, "{busbw}");
    let pct = number(get("bus bw % of link"));
    assert!((pct - 31.45728 / 450.0 * 100.0).abs() < 1e-9, "{pct}");
    assert_eq!(get("link"), "NVLink 4");
    assert_eq!(get("link GB/s per direction"), "450.0");

    let (header, rows) = csv(&out.path().join("straggler_summary.csv"));
    assert_eq!(
        &header[..8],
        [
            "rank",
            "total_wait_time_us",
            "mean_wait_time_us",
            "times_arrived_last",
            "times_arrived_first",
            "pct_arrived_last",
            "num_collectives",
            "total_nccl_dur_us",
        ]
    );
    // Least waiting first, as TraceLens sorts it: the straggler on top.
    let ranks: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(ranks, ["2", "0", "1", "3"]);
    let straggler = &rows[0];
    let get = |column| cell(&header, straggler, column);
    assert_eq!(get("total_wait_time_us"), "0.0");
    assert_eq!(get("times_arrived_last"), "3");
    assert_eq!(get("pct_arrived_last"), "100.0");
    assert_eq!(get("num_collectives"), "3");
    assert_eq!(get("total_nccl_dur_us"), "300.0");
    assert_eq!(get("caused_wait_time_us"), "450.0");
    assert_eq!(get("hardware"), "H100 SXM");
    for row in &rows[1..] {
        let get = |column| cell(&header, row, column);
        assert_eq!(get("total_wait_time_us"), "150.0", "{row:?}");
        assert_eq!(get("mean_wait_time_us"), "50.0", "{row:?}");
        assert_eq!(get("times_arrived_last"), "0", "{row:?}");
        assert_eq!(get("caused_wait_time_us"), "0.0", "{row:?}");
    }
    assert_eq!(cell(&header, &rows[1], "times_arrived_first"), "3");

    let report = report_json(dir.path());
    let link = &report["ranks"]["link"];
    assert_eq!(link["hardware"], "H100 SXM");
    assert_eq!(link["link"]["gb_s"], 450.0);
    assert_eq!(link["network"]["gb_s"], 50.0);

    let text = run_report(&["--format", "markdown"], dir.path());
    for expected in [
        "## Collectives",
        "| all_reduce | 3 | 4 |",
        "% of link: bus bandwidth over H100 SXM's NVLink 4 peak, 450 GB/s per direction",
        "| 2 | 3 | 3 | 0 | 450.0 µs | 0 ns |",
    ] {
        assert!(text.contains(expected), "{expected} in\n{text}");
    }
}

#[test]
fn unknown_gpus_get_no_link_percentage_and_say_so() {
    let dir = tempfile::tempdir().unwrap();
    for rank in 0..4 {
        write_rank(dir.path(), rank, rank == 2, 50.0);
    }
    let ranks = &report_json(dir.path())["ranks"];
    assert_eq!(ranks["collectives"][0]["busbw_link_pct"], Value::Null);
    assert_eq!(
        ranks["link"]["note"],
        "no link percentage: no rank's GPU is in the hardware catalog"
    );
    let text = run_report(&["--color", "never"], dir.path());
    assert!(text.contains("no link percentage"), "{text}");
}

#[test]
fn communication_under_a_compute_kernel_is_hidden_and_the_rest_exposed() {
    let dir = tempfile::tempdir().unwrap();
    // Rank 0's all-reduces run 1000–1150, 2000–2150, 3000–3150 (it waits
    // 50 µs for rank 2): a GEMM over 1020–1060 hides 40 µs of the first,
    // one over 2950–3050 hides 50 µs of the third.
    let gemms = [compute(1020.0, 40.0), compute(2950.0, 100.0)];
    write_rank_with(dir.path(), 0, false, 50.0, &gemms, None);
    for rank in 1..4 {
        write_rank(dir.path(), rank, rank == 2, 50.0);
    }
    let ranks = &report_json(dir.path())["ranks"]["ranks"];
    assert_eq!(
        ranks[0]["comm_time"],
        json!({"total_us": 450.0, "overlapped_us": 90.0, "exposed_us": 360.0})
    );
    assert_eq!(
        ranks[2]["comm_time"],
        json!({"total_us": 300.0, "overlapped_us": 0.0, "exposed_us": 300.0})
    );
    let out = report_csvs(dir.path());
    let (header, rows) = csv(&out.path().join("straggler_summary.csv"));
    let rank0 = rows.iter().find(|r| r[0] == "0").unwrap();
    assert_eq!(cell(&header, rank0, "total_comm_time_us"), "450.0");
    assert_eq!(cell(&header, rank0, "overlapped_comm_time_us"), "90.0");
    assert_eq!(cell(&header, rank0, "exposed_comm_time_us"), "360.0");
}

#[test]
fn a_kernel_without_launch_hides_communication_alike_in_report_and_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    // Rank 0's GEMM over 1020–1060 has no launch: the profile's timeline
    // leaves it out, the rank's communication time counts it.
    write_rank_with(dir.path(), 0, false, 50.0, &[compute(1020.0, 40.0)], None);
    for rank in 1..4 {
        write_rank(dir.path(), rank, rank == 2, 50.0);
    }
    let report = report_json(dir.path());
    let set = tempfile::tempdir().unwrap();
    let path = set.path().join("set.snapshot.json.gz");
    tracegate()
        .args(["snapshot", "--ranks", "-q", "-o"])
        .arg(&path)
        .arg(dir.path())
        .assert()
        .success();
    let snapshot = read_gz_json(&path);
    for rank in 0..4 {
        let comm = &report["ranks"]["ranks"][rank]["comm_time"];
        let kept = &snapshot["ranks"][rank];
        assert_eq!(kept["exposed_comm_us"], comm["exposed_us"], "rank {rank}");
        assert_eq!(kept["total_comm_us"], comm["total_us"], "rank {rank}");
    }
    assert_eq!(snapshot["ranks"][0]["exposed_comm_us"], 410.0);
}

/// One rank of a vLLM-style job: custom all-reduce kernels with no
/// `record_param_comms` arguments on the compute stream, `delay` µs late
/// when `late`, then one symmetric-memory all-reduce.
fn write_custom_rank(path: &Path, late: bool) {
    let mut events = Vec::new();
    for i in 0..2u32 {
        let start = 1000.0 * f64::from(i + 1);
        let (ts, dur) = if late {
            (start + 30.0, 20.0)
        } else {
            (start, 50.0)
        };
        events.push(json!({
            "ph": "X", "cat": "kernel",
            "name": "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*, vllm::RankSignals, vllm::Signal*, __nv_bfloat16*, int, int)",
            "pid": 0, "tid": 7, "ts": ts, "dur": dur,
            "args": {"device": 0, "stream": 7, "correlation": 10 + i}
        }));
    }
    events.push(json!({
        "ph": "X", "cat": "kernel", "name": "symm_mem::multimem_all_reduce_",
        "pid": 0, "tid": 7, "ts": 5000.0, "dur": 10.0,
        "args": {"device": 0, "stream": 7, "correlation": 20}
    }));
    let trace = json!({ "schemaVersion": 1, "traceEvents": events });
    fs::write(path, trace.to_string()).unwrap();
}

#[test]
fn custom_all_reduce_kernels_match_by_their_order_and_ranks_come_from_a_regex() {
    let dir = tempfile::tempdir().unwrap();
    for rank in 0..2 {
        write_custom_rank(&dir.path().join(format!("tp-{rank}.trace.json")), rank == 1);
    }
    fs::write(dir.path().join("notes.json"), "{}").unwrap();
    let json = report_json_with(&["--rank-regex", r"^tp-(\d+)\.trace"], dir.path());
    let ranks = &json["ranks"];
    assert_eq!(ranks["unmatched"], 0);
    let all_reduce = &ranks["collectives"][0];
    assert_eq!(all_reduce["collective"], "all_reduce");
    assert_eq!(all_reduce["count"], 3);
    assert_eq!(all_reduce["max_skew_us"], 30.0);
    let late = &ranks["stragglers"][1];
    assert_eq!(
        (late["rank"].as_u64(), late["last"].as_u64()),
        (Some(1), Some(2))
    );
    assert_eq!(late["caused_wait_us"], 60.0);

    // The same files by a glob: their names carry no `rank<N>`, so without
    // --rank-regex the rank cannot be told.
    let glob = format!("{}/tp-*.trace.json", dir.path().display());
    let json = report_json_with(&["--rank-regex", r"tp-(\d+)"], &glob);
    assert_eq!(json["ranks"]["ranks"].as_array().unwrap().len(), 2);
    tracegate()
        .args(["report"])
        .arg(&glob)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("cannot tell its rank"));
}

#[test]
fn rank_set_inputs_fail_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    write_rank(dir.path(), 0, false, 0.0);
    write_rank(dir.path(), 1, false, 0.0);
    let fails = |args: &[&str], input: &str, expected: &str| {
        let output = tracegate().args(args).arg(input).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}: {output:?}");
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(expected), "{expected} in {stderr}");
    };
    let path = dir.path().display().to_string();
    fails(
        &["report", "--rank-regex", "worker"],
        &path,
        "has no capture group",
    );
    fails(
        &["report", "--rank-regex", "(a)(b)"],
        &path,
        "has 2 capture groups",
    );
    fails(
        &["report", "--rank-regex", "(["],
        &path,
        "not a valid regex",
    );
    fails(
        &["report", "--rank-regex", r"(\d+)"],
        &format!("{path}/nothing-*.json"),
        "no trace's file name matches",
    );
    fails(
        &["report"],
        &format!("{path}/nothing-*.json"),
        "no traces match this glob",
    );
    // Both files' names hold a digit, but `[a-z]*(\d?)` can match nothing.
    fails(
        &["report", "--rank-regex", r"worker()"],
        &path,
        "not a rank number",
    );
    fails(
        &["report", "--rank-regex", r"worker\d(\.)"],
        &path,
        "not a rank number",
    );
    fails(
        &["report", "--rank-regex", r"(\d)"],
        &format!("{path}/worker0.json"),
        "give a directory or a glob",
    );
    fs::copy(
        dir.path().join("worker1.json"),
        dir.path().join("worker1b.json"),
    )
    .unwrap();
    fails(
        &["report", "--rank-regex", r"worker(\d)"],
        &path,
        "are both rank 1",
    );
}

#[test]
fn a_glob_names_traces_across_directories() {
    let dir = tempfile::tempdir().unwrap();
    for (rank, sub) in [(0, "node0"), (1, "node0"), (2, "node1"), (3, "node1/late")] {
        let node = dir.path().join(sub);
        fs::create_dir_all(&node).unwrap();
        write_rank(&node, rank, rank == 2, 50.0);
    }
    let count = |glob: String| {
        let json = report_json_with(&[], glob);
        json["ranks"]["ranks"].as_array().unwrap().len()
    };
    let root = dir.path().display();
    assert_eq!(count(format!("{root}/*/*.json")), 3);
    assert_eq!(count(format!("{root}/**/*.json")), 4);
    assert_eq!(count(format!("{root}/node0/worker?.json")), 2);
}
