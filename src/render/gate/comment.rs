//! The two Markdown documents and `report.json`: the pull-request comment
//! (behind its marker) and the job summary rendered from their templates,
//! each shrunk until it fits GitHub's limit ([`fit`]).

use std::path::Path;

use super::template::{
    COMMENT_FILE, COMMENT_TEMPLATE, Loaded, SUMMARY_FILE, SUMMARY_TEMPLATE, TemplateError,
    load_template,
};
use super::view::{Detail, Prepared};
use crate::gate::verdict::Verdict;
use crate::render::text::only_ascii;

/// GitHub's limit on a comment body, in characters (counted here as UTF-16
/// code units, which is never fewer than GitHub's count).
pub const COMMENT_LIMIT: usize = 65_536;

/// GitHub's limit on one step's job summary, in bytes.
pub const SUMMARY_LIMIT: usize = 1 << 20;

/// Kernel-selection diffs kept once the comment has to shrink.
pub const KEPT_DIFFS: usize = 5;

/// The hidden line that opens the comment, so that a later run can find and
/// update it: `<!-- tracegate:KEY -->`. Characters other than ASCII letters,
/// digits and `._:/-` become `_`; an empty key is `default`.
pub fn comment_marker(key: &str) -> String {
    let key = only_ascii(key, "._:/-", '_');
    let key = if key.is_empty() { "default" } else { &key };
    format!("<!-- tracegate:{key} -->")
}

/// Renders `comment.md`: the marker for `key`, then the comment template
/// (`template_dir/comment.md.j2` when that file exists, else the embedded
/// one), shrunk to fit [`COMMENT_LIMIT`].
pub fn render_comment(
    verdict: &Verdict,
    key: &str,
    template_dir: Option<&Path>,
) -> Result<String, TemplateError> {
    render_comment_linked(verdict, key, template_dir, None)
}

/// [`render_comment`] with the replay packages linked to the uploaded
/// artifact at `artifact_url` (an http(s) URL; another value is not linked).
pub fn render_comment_linked(
    verdict: &Verdict,
    key: &str,
    template_dir: Option<&Path>,
    artifact_url: Option<&str>,
) -> Result<String, TemplateError> {
    let prepared = Prepared::new(verdict, artifact_url);
    let start = prepared.all_detail();
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
    let prepared = Prepared::new(verdict, None);
    let start = Detail {
        diffs: 0,
        ..prepared.all_detail()
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
    let reductions: [fn(&mut Detail); 2] = [|d| d.diffs = d.diffs.min(KEPT_DIFFS), |d| d.info = 0];
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
        // `low` rows fit; `high` rows do not: one past them all, since
        // without the diffs every row may fit.
        let (mut low, mut high) = (0, detail.flagged + 1);
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
