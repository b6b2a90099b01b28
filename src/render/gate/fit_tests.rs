//! Fitting the comment to GitHub's limit: counted in UTF-16 units (what
//! GitHub counts), and keeping as many flagged rows as fit, not fewer.

use super::comment::{COMMENT_LIMIT, KEPT_DIFFS};
use super::template::{COMMENT_FILE, COMMENT_TEMPLATE, load_template};
use super::tests::{finding, verdict};
use super::view::{Detail, Prepared};
use super::*;
use crate::gate::verdict::{Acceptance, Finding, FindingKind, Severity, Verdict};

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
        let (start, _) = rendered(&v, |d| d);
        assert_eq!((start.diffs, start.info), (0, 0), "only flagged rows");
        let render = |flagged: usize| rendered(&v, |d| Detail { flagged, ..d }).1;
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
    let mut waived = finding(
        "aten::addmm",
        Severity::Accepted,
        FindingKind::Regression,
        4.0,
    );
    waived.accepted = Some(Acceptance {
        by: "--accept".to_string(),
        matcher: "name=aten::addmm".to_string(),
        reason: "a larger batch".to_string(),
        severity: Severity::Fail,
        expires: None,
    });
    let text = Prepared::new(&verdict(vec![waived]), None).minimal("");
    assert!(text.contains("**0** failing · "), "{text}");
    assert!(text.contains(" · 0 missing · 1 accepted\n"), "{text}");
}

/// The comment of `v` rendered with `detail` of its full detail, and that
/// full detail.
fn rendered(v: &Verdict, detail: impl Fn(Detail) -> Detail) -> (Detail, String) {
    let prepared = Prepared::new(v, None);
    let start = prepared.all_detail();
    let template = load_template(None, COMMENT_FILE, COMMENT_TEMPLATE).unwrap();
    let body = template
        .render(prepared.context(&start, &detail(start)))
        .unwrap();
    (start, format!("{}\n{body}", comment_marker("default")))
}

/// Each reduction is tried on its own before a flagged row is left out: a
/// comment that fits once its kernel diffs are cut to [`KEPT_DIFFS`] keeps
/// every info and flagged row; one that fits once its info rows are left
/// out keeps every flagged row.
#[test]
fn each_reduction_is_tried_alone_before_flagged_rows_are_left_out() {
    let long = "very_long_kernel_name_".repeat(60);
    let mut findings: Vec<Finding> = (0..40)
        .map(|i| {
            let name = format!("aten::op_{i}");
            let impact = 1.0 + f64::from(i);
            let mut f = finding(&name, Severity::Warn, FindingKind::KernelSelection, impact);
            f.kernel_diff = Some(format!("-{long}_a\n+{long}_b\n"));
            f
        })
        .collect();
    findings.push(finding(
        "aten::add",
        Severity::Info,
        FindingKind::Regression,
        0.1,
    ));
    let diffs = verdict(findings);
    let (start, everything) = rendered(&diffs, |d| d);
    assert!(start.diffs > KEPT_DIFFS && start.info > 0, "{start:?}");
    assert!(utf16_len(&everything) > COMMENT_LIMIT);
    let (_, five_diffs) = rendered(&diffs, |d| Detail {
        diffs: KEPT_DIFFS,
        ..d
    });
    assert!(utf16_len(&five_diffs) <= COMMENT_LIMIT);
    assert_eq!(render_comment(&diffs, "default", None).unwrap(), five_diffs);
    // The note says what was left out, and nothing else.
    assert!(five_diffs.contains("35 of 40 kernel-selection diffs"));
    assert!(!five_diffs.contains("info lines") && !five_diffs.contains("flagged lines"));

    let mut findings: Vec<Finding> = (0..3)
        .map(|i| {
            let name = format!("aten::op_{i}");
            finding(&name, Severity::Fail, FindingKind::Regression, 5.0)
        })
        .collect();
    findings.extend((0..2_000).map(|i| {
        let name = format!("aten::info_{i}_{long}");
        finding(&name, Severity::Info, FindingKind::Regression, 0.1)
    }));
    let info = verdict(findings);
    let (start, everything) = rendered(&info, |d| d);
    assert!(start.diffs <= KEPT_DIFFS && start.flagged == 3, "{start:?}");
    assert!(utf16_len(&everything) > COMMENT_LIMIT);
    let (_, no_info) = rendered(&info, |d| Detail { info: 0, ..d });
    assert_eq!(render_comment(&info, "default", None).unwrap(), no_info);
    assert!(no_info.contains("2000 info lines") && !no_info.contains("flagged lines"));
}

/// Kernel diffs too long to fit even five of them (here a template
/// writing each at length) are dropped, and then every flagged row that
/// fits is kept: all of them when all fit.
#[test]
fn diffs_too_long_to_keep_are_dropped_and_every_flagged_row_kept() {
    let findings: Vec<Finding> = (0..6)
        .map(|i| {
            let name = format!("aten::op_{i}");
            let impact = 1.0 + f64::from(i);
            let mut f = finding(&name, Severity::Warn, FindingKind::KernelSelection, impact);
            f.kernel_diff = Some("-kernel_a\n+kernel_b\n".to_string());
            f
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join(COMMENT_FILE),
        "{% for f in flagged %}[{{ f.op }}]{% endfor %}\n\
         {% for d in kernel_diffs %}{% for i in range(14000) %}x{% endfor %}{% endfor %}",
    )
    .unwrap();
    let text = render_comment(&verdict(findings), "default", Some(dir.path())).unwrap();
    assert!(utf16_len(&text) <= COMMENT_LIMIT);
    assert!(!text.contains('x'), "the diffs are dropped");
    assert_eq!(text.matches("[aten::op").count(), 6, "{text}");
}

/// The first screen suggests one accept trailer for each failing line up
/// to `MAX_SUGGESTED_TRAILERS` (five), and the generic advice for more.
#[test]
fn up_to_five_failing_lines_get_their_own_accept_trailers() {
    let intended = |lines: usize| {
        let findings: Vec<Finding> = (0..lines)
            .map(|i| {
                let name = format!("aten::op{i}");
                finding(&name, Severity::Fail, FindingKind::Regression, 5.0)
            })
            .collect();
        let text = render_comment(&verdict(findings), "default", None).unwrap();
        let line = text
            .lines()
            .find(|l| l.contains("**Intended?**"))
            .expect("the next step")
            .to_string();
        line.matches("`Tracegate-Accept: aten::op").count()
    };
    assert_eq!(intended(5), 5);
    assert_eq!(intended(6), 0);
}
