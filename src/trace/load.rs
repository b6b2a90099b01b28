//! Streaming loader: decompresses (when the bytes say gzip), walks the
//! top-level object, and parses each `traceEvents` entry as it streams past.
//!
//! The decompressed text is never held whole: a window of it sits in a buffer
//! that is refilled as we go. For each entry we find its extent with a small
//! scanner (strings, escapes, nesting), then hand exactly those bytes to
//! serde_json, which borrows names from the buffer instead of allocating.
//! This is several times faster than building a `serde_json::Value` tree and
//! uses memory proportional to the compact model, not to the text.

use std::cell::Cell;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;
use std::rc::Rc;

use flate2::bufread::MultiGzDecoder;

use super::model::{
    DeviceProperties, Event, Flow, FlowKind, GpuArgs, Kind, LaunchArgs, LoadCounts, Metadata,
    NO_DETAIL, OpArgs, Strings, Sym, Trace, TrackId, TrackNames,
};
use super::model::{FxHashMap, Track};
use super::raw::{LooseDims3, LooseI64, RawArgs, RawEvent, RawTrackId};
use crate::trace::error::LoadError;

const CHUNK: usize = 1 << 20;
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Loads a trace file, `.json` or gzip (detected by its magic bytes).
/// `progress` is called with the number of file bytes read so far.
pub fn load_file(path: &Path, progress: &mut dyn FnMut(u64)) -> Result<Trace, LoadError> {
    let label = path.display().to_string();
    let file = File::open(path).map_err(|source| LoadError::Io {
        path: label.clone(),
        source,
    })?;
    let read_so_far = Rc::new(Cell::new(0u64));
    let counting = CountingReader {
        inner: file,
        count: Rc::clone(&read_so_far),
    };
    let mut on_fill = || progress(read_so_far.get());
    load_reader(&label, counting, &mut on_fill)
}

/// Loads a trace from any reader (tests pass bytes); `label` names it in errors.
pub fn load_reader<R: Read>(
    label: &str,
    reader: R,
    on_fill: &mut dyn FnMut(),
) -> Result<Trace, LoadError> {
    let mut buffered = BufReader::with_capacity(CHUNK, reader);
    let head = buffered.fill_buf().map_err(|source| LoadError::Io {
        path: label.to_string(),
        source,
    })?;
    let is_gzip = head.starts_with(&GZIP_MAGIC);
    let source: Box<dyn Read + '_> = if is_gzip {
        Box::new(MultiGzDecoder::new(buffered))
    } else {
        Box::new(buffered)
    };
    let mut loader = Loader {
        input: Input {
            reader: source,
            buf: vec![0; CHUNK],
            pos: 0,
            len: 0,
            base: 0,
            eof: false,
            is_gzip,
            label,
        },
        builder: Builder::new(label),
        on_fill,
    };
    loader.run()?;
    let json_bytes = loader.input.base + loader.input.len as u64;
    let mut trace = loader.builder.finish();
    trace.json_bytes = json_bytes;
    Ok(trace)
}

struct CountingReader<R> {
    inner: R,
    count: Rc<Cell<u64>>,
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.set(self.count.get() + n as u64);
        Ok(n)
    }
}

/// A sliding window over the decompressed text.
struct Input<'a> {
    reader: Box<dyn Read + 'a>,
    buf: Vec<u8>,
    /// Next unread byte.
    pos: usize,
    /// End of valid bytes.
    len: usize,
    /// Absolute offset of `buf[0]`.
    base: u64,
    eof: bool,
    is_gzip: bool,
    label: &'a str,
}

impl Input<'_> {
    fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Reads more bytes, keeping `buf[pos..len]`. Returns false at end of input.
    fn fill(&mut self) -> Result<bool, LoadError> {
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
            let grown = self.buf.len() * 2;
            self.buf.resize(grown, 0);
        }
        loop {
            match self.reader.read(&mut self.buf[self.len..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(false);
                }
                Ok(n) => {
                    self.len += n;
                    return Ok(true);
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
    }

    /// Skips white space and returns the next byte without consuming it.
    fn peek(&mut self) -> Result<Option<u8>, LoadError> {
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

    fn syntax(&self, message: impl Into<String>) -> LoadError {
        LoadError::Syntax {
            path: self.label.to_string(),
            offset: self.offset(),
            message: message.into(),
        }
    }

    /// Consumes `expected` (after white space) or fails naming what was found.
    fn expect(&mut self, expected: u8, what: &str) -> Result<(), LoadError> {
        match self.peek()? {
            Some(byte) if byte == expected => {
                self.pos += 1;
                Ok(())
            }
            Some(byte) => Err(self.syntax(format!("expected {what}, found `{}`", byte as char))),
            None => Err(self.syntax(format!(
                "expected {what}, found end of input (truncated file?)"
            ))),
        }
    }

    /// The length of the JSON value starting at `pos`, refilling as needed.
    fn value_len(&mut self) -> Result<usize, LoadError> {
        loop {
            if let Some(n) = value_extent(&self.buf[self.pos..self.len], self.eof) {
                return Ok(n);
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
fn value_extent(bytes: &[u8], at_eof: bool) -> Option<usize> {
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

struct Loader<'a, 'p> {
    input: Input<'a>,
    builder: Builder,
    on_fill: &'p mut dyn FnMut(),
}

impl Loader<'_, '_> {
    fn run(&mut self) -> Result<(), LoadError> {
        match self.input.peek()? {
            Some(b'{') => self.top_level_object(),
            Some(b'[') => self.events_array(),
            Some(byte) => Err(self.input.syntax(format!(
                "expected a JSON object with `traceEvents`, found `{}`: not a JSON trace",
                byte as char
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
                let key_len = self.input.value_len()?;
                let key_bytes = &self.input.buf[self.input.pos..self.input.pos + key_len];
                let key: String = serde_json::from_slice(key_bytes)
                    .map_err(|e| self.input.syntax(format!("bad key: {e}")))?;
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
                            byte as char
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
        if let Some(byte) = self.input.peek()? {
            return Err(self.input.syntax(format!(
                "unexpected `{}` after the top-level object",
                byte as char
            )));
        }
        if !saw_events {
            return Err(LoadError::NoTraceEvents {
                path: self.input.label.to_string(),
            });
        }
        Ok(())
    }

    fn metadata_value(&mut self, key: String) -> Result<(), LoadError> {
        if self.input.peek()?.is_none() {
            return Err(self
                .input
                .syntax(format!("missing value for `{key}` (truncated file?)")));
        }
        let len = self.input.value_len()?;
        let bytes = &self.input.buf[self.input.pos..self.input.pos + len];
        let value: serde_json::Value = serde_json::from_slice(bytes)
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
                        self.builder.trace.counts.events, byte as char
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
                        byte as char
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

impl Loader<'_, '_> {
    /// Parses the event at the window's position straight from the buffer
    /// (no separate scan for its end) and hands it to the builder; returns
    /// its length. An event cut by the window's end is parsed again once
    /// more bytes are in: that happens once per refill, not per event.
    fn parse_event(&mut self, index: u64) -> Result<usize, LoadError> {
        loop {
            let start = self.input.pos;
            let slice = &self.input.buf[start..self.input.len];
            let mut stream = serde_json::Deserializer::from_slice(slice).into_iter::<RawEvent>();
            let parsed = stream.next().unwrap_or_else(|| {
                Err(<serde_json::Error as serde::de::Error>::custom(
                    "EOF while parsing an event",
                ))
            });
            match parsed {
                Ok(raw) => {
                    let len = stream.byte_offset();
                    self.builder.event(raw);
                    return Ok(len);
                }
                Err(e) if e.is_eof() && !self.input.eof => {
                    self.input.fill()?;
                }
                Err(e) => {
                    let offset = self.input.offset();
                    return Err(LoadError::Event {
                        path: self.input.label.to_string(),
                        index,
                        offset: offset + column_offset(&e),
                        message: if e.is_eof() {
                            "event cut off by the end of input (truncated file?)".to_string()
                        } else {
                            without_position(&e)
                        },
                    });
                }
            }
        }
    }
}

/// serde_json reports line and column within the event's bytes; an event is
/// usually one line, so the column is the offset within it.
fn column_offset(error: &serde_json::Error) -> u64 {
    if error.line() == 1 {
        error.column().saturating_sub(1) as u64
    } else {
        0
    }
}

/// Turns raw events into the compact model.
struct Builder {
    trace: Trace,
    track_index: FxHashMap<Track, u32>,
}

impl Builder {
    fn new(label: &str) -> Builder {
        Builder {
            trace: Trace {
                source: label.to_string(),
                metadata: Metadata::default(),
                track_names: TrackNames::default(),
                strings: Strings::default(),
                counts: LoadCounts::default(),
                ..Trace::default()
            },
            track_index: FxHashMap::default(),
        }
    }

    fn finish(self) -> Trace {
        self.trace
    }

    fn metadata_field(&mut self, key: String, value: serde_json::Value) {
        if key == "deviceProperties" {
            if let Some(devices) = value.as_array() {
                self.trace.metadata.devices = devices.iter().map(device_properties).collect();
            }
        }
        self.trace.metadata.fields.push((key, value));
    }

    fn track_id(&mut self, raw: Option<RawTrackId>) -> TrackId {
        match raw {
            None => TrackId::Num(0),
            Some(RawTrackId::Num(n)) => TrackId::Num(n),
            Some(RawTrackId::Text(text)) => match text.trim().parse::<i64>() {
                Ok(n) => TrackId::Num(n),
                Err(_) => TrackId::Label(self.trace.strings.intern(&text)),
            },
        }
    }

    fn track(&mut self, pid: TrackId, tid: TrackId) -> u32 {
        let track = Track { pid, tid };
        if let Some(&index) = self.track_index.get(&track) {
            return index;
        }
        let index = self.trace.tracks.len() as u32;
        self.trace.tracks.push(track);
        self.track_index.insert(track, index);
        index
    }

    fn intern_raw(&mut self, raw: Option<&serde_json::value::RawValue>) -> Option<Sym> {
        raw.map(|value| self.trace.strings.intern(value.get()))
    }

    fn event(&mut self, raw: RawEvent) {
        let index = u32::try_from(self.trace.counts.events).unwrap_or(u32::MAX);
        self.trace.counts.events += 1;
        let phase = raw.ph.as_deref().unwrap_or("");
        match phase {
            "X" => self.timed(raw, index),
            "s" | "f" | "t" => self.flow(raw),
            "M" => self.metadata_event(raw),
            _ => self.trace.counts.skipped += 1,
        }
    }

    fn timed(&mut self, raw: RawEvent, index: u32) {
        let (Some(ts), Some(dur)) = (raw.ts.as_ref().map(|t| t.0), raw.dur.as_ref().map(|d| d.0))
        else {
            self.trace.counts.missing_times += 1;
            return;
        };
        if dur < 0.0 {
            self.trace.counts.negative_durations += 1;
        }
        let kind = raw.cat.as_deref().map_or(Kind::Other, Kind::from_category);
        let pid = self.track_id(raw.pid);
        let tid = self.track_id(raw.tid);
        let track = self.track(pid, tid);
        let name = self.trace.strings.intern(raw.name.as_deref().unwrap_or(""));
        let args = raw.args.unwrap_or_default();
        let correlation = args.correlation.as_ref().and_then(|c| c.0);
        let detail = self.detail(kind, &args);
        self.trace.counts.timed += 1;
        self.trace.events.push(Event {
            ts,
            dur,
            name,
            track,
            kind,
            correlation,
            index,
            detail,
        });
    }

    fn detail(&mut self, kind: Kind, args: &RawArgs) -> u32 {
        match kind {
            Kind::CpuOp => {
                let op = OpArgs {
                    input_dims: self.intern_raw(args.input_dims),
                    input_type: self.intern_raw(args.input_type),
                    input_strides: self.intern_raw(args.input_strides),
                    concrete_inputs: self.intern_raw(args.concrete_inputs),
                    sequence_number: loose(&args.sequence_number),
                    fwd_thread_id: loose(&args.fwd_thread_id),
                };
                push_index(&mut self.trace.op_args, op)
            }
            kind if kind.is_gpu_work() => {
                let gpu = GpuArgs {
                    device: loose(&args.device),
                    stream: loose(&args.stream),
                    bytes: loose(&args.bytes).and_then(|b| u64::try_from(b).ok()),
                    grid: dims3(&args.grid),
                    block: dims3(&args.block),
                    graph_id: loose(&args.graph_id),
                    graph_node_id: loose(&args.graph_node_id),
                };
                push_index(&mut self.trace.gpu_args, gpu)
            }
            Kind::Runtime | Kind::Driver
                if args.kernel.is_some() || args.grid.is_some() || args.block.is_some() =>
            {
                let launch = LaunchArgs {
                    kernel: args.kernel.as_deref().map(|k| self.trace.strings.intern(k)),
                    grid: dims3(&args.grid),
                    block: dims3(&args.block),
                };
                push_index(&mut self.trace.launch_args, launch)
            }
            _ => NO_DETAIL,
        }
    }

    fn flow(&mut self, raw: RawEvent) {
        let kind = match raw.cat.as_deref() {
            Some("ac2g" | "async" | "async_cpu_to_gpu") => FlowKind::LaunchToGpu,
            Some("fwdbwd") => FlowKind::ForwardBackward,
            _ => {
                self.trace.counts.skipped += 1;
                return;
            }
        };
        let (Some(id), Some(ts)) = (raw.id.and_then(|i| i.0), raw.ts.map(|t| t.0)) else {
            self.trace.counts.skipped += 1;
            return;
        };
        let pid = self.track_id(raw.pid);
        let tid = self.track_id(raw.tid);
        let track = self.track(pid, tid);
        let is_start = raw.ph.as_deref() == Some("s");
        self.trace.counts.flows += 1;
        self.trace.flows.push(Flow {
            id,
            track,
            ts,
            is_start,
            kind,
        });
    }

    fn metadata_event(&mut self, raw: RawEvent) {
        self.trace.counts.metadata += 1;
        let pid = self.track_id(raw.pid);
        let Some(args) = raw.args else { return };
        match raw.name.as_deref() {
            Some("process_name") => {
                if let Some(name) = args.name {
                    let sym = self.trace.strings.intern(&name);
                    self.trace.track_names.process.insert(pid, sym);
                }
            }
            Some("process_labels") => {
                if let Some(labels) = args.labels {
                    let sym = self.trace.strings.intern(&labels);
                    self.trace.track_names.process_label.insert(pid, sym);
                }
            }
            Some("thread_name") => {
                if let Some(name) = args.name {
                    let tid = self.track_id(raw.tid);
                    let sym = self.trace.strings.intern(&name);
                    self.trace
                        .track_names
                        .thread
                        .insert(Track { pid, tid }, sym);
                }
            }
            _ => {}
        }
    }
}

fn loose(value: &Option<LooseI64>) -> Option<i64> {
    value.as_ref().and_then(|v| v.0)
}

fn dims3(value: &Option<LooseDims3>) -> Option<[u32; 3]> {
    value.as_ref().and_then(|dims| dims.0)
}

fn push_index<T>(table: &mut Vec<T>, item: T) -> u32 {
    table.push(item);
    u32::try_from(table.len() - 1).expect("fewer than 2^32 events")
}

fn device_properties(value: &serde_json::Value) -> DeviceProperties {
    let int = |key: &str| value.get(key).and_then(serde_json::Value::as_i64);
    let uint = |key: &str| value.get(key).and_then(serde_json::Value::as_u64);
    DeviceProperties {
        id: int("id"),
        name: value
            .get("name")
            .and_then(|n| n.as_str())
            .unwrap_or("")
            .trim()
            .to_string(),
        total_global_mem: uint("totalGlobalMem"),
        num_sms: uint("numSms"),
        compute_major: int("computeMajor"),
        compute_minor: int("computeMinor"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Result<Trace, LoadError> {
        load_reader("t.json", text.as_bytes(), &mut || {})
    }

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
    fn loads_events_metadata_and_names() {
        let trace = load(
            r#"{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85018279936, "numSms": 132}],
            "traceEvents": [
              {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": "1", "ts": 10.5, "dur": 5, "args": {"External id": 3, "Input Dims": [[2, 3], [3, 4]], "Input type": ["float", "float"]}},
              {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": "stream 7", "ts": 20, "dur": 2.25, "args": {"correlation": 9, "stream": 7, "device": 0, "grid": [1, 2, 3], "block": [128, 1, 1]}},
              {"ph": "s", "cat": "ac2g", "id": 9, "pid": 1, "tid": 1, "ts": 11},
              {"name": "thread_name", "ph": "M", "pid": 1, "tid": 1, "args": {"name": "main"}},
              {"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 12}
            ], "traceName": "x"}"#,
        )
        .expect("loads");
        assert_eq!(trace.events.len(), 2);
        assert_eq!(trace.counts.events, 5);
        assert_eq!(trace.counts.skipped, 1);
        assert_eq!(trace.flows.len(), 1);
        assert_eq!(trace.metadata.devices[0].name, "NVIDIA H100 80GB HBM3");
        assert_eq!(
            trace.metadata.get("traceName").and_then(|v| v.as_str()),
            Some("x")
        );
        let op = &trace.events[0];
        assert_eq!(trace.name(op), "aten::mm");
        let args = trace.op_args(op).expect("op args");
        assert_eq!(
            trace.strings.get(args.input_dims.expect("dims")),
            "[[2, 3], [3, 4]]"
        );
        // "1" and 1 are the same thread.
        assert_eq!(trace.tracks[op.track as usize].tid, TrackId::Num(1));
        assert_eq!(trace.flows[0].track, op.track);
        let kernel = &trace.events[1];
        assert_eq!(kernel.correlation, Some(9));
        let gpu = trace.gpu_args(kernel).expect("gpu args");
        assert_eq!((gpu.stream, gpu.grid), (Some(7), Some([1, 2, 3])));
        assert_eq!(kernel.end(), 22.25);
        assert_eq!(trace.track_names.thread.len(), 1);
    }

    #[test]
    fn bare_array_and_big_ids() {
        let trace = load(
            r#"[{"ph": "X", "cat": "cpu_op", "name": "c", "pid": 0, "tid": 1, "ts": 200, "dur": 100,
                 "args": {"Comms Id": 10159970886766084423, "correlation": 18446744073709551616}}]"#,
        )
        .expect("loads");
        assert_eq!(trace.events.len(), 1);
        assert!(trace.events[0].correlation.is_some());
    }

    #[test]
    fn errors_name_file_and_place() {
        let error = load(r#"{"traceEvents": [{"ph": "X", "ts": "nope"}]}"#)
            .unwrap_err()
            .to_string();
        assert!(error.starts_with("t.json: event 0 (byte "), "{error}");
        let error = load(r#"{"other": 1}"#).unwrap_err().to_string();
        assert!(error.contains("no `traceEvents`"), "{error}");
        let error = load(r#"{"traceEvents": [{"ph": "X"}, "#)
            .unwrap_err()
            .to_string();
        assert!(error.contains("truncated"), "{error}");
        let error = load("hello").unwrap_err().to_string();
        assert!(error.starts_with("t.json: byte 0: "), "{error}");
        let error = load("").unwrap_err().to_string();
        assert!(error.contains("empty file"), "{error}");
    }

    #[test]
    fn events_larger_than_a_chunk_load() {
        let long_name = "k".repeat(3 * CHUNK);
        let text = format!(
            r#"{{"traceEvents": [{{"ph": "X", "cat": "kernel", "name": "{long_name}", "pid": 0, "tid": 7, "ts": 1, "dur": 1}}]}}"#
        );
        let trace = load(&text).expect("loads");
        assert_eq!(trace.name(&trace.events[0]).len(), 3 * CHUNK);
    }
}
