//! Building findings (`findings.rs`): the diagnosis paths a slowdown gets
//! by its op's bound, an op's summed rows, how messages name an op and its
//! interval, the figures of a row's samples, and rounding for messages.

use super::*;
use crate::analysis::diagnose::{Bound, op_paths};
use crate::analysis::profile::{GraphPlace, GraphRole, OpModel};
use crate::gate::compare::{OpComparison, SamplesBasis};
use crate::gate::judge::findings::{
    interval_words, op_finding, round, set_sample_figures, short_op, summed_rows,
};
use crate::gate::stats::{RatioEstimate, RatioInterval, Resampling};
use crate::gate::verdict::SampleCounts;

/// The example's first matched row compared with itself.
fn first_row() -> OpComparison {
    compared_with_itself(&example_snapshot()).ops[0].clone()
}

/// A side of an op of no known kind (`my::fused`), modelled as `flops`
/// over `bytes`: its advice follows its bound alone.
fn modelled_side(flops: f64, bytes: f64) -> OpSide {
    let mut side = first_row().candidate;
    side.key.name = "my::fused".to_string();
    side.model = Some(OpModel {
        family: "Other".to_string(),
        flops,
        bytes,
        compute_spec: None,
    });
    side
}

/// A slowdown's paths follow its op's bound: compute-bound beyond 100
/// FLOPs a byte (exactly 100, or no bytes, is memory-bound); findings
/// that are not slowdowns carry none.
#[test]
fn a_slowdowns_paths_follow_its_ops_bound() {
    let paths = |bound| op_paths("my::fused", "Other", Some(bound)).expect("paths by bound");
    let (compute, memory) = (paths(Bound::Compute), paths(Bound::Memory));
    assert_ne!(compute, memory);
    let finding = |side: &OpSide, kind| {
        let f = op_finding("rule", Severity::Fail, kind, "w", side, "m".to_string());
        f.path_a.zip(f.path_b)
    };
    for kind in [
        FindingKind::Regression,
        FindingKind::UnexpectedRatio,
        FindingKind::Budget,
        FindingKind::Efficiency,
    ] {
        assert_eq!(
            finding(&modelled_side(101e6, 1e6), kind),
            Some(compute.clone())
        );
        assert_eq!(
            finding(&modelled_side(100e6, 1e6), kind),
            Some(memory.clone())
        );
        assert_eq!(
            finding(&modelled_side(1e6, 0.0), kind),
            Some(memory.clone())
        );
    }
    for kind in [
        FindingKind::Improvement,
        FindingKind::KernelSelection,
        FindingKind::NewOp,
    ] {
        assert_eq!(finding(&modelled_side(101e6, 1e6), kind), None, "{kind:?}");
    }
    let side = modelled_side(1.0, 1.0);
    let f = op_finding(
        "rule",
        Severity::Warn,
        FindingKind::Regression,
        "w",
        &side,
        "m".to_string(),
    );
    assert_eq!(f.op, Some(side.op_ref()));
    assert_eq!(
        (f.metric.as_str(), f.unit.as_str()),
        ("median kernel time per call", "µs")
    );
    assert_eq!(
        (f.rule.as_str(), f.severity, f.workload.as_str()),
        ("rule", Severity::Warn, "w")
    );
}

/// Rows summed name their shapes' count as the dims, with no type or
/// strides, and say what their time is per; without a basis the metric
/// stays.
#[test]
fn summed_rows_name_their_shapes_and_their_basis() {
    let side = first_row().candidate;
    let mut finding = op_finding(
        "rule",
        Severity::Fail,
        FindingKind::Regression,
        "w",
        &side,
        "m".to_string(),
    );
    let op = finding.op.as_mut().expect("an op");
    op.input_type = "float".to_string();
    op.input_strides = "[[1]]".to_string();
    let mut unbased = finding.clone();
    summed_rows(&mut finding, 3, Some(Per::Step));
    let op = finding.op.as_ref().expect("an op");
    assert_eq!(
        (
            op.input_dims.as_str(),
            op.input_type.as_str(),
            op.input_strides.as_str()
        ),
        ("3 shapes", "", "")
    );
    assert_eq!(finding.metric, "kernel time per step (rows summed)");
    assert_eq!(finding.statistics.per, Some(Per::Step));
    summed_rows(&mut unbased, 2, None);
    assert_eq!(unbased.metric, "median kernel time per call");
    assert_eq!(unbased.statistics.per, None);
}

/// Messages name an op by its name and dims (no trailing space without
/// dims), and graph-replayed work by where it ran.
#[test]
fn an_op_is_named_by_its_dims_and_its_graph() {
    let mut side = first_row().candidate;
    side.key.name = "aten::mm".to_string();
    side.key.input_dims = "[[2, 3]]".to_string();
    assert_eq!(short_op(&side), "aten::mm [[2, 3]]");
    side.key.input_dims.clear();
    assert_eq!(short_op(&side), "aten::mm");
    side.graph = Some(GraphPlace {
        graph: "graph 0".to_string(),
        role: GraphRole::CapturedOp,
        launch: "cudaGraphLaunch #1".to_string(),
        variant: None,
    });
    assert_eq!(short_op(&side), "aten::mm in cudaGraphLaunch #1 graph 0");
}

/// A failing regression finding with no figures yet.
fn failing_regression() -> Finding {
    Finding::new(
        "rule",
        Severity::Fail,
        FindingKind::Regression,
        "w",
        "m".to_string(),
    )
}

/// An interval in words: its label and bounds, else why there is none
/// (one sample on a side, exactly two are not one).
#[test]
fn an_interval_is_worded_with_its_label_or_why_there_is_none() {
    let mut finding = failing_regression();
    assert_eq!(interval_words(&finding), "no interval");
    let counts = |baseline, candidate| SampleCounts {
        per: Per::Step,
        baseline,
        candidate,
    };
    finding.statistics.samples = Some(counts(3, 1));
    assert_eq!(interval_words(&finding), "one step on a side: no interval");
    finding.statistics.samples = Some(counts(2, 3));
    assert_eq!(interval_words(&finding), "no interval");
    finding.interval_percent = Some((-1.04, 3.0));
    finding.statistics.interval_kind = Some(IntervalKind::Range);
    assert_eq!(
        interval_words(&finding),
        "range over 2–3 steps -1.0% to +3.0%"
    );
}

/// A row's figures are those its samples were taken on: the metric and
/// what a sample is per, the sample medians, Δ from the ratio, the
/// interval in % with its kind, and a confidence level only for a
/// confidence interval.
#[test]
fn a_rows_figures_are_its_samples_and_their_interval() {
    let mut op = first_row();
    op.baseline_sample_median_us = 100.0;
    op.candidate_sample_median_us = 125.0;
    let interval = RatioInterval {
        low: 1.125,
        high: 1.5,
    };
    op.estimate = RatioEstimate {
        ratio: 1.25,
        interval: Some(interval),
        range: Some(RatioInterval {
            low: 1.0625,
            high: 1.75,
        }),
        confidence: 0.9,
        n_baseline: 8,
        n_candidate: 9,
        resampling: Resampling::Independent,
        resamples: 100,
        replicates: Vec::new(),
    };
    let figures = |op: &OpComparison| {
        let mut finding = failing_regression();
        set_sample_figures(&mut finding, op);
        finding
    };
    let bases = [
        (
            SamplesBasis::Steps,
            "kernel time per step (median over steps)",
            Per::Step,
        ),
        (
            SamplesBasis::Invocations,
            "median kernel time per call",
            Per::Call,
        ),
        (
            SamplesBasis::Runs,
            "kernel time per run (all shapes)",
            Per::Run,
        ),
    ];
    for (basis, metric, per) in bases {
        op.samples_basis = basis;
        let f = figures(&op);
        assert_eq!(f.metric, metric);
        assert_eq!(f.statistics.per, Some(per));
        assert_eq!(
            f.statistics.samples,
            Some(SampleCounts {
                per,
                baseline: 8,
                candidate: 9
            })
        );
    }
    let f = figures(&op);
    assert_eq!((f.baseline, f.candidate), (Some(100.0), Some(125.0)));
    assert_eq!(f.delta_percent, Some(25.0));
    assert_eq!(f.interval_percent, Some((12.5, 50.0)));
    assert_eq!(f.statistics.interval_kind, Some(IntervalKind::Confidence));
    assert_eq!(f.statistics.confidence, Some(0.9));

    op.estimate.n_baseline = 7;
    let f = figures(&op);
    assert_eq!(f.interval_percent, Some((6.25, 75.0)));
    assert_eq!(f.statistics.interval_kind, Some(IntervalKind::Range));
    assert_eq!(f.statistics.confidence, None);
    op.estimate.range = None;
    op.estimate.interval = None;
    let f = figures(&op);
    assert_eq!(
        (f.interval_percent, f.statistics.interval_kind),
        (None, None)
    );
}

/// Figures in messages: whole numbers from 100 up (either sign), two
/// decimals below.
#[test]
fn message_figures_are_whole_from_a_hundred_up() {
    assert_eq!(round(100.0), "100");
    assert_eq!(round(-150.4), "-150");
    assert_eq!(round(99.996), "100.00");
    assert_eq!(round(-99.5), "-99.50");
    assert_eq!(round(0.126), "0.13");
}
