//! Judging a cross-platform row against the ratio it showed over earlier
//! paired runs (a learned ratio, [`ExpectationBasis::History`]) instead of
//! the roofline's. The stacks' gap is in the learned ratio, so what is left
//! is a change: an op whose ratio rose beyond the run-to-run spread got
//! slower on the candidate (or faster on the baseline) since those runs.

use super::findings::{
    Pending, priority_of, ratio_finding, sample_per, set_sample_figures, short_op, summed_rows,
    time_per,
};
use crate::analysis::ops::stats::percent;
use crate::gate::compare::{Comparison, ExpectationBasis, OpComparison};
use crate::gate::policy::Policy;
use crate::gate::stats::{RatioEstimate, normal_upper_tail};
use crate::gate::verdict::{Finding, LearnedFrom, Severity};

/// The tolerance is at least this many robust spreads of the learned ratio.
pub(super) const SPREAD_MULTIPLE: f64 = 3.0;

/// Whether a row is judged against a learned ratio.
pub(super) fn is_learned(op: &OpComparison) -> bool {
    op.expected
        .is_some_and(|e| matches!(e.basis, ExpectationBasis::History { .. }))
}

/// How a row's ratio stands against its learned ratio.
struct Move {
    /// Observed ratio / learned ratio.
    change: f64,
    /// The change as a share of either side's GPU time, whichever is
    /// larger, %.
    impact: f64,
    /// The tolerance, %: max(`history_tolerance_percent`, 3 × spread).
    tolerance_percent: f64,
    /// Learned ratio × (1 + tolerance).
    upper: f64,
    /// Learned ratio / (1 + tolerance).
    lower: f64,
    /// Low and high bounds of the observed ratio (the point estimate
    /// without an interval).
    low: f64,
    high: f64,
    /// The learned ratio and what it rests on.
    expected: f64,
    learned: LearnedFrom,
    /// P-values of the observed ratio above `upper` and below `lower`.
    p_above: Option<f64>,
    p_below: Option<f64>,
}

/// A learned row's move, when it has a learned ratio and a usable estimate.
fn assess(op: &OpComparison, policy: &Policy, comparison: &Comparison) -> Option<Move> {
    let expected = op.expected?;
    let ExpectationBasis::History { runs, spread } = expected.basis else {
        return None;
    };
    let tolerance_percent = policy
        .cross_platform
        .history_tolerance_percent
        .max(SPREAD_MULTIPLE * spread * 100.0);
    let tolerance = 1.0 + tolerance_percent / 100.0;
    let estimate = &op.estimate;
    // A ratio is learned from at least MIN_LEARNED_RUNS runs (the
    // comparison keeps no other), which measured the noise of this very
    // statistic: the point estimate is judged against the tolerance (the
    // interval over this run's calls or steps would count the noise twice).
    let (low, high) = (estimate.ratio, estimate.ratio);
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
    Some(Move {
        change,
        impact: if baseline_view.abs() >= candidate_view.abs() {
            baseline_view
        } else {
            candidate_view
        },
        tolerance_percent,
        upper: expected.ratio * tolerance,
        lower: expected.ratio / tolerance,
        low,
        high,
        expected: expected.ratio,
        learned: LearnedFrom {
            runs,
            spread_percent: spread * 100.0,
        },
        p_above: p_value(estimate, expected.ratio * tolerance, runs, spread, true),
        p_below: p_value(estimate, expected.ratio / tolerance, runs, spread, false),
    })
}

/// The p-value of the observed ratio beyond `limit` (above it, or below)
/// under normal noise of the log ratio with the learned spread (widened by
/// the median's own uncertainty, √(1 + 1/runs)).
fn p_value(
    estimate: &RatioEstimate,
    limit: f64,
    runs: usize,
    spread: f64,
    above: bool,
) -> Option<f64> {
    let sigma = (spread * (1.0 + 1.0 / runs as f64).sqrt()).max(f64::MIN_POSITIVE);
    let z = (estimate.ratio / limit).ln() / sigma;
    Some(normal_upper_tail(if above { z } else { -z }))
}

/// The added impact, %, of a learned row whose whole interval rose beyond
/// its tolerance; `None` for any other row. Rows of one op that each add
/// less than the impact minimum are judged together by [`judge_risen_rows`].
pub(super) fn risen_impact(
    op: &OpComparison,
    policy: &Policy,
    comparison: &Comparison,
) -> Option<f64> {
    assess(op, policy, comparison)
        .filter(|m| m.low > m.upper && m.impact > 0.0)
        .map(|m| m.impact)
}

/// A row whose ratio changed beyond its learned ratio's tolerance,
/// awaiting false-discovery control; `None` when it did not, when the
/// change is immaterial, or when the row has no learned ratio.
///
/// The tolerance is max(`history_tolerance_percent`, 3 × the ratio's
/// spread). The point estimate is judged against it, with a p-value from
/// the learned spread: the learned runs (at least
/// [`MIN_LEARNED_RUNS`](crate::gate::compare::MIN_LEARNED_RUNS)) measured
/// the noise of this ratio, so a row with one sample a side may fail too. The
/// impact is the change as a share of either side's GPU time, whichever
/// is larger.
pub(super) fn judge_learned(
    op: &OpComparison,
    policy: &Policy,
    workload: &str,
    comparison: &Comparison,
) -> Option<Pending> {
    let m = assess(op, policy, comparison)?;
    if m.impact.abs() < policy.noise.min_impact_percent {
        return None;
    }
    let estimate = &op.estimate;
    let (severity, p_value, direction, reading) = if m.low > m.upper {
        (
            policy.cross_platform.history_severity,
            m.p_above,
            "rose",
            "the op got slower on the candidate (or faster on the baseline) since those runs",
        )
    } else if m.high < m.lower {
        (
            Severity::Info,
            m.p_below,
            "fell",
            "the op got faster on the candidate (or slower on the baseline) since those runs",
        )
    } else {
        return None;
    };
    let side = &op.candidate;
    let mut finding = ratio_finding(
        severity,
        workload,
        side,
        format!(
            "{}: candidate/baseline time ratio per {} {:.2} {direction} {:+.1}% from the ×{:.2} {} (tolerance {:.0}%): {reading}",
            short_op(side),
            sample_per(op).as_str(),
            estimate.ratio,
            (m.change - 1.0) * 100.0,
            m.expected,
            m.learned.describe(),
            m.tolerance_percent,
        ),
    );
    set_sample_figures(&mut finding, op);
    finish(&mut finding, m.expected, m.learned, m.upper, m.impact);
    Some(Pending {
        finding,
        p_value: p_value.unwrap_or(0.0),
        one_call_noise: false,
    })
}

/// An op's rows whose ratios each rose beyond their tolerance but each add
/// less than the impact minimum, judged together (several shapes of one op
/// slowed by one change): a finding when there are two or more and their
/// impacts add up to the minimum. Every row must have risen for the op to
/// have: the largest p-value is the group's (an intersection–union test).
pub(super) fn judge_risen_rows(
    name: &str,
    rows: &[(&OpComparison, f64)],
    policy: &Policy,
    comparison: &Comparison,
) -> Option<Pending> {
    let impact: f64 = rows.iter().map(|(_, impact)| impact).sum();
    if rows.len() < 2 || impact < policy.noise.min_impact_percent {
        return None;
    }
    let moves: Vec<(&OpComparison, Move)> = rows
        .iter()
        .filter_map(|(op, _)| Some((*op, assess(op, policy, comparison)?)))
        .collect();
    let base: f64 = moves.iter().map(|(op, _)| op.baseline.time_us).sum();
    let cand: f64 = moves.iter().map(|(op, _)| op.candidate.time_us).sum();
    if base <= 0.0 {
        return None;
    }
    // The learned ratio of the rows' summed time, and the widest tolerance.
    let expected = moves
        .iter()
        .map(|(op, m)| m.expected * op.baseline.time_us)
        .sum::<f64>()
        / base;
    let widest = moves
        .iter()
        .map(|(_, m)| m)
        .max_by(|a, b| a.tolerance_percent.total_cmp(&b.tolerance_percent))?;
    let learned = LearnedFrom {
        runs: moves.iter().map(|(_, m)| m.learned.runs).min()?,
        spread_percent: widest.learned.spread_percent,
    };
    let severity = policy.cross_platform.history_severity;
    let shapes = comparison
        .ops
        .iter()
        .filter(|op| op.candidate.key.name == name)
        .count();
    let change = cand / base / expected;
    let per = time_per(comparison);
    let mut finding = ratio_finding(
        severity,
        &comparison.workload,
        &rows[0].0.candidate,
        format!(
            "{name}: the candidate/baseline time ratio rose beyond its learned ratio in {} of its {shapes} shapes (together {:+.1}% from ×{expected:.2}, {}; tolerance {:.0}%), {impact:+.2}% of GPU time together: the op got slower on the candidate (or faster on the baseline) since those runs",
            moves.len(),
            (change - 1.0) * 100.0,
            learned.describe(),
            widest.tolerance_percent,
        ),
    );
    summed_rows(&mut finding, moves.len(), Some(per));
    finding.baseline = Some(base);
    finding.candidate = Some(cand);
    finding.delta_percent = Some((cand / base - 1.0) * 100.0);
    let upper = expected * (1.0 + widest.tolerance_percent / 100.0);
    finish(&mut finding, expected, learned, upper, impact);
    let p_value = moves
        .iter()
        .filter_map(|(_, m)| m.p_above)
        .fold(0.0, f64::max);
    Some(Pending {
        finding,
        p_value,
        one_call_noise: false,
    })
}

/// Puts into a learned-ratio finding its expected ratio, what that was
/// learned from, the limit (`upper`, ×) and the impact, %.
fn finish(finding: &mut Finding, expected: f64, learned: LearnedFrom, upper: f64, impact: f64) {
    finding.expected_ratio = Some(expected);
    finding.statistics.expected_learned = Some(learned);
    finding.limit = Some(upper);
    finding.statistics.limit_unit = Some("×".into());
    finding.impact_percent = Some(impact);
    finding.priority = priority_of(impact);
}
