//! Replay IR and packages: synthetic calls, selection from a verdict, the
//! package format, and real calls from the corpus (compared with the raw
//! event arguments), with `replay.py` checked by Python where it is present.

#![allow(clippy::print_stderr)] // tests say when they skip

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use flate2::read::GzDecoder;
use serde_json::{Value, json};

use super::args::{build, contiguous, int_list};
use super::*;
use crate::gate::policy::{self, Pattern};
use crate::gate::snapshot::tests::corpus_dir;
use crate::gate::snapshot::{self, Snapshot};
use crate::gate::verdict::{
    EnvironmentSummary, Finding, FindingKind, FindingPriority, OpRef, Outcome, Severity, Verdict,
    WorkloadSummary,
};
use crate::trace::{Kind, NO_DETAIL, Trace};

fn recorded(
    dims: Value,
    types: Value,
    strides: Option<Value>,
    concrete: Option<Value>,
) -> RecordedArgs {
    RecordedArgs {
        input_dims: dims,
        input_type: types,
        input_strides: strides,
        concrete_inputs: concrete,
    }
}

fn no_list_dtype(_: &[Vec<i64>]) -> Option<(String, String)> {
    None
}

fn all_args(ir: &ReplayIr) -> Vec<&Arg> {
    let mut all: Vec<&Arg> = ir.args.iter().chain(&ir.kwargs).collect();
    all.sort_by_key(|a| a.position);
    all
}

fn tensor_of(arg: &Arg) -> &TensorSpec {
    match &arg.value {
        ArgValue::Tensor(t) => t,
        other => panic!("input {} is not a tensor: {other:?}", arg.position),
    }
}

#[test]
fn addmm_splits_keyword_arguments_by_schema() {
    let ir = build(
        "aten::addmm",
        recorded(
            json!([[768], [788, 768], [768, 768], [], []]),
            json!([
                "c10::BFloat16",
                "c10::BFloat16",
                "c10::BFloat16",
                "Scalar",
                "Scalar"
            ]),
            Some(json!([[1], [768, 1], [1, 768], [], []])),
            Some(json!(["", "", "", "1", "1"])),
        ),
        &no_list_dtype,
    )
    .expect("addmm builds");
    assert_eq!(ir.op.overload.as_deref(), Some("default"));
    assert!(ir.op.schema_known);
    assert_eq!(ir.args.len(), 3);
    let names: Vec<_> = ir.kwargs.iter().map(|a| a.name.as_deref()).collect();
    assert_eq!(names, [Some("beta"), Some("alpha")]);
    assert_eq!(ir.kwargs[0].value, ArgValue::Int { value: 1 });
    let mat2 = tensor_of(&ir.args[2]);
    assert_eq!(mat2.shape, [768, 768]);
    assert_eq!(mat2.strides, [1, 768]);
    assert!(mat2.strides_recorded);
    assert_eq!(mat2.torch_dtype, "bfloat16");
    assert_eq!(mat2.storage_bytes, 768 * 768 * 2);
    assert_eq!(ir.input_bytes, (768 + 788 * 768 + 768 * 768) * 2);
    assert!(ir.notes.is_empty(), "{:?}", ir.notes);
    let text = serde_json::to_value(&ir).expect("serialises");
    assert_eq!(text["format"], IR_FORMAT);
    assert_eq!(text["version"], IR_VERSION);
    assert_eq!(text["args"][0]["kind"], "tensor");
    assert_eq!(text["args"][0]["init"]["kind"], "normal");
    assert_eq!(text["kwargs"][1]["kind"], "int");
    assert_eq!(text["kwargs"][1]["source"], "recorded");
}

#[test]
fn python_numbers_stay_on_the_cpu_and_defaults_fill_unrecorded_values() {
    let add = build(
        "aten::add",
        recorded(
            json!([[1, 5184, 1], [], []]),
            json!(["c10::BFloat16", "double", "Scalar"]),
            Some(json!([[5184, 1, 1], [], []])),
            Some(json!(["", "", "1"])),
        ),
        &no_list_dtype,
    )
    .expect("add builds");
    assert_eq!(add.op.overload.as_deref(), Some("Tensor"));
    let other = tensor_of(&add.args[1]);
    assert_eq!(other.shape, Vec::<i64>::new());
    assert_eq!(other.device.as_deref(), Some("cpu"));
    assert_eq!(tensor_of(&add.args[0]).device, None);
    assert!(add.notes.iter().any(|n| n.contains("Python number")));

    // A 2021 trace: no strides, no concrete inputs; alpha comes from the schema.
    let old = build(
        "aten::add",
        recorded(
            json!([[32, 2048, 7, 7], [32, 2048, 7, 7], []]),
            json!(["float", "float", "Int"]),
            None,
            None,
        ),
        &no_list_dtype,
    )
    .expect("old add builds");
    assert_eq!(old.kwargs[0].source, ValueSource::SchemaDefault);
    assert_eq!(old.kwargs[0].value, ArgValue::Int { value: 1 });
    assert_eq!(tensor_of(&old.args[0]).strides, [100352, 49, 7, 1]);
    assert!(!tensor_of(&old.args[0]).strides_recorded);
    assert!(old.notes.iter().any(|n| n.contains("no strides")));

    let gelu = build(
        "aten::gelu",
        recorded(
            json!([[4, 197, 3072], []]),
            json!(["c10::BFloat16", ""]),
            Some(json!([[605184, 3072, 1], []])),
            Some(json!(["", ""])),
        ),
        &no_list_dtype,
    )
    .expect("gelu builds");
    assert_eq!(gelu.kwargs[0].name.as_deref(), Some("approximate"));
    assert_eq!(
        gelu.kwargs[0].value,
        ArgValue::Str {
            value: "none".to_string()
        }
    );

    let conv2d_default = build(
        "aten::conv2d",
        recorded(
            json!([[1, 3, 8, 8], [4, 3, 3, 3], [], [], [], [], []]),
            json!([
                "float",
                "float",
                "",
                "GenericList",
                "GenericList",
                "GenericList",
                "Int"
            ]),
            None,
            None,
        ),
        &no_list_dtype,
    )
    .expect("conv2d builds from defaults");
    assert_eq!(
        conv2d_default.args[3].value,
        ArgValue::List {
            values: vec![json!(1), json!(1)]
        }
    );
    assert_eq!(conv2d_default.args[2].value, ArgValue::None);
}

#[test]
fn integer_inputs_are_valid_indices_and_lists_get_a_dtype() {
    let embedding = build(
        "aten::embedding",
        recorded(
            json!([[151936, 1024], [16, 559], [], [], []]),
            json!(["c10::BFloat16", "long int", "Scalar", "Scalar", "Scalar"]),
            Some(json!([[1024, 1], [559, 1], [], [], []])),
            Some(json!(["", "", "-1", "False", "False"])),
        ),
        &no_list_dtype,
    )
    .expect("embedding builds");
    assert_eq!(
        tensor_of(&embedding.args[1]).init,
        Init::Randint { high: 1024 }
    );
    assert_eq!(embedding.args[2].value, ArgValue::Int { value: -1 });
    assert_eq!(embedding.args[3].value, ArgValue::Bool { value: false });

    let guess = |shapes: &[Vec<i64>]| {
        assert_eq!(shapes, [vec![4, 1, 768], vec![4, 196, 768]]);
        Some(("c10::BFloat16".to_string(), "guessed".to_string()))
    };
    let cat = build(
        "aten::cat",
        recorded(
            json!([[[4, 1, 768], [4, 196, 768]], []]),
            json!(["TensorList", "Scalar"]),
            Some(json!([[[0, 768, 1], [150528, 1, 196]], []])),
            Some(json!(["", "1"])),
        ),
        &guess,
    )
    .expect("cat builds");
    let ArgValue::TensorList { tensors } = &cat.args[0].value else {
        panic!("cat's first argument is a tensor list");
    };
    assert_eq!(tensors.len(), 2);
    assert_eq!(tensors[0].strides, [0, 768, 1]);
    assert_eq!(tensors[1].strides, [150528, 1, 196]);
    assert_eq!(tensors[1].torch_dtype, "bfloat16");
    assert!(!tensors[1].dtype_recorded);
    assert_eq!(cat.notes, ["guessed"]);
    // An expanded tensor (stride 0) needs only one row of storage.
    assert_eq!(tensors[0].storage_bytes, 768 * 2);

    let unknown_list = build(
        "aten::cat",
        recorded(json!([[], []]), json!(["TensorList", "Scalar"]), None, None),
        &no_list_dtype,
    );
    assert!(matches!(
        unknown_list,
        Err(ReplayError::UnparseableArgs { position: 0, .. })
    ));
}

#[test]
fn unknown_ops_and_unrebuildable_inputs() {
    let custom = build(
        "aten::frobnicate",
        recorded(
            json!([[8, 8], []]),
            json!(["float", "Scalar"]),
            Some(json!([[8, 1], []])),
            Some(json!(["", "0.5"])),
        ),
        &no_list_dtype,
    )
    .expect("an unknown aten op still builds");
    assert!(!custom.op.schema_known);
    assert_eq!(custom.op.overload, None);
    assert_eq!(custom.args.len(), 2);
    assert!(custom.kwargs.is_empty());
    assert_eq!(
        custom.args[1].value,
        ArgValue::Float {
            value: Some(0.5),
            text: "0.5".to_string()
        }
    );
    let flash = build(
        "flash_attn::_flash_attn_forward",
        recorded(json!([[1, 2]]), json!(["c10::Half"]), None, None),
        &no_list_dtype,
    )
    .expect("custom namespaces build without a schema");
    assert_eq!(flash.op.namespace, "flash_attn");
    assert!(!flash.op.schema_known);

    for name in [
        "MmBackward0",
        "autograd::engine::evaluate_function: MmBackward0",
        "triton_poi_fused_0",
    ] {
        let result = build(
            name,
            recorded(json!([[1]]), json!(["float"]), None, None),
            &no_list_dtype,
        );
        assert!(
            matches!(result, Err(ReplayError::UnknownSchema { .. })),
            "{name}: {result:?}"
        );
    }
    let index = build(
        "aten::index",
        recorded(
            json!([[5184], []]),
            json!(["float", ""]),
            None,
            Some(json!(["", ""])),
        ),
        &no_list_dtype,
    );
    assert!(
        matches!(index, Err(ReplayError::UnparseableArgs { position: 1, .. })),
        "{index:?}"
    );
    let no_value = build(
        "aten::mean",
        recorded(
            json!([[32, 2048, 7, 7], [], [], []]),
            json!(["float", "GenericList", "Bool", ""]),
            None,
            None,
        ),
        &no_list_dtype,
    );
    assert!(
        matches!(
            no_value,
            Err(ReplayError::UnparseableArgs { position: 1, .. })
        ),
        "{no_value:?}"
    );
    let mismatch = build(
        "aten::mm",
        recorded(json!([[1, 2]]), json!(["float", "float"]), None, None),
        &no_list_dtype,
    );
    assert!(matches!(mismatch, Err(ReplayError::UnparseableArgs { .. })));
    let strange = build(
        "aten::mm",
        recorded(json!([[1, 2]]), json!(["c10::Mystery"]), None, None),
        &no_list_dtype,
    );
    assert!(matches!(strange, Err(ReplayError::UnparseableArgs { .. })));
}

fn small_ir() -> ReplayIr {
    build(
        "aten::addmm",
        recorded(
            json!([[16], [8, 32], [32, 16], [], []]),
            json!(["float", "float", "float", "Scalar", "Scalar"]),
            Some(json!([[1], [32, 1], [1, 32], [], []])),
            Some(json!(["", "", "", "1", "1"])),
        ),
        &no_list_dtype,
    )
    .expect("small addmm builds")
}

fn finding(severity: Severity, workload: &str, name: &str, dims: &str) -> Finding {
    Finding {
        rule: "regression".to_string(),
        severity,
        kind: FindingKind::Regression,
        workload: workload.to_string(),
        op: Some(OpRef {
            name: name.to_string(),
            input_dims: dims.to_string(),
            input_type: "('float', 'float', 'float', 'Scalar', 'Scalar')".to_string(),
            input_strides: String::new(),
            category: "GEMM".to_string(),
            module_path: None,
        }),
        metric: "median kernel time per call".to_string(),
        baseline: Some(10.0),
        candidate: Some(13.0),
        unit: "µs".to_string(),
        delta_percent: Some(30.0),
        interval_percent: Some((25.0, 35.0)),
        expected_ratio: None,
        limit: Some(5.0),
        impact_percent: Some(3.0),
        priority: FindingPriority::High,
        message: "aten::addmm got 30% slower | <b>@team</b>".to_string(),
        path_a: None,
        path_b: Some("tune the GEMM".to_string()),
        kernel_diff: None,
        replay_package: None,
        accepted: None,
        statistics: Default::default(),
    }
}

fn verdict(findings: Vec<Finding>) -> Verdict {
    let environment = |gpus: &str| EnvironmentSummary {
        gpus: gpus.to_string(),
        hardware: Some("H100 SXM".to_string()),
        runtime: Some("CUDA 12.4".to_string()),
        pytorch: None,
        distributed: None,
        runs: 1,
    };
    Verdict {
        schema_version: 1,
        schema_minor: 1,
        tracegate_version: "test".to_string(),
        outcome: Outcome::Fail,
        headline: String::new(),
        counts: Default::default(),
        workloads: vec![WorkloadSummary {
            name: "bert".to_string(),
            baseline: environment("1 × NVIDIA H100 80GB HBM3"),
            candidate: environment("1 × NVIDIA H100 80GB HBM3 (candidate)"),
            cross_platform: false,
            timeline: Vec::new(),
            matched: 0,
            unchanged: 0,
            notes: Vec::new(),
        }],
        findings,
        groups: Vec::new(),
        policy: "test".to_string(),
    }
}

#[test]
fn selection_follows_the_policy() {
    let mut findings = vec![
        finding(Severity::Fail, "bert", "aten::addmm", "((16,), (8, 32))"),
        finding(Severity::Info, "bert", "aten::addmm", "((1,), (1, 1))"),
        finding(Severity::Warn, "bert", "aten::addmm", "((16,), (8, 32))"),
        finding(Severity::Warn, "bert", "aten::frobnicate", "((4,),)"),
        finding(Severity::Warn, "bert", "aten::broken", "((4,),)"),
        finding(Severity::Warn, "bert", "aten::mm", "((2, 2), (2, 2))"),
    ];
    findings[2].kind = FindingKind::KernelSelection;
    let mut timeline = finding(Severity::Fail, "bert", "", "");
    timeline.op = None;
    findings.push(timeline);
    let verdict = verdict(findings);
    let build = |_: &Finding, op: &OpRef| match op.name.as_str() {
        "aten::frobnicate" => build(
            "aten::frobnicate",
            recorded(json!([[4]]), json!(["float"]), None, None),
            &no_list_dtype,
        ),
        "aten::broken" => Err(ReplayError::NoSuchRow {
            name: op.name.clone(),
        }),
        _ => Ok(small_ir()),
    };
    let policy = policy::Replay::default();
    assert_eq!(policy.severities, [Severity::Fail, Severity::Warn]);
    assert!(policy.only_known_schema);
    let selection = select_packages(&verdict, &policy, build);
    let served: Vec<&[usize]> = selection
        .packages
        .iter()
        .map(|p| p.findings.as_slice())
        .collect();
    assert_eq!(served, [&[0usize, 2][..], &[5][..]]);
    let skipped: Vec<usize> = selection.skipped.iter().map(|(i, _)| *i).collect();
    assert_eq!(skipped, [3, 4]);
    assert!(selection.skipped[0].1.contains("only_known_schema"));

    let loose = policy::Replay {
        only_known_schema: false,
        max_packages: 1,
        ..policy::Replay::default()
    };
    let selection = select_packages(&verdict, &loose, build);
    assert_eq!(selection.packages.len(), 1);
    assert_eq!(selection.packages[0].findings, [0, 2]);
    assert!(selection.skipped.is_empty());

    let none = policy::Replay {
        max_packages: 0,
        ..policy::Replay::default()
    };
    assert!(select_packages(&verdict, &none, build).packages.is_empty());
}

/// The entries of a package: (path, mode, mtime, uid, gid, kind, bytes).
type Entry = (String, u32, u64, u64, u64, tar::EntryType, Vec<u8>);

fn unpack(bytes: &[u8]) -> Vec<Entry> {
    let mut archive = tar::Archive::new(GzDecoder::new(bytes));
    archive
        .entries()
        .expect("a tar")
        .map(|entry| {
            let mut entry = entry.expect("an entry");
            let header = entry.header().clone();
            let mut data = Vec::new();
            entry.read_to_end(&mut data).expect("entry data");
            (
                entry.path().expect("path").to_string_lossy().into_owned(),
                header.mode().expect("mode"),
                header.mtime().expect("mtime"),
                header.uid().expect("uid"),
                header.gid().expect("gid"),
                header.entry_type(),
                data,
            )
        })
        .collect()
}

fn file<'a>(entries: &'a [Entry], name: &str) -> &'a [u8] {
    &entries
        .iter()
        .find(|e| e.0.ends_with(&format!("/{name}")))
        .unwrap_or_else(|| panic!("{name} in the package"))
        .6
}

#[test]
fn packages_are_deterministic_and_complete() {
    let ir = small_ir();
    let verdict = verdict(vec![finding(
        Severity::Fail,
        "bert",
        "aten::addmm",
        "((16,), (8, 32))",
    )]);
    let context = PackageContext::for_finding(&verdict, 0);
    assert_eq!(context.baseline_us, Some(10.0));
    let (name, bytes) = write_package(&ir, &context);
    let (again_name, again) = write_package(&ir.clone(), &PackageContext::for_finding(&verdict, 0));
    assert_eq!(name, again_name);
    assert_eq!(bytes, again, "same input, same bytes");
    let stem = name.strip_suffix(".tar.gz").expect(".tar.gz");
    let hash = stem
        .strip_prefix("bert-aten_addmm-")
        .expect("workload-op-hash");
    assert_eq!(hash.len(), 8);
    assert!(hash.chars().all(|c| c.is_ascii_hexdigit()));
    // gzip header: no file name flag, mtime 0, OS unknown.
    assert_eq!(&bytes[..3], &[0x1f, 0x8b, 8]);
    assert_eq!(bytes[3], 0, "no FNAME or other flags");
    assert_eq!(&bytes[4..8], &[0, 0, 0, 0], "mtime 0");
    assert_eq!(bytes[9], 255);

    let entries = unpack(&bytes);
    let paths: Vec<&str> = entries.iter().map(|e| e.0.as_str()).collect();
    let expected: Vec<String> = std::iter::once(format!("{stem}/"))
        .chain(PACKAGE_FILES.iter().map(|f| format!("{stem}/{f}")))
        .collect();
    assert_eq!(
        paths,
        expected.iter().map(String::as_str).collect::<Vec<_>>()
    );
    for (path, mode, mtime, uid, gid, kind, _) in &entries {
        assert_eq!((*mtime, *uid, *gid), (0, 0, 0), "{path}");
        let expected_mode = if path.ends_with('/') || path.ends_with(".py") {
            0o755
        } else {
            0o644
        };
        assert_eq!(*mode, expected_mode, "{path}");
        assert_eq!(*kind == tar::EntryType::Directory, path.ends_with('/'));
    }
    assert_eq!(file(&entries, "replay.py"), REPLAY_PY.as_bytes());
    let ir_json: Value = serde_json::from_slice(file(&entries, "replay_ir.json")).expect("IR JSON");
    assert_eq!(ir_json["comparison"]["baseline_us"], 10.0);
    assert_eq!(ir_json["comparison"]["candidate_us"], 13.0);
    assert_eq!(ir_json["comparison"]["finding"]["severity"], "fail");
    assert_eq!(
        ir_json["comparison"]["candidate_environment"]["gpus"],
        "1 × NVIDIA H100 80GB HBM3 (candidate)"
    );
    let readme = String::from_utf8(file(&entries, "README.md").to_vec()).expect("UTF-8");
    assert!(readme.contains("## Why this call"));
    assert!(
        readme.contains("30% slower \\| &lt;b&gt;@\u{200d}team&lt;/b&gt;"),
        "{readme}"
    );
    assert!(
        readme.contains(
            "baseline 10.000 µs → candidate 13.000 µs (+30.0%; interval +25.0% … +35.0%)"
        )
    );
    assert!(readme.contains(&format!("tar xzf {stem}.tar.gz && cd {stem}")));
    assert!(readme.contains("| baseline (check) | median 10.0 µs | |"));
    assert!(
        readme.contains("| 3 | Scalar beta (keyword) | 1 | recorded |"),
        "{readme}"
    );
    assert!(readme.contains("Path B: tune the GEMM"));

    // On demand: no comparison; another call gets another name.
    let (plain_name, plain) = write_package(&ir, &PackageContext::on_demand("my model/run 1"));
    assert!(plain_name.starts_with("my_model_run_1-aten_addmm-"));
    assert_eq!(
        plain_name.rsplit('-').next(),
        name.rsplit('-').next(),
        "same call, same hash"
    );
    let plain_ir: Value =
        serde_json::from_slice(file(&unpack(&plain), "replay_ir.json")).expect("IR");
    assert_eq!(plain_ir["comparison"], Value::Null);
    let other = build(
        "aten::addmm",
        recorded(
            json!([[16], [4, 32], [32, 16], [], []]),
            json!(["float", "float", "float", "Scalar", "Scalar"]),
            None,
            None,
        ),
        &no_list_dtype,
    )
    .expect("builds");
    let (other_name, _) = write_package(&other, &PackageContext::on_demand("my model/run 1"));
    assert_ne!(other_name, plain_name);
}

/// `python3`, which these tests need (CONTRIBUTING.md; `.ci/run` checks for
/// it): its absence fails the test rather than passing it unchecked.
fn python3() -> &'static str {
    let found = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "python3 not found: the replay tests run replay.py with it (CONTRIBUTING.md)"
    );
    "python3"
}

/// Unpacks a package into `dir`, returning its directory.
fn extract(bytes: &[u8], dir: &Path) -> PathBuf {
    let mut archive = tar::Archive::new(GzDecoder::new(bytes));
    archive.unpack(dir).expect("unpacks");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("listing")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs.pop().expect("one package directory")
}

#[test]
fn replay_py_compiles() {
    let python = python3();
    let dir = tempfile::tempdir().expect("temp dir");
    let script = dir.path().join("replay.py");
    std::fs::write(&script, REPLAY_PY).expect("write");
    let output = Command::new(python)
        .args(["-m", "py_compile"])
        .arg(&script)
        .output()
        .expect("python3 runs");
    assert!(
        output.status.success(),
        "py_compile: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Runs `replay.py --dry-run` of a package (no PyTorch needed): Python reads
/// the IR back and prints the call.
fn dry_run(python: &str, bytes: &[u8]) -> String {
    let dir = tempfile::tempdir().expect("temp dir");
    let package = extract(bytes, dir.path());
    let output = Command::new(python)
        .arg(package.join("replay.py"))
        .arg("--dry-run")
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "dry run failed: {stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

#[test]
fn replay_py_reads_the_ir_without_pytorch() {
    let python = python3();
    let (_, bytes) = write_package(&small_ir(), &PackageContext::on_demand("bert"));
    let printed = dry_run(python, &bytes);
    assert!(printed.contains("op: aten::addmm.default"), "{printed}");
    assert!(printed.contains("mat2"), "{printed}");
    assert!(
        printed.contains("float32(32, 16) strides (1, 32)"),
        "{printed}"
    );
    assert!(printed.contains("alpha (keyword)"), "{printed}");

    // A package for a newer IR version is refused with exit code 2.
    let dir = tempfile::tempdir().expect("temp dir");
    let package = extract(&bytes, dir.path());
    let ir_path = package.join("replay_ir.json");
    let text = std::fs::read_to_string(&ir_path).expect("IR");
    std::fs::write(
        &ir_path,
        text.replace("\"version\": 1,", "\"version\": 99,"),
    )
    .expect("write");
    let status = Command::new(python)
        .arg(package.join("replay.py"))
        .arg("--dry-run")
        .output()
        .expect("python3 runs");
    assert_eq!(status.status.code(), Some(2));
}

/// The first CPU op event named `name` whose raw arguments satisfy `keep`.
fn find_event<'t>(
    trace: &'t Trace,
    name: &str,
    keep: impl Fn(&Value, &Value, &Value) -> bool,
) -> Option<&'t crate::trace::Event> {
    trace.events.iter().find(|e| {
        e.kind == Kind::CpuOp
            && e.detail != NO_DETAIL
            && trace.name(e) == name
            && raw_args(trace, e).is_some_and(|(d, t, s, _)| keep(&d, &t, &s))
    })
}

/// The event's raw `Input Dims`, `Input type`, `Input Strides`, `Concrete Inputs`.
fn raw_args(trace: &Trace, event: &crate::trace::Event) -> Option<(Value, Value, Value, Value)> {
    let args = trace.op_args(event)?;
    let parse = |sym: Option<crate::trace::Sym>| {
        sym.map_or(Value::Null, |s| {
            serde_json::from_str(trace.strings.get(s)).expect("raw JSON")
        })
    };
    Some((
        parse(args.input_dims),
        parse(args.input_type),
        parse(args.input_strides),
        parse(args.concrete_inputs),
    ))
}

/// Checks the IR's tensors and values against the event's raw arguments.
fn assert_matches_event(trace: &Trace, event: &crate::trace::Event, ir: &ReplayIr) {
    let (dims, types, strides, concrete) = raw_args(trace, event).expect("raw args");
    let all = all_args(ir);
    assert_eq!(all.len(), types.as_array().expect("types").len());
    for arg in all {
        let i = arg.position;
        assert_eq!(
            arg.recorded_type,
            types[i].as_str().expect("type"),
            "input {i}"
        );
        match &arg.value {
            ArgValue::Tensor(t) => {
                assert_eq!(json!(t.shape), dims[i], "{} input {i} shape", ir.op.name);
                if !strides.is_null() {
                    assert_eq!(
                        json!(t.strides),
                        strides[i],
                        "{} input {i} strides",
                        ir.op.name
                    );
                    assert!(t.strides_recorded);
                }
                assert_eq!(t.dtype, types[i].as_str().expect("type"), "input {i} dtype");
                assert!(t.dtype_recorded);
            }
            ArgValue::TensorList { tensors } => {
                let shapes: Vec<Value> = tensors.iter().map(|t| json!(t.shape)).collect();
                assert_eq!(Value::from(shapes), dims[i], "input {i} list shapes");
                if !strides.is_null() {
                    let member_strides: Vec<Value> =
                        tensors.iter().map(|t| json!(t.strides)).collect();
                    assert_eq!(
                        Value::from(member_strides),
                        strides[i],
                        "input {i} list strides"
                    );
                }
            }
            ArgValue::Bool { value } => {
                assert_eq!(
                    concrete[i],
                    if *value { "True" } else { "False" },
                    "input {i}"
                );
            }
            ArgValue::Int { value } if arg.source == ValueSource::Recorded => {
                assert_eq!(concrete[i], value.to_string(), "input {i}");
            }
            ArgValue::Float { text, .. } => assert_eq!(concrete[i], text.as_str(), "input {i}"),
            ArgValue::List { values } => {
                let parsed =
                    pyliteral::parse(concrete[i].as_str().expect("concrete")).expect("list");
                assert_eq!(&parsed, &Value::from(values.clone()), "input {i}");
            }
            ArgValue::None => assert_eq!(types[i], "", "input {i}"),
            _ => {}
        }
    }
}

struct CorpusCase {
    trace: &'static str,
    op: &'static str,
    overload: Option<&'static str>,
    /// (dims, types, strides) of the raw event.
    keep: fn(&Value, &Value, &Value) -> bool,
}

fn any_args(_: &Value, _: &Value, _: &Value) -> bool {
    true
}

fn is_contiguous(shape: &Value, strides: &Value) -> bool {
    let (Some(shape), Some(strides)) = (int_list(shape), int_list(strides)) else {
        return false;
    };
    contiguous(&shape) == strides
}

const FALCON: &str = "tracelens/h100/Falconsai_nsfw_image_detection__1016002.json.gz";
const QWEN: &str = "tracelens/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz";
const TIMESFORMER: &str =
    "tracelens/h100/facebook_timesformer-base-finetuned-k400__1016002.json.gz";
const OWLV2: &str = "tracelens/h100/google_owlv2-large-patch14-ensemble__1016001.json.gz";
const FALCON_MI300: &str = "tracelens/mi300/Falconsai_nsfw_image_detection__1016002.json.gz";

const CASES: &[CorpusCase] = &[
    CorpusCase {
        trace: QWEN,
        op: "aten::mm",
        overload: Some("default"),
        keep: any_args,
    },
    CorpusCase {
        trace: FALCON,
        op: "aten::addmm",
        overload: Some("default"),
        keep: any_args,
    },
    CorpusCase {
        trace: TIMESFORMER,
        op: "aten::bmm",
        overload: Some("default"),
        keep: any_args,
    },
    CorpusCase {
        trace: FALCON,
        op: "aten::_scaled_dot_product_flash_attention",
        overload: Some("default"),
        keep: any_args,
    },
    CorpusCase {
        trace: FALCON,
        op: "aten::_flash_attention_forward",
        overload: Some("default"),
        keep: any_args,
    },
    CorpusCase {
        trace: FALCON,
        op: "aten::convolution",
        overload: Some("default"),
        keep: any_args,
    },
    CorpusCase {
        trace: TIMESFORMER,
        op: "aten::convolution",
        overload: Some("default"),
        keep: any_args,
    },
    CorpusCase {
        trace: FALCON,
        op: "aten::cudnn_convolution",
        overload: Some("default"),
        keep: any_args,
    },
    CorpusCase {
        trace: FALCON_MI300,
        op: "aten::miopen_convolution",
        overload: Some("default"),
        keep: any_args,
    },
    CorpusCase {
        trace: FALCON,
        op: "aten::native_layer_norm",
        overload: Some("default"),
        keep: any_args,
    },
    CorpusCase {
        trace: QWEN,
        op: "aten::copy_",
        overload: Some("default"),
        keep: |dims, types, strides| types[0] == types[1] && !is_contiguous(&dims[1], &strides[1]),
    },
    CorpusCase {
        trace: OWLV2,
        op: "aten::add",
        overload: Some("Tensor"),
        keep: |dims, types, _| types[1] == "double" && dims[1] == json!([]),
    },
    CorpusCase {
        trace: QWEN,
        op: "aten::cat",
        overload: Some("default"),
        keep: any_args,
    },
    CorpusCase {
        trace: QWEN,
        op: "aten::embedding",
        overload: Some("default"),
        keep: any_args,
    },
];

#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn corpus_calls_build_packages_that_match_their_events() {
    let dir = corpus_dir();
    let python = python3();
    let mut traces: BTreeMap<&str, (Trace, crate::analysis::profile::Profile)> = BTreeMap::new();
    for case in CASES {
        if !traces.contains_key(case.trace) {
            let trace = crate::trace::load_file(&dir.join(case.trace), &mut |_| {})
                .expect("corpus trace loads");
            let tree = crate::trace::link::link(&trace);
            let profile = crate::analysis::analyse::analyse(&trace, &tree);
            traces.insert(case.trace, (trace, profile));
        }
        let (trace, profile) = &traces[case.trace];
        let event = find_event(trace, case.op, case.keep)
            .unwrap_or_else(|| panic!("{} in {}", case.op, case.trace));
        let ir = ir_for_event(trace, event.index).unwrap_or_else(|e| panic!("{}: {e}", case.op));
        assert_eq!(ir.op.name, case.op);
        assert_eq!(ir.op.overload.as_deref(), case.overload, "{}", case.op);
        assert!(ir.op.schema_known, "{}", case.op);
        assert_matches_event(trace, event, &ir);
        assert_eq!(ir.origin.event_index, Some(event.index));
        let environment = ir.environment.as_ref().expect("environment");
        assert_ne!(environment.gpus, "unknown", "{}", case.trace);

        // The row's IR (when the op launched kernels) adds timing and
        // kernels, and a snapshot of the same trace gives the same call.
        let row = profile
            .unique_args
            .iter()
            .find(|r| r.example_event == event.index);
        let packaged = match row {
            Some(row) => {
                let from_row = ir_for_row(trace, row).expect("row IR");
                assert_eq!(from_row.args, ir.args);
                assert_eq!(from_row.invocations, Some(row.direct.count));
                assert!(!from_row.kernels.is_empty(), "{}", case.op);
                let snapshot = Snapshot::from_profile(profile, String::new(), 0);
                let snap_row = snapshot
                    .ops
                    .iter()
                    .find(|r| {
                        r.name == row.name
                            && r.input_dims == row.input_dims
                            && r.input_type == row.input_type
                            && r.input_strides == row.input_strides
                            && r.concrete_inputs == row.concrete_inputs
                    })
                    .expect("snapshot row");
                let from_snapshot = ir_for_snapshot_row(&snapshot, snap_row).expect("snapshot IR");
                assert_eq!(from_snapshot.recorded, ir.recorded, "{}", case.op);
                if !matches!(ir.args[0].value, ArgValue::TensorList { .. }) {
                    assert_eq!(from_snapshot.args, from_row.args, "{}", case.op);
                    assert_eq!(from_snapshot.kwargs, from_row.kwargs, "{}", case.op);
                }
                from_row
            }
            None => ir,
        };
        let workload = snapshot::workload_name(Path::new(case.trace));
        let (name, bytes) = write_package(&packaged, &PackageContext::on_demand(&workload));
        let (again_name, again) = write_package(&packaged, &PackageContext::on_demand(&workload));
        assert_eq!(
            (name.as_str(), &bytes),
            (again_name.as_str(), &again),
            "{}",
            case.op
        );
        assert!(
            name.starts_with(&format!("{workload}-{}-", case.op.replace("::", "_"))),
            "{name}"
        );
        let printed = dry_run(python, &bytes);
        assert!(printed.contains(&format!("op: {}", case.op)), "{printed}");
    }

    // The tensor list's dtype comes from a neighbouring op with the same shape.
    let (trace, _) = &traces[QWEN];
    let cat = find_event(trace, "aten::cat", any_args).expect("cat");
    let ir = ir_for_event(trace, cat.index).expect("cat IR");
    assert!(
        ir.notes
            .iter()
            .any(|n| n.contains("float is taken from aten::")),
        "{:?}",
        ir.notes
    );
}

#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn corpus_errors_name_the_problem() {
    let dir = corpus_dir();
    let trace = crate::trace::load_file(&dir.join(FALCON), &mut |_| {}).expect("loads");
    let kernel = trace
        .events
        .iter()
        .find(|e| e.kind == Kind::Kernel)
        .expect("a kernel");
    assert!(matches!(
        ir_for_event(&trace, kernel.index),
        Err(ReplayError::NotAnOp { .. })
    ));
    assert_eq!(
        ir_for_event(&trace, u32::MAX),
        Err(ReplayError::NoSuchEvent(u32::MAX))
    );
    let name = Pattern::name("aten::*convolution").expect("glob");
    let events = events_matching(&trace, &name, None);
    assert!(events.len() >= 2, "convolution and cudnn_convolution");
    let shape = Pattern::shape("((4, 3, 224, 224), *)").expect("shape");
    assert_eq!(events_matching(&trace, &name, Some(&shape)), events);
    let none = Pattern::shape("((1, 1),*)").expect("shape");
    assert!(events_matching(&trace, &name, Some(&none)).is_empty());
    let tree = crate::trace::link::link(&trace);
    let profile = crate::analysis::analyse::analyse(&trace, &tree);
    let rows = rows_matching(&profile.unique_args, &name, None);
    assert!(!rows.is_empty() && rows.iter().all(|r| r.name == "aten::cudnn_convolution"));
}

/// Runs small packages on the CPU with PyTorch (the `replay-pytorch` job of
/// .github/workflows/ci.yml installs it and runs this test).
#[test]
#[ignore = "needs PyTorch importable by python3: cargo test --lib packages_run_on_cpu_with_pytorch -- --ignored"]
fn packages_run_on_cpu_with_pytorch() {
    let python = python3();
    let torch = Command::new(python)
        .args(["-c", "import torch"])
        .output()
        .expect("python3 runs");
    assert!(
        torch.status.success(),
        "PyTorch is not importable: {}",
        String::from_utf8_lossy(&torch.stderr)
    );
    let calls = [
        small_ir(),
        build(
            "aten::add",
            recorded(
                json!([[1, 64, 1], [], []]),
                json!(["float", "double", "Scalar"]),
                Some(json!([[64, 1, 1], [], []])),
                Some(json!(["", "", "1"])),
            ),
            &no_list_dtype,
        )
        .expect("add"),
        build(
            "aten::cat",
            recorded(
                json!([[[4, 1, 8], [4, 6, 8]], []]),
                json!(["TensorList", "Scalar"]),
                Some(json!([[[0, 8, 1], [48, 1, 6]], []])),
                Some(json!(["", "1"])),
            ),
            &no_list_dtype,
        )
        .expect("cat"),
        build(
            "aten::copy_",
            recorded(
                json!([[2, 3, 4], [2, 3, 4], []]),
                json!(["float", "float", "Scalar"]),
                Some(json!([[12, 4, 1], [12, 1, 3], []])),
                Some(json!(["", "", "False"])),
            ),
            &no_list_dtype,
        )
        .expect("copy_"),
    ];
    for ir in calls {
        let (_, bytes) = write_package(&ir, &PackageContext::on_demand("cpu"));
        let dir = tempfile::tempdir().expect("temp dir");
        let package = extract(&bytes, dir.path());
        let figures = dir.path().join("figures.json");
        let output = Command::new(python)
            .arg(package.join("replay.py"))
            .args(["--device", "cpu", "--iters", "3", "--warmup", "1", "--json"])
            .arg(&figures)
            .output()
            .expect("python3 runs");
        assert!(
            output.status.success(),
            "{}: {}{}",
            ir.op.name,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        let figures: Value =
            serde_json::from_str(&std::fs::read_to_string(&figures).expect("figures"))
                .expect("JSON");
        assert!(figures["median_us"].as_f64().is_some_and(|us| us > 0.0));
    }
}

/// A stand-in `torch` module (see its docstring).
const STUB_TORCH: &str = include_str!("stub_torch.py");

/// Runs a package's `replay.py` against the stub `torch`; returns the exit
/// code, the output and the calls the stub received.
fn run_with_stub(python: &str, ir: &ReplayIr, extra: &[&str]) -> (Option<i32>, String, Vec<Value>) {
    let (code, text, calls, _) = run_with_stub_env(python, ir, extra, &[]);
    (code, text, calls)
}

/// `run_with_stub` with the stub's environment (`STUB_TORCH_GPU` and the
/// rest, see stub_torch.py); also returns the figures `--json` wrote (null
/// when the run failed).
fn run_with_stub_env(
    python: &str,
    ir: &ReplayIr,
    extra: &[&str],
    env: &[(&str, &str)],
) -> (Option<i32>, String, Vec<Value>, Value) {
    let (_, bytes) = write_package(ir, &PackageContext::on_demand("stub"));
    let dir = tempfile::tempdir().expect("temp dir");
    let stub = dir.path().join("stub");
    std::fs::create_dir_all(stub.join("torch")).expect("stub dir");
    std::fs::write(stub.join("torch/__init__.py"), STUB_TORCH).expect("stub");
    let package = extract(&bytes, &dir.path().join("package"));
    let log = dir.path().join("calls.jsonl");
    let figures = dir.path().join("figures.json");
    let output = Command::new(python)
        .arg(package.join("replay.py"))
        .args(["--iters", "3", "--warmup", "1", "--json"])
        .arg(&figures)
        .args(extra)
        .env("PYTHONPATH", &stub)
        .env("STUB_TORCH_LOG", &log)
        .envs(env.iter().copied())
        .output()
        .expect("python3 runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let calls = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).expect("call log"))
        .collect();
    let mut written = Value::Null;
    if output.status.success() {
        written = serde_json::from_str(&std::fs::read_to_string(&figures).expect("figures"))
            .expect("JSON");
        assert!(written["median_us"].as_f64().is_some(), "{written}");
    }
    (output.status.code(), text, calls, written)
}

/// On a GPU whose launches from Python take longer than the call's kernel,
/// the replay reads the kernel's time, not the launch's, whatever the two
/// costs: the stub plays one stream on a simulated clock (launch cost,
/// kernel time, 2 µs of GPU time per event), so the right answer is known.
/// An op that waits for the GPU cannot be queued: it is timed per call,
/// launch in, and says so; `--cold-l2` times each call alone, flush out.
#[test]
fn replay_times_the_gpu_not_the_launch_on_a_simulated_stream() {
    let python = python3();
    let gpu = |launch: &str, kernel: &str, extra: &[&str], waits: bool| {
        let mut env = vec![
            ("STUB_TORCH_GPU", "1"),
            ("STUB_LAUNCH_US", launch),
            ("STUB_KERNEL_US", kernel),
        ];
        if waits {
            env.push(("STUB_OP_WAITS", "1"));
        }
        let (code, text, _, figures) = run_with_stub_env(python, &small_ir(), extra, &env);
        assert_eq!(code, Some(0), "{text}");
        let timing = figures["timing"].as_str().expect("timing").to_string();
        assert!(text.contains(&format!("timing: {timing}")), "{text}");
        let median = figures["median_us"].as_f64().expect("median");
        let calls_per_sample = figures["calls_per_sample"]
            .as_u64()
            .expect("calls per sample");
        (timing, median, calls_per_sample)
    };
    for (launch, kernel) in [
        ("30", "5"),
        ("30", "150"),
        ("5", "1"),
        ("100", "20"),
        ("40", "99"),
    ] {
        let kernel_us: f64 = kernel.parse().expect("number");
        let (timing, median, calls_per_sample) = gpu(launch, kernel, &[], false);
        assert!(
            timing.starts_with("GPU time of back-to-back calls"),
            "{timing}"
        );
        assert!(
            median >= kernel_us && median <= kernel_us * 1.05,
            "launch {launch} µs, kernel {kernel} µs: read {median} µs"
        );
        // A sample runs about 100 µs, sized from 10 calls between two
        // events: the kernel plus a tenth of an event's 2 µs each.
        let expected = (100.0 / (kernel_us + 0.2)).ceil().max(1.0);
        assert!(
            (calls_per_sample as f64 - expected).abs() <= 1.0,
            "kernel {kernel} µs: {calls_per_sample} calls per sample"
        );
    }

    let (timing, median, calls_per_sample) = gpu("30", "5", &[], true);
    assert!(
        timing.starts_with("per call between two events"),
        "{timing}"
    );
    assert!(
        median >= 30.0,
        "an op that waits reads its launch: {median}"
    );
    assert_eq!(calls_per_sample, 1);

    // The flush (one 5 µs kernel) stays out; the call's two events stay in.
    let (timing, median, calls_per_sample) = gpu("30", "5", &["--cold-l2"], false);
    assert!(timing.starts_with("GPU time per call queued"), "{timing}");
    assert!((median - 7.0).abs() < 1e-6, "{median}");
    assert_eq!(calls_per_sample, 1);
}

#[test]
fn replay_py_binds_and_times_against_a_stub_torch() {
    let python = python3();
    let ir_of = |name: &str, dims: Value, types: Value, strides: Option<Value>, concrete: Value| {
        build(
            name,
            recorded(dims, types, strides, Some(concrete)),
            &no_list_dtype,
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"))
    };

    // Keyword-only arguments go by name; the first call, 1 warm-up, 3 timed
    // and 3 profiled calls.
    let profile = tempfile::tempdir().expect("temp dir");
    let trace = profile.path().join("replay_trace.json");
    let trace_arg = trace.to_str().expect("UTF-8 path");
    let (code, text, calls) = run_with_stub(python, &small_ir(), &["--profile", trace_arg]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("this replay"), "{text}");
    assert!(text.contains("tracegate report"), "{text}");
    assert!(trace.is_file());
    assert_eq!(calls.len(), 8);
    assert_eq!(calls[0]["overload"], "addmm");
    assert_eq!(calls[0]["args"][2]["strides"], json!([1, 32]));
    assert_eq!(calls[0]["args"][2]["dtype"], "float32");
    assert_eq!(calls[0]["kwargs"], json!({"beta": 1, "alpha": 1}));

    // A Python number stays on the CPU; the dtype override reaches floats only.
    let add = ir_of(
        "aten::add",
        json!([[1, 64, 1], [], []]),
        json!(["c10::BFloat16", "double", "Scalar"]),
        Some(json!([[64, 1, 1], [], []])),
        json!(["", "", "1"]),
    );
    let (code, text, calls) =
        run_with_stub(python, &add, &["--dtype-override", "bfloat16=float16"]);
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(calls[0]["overload"], "add.Tensor");
    assert_eq!(calls[0]["args"][0]["dtype"], "float16");
    assert_eq!(calls[0]["args"][1]["device"], "cpu");
    assert_eq!(calls[0]["args"][1]["dtype"], "float64");

    // Tensor lists, keeping expanded and transposed strides.
    let cat = ir_of(
        "aten::cat",
        json!([[[4, 1, 8], [4, 6, 8]], []]),
        json!(["TensorList", "Scalar"]),
        Some(json!([[[0, 8, 1], [48, 1, 6]], []])),
        json!(["", "1"]),
    );
    let (code, text, calls) = run_with_stub(python, &cat, &[]);
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(calls[0]["args"][0][0]["strides"], json!([0, 8, 1]));
    assert_eq!(calls[0]["args"][0][1]["strides"], json!([48, 1, 6]));
    assert_eq!(calls[0]["args"][1], 1);

    // An op tracegate has no schema for: the first overload that fits.
    let frobnicate = ir_of(
        "aten::frobnicate",
        json!([[8, 8], []]),
        json!(["float", "Scalar"]),
        None,
        json!(["", "0.5"]),
    );
    let (code, text, calls) = run_with_stub(python, &frobnicate, &[]);
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(calls[0]["overload"], "frobnicate.Scalar");
    assert_eq!(calls[0]["args"][1], 0.5);

    // dtype numbers become dtypes; an unrecorded Device is the replay's.
    let to_copy = ir_of(
        "aten::_to_copy",
        json!([[1, 1, 559], [], [], [], [], [], []]),
        json!(["long int", "Scalar", "", "", "", "Scalar", ""]),
        Some(json!([[559, 559, 1], [], [], [], [], [], []])),
        json!(["", "6", "", "", "", "False", ""]),
    );
    let (code, text, calls) = run_with_stub(python, &to_copy, &[]);
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(
        calls[0]["kwargs"],
        json!({"dtype": "torch.float32", "layout": null, "device": "device('cpu')",
               "pin_memory": null, "non_blocking": false, "memory_format": null})
    );

    // Int lists and bools for convolution.
    let conv = ir_of(
        "aten::convolution",
        json!([[1, 3, 32, 32], [8, 3, 16, 16], [8], [], [], [], [], [], []]),
        json!([
            "float",
            "float",
            "float",
            "ScalarList",
            "ScalarList",
            "ScalarList",
            "Scalar",
            "ScalarList",
            "Scalar"
        ]),
        Some(json!([
            [3072, 1024, 32, 1],
            [768, 256, 16, 1],
            [1],
            [],
            [],
            [],
            [],
            [],
            []
        ])),
        json!([
            "", "", "", "[16, 16]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1"
        ]),
    );
    let (code, text, calls) = run_with_stub(python, &conv, &[]);
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(calls[0]["args"][3], json!([16, 16]));
    assert_eq!(calls[0]["args"][6], false);

    // An op this PyTorch cannot run here: exit 3 and why.
    let (code, text, _) = run_with_stub(python, &small_ir(), &["--device", "meta"]);
    assert_eq!(code, Some(3), "{text}");
    assert!(text.contains("cannot run aten::addmm on meta"), "{text}");
    let mut missing = small_ir();
    missing.op.op = "no_such_op".to_string();
    missing.op.name = "aten::no_such_op".to_string();
    let (code, text, _) = run_with_stub(python, &missing, &[]);
    assert_eq!(code, Some(3), "{text}");
    assert!(text.contains("has no aten::no_such_op"), "{text}");
    let mut mismatch = small_ir();
    mismatch.op.overload = None;
    mismatch.args[0].value = ArgValue::Str {
        value: "not a tensor".to_string(),
    };
    let (code, text, _) = run_with_stub(python, &mismatch, &[]);
    assert_eq!(code, Some(3), "{text}");
    assert!(text.contains("no overload of aten::addmm"), "{text}");
}

/// A call whose kernel ran TF32 math is replayed with TF32 allowed; one
/// whose kernels say nothing, with PyTorch's defaults; `--tf32` overrides
/// both. The stub records the settings each call saw, so the test sees them
/// applied before the first call, not only printed.
#[test]
fn replay_applies_the_math_settings_the_trace_shows() {
    let python = python3();
    let kernel = |name: &str| KernelRef {
        name: name.to_string(),
        count: Some(1),
        median_us: Some(10.0),
    };
    let gemm = [kernel(
        "sm80_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x16",
    )];
    let tf32 = MathSettings::of_kernels(&gemm);
    assert!(tf32.matmul_allow_tf32 && tf32.cudnn_allow_tf32, "{tf32:?}");
    assert!(
        tf32.source.contains("sm80_xmma_gemm_f32f32_tf32f32"),
        "{tf32:?}"
    );
    let plain = MathSettings::of_kernels(&[kernel("ampere_sgemm_128x64_nn")]);
    assert_eq!(plain, MathSettings::default());
    assert!(!plain.matmul_allow_tf32 && plain.cudnn_allow_tf32);

    let mut ir = small_ir();
    ir.kernels = gemm.to_vec();
    ir.math = tf32;
    let (_, bytes) = write_package(&ir, &PackageContext::on_demand("stub"));
    let dir = tempfile::tempdir().expect("temp dir");
    let package = extract(&bytes, dir.path());
    let readme = std::fs::read_to_string(package.join("README.md")).expect("README");
    assert!(
        readme.contains("- `torch.backends.cuda.matmul.allow_tf32`: on"),
        "{readme}"
    );
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(package.join("replay_ir.json")).expect("IR"))
            .expect("JSON");
    assert_eq!(json["math"]["matmul_allow_tf32"], true);

    let seen = |ir: &ReplayIr, extra: &[&str]| {
        let (code, text, calls) = run_with_stub(python, ir, extra);
        assert_eq!(code, Some(0), "{text}");
        let first = &calls[0];
        let settings = (
            first["matmul_allow_tf32"].clone(),
            first["cudnn_allow_tf32"].clone(),
        );
        assert!(
            calls.iter().all(|c| (
                c["matmul_allow_tf32"].clone(),
                c["cudnn_allow_tf32"].clone()
            ) == settings),
            "{calls:?}"
        );
        (settings, text)
    };
    let (settings, text) = seen(&ir, &[]);
    assert_eq!(settings, (json!(true), json!(true)));
    assert!(
        text.contains("math: TF32 matmul on, cuDNN TF32 on"),
        "{text}"
    );
    let (settings, text) = seen(&ir, &["--tf32", "off"]);
    assert_eq!(settings, (json!(false), json!(false)));
    assert!(text.contains("TF32 from --tf32 off"), "{text}");
    let (settings, _) = seen(&small_ir(), &[]);
    assert_eq!(settings, (json!(false), json!(true)));
}
