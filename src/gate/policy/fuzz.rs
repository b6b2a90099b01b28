//! Fuzzing the policy loader (proptest): arbitrary bytes, and the shipped
//! policies with structured mutations (YAML tokens, hostile numbers and
//! patterns inserted, repeated, cut and duplicated). Whatever the text,
//! loading gives a policy or a typed error, never a panic, within a time
//! bound; an error is one printable line; a text the pre-parse scan passes
//! never reaches the parser's own recursion limit.
//!
//! CI runs a few cases; a long campaign is
//! `PROPTEST_CASES=200000 cargo test --release --lib gate::policy::fuzz`
//! (docs/RELIABILITY.md).

use std::time::{Duration, Instant};

use proptest::prelude::*;

use super::limits::prescan;
use super::model::DEFAULT_YAML;
use super::*;
use crate::gate::snapshot::tests::fuzz_config;

/// The longest one load may take: a watchdog (a hang fails it, a busy
/// machine running a debug build does not).
const BOUND: Duration = Duration::from_secs(60);

const BASES: [&str; 3] = [
    DEFAULT_YAML,
    include_str!("../../../policies/strict.yaml"),
    include_str!("../../../policies/cross-platform.yaml"),
];

/// Pieces of YAML and values that have broken loaders.
const TOKENS: &[&str] = &[
    "[",
    "]",
    "{",
    "}",
    ",",
    "\n",
    "\n  ",
    "\n    - ",
    "- ",
    "? ",
    ": ",
    "#",
    " # c",
    "|\n",
    ">-\n",
    "\"",
    "'",
    "\\",
    "&a ",
    "*a",
    "<<: *a",
    "!!str ",
    "!!binary ",
    "~",
    "null",
    "---\n",
    "...\n",
    "%YAML 1.2\n",
    "\t",
    "\r",
    "\u{85}",
    "\u{2028}",
    "\u{feff}",
    "\u{1b}[2J",
    "::error title=x::y",
    "1e8",
    "-1",
    "0",
    ".nan",
    ".inf",
    "-.inf",
    "1e309",
    "99999999999999999999999",
    "0x10",
    "4294967296",
    "100000000",
    "true",
    "version: 1\n",
    "noise:\n  resamples: ",
    "replay:\n  max_packages: ",
    "ignore:\n  - name: ",
    "budgets:\n",
    "accept:\n  - reason: r\n    match: {name: ",
    "accept:\n  - rule: ",
    "expires: ",
    "2024-02-29",
    "9999-12-31",
    "reason: ",
    "\"re:(a+)+$\"",
    "\"re:(((((((((((a)))))))))))\"",
    "\"{a,{b,{c,{d,e}}}}\"",
    "\"**/*[!a]?\"",
    "\"re:\\\\w{1000}{1000}\"",
    "category: GEMM",
    "shape: \"((*, ?))\"",
    "module: \"**/x\"",
    "hardware:\n  baseline: ",
    "H100",
    "\"hbm=3,bf16=x\"",
    "file: /dev/null",
];

/// One change to a text.
#[derive(Clone, Debug)]
enum Mutation {
    /// Insert a token, `times` over, at a position (a fraction of the length).
    Insert { at: f64, token: usize, times: usize },
    /// Remove up to `length` bytes.
    Cut { at: f64, length: usize },
    /// Copy up to `length` bytes in place after themselves.
    Duplicate { at: f64, length: usize },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let at = 0.0..=1.0f64;
    prop_oneof![
        4 => (at.clone(), 0..TOKENS.len(), prop_oneof![3 => 1..4usize, 1 => 1..3000usize])
            .prop_map(|(at, token, times)| Mutation::Insert { at, token, times }),
        1 => (at.clone(), 1..200usize).prop_map(|(at, length)| Mutation::Cut { at, length }),
        1 => (at, 1..400usize).prop_map(|(at, length)| Mutation::Duplicate { at, length }),
    ]
}

/// The char boundary at or before `fraction` of `text`.
fn boundary(text: &str, fraction: f64) -> usize {
    let mut at = ((text.len() as f64) * fraction) as usize;
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn apply(mut text: String, mutations: &[Mutation]) -> String {
    for mutation in mutations {
        match *mutation {
            Mutation::Insert { at, token, times } => {
                let at = boundary(&text, at);
                text.insert_str(at, &TOKENS[token].repeat(times));
            }
            Mutation::Cut { at, length } => {
                let start = boundary(&text, at);
                let end = boundary(
                    &text,
                    ((start + length) as f64 / text.len().max(1) as f64).min(1.0),
                );
                text.replace_range(start..end.max(start), "");
            }
            Mutation::Duplicate { at, length } => {
                let start = boundary(&text, at);
                let end = boundary(
                    &text,
                    ((start + length) as f64 / text.len().max(1) as f64).min(1.0),
                );
                let piece = text[start..end.max(start)].to_string();
                text.insert_str(end.max(start), &piece);
            }
        }
    }
    text
}

/// The properties every text must keep.
fn loads_or_fails_cleanly(text: &str) -> Result<(), TestCaseError> {
    let started = Instant::now();
    let result = Policy::from_yaml(text, "fuzz.yaml");
    let took = started.elapsed();
    prop_assert!(took < BOUND, "took {took:?}");
    match result {
        Ok(policy) => {
            let summary = policy.summary().to_string();
            for line in summary.lines() {
                prop_assert!(!line.chars().any(char::is_control), "{line:?}");
            }
        }
        Err(error) => {
            let message = error.to_string();
            prop_assert!(message.starts_with("fuzz.yaml"), "{message}");
            prop_assert!(!message.chars().any(char::is_control), "{message:?}");
            prop_assert!(message.chars().count() <= 3200, "{} chars", message.len());
        }
    }
    if prescan(text).is_ok() {
        if let Err(error) = serde_yaml::from_str::<serde_yaml::Value>(text) {
            let message = error.to_string();
            prop_assert!(
                !message.contains("recursion limit exceeded"),
                "the scan passed a text the parser finds too deep: {message}"
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(fuzz_config(48))]

    #[test]
    fn policy_loader_survives_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..4096)) {
        loads_or_fails_cleanly(&String::from_utf8_lossy(&bytes))?;
    }

    #[test]
    fn policy_loader_survives_mutated_policies(
        base in 0..BASES.len(),
        mutations in proptest::collection::vec(mutation(), 1..8),
    ) {
        loads_or_fails_cleanly(&apply(BASES[base].to_string(), &mutations))?;
    }
}
