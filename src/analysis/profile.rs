//! The [`Profile`]: what the analysis of one trace found — where GPU time
//! goes, per timeline bucket, per step, per op name, per category, per unique
//! argument set and per kernel, plus the anomalies seen on the way. The
//! computation lives beside it ([`crate::analysis::analyse`] and the modules
//! it calls); this file holds only the data.
//!
//! A `Profile` owns plain data (strings, numbers); it never points back into
//! the trace, so it can be rendered, saved and compared on its own.

use serde::{Deserialize, Serialize};

use crate::analysis::diagnose::Diagnosis;
use crate::analysis::hardware::ComputeSpec;
use crate::analysis::ops::category::Category;
use crate::analysis::ops::stats::Stats;
use crate::analysis::perf::PerfReport;
use crate::analysis::timeline::Breakdown;
use crate::trace::link::LinkAnomalies;
use crate::trace::{DeviceProperties, LoadCounts};

/// Version of the report JSON schema (docs/REPORT.md). Bumped on any
/// incompatible change; additions keep it.
pub const REPORT_SCHEMA_VERSION: u32 = 1;

/// Kernels shorter than this are "short" (launch overhead dominates), µs.
pub const SHORT_KERNEL_US: f64 = 10.0;

/// The analysis of one trace.
#[derive(Clone, Debug, Serialize)]
pub struct Profile {
    /// Report schema version ([`REPORT_SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// The tracegate version that made it.
    pub tracegate_version: String,
    /// The trace file.
    pub source: Source,
    /// Hardware and software the trace records.
    pub environment: Environment,
    /// Whether the trace has any GPU work at all.
    pub has_gpu_activity: bool,
    /// The GPU timeline over GPU work linked to a launch (TraceLens's default
    /// convention), µs.
    pub timeline: Breakdown,
    /// The GPU timeline over all GPU work, linked or not; present only when
    /// some GPU work is unlinked and so the two differ.
    pub timeline_all_gpu_work: Option<Breakdown>,
    /// One entry per `ProfilerStep#N`.
    pub steps: Vec<StepProfile>,
    /// Ops that launched GPU work, by name, most GPU time first.
    pub ops: Vec<OpSummary>,
    /// GPU time by op category, most first.
    pub categories: Vec<CategorySummary>,
    /// Ops by unique arguments, most GPU time first.
    pub unique_args: Vec<UniqueArgs>,
    /// Kernels grouped by parent op and stream, most time first.
    pub kernels: Vec<KernelSummary>,
    /// Kernels shorter than [`SHORT_KERNEL_US`], grouped by parent op, arguments and name.
    pub short_kernels: Vec<ShortKernelGroup>,
    /// Histogram of short-kernel durations (every short kernel, linked or not).
    pub short_kernel_histogram: Vec<HistogramBin>,
    /// Total duration of all short kernels, µs.
    pub short_kernel_time_us: f64,
    /// What did not add up.
    pub anomalies: Anomalies,
    /// Where the GPU waited: idle gaps split by whether the host had issued
    /// the next launch yet.
    pub idle: IdleSplit,
    /// Host time blocked in synchronisation.
    pub sync: SyncSummary,
    /// The hardware efficiency is judged against.
    pub hardware: HardwareUsed,
    /// Perf models per op and argument set (TraceLens's unified table and
    /// family sheets).
    pub perf: PerfReport,
    /// Bottleneck, prioritised ops and patterns (absent only while analysing).
    pub diagnosis: Option<Diagnosis>,
    /// Work replayed by CUDA/HIP graph launches: its rows are in `unique_args`;
    /// this holds the whole-graph rows and the capture merge. Written only
    /// when the trace has graph launches.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub graph_replay: Option<GraphReplay>,
    /// How much of the GPU's busy time the op rows hold. Written only when
    /// some GPU time is outside them or the trace is under-recorded.
    #[serde(skip_serializing_if = "Coverage::is_complete")]
    pub coverage: Coverage,
    /// Inference steps (one model forward each) tagged prefill, decode or
    /// mixed, with figures per phase. Written only when the trace has them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phases: Option<Phases>,
}

/// Where a row's GPU work came from when a CUDA or HIP graph replayed it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GraphPlace {
    /// The graph: `graph 7` (Kineto's `graph id`) or `launch #0` (its
    /// position among the graph launches of a profiler step).
    pub graph: String,
    /// What the row holds.
    pub role: GraphRole,
    /// The launch call: `hipGraphLaunch`, `cudaGraphLaunch`, ….
    pub launch: String,
    /// For a captured op: its calls' kernel sequence as a hash (an op that
    /// runs other kernels in some calls has a row per sequence).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
}

impl GraphPlace {
    /// The part of a row's comparison key that places it: graph, role and
    /// variant (the launch call's name is left out, so CUDA and ROCm rows
    /// match).
    pub fn key(&self) -> String {
        match &self.variant {
            Some(variant) => format!("{} {} {variant}", self.graph, self.role.as_str()),
            None => format!("{} {}", self.graph, self.role.as_str()),
        }
    }

    /// How messages name it, e.g. `in hipGraphLaunch launch #0`.
    pub fn describe(&self) -> String {
        format!("in {} {}", self.launch, self.graph)
    }
}

/// What a graph row holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GraphRole {
    /// One kernel (copy, set) of the graph by name and launch configuration,
    /// its op unknown: one call per execution.
    Kernel,
    /// An op of the capture trace with the kernels it captured: one call per
    /// execution of the op in a replay.
    CapturedOp,
    /// The whole graph: its kernel sequence (for kernel selection) and one
    /// call per replay. Its time is also in the graph's other rows.
    Graph,
}

impl GraphRole {
    /// Lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            GraphRole::Kernel => "kernel",
            GraphRole::CapturedOp => "captured_op",
            GraphRole::Graph => "graph",
        }
    }
}

/// The GPU work CUDA/HIP graph launches replayed.
#[derive(Clone, Debug, Serialize)]
pub struct GraphReplay {
    /// Graph launch calls.
    pub launches: u64,
    /// Graph launch calls whose replay recorded no GPU work.
    pub launches_without_work: u64,
    /// Kernels, copies and sets the replays put on the GPU.
    pub work_items: u64,
    /// Their busy time (union), µs.
    pub busy_us: f64,
    /// One row per graph ([`GraphRole::Graph`]), most time first; not in
    /// `unique_args`, whose graph rows hold the same time.
    pub graphs: Vec<UniqueArgs>,
    /// The capture merge, when a capture trace was given.
    pub capture: Option<CaptureMerge>,
}

/// How a capture trace's ops were attributed to the replayed work.
#[derive(Clone, Debug, Serialize)]
pub struct CaptureMerge {
    /// The capture traces, comma-separated.
    pub source: String,
    /// Graph captures found in them (`StreamBeginCapture` … `StreamEndCapture`).
    pub captures: u64,
    /// Which capture trace annotated execution steps were merged with (by
    /// batch size and mode), one line per capture trace used.
    pub chosen: Vec<String>,
    /// Replayed work items attributed to a captured launch.
    pub matched: u64,
    /// Replayed work items no captured launch matched (kept as kernel rows).
    pub unmatched: u64,
    /// Why work was left unmatched, one line per graph.
    pub notes: Vec<String>,
}

/// How much of the GPU's busy time is in op rows (what the gate judges),
/// and what the trace says it did not record. Like the timeline, it counts
/// linked work only: work whose launch is outside the trace (the profiling
/// window opened on it) is an anomaly of its own, not missing rows.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Coverage {
    /// Busy time of the linked GPU work (the timeline's busy time), µs.
    pub busy_us: f64,
    /// Busy time of the GPU work in op rows (op tables and graph rows), µs.
    pub in_rows_us: f64,
    /// Busy time of linked GPU work in no row (launched by a runtime call
    /// outside every op), µs.
    pub outside_rows_us: f64,
    /// Graph launches whose replay recorded no GPU work.
    pub graph_launches_without_work: u64,
    /// What the profiler says it dropped (its warnings, verbatim, at most five).
    pub dropped: Vec<String>,
}

impl Coverage {
    /// Every GPU work item is in a row and nothing is known to be missing.
    pub fn is_complete(&self) -> bool {
        self.outside_rows_us == 0.0
            && self.graph_launches_without_work == 0
            && self.dropped.is_empty()
    }

    /// The share of GPU busy time in rows, %; 100 when there is no GPU work.
    pub fn in_rows_percent(&self) -> f64 {
        if self.busy_us > 0.0 {
            (self.in_rows_us / self.busy_us * 100.0).min(100.0)
        } else {
            100.0
        }
    }
}

/// The GPU's idle time split by cause. A gap in GPU activity before a piece
/// of work whose launch call started after the gap began is *host-wait* (the
/// GPU was starved for launches: launch overhead or a slow host); otherwise it
/// is *kernel-wait* (the launch was queued, so the GPU waited on something
/// else: a dependency, an event, a copy). The two add up to the timeline's
/// idle time; per-stream figures count each stream's own gaps.
#[derive(Clone, Debug, Default, Serialize)]
pub struct IdleSplit {
    /// Host-wait idle time of the whole GPU timeline, µs.
    pub host_wait_us: f64,
    /// Kernel-wait idle time of the whole GPU timeline, µs.
    pub kernel_wait_us: f64,
    /// Per stream, busiest first.
    pub streams: Vec<StreamIdle>,
}

/// Idle gaps of one stream.
#[derive(Clone, Debug, Serialize)]
pub struct StreamIdle {
    /// Device, when recorded.
    pub device: Option<i64>,
    /// Stream, when recorded.
    pub stream: Option<i64>,
    /// GPU work items on the stream.
    pub work_items: u64,
    /// Busy time (union of its work), µs.
    pub busy_us: f64,
    /// Host-wait gaps, µs.
    pub host_wait_us: f64,
    /// Kernel-wait gaps, µs.
    pub kernel_wait_us: f64,
}

/// Host time spent blocked on the device.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SyncSummary {
    /// Synchronising runtime calls (device/stream/event synchronise, blocking
    /// copies) and `cuda_sync` spans.
    pub calls: u64,
    /// Their total host duration, µs.
    pub time_us: f64,
    /// Host span of the trace (first to last host event), µs.
    pub host_span_us: f64,
    /// The call names with their totals, largest first.
    pub by_name: Vec<(String, u64, f64)>,
}

/// The trace file.
#[derive(Clone, Debug, Serialize)]
pub struct Source {
    /// Path as given.
    pub path: String,
    /// Uncompressed JSON size, bytes.
    pub json_bytes: u64,
    /// Event counts from loading.
    pub counts: LoadCounts,
}

/// Hardware and software, from the trace's top-level metadata.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Environment {
    /// `deviceProperties`.
    pub devices: Vec<DeviceProperties>,
    /// Devices that ran GPU work in this trace (`args.device`).
    pub active_devices: Vec<i64>,
    /// `cuda_runtime_version`, when recorded.
    pub cuda_runtime_version: Option<String>,
    /// `cuda_driver_version`, when recorded.
    pub cuda_driver_version: Option<String>,
    /// `hip_runtime_version`, when recorded.
    pub hip_runtime_version: Option<String>,
    /// `hip_driver_version`, when recorded.
    pub hip_driver_version: Option<String>,
    /// `roctracer_version` / `cupti_version`.
    pub tracer_version: Option<String>,
    /// `distributedInfo.rank`.
    pub rank: Option<i64>,
    /// `distributedInfo.world_size`.
    pub world_size: Option<i64>,
    /// `distributedInfo.backend`.
    pub distributed_backend: Option<String>,
    /// `schemaVersion` of the trace.
    pub trace_schema_version: Option<String>,
    /// CUDA or ROCm, from the metadata and runtime call names.
    pub platform: Option<String>,
}

/// What an inference step computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Prompt tokens only (vLLM context requests, SGLang `EXTEND`/`PREFILL`).
    Prefill,
    /// One new token per request (vLLM generation requests, SGLang `DECODE`).
    Decode,
    /// Prefill and decode requests batched into one forward (chunked prefill).
    Mixed,
}

impl Phase {
    /// Every phase, in report order.
    pub const ALL: [Phase; 3] = [Phase::Prefill, Phase::Decode, Phase::Mixed];

    /// `prefill`, `decode` or `mixed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Prefill => "prefill",
            Phase::Decode => "decode",
            Phase::Mixed => "mixed",
        }
    }
}

/// One inference step: a model forward the engine annotated.
#[derive(Clone, Debug, Serialize)]
pub struct InferenceStep {
    /// Its phase.
    pub phase: Phase,
    /// The annotation it was recognised by, e.g.
    /// `execute_32_context_0(…)_generation_32(…)` or `step[DECODE bs=32]`.
    pub annotation: String,
    /// Host duration of the annotation, µs.
    pub host_duration_us: f64,
    /// GPU busy time of the work launched inside it (graph replays
    /// included), µs.
    pub gpu_time_us: f64,
    /// `(op name, summed GPU time of its work in the step, µs)`, named as
    /// the phase summaries name them, most first: the per-step samples of
    /// the snapshot's per-phase op rows. Not in the report (the phase
    /// summaries sum it).
    #[serde(skip)]
    pub ops: Vec<(String, f64)>,
}

/// One op's GPU time within a phase.
#[derive(Clone, Debug, Serialize)]
pub struct PhaseOp {
    /// The op row's name (a graph-replayed kernel's captured op when merged,
    /// else the kernel; work without an op: the kernel).
    pub name: String,
    /// GPU work items (kernels, copies, sets) it ran in the phase.
    pub work_items: u64,
    /// Their summed duration, µs.
    pub gpu_time_us: f64,
}

/// The figures of one phase.
#[derive(Clone, Debug, Serialize)]
pub struct PhaseSummary {
    /// The phase.
    pub phase: Phase,
    /// Its steps.
    pub steps: u64,
    /// Summed GPU busy time of its steps, µs.
    pub gpu_time_us: f64,
    /// Median GPU busy time per step, µs.
    pub gpu_time_per_step_us: f64,
    /// Ops by GPU time in the phase, most first.
    pub ops: Vec<PhaseOp>,
}

/// The prefill/decode split of an inference trace.
#[derive(Clone, Debug, Serialize)]
pub struct Phases {
    /// How the steps were recognised: `vllm annotation`, `sglang annotation`
    /// (or both, joined by `, `); without annotations, how the repeating
    /// structure gave them (`repeating structure: 12 graph replays`).
    pub recognised_by: String,
    /// The steps in host-time order.
    pub steps: Vec<InferenceStep>,
    /// One entry per phase present, in [`Phase::ALL`] order.
    pub summaries: Vec<PhaseSummary>,
}

/// One profiler step.
#[derive(Clone, Debug, Serialize)]
pub struct StepProfile {
    /// `N` of `ProfilerStep#N`.
    pub number: u64,
    /// Host duration of the step annotation, µs.
    pub host_duration_us: f64,
    /// GPU timeline of the work launched in this step, µs.
    pub timeline: Breakdown,
    /// Sum of the step's op invocations' direct kernel time, µs.
    pub kernel_time_us: f64,
}

/// All invocations of one op name that launched GPU work.
#[derive(Clone, Debug, Serialize)]
pub struct OpSummary {
    /// Op name.
    pub name: String,
    /// Sum over invocations of the union of the op's own kernels, µs.
    pub total_direct_kernel_time_us: f64,
    /// Sum over invocations of the union of all kernels at or below the op, µs.
    pub total_subtree_kernel_time_us: f64,
    /// Invocations with direct GPU work.
    pub count: u64,
    /// Categories of those invocations.
    pub categories: Vec<Category>,
}

/// GPU time of one category.
#[derive(Clone, Debug, Serialize)]
pub struct CategorySummary {
    /// The category.
    pub category: Category,
    /// Op invocations in it.
    pub count: u64,
    /// Direct kernel time, µs.
    pub total_direct_kernel_time_us: f64,
}

/// One op with one set of arguments (TraceLens's "unique args" row).
#[derive(Clone, Debug, Serialize)]
pub struct UniqueArgs {
    /// Op name.
    pub name: String,
    /// Its category.
    pub category: Category,
    /// `process_name` of the op's pid.
    pub process_name: String,
    /// `process_labels` of the op's pid.
    pub process_label: String,
    /// `thread_name` of the op's thread.
    pub thread_name: String,
    /// `Input Dims` as a Python tuple.
    pub input_dims: String,
    /// `Input type` as a Python tuple.
    pub input_type: String,
    /// `Input Strides` as a Python tuple.
    pub input_strides: String,
    /// `Concrete Inputs` as a Python tuple.
    pub concrete_inputs: String,
    /// Direct kernel time per invocation, µs.
    pub direct: Stats,
    /// Subtree kernel time per invocation, µs.
    pub subtree: Stats,
    /// Position in `traceEvents` of the earliest invocation (TraceLens's `ex_UID`).
    pub example_event: u32,
    /// `nn.Module` path of that invocation, when the trace records modules.
    pub module_path: Option<String>,
    /// The kernels of this row, in first-launch order.
    pub kernels: Vec<KernelDetail>,
    /// Kernel names launched by one invocation, in order.
    pub kernel_sequence: Vec<String>,
    /// Per-invocation direct kernel times, µs, in host-time order.
    #[serde(skip)]
    pub samples_us: Vec<f64>,
    /// Direct kernel time per `ProfilerStep#N` (step number, µs), for
    /// invocations inside a step.
    pub step_us: Vec<(u64, f64)>,
    /// FLOPs and bytes of one invocation, when a perf model covers the op.
    pub model: Option<OpModel>,
    /// For work a CUDA/HIP graph replayed: the graph and what the row holds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub graph: Option<GraphPlace>,
}

/// The perf model of one invocation of a unique-args row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpModel {
    /// Perf-model family (`GEMM`, `SDPA_fwd`, `Normalization`, …).
    pub family: String,
    /// FLOPs.
    pub flops: f64,
    /// Bytes moved.
    pub bytes: f64,
    /// The roofline peak it runs at (`None` for integer or boolean work).
    pub compute_spec: Option<ComputeSpec>,
}

/// One kernel name within a unique-args row.
#[derive(Clone, Debug, Serialize)]
pub struct KernelDetail {
    /// Kernel name.
    pub name: String,
    /// Stream.
    pub stream: Option<i64>,
    /// Duration statistics, µs.
    pub duration: Stats,
    /// Each launch's duration, µs, in the row's order of GPU work: the
    /// per-launch samples of a row whose calls launch different kernels
    /// (the snapshot's `kernel_samples_us`). Not in the report.
    #[serde(skip)]
    pub launches_us: Vec<f64>,
}

/// One (parent category, parent op, kernel, stream) group.
#[derive(Clone, Debug, Serialize)]
pub struct KernelSummary {
    /// Category of the parent op; `runtime` when a runtime call launched it
    /// outside any CPU op; by kernel name under a graph launch; `None` for
    /// kernels with no launch in the trace.
    pub parent_category: Option<Category>,
    /// The launching CPU op, or the runtime call when no op is above it
    /// (empty for unlinked kernels).
    pub parent_op: String,
    /// Kernel (or copy/set) name.
    pub name: String,
    /// Stream.
    pub stream: Option<i64>,
    /// Duration statistics, µs.
    pub duration: Stats,
    /// Share of all kernel time in this table, %.
    pub percent_of_kernel_time: f64,
    /// Share of the timeline's total time, %.
    pub percent_of_total_time: f64,
    /// Each launch's duration, µs, in the trace's order of GPU work: the
    /// per-launch samples of a GPU-only trace's kernel rows. Not in the
    /// report (the statistics above summarise it).
    #[serde(skip)]
    pub launches_us: Vec<f64>,
}

/// Short kernels of one (parent op, arguments, kernel name).
#[derive(Clone, Debug, Serialize)]
pub struct ShortKernelGroup {
    /// The launching op.
    pub parent_op: String,
    /// Its `Input Dims`, Python tuple.
    pub input_dims: String,
    /// Its `Input Strides`, Python tuple.
    pub input_strides: String,
    /// Its `Concrete Inputs`, Python tuple.
    pub concrete_inputs: String,
    /// Kernel name.
    pub name: String,
    /// Sum of durations, µs.
    pub total_us: f64,
    /// Number of kernels.
    pub count: u64,
    /// Share of the timeline's total time, %.
    pub percent_of_total_time: f64,
}

/// One histogram bin `[start, end)` (the last bin is closed).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct HistogramBin {
    /// Bin start, µs.
    pub start: f64,
    /// Bin end, µs.
    pub end: f64,
    /// Kernels in the bin.
    pub count: u64,
}

/// Everything that did not add up, counted.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Anomalies {
    /// Timed events with a negative duration.
    pub negative_durations: u64,
    /// Timed events without `ts` or `dur` (skipped).
    pub missing_times: u64,
    /// Linking problems.
    pub link: LinkAnomalies,
    /// GPU work starting before the previous work on the same stream ended.
    pub stream_overlaps: u64,
    /// The largest such overlap, µs.
    pub max_stream_overlap_us: f64,
    /// Up to five examples, "kernel A overlaps kernel B by X µs on stream S".
    pub examples: Vec<String>,
    /// Op invocations of the perf table left without a perf model because
    /// their recorded arguments are implausible (a negative size, a size
    /// above `i64::MAX`, FLOPs or bytes beyond 128 bits): a corrupt or
    /// fuzzed trace. Written only when non-zero.
    #[serde(skip_serializing_if = "is_zero")]
    pub implausible_op_args: u64,
    /// Up to five of their reasons, one per op name and argument set.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub implausible_op_args_examples: Vec<String>,
    /// Kernel rows (one kernel under one parent op on one stream) whose time
    /// is above 100% of the total time: their launches overlap one another,
    /// duplicated events or work overlapping on one stream. Written only
    /// when non-zero.
    #[serde(skip_serializing_if = "is_zero")]
    pub kernel_rows_over_total_time: u64,
    /// Up to five of them, with their share and launches.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub kernel_rows_over_total_time_examples: Vec<String>,
}

fn is_zero(count: &u64) -> bool {
    *count == 0
}

impl Anomalies {
    /// Whether anything was counted.
    pub fn any(&self) -> bool {
        self.negative_durations
            + self.missing_times
            + self.stream_overlaps
            + self.kernel_rows_over_total_time
            > 0
            || self.link != LinkAnomalies::default()
    }
}

/// The hardware efficiency figures are judged against, and how it was chosen.
#[derive(Clone, Debug, Serialize)]
pub struct HardwareUsed {
    /// Catalog name, or `None` when the GPU is unknown.
    pub name: Option<String>,
    /// `given` (--hardware), `detected` (deviceProperties) or `unknown`.
    pub how: String,
    /// What detection saw, e.g. `H100 SXM ("NVIDIA H100 80GB HBM3" ×1)`.
    pub detail: String,
    /// Peak HBM bandwidth, TB/s.
    pub hbm_tb_s: Option<f64>,
    /// Memory, GB.
    pub memory_gb: Option<f64>,
    /// The datasheet the figures come from.
    pub source: Option<String>,
}
