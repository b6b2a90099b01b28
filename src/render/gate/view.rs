//! The view model of the Markdown documents: a verdict turned once into the
//! display strings and minijinja values the templates lay out
//! ([`Prepared`]), and the context for one level of detail ([`Detail`]).

use minijinja::context;
use minijinja::value::{Serde, Value};
use serde::Serialize;

use super::chart::{chart, fenced_diff};
use super::finding::{NONE, headline_text, op_label, shape_of, signed_percent, status, title};
use super::gaps::{PATH_B, gap_sections};
use super::group::{GroupView, LineCounts, findings_in, group_views, line_counts};
use crate::gate::judge::verdict_groups;
use crate::gate::verdict::{
    Counts, EnvironmentSummary, FindingGroup, Severity, Verdict, WorkloadSummary,
};
use crate::render::text::{escape, human_us, shorten};

#[derive(Serialize)]
struct EnvRow {
    label: &'static str,
    baseline: String,
    candidate: String,
}

#[derive(Serialize)]
struct TimelineView {
    metric: String,
    baseline: String,
    candidate: String,
    delta: String,
}

#[derive(Serialize)]
struct WorkloadView {
    name: String,
    cross_platform: bool,
    environment: Vec<EnvRow>,
    timeline: Vec<TimelineView>,
    matched: usize,
    unchanged: usize,
    notes: Vec<String>,
}

impl WorkloadView {
    pub(super) fn new(w: &WorkloadSummary) -> WorkloadView {
        let (b, c) = (&w.baseline, &w.candidate);
        let mut environment = vec![EnvRow {
            label: "GPUs",
            baseline: gpus(b),
            candidate: gpus(c),
        }];
        let optional = [
            ("hardware", &b.hardware, &c.hardware),
            ("runtime", &b.runtime, &c.runtime),
            ("PyTorch", &b.pytorch, &c.pytorch),
            ("distributed", &b.distributed, &c.distributed),
        ];
        for (label, baseline, candidate) in optional {
            if baseline.is_some() || candidate.is_some() {
                let show = |value: &Option<String>| {
                    value
                        .as_deref()
                        .map_or(NONE.to_string(), |s| shorten(s, 80))
                };
                environment.push(EnvRow {
                    label,
                    baseline: show(baseline),
                    candidate: show(candidate),
                });
            }
        }
        environment.push(EnvRow {
            label: "runs",
            baseline: b.runs.to_string(),
            candidate: c.runs.to_string(),
        });
        WorkloadView {
            name: shorten(&w.name, 100),
            cross_platform: w.cross_platform,
            environment,
            timeline: w
                .timeline
                .iter()
                .map(|t| TimelineView {
                    metric: shorten(&t.metric.replace('_', " "), 60),
                    baseline: human_us(t.baseline_us),
                    candidate: human_us(t.candidate_us),
                    delta: signed_percent(t.delta_percent),
                })
                .collect(),
            matched: w.matched,
            unchanged: w.unchanged,
            notes: w.notes.iter().map(|n| shorten(n, 300)).collect(),
        }
    }
}

fn gpus(e: &EnvironmentSummary) -> String {
    if e.gpus.trim().is_empty() {
        "none recorded".to_string()
    } else {
        shorten(&e.gpus, 80)
    }
}

/// Everything the templates show, computed once; [`Detail`] picks how much.
pub(super) struct Prepared {
    base: Value,
    /// Fail and warn groups: fail first, ops before timeline lines, then the larger impact.
    pub(super) flagged: Vec<GroupView>,
    /// Info groups.
    pub(super) info: Vec<GroupView>,
    pub(super) diffs: Vec<Value>,
    /// For the minimal fallback.
    status: (&'static str, &'static str),
    headline: String,
    counts_line: String,
}

impl Prepared {
    /// The view of `verdict`; replay packages link to `artifact_url` when given.
    pub(super) fn new(verdict: &Verdict, artifact_url: Option<&str>) -> Prepared {
        let groups = verdict_groups(verdict);
        let (flagged, info) = group_views(verdict, &groups, artifact_url);
        let diffs: Vec<Value> = verdict
            .findings
            .iter()
            .filter_map(|f| {
                let diff = f.kernel_diff.as_deref()?;
                Some(context! {
                    op => shorten(&op_label(f), 80),
                    shape => shorten(shape_of(f), 60),
                    workload => shorten(&f.workload, 60),
                    block => Value::from_safe_string(fenced_diff(diff)),
                })
            })
            .collect();
        let (icon, status_text) = status(verdict);
        // Bounded: `comment` renders a report.json that may come from anywhere.
        let headline = shorten(headline_text(&verdict.headline), 500);
        let c = &verdict.counts;
        let lines = line_counts(&groups);
        let workloads: Vec<WorkloadView> =
            verdict.workloads.iter().map(WorkloadView::new).collect();
        let chart_groups: Vec<&FindingGroup> = groups
            .iter()
            .filter(|g| g.severity != Severity::Info)
            .collect();
        let base = context! {
            status => status_text,
            icon => icon,
            headline => headline.clone(),
            title => title(status_text, &headline),
            counts => Value::from(Serde(c)),
            failing => lines.failing,
            inconclusive => lines.inconclusive,
            warning => lines.warning,
            lines => Value::from(Serde(&lines)),
            workloads => Value::from(Serde(&workloads)),
            multi_workload => verdict.workloads.len() > 1,
            cross_platform => verdict.workloads.iter().any(|w| w.cross_platform),
            chart => Value::from_safe_string(chart(&chart_groups, &verdict.findings)),
            policy => shorten(&verdict.policy, 200),
            version => shorten(&verdict.tracegate_version, 40),
            schema_version => verdict.schema_version,
            gaps => Value::from(Serde(gap_sections(verdict, artifact_url))),
            gaps_path_b => PATH_B,
            verdict => Value::from(Serde(verdict)),
        };
        Prepared {
            base,
            flagged,
            info,
            diffs,
            status: (icon, status_text),
            headline,
            counts_line: counts_line(&lines, c),
        }
    }

    /// Every diff, info row and flagged row: the most detail there is.
    pub(super) fn all_detail(&self) -> Detail {
        Detail {
            diffs: self.diffs.len(),
            info: self.info.len(),
            flagged: self.flagged.len(),
        }
    }

    /// The template context for one level of detail, with the note on what
    /// `detail` leaves out compared with `start`.
    pub(super) fn context(&self, start: &Detail, detail: &Detail) -> Value {
        let mut omitted: Vec<String> = Vec::new();
        if detail.diffs < start.diffs {
            omitted.push(format!(
                "{} of {} kernel-selection diffs",
                start.diffs - detail.diffs,
                self.diffs.len()
            ));
        }
        if detail.info < start.info {
            omitted.push(format!("{} info lines", start.info - detail.info));
        }
        if detail.flagged < start.flagged {
            omitted.push(format!(
                "{} of {} flagged lines (those with the least impact)",
                start.flagged - detail.flagged,
                self.flagged.len()
            ));
        }
        let flagged = &self.flagged[..detail.flagged];
        context! {
            next => next_step(&self.flagged),
            flagged => Value::from(Serde(flagged)),
            flagged_total => self.flagged.len(),
            sections => Value::from(Serde(sections(flagged))),
            info => Value::from(Serde(&self.info[..detail.info])),
            info_total => self.info.len(),
            info_findings => findings_in(&self.info),
            kernel_diffs => self.diffs[..detail.diffs].to_vec(),
            kernel_diffs_total => self.diffs.len(),
            omitted => omitted,
            ..self.base.clone()
        }
    }

    /// The last resort when even the smallest rendering is too long: the
    /// verdict line and the counts, built without the template.
    pub(super) fn minimal(&self, prefix: &str) -> String {
        let (icon, status) = self.status;
        format!(
            "{prefix}## {icon} tracegate: {}\n\n{}\n\n> [!NOTE]\n> Even without its tables this report would be too long for GitHub, so it holds only the verdict. `report.json` has everything.\n",
            escape(&title(status, &self.headline)),
            self.counts_line
        )
    }
}

fn counts_line(lines: &LineCounts, c: &Counts) -> String {
    let inconclusive = if lines.inconclusive > 0 {
        format!(" · **{}** inconclusive", lines.inconclusive)
    } else {
        String::new()
    };
    let accepted = if lines.accepted > 0 {
        format!(" · {} accepted", lines.accepted)
    } else {
        String::new()
    };
    format!(
        "**{}** failing{inconclusive} · **{}** warning{} · {} improvement{} · {} unchanged · {} new · {} missing{accepted}",
        lines.failing,
        lines.warning,
        if lines.warning == 1 { "" } else { "s" },
        lines.improvements,
        if lines.improvements == 1 { "" } else { "s" },
        c.unchanged,
        c.new,
        c.missing
    )
}

/// The first screen's answer for the top flagged line (failing or
/// warning): what it is (`line`: its summary), what to do (`advice`: the
/// group's advice, else its Path B, else Path A) and what accepts it:
/// `accept`, the commit trailers, and `label`, the PR labels (code spans,
/// safe), one for every line at the top line's severity — a timeline line
/// moves with the op that caused it, and accepting the op alone would
/// leave the gate failing on it — or none when a line has no pattern or
/// there are more than [`MAX_SUGGESTED_TRAILERS`].
/// The most accept trailers the first screen lists.
const MAX_SUGGESTED_TRAILERS: usize = 5;

fn next_step(flagged: &[GroupView]) -> Option<Value> {
    let g = flagged.first()?;
    if !matches!(g.level, Severity::Fail | Severity::Warn) {
        return None;
    }
    let advice = g
        .advice
        .clone()
        .or_else(|| g.path_b.clone().map(|p| format!("Path B: {p}")))
        .or_else(|| g.path_a.clone().map(|p| format!("Path A: {p}")));
    let mut patterns: Vec<&str> = Vec::new();
    for line in flagged.iter().filter(|f| f.level == g.level) {
        let Some(pattern) = line.accept.as_deref() else {
            patterns.clear();
            break;
        };
        if !patterns.contains(&pattern) {
            patterns.push(pattern);
        }
    }
    // More than a few is no longer one step to take: the generic advice.
    if patterns.len() > MAX_SUGGESTED_TRAILERS {
        patterns.clear();
    }
    let spans = |prefix: &str| {
        let spans: Vec<String> = patterns.iter().map(|p| format!("`{prefix}{p}`")).collect();
        Value::from_safe_string(match spans.split_last() {
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
            None => String::new(),
        })
    };
    Some(context! {
        line => g.summary.clone(),
        workload => g.workload.clone(),
        advice => advice,
        plural => patterns.len() > 1,
        accept => (!patterns.is_empty()).then(|| spans("Tracegate-Accept: ")),
        label => (!patterns.is_empty()).then(|| spans("tracegate-accept:")),
    })
}

/// The flagged groups by workload, in order of each workload's first group.
#[derive(Serialize)]
struct Section<'a> {
    workload: &'a str,
    groups: Vec<&'a GroupView>,
}

fn sections(flagged: &[GroupView]) -> Vec<Section<'_>> {
    let mut sections: Vec<Section> = Vec::new();
    for group in flagged {
        match sections.iter_mut().find(|s| s.workload == group.workload) {
            Some(section) => section.groups.push(group),
            None => sections.push(Section {
                workload: &group.workload,
                groups: vec![group],
            }),
        }
    }
    sections
}

/// How much detail a rendering shows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Detail {
    /// Kernel diffs shown.
    pub(super) diffs: usize,
    /// Info rows shown.
    pub(super) info: usize,
    /// Flagged rows shown (largest impact first).
    pub(super) flagged: usize,
}
