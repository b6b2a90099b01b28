//! The builder: raw events, as serde reads them, into the compact model.
//!
//! It is also where the loader's judgement about values lives: a timed event
//! whose time is missing, negative, NaN, infinite or absurd is left out and
//! counted in [`LoadCounts`], so that no later sum sees it, and a shape
//! argument too long to be a real one is dropped and counted.

use std::borrow::Cow;

use serde_json::value::RawValue;

use super::model::{
    CommArgs, DeviceProperties, Event, Flow, FlowKind, FxHashMap, GpuArgs, Kind, LaunchArgs,
    LoadCounts, MAX_ABS_TS_US, MAX_DURATION_US, Metadata, NO_DETAIL, OpArgs, Strings, Sym, Trace,
    Track, TrackId, TrackNames,
};
use super::raw::{LooseDims3, LooseI64, RawArgs, RawEvent, RawTrackId};

/// Turns raw events into the compact model.
pub(crate) struct Builder {
    pub trace: Trace,
    track_index: FxHashMap<Track, u32>,
    /// Each distinct CPU-op and GPU-work argument row's index in its side
    /// table ([`shared_row`]).
    op_rows: FxHashMap<OpArgs, u32>,
    gpu_rows: FxHashMap<GpuArgs, u32>,
    /// Shape arguments longer than this are dropped.
    max_arg_bytes: usize,
}

/// How many distinct rows of a side table are remembered for sharing; past
/// it, new rows are appended, so the map costs at most a few MB whatever
/// the trace.
pub(super) const SHARED_ROWS: usize = 1 << 16;

/// Why a time is left out, if it is.
enum TimeCheck {
    Sound,
    NonFinite,
    OutOfRange,
}

fn check_ts(ts: f64) -> TimeCheck {
    if !ts.is_finite() {
        TimeCheck::NonFinite
    } else if ts.abs() > MAX_ABS_TS_US {
        TimeCheck::OutOfRange
    } else {
        TimeCheck::Sound
    }
}

impl Builder {
    pub fn new(label: &str, max_arg_bytes: usize) -> Builder {
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
            op_rows: FxHashMap::default(),
            gpu_rows: FxHashMap::default(),
            max_arg_bytes,
        }
    }

    pub fn finish(self) -> Trace {
        self.trace
    }

    /// Counts a left-out time under its reason; true when it is sound.
    fn keep(&mut self, check: TimeCheck) -> bool {
        match check {
            TimeCheck::Sound => return true,
            TimeCheck::NonFinite => self.trace.counts.non_finite_times += 1,
            TimeCheck::OutOfRange => self.trace.counts.out_of_range_times += 1,
        }
        false
    }

    pub fn metadata_field(&mut self, key: String, value: serde_json::Value) {
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

    /// The index of the event's (pid, tid) track, added on first sight.
    fn track(&mut self, pid: Option<RawTrackId>, tid: Option<RawTrackId>) -> u32 {
        let track = Track {
            pid: self.track_id(pid),
            tid: self.track_id(tid),
        };
        if let Some(&index) = self.track_index.get(&track) {
            return index;
        }
        let index = self.trace.tracks.len() as u32;
        self.trace.tracks.push(track);
        self.track_index.insert(track, index);
        index
    }

    fn intern_raw(&mut self, raw: Option<&RawValue>) -> Option<Sym> {
        let text = raw?.get();
        if text.len() > self.max_arg_bytes {
            self.trace.counts.oversized_args += 1;
            return None;
        }
        Some(self.trace.strings.intern(text))
    }

    pub fn event(&mut self, raw: RawEvent) {
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
        let check = match check_ts(ts) {
            TimeCheck::Sound if !dur.is_finite() => TimeCheck::NonFinite,
            TimeCheck::Sound if dur > MAX_DURATION_US => TimeCheck::OutOfRange,
            check => check,
        };
        if !self.keep(check) {
            return;
        }
        if dur < 0.0 {
            self.trace.counts.negative_durations += 1;
            return;
        }
        let kind = raw.cat.as_deref().map_or(Kind::Other, Kind::from_category);
        let track = self.track(raw.pid, raw.tid);
        let name = self.trace.strings.intern(raw.name.as_deref().unwrap_or(""));
        let no_args;
        let args = match raw.args.as_deref() {
            Some(args) => args,
            None => {
                no_args = RawArgs::default();
                &no_args
            }
        };
        let correlation = args.correlation.as_ref().and_then(|c| c.0);
        let detail = self.detail(kind, args);
        self.trace.counts.timed += 1;
        self.trace.events.push(Event {
            ts,
            dur,
            correlation: correlation.unwrap_or(0),
            name,
            track,
            index,
            detail,
            kind,
            has_correlation: correlation.is_some(),
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
                // Autograd numbers every op of a training step apart:
                // such rows are never shared.
                if op.sequence_number.is_some() {
                    push_index(&mut self.trace.op_args, op)
                } else {
                    shared_row(&mut self.op_rows, &mut self.trace.op_args, op)
                }
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
                    comm: self.comm(args),
                };
                // A collective's row points at its own arguments.
                if gpu.comm.is_some() {
                    push_index(&mut self.trace.gpu_args, gpu)
                } else {
                    shared_row(&mut self.gpu_rows, &mut self.trace.gpu_args, gpu)
                }
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

    /// The collective a kernel's arguments describe, pushed to the side
    /// table; `None` unless it names one.
    fn comm(&mut self, args: &RawArgs) -> Option<u32> {
        let collective = self.intern_text(args.collective_name)?;
        let comm = CommArgs {
            collective,
            process_group: self.intern_text(args.process_group_name),
            dtype: self.intern_text(args.dtype),
            in_nelems: loose(&args.in_msg_nelems),
            out_nelems: loose(&args.out_msg_nelems),
            group_size: loose(&args.group_size),
            seq: loose(&args.seq),
        };
        Some(push_index(&mut self.trace.comm_args, comm))
    }

    /// A raw JSON string value's text, interned; a number keeps its digits,
    /// anything else (a list, an object, a value longer than the shape
    /// arguments' limit) is `None`.
    fn intern_text(&mut self, raw: Option<&RawValue>) -> Option<Sym> {
        let raw = raw.filter(|raw| raw.get().len() <= self.max_arg_bytes)?;
        let text = match serde_json::from_str::<Cow<str>>(raw.get()) {
            Ok(text) => text,
            Err(_)
                if raw
                    .get()
                    .starts_with(|c: char| c == '-' || c.is_ascii_digit()) =>
            {
                Cow::Borrowed(raw.get())
            }
            Err(_) => return None,
        };
        Some(self.trace.strings.intern(&text))
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
        if !self.keep(check_ts(ts)) {
            return;
        }
        let track = self.track(raw.pid, raw.tid);
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

/// The index of a row equal to `item` in `table`, appended when there is
/// none. Events read their side table's row by index
/// ([`Trace::op_args`]), so equal rows can be one: a trace repeats the same
/// shapes and launch geometries every step, and on an event-dense trace of
/// 3M events the CPU-op and GPU-work rows were 72 MB of its 340 MB peak.
fn shared_row<T: Copy + Eq + std::hash::Hash>(
    rows: &mut FxHashMap<T, u32>,
    table: &mut Vec<T>,
    item: T,
) -> u32 {
    if let Some(&index) = rows.get(&item) {
        return index;
    }
    let index = push_index(table, item);
    if rows.len() < SHARED_ROWS {
        rows.insert(item, index);
    }
    index
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
