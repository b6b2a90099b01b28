//! One finding group ([`FindingGroup`]) as the Markdown documents show it:
//! a line of at most six cells (op, shapes, Δ, impact, why, replay) and the
//! collapsed block under it (the group's advice, then one row per shape).

use serde::Serialize;

use super::finding::{NONE, Row, against_expected, kind_label, shape_of, signed_percent};
use crate::gate::judge::{shapes_text, summed_shapes};
use crate::gate::verdict::{
    DRIFT_RULE, Finding, FindingGroup, FindingKind, LearnedFrom, Severity, Verdict,
};
use crate::render::text::{plain_url, shorten};

/// One shape of a group, for the collapsed block.
#[derive(Serialize)]
pub(super) struct ShapeRow {
    /// The finding's display row (wording shared with every renderer).
    #[serde(flatten)]
    row: Row,
    /// What tells it from a shape with the same dims (`NT`, a module path), or empty.
    tag: String,
    /// The replay package's file name, or `—`.
    replay: String,
    /// The artifact to link it to, when known and it has a package.
    replay_url: Option<String>,
}

/// A group as display strings (raw text: the template escapes it; a
/// `replay_url` is a checked http(s) URL the template prints as is).
#[derive(Serialize)]
pub(super) struct GroupView {
    pub(super) severity: &'static str,
    /// A failing group the data cannot confirm ([`FindingGroup::inconclusive`]).
    pub(super) inconclusive: bool,
    icon: &'static str,
    pub(super) workload: String,
    pub(super) op: String,
    pub(super) shapes: String,
    pub(super) delta: String,
    pub(super) impact: String,
    pub(super) why: String,
    /// `8 packages`, `1 package` or `—`.
    replay: String,
    /// The artifact holding them, when known and there are any.
    replay_url: Option<String>,
    pub(super) summary: String,
    /// Who accepted its findings and why (`accepted by --accept: reason`).
    accepted: Option<String>,
    pub(super) advice: Option<String>,
    pub(super) path_a: Option<String>,
    pub(super) path_b: Option<String>,
    /// The times' metric when the rows share one (`kernel time per step …`).
    metric: Option<String>,
    rows: Vec<ShapeRow>,
    /// Whether the per-shape block has anything to show beyond the line.
    details: bool,
    /// Impact for ordering (0 without one).
    #[serde(skip)]
    pub(super) impact_value: f64,
    /// Whether it is about an op (ops, the causes, come before timeline lines).
    #[serde(skip)]
    pub(super) about_op: bool,
    /// The group's severity (`severity` is its name).
    #[serde(skip)]
    pub(super) level: Severity,
    /// The group's kind.
    #[serde(skip)]
    pub(super) kind: FindingKind,
    /// How many findings it holds.
    #[serde(skip)]
    pub(super) size: usize,
    /// The input dims of its one shape, as recorded (the terminal compacts them).
    #[serde(skip)]
    pub(super) dims: Option<String>,
    /// What a `Tracegate-Accept:` trailer or a `tracegate-accept:` label
    /// names to accept it: the op's name, or `rule:RULE`; `None` when it
    /// is no plain text to quote (a name with backticks or odd characters).
    #[serde(skip)]
    pub(super) accept: Option<String>,
}

impl GroupView {
    /// The view of `group`, linking replay packages to `artifact_url` when given.
    pub(super) fn new(
        group: &FindingGroup,
        verdict: &Verdict,
        artifact_url: Option<&str>,
    ) -> GroupView {
        let findings: Vec<&Finding> = group
            .findings
            .iter()
            .filter_map(|&i| verdict.findings.get(i))
            .collect();
        let cross_platform = verdict
            .workloads
            .iter()
            .any(|w| w.name == group.workload && w.cross_platform);
        let url = artifact_url.filter(|u| plain_url(u));
        let rows: Vec<ShapeRow> = findings
            .iter()
            .zip(group.tags.iter().chain(std::iter::repeat(&None)))
            .map(|(f, tag)| ShapeRow {
                row: Row::new(f),
                tag: tag.as_deref().map_or(String::new(), |t| shorten(t, 40)),
                replay: f
                    .replay_package
                    .as_deref()
                    .map_or(NONE.to_string(), package_name),
                replay_url: f.replay_package.as_ref().and(url).map(str::to_string),
            })
            .collect();
        let packages = findings
            .iter()
            .filter(|f| f.replay_package.is_some())
            .count();
        let replay = match packages {
            0 => NONE.to_string(),
            1 => "1 package".to_string(),
            n => format!("{n} packages"),
        };
        let has_op = findings.iter().any(|f| f.op.is_some());
        // One shape's row shows its dims; rows summed show how many shapes.
        let one_shape = findings
            .iter()
            .find(|f| f.op.as_ref().is_some_and(|op| summed_shapes(op).is_none()));
        let shapes = match (has_op, group.shapes, one_shape) {
            (false, _, _) => NONE.to_string(),
            (true, 1, Some(f)) => shorten(shape_of(f), 40),
            (true, n, _) => shapes_text(n),
        };
        let metric = findings
            .first()
            .map(|f| f.metric.clone())
            .filter(|m| !m.is_empty() && has_op && findings.iter().all(|f| &f.metric == m));
        let accepted = acceptances(&findings);
        let details = has_op
            && (rows.len() > 1
                || accepted.is_some()
                || group.advice.is_some()
                || group.path_a.is_some()
                || group.path_b.is_some()
                || packages > 0);
        GroupView {
            severity: group.severity.as_str(),
            inconclusive: group.inconclusive,
            icon: match group.severity {
                Severity::Fail if group.inconclusive => "❔",
                Severity::Fail => "❌",
                Severity::Warn => "⚠️",
                Severity::Accepted => "☑️",
                Severity::Info => "ℹ️",
            },
            workload: shorten(&group.workload, 60),
            op: shorten(&group.label, 60),
            shapes,
            delta: delta_with_per(group),
            impact: signed_percent(group.impact_percent),
            why: why(group, &findings, cross_platform),
            replay,
            replay_url: url.filter(|_| packages > 0).map(str::to_string),
            summary: shorten(&group.summary, 200),
            accepted: accepted.map(|a| shorten(&a, 500)),
            advice: group.advice.as_deref().map(|s| shorten(s, 500)),
            path_a: group.path_a.as_deref().map(|s| shorten(s, 500)),
            path_b: group.path_b.as_deref().map(|s| shorten(s, 500)),
            metric: metric.map(|m| shorten(&m, 80)),
            rows,
            details,
            impact_value: group
                .impact_percent
                .filter(|v| v.is_finite())
                .unwrap_or(0.0),
            about_op: has_op,
            level: group.severity,
            kind: group.kind,
            size: findings.len(),
            accept: findings.first().and_then(|f| {
                // What the accept matcher matches: an op's name, a timeline
                // finding's `timeline.METRIC`, another rule's name with its
                // `[N]` index escaped for the glob (`efficiency[[]0[]]`).
                let value = match &f.op {
                    Some(op) => op.name.clone(),
                    None if f.kind == FindingKind::Timeline && !f.metric.is_empty() => {
                        format!("rule:timeline.{}", f.metric)
                    }
                    None => format!(
                        "rule:{}",
                        f.rule
                            .replace('[', "\u{1}")
                            .replace(']', "[]]")
                            .replace('\u{1}', "[[]")
                    ),
                };
                let plain = |c: char| c.is_ascii_alphanumeric() || "_:.<>,*/[]-".contains(c);
                (value.len() <= 120 && value.chars().all(plain)).then_some(value)
            }),
            dims: one_shape
                .filter(|_| group.shapes == 1)
                .map(|f| shape_of(f).to_string()),
        }
    }
}

/// The verdict's groups as views: the flagged ones (fail and warn, and
/// accepted) fail first, ops before timeline lines, then the larger
/// impact; and the info ones, in the verdict's order, less those the
/// cross-platform report lists ([`Finding::is_platform_gap`]). Every renderer lists
/// them in this order.
pub(super) fn group_views(
    verdict: &Verdict,
    groups: &[FindingGroup],
    artifact_url: Option<&str>,
) -> (Vec<GroupView>, Vec<GroupView>) {
    // The cross-platform report lists its ops on its own (gaps.rs).
    let reported = |g: &&FindingGroup| {
        g.findings.iter().all(|&i| {
            verdict
                .findings
                .get(i)
                .is_some_and(Finding::is_platform_gap)
        })
    };
    let views = groups
        .iter()
        .filter(|g| !reported(g))
        .map(|g| GroupView::new(g, verdict, artifact_url));
    let (mut flagged, info): (Vec<GroupView>, Vec<GroupView>) =
        views.partition(|g| g.level != Severity::Info);
    flagged.sort_by(|a, b| {
        (a.level != Severity::Fail)
            .cmp(&(b.level != Severity::Fail))
            .then(b.about_op.cmp(&a.about_op))
            .then(b.impact_value.abs().total_cmp(&a.impact_value.abs()))
    });
    (flagged, info)
}

/// The lines (groups) every output counts: the comment's and summary's
/// counts line, the terminal's, the GitHub outputs. One count for all, so
/// that no two of them disagree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LineCounts {
    /// Failing lines the data confirms.
    pub failing: usize,
    /// Failing lines the data cannot confirm ([`FindingGroup::inconclusive`]).
    pub inconclusive: usize,
    /// Warning lines.
    pub warning: usize,
    /// Failing lines that are slowdowns (an op, a collective, a ratio).
    pub regressions: usize,
    /// Improvement lines.
    pub improvements: usize,
    /// Accepted lines.
    pub accepted: usize,
}

/// The lines of `groups` (the verdict's, [`verdict_groups`](crate::gate::judge::verdict_groups)) counted.
pub fn line_counts(groups: &[FindingGroup]) -> LineCounts {
    let count = |keep: &dyn Fn(&FindingGroup) -> bool| groups.iter().filter(|g| keep(g)).count();
    LineCounts {
        failing: count(&|g| g.severity == Severity::Fail && !g.inconclusive),
        inconclusive: count(&|g| g.severity == Severity::Fail && g.inconclusive),
        warning: count(&|g| g.severity == Severity::Warn),
        regressions: count(&|g| {
            g.severity == Severity::Fail
                && !g.inconclusive
                && matches!(
                    g.kind,
                    FindingKind::Regression
                        | FindingKind::Collective
                        | FindingKind::UnexpectedRatio
                )
        }),
        improvements: count(&|g| g.kind == FindingKind::Improvement),
        accepted: count(&|g| g.severity == Severity::Accepted),
    }
}

/// How many findings `groups` hold (a line can hold several).
pub(super) fn findings_in(groups: &[GroupView]) -> usize {
    groups.iter().map(|g| g.size).sum()
}

/// The group's Δ with what its times are per: `+25.0%/call`; `—` without one.
pub(super) fn delta_with_per(group: &FindingGroup) -> String {
    let text = signed_percent(group.delta_percent);
    match group.delta_per {
        Some(per) if text != NONE => format!("{text}/{}", per.as_str()),
        _ => text,
    }
}

/// The short reason cell: the kernels for a slowdown (with the expected
/// ratio in a cross-platform run), else the kind; for a finding about no op
/// without a figure (nothing to compare, a policy entry, integrity), its
/// message: the reason is the finding.
fn why(group: &FindingGroup, findings: &[&Finding], cross_platform: bool) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(f) = findings
        .first()
        .filter(|f| f.op.is_none() && group.delta_percent.is_none())
    {
        return shorten(&f.message, WHY_MESSAGE_CHARS);
    }
    if findings.iter().any(|f| f.rule == DRIFT_RULE) {
        return "drift over merges".to_string();
    }
    if group.inconclusive {
        // Why it cannot fail: one measurement a side (the advice says more).
        return "measured once".to_string();
    }
    match group.kind {
        FindingKind::Regression | FindingKind::Improvement | FindingKind::UnexpectedRatio => {
            match group.same_kernels {
                Some(true) => parts.push("same kernels".to_string()),
                Some(false) => parts.push("kernels changed".to_string()),
                None => parts.push(kind_label(group.kind).to_string()),
            }
            if let Some((b, c)) = group.calls.filter(|(b, c)| b != c) {
                parts.push(format!("calls {b} → {c}"));
            }
        }
        kind => parts.push(kind_label(kind).to_string()),
    }
    if cross_platform {
        let expected: Vec<f64> = findings
            .iter()
            .filter_map(|f| f.expected_ratio.filter(|r| r.is_finite()))
            .collect();
        // Learned over the same runs for every row of a group: the most
        // runs and the widest spread stand for them.
        let learned = findings
            .iter()
            .filter_map(|f| f.statistics.expected_learned)
            .reduce(|a, b| LearnedFrom {
                runs: a.runs.max(b.runs),
                spread_percent: a.spread_percent.max(b.spread_percent),
            });
        if let (Some(lo), Some(hi)) = (
            expected.iter().copied().reduce(f64::min),
            expected.iter().copied().reduce(f64::max),
        ) {
            let ratio = if (hi - lo).abs() < 0.005 {
                format!("×{lo:.2}")
            } else {
                format!("×{lo:.2}…{hi:.2}")
            };
            parts.push(match learned {
                Some(learned) => {
                    // How far the ratio moved from its learned value: the
                    // largest move among the rows.
                    let moved = findings
                        .iter()
                        .filter_map(|f| Some((1.0 + f.delta_percent? / 100.0) / f.expected_ratio?))
                        .filter(|m| m.is_finite())
                        .max_by(|a, b| (a - 1.0).abs().total_cmp(&(b - 1.0).abs()));
                    match moved {
                        Some(m) => format!(
                            "ratio {:+.0}% vs {ratio} {}",
                            (m - 1.0) * 100.0,
                            learned.describe()
                        ),
                        None => format!("{ratio} {}", learned.describe()),
                    }
                }
                None => match group.delta_percent.filter(|_| (hi - lo).abs() < 0.005) {
                    Some(delta) => against_expected(1.0 + delta / 100.0, lo, "expected"),
                    None => format!("expected {ratio}"),
                },
            });
        }
    }
    parts.join(", ")
}

/// The longest message a reason cell quotes, in characters.
const WHY_MESSAGE_CHARS: usize = 200;

/// A replay package's file name (the artifact holds the `replay/` folder).
pub(super) fn package_name(path: &str) -> String {
    shorten(path.rsplit('/').next().unwrap_or(path), 60)
}

/// Each distinct acceptance among `findings`, in one sentence: `accepted by
/// accept[0] (name=aten::mm): reason, until 2026-12-31`.
fn acceptances(findings: &[&Finding]) -> Option<String> {
    let mut texts: Vec<String> = Vec::new();
    for a in findings.iter().filter_map(|f| f.accepted.as_ref()) {
        let until = a
            .expires
            .as_deref()
            .map_or(String::new(), |d| format!(", until {d}"));
        let text = format!("accepted by {} ({}): {}{until}", a.by, a.matcher, a.reason);
        if !texts.contains(&text) {
            texts.push(text);
        }
    }
    (!texts.is_empty()).then(|| texts.join("; "))
}
