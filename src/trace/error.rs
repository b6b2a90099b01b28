//! Errors that reach the user, each one line naming the file and where.
//!
//! Messages may quote bytes of the trace (a key, a value serde_json
//! rejected). Those bytes are untrusted: a newline followed by
//! `::error ...` would be read by GitHub Actions as a workflow command. So
//! every message is displayed through [`printable`], which escapes control
//! characters and bounds the length.

use std::io;

/// Why a trace could not be loaded. Every variant names the file and, where the
/// bytes were readable, the byte offset (in the uncompressed JSON) or the event
/// index, so the message alone says where to look.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be opened or read.
    #[error("{}: cannot read: {source}", printable(.path))]
    Io {
        /// The file.
        path: String,
        /// What the OS said.
        source: io::Error,
    },
    /// The gzip stream is truncated or corrupt.
    #[error(
        "{}: gzip stream broken after {offset} uncompressed bytes: {source} (truncated or corrupt .gz?)",
        printable(.path)
    )]
    Gzip {
        /// The file.
        path: String,
        /// Uncompressed bytes read before the failure.
        offset: u64,
        /// What the decoder said.
        source: io::Error,
    },
    /// The bytes are not the JSON we expected.
    #[error("{}: byte {offset}: {}", printable(.path), printable(.message))]
    Syntax {
        /// The file.
        path: String,
        /// Offset in the uncompressed JSON.
        offset: u64,
        /// What was expected.
        message: String,
    },
    /// One event could not be read.
    #[error("{}: event {index} (byte {offset}): {}", printable(.path), printable(.message))]
    Event {
        /// The file.
        path: String,
        /// Zero-based index in `traceEvents`.
        index: u64,
        /// Offset of the event's first byte in the uncompressed JSON.
        offset: u64,
        /// What was wrong.
        message: String,
    },
    /// Valid JSON, but not a profiler trace.
    #[error(
        "{}: no `traceEvents` array: not a PyTorch profiler (Kineto) trace",
        printable(.path)
    )]
    NoTraceEvents {
        /// The file.
        path: String,
    },
    /// One event, key or metadata value is larger than the limit.
    #[error(
        "{}: byte {offset}: {} is larger than {limit} bytes, the limit on one event or metadata value (--max-event-bytes)",
        printable(.path),
        printable(.what)
    )]
    TooLarge {
        /// The file.
        path: String,
        /// Offset of the value's first byte in the uncompressed JSON.
        offset: u64,
        /// What is too large: `event 12`, the value of a key.
        what: String,
        /// The limit, bytes.
        limit: u64,
    },
    /// The gzip data inflates absurdly: a decompression bomb, not a trace.
    #[error(
        "{}: gzip data inflates to over {offset} bytes from {compressed} compressed bytes (more than {ratio}:1): refusing a likely decompression bomb",
        printable(.path)
    )]
    Inflation {
        /// The file.
        path: String,
        /// Uncompressed bytes read so far.
        offset: u64,
        /// Compressed bytes read so far.
        compressed: u64,
        /// The refused ratio.
        ratio: u64,
    },
    /// A FIFO, device or socket: reading it may never end.
    #[error(
        "{}: is a {kind}, not a regular file (pass --allow-special-files to read it anyway)",
        printable(.path)
    )]
    NotRegularFile {
        /// The file.
        path: String,
        /// What it is instead.
        kind: &'static str,
    },
    /// A capture folder's `execution_details.json` is not the list vLLM's
    /// and TraceLens's tools write.
    #[error("{}: {}", printable(.path), printable(.message))]
    CaptureFolder {
        /// The file or folder.
        path: String,
        /// What was wrong, and where.
        message: String,
    },
}

/// The most characters of one quoted piece of a message.
const MAX_PRINTED_CHARS: usize = 300;

/// `text` made safe for one line of a terminal or a CI log: control
/// characters (newlines among them), line separators and bidi controls
/// escaped, at most [`MAX_PRINTED_CHARS`] characters, then `…`
/// ([`crate::echo::echo`]).
pub fn printable(text: &str) -> String {
    crate::echo::echo(text, MAX_PRINTED_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_escapes_control_characters_and_bounds_length() {
        assert_eq!(
            printable("a\n::error x\r\u{1b}[31m"),
            "a\\n::error x\\r\\u{1b}[31m"
        );
        assert_eq!(printable("µs ok"), "µs ok");
        assert_eq!(printable("a\u{2028}b"), "a\\u{2028}b");
        // A right-to-left override would reorder the rest of the line.
        assert_eq!(printable("a\u{202e}b"), "a\\u{202e}b");
        let long = printable(&"x".repeat(10_000));
        assert_eq!(long.chars().count(), MAX_PRINTED_CHARS + 1);
        assert!(long.ends_with('…'));
    }
}
