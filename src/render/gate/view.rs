//! The view model of the Markdown documents: a verdict turned once into the
//! display strings and minijinja values the templates lay out
//! ([`Prepared`]), and the context for one level of detail ([`Detail`]).

use minijinja::context;
use minijinja::value::{Serde, Value};
use serde::Serialize;

use super::chart::{chart, fenced_diff};
use super::finding::{NONE, Row, headline_text, op_label, shape_of, signed_percent, status};
use crate::gate::verdict::{EnvironmentSummary, Finding, Severity, Verdict, WorkloadSummary};
use crate::render::text::{escape, human_us, shorten};

const MAX_RECOMMENDATIONS: usize = 10;

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

#[derive(Serialize)]
struct Recommendation {
    op: String,
    shape: Option<String>,
    workload: String,
    message: String,
    path_a: Option<String>,
    path_b: Option<String>,
    replay_package: Option<String>,
}

/// Everything the templates show, computed once; [`Detail`] picks how much.
pub(super) struct Prepared {
    base: Value,
    pub(super) flagged: Vec<Value>,
    pub(super) info: Vec<Value>,
    all: Vec<Value>,
    pub(super) diffs: Vec<Value>,
    /// For the minimal fallback.
    status: (&'static str, &'static str),
    headline: String,
    counts_line: String,
}

impl Prepared {
    pub(super) fn new(verdict: &Verdict) -> Prepared {
        let mut flagged: Vec<&Finding> = verdict
            .findings
            .iter()
            .filter(|f| f.severity != Severity::Info)
            .collect();
        // Largest impact first; findings without one keep the verdict's order after them.
        flagged.sort_by(|a, b| {
            let key = |f: &Finding| f.impact_percent.filter(|v| v.is_finite()).map(f64::abs);
            match (key(a), key(b)) {
                (Some(x), Some(y)) => y.total_cmp(&x),
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => std::cmp::Ordering::Equal,
            }
        });
        let recommendations: Vec<Recommendation> = flagged
            .iter()
            .filter(|f| f.path_a.is_some() || f.path_b.is_some() || f.replay_package.is_some())
            .take(MAX_RECOMMENDATIONS)
            .map(|f| Recommendation {
                op: shorten(&op_label(f), 80),
                shape: f
                    .op
                    .as_ref()
                    .filter(|op| !op.input_dims.is_empty())
                    .map(|op| shorten(&op.input_dims, 60)),
                workload: shorten(&f.workload, 60),
                message: shorten(&f.message, 400),
                path_a: f.path_a.as_deref().map(|s| shorten(s, 500)),
                path_b: f.path_b.as_deref().map(|s| shorten(s, 500)),
                replay_package: f.replay_package.as_deref().map(|s| shorten(s, 200)),
            })
            .collect();
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
        let workloads: Vec<WorkloadView> =
            verdict.workloads.iter().map(WorkloadView::new).collect();
        let base = context! {
            status => status_text,
            icon => icon,
            headline => headline.clone(),
            counts => Value::from(Serde(c)),
            workloads => Value::from(Serde(&workloads)),
            multi_workload => verdict.workloads.len() > 1,
            chart => Value::from_safe_string(chart(&verdict.findings)),
            recommendations => Value::from(Serde(&recommendations)),
            policy => shorten(&verdict.policy, 200),
            version => shorten(&verdict.tracegate_version, 40),
            schema_version => verdict.schema_version,
            verdict => Value::from(Serde(verdict)),
        };
        Prepared {
            base,
            flagged: rows(flagged),
            info: rows(
                verdict
                    .findings
                    .iter()
                    .filter(|f| f.severity == Severity::Info),
            ),
            all: rows(&verdict.findings),
            diffs,
            status: (icon, status_text),
            headline,
            counts_line: format!(
                "Regressions **{}** · warnings **{}** · improvements **{}** · unchanged **{}** · new ops **{}** · missing ops **{}**",
                c.regressions, c.warnings, c.improvements, c.unchanged, c.new, c.missing
            ),
        }
    }

    /// The template context for one level of detail, with the note on what
    /// `detail` leaves out compared with `start`.
    pub(super) fn context(&self, start: &Detail, detail: &Detail) -> Value {
        let mut omitted: Vec<String> = Vec::new();
        if start.full_table && !detail.full_table {
            omitted.push("the table of all findings".to_string());
        }
        if detail.diffs < start.diffs {
            omitted.push(format!(
                "{} of {} kernel-selection diffs",
                start.diffs - detail.diffs,
                self.diffs.len()
            ));
        }
        if detail.info < start.info {
            omitted.push(format!("{} info findings", start.info - detail.info));
        }
        if detail.flagged < start.flagged {
            omitted.push(format!(
                "{} of {} flagged findings (those with the least impact)",
                start.flagged - detail.flagged,
                self.flagged.len()
            ));
        }
        context! {
            flagged => self.flagged[..detail.flagged].to_vec(),
            flagged_total => self.flagged.len(),
            info => self.info[..detail.info].to_vec(),
            info_total => self.info.len(),
            all_findings => if detail.full_table { self.all.clone() } else { Vec::new() },
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
            "{prefix}## {icon} tracegate: {status} · {}\n\n{}\n\n> [!NOTE]\n> Even without its tables this report would be too long for GitHub, so it holds only the verdict. `report.json` has everything.\n",
            escape(&self.headline),
            self.counts_line
        )
    }
}

fn rows<'a>(findings: impl IntoIterator<Item = &'a Finding>) -> Vec<Value> {
    findings
        .into_iter()
        .map(|f| Value::from(Serde(Row::new(f))))
        .collect()
}

/// How much detail a rendering shows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Detail {
    /// The table of all findings.
    pub(super) full_table: bool,
    /// Kernel diffs shown.
    pub(super) diffs: usize,
    /// Info rows shown.
    pub(super) info: usize,
    /// Flagged rows shown (largest impact first).
    pub(super) flagged: usize,
}
