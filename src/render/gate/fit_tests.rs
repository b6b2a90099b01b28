//! Fitting the comment to GitHub's limit: counted in UTF-16 units (what
//! GitHub counts), and keeping as many flagged rows as fit, not fewer.

use super::comment::COMMENT_LIMIT;
use super::template::{COMMENT_FILE, COMMENT_TEMPLATE, load_template};
use super::tests::{finding, verdict};
use super::view::{Detail, Prepared};
use super::*;
use crate::gate::verdict::{Finding, FindingKind, Severity, Verdict};

/// Failing findings on ops named with `word` repeated, each with a long
/// message, so that the comment has to drop flagged rows to fit.
fn many_findings(count: usize, word: &str) -> Verdict {
    let findings: Vec<Finding> = (0..count)
        .map(|i| {
            let name = format!("aten::op_{i}_{}", word.repeat(12));
            let mut f = finding(
                &name,
                Severity::Fail,
                FindingKind::Regression,
                1.0 + i as f64,
            );
            f.message = format!("{} got slower", word.repeat(30));
            f
        })
        .collect();
    verdict(findings)
}

fn utf16_len(text: &str) -> usize {
    text.encode_utf16().count()
}

#[test]
fn the_comment_limit_counts_utf16_units_not_characters() {
    // Each 🐢 is one character but two UTF-16 units (GitHub's count).
    let v = many_findings(600, "🐢");
    let text = render_comment(&v, "default", None).unwrap();
    assert!(text.chars().count() < utf16_len(&text));
    assert!(utf16_len(&text) <= COMMENT_LIMIT, "{}", utf16_len(&text));
    assert!(text.contains("flagged lines (those with the least impact)"));
    // Not cut to the character count's worth of units either.
    assert!(
        utf16_len(&text) > COMMENT_LIMIT - 4_000,
        "{}",
        utf16_len(&text)
    );
}

/// The number N in the comment's note "N of `of` flagged lines".
fn omitted_rows(text: &str, of: usize) -> usize {
    let needle = format!(" of {of} flagged lines");
    let end = text.find(&needle).expect("a note on the rows left out");
    let digits = text[..end]
        .rfind(|c: char| !c.is_ascii_digit())
        .map_or(0, |i| i + 1);
    text[digits..end].parse().expect("a count")
}

#[test]
fn the_comment_keeps_as_many_flagged_rows_as_fit() {
    for word in ["slow", "🐢"] {
        let v = many_findings(600, word);
        let text = render_comment(&v, "default", None).unwrap();
        let prepared = Prepared::new(&v, None);
        let start = Detail {
            diffs: prepared.diffs.len(),
            info: prepared.info.len(),
            flagged: prepared.flagged.len(),
        };
        assert_eq!((start.diffs, start.info), (0, 0), "only flagged rows");
        let template = load_template(None, COMMENT_FILE, COMMENT_TEMPLATE).unwrap();
        let render = |flagged: usize| {
            let detail = Detail { flagged, ..start };
            let body = template.render(prepared.context(&start, &detail)).unwrap();
            format!("{}\n{body}", comment_marker("default"))
        };
        let left_out = omitted_rows(&text, start.flagged);
        assert!(
            left_out > 0 && left_out < start.flagged,
            "{word}: {left_out}"
        );
        let kept = start.flagged - left_out;
        assert_eq!(
            render(kept),
            text,
            "{word}: the comment shows its first {kept} rows"
        );
        // One row more would not fit.
        assert!(
            utf16_len(&render(kept + 1)) > COMMENT_LIMIT,
            "{word}: {} rows fit but {kept} were kept",
            kept + 1
        );
    }
}

/// The smallest rendering's counts line names inconclusive lines only when
/// there are some, and accepted ones not when there are none.
#[test]
fn the_minimal_comment_counts_inconclusive_and_accepted_lines_only_when_there_are_some() {
    let warned = verdict(vec![finding(
        "aten::addmm",
        Severity::Warn,
        FindingKind::Regression,
        4.0,
    )]);
    let text = Prepared::new(&warned, None).minimal("");
    assert!(text.contains("**0** failing · **1** warning"), "{text}");
    assert!(!text.contains("inconclusive"), "{text}");
    assert!(!text.contains("accepted"), "{text}");
    let mut unsure = finding("aten::addmm", Severity::Fail, FindingKind::Regression, 4.0);
    unsure.statistics.inconclusive = true;
    let text = Prepared::new(&verdict(vec![unsure]), None).minimal("");
    assert!(
        text.contains("**0** failing · **1** inconclusive"),
        "{text}"
    );
}
