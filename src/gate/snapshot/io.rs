//! Writing and reading snapshot files: deterministic gzip JSON out; gzip or
//! plain JSON in, with the format and major version checked first, the
//! content held to the bounds of `bounds.rs`, and every error naming the
//! file and the field; and sniffing whether a file is a snapshot at all.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::Path;

use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;
use flate2::{Compression, GzBuilder};
use serde::Deserialize;

use super::bounds::MAX_JSON_BYTES;
use super::format::{SNAPSHOT_FORMAT, SNAPSHOT_VERSION, Snapshot, SnapshotVersion};
use crate::echo;

/// How many leading bytes (after decompression) [`is_snapshot`] reads.
pub const SNIFF_BYTES: usize = 1024;

/// Why a snapshot could not be read. Every message names the file and is
/// one line: the file name and text quoted from the file are escaped and
/// cut ([`echo`]).
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// The file could not be read.
    #[error("{}: cannot read: {source}", echo::label(path))]
    Io {
        /// The file.
        path: String,
        /// What the OS said.
        source: io::Error,
    },
    /// Valid JSON (or not JSON at all), but not a tracegate snapshot.
    #[error(
        "{}: not a tracegate snapshot: {}",
        echo::label(path),
        echo::message(reason)
    )]
    NotSnapshot {
        /// The file.
        path: String,
        /// What is missing.
        reason: String,
    },
    /// A snapshot of a major version this tracegate does not read.
    #[error(
        "{}: snapshot format version {found} cannot be read by tracegate {tracegate} \
         (it reads version {supported_major}.x); re-create the baseline with `tracegate snapshot`",
        echo::label(path)
    )]
    Incompatible {
        /// The file.
        path: String,
        /// The version in the file.
        found: SnapshotVersion,
        /// The major version this tracegate reads.
        supported_major: u32,
        /// This tracegate's version.
        tracegate: String,
    },
    /// A snapshot whose content is broken (bad gzip, bad JSON, a field of
    /// the wrong type) or beyond the bounds a snapshot keeps.
    #[error("{}: invalid snapshot: {}", echo::label(path), echo::message(message))]
    Invalid {
        /// The file.
        path: String,
        /// What the decoder said.
        message: String,
    },
}

impl Snapshot {
    /// The snapshot as gzip-compressed JSON, byte-for-byte deterministic
    /// (no file name, mtime 0, OS byte 255 "unknown" in the gzip header).
    pub fn to_gz_bytes(&self) -> Vec<u8> {
        let json = serde_json::to_vec(self).expect("a snapshot always serialises");
        let mut encoder: GzEncoder<Vec<u8>> = GzBuilder::new()
            .mtime(0)
            .operating_system(255)
            .write(Vec::with_capacity(json.len() / 8), Compression::best());
        encoder
            .write_all(&json)
            .expect("writing to memory cannot fail");
        encoder.finish().expect("writing to memory cannot fail")
    }

    /// Writes [`Snapshot::to_gz_bytes`] to `path`.
    pub fn write_path(&self, path: &Path) -> io::Result<()> {
        std::fs::write(path, self.to_gz_bytes())
    }

    /// Reads a snapshot file (gzip or plain JSON, told apart by the magic bytes).
    pub fn load_path(path: &Path) -> Result<Snapshot, SnapshotError> {
        let label = path.display().to_string();
        let file = std::fs::File::open(path).map_err(|source| SnapshotError::Io {
            path: label.clone(),
            source,
        })?;
        Snapshot::from_reader(&label, BufReader::new(file))
    }

    /// Reads a snapshot from `reader`; `label` names it in errors. Gzip is
    /// detected by its magic bytes `1f 8b`. At most [`MAX_JSON_BYTES`] of
    /// JSON are read: a file that decompresses to more is refused.
    pub fn from_reader(label: &str, reader: impl Read) -> Result<Snapshot, SnapshotError> {
        let mut reader = BufReader::new(reader);
        let gzip = peek_is_gzip(&mut reader).map_err(|source| SnapshotError::Io {
            path: label.to_string(),
            source,
        })?;
        let limit = MAX_JSON_BYTES as u64 + 1;
        let mut json = Vec::new();
        if gzip {
            MultiGzDecoder::new(reader)
                .take(limit)
                .read_to_end(&mut json)
                .map_err(|error| SnapshotError::Invalid {
                    path: label.to_string(),
                    message: format!(
                        "broken gzip stream after {} uncompressed bytes: {error}",
                        json.len()
                    ),
                })?;
        } else {
            reader
                .take(limit)
                .read_to_end(&mut json)
                .map_err(|source| SnapshotError::Io {
                    path: label.to_string(),
                    source,
                })?;
        }
        if json.len() > MAX_JSON_BYTES {
            return Err(SnapshotError::Invalid {
                path: label.to_string(),
                message: format!(
                    "more than {MAX_JSON_BYTES} bytes (256 MiB) of JSON, the limit for a snapshot"
                ),
            });
        }
        Snapshot::from_json_bytes(label, &json)
    }

    /// Parses snapshot JSON; `label` names it in errors. Checks `format`
    /// and the major version before reading the rest, names the field of a
    /// type error (`ops[3].samples_us[2]: invalid type: …`), and holds the
    /// content to the bounds a snapshot keeps ([`Snapshot::check_bounds`]).
    pub fn from_json_bytes(label: &str, json: &[u8]) -> Result<Snapshot, SnapshotError> {
        #[derive(Deserialize)]
        struct Header {
            format: Option<serde_json::Value>,
            version: Option<serde_json::Value>,
        }
        let invalid = |message: String| SnapshotError::Invalid {
            path: label.to_string(),
            message,
        };
        let not_snapshot = |reason: &str| SnapshotError::NotSnapshot {
            path: label.to_string(),
            reason: reason.to_string(),
        };
        let header: Header = serde_json::from_slice(json).map_err(|error| {
            if error.is_data() {
                not_snapshot("the JSON is not an object with a `format` key")
            } else {
                invalid(format!("bad JSON: {error}"))
            }
        })?;
        match header.format.as_ref().and_then(|f| f.as_str()) {
            Some(SNAPSHOT_FORMAT) => {}
            Some(other) => {
                return Err(not_snapshot(&format!(
                    "`format` is `{other}`, expected `{SNAPSHOT_FORMAT}`"
                )));
            }
            None => return Err(not_snapshot("no `format` key")),
        }
        let version: SnapshotVersion = header
            .version
            .ok_or_else(|| invalid("no `version` key".to_string()))
            .and_then(|v| {
                serde_json::from_value(v).map_err(|error| invalid(format!("`version`: {error}")))
            })?;
        if version.major != SNAPSHOT_VERSION.major {
            return Err(SnapshotError::Incompatible {
                path: label.to_string(),
                found: version,
                supported_major: SNAPSHOT_VERSION.major,
                tracegate: env!("CARGO_PKG_VERSION").to_string(),
            });
        }
        let mut deserializer = serde_json::Deserializer::from_slice(json);
        let snapshot: Snapshot = serde_path_to_error::deserialize(&mut deserializer)
            .map_err(|error| invalid(format!("{}: {}", error.path(), error.inner())))?;
        deserializer
            .end()
            .map_err(|error| invalid(format!("bad JSON: {error}")))?;
        snapshot.check_bounds().map_err(invalid)?;
        Ok(snapshot)
    }
}

/// Whether the file at `path` is a snapshot rather than a trace: its first
/// [`SNIFF_BYTES`] bytes (decompressed when the file starts with the gzip
/// magic) open a JSON object whose first key is `"format"` with the value
/// `"tracegate-snapshot"`. A gzip stream that breaks within those bytes
/// counts as not a snapshot (the trace loader reports the damage).
pub fn is_snapshot(path: &Path) -> io::Result<bool> {
    let mut reader = BufReader::new(std::fs::File::open(path)?);
    let head = if peek_is_gzip(&mut reader)? {
        read_head(MultiGzDecoder::new(reader), SNIFF_BYTES)
    } else {
        read_head(reader, SNIFF_BYTES)
    };
    Ok(looks_like_snapshot(&head))
}

/// Up to `limit` bytes from `reader`, stopping quietly at an error.
fn read_head(mut reader: impl Read, limit: usize) -> Vec<u8> {
    let mut head = vec![0; limit];
    let mut filled = 0;
    while filled < limit {
        match reader.read(&mut head[filled..]) {
            Ok(0) | Err(_) => break,
            Ok(n) => filled += n,
        }
    }
    head.truncate(filled);
    head
}

fn peek_is_gzip(reader: &mut impl BufRead) -> io::Result<bool> {
    let buffer = reader.fill_buf()?;
    Ok(buffer.len() >= 2 && buffer[0] == 0x1f && buffer[1] == 0x8b)
}

/// `{ "format" : "tracegate-snapshot"` at the start (whitespace and a UTF-8
/// byte-order mark allowed).
fn looks_like_snapshot(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let rest = text
        .trim_start()
        .strip_prefix('{')
        .map(str::trim_start)
        .and_then(|t| t.strip_prefix("\"format\""))
        .map(str::trim_start)
        .and_then(|t| t.strip_prefix(':'))
        .map(str::trim_start);
    rest.is_some_and(|t| t.starts_with(&format!("\"{SNAPSHOT_FORMAT}\"")))
}
