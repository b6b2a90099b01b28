//! One finding in words: its kind, priority and severity labels, what it is
//! about, its values with their units, and the display row ([`Row`]) both
//! the Markdown templates and the terminal table show.

use serde::Serialize;

use crate::gate::verdict::{Finding, FindingKind, FindingPriority, Outcome, Severity, Verdict};
use crate::render::text::{human_us, shorten};

/// (icon, status) of the verdict.
pub(super) fn status(verdict: &Verdict) -> (&'static str, &'static str) {
    match verdict.outcome {
        Outcome::Fail => ("❌", "fail"),
        Outcome::Pass if verdict.counts.warnings > 0 => ("⚠️", "pass with warnings"),
        Outcome::Pass if verdict.counts.accepted > 0 => ("☑️", "pass with accepted findings"),
        Outcome::Pass => ("✅", "pass"),
        Outcome::Inconclusive => ("❔", "inconclusive"),
        Outcome::DifferentWorkloads => ("❔", "different workloads"),
    }
}

/// The verdict line after `tracegate:`: the status, then the headline,
/// unless the headline already opens with the status' word (`passed with 3
/// warnings: …` needs no `pass with warnings ·` before it).
pub(super) fn title(status: &str, headline: &str) -> String {
    let word = status.split(' ').next().unwrap_or(status);
    if headline.is_empty() {
        status.to_string()
    } else if headline.starts_with(word) {
        headline.to_string()
    } else {
        format!("{status} · {headline}")
    }
}

/// The headline without a leading status icon or `tracegate:` (the
/// templates print their own).
pub(super) fn headline_text(headline: &str) -> &str {
    let mut text = headline.trim_start();
    for icon in ["✅", "⚠️", "⚠", "❌", "❔", "☑️"] {
        if let Some(rest) = text.strip_prefix(icon) {
            text = rest.trim_start();
            break;
        }
    }
    text.strip_prefix("tracegate:").unwrap_or(text).trim()
}

/// A finding kind in words: `regression`, `kernel selection`, ….
pub(crate) fn kind_label(kind: FindingKind) -> &'static str {
    match kind {
        FindingKind::Regression => "regression",
        FindingKind::Improvement => "improvement",
        FindingKind::UnexpectedRatio => "unexpected ratio",
        FindingKind::KernelSelection => "kernel selection",
        FindingKind::ShapeChanged => "shape changed",
        FindingKind::NewOp => "new op",
        FindingKind::MissingOp => "missing op",
        FindingKind::Timeline => "timeline",
        FindingKind::Collective => "collective",
        FindingKind::Straggler => "straggler",
        FindingKind::Efficiency => "efficiency",
        FindingKind::Budget => "budget",
        FindingKind::NothingToCompare => "nothing to compare",
        FindingKind::Integrity => "integrity",
        FindingKind::Policy => "policy",
    }
}

fn priority_label(priority: FindingPriority) -> &'static str {
    match priority {
        FindingPriority::Critical => "critical",
        FindingPriority::High => "high",
        FindingPriority::Medium => "medium",
        FindingPriority::Low => "low",
    }
}

fn severity_icon(severity: Severity) -> &'static str {
    match severity {
        Severity::Fail => "❌",
        Severity::Warn => "⚠️",
        Severity::Accepted => "☑️",
        Severity::Info => "ℹ️",
    }
}

/// What a finding is about: the op's name, else its metric.
pub(super) fn op_label(f: &Finding) -> String {
    match &f.op {
        Some(op) => op.name.clone(),
        None if f.metric.is_empty() => "—".to_string(),
        None => f.metric.replace('_', " "),
    }
}

pub(super) fn shape_of(f: &Finding) -> &str {
    f.op.as_ref().map_or("", |op| op.input_dims.as_str())
}

/// The cell of a missing value.
pub(super) const NONE: &str = "—";

fn or_dash(text: &str) -> String {
    if text.is_empty() {
        NONE.to_string()
    } else {
        text.to_string()
    }
}

/// A number without needless decimals: `12`, `0.25`, `1234.5`.
fn number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        let text = format!("{v:.2}");
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// A value with its unit: µs as `human_us`, `%` as `12.3%`, a ratio as
/// `×1.25`, else `N unit`.
fn with_unit(value: Option<f64>, unit: &str) -> String {
    match value {
        Some(v) if v.is_finite() => match unit {
            "µs" | "us" => human_us(v),
            "%" => format!("{v:.1}%"),
            "×" => format!("×{v:.2}"),
            "" => number(v),
            unit => format!("{} {unit}", number(v)),
        },
        _ => NONE.to_string(),
    }
}

pub(super) fn signed_percent(value: Option<f64>) -> String {
    match value {
        Some(v) if v.is_finite() => format!("{v:+.1}%"),
        _ => NONE.to_string(),
    }
}

/// A time with what it is per: `12.3 µs/step`; other values as
/// [`with_unit`].
fn time_with_per(value: Option<f64>, unit: &str, f: &Finding) -> String {
    let text = with_unit(value, unit);
    match f.statistics.per {
        Some(per) if text != NONE && matches!(unit, "µs" | "us") => {
            format!("{text}/{}", per.as_str())
        }
        _ => text,
    }
}

/// The interval cell: `+1.0% … +3.0% (95% interval)` or `+1.0% … +3.0%
/// (range over 3 steps)`, `inconclusive` with the minimum detectable
/// effect when the data cannot decide.
fn interval_text(f: &Finding) -> String {
    let statistics = &f.statistics;
    let mut text = match f.interval_percent {
        Some((low, high)) if low.is_finite() && high.is_finite() => {
            let range = format!("{low:+.1}% … {high:+.1}%");
            // A report.json from before schema minor 2 does not say which.
            match statistics.interval_kind {
                Some(_) => format!("{range} ({})", statistics.interval_label()),
                None => range,
            }
        }
        _ => match statistics.samples {
            Some(samples) if samples.fewest() < 2 => {
                format!("one {} on a side", samples.per.as_str())
            }
            _ => NONE.to_string(),
        },
    };
    if statistics.inconclusive {
        text.push_str(", inconclusive");
        if let Some(mde) = statistics
            .min_detectable_effect_percent
            .filter(|m| m.is_finite())
        {
            text.push_str(&format!(" (detects ≥ {mde:+.0}%)"));
        }
    }
    text
}

/// One finding as display strings (raw text: the template escapes it).
#[derive(Serialize)]
pub(super) struct Row {
    pub(super) severity: &'static str,
    pub(super) icon: &'static str,
    pub(super) kind: &'static str,
    pub(super) rule: String,
    pub(super) workload: String,
    pub(super) op: String,
    pub(super) shape: String,
    pub(super) dtypes: String,
    pub(super) module: String,
    pub(super) metric: String,
    /// What times are per: `per step`, `per call`, `per run`, or empty.
    pub(super) per: String,
    pub(super) baseline: String,
    pub(super) candidate: String,
    pub(super) delta: String,
    pub(super) interval: String,
    pub(super) expected: String,
    pub(super) limit: String,
    pub(super) impact: String,
    pub(super) priority: &'static str,
    pub(super) message: String,
}

impl Row {
    pub(super) fn new(f: &Finding) -> Row {
        let op = f.op.as_ref();
        let unit = shorten(&f.unit, 16);
        Row {
            severity: f.severity.as_str(),
            icon: severity_icon(f.severity),
            kind: kind_label(f.kind),
            rule: shorten(&f.rule, 60),
            workload: shorten(&f.workload, 60),
            op: shorten(&op_label(f), 80),
            shape: or_dash(&shorten(shape_of(f), 60)),
            dtypes: or_dash(&shorten(op.map_or("", |op| op.input_type.as_str()), 60)),
            module: or_dash(&shorten(
                op.and_then(|op| op.module_path.as_deref()).unwrap_or(""),
                100,
            )),
            metric: or_dash(&shorten(&f.metric, 60)),
            per: f
                .statistics
                .per
                .map_or(String::new(), |per| format!("per {}", per.as_str())),
            baseline: time_with_per(f.baseline, &unit, f),
            candidate: time_with_per(f.candidate, &unit, f),
            delta: signed_percent(f.delta_percent),
            interval: interval_text(f),
            expected: match (f.expected_ratio, f.statistics.expected_learned) {
                (Some(r), Some(learned)) if r.is_finite() => {
                    format!("×{r:.2} {}", learned.describe())
                }
                (Some(r), None) if r.is_finite() => format!("×{r:.2}"),
                _ => NONE.to_string(),
            },
            limit: with_unit(
                f.limit,
                &shorten(f.statistics.limit_unit.as_deref().unwrap_or(&f.unit), 16),
            ),
            impact: signed_percent(f.impact_percent),
            priority: priority_label(f.priority),
            message: match &f.accepted {
                Some(a) => format!(
                    "{} — accepted by {}: {}",
                    shorten(&f.message, 300),
                    a.by,
                    shorten(&a.reason, 200)
                ),
                None => or_dash(&shorten(&f.message, 300)),
            },
        }
    }
}

/// A ratio as `×1.63`.
pub(super) fn times(ratio: f64) -> String {
    format!("×{ratio:.2}")
}

/// "×1.63 measured, ×0.63 expected — 2.6× behind": a cross-platform row's
/// ratio against its expectation, in words (`ahead` when faster).
pub(super) fn against_expected(measured: f64, expected: f64, what: &str) -> String {
    let gap = measured / expected;
    let (factor, word) = if gap >= 1.0 {
        (gap, "behind")
    } else {
        (1.0 / gap, "ahead")
    };
    format!(
        "{} measured, {} {what} — {factor:.1}× {word}",
        times(measured),
        times(expected)
    )
}
