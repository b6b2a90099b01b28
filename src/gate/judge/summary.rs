//! What the verdict says besides findings: each workload's summary and the
//! one-line headline.

use crate::gate::compare::Comparison;
use crate::gate::verdict::{
    FindingGroup, FindingKind, OpRef, Outcome, Severity, TimelineRow, Verdict, WorkloadSummary,
};

/// The key that tells one op row of a workload from another.
pub(super) fn op_key_text(op: &OpRef) -> String {
    format!(
        "{}|{}|{}|{}",
        op.name, op.input_dims, op.input_type, op.input_strides
    )
}

/// The verdict in one line: the outcome, how many lines (groups) fail or
/// warn, and the most important of them, each naming its workload when there
/// are several. Kept under about 120 characters: it is also the Action's
/// `headline` output.
pub(super) fn headline(verdict: &Verdict) -> String {
    let c = &verdict.counts;
    let multi = verdict.workloads.len() > 1;
    let listed = |shown: &dyn Fn(&FindingGroup) -> bool| {
        let mut text = String::new();
        let matching: Vec<&FindingGroup> = verdict.groups.iter().filter(|g| shown(g)).collect();
        for (i, group) in matching.iter().enumerate() {
            let item = brief(group, multi);
            if i > 0 && text.chars().count() + item.chars().count() > HEADLINE_ROOM {
                text.push_str(&format!(", {} more", matching.len() - i));
                break;
            }
            if i > 0 {
                text.push_str(", ");
            }
            text.push_str(&item);
        }
        text
    };
    match verdict.outcome {
        Outcome::Fail => format!(
            "❌ tracegate: {} failing: {}",
            c.failing_groups,
            listed(&|g| g.severity == Severity::Fail && !g.inconclusive)
        ),
        Outcome::Pass if c.warning_groups > 0 => format!(
            "⚠️ tracegate: passed with {} warning{}: {}",
            c.warning_groups,
            plural(c.warning_groups),
            listed(&|g| g.severity == Severity::Warn)
        ),
        Outcome::Pass if c.accepted > 0 => format!(
            "☑️ tracegate: passed with {} accepted finding{}: {}",
            c.accepted,
            plural(c.accepted),
            listed(&|g| g.severity == Severity::Accepted)
        ),
        Outcome::Pass => format!(
            "✅ tracegate: no regressions ({} op row{} unchanged)",
            c.unchanged,
            plural(c.unchanged)
        ),
        Outcome::Inconclusive if c.inconclusive_groups > 0 => format!(
            "❔ tracegate: inconclusive · {} unconfirmed: {}",
            c.inconclusive_groups,
            listed(&|g| g.inconclusive)
        ),
        Outcome::DifferentWorkloads => {
            let finding = verdict
                .findings
                .iter()
                .find(|f| f.rule == super::integrity::DIFFERENT_WORKLOADS_RULE);
            // "these look like different workloads (2 of 4 ops matched)":
            // the first parenthesis after the words, not one in the
            // workload's name before them.
            let what = finding.map_or("", |f| {
                let message = f.message.as_str();
                let rest = &message[message.find("these look").unwrap_or(0)..];
                rest.find(')').map_or(rest, |i| &rest[..=i])
            });
            format!("❔ tracegate: {what}")
        }
        Outcome::Inconclusive => {
            let top = verdict
                .findings
                .first()
                .map(|f| f.message.clone())
                .unwrap_or_default();
            format!("❔ tracegate: {top}")
        }
    }
}

/// Room for the listed groups in a headline, in characters.
const HEADLINE_ROOM: usize = 80;

/// A group in a few words: `aten::mm +29.5% (8 shapes)`, `busy time +12.4%`,
/// `aten::_softmax: kernel selection`; `in WORKLOAD` when there are several.
fn brief(group: &FindingGroup, multi: bool) -> String {
    let mut text = group.label.clone();
    let figure = matches!(
        group.kind,
        FindingKind::Regression
            | FindingKind::Improvement
            | FindingKind::UnexpectedRatio
            | FindingKind::Timeline
            | FindingKind::Collective
    );
    match group.delta_percent {
        Some(d) if figure => text.push_str(&format!(" {d:+.1}%")),
        // The label names the policy entry already.
        _ if group.kind == FindingKind::Policy => text.push_str(" matches nothing"),
        // The kind's name: `: kernel selection`, `: nothing to compare`.
        _ => {
            let kind = serde_json::to_value(group.kind)
                .ok()
                .and_then(|v| v.as_str().map(|s| s.replace('_', " ")))
                .unwrap_or_default();
            text.push_str(&format!(": {kind}"));
        }
    }
    if group.shapes > 1 {
        text.push_str(&format!(" ({} shapes)", group.shapes));
    }
    if multi && group.kind != FindingKind::NothingToCompare && !group.workload.is_empty() {
        text.push_str(&format!(" in {}", group.workload));
    }
    text
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
