//! Op totals judged: an op's shapes summed per step ([`Comparison::op_totals`])
//! under the same statistical test as a matched row (across platforms: its
//! learned ratio, when history taught one), for ops that no row
//! of their own flagged (an op whose shapes change every step has no
//! matched row worth judging). Communication is left to the timeline's
//! exposed-communication rule (`workload.rs` says why).

use std::collections::BTreeSet;

use super::findings::{Pending, ignored};
use super::learned::judge_learned;
use super::rows::{judge_same_platform, one_call_noise};
use crate::analysis::ops::category::Category;
use crate::gate::compare::{Comparison, OpSide};
use crate::gate::policy::Policy;

/// Whether an op side is collective communication, whose kernel time is
/// mostly waiting for the other ranks and so not judged as compute.
pub(super) fn is_communication(side: &OpSide) -> bool {
    side.category == Category::Comm
}

/// Whether the comparison has a total for this row's op name and call
/// site: its new and missing shapes are judged there, not one by one.
pub(super) fn has_total(comparison: &Comparison, side: &OpSide) -> bool {
    comparison.op_totals.iter().any(|total| {
        total.candidate.key.name == side.key.name && total.candidate.module_path == side.module_path
    })
}

/// Pending findings for the op totals of one workload, leaving out names
/// in `flagged` (a row of theirs is already pending). Across platforms
/// only totals with a learned ratio are judged (a total has no perf model
/// for a hardware ratio).
pub(super) fn total_findings(
    comparison: &Comparison,
    policy: &Policy,
    flagged: &BTreeSet<&str>,
    pending: &mut Vec<Pending>,
) {
    let noise = &policy.noise;
    for total in &comparison.op_totals {
        let side = &total.candidate;
        if flagged.contains(side.key.name.as_str())
            || is_communication(side)
            || ignored(policy, side)
        {
            continue;
        }
        // A row's floor, scaled to a short trace as a row's is.
        if total.baseline.time_us.max(side.time_us)
            < noise.min_time_for(comparison.baseline_total_us)
        {
            continue;
        }
        let judged = if comparison.cross_platform {
            judge_learned(total, policy, &comparison.workload, comparison)
        } else {
            let threshold_percent = noise.threshold_percent(total.noise.map(|n| n * 100.0));
            judge_same_platform(
                total,
                policy,
                &comparison.workload,
                threshold_percent,
                one_call_noise(comparison, policy),
            )
        };
        pending.extend(judged);
    }
}
