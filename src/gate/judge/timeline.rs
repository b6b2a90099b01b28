//! Timeline rules: a GPU-timeline metric that grew beyond its limit (and
//! the noise: the floor, the run-to-run noise of a baseline window, and the
//! metric's step-to-step spread within a run), or beyond an absolute maximum.
//! The per-phase rows of inference traces (`decode GPU time per step`, …)
//! are judged with the relative limit of the policy's `busy_time` rule
//! (else `computation_time`, else `total_time`), each phase against itself.

use super::findings::{priority_of, round, time_per};
use crate::analysis::ops::stats::percent;
use crate::gate::compare::Comparison;
use crate::gate::policy::{Policy, TimelineMetric};
use crate::gate::verdict::{Finding, FindingKind, FindingPriority, Severity};

/// Baseline, candidate, and the noise a relative limit is raised to: the
/// larger of the run-to-run noise and the step-to-step spread.
fn timeline_value(
    comparison: &Comparison,
    metric: TimelineMetric,
) -> Option<(f64, f64, Option<f64>)> {
    let find = |name: &str| comparison.timeline.iter().find(|t| t.metric == name);
    match metric {
        TimelineMetric::IdlePercent => {
            let (idle, total) = (find("idle_time")?, find("total_time")?);
            Some((
                percent(idle.baseline_us, total.baseline_us),
                percent(idle.candidate_us, total.candidate_us),
                None,
            ))
        }
        other => {
            let row = find(other.as_str())?;
            let noise = match (row.noise, row.step_spread) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
            Some((row.baseline_us, row.candidate_us, noise))
        }
    }
}

/// The findings of the policy's timeline rules.
pub(super) fn timeline_findings(
    comparison: &Comparison,
    policy: &Policy,
    findings: &mut Vec<Finding>,
) {
    let workload = &comparison.workload;
    for (index, rule) in policy.timeline.iter().enumerate() {
        let Some((baseline, candidate, noise)) = timeline_value(comparison, rule.metric) else {
            continue;
        };
        let unit = rule.metric.unit();
        let mut base = Finding {
            metric: rule.metric.as_str().to_string(),
            baseline: Some(baseline),
            candidate: Some(candidate),
            unit: unit.to_string(),
            ..Finding::new(
                format!("timeline[{index}]"),
                rule.severity,
                FindingKind::Timeline,
                workload.as_str(),
                String::new(),
            )
        };
        if unit == "µs" {
            base.statistics.per = Some(time_per(comparison));
        }
        let delta = (baseline > 0.0).then(|| (candidate / baseline - 1.0) * 100.0);
        base.delta_percent = delta;
        if let (Some(limit), Some(delta)) = (rule.max_regression_percent, delta) {
            let effective = limit
                .max(policy.noise.noise_floor_percent)
                .max(noise.unwrap_or(0.0) * 100.0);
            if unit == "µs" && baseline >= policy.noise.min_time_us && delta > effective {
                let mut finding = base.clone();
                finding.limit = Some(effective);
                finding.statistics.limit_unit = Some("%".into());
                finding.impact_percent =
                    Some(percent(candidate - baseline, comparison.baseline_total_us));
                finding.priority = priority_of(delta);
                let raised = if effective > limit.max(policy.noise.noise_floor_percent) {
                    " (raised to the measured noise)"
                } else {
                    ""
                };
                finding.message = format!(
                    "GPU {} grew {delta:.1}% ({} → {} µs), above the {effective:.1}% limit{raised}",
                    rule.metric.as_str().replace('_', " "),
                    round(baseline),
                    round(candidate)
                );
                findings.push(finding);
            }
        }
        if let Some(max) = rule.max {
            if candidate > max {
                let mut finding = base.clone();
                finding.limit = Some(max);
                finding.statistics.limit_unit = Some(unit.to_string());
                finding.priority = FindingPriority::High;
                finding.message = format!(
                    "GPU {} is {} {unit}, above the {} {unit} limit",
                    rule.metric.as_str().replace('_', " "),
                    round(candidate),
                    round(max)
                );
                findings.push(finding);
            }
        }
    }
}

/// The rule a phase's GPU time per step is judged by: the first relative
/// rule on `busy_time`, else `computation_time`, else `total_time`, with its
/// index in the policy.
fn phase_rule(policy: &Policy) -> Option<(usize, f64, Severity)> {
    [
        TimelineMetric::BusyTime,
        TimelineMetric::ComputationTime,
        TimelineMetric::TotalTime,
    ]
    .iter()
    .find_map(|&metric| {
        policy
            .timeline
            .iter()
            .enumerate()
            .find_map(|(index, rule)| {
                let limit = rule
                    .max_regression_percent
                    .filter(|_| rule.metric == metric)?;
                Some((index, limit, rule.severity))
            })
    })
}

/// The findings of the per-phase rows: a phase whose GPU time per step grew
/// beyond the limit (raised to the noise floor and the measured noise).
pub(super) fn phase_findings(
    comparison: &Comparison,
    policy: &Policy,
    findings: &mut Vec<Finding>,
) {
    let Some((index, limit, severity)) = phase_rule(policy) else {
        return;
    };
    for row in &comparison.phases {
        let Some(delta) = row.delta_percent else {
            continue;
        };
        let noise = match (row.noise, row.step_spread) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        let floor = limit.max(policy.noise.noise_floor_percent);
        let effective = floor.max(noise.unwrap_or(0.0) * 100.0);
        if row.baseline_us < policy.noise.min_time_us || delta <= effective {
            continue;
        }
        let raised = if effective > floor {
            " (raised to the measured noise)"
        } else {
            ""
        };
        let mut finding = Finding {
            metric: row.metric.clone(),
            baseline: Some(row.baseline_us),
            candidate: Some(row.candidate_us),
            unit: "µs".to_string(),
            delta_percent: Some(delta),
            limit: Some(effective),
            priority: priority_of(delta),
            ..Finding::new(
                format!("timeline[{index}]"),
                severity,
                FindingKind::Timeline,
                comparison.workload.as_str(),
                format!(
                    "{} grew {delta:.1}% ({} → {} µs), above the {effective:.1}% limit{raised}",
                    row.metric,
                    round(row.baseline_us),
                    round(row.candidate_us)
                ),
            )
        };
        finding.statistics.limit_unit = Some("%".into());
        findings.push(finding);
    }
}
