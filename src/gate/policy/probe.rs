//! Asking serde instead of parsing its words: the field names of a policy
//! section, from the type's own `Deserialize`, and the line and column of a
//! value, from the YAML parser's marks.
//!
//! Both are for error messages made after parsing: "it belongs under
//! `noise:`" needs each section's keys, and an unknown GPU name found while
//! resolving the hardware needs the place it was written.

use std::fmt;

use serde::Deserialize;
use serde::de::value::Error as ValueError;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};

/// The field names `T`'s derived `Deserialize` knows (renamed names as
/// written in YAML), asked of the type: a deserializer that only answers
/// `deserialize_struct` receives them and stops. Empty for a type that is
/// not a struct with named fields.
pub(super) fn fields_of<T: for<'de> Deserialize<'de>>() -> &'static [&'static str] {
    let mut found: &'static [&'static str] = &[];
    let _ = T::deserialize(FieldProbe { found: &mut found });
    found
}

/// A deserializer that records the fields a struct asks for.
struct FieldProbe<'a> {
    found: &'a mut &'static [&'static str],
}

impl<'de> Deserializer<'de> for FieldProbe<'_> {
    type Error = ValueError;

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, ValueError> {
        Err(de::Error::custom("not a struct"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, ValueError> {
        *self.found = fields;
        Err(de::Error::custom("fields recorded"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map enum identifier ignored_any
    }
}

/// The text of the error [`Here`] raises, to tell it from others.
const HERE: &str = "tracegate: the value is here";

/// The 1-based line and column of the value at `path` (mapping keys, and
/// list indices where the value is a list, from the top) in a policy's text, as the YAML parser marks it; `None` when
/// the text has no such value.
pub(super) fn locate(text: &str, path: &[&str]) -> Option<(usize, usize)> {
    let error = Seek { path }
        .deserialize(serde_yaml::Deserializer::from_str(text))
        .err()?;
    if !error.to_string().contains(HERE) {
        return None;
    }
    error.location().map(|l| (l.line(), l.column()))
}

/// Walks down `path`, skipping every other value, and raises [`HERE`] at
/// the value it names (serde_yaml marks the error with that value's place).
struct Seek<'p> {
    path: &'p [&'p str],
}

impl<'de> DeserializeSeed<'de> for Seek<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        match self.path.split_first() {
            None => deserializer.deserialize_any(Here),
            Some((key, rest)) => deserializer.deserialize_any(SeekKey { key, rest }),
        }
    }
}

/// In a mapping: the value of `key`; in a list: the entry at index `key`;
/// sought further along `rest`.
struct SeekKey<'p> {
    key: &'p str,
    rest: &'p [&'p str],
}

impl<'de> Visitor<'de> for SeekKey<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a mapping")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            if key == self.key {
                return map.next_value_seed(Seek { path: self.rest });
            }
            map.next_value::<IgnoredAny>()?;
        }
        Ok(())
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let Ok(index) = self.key.parse::<usize>() else {
            return Ok(());
        };
        for _ in 0..index {
            if seq.next_element::<IgnoredAny>()?.is_none() {
                return Ok(());
            }
        }
        seq.next_element_seed(Seek { path: self.rest })?;
        Ok(())
    }
}

/// Any value: the error [`HERE`].
struct Here;

impl<'de> Visitor<'de> for Here {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Err(E::custom(HERE))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Err(E::custom(HERE))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Err(E::custom(HERE))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Err(E::custom(HERE))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Err(E::custom(HERE))
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Err(E::custom(HERE))
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, _: A) -> Result<(), A::Error> {
        Err(de::Error::custom(HERE))
    }

    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<(), A::Error> {
        Err(de::Error::custom(HERE))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_come_from_the_type() {
        assert_eq!(
            fields_of::<crate::gate::policy::RatioRule>(),
            ["match", "expected", "ratio", "slack_percent"]
        );
        assert!(fields_of::<String>().is_empty());
    }

    #[test]
    fn values_are_located_by_the_parser() {
        let text =
            "# baseline: H100\nhardware:\n  baseline: H100 # note\n  candidate: \"MI300X\"\n";
        assert_eq!(locate(text, &["hardware", "baseline"]), Some((3, 13)));
        assert_eq!(locate(text, &["hardware", "candidate"]), Some((4, 14)));
        assert_eq!(locate(text, &["hardware", "file"]), None);
        assert_eq!(
            locate("hardware: {candidate: B200}", &["hardware", "candidate"]),
            Some((1, 23))
        );
        assert_eq!(locate("- a", &["hardware"]), None);
        let list = "ignore:\n  - name: a\n  # note\n  - {name: b}\n";
        assert_eq!(locate(list, &["ignore", "0"]), Some((2, 5)));
        assert_eq!(locate(list, &["ignore", "1"]), Some((4, 5)));
        assert_eq!(locate(list, &["ignore", "1", "name"]), Some((4, 12)));
        assert_eq!(locate(list, &["ignore", "2"]), None);
        assert_eq!(locate(list, &["ignore", "x"]), None);
    }
}
