//! One workload's comparison walked rule by rule: kernel selection and the
//! statistical tests per matched row, the kernels of rows whose calls
//! launch different kernels, slowdowns spread over an op's shapes, kernels
//! spread over rows, ops within a phase, shape changes, new and missing
//! ops, then the timeline, efficiency and budget rules.

use super::end_to_end::end_to_end_finding;
use super::families::{family_findings, per_launch_words};
use super::findings::{
    Pending, ignored, nothing_to_compare, op_finding, priority_of, set_sample_figures, short_op,
    summed_rows, time_per,
};
use super::integrity::{different_workloads, integrity_findings};
use super::learned::{is_learned, judge_learned, judge_risen_rows, risen_impact};
use super::limits::{budget_findings, efficiency_findings};
use super::phase_ops::phase_op_findings;
use super::rows::{
    judge_cross_platform, judge_if_large_enough, judge_same_platform, one_call_noise,
};
use super::timeline::{phase_findings, timeline_findings};
use super::totals::{has_total, is_communication, total_findings};
use crate::analysis::hardware::Hardware;
use crate::analysis::ops::stats::{median_in_place, percent};
use crate::gate::compare::{Comparison, OpComparison};
use crate::gate::policy::Policy;
use crate::gate::snapshot::{OpKey, Snapshot};
use crate::gate::verdict::{Finding, FindingKind, FindingPriority, Severity};

/// Judges one workload.
pub(super) fn judge_workload(
    comparison: &Comparison,
    candidate: &Snapshot,
    baseline_hardware: Option<&Hardware>,
    candidate_hardware: Option<&Hardware>,
    policy: &Policy,
    findings: &mut Vec<Finding>,
    pending: &mut Vec<Pending>,
) {
    let workload = comparison.workload.as_str();
    if let Some(finding) = different_workloads(comparison, policy) {
        findings.push(finding);
        return;
    }
    if let Some(reason) = &comparison.nothing_to_compare {
        findings.push(nothing_to_compare(
            policy,
            workload,
            format!("`{workload}`: {reason}"),
        ));
    }
    let noise = &policy.noise;
    let per = time_per(comparison);
    // Confidently slower rows by op name, each with the index in `pending`
    // of the warning it got on its own (a weighty row below the impact
    // minimum): judged as one op, the op's finding replaces those.
    let mut slower_by_name: std::collections::BTreeMap<&str, Vec<(&OpComparison, Option<usize>)>> =
        std::collections::BTreeMap::new();
    // Rows launching other kernels, by op name (graph rows apart): one
    // finding per op, however many of its shapes changed.
    let mut selections: std::collections::BTreeMap<(&str, bool), Vec<&OpComparison>> =
        std::collections::BTreeMap::new();
    // Names with a row finding pending that rests on bounds: their op
    // total is not judged again.
    let mut flagged: std::collections::BTreeSet<&str> = std::collections::BTreeSet::new();
    // Across platforms, learned rows whose ratio rose beyond its tolerance
    // but each below the impact minimum, by op name, with their impacts.
    let mut risen_by_name: std::collections::BTreeMap<&str, Vec<(&OpComparison, f64)>> =
        std::collections::BTreeMap::new();
    // Rows failing on their own: their kernel parts are not judged again.
    let mut failing_rows: std::collections::BTreeSet<&OpKey> = std::collections::BTreeSet::new();
    for op in &comparison.ops {
        let side = &op.candidate;
        if policy.is_ignored(
            &side.key.name,
            side.category.as_str(),
            &side.key.input_dims,
            side.module_path.as_deref(),
        ) {
            continue;
        }
        if op.kernel_diff.is_some() {
            selections
                .entry((side.key.name.as_str(), side.graph.is_some()))
                .or_default()
                .push(op);
        }
        // A whole graph's time is its rows' time: judged only when its kernel
        // sequence changed, and so its rows could not be compared one by one.
        if op.candidate.is_whole_graph() && op.kernel_diff.is_none() {
            continue;
        }
        // A collective's kernel time is mostly waiting for the other ranks:
        // the timeline's exposed-communication rule judges communication.
        if is_communication(side) {
            continue;
        }
        let threshold_percent = noise.threshold_percent(op.noise.map(|n| n * 100.0));
        let too_small = op.baseline.time_us.max(op.candidate.time_us)
            < noise.min_time_for(comparison.baseline_total_us);
        let confidently_slower = op
            .estimate
            .bounds()
            .is_some_and(|b| b.interval.low > 1.0 + threshold_percent / 100.0);
        if !too_small {
            let judged = if comparison.cross_platform && is_learned(op) {
                judge_learned(op, policy, workload, comparison)
            } else if comparison.cross_platform {
                judge_cross_platform(
                    op,
                    policy,
                    baseline_hardware,
                    candidate_hardware,
                    workload,
                    threshold_percent,
                    comparison.baseline_total_us,
                )
            } else {
                judge_same_platform(
                    op,
                    policy,
                    workload,
                    threshold_percent,
                    one_call_noise(comparison, policy),
                )
            };
            if let Some(judged) = judged {
                // A row with one sample on a side cannot fail on its own
                // (unless judged against the noise of one call): its op's total
                // (several shapes, or per step) is still judged, and may
                // hold the evidence the row lacks.
                if op.estimate.bounds().is_some() || judged.one_call_noise {
                    flagged.insert(side.key.name.as_str());
                }
                if judged.finding.severity == Severity::Fail {
                    failing_rows.insert(&side.key);
                } else if !comparison.cross_platform
                    && confidently_slower
                    && judged.finding.kind == FindingKind::Regression
                {
                    slower_by_name
                        .entry(side.key.name.as_str())
                        .or_default()
                        .push((op, Some(pending.len())));
                }
                pending.push(judged);
                continue;
            }
        }
        if comparison.cross_platform {
            if let Some(impact) = risen_impact(op, policy, comparison).filter(|_| !too_small) {
                risen_by_name
                    .entry(side.key.name.as_str())
                    .or_default()
                    .push((op, impact));
            }
        } else if confidently_slower && op.impact_percent > 0.0 {
            slower_by_name
                .entry(op.candidate.key.name.as_str())
                .or_default()
                .push((op, None));
        }
    }
    kernel_part_findings(comparison, policy, &failing_rows, pending);
    for ((_, in_graph), rows) in selections {
        if in_graph {
            for op in rows {
                findings.push(kernel_selection_finding(comparison, policy, &[op]));
            }
        } else {
            findings.push(kernel_selection_finding(comparison, policy, &rows));
        }
    }
    // A slowdown spread over many shapes of one op (a library regression
    // hitting every GEMM, say) can add up although each shape stays under
    // the impact minimum: judge the op's confidently slower rows together,
    // as one op, its shapes' own warnings replaced by the op's finding.
    let mut replaced = std::collections::BTreeSet::new();
    for (name, rows) in slower_by_name {
        let impact: f64 = rows.iter().map(|(op, _)| op.impact_percent).sum();
        if rows.len() < 2 || impact < noise.min_impact_percent {
            continue;
        }
        flagged.insert(name);
        replaced.extend(rows.iter().filter_map(|(_, index)| *index));
        let rows: Vec<&OpComparison> = rows.into_iter().map(|(op, _)| op).collect();
        let mut ratios: Vec<f64> = rows.iter().map(|op| op.estimate.ratio).collect();
        let median_ratio = median_in_place(&mut ratios);
        let shapes = comparison
            .ops
            .iter()
            .filter(|op| op.candidate.key.name == name)
            .count();
        let mut finding = op_finding(
            "regression",
            policy.regression.severity,
            FindingKind::Regression,
            workload,
            &rows[0].candidate,
            format!(
                "{name} is slower in {} of its {shapes} shapes (median {:+.1}%, each beyond the threshold with confidence), {impact:+.2}% of total GPU time together",
                rows.len(),
                (median_ratio - 1.0) * 100.0
            ),
        );
        summed_rows(&mut finding, rows.len(), Some(per));
        finding.baseline = Some(rows.iter().map(|op| op.baseline.time_us).sum());
        finding.candidate = Some(rows.iter().map(|op| op.candidate.time_us).sum());
        finding.delta_percent = Some((median_ratio - 1.0) * 100.0);
        finding.impact_percent = Some(impact);
        finding.priority = priority_of(impact);
        // Every row must be slower for the group to be: the largest p-value
        // is the group's (an intersection–union test).
        let p_value = rows
            .iter()
            .filter_map(|op| {
                op.estimate
                    .p_value_above(1.0 + noise.min_effect_percent / 100.0)
            })
            .fold(0.0, f64::max);
        pending.push(Pending {
            finding,
            p_value,
            one_call_noise: false,
        });
    }
    let mut index = 0;
    pending.retain(|_| {
        index += 1;
        !replaced.contains(&(index - 1))
    });
    // Likewise across platforms: an op whose ratio rose in many shapes.
    for (name, rows) in risen_by_name {
        if let Some(judged) = judge_risen_rows(name, &rows, policy, comparison) {
            flagged.insert(name);
            pending.push(judged);
        }
    }
    total_findings(comparison, policy, &flagged, pending);
    family_findings(comparison, policy, pending);
    phase_op_findings(comparison, policy, pending);
    for change in &comparison.shape_changed {
        let mut finding = op_finding(
            "shape_changed",
            policy.shape_changed.severity,
            FindingKind::ShapeChanged,
            workload,
            &change.candidate,
            format!(
                "{} now runs with {} (was {})",
                change.candidate.key.name,
                change.candidate.key.input_dims,
                change.baseline.key.input_dims
            ),
        );
        finding.metric = format!("kernel time per {}", per.as_str());
        finding.statistics.per = Some(per);
        finding.baseline = Some(change.baseline.time_us);
        finding.candidate = Some(change.candidate.time_us);
        finding.impact_percent = Some(change.impact_percent);
        finding.priority = priority_of(change.impact_percent);
        finding.kernel_diff = change.kernel_diff.clone();
        findings.push(finding);
    }
    let total = comparison.baseline_total_us;
    for side in &comparison.new_ops {
        let share = percent(side.time_us, comparison.candidate_total_us);
        if share >= policy.new_ops.min_share_percent
            && !ignored(policy, side)
            && !has_total(comparison, side)
        {
            let mut finding = op_finding(
                "new_ops",
                policy.new_ops.severity,
                FindingKind::NewOp,
                workload,
                side,
                format!(
                    "new op {}: {:.1}% of the candidate's GPU time",
                    short_op(side),
                    share
                ),
            );
            finding.metric = format!("kernel time per {}", per.as_str());
            finding.statistics.per = Some(per);
            finding.candidate = Some(side.time_us);
            finding.impact_percent = Some(percent(side.time_us, total));
            finding.priority = priority_of(share);
            findings.push(finding);
        }
    }
    for side in &comparison.missing_ops {
        let share = percent(side.time_us, total);
        if share >= policy.missing_ops.min_share_percent
            && !ignored(policy, side)
            && !has_total(comparison, side)
        {
            let mut finding = op_finding(
                "missing_ops",
                policy.missing_ops.severity,
                FindingKind::MissingOp,
                workload,
                side,
                format!(
                    "op {} is gone: it was {:.1}% of the baseline's GPU time",
                    short_op(side),
                    share
                ),
            );
            finding.metric = format!("kernel time per {}", per.as_str());
            finding.statistics.per = Some(per);
            finding.baseline = Some(side.time_us);
            finding.impact_percent = Some(-share);
            finding.priority = priority_of(share);
            findings.push(finding);
        }
    }
    integrity_findings(comparison, policy, findings);
    timeline_findings(comparison, policy, findings);
    findings.extend(end_to_end_finding(comparison, policy));
    phase_findings(comparison, policy, findings);
    efficiency_findings(comparison, candidate, candidate_hardware, policy, findings);
    budget_findings(comparison, candidate, policy, findings);
}

/// Pending findings for the kernels of rows whose calls launch different
/// kernels ([`Comparison::kernel_parts`]), each over its own launches, on
/// one platform, for rows not already failing on their own: the finding
/// is about the row, its message names the kernel.
fn kernel_part_findings(
    comparison: &Comparison,
    policy: &Policy,
    failing_rows: &std::collections::BTreeSet<&OpKey>,
    pending: &mut Vec<Pending>,
) {
    for part in &comparison.kernel_parts {
        let op = &part.comparison;
        let side = &op.candidate;
        if failing_rows.contains(&side.key) || ignored(policy, side) || is_communication(side) {
            continue;
        }
        if let Some(mut judged) = judge_if_large_enough(op, policy, comparison) {
            let row = short_op(side);
            let rest = per_launch_words(&judged.finding.message, &row);
            judged.finding.message = format!("{row}: its kernel {}{rest}", part.kernel);
            judged.finding.metric = "median kernel time per launch".into();
            pending.push(judged);
        }
    }
}

/// One kernel-selection finding for `rows` (one op's rows whose kernels
/// changed, not empty): the diff of the row with the largest impact, the
/// impact of all of them.
fn kernel_selection_finding(
    comparison: &Comparison,
    policy: &Policy,
    rows: &[&OpComparison],
) -> Finding {
    let op = rows
        .iter()
        .copied()
        .max_by(|a, b| a.impact_percent.abs().total_cmp(&b.impact_percent.abs()))
        .expect("one row at least");
    let side = &op.candidate;
    let message = match &side.graph {
        Some(graph) if side.is_whole_graph() => format!(
            "the kernels {} replays changed: {}",
            graph.describe().trim_start_matches("in "),
            kernel_changes(&op.baseline.kernel_sequence, &side.kernel_sequence)
        ),
        _ if rows.len() > 1 => {
            let shapes = comparison
                .ops
                .iter()
                .filter(|o| o.candidate.key.name == side.key.name && o.candidate.graph.is_none())
                .count();
            format!(
                "{}: the kernels it launches changed in {} of its {shapes} shapes ({})",
                side.key.name,
                rows.len(),
                kernel_changes(&op.baseline.kernel_sequence, &side.kernel_sequence)
            )
        }
        _ => format!("{}: the kernels it launches changed", short_op(side)),
    };
    let mut finding = op_finding(
        "kernel_selection",
        policy.kernel_selection_severity(comparison.cross_platform),
        FindingKind::KernelSelection,
        &comparison.workload,
        side,
        message,
    );
    finding.kernel_diff = op.kernel_diff.clone();
    set_sample_figures(&mut finding, op);
    let impact: f64 = rows.iter().map(|o| o.impact_percent).sum();
    if rows.len() > 1 {
        summed_rows(&mut finding, rows.len(), None);
    }
    finding.impact_percent = Some(impact);
    // At least medium: a changed kernel choice matters even at equal time.
    finding.priority = priority_of(impact).min(FindingPriority::Medium);
    finding
}

/// The kernels one sequence has and the other lacks, in words:
/// `−old_kernel, +new_kernel` (at most three of each, in order).
pub(super) fn kernel_changes(baseline: &[String], candidate: &[String]) -> String {
    let lacking = |from: &[String], other: &[String]| -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for name in from {
            if !other.contains(name) && !names.contains(name) {
                names.push(name.clone());
            }
        }
        names
    };
    let (gone, added) = (lacking(baseline, candidate), lacking(candidate, baseline));
    let mut parts: Vec<String> = gone.iter().take(3).map(|n| format!("−{n}")).collect();
    parts.extend(added.iter().take(3).map(|n| format!("+{n}")));
    let more = gone.len().saturating_sub(3) + added.len().saturating_sub(3);
    if more > 0 {
        parts.push(format!("{more} more"));
    }
    if parts.is_empty() {
        "the same kernels in another order or number".to_string()
    } else {
        parts.join(", ")
    }
}
