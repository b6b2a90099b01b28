//! The sliding window over the decompressed text, and the byte scanners
//! that work on it without parsing.
//!
//! The window is what keeps memory proportional to one event rather than to
//! the file, so it is also where the loader's resource limits live: it never
//! grows past the largest value allowed, and it refuses gzip data that
//! inflates like a decompression bomb.

use std::io::{self, Read};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::trace::error::LoadError;

/// A sliding window over the decompressed text.
pub(crate) struct Input<'a> {
    pub reader: Box<dyn Read + 'a>,
    pub buf: Vec<u8>,
    /// Next unread byte.
    pub pos: usize,
    /// End of valid bytes.
    pub len: usize,
    /// Absolute offset of `buf[0]`.
    pub base: u64,
    pub eof: bool,
    pub is_gzip: bool,
    pub label: &'a str,
    /// The window never grows past this: the largest value allowed.
    pub max_window: usize,
    /// File bytes read so far (behind the text read so far), for the
    /// inflation check.
    pub compressed: Arc<AtomicU64>,
    /// Refuse gzip data past `inflation_floor` bytes that is more than this
    /// many times its compressed size.
    pub max_inflation_ratio: u64,
    pub inflation_floor: u64,
}

impl Input<'_> {
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Bytes held from `pos` on: the part of a value read so far.
    pub fn pending(&self) -> usize {
        self.len - self.pos
    }

    /// Reads more bytes, keeping `buf[pos..len]`, until the window is full or
    /// the input ends (filling it whole keeps re-parses of a long value to a
    /// number logarithmic in its length). Returns false when nothing more
    /// could be read. The caller checks [`Input::pending`] against
    /// `max_window` first: the window doubles when full, up to that.
    pub fn fill(&mut self) -> Result<bool, LoadError> {
        if self.eof {
            return Ok(false);
        }
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.len, 0);
            self.base += self.pos as u64;
            self.len -= self.pos;
            self.pos = 0;
        }
        if self.len == self.buf.len() {
            let grown = (self.buf.len() * 2).min(self.max_window.max(self.buf.len() + 1));
            self.buf.resize(grown, 0);
        }
        let before = self.len;
        while self.len < self.buf.len() {
            match self.reader.read(&mut self.buf[self.len..]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => {
                    self.len += n;
                    self.check_inflation()?;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(source) => {
                    let path = self.label.to_string();
                    let offset = self.base + self.len as u64;
                    return Err(if self.is_gzip {
                        LoadError::Gzip {
                            path,
                            offset,
                            source,
                        }
                    } else {
                        LoadError::Io { path, source }
                    });
                }
            }
        }
        Ok(self.len > before)
    }

    fn check_inflation(&self) -> Result<(), LoadError> {
        let inflated = self.base + self.len as u64;
        let compressed = self.compressed.load(Ordering::Relaxed);
        if self.is_gzip
            && inflated > self.inflation_floor
            && inflated / compressed.max(1) > self.max_inflation_ratio
        {
            return Err(LoadError::Inflation {
                path: self.label.to_string(),
                offset: inflated,
                compressed,
                ratio: self.max_inflation_ratio,
            });
        }
        Ok(())
    }

    /// Skips white space and returns the next byte without consuming it.
    pub fn peek(&mut self) -> Result<Option<u8>, LoadError> {
        loop {
            while self.pos < self.len {
                let byte = self.buf[self.pos];
                if !byte.is_ascii_whitespace() {
                    return Ok(Some(byte));
                }
                self.pos += 1;
            }
            if !self.fill()? {
                return Ok(None);
            }
        }
    }

    pub fn syntax(&self, message: impl Into<String>) -> LoadError {
        LoadError::Syntax {
            path: self.label.to_string(),
            offset: self.offset(),
            message: message.into(),
        }
    }

    /// Consumes `expected` (after white space) or fails naming what was found.
    pub fn expect(&mut self, expected: u8, what: &str) -> Result<(), LoadError> {
        match self.peek()? {
            Some(byte) if byte == expected => {
                self.pos += 1;
                Ok(())
            }
            Some(byte) => Err(self.syntax(format!(
                "expected {what}, found `{}`",
                (byte as char).escape_debug()
            ))),
            None => Err(self.syntax(format!(
                "expected {what}, found end of input (truncated file?)"
            ))),
        }
    }

    /// The error for a value at `pos` that outgrew the window's limit.
    pub fn too_large(&self, what: String) -> LoadError {
        LoadError::TooLarge {
            path: self.label.to_string(),
            offset: self.offset(),
            what,
            limit: self.max_window as u64,
        }
    }

    /// The length of the JSON value starting at `pos`, refilling as needed;
    /// `what` names it if it is larger than the limit.
    pub fn value_len(&mut self, what: &dyn Fn() -> String) -> Result<usize, LoadError> {
        loop {
            if let Some(n) = value_extent(&self.buf[self.pos..self.len], self.eof) {
                return Ok(n);
            }
            if self.pending() >= self.max_window {
                return Err(self.too_large(what()));
            }
            if !self.fill()? {
                if let Some(n) = value_extent(&self.buf[self.pos..self.len], true) {
                    return Ok(n);
                }
                return Err(self.syntax("value runs past the end of input (truncated file?)"));
            }
        }
    }
}

/// Finds where the JSON value at the start of `bytes` ends. `None` when the
/// buffer ends first (and `at_eof` is false, or the value is unterminated).
/// Validation is serde_json's job; this only has to respect strings.
pub(crate) fn value_extent(bytes: &[u8], at_eof: bool) -> Option<usize> {
    let first = *bytes.first()?;
    match first {
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = 0;
            while i < bytes.len() {
                match bytes[i] {
                    b'"' => i = string_end(bytes, i + 1)?,
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            None
        }
        b'"' => string_end(bytes, 1).map(|end| end + 1),
        _ => {
            let end = bytes
                .iter()
                .position(|&b| matches!(b, b',' | b'}' | b']') || b.is_ascii_whitespace());
            match end {
                Some(n) => Some(n),
                None if at_eof => Some(bytes.len()),
                None => None,
            }
        }
    }
}

/// Index of the closing quote of a string whose body starts at `from`.
fn string_end(bytes: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => return Some(i),
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
    None
}

/// Python's `json.dump` writes `NaN`, `Infinity` and `-Infinity`, which
/// are not JSON, and a number beyond f64 (`1e400`) makes serde_json fail.
/// Returns a copy of `bytes` with each such token outside strings quoted
/// (`"NaN"`), so the loose number readers take them as the non-finite
/// values they are, or `None` when `bytes` has none.
pub(crate) fn quote_non_finite(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut out: Option<Vec<u8>> = None;
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        let byte = bytes[i];
        if byte == b'"' {
            i = string_end(bytes, i + 1).map_or(bytes.len(), |end| end + 1);
            continue;
        }
        if !is_token_byte(byte) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && is_token_byte(bytes[i]) {
            i += 1;
        }
        if is_non_finite(&bytes[start..i]) {
            let out = out.get_or_insert_with(|| Vec::with_capacity(bytes.len() + 16));
            out.extend_from_slice(&bytes[copied..start]);
            out.push(b'"');
            out.extend_from_slice(&bytes[start..i]);
            out.push(b'"');
            copied = i;
        }
    }
    let mut out = out?;
    out.extend_from_slice(&bytes[copied..]);
    Some(out)
}

/// A byte of a bare token: a number or a literal (`true`, `NaN`).
fn is_token_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'+' | b'.')
}

fn is_non_finite(token: &[u8]) -> bool {
    match token {
        b"NaN" | b"Infinity" | b"-Infinity" => true,
        [b'-' | b'0'..=b'9', ..] => std::str::from_utf8(token)
            .ok()
            .and_then(|text| text.parse::<f64>().ok())
            .is_some_and(f64::is_infinite),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_extent_respects_strings_and_nesting() {
        assert_eq!(
            value_extent(br#"{"a": "}\"{", "b": [1, {}]} tail"#, false),
            Some(27)
        );
        assert_eq!(value_extent(br#"{"a": 1"#, false), None);
        assert_eq!(value_extent(b"123,", false), Some(3));
        assert_eq!(value_extent(b"123", false), None);
        assert_eq!(value_extent(b"123", true), Some(3));
        assert_eq!(value_extent(br#""x\\" ,"#, false), Some(5));
    }

    #[test]
    fn quote_non_finite_quotes_only_python_specials_and_overflows() {
        let quoted = |text: &str| {
            quote_non_finite(text.as_bytes()).map(|b| String::from_utf8(b).expect("UTF-8"))
        };
        assert_eq!(
            quoted(r#"{"ts": NaN, "dur": -Infinity, "x": [Infinity,1e400]}"#).as_deref(),
            Some(r#"{"ts": "NaN", "dur": "-Infinity", "x": ["Infinity","1e400"]}"#)
        );
        assert_eq!(
            quoted(r#"{"name": "NaN Infinity 1e400", "v": 1e300}"#),
            None
        );
        assert_eq!(quoted(r#"{"a": true, "b": null, "c": -0.5e-3}"#), None);
        assert_eq!(
            quoted(r#"{"a": "\"NaN", "b": NaN"#).as_deref(),
            Some(r#"{"a": "\"NaN", "b": "NaN""#)
        );
    }
}
