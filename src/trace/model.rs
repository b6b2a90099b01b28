//! The compact event model a trace is loaded into.
//!
//! A Kineto trace holds hundreds of thousands of events whose JSON is mostly
//! repetition (the same kernel names, the same shapes). We keep one fixed-size
//! [`Event`] per timed event, intern every string once in [`Strings`], and keep
//! only the arguments a later stage reads, in side tables indexed from the event.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// An interned string: an index into [`Strings`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sym(pub u32);

/// FxHash: the interner hashes every name of every event, and SipHash's
/// DoS resistance buys nothing for a local file.
#[derive(Default, Clone, Copy)]
pub struct FxHasher {
    hash: u64,
}

const FX_SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let word = u64::from_le_bytes(chunk.try_into().expect("8-byte chunk"));
            self.write_u64(word);
        }
        for &byte in chunks.remainder() {
            self.write_u64(u64::from(byte));
        }
    }

    fn write_u64(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(FX_SEED);
    }

    fn write_u32(&mut self, word: u32) {
        self.write_u64(u64::from(word));
    }

    fn write_usize(&mut self, word: usize) {
        self.write_u64(word as u64);
    }

    fn finish(&self) -> u64 {
        self.hash
    }
}

/// A `HashMap` with [`FxHasher`].
pub type FxHashMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// The string table: every distinct name, shape list and type list once.
#[derive(Debug, Default, Clone)]
pub struct Strings {
    index: FxHashMap<Box<str>, Sym>,
    values: Vec<Box<str>>,
}

impl Strings {
    /// Interns `text`, returning its symbol.
    pub fn intern(&mut self, text: &str) -> Sym {
        if let Some(&sym) = self.index.get(text) {
            return sym;
        }
        let sym = Sym(u32::try_from(self.values.len()).expect("fewer than 2^32 distinct strings"));
        self.values.push(text.into());
        self.index.insert(text.into(), sym);
        sym
    }

    /// The symbol of `text` if it was interned.
    pub fn lookup(&self, text: &str) -> Option<Sym> {
        self.index.get(text).copied()
    }

    /// The text of a symbol.
    pub fn get(&self, sym: Sym) -> &str {
        &self.values[sym.0 as usize]
    }

    /// How many distinct strings are held.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether no string is held.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

/// What an event is, from its category (current and 2021 Kineto names alike).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// `cpu_op` / `Operator`: an ATen or user-registered operator.
    CpuOp,
    /// `user_annotation`: `record_function` ranges, `ProfilerStep#N` among them.
    UserAnnotation,
    /// `python_function`: Python frames, `nn.Module: Name_N` scopes among them.
    PythonFunction,
    /// `cuda_runtime` / `Runtime`: CUDA or HIP runtime calls (launches among them).
    Runtime,
    /// `cuda_driver`: driver calls such as `cuLaunchKernel` (Triton).
    Driver,
    /// `kernel` / `Kernel`: a GPU kernel.
    Kernel,
    /// `gpu_memcpy` / `Memcpy`.
    Memcpy,
    /// `gpu_memset` / `Memset`.
    Memset,
    /// `gpu_user_annotation`: annotation ranges drawn on GPU streams.
    GpuUserAnnotation,
    /// `cuda_sync`: synchronisation spans recorded by newer Kineto.
    CudaSync,
    /// Anything else with a duration (`Trace`, `overhead`, unknown categories).
    Other,
}

impl Kind {
    /// Classifies a category string.
    pub fn from_category(category: &str) -> Kind {
        match category {
            "cpu_op" | "Operator" => Kind::CpuOp,
            "user_annotation" => Kind::UserAnnotation,
            "python_function" => Kind::PythonFunction,
            "cuda_runtime" | "Runtime" => Kind::Runtime,
            "cuda_driver" | "Driver" => Kind::Driver,
            "kernel" | "Kernel" => Kind::Kernel,
            "gpu_memcpy" | "Memcpy" => Kind::Memcpy,
            "gpu_memset" | "Memset" => Kind::Memset,
            "gpu_user_annotation" => Kind::GpuUserAnnotation,
            "cuda_sync" => Kind::CudaSync,
            _ => Kind::Other,
        }
    }

    /// Kernels, copies and sets: what occupies a GPU stream.
    pub fn is_gpu_work(self) -> bool {
        matches!(self, Kind::Kernel | Kind::Memcpy | Kind::Memset)
    }

    /// Events on host threads that form call stacks.
    pub fn is_host(self) -> bool {
        matches!(
            self,
            Kind::CpuOp
                | Kind::UserAnnotation
                | Kind::PythonFunction
                | Kind::Runtime
                | Kind::Driver
        )
    }

    /// The category name as current Kineto writes it.
    pub fn category(self) -> &'static str {
        match self {
            Kind::CpuOp => "cpu_op",
            Kind::UserAnnotation => "user_annotation",
            Kind::PythonFunction => "python_function",
            Kind::Runtime => "cuda_runtime",
            Kind::Driver => "cuda_driver",
            Kind::Kernel => "kernel",
            Kind::Memcpy => "gpu_memcpy",
            Kind::Memset => "gpu_memset",
            Kind::GpuUserAnnotation => "gpu_user_annotation",
            Kind::CudaSync => "cuda_sync",
            Kind::Other => "other",
        }
    }
}

/// A process or thread id as the trace wrote it: Kineto writes numbers, but
/// also strings (`"stream 7"`, `"Spans"`, and numbers as strings in 2021 traces).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TrackId {
    /// A numeric id (a numeric string is read as its number).
    Num(i64),
    /// A non-numeric label.
    Label(Sym),
}

/// One (pid, tid) pair: a host thread or a GPU stream lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Track {
    /// The `pid` field.
    pub pid: TrackId,
    /// The `tid` field.
    pub tid: TrackId,
}

/// No side-table entry.
pub const NO_DETAIL: u32 = u32::MAX;

/// One timed (`ph: "X"`) event: 48 bytes (the correlation id is kept as a
/// `u64` and a flag rather than an `Option<u64>`, which would take 16 bytes
/// and make it 56); most of a loaded trace's memory is these.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Event {
    /// Start, in microseconds as written (often with nanosecond decimals).
    pub ts: f64,
    /// Duration in microseconds. Finite, not negative and at most
    /// [`MAX_DURATION_US`]: the loader leaves other events out and counts them.
    pub dur: f64,
    /// `args.correlation` when `has_correlation`: read it with
    /// [`Event::correlation`].
    pub(crate) correlation: u64,
    /// The event's name.
    pub name: Sym,
    /// Index into [`Trace::tracks`].
    pub track: u32,
    /// Position in `traceEvents` (metadata and instant events counted), as
    /// TraceLens numbers events (its `UID`).
    pub index: u32,
    /// Index into the side table of this kind ([`Trace::op_args`] for CPU ops,
    /// [`Trace::gpu_args`] for GPU work, [`Trace::launch_args`] for runtime
    /// and driver calls), or [`NO_DETAIL`].
    pub detail: u32,
    /// The event's kind, from its category.
    pub kind: Kind,
    /// Whether the event has an `args.correlation`.
    pub(crate) has_correlation: bool,
}

impl Event {
    /// End time in microseconds (`ts + dur`, as TraceLens computes it).
    pub fn end(&self) -> f64 {
        self.ts + self.dur
    }

    /// `args.correlation`: links a runtime launch with its GPU work.
    pub fn correlation(&self) -> Option<u64> {
        self.has_correlation.then_some(self.correlation)
    }
}

/// The shape arguments of a CPU op, each kept as its raw JSON text (interned).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct OpArgs {
    /// `Input Dims`, e.g. `[[1, 512], []]`.
    pub input_dims: Option<Sym>,
    /// `Input type`, e.g. `["c10::BFloat16", "Scalar"]`.
    pub input_type: Option<Sym>,
    /// `Input Strides`.
    pub input_strides: Option<Sym>,
    /// `Concrete Inputs`: scalars as strings.
    pub concrete_inputs: Option<Sym>,
    /// `Sequence number`: pairs a forward op with its backward.
    pub sequence_number: Option<i64>,
    /// `Fwd thread id`: set on backward ops.
    pub fwd_thread_id: Option<i64>,
}

/// Where a piece of GPU work ran and what it moved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GpuArgs {
    /// `args.device`.
    pub device: Option<i64>,
    /// `args.stream`.
    pub stream: Option<i64>,
    /// `args.bytes` for copies and sets.
    pub bytes: Option<u64>,
    /// `args.grid`, when recorded.
    pub grid: Option<[u32; 3]>,
    /// `args.block`, when recorded.
    pub block: Option<[u32; 3]>,
    /// `args["graph id"]`: the CUDA graph a replayed piece of work belongs to.
    pub graph_id: Option<i64>,
    /// `args["graph node id"]`: its node in that graph.
    pub graph_node_id: Option<i64>,
    /// Index into [`Trace::comm_args`] when the work recorded a collective.
    pub comm: Option<u32>,
}

/// What a communication kernel's arguments say about its collective
/// (Kineto copies them from `record_param_comms`); kept only for kernels
/// that name a collective, for matching collectives across ranks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CommArgs {
    /// `Collective name`, as written (`allreduce`, `_allgather_base`).
    pub collective: Sym,
    /// `Process Group Name`.
    pub process_group: Option<Sym>,
    /// `dtype` of the message (`BFloat16`).
    pub dtype: Option<Sym>,
    /// `In msg nelems`.
    pub in_nelems: Option<i64>,
    /// `Out msg nelems`.
    pub out_nelems: Option<i64>,
    /// `Group size`.
    pub group_size: Option<i64>,
    /// `Seq`: the collective's number in its process group.
    pub seq: Option<i64>,
}

/// What a runtime or driver call says about the work it launches; kept only
/// for calls that name a kernel or a launch configuration (the graph-capture
/// merge reads them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LaunchArgs {
    /// `args.kernel`: the kernel launched.
    pub kernel: Option<Sym>,
    /// `args.grid`.
    pub grid: Option<[u32; 3]>,
    /// `args.block`.
    pub block: Option<[u32; 3]>,
}

/// One end of a flow arrow (`ph: "s"` or `"f"`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Flow {
    /// The flow's `id`, shared by its two ends.
    pub id: u64,
    /// Index into [`Trace::tracks`].
    pub track: u32,
    /// Timestamp of the end; it equals the start of the event it binds to.
    pub ts: f64,
    /// `s` (true) or `f` (false).
    pub is_start: bool,
    /// What the flow links.
    pub kind: FlowKind,
}

/// The flow categories we follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowKind {
    /// Launch → GPU (`ac2g`, `async_cpu_to_gpu`, 2021 `async`).
    LaunchToGpu,
    /// Forward op → backward op (`fwdbwd`).
    ForwardBackward,
}

/// A device as `deviceProperties` describes it.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct DeviceProperties {
    /// `id`.
    pub id: Option<i64>,
    /// `name`, possibly blank.
    pub name: String,
    /// `totalGlobalMem` in bytes.
    pub total_global_mem: Option<u64>,
    /// `numSms` (compute units on ROCm).
    pub num_sms: Option<u64>,
    /// `computeMajor`.
    pub compute_major: Option<i64>,
    /// `computeMinor`.
    pub compute_minor: Option<i64>,
}

/// The trace's top-level metadata: everything outside `traceEvents`.
#[derive(Clone, Debug, Default)]
pub struct Metadata {
    /// Each top-level key other than `traceEvents`, with its JSON value.
    pub fields: Vec<(String, serde_json::Value)>,
    /// `deviceProperties`, decoded.
    pub devices: Vec<DeviceProperties>,
}

impl Metadata {
    /// A top-level field by key.
    pub fn get(&self, key: &str) -> Option<&serde_json::Value> {
        self.fields.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

/// Names given to processes and threads by `ph: "M"` events.
#[derive(Clone, Debug, Default)]
pub struct TrackNames {
    /// `process_name` per pid.
    pub process: HashMap<TrackId, Sym>,
    /// `process_labels` per pid.
    pub process_label: HashMap<TrackId, Sym>,
    /// `thread_name` per (pid, tid).
    pub thread: HashMap<Track, Sym>,
}

/// What loading saw that a later stage should report.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct LoadCounts {
    /// All entries of `traceEvents`.
    pub events: u64,
    /// Timed (`X`) events kept.
    pub timed: u64,
    /// Flow ends kept.
    pub flows: u64,
    /// Metadata (`M`) events.
    pub metadata: u64,
    /// Instant and other events not kept.
    pub skipped: u64,
    /// Timed events with a negative duration (left out).
    pub negative_durations: u64,
    /// Timed events with no `ts` or no `dur` (left out).
    pub missing_times: u64,
    /// Timed events and flow ends whose `ts` or `dur` is NaN or infinite
    /// (`NaN`, `Infinity`, `"inf"`, `1e400`), left out so that no sum is
    /// poisoned. Serialised only when non-zero.
    #[serde(skip_serializing_if = "is_zero")]
    pub non_finite_times: u64,
    /// Timed events and flow ends with a `dur` over [`MAX_DURATION_US`] or a
    /// `ts` outside ±[`MAX_ABS_TS_US`]: absurd values, left out. Serialised
    /// only when non-zero.
    #[serde(skip_serializing_if = "is_zero")]
    pub out_of_range_times: u64,
    /// Shape arguments (`Input Dims`, `Input type`, `Input Strides`,
    /// `Concrete Inputs`) longer than the loader's limit, dropped from their
    /// op so that later stages stay cheap. Serialised only when non-zero.
    #[serde(skip_serializing_if = "is_zero")]
    pub oversized_args: u64,
}

/// The longest duration a timed event may have: 10^15 µs, about 32 years.
pub const MAX_DURATION_US: f64 = 1e15;

/// The largest `|ts|` a trace may use: 10^16 µs, about 317 years from the
/// Unix epoch (Kineto writes µs since the epoch, about 1.7e15 today).
pub const MAX_ABS_TS_US: f64 = 1e16;

/// serde's `skip_serializing_if` for counters that are new in the report:
/// absent when zero, so reports of sound traces are unchanged.
fn is_zero(count: &u64) -> bool {
    *count == 0
}

/// A loaded trace: compact events plus everything needed to link them.
#[derive(Clone, Debug, Default)]
pub struct Trace {
    /// The file it came from, for messages.
    pub source: String,
    /// Uncompressed size in bytes.
    pub json_bytes: u64,
    /// Timed events in file order.
    pub events: Vec<Event>,
    /// Flow ends in file order.
    pub flows: Vec<Flow>,
    /// The (pid, tid) pairs, indexed by [`Event::track`].
    pub tracks: Vec<Track>,
    /// CPU-op arguments; events with equal arguments may share a row.
    pub op_args: Vec<OpArgs>,
    /// GPU-work arguments; events with equal arguments may share a row.
    pub gpu_args: Vec<GpuArgs>,
    /// Launch-call arguments.
    pub launch_args: Vec<LaunchArgs>,
    /// Collective arguments of communication kernels.
    pub comm_args: Vec<CommArgs>,
    /// Interned strings.
    pub strings: Strings,
    /// Process and thread names.
    pub track_names: TrackNames,
    /// Top-level metadata.
    pub metadata: Metadata,
    /// Counters from loading.
    pub counts: LoadCounts,
}

impl Trace {
    /// The name of an event.
    pub fn name(&self, event: &Event) -> &str {
        self.strings.get(event.name)
    }

    /// The CPU-op arguments of an event, if it has any.
    pub fn op_args(&self, event: &Event) -> Option<&OpArgs> {
        (event.kind == Kind::CpuOp && event.detail != NO_DETAIL)
            .then(|| &self.op_args[event.detail as usize])
    }

    /// The GPU arguments of an event, if it is GPU work.
    pub fn gpu_args(&self, event: &Event) -> Option<&GpuArgs> {
        (event.kind.is_gpu_work() && event.detail != NO_DETAIL)
            .then(|| &self.gpu_args[event.detail as usize])
    }

    /// The collective arguments of a piece of GPU work, if it recorded any.
    pub fn comm_args(&self, event: &Event) -> Option<&CommArgs> {
        self.gpu_args(event)
            .and_then(|gpu| gpu.comm)
            .map(|index| &self.comm_args[index as usize])
    }

    /// The launch arguments of a runtime or driver call, if it recorded any.
    pub fn launch_args(&self, event: &Event) -> Option<&LaunchArgs> {
        (matches!(event.kind, Kind::Runtime | Kind::Driver) && event.detail != NO_DETAIL)
            .then(|| &self.launch_args[event.detail as usize])
    }

    /// A readable label for a track id.
    pub fn track_id_label(&self, id: TrackId) -> String {
        match id {
            TrackId::Num(n) => n.to_string(),
            TrackId::Label(sym) => self.strings.get(sym).to_string(),
        }
    }
}
