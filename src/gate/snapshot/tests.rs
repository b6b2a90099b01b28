//! Snapshot tests: SHA-256 vectors, workload names, round trips, version
//! and error handling, sniffing, and the corpus; also the corpus helpers
//! other gate tests share.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use super::*;
use crate::analysis::hardware::ComputeSpec;
use crate::analysis::ops::category::Category;
use crate::analysis::ops::stats::Stats;
use crate::analysis::profile::{OpModel, Phase, Profile};
use crate::analysis::timeline::Breakdown;
use crate::trace::Metadata;

/// The shared corpus beside the checkout, for tests that are ignored
/// without it (build.rs sets `tracegate_corpus`).
pub(crate) fn corpus_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus"))
}

/// The analysed profile of a corpus trace (cached across tests), with
/// its file's SHA-256 and size.
pub(crate) fn corpus_profile(relative: &str) -> (Profile, String, u64) {
    type Analysed = (Profile, String, u64);
    static CACHE: OnceLock<Mutex<HashMap<String, Analysed>>> = OnceLock::new();
    let path = corpus_dir().join(relative);
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(found) = cache.lock().expect("cache").get(relative) {
        return found.clone();
    }
    let trace = crate::trace::load_file(&path, &mut |_| {}).expect("corpus trace loads");
    let tree = crate::trace::link::link(&trace);
    let profile = crate::analysis::analyse::analyse(&trace, &tree);
    let (sha, bytes) = sha256_file(&path).expect("corpus trace readable");
    let entry = (profile, sha, bytes);
    cache
        .lock()
        .expect("cache")
        .insert(relative.to_string(), entry.clone());
    entry
}

/// The snapshot of a corpus trace.
pub(crate) fn corpus_snapshot(relative: &str) -> Snapshot {
    let (profile, sha, bytes) = corpus_profile(relative);
    Snapshot::from_profile(&profile, sha, bytes)
}

#[test]
fn sha256_test_vectors() {
    // FIPS 180-4 examples (NIST CSRC "SHA256.pdf").
    assert_eq!(
        sha256_hex(b""),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    assert_eq!(
        sha256_hex(b"abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    assert_eq!(
        sha256_hex(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
    );
    // One million 'a' (the file reader feeds it in 64 KiB pieces).
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("a.bin");
    std::fs::write(&path, vec![b'a'; 1_000_000]).expect("write");
    assert_eq!(
        sha256_file(&path).expect("read").0,
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
    );
}

#[test]
fn sha256_of_a_file_streams() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("data.bin");
    let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(&path, &data).expect("write");
    assert_eq!(
        sha256_file(&path).expect("read"),
        (sha256_hex(&data), data.len() as u64)
    );
}

#[test]
fn workload_names_drop_known_suffixes_only() {
    for (file, workload) in [
        ("dir/bert.json.gz", "bert"),
        ("bert.snapshot.json.gz", "bert"),
        ("host_1.1700000000.pt.trace.json", "host_1.1700000000"),
        (
            "Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
            "Qwen_Qwen1.5-0.5B-Chat__1016005",
        ),
        ("plain", "plain"),
        (".json", ".json"),
    ] {
        assert_eq!(workload_name(Path::new(file)), workload, "{file}");
    }
}

/// What GitHub's upload-artifact refuses in a path.
const ARTIFACT_REFUSED: &[char] = &['"', ':', '<', '>', '|', '*', '?', '\r', '\n'];

#[test]
fn a_workload_named_bert_colon_bs32_gets_an_artifact_safe_file_name() {
    assert_eq!(artifact_file_name("bert:bs32"), "bert%3Abs32");
    assert_eq!(artifact_file_name("Qwen1.5-0.5B"), "Qwen1.5-0.5B");
    assert_eq!(artifact_file_name(".."), "%2E.");
    let path = format!(
        "snapshots/{}.snapshot.json.gz",
        artifact_file_name("bert:bs32")
    );
    assert_eq!(workload_name(Path::new(&path)), "bert:bs32");
    // A `%` that the mapping never writes reads as before.
    assert_eq!(workload_name(Path::new("a%20b%3a.json")), "a%20b%3a");
}

proptest::proptest! {
    #[test]
    fn artifact_file_names_are_safe_and_read_back_as_the_workload(
        name in "[a-z:%<>|*?\"/\\\r\n\t.é -]{1,24}",
    ) {
        // Ends in a letter: no suffix `workload_name` drops.
        let name = format!("{name}x");
        let file = artifact_file_name(&name);
        proptest::prop_assert!(!file.contains(ARTIFACT_REFUSED), "{file}");
        proptest::prop_assert!(!file.contains(['/', '\\']) && file != "." && file != "..");
        let path = format!("{file}.snapshot.json.gz");
        proptest::prop_assert_eq!(workload_name(Path::new(&path)), name);
    }
}

#[test]
fn spaced_samples_are_evenly_spread_and_bounded() {
    let values: Vec<f64> = (0..200).map(f64::from).collect();
    let sample = spaced_sample(&values, 64);
    assert_eq!(sample.len(), 64);
    assert_eq!(sample[0], 0.0);
    assert_eq!(sample[1], 3.0);
    assert_eq!(sample[63], 196.0);
    assert_eq!(spaced_sample(&values[..10], 64), values[..10].to_vec());
}

pub(crate) fn tiny_snapshot() -> Snapshot {
    Snapshot {
        format: SNAPSHOT_FORMAT.to_string(),
        version: SNAPSHOT_VERSION_1_0,
        tracegate_version: "0.0.0".to_string(),
        workload: "tiny".to_string(),
        fingerprint: Fingerprint {
            cuda_runtime_version: Some("12040".to_string()),
            gpus: vec![GpuCount {
                name: "NVIDIA H100 80GB HBM3".to_string(),
                count: 8,
            }],
            ..Fingerprint::default()
        },
        has_gpu_activity: true,
        timeline: Breakdown {
            busy_time: 10.0,
            total_time: 12.0,
            idle_time: 2.0,
            computation_time: 10.0,
            ..Breakdown::default()
        },
        steps: Vec::new(),
        ops: vec![OpSnapshot {
            name: "aten::mm".to_string(),
            input_dims: "((2, 3), (3, 4))".to_string(),
            input_type: "('c10::BFloat16', 'c10::BFloat16')".to_string(),
            input_strides: "((3, 1), (4, 1))".to_string(),
            concrete_inputs: "('', '')".to_string(),
            category: Category::Gemm,
            module_path: Some("Model_0/Linear_0".to_string()),
            direct: Stats::of(&[1.0, 2.0]),
            samples_us: vec![1.0, 2.0],
            step_us: vec![(3, 3.0)],
            kernel_sequence: vec!["gemm_kernel".to_string()],
            model: Some(OpModel {
                family: "GEMM".to_string(),
                flops: 48.0,
                bytes: 52.0,
                compute_spec: Some(ComputeSpec::MatrixBf16),
            }),
            graph: None,
            kernel_us: Vec::new(),
            kernel_samples_us: Vec::new(),
        }],
        short_kernels: ShortKernelCounts::default(),
        idle: IdleCounts::default(),
        anomalies: AnomalyCounts::default(),
        coverage: None,
        inference_steps: Vec::new(),
        phase_ops: Vec::new(),
        ranks: Vec::new(),
        kernel_families: Vec::new(),
    }
}

#[test]
fn gz_round_trip_is_exact_and_deterministic() {
    let snapshot = tiny_snapshot();
    let bytes = snapshot.to_gz_bytes();
    assert_eq!(&bytes[..2], &[0x1f, 0x8b]);
    assert_eq!(bytes, snapshot.to_gz_bytes());
    let back = Snapshot::from_reader("tiny.json.gz", &bytes[..]).expect("loads");
    assert_eq!(back, snapshot);
    // Plain JSON reads too, and `format` is the first key.
    let json = serde_json::to_vec(&snapshot).expect("json");
    assert!(json.starts_with(b"{\"format\":\"tracegate-snapshot\""));
    assert_eq!(
        Snapshot::from_reader("tiny.json", &json[..]).expect("loads"),
        snapshot
    );
}

#[test]
fn fingerprint_text() {
    let snapshot = tiny_snapshot();
    assert_eq!(
        snapshot.fingerprint.gpus_text(),
        "8 × NVIDIA H100 80GB HBM3"
    );
    assert_eq!(
        snapshot.fingerprint.runtime_text().as_deref(),
        Some("CUDA 12.4")
    );
    let rocm = Fingerprint {
        hip_runtime_version: Some("60443483".to_string()),
        world_size: Some(8),
        rank: Some(3),
        ..Fingerprint::default()
    };
    assert_eq!(rocm.runtime_text().as_deref(), Some("HIP 6.4"));
    let summary = rocm.summary(2);
    assert_eq!(summary.distributed.as_deref(), Some("rank 3 of 8"));
    assert_eq!((summary.gpus.as_str(), summary.runs), ("unknown", 2));
}

fn json_with(edit: impl FnOnce(&mut serde_json::Value)) -> Vec<u8> {
    let mut value = serde_json::to_value(tiny_snapshot()).expect("value");
    edit(&mut value);
    serde_json::to_vec(&value).expect("json")
}

#[test]
fn unknown_fields_of_a_newer_minor_version_are_ignored() {
    let json = json_with(|v| {
        v["version"]["minor"] = 7.into();
        v["future_field"] = serde_json::json!({"anything": [1, 2]});
        v["ops"][0]["future_op_field"] = 1.into();
        v["fingerprint"]["future"] = "x".into();
    });
    let loaded = Snapshot::from_json_bytes("new.json", &json).expect("a newer minor loads");
    assert_eq!(loaded.version, SnapshotVersion { major: 1, minor: 7 });
    assert_eq!(loaded.ops, tiny_snapshot().ops);
}

#[test]
fn an_incompatible_major_version_is_a_clear_error() {
    let json = json_with(|v| v["version"]["major"] = 2.into());
    let error = Snapshot::from_json_bytes("base.json.gz", &json).expect_err("major 2");
    assert!(matches!(error, SnapshotError::Incompatible { .. }));
    let message = error.to_string();
    assert!(
        message.starts_with("base.json.gz: snapshot format version 2.0"),
        "{message}"
    );
    assert!(message.contains("reads version 1.x"), "{message}");
}

#[test]
fn missing_and_invalid_snapshots_name_the_file() {
    let missing = Snapshot::load_path(Path::new("/nonexistent/base.json.gz")).expect_err("missing");
    assert!(
        missing
            .to_string()
            .starts_with("/nonexistent/base.json.gz: cannot read")
    );
    let trace = br#"{"traceEvents": []}"#;
    let error = Snapshot::from_json_bytes("t.json", trace).expect_err("a trace");
    assert_eq!(
        error.to_string(),
        "t.json: not a tracegate snapshot: no `format` key"
    );
    let error = Snapshot::from_json_bytes("t.json", b"{\"format\": ").expect_err("cut");
    assert!(
        error
            .to_string()
            .starts_with("t.json: invalid snapshot: bad JSON"),
        "{error}"
    );
    let error = Snapshot::from_json_bytes("t.json", b"[1, 2]").expect_err("array");
    assert!(matches!(error, SnapshotError::NotSnapshot { .. }));
    let json = json_with(|v| v["ops"][0]["direct"] = "fast".into());
    let error = Snapshot::from_json_bytes("s.json", &json).expect_err("bad field");
    assert!(
        error.to_string().starts_with("s.json: invalid snapshot: "),
        "{error}"
    );
    let broken = &tiny_snapshot().to_gz_bytes()[..30];
    let error = Snapshot::from_reader("s.json.gz", broken).expect_err("cut gzip");
    assert!(error.to_string().contains("broken gzip stream"), "{error}");
}

#[test]
fn sniffing_tells_snapshots_from_traces() {
    let dir = tempfile::tempdir().expect("temp dir");
    let snapshot = dir.path().join("base.json.gz");
    tiny_snapshot().write_path(&snapshot).expect("write");
    assert!(is_snapshot(&snapshot).expect("readable"));
    let plain = dir.path().join("base.json");
    let pretty = serde_json::to_vec_pretty(&tiny_snapshot()).expect("json");
    std::fs::write(&plain, pretty).expect("write");
    assert!(is_snapshot(&plain).expect("readable"));
    let trace = dir.path().join("trace.json");
    std::fs::write(&trace, br#"{"schemaVersion": 1, "traceEvents": []}"#).expect("write");
    assert!(!is_snapshot(&trace).expect("readable"));
    let garbage = dir.path().join("bad.gz");
    std::fs::write(&garbage, [0x1f, 0x8b, 0, 1, 2, 3]).expect("write");
    assert!(!is_snapshot(&garbage).expect("readable"));
    assert!(is_snapshot(&dir.path().join("absent")).is_err());
    let fixture = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/small_cuda.json"
    ));
    assert!(!is_snapshot(fixture).expect("fixture readable"));
}

#[test]
fn pytorch_version_is_found_in_nested_metadata() {
    let metadata = Metadata {
        fields: vec![
            ("schemaVersion".to_string(), 1.into()),
            (
                "metadata".to_string(),
                serde_json::json!({"system": {"torch_env_info": {"torch_version": "2.6.0+cu124"}},
                                   "pip_packages": ["torch==2.5.0"]}),
            ),
        ],
        devices: Vec::new(),
    };
    assert_eq!(pytorch_version(&metadata).as_deref(), Some("2.6.0+cu124"));
    let top = Metadata {
        fields: vec![("pytorch_version".to_string(), "2.7.1".into())],
        devices: Vec::new(),
    };
    assert_eq!(pytorch_version(&top).as_deref(), Some("2.7.1"));
    assert_eq!(pytorch_version(&Metadata::default()), None);
}

#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
#[test]
fn corpus_pytorch_versions() {
    let dir = corpus_dir();
    for (relative, version) in [
        (
            "tracelens/h100/gaunernst_bert-small-uncased__1016001.json.gz",
            Some("2.6.0+cu124"),
        ),
        (
            "tracelens/mi300/gaunernst_bert-small-uncased__1016001.json.gz",
            Some("2.7.0+gitf717b2a"),
        ),
        ("hta/triton_example.json.gz", None),
    ] {
        let trace = crate::trace::load_file(&dir.join(relative), &mut |_| {}).expect("loads");
        assert_eq!(
            pytorch_version(&trace.metadata).as_deref(),
            version,
            "{relative}"
        );
    }
}

#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
#[test]
fn corpus_snapshots_round_trip_and_stay_small() {
    let dir = corpus_dir();
    for relative in [
        "tracelens/h100/gaunernst_bert-small-uncased__1016001.json.gz",
        "tracelens/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
        "tracelens/mi300/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
        "hta/trace_diff_control_a100.json.gz",
    ] {
        let (profile, sha, bytes) = corpus_profile(relative);
        let snapshot = Snapshot::from_profile(&profile, sha.clone(), bytes);
        assert_eq!(snapshot.fingerprint.trace_sha256, sha);
        assert_eq!(sha.len(), 64);
        assert!(
            snapshot
                .ops
                .iter()
                .all(|op| op.samples_us.len() <= MAX_SAMPLES)
        );
        assert!(
            snapshot
                .ops
                .iter()
                .all(|op| op.direct.count >= op.samples_us.len() as u64)
        );
        let gz = snapshot.to_gz_bytes();
        let json_bytes = profile.source.json_bytes;
        assert!(
            gz.len() as f64 <= 0.05 * json_bytes as f64,
            "{relative}: snapshot {} bytes vs trace JSON {json_bytes} bytes",
            gz.len()
        );
        let path = std::env::temp_dir().join(format!(
            "tracegate-snapshot-test-{}-{}.json.gz",
            std::process::id(),
            snapshot.workload
        ));
        std::fs::write(&path, &gz).expect("write temp snapshot");
        assert!(is_snapshot(&path).expect("readable"));
        assert!(!is_snapshot(&dir.join(relative)).expect("readable"));
        let started = std::time::Instant::now();
        let back = Snapshot::load_path(&path).expect("loads");
        let load_ms = started.elapsed().as_secs_f64() * 1e3;
        std::fs::remove_file(&path).expect("remove temp snapshot");
        assert_eq!(back, snapshot, "{relative}");
        eprintln!(
            "{relative}: {} op rows, snapshot {} bytes ({:.2}% of {json_bytes} JSON bytes), loaded in {load_ms:.1} ms",
            snapshot.ops.len(),
            gz.len(),
            100.0 * gz.len() as f64 / json_bytes as f64
        );
    }
}

#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
#[test]
fn corpus_fingerprint_records_the_environment() {
    let snapshot = corpus_snapshot("tracelens/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz");
    let fingerprint = &snapshot.fingerprint;
    assert_eq!(snapshot.workload, "Qwen_Qwen1.5-0.5B-Chat__1016005");
    assert_eq!(fingerprint.gpus_text(), "1 × NVIDIA H100 80GB HBM3");
    assert_eq!(fingerprint.hardware.as_deref(), Some("H100 SXM"));
    assert_eq!(fingerprint.runtime_text().as_deref(), Some("CUDA 12.4"));
    assert!(snapshot.has_gpu_activity);
    assert!(snapshot.ops.iter().any(|op| op.model.is_some()));
}

// ----------------------------------------------- hostile snapshots (fuzzing)

/// The error reading `tiny_snapshot()` edited by `edit`.
fn refused(edit: impl FnOnce(&mut serde_json::Value)) -> String {
    Snapshot::from_json_bytes("s.json", &json_with(edit))
        .expect_err("refused")
        .to_string()
}

#[test]
fn snapshot_with_2m_samples_in_a_row_is_refused_at_the_65th() {
    let json = json_with(|v| v["ops"][0]["samples_us"] = vec![1.0; 2_000_000].into());
    let message = Snapshot::from_json_bytes("s.json", &json)
        .expect_err("refused")
        .to_string();
    assert!(
        message.starts_with(
            "s.json: invalid snapshot: ops[0].samples_us: more than 64 samples; a snapshot holds \
             at most 64 (no tracegate writes more) at line 1 column "
        ),
        "{message}"
    );
    let mut snapshot = tiny_snapshot();
    snapshot.ops[0].samples_us = vec![1.0; MAX_SAMPLES];
    assert_eq!(snapshot.check_bounds(), Ok(()));
    snapshot.ops[0].samples_us.push(1.0);
    assert_eq!(
        snapshot.check_bounds(),
        Err(
            "ops[0].samples_us: 65 samples; a snapshot holds at most 64 (no tracegate writes more)"
                .to_string()
        )
    );
}

#[test]
fn snapshot_with_negative_huge_or_text_times_is_refused_by_field() {
    for (edit, expected) in [
        (
            Box::new(|v: &mut serde_json::Value| v["ops"][0]["direct"]["mean"] = (-5.0).into())
                as Box<dyn FnOnce(&mut serde_json::Value)>,
            "s.json: invalid snapshot: ops[0].direct.mean: -5 is negative; times are ≥ 0 µs",
        ),
        (
            Box::new(|v| v["ops"][0]["samples_us"][1] = 1e300.into()),
            "s.json: invalid snapshot: ops[0].samples_us[1]: 1e300 µs is more than 1e15 µs \
             (about 31.7 years), the limit for a time",
        ),
        (
            Box::new(|v| v["ops"][0]["step_us"][0][1] = (-1.0).into()),
            "s.json: invalid snapshot: ops[0].step_us[0]: -1 is negative; times are ≥ 0 µs",
        ),
        (
            Box::new(|v| v["timeline"]["idle_time"] = (-0.5).into()),
            "s.json: invalid snapshot: timeline.idle_time: -0.5 is negative; times are ≥ 0 µs",
        ),
        (
            Box::new(|v| v["idle"]["host_wait_us"] = 2e15.into()),
            "s.json: invalid snapshot: idle.host_wait_us: 2e15 µs is more than 1e15 µs (about \
             31.7 years), the limit for a time",
        ),
        (
            Box::new(|v| v["ops"][0]["model"]["flops"] = (-1.0).into()),
            "s.json: invalid snapshot: ops[0].model.flops: -1 is not a count from 0 to 1e30",
        ),
    ] {
        assert_eq!(refused(edit), expected);
    }
    let message = refused(|v| v["ops"][0]["samples_us"][0] = "NaN".into());
    assert!(
        message.starts_with(
            "s.json: invalid snapshot: ops[0].samples_us[0]: invalid type: string \"NaN\", \
             expected f64 at line 1 column "
        ),
        "{message}"
    );
}

#[test]
fn snapshot_rows_lists_and_strings_are_bounded() {
    let message = refused(|v| {
        let row = v["ops"][0].clone();
        v["ops"].as_array_mut().expect("ops").push(row);
    });
    assert_eq!(
        message,
        "s.json: invalid snapshot: ops[1]: the same op key (name, dims, types, strides, concrete \
         inputs, graph place) as ops[0]; a snapshot has one row per key"
    );
    let message = refused(|v| {
        v["ops"][0]["kernel_sequence"] = vec!["k"; MAX_KERNELS + 1].into();
    });
    assert!(
        message.starts_with(
            "s.json: invalid snapshot: ops[0].kernel_sequence: more than 4096 kernel names"
        ),
        "{message}"
    );
    let message = refused(|v| v["steps"] = vec![serde_json::Value::Null; MAX_STEPS + 1].into());
    assert!(
        message.contains(": steps[0]: invalid type: null"),
        "{message}"
    );
    let mut snapshot = tiny_snapshot();
    snapshot.ops[0].input_dims = "x".repeat(MAX_STRING_BYTES + 1);
    assert_eq!(
        snapshot.check_bounds(),
        Err(format!(
            "ops[0].input_dims: a string of {} bytes; a snapshot's strings hold at most {}",
            MAX_STRING_BYTES + 1,
            MAX_STRING_BYTES
        ))
    );
}

#[test]
fn rows_that_differ_only_in_graph_place_are_two_keys() {
    // One kernel by name and launch configuration in two graph launches of
    // a step (hta/trace_diff_test_v100): two rows, as the comparison keys them.
    let place = |graph: &str| serde_json::json!({"graph": graph, "role": "kernel", "launch": "cudaGraphLaunch"});
    let two_graphs = json_with(|v| {
        let mut row = v["ops"][0].clone();
        v["ops"][0]["graph"] = place("launch #1");
        row["graph"] = place("launch #0");
        v["ops"].as_array_mut().expect("ops").push(row);
    });
    let snapshot = Snapshot::from_json_bytes("s.json", &two_graphs).expect("two keys load");
    assert_ne!(snapshot.ops[0].key(), snapshot.ops[1].key());
    let message = refused(|v| {
        v["ops"][0]["graph"] = place("launch #0");
        let mut row = v["ops"][0].clone();
        row["graph"]["launch"] = "hipGraphLaunch".into();
        v["ops"].as_array_mut().expect("ops").push(row);
    });
    assert!(
        message.contains("ops[1]: the same op key (name, dims, types, strides, concrete inputs, graph place) as ops[0]"),
        "{message}"
    );
}

#[test]
fn graph_rows_keep_the_bounds_of_every_string_and_list() {
    let long = "x".repeat(MAX_STRING_BYTES + 1);
    let message = refused(|v| {
        v["ops"][0]["graph"] =
            serde_json::json!({"graph": long, "role": "kernel", "launch": "cudaGraphLaunch"});
    });
    assert!(
        message.contains(&format!(
            "ops[0].graph.graph: a string of {} bytes",
            MAX_STRING_BYTES + 1
        )),
        "{message}"
    );
    let message = refused(|v| v["ops"][0]["kernel_us"] = serde_json::json!([[long, 1.0]]));
    assert!(
        message.contains("ops[0].kernel_us[0]: a string of"),
        "{message}"
    );
    let message = refused(|v| v["ops"][0]["kernel_us"] = serde_json::json!([["k", -1.0]]));
    assert!(message.contains("ops[0].kernel_us[0]:"), "{message}");
    let many = vec![serde_json::json!(["k", 1.0]); MAX_KERNELS + 1];
    let message = refused(|v| v["ops"][0]["kernel_us"] = many.clone().into());
    assert!(
        message.contains("ops[0].kernel_us: 4097 kernel times; a snapshot holds at most 4096"),
        "{message}"
    );
}

#[test]
fn snapshot_errors_echo_no_control_characters() {
    let message = refused(|v| v["ops"][0]["category"] = "x\n::error title=injected::boom".into());
    assert!(!message.chars().any(char::is_control), "{message:?}");
    assert!(
        message.contains("unknown variant `x\\n::error title=injected::boom`"),
        "{message}"
    );
    let message = Snapshot::from_json_bytes("a\nb.json", br#"{"format": "x\u001b[2J"}"#)
        .expect_err("not a snapshot")
        .to_string();
    assert_eq!(
        message,
        "a\\nb.json: not a tracegate snapshot: `format` is `x\\u{1b}[2J`, expected `tracegate-snapshot`"
    );
}

#[test]
fn the_writer_keeps_the_bounds_the_reader_checks() {
    let (mut profile, sha, bytes) = example_profile();
    let row = &mut profile.unique_args[0];
    row.samples_us = vec![-1.0, f64::NAN, f64::INFINITY, 2e15, 3.0];
    row.direct.mean = f64::NAN;
    row.direct.min = -2.0;
    row.kernel_sequence = vec!["k".to_string(); MAX_KERNELS + 10];
    row.name = "é".repeat(MAX_STRING_BYTES); // 2 bytes a character
    row.step_us = vec![(1, -4.0)];
    profile.timeline.idle_time = -1e-9;
    profile.idle.host_wait_us = f64::NAN;
    let snapshot = Snapshot::from_profile(&profile, sha, bytes);
    assert_eq!(snapshot.check_bounds(), Ok(()));
    let op = &snapshot.ops[0];
    assert_eq!(op.samples_us, [0.0, 0.0, MAX_TIME_US, MAX_TIME_US, 3.0]);
    assert_eq!(op.kernel_sequence.len(), MAX_KERNELS);
    assert_eq!(op.name.len(), MAX_STRING_BYTES);
    assert_eq!(snapshot.timeline.idle_time, 0.0);
    let back = Snapshot::from_reader("back", &snapshot.to_gz_bytes()[..]).expect("reads back");
    assert_eq!(back, snapshot);
}

/// A proptest configuration with `PROPTEST_CASES` cases when set, else
/// `default` (a few, for CI): the gate's fuzz targets share it.
pub(crate) fn fuzz_config(default: u32) -> proptest::test_runner::Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok());
    proptest::test_runner::Config::with_cases(cases.unwrap_or(default))
}

/// The snapshot of `examples/baseline.json.gz` (three profiled steps).
pub(crate) fn example_snapshot() -> Snapshot {
    let (profile, sha, bytes) = example_profile();
    Snapshot::from_profile(&profile, sha, bytes)
}

/// The analysed profile of `examples/baseline.json.gz`, with its SHA-256
/// and size (the example is in the repository, so no test skips).
pub(crate) fn example_profile() -> (Profile, String, u64) {
    static PROFILE: OnceLock<(Profile, String, u64)> = OnceLock::new();
    PROFILE
        .get_or_init(|| {
            let path = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("examples")
                .join("baseline.json.gz");
            let trace = crate::trace::load_file(&path, &mut |_| {}).expect("the example loads");
            let tree = crate::trace::link::link(&trace);
            let profile = crate::analysis::analyse::analyse(&trace, &tree);
            let (sha, bytes) = sha256_file(&path).expect("the example reads");
            (profile, sha, bytes)
        })
        .clone()
}

#[test]
fn inference_phases_and_kernel_families_round_trip_and_are_bounded() {
    let trace = crate::trace::load_file(
        Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/inference_phases.json"
        )),
        &mut |_| {},
    )
    .expect("fixture loads");
    let tree = crate::trace::link::link(&trace);
    let profile = crate::analysis::analyse::analyse(&trace, &tree);
    let snapshot = Snapshot::from_profile(&profile, String::new(), 0);
    // Its GEMM kernel runs in the prefill and the decode rows: a family
    // (1.4), with every launch.
    assert_eq!(snapshot.version, SNAPSHOT_VERSION);
    assert_eq!(SNAPSHOT_VERSION.to_string(), "1.4");
    let family = &snapshot.kernel_families[0];
    assert_eq!(family.launches as usize, family.samples_us.len());
    assert!(family.total_us > 0.0, "{family:?}");
    let phases: Vec<Phase> = snapshot.inference_steps.iter().map(|s| s.phase).collect();
    assert_eq!(
        phases,
        [
            Phase::Prefill,
            Phase::Decode,
            Phase::Decode,
            Phase::Decode,
            Phase::Decode
        ]
    );
    assert_eq!(snapshot.phase_ops.len(), 2);
    assert_eq!(
        snapshot.phase_ops[1].ops[0],
        ("aten::mm".to_string(), 402.0)
    );
    let back = Snapshot::from_reader("phases.json.gz", &snapshot.to_gz_bytes()[..]).expect("loads");
    assert_eq!(back, snapshot);
    // Without phases a snapshot stays 1.0.
    assert_eq!(tiny_snapshot().version, SNAPSHOT_VERSION_1_0);
    let mut broken = snapshot.clone();
    broken.kernel_families[0].samples_us[0] = -1.0;
    assert_eq!(
        broken.check_bounds(),
        Err("kernel_families[0].samples_us[0]: -1 is negative; times are ≥ 0 µs".to_string())
    );
    let mut broken = snapshot;
    broken.inference_steps[2].gpu_time_us = -1.0;
    assert_eq!(
        broken.check_bounds(),
        Err("inference_steps[2].gpu_time_us: -1 is negative; times are ≥ 0 µs".to_string())
    );
}

#[test]
fn a_snapshot_with_a_repeated_step_row_is_refused_on_load() {
    let step = serde_json::json!({"number": 7, "host_duration_us": 10.0,
        "timeline": serde_json::to_value(Breakdown::default()).unwrap(), "kernel_time_us": 5.0});
    let message = refused(|v| v["steps"] = vec![step.clone(), step.clone()].into());
    assert_eq!(
        message,
        "s.json: invalid snapshot: steps[1]: step 7 again (as steps[0]); a snapshot has one row \
         per step"
    );
}
