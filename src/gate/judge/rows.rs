//! Judging one matched op row statistically: a confident change beyond the
//! threshold on one platform, or a ratio beyond the hardware's expectation
//! across platforms; then Benjamini–Hochberg control over all such rows.

use super::findings::{
    Pending, interval_percent, op_finding, priority_of, set_sample_figures, short_op,
};
use crate::analysis::hardware::{ComputeSpec, Hardware};
use crate::analysis::ops::stats::percent;
use crate::gate::compare::{OpComparison, OpSide};
use crate::gate::policy::{Expectation as PolicyExpectation, Expected, Policy};
use crate::gate::stats::bh_adjust;
use crate::gate::verdict::{Finding, FindingKind, Severity};

/// A regression or improvement of a row on one platform, awaiting
/// false-discovery control; `None` when the row is unchanged or immaterial.
pub(super) fn judge_same_platform(
    op: &OpComparison,
    policy: &Policy,
    workload: &str,
    threshold_percent: f64,
) -> Option<Pending> {
    let noise = &policy.noise;
    let up = 1.0 + threshold_percent / 100.0;
    let down = 1.0 / up;
    let estimate = &op.estimate;
    let (low, high) = estimate
        .interval
        .map_or((estimate.ratio, estimate.ratio), |i| (i.low, i.high));
    let material = op.impact_percent.abs() >= noise.min_impact_percent;
    let (kind, rule, severity, p_value) = if low > up && op.impact_percent > 0.0 {
        (
            FindingKind::Regression,
            "regression",
            policy.regression.severity,
            estimate.p_value_above(up),
        )
    } else if high < down && op.impact_percent < 0.0 {
        (
            FindingKind::Improvement,
            "improvement",
            policy.improvement.severity,
            estimate.p_value_below(down),
        )
    } else {
        return None;
    };
    if !material {
        return None;
    }
    let side = &op.candidate;
    let delta = (estimate.ratio - 1.0) * 100.0;
    let confidence_note = match estimate.interval {
        Some(i) => format!(
            "{:.0}% interval {:+.1}% to {:+.1}%",
            estimate.confidence * 100.0,
            (i.low - 1.0) * 100.0,
            (i.high - 1.0) * 100.0
        ),
        None => "one sample per side: no confidence interval".to_string(),
    };
    let verb = if kind == FindingKind::Regression {
        "slower"
    } else {
        "faster"
    };
    let mut finding = op_finding(
        rule,
        severity,
        kind,
        workload,
        side,
        format!(
            "{} is {:.1}% {verb} ({confidence_note}), {:+.2}% of total GPU time{}",
            short_op(side),
            delta.abs(),
            op.impact_percent,
            main_kernel(op)
        ),
    );
    set_sample_figures(&mut finding, op);
    finding.interval_percent = interval_percent(op);
    finding.limit = Some(threshold_percent);
    finding.impact_percent = Some(op.impact_percent);
    finding.priority = priority_of(op.impact_percent);
    Some(Pending {
        finding,
        p_value: p_value.unwrap_or(0.0),
    })
}

/// The expected candidate/baseline ratio under the policy's model for this op.
fn expected_ratio(
    op: &OpComparison,
    policy: &Policy,
    baseline: Option<&Hardware>,
    candidate: Option<&Hardware>,
) -> Option<(f64, f64, String)> {
    let side = &op.candidate;
    let (expectation, slack) = policy.cross_platform.expectation_for(
        &side.key.name,
        side.category.as_str(),
        &side.key.input_dims,
        side.module_path.as_deref(),
    );
    let spec = side
        .model
        .as_ref()
        .and_then(|m| m.compute_spec)
        .unwrap_or(ComputeSpec::MatrixBf16);
    let (ratio, basis) = match expectation {
        PolicyExpectation::Ratio(ratio) => (ratio, "policy ratio".to_string()),
        PolicyExpectation::Model(Expected::Roofline) => {
            let expected = op.expected?;
            (
                expected.ratio,
                format!("{:?}", expected.basis).to_lowercase(),
            )
        }
        PolicyExpectation::Model(Expected::Bandwidth) => {
            let (b, c) = (baseline?, candidate?);
            (b.hbm_tb_s / c.hbm_tb_s, "bandwidth".to_string())
        }
        PolicyExpectation::Model(Expected::Compute) => {
            let (b, c) = (baseline?.peak_tflops(spec)?, candidate?.peak_tflops(spec)?);
            (b / c, "peak compute".to_string())
        }
    };
    Some((ratio, slack, basis))
}

/// A row whose ratio is beyond what the hardware explains, awaiting
/// false-discovery control; `None` when it is within the policy's slack.
pub(super) fn judge_cross_platform(
    op: &OpComparison,
    policy: &Policy,
    baseline: Option<&Hardware>,
    candidate: Option<&Hardware>,
    workload: &str,
    threshold_percent: f64,
    baseline_total_us: f64,
) -> Option<Pending> {
    let side = &op.candidate;
    let (expected, slack, basis) = expected_ratio(op, policy, baseline, candidate)?;
    let estimate = &op.estimate;
    let (low, high) = estimate
        .interval
        .map_or((estimate.ratio, estimate.ratio), |i| (i.low, i.high));
    let tolerance = 1.0 + slack.max(threshold_percent) / 100.0;
    let upper = expected * tolerance;
    let lower = expected / tolerance;
    // Impact beyond what the hardware explains: the candidate's time against
    // the baseline's time scaled by the expected ratio.
    let excess_us = op.candidate.time_us - expected * op.baseline.time_us;
    let excess_percent = percent(excess_us, baseline_total_us);
    if excess_percent.abs() < policy.noise.min_impact_percent {
        return None;
    }
    let (severity, p_value, direction) = if low > upper {
        (
            policy.cross_platform.severity,
            estimate.p_value_above(upper),
            "slower",
        )
    } else if high < lower {
        (Severity::Info, estimate.p_value_below(lower), "faster")
    } else {
        return None;
    };
    let mut finding = op_finding(
        "cross_platform",
        severity,
        FindingKind::UnexpectedRatio,
        workload,
        side,
        format!(
            "{}: candidate/baseline time ratio {:.2} is {direction} than the {:.2} the hardware explains ({basis}, ±{:.0}% slack): improve the target's kernel",
            short_op(side),
            estimate.ratio,
            expected,
            slack.max(threshold_percent)
        ),
    );
    set_sample_figures(&mut finding, op);
    finding.interval_percent = interval_percent(op);
    finding.expected_ratio = Some(expected);
    finding.limit = Some(upper);
    finding.impact_percent = Some(excess_percent);
    finding.priority = priority_of(excess_percent);
    Some(Pending {
        finding,
        p_value: p_value.unwrap_or(0.0),
    })
}

/// Benjamini–Hochberg over every pending op finding; those whose adjusted
/// p-value exceeds the rate are dropped. Findings without an interval (one
/// sample) carry p = 0 and so always survive; their message says why.
pub(super) fn false_discovery_control(pending: Vec<Pending>, rate: f64) -> Vec<Finding> {
    let p_values: Vec<f64> = pending.iter().map(|p| p.p_value).collect();
    let adjusted = bh_adjust(&p_values);
    pending
        .into_iter()
        .zip(adjusted)
        .filter(|(_, q)| *q <= rate)
        .map(|(p, _)| p.finding)
        .collect()
}

/// For a graph row with several kernels, the kernel whose time changed most,
/// in words (`; mostly kernel_x (+50.0%)`); empty otherwise.
fn main_kernel(op: &OpComparison) -> String {
    let (base, cand) = (&op.baseline.kernel_us, &op.candidate.kernel_us);
    if cand.len() < 2 {
        return String::new();
    }
    let scale = |side: &OpSide| side.time_us / side.total_us.max(f64::MIN_POSITIVE);
    let changes = cand.iter().filter_map(|(name, after)| {
        let before = base.iter().find(|(n, _)| n == name)?.1;
        let (before, after) = (before * scale(&op.baseline), after * scale(&op.candidate));
        Some((name, after - before, before))
    });
    match changes.max_by(|a, b| a.1.abs().total_cmp(&b.1.abs())) {
        Some((name, change, before)) if before > 0.0 && change != 0.0 => {
            format!("; mostly {name} ({:+.1}%)", change / before * 100.0)
        }
        _ => String::new(),
    }
}
