//! Building findings: the common fields of an op finding (with the
//! diagnosis paths of a slowdown), priorities, and the figures and wording
//! every rule shares.

use crate::analysis::diagnose::{self, Bound};
use crate::gate::compare::{Comparison, ImpactBasis, OpComparison, OpSide, SamplesBasis};
use crate::gate::policy::Policy;
use crate::gate::stats::IntervalKind;
use crate::gate::verdict::{Finding, FindingKind, FindingPriority, Per, SampleCounts, Severity};

/// A regression or cross-platform candidate awaiting false-discovery control.
pub(super) struct Pending {
    /// The finding, should it survive.
    pub(super) finding: Finding,
    /// Its p-value against the threshold (0 without an interval).
    pub(super) p_value: f64,
    /// A row with one sample on a side whose p-value comes from the noise
    /// of one call (borrowed from the repeating rows, or the policy's
    /// prior): it enters the false-discovery control like a row with an
    /// interval.
    pub(super) one_call_noise: bool,
}

/// A nothing-to-compare finding for a workload.
pub(super) fn nothing_to_compare(policy: &Policy, workload: &str, message: String) -> Finding {
    Finding {
        metric: "comparison".into(),
        priority: FindingPriority::High,
        ..Finding::new(
            "nothing_to_compare",
            policy.nothing_to_compare.severity,
            FindingKind::NothingToCompare,
            workload,
            message,
        )
    }
}

/// A finding about one op, with the common fields filled in.
pub(super) fn op_finding(
    rule: &str,
    severity: Severity,
    kind: FindingKind,
    workload: &str,
    side: &OpSide,
    message: String,
) -> Finding {
    let family = side
        .model
        .as_ref()
        .map_or(side.category.as_str(), |m| m.family.as_str());
    let bound = side.model.as_ref().map(|m| {
        if m.bytes > 0.0 && m.flops / m.bytes > 100.0 {
            Bound::Compute
        } else {
            Bound::Memory
        }
    });
    let paths = diagnose::op_paths(&side.key.name, family, bound);
    let (path_a, path_b) = paths.unzip();
    let is_slowdown = matches!(
        kind,
        FindingKind::Regression
            | FindingKind::UnexpectedRatio
            | FindingKind::Budget
            | FindingKind::Efficiency
    );
    Finding {
        op: Some(side.op_ref()),
        metric: "median kernel time per call".into(),
        unit: "µs".into(),
        path_a: path_a.filter(|_| is_slowdown),
        path_b: path_b.filter(|_| is_slowdown),
        ..Finding::new(rule, severity, kind, workload, message)
    }
}

/// Makes an op finding about `shapes` rows of its op together: its op
/// is named with `N shapes` for the dims, without dtypes or strides; and
/// for rows summed, its metric says so.
pub(super) fn summed_rows(finding: &mut Finding, shapes: usize, per: Option<Per>) {
    if let Some(op) = finding.op.as_mut() {
        op.input_dims = format!("{shapes} shapes");
        op.input_type.clear();
        op.input_strides.clear();
    }
    if let Some(per) = per {
        finding.metric = format!("kernel time per {} (rows summed)", per.as_str());
        finding.statistics.per = Some(per);
    }
}

/// A cross-platform finding about an op's ratio.
pub(super) fn ratio_finding(
    severity: Severity,
    workload: &str,
    side: &OpSide,
    message: String,
) -> Finding {
    op_finding(
        "cross_platform",
        severity,
        FindingKind::UnexpectedRatio,
        workload,
        side,
        message,
    )
}

/// Priority from the share of total GPU time a finding adds or saves.
pub(super) fn priority_of(impact_percent: f64) -> FindingPriority {
    FindingPriority::of_impact(impact_percent)
}

/// An op as messages name it: name and input dims, and for graph-replayed
/// work where it ran (`… in hipGraphLaunch launch #0`).
pub(super) fn short_op(side: &OpSide) -> String {
    let text = format!("{} {}", side.key.name, side.key.input_dims)
        .trim_end()
        .to_string();
    match &side.graph {
        Some(graph) => format!("{text} {}", graph.describe()),
        None => text,
    }
}

/// Whether the policy's ignore list covers a row.
pub(super) fn ignored(policy: &Policy, side: &OpSide) -> bool {
    policy.is_ignored(
        &side.key.name,
        side.category.as_str(),
        &side.key.input_dims,
        side.module_path.as_deref(),
    )
}

/// Puts the figures the estimate was computed on into a finding: per-step
/// totals or per-call medians, labelled accordingly, with the samples
/// behind them and the interval the verdict rests on (a confidence
/// interval, or the range over too few samples for one).
pub(super) fn set_sample_figures(finding: &mut Finding, op: &OpComparison) {
    let per = sample_per(op);
    finding.metric = match op.samples_basis {
        SamplesBasis::Steps => "kernel time per step (median over steps)".into(),
        SamplesBasis::Invocations => "median kernel time per call".into(),
        SamplesBasis::Runs => "kernel time per run (all shapes)".into(),
    };
    finding.baseline = Some(op.baseline_sample_median_us);
    finding.candidate = Some(op.candidate_sample_median_us);
    finding.delta_percent = Some((op.estimate.ratio - 1.0) * 100.0);
    let bounds = op.estimate.bounds();
    finding.interval_percent = bounds.map(|b| {
        (
            (b.interval.low - 1.0) * 100.0,
            (b.interval.high - 1.0) * 100.0,
        )
    });
    let statistics = &mut finding.statistics;
    statistics.per = Some(per);
    statistics.samples = Some(SampleCounts {
        per,
        baseline: op.estimate.n_baseline,
        candidate: op.estimate.n_candidate,
    });
    statistics.interval_kind = bounds.map(|b| b.kind);
    statistics.confidence = bounds
        .filter(|b| b.kind == IntervalKind::Confidence)
        .map(|_| op.estimate.confidence);
}

/// What one sample of a row is: a step's total or a call's time.
pub(super) fn sample_per(op: &OpComparison) -> Per {
    match op.samples_basis {
        SamplesBasis::Steps => Per::Step,
        SamplesBasis::Invocations => Per::Call,
        SamplesBasis::Runs => Per::Run,
    }
}

/// What a comparison's per-row times (`time_us`) are per.
pub(super) fn time_per(comparison: &Comparison) -> Per {
    match comparison.impact_basis {
        ImpactBasis::PerRun => Per::Run,
        ImpactBasis::PerStep => Per::Step,
    }
}

/// A finding's interval in words for its message: `95% interval +1.0% to
/// +3.0%`, `range over 3 steps +1.0% to +3.0%`, or why there is none.
pub(super) fn interval_words(finding: &Finding) -> String {
    match finding.interval_percent {
        Some((low, high)) => format!(
            "{} {low:+.1}% to {high:+.1}%",
            finding.statistics.interval_label()
        ),
        None => match finding.statistics.samples {
            Some(samples) if samples.fewest() < 2 => {
                format!("one {} on a side: no interval", samples.per.as_str())
            }
            _ => "no interval".to_string(),
        },
    }
}

/// A figure for a message: whole numbers from 100 up, else two decimals.
pub(super) fn round(value: f64) -> String {
    if value.abs() >= 100.0 {
        format!("{value:.0}")
    } else {
        format!("{value:.2}")
    }
}
