//! Tests of the gate's terminal view: snapshots at 80 and 120 columns, with
//! and without colour, for one workload and for several; no line wider
//! than the terminal, no word broken, and hostile trace text kept inert.

use super::tests::{finding, small_verdict, verdict};
use super::*;
use crate::gate::verdict::{FindingKind, FindingPriority, Outcome, Severity, Verdict};
use crate::render::fit::{visible, width_of};
use crate::render::terminal::Style;

fn terminal(verdict: &Verdict, top: usize, color: bool, width: u16) -> String {
    render_terminal(verdict, top, Style { color, width })
}

fn assert_fits(text: &str, width: usize) {
    for line in visible(text).lines() {
        assert!(
            width_of(line) <= width,
            "wider than {width}: {line}\n{text}"
        );
    }
}

/// Two workloads with long names, a kernel rename, a missing op and a
/// timeline finding: what a directory check of several models prints.
fn two_workloads() -> Verdict {
    let mut attention = finding(
        "aten::_scaled_dot_product_flash_attention",
        Severity::Fail,
        FindingKind::Regression,
        4.2,
    );
    attention.workload = "llama-3-8b_h100".to_string();
    attention.op.as_mut().expect("op").input_dims =
        "((4, 32, 1024, 128), (4, 32, 1024, 128), (4, 32, 1024, 128), (), ())".to_string();
    attention.priority = FindingPriority::Critical;
    let mut selection = finding(
        "aten::addmm",
        Severity::Warn,
        FindingKind::KernelSelection,
        0.8,
    );
    selection.workload = "bert".to_string();
    let mut busy = finding("", Severity::Fail, FindingKind::Timeline, 6.3);
    busy.op = None;
    busy.workload = "llama-3-8b_h100".to_string();
    busy.metric = "busy_time".to_string();
    busy.baseline = Some(11_910.0);
    busy.candidate = Some(12_660.0);
    let mut missing = finding("aten::gelu", Severity::Info, FindingKind::MissingOp, 0.0);
    missing.workload = "bert".to_string();
    missing.candidate = None;
    missing.delta_percent = None;
    missing.impact_percent = None;
    missing.priority = FindingPriority::Low;
    let mut v = verdict(vec![attention, selection, busy, missing]);
    v.outcome = Outcome::Fail;
    v.headline = format!(
        "❌ tracegate: 2 failing findings (1 regression): {}",
        v.findings[0].message
    );
    let mut llama = v.workloads[0].clone();
    llama.name = "llama-3-8b_h100".to_string();
    llama.notes = vec![
        "the candidate ran 2 of the baseline's 3 profiler steps; per-step figures compare \
         the steps both sides recorded"
            .to_string(),
    ];
    v.workloads.push(llama);
    v
}

#[test]
fn terminal_one_workload_80() {
    insta::assert_snapshot!(terminal(&small_verdict(), 10, false, 80));
}

#[test]
fn terminal_one_workload_120() {
    insta::assert_snapshot!(terminal(&small_verdict(), 10, false, 120));
}

#[test]
fn terminal_one_workload_80_colour() {
    insta::assert_snapshot!(terminal(&small_verdict(), 10, true, 80));
}

#[test]
fn terminal_one_workload_120_colour() {
    insta::assert_snapshot!(terminal(&small_verdict(), 10, true, 120));
}

#[test]
fn terminal_two_workloads_80() {
    insta::assert_snapshot!(terminal(&two_workloads(), 10, false, 80));
}

#[test]
fn terminal_two_workloads_120() {
    insta::assert_snapshot!(terminal(&two_workloads(), 10, false, 120));
}

#[test]
fn terminal_two_workloads_80_colour() {
    insta::assert_snapshot!(terminal(&two_workloads(), 10, true, 80));
}

#[test]
fn terminal_two_workloads_120_colour() {
    insta::assert_snapshot!(terminal(&two_workloads(), 10, true, 120));
}

#[test]
fn every_width_fits_and_colour_costs_no_width() {
    for v in [small_verdict(), two_workloads()] {
        for width in [60, 72, 80, 100, 120, 160] {
            let plain = terminal(&v, 10, false, width);
            assert_fits(&plain, usize::from(width));
            let coloured = terminal(&v, 10, true, width);
            assert_eq!(visible(&coloured), plain, "at {width}");
        }
    }
}

#[test]
fn a_workload_column_only_with_several_workloads() {
    let one = terminal(&small_verdict(), 10, false, 120);
    assert!(!one.contains("workload"), "{one}");
    let two = terminal(&two_workloads(), 10, false, 120);
    assert!(two.contains("workload"), "{two}");
    assert!(two.contains("llama-3-8b_h100"), "{two}");
}

#[test]
fn more_findings_than_shown_are_counted() {
    let text = terminal(&small_verdict(), 1, false, 80);
    assert_fits(&text, 80);
    assert!(text.contains("… and 1 more lines"), "{text}");
    assert!(terminal(&small_verdict(), 10, true, 120).starts_with("\x1b[1;31m❌ tracegate: fail"));
}

#[test]
fn terminal_table_neutralises_control_characters() {
    let name = "evil\u{1b}]0;x\u{7}\u{1b}[2J\r\n::add-mask::s \u{202e}fdp.exe ##[error]y";
    let mut f = finding(name, Severity::Fail, FindingKind::Regression, 2.0);
    f.unit = "µs\u{1b}[31m".to_string();
    let mut v = verdict(vec![f]);
    v.headline = format!("❌ 1 regression: {name}");
    v.workloads[0].notes.push(format!("note {name}"));
    let text = render_terminal(
        &v,
        10,
        Style {
            color: false,
            width: 200,
        },
    );
    assert!(
        text.chars().all(|c| c == '\n' || !c.is_control()),
        "{text:?}"
    );
    assert!(!text.contains('\u{202e}'), "{text}");
    assert!(text.contains("evil\\u{1b}]0;x\\u{7}"), "{text}");
    assert!(text.contains("\\u{202e}fdp.exe"), "{text}");
    for line in text.lines() {
        assert!(!line.trim_start().starts_with("::"), "{line}");
        assert!(!line.contains("##["), "{line}");
    }
}

/// A failing line the data cannot confirm reads as inconclusive, not as a
/// failure: `UNSURE` in the table, its own count, and the advice that
/// would settle it; the comment marks it ❔.
#[test]
fn an_unconfirmed_line_reads_as_inconclusive() {
    let mut f = finding("aten::addmm", Severity::Fail, FindingKind::Regression, 4.0);
    f.statistics.inconclusive = true;
    let mut v = verdict(vec![f]);
    v.outcome = Outcome::Inconclusive;
    // Counted from the groups, as for a report.json without group counts.
    v.counts = Default::default();
    let text = terminal(&v, 10, false, 80);
    assert_fits(&text, 80);
    let row = text
        .lines()
        .find(|l| l.contains("aten::addmm") && l.starts_with('│'))
        .expect("the table row");
    assert!(
        row.contains("UNSURE") && row.contains("measured once") && !row.contains("FAIL"),
        "{text}"
    );
    assert!(
        text.contains("0 failing · 1 inconclusive · 0 warnings"),
        "{text}"
    );
    assert!(text.contains("Profile more steps"), "{text}");
    let comment = crate::render::gate::render_comment(&v, "default", None).expect("comment");
    assert!(comment.contains("❔ aten::addmm"), "{comment}");
    assert!(
        comment.contains("0 failing · 1 inconclusive · 0 warnings"),
        "{comment}"
    );
}
