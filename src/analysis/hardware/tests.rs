//! Tests of the hardware catalog, detection, inline specs and rooflines.

use super::*;
use crate::trace::DeviceProperties;

fn device(name: &str, mem: Option<u64>) -> DeviceProperties {
    DeviceProperties {
        name: name.to_string(),
        total_global_mem: mem,
        ..DeviceProperties::default()
    }
}

fn detected(name: &str, mem: Option<u64>) -> Option<String> {
    builtin_catalog()
        .detect(&[device(name, mem)])
        .hardware()
        .map(|h| h.name.clone())
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn builtin_catalog_parses_and_is_complete() {
    let catalog = builtin_catalog();
    let required = [
        "MI300X",
        "MI325X",
        "MI355X",
        "H200 SXM",
        "H100 SXM",
        "H100 PCIe",
        "A100 80GB",
        "A100 40GB",
        "V100 SXM2",
        "L40S",
        "B200",
        "MI250X",
        "MI210",
        // The GPUs of CI runners and the rest of #29's list.
        "T4",
        "L4",
        "A10",
        "A100 80GB PCIe",
        "H100 NVL",
        "H200 NVL",
    ];
    for name in required {
        assert!(catalog.by_name(name).is_some(), "{name} missing");
    }
    for gpu in &catalog.gpus {
        assert!(gpu.hbm_tb_s > 0.0, "{}: bandwidth", gpu.name);
        assert!(gpu.memory_gb > 0.0, "{}: memory", gpu.name);
        // Every entry cites a public source: a vendor URL, never a
        // document outside the repository.
        assert!(
            gpu.source.contains("https://") && gpu.source != BUILTIN_LABEL,
            "{}: source",
            gpu.name
        );
        assert!(!gpu.source.contains(".md"), "{}: source", gpu.name);
        if let Some(measured) = &gpu.achievable {
            assert!(measured.source.contains("https://"), "{}", gpu.name);
        }
        assert!(!gpu.vendor.is_empty(), "{}: vendor", gpu.name);
        assert!(!gpu.match_names.is_empty(), "{}: match names", gpu.name);
        // Every part has a 16-bit matrix rate; only Volta and Turing (T4)
        // lack bf16.
        if gpu.name.starts_with("V100") || gpu.name == "T4" {
            assert!(gpu.peak_tflops(ComputeSpec::MatrixBf16).is_none());
            assert!(gpu.peak_tflops(ComputeSpec::MatrixFp16).is_some());
        } else {
            assert!(
                gpu.peak_tflops.contains_key(&ComputeSpec::MatrixBf16),
                "{}: bf16",
                gpu.name
            );
            assert_eq!(
                gpu.peak_tflops(ComputeSpec::MatrixFp16),
                gpu.peak_tflops(ComputeSpec::MatrixBf16),
                "{}: fp16 and bf16 run at the same rate",
                gpu.name
            );
        }
    }
}

#[test]
fn builtin_figures_are_datasheet_dense_peaks() {
    // The vendors' datasheets (URLs in each entry's `source`): dense bf16,
    // sparsity figures halved (H100/H200 1,979 -> 989.5; MI300X 2614.9 ->
    // 1307.4; MI355X 5.0 PF -> 2516.6).
    let catalog = builtin_catalog();
    let table = [
        ("MI300X", 5.3, 1307.4, 192.0),
        ("MI325X", 6.0, 1307.4, 256.0),
        ("MI355X", 8.0, 2516.6, 288.0),
        ("H200 SXM", 4.8, 989.5, 141.0),
        ("H100 SXM", 3.35, 989.5, 80.0),
        ("A100 80GB", 2.039, 312.0, 80.0),
    ];
    for (name, hbm, bf16, memory) in table {
        let gpu = catalog.by_name(name).unwrap();
        assert_eq!(gpu.hbm_tb_s, hbm, "{name}");
        assert_eq!(
            gpu.peak_tflops(ComputeSpec::MatrixBf16),
            Some(bf16),
            "{name}"
        );
        assert_eq!(gpu.memory_gb, memory, "{name}");
    }
}

#[test]
fn detects_real_device_names() {
    let gib = |g: u64| Some(g << 30);
    let cases: &[(&str, Option<u64>, Option<&str>)] = &[
        (
            "NVIDIA H100 80GB HBM3",
            Some(85_018_279_936),
            Some("H100 SXM"),
        ),
        ("NVIDIA H100 PCIe", None, Some("H100 PCIe")),
        ("NVIDIA H100", None, None),
        ("NVIDIA H200", None, Some("H200 SXM")),
        ("NVIDIA H200 NVL", None, Some("H200 NVL")),
        ("NVIDIA GH200 480GB", None, None),
        ("AMD Instinct MI300X", Some(206_141_652_992), Some("MI300X")),
        (
            "AMD Instinct MI300X VF",
            Some(205_571_227_648),
            Some("MI300X"),
        ),
        ("MI300X VF", None, Some("MI300X")),
        ("AMD Instinct MI300A", None, None),
        ("AMD Instinct MI325X", None, Some("MI325X")),
        ("AMD Instinct MI355X", None, Some("MI355X")),
        ("NVIDIA A100-SXM4-80GB", None, Some("A100 80GB")),
        ("NVIDIA A100-SXM4-40GB", None, Some("A100 40GB")),
        ("NVIDIA A100-PCIE-40GB", None, Some("A100 40GB")),
        ("NVIDIA A100 80GB PCIe", None, Some("A100 80GB PCIe")),
        // Meta's SXM4 board, named by its board number: memory decides.
        (
            "NVIDIA A100-PG509-200",
            Some(42_297_524_224),
            Some("A100 40GB"),
        ),
        ("NVIDIA A100-PG509-200", gib(79), Some("A100 80GB")),
        ("NVIDIA A100-PG509-200", None, None),
        ("NVIDIA A100-PG509-200", gib(24), None),
        (
            "Tesla V100-SXM2-16GB",
            Some(16_945_512_448),
            Some("V100 SXM2"),
        ),
        (
            "Tesla V100-DGXS-32GB",
            Some(34_084_028_416),
            Some("V100 SXM2"),
        ),
        ("Tesla V100-PCIE-32GB", None, Some("V100 PCIe")),
        ("Tesla V100S-PCIE-32GB", None, None),
        ("AMD Instinct MI250X", None, Some("MI250X")),
        ("AMD Instinct MI250X/MI250", None, Some("MI250X")),
        ("AMD Instinct MI210", Some(68_702_699_520), Some("MI210")),
        ("AMD Radeon Graphics", Some(68_702_699_520), None),
        ("NVIDIA L40S", None, Some("L40S")),
        ("NVIDIA L40", None, None),
        ("NVIDIA L4", Some(24_152_899_584), Some("L4")),
        ("Tesla T4", Some(15_828_320_256), Some("T4")),
        ("NVIDIA T400", None, None),
        ("NVIDIA A10", Some(23_673_372_672), Some("A10")),
        ("NVIDIA A10G", Some(23_609_475_072), None),
        ("NVIDIA H100 NVL", Some(100_485_038_080), Some("H100 NVL")),
        ("NVIDIA B200", None, Some("B200")),
        ("NVIDIA GB200", None, None),
        ("Quadro GP100", Some(17_069_309_952), None),
        ("", None, None),
        ("   ", None, None),
    ];
    for (name, mem, want) in cases {
        assert_eq!(
            detected(name, *mem).as_deref(),
            *want,
            "{name:?} with {mem:?} bytes"
        );
    }
}

#[test]
fn detection_outcomes() {
    let catalog = builtin_catalog();
    assert_eq!(catalog.detect(&[]), Detection::NoDevices);

    let eight = vec![device("NVIDIA H100 80GB HBM3", None); 8];
    let detection = catalog.detect(&eight);
    let Detection::Known { hardware, devices } = &detection else {
        panic!("{detection:?}");
    };
    assert_eq!(hardware.name, "H100 SXM");
    assert_eq!(devices.len(), 1);
    assert_eq!(devices[0].count, 8);
    assert_eq!(devices[0].pattern.as_deref(), Some("H100 80GB HBM3"));
    assert_eq!(
        detection.to_string(),
        "H100 SXM (\"NVIDIA H100 80GB HBM3\" ×8)"
    );

    // A blank name beside a known one does not make it unknown.
    let detection = catalog.detect(&[device("", None), device("NVIDIA B200", None)]);
    assert_eq!(detection.hardware().map(|h| h.name.as_str()), Some("B200"));
    assert_eq!(detection.devices().len(), 2);
    assert_eq!(detection.devices()[0].reason.as_deref(), Some("blank name"));

    let detection = catalog.detect(&[device("Quadro GP100", None), device("", None)]);
    assert!(
        matches!(detection, Detection::Unknown { .. }),
        "{detection:?}"
    );
    assert!(
        detection
            .to_string()
            .starts_with("unknown GPU: \"Quadro GP100\" ×1")
    );

    let detection = catalog.detect(&[device("", None)]);
    assert!(matches!(detection, Detection::Unknown { .. }));

    let detection = catalog.detect(&[
        device("NVIDIA H100 80GB HBM3", None),
        device("AMD Instinct MI300X", None),
    ]);
    let Detection::Mixed { devices } = &detection else {
        panic!("{detection:?}");
    };
    assert_eq!(devices[1].hardware.as_deref(), Some("MI300X"));
    assert!(detection.hardware().is_none());
    assert_eq!(
        detection.to_string(),
        "several different GPUs: \"NVIDIA H100 80GB HBM3\" ×1 → H100 SXM; \
             \"AMD Instinct MI300X\" ×1 → MI300X"
    );

    let detection = catalog.detect(&[
        device("NVIDIA H100 80GB HBM3", None),
        device("Quadro GP100", None),
    ]);
    assert!(matches!(detection, Detection::Mixed { .. }));
}

#[test]
fn peak_fallbacks() {
    let catalog = builtin_catalog();
    let h100 = catalog.by_name("H100 SXM").unwrap();
    // No fp32 matrix units on NVIDIA: the CUDA-core rate.
    assert_eq!(
        h100.resolve_peak(ComputeSpec::MatrixFp32),
        Some((ComputeSpec::VectorFp32, 67.0))
    );
    assert_eq!(h100.peak_tflops(ComputeSpec::VectorBf16), Some(67.0));
    assert_eq!(h100.peak_tflops(ComputeSpec::MatrixFp4), None);
    let mi250x = catalog.by_name("mi250x").unwrap();
    // No tf32 on CDNA2: fp32 matrix rate.
    assert_eq!(
        mi250x.resolve_peak(ComputeSpec::MatrixTf32),
        Some((ComputeSpec::MatrixFp32, 47.85))
    );
    let l40s = catalog.by_name("L40S").unwrap();
    assert_eq!(l40s.peak_tflops(ComputeSpec::VectorFp64), None);
    assert_eq!(l40s.peak_tflops(ComputeSpec::MatrixFp64), None);
    // fp16 falls back to bf16, never bf16 to fp16.
    let bf16_only = Hardware::from_inline("hbm=1,bf16=100").unwrap();
    assert_eq!(bf16_only.peak_tflops(ComputeSpec::MatrixFp16), Some(100.0));
    let fp16_only = Hardware::from_inline("hbm=1,fp16=100").unwrap();
    assert_eq!(fp16_only.peak_tflops(ComputeSpec::MatrixBf16), None);
}

#[test]
fn ridge_point_and_roofline_time_h100() {
    let h100 = builtin_catalog().by_name("H100 SXM").unwrap().clone();
    // 989.5e12 FLOP/s / 3.35e12 B/s = 295.37 FLOP/B.
    let ridge = h100.ridge_point(ComputeSpec::MatrixBf16).unwrap();
    assert!(close(ridge, 989.5 / 3.35), "{ridge}");
    assert!((ridge - 295.37).abs() < 0.01);

    // 8192^3 bf16 GEMM: 2·8192³ = 1.0995e12 FLOP, 3·8192²·2 = 402.65 MB.
    // Compute 1.0995e12 / 989.5e12 s = 1111.18 µs; memory 402.65e6 /
    // 3.35e12 s = 120.2 µs; compute-bound.
    let n = 8192.0_f64;
    let flops = 2.0 * n * n * n;
    let bytes = 3.0 * n * n * 2.0;
    let t = h100
        .roofline_time_us(flops, bytes, ComputeSpec::MatrixBf16)
        .unwrap();
    assert!(close(t, flops / 989.5e12 * 1e6), "{t}");
    assert!((t - 1111.18).abs() < 0.01, "{t}");

    // Elementwise add of 2^28 bf16 elements: 2^28 FLOP, 3·2^28·2 bytes
    // = 1.61 GB → 480.8 µs memory-bound.
    let elems = (1u64 << 28) as f64;
    let t = h100
        .roofline_time_us(elems, elems * 6.0, ComputeSpec::VectorBf16)
        .unwrap();
    assert!(close(t, elems * 6.0 / 3.35e12 * 1e6), "{t}");
    assert!((t - 480.78).abs() < 0.01, "{t}");

    // No FLOPs (a copy): memory time without a peak.
    assert_eq!(
        h100.roofline_time_us(0.0, 3.35e6, ComputeSpec::MatrixFp4),
        Some(1.0)
    );
    // FLOPs on a unit the part lacks: no roofline.
    assert_eq!(
        h100.roofline_time_us(1.0, 1.0, ComputeSpec::MatrixFp4),
        None
    );
    assert_eq!(
        h100.roofline_time_us(f64::NAN, 1.0, ComputeSpec::MatrixBf16),
        None
    );
    assert_eq!(
        h100.roofline_time_us(-1.0, 1.0, ComputeSpec::MatrixBf16),
        None
    );
}

#[test]
fn by_name_is_forgiving_but_not_ambiguous() {
    let catalog = builtin_catalog();
    assert_eq!(catalog.by_name("h100 sxm").unwrap().name, "H100 SXM");
    assert_eq!(catalog.by_name("H100-SXM").unwrap().name, "H100 SXM");
    assert_eq!(catalog.by_name("h100 80gb hbm3").unwrap().name, "H100 SXM");
    assert_eq!(catalog.by_name("v100-dgxs").unwrap().name, "V100 SXM2");
    // "A100" is a match name of two entries.
    assert!(catalog.by_name("A100").is_none());
    assert!(catalog.by_name("").is_none());
    assert!(catalog.by_name("TPU v5").is_none());
}

#[test]
fn resolve_names_device_names_and_specs() {
    let catalog = builtin_catalog();
    assert_eq!(catalog.resolve("mi300x").unwrap().name, "MI300X");
    assert_eq!(
        catalog.resolve("NVIDIA H100 80GB HBM3").unwrap().name,
        "H100 SXM"
    );
    let error = catalog.resolve("A100").unwrap_err().to_string();
    assert!(
        error.starts_with("unknown GPU `A100`: ambiguous between A100 80GB, A100 40GB"),
        "{error}"
    );
    let error = catalog.resolve("GP100").unwrap_err().to_string();
    assert!(error.contains("known: MI300X, MI325X"), "{error}");

    let custom = catalog
        .resolve("hbm=3.35,bf16=990,fp32=67,name=custom")
        .unwrap();
    assert_eq!(custom.name, "custom");

    let based = catalog.resolve("base=H100 SXM, hbm=3.0").unwrap();
    assert_eq!(based.name, "H100 SXM (custom)");
    assert_eq!(based.hbm_tb_s, 3.0);
    assert_eq!(based.peak_tflops(ComputeSpec::MatrixBf16), Some(989.5));
    assert!(based.source.contains("overridden by inline spec"));
    assert!(based.match_names.is_empty());

    let error = catalog.resolve("base=TPU,hbm=1").unwrap_err();
    assert!(
        matches!(&error, HardwareError::Inline { key: Some(k), .. } if k == "base"),
        "{error}"
    );
}

#[test]
fn inline_spec_parses() {
    let hw = Hardware::from_inline("hbm=3.35,bf16=990,fp32=67,name=custom").unwrap();
    assert_eq!(hw.name, "custom");
    assert_eq!(hw.hbm_tb_s, 3.35);
    assert_eq!(hw.memory_gb, 0.0);
    assert_eq!(hw.peak_tflops(ComputeSpec::MatrixBf16), Some(990.0));
    assert_eq!(hw.peak_tflops(ComputeSpec::VectorFp32), Some(67.0));
    assert!(hw.source.contains("inline spec"));

    let hw = Hardware::from_inline(
            " Name = My GPU , HBM=2 , mem=96, matrix_fp8=1000, Vector_BF16=50, tf32=200, fp64=10, int8=5, fp4=7, fp16=9, vendor=Acme,",
        )
        .unwrap();
    assert_eq!(hw.name, "My GPU");
    assert_eq!(hw.vendor, "Acme");
    assert_eq!(hw.memory_gb, 96.0);
    assert_eq!(hw.peak_tflops(ComputeSpec::MatrixFp8), Some(1000.0));
    assert_eq!(hw.peak_tflops(ComputeSpec::VectorBf16), Some(50.0));
    assert_eq!(hw.peak_tflops(ComputeSpec::MatrixTf32), Some(200.0));
    assert_eq!(hw.peak_tflops(ComputeSpec::VectorFp64), Some(10.0));
    assert_eq!(hw.peak_tflops.len(), 7);
}

#[test]
fn inline_spec_errors_name_the_key() {
    let cases: &[(&str, Option<&str>, &str)] = &[
        ("", None, "empty spec"),
        ("hbm=3,bf16=abc", Some("bf16"), "`abc` is not a number"),
        ("hbm=3,bf16=-1", Some("bf16"), "must be a positive number"),
        ("hbm=3,bf16=inf", Some("bf16"), "must be a positive number"),
        ("hbm=3,bf61=1", Some("bf61"), "unknown key"),
        ("hbm=3,bf16", Some("bf16"), "expected key=value"),
        ("hbm=3,bf16=", Some("bf16"), "no value"),
        ("hbm=3,=5", None, "no key"),
        ("hbm=3,bf16=1,BF16=2", Some("bf16"), "given twice"),
        ("bf16=990", Some("hbm"), "missing"),
        ("hbm=3,name=x", None, "no peak given"),
        ("base=H100 SXM,hbm=3", Some("base"), "Catalog::resolve"),
    ];
    for (spec, key, needle) in cases {
        let error = Hardware::from_inline(spec).unwrap_err();
        let HardwareError::Inline { key: got, .. } = &error else {
            panic!("{spec}: {error:?}");
        };
        assert_eq!(got.as_deref(), *key, "{spec}");
        let text = error.to_string();
        assert!(text.contains(needle), "{spec}: {text}");
        if let Some(key) = key {
            assert!(text.contains(&format!("key `{key}`")), "{spec}: {text}");
        }
    }
}

#[test]
fn merge_overrides_and_adds() {
    let user = Catalog::from_yaml(
        r#"
gpus:
  - name: h100-sxm   # same entry, other spelling: replaces it
    vendor: NVIDIA
    match_names: ["H100 80GB HBM3"]
    memory_gb: 80
    hbm_tb_s: 3.0
    peak_tflops: { matrix_bf16: 790 }
  - name: My GH200
    vendor: NVIDIA
    match_names: ["GH200"]
    memory_gb: 96
    hbm_tb_s: 4.0
    peak_tflops: { matrix_bf16: 990 }
  - name: Lab A100
    vendor: NVIDIA
    match_names: ["A100"]
    memory_gb: 40
    hbm_tb_s: 1.5
    peak_tflops: { matrix_bf16: 300 }
"#,
        "my.yaml",
    )
    .unwrap();
    assert_eq!(user.gpus[0].source, "my.yaml");
    let builtin = builtin_catalog();
    let count = builtin.gpus.len();
    let merged = builtin.merged_with(user);
    assert_eq!(merged.gpus.len(), count + 2);
    let h100 = merged.by_name("H100 SXM").unwrap();
    assert_eq!(h100.name, "h100-sxm");
    assert_eq!(h100.hbm_tb_s, 3.0);
    // Replaced in place: the order is kept.
    let position = merged.gpus.iter().position(|g| g.name == "h100-sxm");
    let original = builtin_catalog()
        .gpus
        .iter()
        .position(|g| g.name == "H100 SXM");
    assert_eq!(position, original);
    let detect = |name: &str, mem: Option<u64>| {
        merged
            .detect(&[device(name, mem)])
            .hardware()
            .map(|h| h.name.clone())
    };
    assert_eq!(
        detect("NVIDIA H100 80GB HBM3", None).as_deref(),
        Some("h100-sxm")
    );
    assert_eq!(
        detect("NVIDIA GH200 480GB", None).as_deref(),
        Some("My GH200")
    );
    // The user's "A100" takes the bare name from both built-in A100s...
    assert_eq!(
        detect("NVIDIA A100-PG509-200", None).as_deref(),
        Some("Lab A100")
    );
    // ...but the specific built-in patterns still win on word count.
    assert_eq!(
        detect("NVIDIA A100-SXM4-80GB", None).as_deref(),
        Some("A100 80GB")
    );
}

#[test]
fn yaml_errors_give_file_line_and_column() {
    let text =
        "gpus:\n  - name: X\n    vendor: Y\n    memory_gb: 1\n    hbm_tb_s: 1\n    bogus: 2\n";
    let error = Catalog::from_yaml(text, "my.yaml").unwrap_err();
    let HardwareError::Yaml { location, .. } = &error else {
        panic!("{error:?}");
    };
    assert_eq!(*location, Some((6, 5)));
    let message = error.to_string();
    assert!(message.starts_with("my.yaml:6:5: "), "{message}");
    assert!(message.contains("bogus"), "{message}");
    assert!(!message.contains("at line"), "{message}");

    let error = Catalog::from_yaml("gpus: [\n  {name: X", "x.yaml").unwrap_err();
    assert!(error.to_string().starts_with("x.yaml:"), "{error}");
    assert!(matches!(
        error,
        HardwareError::Yaml {
            location: Some(_),
            ..
        }
    ));

    let bad_spec = "gpus:\n  - name: X\n    vendor: Y\n    memory_gb: 1\n    hbm_tb_s: 1\n    peak_tflops:\n      matrix_bf17: 3\n";
    let error = Catalog::from_yaml(bad_spec, "s.yaml")
        .unwrap_err()
        .to_string();
    assert!(error.starts_with("s.yaml:7:"), "{error}");
    assert!(error.contains("matrix_bf17"), "{error}");
}

#[test]
fn invalid_entries_are_named() {
    let entry = |body: &str| format!("gpus:\n  - name: X\n    vendor: Y\n{body}");
    let cases = [
        (entry("    memory_gb: 1\n    hbm_tb_s: 0\n"), "`hbm_tb_s`"),
        (entry("    memory_gb: -1\n    hbm_tb_s: 1\n"), "`memory_gb`"),
        (
            entry("    memory_gb: 1\n    hbm_tb_s: 1\n    peak_tflops: {matrix_bf16: 0}\n"),
            "`peak_tflops.matrix_bf16`",
        ),
        (
            entry("    memory_gb: 1\n    hbm_tb_s: 1\n    match_names: [\"--\"]\n"),
            "match name",
        ),
    ];
    for (text, needle) in cases {
        let error = Catalog::from_yaml(&text, "f.yaml").unwrap_err().to_string();
        assert!(error.starts_with("f.yaml: GPU `X`: "), "{error}");
        assert!(error.contains(needle), "{error}");
    }
    let twice = "gpus:\n  - {name: X, vendor: V, memory_gb: 1, hbm_tb_s: 1}\n  - {name: x, vendor: V, memory_gb: 1, hbm_tb_s: 1}\n";
    let error = Catalog::from_yaml(twice, "t.yaml").unwrap_err().to_string();
    assert_eq!(error, "t.yaml: GPU `x`: the name appears twice");
    let blank = "gpus:\n  - {name: ' ', vendor: V, memory_gb: 1, hbm_tb_s: 1}\n";
    let error = Catalog::from_yaml(blank, "b.yaml").unwrap_err().to_string();
    assert_eq!(error, "b.yaml: GPU `#1`: `name` is blank");
}

#[test]
fn load_file_reads_and_reports_missing_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gpus.yaml");
    std::fs::write(
            &path,
            "gpus:\n  - {name: X, vendor: V, memory_gb: 1, hbm_tb_s: 2, peak_tflops: {vector_fp32: 3}}\n",
        )
        .unwrap();
    let catalog = Catalog::load_file(&path).unwrap();
    assert_eq!(catalog.names(), vec!["X"]);
    assert_eq!(catalog.gpus[0].source, path.display().to_string());
    let error = Catalog::load_file(&dir.path().join("none.yaml")).unwrap_err();
    assert!(
        error.to_string().contains("none.yaml: cannot read"),
        "{error}"
    );
}

#[test]
fn compute_spec_names_round_trip() {
    for spec in ComputeSpec::ALL {
        assert_eq!(ComputeSpec::from_name(spec.as_str()), Some(spec));
        assert_eq!(spec.fallbacks()[0], spec);
    }
    assert_eq!(
        ComputeSpec::from_name("MATRIX_BF16"),
        Some(ComputeSpec::MatrixBf16)
    );
    assert_eq!(ComputeSpec::from_name("bf16"), None);
}

#[test]
fn unknown_names_suggest_the_closest_entries() {
    let catalog = builtin_catalog();
    // A bare "H100" is deliberately no entry (SXM, PCIe and NVL differ):
    // say which.
    let error = catalog.resolve("H100").unwrap_err().to_string();
    assert!(
        error.starts_with("unknown GPU `H100`: ")
            && error.ends_with("; did you mean `H100 SXM`, `H100 PCIe` or `H100 NVL`?"),
        "{error}"
    );
    assert_eq!(
        catalog.suggestions("h100"),
        ["H100 SXM", "H100 PCIe", "H100 NVL"]
    );
    assert_eq!(
        catalog.suggestions("a100 80"),
        ["A100 80GB", "A100 80GB PCIe"]
    );
    // No entry contains it: the nearest by edit distance.
    assert_eq!(catalog.suggestions("MI30X"), ["MI300X"]);
    assert_eq!(catalog.suggestions("H1OO SXM"), ["H100 SXM"]);
    assert!(catalog.suggestions("TPU v5").is_empty());
    assert!(catalog.suggestions("").is_empty());
    let error = catalog.resolve("TPU v5").unwrap_err().to_string();
    assert!(!error.contains("did you mean"), "{error}");
    let error = catalog.resolve("base=H100,hbm=3").unwrap_err().to_string();
    assert!(
        error.ends_with("; did you mean `H100 SXM`, `H100 PCIe` or `H100 NVL`?"),
        "{error}"
    );
}

#[test]
fn achievable_peaks_are_separate_and_used_on_one_basis() {
    let catalog = builtin_catalog();
    let mi300 = catalog.by_name("MI300X").unwrap();
    let h100 = catalog.by_name("H100 SXM").unwrap();
    let bf16 = ComputeSpec::MatrixBf16;
    // The datasheet figure is what every lookup sees by default.
    assert_eq!(mi300.peak_tflops(bf16), Some(1307.4));
    assert_eq!(
        mi300.on_basis(PeakBasis::Datasheet).peak_tflops(bf16),
        Some(1307.4)
    );
    // On the achievable basis, one GPU alone uses its measured figure for
    // that exact spec only (fp16 stays on the datasheet).
    let measured = mi300.on_basis(PeakBasis::Achievable);
    assert_eq!(measured.peak_tflops(bf16), Some(708.0));
    assert_eq!(measured.peak_tflops(ComputeSpec::MatrixFp16), Some(1307.4));
    assert_eq!(measured.hbm_tb_s, 5.3);
    // Between two GPUs, only where both have a measured figure: H100 has
    // none, so both stay on the datasheet and the expected bf16 ratio is
    // 989.5 / 1307.4 (about 0.76), not 989.5 / 708 (1.40).
    let (b, c) = Hardware::pair_on_basis(h100, mi300, PeakBasis::Achievable);
    assert_eq!(b.peak_tflops(bf16), Some(989.5));
    assert_eq!(c.peak_tflops(bf16), Some(1307.4));
    let (b, c) = Hardware::pair_on_basis(mi300, mi300, PeakBasis::Achievable);
    assert_eq!(
        (b.peak_tflops(bf16), c.peak_tflops(bf16)),
        (Some(708.0), Some(708.0))
    );
    // An inline override of a catalog entry drops the measured figures.
    let based = catalog.resolve("base=MI300X, bf16=1000").unwrap();
    assert!(based.achievable.is_none());
    assert_eq!(
        catalog.resolve("base=MI300X, name=lab").unwrap().achievable,
        mi300.achievable
    );
}

#[test]
fn achievable_figures_are_validated() {
    let yaml = "gpus:\n  - {name: X, vendor: Y, memory_gb: 1, hbm_tb_s: 1, \
                peak_tflops: {matrix_bf16: 10}, \
                achievable: {peak_tflops: {matrix_bf16: -1}, source: s}}\n";
    let error = Catalog::from_yaml(yaml, "f.yaml").unwrap_err().to_string();
    assert!(
        error.contains("achievable.peak_tflops.matrix_bf16"),
        "{error}"
    );
}

#[test]
fn links_are_per_direction_with_their_source() {
    let catalog = builtin_catalog();
    let link = |name: &str| catalog.by_name(name).and_then(|h| h.link.clone());
    for (name, link_name, gb_s, cited) in [
        ("H100 SXM", "NVLink 4", 450.0, "NVLink 900 GB/s"),
        ("H200 SXM", "NVLink 4", 450.0, "NVLink 900 GB/s"),
        ("B200", "NVLink 5", 900.0, "1.8 TB/s"),
        ("A100 80GB", "NVLink 3", 300.0, "NVLink 600 GB/s"),
        ("A100 40GB", "NVLink 3", 300.0, "NVLink 600 GB/s"),
        ("MI300X", "Infinity Fabric (7 links)", 448.0, "128 GB/s"),
        ("MI325X", "Infinity Fabric (7 links)", 448.0, "128 GB/s"),
        ("MI355X", "Infinity Fabric (7 links)", 537.6, "153.6 GB/s"),
        (
            "MI250X",
            "Infinity Fabric (8 links per module)",
            200.0,
            "100 GB/s",
        ),
    ] {
        let link = link(name).unwrap_or_else(|| panic!("{name} has a link"));
        assert_eq!(link.name, link_name, "{name}");
        assert!(close(link.gb_s, gb_s), "{name}: {}", link.gb_s);
        assert!(link.source.contains("https://"), "{name}: {}", link.source);
        assert!(link.source.contains(cited), "{name}: {}", link.source);
    }
    // A PCIe card's link depends on a bridge: none is listed.
    for name in ["H100 PCIe", "H200 NVL", "A100 80GB PCIe", "L40S", "MI210"] {
        assert_eq!(link(name), None, "{name}");
    }
    for name in ["H100 SXM", "H200 SXM", "B200"] {
        let network = catalog.by_name(name).and_then(|h| h.network.clone());
        let network = network.unwrap_or_else(|| panic!("{name} has a network"));
        assert!(close(network.gb_s, 50.0), "{name}: 400 Gb/s is 50 GB/s");
        assert!(network.source.contains("400 Gb/s"), "{}", network.source);
    }
    assert_eq!(catalog.by_name("MI300X").unwrap().network, None);
    let h100 = link("H100 SXM").unwrap();
    assert!(close(h100.percent_of(225.0), 50.0));
}

#[test]
fn links_are_validated_and_default_their_source() {
    let yaml = "gpus:\n  - name: X\n    vendor: v\n    memory_gb: 1\n    hbm_tb_s: 1\n    link: {name: L, gb_s: 0}\n";
    let error = Catalog::from_yaml(yaml, "f.yaml").unwrap_err().to_string();
    assert!(error.contains("`link.gb_s` must be a positive"), "{error}");
    let yaml = "gpus:\n  - name: X\n    vendor: v\n    memory_gb: 1\n    hbm_tb_s: 1\n    network: {name: ' ', gb_s: 5}\n";
    let error = Catalog::from_yaml(yaml, "f.yaml").unwrap_err().to_string();
    assert!(error.contains("`network.name` is blank"), "{error}");
    let yaml = "gpus:\n  - name: X\n    vendor: v\n    memory_gb: 1\n    hbm_tb_s: 1\n    link: {name: L, gb_s: 100}\n";
    let catalog = Catalog::from_yaml(yaml, "mine.yaml").unwrap();
    assert_eq!(catalog.gpus[0].link.as_ref().unwrap().source, "mine.yaml");
}

#[test]
fn an_inline_peak_of_1e_minus_300_and_other_unphysical_figures_are_refused() {
    for (spec, key) in [
        ("name=g,hbm=3,bf16=1e-300", "bf16"),
        ("name=g,hbm=3,bf16=1e300", "bf16"),
        ("name=g,hbm=1e-9,bf16=990", "hbm"),
        ("name=g,hbm=5000,bf16=990", "hbm"),
    ] {
        let message = Hardware::from_inline(spec).unwrap_err().to_string();
        assert!(message.contains(key), "{spec}: {message}");
        assert!(
            message.contains("outside what a GPU can have"),
            "{spec}: {message}"
        );
        assert_eq!(message.lines().count(), 1);
    }
    let yaml = "gpus:\n  - name: X\n    vendor: Y\n    memory_gb: 1\n    hbm_tb_s: 1\n    \
                peak_tflops: {matrix_bf16: 1.0e-300}\n";
    let message = Catalog::from_yaml(yaml, "my.yaml").unwrap_err().to_string();
    assert!(message.contains("peak_tflops.matrix_bf16"), "{message}");
    // Every part of the built-in catalog lies inside the bounds.
    assert!(!builtin_catalog().names().is_empty());
}
