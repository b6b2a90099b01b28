//! gzip decompression on its own thread, so that inflating the next bytes
//! overlaps parsing the current ones: on two cores a `.json.gz` then costs
//! about the slower of the two, not their sum (docs/PERFORMANCE.md).
//!
//! The inflating thread sends chunks of decompressed text through a bounded
//! channel, so it runs at most [`DEPTH`] chunks ahead of the parser: a
//! decompression bomb is still stopped by the window's inflation check, and
//! memory stays a few megabytes. Each chunk carries the compressed bytes
//! read to produce it, which the parser's side publishes as it hands the
//! chunk out: the inflation check and the progress bar see the same counts
//! as on one thread. An inflate error arrives after the text before it, so
//! its offset is where the parser is, as on one thread.

use std::io::{self, Read};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender};

/// Decompressed bytes per chunk.
const CHUNK: usize = 256 << 10;
/// Chunks the inflating thread may run ahead of the parser.
pub(crate) const DEPTH: usize = 8;

/// One piece of decompressed text and the compressed bytes read so far.
pub(crate) struct Chunk {
    bytes: Vec<u8>,
    compressed: u64,
}

/// What the inflating thread sends: text, or the error that ended it.
pub(crate) type Message = io::Result<Chunk>;

/// The inflating thread's loop: reads `decoder` into chunks and sends them
/// until the end, an error (sent after the text before it) or the parser
/// hanging up. `read_so_far` counts the compressed bytes read.
pub(crate) fn inflate(mut decoder: impl Read, read_so_far: &AtomicU64, out: &SyncSender<Message>) {
    loop {
        let mut bytes = vec![0; CHUNK];
        let mut len = 0;
        let mut failure = None;
        while len < CHUNK {
            match decoder.read(&mut bytes[len..]) {
                Ok(0) => break,
                Ok(n) => len += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        let at_end = len < CHUNK;
        if len > 0 {
            bytes.truncate(len);
            let compressed = read_so_far.load(Ordering::Relaxed);
            if out.send(Ok(Chunk { bytes, compressed })).is_err() {
                return;
            }
        }
        if let Some(error) = failure {
            let _ = out.send(Err(error));
            return;
        }
        if at_end {
            return;
        }
    }
}

/// The parser's end: reads the chunks in order and publishes, in
/// `compressed`, what each cost as it starts handing it out. The thread
/// hanging up is the end of the text.
pub(crate) struct ChunkReader {
    chunks: Receiver<Message>,
    current: Vec<u8>,
    at: usize,
    compressed: Arc<AtomicU64>,
}

impl ChunkReader {
    pub fn new(chunks: Receiver<Message>, compressed: Arc<AtomicU64>) -> ChunkReader {
        ChunkReader {
            chunks,
            current: Vec::new(),
            at: 0,
            compressed,
        }
    }
}

impl Read for ChunkReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.at == self.current.len() {
            match self.chunks.recv() {
                Ok(Ok(chunk)) => {
                    self.compressed.store(chunk.compressed, Ordering::Relaxed);
                    self.current = chunk.bytes;
                    self.at = 0;
                }
                Ok(Err(error)) => return Err(error),
                Err(_) => return Ok(0),
            }
        }
        let n = buf.len().min(self.current.len() - self.at);
        buf[..n].copy_from_slice(&self.current[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}
