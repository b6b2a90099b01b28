//! Which ops a budget, an ignore entry or a cross-platform rule is about: an
//! [`OpMatcher`] compiled from a policy's `match:` mapping.
//!
//! Each field is optional and every field given must match (AND):
//!
//! | field | matched against | syntax |
//! |---|---|---|
//! | `name` | the op name (`aten::mm`) | exact; a glob when it holds `*`, `?`, `[` or `{`; a regex after `re:` |
//! | `category` | the op category (`GEMM`, `SDPA_fwd`, …) | exact category name |
//! | `shape` | `Input Dims` text (`((2048, 4096), (4096, 4096))`) | `*` and `?` wildcards; spaces ignored, `[ ]` read as `( )`; a regex after `re:` |
//! | `module` | the `nn.Module` path (`Bert_0/Encoder_0/Linear_0`) | glob where `*` stays within one `/` segment and `**` spans any; a regex after `re:` |
//!
//! Regexes are unanchored (`re:mm` matches `aten::addmm`); write `^…$` for a
//! whole-name match. Globs and exact names match the whole string. An op
//! without a module path never matches a rule that names a `module`.
//!
//! Patterns are bounded (`limits.rs`): their length, the nesting of a
//! glob's `{…}`, and the compiled size of every regex, a glob's included;
//! a glob's regex is compiled under those limits before globset compiles
//! it, because globset panics on a regex it cannot build.

use std::fmt;

use globset::{GlobBuilder, GlobMatcher};
use regex::{Regex, RegexBuilder};
use serde::Deserialize;
use serde::de::Deserializer;

use super::de::{Validate, category, checked_map, checked_str};
use super::limits::{MAX_GLOB_BRACES, MAX_PATTERN_CHARS, MAX_REGEX_BYTES};
use crate::analysis::ops::category::Category;

/// One compiled string pattern.
#[derive(Clone, Debug)]
pub enum Pattern {
    /// The whole string, exactly.
    Exact(String),
    /// A glob (globset), with its source text.
    Glob(GlobMatcher, String),
    /// A `re:` regex, unanchored.
    Regex(Regex),
    /// A shape pattern: its normalised source and the regex it compiles to.
    Shape(String, Regex),
}

impl PartialEq for Pattern {
    fn eq(&self, other: &Pattern) -> bool {
        self.to_string() == other.to_string()
    }
}

impl fmt::Display for Pattern {
    /// The pattern as written (regexes with their `re:` prefix; shapes
    /// normalised).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pattern::Exact(text) | Pattern::Glob(_, text) | Pattern::Shape(text, _) => {
                f.write_str(text)
            }
            Pattern::Regex(regex) => write!(f, "re:{}", regex.as_str()),
        }
    }
}

/// The glob metacharacters that turn a name into a glob.
const GLOB_CHARS: &[char] = &['*', '?', '[', '{'];

impl Pattern {
    /// An op-name pattern: `re:…` regex, a glob when it holds a glob
    /// metacharacter, else exact.
    pub fn name(text: &str) -> Result<Pattern, String> {
        Pattern::with_glob(text, false)
    }

    /// An `nn.Module` path pattern: like [`Pattern::name`], but in a glob
    /// `*` and `?` do not cross `/` (`**` does).
    pub fn module(text: &str) -> Result<Pattern, String> {
        Pattern::with_glob(text, true)
    }

    /// A shape (`Input Dims`) pattern: `re:…` regex, else a wildcard pattern
    /// where `*` is any text and `?` one character, compared with spaces
    /// removed and square brackets read as parentheses on both sides.
    pub fn shape(text: &str) -> Result<Pattern, String> {
        check_length(text)?;
        if let Some(regex) = text.strip_prefix("re:") {
            return compile_regex(regex);
        }
        let normalised = normalise_shape(text);
        if normalised.is_empty() {
            return Err("empty shape pattern".to_string());
        }
        let mut source = String::from("^");
        for c in normalised.chars() {
            match c {
                '*' => source.push_str(".*"),
                '?' => source.push('.'),
                other => source.push_str(&regex::escape(&other.to_string())),
            }
        }
        source.push('$');
        let regex = bounded_regex(&source).map_err(|error| one_line(&error.to_string()))?;
        Ok(Pattern::Shape(normalised, regex))
    }

    fn with_glob(text: &str, literal_separator: bool) -> Result<Pattern, String> {
        check_length(text)?;
        if let Some(regex) = text.strip_prefix("re:") {
            return compile_regex(regex);
        }
        if text.is_empty() {
            return Err("empty pattern".to_string());
        }
        if !text.contains(GLOB_CHARS) {
            return Ok(Pattern::Exact(text.to_string()));
        }
        let braces = brace_depth(text);
        if braces > MAX_GLOB_BRACES {
            return Err(format!(
                "invalid glob: `{{…}}` nested {braces} deep; a glob may nest them at most \
                 {MAX_GLOB_BRACES} deep"
            ));
        }
        let glob = GlobBuilder::new(text)
            .literal_separator(literal_separator)
            .build()
            .map_err(|error| format!("invalid glob: {}", error.kind()))?;
        // Globset's own compilation panics where the regex cannot be built;
        // build it first under tighter limits than globset's.
        regex::bytes::RegexBuilder::new(glob.regex())
            .size_limit(MAX_REGEX_BYTES)
            .dfa_size_limit(MAX_REGEX_BYTES)
            .nest_limit(REGEX_NEST_LIMIT)
            .build()
            .map_err(|error| format!("invalid glob: {}", one_line(&error.to_string())))?;
        Ok(Pattern::Glob(glob.compile_matcher(), text.to_string()))
    }

    /// Whether `text` matches.
    pub fn matches(&self, text: &str) -> bool {
        match self {
            Pattern::Exact(exact) => exact == text,
            Pattern::Glob(glob, _) => glob.is_match(text),
            Pattern::Regex(regex) => regex.is_match(text),
            Pattern::Shape(_, regex) => regex.is_match(&normalise_shape(text)),
        }
    }
}

/// The deepest nesting of groups in a compiled regex (the regex crate's
/// default is 250; globset compiles with the default).
const REGEX_NEST_LIMIT: u32 = 100;

/// A pattern no longer than [`MAX_PATTERN_CHARS`].
fn check_length(text: &str) -> Result<(), String> {
    let length = text.chars().count();
    if length > MAX_PATTERN_CHARS {
        return Err(format!(
            "the pattern is {length} characters long; a pattern may have at most \
             {MAX_PATTERN_CHARS}"
        ));
    }
    Ok(())
}

/// How deep a glob nests `{…}` (escaped braces counted too: the bound only
/// needs to be safe).
fn brace_depth(glob: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    for c in glob.chars() {
        match c {
            '{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// A regex compiled under [`MAX_REGEX_BYTES`] and [`REGEX_NEST_LIMIT`].
fn bounded_regex(source: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(source)
        .size_limit(MAX_REGEX_BYTES)
        .dfa_size_limit(MAX_REGEX_BYTES)
        .nest_limit(REGEX_NEST_LIMIT)
        .build()
}

fn compile_regex(source: &str) -> Result<Pattern, String> {
    if source.is_empty() {
        return Err("empty regex after `re:`".to_string());
    }
    bounded_regex(source)
        .map(Pattern::Regex)
        .map_err(|error| format!("invalid regex: {}", one_line(&error.to_string())))
}

/// The regex crate's errors span several lines (the pattern, a caret, the
/// message); an error here is one line.
fn one_line(text: &str) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    match lines.iter().rev().find(|line| line.starts_with("error:")) {
        Some(last) => last.trim_start_matches("error:").trim().to_string(),
        None => lines.join(" "),
    }
}

/// Spaces removed, `[`/`]` as `(`/`)`.
fn normalise_shape(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| match c {
            '[' => '(',
            ']' => ')',
            other => other,
        })
        .collect()
}

/// The ops a rule applies to (a policy's `match:` mapping, or an `ignore`
/// entry). Every field given must match; at least one is given.
#[derive(Clone, Debug, PartialEq)]
pub struct OpMatcher {
    /// Op-name pattern.
    pub name: Option<Pattern>,
    /// Op category.
    pub category: Option<Category>,
    /// `Input Dims` pattern.
    pub shape: Option<Pattern>,
    /// `nn.Module` path pattern.
    pub module: Option<Pattern>,
}

impl OpMatcher {
    /// Whether an op row matches: its name, category name (as
    /// [`Category::as_str`] writes it), `Input Dims` text and `nn.Module`
    /// path (none when the trace records no modules).
    pub fn matches(
        &self,
        name: &str,
        category: &str,
        input_dims: &str,
        module_path: Option<&str>,
    ) -> bool {
        self.name.as_ref().is_none_or(|p| p.matches(name))
            && self.category.is_none_or(|c| c.as_str() == category)
            && self.shape.as_ref().is_none_or(|p| p.matches(input_dims))
            && self
                .module
                .as_ref()
                .is_none_or(|p| module_path.is_some_and(|path| p.matches(path)))
    }
}

impl fmt::Display for OpMatcher {
    /// `name=aten::*mm category=GEMM`, fields in the order they are listed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<String> = Vec::new();
        if let Some(name) = &self.name {
            parts.push(format!("name={name}"));
        }
        if let Some(category) = self.category {
            parts.push(format!("category={category}"));
        }
        if let Some(shape) = &self.shape {
            parts.push(format!("shape={shape}"));
        }
        if let Some(module) = &self.module {
            parts.push(format!("module={module}"));
        }
        f.write_str(&parts.join(" "))
    }
}

/// The YAML shape of a `match:` mapping, each value compiled where it
/// stands (so an invalid regex is reported at its own line and column).
/// An `ignore` entry has the same shape, with `match:` (which a `match:`
/// mapping itself may not hold) or the other keys directly.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MatchSpec {
    #[serde(default, rename = "match")]
    matcher: Option<Box<OpMatcher>>,
    #[serde(default, deserialize_with = "name_pattern")]
    name: Option<Pattern>,
    #[serde(default, deserialize_with = "opt_category")]
    category: Option<Category>,
    #[serde(default, deserialize_with = "shape_pattern")]
    shape: Option<Pattern>,
    #[serde(default, deserialize_with = "module_pattern")]
    module: Option<Pattern>,
}

impl Validate for OpMatcher {
    const EXPECTING: &'static str = "an op match (name, category, shape or module)";
    fn validate(&self) -> Result<(), String> {
        Ok(())
    }
    fn patterns(&self) -> usize {
        [&self.name, &self.shape, &self.module]
            .into_iter()
            .flatten()
            .filter(|pattern| !matches!(pattern, Pattern::Exact(_)))
            .count()
    }
}

impl<'de> Deserialize<'de> for OpMatcher {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<OpMatcher, D::Error> {
        checked_map(
            deserializer,
            "an op match (name, category, shape or module)",
            |spec: MatchSpec| {
                if spec.matcher.is_some() {
                    return Err("an op match holds name, category, shape or module, \
                         not another `match:`"
                        .to_string());
                }
                if spec.name.is_none()
                    && spec.category.is_none()
                    && spec.shape.is_none()
                    && spec.module.is_none()
                {
                    return Err(
                        "matches every op: give at least one of name, category, shape, module"
                            .to_string(),
                    );
                }
                Ok(OpMatcher {
                    name: spec.name,
                    category: spec.category,
                    shape: spec.shape,
                    module: spec.module,
                })
            },
        )
    }
}

/// An `ignore` entry: `match: {…}`, as budgets, cross-platform rules and
/// `accept` entries write it, or (the older form, still read so that no
/// policy breaks) the op match's keys directly.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct IgnoreEntry(pub(super) OpMatcher);

impl Validate for IgnoreEntry {
    const EXPECTING: &'static str = "an ignore entry (match: an op match)";
    fn validate(&self) -> Result<(), String> {
        Ok(())
    }
    fn patterns(&self) -> usize {
        self.0.patterns()
    }
}

impl<'de> Deserialize<'de> for IgnoreEntry {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<IgnoreEntry, D::Error> {
        checked_map(deserializer, IgnoreEntry::EXPECTING, |spec: MatchSpec| {
            let bare = spec.name.is_some()
                || spec.category.is_some()
                || spec.shape.is_some()
                || spec.module.is_some();
            match (spec.matcher, bare) {
                (Some(_), true) => Err("give the op match under `match:` only (name, category, \
                     shape and module beside it are the older form of the same)"
                    .to_string()),
                (Some(matcher), false) => Ok(IgnoreEntry(*matcher)),
                (None, true) => Ok(IgnoreEntry(OpMatcher {
                    name: spec.name,
                    category: spec.category,
                    shape: spec.shape,
                    module: spec.module,
                })),
                (None, false) => Err("matches every op: give `match:` with at least one of \
                     name, category, shape, module"
                    .to_string()),
            }
        })
    }
}

fn name_pattern<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Pattern>, D::Error> {
    checked_str(d, "an op name, glob or re:regex", Pattern::name).map(Some)
}

fn shape_pattern<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Pattern>, D::Error> {
    checked_str(d, "an Input Dims pattern or re:regex", Pattern::shape).map(Some)
}

fn module_pattern<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Pattern>, D::Error> {
    checked_str(d, "an nn.Module path glob or re:regex", Pattern::module).map(Some)
}

/// An accept entry's `rule:` pattern, matched against finding rule names.
pub(super) fn rule_pattern<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Pattern>, D::Error> {
    checked_str(
        d,
        "a rule name, glob or re:regex (regression, budgets[0], timeline.*)",
        Pattern::name,
    )
    .map(Some)
}

fn opt_category<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Category>, D::Error> {
    category(d).map(Some)
}

/// An `OpMatcher` from a `match:` mapping's YAML text (tests and callers
/// that build rules in code).
impl std::str::FromStr for OpMatcher {
    type Err = String;

    fn from_str(text: &str) -> Result<OpMatcher, String> {
        serde_yaml::from_str(text).map_err(|error| error.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matcher(yaml: &str) -> OpMatcher {
        yaml.parse().unwrap()
    }

    const DIMS: &str = "((2048, 4096), (4096, 4096))";
    const MODULE: &str = "Bert_0/Encoder_0/Layer_3/Attention_0/Linear_0";

    #[test]
    fn exact_names() {
        let m = matcher("name: aten::mm");
        assert!(m.matches("aten::mm", "GEMM", DIMS, None));
        assert!(!m.matches("aten::addmm", "GEMM", DIMS, None));
        assert!(!m.matches("aten::mm_", "GEMM", DIMS, None));
        assert!(matches!(m.name, Some(Pattern::Exact(_))));
    }

    #[test]
    fn glob_names() {
        let m = matcher("name: aten::*mm");
        assert!(m.matches("aten::mm", "GEMM", DIMS, None));
        assert!(m.matches("aten::addmm", "GEMM", DIMS, None));
        assert!(!m.matches("aten::mm_out", "GEMM", DIMS, None));
        let m = matcher("name: \"aten::{mm,bmm}\"");
        assert!(m.matches("aten::bmm", "GEMM", DIMS, None));
        assert!(!m.matches("aten::addmm", "GEMM", DIMS, None));
    }

    #[test]
    fn regex_names_are_unanchored() {
        let m = matcher("name: \"re:^aten::(b)?mm$\"");
        assert!(m.matches("aten::mm", "GEMM", DIMS, None));
        assert!(m.matches("aten::bmm", "GEMM", DIMS, None));
        assert!(!m.matches("aten::addmm", "GEMM", DIMS, None));
        let m = matcher("name: \"re:mm\"");
        assert!(m.matches("aten::addmm", "GEMM", DIMS, None));
        assert_eq!(m.to_string(), "name=re:mm");
    }

    #[test]
    fn categories() {
        let m = matcher("category: SDPA_fwd");
        assert!(m.matches("aten::_flash_attention_forward", "SDPA_fwd", "", None));
        assert!(!m.matches("aten::mm", "GEMM", "", None));
        let m = matcher("{name: \"aten::*\", category: GEMM}");
        assert!(m.matches("aten::mm", "GEMM", "", None));
        assert!(!m.matches("aten::add", "elementwise", "", None));
        assert!(!m.matches("my::gemm", "GEMM", "", None));
    }

    #[test]
    fn module_globs_stay_within_segments() {
        let m = matcher("module: \"**/Attention_*/**\"");
        assert!(m.matches("aten::mm", "GEMM", DIMS, Some(MODULE)));
        assert!(!m.matches("aten::mm", "GEMM", DIMS, Some("Bert_0/Mlp_0/Linear_0")));
        // No module path recorded: a module rule cannot match.
        assert!(!m.matches("aten::mm", "GEMM", DIMS, None));
        let m = matcher("module: \"Bert_0/*/Linear_0\"");
        assert!(!m.matches("aten::mm", "GEMM", DIMS, Some(MODULE)));
        assert!(m.matches("aten::mm", "GEMM", DIMS, Some("Bert_0/Mlp_0/Linear_0")));
        let m = matcher("module: \"Bert_0/**/Linear_0\"");
        assert!(m.matches("aten::mm", "GEMM", DIMS, Some(MODULE)));
        let m = matcher("module: \"re:Layer_(1|3)/\"");
        assert!(m.matches("aten::mm", "GEMM", DIMS, Some(MODULE)));
    }

    #[test]
    fn shape_globs() {
        let m = matcher("shape: \"((2048, *), *)\"");
        assert!(m.matches("aten::mm", "GEMM", DIMS, None));
        assert!(!m.matches("aten::mm", "GEMM", "((1024, 4096), (4096, 4096))", None));
        // Brackets as parentheses, spaces ignored.
        let m = matcher("shape: \"[[2048,4096],[4096,4096]]\"");
        assert!(m.matches("aten::mm", "GEMM", DIMS, None));
        let m = matcher("shape: \"((?048, 4096), *)\"");
        assert!(m.matches("aten::mm", "GEMM", DIMS, None));
        let m = matcher("shape: \"re:\\\\(4096, 4096\\\\)\\\\)$\"");
        assert!(m.matches("aten::mm", "GEMM", DIMS, None));
        assert_eq!(
            matcher("shape: \"[[2048, *]]\"").to_string(),
            "shape=((2048,*))"
        );
    }

    #[test]
    fn all_fields_must_match() {
        let m = matcher(
            "{name: \"aten::*mm\", category: GEMM, shape: \"((2048, *), *)\", module: \"**/Linear_0\"}",
        );
        assert!(m.matches("aten::addmm", "GEMM", DIMS, Some(MODULE)));
        assert!(!m.matches("aten::addmm", "GEMM", "((1, 2), (2, 3))", Some(MODULE)));
        assert!(!m.matches("aten::addmm", "GEMM", DIMS, Some("Bert_0/Dense_0")));
        assert!(!m.matches("aten::addmm", "other", DIMS, Some(MODULE)));
    }

    #[test]
    fn bad_patterns_are_errors() {
        let error = "name: \"re:aten::(mm\"".parse::<OpMatcher>().unwrap_err();
        assert!(error.contains("invalid regex"), "{error}");
        assert!(error.contains("line 1 column 7"), "{error}");
        let error = "name: \"aten::[mm\"".parse::<OpMatcher>().unwrap_err();
        assert!(error.contains("invalid glob"), "{error}");
        let error = "{}".parse::<OpMatcher>().unwrap_err();
        assert!(error.contains("matches every op"), "{error}");
        let error = "category: GEM".parse::<OpMatcher>().unwrap_err();
        assert!(error.contains("unknown category `GEM`"), "{error}");
    }
}
