//! Op arguments as TraceLens prints them: the JSON lists of `Input Dims`,
//! `Input type`, `Input Strides` and `Concrete Inputs` written as Python
//! tuples (`((512,), (141, 512))`, `('c10::BFloat16', 'Scalar')`), so unique-
//! argument keys and CSV cells match what scripts built on TraceLens expect.

use serde_json::Value;

/// Writes a JSON value the way Python's `repr` writes the tuple TraceLens
/// builds from it: lists become tuples, strings single-quoted.
pub fn python_repr(raw_json: &str) -> String {
    match serde_json::from_str::<Value>(raw_json) {
        Ok(value) => {
            let mut out = String::with_capacity(raw_json.len());
            write_value(&value, &mut out);
            out
        }
        Err(_) => raw_json.to_string(),
    }
}

fn write_value(value: &Value, out: &mut String) {
    match value {
        Value::Array(items) => {
            out.push('(');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(item, out);
            }
            if items.len() == 1 {
                out.push(',');
            }
            out.push(')');
        }
        Value::String(text) => write_python_str(text, out),
        Value::Null => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Number(number) => match number.as_f64() {
            Some(f) if number.is_f64() => out.push_str(&python_float(f)),
            _ => out.push_str(&number.to_string()),
        },
        Value::Object(_) => out.push_str(&value.to_string()),
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
