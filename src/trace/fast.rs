//! The loader's fast path for the common event: an object whose top-level
//! values are plain strings (no escapes) and numbers, as the profiler
//! writes them. Its keys and those values are read here by hand; `args` and
//! any key no stage reads are handed to serde_json. Anything else (an
//! escape, a `null`, a key given twice, a value cut by the window's end, a
//! number written as a string) gives `None`, and the loader parses the event
//! with serde_json ([`super::raw`]) instead: the two read every event the
//! same way (tests compare them on every corpus event and on generated
//! ones), and errors are always serde_json's.
//!
//! Why: on traces recorded with `with_stack=True` (half their events Python
//! frames of ~250 bytes) serde's key matching and string checks were a
//! quarter of loading.

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::IgnoredAny;

use super::raw::{
    EventKey as Key, LooseF64, LooseId, RawArgs, RawEvent, RawTrackId, SeenKeys, reads_args,
};

/// The event at the start of `bytes` and its length, or `None` when it is
/// not one the fast path reads (serde_json then parses it).
pub(crate) fn event(bytes: &[u8]) -> Option<(RawEvent<'_>, usize)> {
    let mut cursor = Cursor { bytes, at: 0 };
    cursor.byte(b'{')?;
    cursor.white_space();
    let mut event = RawEvent::default();
    if cursor.byte(b'}').is_some() {
        return Some((event, cursor.at));
    }
    let mut seen = SeenKeys::default();
    loop {
        let key = cursor.key()?;
        cursor.white_space();
        cursor.byte(b':')?;
        cursor.white_space();
        if !seen.first(key) {
            return None;
        }
        match key {
            Key::Ph => event.ph = Some(Cow::Borrowed(cursor.string()?)),
            Key::Cat => event.cat = Some(Cow::Borrowed(cursor.string()?)),
            Key::Name => event.name = Some(Cow::Borrowed(cursor.string()?)),
            Key::Pid => event.pid = Some(cursor.track_id()?),
            Key::Tid => event.tid = Some(cursor.track_id()?),
            Key::Ts => event.ts = Some(LooseF64(cursor.float()?)),
            Key::Dur => event.dur = Some(LooseF64(cursor.float()?)),
            Key::Id => event.id = Some(LooseId(Some(cursor.id()?))),
            Key::Args if !reads_args(&event) => {
                cursor.serde::<IgnoredAny>()?;
            }
            Key::Args => event.args = cursor.serde::<Option<Box<RawArgs>>>()?,
            Key::Other => {
                cursor.serde::<IgnoredAny>()?;
            }
        }
        cursor.white_space();
        match cursor.next()? {
            b',' => cursor.white_space(),
            b'}' => return Some((event, cursor.at)),
            _ => return None,
        }
    }
}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    /// JSON's white space (not Rust's, which takes a form feed too).
    fn white_space(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    fn next(&mut self) -> Option<u8> {
        let byte = *self.bytes.get(self.at)?;
        self.at += 1;
        Some(byte)
    }

    fn byte(&mut self, expected: u8) -> Option<()> {
        (self.bytes.get(self.at) == Some(&expected)).then(|| self.at += 1)
    }

    /// A string without escapes or control characters, as its bytes.
    fn string_bytes(&mut self) -> Option<&'a [u8]> {
        self.byte(b'"')?;
        let start = self.at;
        let rest = &self.bytes[start..];
        let end = rest
            .iter()
            .position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
        if rest[end] != b'"' {
            return None;
        }
        self.at = start + end + 1;
        Some(&rest[..end])
    }

    fn string(&mut self) -> Option<&'a str> {
        std::str::from_utf8(self.string_bytes()?).ok()
    }

    fn key(&mut self) -> Option<Key> {
        let written = self.string_bytes()?;
        let key = Key::of(written);
        if key == Key::Other {
            // serde_json checks every key's UTF-8.
            std::str::from_utf8(written).ok()?;
        }
        Some(key)
    }

    /// A number in JSON's grammar, as its text.
    fn number(&mut self) -> Option<&'a str> {
        let start = self.at;
        self.byte(b'-');
        match self.next()? {
            b'0' => {}
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        if self.byte(b'.').is_some() {
            self.digit()?;
            self.digits();
        }
        if let Some(b'e' | b'E') = self.bytes.get(self.at) {
            self.at += 1;
            if let Some(b'+' | b'-') = self.bytes.get(self.at) {
                self.at += 1;
            }
            self.digit()?;
            self.digits();
        }
        // A number must end before the window does: more digits may follow.
        match self.bytes.get(self.at)? {
            b',' | b'}' | b' ' | b'\t' | b'\n' | b'\r' => {}
            _ => return None,
        }
        std::str::from_utf8(&self.bytes[start..self.at]).ok()
    }

    fn digit(&mut self) -> Option<()> {
        self.next().filter(u8::is_ascii_digit).map(|_| ())
    }

    fn digits(&mut self) {
        while self.bytes.get(self.at).is_some_and(u8::is_ascii_digit) {
            self.at += 1;
        }
    }

    /// A finite number (serde_json, with `float_roundtrip`, rounds as
    /// `str::parse` does; it refuses one beyond f64's range).
    fn float(&mut self) -> Option<f64> {
        self.number()?
            .parse::<f64>()
            .ok()
            .filter(|value| value.is_finite())
    }

    /// An integer or a string without escapes. A float, or an integer
    /// beyond `i64`, is serde_json's to read.
    fn track_id(&mut self) -> Option<RawTrackId<'a>> {
        if self.bytes.get(self.at) == Some(&b'"') {
            return Some(RawTrackId::Text(Cow::Borrowed(self.string()?)));
        }
        let text = self.number()?;
        let value = text.parse().ok()?;
        // serde_json reads `-0` as a float.
        (value != 0 || !text.starts_with('-')).then_some(RawTrackId::Num(value))
    }

    /// An integer id as [`LooseId`] keys it: as `u64`, a negative one by its
    /// bits.
    fn id(&mut self) -> Option<u64> {
        let text = self.number()?;
        match text.strip_prefix('-') {
            // serde_json reads `-0` as a float.
            Some(_) => text
                .parse::<i64>()
                .ok()
                .filter(|&v| v != 0)
                .map(|v| v as u64),
            None => text.parse::<u64>().ok(),
        }
    }

    /// The value here, as serde_json reads it into `T`.
    fn serde<T: Deserialize<'a>>(&mut self) -> Option<T> {
        let rest = &self.bytes[self.at..];
        let mut stream = serde_json::Deserializer::from_slice(rest).into_iter::<T>();
        let value = stream.next()?.ok()?;
        self.at += stream.byte_offset();
        Some(value)
    }
}

#[cfg(test)]
mod tests;
