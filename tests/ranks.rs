//! Rank sets end to end: a directory of per-rank traces, written here as
//! Kineto writes NCCL kernels (with `record_param_comms`'s arguments), read
//! by `report DIR`; the rank delayed before each all-reduce is the
//! straggler and the wait it causes is exact.

use std::fs;
use std::path::Path;

use serde_json::{Value, json};

use crate::util::tracegate;

/// One rank's trace: three all-reduces of 1 Mi bf16 elements 1000 µs
/// apart, each `delay` µs late when `late`; a late rank runs 100 µs, the
/// others 100 µs plus their wait. Rank 2 records no `distributedInfo` (its
/// file name says its rank).
fn write_rank(dir: &Path, rank: u32, late: bool, delay: f64) {
    write_rank_of(dir, 4, rank, late, delay, 1.0);
}

/// [`write_rank`] for a job of `world` ranks whose all-reduces take
/// `scale` times as long (100 µs × `scale` once every rank is in), each
/// kernel with its launch.
pub(crate) fn write_rank_of(dir: &Path, world: u32, rank: u32, late: bool, delay: f64, scale: f64) {
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
    let mut trace = json!({ "schemaVersion": 1, "traceEvents": events });
    let name = if rank == 2 {
        "trace_rank2.json".to_string()
    } else {
        trace["distributedInfo"] = json!({"backend": "nccl", "rank": rank, "world_size": world});
        format!("worker{rank}.json")
    };
    fs::write(dir.join(name), trace.to_string()).unwrap();
}

fn report_json(dir: &Path) -> Value {
    let output = tracegate()
        .args(["report", "--format", "json"])
        .arg(dir)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    serde_json::from_slice(&output.stdout).unwrap()
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

    let output = tracegate()
        .args(["report", "--color", "never"])
        .arg(dir.path())
        .env("COLUMNS", "100")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8(output.stdout).unwrap();
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
