//! Limits on the candidate itself: roofline-efficiency floors per
//! category (where the hardware is known) and per-op budgets.

use super::findings::{ignored, op_finding, round, short_op};
use crate::analysis::hardware::Hardware;
use crate::analysis::ops::stats::percent;
use crate::gate::compare::{Comparison, OpComparison, OpSide};
use crate::gate::policy::Policy;
use crate::gate::snapshot::Snapshot;
use crate::gate::verdict::{Finding, FindingKind, FindingPriority, Per};

/// Candidate rows as comparison sides (for budgets and efficiency).
fn candidate_sides(comparison: &Comparison) -> Vec<&OpSide> {
    comparison
        .ops
        .iter()
        .map(|o| &o.candidate)
        .chain(comparison.shape_changed.iter().map(|s| &s.candidate))
        .chain(comparison.new_ops.iter())
        .filter(|side| !side.is_whole_graph())
        .collect()
}

/// Rows of a category below its efficiency floor.
pub(super) fn efficiency_findings(
    comparison: &Comparison,
    candidate: &Snapshot,
    hardware: Option<&Hardware>,
    policy: &Policy,
    findings: &mut Vec<Finding>,
) {
    let Some(hardware) = hardware else { return };
    let busy = candidate.timeline.busy_time;
    for (index, rule) in policy.efficiency.iter().enumerate() {
        for side in candidate_sides(comparison) {
            if side.category != rule.category || ignored(policy, side) {
                continue;
            }
            let Some(model) = &side.model else { continue };
            let spec = model.compute_spec;
            let roofline = match spec {
                Some(spec) => hardware.roofline_time_us(model.flops, model.bytes, spec),
                None => (model.flops == 0.0).then(|| model.bytes / (hardware.hbm_tb_s * 1e6)),
            };
            let Some(roofline) = roofline else { continue };
            let share_of_busy = percent(side.total_us, busy);
            if side.median_us <= 0.0 || share_of_busy < rule.min_share_percent {
                continue;
            }
            let efficiency = roofline / side.median_us * 100.0;
            if efficiency < rule.min_percent {
                let mut finding = op_finding(
                    &format!("efficiency[{index}]"),
                    rule.severity,
                    FindingKind::Efficiency,
                    &comparison.workload,
                    side,
                    format!(
                        "{} runs at {efficiency:.1}% of its roofline on {} ({:.1}% of GPU time), below the {:.0}% floor for {}",
                        short_op(side),
                        hardware.name,
                        share_of_busy,
                        rule.min_percent,
                        rule.category
                    ),
                );
                finding.metric = "efficiency (% of roofline)".into();
                finding.unit = "%".into();
                finding.candidate = Some(efficiency);
                finding.limit = Some(rule.min_percent);
                finding.statistics.limit_unit = Some("%".into());
                // Where to optimise, not something a change broke.
                finding.priority = if share_of_busy >= 15.0 {
                    FindingPriority::Medium
                } else {
                    FindingPriority::Low
                };
                findings.push(finding);
            }
        }
    }
}

/// Budgets the rows they match exceed together.
pub(super) fn budget_findings(
    comparison: &Comparison,
    candidate: &Snapshot,
    policy: &Policy,
    findings: &mut Vec<Finding>,
) {
    let steps = candidate.steps.len().max(1) as f64;
    let busy = candidate.timeline.busy_time;
    for (index, budget) in policy.budgets.iter().enumerate() {
        let rule = format!("budgets[{index}]");
        let label = budget.label.clone().unwrap_or_else(|| rule.clone());
        // A budget covers every row it matches, summed (docs/POLICY.md).
        let matches = |side: &OpSide| {
            !ignored(policy, side)
                && budget.matcher.matches(
                    &side.key.name,
                    side.category.as_str(),
                    &side.key.input_dims,
                    side.module_path.as_deref(),
                )
        };
        let sides: Vec<&OpSide> = candidate_sides(comparison)
            .into_iter()
            .filter(|s| matches(s))
            .collect();
        let Some(first) = sides.first() else { continue };
        let total_us: f64 = sides.iter().map(|s| s.total_us).sum();
        let calls: f64 = sides.iter().map(|s| s.count as f64).sum();
        let what = if sides.len() == 1 {
            short_op(first)
        } else {
            format!("{} rows matching `{label}`", sides.len())
        };
        let mut check = |metric: &str, value: f64, limit: f64, unit: &str| {
            if value > limit {
                let mut finding = op_finding(
                    &rule,
                    budget.severity,
                    FindingKind::Budget,
                    &comparison.workload,
                    first,
                    format!(
                        "{what}: {metric} {} {unit} exceeds budget `{label}` ({} {unit})",
                        round(value),
                        round(limit)
                    ),
                );
                finding.metric = metric.to_string();
                finding.unit = unit.to_string();
                finding.candidate = Some(value);
                finding.limit = Some(limit);
                finding.statistics.limit_unit = Some(unit.to_string());
                if unit == "µs" {
                    finding.statistics.per = Some(Per::Step);
                }
                finding.priority = FindingPriority::High;
                findings.push(finding);
            }
        };
        if let Some(limit) = budget.max_time_per_step_us {
            check("time per step", total_us / steps, limit, "µs");
        }
        if let Some(limit) = budget.max_share_percent {
            check("share of GPU time", percent(total_us, busy), limit, "%");
        }
        if let Some(limit) = budget.max_count {
            check("calls per step", calls / steps, limit as f64, "calls");
        }
        if let Some(limit) = budget.max_regression_percent {
            let matched: Vec<&OpComparison> = comparison
                .ops
                .iter()
                .filter(|o| !o.candidate.is_whole_graph() && matches(&o.candidate))
                .collect();
            let before: f64 = matched.iter().map(|o| o.baseline.time_us).sum();
            let after: f64 = matched.iter().map(|o| o.candidate.time_us).sum();
            if before > 0.0 {
                let limit = policy.noise.raise(limit, None);
                check("regression", (after / before - 1.0) * 100.0, limit, "%");
            }
        }
    }
}
