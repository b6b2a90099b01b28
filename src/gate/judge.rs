//! Judge: comparisons judged by a policy into a [`Verdict`].
//!
//! A regression needs three things at once (docs/POLICY.md): the whole
//! confidence interval of the slowdown beyond the effective threshold (the
//! largest of the policy's minimum effect, its noise floor and the noise the
//! baseline window measured), a material impact on total GPU time, and
//! survival of Benjamini–Hochberg false-discovery control across all rows
//! judged. With a single sample on a side there is no interval: the finding
//! says so and rests on the point estimate. Across platforms the same tests
//! run against each op's expected hardware ratio widened by the slack.

use crate::analysis::diagnose::{self, Bound};
use crate::analysis::hardware::{ComputeSpec, Hardware};
use crate::analysis::ops::stats::percent;
use crate::gate::compare::{Comparison, OpComparison, OpSide, SamplesBasis};
use crate::gate::policy::{Expectation as PolicyExpectation, Expected, Policy, TimelineMetric};
use crate::gate::snapshot::Snapshot;
use crate::gate::stats::bh_adjust;
use crate::gate::verdict::{
    Counts, Finding, FindingKind, FindingPriority, OpRef, Outcome, Severity, TimelineRow,
    VERDICT_SCHEMA_VERSION, Verdict, WorkloadSummary,
};

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
}

/// A regression or cross-platform candidate awaiting false-discovery control.
struct Pending {
    finding: Finding,
    p_value: f64,
}

/// Judges workloads by a policy.
pub fn judge(workloads: &[Workload], policy: &Policy) -> Verdict {
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
            f.kind == FindingKind::Regression
                || (f.kind == FindingKind::UnexpectedRatio && f.delta_percent.unwrap_or(0.0) > 0.0)
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
    let outcome = if counts.failures > 0 {
        Outcome::Fail
    } else {
        Outcome::Pass
    };
    let mut verdict = Verdict {
        schema_version: VERDICT_SCHEMA_VERSION,
        tracegate_version: env!("CARGO_PKG_VERSION").to_string(),
        outcome,
        headline: String::new(),
        counts,
        workloads: summaries,
        findings,
        policy: policy.label.clone(),
    };
    verdict.sort_findings();
    verdict.headline = headline(&verdict);
    verdict
}

fn op_key_text(op: &OpRef) -> String {
    format!(
        "{}|{}|{}|{}",
        op.name, op.input_dims, op.input_type, op.input_strides
    )
}

fn headline(verdict: &Verdict) -> String {
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
        Outcome::Pass => format!(
            "✅ tracegate: no regressions ({} ops unchanged)",
            c.unchanged
        ),
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The workload's summary; `unchanged` is filled in once findings are final.
fn summary(comparison: &Comparison) -> WorkloadSummary {
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

fn nothing_to_compare(policy: &Policy, workload: &str, message: String) -> Finding {
    Finding {
        rule: "nothing_to_compare".into(),
        severity: policy.nothing_to_compare.severity,
        kind: FindingKind::NothingToCompare,
        workload: workload.to_string(),
        op: None,
        metric: "comparison".into(),
        baseline: None,
        candidate: None,
        unit: String::new(),
        delta_percent: None,
        interval_percent: None,
        expected_ratio: None,
        limit: None,
        impact_percent: None,
        priority: FindingPriority::High,
        message,
        path_a: None,
        path_b: None,
        kernel_diff: None,
        replay_package: None,
    }
}

/// A finding about one op, with the common fields filled in.
fn op_finding(
    rule: &str,
    severity: Severity,
    kind: FindingKind,
    workload: &str,
    side: &OpSide,
    message: String,
) -> Finding {
    let family = side
        .model
        .as_ref()
        .map_or(side.category.as_str(), |m| m.family.as_str());
    let bound = side.model.as_ref().map(|m| {
        if m.bytes > 0.0 && m.flops / m.bytes > 100.0 {
            Bound::Compute
        } else {
            Bound::Memory
        }
    });
    let (path_a, path_b) = diagnose::paths(family, bound);
    let is_slowdown = matches!(
        kind,
        FindingKind::Regression
            | FindingKind::UnexpectedRatio
            | FindingKind::Budget
            | FindingKind::Efficiency
    );
    Finding {
        rule: rule.to_string(),
        severity,
        kind,
        workload: workload.to_string(),
        op: Some(side.op_ref()),
        metric: "median kernel time per call".into(),
        baseline: None,
        candidate: None,
        unit: "µs".into(),
        delta_percent: None,
        interval_percent: None,
        expected_ratio: None,
        limit: None,
        impact_percent: None,
        priority: FindingPriority::Low,
        message,
        path_a: is_slowdown.then_some(path_a),
        path_b: is_slowdown.then_some(path_b),
        kernel_diff: None,
        replay_package: None,
    }
}

/// Priority from the share of total GPU time a finding adds or saves.
fn priority_of(impact_percent: f64) -> FindingPriority {
    match impact_percent.abs() {
        i if i >= 5.0 => FindingPriority::Critical,
        i if i >= 2.0 => FindingPriority::High,
        i if i >= 0.5 => FindingPriority::Medium,
        _ => FindingPriority::Low,
    }
}

fn short_op(side: &OpSide) -> String {
    format!("{} {}", side.key.name, side.key.input_dims)
        .trim_end()
        .to_string()
}

/// Judges one workload.
fn judge_workload(
    comparison: &Comparison,
    candidate: &Snapshot,
    baseline_hardware: Option<&Hardware>,
    candidate_hardware: Option<&Hardware>,
    policy: &Policy,
    findings: &mut Vec<Finding>,
    pending: &mut Vec<Pending>,
) {
    let workload = comparison.workload.as_str();
    if let Some(reason) = &comparison.nothing_to_compare {
        findings.push(nothing_to_compare(
            policy,
            workload,
            format!("`{workload}`: {reason}"),
        ));
    }
    let noise = &policy.noise;
    let mut slower_by_name: std::collections::BTreeMap<&str, Vec<&OpComparison>> =
        std::collections::BTreeMap::new();
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
        if let Some(diff) = &op.kernel_diff {
            let mut finding = op_finding(
                "kernel_selection",
                policy.kernel_selection.severity,
                FindingKind::KernelSelection,
                workload,
                side,
                format!("{}: the kernels it launches changed", short_op(side)),
            );
            finding.kernel_diff = Some(diff.clone());
            set_sample_figures(&mut finding, op);
            finding.impact_percent = Some(op.impact_percent);
            // At least medium: a changed kernel choice matters even at equal time.
            finding.priority = priority_of(op.impact_percent).min(FindingPriority::Medium);
            findings.push(finding);
        }
        let threshold_percent = noise.threshold_percent(op.noise.map(|n| n * 100.0));
        let too_small = op.baseline.time_us.max(op.candidate.time_us) < noise.min_time_us;
        if !too_small {
            let judged = if comparison.cross_platform {
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
                judge_same_platform(op, policy, workload, threshold_percent)
            };
            if let Some(judged) = judged {
                pending.push(judged);
                continue;
            }
        }
        let confidently_slower = op
            .estimate
            .interval
            .is_some_and(|i| i.low > 1.0 + threshold_percent / 100.0);
        if !comparison.cross_platform && confidently_slower && op.impact_percent > 0.0 {
            slower_by_name
                .entry(op.candidate.key.name.as_str())
                .or_default()
                .push(op);
        }
    }
    // A slowdown spread over many shapes of one op (a library regression
    // hitting every GEMM, say) can add up although each shape stays under
    // the impact minimum: judge the op's confidently slower rows together.
    for (name, rows) in slower_by_name {
        let impact: f64 = rows.iter().map(|op| op.impact_percent).sum();
        if rows.len() < 2 || impact < noise.min_impact_percent {
            continue;
        }
        let mut ratios: Vec<f64> = rows.iter().map(|op| op.estimate.ratio).collect();
        ratios.sort_by(f64::total_cmp);
        let median_ratio = ratios[ratios.len() / 2];
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
        if let Some(op) = finding.op.as_mut() {
            op.input_dims = format!("{} shapes", rows.len());
            op.input_type.clear();
            op.input_strides.clear();
        }
        finding.metric = "kernel time per run (rows summed)".into();
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
        pending.push(Pending { finding, p_value });
    }
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
        finding.metric = "kernel time per run".into();
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
        if share >= policy.new_ops.min_share_percent && !ignored(policy, side) {
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
            finding.metric = "kernel time per run".into();
            finding.candidate = Some(side.time_us);
            finding.impact_percent = Some(percent(side.time_us, total));
            finding.priority = priority_of(share);
            findings.push(finding);
        }
    }
    for side in &comparison.missing_ops {
        let share = percent(side.time_us, total);
        if share >= policy.missing_ops.min_share_percent && !ignored(policy, side) {
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
            finding.metric = "kernel time per run".into();
            finding.baseline = Some(side.time_us);
            finding.impact_percent = Some(-share);
            finding.priority = priority_of(share);
            findings.push(finding);
        }
    }
    timeline_findings(comparison, policy, findings);
    efficiency_findings(comparison, candidate, candidate_hardware, policy, findings);
    budget_findings(comparison, candidate, policy, findings);
}

fn ignored(policy: &Policy, side: &OpSide) -> bool {
    policy.is_ignored(
        &side.key.name,
        side.category.as_str(),
        &side.key.input_dims,
        side.module_path.as_deref(),
    )
}

/// Puts the figures the estimate was computed on into a finding: per-step
/// totals or per-call medians, labelled accordingly.
fn set_sample_figures(finding: &mut Finding, op: &OpComparison) {
    finding.metric = match op.samples_basis {
        SamplesBasis::Steps => "kernel time per step (median over steps)".into(),
        SamplesBasis::Invocations => "median kernel time per call".into(),
    };
    finding.baseline = Some(op.baseline_sample_median_us);
    finding.candidate = Some(op.candidate_sample_median_us);
    finding.delta_percent = Some((op.estimate.ratio - 1.0) * 100.0);
}

fn interval_percent(op: &OpComparison) -> Option<(f64, f64)> {
    op.estimate
        .interval
        .map(|i| ((i.low - 1.0) * 100.0, (i.high - 1.0) * 100.0))
}

fn judge_same_platform(
    op: &OpComparison,
    policy: &Policy,
    workload: &str,
    threshold_percent: f64,
) -> Option<Pending> {
    let noise = &policy.noise;
    let up = 1.0 + threshold_percent / 100.0;
    let down = 1.0 / up;
    let estimate = &op.estimate;
    let (low, high) = estimate
        .interval
        .map_or((estimate.ratio, estimate.ratio), |i| (i.low, i.high));
    let material = op.impact_percent.abs() >= noise.min_impact_percent;
    let (kind, rule, severity, p_value) = if low > up && op.impact_percent > 0.0 {
        (
            FindingKind::Regression,
            "regression",
            policy.regression.severity,
            estimate.p_value_above(up),
        )
    } else if high < down && op.impact_percent < 0.0 {
        (
            FindingKind::Improvement,
            "improvement",
            policy.improvement.severity,
            estimate.p_value_below(down),
        )
    } else {
        return None;
    };
    if !material {
        return None;
    }
    let side = &op.candidate;
    let delta = (estimate.ratio - 1.0) * 100.0;
    let confidence_note = match estimate.interval {
        Some(i) => format!(
            "{:.0}% interval {:+.1}% to {:+.1}%",
            estimate.confidence * 100.0,
            (i.low - 1.0) * 100.0,
            (i.high - 1.0) * 100.0
        ),
        None => "one sample per side: no confidence interval".to_string(),
    };
    let verb = if kind == FindingKind::Regression {
        "slower"
    } else {
        "faster"
    };
    let mut finding = op_finding(
        rule,
        severity,
        kind,
        workload,
        side,
        format!(
            "{} is {:.1}% {verb} ({confidence_note}), {:+.2}% of total GPU time",
            short_op(side),
            delta.abs(),
            op.impact_percent
        ),
    );
    set_sample_figures(&mut finding, op);
    finding.interval_percent = interval_percent(op);
    finding.limit = Some(threshold_percent);
    finding.impact_percent = Some(op.impact_percent);
    finding.priority = priority_of(op.impact_percent);
    Some(Pending {
        finding,
        p_value: p_value.unwrap_or(0.0),
    })
}

/// The expected candidate/baseline ratio under the policy's model for this op.
fn expected_ratio(
    op: &OpComparison,
    policy: &Policy,
    baseline: Option<&Hardware>,
    candidate: Option<&Hardware>,
) -> Option<(f64, f64, String)> {
    let side = &op.candidate;
    let (expectation, slack) = policy.cross_platform.expectation_for(
        &side.key.name,
        side.category.as_str(),
        &side.key.input_dims,
        side.module_path.as_deref(),
    );
    let spec = side
        .model
        .as_ref()
        .and_then(|m| m.compute_spec)
        .unwrap_or(ComputeSpec::MatrixBf16);
    let (ratio, basis) = match expectation {
        PolicyExpectation::Ratio(ratio) => (ratio, "policy ratio".to_string()),
        PolicyExpectation::Model(Expected::Roofline) => {
            let expected = op.expected?;
            (
                expected.ratio,
                format!("{:?}", expected.basis).to_lowercase(),
            )
        }
        PolicyExpectation::Model(Expected::Bandwidth) => {
            let (b, c) = (baseline?, candidate?);
            (b.hbm_tb_s / c.hbm_tb_s, "bandwidth".to_string())
        }
        PolicyExpectation::Model(Expected::Compute) => {
            let (b, c) = (baseline?.peak_tflops(spec)?, candidate?.peak_tflops(spec)?);
            (b / c, "peak compute".to_string())
        }
    };
    Some((ratio, slack, basis))
}

fn judge_cross_platform(
    op: &OpComparison,
    policy: &Policy,
    baseline: Option<&Hardware>,
    candidate: Option<&Hardware>,
    workload: &str,
    threshold_percent: f64,
    baseline_total_us: f64,
) -> Option<Pending> {
    let side = &op.candidate;
    let (expected, slack, basis) = expected_ratio(op, policy, baseline, candidate)?;
    let estimate = &op.estimate;
    let (low, high) = estimate
        .interval
        .map_or((estimate.ratio, estimate.ratio), |i| (i.low, i.high));
    let tolerance = 1.0 + slack.max(threshold_percent) / 100.0;
    let upper = expected * tolerance;
    let lower = expected / tolerance;
    // Impact beyond what the hardware explains: the candidate's time against
    // the baseline's time scaled by the expected ratio.
    let excess_us = op.candidate.time_us - expected * op.baseline.time_us;
    let excess_percent = percent(excess_us, baseline_total_us);
    if excess_percent.abs() < policy.noise.min_impact_percent {
        return None;
    }
    let (severity, p_value, direction) = if low > upper {
        (
            policy.cross_platform.severity,
            estimate.p_value_above(upper),
            "slower",
        )
    } else if high < lower {
        (Severity::Info, estimate.p_value_below(lower), "faster")
    } else {
        return None;
    };
    let mut finding = op_finding(
        "cross_platform",
        severity,
        FindingKind::UnexpectedRatio,
        workload,
        side,
        format!(
            "{}: candidate/baseline time ratio {:.2} is {direction} than the {:.2} the hardware explains ({basis}, ±{:.0}% slack): improve the target's kernel",
            short_op(side),
            estimate.ratio,
            expected,
            slack.max(threshold_percent)
        ),
    );
    set_sample_figures(&mut finding, op);
    finding.interval_percent = interval_percent(op);
    finding.expected_ratio = Some(expected);
    finding.limit = Some(upper);
    finding.impact_percent = Some(excess_percent);
    finding.priority = priority_of(excess_percent);
    Some(Pending {
        finding,
        p_value: p_value.unwrap_or(0.0),
    })
}

/// Benjamini–Hochberg over every pending op finding; those whose adjusted
/// p-value exceeds the rate are dropped. Findings without an interval (one
/// sample) carry p = 0 and so always survive; their message says why.
fn false_discovery_control(pending: Vec<Pending>, rate: f64) -> Vec<Finding> {
    let p_values: Vec<f64> = pending.iter().map(|p| p.p_value).collect();
    let adjusted = bh_adjust(&p_values);
    pending
        .into_iter()
        .zip(adjusted)
        .filter(|(_, q)| *q <= rate)
        .map(|(p, _)| p.finding)
        .collect()
}

fn timeline_value(
    comparison: &Comparison,
    metric: TimelineMetric,
) -> Option<(f64, f64, Option<f64>)> {
    let find = |name: &str| comparison.timeline.iter().find(|t| t.metric == name);
    match metric {
        TimelineMetric::IdlePercent => {
            let (idle, total) = (find("idle_time")?, find("total_time")?);
            Some((
                percent(idle.baseline_us, total.baseline_us),
                percent(idle.candidate_us, total.candidate_us),
                None,
            ))
        }
        other => {
            let row = find(other.as_str())?;
            Some((row.baseline_us, row.candidate_us, row.noise))
        }
    }
}

fn timeline_findings(comparison: &Comparison, policy: &Policy, findings: &mut Vec<Finding>) {
    let workload = &comparison.workload;
    for (index, rule) in policy.timeline.iter().enumerate() {
        let Some((baseline, candidate, noise)) = timeline_value(comparison, rule.metric) else {
            continue;
        };
        let unit = rule.metric.unit();
        let mut base = Finding {
            rule: format!("timeline[{index}]"),
            metric: rule.metric.as_str().to_string(),
            baseline: Some(baseline),
            candidate: Some(candidate),
            unit: unit.to_string(),
            ..nothing_to_compare(policy, workload, String::new())
        };
        base.severity = rule.severity;
        base.kind = FindingKind::Timeline;
        let delta = (baseline > 0.0).then(|| (candidate / baseline - 1.0) * 100.0);
        base.delta_percent = delta;
        if let (Some(limit), Some(delta)) = (rule.max_regression_percent, delta) {
            let effective = limit
                .max(policy.noise.noise_floor_percent)
                .max(noise.unwrap_or(0.0) * 100.0);
            if unit == "µs" && baseline >= policy.noise.min_time_us && delta > effective {
                let mut finding = base.clone();
                finding.limit = Some(effective);
                finding.impact_percent =
                    Some(percent(candidate - baseline, comparison.baseline_total_us));
                finding.priority = priority_of(delta);
                finding.message = format!(
                    "GPU {} grew {delta:.1}% ({} → {} µs), above the {effective:.1}% limit",
                    rule.metric.as_str().replace('_', " "),
                    round(baseline),
                    round(candidate)
                );
                findings.push(finding);
            }
        }
        if let Some(max) = rule.max {
            if candidate > max {
                let mut finding = base.clone();
                finding.limit = Some(max);
                finding.priority = FindingPriority::High;
                finding.message = format!(
                    "GPU {} is {} {unit}, above the {} {unit} limit",
                    rule.metric.as_str().replace('_', " "),
                    round(candidate),
                    round(max)
                );
                findings.push(finding);
            }
        }
    }
}

fn round(value: f64) -> String {
    if value.abs() >= 100.0 {
        format!("{value:.0}")
    } else {
        format!("{value:.2}")
    }
}

/// Candidate rows as comparison sides (for budgets and efficiency).
fn candidate_sides(comparison: &Comparison) -> Vec<&OpSide> {
    comparison
        .ops
        .iter()
        .map(|o| &o.candidate)
        .chain(comparison.shape_changed.iter().map(|s| &s.candidate))
        .chain(comparison.new_ops.iter())
        .collect()
}

fn efficiency_findings(
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

fn budget_findings(
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
                .filter(|o| matches(&o.candidate))
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
