//! The stored form of a snapshot: the format marker and version, the
//! environment fingerprint, the timeline, steps, op rows and counts. Plain
//! serde data; adding a field is a minor version, changing one a major.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::bounds;
use crate::analysis::hardware::{Catalog, Hardware};
use crate::analysis::ops::category::Category;
use crate::analysis::ops::stats::Stats;
use crate::analysis::profile::{Coverage, GraphPlace, GraphRole, OpModel, Phase};
use crate::analysis::ranks::collective::Collective;
use crate::analysis::timeline::Breakdown;
use crate::gate::verdict::EnvironmentSummary;

/// The `format` value every snapshot carries.
pub const SNAPSHOT_FORMAT: &str = "tracegate-snapshot";

/// The newest snapshot version this tracegate writes (and the major it
/// reads). A snapshot is written with the lowest version whose fields it
/// uses: 1.1 added graph rows ([`OpSnapshot::graph`]) and
/// [`Snapshot::coverage`], so a snapshot without them is still 1.0; 1.2
/// added the inference phases ([`Snapshot::inference_steps`],
/// [`Snapshot::phase_ops`]); 1.3 the launches of each kernel of a row whose
/// calls launch different kernels ([`OpSnapshot::kernel_samples_us`]); 1.4
/// the ranks' communication kernels ([`Snapshot::ranks`]), the kernel
/// families shared by rows ([`Snapshot::kernel_families`]) and each
/// inference step's op times ([`InferenceStepSnapshot::ops`]).
pub const SNAPSHOT_VERSION: SnapshotVersion = SnapshotVersion { major: 1, minor: 4 };

/// The version of a snapshot that uses kernel samples but none of 1.4's
/// additions.
pub const SNAPSHOT_VERSION_1_3: SnapshotVersion = SnapshotVersion { major: 1, minor: 3 };

/// The version of a snapshot that uses inference phases but no kernel
/// samples.
pub const SNAPSHOT_VERSION_1_2: SnapshotVersion = SnapshotVersion { major: 1, minor: 2 };

/// The version of a snapshot that uses graph rows or coverage but no
/// inference phases.
pub const SNAPSHOT_VERSION_1_1: SnapshotVersion = SnapshotVersion { major: 1, minor: 1 };

/// The version of a snapshot that uses no field added after 1.0.
pub const SNAPSHOT_VERSION_1_0: SnapshotVersion = SnapshotVersion { major: 1, minor: 0 };

/// A snapshot format version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SnapshotVersion {
    /// Incompatible changes.
    pub major: u32,
    /// Compatible additions.
    pub minor: u32,
}

impl fmt::Display for SnapshotVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// The compact profile of one trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Always [`SNAPSHOT_FORMAT`]; the first key in the file.
    pub format: String,
    /// The format version ([`SNAPSHOT_VERSION`] when written by this tracegate).
    pub version: SnapshotVersion,
    /// The tracegate version that wrote it.
    pub tracegate_version: String,
    /// The workload: the trace file's name without `.json`, `.gz`,
    /// `.snapshot`, `.pt.trace` suffixes ([`workload_name`](super::workload_name)).
    pub workload: String,
    /// Hardware, software and the trace file.
    pub fingerprint: Fingerprint,
    /// Whether the trace has any GPU work.
    pub has_gpu_activity: bool,
    /// GPU timeline over linked GPU work, µs.
    pub timeline: Breakdown,
    /// One entry per `ProfilerStep#N`.
    #[serde(default, deserialize_with = "bounds::steps")]
    pub steps: Vec<StepSnapshot>,
    /// Op rows, most direct kernel time first.
    #[serde(default, deserialize_with = "bounds::ops")]
    pub ops: Vec<OpSnapshot>,
    /// Kernels shorter than [`crate::analysis::profile::SHORT_KERNEL_US`].
    #[serde(default)]
    pub short_kernels: ShortKernelCounts,
    /// GPU idle time split by cause.
    #[serde(default)]
    pub idle: IdleCounts,
    /// What did not add up in the trace.
    #[serde(default)]
    pub anomalies: AnomalyCounts,
    /// How much GPU time the rows hold and what the trace did not record;
    /// written (1.1) only when something is outside the rows or missing, so
    /// absent means every piece of GPU work is in a row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<Coverage>,
    /// The inference steps (1.2), tagged prefill, decode or mixed, in
    /// host-time order; written only when the trace has them.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "bounds::steps"
    )]
    pub inference_steps: Vec<InferenceStepSnapshot>,
    /// Op totals per phase (1.2), one entry per phase present.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "bounds::steps"
    )]
    pub phase_ops: Vec<PhaseOpsSnapshot>,
    /// The communication of the rank(s) this snapshot holds (1.4): one
    /// entry in the snapshot of one rank's trace, one per rank in a rank
    /// set's ([`Snapshot::merge_ranks`]); written only when the trace has
    /// communication kernels.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "bounds::ranks"
    )]
    pub ranks: Vec<RankSnapshot>,
    /// Kernel families (1.4): each kernel name that several rows launch,
    /// its launches over all of them, most time first
    /// (`snapshot/families.rs` says which are kept).
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "bounds::kernels"
    )]
    pub kernel_families: Vec<KernelSamples>,
}

/// One rank's communication: its kernels as [`crate::analysis::ranks`]
/// matches them across ranks, and how much of its communication time the
/// rank's own compute did not hide.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankSnapshot {
    /// The rank (`distributedInfo.rank`, else `rank<N>` in the trace's file
    /// name); `None` when neither says.
    pub rank: Option<u32>,
    /// The trace's file name, for messages.
    pub source: String,
    /// Communication time not overlapped by computation, over all of the
    /// rank's GPU work, linked to a launch or not, as `report DIR` counts
    /// it ([`crate::analysis::ranks::input::comm_time`]), µs.
    pub exposed_comm_us: f64,
    /// All communication time, counted alike, µs.
    pub total_comm_us: f64,
    /// Its communication kernels, in start order.
    #[serde(deserialize_with = "bounds::comm_kernels")]
    pub kernels: Vec<CommKernelSnapshot>,
    /// Its communication kernels by name (1.4): each kernel name's calls,
    /// most time first, the samples in start order, so that one rank's
    /// collectives are judged by their floor (`gate/collectives/floor.rs`).
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "bounds::kernels"
    )]
    pub kernel_families: Vec<KernelSamples>,
}

/// One communication kernel of a rank (what [`crate::analysis::ranks::CommKernel`]
/// holds but its name: the collective says what it ran).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CommKernelSnapshot {
    /// Start, µs.
    pub start_us: f64,
    /// Duration, µs.
    pub duration_us: f64,
    /// The collective.
    pub collective: Collective,
    /// The stream it ran on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<i64>,
    /// `Process Group Name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_group: Option<String>,
    /// `Seq`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<i64>,
    /// Message bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// `dtype`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dtype: Option<String>,
    /// `Group size`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_size: Option<u32>,
}

/// One inference step (a model forward) and its phase.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InferenceStepSnapshot {
    /// Prefill, decode or mixed.
    pub phase: Phase,
    /// Host duration of its annotation, µs.
    pub host_duration_us: f64,
    /// GPU busy time of the work launched inside it, µs.
    pub gpu_time_us: f64,
    /// `(op name, summed GPU time of its work in the step, µs)` (1.4),
    /// most first, for traces with more than one phase: the samples of the
    /// per-phase op rows.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "bounds::ops"
    )]
    pub ops: Vec<(String, f64)>,
}

/// The op totals of one phase.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhaseOpsSnapshot {
    /// The phase.
    pub phase: Phase,
    /// `(op name, summed GPU time of its work in the phase, µs)`, most first.
    #[serde(deserialize_with = "bounds::ops")]
    pub ops: Vec<(String, f64)>,
}

/// The environment a trace was recorded in, and the trace file itself.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Fingerprint {
    /// GPU names from `deviceProperties`, with how many of each.
    #[serde(deserialize_with = "bounds::devices")]
    pub gpus: Vec<GpuCount>,
    /// Devices in `deviceProperties`.
    pub gpu_count: u64,
    /// Devices that ran GPU work in the trace.
    #[serde(deserialize_with = "bounds::devices")]
    pub active_devices: Vec<i64>,
    /// Catalog hardware the analysis used (`H100 SXM`), when known.
    pub hardware: Option<String>,
    /// How it was chosen: `detected`, `given` or `unknown`.
    pub hardware_how: String,
    /// `CUDA` or `ROCm`.
    pub platform: Option<String>,
    /// `cuda_runtime_version` as recorded (e.g. `12040`).
    pub cuda_runtime_version: Option<String>,
    /// `cuda_driver_version`.
    pub cuda_driver_version: Option<String>,
    /// `hip_runtime_version`.
    pub hip_runtime_version: Option<String>,
    /// `hip_driver_version`.
    pub hip_driver_version: Option<String>,
    /// `cupti_version` / `roctracer_version`.
    pub tracer_version: Option<String>,
    /// PyTorch version, when the trace metadata records one
    /// ([`pytorch_version`](super::pytorch_version); set by the caller, the profile does not carry it).
    pub pytorch_version: Option<String>,
    /// `distributedInfo.rank`.
    pub rank: Option<i64>,
    /// `distributedInfo.world_size`.
    pub world_size: Option<i64>,
    /// `distributedInfo.backend`.
    pub distributed_backend: Option<String>,
    /// SHA-256 of the trace file as stored (compressed or not), lower-case hex.
    pub trace_sha256: String,
    /// Size of the trace file as stored, bytes.
    pub trace_bytes: u64,
    /// Size of the uncompressed trace JSON, bytes.
    pub trace_json_bytes: u64,
}

/// One GPU name and how many devices carry it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuCount {
    /// `deviceProperties` name.
    pub name: String,
    /// Devices with that name.
    pub count: u64,
}

impl Fingerprint {
    /// GPUs as text: `1 × NVIDIA H100 80GB HBM3`, several names joined by
    /// `, `; `unknown` when the trace lists none.
    pub fn gpus_text(&self) -> String {
        if self.gpus.is_empty() {
            return "unknown".to_string();
        }
        self.gpus
            .iter()
            .map(|g| format!("{} × {}", g.count, g.name))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The runtime as text: `CUDA 12.4` (from `12040`), `HIP 6.4` (from
    /// `60443483`); the raw value when it is not a number; `None` when the
    /// trace records neither.
    pub fn runtime_text(&self) -> Option<String> {
        if let Some(cuda) = &self.cuda_runtime_version {
            return Some(match cuda.trim().parse::<u64>() {
                Ok(v) => format!("CUDA {}.{}", v / 1000, (v % 1000) / 10),
                Err(_) => format!("CUDA {cuda}"),
            });
        }
        let hip = self.hip_runtime_version.as_ref()?;
        Some(match hip.trim().parse::<u64>() {
            // HIP_VERSION = major·10⁷ + minor·10⁵ + patch.
            Ok(v) => format!("HIP {}.{}", v / 10_000_000, (v / 100_000) % 100),
            Err(_) => format!("HIP {hip}"),
        })
    }

    /// The catalog entry of [`Fingerprint::hardware`], when the catalog has it.
    pub fn catalog_hardware(&self, catalog: &Catalog) -> Option<Hardware> {
        catalog.by_name(self.hardware.as_deref()?).cloned()
    }

    /// The environment line of a verdict, for a side combining `runs` runs.
    pub fn summary(&self, runs: usize) -> EnvironmentSummary {
        EnvironmentSummary {
            gpus: self.gpus_text(),
            hardware: self.hardware.clone(),
            runtime: self.runtime_text(),
            pytorch: self.pytorch_version.clone(),
            distributed: self.world_size.filter(|&w| w > 1).map(|world| {
                format!(
                    "rank {} of {world}",
                    self.rank.map_or("?".to_string(), |r| r.to_string())
                )
            }),
            runs,
        }
    }
}

/// One profiler step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepSnapshot {
    /// `N` of `ProfilerStep#N`.
    pub number: u64,
    /// Host duration of the step, µs.
    pub host_duration_us: f64,
    /// GPU timeline of the work launched in the step, µs.
    pub timeline: Breakdown,
    /// Sum of the step's op invocations' direct kernel time, µs.
    pub kernel_time_us: f64,
}

/// The comparison key of an op row: name and argument lists (Python tuple
/// text), and for graph-replayed work its place in the graph. It is
/// TraceLens's unique-args key without the process and thread labels, which
/// carry process and thread ids that change from run to run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct OpKey {
    /// Op name.
    pub name: String,
    /// `Input Dims`.
    pub input_dims: String,
    /// `Input type`.
    pub input_type: String,
    /// `Input Strides`.
    pub input_strides: String,
    /// `Concrete Inputs`.
    pub concrete_inputs: String,
    /// [`GraphPlace::key`] for rows of graph-replayed work, else empty.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub graph: String,
}

/// One op row: an op name with one set of arguments. Rows of the profile
/// that differ only in process or thread are merged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpSnapshot {
    /// Op name.
    pub name: String,
    /// `Input Dims`, Python tuple.
    pub input_dims: String,
    /// `Input type`, Python tuple.
    pub input_type: String,
    /// `Input Strides`, Python tuple.
    pub input_strides: String,
    /// `Concrete Inputs`, Python tuple.
    pub concrete_inputs: String,
    /// Category.
    pub category: Category,
    /// `nn.Module` path of the earliest invocation, when recorded.
    pub module_path: Option<String>,
    /// Direct kernel time per invocation, µs, over every invocation.
    pub direct: Stats,
    /// Up to [`MAX_SAMPLES`](super::MAX_SAMPLES) per-invocation direct
    /// kernel times, µs, evenly spaced over the invocations in host-time
    /// order (all of them when there are no more than that).
    #[serde(deserialize_with = "bounds::samples")]
    pub samples_us: Vec<f64>,
    /// Direct kernel time per profiler step: `(step number, µs)`.
    #[serde(default, deserialize_with = "bounds::steps")]
    pub step_us: Vec<(u64, f64)>,
    /// Kernel names launched by the earliest invocation, in order.
    #[serde(default, deserialize_with = "bounds::kernels")]
    pub kernel_sequence: Vec<String>,
    /// FLOPs and bytes of one invocation, when a perf model covers the op.
    #[serde(default)]
    pub model: Option<OpModel>,
    /// For work a CUDA/HIP graph replayed (1.1): the graph and what the row
    /// holds. Whole-graph rows ([`GraphRole::Graph`]) carry the graph's
    /// kernel sequence; their time is in the graph's other rows too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graph: Option<GraphPlace>,
    /// For graph rows (1.1): each kernel's total time over the row's calls,
    /// µs, in first-launch order, so that a slowdown names its kernel.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kernel_us: Vec<(String, f64)>,
    /// For a row outside graphs whose calls launch different kernels (1.3;
    /// a trace without shapes puts every `aten::mm` in one row): each
    /// kernel's launch durations, µs, by name in first-launch order, so a
    /// kernel slowed in some of the calls is judged on its own launches
    /// rather than on the row's median call.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "bounds::kernels"
    )]
    pub kernel_samples_us: Vec<KernelSamples>,
}

/// One kernel's launches in a row ([`OpSnapshot::kernel_samples_us`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelSamples {
    /// Kernel name.
    pub name: String,
    /// Its launches in the row.
    pub launches: u64,
    /// Their total duration, µs.
    pub total_us: f64,
    /// Up to [`MAX_SAMPLES`](super::MAX_SAMPLES) launch durations, µs,
    /// evenly spaced over the launches in the row's order.
    #[serde(deserialize_with = "bounds::samples")]
    pub samples_us: Vec<f64>,
}

impl OpSnapshot {
    /// The row's comparison key.
    pub fn key(&self) -> OpKey {
        OpKey {
            name: self.name.clone(),
            input_dims: self.input_dims.clone(),
            input_type: self.input_type.clone(),
            input_strides: self.input_strides.clone(),
            concrete_inputs: self.concrete_inputs.clone(),
            graph: self.graph.as_ref().map_or(String::new(), GraphPlace::key),
        }
    }

    /// Whether this is a whole-graph row, whose time the graph's other rows
    /// already hold.
    pub fn is_whole_graph(&self) -> bool {
        self.graph
            .as_ref()
            .is_some_and(|g| g.role == GraphRole::Graph)
    }
}

/// Short-kernel totals.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ShortKernelCounts {
    /// Kernels shorter than the threshold.
    pub count: u64,
    /// Their total duration, µs.
    pub time_us: f64,
}

/// The GPU's idle time split by cause (see [`crate::analysis::profile::IdleSplit`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct IdleCounts {
    /// Gaps where the host had not issued the next launch yet, µs.
    pub host_wait_us: f64,
    /// Gaps with the next launch already queued, µs.
    pub kernel_wait_us: f64,
}

/// Anomaly counts (see [`crate::analysis::profile::Anomalies`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct AnomalyCounts {
    /// Timed events with a negative duration.
    pub negative_durations: u64,
    /// Timed events without `ts` or `dur`.
    pub missing_times: u64,
    /// GPU work with no launch in the trace.
    pub gpu_without_launch: u64,
    /// Kernel launches with no GPU work.
    pub launches_without_gpu: u64,
    /// Launches sharing a correlation id.
    pub duplicate_correlations: u64,
    /// Partially overlapping host events.
    pub improper_nesting: u64,
    /// GPU work starting before the previous work on its stream ended.
    pub stream_overlaps: u64,
}
