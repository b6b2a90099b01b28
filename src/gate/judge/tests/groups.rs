//! Findings grouped into the lines a reader sees (`groups.rs`): which
//! findings make one line, the figures the line shows (shapes, Δ and its
//! range, impact, calls) and the words around them (tags telling twin rows
//! apart, the environments, the summary and the advice from the evidence).

use std::collections::HashMap;

use super::*;
use crate::gate::compare::OpComparison;
use crate::gate::judge::groups::group_findings;
use crate::gate::judge::summary::op_key_text;
use crate::gate::verdict::{DRIFT_RULE, EnvironmentSummary, FindingGroup, OpRef, WorkloadSummary};

pub(super) const WORKLOAD: &str = "w";

/// One matched row of `name` with `dims`: `calls` calls a side taking
/// `us` µs in all (its time, its median a call's mean), no kernel diff.
pub(super) fn row(name: &str, dims: &str, calls: (u64, u64), us: (f64, f64)) -> OpComparison {
    let baseline = example_snapshot();
    let mut row = compared_with_itself(&baseline).ops[0].clone();
    for (side, count, total) in [
        (&mut row.baseline, calls.0, us.0),
        (&mut row.candidate, calls.1, us.1),
    ] {
        side.key.name = name.to_string();
        side.key.input_dims = dims.to_string();
        side.key.input_type = String::new();
        side.key.input_strides = String::new();
        side.key.graph = String::new();
        side.module_path = None;
        side.graph = None;
        side.count = count;
        side.total_us = total;
        side.time_us = total;
        side.median_us = if count > 0 { total / count as f64 } else { 0.0 };
    }
    row.kernel_diff = None;
    row
}

/// A finding of `kind` and `severity` about `row`: its time per step on
/// each side, its Δ from them, `impact` % of GPU time.
pub(super) fn about(
    row: &OpComparison,
    kind: FindingKind,
    severity: Severity,
    impact: f64,
) -> Finding {
    let mut f = Finding::new("regression", severity, kind, WORKLOAD, "its words".into());
    f.op = Some(row.candidate.op_ref());
    f.metric = "GPU time per step".to_string();
    f.unit = "µs".to_string();
    f.baseline = Some(row.baseline.total_us);
    f.candidate = Some(row.candidate.total_us);
    f.delta_percent = Some((row.candidate.total_us / row.baseline.total_us - 1.0) * 100.0);
    f.impact_percent = Some(impact);
    f.statistics.per = Some(Per::Step);
    f
}

/// A slower row's failing finding.
pub(super) fn slower(row: &OpComparison) -> Finding {
    about(row, FindingKind::Regression, Severity::Fail, 1.0)
}

/// A workload's environments: one GPU, CUDA 12.4 and PyTorch 2.6 on both
/// sides unless `change` says otherwise.
pub(super) fn environments(
    change: impl FnOnce(&mut EnvironmentSummary, &mut EnvironmentSummary),
) -> WorkloadSummary {
    let side = EnvironmentSummary {
        gpus: "1 × H100".to_string(),
        hardware: Some("H100".to_string()),
        runtime: Some("CUDA 12.4".to_string()),
        pytorch: Some("2.6.0".to_string()),
        distributed: None,
        runs: 1,
    };
    let (mut baseline, mut candidate) = (side.clone(), side);
    change(&mut baseline, &mut candidate);
    WorkloadSummary {
        name: WORKLOAD.to_string(),
        baseline,
        candidate,
        cross_platform: false,
        timeline: Vec::new(),
        matched: 0,
        unchanged: 0,
        notes: Vec::new(),
    }
}

/// `findings` grouped as the judge groups them, `rows` the workload's
/// matched rows (each keyed by both its sides, as the judge keys them).
pub(super) fn grouped(
    findings: &[Finding],
    rows: &[OpComparison],
    summary: WorkloadSummary,
) -> Vec<FindingGroup> {
    let mut keyed: HashMap<(String, String), &OpComparison> = HashMap::new();
    for row in rows {
        for side in [&row.baseline, &row.candidate] {
            keyed
                .entry((WORKLOAD.to_string(), op_key_text(&side.op_ref())))
                .or_insert(row);
        }
    }
    group_findings(findings, &keyed, std::slice::from_ref(&summary))
}

/// The one group of `findings` about `rows`, with unchanged environments.
pub(super) fn one_group(findings: &[Finding], rows: &[OpComparison]) -> FindingGroup {
    let mut groups = grouped(findings, rows, environments(|_, _| ()));
    assert_eq!(groups.len(), 1, "{groups:#?}");
    groups.remove(0)
}

/// A finding about no op, of `kind`, under `rule` and `metric`.
pub(super) fn about_no_op(kind: FindingKind, rule: &str, metric: &str) -> Finding {
    let mut f = Finding::new(rule, Severity::Warn, kind, WORKLOAD, "the words".into());
    f.metric = metric.to_string();
    f
}

/// One line per workload, op name, kind and drift-or-not, in the order of
/// each line's first finding; every finding about no op is a line of its
/// own, labelled by its workload, its policy entry or its metric; the
/// line's severity is its most severe finding's.
#[test]
fn findings_make_one_line_per_workload_op_and_kind_in_order() {
    let mm_a = row("aten::mm", "[[8, 8]]", (1, 1), (1.0, 2.0));
    let mm_b = row("aten::mm", "[[16, 16]]", (1, 1), (1.0, 2.0));
    let add = row("aten::add", "[[8]]", (1, 1), (1.0, 2.0));
    let mut other_workload = slower(&mm_a);
    other_workload.workload = "w2".to_string();
    let mut drift = slower(&mm_a);
    drift.rule = DRIFT_RULE.to_string();
    let findings = vec![
        about(&mm_a, FindingKind::Regression, Severity::Warn, 1.0),
        slower(&add),
        slower(&mm_b),
        about(&mm_a, FindingKind::Improvement, Severity::Info, -1.0),
        other_workload,
        drift,
        about_no_op(FindingKind::NothingToCompare, "integrity", "matched_share"),
        about_no_op(FindingKind::Policy, "budgets[1]", "budget"),
        about_no_op(FindingKind::Timeline, "timeline", "idle_percent"),
        about_no_op(FindingKind::Timeline, "timeline", "idle_percent"),
    ];
    let groups = grouped(&findings, &[mm_a, mm_b, add], environments(|_, _| ()));
    let lines: Vec<(&str, &str, Vec<usize>, Severity)> = groups
        .iter()
        .map(|g| {
            (
                g.workload.as_str(),
                g.label.as_str(),
                g.findings.clone(),
                g.severity,
            )
        })
        .collect();
    use Severity::{Fail, Info, Warn};
    assert_eq!(
        lines,
        [
            ("w", "aten::mm", vec![0, 2], Fail),
            ("w", "aten::add", vec![1], Fail),
            ("w", "aten::mm", vec![3], Info),
            ("w2", "aten::mm", vec![4], Fail),
            ("w", "aten::mm", vec![5], Fail),
            ("w", "workload w", vec![6], Warn),
            ("w", "policy budgets[1]", vec![7], Warn),
            ("w", "idle percent", vec![8], Warn),
            ("w", "idle percent", vec![9], Warn),
        ]
    );
    let kinds: Vec<FindingKind> = groups.iter().map(|g| g.kind).collect();
    assert_eq!(kinds[2], FindingKind::Improvement);
    assert_eq!(kinds[5], FindingKind::NothingToCompare);
}

/// A line counts its distinct rows; two findings about one row (per call
/// and per launch) are one shape and say so; a finding about an op's rows
/// summed (`46 shapes`) stands for that many, and is no shape itself.
#[test]
fn a_line_counts_its_distinct_rows_or_the_ops_summed_shapes() {
    let a = row("aten::mm", "[[8, 8]]", (1, 1), (100.0, 150.0));
    let b = row("aten::mm", "[[16, 16]]", (1, 1), (300.0, 330.0));
    let c = row("aten::mm", "[[32, 32]]", (1, 1), (300.0, 330.0));
    let mut per_launch = slower(&a);
    per_launch.metric = "median kernel time per launch".to_string();
    let twice = one_group(&[slower(&a), per_launch], std::slice::from_ref(&a));
    assert_eq!(twice.shapes, 1);
    assert!(
        twice
            .summary
            .starts_with("aten::mm — 1 shape, 2 findings, "),
        "{}",
        twice.summary
    );

    let three = one_group(
        &[slower(&a), slower(&b), slower(&c)],
        &[a.clone(), b.clone(), c],
    );
    assert_eq!(three.shapes, 3);
    assert!(
        three.summary.starts_with("aten::mm — 3 shapes, +"),
        "{}",
        three.summary
    );

    // The op's 46 shapes summed, beside one of its rows judged alone: the
    // line's figures are the summed finding's.
    let mut summed = slower(&a);
    let op = summed.op.as_mut().expect("an op");
    op.input_dims = "46 shapes".to_string();
    summed.delta_percent = Some(12.5);
    summed.statistics.per = Some(Per::Run);
    let with_summed = one_group(&[slower(&b), summed.clone()], std::slice::from_ref(&b));
    assert_eq!(with_summed.shapes, 46);
    assert_eq!(with_summed.delta_percent, Some(12.5));
    assert_eq!(with_summed.delta_per, Some(Per::Run));
    // Its pseudo-dims are no shape: with one real row beside, still 46,
    // and two summed findings of one op count its shapes once.
    let mut few = summed.clone();
    few.op.as_mut().expect("an op").input_dims = "1 shape".to_string();
    assert_eq!(one_group(&[few.clone(), slower(&b)], &[]).shapes, 1);
    assert_eq!(one_group(&[summed.clone(), summed.clone()], &[]).shapes, 46);

    // Dims that read `N shapes` but carry a type or strides are one shape.
    for field in ["type", "strides"] {
        let mut op = summed.op.clone().expect("an op");
        match field {
            "type" => op.input_type = "float".to_string(),
            _ => op.input_strides = "((1,),)".to_string(),
        }
        assert_eq!(summed_shapes(&op), None, "{field}");
        let mut one = summed.clone();
        one.op = Some(op);
        assert_eq!(one_group(&[one], &[]).shapes, 1, "{field}");
    }
    let op = summed.op.expect("an op");
    assert_eq!(summed_shapes(&op), Some(46));
    for (dims, shapes) in [
        ("1 shape", Some(1)),
        ("7 shape", Some(7)),
        ("x shapes", None),
        ("46", None),
    ] {
        let op = OpRef {
            input_dims: dims.to_string(),
            ..op.clone()
        };
        assert_eq!(summed_shapes(&op), shapes, "{dims}");
    }
}

/// The line's change is the ratio of its rows' summed figures when they
/// share a metric and a unit, else the most important finding's own; the
/// rows' range of changes (finite ones) is shown when it is at least half
/// a point wide; its impact is the rows' summed.
#[test]
fn a_lines_change_is_its_rows_summed_and_its_range_is_shown_when_it_is_wide() {
    let a = row("aten::mm", "[[8, 8]]", (1, 1), (100.0, 150.0));
    let b = row("aten::mm", "[[16, 16]]", (1, 1), (300.0, 350.0));
    let rows = [a.clone(), b.clone()];
    let mut first = slower(&a);
    first.impact_percent = Some(1.5);
    let mut second = slower(&b);
    second.impact_percent = Some(2.0);
    let line = one_group(&[first.clone(), second.clone()], &rows);
    // 500 µs against 400: +25%, rows +16.7% and +50%.
    let b_delta = second.delta_percent.expect("a Δ");
    assert_eq!(line.delta_percent, Some(25.0));
    assert_eq!(line.delta_per, Some(Per::Step));
    assert_eq!(line.delta_range_percent, Some((b_delta, 50.0)));
    assert_eq!(line.impact_percent, Some(3.5));
    assert_eq!(
        line.summary,
        "aten::mm — 2 shapes, +25.0% per step (rows +17…+50%), same kernels, +3.5% of GPU time"
    );

    // Another metric, or a figure missing: the first finding's own change,
    // per what its metric says.
    let mut per_call = second.clone();
    per_call.metric = "median kernel time per call".to_string();
    per_call.statistics.per = None;
    let mut no_figure = second.clone();
    no_figure.candidate = None;
    let mut other_unit = second.clone();
    other_unit.unit = "%".to_string();
    for other in [per_call.clone(), no_figure, other_unit] {
        let line = one_group(&[first.clone(), other], &rows);
        assert_eq!(line.delta_percent, first.delta_percent);
    }
    let line = one_group(&[per_call.clone(), first.clone()], &rows);
    assert_eq!(line.delta_per, Some(Per::Call));
    assert_eq!(line.delta_percent, Some(b_delta));

    // One finding: its own change, no range.
    let alone = one_group(std::slice::from_ref(&first), &rows[..1]);
    assert_eq!(
        alone.summary,
        "aten::mm — 1 shape, +50.0% per step, same kernels, +1.5% of GPU time"
    );

    // Rows half a point apart show their range; closer, only the change.
    for (step, shown) in [(0.5, true), (0.25, false)] {
        let (mut x, mut y) = (first.clone(), second.clone());
        x.delta_percent = Some(20.0);
        y.delta_percent = Some(20.0 + step);
        let line = one_group(&[x, y], &rows);
        assert_eq!(
            line.summary.contains("(rows +20…"),
            shown,
            "{}",
            line.summary
        );
    }

    // A change that is not finite is in no range and no sum; without a
    // finite change on the first finding, its range speaks.
    let mut endless = first.clone();
    endless.delta_percent = Some(f64::INFINITY);
    endless.impact_percent = Some(f64::NAN);
    endless.metric = "another metric".to_string();
    let line = one_group(&[endless.clone(), second.clone()], &rows);
    assert_eq!(line.delta_percent, None);
    assert_eq!(line.delta_range_percent, Some((b_delta, b_delta)));
    assert_eq!(line.impact_percent, Some(2.0));
    assert!(
        line.summary.contains(" — 2 shapes, +16.7%, same kernels"),
        "{}",
        line.summary
    );
    let mut third = second.clone();
    third.delta_percent = Some(30.4);
    let line = one_group(&[endless.clone(), second.clone(), third], &rows);
    assert!(line.summary.contains(", +17…+30%, "), "{}", line.summary);
    let mut no_change = endless;
    no_change.delta_percent = None;
    no_change.impact_percent = None;
    let line = one_group(&[no_change], &rows[..1]);
    assert_eq!(
        (
            line.delta_percent,
            line.delta_range_percent,
            line.impact_percent
        ),
        (None, None, None)
    );
}

/// The calls, the change per call and whether the kernels changed come
/// from the line's matched rows, each counted once; a line with no
/// matched row has none of them.
#[test]
fn calls_per_call_change_and_kernels_come_from_the_lines_rows_once_each() {
    let a = row("aten::mm", "[[8, 8]]", (10, 20), (100.0, 150.0));
    let b = row("aten::mm", "[[16, 16]]", (5, 5), (300.0, 330.0));
    let mut per_launch = slower(&a);
    per_launch.metric = "median kernel time per launch".to_string();
    let line = one_group(
        &[slower(&a), per_launch, slower(&b)],
        &[a.clone(), b.clone()],
    );
    assert_eq!(line.calls, Some((15, 25)));
    // 400 µs over 15 calls against 480 over 25.
    let expected = (480.0 / 25.0) / (400.0 / 15.0) * 100.0 - 100.0;
    let per_call = line.per_call_delta_percent.expect("a change per call");
    assert!(
        (per_call - expected).abs() < 1e-9,
        "{per_call} against {expected}"
    );
    assert_eq!(line.same_kernels, Some(true));

    let mut changed = b.clone();
    changed.kernel_diff = Some("-a\n+b".to_string());
    let line = one_group(&[slower(&a), slower(&changed)], &[a.clone(), changed]);
    assert_eq!(line.same_kernels, Some(false));
    assert!(
        line.summary.contains(", kernels changed, "),
        "{}",
        line.summary
    );

    let unmatched = one_group(&[slower(&a)], &[]);
    assert_eq!((unmatched.calls, unmatched.same_kernels), (None, None));
    assert_eq!(unmatched.per_call_delta_percent, None);

    // No calls on a side, or no time on the baseline: no change per call.
    for (calls, us) in [
        ((0, 20), (100.0, 150.0)),
        ((10, 0), (100.0, 150.0)),
        ((10, 10), (0.0, 150.0)),
    ] {
        let none = row("aten::mm", "[[8, 8]]", calls, us);
        let line = one_group(&[slower(&none)], std::slice::from_ref(&none));
        assert_eq!(line.calls, Some(calls));
        assert_eq!(line.per_call_delta_percent, None, "{calls:?}");
    }
}

/// A failing line is inconclusive when every failing finding in it is;
/// it then holds back its paths and says what would settle it. A
/// confirmed line keeps the first path any finding gives.
#[test]
fn an_inconclusive_line_holds_back_its_paths_and_says_what_would_settle_it() {
    let a = row("aten::mm", "[[8, 8]]", (1, 1), (100.0, 150.0));
    let b = row("aten::mm", "[[16, 16]]", (1, 1), (300.0, 330.0));
    let rows = [a.clone(), b.clone()];
    let unsure = |r: &OpComparison, severity: Severity| {
        let mut f = about(r, FindingKind::Regression, severity, 1.0);
        f.statistics.inconclusive = true;
        f
    };
    let mut with_paths = slower(&b);
    with_paths.path_a = Some("fuse it".to_string());
    with_paths.path_b = Some("tune it".to_string());

    let mut unsure_with_paths = with_paths.clone();
    unsure_with_paths.statistics.inconclusive = true;
    let warned = about(&b, FindingKind::Regression, Severity::Warn, 1.0);
    let line = one_group(
        &[
            unsure(&a, Severity::Fail),
            unsure_with_paths.clone(),
            warned,
        ],
        &rows,
    );
    assert!(line.inconclusive && line.severity == Severity::Fail);
    assert_eq!(
        (line.path_a.as_deref(), line.path_b.as_deref()),
        (None, None)
    );
    let advice = line.advice.expect("advice");
    assert!(advice.starts_with("Measured once a side"), "{advice}");

    let line = one_group(&[unsure(&a, Severity::Fail), with_paths.clone()], &rows);
    assert!(!line.inconclusive);
    assert_eq!(line.path_a.as_deref(), Some("fuse it"));
    assert_eq!(line.path_b.as_deref(), Some("tune it"));
    assert!(!line.advice.expect("advice").starts_with("Measured once"));

    // Only a failing line is inconclusive.
    let line = one_group(
        &[unsure(&a, Severity::Warn), unsure(&b, Severity::Warn)],
        &rows,
    );
    assert!(!line.inconclusive);
    assert_eq!(line.path_a, None);
}

/// Twin rows (same dims) are told apart by their layout letters when those
/// differ, else their strides; by their input types; else their module
/// path. A row without a twin has no tag.
#[test]
fn twin_rows_are_tagged_by_layout_strides_type_or_module() {
    let base = slower(&row("aten::mm", "[[8, 8], [8, 8]]", (1, 1), (1.0, 2.0)));
    let with = |strides: &str, dtype: &str, module: Option<&str>| {
        let mut f = base.clone();
        let op = f.op.as_mut().expect("an op");
        op.input_strides = strides.to_string();
        op.input_type = dtype.to_string();
        op.module_path = module.map(str::to_string);
        f
    };
    let tags = |findings: &[Finding]| one_group(findings, &[]).tags;
    let (nn, tn) = ("((8, 1), (8, 1))", "((1, 8), (8, 1))");
    assert_eq!(
        tags(&[with(nn, "", None), with(tn, "", None)]),
        [Some("NN".to_string()), Some("TN".to_string())]
    );
    // Both NN: the strides themselves.
    let wide = "((16, 1), (16, 1))";
    assert_eq!(
        tags(&[with(nn, "", None), with(wide, "", None)]),
        [Some(nn.to_string()), Some(wide.to_string())]
    );
    // A layout without letters against NN: NN's letters, the other's strides.
    let batched = "((64, 8, 1), (64, 8, 1))";
    assert_eq!(
        tags(&[with(nn, "", None), with(batched, "", None)]),
        [Some("NN".to_string()), Some(batched.to_string())]
    );
    assert_eq!(
        tags(&[with(nn, "float", None), with(nn, "c10::BFloat16", None)]),
        [Some("float".to_string()), Some("c10::BFloat16".to_string())]
    );
    assert_eq!(
        tags(&[
            with(nn, "float", Some("enc.0")),
            with(nn, "float", Some("dec.1"))
        ]),
        [Some("enc.0".to_string()), Some("dec.1".to_string())]
    );
    let mut other_dims = with(nn, "float", Some("dec.1"));
    other_dims.op.as_mut().expect("an op").input_dims = "[[4, 4]]".to_string();
    assert_eq!(
        tags(&[with(nn, "float", Some("enc.0")), other_dims]),
        [None, None]
    );
}

/// What the environments say beside a line: each recorded field that
/// differs (an empty or missing one "not recorded"); across platforms the
/// GPUs, hardware and runtime differ on purpose and only PyTorch is
/// named; across vendors, each side's stack with the library that picks
/// the op's kernels.
#[test]
fn a_line_names_what_differs_between_the_recorded_environments() {
    let finding = |category: &str| {
        let mut f = slower(&row("aten::mm", "[[8, 8]]", (1, 1), (1.0, 2.0)));
        f.op.as_mut().expect("an op").category = category.to_string();
        f
    };
    let changes = |summary: WorkloadSummary, category: &str| {
        grouped(&[finding(category)], &[], summary)
            .remove(0)
            .environment_changes
    };
    let same_platform = environments(|b, c| {
        c.gpus = "1 × H200".to_string();
        b.hardware = None;
        c.hardware = Some("H200".to_string());
        c.pytorch = Some("2.7.0".to_string());
    });
    assert_eq!(
        changes(same_platform.clone(), "GEMM"),
        "GPUs 1 × H100 → 1 × H200; hardware not recorded → H200; PyTorch 2.6.0 → 2.7.0"
    );
    let mut across = same_platform;
    across.cross_platform = true;
    across.candidate.runtime = Some("CUDA 12.8".to_string());
    assert_eq!(changes(across.clone(), "GEMM"), "PyTorch 2.6.0 → 2.7.0");
    across.candidate.pytorch = Some(String::new());
    assert_eq!(
        changes(across.clone(), "GEMM"),
        "PyTorch 2.6.0 → not recorded"
    );
    assert_eq!(changes(environments(|_, _| ()), "GEMM"), "");

    across.candidate.runtime = Some("ROCm 6.2".to_string());
    for (category, cuda, rocm) in [
        ("NORM_fwd", " with cuDNN", " with MIOpen"),
        ("NORM_bwd", " with cuDNN", " with MIOpen"),
        ("CONV_bwd", " with cuDNN", " with MIOpen"),
        ("GEMM", " with cuBLAS", " with hipBLASLt"),
        ("elementwise", "", ""),
    ] {
        assert_eq!(
            changes(across.clone(), category),
            format!("vendor stack CUDA 12.4{cuda} → ROCm 6.2{rocm}"),
            "{category}"
        );
    }
    // Runtimes are named in any case; one that names no vendor is no stack.
    across.baseline.runtime = Some("cuda 12.4".to_string());
    across.candidate.runtime = Some("hip 6.4".to_string());
    assert_eq!(
        changes(across.clone(), "GEMM"),
        "vendor stack cuda 12.4 with cuBLAS → hip 6.4 with hipBLASLt"
    );
    across.candidate.runtime = Some("Vulkan 1.3".to_string());
    assert_eq!(
        changes(across.clone(), "GEMM"),
        "PyTorch 2.6.0 → not recorded"
    );
    // Across vendors, a finding about no op gets the runtimes alone.
    across.candidate.runtime = Some("HIP 6.4".to_string());
    let mut no_op = grouped(
        &[about_no_op(
            FindingKind::Timeline,
            "timeline",
            "idle_percent",
        )],
        &[],
        across.clone(),
    );
    assert_eq!(
        no_op.remove(0).environment_changes,
        "vendor stack cuda 12.4 → HIP 6.4"
    );
    // Not across platforms, the runtimes are one more field.
    across.cross_platform = false;
    assert!(changes(across, "GEMM").contains("runtime cuda 12.4 → HIP 6.4; PyTorch"));
}
