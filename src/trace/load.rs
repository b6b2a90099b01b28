//! Streaming loader: decompresses (when the bytes say gzip), walks the
//! top-level object, and parses each `traceEvents` entry as it streams past.
//!
//! The decompressed text is never held whole: a window of it
//! ([`super::window`]) sits in a buffer that is refilled as we go. Each event
//! is handed to serde_json straight from the window, borrowing names from the
//! buffer instead of allocating. This is several times faster than building
//! a `serde_json::Value` tree and uses memory proportional to the compact
//! model, not to the text.
//!
//! An event cut by the window's end makes serde_json fail (at the cut, as
//! "EOF" or, inside a number, "invalid number"); the loader then refills and
//! parses it again, so where the window ends never changes the result.
//! docs/RELIABILITY.md lists the limits and the kinds of bad input handled.

use std::fs::{self, File};
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::thread;

use flate2::bufread::MultiGzDecoder;

use super::build::Builder;
use super::fast;
use super::inflate::{self, ChunkReader};
use super::model::Trace;
use super::raw::RawEvent;
use super::window::{Input, quote_non_finite, value_extent};
use crate::trace::error::LoadError;

/// The window's usual size.
const WINDOW: usize = 1 << 20;
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Default of [`LoadLimits::max_event_bytes`]: 64 MiB.
pub const DEFAULT_MAX_EVENT_BYTES: u64 = 64 << 20;

/// What one trace may cost to load. Real traces are far inside every limit;
/// each one turns a hostile or broken file into a one-line error (or, for
/// shape arguments, a counted anomaly) instead of an exhausted machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadLimits {
    /// The largest event, top-level key or metadata value, in uncompressed
    /// bytes ([`DEFAULT_MAX_EVENT_BYTES`]); also bounds every string.
    pub max_event_bytes: u64,
    /// The longest shape argument (`Input Dims`, `Input type`, `Input
    /// Strides`, `Concrete Inputs`) kept, bytes (1 MiB); longer ones are
    /// dropped and counted in [`super::model::LoadCounts::oversized_args`].
    pub max_arg_bytes: u64,
    /// gzip data that inflates more than this many times its compressed
    /// size (500: deflate cannot exceed about 1032, real traces compress
    /// about 20 to 45 times, a synthetic trace of identical events 300)...
    pub max_inflation_ratio: u64,
    /// ...once past this many uncompressed bytes (1 GiB) is refused.
    pub inflation_floor_bytes: u64,
    /// Read FIFOs, devices and sockets too (refused by default: reading them
    /// may never end).
    pub allow_special_files: bool,
}

impl Default for LoadLimits {
    fn default() -> LoadLimits {
        LoadLimits {
            max_event_bytes: DEFAULT_MAX_EVENT_BYTES,
            max_arg_bytes: 1 << 20,
            max_inflation_ratio: 500,
            inflation_floor_bytes: 1 << 30,
            allow_special_files: false,
        }
    }
}

/// Loads a trace file, `.json` or gzip (detected by its magic bytes), under
/// the default [`LoadLimits`]. `progress` is called with the number of file
/// bytes read so far.
pub fn load_file(path: &Path, progress: &mut dyn FnMut(u64)) -> Result<Trace, LoadError> {
    load_file_with(path, &LoadLimits::default(), progress)
}

/// [`load_file`] under the given limits.
pub fn load_file_with(
    path: &Path,
    limits: &LoadLimits,
    progress: &mut dyn FnMut(u64),
) -> Result<Trace, LoadError> {
    check_file_type(path, limits)?;
    let label = path.display().to_string();
    let file = File::open(path).map_err(|source| LoadError::Io {
        path: label.clone(),
        source,
    })?;
    let threads = Threads { inflate: true };
    load_threaded(&label, file, limits, WINDOW, threads, progress)
}

/// Refuses a FIFO, device or socket unless `limits` allows them: opening a
/// FIFO blocks until a writer comes, and `/dev/zero` never ends. Regular
/// files and directories pass (reading a directory fails on its own, with
/// the OS's message). Call it before anything else reads the path.
pub fn check_file_type(path: &Path, limits: &LoadLimits) -> Result<(), LoadError> {
    if limits.allow_special_files {
        return Ok(());
    }
    let file_type = fs::metadata(path)
        .map_err(|source| LoadError::Io {
            path: path.display().to_string(),
            source,
        })?
        .file_type();
    if file_type.is_file() || file_type.is_dir() {
        return Ok(());
    }
    Err(LoadError::NotRegularFile {
        path: path.display().to_string(),
        kind: special_kind(&file_type),
    })
}

#[cfg(unix)]
fn special_kind(file_type: &fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if file_type.is_fifo() {
        "FIFO (named pipe)"
    } else if file_type.is_char_device() {
        "character device"
    } else if file_type.is_block_device() {
        "block device"
    } else if file_type.is_socket() {
        "socket"
    } else {
        "special file"
    }
}

#[cfg(not(unix))]
fn special_kind(_: &fs::FileType) -> &'static str {
    "special file"
}

/// Loads a trace from any reader (tests pass bytes) under the default
/// [`LoadLimits`]; `label` names it in errors.
pub fn load_reader<R: Read>(
    label: &str,
    reader: R,
    on_fill: &mut dyn FnMut(),
) -> Result<Trace, LoadError> {
    load_windowed(label, reader, &LoadLimits::default(), WINDOW, &mut |_| {
        on_fill()
    })
}

/// How the loader uses threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Threads {
    /// Inflate gzip on its own thread ([`super::inflate`]).
    pub inflate: bool,
}

/// The loader, with the window's starting size a parameter so that tests
/// can put its end anywhere. `progress` gets the reader's bytes read so far.
/// On one thread, so `reader` need not be `Send`.
fn load_windowed<R: Read>(
    label: &str,
    reader: R,
    limits: &LoadLimits,
    window: usize,
    progress: &mut dyn FnMut(u64),
) -> Result<Trace, LoadError> {
    let (buffered, is_gzip, read_so_far) = open(label, reader)?;
    let source: Box<dyn Read + '_> = if is_gzip {
        Box::new(MultiGzDecoder::new(buffered))
    } else {
        Box::new(buffered)
    };
    parse(
        label,
        source,
        is_gzip,
        read_so_far,
        limits,
        window,
        progress,
    )
}

/// [`load_windowed`] with the given [`Threads`].
pub(crate) fn load_threaded<R: Read + Send>(
    label: &str,
    reader: R,
    limits: &LoadLimits,
    window: usize,
    threads: Threads,
    progress: &mut dyn FnMut(u64),
) -> Result<Trace, LoadError> {
    if !threads.inflate {
        return load_windowed(label, reader, limits, window, progress);
    }
    let (buffered, is_gzip, read_so_far) = open(label, reader)?;
    if !is_gzip {
        return parse(
            label,
            Box::new(buffered),
            false,
            read_so_far,
            limits,
            window,
            progress,
        );
    }
    let handed_out = Arc::new(AtomicU64::new(0));
    thread::scope(|scope| {
        let (sender, receiver) = mpsc::sync_channel(inflate::DEPTH);
        let decoder = MultiGzDecoder::new(buffered);
        thread::Builder::new()
            .name("inflate".to_string())
            .spawn_scoped(scope, move || {
                inflate::inflate(decoder, &read_so_far, &sender)
            })
            .map_err(|source| LoadError::Io {
                path: label.to_string(),
                source,
            })?;
        let chunks = ChunkReader::new(receiver, Arc::clone(&handed_out));
        parse(
            label,
            Box::new(chunks),
            true,
            handed_out,
            limits,
            window,
            progress,
        )
    })
}

/// A reader, buffered and counted, and whether it holds gzip.
type Opened<R> = (BufReader<CountingReader<R>>, bool, Arc<AtomicU64>);

/// Buffers `reader`, counting the bytes read from it, and says whether it
/// holds gzip (by its magic bytes).
fn open<R: Read>(label: &str, reader: R) -> Result<Opened<R>, LoadError> {
    let read_so_far = Arc::new(AtomicU64::new(0));
    let counting = CountingReader {
        inner: reader,
        count: Arc::clone(&read_so_far),
    };
    let mut buffered = BufReader::with_capacity(WINDOW, counting);
    let head = buffered.fill_buf().map_err(|source| LoadError::Io {
        path: label.to_string(),
        source,
    })?;
    let is_gzip = head.starts_with(&GZIP_MAGIC);
    Ok((buffered, is_gzip, read_so_far))
}

/// Parses the text `source` gives; `read_so_far` counts the file bytes
/// behind the text read so far.
fn parse(
    label: &str,
    source: Box<dyn Read + '_>,
    is_gzip: bool,
    read_so_far: Arc<AtomicU64>,
    limits: &LoadLimits,
    window: usize,
    progress: &mut dyn FnMut(u64),
) -> Result<Trace, LoadError> {
    let max_window = usize::try_from(limits.max_event_bytes.max(1)).unwrap_or(usize::MAX);
    let max_arg_bytes = usize::try_from(limits.max_arg_bytes).unwrap_or(usize::MAX);
    let mut on_fill = || progress(read_so_far.load(Ordering::Relaxed));
    let mut loader = Loader {
        input: Input {
            reader: source,
            buf: vec![0; window.clamp(1, max_window)],
            pos: 0,
            len: 0,
            base: 0,
            eof: false,
            is_gzip,
            label,
            max_window,
            compressed: Arc::clone(&read_so_far),
            max_inflation_ratio: limits.max_inflation_ratio,
            inflation_floor: limits.inflation_floor_bytes,
        },
        builder: Builder::new(label, max_arg_bytes),
        on_fill: &mut on_fill,
    };
    loader.run()?;
    let json_bytes = loader.input.base + loader.input.len as u64;
    let mut trace = loader.builder.finish();
    trace.json_bytes = json_bytes;
    Ok(trace)
}

struct CountingReader<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

struct Loader<'a, 'p> {
    input: Input<'a>,
    builder: Builder,
    on_fill: &'p mut dyn FnMut(),
}

/// A byte as a message shows it: printable, or escaped.
fn shown(byte: u8) -> String {
    (byte as char).escape_debug().to_string()
}

impl Loader<'_, '_> {
    fn run(&mut self) -> Result<(), LoadError> {
        match self.input.peek()? {
            Some(b'{') => self.top_level_object(),
            Some(b'[') => {
                self.events_array()?;
                self.end_of_input("array")
            }
            Some(byte) => Err(self.input.syntax(format!(
                "expected a JSON object with `traceEvents`, found `{}`: not a JSON trace",
                shown(byte)
            ))),
            None => Err(self.input.syntax("empty file: expected a JSON trace")),
        }
    }

    fn top_level_object(&mut self) -> Result<(), LoadError> {
        self.input.expect(b'{', "`{`")?;
        let mut saw_events = false;
        if self.input.peek()? == Some(b'}') {
            self.input.pos += 1;
        } else {
            loop {
                if self.input.peek()? != Some(b'"') {
                    return Err(self
                        .input
                        .syntax("expected a string key in the top-level object"));
                }
                let key_len = self.input.value_len(&|| "a top-level key".to_string())?;
                let key_bytes = &self.input.buf[self.input.pos..self.input.pos + key_len];
                let key: String = serde_json::from_slice(key_bytes)
                    .map_err(|e| self.input.syntax(format!("bad key: {e}")))?;
                if key == "traceEvents" && saw_events {
                    return Err(self.input.syntax(
                        "a second `traceEvents` key: a trace has one event array (merged or corrupt file?)",
                    ));
                }
                self.input.pos += key_len;
                self.input.expect(b':', "`:` after a key")?;
                if key == "traceEvents" {
                    self.events_array()?;
                    saw_events = true;
                } else {
                    self.metadata_value(key)?;
                }
                match self.input.peek()? {
                    Some(b',') => self.input.pos += 1,
                    Some(b'}') => {
                        self.input.pos += 1;
                        break;
                    }
                    Some(byte) => {
                        return Err(self.input.syntax(format!(
                            "expected `,` or `}}` in the top-level object, found `{}`",
                            shown(byte)
                        )));
                    }
                    None => {
                        return Err(self.input.syntax(
                            "top-level object not closed: end of input (truncated file?)",
                        ));
                    }
                }
            }
        }
        self.end_of_input("object")?;
        if !saw_events {
            return Err(LoadError::NoTraceEvents {
                path: self.input.label.to_string(),
            });
        }
        Ok(())
    }

    /// Only white space may follow the top-level value.
    fn end_of_input(&mut self, what: &str) -> Result<(), LoadError> {
        match self.input.peek()? {
            Some(byte) => Err(self.input.syntax(format!(
                "unexpected `{}` after the top-level {what}",
                shown(byte)
            ))),
            None => Ok(()),
        }
    }

    fn metadata_value(&mut self, key: String) -> Result<(), LoadError> {
        if self.input.peek()?.is_none() {
            return Err(self
                .input
                .syntax(format!("missing value for `{key}` (truncated file?)")));
        }
        let len = self.input.value_len(&|| format!("the value of `{key}`"))?;
        let bytes = &self.input.buf[self.input.pos..self.input.pos + len];
        let value: serde_json::Value = serde_json::from_slice(bytes)
            .or_else(|error| {
                quote_non_finite(bytes)
                    .and_then(|fixed| serde_json::from_slice(&fixed).ok())
                    .ok_or(error)
            })
            .map_err(|e| self.input.syntax(format!("bad value for `{key}`: {e}")))?;
        self.input.pos += len;
        self.builder.metadata_field(key, value);
        Ok(())
    }

    fn events_array(&mut self) -> Result<(), LoadError> {
        self.input.expect(b'[', "`[` opening `traceEvents`")?;
        if self.input.peek()? == Some(b']') {
            self.input.pos += 1;
            return Ok(());
        }
        let mut filled_at = self.input.base;
        loop {
            match self.input.peek()? {
                Some(b'{') => {}
                Some(byte) => {
                    return Err(self.input.syntax(format!(
                        "event {}: expected an object, found `{}`",
                        self.builder.trace.counts.events,
                        shown(byte)
                    )));
                }
                None => {
                    return Err(self
                        .input
                        .syntax("`traceEvents` not closed (truncated file?)"));
                }
            }
            let index = self.builder.trace.counts.events;
            let len = self.parse_event(index)?;
            self.input.pos += len;
            if self.input.base != filled_at {
                filled_at = self.input.base;
                (self.on_fill)();
            }
            match self.input.peek()? {
                Some(b',') => self.input.pos += 1,
                Some(b']') => {
                    self.input.pos += 1;
                    return Ok(());
                }
                Some(byte) => {
                    return Err(self.input.syntax(format!(
                        "expected `,` or `]` after event {index}, found `{}`",
                        shown(byte)
                    )));
                }
                None => {
                    return Err(self
                        .input
                        .syntax("`traceEvents` not closed (truncated file?)"));
                }
            }
        }
    }
}

/// serde_json's message without its "at line L column C" suffix: that
/// position is relative to the event, and we report the absolute byte.
fn without_position(error: &serde_json::Error) -> String {
    let text = error.to_string();
    match text.rfind(" at line ") {
        Some(cut) => text[..cut].to_string(),
        None => text,
    }
}

/// How close to the window's end a serde_json error must be to be taken for
/// the cut: the error is reported at or just after the byte it stopped on.
const CUT_SLACK: usize = 16;

impl Loader<'_, '_> {
    /// Parses the event at the window's position straight from the buffer
    /// (no separate scan for its end) and hands it to the builder; returns
    /// its length. An event cut by the window's end is parsed again once
    /// more bytes are in: that happens once per refill, not per event.
    fn parse_event(&mut self, index: u64) -> Result<usize, LoadError> {
        loop {
            let slice = &self.input.buf[self.input.pos..self.input.len];
            if let Some((raw, len)) = fast::event(slice) {
                self.builder.event(raw);
                return Ok(len);
            }
            let mut stream = serde_json::Deserializer::from_slice(slice).into_iter::<RawEvent>();
            let error = match stream.next() {
                Some(Ok(raw)) => {
                    let len = stream.byte_offset();
                    self.builder.event(raw);
                    return Ok(len);
                }
                Some(Err(error)) => error,
                None => {
                    <serde_json::Error as serde::de::Error>::custom("EOF while parsing an event")
                }
            };
            // Only the slow path from here: the event failed to parse.
            let at = error_offset(slice, &error);
            let extent = value_extent(slice, self.input.eof);
            let cut = at + CUT_SLACK >= slice.len() || error.is_eof();
            // A `NaN` or `1e400` can only be read once the whole event is in.
            let needs_more =
                !self.input.eof && extent.is_none() && (cut || quote_non_finite(slice).is_some());
            if needs_more {
                if self.input.pending() >= self.input.max_window {
                    return Err(self.input.too_large(format!("event {index}")));
                }
                self.input.fill()?;
                continue;
            }
            if let Some(len) = extent {
                let fixed = quote_non_finite(&slice[..len]);
                if let Some(Ok(raw)) = fixed.as_deref().map(serde_json::from_slice::<RawEvent>) {
                    self.builder.event(raw);
                    return Ok(len);
                }
            }
            return Err(LoadError::Event {
                path: self.input.label.to_string(),
                index,
                offset: self.input.offset() + at as u64,
                message: if error.is_eof() {
                    "event cut off by the end of input (truncated file?)".to_string()
                } else {
                    without_position(&error)
                },
            });
        }
    }
}

/// Where in `bytes` serde_json stopped, from its line and column.
fn error_offset(bytes: &[u8], error: &serde_json::Error) -> usize {
    let mut line_start = 0;
    for _ in 1..error.line() {
        match bytes[line_start..].iter().position(|&b| b == b'\n') {
            Some(newline) => line_start += newline + 1,
            None => return bytes.len(),
        }
    }
    (line_start + error.column().saturating_sub(1)).min(bytes.len())
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod fuzz;
