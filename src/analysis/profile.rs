//! Analyse: a linked trace into a [`Profile`] — where GPU time goes, per
//! timeline bucket, per step, per op name, per category, per unique argument
//! set and per kernel, plus the anomalies seen on the way.
//!
//! A `Profile` owns plain data (strings, numbers); it never points back into
//! the trace, so it can be rendered, saved and compared on its own.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::analysis::diagnose::{self, Diagnosis, ModelledOp, Peaks, patterns};
use crate::analysis::hardware::{self, Catalog, ComputeSpec, Hardware};
use crate::analysis::ops::args::python_repr;
use crate::analysis::ops::category::{self, Category};
use crate::analysis::ops::stats::{Stats, percent};
use crate::analysis::perf::{self, PerfReport};
use crate::analysis::perf_model::{self, OpShape};
use crate::analysis::timeline::{Breakdown, Bucket, Interval, IntervalSet, bucket_of};
use crate::trace::link::{self, LinkAnomalies, NONE, Tree};
use crate::trace::{DeviceProperties, Event, FxHashMap, Kind, LoadCounts, Trace, TrackId};

/// Version of the report JSON schema (docs/REPORT.md). Bumped on any
/// incompatible change; additions keep it.
pub const REPORT_SCHEMA_VERSION: u32 = 1;

/// Kernels shorter than this are "short" (launch overhead dominates), µs.
pub const SHORT_KERNEL_US: f64 = 10.0;

/// Bins of the short-kernel histogram.
const HISTOGRAM_BINS: usize = 100;

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

/// Whether a runtime call blocks the host until the device catches up.
pub fn is_sync_call(name: &str) -> bool {
    const SYNC: &[&str] = &[
        "cudaDeviceSynchronize",
        "cudaStreamSynchronize",
        "cudaEventSynchronize",
        "cudaStreamWaitEvent",
        "cudaMemcpy",
        "cudaMemcpy2D",
        "hipDeviceSynchronize",
        "hipStreamSynchronize",
        "hipEventSynchronize",
        "hipStreamWaitEvent",
        "hipMemcpy",
        "hipMemcpyWithStream",
        "hipMemcpy2D",
        "cuCtxSynchronize",
        "cuStreamSynchronize",
    ];
    SYNC.contains(&name)
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
}

impl Anomalies {
    /// Whether anything was counted.
    pub fn any(&self) -> bool {
        self.negative_durations + self.missing_times + self.stream_overlaps > 0
            || self.link != LinkAnomalies::default()
    }
}

/// Analyses a linked trace.
pub fn analyse(trace: &Trace, tree: &Tree) -> Profile {
    analyse_with(trace, tree, &AnalysisOptions::default())
}

/// What the analysis judges efficiency against.
#[derive(Clone, Debug)]
pub struct AnalysisOptions {
    /// The catalog detection looks GPUs up in.
    pub catalog: Catalog,
    /// Hardware given by the user, overriding detection.
    pub hardware: Option<Hardware>,
}

impl Default for AnalysisOptions {
    fn default() -> AnalysisOptions {
        AnalysisOptions {
            catalog: hardware::builtin_catalog(),
            hardware: None,
        }
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

fn choose_hardware(trace: &Trace, options: &AnalysisOptions) -> (HardwareUsed, Option<Hardware>) {
    let (how, detail, hardware) = match &options.hardware {
        Some(given) => (
            "given",
            format!("given on the command line: {}", given.name),
            Some(given.clone()),
        ),
        None => {
            let detection = options.catalog.detect(&trace.metadata.devices);
            let found = detection.hardware().cloned();
            (
                if found.is_some() {
                    "detected"
                } else {
                    "unknown"
                },
                detection.to_string(),
                found,
            )
        }
    };
    let used = HardwareUsed {
        name: hardware.as_ref().map(|h| h.name.clone()),
        how: how.to_string(),
        detail,
        hbm_tb_s: hardware.as_ref().map(|h| h.hbm_tb_s),
        memory_gb: hardware.as_ref().map(|h| h.memory_gb),
        source: hardware.as_ref().map(|h| h.source.clone()),
    };
    (used, hardware)
}

/// The modelled rows of the perf table, as the diagnosis reads them.
fn modelled_ops(perf: &PerfReport) -> Vec<ModelledOp> {
    perf.rows
        .iter()
        .filter(|row| row.has_perf_model)
        .filter_map(|row| {
            Some(ModelledOp {
                name: row.name.clone(),
                input_dims: row.input_dims.clone().unwrap_or_default(),
                input_type: row.input_type.clone().unwrap_or_default(),
                family: row.family?.sheet().to_string(),
                count: row.count,
                kernel_time_us: row.kernel_time_us.sum,
                flops: row.gflops? * 1e9,
                bytes: row.data_moved_mb? * 1024.0 * 1024.0,
                compute_spec: row.compute_spec,
            })
        })
        .collect()
}

fn peaks_of(hardware: &Hardware) -> Peaks {
    Peaks {
        gpu: hardware.name.clone(),
        hbm_tb_s: hardware.hbm_tb_s,
        tflops: ComputeSpec::ALL
            .iter()
            .filter_map(|&spec| hardware.peak_tflops(spec).map(|peak| (spec, peak)))
            .collect(),
    }
}

/// Analyses a linked trace, judging efficiency against the chosen hardware.
pub fn analyse_with(trace: &Trace, tree: &Tree, options: &AnalysisOptions) -> Profile {
    let gpu = GpuWork::collect(trace, tree);
    let timeline = Breakdown::compute(gpu.linked().map(|w| (w.bucket, w.interval)));
    let timeline_all_gpu_work = (gpu.items.iter().any(|w| !w.linked))
        .then(|| Breakdown::compute(gpu.items.iter().map(|w| (w.bucket, w.interval))));
    let invocations = Invocations::collect(trace, tree, &gpu);
    let unique_args = unique_args(trace, tree, &gpu, &invocations);
    let kernels = kernel_summary(trace, tree, &gpu, &timeline);
    let (short_kernels, short_kernel_histogram, short_kernel_time_us) =
        short_kernels(trace, tree, &gpu, &timeline);
    let (hardware_used, hardware) = choose_hardware(trace, options);
    let perf = perf::perf_report(trace, tree);
    let mut profile = Profile {
        schema_version: REPORT_SCHEMA_VERSION,
        tracegate_version: env!("CARGO_PKG_VERSION").to_string(),
        source: Source {
            path: trace.source.clone(),
            json_bytes: trace.json_bytes,
            counts: trace.counts.clone(),
        },
        environment: environment(trace, &gpu),
        has_gpu_activity: !gpu.items.is_empty(),
        steps: steps(tree, &gpu, &invocations),
        ops: ops_by_name(trace, &gpu, &invocations),
        categories: categories(trace, &gpu, &invocations),
        unique_args,
        kernels,
        short_kernels,
        short_kernel_time_us,
        short_kernel_histogram,
        anomalies: anomalies(trace, tree, &gpu),
        idle: idle_split(trace, &gpu),
        sync: sync_summary(trace),
        timeline,
        timeline_all_gpu_work,
        hardware: hardware_used,
        perf,
        diagnosis: None,
    };
    let patterns = patterns::detect(trace, tree, &profile);
    let modelled = modelled_ops(&profile.perf);
    profile.diagnosis = Some(diagnose::diagnose(
        &profile,
        &modelled,
        hardware.as_ref().map(peaks_of),
        patterns,
    ));
    profile
}

/// One piece of GPU work with what the analysis needs of it.
struct Work {
    event: u32,
    interval: Interval,
    bucket: Bucket,
    linked: bool,
    /// The owning CPU op, or NONE.
    op: u32,
    /// The runtime call that launched it, or NONE.
    launch: u32,
    stream: Option<i64>,
    device: Option<i64>,
}

struct GpuWork {
    items: Vec<Work>,
}

impl GpuWork {
    fn collect(trace: &Trace, tree: &Tree) -> GpuWork {
        let items = tree
            .gpu_events
            .iter()
            .map(|&index| {
                let event = &trace.events[index as usize];
                let launcher = tree.launcher[index as usize];
                let op = if launcher != NONE && trace.events[launcher as usize].kind == Kind::CpuOp
                {
                    launcher
                } else {
                    NONE
                };
                let args = trace.gpu_args(event);
                Work {
                    event: index,
                    interval: Interval {
                        start: event.ts,
                        end: event.end(),
                    },
                    bucket: bucket_of(event.kind == Kind::Memcpy, trace.name(event)),
                    linked: tree.is_linked(index),
                    op,
                    launch: tree.launch[index as usize],
                    stream: args
                        .and_then(|a| a.stream)
                        .or_else(|| stream_from_track(trace, event)),
                    device: args.and_then(|a| a.device),
                }
            })
            .collect();
        GpuWork { items }
    }

    fn linked(&self) -> impl Iterator<Item = &Work> {
        self.items.iter().filter(|w| w.linked)
    }
}

/// Old traces name the stream only in the tid (`"stream 7"`).
fn stream_from_track(trace: &Trace, event: &Event) -> Option<i64> {
    match trace.tracks[event.track as usize].tid {
        TrackId::Num(n) => Some(n),
        TrackId::Label(sym) => trace
            .strings
            .get(sym)
            .strip_prefix("stream ")?
            .trim()
            .parse()
            .ok(),
    }
}

/// Op invocations that own GPU work, with their direct and subtree work.
struct Invocations {
    /// (op event, direct work indices into GpuWork::items), by op start time.
    direct: Vec<(u32, Vec<u32>)>,
    /// Subtree work per op event (for ops that have direct work or below).
    subtree: FxHashMap<u32, Vec<u32>>,
}

impl Invocations {
    fn collect(trace: &Trace, tree: &Tree, gpu: &GpuWork) -> Invocations {
        let mut direct: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
        let mut subtree: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
        for (work_index, work) in gpu.items.iter().enumerate() {
            if !work.linked || work.op == NONE {
                continue;
            }
            direct.entry(work.op).or_default().push(work_index as u32);
            let mut current = work.op;
            while current != NONE {
                if trace.events[current as usize].kind == Kind::CpuOp {
                    subtree.entry(current).or_default().push(work_index as u32);
                }
                current = tree.parent[current as usize];
            }
        }
        // Launchers in host-time order; ties keep the order of their first GPU work.
        let mut direct: Vec<(u32, Vec<u32>)> = direct.into_iter().collect();
        direct.sort_by(|a, b| {
            let (a_ts, b_ts) = (trace.events[a.0 as usize].ts, trace.events[b.0 as usize].ts);
            a_ts.total_cmp(&b_ts).then(a.1[0].cmp(&b.1[0]))
        });
        Invocations { direct, subtree }
    }

    fn union_us(gpu: &GpuWork, work: &[u32]) -> f64 {
        IntervalSet::from_intervals(
            work.iter()
                .map(|&w| gpu.items[w as usize].interval)
                .collect(),
        )
        .len()
    }

    fn direct_us(&self, gpu: &GpuWork, position: usize) -> f64 {
        Self::union_us(gpu, &self.direct[position].1)
    }

    fn subtree_us(&self, gpu: &GpuWork, op: u32) -> f64 {
        self.subtree
            .get(&op)
            .map_or(0.0, |work| Self::union_us(gpu, work))
    }
}

/// The category of an op invocation: by name, else by its kernels.
fn op_category(trace: &Trace, gpu: &GpuWork, op: u32, work: &[u32]) -> Category {
    let kernels = work
        .iter()
        .map(|&w| trace.name(&trace.events[gpu.items[w as usize].event as usize]));
    category::of_op_and_kernels(trace.name(&trace.events[op as usize]), kernels)
}

fn ops_by_name(trace: &Trace, gpu: &GpuWork, invocations: &Invocations) -> Vec<OpSummary> {
    let mut by_name: BTreeMap<&str, OpSummary> = BTreeMap::new();
    for (position, (op, work)) in invocations.direct.iter().enumerate() {
        let name = trace.name(&trace.events[*op as usize]);
        let category = op_category(trace, gpu, *op, work);
        let entry = by_name.entry(name).or_insert_with(|| OpSummary {
            name: name.to_string(),
            total_direct_kernel_time_us: 0.0,
            total_subtree_kernel_time_us: 0.0,
            count: 0,
            categories: Vec::new(),
        });
        entry.total_direct_kernel_time_us += invocations.direct_us(gpu, position);
        entry.total_subtree_kernel_time_us += invocations.subtree_us(gpu, *op);
        entry.count += 1;
        if !entry.categories.contains(&category) {
            entry.categories.push(category);
        }
    }
    let mut ops: Vec<OpSummary> = by_name.into_values().collect();
    ops.sort_by(|a, b| {
        b.total_direct_kernel_time_us
            .total_cmp(&a.total_direct_kernel_time_us)
    });
    ops
}

fn categories(trace: &Trace, gpu: &GpuWork, invocations: &Invocations) -> Vec<CategorySummary> {
    let mut by_category: BTreeMap<Category, CategorySummary> = BTreeMap::new();
    for (position, (op, work)) in invocations.direct.iter().enumerate() {
        let category = op_category(trace, gpu, *op, work);
        let entry = by_category.entry(category).or_insert(CategorySummary {
            category,
            count: 0,
            total_direct_kernel_time_us: 0.0,
        });
        entry.count += 1;
        entry.total_direct_kernel_time_us += invocations.direct_us(gpu, position);
    }
    let mut categories: Vec<CategorySummary> = by_category.into_values().collect();
    categories.sort_by(|a, b| {
        b.total_direct_kernel_time_us
            .total_cmp(&a.total_direct_kernel_time_us)
    });
    categories
}

fn steps(tree: &Tree, gpu: &GpuWork, invocations: &Invocations) -> Vec<StepProfile> {
    let mut work_by_step: Vec<Vec<(Bucket, Interval)>> = vec![Vec::new(); tree.steps.len()];
    for work in gpu.linked() {
        let step = tree.step[work.event as usize];
        if step != NONE {
            work_by_step[step as usize].push((work.bucket, work.interval));
        }
    }
    let mut kernel_time = vec![0.0; tree.steps.len()];
    for (position, (op, _)) in invocations.direct.iter().enumerate() {
        let step = tree.step[*op as usize];
        if step != NONE {
            kernel_time[step as usize] += invocations.direct_us(gpu, position);
        }
    }
    tree.steps
        .iter()
        .zip(work_by_step)
        .zip(kernel_time)
        .map(|((step, work), kernel_time_us)| StepProfile {
            number: step.number,
            host_duration_us: step.end - step.ts,
            timeline: Breakdown::compute(work),
            kernel_time_us,
        })
        .collect()
}

/// The unique-args key of an op event, with each list as its Python tuple.
#[derive(Clone, PartialEq, Eq, Hash)]
struct ArgsKey {
    name: String,
    input_dims: String,
    input_type: String,
    input_strides: String,
    concrete_inputs: String,
    process_name: String,
    process_label: String,
    thread_name: String,
}

fn args_key(trace: &Trace, op: u32, reprs: &mut FxHashMap<u32, String>) -> ArgsKey {
    let event = &trace.events[op as usize];
    let mut text = |sym: Option<crate::trace::Sym>| match sym {
        Some(sym) => reprs
            .entry(sym.0)
            .or_insert_with(|| python_repr(trace.strings.get(sym)))
            .clone(),
        None => String::new(),
    };
    let args = trace.op_args(event).copied().unwrap_or_default();
    let input_dims = text(args.input_dims);
    let input_type = text(args.input_type);
    let input_strides = text(args.input_strides);
    let concrete_inputs = text(args.concrete_inputs);
    let track = trace.tracks[event.track as usize];
    let label = |sym: Option<&crate::trace::Sym>| sym.map(|s| trace.strings.get(*s).to_string());
    ArgsKey {
        name: trace.name(event).to_string(),
        input_dims,
        input_type,
        input_strides,
        concrete_inputs,
        process_name: label(trace.track_names.process.get(&track.pid)).unwrap_or_else(unknown),
        process_label: label(trace.track_names.process_label.get(&track.pid))
            .unwrap_or_else(unknown),
        thread_name: label(trace.track_names.thread.get(&track)).unwrap_or_else(unknown),
    }
}

fn unknown() -> String {
    "Unknown".to_string()
}

fn unique_args(
    trace: &Trace,
    tree: &Tree,
    gpu: &GpuWork,
    invocations: &Invocations,
) -> Vec<UniqueArgs> {
    struct Group {
        key: ArgsKey,
        /// (position in invocations.direct, direct µs, subtree µs)
        ops: Vec<(usize, f64, f64)>,
        work: Vec<u32>,
    }
    let mut reprs = FxHashMap::default();
    let mut index: std::collections::HashMap<ArgsKey, usize> = std::collections::HashMap::new();
    let mut groups: Vec<Group> = Vec::new();
    for (position, (op, work)) in invocations.direct.iter().enumerate() {
        let key = args_key(trace, *op, &mut reprs);
        let slot = *index.entry(key.clone()).or_insert_with(|| {
            groups.push(Group {
                key,
                ops: Vec::new(),
                work: Vec::new(),
            });
            groups.len() - 1
        });
        let group = &mut groups[slot];
        group.ops.push((
            position,
            invocations.direct_us(gpu, position),
            invocations.subtree_us(gpu, *op),
        ));
        group.work.extend_from_slice(work);
    }
    let mut rows: Vec<UniqueArgs> = groups
        .into_iter()
        .map(|group| {
            let key = group.key;
            let direct: Vec<f64> = group.ops.iter().map(|o| o.1).collect();
            let subtree: Vec<f64> = group.ops.iter().map(|o| o.2).collect();
            let (example_op, example_work) = &invocations.direct[group.ops[0].0];
            let category = op_category(trace, gpu, *example_op, example_work);
            let kernel_sequence = example_work
                .iter()
                .map(|&w| {
                    trace
                        .name(&trace.events[gpu.items[w as usize].event as usize])
                        .to_string()
                })
                .collect();
            UniqueArgs {
                name: key.name,
                category,
                process_name: key.process_name,
                process_label: key.process_label,
                thread_name: key.thread_name,
                input_dims: key.input_dims,
                input_type: key.input_type,
                input_strides: key.input_strides,
                concrete_inputs: key.concrete_inputs,
                direct: Stats::of(&direct),
                subtree: Stats::of(&subtree),
                example_event: trace.events[*example_op as usize].index,
                module_path: tree.module_path(trace, *example_op),
                kernels: kernel_details(trace, gpu, &group.work),
                kernel_sequence,
                samples_us: direct,
                step_us: step_sums(
                    tree,
                    group
                        .ops
                        .iter()
                        .map(|&(position, us, _)| (invocations.direct[position].0, us)),
                ),
                model: op_model(trace, *example_op),
            }
        })
        .collect();
    rows.sort_by(|a, b| {
        b.direct
            .sum
            .total_cmp(&a.direct.sum)
            .then(a.example_event.cmp(&b.example_event))
    });
    rows
}

/// Sums per profiler step of (op event, µs) pairs, by step number.
fn step_sums(tree: &Tree, ops: impl Iterator<Item = (u32, f64)>) -> Vec<(u64, f64)> {
    let mut by_step: BTreeMap<u64, f64> = BTreeMap::new();
    for (op, us) in ops {
        let step = tree.step[op as usize];
        if step != NONE {
            *by_step.entry(tree.steps[step as usize].number).or_default() += us;
        }
    }
    by_step.into_iter().collect()
}

fn op_model(trace: &Trace, op: u32) -> Option<OpModel> {
    let event = &trace.events[op as usize];
    let model = perf_model::model(&OpShape::of_event(trace, event)).ok()?;
    Some(OpModel {
        family: model.family.sheet().to_string(),
        flops: model.flops,
        bytes: model.bytes,
        compute_spec: model.compute_spec,
    })
}

fn kernel_details(trace: &Trace, gpu: &GpuWork, work: &[u32]) -> Vec<KernelDetail> {
    let mut order: Vec<(String, Option<i64>)> = Vec::new();
    let mut durations: BTreeMap<(String, Option<i64>), Vec<f64>> = BTreeMap::new();
    for &w in work {
        let item = &gpu.items[w as usize];
        let event = &trace.events[item.event as usize];
        let key = (trace.name(event).to_string(), item.stream);
        let entry = durations.entry(key.clone()).or_default();
        if entry.is_empty() {
            order.push(key);
        }
        entry.push(event.dur);
    }
    order
        .into_iter()
        .map(|key| {
            let duration = Stats::of(&durations[&key]);
            KernelDetail {
                name: key.0,
                stream: key.1,
                duration,
            }
        })
        .collect()
}

/// The parent op and category of a kernel, for the kernel tables: the first
/// CPU op above its launch; with none, the launch call itself (category
/// `runtime`, or by kernel name under a graph launch); unlinked kernels have
/// neither.
fn parent_of(trace: &Trace, tree: &Tree, work: &Work) -> (Option<Category>, String) {
    let event = &trace.events[work.event as usize];
    if work.launch == NONE {
        return (None, String::new());
    }
    let mut current = tree.parent[work.launch as usize];
    while current != NONE {
        let candidate = &trace.events[current as usize];
        if candidate.kind == Kind::CpuOp {
            let op_name = trace.name(candidate);
            let category = category::of_op_and_kernels(op_name, [trace.name(event)]);
            return (Some(category), op_name.to_string());
        }
        current = tree.parent[current as usize];
    }
    let launch_name = trace.name(&trace.events[work.launch as usize]);
    let category = if link::is_graph_launch(launch_name) {
        category::of_kernel(trace.name(event))
    } else {
        Category::Runtime
    };
    (Some(category), launch_name.to_string())
}

/// (parent category, parent op, kernel name, stream).
type KernelKey = (Option<Category>, String, String, Option<i64>);

/// (device, stream, track): one GPU queue.
type StreamKey = (Option<i64>, Option<i64>, u32);

fn kernel_summary(
    trace: &Trace,
    tree: &Tree,
    gpu: &GpuWork,
    timeline: &Breakdown,
) -> Vec<KernelSummary> {
    let mut groups: BTreeMap<KernelKey, Vec<f64>> = BTreeMap::new();
    for work in gpu
        .items
        .iter()
        .filter(|w| trace.events[w.event as usize].kind == Kind::Kernel)
    {
        let (category, parent) = parent_of(trace, tree, work);
        let event = &trace.events[work.event as usize];
        groups
            .entry((category, parent, trace.name(event).to_string(), work.stream))
            .or_default()
            .push(event.dur);
    }
    let all_kernel_time: f64 = groups.values().flatten().fold(0.0, |total, d| total + d);
    let mut rows: Vec<KernelSummary> = groups
        .into_iter()
        .map(|((parent_category, parent_op, name, stream), durations)| {
            let duration = Stats::of(&durations);
            KernelSummary {
                parent_category,
                parent_op,
                name,
                stream,
                percent_of_kernel_time: percent(duration.sum, all_kernel_time),
                percent_of_total_time: percent(duration.sum, timeline.total_time),
                duration,
            }
        })
        .collect();
    rows.sort_by(|a, b| b.duration.sum.total_cmp(&a.duration.sum));
    rows
}

/// Short kernels (linked or not) by parent op, arguments and kernel name,
/// with the histogram of their durations and their total duration (µs).
/// As in TraceLens, kernels whose parent op lacks recorded arguments are left
/// out of the groups (they stay in the histogram); a trace with no CPU ops at
/// all groups by kernel name alone.
fn short_kernels(
    trace: &Trace,
    tree: &Tree,
    gpu: &GpuWork,
    timeline: &Breakdown,
) -> (Vec<ShortKernelGroup>, Vec<HistogramBin>, f64) {
    let gpu_only = !trace.events.iter().any(|e| e.kind == Kind::CpuOp);
    let mut reprs = FxHashMap::default();
    let mut index: std::collections::HashMap<[String; 5], usize> = std::collections::HashMap::new();
    let mut groups: Vec<([String; 5], Vec<f64>)> = Vec::new();
    let mut durations = Vec::new();
    for work in &gpu.items {
        let event = &trace.events[work.event as usize];
        if event.kind != Kind::Kernel || event.dur >= SHORT_KERNEL_US {
            continue;
        }
        durations.push(event.dur);
        let kernel = trace.name(event).to_string();
        let key = if gpu_only {
            [
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                kernel,
            ]
        } else {
            let Some(op) = parent_op_with_args(trace, tree, work) else {
                continue;
            };
            let key = args_key(trace, op, &mut reprs);
            [
                key.name,
                key.input_dims,
                key.input_strides,
                key.concrete_inputs,
                kernel,
            ]
        };
        let slot = *index.entry(key.clone()).or_insert_with(|| {
            groups.push((key, Vec::new()));
            groups.len() - 1
        });
        groups[slot].1.push(event.dur);
    }
    let mut rows: Vec<ShortKernelGroup> = groups
        .into_iter()
        .map(
            |([parent_op, input_dims, input_strides, concrete_inputs, name], durs)| {
                let total_us: f64 = durs.iter().sum();
                ShortKernelGroup {
                    parent_op,
                    input_dims,
                    input_strides,
                    concrete_inputs,
                    name,
                    total_us,
                    count: durs.len() as u64,
                    percent_of_total_time: percent(total_us, timeline.total_time),
                }
            },
        )
        .collect();
    rows.sort_by(|a, b| {
        b.total_us
            .total_cmp(&a.total_us)
            .then(a.count.cmp(&b.count))
    });
    let total_us = durations.iter().fold(0.0, |total, d| total + d);
    (rows, histogram(&durations, HISTOGRAM_BINS), total_us)
}

/// The first CPU op above a kernel's launch, if it recorded all four argument lists.
fn parent_op_with_args(trace: &Trace, tree: &Tree, work: &Work) -> Option<u32> {
    if work.launch == NONE {
        return None;
    }
    let mut current = tree.parent[work.launch as usize];
    while current != NONE {
        let event = &trace.events[current as usize];
        if event.kind == Kind::CpuOp {
            let args = trace.op_args(event)?;
            let complete = args.input_dims.is_some()
                && args.input_strides.is_some()
                && args.concrete_inputs.is_some();
            return complete.then_some(current);
        }
        current = tree.parent[current as usize];
    }
    None
}

/// Equal-width bins from the smallest to the largest value (numpy's rule:
/// the last bin includes its right edge).
fn histogram(values: &[f64], bins: usize) -> Vec<HistogramBin> {
    let Some(min) = values.iter().copied().min_by(f64::total_cmp) else {
        return Vec::new();
    };
    let max = values
        .iter()
        .copied()
        .max_by(f64::total_cmp)
        .expect("non-empty");
    let (low, high) = if min == max {
        (min - 0.5, max + 0.5)
    } else {
        (min, max)
    };
    // numpy.histogram: edges from linspace (the last edge exactly `high`), a
    // first guess from the scaled value, then a correction against the
    // computed edges so values on an edge land where numpy puts them.
    let step = (high - low) / bins as f64;
    let edges: Vec<f64> = (0..=bins)
        .map(|i| {
            if i == bins {
                high
            } else {
                low + step * i as f64
            }
        })
        .collect();
    let mut counts = vec![0u64; bins];
    for &value in values {
        let mut bin = (((value - low) / (high - low)) * bins as f64) as usize;
        bin = bin.min(bins - 1);
        if value < edges[bin] {
            bin = bin.saturating_sub(1);
        } else if bin + 1 < bins && value >= edges[bin + 1] {
            bin += 1;
        }
        counts[bin] += 1;
    }
    counts
        .into_iter()
        .enumerate()
        .map(|(i, count)| HistogramBin {
            start: edges[i],
            end: edges[i + 1],
            count,
        })
        .collect()
}

fn environment(trace: &Trace, gpu: &GpuWork) -> Environment {
    let text = |key: &str| {
        trace.metadata.get(key).map(|v| match v {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        })
    };
    let distributed = trace.metadata.get("distributedInfo");
    let dist_int = |key: &str| {
        distributed
            .and_then(|d| d.get(key))
            .and_then(serde_json::Value::as_i64)
    };
    let active_devices: BTreeSet<i64> = gpu.items.iter().filter_map(|w| w.device).collect();
    let is_rocm = text("hip_runtime_version").is_some()
        || text("roctracer_version").is_some()
        || trace
            .events
            .iter()
            .any(|e| e.kind == Kind::Runtime && trace.name(e).starts_with("hip"));
    let is_cuda = text("cuda_runtime_version").is_some()
        || trace
            .events
            .iter()
            .any(|e| e.kind == Kind::Runtime && trace.name(e).starts_with("cuda"));
    Environment {
        devices: trace.metadata.devices.clone(),
        active_devices: active_devices.into_iter().collect(),
        cuda_runtime_version: text("cuda_runtime_version"),
        cuda_driver_version: text("cuda_driver_version"),
        hip_runtime_version: text("hip_runtime_version"),
        hip_driver_version: text("hip_driver_version"),
        tracer_version: text("roctracer_version").or_else(|| text("cupti_version")),
        rank: dist_int("rank"),
        world_size: dist_int("world_size"),
        distributed_backend: distributed
            .and_then(|d| d.get("backend"))
            .and_then(|b| b.as_str())
            .map(str::to_string),
        trace_schema_version: text("schemaVersion"),
        platform: if is_rocm {
            Some("ROCm".to_string())
        } else if is_cuda {
            Some("CUDA".to_string())
        } else {
            None
        },
    }
}

/// Splits gaps before each piece of work (sorted by start) into host-wait
/// and kernel-wait; returns (host-wait µs, kernel-wait µs).
fn split_gaps(trace: &Trace, works: &mut [&Work]) -> (f64, f64) {
    works.sort_by(|a, b| a.interval.start.total_cmp(&b.interval.start));
    let (mut host_wait, mut kernel_wait) = (0.0, 0.0);
    let mut frontier = f64::NEG_INFINITY;
    for work in works.iter() {
        let gap = work.interval.start - frontier;
        if frontier.is_finite() && gap > 0.0 {
            if trace.events[work.launch as usize].ts >= frontier {
                host_wait += gap;
            } else {
                kernel_wait += gap;
            }
        }
        frontier = frontier.max(work.interval.end);
    }
    (host_wait, kernel_wait)
}

fn idle_split(trace: &Trace, gpu: &GpuWork) -> IdleSplit {
    let mut all: Vec<&Work> = gpu.linked().collect();
    let (host_wait_us, kernel_wait_us) = split_gaps(trace, &mut all);
    let mut by_stream: BTreeMap<(Option<i64>, Option<i64>), Vec<&Work>> = BTreeMap::new();
    for work in all {
        by_stream
            .entry((work.device, work.stream))
            .or_default()
            .push(work);
    }
    let mut streams: Vec<StreamIdle> = by_stream
        .into_iter()
        .map(|((device, stream), mut works)| {
            let (host_wait_us, kernel_wait_us) = split_gaps(trace, &mut works);
            StreamIdle {
                device,
                stream,
                work_items: works.len() as u64,
                busy_us: IntervalSet::from_intervals(works.iter().map(|w| w.interval).collect())
                    .len(),
                host_wait_us,
                kernel_wait_us,
            }
        })
        .collect();
    streams.sort_by(|a, b| b.busy_us.total_cmp(&a.busy_us));
    IdleSplit {
        host_wait_us,
        kernel_wait_us,
        streams,
    }
}

fn sync_summary(trace: &Trace) -> SyncSummary {
    let mut by_name: BTreeMap<&str, (u64, f64)> = BTreeMap::new();
    let (mut first, mut last) = (f64::INFINITY, f64::NEG_INFINITY);
    for event in &trace.events {
        if event.kind.is_host() {
            first = first.min(event.ts);
            last = last.max(event.end());
        } else if event.kind != Kind::CudaSync {
            continue;
        }
        let name = trace.name(event);
        let is_sync = event.kind == Kind::CudaSync
            || (matches!(event.kind, Kind::Runtime | Kind::Driver) && is_sync_call(name));
        if is_sync {
            let entry = by_name.entry(name).or_default();
            entry.0 += 1;
            entry.1 += event.dur.max(0.0);
        }
    }
    let mut by_name: Vec<(String, u64, f64)> = by_name
        .into_iter()
        .map(|(name, (calls, us))| (name.to_string(), calls, us))
        .collect();
    by_name.sort_by(|a, b| b.2.total_cmp(&a.2));
    SyncSummary {
        calls: by_name.iter().map(|e| e.1).sum(),
        time_us: by_name.iter().fold(0.0, |total, e| total + e.2),
        host_span_us: if last > first { last - first } else { 0.0 },
        by_name,
    }
}

fn anomalies(trace: &Trace, tree: &Tree, gpu: &GpuWork) -> Anomalies {
    let mut result = Anomalies {
        negative_durations: trace.counts.negative_durations,
        missing_times: trace.counts.missing_times,
        link: tree.anomalies.clone(),
        ..Anomalies::default()
    };
    let mut by_stream: BTreeMap<StreamKey, Vec<&Work>> = BTreeMap::new();
    for work in &gpu.items {
        let track = trace.events[work.event as usize].track;
        by_stream
            .entry((work.device, work.stream, track))
            .or_default()
            .push(work);
    }
    for ((_, stream, _), mut works) in by_stream {
        works.sort_by(|a, b| a.interval.start.total_cmp(&b.interval.start));
        let mut previous: Option<&Work> = None;
        for work in works {
            if let Some(prev) = previous {
                let overlap = prev.interval.end - work.interval.start;
                if overlap > 0.0 {
                    result.stream_overlaps += 1;
                    result.max_stream_overlap_us = result.max_stream_overlap_us.max(overlap);
                    if result.examples.len() < 5 {
                        result.examples.push(format!(
                            "`{}` overlaps the next work `{}` by {overlap:.3} µs on stream {}",
                            trace.name(&trace.events[prev.event as usize]),
                            trace.name(&trace.events[work.event as usize]),
                            stream.map_or("?".to_string(), |s| s.to_string()),
                        ));
                    }
                }
                if work.interval.end <= prev.interval.end {
                    continue;
                }
            }
            previous = Some(work);
        }
    }
    result
}
