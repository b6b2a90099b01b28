//! Deserialization helpers that check values where they stand.
//!
//! serde_yaml marks an error with the position of the innermost
//! `deserialize_*` call that returns it. A check made after a value has been
//! deserialized (a `try_from`, a validation pass) would be marked at the
//! parent; these helpers run their checks inside the value's own call, so
//! an out-of-range number, a bad regex or an unknown category is reported at
//! its own line and column, and a rule missing its limits at its mapping.

use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use super::date::Date;
use super::limits::{MAX_LIST, MAX_LIST_PATTERNS, MAX_REASON_CHARS, MAX_REPLAY_PACKAGES};
use crate::analysis::comm::CommKernels;
use crate::analysis::ops::category::Category;
use crate::gate::stats::MAX_RESAMPLES;

/// Rules with keys that depend on each other: checked when their mapping
/// has been read.
pub(super) trait Validate {
    /// What the mapping is, for "invalid type" errors.
    const EXPECTING: &'static str;
    /// Whether the parsed rule makes sense.
    fn validate(&self) -> Result<(), String>;
    /// How many compiled patterns (regexes, globs, shapes) the rule holds:
    /// a list may hold at most [`MAX_LIST_PATTERNS`].
    fn patterns(&self) -> usize {
        0
    }
}

/// Deserializes a mapping as `R`, then turns it into `T` with `check`. The
/// check runs inside the deserializer's own mapping call, so serde_yaml
/// marks its error at the mapping (a `try_from` would mark the parent).
pub(super) fn checked_map<'de, D, R, T, F>(
    deserializer: D,
    expecting: &'static str,
    check: F,
) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    R: Deserialize<'de>,
    F: FnOnce(R) -> Result<T, String>,
{
    struct MapVisitor<R, F> {
        expecting: &'static str,
        check: F,
        raw: PhantomData<R>,
    }
    impl<'de, R, T, F> Visitor<'de> for MapVisitor<R, F>
    where
        R: Deserialize<'de>,
        F: FnOnce(R) -> Result<T, String>,
    {
        type Value = T;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.expecting)
        }
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
            let raw = R::deserialize(MapAccessDeserializer::new(map))?;
            (self.check)(raw).map_err(de::Error::custom)
        }
    }
    deserializer.deserialize_map(MapVisitor {
        expecting,
        check,
        raw: PhantomData,
    })
}

/// A list of rules, each validated where it stands (`budgets[2]: …`). An
/// empty value (`budgets:` with every entry commented out) is an empty list.
pub(super) fn validated_list<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Validate,
{
    /// One rule; `patterns` counts the compiled patterns of the list so far.
    struct Seed<'a, T> {
        patterns: &'a mut usize,
        rule: PhantomData<T>,
    }
    impl<'de, T: Deserialize<'de> + Validate> DeserializeSeed<'de> for Seed<'_, T> {
        type Value = T;
        fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<T, D::Error> {
            checked_map(deserializer, T::EXPECTING, |rule: T| {
                rule.validate()?;
                *self.patterns += rule.patterns();
                if *self.patterns > MAX_LIST_PATTERNS {
                    return Err(format!(
                        "more than {MAX_LIST_PATTERNS} regexes, globs and shape patterns in \
                         this list, the limit for one list"
                    ));
                }
                Ok(rule)
            })
        }
    }
    struct ListVisitor<T>(PhantomData<T>);
    impl<'de, T: Deserialize<'de> + Validate> Visitor<'de> for ListVisitor<T> {
        type Value = Vec<T>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "a list, each entry {}", T::EXPECTING)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Vec<T>, E> {
            Ok(Vec::new())
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
            let mut rules = Vec::new();
            let mut patterns = 0;
            while let Some(rule) = seq.next_element_seed(Seed {
                patterns: &mut patterns,
                rule: PhantomData,
            })? {
                rules.push(rule);
                check_list_length(rules.len())?;
            }
            Ok(rules)
        }
    }
    deserializer.deserialize_seq(ListVisitor(PhantomData))
}

/// An error once a list has more than [`MAX_LIST`] entries (checked as
/// entries are read, so a long list stops at the first one too many).
fn check_list_length<E: de::Error>(length: usize) -> Result<(), E> {
    if length > MAX_LIST {
        return Err(E::custom(format!(
            "more than {MAX_LIST} entries; a list may have at most {MAX_LIST}"
        )));
    }
    Ok(())
}

/// A plain list of at most [`MAX_LIST`] entries.
pub(super) fn bounded_list<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct ListVisitor<T>(PhantomData<T>);
    impl<'de, T: Deserialize<'de>> Visitor<'de> for ListVisitor<T> {
        type Value = Vec<T>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a list")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
            let mut entries = Vec::new();
            while let Some(entry) = seq.next_element()? {
                entries.push(entry);
                check_list_length(entries.len())?;
            }
            Ok(entries)
        }
    }
    deserializer.deserialize_seq(ListVisitor(PhantomData))
}

/// A string checked by `parse`, its error marked at the value.
pub(super) fn checked_str<'de, D, T, F>(
    deserializer: D,
    expecting: &'static str,
    parse: F,
) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    F: FnOnce(&str) -> Result<T, String>,
{
    struct StrVisitor<F> {
        expecting: &'static str,
        parse: F,
    }
    impl<T, F: FnOnce(&str) -> Result<T, String>> Visitor<'_> for StrVisitor<F> {
        type Value = T;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.expecting)
        }
        fn visit_str<E: de::Error>(self, value: &str) -> Result<T, E> {
            (self.parse)(value).map_err(E::custom)
        }
    }
    deserializer.deserialize_str(StrVisitor { expecting, parse })
}

/// A number checked by `check`, its error marked at the value.
fn checked_number<'de, D, F>(
    deserializer: D,
    expecting: &'static str,
    check: F,
) -> Result<f64, D::Error>
where
    D: Deserializer<'de>,
    F: FnOnce(f64) -> Result<(), String>,
{
    struct NumberVisitor<F> {
        expecting: &'static str,
        check: F,
    }
    impl<F: FnOnce(f64) -> Result<(), String>> Visitor<'_> for NumberVisitor<F> {
        type Value = f64;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.expecting)
        }
        fn visit_f64<E: de::Error>(self, value: f64) -> Result<f64, E> {
            if !value.is_finite() {
                return Err(E::custom(format!("{value} is not a finite number")));
            }
            (self.check)(value).map(|()| value).map_err(E::custom)
        }
    }
    deserializer.deserialize_f64(NumberVisitor { expecting, check })
}

/// A whole number checked by `check`, its error marked at the value.
pub(super) fn checked_whole<'de, D, F>(
    deserializer: D,
    expecting: &'static str,
    check: F,
) -> Result<u64, D::Error>
where
    D: Deserializer<'de>,
    F: FnOnce(u64) -> Result<(), String>,
{
    struct WholeVisitor<F> {
        expecting: &'static str,
        check: F,
    }
    impl<F: FnOnce(u64) -> Result<(), String>> Visitor<'_> for WholeVisitor<F> {
        type Value = u64;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.expecting)
        }
        fn visit_u64<E: de::Error>(self, value: u64) -> Result<u64, E> {
            (self.check)(value).map(|()| value).map_err(E::custom)
        }
        fn visit_i64<E: de::Error>(self, value: i64) -> Result<u64, E> {
            match u64::try_from(value) {
                Ok(value) => self.visit_u64(value),
                Err(_) => Err(E::invalid_value(de::Unexpected::Signed(value), &self)),
            }
        }
    }
    deserializer.deserialize_u64(WholeVisitor { expecting, check })
}

/// `communication.kernels`: a bounded list of kernel-name patterns, each
/// compiled ([`CommKernels::with_patterns`]).
pub(super) fn comm_kernels<'de, D: Deserializer<'de>>(d: D) -> Result<CommKernels, D::Error> {
    let patterns: Vec<CommPattern> = bounded_list(d)?;
    CommKernels::with_patterns(patterns.iter().map(|p| &p.0)).map_err(de::Error::custom)
}

/// One `communication.kernels` entry, checked where it is written (so an
/// error points at the entry, not the list).
struct CommPattern(String);

impl<'de> Deserialize<'de> for CommPattern {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<CommPattern, D::Error> {
        checked_str(d, "a kernel-name pattern", |text| {
            CommKernels::with_patterns([text]).map(|_| CommPattern(text.to_string()))
        })
    }
}

pub(super) fn hardware_spec<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    checked_str(
        d,
        "`detected`, a catalog name or an inline spec such as hbm=3.35,bf16=990",
        |text| {
            if text.trim().is_empty() {
                Err("empty: write `detected`, a catalog name (see `tracegate hardware list`) or an inline spec".to_string())
            } else {
                Ok(text.to_string())
            }
        },
    )
}

pub(super) fn non_negative<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    checked_number(d, "a number ≥ 0", |v| {
        if v >= 0.0 {
            Ok(())
        } else {
            Err(format!("must be ≥ 0, not {v}"))
        }
    })
}

pub(super) fn opt_non_negative<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    non_negative(d).map(Some)
}

/// A number ≥ 0, or `null` (off).
pub(super) fn nullable_non_negative<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<f64>, D::Error> {
    match Option::<f64>::deserialize(d)? {
        Some(v) if !(v >= 0.0 && v.is_finite()) => Err(de::Error::custom(format!(
            "must be a number ≥ 0 or null, not {v}"
        ))),
        value => Ok(value),
    }
}

pub(super) fn percent_0_100<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    checked_number(d, "a percentage from 0 to 100", |v| {
        if (0.0..=100.0).contains(&v) {
            Ok(())
        } else {
            Err(format!("must be a percentage from 0 to 100, not {v}"))
        }
    })
}

pub(super) fn share_0_1<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    checked_number(d, "a share from 0 to 1", |v| {
        if (0.0..=1.0).contains(&v) {
            Ok(())
        } else {
            Err(format!(
                "must be a share from 0 to 1 (0.8 for 80%), not {v}"
            ))
        }
    })
}

pub(super) fn opt_percent_0_100<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    percent_0_100(d).map(Some)
}

pub(super) fn opt_positive<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    checked_number(d, "a number > 0", |v| {
        if v > 0.0 {
            Ok(())
        } else {
            Err(format!("must be > 0, not {v}"))
        }
    })
    .map(Some)
}

/// A percentage in (0, 100], or `null` for none.
pub(super) fn nullable_positive_percent<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<f64>, D::Error> {
    struct Positive(f64);
    impl<'de> Deserialize<'de> for Positive {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Positive, D::Error> {
            checked_number(d, "a number in (0, 100], or null", |v| {
                if v > 0.0 && v <= 100.0 {
                    Ok(())
                } else {
                    Err(format!("must be in (0, 100], or null, not {v}"))
                }
            })
            .map(Positive)
        }
    }
    Ok(Option::<Positive>::deserialize(d)?.map(|p| p.0))
}

/// A positive number, or `null` for none.
pub(super) fn nullable_positive<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    struct Positive(f64);
    impl<'de> Deserialize<'de> for Positive {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Positive, D::Error> {
            checked_number(d, "a positive number, or null", |v| {
                if v > 0.0 && v.is_finite() {
                    Ok(())
                } else {
                    Err(format!("must be positive, or null, not {v}"))
                }
            })
            .map(Positive)
        }
    }
    Ok(Option::<Positive>::deserialize(d)?.map(|p| p.0))
}

pub(super) fn confidence<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    checked_number(d, "a confidence level between 0 and 1", |v| {
        if v > 0.0 && v < 1.0 {
            Ok(())
        } else {
            Err(format!(
                "must be between 0 and 1 exclusive (0.95 for 95%), not {v}"
            ))
        }
    })
}

pub(super) fn rate<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    checked_number(d, "a rate in (0, 1]", |v| {
        if v > 0.0 && v <= 1.0 {
            Ok(())
        } else {
            Err(format!(
                "must be above 0 and at most 1 (0.05 for 5%), not {v}"
            ))
        }
    })
}

pub(super) fn resamples<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let n = checked_whole(d, "a whole number of resamples from 100 to 20000", |v| {
        if v < 100 {
            Err(format!(
                "must be at least 100 (intervals from fewer resamples are unstable), not {v}"
            ))
        } else if v > MAX_RESAMPLES as u64 {
            Err(format!(
                "must be at most {MAX_RESAMPLES} (every row keeps its resamples: more cost \
                 time and memory for nothing), not {v}"
            ))
        } else {
            Ok(())
        }
    })?;
    Ok(u32::try_from(n).unwrap_or(u32::MAX))
}

pub(super) fn replay_packages<'de, D: Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    let n = checked_whole(d, "a whole number ≥ 0", |v| {
        if v > MAX_REPLAY_PACKAGES as u64 {
            Err(format!(
                "must be at most {MAX_REPLAY_PACKAGES} (a package per finding), not {v}"
            ))
        } else {
            Ok(())
        }
    })?;
    Ok(usize::try_from(n).unwrap_or(MAX_REPLAY_PACKAGES))
}

pub(super) fn reason<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    checked_str(d, "a reason: why the change is intended", |text| {
        let text = text.trim();
        if text.is_empty() {
            Err("empty: say why the change is intended (a PR, an issue, a sentence)".to_string())
        } else if text.chars().count() > MAX_REASON_CHARS {
            Err(format!(
                "the reason is {} characters long; at most {MAX_REASON_CHARS}",
                text.chars().count()
            ))
        } else {
            Ok(text.to_string())
        }
    })
}

pub(super) fn opt_date<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Date>, D::Error> {
    checked_str(d, "a date, YYYY-MM-DD", Date::parse).map(Some)
}

/// Every category, for parsing names.
const CATEGORIES: [Category; 14] = [
    Category::Gemm,
    Category::ConvFwd,
    Category::ConvBwd,
    Category::SdpaFwd,
    Category::SdpaBwd,
    Category::NormFwd,
    Category::NormBwd,
    Category::Softmax,
    Category::Elementwise,
    Category::Reduce,
    Category::Comm,
    Category::Triton,
    Category::Runtime,
    Category::Other,
];

fn parse_category(name: &str) -> Result<Category, String> {
    CATEGORIES
        .into_iter()
        .find(|c| c.as_str() == name)
        .ok_or_else(|| {
            let names: Vec<String> = CATEGORIES.iter().map(|c| format!("`{c}`")).collect();
            format!(
                "unknown category `{name}`, expected one of {}",
                names.join(", ")
            )
        })
}

pub(super) fn category<'de, D: Deserializer<'de>>(d: D) -> Result<Category, D::Error> {
    checked_str(d, "an op category such as GEMM", parse_category)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categories_round_trip() {
        for category in CATEGORIES {
            assert_eq!(parse_category(category.as_str()), Ok(category));
        }
        assert!(parse_category("gemm").is_err());
    }
}
