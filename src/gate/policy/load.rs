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
//!   located by the YAML parser's marks (`probe.rs`);
//! - before any of that, the text's size, nesting depth and aliases are
//!   bounded (`limits.rs`), so no file can make the parser slow;
//! - text quoted from the file is escaped and cut (`crate::echo`):
//!   an error is one printable line whatever the file holds.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use serde::Deserializer;

use super::de::{checked_whole, hardware_spec, validated_list};
use super::history::{Drift, History};
use super::limits::{Breach, MAX_POLICY_BYTES, prescan, too_large};
use super::matcher::IgnoreEntry;
use super::model::{
    Accept, Budget, CROSS_PLATFORM_LABEL, CROSS_PLATFORM_YAML, Communication, CrossPlatform,
    DEFAULT_LABEL, DEFAULT_YAML, EfficiencyRule, EndToEnd, HardwareChoice, HardwarePolicy,
    Integrity, MissingOps, NewOps, POLICY_VERSION, Policy, Replay, Rule, TimelineMetric,
    TimelineRule,
};
use super::noise::Noise;
use super::probe::{fields_of, locate};
use crate::analysis::hardware::{Catalog, PeakBasis, builtin_catalog};
use crate::analysis::ops::category::Category;
use crate::echo;
use crate::gate::verdict::Severity;

/// Why a policy cannot be used. Its message is one line: the file name and
/// the text quoted from the file are escaped and cut ([`echo`]).
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// The file could not be read.
    #[error("{}: cannot read: {source}", echo::label(path))]
    Io {
        /// The file.
        path: String,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The text is not a valid policy.
    #[error(
        "{}{}: {}",
        echo::label(file),
        location_suffix(*.location),
        echo::message(message)
    )]
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
    /// The built-in cross-platform policy (`policies/cross-platform.yaml`).
    pub fn cross_platform() -> Policy {
        Policy::from_yaml(CROSS_PLATFORM_YAML, CROSS_PLATFORM_LABEL)
            .expect("the built-in cross-platform policy parses (a unit test checks it)")
    }

    /// The policy `check` judges with. A policy file decides every key;
    /// `cross_platform` (the `--cross-platform` flag) then only lets its
    /// sides run on different GPUs (`cross_platform.enabled`). Without a
    /// file the flag means the built-in cross-platform policy, so that
    /// `--cross-platform` and `--policy policies/cross-platform.yaml` judge
    /// alike; with neither, the built-in default.
    pub fn for_check(file: Option<&Path>, cross_platform: bool) -> Result<Policy, PolicyError> {
        let mut policy = match file {
            Some(path) => Policy::load(path)?,
            None if cross_platform => Policy::cross_platform(),
            None => Policy::default(),
        };
        policy.cross_platform.enabled |= cross_platform;
        Ok(policy)
    }

    /// What `check --cross-platform` would do with this policy, for the
    /// error that suggests the flag.
    pub fn cross_platform_flag_effect(&self) -> String {
        if self.label == DEFAULT_LABEL {
            "judges with the built-in policies/cross-platform.yaml: each op against the time \
             ratio the two GPUs explain, reported as information"
                .to_string()
        } else {
            format!(
                "judges with {} and its `cross_platform` section: each op against the time \
                 ratio the two GPUs explain",
                self.label
            )
        }
    }

    /// The 1-based line of the value at `path` in the policy's text: mapping
    /// keys and list indices from the top (`["budgets", "2"]`); `None`
    /// where the text has no such value.
    pub fn line_of(&self, path: &[&str]) -> Option<usize> {
        locate(&self.source, path).map(|(line, _)| line)
    }

    /// Parses and validates a policy's text; `label` names it in errors. A
    /// relative `hardware.file` is read from the current directory (use
    /// [`Policy::load`] to read it beside the policy).
    pub fn from_yaml(text: &str, label: &str) -> Result<Policy, PolicyError> {
        parse(text, label, None)
    }

    /// Reads and validates a policy file. A relative `hardware.file` is
    /// read from the policy file's directory. At most one byte past
    /// [`MAX_POLICY_BYTES`] is read: a larger file is refused.
    pub fn load(path: &Path) -> Result<Policy, PolicyError> {
        let label = path.display().to_string();
        let text = read_text(path)
            .map_err(|source| PolicyError::Io {
                path: label.clone(),
                source,
            })?
            .ok_or_else(|| invalid(&label, too_large()))?;
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
    #[serde(default)]
    end_to_end: EndToEnd,
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
    ignore: Vec<IgnoreEntry>,
    #[serde(default)]
    replay: Replay,
    #[serde(default)]
    integrity: Integrity,
    #[serde(default)]
    communication: Communication,
    #[serde(default, deserialize_with = "validated_list")]
    accept: Vec<Accept>,
    #[serde(default)]
    history: History,
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
    peak: PeakBasis,
}

impl Default for HardwareSection {
    fn default() -> HardwareSection {
        HardwareSection {
            baseline: "detected".to_string(),
            candidate: "detected".to_string(),
            file: None,
            peak: PeakBasis::Datasheet,
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
        rule(TimelineMetric::ComputationTime, 5.0, Severity::Fail),
        rule(TimelineMetric::ExposedCommTime, 10.0, Severity::Info),
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

/// A UTF-8 file of at most [`MAX_POLICY_BYTES`] (`None` when larger: no
/// more than one byte past the limit is read, whatever the file is).
fn read_text(path: &Path) -> std::io::Result<Option<String>> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_POLICY_BYTES as u64 + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() > MAX_POLICY_BYTES {
        return Ok(None);
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|error| std::io::Error::new(std::io::ErrorKind::InvalidData, error))
}

/// A catalog file (`hardware.file`), held to a policy's bounds: its size,
/// nesting and aliases ([`prescan`]).
fn load_catalog(path: &Path) -> Result<Catalog, String> {
    let label = path.display().to_string();
    let text = read_text(path)
        .map_err(|error| format!("{label}: cannot read: {error}"))?
        .ok_or_else(|| format!("{label}: {}", too_large().message))?;
    prescan(&text).map_err(|breach| match breach.location {
        Some((line, column)) => format!("{label}:{line}:{column}: {}", breach.message),
        None => format!("{label}: {}", breach.message),
    })?;
    Catalog::from_yaml(&text, &label).map_err(|error| error.to_string())
}

/// The error of a text refused before parsing.
fn invalid(label: &str, breach: Breach) -> PolicyError {
    PolicyError::Invalid {
        file: label.to_string(),
        location: breach.location,
        message: breach.message,
    }
}

/// Parses, validates and resolves a policy. `base_dir` is where a relative
/// `hardware.file` is read from (the current directory when `None`).
fn parse(text: &str, label: &str, base_dir: Option<&Path>) -> Result<Policy, PolicyError> {
    prescan(text).map_err(|breach| invalid(label, breach))?;
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
        end_to_end: file.end_to_end,
        efficiency: file.efficiency,
        budgets: file.budgets,
        kernel_selection: file.kernel_selection,
        new_ops: file.new_ops,
        missing_ops: file.missing_ops,
        shape_changed: file.shape_changed,
        nothing_to_compare: file.nothing_to_compare,
        ignore: file.ignore.into_iter().map(|entry| entry.0).collect(),
        replay: file.replay,
        integrity: file.integrity,
        communication: file.communication,
        accept: file.accept,
        history: file.history,
        source: text.to_string(),
    })
}

fn resolve_hardware(
    section: HardwareSection,
    text: &str,
    label: &str,
    base_dir: Option<&Path>,
) -> Result<HardwarePolicy, PolicyError> {
    let invalid = |key: &str, message: String| PolicyError::Invalid {
        file: label.to_string(),
        location: locate(text, &["hardware", key]),
        message: format!("hardware.{key}: {message}"),
    };
    let mut catalog = builtin_catalog();
    let mut file = None;
    if let Some(written) = section.file {
        let path = match base_dir {
            Some(dir) => dir.join(&written),
            None => written.clone(),
        };
        let user = load_catalog(&path).map_err(|message| invalid("file", message))?;
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
            .map_err(|error| invalid(key, error.to_string()))
    };
    Ok(HardwarePolicy {
        baseline: choose("baseline", &section.baseline)?,
        candidate: choose("candidate", &section.candidate)?,
        file,
        catalog,
        peak: section.peak,
    })
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
    let length = lower.chars().count();
    let by_distance = candidates
        .iter()
        // Lengths more than 2 apart are more than 2 edits apart: skip
        // measuring (a long key would cost its length times each name's).
        .filter(|c| c.chars().count().abs_diff(length) <= 2)
        .map(|c| (strsim::levenshtein(&lower, &c.to_lowercase()), *c))
        .filter(|(d, _)| *d <= 2 && *d < length)
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

/// The section whose mapping has a key named `key`, if any. The key lists
/// are the sections' own: serde's derive lists them for each type
/// ([`fields_of`]).
fn section_of(key: &str) -> Option<&'static str> {
    let sections = [
        ("hardware", fields_of::<HardwareSection>()),
        ("noise", fields_of::<Noise>()),
        ("cross_platform", fields_of::<CrossPlatform>()),
        ("new_ops", fields_of::<NewOps>()),
        ("replay", fields_of::<Replay>()),
        ("integrity", fields_of::<Integrity>()),
        ("end_to_end", fields_of::<EndToEnd>()),
        ("history", fields_of::<History>()),
        ("history.drift", fields_of::<Drift>()),
        ("communication", fields_of::<Communication>()),
    ];
    sections
        .into_iter()
        .find(|(_, fields)| fields.contains(&key))
        .map(|(section, _)| section)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closest_prefers_distance_then_prefix() {
        let fields = ["confidence", "min_effect_percent", "min_time_us"];
        assert_eq!(closest("confidance", &fields), Some("confidence"));
        assert_eq!(closest("min_effect", &fields), Some("min_effect_percent"));
        assert_eq!(closest("min_time_us_x", &fields), Some("min_time_us"));
        assert_eq!(closest("bogus", &fields), None);
        assert_eq!(closest("mi", &fields), None);
        assert_eq!(closest(&"x".repeat(100_000), &fields), None);
    }

    #[test]
    fn sections_list_the_fields_of_their_types() {
        assert_eq!(
            fields_of::<Noise>(),
            [
                "confidence",
                "min_effect_percent",
                "min_impact_percent",
                "noise_floor_percent",
                "min_time_us",
                "resamples",
                "seed",
                "false_discovery_rate",
                "borrow_for_single_samples",
                "single_sample_sigma_percent",
                "single_sample_jitter_us",
                "on_unconfirmed_single_sample"
            ]
        );
        assert_eq!(
            fields_of::<HardwareSection>(),
            ["baseline", "candidate", "file", "peak"]
        );
        assert_eq!(section_of("confidence"), Some("noise"));
        assert_eq!(section_of("slack_percent"), Some("cross_platform"));
        assert_eq!(section_of("max_packages"), Some("replay"));
        assert_eq!(section_of("candidate"), Some("hardware"));
        assert_eq!(section_of("bogus"), None);
    }
}
