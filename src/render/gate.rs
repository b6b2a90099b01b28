//! The gate's outputs: a [`Verdict`] as the pull-request comment
//! (`comment.md`), the GitHub job summary (`summary.md`), the terminal table
//! and `report.json`.
//!
//! The two Markdown documents are rendered with minijinja from
//! `templates/comment.md.j2` and `templates/summary.md.j2`, compiled into the
//! binary; a template directory given by the user overrides either file.
//! Undefined variables are errors (strict mode), and every value a template
//! prints is escaped for GitHub Markdown (the custom auto-escape `markdown`,
//! see [`escape_md`]) unless Rust marked it safe, so an override cannot
//! forget to escape a kernel name. Values are formatted here (units,
//! signs, shortened names); the template only lays them out.
//!
//! GitHub rejects a comment over 65,536 characters and a step summary over
//! 1 MiB. Both renderers leave detail out, least important first, until the
//! document fits, and tell the reader what was left out (the `omitted`
//! variable): for the comment, the full findings table, then kernel diffs
//! beyond the first [`KEPT_DIFFS`], then the info findings, then the flagged
//! rows with the least impact.
//!
//! # Template variables
//!
//! | variable | meaning |
//! |---|---|
//! | `status` | `pass`, `pass with warnings` or `fail` |
//! | `icon` | ✅, ⚠️ or ❌ |
//! | `headline` | the verdict's headline without a leading status icon |
//! | `counts` | `regressions`, `warnings`, `failures`, `improvements`, `unchanged`, `new`, `missing` |
//! | `workloads` | per workload: `name`, `cross_platform`, `environment` (rows of `label`, `baseline`, `candidate`), `timeline` (rows of `metric`, `baseline`, `candidate`, `delta`), `matched`, `unchanged`, `notes` |
//! | `multi_workload` | more than one workload (show a workload column) |
//! | `flagged`, `flagged_total` | fail and warn findings shown, largest impact first (rows below); how many there are |
//! | `info`, `info_total` | info findings shown (rows below); how many there are |
//! | `all_findings` | every finding (rows below), or empty when left out |
//! | `kernel_diffs`, `kernel_diffs_total` | kernel-selection diffs shown (`op`, `shape`, `workload`, `block`: a fenced `diff` code block, safe); how many there are |
//! | `chart` | a fenced Mermaid bar chart of the largest changes (safe), or empty |
//! | `recommendations` | up to ten flagged findings with advice: `op`, `shape`, `workload`, `message`, `path_a`, `path_b`, `replay_package` (none when absent) |
//! | `omitted` | what was left out to fit, one phrase each; empty when nothing was |
//! | `policy`, `version`, `schema_version` | the policy used, the tracegate version, the report schema version |
//! | `verdict` | the whole [`Verdict`], as in `report.json` |
//!
//! A finding row has `severity` (`fail`, `warn`, `info`), `icon`, `kind`
//! (`regression`, `kernel selection`, …), `rule`, `workload`, `op`, `shape`,
//! `dtypes`, `module`, `metric`, `baseline`, `candidate`, `delta`,
//! `interval`, `expected`, `limit`, `impact`, `priority` and `message`, all
//! display strings (`—` where there is no value). The filter `md` escapes a
//! value explicitly (useful inside `{% autoescape false %}`).

use std::fmt::Write;
use std::path::Path;

use comfy_table::presets::UTF8_BORDERS_ONLY;
use comfy_table::{Cell, CellAlignment, ContentArrangement, Table};
use minijinja::syntax::SyntaxConfig;
use minijinja::value::{Serde, StringInput, Value};
use minijinja::{AutoEscape, Environment, Output, State, UndefinedBehavior, context};
use serde::Serialize;

use super::human_us;
use super::markdown::{escape, shorten};
use super::terminal::Style;
use crate::gate::verdict::{
    EnvironmentSummary, Finding, FindingKind, FindingPriority, Outcome, Severity, Verdict,
    WorkloadSummary,
};

/// GitHub's limit on a comment body, in characters (counted here as UTF-16
/// code units, which is never fewer than GitHub's count).
pub const COMMENT_LIMIT: usize = 65_536;

/// GitHub's limit on one step's job summary, in bytes.
pub const SUMMARY_LIMIT: usize = 1 << 20;

/// Kernel-selection diffs kept once the comment has to shrink.
pub const KEPT_DIFFS: usize = 5;

/// The embedded comment template.
const COMMENT_TEMPLATE: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/templates/comment.md.j2"
));

/// The embedded summary template.
const SUMMARY_TEMPLATE: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/templates/summary.md.j2"
));

const COMMENT_FILE: &str = "comment.md.j2";
const SUMMARY_FILE: &str = "summary.md.j2";
const MAX_RECOMMENDATIONS: usize = 10;
const CHART_BARS: usize = 10;
const DIFF_MAX_LINES: usize = 80;
const DIFF_MAX_CHARS: usize = 6_000;
const AUTO_ESCAPE: &str = "markdown";

/// A template that cannot be read or rendered.
#[derive(Debug, thiserror::Error)]
pub enum TemplateError {
    /// The override file exists but cannot be read.
    #[error("{path}: cannot read: {source}")]
    Read {
        /// The template file.
        path: String,
        /// What the OS said.
        source: std::io::Error,
    },
    /// A syntax error, an undefined variable or a failed filter.
    #[error("{path}:{line}: {message}")]
    Render {
        /// The template (the embedded name or the override's path).
        path: String,
        /// Line in the template (0 when unknown).
        line: usize,
        /// What went wrong, naming the undefined variable where there is one.
        message: String,
    },
}

/// The hidden line that opens the comment, so that a later run can find and
/// update it: `<!-- tracegate:KEY -->`. Characters other than ASCII letters,
/// digits and `._:/-` become `_`; an empty key is `default`.
pub fn comment_marker(key: &str) -> String {
    let key = only_ascii(key, "._:/-", '_');
    let key = if key.is_empty() { "default" } else { &key };
    format!("<!-- tracegate:{key} -->")
}

/// Escapes trace text for GitHub Markdown: [`escape`] (tables, HTML,
/// @mentions, line breaks), plus `~` and `$` (strikethrough, maths), a
/// zero-width joiner after `#` before a digit (no issue reference), and
/// control and bidirectional-override characters removed.
pub fn escape_md(text: &str) -> String {
    let escaped = escape(&clean(text));
    let mut out = String::with_capacity(escaped.len() + 8);
    let mut chars = escaped.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '~' | '$' => {
                out.push('\\');
                out.push(c);
            }
            '#' => {
                out.push('#');
                if chars.peek().is_some_and(char::is_ascii_digit) {
                    out.push('\u{200d}');
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// Control characters become spaces (line breaks included, as in a table
/// cell); bidirectional overrides are dropped.
fn clean(text: &str) -> String {
    text.chars()
        .filter(|c| !matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'))
        .map(|c| {
            if c.is_control() || c == '\u{2028}' || c == '\u{2029}' {
                ' '
            } else {
                c
            }
        })
        .collect()
}

/// Renders `comment.md`: the marker for `key`, then the comment template
/// (`template_dir/comment.md.j2` when that file exists, else the embedded
/// one), shrunk to fit [`COMMENT_LIMIT`].
pub fn render_comment(
    verdict: &Verdict,
    key: &str,
    template_dir: Option<&Path>,
) -> Result<String, TemplateError> {
    let prepared = Prepared::new(verdict);
    let start = Detail {
        full_table: true,
        diffs: prepared.diffs.len(),
        info: prepared.info.len(),
        flagged: prepared.flagged.len(),
    };
    let template = load_template(template_dir, COMMENT_FILE, COMMENT_TEMPLATE)?;
    let marker = comment_marker(key);
    fit(
        &template,
        &prepared,
        Fit {
            start,
            prefix: &format!("{marker}\n"),
            fits: |text| text.encode_utf16().count() <= COMMENT_LIMIT,
        },
    )
}

/// Renders `summary.md` for `$GITHUB_STEP_SUMMARY` from the summary template
/// (`template_dir/summary.md.j2` overrides it), shrunk to fit
/// [`SUMMARY_LIMIT`] by leaving out info rows, then flagged rows.
pub fn render_summary(
    verdict: &Verdict,
    template_dir: Option<&Path>,
) -> Result<String, TemplateError> {
    let prepared = Prepared::new(verdict);
    let start = Detail {
        full_table: false,
        diffs: 0,
        info: prepared.info.len(),
        flagged: prepared.flagged.len(),
    };
    let template = load_template(template_dir, SUMMARY_FILE, SUMMARY_TEMPLATE)?;
    fit(
        &template,
        &prepared,
        Fit {
            start,
            prefix: "",
            fits: |text| text.len() <= SUMMARY_LIMIT,
        },
    )
}

/// `report.json`: the verdict, pretty-printed, newline-terminated
/// (docs/REPORT.md, "The check report").
pub fn render_report_json(verdict: &Verdict) -> String {
    let mut text = serde_json::to_string_pretty(verdict).expect("a verdict serialises");
    text.push('\n');
    text
}

/// The terminal view: the verdict line, the counts, then the first `top`
/// findings (most important first) as a table, and the workloads' notes.
pub fn render_terminal(verdict: &Verdict, top: usize, style: Style) -> String {
    let (icon, status) = status(verdict);
    let paint = |code: &str, text: &str| {
        if style.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    };
    let colour = match status {
        "fail" => "1;31",
        "pass" => "1;32",
        _ => "1;33",
    };
    let headline = clean(headline_text(&verdict.headline));
    let mut out = String::new();
    let line = if headline.is_empty() {
        format!("{icon} tracegate: {status}")
    } else {
        format!("{icon} tracegate: {status} · {headline}")
    };
    let _ = writeln!(out, "{}", paint(colour, &line));
    let c = &verdict.counts;
    let _ = writeln!(
        out,
        "  regressions {} · warnings {} · improvements {} · unchanged {} · new ops {} · missing ops {}",
        c.regressions, c.warnings, c.improvements, c.unchanged, c.new, c.missing
    );
    if !verdict.findings.is_empty() && top > 0 {
        let mut table = Table::new();
        table.load_preset(UTF8_BORDERS_ONLY);
        if !style.color {
            table.force_no_tty();
        }
        table.set_header(
            [
                "finding",
                "op",
                "shape",
                "baseline",
                "candidate",
                "Δ",
                "impact",
                "priority",
            ]
            .into_iter()
            .map(Cell::new),
        );
        for f in verdict.findings.iter().take(top) {
            let row = Row::new(f);
            let finding = match f.severity {
                Severity::Fail => paint("31", &format!("FAIL {}", row.kind)),
                Severity::Warn => paint("33", &format!("warn {}", row.kind)),
                Severity::Info => format!("info {}", row.kind),
            };
            table.add_row(vec![
                finding,
                clean(&shorten(&op_label(f), 48)),
                clean(&shorten(shape_of(f), 40)),
                row.baseline,
                row.candidate,
                row.delta,
                row.impact,
                row.priority.to_string(),
            ]);
        }
        for index in 3..=6 {
            if let Some(column) = table.column_mut(index) {
                column.set_cell_alignment(CellAlignment::Right);
            }
        }
        // Wrap cells only when the table is wider than the terminal.
        let natural = table.to_string();
        if natural
            .lines()
            .any(|l| l.chars().count() > usize::from(style.width))
        {
            table.set_content_arrangement(ContentArrangement::Dynamic);
            table.set_width(style.width);
            let _ = writeln!(out, "{table}");
        } else {
            let _ = writeln!(out, "{natural}");
        }
        let more = verdict.findings.len().saturating_sub(top);
        if more > 0 {
            let _ = writeln!(
                out,
                "  … and {more} more findings (report.json has them all)"
            );
        }
    }
    for w in &verdict.workloads {
        for note in &w.notes {
            let _ = writeln!(out, "  note ({}): {}", clean(&w.name), clean(note));
        }
    }
    out
}

/// (icon, status) of the verdict.
fn status(verdict: &Verdict) -> (&'static str, &'static str) {
    match verdict.outcome {
        Outcome::Fail => ("❌", "fail"),
        Outcome::Pass if verdict.counts.warnings > 0 => ("⚠️", "pass with warnings"),
        Outcome::Pass => ("✅", "pass"),
    }
}

/// The headline without a leading status icon or `tracegate:` (the
/// templates print their own).
fn headline_text(headline: &str) -> &str {
    let mut text = headline.trim_start();
    for icon in ["✅", "⚠️", "⚠", "❌"] {
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
        FindingKind::Efficiency => "efficiency",
        FindingKind::Budget => "budget",
        FindingKind::NothingToCompare => "nothing to compare",
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
        Severity::Info => "ℹ️",
    }
}

/// What a finding is about: the op's name, else its metric.
fn op_label(f: &Finding) -> String {
    match &f.op {
        Some(op) => op.name.clone(),
        None if f.metric.is_empty() => "—".to_string(),
        None => f.metric.replace('_', " "),
    }
}

fn shape_of(f: &Finding) -> &str {
    f.op.as_ref().map_or("", |op| op.input_dims.as_str())
}

const NONE: &str = "—";

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

/// A value with its unit: µs as `human_us`, `%` as `12.3%`, else `N unit`.
fn with_unit(value: Option<f64>, unit: &str) -> String {
    match value {
        Some(v) if v.is_finite() => match unit {
            "µs" | "us" => human_us(v),
            "%" => format!("{v:.1}%"),
            "" => number(v),
            unit => format!("{} {unit}", number(v)),
        },
        _ => NONE.to_string(),
    }
}

fn signed_percent(value: Option<f64>) -> String {
    match value {
        Some(v) if v.is_finite() => format!("{v:+.1}%"),
        _ => NONE.to_string(),
    }
}

/// One finding as display strings (raw text: the template escapes it).
#[derive(Serialize)]
struct Row {
    severity: &'static str,
    icon: &'static str,
    kind: &'static str,
    rule: String,
    workload: String,
    op: String,
    shape: String,
    dtypes: String,
    module: String,
    metric: String,
    baseline: String,
    candidate: String,
    delta: String,
    interval: String,
    expected: String,
    limit: String,
    impact: String,
    priority: &'static str,
    message: String,
}

impl Row {
    fn new(f: &Finding) -> Row {
        let op = f.op.as_ref();
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
            baseline: with_unit(f.baseline, &f.unit),
            candidate: with_unit(f.candidate, &f.unit),
            delta: signed_percent(f.delta_percent),
            interval: match f.interval_percent {
                Some((low, high)) if low.is_finite() && high.is_finite() => {
                    format!("{low:+.1}% … {high:+.1}%")
                }
                _ => NONE.to_string(),
            },
            expected: match f.expected_ratio {
                Some(r) if r.is_finite() => format!("×{r:.2}"),
                _ => NONE.to_string(),
            },
            limit: with_unit(f.limit, &f.unit),
            impact: signed_percent(f.impact_percent),
            priority: priority_label(f.priority),
            message: or_dash(&shorten(&f.message, 300)),
        }
    }
}

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
    fn new(w: &WorkloadSummary) -> WorkloadView {
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
                    metric: t.metric.replace('_', " "),
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
struct Prepared {
    base: Value,
    flagged: Vec<Value>,
    info: Vec<Value>,
    all: Vec<Value>,
    diffs: Vec<Value>,
    /// For the minimal fallback.
    status: (&'static str, &'static str),
    headline: String,
    counts_line: String,
}

impl Prepared {
    fn new(verdict: &Verdict) -> Prepared {
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
        let headline = headline_text(&verdict.headline).to_string();
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
            policy => verdict.policy.clone(),
            version => verdict.tracegate_version.clone(),
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
    fn context(&self, start: &Detail, detail: &Detail) -> Value {
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
    fn minimal(&self, prefix: &str) -> String {
        let (icon, status) = self.status;
        format!(
            "{prefix}## {icon} tracegate: {status} · {}\n\n{}\n\n> [!NOTE]\n> Even without its tables this report would be too long for GitHub, so it holds only the verdict. `report.json` has everything.\n",
            escape_md(&shorten(&self.headline, 500)),
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
struct Detail {
    /// The table of all findings.
    full_table: bool,
    /// Kernel diffs shown.
    diffs: usize,
    /// Info rows shown.
    info: usize,
    /// Flagged rows shown (largest impact first).
    flagged: usize,
}

struct Fit<'a, F: Fn(&str) -> bool> {
    start: Detail,
    prefix: &'a str,
    fits: F,
}

/// Renders with less and less detail until the text fits.
fn fit<F: Fn(&str) -> bool>(
    template: &Loaded,
    prepared: &Prepared,
    plan: Fit<'_, F>,
) -> Result<String, TemplateError> {
    let start = plan.start;
    let attempt = |detail: &Detail| -> Result<Option<String>, TemplateError> {
        let mut text = plan.prefix.to_string();
        text.push_str(&template.render(prepared.context(&start, detail))?);
        Ok((plan.fits)(&text).then_some(text))
    };
    let mut detail = start;
    if let Some(text) = attempt(&detail)? {
        return Ok(text);
    }
    let reductions: [fn(&mut Detail); 3] = [
        |d| d.full_table = false,
        |d| d.diffs = d.diffs.min(KEPT_DIFFS),
        |d| d.info = 0,
    ];
    for reduce in reductions {
        let before = detail;
        reduce(&mut detail);
        if detail != before {
            if let Some(text) = attempt(&detail)? {
                return Ok(text);
            }
        }
    }
    // Keep as many flagged rows (largest impact first) as fit; failing that,
    // drop the remaining diffs and try again.
    for drop_diffs in [false, true] {
        if drop_diffs {
            if detail.diffs == 0 {
                break;
            }
            detail.diffs = 0;
        }
        let with = |flagged: usize| Detail { flagged, ..detail };
        let Some(mut best) = attempt(&with(0))? else {
            continue;
        };
        let (mut low, mut high) = (0, detail.flagged);
        while high - low > 1 {
            let middle = low + (high - low) / 2;
            match attempt(&with(middle))? {
                Some(text) => {
                    best = text;
                    low = middle;
                }
                None => high = middle,
            }
        }
        return Ok(best);
    }
    Ok(prepared.minimal(plan.prefix))
}

/// A diff in a fenced `diff` block whose fence is longer than any run of
/// backticks inside, so nothing in a kernel name can close it. Long diffs are
/// cut, with a line saying so.
fn fenced_diff(diff: &str) -> String {
    let mut body = String::new();
    let lines: Vec<&str> = diff.lines().collect();
    let mut shown = 0;
    for line in &lines {
        if shown == DIFF_MAX_LINES || body.len() + line.len() > DIFF_MAX_CHARS {
            break;
        }
        let line: String = line
            .chars()
            .map(|c| if c.is_control() && c != '\t' { ' ' } else { c })
            .collect();
        body.push_str(&line);
        body.push('\n');
        shown += 1;
    }
    if shown < lines.len() {
        let _ = writeln!(
            body,
            "… {} more lines (report.json has the whole diff)",
            lines.len() - shown
        );
    }
    let longest_run = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest_run.max(2) + 1);
    format!("{fence}diff\n{body}{fence}")
}

/// A Mermaid bar chart of the largest changes: each bar is the candidate as a
/// percentage of the baseline (100 = unchanged; bars start at 0, which is how
/// Mermaid draws them), with a line at 100. Empty when no finding has a
/// change.
fn chart(findings: &[Finding]) -> String {
    let mut changes: Vec<&Finding> = findings
        .iter()
        .filter(|f| f.delta_percent.is_some_and(f64::is_finite))
        .collect();
    if changes.is_empty() {
        return String::new();
    }
    let size = |f: &Finding| {
        (
            f.impact_percent
                .filter(|v| v.is_finite())
                .unwrap_or(0.0)
                .abs(),
            f.delta_percent.unwrap_or(0.0).abs(),
        )
    };
    changes.sort_by(|a, b| {
        let (x, y) = (size(a), size(b));
        y.0.total_cmp(&x.0).then(y.1.total_cmp(&x.1))
    });
    changes.truncate(CHART_BARS);
    let labels: Vec<String> = changes
        .iter()
        .enumerate()
        .map(|(i, f)| format!("\"{}. {}\"", i + 1, mermaid_label(&op_label(f))))
        .collect();
    let values: Vec<f64> = changes
        .iter()
        .map(|f| (100.0 + f.delta_percent.unwrap_or(0.0)).max(0.0))
        .collect();
    let top = values.iter().copied().fold(100.0, f64::max) * 1.1;
    let top = (top / 10.0).ceil() * 10.0;
    let bars: Vec<String> = values.iter().map(|v| format!("{v:.1}")).collect();
    let line: Vec<&str> = values.iter().map(|_| "100").collect();
    format!(
        "```mermaid\nxychart-beta\n    title \"Candidate as % of baseline (100 = unchanged)\"\n    x-axis [{}]\n    y-axis \"% of baseline\" 0 --> {top:.0}\n    bar [{}]\n    line [{}]\n```",
        labels.join(", "),
        bars.join(", "),
        line.join(", ")
    )
}

/// A Mermaid string label: at most 28 characters from a safe set (no quotes,
/// brackets, `#` entities or backticks).
fn mermaid_label(text: &str) -> String {
    shorten(&only_ascii(text, " _:.-/+=,()", '?'), 28)
}

/// `text` with every character other than ASCII letters, digits and
/// `allowed` replaced by `replacement`.
fn only_ascii(text: &str, allowed: &str, replacement: char) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || allowed.contains(c) {
                c
            } else {
                replacement
            }
        })
        .collect()
}

/// A parsed template and its environment.
struct Loaded {
    env: Environment<'static>,
    name: String,
}

impl Loaded {
    fn render(&self, context: Value) -> Result<String, TemplateError> {
        let template = self
            .env
            .get_template(&self.name)
            .map_err(|e| template_error(&self.name, &e))?;
        template
            .render(context)
            .map_err(|e| template_error(&self.name, &e))
    }
}

fn template_error(name: &str, error: &minijinja::Error) -> TemplateError {
    TemplateError::Render {
        path: name.to_string(),
        line: error.line().unwrap_or(0),
        message: match error.detail() {
            Some(detail) => format!("{}: {detail}", error.kind()),
            None => error.kind().to_string(),
        },
    }
}

/// `dir/file` when the directory is given and the file exists there, else
/// the embedded source.
fn load_template(
    dir: Option<&Path>,
    file: &str,
    embedded: &'static str,
) -> Result<Loaded, TemplateError> {
    let (name, source) = match dir.map(|d| d.join(file)).filter(|p| p.is_file()) {
        Some(path) => {
            let name = path.display().to_string();
            let source = std::fs::read_to_string(&path).map_err(|source| TemplateError::Read {
                path: name.clone(),
                source,
            })?;
            (name, source)
        }
        None => (file.to_string(), embedded.to_string()),
    };
    let mut env = environment();
    env.add_template_owned(name.clone(), source)
        .map_err(|e| template_error(&name, &e))?;
    Ok(Loaded { env, name })
}

/// The minijinja environment: strict undefined variables, trim/lstrip blocks,
/// trailing newline kept, Markdown auto-escaping, the `md` filter.
fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    // Debug info lets an undefined-variable error name the variable.
    env.set_debug(true);
    env.set_syntax(
        SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .keep_trailing_newline(true)
            .build()
            .expect("the default delimiters are valid"),
    );
    env.set_auto_escape_callback(|_| AutoEscape::Custom(AUTO_ESCAPE.into()));
    env.set_formatter(markdown_formatter);
    env.add_filter("md", |input: StringInput| {
        Value::from_safe_string(if input.is_safe() {
            input.as_str().to_string()
        } else {
            escape_md(input.as_str())
        })
    });
    env
}

fn display(value: &Value) -> String {
    value
        .as_str()
        .map_or_else(|| value.to_string(), str::to_string)
}

/// Prints values escaped for Markdown under the `markdown` auto-escape; safe
/// strings and other modes go to minijinja's own formatter.
fn markdown_formatter(
    out: &mut Output,
    state: &mut State,
    value: &Value,
) -> Result<(), minijinja::Error> {
    let markdown = matches!(state.auto_escape(), AutoEscape::Custom(name) if name == AUTO_ESCAPE);
    if value.is_safe() || !markdown {
        return minijinja::escape_formatter(out, state, value);
    }
    out.write_str(&escape_md(&display(value)))
        .map_err(minijinja::Error::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::verdict::{Counts, OpRef, TimelineRow, VERDICT_SCHEMA_VERSION};

    fn finding(name: &str, severity: Severity, kind: FindingKind, impact: f64) -> Finding {
        Finding {
            rule: "regression".to_string(),
            severity,
            kind,
            workload: "bert".to_string(),
            op: Some(OpRef {
                name: name.to_string(),
                input_dims: "((512, 768), (768, 768))".to_string(),
                input_type: "('c10::BFloat16', 'c10::BFloat16')".to_string(),
                input_strides: "((768, 1), (1, 768))".to_string(),
                category: "GEMM".to_string(),
                module_path: Some("Bert_0/Linear_0".to_string()),
            }),
            metric: "median kernel time per call".to_string(),
            baseline: Some(100.0),
            candidate: Some(100.0 * (1.0 + impact / 10.0)),
            unit: "µs".to_string(),
            delta_percent: Some(impact * 10.0),
            interval_percent: Some((impact * 8.0, impact * 12.0)),
            expected_ratio: None,
            limit: Some(10.0),
            impact_percent: Some(impact),
            priority: FindingPriority::High,
            message: format!("{name} is {:.0}% slower per call", impact * 10.0),
            path_a: None,
            path_b: None,
            kernel_diff: None,
            replay_package: None,
        }
    }

    fn verdict(findings: Vec<Finding>) -> Verdict {
        let side = |gpus: &str, runtime: &str| EnvironmentSummary {
            gpus: gpus.to_string(),
            hardware: None,
            runtime: Some(runtime.to_string()),
            pytorch: Some("2.5.1".to_string()),
            distributed: None,
            runs: 1,
        };
        let mut verdict = Verdict {
            schema_version: VERDICT_SCHEMA_VERSION,
            tracegate_version: "0.1.0".to_string(),
            outcome: if findings.iter().any(|f| f.severity == Severity::Fail) {
                Outcome::Fail
            } else {
                Outcome::Pass
            },
            headline: "❌ 1 regression fails the gate".to_string(),
            counts: Counts {
                regressions: 1,
                warnings: 1,
                failures: 1,
                improvements: 1,
                unchanged: 40,
                new: 0,
                missing: 0,
            },
            workloads: vec![WorkloadSummary {
                name: "bert".to_string(),
                baseline: side("NVIDIA H100 80GB HBM3", "CUDA 12.4"),
                candidate: side("NVIDIA H100 80GB HBM3", "CUDA 12.6"),
                cross_platform: false,
                timeline: vec![
                    TimelineRow {
                        metric: "total_time".to_string(),
                        baseline_us: 3907.8,
                        candidate_us: 4210.2,
                        delta_percent: Some(7.74),
                    },
                    TimelineRow {
                        metric: "idle_time".to_string(),
                        baseline_us: 598.4,
                        candidate_us: 611.0,
                        delta_percent: Some(2.1),
                    },
                ],
                matched: 43,
                unchanged: 40,
                notes: vec!["one sample per op: no confidence interval".to_string()],
            }],
            findings,
            policy: "policies/default.yaml".to_string(),
        };
        verdict.sort_findings();
        verdict
    }

    fn small_verdict() -> Verdict {
        let mut regression = finding("aten::mm", Severity::Fail, FindingKind::Regression, 3.1);
        regression.priority = FindingPriority::Critical;
        regression.path_a = Some("Fuse the bias add into the GEMM epilogue.".to_string());
        regression.path_b = Some("Replay the GEMM and tune its kernel for this shape.".to_string());
        regression.replay_package = Some("replay/aten_mm_0.zip".to_string());
        let mut selection = finding(
            "aten::bmm",
            Severity::Warn,
            FindingKind::KernelSelection,
            0.4,
        );
        selection.kernel_diff = Some(
            "--- baseline\n+++ candidate\n@@ -1 +1 @@\n-sm90_xmma_gemm_bf16_128x128\n+cutlass_80_wmma_tensorop_bf16_s161616gemm_32x32\n"
                .to_string(),
        );
        let mut improvement = finding(
            "aten::softmax",
            Severity::Info,
            FindingKind::Improvement,
            -1.2,
        );
        improvement.priority = FindingPriority::Medium;
        improvement.rule = "improvement".to_string();
        verdict(vec![improvement, selection, regression])
    }

    #[test]
    fn comment_snapshot() {
        let text = render_comment(&small_verdict(), "default", None).unwrap();
        insta::assert_snapshot!(text);
    }

    /// Two workloads, one of them cross-platform; warnings only.
    #[test]
    fn comment_snapshot_cross_platform() {
        let mut ratio = finding(
            "aten::_flash_attention_forward",
            Severity::Warn,
            FindingKind::UnexpectedRatio,
            1.5,
        );
        ratio.workload = "llama".to_string();
        ratio.expected_ratio = Some(0.74);
        ratio.rule = "cross_platform.slack".to_string();
        ratio.path_b = Some(
            "Generate a replay package for the kernel team and compare the attention kernel's \
             achieved bandwidth with the candidate platform's peak."
                .to_string(),
        );
        let mut missing = finding("aten::addmm", Severity::Info, FindingKind::MissingOp, 0.0);
        missing.baseline = Some(812.0);
        missing.candidate = None;
        missing.delta_percent = None;
        missing.interval_percent = None;
        missing.impact_percent = None;
        missing.priority = FindingPriority::Low;
        missing.message = "aten::addmm ran only in the baseline".to_string();
        let mut v = verdict(vec![ratio, missing]);
        v.outcome = Outcome::Pass;
        v.headline = "⚠️ 1 warning".to_string();
        v.counts = Counts {
            regressions: 0,
            warnings: 1,
            failures: 0,
            improvements: 0,
            unchanged: 80,
            new: 0,
            missing: 1,
        };
        let mut llama = v.workloads[0].clone();
        llama.name = "llama".to_string();
        llama.cross_platform = true;
        llama.candidate.gpus = "8 × AMD Instinct MI300X".to_string();
        llama.candidate.hardware = Some("mi300x".to_string());
        llama.baseline.hardware = Some("h100-sxm".to_string());
        llama.candidate.runtime = Some("ROCm 6.2".to_string());
        llama.candidate.distributed = Some("rank 0 of 8".to_string());
        llama.notes.clear();
        v.workloads.push(llama);
        let text = render_comment(&v, "default", None).unwrap();
        insta::assert_snapshot!(text);
    }

    #[test]
    fn summary_snapshot() {
        let text = render_summary(&small_verdict(), None).unwrap();
        insta::assert_snapshot!(text);
    }

    fn terminal(top: usize, color: bool, width: u16) -> String {
        render_terminal(&small_verdict(), top, Style { color, width })
    }

    #[test]
    fn terminal_table() {
        insta::assert_snapshot!(terminal(10, false, 120));
    }

    #[test]
    fn terminal_table_wraps_to_the_width() {
        let text = terminal(2, false, 80);
        assert!(
            text.lines().skip(2).all(|l| l.chars().count() <= 80),
            "{text}"
        );
        assert!(text.contains("… and 1 more findings"));
        assert!(terminal(10, true, 120).starts_with("\x1b[1;31m❌ tracegate: fail"));
    }

    #[test]
    fn headlines_lose_their_status_prefix() {
        assert_eq!(
            headline_text("❌ tracegate: 2 failing findings (2 regressions): x"),
            "2 failing findings (2 regressions): x"
        );
        assert_eq!(headline_text("⚠️ 1 warning"), "1 warning");
        assert_eq!(headline_text("no icon"), "no icon");
    }

    #[test]
    fn marker_keys_are_sanitised() {
        assert_eq!(comment_marker("default"), "<!-- tracegate:default -->");
        assert_eq!(comment_marker("a-->b\nc"), "<!-- tracegate:a--_b_c -->");
        assert_eq!(comment_marker(""), "<!-- tracegate:default -->");
        let text = render_comment(&small_verdict(), "nightly/h100", None).unwrap();
        assert!(text.starts_with("<!-- tracegate:nightly/h100 -->\n"));
    }

    #[test]
    fn escapes_hostile_trace_strings() {
        let hostile = "k|<script>alert(1)</script> @someone `x` ```\nnew line #12 ~~s~~ $x$";
        let escaped = escape_md(hostile);
        assert!(!escaped.contains('\n'));
        assert!(!escaped.contains('<'));
        assert!(!escaped.contains('`'));
        assert!(escaped.contains("\\|"));
        assert!(escaped.contains("@\u{200d}someone"));
        assert!(escaped.contains("#\u{200d}12"));
        assert!(escaped.contains("\\~\\~s\\~\\~"));
        assert!(escaped.contains("\\$x\\$"));
        assert_eq!(escape_md("a\u{202e}b\u{7}c"), "ab c");

        let mut f = finding(hostile, Severity::Fail, FindingKind::KernelSelection, 2.0);
        f.op.as_mut().unwrap().input_dims = "((1,)) | <img src=x> @dev".to_string();
        f.message = "slower @team <b>bold</b>\n| injected | row |".to_string();
        f.path_a = Some("see #123 and @octocat".to_string());
        f.kernel_diff = Some(format!("-{hostile}\n+kernel_with_````_backticks\n"));
        let text = render_comment(&verdict(vec![f]), "default", None).unwrap();
        let (prose, code) = split_code(&text);
        assert!(!prose.contains("<script>"));
        assert!(!prose.contains("<img"));
        assert!(!prose.contains("<b>"));
        for mention in ["@someone", "@dev", "@team", "@octocat"] {
            assert!(!prose.contains(mention), "{mention} would notify");
        }
        assert!(!prose.contains("#123"));
        // Every table row still has the header's number of cells.
        for line in prose.lines().filter(|l| l.starts_with("| ❌")) {
            assert_eq!(unescaped_pipes(line), 12, "{line}");
        }
        // The diff stays inside its block: the fence is longer than the
        // longest backtick run in it.
        assert!(text.contains("`````diff\n"), "{text}");
        assert!(code.contains("+kernel_with_````_backticks\n"), "{code}");
        assert!(code.contains("-k|<script>"), "{code}");
        assert!(!prose.contains("kernel_with_"), "{prose}");
    }

    /// The text outside fenced code blocks, and the text inside them.
    fn split_code(text: &str) -> (String, String) {
        let (mut prose, mut code) = (String::new(), String::new());
        let mut fence: Option<usize> = None;
        for line in text.lines() {
            let ticks = line.chars().take_while(|&c| c == '`').count();
            match fence {
                None if ticks >= 3 => fence = Some(ticks),
                Some(open) if ticks >= open && line.trim_end().len() == ticks => fence = None,
                Some(_) => {
                    code.push_str(line);
                    code.push('\n');
                }
                None => {
                    prose.push_str(line);
                    prose.push('\n');
                }
            }
        }
        (prose, code)
    }

    fn unescaped_pipes(line: &str) -> usize {
        let mut count = 0;
        let mut escaped = false;
        for c in line.chars() {
            match c {
                '\\' if !escaped => escaped = true,
                '|' if !escaped => count += 1,
                _ => escaped = false,
            }
            if c != '\\' {
                escaped = false;
            }
        }
        count
    }

    #[test]
    fn fences_outgrow_backtick_runs() {
        assert!(fenced_diff("-a\n+b\n").starts_with("```diff\n"));
        assert!(fenced_diff("-a```b\n").starts_with("````diff\n"));
        let long: String = (0..500).map(|i| format!("+kernel_{i}\n")).collect();
        let block = fenced_diff(&long);
        assert!(block.contains("… 420 more lines"));
    }

    #[test]
    fn huge_verdicts_fit_github_limits() {
        let long_kernel = format!(
            "void at::native::{}<float, 128>",
            "very_long_kernel_name_".repeat(20)
        );
        let findings: Vec<Finding> = (0..5_000)
            .map(|i| {
                let severity = match i % 3 {
                    0 => Severity::Fail,
                    1 => Severity::Warn,
                    _ => Severity::Info,
                };
                let mut f = finding(
                    &format!("aten::op_{i}_{long_kernel}"),
                    severity,
                    FindingKind::Regression,
                    (i % 97) as f64 / 10.0 + if i == 4_242 { 50.0 } else { 0.0 },
                );
                if i % 5 == 0 {
                    f.kind = FindingKind::KernelSelection;
                    f.kernel_diff = Some(format!("-{long_kernel}_a\n+{long_kernel}_b\n"));
                }
                f.message = format!("{long_kernel} got slower");
                f
            })
            .collect();
        let v = verdict(findings);
        let text = render_comment(&v, "default", None).unwrap();
        assert!(
            text.encode_utf16().count() <= COMMENT_LIMIT,
            "{}",
            text.len()
        );
        assert!(text.starts_with("<!-- tracegate:default -->\n"));
        assert!(text.contains("> [!NOTE]"));
        assert!(text.contains("the table of all findings"));
        assert!(text.contains("info findings"));
        assert!(text.contains("flagged findings (those with the least impact)"));
        assert!(text.contains("`report.json` has everything"));
        // The largest impact stays.
        assert!(text.contains("aten::op\\_4242\\_"));
        // Not needlessly short either.
        assert!(text.encode_utf16().count() > COMMENT_LIMIT - 2_000);

        let summary = render_summary(&v, None).unwrap();
        assert!(summary.len() <= SUMMARY_LIMIT);
    }

    /// A temporary template directory holding `file`.
    fn template_dir(file: &str, source: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(file), source).unwrap();
        dir
    }

    #[test]
    fn minimal_fallback_when_nothing_else_fits() {
        let dir = template_dir("comment.md.j2", "{% for i in range(70000) %}x{% endfor %}");
        let text = render_comment(&small_verdict(), "default", Some(dir.path())).unwrap();
        assert!(text.encode_utf16().count() <= COMMENT_LIMIT);
        assert!(text.contains("holds only the verdict"));
        assert!(text.starts_with("<!-- tracegate:default -->\n## ❌ tracegate: fail"));
    }

    #[test]
    fn template_dir_overrides_and_escapes_by_default() {
        let dir = template_dir(
            "comment.md.j2",
            "custom {{ status }} {% for f in flagged %}[{{ f.op }}]{% endfor %} {{ f_raw|md }}\n",
        );
        let mut v = small_verdict();
        v.findings[0].op.as_mut().unwrap().name = "<b>@x|y".to_string();
        let err = render_comment(&v, "k", Some(dir.path())).unwrap_err();
        assert!(err.to_string().contains("f_raw"), "{err}");

        // Values are escaped without asking; `md` escapes explicitly, once.
        let source = "custom {{ status }} {% for f in flagged %}[{{ f.op }}]{% endfor %} \
             {{ verdict.findings[0].op.name|md }} \
             {% autoescape false %}{{ flagged[0].op|md }} {{ flagged[0].op }}{% endautoescape %}\n";
        std::fs::write(dir.path().join("comment.md.j2"), source).unwrap();
        let text = render_comment(&v, "k", Some(dir.path())).unwrap();
        let escaped = "&lt;b&gt;@\u{200d}x\\|y";
        assert_eq!(
            text,
            format!(
                "<!-- tracegate:k -->\ncustom fail [{escaped}][aten::bmm] {escaped} {escaped} <b>@x|y"
            )
        );
        // No summary.md.j2 in the directory: the embedded one is used.
        let summary = render_summary(&v, Some(dir.path())).unwrap();
        assert!(summary.starts_with("## ❌ tracegate: fail"));
    }

    #[test]
    fn unknown_variables_are_errors_naming_them() {
        let dir = template_dir(
            "summary.md.j2",
            "line one\n{{ verdict.outcome }} {{ no_such_variable }}\n",
        );
        let err = render_summary(&small_verdict(), Some(dir.path())).unwrap_err();
        let message = err.to_string();
        assert!(message.contains("no_such_variable"), "{message}");
        assert!(message.contains("summary.md.j2:2:"), "{message}");

        std::fs::write(dir.path().join("summary.md.j2"), "{% if %}").unwrap();
        let err = render_summary(&small_verdict(), Some(dir.path())).unwrap_err();
        assert!(err.to_string().contains("syntax error"), "{err}");
    }

    #[test]
    fn report_json_round_trips() {
        let v = small_verdict();
        let text = render_report_json(&v);
        assert!(text.ends_with("}\n"));
        let back: Verdict = serde_json::from_str(&text).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn chart_has_unique_safe_labels() {
        let mut a = finding(
            "aten::mm\"]\n```",
            Severity::Fail,
            FindingKind::Regression,
            2.0,
        );
        a.delta_percent = Some(-30.0);
        let b = finding(
            "aten::mm\"]\n```",
            Severity::Warn,
            FindingKind::Regression,
            1.0,
        );
        let text = chart(&[a, b]);
        assert!(
            text.contains("x-axis [\"1. aten::mm??????\", \"2. aten::mm??????\"]"),
            "{text}"
        );
        assert!(text.contains("bar [70.0, 110.0]"), "{text}");
        assert!(text.contains("0 --> 130"), "{text}");
        assert_eq!(text.matches("```").count(), 2);
        assert_eq!(chart(&[]), "");
    }
}
