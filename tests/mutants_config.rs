//! `.cargo/mutants.toml` leaves out the equivalent mutants by place
//! (`file:line:column`), change and function. An edit above one moves it, and
//! the entry then excludes nothing (the weekly mutants job fails on the
//! equivalent mutant) or, worse, another mutant. These tests read each entry
//! against the source as it is, without cargo-mutants: the place must hold
//! the operator the entry changes, inside the function it names.
//! `scripts/mutants-exclusions` checks the same against cargo-mutants' own
//! listing.

use std::fs;
use std::path::Path;

/// One `exclude_re` entry, its regex escapes undone.
#[derive(Debug)]
struct Exclusion {
    file: String,
    line: usize,
    column: usize,
    /// The operator replaced or deleted; `None` for a function's value.
    operator: Option<String>,
    /// The function's own name, the last segment of its path.
    function: String,
}

fn exclusions() -> Vec<Exclusion> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = fs::read_to_string(root.join(".cargo/mutants.toml")).expect(".cargo/mutants.toml");
    config
        .lines()
        .map(str::trim)
        .filter(|line| line.starts_with("'^src/"))
        .map(|line| parse(line.trim_end_matches(',').trim_matches('\'')))
        .collect()
}

/// `^src/a.rs:12:34: replace > with >= in f$` or `… delete - in f$` or
/// `… replace <impl T for S>::f -> R with …`.
fn parse(entry: &str) -> Exclusion {
    let plain: String = {
        let mut out = String::new();
        let mut chars = entry.trim_start_matches('^').trim_end_matches('$').chars();
        while let Some(c) = chars.next() {
            out.push(if c == '\\' {
                chars.next().expect("escaped")
            } else {
                c
            });
        }
        out
    };
    let mut parts = plain.splitn(4, ':');
    let file = parts.next().expect("file").to_string();
    let line = parts.next().and_then(|l| l.parse().ok()).expect(entry);
    let column = parts.next().and_then(|c| c.parse().ok()).expect(entry);
    let change = parts.next().expect(entry).trim();
    let (operator, function) = if let Some(rest) = change.strip_prefix("delete ") {
        let (op, function) = rest.split_once(" in ").expect(entry);
        (Some(op.to_string()), function)
    } else if let Some((op, function)) = change
        .strip_prefix("replace ")
        .and_then(|rest| rest.split_once(" with "))
        .filter(|(op, _)| !op.contains(" -> "))
        .and_then(|(op, rest)| Some((op, rest.split_once(" in ")?.1)))
    {
        (Some(op.to_string()), function)
    } else {
        let signature = change.strip_prefix("replace ").expect(entry);
        (None, signature.split(" -> ").next().expect(entry))
    };
    let function = function.rsplit("::").next().expect(entry).to_string();
    Exclusion {
        file,
        line,
        column,
        operator,
        function,
    }
}

/// The name of the nearest `fn` declared at or above `line` (1-based).
fn enclosing_function(lines: &[&str], line: usize) -> Option<String> {
    lines[..line].iter().rev().find_map(|text| {
        let code = text.trim_start();
        if code.starts_with("//") || !(code.starts_with("fn ") || code.contains(" fn ")) {
            return None;
        }
        let after = code.split("fn ").nth(1)?;
        Some(after.split(['(', '<']).next()?.trim().to_string())
    })
}

#[test]
fn each_excluded_mutant_is_where_its_entry_says() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let entries = exclusions();
    assert!(entries.len() >= 10, "{entries:?}");
    for entry in &entries {
        let source = fs::read_to_string(root.join(&entry.file)).expect(&entry.file);
        let lines: Vec<&str> = source.lines().collect();
        let text = lines
            .get(entry.line - 1)
            .unwrap_or_else(|| panic!("{entry:?}: no such line"));
        // cargo-mutants counts columns in characters from 1.
        let at: String = text.chars().skip(entry.column - 1).collect();
        if let Some(operator) = &entry.operator {
            assert!(
                at.starts_with(operator.as_str()),
                "{entry:?}: line {} is `{text}`, without `{operator}` at column {}",
                entry.line,
                entry.column
            );
        } else {
            assert!(!at.trim().is_empty(), "{entry:?}: nothing at the column");
        }
        assert_eq!(
            enclosing_function(&lines, entry.line).as_deref(),
            Some(entry.function.as_str()),
            "{entry:?}: not inside `fn {}`",
            entry.function
        );
    }
}

#[test]
fn entries_are_read_as_cargo_mutants_names_them() {
    let operator = parse(r"^src/history/changepoint\.rs:288:40: replace \+ with - in pelt$");
    assert_eq!(
        (operator.file.as_str(), operator.line, operator.column),
        ("src/history/changepoint.rs", 288, 40)
    );
    assert_eq!(
        (operator.operator.as_deref(), operator.function.as_str()),
        (Some("+"), "pelt")
    );
    let method =
        parse(r"^src/analysis/timeline\.rs:91:21: replace < with > in IntervalSet::subtract$");
    assert_eq!(
        (method.operator.as_deref(), method.function.as_str()),
        (Some("<"), "subtract")
    );
    let deleted = parse(r"^src/history/changepoint\.rs:270:15: delete - in pelt$");
    assert_eq!(deleted.operator.as_deref(), Some("-"));
    let value = parse(
        r"^src/a\.rs:9:5: replace <impl Visitor<.de> for ShapeVisitor>::expecting -> R with Ok(())",
    );
    assert_eq!(
        (value.operator, value.function.as_str()),
        (None, "expecting")
    );
    let value = parse(r"^src/a\.rs:51:5: replace records_step_ops -> bool with true$");
    assert_eq!(
        (value.operator, value.function.as_str()),
        (None, "records_step_ops")
    );
}
