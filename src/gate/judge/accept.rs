//! Accepted regressions, and policy entries that did nothing.
//!
//! An intended slowdown should not need a weaker policy: an `accept` entry
//! of the policy, or `check --accept` (where the Action passes a commit
//! trailer or a PR label), covers the fail and warn findings of the ops or
//! rules it names. They keep their numbers and stay in every view with
//! severity `accepted` and the entry's reason; they no longer fail the gate.
//! An entry past its `expires` date covers nothing and is a warning.
//!
//! A matcher that selects no row in any workload (a renamed op, a typo, a
//! `module:` on a trace without module paths) used to pass silently: it is
//! a warning naming the entry and its line in the policy file.

use super::Workload;
use crate::gate::compare::OpSide;
use crate::gate::policy::{Accept, Date, OpMatcher, Policy};
use crate::gate::verdict::{Acceptance, Finding, FindingKind, Severity};

/// What the judge is told besides the policy.
#[derive(Clone, Debug, Default)]
pub struct JudgeOptions {
    /// Today's date (UTC), for `accept` entries' `expires`; `None` judges
    /// no entry expired.
    pub today: Option<Date>,
    /// Accept entries from the command line (`check --accept`).
    pub accept: Vec<Accept>,
    /// Findings measured outside the comparisons (the history's drift
    /// rule), judged with the others: accept entries apply to them and
    /// they count in the verdict.
    pub findings: Vec<Finding>,
}

/// How many warnings about unused entries get a line number: each costs a
/// pass over the policy's text.
const MAX_LOCATED: usize = 20;

/// Marks the fail and warn findings an active entry covers as accepted
/// (the policy's entries first, then the command line's), and adds a
/// warning per expired policy entry.
pub(super) fn apply_accepts(findings: &mut Vec<Finding>, policy: &Policy, options: &JudgeOptions) {
    let expired = |entry: &Accept| match (entry.expires, options.today) {
        (Some(expires), Some(today)) => today > expires,
        _ => false,
    };
    let active: Vec<(String, &Accept)> = policy
        .accept
        .iter()
        .enumerate()
        .filter(|(_, entry)| !expired(entry))
        .map(|(index, entry)| (format!("accept[{index}]"), entry))
        .chain(options.accept.iter().map(|e| ("--accept".to_string(), e)))
        .collect();
    for finding in findings.iter_mut() {
        if !matches!(finding.severity, Severity::Fail | Severity::Warn)
            || finding.kind == FindingKind::Policy
        {
            continue;
        }
        if let Some((by, entry)) = active.iter().find(|(_, entry)| covers(entry, finding)) {
            finding.accepted = Some(Acceptance {
                by: by.clone(),
                matcher: entry.matcher_text(),
                reason: entry.reason.clone(),
                severity: finding.severity,
                expires: entry.expires.map(|date| date.to_string()),
            });
            finding.severity = Severity::Accepted;
        }
    }
    for (index, entry) in policy.accept.iter().enumerate() {
        if let (true, Some(expires)) = (expired(entry), entry.expires) {
            let rule = format!("accept[{index}]");
            let place = place(
                policy,
                &["accept", &index.to_string()],
                &entry.matcher_text(),
                true,
            );
            findings.push(policy_warning(
                &rule,
                format!(
                    "{rule} ({place}) expired on {expires}: it accepts nothing now; renew its \
                     `expires` or remove it"
                ),
            ));
        }
    }
}

/// Whether an entry covers a finding: its `match` selects the finding's op
/// and its `rule` names the finding's rule (`timeline.METRIC` for a
/// timeline finding too); both when both are given.
fn covers(entry: &Accept, finding: &Finding) -> bool {
    let op = entry.matcher.as_ref().is_none_or(|matcher| {
        finding.op.as_ref().is_some_and(|op| {
            matcher.matches(
                &op.name,
                &op.category,
                &op.input_dims,
                op.module_path.as_deref(),
            )
        })
    });
    // An inconclusive verdict means the gate could not see enough: only an
    // entry that names the integrity rule (not `*` or an op) accepts it.
    if finding.kind == FindingKind::Integrity
        && !entry
            .rule
            .as_ref()
            .is_some_and(|p| p.to_string().starts_with("integrity"))
    {
        return false;
    }
    let rule = entry.rule.as_ref().is_none_or(|pattern| {
        pattern.matches(&finding.rule)
            || (finding.kind == FindingKind::Timeline
                && pattern.matches(&format!("timeline.{}", finding.metric)))
    });
    op && rule
}

/// A warning per matcher of the policy (budgets, ignore, cross-platform
/// rules other than whole-category ones, accept entries) and of `--accept`
/// that selects no op row in any
/// workload. Nothing when no workload has rows: then every entry would be
/// unused, and a nothing-to-compare finding says why.
pub(super) fn unmatched_entries(
    workloads: &[Workload],
    policy: &Policy,
    options: &JudgeOptions,
) -> Vec<Finding> {
    let rows: Vec<&OpSide> = workloads
        .iter()
        .filter_map(|workload| match workload {
            Workload::Compared { comparison, .. } => Some(comparison),
            _ => None,
        })
        .flat_map(|c| {
            let ops = c.ops.iter().flat_map(|op| [&op.baseline, &op.candidate]);
            let changed = c
                .shape_changed
                .iter()
                .flat_map(|change| [&change.baseline, &change.candidate]);
            ops.chain(changed)
                .chain(c.new_ops.iter())
                .chain(c.missing_ops.iter())
        })
        .collect();
    if rows.is_empty() {
        return Vec::new();
    }
    let has_modules = rows.iter().any(|side| side.module_path.is_some());
    let selects = |matcher: &OpMatcher| {
        rows.iter().any(|side| {
            matcher.matches(
                &side.key.name,
                side.category.as_str(),
                &side.key.input_dims,
                side.module_path.as_deref(),
            )
        })
    };
    // (rule, path in the file, matcher).
    let mut entries: Vec<(String, Vec<String>, &OpMatcher)> = Vec::new();
    let mut add = |section: &[&str], rule: String, index: usize, matcher| {
        let mut path: Vec<String> = section.iter().map(|s| s.to_string()).collect();
        path.push(index.to_string());
        entries.push((rule, path, matcher));
    };
    for (i, budget) in policy.budgets.iter().enumerate() {
        add(&["budgets"], format!("budgets[{i}]"), i, &budget.matcher);
    }
    for (i, matcher) in policy.ignore.iter().enumerate() {
        add(&["ignore"], format!("ignore[{i}]"), i, matcher);
    }
    // A cross-platform rule for a whole category (`elementwise: bandwidth`)
    // says how to judge such ops if there are any: a workload without them
    // is no mistake to warn about.
    let whole_category = |m: &OpMatcher| {
        m.category.is_some() && m.name.is_none() && m.shape.is_none() && m.module.is_none()
    };
    for (i, rule) in policy.cross_platform.rules.iter().enumerate() {
        if whole_category(&rule.matcher) {
            continue;
        }
        let name = format!("cross_platform.rules[{i}]");
        add(&["cross_platform", "rules"], name, i, &rule.matcher);
    }
    // An expired entry has its own warning.
    let expired =
        |entry: &Accept| matches!((entry.expires, options.today), (Some(e), Some(t)) if t > e);
    for (i, entry) in policy.accept.iter().enumerate() {
        if let Some(matcher) = entry.matcher.as_ref().filter(|_| !expired(entry)) {
            add(&["accept"], format!("accept[{i}]"), i, matcher);
        }
    }
    let mut warnings = Vec::new();
    for (rule, path, matcher) in entries.iter().filter(|e| !selects(e.2)) {
        let path: Vec<&str> = path.iter().map(String::as_str).collect();
        let located = warnings.len() < MAX_LOCATED;
        let place = place(policy, &path, &matcher.to_string(), located);
        warnings.push(policy_warning(
            rule,
            format!("{rule} ({place}) {}", unmatched_why(matcher, has_modules)),
        ));
    }
    for entry in &options.accept {
        if let Some(matcher) = entry.matcher.as_ref().filter(|m| !selects(m)) {
            warnings.push(policy_warning(
                "--accept",
                format!(
                    "--accept `{matcher}` {}",
                    unmatched_why(matcher, has_modules)
                ),
            ));
        }
    }
    warnings
}

/// Why a matcher selects nothing, and what to do.
fn unmatched_why(matcher: &OpMatcher, has_modules: bool) -> String {
    if matcher.module.is_some() && !has_modules {
        "matches no op: it names a `module`, and no trace records module paths (profile with \
         torch.profiler.profile(with_stack=True, with_modules=True); docs/POLICY.md)"
            .to_string()
    } else {
        "matches no op in any workload: check its patterns against the report's op names, or \
         remove it"
            .to_string()
    }
}

/// How a warning names an entry: its matcher as written, and its place
/// in the policy file when `located` and the file has it.
fn place(policy: &Policy, path: &[&str], matcher: &str, located: bool) -> String {
    let line = if located { policy.line_of(path) } else { None };
    match line {
        Some(line) => format!("`{matcher}`, {}:{line}", policy.label),
        None => format!("`{matcher}`"),
    }
}

/// A warning about a policy entry (no workload, no op).
fn policy_warning(rule: &str, message: String) -> Finding {
    Finding {
        metric: "policy".into(),
        ..Finding::new(rule, Severity::Warn, FindingKind::Policy, "", message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::verdict::OpRef;

    fn finding(rule: &str, kind: FindingKind, op: Option<&str>) -> Finding {
        let mut finding = Finding::new(rule, Severity::Fail, kind, "w", "m".to_string());
        finding.metric = "busy_time".to_string();
        finding.op = op.map(|name| OpRef {
            name: name.to_string(),
            category: "GEMM".to_string(),
            ..OpRef::default()
        });
        finding
    }

    #[test]
    fn entries_cover_ops_rules_or_both() {
        let mm = finding("regression", FindingKind::Regression, Some("aten::mm"));
        let busy = finding("timeline[0]", FindingKind::Timeline, None);
        let by_name = Accept::from_arg("aten::*mm", "").unwrap();
        assert!(covers(&by_name, &mm));
        assert!(!covers(&by_name, &busy));
        let integrity = finding("integrity", FindingKind::Integrity, None);
        assert!(!covers(
            &Accept::from_arg("rule:*", "").unwrap(),
            &integrity
        ));
        assert!(covers(
            &Accept::from_arg("rule:integrity", "").unwrap(),
            &integrity
        ));
        let by_rule = Accept::from_arg("rule:timeline.busy_time", "").unwrap();
        assert!(covers(&by_rule, &busy));
        assert!(!covers(&by_rule, &mm));
        assert!(covers(
            &Accept::from_arg("rule:regression", "").unwrap(),
            &mm
        ));
        let mut both = by_name.clone();
        both.rule = by_rule.rule.clone();
        assert!(!covers(&both, &mm) && !covers(&both, &busy));
    }

    #[test]
    fn accepting_keeps_the_finding_and_its_old_severity() {
        let mut policy = Policy::default();
        policy.accept.push(Accept {
            expires: Date::parse("2025-06-30").ok(),
            ..Accept::from_arg("aten::mm", "#12").unwrap()
        });
        let mut findings = vec![
            finding("regression", FindingKind::Regression, Some("aten::mm")),
            finding("regression", FindingKind::Regression, Some("aten::bmm")),
        ];
        let on = |day: &str| JudgeOptions {
            today: Date::parse(day).ok(),
            ..JudgeOptions::default()
        };
        let mut before = findings.clone();
        apply_accepts(&mut before, &policy, &on("2025-06-30"));
        assert_eq!(before.len(), 2);
        assert_eq!(before[0].severity, Severity::Accepted);
        let acceptance = before[0].accepted.as_ref().unwrap();
        assert_eq!(acceptance.by, "accept[0]");
        assert_eq!(acceptance.severity, Severity::Fail);
        assert_eq!(acceptance.expires.as_deref(), Some("2025-06-30"));
        assert_eq!(before[1].severity, Severity::Fail);
        apply_accepts(&mut findings, &policy, &on("2025-07-01"));
        assert_eq!(findings.len(), 3);
        assert_eq!(findings[0].severity, Severity::Fail);
        assert_eq!(findings[2].kind, FindingKind::Policy);
        assert_eq!(
            findings[2].message,
            "accept[0] (`name=aten::mm`) expired on 2025-06-30: it accepts nothing now; renew \
             its `expires` or remove it"
        );
    }
}
