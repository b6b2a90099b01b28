//! Compare tests: a trace against itself and jittered copies of itself,
//! kernel renames, cross-platform expectations, baseline windows, shape
//! changes and the nothing-to-compare reasons, mostly on corpus traces.

use super::expected::row_dtype;
use super::*;
use crate::analysis::hardware::{ComputeSpec, Hardware, builtin_catalog};
use crate::analysis::ops::category::Category;
use crate::analysis::ops::stats::Stats;
use crate::analysis::perf_model::dtype::Dtype;
use crate::analysis::profile::Profile;
use crate::analysis::profile::{Coverage, GraphPlace, GraphRole, OpModel};
use crate::analysis::timeline::Breakdown;
use crate::gate::snapshot::tests::{
    corpus_profile, corpus_snapshot, example_snapshot, tiny_snapshot,
};
use crate::gate::snapshot::{KernelSamples, OpKey, OpSnapshot, StepSnapshot};
use crate::gate::stats;
use crate::gate::stats::{Resampling, SplitMix64};

const QWEN_H100: &str = "tracelens/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz";
const QWEN_MI300: &str = "tracelens/mi300/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz";
const STEPS_A100: &str = "hta/trace_diff_control_a100.json.gz";

/// A copy of the profile with every per-invocation sample and per-step
/// time multiplied by a deterministic factor in [0.97, 1.03] (per row,
/// per sample), statistics recomputed; `scale_row` (row index, factor)
/// multiplies one row on top.
fn jittered(profile: &Profile, seed: u64, scale_row: Option<(usize, f64)>) -> Profile {
    let mut copy = profile.clone();
    let mut rng = SplitMix64::new(seed);
    let mut factor = move || 0.97 + 0.06 * (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    for (index, row) in copy.unique_args.iter_mut().enumerate() {
        let extra = match scale_row {
            Some((target, f)) if target == index => f,
            _ => 1.0,
        };
        for sample in &mut row.samples_us {
            *sample *= factor() * extra;
        }
        for (_, us) in &mut row.step_us {
            *us *= factor() * extra;
        }
        row.direct = Stats::of(&row.samples_us);
    }
    copy
}

fn snapshot_of(profile: &Profile) -> Snapshot {
    Snapshot::from_profile(profile, "0".repeat(64), 0)
}

/// The index of the matched row of `comparison` whose key is `op`'s.
pub(crate) fn matched_row(comparison: &Comparison, op: &OpSnapshot) -> usize {
    let key = op.key();
    comparison
        .ops
        .iter()
        .position(|row| row.candidate.key == key)
        .unwrap_or_else(|| panic!("{} {} is not matched", key.name, key.input_dims))
}

fn compare_one(baseline: &Snapshot, candidate: &Snapshot) -> Comparison {
    compare(
        std::slice::from_ref(baseline),
        candidate,
        &CompareOptions::default(),
    )
}

#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
#[test]
fn a_trace_against_itself_changes_nothing() {
    for relative in [QWEN_H100, STEPS_A100] {
        let snapshot = corpus_snapshot(relative);
        let comparison = compare_one(&snapshot, &snapshot);
        assert_eq!(comparison.nothing_to_compare, None, "{relative}");
        assert_eq!(comparison.ops.len(), snapshot.ops.len());
        assert!(comparison.new_ops.is_empty() && comparison.missing_ops.is_empty());
        assert!(comparison.shape_changed.is_empty());
        assert!(!comparison.cross_platform);
        for op in &comparison.ops {
            assert_eq!(op.estimate.ratio, 1.0, "{:?}", op.baseline.key);
            if let Some(interval) = op.estimate.interval {
                assert!(
                    (interval.low..=interval.high).contains(&1.0),
                    "{:?}",
                    op.baseline.key
                );
            }
            assert_eq!(op.kernel_diff, None);
            assert_eq!(op.impact_us, 0.0);
            assert_eq!(op.expected, None);
            assert_eq!(op.noise, None);
        }
        for metric in &comparison.timeline {
            assert_eq!(metric.baseline_us, metric.candidate_us);
            if let Some(estimate) = &metric.estimate {
                assert_eq!(estimate.ratio, 1.0);
            }
        }
        if relative == STEPS_A100 {
            assert!(
                comparison
                    .ops
                    .iter()
                    .any(|op| op.samples_basis == SamplesBasis::Steps)
            );
            assert!(comparison.timeline.iter().all(|m| m.estimate.is_some()));
        }
    }
}

#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
#[test]
fn three_percent_jitter_stays_within_five_percent() {
    for relative in [QWEN_H100, STEPS_A100] {
        let (profile, _, _) = corpus_profile(relative);
        let baseline = snapshot_of(&profile);
        let candidate = snapshot_of(&jittered(&profile, 1, None));
        let comparison = compare_one(&baseline, &candidate);
        let mut with_interval = 0;
        for op in &comparison.ops {
            let ratio = op.estimate.ratio;
            assert!(
                (0.95..=1.05).contains(&ratio),
                "{:?}: {ratio}",
                op.baseline.key
            );
            if let Some(interval) = op.estimate.interval {
                with_interval += 1;
                assert!(
                    interval.low >= 0.95 && interval.high <= 1.05,
                    "{relative} {:?}: {interval:?}",
                    op.baseline.key
                );
            }
            assert!(op.impact_percent.abs() < 3.0);
        }
        assert!(with_interval > 0, "{relative}");
    }
}

#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
#[test]
fn one_op_thirty_percent_slower_stands_out() {
    for relative in [QWEN_H100, STEPS_A100] {
        let (profile, _, _) = corpus_profile(relative);
        // Slow down the third-largest row, over a jittered background.
        let target = 2;
        let key = {
            let row = &profile.unique_args[target];
            (row.name.clone(), row.input_dims.clone())
        };
        let baseline = snapshot_of(&profile);
        let candidate = snapshot_of(&jittered(&profile, 2, Some((target, 1.3))));
        let comparison = compare_one(&baseline, &candidate);
        let top = &comparison.ops[0];
        assert_eq!(
            (
                top.baseline.key.name.clone(),
                top.baseline.key.input_dims.clone()
            ),
            key,
            "{relative}: the slowed op has the largest impact"
        );
        let interval = top.estimate.interval.expect("several samples");
        assert!(interval.low > 1.2, "{relative}: {interval:?}");
        assert!(top.impact_percent > 0.0);
        assert!(top.estimate.p_value_above(1.2).expect("replicates") < 0.025);
        for op in &comparison.ops[1..] {
            if let Some(interval) = op.estimate.interval {
                assert!(interval.low < 1.2, "{:?}", op.baseline.key);
            }
        }
    }
}

#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
#[test]
fn a_renamed_kernel_shows_as_a_diff_on_its_row_only() {
    let snapshot = corpus_snapshot(QWEN_H100);
    let mut candidate = snapshot.clone();
    let target = candidate
        .ops
        .iter()
        .position(|op| !op.kernel_sequence.is_empty())
        .expect("a row with kernels");
    let old_name = candidate.ops[target].kernel_sequence[0].clone();
    candidate.ops[target].kernel_sequence[0] = "renamed_gemm_kernel_v2".to_string();
    let comparison = compare_one(&snapshot, &candidate);
    let with_diff: Vec<&OpComparison> = comparison
        .ops
        .iter()
        .filter(|op| op.kernel_diff.is_some())
        .collect();
    assert_eq!(with_diff.len(), 1);
    assert_eq!(with_diff[0].baseline.key, snapshot.ops[target].key());
    let diff = with_diff[0].kernel_diff.as_deref().expect("diff");
    assert!(
        diff.starts_with("--- baseline\n+++ candidate\n@@"),
        "{diff}"
    );
    assert!(diff.contains(&format!("-{old_name}\n")), "{diff}");
    assert!(diff.contains("+renamed_gemm_kernel_v2\n"), "{diff}");
    assert_eq!(with_diff[0].estimate.ratio, 1.0);
}

#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
#[test]
fn cross_platform_rows_carry_their_roofline_ratio() {
    let (h100, mi300) = (corpus_snapshot(QWEN_H100), corpus_snapshot(QWEN_MI300));
    let catalog = builtin_catalog();
    let (b, c) = (
        h100.fingerprint
            .catalog_hardware(&catalog)
            .expect("H100 SXM"),
        mi300
            .fingerprint
            .catalog_hardware(&catalog)
            .expect("MI300X"),
    );
    assert_eq!((b.name.as_str(), c.name.as_str()), ("H100 SXM", "MI300X"));
    let options = CompareOptions {
        baseline_hardware: Some(b.clone()),
        candidate_hardware: Some(c.clone()),
        ..CompareOptions::default()
    };
    let comparison = compare(std::slice::from_ref(&h100), &mi300, &options);
    assert!(comparison.cross_platform);
    assert_eq!(comparison.nothing_to_compare, None);
    assert!(
        comparison.ops.len() >= 20,
        "{} matched",
        comparison.ops.len()
    );
    let mut gemms = 0;
    for op in &comparison.ops {
        let Some(model) = &op.baseline.model else {
            continue;
        };
        let expected = op
            .expected
            .unwrap_or_else(|| panic!("{:?}", op.baseline.key));
        if let Some(spec) = model.compute_spec {
            let roofline = c
                .roofline_time_us(model.flops, model.bytes, spec)
                .expect("c")
                / b.roofline_time_us(model.flops, model.bytes, spec)
                    .expect("b");
            assert_eq!(expected.basis, ExpectationBasis::Roofline);
            assert!((expected.ratio - roofline).abs() < 1e-12);
        }
        if op.baseline.category == Category::Gemm {
            gemms += 1;
            // Between the compute-bound (990/708) and memory-bound (3.35/5.3) ratios.
            assert!((3.35 / 5.3 - 1e-9..=990.0 / 708.0 + 1e-9).contains(&expected.ratio));
        }
    }
    assert!(gemms > 0);
    // Every matched row has an expectation unless it is a collective or runtime work.
    for op in &comparison.ops {
        assert!(
            op.expected.is_some()
                || matches!(op.baseline.category, Category::Comm | Category::Runtime),
            "{:?}",
            op.baseline.key
        );
    }
    // Different libraries pick different kernels.
    assert!(comparison.ops.iter().any(|op| op.kernel_diff.is_some()));
}

#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
#[test]
fn a_window_of_baselines_measures_noise() {
    let (profile, _, _) = corpus_profile(QWEN_H100);
    let window: Vec<Snapshot> = (10..13)
        .map(|seed| snapshot_of(&jittered(&profile, seed, None)))
        .collect();
    let candidate = snapshot_of(&profile);
    let comparison = compare(&window, &candidate, &CompareOptions::default());
    assert_eq!(comparison.baseline_runs, 3);
    assert!(comparison.ops.iter().all(|op| op.baseline.runs == 3));
    for op in &comparison.ops {
        let noise = op.noise.expect("three runs");
        assert!(noise < 0.06, "{:?}: {noise}", op.baseline.key);
        assert!(matches!(
            op.estimate.resampling,
            stats::Resampling::Independent | stats::Resampling::None
        ));
    }
    assert!(
        comparison
            .ops
            .iter()
            .any(|op| op.noise.unwrap_or(0.0) > 0.0)
    );
    let total = comparison
        .timeline
        .iter()
        .find(|m| m.metric == "total_time")
        .expect("row");
    assert_eq!(total.noise, Some(0.0)); // the timeline itself was not jittered
}

#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
#[test]
fn changed_shapes_pair_by_call_site_and_the_rest_is_new_or_missing() {
    let snapshot = corpus_snapshot(QWEN_H100);
    let mut candidate = snapshot.clone();
    let changed = candidate
        .ops
        .iter()
        .position(|op| op.module_path.is_some())
        .expect("Qwen records modules");
    candidate.ops[changed].input_dims.push_str(" [changed]");
    let removed = candidate.ops.remove(candidate.ops.len() - 1);
    let mut extra = candidate.ops[0].clone();
    extra.name = "aten::brand_new_op".to_string();
    candidate.ops.push(extra);
    let comparison = compare_one(&snapshot, &candidate);
    assert_eq!(comparison.shape_changed.len(), 1);
    let change = &comparison.shape_changed[0];
    assert_eq!(change.baseline.key, snapshot.ops[changed].key());
    assert!(change.candidate.key.input_dims.ends_with("[changed]"));
    assert_eq!(comparison.new_ops.len(), 1);
    assert_eq!(comparison.new_ops[0].key.name, "aten::brand_new_op");
    assert_eq!(comparison.missing_ops.len(), 1);
    assert_eq!(comparison.missing_ops[0].key, removed.key());
    assert_eq!(comparison.ops.len(), snapshot.ops.len() - 2);
    assert!(comparison.missing_ops[0].op_ref().name == removed.name);
}

#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
#[test]
fn nothing_to_compare_is_said_out_loud() {
    let cpu_only = corpus_snapshot("hta/cpu_only.json.gz");
    let comparison = compare_one(&cpu_only, &cpu_only);
    assert_eq!(
        comparison.nothing_to_compare.as_deref(),
        Some("neither side has GPU work")
    );
    let gpu_only = corpus_snapshot("tracelens/mi210/gpu_only_trace.json.gz");
    // A GPU-only trace has one row per kernel name: those compare.
    let comparison = compare_one(&gpu_only, &gpu_only);
    assert_eq!(comparison.nothing_to_compare, None);
    assert!(!comparison.ops.is_empty());
    assert!(
        comparison
            .ops
            .iter()
            .all(|op| op.baseline.key.input_dims.is_empty()
                && op.baseline.kernel_sequence == [op.baseline.key.name.clone()])
    );
    assert!(comparison.timeline.iter().any(|m| m.baseline_us > 0.0));
    let comparison = compare(&[], &gpu_only, &CompareOptions::default());
    assert_eq!(
        comparison.nothing_to_compare.as_deref(),
        Some("no baseline run to compare with")
    );
    let comparison = compare_one(&cpu_only, &gpu_only);
    assert_eq!(
        comparison.nothing_to_compare.as_deref(),
        Some("the baseline has no GPU work")
    );
}

fn side(category: Category, input_type: &str, model: Option<OpModel>) -> OpSide {
    OpSide {
        key: OpKey {
            name: "op".to_string(),
            input_type: input_type.to_string(),
            ..OpKey::default()
        },
        category,
        module_path: None,
        runs: 1,
        count: 1,
        total_us: 1.0,
        time_us: 1.0,
        median_us: 1.0,
        mean_us: 1.0,
        min_us: 1.0,
        max_us: 1.0,
        kernel_sequence: Vec::new(),
        model,
        graph: None,
        kernel_us: Vec::new(),
    }
}

#[test]
fn expectations_fall_back_by_category() {
    let catalog = builtin_catalog();
    let h100 = catalog.by_name("H100 SXM").expect("h100");
    let mi300 = catalog.by_name("MI300X").expect("mi300x");
    let gemm = expectation(
        &side(Category::Gemm, "('c10::BFloat16', 'c10::BFloat16')", None),
        h100,
        mi300,
    )
    .expect("peak ratio");
    assert_eq!(gemm.basis, ExpectationBasis::PeakCompute);
    assert_eq!(gemm.spec, Some(ComputeSpec::MatrixBf16));
    // Datasheet peaks on both sides: H100 faster than MI300X by 0.76.
    assert!((gemm.ratio - 989.5 / 1307.4).abs() < 1e-12);
    let add = expectation(
        &side(Category::Elementwise, "('float',)", None),
        h100,
        mi300,
    )
    .expect("bw");
    assert_eq!(add.basis, ExpectationBasis::Bandwidth);
    assert!((add.ratio - 3.35 / 5.3).abs() < 1e-12);
    assert_eq!(
        expectation(&side(Category::Comm, "", None), h100, mi300),
        None
    );
    // A large bf16 GEMM is compute-bound on both: the peak ratio.
    let n = 8192.0_f64;
    let model = OpModel {
        family: "GEMM".to_string(),
        flops: 2.0 * n * n * n,
        bytes: 3.0 * n * n * 2.0,
        compute_spec: Some(ComputeSpec::MatrixBf16),
    };
    let big = expectation(&side(Category::Gemm, "", Some(model)), h100, mi300).expect("roofline");
    assert_eq!(big.basis, ExpectationBasis::Roofline);
    assert!((big.ratio - 989.5 / 1307.4).abs() < 1e-12);
    assert_eq!(row_dtype("('Scalar', 'c10::Half', '')"), Some(Dtype::F16));
    assert_eq!(row_dtype("('long int',)"), None);
}

#[test]
fn kernel_diffs_are_unified_diffs() {
    let names = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(kernel_diff(&names(&["a", "b"]), &names(&["a", "b"])), None);
    let diff = kernel_diff(&names(&["a", "b", "c"]), &names(&["a", "x", "c"])).expect("differs");
    assert_eq!(
        diff,
        "--- baseline\n+++ candidate\n@@ -1,3 +1,3 @@\n a\n-b\n+x\n c\n"
    );
}

/// Issue #11: ROCm 7.1 runs `aten::copy_` and fills as blit kernels, 7.2 as
/// SDMA copies and memsets; that upgrade is no kernel selection change.
#[test]
fn runtime_copy_and_fill_names_are_one_token_in_kernel_diffs() {
    let names = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let rocm71 = names(&[
        "__amd_rocclr_copyBuffer",
        "Cijk_Alik_Bljk_BBS_BH_MT128x128x64",
        "__amd_rocclr_copyBufferAligned",
        "__amd_rocclr_fillBufferAligned",
    ]);
    let rocm72 = names(&[
        "Memcpy DtoD (Device -> Device)",
        "Cijk_Alik_Bljk_BBS_BH_MT128x128x64",
        "MEMORY_COPY_DEVICE_TO_DEVICE",
        "Memset (Device)",
    ]);
    assert_eq!(kernel_diff(&rocm71, &rocm72), None);
    // A real change still shows, with the names the traces recorded.
    let mut changed = rocm72.clone();
    changed[1] = "Cijk_Ailk_Bljk_BBS_BH_MT64x64x32".to_string();
    let diff = kernel_diff(&rocm71, &changed).expect("differs");
    assert!(
        diff.contains("\n-Cijk_Alik_Bljk_BBS_BH_MT128x128x64\n"),
        "{diff}"
    );
    assert!(
        diff.contains("\n+Cijk_Ailk_Bljk_BBS_BH_MT64x64x32\n"),
        "{diff}"
    );
    assert!(diff.contains("\n-__amd_rocclr_copyBuffer\n"), "{diff}");
    // A copy that became a fill is a change.
    assert!(
        kernel_diff(
            &names(&["__amd_rocclr_copyBuffer"]),
            &names(&["Memset (Device)"])
        )
        .is_some()
    );
}

#[test]
fn forty_thousand_kernel_graph_op_diff_is_summarised_not_quadratic() {
    // A CUDA-graph replay with 40k kernels whose names all changed: a line
    // diff of it took 21.6 s (Myers is quadratic in what differs).
    let baseline: Vec<String> = (0..40_000)
        .map(|i| format!("graph_kernel_{}", i % 7))
        .collect();
    let candidate: Vec<String> = (0..40_000)
        .map(|i| format!("new_kernel_{}", i % 5))
        .collect();
    let diff = kernel_diff(&baseline, &candidate).expect("differs");
    assert!(
        diff.starts_with(
            "--- baseline\n+++ candidate\n@@ summarised: 40000 of 40000 baseline kernels and 40000 of 40000 candidate kernels differ"
        ),
        "{diff}"
    );
    assert!(diff.contains("\n-graph_kernel_0 ×5715\n"), "{diff}");
    assert!(diff.contains("\n+new_kernel_0 ×8000\n"), "{diff}");
    // A summary, not a line diff: the quadratic path was not taken.
    assert_eq!(diff.lines().count(), 3 + 7 + 5, "{diff}");
}

#[test]
fn long_kernel_sequences_with_a_small_change_keep_a_line_diff() {
    let baseline: Vec<String> = (0..40_000).map(|i| format!("k{}", i % 11)).collect();
    let mut candidate = baseline.clone();
    candidate[20_000] = "replacement".to_string();
    let diff = kernel_diff(&baseline, &candidate).expect("differs");
    assert!(
        diff.starts_with("--- baseline\n+++ candidate\n@@ -19998,7 +19998,7 @@\n"),
        "{diff}"
    );
    assert!(
        diff.contains(&format!("\n-{}\n+replacement\n", baseline[20_000])),
        "{diff}"
    );
    // The same kernels in another order: no change of kernel selection.
    let reversed: Vec<String> = baseline.iter().rev().cloned().collect();
    assert_eq!(kernel_diff(&baseline, &reversed), None);
}

#[test]
fn concurrent_kernels_in_another_order_are_no_kernel_diff() {
    let names = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let baseline = names(&["gemm", "copy", "reduce"]);
    assert_eq!(
        kernel_diff(&baseline, &names(&["copy", "gemm", "reduce"])),
        None
    );
    // Another number of the same kernels is a change.
    assert!(kernel_diff(&baseline, &names(&["gemm", "copy", "reduce", "copy"])).is_some());
}

#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
#[test]
fn an_op_whose_shapes_all_changed_is_compared_by_its_total() {
    const EMBEDDING: &str = "fbgemm::split_embedding_codegen_lookup_rowwise_adagrad_function";
    let snapshot = corpus_snapshot(STEPS_A100);
    let same = compare_one(&snapshot, &snapshot);
    let total = same
        .op_totals
        .iter()
        .find(|t| t.candidate.key.name == EMBEDDING)
        .expect("an op total for the churning op");
    assert_eq!(total.samples_basis, SamplesBasis::Steps);
    assert_eq!(total.estimate.ratio, 1.0);
    assert!(total.candidate.key.input_dims.ends_with(" shapes"));
    // Other shapes everywhere and half again as slow: no shape matches, the
    // total does, per step, with an interval above 1.
    let mut candidate = snapshot.clone();
    for op in candidate.ops.iter_mut().filter(|op| op.name == EMBEDDING) {
        op.input_dims.push_str(" [other]");
        op.direct.sum *= 1.5;
        for (_, us) in &mut op.step_us {
            *us *= 1.5;
        }
    }
    let comparison = compare_one(&snapshot, &candidate);
    assert!(
        comparison
            .ops
            .iter()
            .all(|op| op.candidate.key.name != EMBEDDING)
    );
    let total = comparison
        .op_totals
        .iter()
        .find(|t| t.candidate.key.name == EMBEDDING)
        .expect("an op total");
    assert!(
        (total.estimate.ratio - 1.5).abs() < 1e-6,
        "{}",
        total.estimate.ratio
    );
    assert!(total.estimate.interval.expect("six steps").low > 1.4);
    assert!(total.impact_percent > 0.5, "{}", total.impact_percent);
}

#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
#[test]
fn timeline_metrics_carry_their_step_to_step_spread() {
    let snapshot = corpus_snapshot(STEPS_A100);
    let comparison = compare_one(&snapshot, &snapshot);
    for metric in &comparison.timeline {
        let steps: Vec<f64> = snapshot
            .steps
            .iter()
            .map(|s| {
                s.timeline
                    .rows()
                    .iter()
                    .find(|(name, _)| *name == metric.metric)
                    .expect("metric")
                    .1
            })
            .collect();
        assert_eq!(
            metric.step_spread,
            stats::max_relative_deviation(&steps),
            "{}",
            metric.metric
        );
    }
    // Without steps on a side there is no spread.
    let qwen = corpus_snapshot(QWEN_H100);
    let comparison = compare_one(&qwen, &qwen);
    assert!(comparison.timeline.iter().all(|m| m.step_spread.is_none()));
}

#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
#[test]
fn a_gpu_only_kernel_renamed_is_one_row_with_a_kernel_diff() {
    let snapshot = corpus_snapshot("tracelens/mi210/gpu_only_trace.json.gz");
    let mut candidate = snapshot.clone();
    let row = &mut candidate.ops[0];
    let old_name = row.name.clone();
    row.name = format!("{old_name}_v2");
    row.kernel_sequence = vec![row.name.clone()];
    let comparison = compare_one(&snapshot, &candidate);
    assert!(comparison.new_ops.is_empty() && comparison.missing_ops.is_empty());
    let renamed = comparison
        .ops
        .iter()
        .find(|op| op.baseline.key.name == old_name)
        .expect("the renamed row is matched");
    assert_eq!(renamed.candidate.key.name, format!("{old_name}_v2"));
    assert!(renamed.kernel_diff.is_some());
    assert_eq!(renamed.estimate.ratio, 1.0);
}

#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
#[test]
fn a_kernel_some_calls_of_a_row_launch_is_judged_on_its_own_launches() {
    // AlexNet recorded no shapes: one `aten::cudnn_convolution` row holds
    // calls running different kernels, so one kernel ×1.3 barely moves
    // the row's median call.
    let snapshot = corpus_snapshot("hta/alexnet_a100.json.gz");
    let mut candidate = snapshot.clone();
    let row = candidate
        .ops
        .iter_mut()
        .find(|op| op.name == "aten::cudnn_convolution")
        .expect("the convolution row");
    let kernel = row
        .kernel_samples_us
        .iter_mut()
        .find(|k| k.name.starts_with("cudnn_ampere_scudnn_128x64"))
        .expect("its kernels' launches are kept: its calls launch different kernels");
    let name = kernel.name.clone();
    let added: f64 = 0.3 * kernel.total_us;
    kernel.total_us *= 1.3;
    kernel.samples_us.iter_mut().for_each(|us| *us *= 1.3);
    row.direct.sum += added;
    let comparison = compare_one(&snapshot, &candidate);
    let part = comparison
        .kernel_parts
        .iter()
        .find(|p| p.kernel == name)
        .expect("a part for the kernel");
    assert!((part.comparison.estimate.ratio - 1.3).abs() < 1e-9);
    // A part's time is its kernel's share of the row's time: above 0,
    // below the row's own.
    let row_time = |side: fn(&OpComparison) -> &OpSide| {
        side(
            comparison
                .ops
                .iter()
                .find(|op| op.baseline.key.name == "aten::cudnn_convolution")
                .expect("the row compared"),
        )
        .time_us
    };
    assert!(part.comparison.baseline.time_us > 0.0);
    assert!(part.comparison.baseline.time_us < row_time(|op| &op.baseline));
    assert!(
        comparison
            .kernel_parts
            .iter()
            .all(|p| p.kernel == name || p.comparison.estimate.ratio == 1.0)
    );
    let verdict = crate::gate::judge::tests::verdict_of(&snapshot, &candidate);
    let first = &verdict.groups[0];
    assert_eq!(first.label, "aten::cudnn_convolution", "{verdict:#?}");
    assert!(
        verdict
            .findings
            .iter()
            .any(|f| f.severity == crate::gate::verdict::Severity::Fail
                && f.message
                    .contains(&format!("its kernel {name} is 30.0% slower per launch"))),
        "{:#?}",
        verdict.findings
    );
}

/// Where both sides have steps, a timeline row is the steps' sum: time the
/// run spent between its steps moves no row. Where the candidate has none,
/// both sides are their runs' timelines.
#[test]
fn timeline_rows_are_the_steps_sums_when_both_sides_have_steps() {
    let baseline = example_snapshot();
    assert!(baseline.steps.len() >= 2);
    let summed = |s: &Snapshot| s.steps.iter().map(|s| s.timeline.total_time).sum::<f64>();
    let mut between = baseline.clone();
    between.timeline.idle_time += 1000.0;
    between.timeline.total_time += 1000.0;
    let comparison = compare_one(&baseline, &between);
    let total = comparison
        .timeline
        .iter()
        .find(|t| t.metric == "total_time")
        .expect("a total_time row");
    assert_eq!(total.baseline_us, summed(&baseline));
    assert_eq!(total.candidate_us, summed(&between));
    assert_eq!(total.delta_percent, Some(0.0));

    let mut no_steps = between.clone();
    no_steps.steps.clear();
    let comparison = compare_one(&baseline, &no_steps);
    let total = comparison
        .timeline
        .iter()
        .find(|t| t.metric == "total_time")
        .expect("a total_time row");
    assert_eq!(total.baseline_us, baseline.timeline.total_time);
    assert_eq!(total.candidate_us, no_steps.timeline.total_time);
}

/// A kernel part is one kernel's launches: it carries no per-kernel
/// breakdown of its row (a graph row's `kernel_us`), which would name
/// another kernel as the part's main change.
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
#[test]
fn a_kernel_part_holds_its_kernel_not_its_rows_breakdown() {
    let mut snapshot = corpus_snapshot("hta/alexnet_a100.json.gz");
    let row = snapshot
        .ops
        .iter_mut()
        .find(|op| op.name == "aten::cudnn_convolution")
        .expect("the convolution row");
    row.kernel_us = row
        .kernel_samples_us
        .iter()
        .map(|k| (k.name.clone(), k.total_us))
        .collect();
    assert!(row.kernel_us.len() >= 2);
    let comparison = compare_one(&snapshot, &snapshot);
    let convolution = comparison
        .ops
        .iter()
        .find(|op| op.baseline.key.name == "aten::cudnn_convolution")
        .expect("the row compared");
    assert!(convolution.candidate.kernel_us.len() >= 2);
    assert!(!comparison.kernel_parts.is_empty());
    let samples = |part: &KernelPart| {
        let key = &part.comparison.baseline.key;
        let row = snapshot
            .ops
            .iter()
            .find(|op| op.name == key.name && op.input_dims == key.input_dims)
            .expect("the part's row");
        let kernel = row.kernel_samples_us.iter().find(|k| k.name == part.kernel);
        Stats::of(&kernel.expect("the part's kernel").samples_us)
    };
    for part in &comparison.kernel_parts {
        // Its statistics are its own kernel's launches, not its row's calls.
        let own = samples(part);
        for side in [&part.comparison.baseline, &part.comparison.candidate] {
            assert!(side.kernel_us.is_empty(), "{}", part.kernel);
            assert_eq!(
                (side.mean_us, side.median_us, side.min_us, side.max_us),
                (own.mean, own.median, own.min, own.max),
                "{}",
                part.kernel
            );
        }
    }
}

/// Each side's coverage of GPU time by rows is what its snapshot records,
/// else (every piece of its GPU work in a row) its whole busy time.
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
#[test]
fn each_sides_coverage_is_its_snapshots_or_its_busy_time() {
    let mut snapshot = corpus_snapshot("hta/alexnet_a100.json.gz");
    snapshot.coverage = None;
    let busy = snapshot.timeline.busy_time;
    assert!(busy > 0.0);
    let mut partial = snapshot.clone();
    let recorded = Coverage {
        busy_us: busy,
        in_rows_us: busy * 0.4,
        outside_rows_us: busy * 0.6,
        graph_launches_without_work: 3,
        dropped: vec!["dropped 7 events".to_string()],
    };
    partial.coverage = Some(recorded.clone());
    let comparison = compare_one(&snapshot, &partial);
    let whole = Coverage {
        busy_us: busy,
        in_rows_us: busy,
        ..Coverage::default()
    };
    assert_eq!(comparison.baseline_coverage, Some(whole));
    assert_eq!(comparison.candidate_coverage, recorded);
}

/// A kernel family's baseline side over a window of runs: its total is the
/// runs' median total (a run's worth, as the candidate's is), its launches
/// pooled.
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
#[test]
fn a_kernel_familys_total_over_a_window_is_one_runs() {
    let (profile, _, _) = corpus_profile(QWEN_H100);
    let window: Vec<Snapshot> = (20..23)
        .map(|seed| snapshot_of(&jittered(&profile, seed, None)))
        .collect();
    let candidate = snapshot_of(&profile);
    let comparison = compare(&window, &candidate, &CompareOptions::default());
    assert!(!comparison.kernel_families.is_empty());
    for family in &comparison.kernel_families {
        let name = &family.baseline.key.name;
        let totals: Vec<f64> = window
            .iter()
            .map(|run| {
                let samples = run.kernel_families.iter().find(|f| &f.name == name);
                samples.expect("the family in every run").total_us
            })
            .collect();
        assert_eq!(
            family.baseline.total_us,
            super::rows::median_or_zero(totals.into_iter()),
            "{name}"
        );
    }
}

/// An op with one shape, the same on both sides, is its row: no total of it
/// is compared. Ops with several shapes are.
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
#[test]
fn an_op_of_one_unchanged_shape_has_no_total() {
    let snapshot = corpus_snapshot(QWEN_H100);
    let comparison = compare_one(&snapshot, &snapshot);
    let rows = |name: &str| {
        snapshot
            .ops
            .iter()
            .filter(|op| op.name == name && op.graph.is_none())
            .count()
    };
    assert!(!comparison.op_totals.is_empty());
    assert!(snapshot.ops.iter().any(|op| rows(&op.name) == 1));
    for total in &comparison.op_totals {
        assert!(
            rows(&total.baseline.key.name) > 1,
            "{}",
            total.baseline.key.name
        );
    }
}

/// The diff is summarised when the differing kernels of both sides together
/// exceed the limit, even when one side adds them all.
#[test]
fn kernels_added_beyond_the_limit_are_summarised() {
    let names = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let baseline = names(&["a", "b"]);
    let added: Vec<String> = (0..kernels::MAX_DIFF_LINES)
        .map(|i| format!("k{i}"))
        .collect();
    let mut candidate = vec!["a".to_string()];
    candidate.extend(added);
    candidate.push("x".to_string());
    candidate.push("b".to_string());
    // One removed and 2,001 added: 2,002 lines differ.
    let diff = kernel_diff(&baseline, &candidate).expect("differs");
    assert!(
        diff.contains(
            "@@ summarised: 0 of 2 baseline kernels and 2001 of 2003 candidate kernels differ"
        ),
        "{}",
        &diff[..200]
    );
    let within = kernel_diff(&baseline, &names(&["a", "x", "b"])).expect("differs");
    assert!(!within.contains("summarised"), "{within}");
    // Exactly the limit: still diffed line by line.
    let mut at_limit = vec!["a".to_string()];
    at_limit.extend((0..kernels::MAX_DIFF_LINES).map(|i| format!("k{i}")));
    at_limit.push("b".to_string());
    let diff = kernel_diff(&baseline, &at_limit).expect("differs");
    assert!(!diff.contains("summarised"), "{}", &diff[..200]);
    assert_eq!(diff.lines().filter(|l| l.starts_with("+k")).count(), 2_000);
}

/// A row the candidate calls more often per step is compared per call: its
/// per-step times are not comparable. Called as often, it is compared per
/// step.
#[test]
fn a_row_called_more_often_per_step_is_compared_per_call() {
    let baseline = example_snapshot();
    // 3 calls over 3 steps, then 6: both leave no remainder by 3, so only
    // the calls per step (the quotient) tell the two apart.
    let index = baseline
        .ops
        .iter()
        .position(|op| {
            op.step_us.len() == 3
                && op.direct.count == 3
                && op.samples_us.len() == 3
                && op.graph.is_none()
        })
        .expect("a row of the example called once in each of three steps");
    let mut candidate = baseline.clone();
    let op = &mut candidate.ops[index];
    op.samples_us = op.samples_us.repeat(2);
    op.direct = Stats::of(&op.samples_us);
    for (_, us) in &mut op.step_us {
        *us *= 2.0;
    }
    let basis = |comparison: &Comparison| {
        comparison.ops[matched_row(comparison, &baseline.ops[index])].samples_basis
    };
    assert_eq!(
        basis(&compare_one(&baseline, &candidate)),
        SamplesBasis::Invocations
    );
    assert_eq!(
        basis(&compare_one(&baseline, &baseline)),
        SamplesBasis::Steps
    );
}

/// A row compared per step holds every kernel's time in its steps already:
/// it has no kernel parts even where both sides record its kernels'
/// launches; the same row compared per call has them.
#[test]
fn only_rows_compared_per_call_have_kernel_parts() {
    let mut snapshot = example_snapshot();
    let index = snapshot
        .ops
        .iter()
        .position(|op| op.step_us.len() >= 2 && op.graph.is_none() && op.direct.count >= 2)
        .expect("a row of the example in several steps, outside a graph");
    let op = &mut snapshot.ops[index];
    op.kernel_samples_us = ["gemm_a", "gemm_b"]
        .iter()
        .map(|name| KernelSamples {
            name: name.to_string(),
            launches: op.direct.count,
            total_us: op.direct.sum / 2.0,
            samples_us: op.samples_us.iter().map(|us| us / 2.0).collect(),
        })
        .collect();
    let parts_of_the_row = |baseline: &Snapshot, candidate: &Snapshot| {
        let comparison = compare_one(baseline, candidate);
        let row = &comparison.ops[matched_row(&comparison, &candidate.ops[index])];
        let key = &row.baseline.key;
        let parts = comparison
            .kernel_parts
            .iter()
            .filter(|p| p.comparison.baseline.key == *key)
            .count();
        (row.samples_basis, parts)
    };
    assert_eq!(
        parts_of_the_row(&snapshot, &snapshot),
        (SamplesBasis::Steps, 0)
    );
    let mut without_steps = snapshot.clone();
    without_steps.ops[index].step_us.clear();
    assert_eq!(
        parts_of_the_row(&without_steps, &without_steps),
        (SamplesBasis::Invocations, 2)
    );
    // Nor has a row in a graph (its rows name their kernels), or a row one
    // side does not record the launches of.
    let mut in_a_graph = without_steps.clone();
    in_a_graph.ops[index].graph = Some(GraphPlace {
        graph: "graph 1".to_string(),
        role: GraphRole::CapturedOp,
        launch: "cudaGraphLaunch".to_string(),
        variant: None,
    });
    assert_eq!(
        parts_of_the_row(&in_a_graph, &in_a_graph),
        (SamplesBasis::Invocations, 0)
    );
    let mut unrecorded = without_steps.clone();
    unrecorded.ops[index].kernel_samples_us.clear();
    for (baseline, candidate) in [(&unrecorded, &without_steps), (&without_steps, &unrecorded)] {
        assert_eq!(
            parts_of_the_row(baseline, candidate),
            (SamplesBasis::Invocations, 0)
        );
    }
}

/// Without module paths, a changed shape pairs with its op's one missing
/// row only when each side has exactly one unpaired row of that op; with
/// two candidates for the pairing it stays new and missing.
#[test]
fn changed_shapes_without_call_sites_pair_only_when_unambiguous() {
    let snapshot = example_snapshot();
    let index = (0..snapshot.ops.len())
        .find(|&i| {
            let op = &snapshot.ops[i];
            op.module_path.is_none()
                && snapshot.ops.iter().filter(|o| o.name == op.name).count() == 1
        })
        .expect("an op of the example with one row and no module path");
    let name = snapshot.ops[index].name.clone();
    let mut candidate = snapshot.clone();
    candidate.ops[index].input_dims.push_str(" [changed]");
    let comparison = compare_one(&snapshot, &candidate);
    assert_eq!(comparison.shape_changed.len(), 1, "{name}");
    assert_eq!(
        comparison.shape_changed[0].baseline.key,
        snapshot.ops[index].key()
    );
    assert!(comparison.new_ops.is_empty() && comparison.missing_ops.is_empty());

    let mut second = candidate.ops[index].clone();
    second.input_dims.push_str(" [again]");
    candidate.ops.push(second);
    let comparison = compare_one(&snapshot, &candidate);
    assert!(comparison.shape_changed.is_empty(), "{name}");
    assert_eq!(comparison.new_ops.len(), 2);
    assert_eq!(comparison.missing_ops.len(), 1);
}

/// What an expectation rests on: a model with a compute spec, its roofline
/// times (unless the baseline's is 0: no work); a model of bytes alone, the
/// bandwidth ratio whatever the category says; a model of no work, the
/// category's figure; and never a bandwidth a side does not know.
#[test]
fn an_expectation_rests_on_the_model_then_the_category_never_on_an_unknown_bandwidth() {
    let catalog = builtin_catalog();
    let h100 = catalog.by_name("H100 SXM").expect("h100");
    let mi300 = catalog.by_name("MI300X").expect("mi300x");
    let model = |flops: f64, bytes: f64, compute_spec: Option<ComputeSpec>| OpModel {
        family: "GEMM".to_string(),
        flops,
        bytes,
        compute_spec,
    };
    let bf16 = "('c10::BFloat16', 'c10::BFloat16')";
    let gemm = |model: OpModel| side(Category::Gemm, bf16, Some(model));
    let (peak_ratio, bandwidth_ratio) = (989.5 / 1307.4, 3.35 / 5.3);

    let bytes_only = expectation(&gemm(model(0.0, 1e9, None)), h100, mi300).expect("bandwidth");
    assert_eq!(bytes_only.basis, ExpectationBasis::Bandwidth);
    assert!((bytes_only.ratio - bandwidth_ratio).abs() < 1e-12);
    for no_work in [
        model(0.0, 0.0, None),
        model(0.0, 0.0, Some(ComputeSpec::MatrixBf16)),
    ] {
        let by_category = expectation(&gemm(no_work), h100, mi300).expect("peak");
        assert_eq!(by_category.basis, ExpectationBasis::PeakCompute);
        assert!((by_category.ratio - peak_ratio).abs() < 1e-12);
    }
    let memory_bound = model(1e3, 1e9, Some(ComputeSpec::MatrixBf16));
    let roofline = expectation(&gemm(memory_bound), h100, mi300).expect("roofline");
    assert_eq!(roofline.basis, ExpectationBasis::Roofline);
    assert!((roofline.ratio - bandwidth_ratio).abs() < 1e-12);

    let mut unknown = mi300.clone();
    unknown.hbm_tb_s = 0.0;
    for (baseline, candidate) in [(h100, &unknown), (&unknown, h100)] {
        let add = side(Category::Elementwise, "('float',)", None);
        assert_eq!(expectation(&add, baseline, candidate), None);
        assert_eq!(
            expectation(&gemm(model(0.0, 1e9, None)), baseline, candidate),
            None
        );
    }
    // The first floating-point tensor's dtype, past integers and scalars.
    assert_eq!(row_dtype("('long int', 'c10::Half')"), Some(Dtype::F16));
}

/// A snapshot of `tiny_snapshot`'s row with kernel families (name,
/// launches, total µs, launch samples) and `steps` profiler steps.
fn with_families(families: &[(&str, u64, f64, &[f64])], steps: u64) -> Snapshot {
    Snapshot {
        kernel_families: families
            .iter()
            .map(|&(name, launches, total_us, samples)| KernelSamples {
                name: name.to_string(),
                launches,
                total_us,
                samples_us: samples.to_vec(),
            })
            .collect(),
        steps: steps_of(steps),
        ..tiny_snapshot()
    }
}

/// A kernel family is compared only when every side launches it; each side
/// holds the kernel's name, its runs, the lower median of its launches,
/// the median of its runs' totals and that total on the comparison's basis
/// (per step when the step counts differ); the largest impact comes first.
#[test]
fn a_kernel_family_is_compared_over_every_sides_launches() {
    let window = [
        with_families(
            &[("gemm", 3, 30.0, &[10.0; 3]), ("norm", 2, 4.0, &[2.0; 2])],
            2,
        ),
        with_families(
            &[("gemm", 5, 50.0, &[10.0; 5]), ("norm", 2, 4.0, &[2.0; 2])],
            2,
        ),
        with_families(&[("gemm", 4, 36.0, &[9.0; 4])], 2),
    ];
    let candidate = with_families(
        &[("norm", 2, 6.0, &[3.0; 2]), ("gemm", 4, 88.0, &[22.0; 4])],
        4,
    );
    let comparison = compare(&window, &candidate, &CompareOptions::default());
    assert_eq!(comparison.impact_basis, ImpactBasis::PerStep);
    let families: Vec<&str> = comparison
        .kernel_families
        .iter()
        .map(|f| f.baseline.key.name.as_str())
        .collect();
    assert_eq!(families, ["gemm"], "norm is not in every baseline run");
    let gemm = &comparison.kernel_families[0];
    assert_eq!(gemm.baseline.runs, 3);
    assert_eq!(gemm.baseline.count, 4);
    assert_eq!(gemm.baseline.total_us, 36.0);
    assert_eq!(gemm.baseline.time_us, 36.0 / 2.0);
    assert_eq!(gemm.baseline.kernel_sequence, ["gemm"]);
    assert_eq!(gemm.candidate.key.name, "gemm");
    assert_eq!(gemm.candidate.runs, 1);
    assert_eq!(gemm.candidate.count, 4);
    assert_eq!(gemm.candidate.total_us, 88.0);
    assert_eq!(gemm.candidate.time_us, 88.0 / 4.0);
    assert_eq!(gemm.impact_us, 22.0 - 18.0);
    assert!((gemm.estimate.ratio - 22.0 / 10.0).abs() < 1e-12);

    // Two families on every side: the one that moved most first.
    let two = |norm: f64, gemm: f64| {
        with_families(&[("norm", 1, norm, &[norm]), ("gemm", 1, gemm, &[gemm])], 0)
    };
    let comparison = compare_one(&two(2.0, 10.0), &two(3.0, 10.5));
    let order: Vec<&str> = comparison
        .kernel_families
        .iter()
        .map(|f| f.baseline.key.name.as_str())
        .collect();
    assert_eq!(order, ["norm", "gemm"]);
}

/// A row with `samples` µs calls (no per-step times).
fn calls_row(samples: &[f64]) -> OpSnapshot {
    OpSnapshot {
        direct: Stats::of(samples),
        samples_us: samples.to_vec(),
        step_us: Vec::new(),
        ..tiny_snapshot().ops[0].clone()
    }
}

/// Profiled steps `1..=count` (their figures are not compared).
pub(super) fn steps_of(count: u64) -> Vec<StepSnapshot> {
    (1..=count)
        .map(|number| StepSnapshot {
            number,
            host_duration_us: 100.0,
            timeline: Breakdown::default(),
            kernel_time_us: 0.0,
        })
        .collect()
}

/// A matched row's baseline side over a window: medians over the runs (a
/// run without the row counts 0 toward its time), the extremes over every
/// run, the lower median count; both sides on the per-step basis when the
/// step counts differ; the runs' medians give the noise.
#[test]
fn a_rows_baseline_side_is_its_runs_medians_on_the_comparisons_basis() {
    let mut other = calls_row(&[1.0]);
    other.name = "aten::other".to_string();
    let run = |ops: Vec<OpSnapshot>| Snapshot {
        ops,
        steps: steps_of(2),
        ..tiny_snapshot()
    };
    let mut first = calls_row(&[10.0, 10.0]);
    first.module_path = None;
    let window = [
        run(vec![first]),
        run(vec![calls_row(&[12.0, 14.0, 16.0])]),
        run(vec![other]),
    ];
    let candidate = Snapshot {
        ops: vec![calls_row(&[20.0, 22.0])],
        steps: steps_of(4),
        ..tiny_snapshot()
    };
    let comparison = compare(&window, &candidate, &CompareOptions::default());
    assert_eq!(comparison.impact_basis, ImpactBasis::PerStep);
    let row = &comparison.ops[matched_row(&comparison, &candidate.ops[0])];
    let base = &row.baseline;
    assert_eq!((base.runs, base.count), (2, 2));
    assert_eq!((base.total_us, base.time_us), (20.0, 10.0));
    assert_eq!((base.median_us, base.mean_us), (12.0, 12.0));
    assert_eq!((base.min_us, base.max_us), (10.0, 16.0));
    assert_eq!(base.module_path, tiny_snapshot().ops[0].module_path);
    let cand = &row.candidate;
    assert_eq!((cand.runs, cand.count), (1, 2));
    assert_eq!((cand.total_us, cand.time_us), (42.0, 42.0 / 4.0));
    assert_eq!(row.impact_us, 42.0 / 4.0 - 10.0);
    assert_eq!(row.samples_basis, SamplesBasis::Invocations);
    assert_eq!(row.baseline_sample_median_us, 12.0);
    assert!((row.estimate.ratio - 21.0 / 12.0).abs() < 1e-12);
    assert!((row.noise.expect("two runs") - 2.0 / 12.0).abs() < 1e-12);
}

/// The kernels a row's calls launch are compared only when both sides
/// record them: a side without the record is no kernel change.
#[test]
fn launched_kernels_are_compared_only_when_both_sides_record_them() {
    let launching = |kernels: &[&str]| {
        let mut row = calls_row(&[5.0, 5.0]);
        row.kernel_samples_us = kernels
            .iter()
            .map(|name| KernelSamples {
                name: name.to_string(),
                launches: 1,
                total_us: 5.0,
                samples_us: vec![5.0],
            })
            .collect();
        Snapshot {
            ops: vec![row],
            ..tiny_snapshot()
        }
    };
    let diff = |baseline: &Snapshot, candidate: &Snapshot| {
        compare_one(baseline, candidate).ops[0].kernel_diff.clone()
    };
    let (gemm, both) = (
        launching(&["gemm_kernel"]),
        launching(&["gemm_kernel", "splitk"]),
    );
    let diff_text = diff(&gemm, &both).expect("a kernel only some calls launch");
    assert!(diff_text.contains("\n+splitk\n"), "{diff_text}");
    assert_eq!(diff(&gemm, &launching(&[])), None);
    assert_eq!(diff(&launching(&[]), &both), None);
}

/// `tiny_snapshot` with `steps` profiler steps and these rows.
fn stepped(steps: u64, ops: Vec<OpSnapshot>) -> Snapshot {
    Snapshot {
        ops,
        steps: steps_of(steps),
        ..tiny_snapshot()
    }
}

/// Times are compared per step only when every side profiled steps and
/// their numbers differ; each side's total is its busy time on that basis.
#[test]
fn times_are_per_step_only_when_every_side_has_steps_and_their_counts_differ() {
    let row = || tiny_snapshot().ops;
    let busy = tiny_snapshot().timeline.busy_time;
    let per_step = compare(
        &[stepped(2, row()), stepped(2, row())],
        &stepped(4, row()),
        &CompareOptions::default(),
    );
    assert_eq!(per_step.impact_basis, ImpactBasis::PerStep);
    assert!(
        per_step.notes.contains(
            &"the baseline profiled 2 step(s) and the candidate 4: times are compared per step"
                .to_string()
        )
    );
    assert_eq!(
        (per_step.baseline_total_us, per_step.candidate_total_us),
        (busy / 2.0, busy / 4.0)
    );
    for (baselines, candidate) in [
        (vec![stepped(2, row())], stepped(2, row())),
        (vec![stepped(2, row())], stepped(0, row())),
        (
            vec![stepped(2, row()), stepped(0, row())],
            stepped(4, row()),
        ),
        (vec![], stepped(4, row())),
    ] {
        let comparison = compare(&baselines, &candidate, &CompareOptions::default());
        assert_eq!(comparison.impact_basis, ImpactBasis::PerRun);
        assert!(!comparison.notes.iter().any(|n| n.contains("per step")));
        assert_eq!(comparison.candidate_total_us, busy);
    }
}

/// The notes count the rows without an interval and the rows whose kernels
/// changed, in the right number; a changed shape's impact is the
/// candidate's time less the baseline's.
#[test]
fn the_notes_count_rows_without_an_interval_and_rows_with_other_kernels() {
    let op = |name: &str, samples: &[f64], kernel: &str| OpSnapshot {
        name: name.to_string(),
        kernel_sequence: vec![kernel.to_string()],
        ..calls_row(samples)
    };
    // Rows a (one sample), b and c (two), launching these kernels.
    let launching = |[a, b, c]: [&str; 3]| {
        stepped(
            0,
            vec![
                op("a", &[5.0], a),
                op("b", &[5.0, 6.0], b),
                op("c", &[5.0, 6.0], c),
            ],
        )
    };
    let baseline = launching(["k", "k", "k"]);
    let one_diff = launching(["k", "k2", "k"]);
    let comparison = compare_one(&baseline, &one_diff);
    assert!(
        comparison.notes.contains(
            &"1 of 3 matched op rows have a single sample on a side: their ratios have no \
          confidence interval"
                .to_string()
        )
    );
    assert!(
        comparison
            .notes
            .contains(&"1 matched op row launches a different kernel sequence".to_string())
    );
    let two_diffs = launching(["k3", "k2", "k"]);
    let comparison = compare_one(&baseline, &two_diffs);
    assert!(
        comparison
            .notes
            .contains(&"2 matched op rows launch a different kernel sequence".to_string())
    );
    let unchanged = compare_one(&baseline, &baseline);
    assert!(
        !unchanged
            .notes
            .iter()
            .any(|n| n.contains("kernel sequence"))
    );
    let all_intervals = stepped(0, vec![op("b", &[5.0, 6.0], "k")]);
    let comparison = compare_one(&all_intervals, &all_intervals);
    assert!(
        !comparison
            .notes
            .iter()
            .any(|n| n.contains("confidence interval"))
    );

    let mut wider = op("b", &[5.0, 6.0], "k");
    wider.input_dims = "((4, 4),)".to_string();
    wider.direct = Stats::of(&[9.0, 9.0]);
    let comparison = compare_one(&all_intervals, &stepped(0, vec![wider]));
    let change = &comparison.shape_changed[0];
    assert_eq!(change.impact_us, 18.0 - 11.0);
}

/// The row `tiny_snapshot` calls twice, launching `gemm_a` (its launches
/// and total given) and `gemm_b` (twice, 2 µs).
fn launching_two_kernels(launches: u64, total_us: f64) -> Snapshot {
    let mut row = calls_row(&[5.0, 5.0]);
    let kernel = |name: &str, launches: u64, total_us: f64| KernelSamples {
        name: name.to_string(),
        launches,
        total_us,
        samples_us: vec![total_us / launches as f64; launches as usize],
    };
    row.kernel_samples_us = vec![
        kernel("gemm_a", launches, total_us),
        kernel("gemm_b", 2, 2.0),
    ];
    Snapshot {
        ops: vec![row],
        ..tiny_snapshot()
    }
}

/// A kernel part's sides over a window: the lower median of its launches,
/// the median of its totals, its kernel as the sequence; no parts when a
/// run lacks the row or does not record its kernels.
#[test]
fn a_kernel_parts_sides_are_its_kernels_over_the_runs() {
    let window = [
        launching_two_kernels(2, 10.0),
        launching_two_kernels(6, 30.0),
        launching_two_kernels(4, 20.0),
    ];
    let candidate = launching_two_kernels(4, 24.0);
    let comparison = compare(&window, &candidate, &CompareOptions::default());
    let parts: Vec<&str> = comparison
        .kernel_parts
        .iter()
        .map(|p| p.kernel.as_str())
        .collect();
    assert_eq!(parts, ["gemm_a", "gemm_b"]);
    let gemm_a = &comparison.kernel_parts[0].comparison;
    assert_eq!((gemm_a.baseline.count, gemm_a.baseline.total_us), (4, 20.0));
    assert_eq!(
        (gemm_a.candidate.count, gemm_a.candidate.total_us),
        (4, 24.0)
    );
    assert_eq!(gemm_a.baseline.kernel_sequence, ["gemm_a"]);
    assert_eq!(gemm_a.candidate.kernel_sequence, ["gemm_a"]);

    // Launch by launch with one baseline run of as many launches, else
    // each side resampled on its own.
    let resampling = |window: &[Snapshot], candidate: &Snapshot| {
        let comparison = compare(window, candidate, &CompareOptions::default());
        comparison.kernel_parts[0].comparison.estimate.resampling
    };
    let (two, four) = (
        launching_two_kernels(2, 10.0),
        launching_two_kernels(4, 20.0),
    );
    assert_eq!(
        resampling(std::slice::from_ref(&four), &candidate),
        Resampling::Paired
    );
    assert_eq!(
        resampling(std::slice::from_ref(&two), &candidate),
        Resampling::Independent
    );
    assert_eq!(
        resampling(&[two.clone(), two], &candidate),
        Resampling::Independent
    );
    assert_eq!(resampling(&window, &candidate), Resampling::Independent);

    let mut lacking = window.clone();
    lacking[2].ops.clear();
    let mut unrecorded = window.clone();
    unrecorded[1].ops[0].kernel_samples_us.clear();
    for window in [lacking, unrecorded] {
        let comparison = compare(&window, &candidate, &CompareOptions::default());
        assert!(comparison.kernel_parts.is_empty());
    }
}

/// A snapshot whose steps' busy times are `steps` and whose whole-trace
/// busy time is `busy` (the steps' and the time between them).
fn busy_steps(steps: &[f64], busy: f64) -> Snapshot {
    let breakdown = |busy_time: f64| Breakdown {
        busy_time,
        ..Breakdown::default()
    };
    Snapshot {
        timeline: breakdown(busy),
        steps: steps
            .iter()
            .zip(1..)
            .map(|(&busy, number)| StepSnapshot {
                number,
                host_duration_us: 100.0,
                timeline: breakdown(busy),
                kernel_time_us: 0.0,
            })
            .collect(),
        ..tiny_snapshot()
    }
}

fn busy_row(comparison: &Comparison) -> &TimelineComparison {
    let row = comparison.timeline.iter().find(|m| m.metric == "busy_time");
    row.expect("a busy_time row")
}

/// With steps on both sides a timeline metric is its steps' sum on the
/// comparison's basis, with an interval over the steps (paired with one
/// baseline run of as many steps) and their spread; without, the trace's
/// value; a baseline of 0 has no Δ.
#[test]
fn a_timeline_metric_is_its_steps_sum_with_their_spread_and_interval() {
    let baseline = busy_steps(&[4.0, 6.0], 12.0);
    let comparison = compare_one(&baseline, &busy_steps(&[3.0; 4], 15.0));
    let busy = busy_row(&comparison);
    assert_eq!(
        (busy.baseline_us, busy.candidate_us),
        (10.0 / 2.0, 12.0 / 4.0)
    );
    assert!((busy.delta_percent.expect("a baseline") - -40.0).abs() < 1e-9);
    assert!((busy.step_spread.expect("steps") - 0.2).abs() < 1e-12);
    let estimate = busy.estimate.as_ref().expect("steps on both sides");
    assert_eq!((estimate.n_baseline, estimate.n_candidate), (2, 4));
    assert_eq!(busy.noise, None);
    let idle = comparison.timeline.iter().find(|m| m.metric == "idle_time");
    assert_eq!(idle.expect("an idle_time row").delta_percent, None);

    let same_steps = compare_one(&baseline, &busy_steps(&[5.0, 7.0], 14.0));
    let resampling = |c: &Comparison| busy_row(c).estimate.as_ref().map(|e| e.resampling);
    assert_eq!(resampling(&same_steps), Some(Resampling::Paired));
    let window = compare(
        &[baseline.clone(), busy_steps(&[4.0, 6.0], 13.0)],
        &busy_steps(&[5.0, 7.0], 14.0),
        &CompareOptions::default(),
    );
    assert_eq!(resampling(&window), Some(Resampling::Independent));
    assert_eq!(busy_row(&window).noise, Some(0.0));

    // One candidate step: the traces' values per step, no interval.
    let one_step = compare_one(&baseline, &busy_steps(&[9.0], 15.0));
    let busy = busy_row(&one_step);
    assert_eq!((busy.baseline_us, busy.candidate_us), (12.0 / 2.0, 15.0));
    assert_eq!((busy.estimate.is_some(), busy.step_spread), (false, None));
    // A baseline without steps in a window: the traces' values.
    let mixed = compare(
        &[baseline.clone(), busy_steps(&[], 12.0)],
        &busy_steps(&[5.0, 7.0], 14.0),
        &CompareOptions::default(),
    );
    assert_eq!(busy_row(&mixed).candidate_us, 14.0);
}

/// A matched row's interval is paired call by call with one baseline run of
/// as many calls, each side resampled on its own over a window; and it is
/// seeded by the row's whole key, its graph included, so two rows of equal
/// calls in two graphs draw their own replicates.
#[test]
fn a_rows_interval_is_paired_with_one_run_and_seeded_by_its_whole_key() {
    let snapshot = |ops: Vec<OpSnapshot>| Snapshot {
        ops,
        ..tiny_snapshot()
    };
    let calls = [10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0];
    let slower = [11.0, 13.5, 12.0, 15.0, 14.5, 18.0, 16.0, 19.5];
    let baseline = snapshot(vec![calls_row(&calls)]);
    let candidate = snapshot(vec![calls_row(&slower)]);
    let resampling = |comparison: &Comparison| comparison.ops[0].estimate.resampling;
    assert_eq!(
        resampling(&compare_one(&baseline, &candidate)),
        Resampling::Paired
    );
    let window = compare(
        &[baseline.clone(), baseline.clone()],
        &candidate,
        &CompareOptions::default(),
    );
    assert_eq!(resampling(&window), Resampling::Independent);

    let in_graph = |row: OpSnapshot, graph: &str| OpSnapshot {
        graph: Some(GraphPlace {
            graph: graph.to_string(),
            role: GraphRole::CapturedOp,
            launch: "cudaGraphLaunch".to_string(),
            variant: None,
        }),
        ..row
    };
    let two_graphs = |samples: &[f64]| {
        snapshot(vec![
            in_graph(calls_row(samples), "graph 1"),
            in_graph(calls_row(samples), "graph 2"),
        ])
    };
    let comparison = compare_one(&two_graphs(&calls), &two_graphs(&slower));
    assert_eq!(comparison.ops.len(), 2);
    assert_ne!(
        comparison.ops[0].estimate.replicates,
        comparison.ops[1].estimate.replicates
    );
}

/// A summary lists at most forty changed names, most changed first, and
/// counts the rest.
#[test]
fn a_summary_lists_forty_names_and_counts_the_rest() {
    let summary = |names: usize| {
        let baseline = vec!["a".to_string(), "b".to_string()];
        let mut candidate = vec!["a".to_string()];
        for i in 0..names {
            let launches = 2 * kernels::MAX_DIFF_LINES / names + i;
            candidate.extend(std::iter::repeat_n(format!("k{i:02}"), launches));
        }
        candidate.push("b".to_string());
        kernel_diff(&baseline, &candidate).expect("differs")
    };
    let forty = summary(40);
    assert!(forty.contains("summarised"), "{}", &forty[..200]);
    assert_eq!(forty.lines().filter(|l| l.starts_with("+k")).count(), 40);
    assert!(!forty.contains("more names"), "{forty}");
    let forty_one = summary(41);
    let listed: Vec<&str> = forty_one.lines().filter(|l| l.starts_with("+k")).collect();
    assert_eq!(listed.len(), 40);
    assert!(listed[0].starts_with("+k40 ×"), "{forty_one}");
    assert!(forty_one.ends_with(" … 1 more names\n"), "{forty_one}");
}

/// Across platforms a row with a settled learned ratio expects it, and a
/// note counts those rows; a ratio still learning leaves the hardware's,
/// with the learning note; on one platform nothing is expected, however
/// the policy names the hardware.
#[test]
fn learned_ratios_are_expected_across_platforms_once_settled() {
    let catalog = builtin_catalog();
    let h100 = catalog.by_name("H100 SXM").expect("h100").clone();
    let mi300 = catalog.by_name("MI300X").expect("mi300x").clone();
    let snapshot = tiny_snapshot();
    let learned_over = |runs: usize| LearnedRatios {
        rows: std::collections::BTreeMap::from([(
            snapshot.ops[0].key(),
            LearnedRatio {
                ratio: 1.3,
                spread: 0.02,
                runs,
            },
        )]),
        ..LearnedRatios::default()
    };
    let options = |candidate: &Hardware, runs: usize| CompareOptions {
        baseline_hardware: Some(h100.clone()),
        candidate_hardware: Some(candidate.clone()),
        learned: Some(learned_over(runs)),
        ..CompareOptions::default()
    };
    let run =
        |options: &CompareOptions| compare(std::slice::from_ref(&snapshot), &snapshot, options);

    let settled = run(&options(&mi300, 4));
    assert!(settled.cross_platform);
    let expected = settled.ops[0].expected.expect("a learned ratio");
    assert_eq!(expected.ratio, 1.3);
    assert_eq!(
        expected.basis,
        ExpectationBasis::History {
            runs: 4,
            spread: 0.02
        }
    );
    assert!(settled.notes.iter().any(|n| n.starts_with(
        "expected ratios learned from up to 4 earlier paired run(s) for 1 of 1 matched op rows"
    )));

    let learning = run(&options(&mi300, 2));
    let expected = learning.ops[0].expected.expect("the hardware's ratio");
    assert_eq!(expected.basis, ExpectationBasis::Roofline);
    assert!(learning.notes.contains(&learning_note(2)));
    assert!(
        !learning
            .notes
            .iter()
            .any(|n| n.starts_with("expected ratios learned"))
    );

    let same = run(&options(&h100, 4));
    assert!(!same.cross_platform);
    assert_eq!(same.ops[0].expected, None);
    assert!(!same.notes.iter().any(|n| n.contains("learn")));
}

/// A row called as often per step on both sides is compared per step, even
/// when the sides profiled other numbers of steps.
#[test]
fn a_row_called_as_often_per_step_is_compared_per_step_over_other_step_counts() {
    let row = |steps: &[(u64, f64)], calls_per_step: usize| {
        let samples = vec![2.0; steps.len() * calls_per_step];
        OpSnapshot {
            step_us: steps.to_vec(),
            ..calls_row(&samples)
        }
    };
    let snapshot = |op: OpSnapshot, steps: u64| Snapshot {
        ops: vec![op],
        steps: steps_of(steps),
        ..tiny_snapshot()
    };
    let baseline = snapshot(row(&[(1, 4.0), (2, 4.0)], 2), 2);
    let candidate = snapshot(row(&[(1, 4.0), (2, 4.0), (3, 4.0), (4, 4.0)], 2), 4);
    let comparison = compare_one(&baseline, &candidate);
    assert_eq!(comparison.ops[0].samples_basis, SamplesBasis::Steps);
    let twice_as_often = snapshot(row(&[(1, 8.0), (2, 8.0), (3, 8.0), (4, 8.0)], 4), 4);
    let comparison = compare_one(&baseline, &twice_as_often);
    assert_eq!(comparison.ops[0].samples_basis, SamplesBasis::Invocations);
}
