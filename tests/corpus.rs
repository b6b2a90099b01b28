//! Real traces from ../shared/corpus, with TraceLens's own CSVs as the oracle.
//! Without the corpus these tests are compiled as ignored (build.rs), so
//! `cargo test` counts them as ignored, not passed; the one test that always
//! runs fails where the corpus is required (`CI=true`,
//! `TRACEGATE_REQUIRE_CORPUS=1`) but missing.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::util::{Csv, corpus_dir, corpus_path, corpus_traces, relative_difference, tracegate};

/// Traces that have TraceLens reference CSVs beside them.
pub(crate) fn traces_with_oracle(corpus: &Path) -> Vec<(PathBuf, PathBuf)> {
    corpus_traces(&corpus.join("tracelens"))
        .into_iter()
        .filter_map(|trace| {
            let name = trace.file_name()?.to_str()?;
            let stem = name
                .strip_suffix(".json.gz")
                .or_else(|| name.strip_suffix(".json"))?;
            let oracle = trace.with_file_name(format!("{stem}_perf_report_csvs"));
            oracle.is_dir().then_some((trace, oracle))
        })
        .collect()
}

/// `report --format csv` of `trace`, in a temporary directory.
pub(crate) fn csv_report(trace: &Path) -> tempfile::TempDir {
    let out = tempfile::tempdir().expect("temp dir");
    tracegate()
        .args(["report", "--format", "csv", "--out-dir"])
        .arg(out.path())
        .arg(trace)
        .assert()
        .success();
    out
}

#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn gpu_timeline_matches_tracelens_on_every_row() {
    let corpus = corpus_dir();
    let pairs = traces_with_oracle(&corpus);
    assert!(
        pairs.len() >= 12,
        "expected the 12 TraceLens traces, found {}",
        pairs.len()
    );
    for (trace, oracle) in pairs {
        let ours = Csv::read(&csv_report(&trace).path().join("gpu_timeline.csv"));
        let theirs = Csv::read(&oracle.join("gpu_timeline.csv"));
        assert_eq!(ours.header, theirs.header, "{}", trace.display());
        assert_eq!(ours.rows.len(), theirs.rows.len(), "{}", trace.display());
        for (our_row, their_row) in ours.rows.iter().zip(&theirs.rows) {
            assert_eq!(our_row[0], their_row[0], "{}: row order", trace.display());
            for column in 1..=2 {
                let (a, b): (f64, f64) = (
                    our_row[column].parse().unwrap(),
                    their_row[column].parse().unwrap(),
                );
                assert!(
                    relative_difference(a, b) <= 1e-6,
                    "{}: {} column {column}: ours {a}, TraceLens {b}",
                    trace.display(),
                    our_row[0]
                );
            }
        }
    }
}

#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn ops_summary_matches_tracelens_time_and_count_per_op() {
    let corpus = corpus_dir();
    let mut compared = 0;
    for (trace, oracle) in traces_with_oracle(&corpus) {
        let theirs_path = oracle.join("ops_summary.csv");
        let out = csv_report(&trace);
        let ours_path = out.path().join("ops_summary.csv");
        if !theirs_path.exists() {
            // GPU-only traces: TraceLens writes no op tables, and neither do we.
            assert!(
                !ours_path.exists(),
                "{}: op table for a GPU-only trace",
                trace.display()
            );
            continue;
        }
        let (ours, theirs) = (Csv::read(&ours_path), Csv::read(&theirs_path));
        let index = |csv: &Csv| -> HashMap<String, (f64, u64)> {
            let (name, time, count) = (
                csv.column("name"),
                csv.column("total_direct_kernel_time_ms"),
                csv.column("Count"),
            );
            csv.rows
                .iter()
                .map(|r| {
                    (
                        r[name].clone(),
                        (r[time].parse().unwrap(), r[count].parse().unwrap()),
                    )
                })
                .collect()
        };
        let (ours, theirs) = (index(&ours), index(&theirs));
        let mut names: Vec<&String> = theirs.keys().chain(ours.keys()).collect();
        names.sort();
        names.dedup();
        for name in names {
            let (Some(a), Some(b)) = (ours.get(name), theirs.get(name)) else {
                panic!(
                    "{}: op {name} only on one side (ours {:?}, TraceLens {:?})",
                    trace.display(),
                    ours.get(name),
                    theirs.get(name)
                );
            };
            assert_eq!(a.1, b.1, "{}: {name} Count", trace.display());
            assert!(
                relative_difference(a.0, b.0) <= 1e-6,
                "{}: {name} time ours {} TraceLens {}",
                trace.display(),
                a.0,
                b.0
            );
            compared += 1;
        }
    }
    assert!(compared > 100, "compared only {compared} ops");
}

/// Traces above this size (compressed bytes) run once, as JSON, to keep the
/// debug-build test time modest; smaller ones run in every text format.
const BIG_TRACE_BYTES: u64 = 1 << 20;

/// Runs `report --format json` on a trace and parses the output.
fn json_report(trace: &Path) -> serde_json::Value {
    let assert = tracegate()
        .args(["report", "--format", "json"])
        .arg(trace)
        .assert();
    let output = assert.get_output();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{}: exit {:?}: {stderr}",
        trace.display(),
        output.status.code()
    );
    assert!(
        !stderr.contains("panicked"),
        "{}: {stderr}",
        trace.display()
    );
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{}: JSON output: {e}", trace.display()))
}

/// Checks what must hold in any report: the schema version and the timeline
/// identity computation + exposed comm + exposed memcpy + idle = total.
fn check_report_invariants(trace: &Path, report: &serde_json::Value) {
    assert_eq!(report["schema_version"], 1, "{}", trace.display());
    let timelines = [&report["timeline"], &report["timeline_all_gpu_work"]];
    for timeline in timelines.into_iter().filter(|t| !t.is_null()) {
        let get = |key: &str| {
            timeline[key]
                .as_f64()
                .unwrap_or_else(|| panic!("{}: no {key}", trace.display()))
        };
        let parts = get("computation_time")
            + get("exposed_comm_time")
            + get("exposed_memcpy_time")
            + get("idle_time");
        let total = get("total_time");
        assert!(
            relative_difference(parts, total) <= 1e-9,
            "{}: parts {parts} != total {total}",
            trace.display()
        );
        assert!(
            get("busy_time") <= total * (1.0 + 1e-12),
            "{}",
            trace.display()
        );
        assert!(
            get("idle_time") >= -1e-6 * total.max(1.0),
            "{}",
            trace.display()
        );
    }
}

fn text_report(trace: &Path, format: &str) -> String {
    let assert = tracegate()
        .args(["report", "--color", "never", "--format", format])
        .arg(trace)
        .assert();
    let output = assert.get_output();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{} ({format}): exit {:?}: {stderr}",
        trace.display(),
        output.status.code()
    );
    assert!(
        !stderr.contains("panicked"),
        "{}: {stderr}",
        trace.display()
    );
    String::from_utf8(output.stdout.clone()).expect("UTF-8 output")
}

fn corpus_trace(corpus: &Path, relative: &str) -> PathBuf {
    let path = corpus.join(relative);
    assert!(path.is_file(), "{} missing from the corpus", path.display());
    path
}

#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn every_small_trace_reports_in_every_text_format() {
    let corpus = corpus_dir();
    let small: Vec<PathBuf> = corpus_traces(&corpus)
        .into_iter()
        .filter(|t| std::fs::metadata(t).expect("stat").len() <= BIG_TRACE_BYTES)
        .collect();
    assert!(small.len() >= 10, "found only {} small traces", small.len());
    for trace in small {
        let report = json_report(&trace);
        check_report_invariants(&trace, &report);
        let terminal = text_report(&trace, "terminal");
        let markdown = text_report(&trace, "markdown");
        if report["has_gpu_activity"] == true {
            assert!(terminal.contains("GPU timeline"), "{}", trace.display());
            assert!(markdown.contains("## GPU timeline"), "{}", trace.display());
        } else {
            assert!(terminal.contains("No GPU activity"), "{}", trace.display());
        }
    }
}

#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn every_big_trace_reports_as_json() {
    let corpus = corpus_dir();
    let big: Vec<PathBuf> = corpus_traces(&corpus)
        .into_iter()
        .filter(|t| std::fs::metadata(t).expect("stat").len() > BIG_TRACE_BYTES)
        .collect();
    assert!(!big.is_empty(), "no big traces in the corpus");
    for trace in big {
        let report = json_report(&trace);
        check_report_invariants(&trace, &report);
        assert_eq!(report["has_gpu_activity"], true, "{}", trace.display());
        assert!(
            !report["kernels"].as_array().expect("kernels").is_empty(),
            "{}",
            trace.display()
        );
    }
}

#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn cpu_only_trace_has_no_gpu_activity() {
    let corpus = corpus_dir();
    let trace = corpus_trace(&corpus, "hta/cpu_only.json.gz");
    let report = json_report(&trace);
    assert_eq!(report["has_gpu_activity"], false);
    assert_eq!(report["timeline"]["total_time"].as_f64(), Some(0.0));
    assert!(report["timeline_all_gpu_work"].is_null());
    assert!(text_report(&trace, "terminal").contains("No GPU activity"));
}

#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn kineto_2021_trace_links_its_kernels() {
    let corpus = corpus_dir();
    let trace = corpus_trace(&corpus, "kineto/resnet50_v100_2021_format.json.gz");
    let report = json_report(&trace);
    let kernels: u64 = report["kernels"]
        .as_array()
        .expect("kernels")
        .iter()
        .map(|k| k["duration"]["count"].as_u64().expect("count"))
        .sum();
    let unlinked = report["anomalies"]["link"]["gpu_without_launch"]
        .as_u64()
        .expect("gpu_without_launch");
    assert!(kernels > 1000, "only {kernels} kernels");
    assert!(
        unlinked * 100 <= kernels,
        "{unlinked} of {kernels} GPU events unlinked"
    );
    let ops = report["ops"].as_array().expect("ops");
    assert!(!ops.is_empty(), "no ops own kernels");
    // Kernels are attributed to CPU ops, not left to runtime calls.
    let owned_by_ops: u64 = report["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|k| {
            k["parent_op"]
                .as_str()
                .is_some_and(|p| p.starts_with("aten::"))
        })
        .map(|k| k["duration"]["count"].as_u64().unwrap())
        .sum();
    assert!(
        owned_by_ops * 2 > kernels,
        "{owned_by_ops} of {kernels} kernels under an aten op"
    );
    assert!(report["timeline"]["busy_time"].as_f64().unwrap() > 0.0);
    assert_eq!(report["environment"]["platform"], "CUDA");
}

#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn mi250_trace_is_rocm() {
    let corpus = corpus_dir();
    let trace = corpus_trace(&corpus, "hta/mi250_minitoy_train_rocm.json.gz");
    let report = json_report(&trace);
    assert_eq!(report["environment"]["platform"], "ROCm");
    assert!(
        text_report(&trace, "terminal").contains("Platform: ROCm"),
        "terminal output names the platform"
    );
    assert!(report["timeline"]["busy_time"].as_f64().unwrap() > 0.0);
}

#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn triton_example_has_a_triton_kernel() {
    let corpus = corpus_dir();
    let trace = corpus_trace(&corpus, "hta/triton_example.json.gz");
    let report = json_report(&trace);
    let kernels = report["kernels"].as_array().expect("kernels");
    let triton = kernels
        .iter()
        .find(|k| k["name"].as_str().is_some_and(|n| n.starts_with("triton_")))
        .unwrap_or_else(|| panic!("no triton_* kernel in {kernels:#?}"));
    // Launched through cuLaunchKernel (a driver call): linked, not orphaned.
    assert!(!triton["parent_category"].is_null(), "{triton}");
    assert_eq!(report["anomalies"]["link"]["gpu_without_launch"], 0);
}

#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn large_integer_trace_loads() {
    let corpus = corpus_dir();
    let trace = corpus_trace(&corpus, "hta/large_integer.json.gz");
    let report = json_report(&trace);
    // Two events: an NCCL kernel at [100, 150) with no correlation and no
    // launch, and a CPU op whose "Comms Id" exceeds i64.
    assert_eq!(report["source"]["counts"]["timed"], 2);
    assert_eq!(report["has_gpu_activity"], true);
    assert_eq!(report["anomalies"]["link"]["gpu_without_launch"], 1);
    let all = &report["timeline_all_gpu_work"];
    assert_eq!(all["total_time"].as_f64(), Some(50.0));
    assert_eq!(all["exposed_comm_time"].as_f64(), Some(50.0));
    assert_eq!(all["computation_time"].as_f64(), Some(0.0));
}

#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn short_kernel_histogram_matches_tracelens_bin_for_bin() {
    let corpus = corpus_dir();
    for (trace, oracle) in traces_with_oracle(&corpus) {
        let theirs = Csv::read(&oracle.join("short_kernel_histogram.csv"));
        let ours = Csv::read(&csv_report(&trace).path().join("short_kernel_histogram.csv"));
        assert_eq!(ours.header, theirs.header, "{}", trace.display());
        assert_eq!(
            ours.rows.len(),
            theirs.rows.len(),
            "{}: bins",
            trace.display()
        );
        for (bin, (a, b)) in ours.rows.iter().zip(&theirs.rows).enumerate() {
            assert_eq!(a[2], b[2], "{}: bin {bin} count", trace.display());
            for column in 0..2 {
                let (x, y): (f64, f64) = (a[column].parse().unwrap(), b[column].parse().unwrap());
                assert!(
                    relative_difference(x, y) <= 1e-12,
                    "{}: bin {bin} edge {x} vs {y}",
                    trace.display()
                );
            }
        }
    }
}

/// The analysis guides' priority rule, recomputed from a row's own figures.
fn expected_priority(share: f64, efficiency: Option<f64>, in_pattern: bool) -> &'static str {
    let efficiency = efficiency.filter(|_| share >= 1.0);
    if share > 15.0 && efficiency.is_some_and(|e| e < 30.0) {
        "critical"
    } else if share > 10.0 || efficiency.is_some_and(|e| e < 40.0) {
        "high"
    } else if share > 5.0 || in_pattern {
        "medium"
    } else {
        "low"
    }
}

#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn diagnosis_names_a_bottleneck_and_ranks_ops_by_its_own_numbers() {
    let corpus = corpus_dir();
    let rank = |p: &str| {
        ["critical", "high", "medium", "low"]
            .iter()
            .position(|x| *x == p)
            .expect("known priority")
    };
    for platform in ["h100", "mi300"] {
        for trace in corpus_traces(&corpus.join("tracelens").join(platform)) {
            let output = tracegate()
                .args(["report", "--format", "json"])
                .arg(&trace)
                .output()
                .expect("runs");
            assert!(output.status.success(), "{}", trace.display());
            let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("json");
            assert!(
                report["hardware"]["name"].is_string(),
                "{}: GPU detected",
                trace.display()
            );
            let diagnosis = &report["diagnosis"];
            let primary = diagnosis["primary"].as_str().expect("primary");
            assert_ne!(primary, "undetermined", "{}", trace.display());
            assert!(
                diagnosis["evidence"]
                    .as_array()
                    .is_some_and(|e| e.len() >= 3),
                "{}",
                trace.display()
            );
            let pattern_ops: Vec<&str> = diagnosis["patterns"]
                .as_array()
                .expect("patterns")
                .iter()
                .flat_map(|p| {
                    p["ops"]
                        .as_array()
                        .expect("ops")
                        .iter()
                        .map(|o| o.as_str().expect("name"))
                })
                .collect();
            let compute_us = report["timeline"]["computation_time"]
                .as_f64()
                .expect("computation");
            let ops = diagnosis["ops"].as_array().expect("ops");
            assert!(!ops.is_empty(), "{}: modelled ops", trace.display());
            let mut previous: Option<(usize, f64)> = None;
            for op in ops {
                let name = op["name"].as_str().expect("name");
                let time = op["kernel_time_us"].as_f64().expect("time");
                let share = op["share_of_compute"].as_f64().expect("share");
                assert!(
                    (share - time / compute_us * 100.0).abs() < 1e-9,
                    "{}: {name} share",
                    trace.display()
                );
                let efficiency = op["efficiency"].as_f64();
                if let (Some(efficiency), Some(roofline)) =
                    (efficiency, op["roofline_time_us"].as_f64())
                {
                    assert!(
                        (efficiency - roofline / time * 100.0).abs() < 1e-9,
                        "{}: {name} efficiency",
                        trace.display()
                    );
                }
                let priority = op["priority"].as_str().expect("priority");
                assert_eq!(
                    priority,
                    expected_priority(share, efficiency, pattern_ops.contains(&name)),
                    "{}: {name} (share {share:.2}%, efficiency {efficiency:?})",
                    trace.display()
                );
                // Listed by priority, then by kernel time.
                let key = (rank(priority), time);
                if let Some((prev_rank, prev_time)) = previous {
                    assert!(
                        prev_rank < key.0 || (prev_rank == key.0 && prev_time >= time),
                        "{}: order at {name}",
                        trace.display()
                    );
                }
                previous = Some(key);
            }
        }
    }
}

/// Memsets whose only launch trace is the end (`ph: f`) of a flow arrow:
/// the launch fell before the host window, so the memset is unlinked. It is
/// real GPU work: the all-GPU-work timeline counts it (docs/TRACELENS.md,
/// "Linking"), the default timeline leaves it out as TraceLens does.
#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn memsets_with_only_a_flow_end_count_in_the_all_gpu_work_timeline() {
    use tracegate::trace::{self, FlowKind, Kind, link};
    let corpus = corpus_dir();
    let path = corpus_trace(
        &corpus,
        "tracelens/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
    );
    let trace = trace::load_file(&path, &mut |_| {}).expect("the trace loads");
    let tree = link::link(&trace);
    let mut phases: HashMap<u64, (bool, bool)> = HashMap::new();
    for flow in trace
        .flows
        .iter()
        .filter(|f| f.kind == FlowKind::LaunchToGpu)
    {
        let entry = phases.entry(flow.id).or_default();
        if flow.is_start {
            entry.0 = true;
        } else {
            entry.1 = true;
        }
    }
    let only_end: Vec<u32> = (0..trace.events.len() as u32)
        .filter(|&i| {
            let event = &trace.events[i as usize];
            event.kind == Kind::Memset
                && event.correlation().and_then(|c| phases.get(&c)) == Some(&(false, true))
        })
        .collect();
    assert_eq!(only_end.len(), 73);
    assert!(only_end.iter().all(|&i| !tree.is_linked(i)));
    let memset_us: f64 = only_end.iter().map(|&i| trace.events[i as usize].dur).sum();
    assert!((memset_us - 69.187).abs() < 0.01, "{memset_us} µs");
    // No unlinked work overlaps other work here, so the all-GPU-work busy
    // time exceeds the linked one by exactly the unlinked durations.
    let unlinked_us: f64 = tree
        .gpu_events
        .iter()
        .filter(|&&i| !tree.is_linked(i))
        .map(|&i| trace.events[i as usize].dur)
        .sum();
    let profile = tracegate::analysis::analyse::analyse(&trace, &tree);
    let all = profile
        .timeline_all_gpu_work
        .expect("some GPU work is unlinked");
    let extra = all.busy_time - profile.timeline.busy_time;
    assert!(
        (extra - unlinked_us).abs() < 0.01,
        "{extra} vs {unlinked_us} µs"
    );
    assert!(extra > memset_us);
}

/// Always runs: the corpus tests above are ignored when the corpus was not
/// there at build time, which must not pass unnoticed where it is required.
#[test]
fn the_corpus_is_present_where_required() {
    let dir = corpus_path();
    let required = std::env::var("CI").is_ok_and(|v| v == "true")
        || std::env::var("TRACEGATE_REQUIRE_CORPUS").is_ok_and(|v| v == "1");
    if cfg!(tracegate_corpus) {
        assert!(dir.is_dir(), "{} went away after the build", dir.display());
        return;
    }
    assert!(
        !required,
        "{} is missing, and CI=true or TRACEGATE_REQUIRE_CORPUS=1 require it: \
         run scripts/fetch-corpus to download it (CONTRIBUTING.md, \"The test corpus\")",
        dir.display()
    );
    assert!(
        !dir.is_dir(),
        "{} appeared after the last build, so the corpus tests were built as ignored: \
         `touch build.rs` (scripts/fetch-corpus does) and run the tests again",
        dir.display()
    );
}

/// Issue #11: the unified perf table covers at least 95% of GPU time (or
/// as much as TraceLens's covers, when less) on every trace TraceLens
/// reported, torch.compile's included.
#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn perf_table_covers_gpu_time_as_tracelens_does() {
    let corpus = corpus_dir();
    // A GPU-only trace has no ops, and TraceLens no perf table for it.
    let mut pairs: Vec<(PathBuf, PathBuf)> = traces_with_oracle(&corpus)
        .into_iter()
        .filter(|(_, oracle)| oracle.join("unified_perf_summary.csv").is_file())
        .collect();
    let compiled = corpus.join("tracelens/torch_compile_triton");
    pairs.push((
        compiled.join("trace.json.gz"),
        compiled.join("trace_perf_report_csvs"),
    ));
    assert!(pairs.len() >= 11, "{} traces", pairs.len());
    for (trace, oracle) in pairs {
        let report = json_report(&trace);
        let busy = report["timeline"]["busy_time"].as_f64().expect("busy_time");
        let rows = report["perf"]["rows"].as_array().expect("perf rows");
        let ours: f64 = rows
            .iter()
            .map(|r| r["kernel_time_us"]["sum"].as_f64().expect("sum"))
            .sum();
        let theirs = Csv::read(&oracle.join("unified_perf_summary.csv"));
        let column = theirs.column("Kernel Time (µs)_sum");
        let tracelens: f64 = theirs
            .rows
            .iter()
            .filter_map(|row| row[column].parse::<f64>().ok())
            .sum();
        let floor = (tracelens / busy).min(0.95);
        assert!(
            ours / busy >= floor - 1e-9,
            "{}: the perf table holds {:.1}% of GPU time, TraceLens's {:.1}%",
            trace.display(),
            100.0 * ours / busy,
            100.0 * tracelens / busy
        );
    }
}
