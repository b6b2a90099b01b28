//! SHA-256 (the `sha2` crate) of trace files and replay-package identities,
//! as lower-case hex: the form snapshots store in `trace_sha256`.

use std::io::{self, Read};
use std::path::Path;

use sha2::{Digest, Sha256};

/// A finished hash as lower-case hex.
fn hex(digest: &[u8]) -> String {
    use std::fmt::Write;
    digest
        .iter()
        .fold(String::with_capacity(64), |mut text, byte| {
            let _ = write!(text, "{byte:02x}");
            text
        })
}

/// SHA-256 of bytes, lower-case hex.
pub fn sha256_hex(data: &[u8]) -> String {
    hex(&Sha256::digest(data))
}

/// SHA-256 of a file's bytes as stored, lower-case hex, and its size in
/// bytes; read in 64 KiB chunks.
pub fn sha256_file(path: &Path) -> io::Result<(String, u64)> {
    let mut file = std::fs::File::open(path)?;
    let mut hash = Sha256::new();
    let mut buffer = vec![0u8; 64 * 1024];
    let mut size = 0u64;
    loop {
        let n = match file.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        hash.update(&buffer[..n]);
        size += n as u64;
    }
    Ok((hex(&hash.finalize()), size))
}
