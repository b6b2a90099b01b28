//! Kernel families judged: each kernel name several rows launch, over all
//! its launches ([`Comparison::kernel_families`]), under the same
//! statistical test and impact minimum as a matched row. A kernel slowed
//! in every row that launches it, each row adding less than the impact
//! minimum, fails here with the kernel named.
//!
//! Only a confident change of at least the impact minimum is reported (no
//! warnings below it, nothing inconclusive: the rows say those). A family
//! that failing findings about the ops launching the kernel already
//! explain — adding at least half the family's added time together — is
//! not reported again: those findings say where the time went.

use std::collections::BTreeSet;

use super::findings::{Pending, short_op};
use super::rows::judge_if_large_enough;
use super::totals::is_communication;
use crate::gate::compare::{Comparison, OpComparison, OpSide};
use crate::gate::policy::Policy;
use crate::gate::snapshot::OpKey;
use crate::gate::verdict::Severity;

/// Pending findings for the kernel families of one workload (one platform;
/// across platforms the comparison has none), given the findings already
/// pending for its rows.
pub(super) fn family_findings(
    comparison: &Comparison,
    policy: &Policy,
    pending: &mut Vec<Pending>,
) {
    let mut found = Vec::new();
    for family in &comparison.kernel_families {
        let side = &family.candidate;
        if is_communication(side) || explained(comparison, family, pending) {
            continue;
        }
        // Only a family's own material change is reported: below the
        // impact minimum its rows name their slowdowns themselves.
        if family.impact_percent.abs() < policy.noise.min_impact_percent {
            continue;
        }
        // Confident findings only: launches of several shapes pooled give
        // a median that moves with which launch sits in the middle, and
        // an inconclusive one would only echo that.
        let judged = judge_if_large_enough(family, policy, comparison)
            .filter(|judged| !judged.finding.statistics.inconclusive);
        if let Some(mut judged) = judged {
            let kernel = short_op(side);
            let rest = per_launch_words(&judged.finding.message, &kernel);
            let launches = side.count;
            judged.finding.message = match only_op(comparison, &kernel) {
                // One op launches it: the finding is about that op.
                Some(op) => {
                    judged.finding.op = Some(op.op_ref());
                    format!(
                        "{}: its kernel {kernel}, all its {launches} launches over the op's rows,{rest}",
                        op.key.name
                    )
                }
                None => format!(
                    "kernel {kernel}, all its {launches} launches over the rows that launch it,{rest}"
                ),
            };
            judged.finding.metric = "median kernel time per launch, kernel family".into();
            found.push(judged);
        }
    }
    pending.append(&mut found);
}

/// A row finding's message after its `subject`, in launches: the samples
/// of kernel parts and families are launches of a kernel, not calls.
pub(super) fn per_launch_words(message: &str, subject: &str) -> String {
    message
        .strip_prefix(subject)
        .unwrap_or(message)
        .replace(" per call", " per launch")
        .replace("one call a side", "one launch a side")
        .replace(" calls ", " launches ")
}

/// The op rows (candidate sides of matched rows) that launch `kernel`.
fn launching_rows<'a>(
    comparison: &'a Comparison,
    kernel: &'a str,
) -> impl Iterator<Item = &'a OpComparison> {
    let launches = move |op: &&OpComparison| {
        op.candidate.kernel_sequence.iter().any(|k| k == kernel)
            || op.candidate.kernel_us.iter().any(|(k, _)| k == kernel)
    };
    comparison.ops.iter().filter(launches).chain(
        comparison
            .kernel_parts
            .iter()
            .filter(move |part| part.kernel == kernel)
            .map(|part| &part.comparison),
    )
}

/// The op launching `kernel` when one op name launches it (its rows of
/// several shapes all under one name), as a side without shape; `None`
/// when several ops or none do.
fn only_op(comparison: &Comparison, kernel: &str) -> Option<OpSide> {
    let mut rows = launching_rows(comparison, kernel);
    let first = rows.next()?;
    let name = &first.candidate.key.name;
    if rows.any(|op| op.candidate.key.name != *name) {
        return None;
    }
    let mut side = first.candidate.clone();
    side.key = OpKey {
        name: name.clone(),
        ..OpKey::default()
    };
    side.graph = None;
    side.module_path = None;
    Some(side)
}

/// Whether the pending failing findings about ops that launch the family —
/// their rows, kernels of their rows, their shapes together or their
/// totals — hold at least half of the family's added time together.
fn explained(comparison: &Comparison, family: &OpComparison, pending: &[Pending]) -> bool {
    let kernel = family.candidate.key.name.as_str();
    let ops: BTreeSet<&str> = launching_rows(comparison, kernel)
        .map(|op| op.candidate.key.name.as_str())
        .collect();
    let held: f64 = pending
        .iter()
        .filter(|p| p.finding.severity == Severity::Fail)
        .filter(|p| {
            p.finding
                .op
                .as_ref()
                .is_some_and(|op| ops.contains(op.name.as_str()))
        })
        .filter_map(|p| p.finding.impact_percent)
        .map(f64::abs)
        .sum();
    held >= family.impact_percent.abs() / 2.0
}
