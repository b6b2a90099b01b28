//! Accept entries and unused policy entries (`accept.rs`) on the example's
//! rows: which entries select nothing (every row a comparison has counts:
//! matched, changed shapes, new and missing ones), where each warning
//! places its entry, why a module matcher selects nothing, and which entry
//! accepts a finding.

use super::end_to_end::named;
use super::*;
use crate::gate::compare::ShapeChange;
use crate::gate::judge::accept::{apply_accepts, unmatched_entries};
use crate::gate::policy::{Accept, Date};

/// The example compared with itself, no row with a module path; the
/// candidate alone has `new::op`, the baseline alone `gone::op`, and one
/// shape changed from `before::op` to `after::op`.
fn every_kind_of_row() -> Comparison {
    let mut comparison = compared_with_itself(&example_snapshot());
    for op in &mut comparison.ops {
        op.baseline.module_path = None;
        op.candidate.module_path = None;
    }
    let side = comparison.ops[0].baseline.clone();
    comparison.new_ops = vec![named(&side, "new::op", 1.0, false)];
    comparison.missing_ops = vec![named(&side, "gone::op", 1.0, false)];
    comparison.shape_changed = vec![ShapeChange {
        baseline: named(&side, "before::op", 1.0, false),
        candidate: named(&side, "after::op", 1.0, false),
        impact_us: 0.0,
        impact_percent: 0.0,
        kernel_diff: None,
    }];
    comparison
}

/// The warnings about unused entries of `policy` (read from `text`) and
/// of `accept` over `comparison`, on 2026-11-29.
fn unused(comparison: Comparison, text: &str, accept: Vec<Accept>) -> Vec<String> {
    let policy = Policy::from_yaml(text, "policy.yaml").expect("a valid policy");
    let example = example_snapshot();
    let options = JudgeOptions {
        today: Date::parse("2026-11-29").ok(),
        accept,
        ..JudgeOptions::default()
    };
    let workloads = [Workload::Compared {
        comparison,
        candidate: &example,
        baseline_hardware: None,
        candidate_hardware: None,
    }];
    unmatched_entries(&workloads, &policy, &options)
        .into_iter()
        .map(|f| {
            assert_eq!(
                (f.kind, f.severity, f.metric.as_str()),
                (FindingKind::Policy, Severity::Warn, "policy")
            );
            assert!(f.message.starts_with(&f.rule), "{}", f.message);
            f.message
        })
        .collect()
}

/// The 1-based line of `text` holding `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    1 + text
        .lines()
        .position(|line| line.contains(needle))
        .unwrap_or_else(|| panic!("no line holds {needle}"))
}

const NOTHING: &str = "matches no op in any workload: check its patterns against the report's \
                       op names, or remove it";

/// Each entry that selects no row of any kind is one warning, in the
/// policy's order then the command line's, naming its matcher and line;
/// a cross-platform rule for a whole category, an entry that selects a
/// matched, changed, new or missing row, and an expired accept entry (its
/// own warning says so) are not; one expiring today still accepts. A
/// module matcher on rows without module paths says what the profiler
/// needs; with a module path somewhere, it is like any other.
#[test]
fn entries_that_select_no_row_warn_with_their_place() {
    let text = "version: 1\n\
                budgets:\n\
                \x20 - match: {name: \"aten::*\"}\n\
                \x20   max_count: 1000000\n\
                \x20 - match: {name: \"no::op\"}\n\
                \x20   max_count: 3\n\
                ignore:\n\
                \x20 - name: \"new::op\"\n\
                \x20 - name: \"gone::op\"\n\
                \x20 - name: \"before::op\"\n\
                \x20 - name: \"after::op\"\n\
                \x20 - module: \"**/Attention*\"\n\
                cross_platform:\n\
                \x20 rules:\n\
                \x20   - match: {category: CONV_fwd}\n\
                \x20     expected: bandwidth\n\
                \x20   - match: {name: \"my_ext::fused\"}\n\
                \x20     ratio: 0.8\n\
                \x20   - match: {category: CONV_fwd, name: \"my_ext::conv\"}\n\
                \x20     ratio: 0.8\n\
                accept:\n\
                \x20 - match: {name: \"late::op\"}\n\
                \x20   reason: until today\n\
                \x20   expires: 2026-11-29\n\
                \x20 - match: {name: \"old::op\"}\n\
                \x20   reason: long ago\n\
                \x20   expires: 2026-11-28\n\
                \x20 - rule: \"timeline.*\"\n\
                \x20   reason: no matcher\n";
    let at = |needle: &str| format!("policy.yaml:{}", line_of(text, needle));
    let module_why = "matches no op: it names a `module`, and no trace records module paths \
                      (profile with torch.profiler.profile(with_stack=True, \
                      with_modules=True); docs/POLICY.md)";
    let command_line = vec![
        Accept::from_arg("aten::*", "").expect("an entry"),
        Accept::from_arg("nothing::here", "").expect("an entry"),
        Accept::from_arg("rule:regression", "").expect("an entry"),
    ];
    assert_eq!(
        unused(every_kind_of_row(), text, command_line.clone()),
        [
            format!("budgets[1] (`name=no::op`, {}) {NOTHING}", at("no::op")),
            format!(
                "ignore[4] (`module=**/Attention*`, {}) {module_why}",
                at("Attention")
            ),
            format!(
                "cross_platform.rules[1] (`name=my_ext::fused`, {}) {NOTHING}",
                at("my_ext::fused")
            ),
            format!(
                "cross_platform.rules[2] (`name=my_ext::conv category=CONV_fwd`, {}) {NOTHING}",
                at("my_ext::conv")
            ),
            format!("accept[0] (`name=late::op`, {}) {NOTHING}", at("late::op")),
            format!("--accept `name=nothing::here` {NOTHING}"),
        ]
    );

    let mut with_modules = every_kind_of_row();
    with_modules.new_ops[0].module_path = Some("model.layers.0.mlp".to_string());
    let warnings = unused(with_modules, text, command_line);
    assert_eq!(
        warnings[1],
        format!(
            "ignore[4] (`module=**/Attention*`, {}) {NOTHING}",
            at("Attention")
        )
    );
}

/// Only compared workloads have rows; with none, no entry is warned about
/// (every one would be, and a nothing-to-compare line says why).
#[test]
fn no_rows_no_unused_entries() {
    let policy = Policy::from_yaml("version: 1\nignore:\n  - name: \"no::op\"\n", "policy.yaml")
        .expect("a valid policy");
    let workloads = [Workload::OnlyBaseline("gone".to_string())];
    assert!(unmatched_entries(&workloads, &policy, &JudgeOptions::default()).is_empty());
}

/// The first twenty warnings name their entry's line; later ones only the
/// matcher (each line costs a pass over the policy's text).
#[test]
fn twenty_warnings_are_placed_and_the_rest_named() {
    let entries: String = (0..22)
        .map(|i| format!("  - name: \"unused{i}::op\"\n"))
        .collect();
    let text = format!("version: 1\nignore:\n{entries}");
    let warnings = unused(every_kind_of_row(), &text, Vec::new());
    assert_eq!(warnings.len(), 22);
    assert_eq!(
        warnings[19],
        format!(
            "ignore[19] (`name=unused19::op`, policy.yaml:{}) {NOTHING}",
            line_of(&text, "unused19::")
        )
    );
    assert_eq!(
        warnings[20],
        format!("ignore[20] (`name=unused20::op`) {NOTHING}")
    );
}

/// A finding both the policy and the command line cover is accepted by
/// the policy's entry; only fail and warn findings are accepted, never a
/// warning about the policy itself.
#[test]
fn the_policys_entries_accept_first_and_only_fail_or_warn() {
    let mut policy = Policy::default();
    policy
        .accept
        .push(Accept::from_arg("rule:*", "policy").expect("an entry"));
    let options = JudgeOptions {
        accept: vec![Accept::from_arg("rule:*", "command line").expect("an entry")],
        ..JudgeOptions::default()
    };
    let finding = |severity, kind| Finding::new("rule", severity, kind, "w", "m".to_string());
    let mut findings = vec![
        finding(Severity::Fail, FindingKind::Regression),
        finding(Severity::Warn, FindingKind::Timeline),
        finding(Severity::Info, FindingKind::Regression),
        finding(Severity::Warn, FindingKind::Policy),
    ];
    apply_accepts(&mut findings, &policy, &options);
    let by: Vec<Option<(&str, &str)>> = findings
        .iter()
        .map(|f| {
            f.accepted
                .as_ref()
                .map(|a| (a.by.as_str(), a.reason.as_str()))
        })
        .collect();
    assert_eq!(
        by,
        [
            Some(("accept[0]", "policy")),
            Some(("accept[0]", "policy")),
            None,
            None
        ]
    );
    let severities: Vec<Severity> = findings.iter().map(|f| f.severity).collect();
    assert_eq!(
        severities,
        [
            Severity::Accepted,
            Severity::Accepted,
            Severity::Info,
            Severity::Warn
        ]
    );
    let mut only_command_line = vec![finding(Severity::Warn, FindingKind::Regression)];
    apply_accepts(&mut only_command_line, &Policy::default(), &options);
    let acceptance = only_command_line[0].accepted.as_ref().expect("accepted");
    assert_eq!(
        (
            acceptance.by.as_str(),
            acceptance.severity,
            acceptance.matcher.as_str()
        ),
        ("--accept", Severity::Warn, "rule=*")
    );
    assert_eq!(acceptance.reason, "command line");
}
