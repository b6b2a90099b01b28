//! Reading a policy: strict YAML into [`Policy`], with errors a person can
//! act on.
//!
//! Every error is one line, `FILE:LINE:COLUMN: PATH: message`, where PATH is
//! the key path serde_yaml reports (`noise.confidence`, `budgets[2]`):
//!
//! - unknown keys and enum values get a "did you mean" (edit distance ≤ 2,
//!   or a prefix), and a top-level key that belongs in a section says which;
//! - values are checked where they stand (`de.rs`), so serde_yaml marks the
//!   value's own line and column: ranges, regexes, globs, categories, the
//!   version; rules that need one of several keys (a budget with no limit)
//!   are checked when their mapping ends, and marked at the mapping;
//! - hardware names are resolved against the catalog after parsing, and
//!   located by searching the text for the value.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use serde::Deserializer;

use super::de::{checked_whole, hardware_spec, validated_list};
use super::matcher::OpMatcher;
use super::model::{
    Budget, CrossPlatform, DEFAULT_LABEL, DEFAULT_YAML, EfficiencyRule, HardwareChoice,
    HardwarePolicy, Integrity, MissingOps, NewOps, Noise, POLICY_VERSION, Policy, Replay, Rule,
    TimelineMetric, TimelineRule,
};
use crate::analysis::hardware::{Catalog, builtin_catalog};
use crate::analysis::ops::category::Category;
use crate::gate::verdict::Severity;

/// Why a policy cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// The file could not be read.
    #[error("{path}: cannot read: {source}")]
    Io {
        /// The file.
        path: String,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The text is not a valid policy.
    #[error("{file}{}: {message}", location_suffix(*.location))]
    Invalid {
        /// The file (or label).
        file: String,
        /// 1-based line and column, when known.
        location: Option<(usize, usize)>,
        /// What is wrong, starting with the key path when there is one.
        message: String,
    },
}

fn location_suffix(location: Option<(usize, usize)>) -> String {
    match location {
        Some((line, column)) => format!(":{line}:{column}"),
        None => String::new(),
    }
}

impl Default for Policy {
    /// The built-in default (`policies/default.yaml`).
    fn default() -> Policy {
        static DEFAULT: std::sync::OnceLock<Policy> = std::sync::OnceLock::new();
        DEFAULT
            .get_or_init(|| {
                Policy::from_yaml(DEFAULT_YAML, DEFAULT_LABEL)
                    .expect("the built-in default policy parses (a unit test checks it)")
            })
            .clone()
    }
}

impl Policy {
    /// Parses and validates a policy's text; `label` names it in errors. A
    /// relative `hardware.file` is read from the current directory (use
    /// [`Policy::load`] to read it beside the policy).
    pub fn from_yaml(text: &str, label: &str) -> Result<Policy, PolicyError> {
        parse(text, label, None)
    }

    /// Reads and validates a policy file. A relative `hardware.file` is
    /// read from the policy file's directory.
    pub fn load(path: &Path) -> Result<Policy, PolicyError> {
        let label = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| PolicyError::Io {
            path: label.clone(),
            source,
        })?;
        parse(&text, &label, path.parent())
    }
}

/// The YAML shape of a policy file. Sections the file leaves out take the
/// defaults of `policies/default.yaml` (a unit test checks they agree).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyFile {
    #[serde(deserialize_with = "version")]
    version: u32,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    hardware: HardwareSection,
    #[serde(default)]
    noise: Noise,
    #[serde(default = "rule_fail")]
    regression: Rule,
    #[serde(default = "rule_info")]
    improvement: Rule,
    #[serde(default)]
    cross_platform: CrossPlatform,
    #[serde(default = "default_timeline", deserialize_with = "validated_list")]
    timeline: Vec<TimelineRule>,
    #[serde(default = "default_efficiency", deserialize_with = "validated_list")]
    efficiency: Vec<EfficiencyRule>,
    #[serde(default, deserialize_with = "validated_list")]
    budgets: Vec<Budget>,
    #[serde(default = "rule_warn")]
    kernel_selection: Rule,
    #[serde(default)]
    new_ops: NewOps,
    #[serde(default)]
    missing_ops: MissingOps,
    #[serde(default = "rule_info")]
    shape_changed: Rule,
    #[serde(default = "rule_fail")]
    nothing_to_compare: Rule,
    #[serde(default, deserialize_with = "validated_list")]
    ignore: Vec<OpMatcher>,
    #[serde(default)]
    replay: Replay,
    #[serde(default)]
    integrity: Integrity,
}

/// `hardware:` as written; resolved into [`HardwarePolicy`].
#[derive(Deserialize)]
#[serde(deny_unknown_fields, default)]
struct HardwareSection {
    #[serde(deserialize_with = "hardware_spec")]
    baseline: String,
    #[serde(deserialize_with = "hardware_spec")]
    candidate: String,
    file: Option<PathBuf>,
}

impl Default for HardwareSection {
    fn default() -> HardwareSection {
        HardwareSection {
            baseline: "detected".to_string(),
            candidate: "detected".to_string(),
            file: None,
        }
    }
}

fn rule_fail() -> Rule {
    Rule {
        severity: Severity::Fail,
    }
}

fn rule_warn() -> Rule {
    Rule {
        severity: Severity::Warn,
    }
}

fn rule_info() -> Rule {
    Rule {
        severity: Severity::Info,
    }
}

fn default_timeline() -> Vec<TimelineRule> {
    let rule = |metric, percent, severity| TimelineRule {
        metric,
        max_regression_percent: Some(percent),
        max: None,
        severity,
    };
    vec![
        rule(TimelineMetric::BusyTime, 5.0, Severity::Fail),
        rule(TimelineMetric::TotalTime, 10.0, Severity::Warn),
        rule(TimelineMetric::ExposedCommTime, 10.0, Severity::Warn),
        rule(TimelineMetric::ExposedMemcpyTime, 25.0, Severity::Warn),
    ]
}

fn default_efficiency() -> Vec<EfficiencyRule> {
    let rule = |category, min_percent| EfficiencyRule {
        category,
        min_percent,
        min_share_percent: 5.0,
        severity: Severity::Info,
    };
    vec![
        rule(Category::Gemm, 40.0),
        rule(Category::SdpaFwd, 30.0),
        rule(Category::SdpaBwd, 25.0),
        rule(Category::Elementwise, 30.0),
    ]
}

/// The `version` key: only [`POLICY_VERSION`] is read.
fn version<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    checked_whole(d, "the policy format version, 1", |v| {
        if v == u64::from(POLICY_VERSION) {
            Ok(())
        } else {
            Err(format!(
                "unsupported policy version {v}: this tracegate reads version {POLICY_VERSION}"
            ))
        }
    })?;
    Ok(POLICY_VERSION)
}

/// Parses, validates and resolves a policy. `base_dir` is where a relative
/// `hardware.file` is read from (the current directory when `None`).
fn parse(text: &str, label: &str, base_dir: Option<&Path>) -> Result<Policy, PolicyError> {
    let file: PolicyFile = serde_yaml::from_str(text).map_err(|error| yaml_error(&error, label))?;
    let hardware = resolve_hardware(file.hardware, text, label, base_dir)?;
    Ok(Policy {
        label: label.to_string(),
        version: file.version,
        description: file.description,
        hardware,
        noise: file.noise,
        regression: file.regression,
        improvement: file.improvement,
        cross_platform: file.cross_platform,
        timeline: file.timeline,
        efficiency: file.efficiency,
        budgets: file.budgets,
        kernel_selection: file.kernel_selection,
        new_ops: file.new_ops,
        missing_ops: file.missing_ops,
        shape_changed: file.shape_changed,
        nothing_to_compare: file.nothing_to_compare,
        ignore: file.ignore,
        replay: file.replay,
        integrity: file.integrity,
    })
}

fn resolve_hardware(
    section: HardwareSection,
    text: &str,
    label: &str,
    base_dir: Option<&Path>,
) -> Result<HardwarePolicy, PolicyError> {
    let invalid = |key: &str, value: &str, message: String| PolicyError::Invalid {
        file: label.to_string(),
        location: locate(text, key, value),
        message: format!("hardware.{key}: {message}"),
    };
    let mut catalog = builtin_catalog();
    let mut file = None;
    if let Some(written) = section.file {
        let path = match base_dir {
            Some(dir) => dir.join(&written),
            None => written.clone(),
        };
        let user = Catalog::load_file(&path)
            .map_err(|error| invalid("file", &written.to_string_lossy(), error.to_string()))?;
        catalog = catalog.merged_with(user);
        file = Some(path);
    }
    let choose = |key: &str, spec: &str| -> Result<HardwareChoice, PolicyError> {
        if spec.trim().eq_ignore_ascii_case("detected") {
            return Ok(HardwareChoice::Detected);
        }
        catalog
            .resolve(spec)
            .map(|hardware| HardwareChoice::Given {
                spec: spec.to_string(),
                hardware: Box::new(hardware),
            })
            .map_err(|error| invalid(key, spec, error.to_string()))
    };
    Ok(HardwarePolicy {
        baseline: choose("baseline", &section.baseline)?,
        candidate: choose("candidate", &section.candidate)?,
        file,
        catalog,
    })
}

/// Where `key: value` is written: the 1-based line and column of the value,
/// on the first line (outside comments) that has the key before the value.
fn locate(text: &str, key: &str, value: &str) -> Option<(usize, usize)> {
    if value.is_empty() {
        return None;
    }
    for (index, line) in text.lines().enumerate() {
        let code = match line.find(" #") {
            Some(at) => &line[..at],
            None => line,
        };
        if code.trim_start().starts_with('#') {
            continue;
        }
        let Some(key_at) = code.find(&format!("{key}:")) else {
            continue;
        };
        if let Some(offset) = code[key_at..].find(value) {
            let column = code[..key_at + offset].chars().count() + 1;
            return Some((index + 1, column));
        }
    }
    None
}

/// One line from a serde_yaml error: the location moved to the front,
/// Rust type names replaced by what to write, and a "did you mean".
fn yaml_error(error: &serde_yaml::Error, label: &str) -> PolicyError {
    let location = error.location().map(|l| (l.line(), l.column()));
    let mut message = error.to_string();
    if let Some((line, column)) = location {
        let suffix = format!(" at line {line} column {column}");
        if let Some(stripped) = message.strip_suffix(&suffix) {
            message = stripped.to_string();
        }
    }
    PolicyError::Invalid {
        file: label.to_string(),
        location,
        message: explain(&message),
    }
}

/// Rewrites serde's wording for people writing YAML.
fn explain(message: &str) -> String {
    let mut message = message
        .replace(
            "expected struct PolicyFile",
            "expected a policy: a mapping that starts with `version: 1`",
        )
        .replace("expected u64", "expected a whole number ≥ 0")
        .replace("expected usize", "expected a whole number ≥ 0")
        .replace("expected f64", "expected a number");
    while let Some(at) = message.find("expected struct ") {
        let rest = &message[at + "expected struct ".len()..];
        let end = rest
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(rest.len());
        message.replace_range(
            at..at + "expected struct ".len() + end,
            "expected a mapping",
        );
    }
    if message.starts_with("missing field `version`") {
        message.push_str(": a policy starts with `version: 1`");
    }
    suggest(&message)
}

/// Adds "did you mean" to an `unknown field|variant|category` message.
fn suggest(message: &str) -> String {
    for kind in ["field", "variant", "category"] {
        let marker = format!("unknown {kind} `");
        let Some(start) = message.find(&marker) else {
            continue;
        };
        let after = &message[start + marker.len()..];
        let Some(end) = after.find('`') else {
            continue;
        };
        let typo = &after[..end];
        let head = &message[..start + marker.len() + end + 1];
        let rest = after[end + 1..].trim_start_matches(',').trim();
        let candidates = backticked(rest);
        if let Some(best) = closest(typo, &candidates) {
            return format!("{head}, did you mean `{best}`? ({rest})");
        }
        // A top-level key that lives in a section.
        if kind == "field" && start == 0 {
            if let Some(section) = section_of(typo) {
                return format!("{head}: it belongs under `{section}:` ({rest})");
            }
        }
        return message.to_string();
    }
    message.to_string()
}

/// The words in backticks.
fn backticked(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// The candidate closest to `typo`: edit distance ≤ 2 (and less than its
/// length), else the longest candidate that `typo` starts or is a prefix of
/// (three characters at least).
fn closest<'a>(typo: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let lower = typo.to_lowercase();
    let by_distance = candidates
        .iter()
        .map(|c| (levenshtein(&lower, &c.to_lowercase()), *c))
        .filter(|(d, _)| *d <= 2 && *d < lower.chars().count())
        .min_by_key(|(d, _)| *d);
    if let Some((_, best)) = by_distance {
        return Some(best);
    }
    candidates
        .iter()
        .filter(|c| {
            let c = c.to_lowercase();
            (c.starts_with(&lower) && lower.len() >= 3) || (lower.starts_with(&c) && c.len() >= 3)
        })
        .max_by_key(|c| c.len())
        .copied()
}

/// Levenshtein edit distance (insert, delete, substitute), by characters.
fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = if ca == *cb {
                diagonal
            } else {
                1 + diagonal.min(above).min(row[j])
            };
            diagonal = above;
        }
    }
    row[b.len()]
}

/// The section whose mapping has a key named `key`, if any. The key lists
/// come from serde itself: a probe key makes each section's deserializer
/// list the fields it knows.
fn section_of(key: &str) -> Option<&'static str> {
    fn fields<T: serde::de::DeserializeOwned>() -> String {
        match serde_yaml::from_str::<T>("__probe__: 0") {
            Ok(_) => String::new(),
            Err(error) => error.to_string(),
        }
    }
    let sections = [
        ("hardware", fields::<HardwareSection>()),
        ("noise", fields::<Noise>()),
        ("cross_platform", fields::<CrossPlatform>()),
        ("new_ops", fields::<NewOps>()),
        ("replay", fields::<Replay>()),
        ("integrity", fields::<Integrity>()),
    ];
    sections
        .into_iter()
        .find(|(_, list)| backticked(list).contains(&key))
        .map(|(section, _)| section)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levenshtein_distances() {
        assert_eq!(levenshtein("thresold", "threshold"), 1);
        assert_eq!(levenshtein("", "abc"), 3);
        assert_eq!(levenshtein("kitten", "sitting"), 3);
        assert_eq!(levenshtein("same", "same"), 0);
    }

    #[test]
    fn closest_prefers_distance_then_prefix() {
        let fields = ["confidence", "min_effect_percent", "min_time_us"];
        assert_eq!(closest("confidance", &fields), Some("confidence"));
        assert_eq!(closest("min_effect", &fields), Some("min_effect_percent"));
        assert_eq!(closest("min_time_us_x", &fields), Some("min_time_us"));
        assert_eq!(closest("bogus", &fields), None);
        assert_eq!(closest("mi", &fields), None);
    }

    #[test]
    fn locate_finds_values_outside_comments() {
        let text =
            "# baseline: H100\nhardware:\n  baseline: H100 # note\n  candidate: \"MI300X\"\n";
        assert_eq!(locate(text, "baseline", "H100"), Some((3, 13)));
        assert_eq!(locate(text, "candidate", "MI300X"), Some((4, 15)));
        assert_eq!(locate(text, "candidate", "B200"), None);
    }
}
