//! Policies: the YAML file that says what the gate judges and how strictly.
//!
//! A policy is `version: 1` plus optional sections; every key has a default,
//! so `version: 1` alone is the built-in default policy
//! (`policies/default.yaml`, compiled in and shown by `tracegate policy
//! init`). Parsing is strict, as in typos' config: an unknown key, a wrong
//! type or an out-of-range value is one error line `FILE:LINE:COLUMN:
//! message`, with a "did you mean" for misspelt keys. docs/POLICY.md
//! documents every key.
//!
//! Files: `model.rs` holds the model; `load.rs` parsing, the built-in
//! default, hardware resolution and error wording; `limits.rs` the bounds
//! on what a policy may ask for and the look at its text before parsing;
//! `de.rs` the checks made while deserializing (so errors point at the
//! value); `probe.rs` field names and value positions asked of serde and
//! the parser; `matcher.rs` op matching; `date.rs` the dates of `accept`
//! entries' expiry; `history.rs` the `history` section; `summary.rs` what `policy check`
//! prints. This one names the public items and the `policy` subcommands'
//! entry points.
//!
//! The judge reads a [`Policy`] as plain data: severities per rule, noise
//! settings ([`Noise::threshold_percent`] combines them), the resolved
//! hardware of each side, and [`OpMatcher`]s compiled from `match:`
//! mappings.

mod date;
mod de;
mod history;
mod limits;
mod load;
mod matcher;
mod model;
mod noise;
mod probe;
mod summary;

use std::path::Path;

pub use date::Date;
pub use history::{Drift, History, MAX_HISTORY_RUNS};
pub use limits::{
    MAX_ALIASES, MAX_DEPTH, MAX_GLOB_BRACES, MAX_LIST, MAX_LIST_PATTERNS, MAX_PATTERN_CHARS,
    MAX_POLICY_BYTES, MAX_REASON_CHARS, MAX_REGEX_BYTES, MAX_REPLAY_PACKAGES,
};
pub use load::PolicyError;
pub use matcher::{OpMatcher, Pattern};
pub use model::{
    Accept, Budget, CROSS_PLATFORM_LABEL, CROSS_PLATFORM_YAML, Communication, CrossPlatform,
    DEFAULT_LABEL, DEFAULT_YAML, EfficiencyRule, EndToEnd, Expectation, Expected, HardwareChoice,
    HardwarePolicy, IDLE_NOISE_PERCENT, Integrity, MissingOps, NewOps, POLICY_VERSION, Policy,
    RatioRule, Replay, Rule, TimelineMetric, TimelineRule,
};
pub use noise::{Noise, SINGLE_SAMPLE_JITTER_US, SINGLE_SAMPLE_SIGMA_PERCENT};
pub use summary::Summary;

/// The commented default policy, for `tracegate policy init`.
pub fn init_text() -> &'static str {
    DEFAULT_YAML
}

/// Loads and validates a policy file (`tracegate policy check FILE`) and
/// describes it in a few lines.
pub fn check_file(path: &Path) -> Result<Summary, PolicyError> {
    Policy::load(path).map(|policy| policy.summary())
}

#[cfg(test)]
mod fuzz;
#[cfg(test)]
mod tests;
