//! What the verdict says besides findings: each workload's summary and the
//! one-line headline.

use crate::gate::compare::Comparison;
use crate::gate::verdict::{OpRef, Outcome, TimelineRow, Verdict, WorkloadSummary};

/// The key that tells one op row of a workload from another.
pub(super) fn op_key_text(op: &OpRef) -> String {
    format!(
        "{}|{}|{}|{}",
        op.name, op.input_dims, op.input_type, op.input_strides
    )
}

/// The verdict in one line: the outcome, counts and the top finding.
pub(super) fn headline(verdict: &Verdict) -> String {
    let c = &verdict.counts;
    let top = verdict
        .findings
        .first()
        .map(|f| f.message.clone())
        .unwrap_or_default();
    match verdict.outcome {
        Outcome::Fail => format!(
            "❌ tracegate: {} failing finding{} ({} regression{}): {top}",
            c.failures,
            plural(c.failures),
            c.regressions,
            plural(c.regressions)
        ),
        Outcome::Pass if c.warnings > 0 => {
            format!(
                "⚠️ tracegate: passed with {} warning{}: {top}",
                c.warnings,
                plural(c.warnings)
            )
        }
        Outcome::Pass if c.accepted > 0 => format!(
            "☑️ tracegate: passed with {} accepted finding{}: {top}",
            c.accepted,
            plural(c.accepted)
        ),
        Outcome::Pass => format!(
            "✅ tracegate: no regressions ({} ops unchanged)",
            c.unchanged
        ),
        Outcome::Inconclusive => format!("❔ tracegate: {top}"),
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The workload's summary; `unchanged` is filled in once findings are final.
pub(super) fn summary(comparison: &Comparison) -> WorkloadSummary {
    let baseline = comparison
        .baseline_fingerprints
        .last()
        .map(|f| f.summary(comparison.baseline_runs))
        .unwrap_or_default();
    let timeline = comparison
        .timeline
        .iter()
        .filter(|t| {
            matches!(
                t.metric.as_str(),
                "total_time"
                    | "busy_time"
                    | "idle_time"
                    | "computation_time"
                    | "exposed_comm_time"
                    | "exposed_memcpy_time"
            )
        })
        .map(|t| TimelineRow {
            metric: t.metric.clone(),
            baseline_us: t.baseline_us,
            candidate_us: t.candidate_us,
            delta_percent: t.delta_percent,
        })
        .collect();
    WorkloadSummary {
        name: comparison.workload.clone(),
        baseline,
        candidate: comparison.candidate_fingerprint.summary(1),
        cross_platform: comparison.cross_platform,
        timeline,
        matched: comparison.ops.len(),
        unchanged: comparison.ops.len(),
        notes: comparison.notes.clone(),
    }
}
