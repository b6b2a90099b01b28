//! Errors that reach the user, each one line naming the file and where.

use std::io;

/// Why a trace could not be loaded. Every variant names the file and, where the
/// bytes were readable, the byte offset (in the uncompressed JSON) or the event
/// index, so the message alone says where to look.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be opened or read.
    #[error("{path}: cannot read: {source}")]
    Io {
        /// The file.
        path: String,
        /// What the OS said.
        source: io::Error,
    },
    /// The gzip stream is truncated or corrupt.
    #[error(
        "{path}: gzip stream broken after {offset} uncompressed bytes: {source} (truncated or corrupt .gz?)"
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
    #[error("{path}: byte {offset}: {message}")]
    Syntax {
        /// The file.
        path: String,
        /// Offset in the uncompressed JSON.
        offset: u64,
        /// What was expected.
        message: String,
    },
    /// One event could not be read.
    #[error("{path}: event {index} (byte {offset}): {message}")]
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
    #[error("{path}: no `traceEvents` array: not a PyTorch profiler (Kineto) trace")]
    NoTraceEvents {
        /// The file.
        path: String,
    },
}
