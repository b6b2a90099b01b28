//! Judge: comparisons judged by a policy into a [`Verdict`].
//!
//! A regression needs three things at once (docs/POLICY.md): the whole
//! confidence interval of the slowdown beyond the effective threshold (the
//! largest of the policy's minimum effect, its noise floor and the noise the
//! baseline window measured), a material impact on total GPU time, and
//! survival of Benjamini–Hochberg false-discovery control across all rows
//! judged. The interval is a confidence interval only with 8 or more
//! samples a side, else the range over the samples; with a single sample on
//! a side there is none, and the finding warns instead of failing. A
//! confident slowdown below the impact minimum of an op holding a material
//! share of GPU time warns, and a point estimate beyond the threshold whose
//! bounds reach back inside it is `inconclusive`, with its minimum
//! detectable effect. Across platforms the same tests run against
//! each op's expected hardware ratio widened by the slack, or, where
//! history taught the op's ratio, against that learned ratio widened by
//! its run-to-run spread (`learned.rs`).
//!
//! A verdict is only as good as the rows it judges: when they hold less
//! than the policy's share of either side's GPU time, or a trace says it is
//! under-recorded, an integrity finding names the share and the cause, and
//! with severity `fail` the outcome is `inconclusive` (exit 1) unless a
//! failing finding makes it `fail`. Whole-graph rows (graph replay) are
//! judged for kernel selection, and for time only when their kernel
//! sequence changed (their time is the graph's other rows' time).
//!
//! # Files
//!
//! This file judges the workloads and assembles the verdict; `workload.rs`
//! walks one workload's comparison; `rows.rs` judges a matched row
//! statistically (same platform, across platforms) and applies the
//! false-discovery control; `families.rs` judges each kernel over all the
//! rows that launch it; `phase_ops.rs` each op within a phase; `learned.rs` judges a row against its learned
//! cross-platform ratio; `timeline.rs` the timeline rules; `end_to_end.rs`
//! the guard on the whole step's time and where it went; `limits.rs`
//! the efficiency floors and budgets; `integrity.rs` the coverage rule that
//! makes a verdict inconclusive; `findings.rs` builds findings;
//! `groups.rs` groups the final findings by op (one line per op, with its
//! advice); `summary.rs` the workload summaries and the headline;
//! `accept.rs` accepted regressions and warnings about policy entries that
//! did nothing.

mod accept;
mod end_to_end;
mod families;
mod findings;
mod groups;
mod integrity;
mod learned;
mod limits;
mod phase_ops;
mod rows;
mod summary;
#[cfg(test)]
pub(crate) mod tests;
mod timeline;
mod totals;
mod workload;

use crate::analysis::hardware::Hardware;
use crate::gate::compare::Comparison;
use crate::gate::policy::Policy;
use crate::gate::snapshot::Snapshot;
use crate::gate::verdict::{
    Counts, FindingGroup, FindingKind, Outcome, Severity, VERDICT_SCHEMA_MINOR,
    VERDICT_SCHEMA_VERSION, Verdict,
};

pub use accept::JudgeOptions;
use accept::{apply_accepts, unmatched_entries};
use findings::nothing_to_compare;
use groups::group_findings;
pub use groups::{per_of, shapes_text, summed_shapes};
use rows::false_discovery_control;
pub use rows::{SINGLE_SAMPLE_Z, at_call, one_call_noise, single_sample_z};
use summary::{headline, op_key_text, summary};
use workload::judge_workload;

/// One workload to judge.
// A handful of these exist per check; boxing the large variant buys nothing.
#[allow(clippy::large_enum_variant)]
pub enum Workload<'a> {
    /// Both sides present.
    Compared {
        /// The comparison.
        comparison: Comparison,
        /// The candidate snapshot (budgets and efficiency read it).
        candidate: &'a Snapshot,
        /// The baseline's hardware, when known.
        baseline_hardware: Option<Hardware>,
        /// The candidate's hardware, when known.
        candidate_hardware: Option<Hardware>,
    },
    /// Only the baseline has this workload.
    OnlyBaseline(String),
    /// Only the candidate has this workload.
    OnlyCandidate(String),
    /// The candidate has no baseline, for the reason given (no run of its
    /// workload in the history matches it): nothing to compare.
    NoBaseline {
        /// The workload.
        name: String,
        /// Why there is no baseline, one sentence.
        reason: String,
    },
}

/// The verdict's groups when they can be trusted, else the findings
/// grouped again without their matched rows (a report.json of schema minor
/// below 2, or one whose groups do not index its findings): the renderers'
/// one source of groups.
pub fn verdict_groups(verdict: &Verdict) -> Vec<FindingGroup> {
    let n = verdict.findings.len();
    let mut seen = vec![false; n];
    let sound = verdict.groups.iter().all(|g| {
        !g.findings.is_empty()
            && g.tags.len() == g.findings.len()
            && g.findings
                .iter()
                .all(|&i| i < n && !std::mem::replace(&mut seen[i], true))
    }) && seen.iter().all(|&s| s);
    if sound {
        verdict.groups.clone()
    } else {
        group_findings(
            &verdict.findings,
            &std::collections::HashMap::new(),
            &verdict.workloads,
        )
    }
}

/// Judges workloads by a policy (no `--accept` entries, no expiry dates
/// judged: see [`judge_with`]).
pub fn judge(workloads: &[Workload], policy: &Policy) -> Verdict {
    judge_with(workloads, policy, &JudgeOptions::default())
}

/// Judges workloads by a policy, with today's date (expiring `accept`
/// entries) and accept entries from the command line.
pub fn judge_with(workloads: &[Workload], policy: &Policy, options: &JudgeOptions) -> Verdict {
    let mut findings = Vec::new();
    let mut pending = Vec::new();
    let mut summaries = Vec::new();
    let mut counts = Counts::default();
    for workload in workloads {
        match workload {
            Workload::OnlyBaseline(name) | Workload::OnlyCandidate(name) => {
                let side = if matches!(workload, Workload::OnlyBaseline(_)) {
                    "baseline"
                } else {
                    "candidate"
                };
                findings.push(nothing_to_compare(
                    policy,
                    name,
                    format!("workload `{name}` exists only on the {side} side: nothing to compare it with"),
                ));
            }
            Workload::NoBaseline { name, reason } => {
                findings.push(nothing_to_compare(
                    policy,
                    name,
                    format!("workload `{name}`: {reason}: nothing to compare it with"),
                ));
            }
            Workload::Compared {
                comparison,
                candidate,
                baseline_hardware,
                candidate_hardware,
            } => {
                judge_workload(
                    comparison,
                    candidate,
                    baseline_hardware.as_ref(),
                    candidate_hardware.as_ref(),
                    policy,
                    &mut findings,
                    &mut pending,
                );
                counts.new += comparison.new_ops.len();
                counts.missing += comparison.missing_ops.len();
                summaries.push(summary(comparison));
            }
        }
    }
    findings.extend(false_discovery_control(
        pending,
        policy.noise.false_discovery_rate,
    ));
    findings.extend(options.findings.iter().cloned());
    apply_accepts(&mut findings, policy, options);
    findings.extend(unmatched_entries(workloads, policy, options));
    // Rows flagged only by findings that did not survive FDR count as unchanged.
    for summary in &mut summaries {
        let flagged: std::collections::BTreeSet<String> = findings
            .iter()
            .filter(|f| f.workload == summary.name && f.op.is_some())
            .filter(|f| {
                matches!(
                    f.kind,
                    FindingKind::Regression
                        | FindingKind::Improvement
                        | FindingKind::UnexpectedRatio
                        | FindingKind::KernelSelection
                )
            })
            .map(|f| op_key_text(f.op.as_ref().expect("filtered")))
            .collect();
        summary.unchanged = summary.matched.saturating_sub(flagged.len());
    }
    counts.unchanged = summaries.iter().map(|s| s.unchanged).sum();
    counts.regressions = findings
        .iter()
        .filter(|f| {
            f.severity == Severity::Fail
                && (([FindingKind::Regression, FindingKind::Collective].contains(&f.kind)
                    && !f.statistics.inconclusive)
                    || (f.kind == FindingKind::UnexpectedRatio
                        && (f.delta_percent.unwrap_or(0.0) > 0.0
                            || f.statistics.expected_learned.is_some())))
        })
        .count();
    counts.improvements = findings
        .iter()
        .filter(|f| f.kind == FindingKind::Improvement)
        .count();
    counts.warnings = findings
        .iter()
        .filter(|f| f.severity == Severity::Warn)
        .count();
    counts.failures = findings
        .iter()
        .filter(|f| f.severity == Severity::Fail)
        .count();
    counts.accepted = findings
        .iter()
        .filter(|f| f.severity == Severity::Accepted)
        .count();
    // A failing finding that doubts the data (integrity; a one-sample
    // change the noise of one call cannot confirm) makes the verdict
    // inconclusive, unless a confirmed one makes it fail.
    let failing = |doubt: bool| {
        findings.iter().any(|f| {
            f.severity == Severity::Fail
                && (f.kind == FindingKind::Integrity || f.statistics.inconclusive) == doubt
        })
    };
    let different = findings
        .iter()
        .any(|f| f.rule == integrity::DIFFERENT_WORKLOADS_RULE && f.severity == Severity::Fail);
    let outcome = if different {
        Outcome::DifferentWorkloads
    } else if failing(false) {
        Outcome::Fail
    } else if failing(true) {
        Outcome::Inconclusive
    } else {
        Outcome::Pass
    };
    let mut verdict = Verdict {
        schema_version: VERDICT_SCHEMA_VERSION,
        schema_minor: VERDICT_SCHEMA_MINOR,
        tracegate_version: env!("CARGO_PKG_VERSION").to_string(),
        outcome,
        headline: String::new(),
        counts,
        workloads: summaries,
        findings,
        groups: Vec::new(),
        policy: policy.label.clone(),
    };
    verdict.sort_findings();
    let mut rows = std::collections::HashMap::new();
    for workload in workloads {
        if let Workload::Compared { comparison, .. } = workload {
            for op in &comparison.ops {
                for side in [&op.baseline, &op.candidate] {
                    let key = (comparison.workload.clone(), op_key_text(&side.op_ref()));
                    rows.entry(key).or_insert(op);
                }
            }
        }
    }
    verdict.groups = group_findings(&verdict.findings, &rows, &verdict.workloads);
    verdict.counts.failing_groups = verdict
        .groups
        .iter()
        .filter(|g| g.severity == Severity::Fail && !g.inconclusive)
        .count();
    verdict.counts.inconclusive_groups = verdict
        .groups
        .iter()
        .filter(|g| g.severity == Severity::Fail && g.inconclusive)
        .count();
    verdict.counts.warning_groups = verdict
        .groups
        .iter()
        .filter(|g| g.severity == Severity::Warn)
        .count();
    verdict.headline = headline(&verdict);
    verdict
}
