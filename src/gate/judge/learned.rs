//! Judging a cross-platform row against the ratio it showed over earlier
//! paired runs (a learned ratio, [`ExpectationBasis::History`]) instead of
//! the roofline's. The stacks' gap is in the learned ratio, so what is left
//! is a change: an op whose ratio rose beyond the run-to-run spread got
//! slower on the candidate (or faster on the baseline) since those runs.

use super::findings::{Pending, op_finding, priority_of, sample_per, set_sample_figures, short_op};
use crate::analysis::ops::stats::percent;
use crate::gate::compare::{Comparison, ExpectationBasis, OpComparison};
use crate::gate::policy::Policy;
use crate::gate::verdict::{FindingKind, LearnedFrom, Severity};

/// The tolerance is at least this many robust spreads of the learned ratio.
pub(super) const SPREAD_MULTIPLE: f64 = 3.0;

/// Earlier runs a learned ratio needs before a change of it may fail the
/// build; fewer give a warning.
pub(super) const MIN_RUNS_TO_FAIL: usize = 3;

/// Whether a row is judged against a learned ratio.
pub(super) fn is_learned(op: &OpComparison) -> bool {
    op.expected
        .is_some_and(|e| matches!(e.basis, ExpectationBasis::History { .. }))
}

/// A row whose ratio changed beyond its learned ratio's tolerance,
/// awaiting false-discovery control; `None` when it did not, when the
/// change is immaterial, or when the row has no learned ratio.
///
/// The tolerance is max(`history_tolerance_percent`, 3 × the ratio's
/// spread); the row is judged on its bounds like any other (the point
/// estimate with one sample a side: the run-to-run noise is measured by the
/// learned spread, so from 3 runs on such a row may fail). The impact is
/// the change as a share of either side's GPU time, whichever is larger.
pub(super) fn judge_learned(
    op: &OpComparison,
    policy: &Policy,
    workload: &str,
    comparison: &Comparison,
) -> Option<Pending> {
    let expected = op.expected?;
    let ExpectationBasis::History { runs, spread } = expected.basis else {
        return None;
    };
    let section = &policy.cross_platform;
    let tolerance_percent = section
        .history_tolerance_percent
        .max(SPREAD_MULTIPLE * spread * 100.0);
    let tolerance = 1.0 + tolerance_percent / 100.0;
    let (upper, lower) = (expected.ratio * tolerance, expected.ratio / tolerance);
    let estimate = &op.estimate;
    let (low, high) = estimate
        .bounds()
        .map_or((estimate.ratio, estimate.ratio), |b| {
            (b.interval.low, b.interval.high)
        });
    let change = estimate.ratio / expected.ratio;
    if !change.is_finite() || change <= 0.0 {
        return None;
    }
    // The change in each side's terms: baseline time it would add at the
    // new ratio, and candidate time beyond the learned ratio.
    let baseline_view = percent(
        op.baseline.time_us * (change - 1.0),
        comparison.baseline_total_us,
    );
    let candidate_view = percent(
        op.candidate.time_us * (1.0 - 1.0 / change),
        comparison.candidate_total_us,
    );
    let impact = if baseline_view.abs() >= candidate_view.abs() {
        baseline_view
    } else {
        candidate_view
    };
    if impact.abs() < policy.noise.min_impact_percent {
        return None;
    }
    let (severity, p_value, direction, reading) = if low > upper {
        let severity = if runs >= MIN_RUNS_TO_FAIL {
            section.history_severity
        } else {
            section.history_severity.max(Severity::Warn)
        };
        (
            severity,
            estimate.p_value_above(upper),
            "rose",
            "the op got slower on the candidate (or faster on the baseline) since those runs",
        )
    } else if high < lower {
        (
            Severity::Info,
            estimate.p_value_below(lower),
            "fell",
            "the op got faster on the candidate (or slower on the baseline) since those runs",
        )
    } else {
        return None;
    };
    let side = &op.candidate;
    let learned = LearnedFrom {
        runs,
        spread_percent: spread * 100.0,
    };
    let mut finding = op_finding(
        "cross_platform",
        severity,
        FindingKind::UnexpectedRatio,
        workload,
        side,
        format!(
            "{}: candidate/baseline time ratio per {} {:.2} {direction} {:+.1}% from the ×{:.2} {} (tolerance {:.0}%): {reading}",
            short_op(side),
            sample_per(op).as_str(),
            estimate.ratio,
            (change - 1.0) * 100.0,
            expected.ratio,
            learned.describe(),
            tolerance_percent,
        ),
    );
    if runs < MIN_RUNS_TO_FAIL && severity == Severity::Warn {
        finding.message.push_str(&format!(
            "; a warning: a ratio learned from fewer than {MIN_RUNS_TO_FAIL} runs cannot fail the build"
        ));
    }
    set_sample_figures(&mut finding, op);
    finding.expected_ratio = Some(expected.ratio);
    finding.statistics.expected_learned = Some(learned);
    finding.limit = Some(upper);
    finding.statistics.limit_unit = Some("×".into());
    finding.impact_percent = Some(impact);
    finding.priority = priority_of(impact);
    Some(Pending {
        finding,
        p_value: p_value.unwrap_or(0.0),
    })
}
