//! The gate's outputs: a [`Verdict`](crate::gate::verdict::Verdict) as the pull-request comment
//! (`comment.md`), the GitHub job summary (`summary.md`), the terminal table
//! and `report.json`.
//!
//! The two Markdown documents are rendered with minijinja from
//! `templates/comment.md.j2` and `templates/summary.md.j2`, compiled into the
//! binary; a template directory given by the user overrides either file.
//! Undefined variables are errors (strict mode), and every value a template
//! prints is escaped for GitHub Markdown (the custom auto-escape `markdown`,
//! see [`escape`](crate::render::text::escape), the escape every Markdown
//! output shares) unless Rust marked it safe, so an override cannot forget to
//! escape a kernel name. Values are formatted here (units,
//! signs, shortened names); the template only lays them out.
//!
//! GitHub rejects a comment over 65,536 characters and a step summary over
//! 1 MiB. Both renderers leave detail out, least important first, until the
//! document fits, and tell the reader what was left out (the `omitted`
//! variable): for the comment, kernel diffs beyond the first
//! [`KEPT_DIFFS`], then the info lines, then the flagged lines with the
//! least impact.
//!
//! Findings are shown by group ([`FindingGroup`](crate::gate::verdict::FindingGroup)):
//! one line per op, its shapes under it.
//!
//! # Template variables
//!
//! | variable | meaning |
//! |---|---|
//! | `status` | `pass`, `pass with warnings`, `pass with accepted findings`, `fail` or `inconclusive` |
//! | `icon` | ✅, ⚠️, ☑️, ❌ or ❔ |
//! | `headline` | the verdict's headline without a leading status icon |
//! | `title` | the verdict line after `tracegate:`: `status · headline`, or the headline alone when it opens with the status' word |
//! | `lines` | the lines (groups) counted, as every output counts them: `failing`, `inconclusive`, `warning`, `regressions`, `improvements`, `accepted` |
//! | `counts` | the verdict's counts (of findings, except the `*_groups`): `regressions`, `warnings`, `failures`, `improvements`, `unchanged`, `new`, `missing`, `failing_groups`, `inconclusive_groups`, `warning_groups`, `accepted` |
//! | `failing`, `inconclusive`, `warning` | failing, inconclusive and warning lines (groups) |
//! | `workloads` | per workload: `name`, `cross_platform`, `environment` (rows of `label`, `baseline`, `candidate`), `timeline` (rows of `metric`, `baseline`, `candidate`, `delta`), `matched`, `unchanged`, `notes` |
//! | `multi_workload` | more than one workload (a heading or column per workload) |
//! | `cross_platform` | some workload ran on two platforms (show expected ratios) |
//! | `flagged`, `flagged_total` | fail and warn lines shown (groups below), fail first, then ops, then larger impact; how many there are |
//! | `sections` | the shown flagged lines by workload: `workload`, `groups` |
//! | `info`, `info_total` | info lines shown; how many there are |
//! | `info_findings` | the info findings those lines hold (a line can hold several) |
//! | `kernel_diffs`, `kernel_diffs_total` | kernel-selection diffs shown (`op`, `shape`, `workload`, `block`: a fenced `diff` code block, safe); how many there are |
//! | `gaps`, `gaps_path_b` | the cross-platform report, per workload with ops beyond the hardware's ratio: `workload`, `platforms` (`H100 SXM → MI300X`), `candidate`, `rows` (`op`, `shape`, `measured`, `expected`, `behind`, `efficiency`, `beyond`, `replay`, `replay_url`), `more` (rows left to report.json), `learning` (the note on learned ratios, or none); the Path B sentence for the kernel team |
//! | `chart` | a fenced Mermaid bar chart of the largest changes by op (safe), or empty |
//! | `omitted` | what was left out to fit, one phrase each; empty when nothing was |
//! | `policy`, `version`, `schema_version` | the policy used, the tracegate version, the report schema version |
//! | `verdict` | the whole [`Verdict`](crate::gate::verdict::Verdict), as in `report.json` |
//!
//! A group (line) has `severity`, `inconclusive` (a failing line the data
//! cannot confirm, icon ❔), `icon`, `workload`, `op`, `shapes` (`8
//! shapes`, or the one shape), `delta`, `impact`, `why` (`same kernels`,
//! `kernels changed`, the kind; the expected ratio across platforms),
//! `replay` (`8 packages`) and `replay_url` (the artifact, a checked http(s)
//! URL, or none), `summary` (the line in words), `advice`, `path_a`,
//! `path_b`, `metric` (the times' metric when its rows share one), `details`
//! (whether there is anything to collapse under it) and `rows`: one per
//! shape, each a finding row (below) with `tag` (layout or module path),
//! `replay` and `replay_url`.
//!
//! A finding row has `severity` (`fail`, `warn`, `info`), `icon`, `kind`
//! (`regression`, `kernel selection`, …), `rule`, `workload`, `op`, `shape`,
//! `dtypes`, `module`, `metric`, `per` (`per step`, `per call`, `per run`
//! or empty), `baseline`, `candidate` (times end in `/step`, `/call` or
//! `/run`), `delta`, `interval` (its kind in brackets: `95% interval` or
//! `range over N steps`, then `inconclusive` when the data cannot decide),
//! `expected`, `limit` (in its own unit), `impact`, `priority` and
//! `message`, all display strings (`—` where there is no value). The filter `md` escapes a
//! value explicitly (useful inside `{% autoescape false %}`).
//!
//! The parts: `finding` puts one finding into words, `group` one group,
//! `view` the whole verdict (with `chart` for the embedded code blocks),
//! `template` loads the templates, `comment` renders and fits the
//! documents, and `terminal` draws the table (every trace string through
//! [`printable`](crate::render::text::printable)).

mod chart;
mod comment;
mod finding;
#[cfg(test)]
mod fit_tests;
mod gaps;
mod group;
mod template;
mod terminal;
#[cfg(test)]
mod terminal_tests;
#[cfg(test)]
mod tests;
mod view;

pub use comment::{
    COMMENT_LIMIT, KEPT_DIFFS, SUMMARY_LIMIT, comment_marker, render_comment,
    render_comment_linked, render_report_json, render_summary,
};
pub(crate) use finding::kind_label;
pub use group::{LineCounts, line_counts};
pub use template::TemplateError;
pub use terminal::render_terminal;
