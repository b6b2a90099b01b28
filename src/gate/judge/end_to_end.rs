//! The end-to-end guard: the step's time (the policy's `end_to_end`
//! metric, total GPU time per step by default) grown beyond the limit and
//! beyond the noise fails, as one finding that says where the added time
//! went, whatever the rules per op, per collective or per timeline metric
//! made of it. Those rules attribute a slowdown; this one makes sure no
//! large one passes because no single attribution reached its own limit
//! (a collective judged as waiting, a slowdown spread thin, idle gaps).
//!
//! The added time is split the way the timeline splits a step:
//! computation, communication not hidden under computation, copies not
//! hidden under either, and idle time (`total = computation + exposed
//! communication + exposed copies + idle`), and the op names that added
//! most are listed with their added time. Idle time is the host's pace as
//! much as the GPU's: on real runs it grew up to +136% between two
//! processes of one job while the computation moved under 1%, so idle
//! time within `end_to_end.idle_noise_percent` of the baseline's is not
//! judged.

use std::collections::BTreeMap;

use super::findings::{priority_of, round, time_per};
use crate::analysis::ops::stats::percent;
use crate::gate::compare::Comparison;
use crate::gate::policy::{Policy, TimelineMetric};
use crate::gate::verdict::{Finding, FindingKind, Severity};

/// The rule of the guard's finding.
pub const END_TO_END_RULE: &str = "end_to_end";

/// How many op names the finding lists as top contributors.
const TOP_CONTRIBUTORS: usize = 3;

/// The parts a step's added time is split into: timeline metric and words.
const PARTS: [(&str, &str); 4] = [
    ("computation_time", "computation"),
    ("exposed_comm_time", "exposed communication"),
    ("exposed_memcpy_time", "exposed copies"),
    ("idle_time", "idle"),
];

/// The guard's finding, when the step's time grew beyond the limit raised
/// to the noise floor and the run-to-run noise of a baseline window, and,
/// where both sides have steps, the steps' interval of the ratio lies
/// wholly above no change (a difference between two steps' medians that
/// the steps themselves do not support is not a slowdown). Idle time the
/// candidate added within `idle_noise_percent` of the baseline's is left
/// out of the judged time: a step longer only by that is an `info`
/// finding.
pub(super) fn end_to_end_finding(comparison: &Comparison, policy: &Policy) -> Option<Finding> {
    let rule = &policy.end_to_end;
    let limit = rule.max_regression_percent?;
    // Across GPUs the hardware changes the step's time: the ops are judged
    // against what it explains, the step is not.
    if comparison.cross_platform {
        return None;
    }
    let metric = match rule.metric {
        TimelineMetric::BusyTime => "busy_time",
        _ => "total_time",
    };
    let row = comparison.timeline.iter().find(|t| t.metric == metric)?;
    let (baseline, candidate) = (row.baseline_us, row.candidate_us);
    if baseline < policy.noise.min_time_us || baseline <= 0.0 {
        return None;
    }
    let delta = (candidate / baseline - 1.0) * 100.0;
    let floor = limit.max(policy.noise.noise_floor_percent);
    let effective = floor.max(row.noise.unwrap_or(0.0) * 100.0);
    let steps_agree = row
        .estimate
        .as_ref()
        .and_then(|e| e.bounds())
        .is_none_or(|b| b.interval.low > 1.0);
    if delta <= effective || !steps_agree {
        return None;
    }
    // Idle time the host's pace explains: left out of the judged time. A
    // baseline window does not replace this prior: four real runs measured
    // ±7.7% where a fifth added 30% more idle time.
    let host_us = match rule.idle_noise_percent {
        Some(percent) if metric == "total_time" => {
            let (idle_before, idle_after) = timeline_pair(comparison, "idle_time");
            (idle_after - idle_before)
                .min(idle_before * percent / 100.0)
                .max(0.0)
        }
        _ => 0.0,
    };
    let judged_delta = ((candidate - host_us) / baseline - 1.0) * 100.0;
    let added = candidate - baseline;
    let per = time_per(comparison);
    let parts = where_it_went(comparison, metric);
    let contributors = top_contributors(comparison);
    let raised = if effective > floor {
        " (raised to the measured noise)"
    } else {
        ""
    };
    let mut message = format!(
        "the step's GPU {} grew {delta:.1}% ({} → {} µs per {}), above the {effective:.1}% \
         limit{raised}: +{} µs, of which {parts}",
        metric.replace('_', " "),
        round(baseline),
        round(candidate),
        per.as_str(),
        round(added),
    );
    if !contributors.is_empty() {
        message.push_str(&format!("; most added by {contributors}"));
    }
    let severity = if judged_delta > effective {
        if host_us > 0.0 {
            message.push_str(&format!(
                "; {judged_delta:.1}% without the {} µs of idle time the host's run-to-run \
                 noise explains",
                round(host_us)
            ));
        }
        rule.severity
    } else {
        message.push_str(&format!(
            "; not judged: {} µs of it is idle time within the host's run-to-run noise (up to \
             +{}% of the baseline's idle time, end_to_end.idle_noise_percent), the GPU waiting \
             for a host whose pace differs between runs",
            round(host_us),
            round(rule.idle_noise_percent.unwrap_or(0.0)),
        ));
        Severity::Info
    };
    let mut finding = Finding {
        metric: metric.to_string(),
        baseline: Some(baseline),
        candidate: Some(candidate),
        unit: "µs".to_string(),
        delta_percent: Some(delta),
        limit: Some(effective),
        impact_percent: Some(percent(added, comparison.baseline_total_us)),
        priority: priority_of(delta),
        ..Finding::new(
            END_TO_END_RULE,
            severity,
            FindingKind::Timeline,
            comparison.workload.as_str(),
            message,
        )
    };
    finding.statistics.per = Some(per);
    finding.statistics.limit_unit = Some("%".into());
    Some(finding)
}

/// A timeline metric's baseline and candidate values (0 when absent).
fn timeline_pair(comparison: &Comparison, metric: &str) -> (f64, f64) {
    comparison
        .timeline
        .iter()
        .find(|t| t.metric == metric)
        .map_or((0.0, 0.0), |t| (t.baseline_us, t.candidate_us))
}

/// The added time split over computation, exposed communication, exposed
/// copies and idle time, largest first, in words (`computation +120 µs
/// (80%), idle +30 µs (20%)`); parts that did not grow are left out (a
/// busy time leaves out idle).
fn where_it_went(comparison: &Comparison, metric: &str) -> String {
    let grown = |name: &str| {
        let (before, after) = timeline_pair(comparison, name);
        after - before
    };
    let mut parts: Vec<(&str, f64)> = PARTS
        .iter()
        .filter(|(name, _)| metric == "total_time" || *name != "idle_time")
        .map(|&(name, words)| (words, grown(name)))
        .filter(|(_, us)| *us > 0.0)
        .collect();
    parts.sort_by(|a, b| b.1.total_cmp(&a.1));
    let total: f64 = parts.iter().map(|(_, us)| us).sum();
    if parts.is_empty() {
        return "no part of the step grew on its own".to_string();
    }
    parts
        .iter()
        .map(|(words, us)| {
            format!(
                "{words} +{} µs ({:.0}%)",
                round(*us),
                percent(*us, total.max(f64::MIN_POSITIVE))
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The op names whose kernel time grew most (matched rows, shapes that
/// changed, new and missing rows, summed by name; whole-graph rows left
/// out: their rows hold the same time), at most [`TOP_CONTRIBUTORS`], in
/// words (`aten::mm +120 µs, record_param_comms +40 µs`).
fn top_contributors(comparison: &Comparison) -> String {
    let rows = comparison
        .ops
        .iter()
        .filter(|op| !op.candidate.is_whole_graph())
        .map(|op| (&op.candidate.key.name, op.impact_us))
        .chain(
            comparison
                .shape_changed
                .iter()
                .map(|c| (&c.candidate.key.name, c.impact_us)),
        )
        .chain(
            comparison
                .new_ops
                .iter()
                .filter(|s| !s.is_whole_graph())
                .map(|s| (&s.key.name, s.time_us)),
        )
        .chain(
            comparison
                .missing_ops
                .iter()
                .filter(|s| !s.is_whole_graph())
                .map(|s| (&s.key.name, -s.time_us)),
        );
    let mut by_name: BTreeMap<&str, f64> = BTreeMap::new();
    for (name, us) in rows {
        *by_name.entry(name.as_str()).or_default() += us;
    }
    let mut grown: Vec<(&str, f64)> = by_name.into_iter().filter(|(_, us)| *us > 0.0).collect();
    grown.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
    grown
        .iter()
        .take(TOP_CONTRIBUTORS)
        .map(|(name, us)| format!("{name} +{} µs", round(*us)))
        .collect::<Vec<_>>()
        .join(", ")
}
