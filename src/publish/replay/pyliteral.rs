//! Reads back the Python tuple text that op rows carry (`((512,), (141,
//! 512))`, `('c10::BFloat16', 'Scalar')`, written by
//! [`crate::analysis::ops::args::python_repr`]) into the JSON value it was made from:
//! tuples and lists become arrays, quoted text strings, `None` null.

use serde_json::Value;

/// How deeply tuples and lists may nest. PyTorch records scalars and short
/// lists (`[1, 2]`, `[[0, 1], [1, 0]]`); a trace nesting thousands of levels
/// is hostile, and following it would overflow the stack.
pub const MAX_DEPTH: usize = 64;

/// Parses one Python literal (tuple, list, str, int, float, bool, None).
pub fn parse(text: &str) -> Result<Value, String> {
    let mut parser = Parser {
        bytes: text.as_bytes(),
        text,
        pos: 0,
        depth: 0,
    };
    let value = parser.value()?;
    parser.skip_space();
    if parser.pos != parser.bytes.len() {
        let rest: String = text[parser.pos..].chars().take(40).collect();
        return Err(format!(
            "unexpected `{}` at offset {}",
            rest.escape_debug(),
            parser.pos
        ));
    }
    Ok(value)
}

struct Parser<'a> {
    bytes: &'a [u8],
    text: &'a str,
    pos: usize,
    /// Tuples and lists open around the current position.
    depth: usize,
}

impl Parser<'_> {
    fn skip_space(&mut self) {
        while self
            .bytes
            .get(self.pos)
            .is_some_and(u8::is_ascii_whitespace)
        {
            self.pos += 1;
        }
    }

    fn value(&mut self) -> Result<Value, String> {
        self.skip_space();
        match self.bytes.get(self.pos) {
            Some(b'(') => self.sequence(b')'),
            Some(b'[') => self.sequence(b']'),
            Some(b'\'' | b'"') => self.string().map(Value::String),
            Some(_) => self.atom(),
            None => Err("unexpected end of text".to_string()),
        }
    }

    fn sequence(&mut self, close: u8) -> Result<Value, String> {
        if self.depth == MAX_DEPTH {
            return Err(format!(
                "nested more than {MAX_DEPTH} levels deep at offset {}",
                self.pos
            ));
        }
        self.depth += 1;
        let items = self.items(close);
        self.depth -= 1;
        items
    }

    fn items(&mut self, close: u8) -> Result<Value, String> {
        self.pos += 1;
        let mut items = Vec::new();
        loop {
            self.skip_space();
            if self.bytes.get(self.pos) == Some(&close) {
                self.pos += 1;
                return Ok(Value::Array(items));
            }
            items.push(self.value()?);
            self.skip_space();
            match self.bytes.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(&c) if c == close => {}
                _ => {
                    return Err(format!(
                        "expected `,` or `{}` at offset {}",
                        close as char, self.pos
                    ));
                }
            }
        }
    }

    fn string(&mut self) -> Result<String, String> {
        let quote = self.bytes[self.pos];
        self.pos += 1;
        let mut out = String::new();
        let mut chars = self.text[self.pos..].char_indices();
        while let Some((offset, c)) = chars.next() {
            match c {
                '\\' => {
                    let (_, escaped) = chars.next().ok_or("unterminated string")?;
                    out.push(match escaped {
                        'n' => '\n',
                        'r' => '\r',
                        't' => '\t',
                        other => other,
                    });
                }
                c if c as u32 == u32::from(quote) => {
                    self.pos += offset + 1;
                    return Ok(out);
                }
                c => out.push(c),
            }
        }
        Err("unterminated string".to_string())
    }

    fn atom(&mut self) -> Result<Value, String> {
        let start = self.pos;
        while self
            .bytes
            .get(self.pos)
            .is_some_and(|c| !matches!(c, b',' | b')' | b']') && !c.is_ascii_whitespace())
        {
            self.pos += 1;
        }
        let word = &self.text[start..self.pos];
        Ok(match word {
            "None" => Value::Null,
            "True" => Value::Bool(true),
            "False" => Value::Bool(false),
            _ => {
                if let Ok(int) = word.parse::<i64>() {
                    Value::from(int)
                } else if let Ok(int) = word.parse::<u64>() {
                    Value::from(int)
                } else {
                    let float: f64 = word
                        .parse()
                        .map_err(|_| format!("`{word}` is not a Python literal"))?;
                    serde_json::Number::from_f64(float)
                        .map(Value::Number)
                        .ok_or_else(|| format!("`{word}` has no JSON form"))?
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::ops::args::python_repr;

    #[test]
    fn reads_back_what_python_repr_writes() {
        for json in [
            "[[512], [141, 512], [], []]",
            r#"["c10::BFloat16", "Scalar", ""]"#,
            r#"["", "[512]", "9.9999999999999998e-13", "False"]"#,
            "[[[4, 1, 768], [4, 196, 768]], []]",
            r#"["it's", "say \"hi\"", "back\\slash"]"#,
            "[]",
            "[1.5, -2, null, true, false]",
        ] {
            let value: Value = serde_json::from_str(json).expect("json");
            assert_eq!(parse(&python_repr(json)), Ok(value), "{json}");
        }
    }

    #[test]
    fn rejects_what_is_not_a_literal() {
        assert!(parse("((1, 2)").is_err());
        assert!(parse("(1 2)").is_err());
        assert!(parse("('open").is_err());
        assert!(parse("(x,)").is_err());
        assert!(parse("() ()").is_err());
    }

    #[test]
    fn nesting_is_bounded_not_followed_to_a_stack_overflow() {
        let deep = format!("{}{}", "[".repeat(50_000), "]".repeat(50_000));
        let error = parse(&deep).expect_err("too deep");
        assert!(error.contains("nested more than 64 levels"), "{error}");
        let allowed = format!("{}{}", "(".repeat(MAX_DEPTH), ")".repeat(MAX_DEPTH));
        assert!(parse(&allowed).is_ok());
    }
}
