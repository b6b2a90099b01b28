//! Kernel families judged: each kernel name several rows launch, over all
//! its launches ([`Comparison::kernel_families`]), under the same
//! statistical test and impact minimum as a matched row. A kernel slowed
//! in every row that launches it, each row adding less than the impact
//! minimum, fails here with the kernel named.
//!
//! A family that one pending failing row (or kernel part) already
//! explains — a row launching the kernel that adds at least half the
//! family's added time — is not reported again: the row's finding names
//! where the time went more precisely.

use super::findings::{Pending, short_op};
use super::rows::judge_same_platform;
use super::totals::is_communication;
use crate::gate::compare::{Comparison, OpComparison};
use crate::gate::policy::Policy;
use crate::gate::verdict::Severity;

/// Pending findings for the kernel families of one workload (one platform;
/// across platforms the comparison has none), given the findings already
/// pending for its rows.
pub(super) fn family_findings(
    comparison: &Comparison,
    policy: &Policy,
    pending: &mut Vec<Pending>,
) {
    let noise = &policy.noise;
    let mut found = Vec::new();
    for family in &comparison.kernel_families {
        let side = &family.candidate;
        if is_communication(side) || explained(comparison, family, pending) {
            continue;
        }
        let too_small = family.baseline.time_us.max(side.time_us)
            < noise.min_time_for(comparison.baseline_total_us);
        if too_small {
            continue;
        }
        let threshold_percent = noise.threshold_percent(family.noise.map(|n| n * 100.0));
        if let Some(mut judged) =
            judge_same_platform(family, policy, &comparison.workload, threshold_percent)
        {
            let name = short_op(side);
            let rest = judged
                .finding
                .message
                .strip_prefix(name.as_str())
                .unwrap_or(&judged.finding.message)
                .replace(" per call", " per launch")
                .replace(" calls ", " launches ");
            judged.finding.message = format!(
                "kernel {name}, all its {} launches over the rows that launch it,{rest}",
                side.count
            );
            judged.finding.metric = "median kernel time per launch, kernel family".into();
            found.push(judged);
        }
    }
    pending.append(&mut found);
}

/// Whether a pending failing finding about one row that launches the
/// family holds at least half of the family's added time.
fn explained(comparison: &Comparison, family: &OpComparison, pending: &[Pending]) -> bool {
    let kernel = family.candidate.key.name.as_str();
    let launches = |op: &OpComparison| {
        op.candidate.kernel_sequence.iter().any(|k| k == kernel)
            || op.candidate.kernel_us.iter().any(|(k, _)| k == kernel)
    };
    let rows = comparison.ops.iter().filter(|op| launches(op)).chain(
        comparison
            .kernel_parts
            .iter()
            .filter(|part| part.kernel == kernel)
            .map(|part| &part.comparison),
    );
    let half = family.impact_percent / 2.0;
    rows.filter(|op| op.impact_percent >= half)
        .any(|op| {
            let row = op.candidate.op_ref();
            pending.iter().any(|p| {
                p.finding.severity == Severity::Fail && p.finding.op.as_ref() == Some(&row)
            })
        })
}
