//! GitHub Actions glue as pure functions: the lines `check` appends to
//! `$GITHUB_OUTPUT`, and the `::error`/`::warning` workflow commands that
//! annotate the run. The binary does the file I/O and the printing.

use std::path::Path;

use super::gate::{kind_label, line_counts};
use super::text::{NAME_CHARS, printable, shorten};
use crate::gate::judge::verdict_groups;
use crate::gate::verdict::{FindingGroup, Severity, Verdict};

/// Annotations per type (error, warning): GitHub shows about ten of each per
/// step. When there are more findings, the last one says how many are left.
pub const ANNOTATIONS_PER_TYPE: usize = 10;

/// The longest finding message an annotation carries, in characters.
const MESSAGE_CHARS: usize = 1_000;

/// The files `check` wrote, for the `*-path` outputs; `None` leaves the
/// output out.
#[derive(Clone, Copy, Debug, Default)]
pub struct OutputPaths<'a> {
    /// `report.json`.
    pub report: Option<&'a Path>,
    /// `comment.md`.
    pub comment: Option<&'a Path>,
    /// `summary.md`.
    pub summary: Option<&'a Path>,
}

/// The text to append to `$GITHUB_OUTPUT`: `verdict` (`pass`, `fail` or
/// `inconclusive`); the lines (groups: one per op, as the comment counts
/// them, [`line_counts`]) `failures` (failing), `inconclusive`, `warnings`,
/// `regressions` (failing slowdowns), `improvements`, `accepted`;
/// `headline`; and `report-path`, `comment-path`, `summary-path` for the
/// files given. A value holding a line break is written in the
/// `key<<DELIMITER` form, with a delimiter that does not occur in it.
pub fn github_output_lines(verdict: &Verdict, paths: &OutputPaths<'_>) -> String {
    let lines = line_counts(&verdict_groups(verdict));
    let mut pairs: Vec<(&str, String)> = vec![
        ("verdict", verdict.outcome.as_str().to_string()),
        ("regressions", lines.regressions.to_string()),
        ("warnings", lines.warning.to_string()),
        ("failures", lines.failing.to_string()),
        ("inconclusive", lines.inconclusive.to_string()),
        ("improvements", lines.improvements.to_string()),
        ("accepted", lines.accepted.to_string()),
        ("headline", printable(&verdict.headline)),
    ];
    for (key, path) in [
        ("report-path", paths.report),
        ("comment-path", paths.comment),
        ("summary-path", paths.summary),
    ] {
        if let Some(path) = path {
            pairs.push((key, path.to_string_lossy().into_owned()));
        }
    }
    let mut out = String::new();
    for (key, value) in pairs {
        if value.contains(['\n', '\r']) {
            let mut delimiter = "TRACEGATE_EOF".to_string();
            while value.contains(&delimiter) {
                delimiter.push('_');
            }
            out.push_str(&format!("{key}<<{delimiter}\n{value}\n{delimiter}\n"));
        } else {
            out.push_str(&format!("{key}={value}\n"));
        }
    }
    out
}

/// Workflow commands for the most important lines, one per group (an op
/// with all its shapes, as the comment shows it): `::error` for failing
/// ones (inconclusive included), `::warning` for warning ones (info gets
/// none), at most [`ANNOTATIONS_PER_TYPE`] of each, in the verdict's order.
/// Each says the group's line in words and its most important finding's
/// message. Each is one line, without a newline; data and properties are
/// escaped as the workflow-command rules require.
pub fn annotations(verdict: &Verdict) -> Vec<String> {
    let several = verdict.workloads.len() > 1;
    let groups = verdict_groups(verdict);
    let mut out = Vec::new();
    for (severity, command, what) in [
        (Severity::Fail, "error", "failing"),
        (Severity::Warn, "warning", "warning"),
    ] {
        let lines: Vec<&FindingGroup> = groups.iter().filter(|g| g.severity == severity).collect();
        let shown = if lines.len() > ANNOTATIONS_PER_TYPE {
            ANNOTATIONS_PER_TYPE - 1
        } else {
            lines.len()
        };
        for g in &lines[..shown] {
            let top = g.findings.first().and_then(|&i| verdict.findings.get(i));
            let kind = if g.inconclusive {
                "unconfirmed"
            } else {
                kind_label(g.kind)
            };
            let title = format!("tracegate {kind}: {}", shorten(&g.label, NAME_CHARS));
            let mut message = shorten(&g.summary, MESSAGE_CHARS);
            // The top finding's own words, unless the line already is them.
            if let Some(f) = top.filter(|f| !g.summary.contains(&f.message)) {
                message.push_str(&format!(". {}", shorten(&f.message, MESSAGE_CHARS)));
            }
            if several && !g.workload.is_empty() {
                message = format!("{}: {message}", shorten(&g.workload, NAME_CHARS));
            }
            out.push(format!(
                "::{command} title={}::{}",
                escape_property(&title),
                escape_data(&message)
            ));
        }
        if shown < lines.len() {
            let rest = lines.len() - shown;
            out.push(format!(
                "::{command} title={}::{}",
                escape_property(&format!("tracegate: {rest} more {what} lines")),
                escape_data("See the job summary or report.json for all of them.")
            ));
        }
    }
    out
}

/// Escapes a workflow command's message: `%`, `\r`, `\n` as the
/// workflow-command rules say, then every other control or bidi character
/// and `##[` as in any log line ([`printable`]).
fn escape_data(text: &str) -> String {
    printable(
        &text
            .replace('%', "%25")
            .replace('\r', "%0D")
            .replace('\n', "%0A"),
    )
}

/// Escapes a workflow command's property value: as data, plus `:` and `,`.
fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::verdict::{Counts, Finding, FindingKind, FindingPriority, OpRef, Outcome};

    fn finding(name: &str, severity: Severity) -> Finding {
        Finding {
            rule: "regression".to_string(),
            severity,
            kind: FindingKind::Regression,
            workload: "bert".to_string(),
            op: Some(OpRef {
                name: name.to_string(),
                ..OpRef::default()
            }),
            metric: "median kernel time per call".to_string(),
            baseline: Some(10.0),
            candidate: Some(13.0),
            unit: "µs".to_string(),
            delta_percent: Some(30.0),
            interval_percent: None,
            expected_ratio: None,
            limit: None,
            impact_percent: Some(2.5),
            priority: FindingPriority::High,
            message: format!("{name} is 30% slower"),
            path_a: None,
            path_b: None,
            kernel_diff: None,
            replay_package: None,
            accepted: None,
            statistics: Default::default(),
        }
    }

    fn verdict(findings: Vec<Finding>) -> Verdict {
        Verdict {
            schema_version: 1,
            schema_minor: 1,
            tracegate_version: "0.1.0".to_string(),
            outcome: Outcome::Fail,
            headline: "❌ 1 regression fails the gate".to_string(),
            counts: Counts {
                regressions: 1,
                failures: 1,
                ..Counts::default()
            },
            workloads: Vec::new(),
            findings,
            groups: Vec::new(),
            policy: "built-in default".to_string(),
        }
    }

    #[test]
    fn output_lines() {
        let v = verdict(vec![finding("aten::mm", Severity::Fail)]);
        let report = Path::new("out/report.json");
        let comment = Path::new("out/comment.md");
        let text = github_output_lines(
            &v,
            &OutputPaths {
                report: Some(report),
                comment: Some(comment),
                summary: None,
            },
        );
        assert_eq!(
            text,
            "verdict=fail\nregressions=1\nwarnings=0\nfailures=1\ninconclusive=0\nimprovements=0\n\
             accepted=0\nheadline=❌ 1 regression fails the gate\n\
             report-path=out/report.json\ncomment-path=out/comment.md\n"
        );
    }

    #[test]
    fn multi_line_values_use_a_heredoc() {
        let path = Path::new("two\nlines TRACEGATE_EOF");
        let paths = OutputPaths {
            report: Some(path),
            ..OutputPaths::default()
        };
        let text = github_output_lines(&verdict(Vec::new()), &paths);
        assert!(
            text.contains(
                "report-path<<TRACEGATE_EOF_\ntwo\nlines TRACEGATE_EOF\nTRACEGATE_EOF_\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn headline_output_escapes_newlines_controls_and_workflow_commands() {
        let mut v = verdict(Vec::new());
        v.headline = "::error::x\n::add-mask::s\r\u{1b}[2J\u{7}\u{202e}".to_string();
        let text = github_output_lines(&v, &OutputPaths::default());
        let line = text
            .lines()
            .find(|l| l.starts_with("headline"))
            .expect("a headline");
        assert_eq!(
            line,
            "headline=\\::error::x\\u{a}::add-mask::s\\u{d}\\u{1b}[2J\\u{7}\\u{202e}"
        );
        assert!(!text.chars().any(|c| c != '\n' && crate::echo::is_unsafe(c)));
    }

    #[test]
    fn annotations_are_escaped() {
        let mut f = finding("aten::mm, 100%\r\nsecond", Severity::Fail);
        f.message = "50% slower\nnext line: yes, really".to_string();
        let lines = annotations(&verdict(vec![f, finding("aten::bmm", Severity::Warn)]));
        assert_eq!(
            lines,
            vec![
                "::error title=tracegate regression%3A aten%3A%3Amm%2C 100%25%0D%0Asecond::\
                 aten::mm, 100%25%0D%0Asecond — 1 shape, +30.0%25 per call, +2.5%25 of GPU time. \
                 50%25 slower%0Anext line: yes, really"
                    .to_string(),
                "::warning title=tracegate regression%3A aten%3A%3Abmm::\
                 aten::bmm — 1 shape, +30.0%25 per call, +2.5%25 of GPU time. aten::bmm is 30%25 slower"
                    .to_string(),
            ]
        );
        assert!(lines.iter().all(|l| !l.contains('\n') && !l.contains('\r')));
    }

    #[test]
    fn annotations_neutralise_control_characters_and_legacy_commands() {
        let mut f = finding("k\u{1b}]0;x\u{7}\u{202e}cba ##[error]y", Severity::Fail);
        f.message = "::add-mask::s\u{9b}31m ##[warning]z".to_string();
        let lines = annotations(&verdict(vec![f]));
        assert_eq!(
            lines,
            vec![
                "::error title=tracegate regression%3A k\\u{1b}]0;x\\u{7}\\u{202e}cba ##\\[error]y::\
                 k\\u{1b}]0;x\\u{7}\\u{202e}cba ##\\[error]y — 1 shape, +30.0%25 per call, +2.5%25 of \
                 GPU time. ::add-mask::s\\u{9b}31m ##\\[warning]z"
                    .to_string()
            ]
        );
    }

    #[test]
    fn annotations_are_capped_per_type() {
        let mut findings: Vec<Finding> = (0..25)
            .map(|i| finding(&format!("op{i}"), Severity::Fail))
            .collect();
        findings.extend((0..4).map(|i| finding(&format!("w{i}"), Severity::Warn)));
        findings.push(finding("info", Severity::Info));
        let lines = annotations(&verdict(findings));
        let errors: Vec<&String> = lines.iter().filter(|l| l.starts_with("::error")).collect();
        assert_eq!(errors.len(), ANNOTATIONS_PER_TYPE);
        assert!(errors[9].contains("16 more failing lines"), "{}", errors[9]);
        assert_eq!(
            lines.iter().filter(|l| l.starts_with("::warning")).count(),
            4
        );
        assert_eq!(lines.len(), 14);
    }
}
