//! Op rows per phase judged ([`Comparison::phase_ops`]): each op name
//! within prefill, decode or mixed steps, under the same statistical test
//! and impact minimum as a matched row, its finding naming the phase
//! (`aten::mm in decode steps is 30.0% slower per step …`). A slowdown in
//! one phase only is diluted in the run's rows by the other phase's calls.

use super::findings::{Pending, ignored};
use super::rows::judge_if_large_enough;
use super::totals::is_communication;
use crate::gate::compare::Comparison;
use crate::gate::policy::Policy;

/// Pending findings for the per-phase op rows of one workload (one
/// platform; across platforms the comparison has none).
pub(super) fn phase_op_findings(
    comparison: &Comparison,
    policy: &Policy,
    pending: &mut Vec<Pending>,
) {
    for row in &comparison.phase_ops {
        let op = &row.comparison;
        let side = &op.candidate;
        if is_communication(side) || ignored(policy, side) {
            continue;
        }
        if let Some(mut judged) = judge_if_large_enough(op, policy, comparison) {
            let phase = row.phase.as_str();
            let name = side.key.name.as_str();
            let rest = judged
                .finding
                .message
                .strip_prefix(name)
                .unwrap_or(&judged.finding.message)
                .replace(" per step", &format!(" per {phase} step"))
                .replace(" steps ", &format!(" {phase} steps "));
            judged.finding.message = format!("{name} in {phase} steps{rest}");
            judged.finding.metric = format!("op time per {phase} step");
            pending.push(judged);
        }
    }
}
