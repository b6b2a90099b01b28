//! Op arguments as TraceLens prints them: the JSON lists of `Input Dims`,
//! `Input type`, `Input Strides` and `Concrete Inputs` written as Python
//! tuples (`((512,), (141, 512))`, `('c10::BFloat16', 'Scalar')`), so unique-
//! argument keys and CSV cells match what scripts built on TraceLens expect.

use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::trace::{Sym, Trace};

/// The interned `Input Dims`, `Input type`, `Input Strides` and `Concrete
/// Inputs` of the op event `op` (equal symbols, equal text): what tables
/// group by before they print anything.
pub fn arg_syms(trace: &Trace, op: u32) -> [Option<Sym>; 4] {
    let args = trace
        .op_args(&trace.events[op as usize])
        .copied()
        .unwrap_or_default();
    [
        args.input_dims,
        args.input_type,
        args.input_strides,
        args.concrete_inputs,
    ]
}

/// Writes a JSON value the way Python's `repr` writes the tuple TraceLens
/// builds from it: lists become tuples, strings single-quoted; text that
/// is not JSON is returned as it is. Streams from the text to the tuple
/// (no tree of the value is built): argument lists can hold millions of
/// entries.
pub fn python_repr(raw_json: &str) -> String {
    let mut out = String::with_capacity(raw_json.len());
    let mut deserializer = serde_json::Deserializer::from_str(raw_json);
    let written = Repr(&mut out).deserialize(&mut deserializer);
    match written.and_then(|()| deserializer.end()) {
        Ok(()) => out,
        Err(_) => raw_json.to_string(),
    }
}

/// Writes one JSON value as its Python repr into the string it holds.
struct Repr<'o>(&'o mut String);

impl<'de> DeserializeSeed<'de> for Repr<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Repr<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.0.push('(');
        let mut items = 0usize;
        loop {
            let mark = self.0.len();
            if items > 0 {
                self.0.push_str(", ");
            }
            if seq.next_element_seed(Repr(self.0))?.is_none() {
                self.0.truncate(mark);
                break;
            }
            items += 1;
        }
        if items == 1 {
            self.0.push(',');
        }
        self.0.push(')');
        Ok(())
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<(), E> {
        write_python_str(text, self.0);
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.0.push_str("None");
        Ok(())
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<(), E> {
        self.0.push_str(if value { "True" } else { "False" });
        Ok(())
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<(), E> {
        self.0.push_str(&value.to_string());
        Ok(())
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<(), E> {
        self.0.push_str(&value.to_string());
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<(), E> {
        self.0.push_str(&python_float(value));
        Ok(())
    }

    /// Objects do not occur in argument lists; written as compact JSON.
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        let value: Value =
            serde::Deserialize::deserialize(de::value::MapAccessDeserializer::new(map))?;
        self.0.push_str(&value.to_string());
        Ok(())
    }
}

/// Python's `repr` of a str: single quotes unless the text holds a single
/// quote and no double quote.
pub fn write_python_str(text: &str, out: &mut String) {
    let quote = if text.contains('\'') && !text.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out.push(quote);
}

/// Python's `repr` of a float (shortest round-trip, always with a point or exponent).
pub fn python_float(value: f64) -> String {
    if value.is_nan() {
        return "nan".to_string();
    }
    if value.is_infinite() {
        return if value > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    let abs = value.abs();
    if abs != 0.0 && !(1e-4..1e16).contains(&abs) {
        let formatted = format!("{value:e}");
        // Rust writes 1e-5 and 1.5e20; Python writes 1e-05 and 1.5e+20.
        let (mantissa, exponent) = formatted.split_once('e').expect("exponent form");
        let (sign, digits) = match exponent.strip_prefix('-') {
            Some(digits) => ('-', digits),
            None => ('+', exponent),
        };
        return format!("{mantissa}e{sign}{digits:0>2}");
    }
    let text = value.to_string();
    if text.contains('.') {
        text
    } else {
        format!("{text}.0")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_become_tuples() {
        assert_eq!(
            python_repr("[[512], [141, 512], [], []]"),
            "((512,), (141, 512), (), ())"
        );
        assert_eq!(
            python_repr(r#"["c10::BFloat16", "Scalar", ""]"#),
            "('c10::BFloat16', 'Scalar', '')"
        );
        assert_eq!(
            python_repr(r#"["", "[512]", "9.9999999999999998e-13"]"#),
            "('', '[512]', '9.9999999999999998e-13')"
        );
        assert_eq!(
            python_repr(r#"[[[1], [2, 3]], null, true, 1.5, -4, 1e300, 18446744073709551616]"#),
            "(((1,), (2, 3)), None, True, 1.5, -4, 1e+300, 1.8446744073709552e+19)"
        );
        let object = r#"{"b": 1, "a": [2]}"#;
        let value: Value = serde_json::from_str(object).expect("json");
        assert_eq!(python_repr(&format!("[{object}]")), format!("({value},)"));
        // Not JSON (or JSON with trailing text): returned as it is.
        assert_eq!(python_repr("[1, 2"), "[1, 2");
        assert_eq!(python_repr("[1] x"), "[1] x");
        assert_eq!(python_repr("(1,)"), "(1,)");
        assert_eq!(python_repr("[]"), "()");
        assert_eq!(python_repr(r#"["it's"]"#), r#"("it's",)"#);
    }

    #[test]
    fn floats_like_python() {
        assert_eq!(python_float(1.0), "1.0");
        assert_eq!(python_float(0.125), "0.125");
        assert_eq!(python_float(1e-5), "1e-05");
        assert_eq!(python_float(1.5e20), "1.5e+20");
    }
}
