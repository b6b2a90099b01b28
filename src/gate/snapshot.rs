//! Snapshots: the compact, versioned profile of one trace, stored as a
//! baseline (in the repository, a cache or a CI artifact) and compared with a
//! candidate by [`crate::gate::compare`].
//!
//! A snapshot is gzip-compressed JSON whose first key is
//! `"format": "tracegate-snapshot"`, so [`is_snapshot`] can tell it from a
//! trace by reading the first kilobyte. It holds the environment fingerprint,
//! the GPU timeline (whole and per step), one entry per op row (name, shapes,
//! dtypes, strides, concrete inputs) with its statistics, a bounded
//! deterministic sample of per-invocation kernel times, per-step totals, the
//! kernel-name sequence and the perf model, plus short-kernel, idle and
//! anomaly counts.
//!
//! # Versions
//!
//! `version.major` changes when a field's meaning changes or a field goes
//! away; a reader refuses other majors with [`SnapshotError::Incompatible`].
//! `version.minor` changes when fields are added: unknown fields are ignored
//! on reading, so an older tracegate reads a newer minor version.
//!
//! # Determinism
//!
//! The same trace gives byte-identical snapshot files: op rows keep the
//! analysis order, samples are picked by position, the gzip header has no
//! file name and a zero mtime.

use std::fmt;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::Path;

use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;
use flate2::{Compression, GzBuilder};
use serde::{Deserialize, Serialize};

use crate::analysis::hardware::{Catalog, Hardware};
use crate::analysis::ops::category::Category;
use crate::analysis::ops::stats::Stats;
use crate::analysis::profile::{OpModel, Profile, UniqueArgs};
use crate::analysis::timeline::Breakdown;
use crate::gate::verdict::EnvironmentSummary;
use crate::trace::Metadata;

/// The `format` value every snapshot carries.
pub const SNAPSHOT_FORMAT: &str = "tracegate-snapshot";

/// The snapshot version this tracegate writes (and the major it reads).
pub const SNAPSHOT_VERSION: SnapshotVersion = SnapshotVersion { major: 1, minor: 0 };

/// At most this many per-invocation samples are kept per op row.
pub const MAX_SAMPLES: usize = 64;

/// How many leading bytes (after decompression) [`is_snapshot`] reads.
pub const SNIFF_BYTES: usize = 1024;

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

/// Why a snapshot could not be read. Every message names the file.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// The file could not be read.
    #[error("{path}: cannot read: {source}")]
    Io {
        /// The file.
        path: String,
        /// What the OS said.
        source: io::Error,
    },
    /// Valid JSON (or not JSON at all), but not a tracegate snapshot.
    #[error("{path}: not a tracegate snapshot: {reason}")]
    NotSnapshot {
        /// The file.
        path: String,
        /// What is missing.
        reason: String,
    },
    /// A snapshot of a major version this tracegate does not read.
    #[error(
        "{path}: snapshot format version {found} cannot be read by tracegate {tracegate} \
         (it reads version {supported_major}.x); re-create the baseline with `tracegate snapshot`"
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
    /// the wrong type).
    #[error("{path}: invalid snapshot: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// What the decoder said.
        message: String,
    },
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
    /// `.snapshot`, `.pt.trace` suffixes ([`workload_name`]).
    pub workload: String,
    /// Hardware, software and the trace file.
    pub fingerprint: Fingerprint,
    /// Whether the trace has any GPU work.
    pub has_gpu_activity: bool,
    /// GPU timeline over linked GPU work, µs.
    pub timeline: Breakdown,
    /// One entry per `ProfilerStep#N`.
    #[serde(default)]
    pub steps: Vec<StepSnapshot>,
    /// Op rows, most direct kernel time first.
    #[serde(default)]
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
}

/// The environment a trace was recorded in, and the trace file itself.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Fingerprint {
    /// GPU names from `deviceProperties`, with how many of each.
    pub gpus: Vec<GpuCount>,
    /// Devices in `deviceProperties`.
    pub gpu_count: u64,
    /// Devices that ran GPU work in the trace.
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
    /// ([`pytorch_version`]; set by the caller, the profile does not carry it).
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
/// text). It is TraceLens's unique-args key without the process and thread
/// labels, which carry process and thread ids that change from run to run.
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
    /// Up to [`MAX_SAMPLES`] per-invocation direct kernel times, µs, evenly
    /// spaced over the invocations in host-time order (all of them when
    /// there are no more than that).
    pub samples_us: Vec<f64>,
    /// Direct kernel time per profiler step: `(step number, µs)`.
    #[serde(default)]
    pub step_us: Vec<(u64, f64)>,
    /// Kernel names launched by the earliest invocation, in order.
    #[serde(default)]
    pub kernel_sequence: Vec<String>,
    /// FLOPs and bytes of one invocation, when a perf model covers the op.
    #[serde(default)]
    pub model: Option<OpModel>,
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
        }
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

impl Snapshot {
    /// The snapshot of an analysed trace. `trace_sha256` and `trace_bytes`
    /// describe the trace file as stored (see [`sha256_file`]);
    /// [`Fingerprint::pytorch_version`] is left empty for the caller to fill
    /// from the trace metadata ([`pytorch_version`]).
    pub fn from_profile(profile: &Profile, trace_sha256: String, trace_bytes: u64) -> Snapshot {
        let environment = &profile.environment;
        let mut gpus: Vec<GpuCount> = Vec::new();
        for device in &environment.devices {
            match gpus.iter_mut().find(|g| g.name == device.name) {
                Some(entry) => entry.count += 1,
                None => gpus.push(GpuCount {
                    name: device.name.clone(),
                    count: 1,
                }),
            }
        }
        let fingerprint = Fingerprint {
            gpus,
            gpu_count: environment.devices.len() as u64,
            active_devices: environment.active_devices.clone(),
            hardware: profile.hardware.name.clone(),
            hardware_how: profile.hardware.how.clone(),
            platform: environment.platform.clone(),
            cuda_runtime_version: environment.cuda_runtime_version.clone(),
            cuda_driver_version: environment.cuda_driver_version.clone(),
            hip_runtime_version: environment.hip_runtime_version.clone(),
            hip_driver_version: environment.hip_driver_version.clone(),
            tracer_version: environment.tracer_version.clone(),
            pytorch_version: None,
            rank: environment.rank,
            world_size: environment.world_size,
            distributed_backend: environment.distributed_backend.clone(),
            trace_sha256,
            trace_bytes,
            trace_json_bytes: profile.source.json_bytes,
        };
        let anomalies = &profile.anomalies;
        Snapshot {
            format: SNAPSHOT_FORMAT.to_string(),
            version: SNAPSHOT_VERSION,
            tracegate_version: env!("CARGO_PKG_VERSION").to_string(),
            workload: workload_name(Path::new(&profile.source.path)),
            fingerprint,
            has_gpu_activity: profile.has_gpu_activity,
            timeline: profile.timeline,
            steps: profile
                .steps
                .iter()
                .map(|step| StepSnapshot {
                    number: step.number,
                    host_duration_us: step.host_duration_us,
                    timeline: step.timeline,
                    kernel_time_us: step.kernel_time_us,
                })
                .collect(),
            ops: op_rows(&profile.unique_args),
            short_kernels: ShortKernelCounts {
                count: profile.short_kernel_histogram.iter().map(|b| b.count).sum(),
                time_us: profile.short_kernel_time_us,
            },
            idle: IdleCounts {
                host_wait_us: profile.idle.host_wait_us,
                kernel_wait_us: profile.idle.kernel_wait_us,
            },
            anomalies: AnomalyCounts {
                negative_durations: anomalies.negative_durations,
                missing_times: anomalies.missing_times,
                gpu_without_launch: anomalies.link.gpu_without_launch,
                launches_without_gpu: anomalies.link.launches_without_gpu,
                duplicate_correlations: anomalies.link.duplicate_correlations,
                improper_nesting: anomalies.link.improper_nesting,
                stream_overlaps: anomalies.stream_overlaps,
            },
        }
    }

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
    /// detected by its magic bytes `1f 8b`.
    pub fn from_reader(label: &str, reader: impl Read) -> Result<Snapshot, SnapshotError> {
        let mut reader = BufReader::new(reader);
        let gzip = peek_is_gzip(&mut reader).map_err(|source| SnapshotError::Io {
            path: label.to_string(),
            source,
        })?;
        let mut json = Vec::new();
        if gzip {
            MultiGzDecoder::new(reader)
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
                .read_to_end(&mut json)
                .map_err(|source| SnapshotError::Io {
                    path: label.to_string(),
                    source,
                })?;
        }
        Snapshot::from_json_bytes(label, &json)
    }

    /// Parses snapshot JSON; `label` names it in errors. Checks `format`
    /// and the major version before reading the rest.
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
        serde_json::from_slice(json).map_err(|error| invalid(error.to_string()))
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

/// The workload a file holds: its name without the directory and without
/// the suffixes `.gz`, `.json`, `.snapshot`, `.trace`, `.pt` (repeatedly,
/// in any order), so `bert.json.gz`, `bert.snapshot.json.gz` and
/// `bert.pt.trace.json` all name `bert`. Other dots stay
/// (`Qwen1.5-0.5B.json` → `Qwen1.5-0.5B`).
pub fn workload_name(path: &Path) -> String {
    let mut name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    const SUFFIXES: [&str; 5] = [".gz", ".json", ".snapshot", ".trace", ".pt"];
    while let Some(stripped) = SUFFIXES
        .iter()
        .find_map(|suffix| name.strip_suffix(suffix).filter(|s| !s.is_empty()))
    {
        name = stripped.to_string();
    }
    name
}

/// The PyTorch version a trace's top-level metadata records, if any: a
/// string under a key `pytorch_version`, `torch_version` or
/// `torch.__version__`, searched through nested objects (not arrays) up to
/// four levels deep, top level first. For example the TraceLens corpus
/// traces keep it at `metadata.system.torch_env_info.torch_version`.
pub fn pytorch_version(metadata: &Metadata) -> Option<String> {
    const KEYS: [&str; 3] = ["pytorch_version", "torch_version", "torch.__version__"];
    let mut level: Vec<(&str, &serde_json::Value)> = metadata
        .fields
        .iter()
        .map(|(k, v)| (k.as_str(), v))
        .collect();
    for _ in 0..4 {
        if let Some(found) = level.iter().find_map(|(key, value)| {
            KEYS.contains(key)
                .then(|| value.as_str())
                .flatten()
                .map(str::to_string)
        }) {
            return Some(found);
        }
        level = level
            .iter()
            .filter_map(|(_, value)| value.as_object())
            .flat_map(|object| object.iter().map(|(k, v)| (k.as_str(), v)))
            .collect();
    }
    None
}

/// Up to `limit` values evenly spaced by position: indices ⌊i·n/limit⌋.
pub fn spaced_sample(values: &[f64], limit: usize) -> Vec<f64> {
    let n = values.len();
    if n <= limit {
        return values.to_vec();
    }
    (0..limit).map(|i| values[i * n / limit]).collect()
}

/// The profile's unique-args rows as snapshot rows, merging rows that share
/// an [`OpKey`] (they differ only in process or thread): samples are
/// concatenated, step sums added, statistics recomputed; the first row
/// (most time) gives the category, module path, kernels and model.
fn op_rows(rows: &[UniqueArgs]) -> Vec<OpSnapshot> {
    /// A row with the samples and step sums of the rows merged into it.
    struct Merged<'a> {
        first: &'a UniqueArgs,
        samples: Vec<f64>,
        step_us: Vec<(u64, f64)>,
        merged: bool,
    }
    let mut index: std::collections::HashMap<OpKey, usize> = std::collections::HashMap::new();
    let mut rows_out: Vec<Merged> = Vec::new();
    for row in rows {
        let key = OpKey {
            name: row.name.clone(),
            input_dims: row.input_dims.clone(),
            input_type: row.input_type.clone(),
            input_strides: row.input_strides.clone(),
            concrete_inputs: row.concrete_inputs.clone(),
        };
        match index.get(&key) {
            Some(&slot) => {
                let entry = &mut rows_out[slot];
                entry.samples.extend_from_slice(&row.samples_us);
                for &(step, us) in &row.step_us {
                    match entry.step_us.iter_mut().find(|(s, _)| *s == step) {
                        Some(existing) => existing.1 += us,
                        None => entry.step_us.push((step, us)),
                    }
                }
                entry.step_us.sort_by_key(|(step, _)| *step);
                entry.merged = true;
            }
            None => {
                index.insert(key, rows_out.len());
                rows_out.push(Merged {
                    first: row,
                    samples: row.samples_us.clone(),
                    step_us: row.step_us.clone(),
                    merged: false,
                });
            }
        }
    }
    rows_out
        .into_iter()
        .map(|entry| {
            let row = entry.first;
            OpSnapshot {
                name: row.name.clone(),
                input_dims: row.input_dims.clone(),
                input_type: row.input_type.clone(),
                input_strides: row.input_strides.clone(),
                concrete_inputs: row.concrete_inputs.clone(),
                category: row.category,
                module_path: row.module_path.clone(),
                direct: if entry.merged {
                    Stats::of(&entry.samples)
                } else {
                    row.direct
                },
                samples_us: spaced_sample(&entry.samples, MAX_SAMPLES),
                step_us: entry.step_us,
                kernel_sequence: row.kernel_sequence.clone(),
                model: row.model.clone(),
            }
        })
        .collect()
}

/// SHA-256 (FIPS 180-4), streaming.
#[derive(Clone, Debug)]
pub struct Sha256 {
    state: [u32; 8],
    block: [u8; 64],
    filled: usize,
    length: u64,
}

const SHA256_K: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

impl Default for Sha256 {
    fn default() -> Sha256 {
        Sha256::new()
    }
}

impl Sha256 {
    /// A fresh hash.
    pub fn new() -> Sha256 {
        Sha256 {
            state: [
                0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
                0x5be0cd19,
            ],
            block: [0; 64],
            filled: 0,
            length: 0,
        }
    }

    /// Feeds bytes.
    pub fn update(&mut self, mut data: &[u8]) {
        self.length = self.length.wrapping_add(data.len() as u64);
        while !data.is_empty() {
            let take = (64 - self.filled).min(data.len());
            self.block[self.filled..self.filled + take].copy_from_slice(&data[..take]);
            self.filled += take;
            data = &data[take..];
            if self.filled == 64 {
                let block = self.block;
                self.compress(&block);
                self.filled = 0;
            }
        }
    }

    /// The digest as 64 lower-case hex digits.
    pub fn finish_hex(mut self) -> String {
        let bits = self.length.wrapping_mul(8);
        self.update(&[0x80]);
        while self.filled != 56 {
            self.update(&[0]);
        }
        self.update(&bits.to_be_bytes());
        self.state
            .iter()
            .map(|word| format!("{word:08x}"))
            .collect()
    }

    fn compress(&mut self, block: &[u8; 64]) {
        let mut w = [0u32; 64];
        for (i, chunk) in block.chunks_exact(4).enumerate() {
            w[i] = u32::from_be_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        }
        for i in 16..64 {
            let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
            let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16]
                .wrapping_add(s0)
                .wrapping_add(w[i - 7])
                .wrapping_add(s1);
        }
        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = self.state;
        for i in 0..64 {
            let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
            let ch = (e & f) ^ (!e & g);
            let t1 = h
                .wrapping_add(s1)
                .wrapping_add(ch)
                .wrapping_add(SHA256_K[i])
                .wrapping_add(w[i]);
            let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
            let maj = (a & b) ^ (a & c) ^ (b & c);
            let t2 = s0.wrapping_add(maj);
            h = g;
            g = f;
            f = e;
            e = d.wrapping_add(t1);
            d = c;
            c = b;
            b = a;
            a = t1.wrapping_add(t2);
        }
        for (state, value) in self.state.iter_mut().zip([a, b, c, d, e, f, g, h]) {
            *state = state.wrapping_add(value);
        }
    }
}

/// SHA-256 of bytes, lower-case hex.
pub fn sha256_hex(data: &[u8]) -> String {
    let mut hash = Sha256::new();
    hash.update(data);
    hash.finish_hex()
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
    Ok((hash.finish_hex(), size))
}

#[cfg(test)]
#[allow(clippy::print_stderr)] // a corpus test prints snapshot sizes
pub(crate) mod tests {
    use super::*;
    use crate::analysis::hardware::ComputeSpec;
    use std::collections::HashMap;
    use std::path::PathBuf;
    use std::sync::{Mutex, OnceLock};

    /// The shared corpus beside the checkout, for tests that are ignored
    /// without it (build.rs sets `tracegate_corpus`).
    pub(crate) fn corpus_dir() -> PathBuf {
        PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus"))
    }

    /// The analysed profile of a corpus trace (cached across tests), with
    /// its file's SHA-256 and size.
    pub(crate) fn corpus_profile(relative: &str) -> (Profile, String, u64) {
        type Analysed = (Profile, String, u64);
        static CACHE: OnceLock<Mutex<HashMap<String, Analysed>>> = OnceLock::new();
        let path = corpus_dir().join(relative);
        let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
        if let Some(found) = cache.lock().expect("cache").get(relative) {
            return found.clone();
        }
        let trace = crate::trace::load_file(&path, &mut |_| {}).expect("corpus trace loads");
        let tree = crate::trace::link::link(&trace);
        let profile = crate::analysis::profile::analyse(&trace, &tree);
        let (sha, bytes) = sha256_file(&path).expect("corpus trace readable");
        let entry = (profile, sha, bytes);
        cache
            .lock()
            .expect("cache")
            .insert(relative.to_string(), entry.clone());
        entry
    }

    /// The snapshot of a corpus trace.
    pub(crate) fn corpus_snapshot(relative: &str) -> Snapshot {
        let (profile, sha, bytes) = corpus_profile(relative);
        Snapshot::from_profile(&profile, sha, bytes)
    }

    #[test]
    fn sha256_test_vectors() {
        // FIPS 180-4 examples (NIST CSRC "SHA256.pdf").
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            sha256_hex(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
        // One million 'a', fed in uneven pieces.
        let mut hash = Sha256::new();
        let piece = [b'a'; 999];
        let mut left = 1_000_000;
        while left > 0 {
            let n = left.min(piece.len());
            hash.update(&piece[..n]);
            left -= n;
        }
        assert_eq!(
            hash.finish_hex(),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        );
    }

    #[test]
    fn sha256_of_a_file_streams() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("data.bin");
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &data).expect("write");
        assert_eq!(
            sha256_file(&path).expect("read"),
            (sha256_hex(&data), data.len() as u64)
        );
    }

    #[test]
    fn workload_names_drop_known_suffixes_only() {
        for (file, workload) in [
            ("dir/bert.json.gz", "bert"),
            ("bert.snapshot.json.gz", "bert"),
            ("host_1.1700000000.pt.trace.json", "host_1.1700000000"),
            (
                "Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
                "Qwen_Qwen1.5-0.5B-Chat__1016005",
            ),
            ("plain", "plain"),
            (".json", ".json"),
        ] {
            assert_eq!(workload_name(Path::new(file)), workload, "{file}");
        }
    }

    #[test]
    fn spaced_samples_are_evenly_spread_and_bounded() {
        let values: Vec<f64> = (0..200).map(f64::from).collect();
        let sample = spaced_sample(&values, 64);
        assert_eq!(sample.len(), 64);
        assert_eq!(sample[0], 0.0);
        assert_eq!(sample[1], 3.0);
        assert_eq!(sample[63], 196.0);
        assert_eq!(spaced_sample(&values[..10], 64), values[..10].to_vec());
    }

    fn tiny_snapshot() -> Snapshot {
        Snapshot {
            format: SNAPSHOT_FORMAT.to_string(),
            version: SNAPSHOT_VERSION,
            tracegate_version: "0.0.0".to_string(),
            workload: "tiny".to_string(),
            fingerprint: Fingerprint {
                cuda_runtime_version: Some("12040".to_string()),
                gpus: vec![GpuCount {
                    name: "NVIDIA H100 80GB HBM3".to_string(),
                    count: 8,
                }],
                ..Fingerprint::default()
            },
            has_gpu_activity: true,
            timeline: Breakdown {
                busy_time: 10.0,
                total_time: 12.0,
                idle_time: 2.0,
                computation_time: 10.0,
                ..Breakdown::default()
            },
            steps: Vec::new(),
            ops: vec![OpSnapshot {
                name: "aten::mm".to_string(),
                input_dims: "((2, 3), (3, 4))".to_string(),
                input_type: "('c10::BFloat16', 'c10::BFloat16')".to_string(),
                input_strides: "((3, 1), (4, 1))".to_string(),
                concrete_inputs: "('', '')".to_string(),
                category: Category::Gemm,
                module_path: Some("Model_0/Linear_0".to_string()),
                direct: Stats::of(&[1.0, 2.0]),
                samples_us: vec![1.0, 2.0],
                step_us: vec![(3, 3.0)],
                kernel_sequence: vec!["gemm_kernel".to_string()],
                model: Some(OpModel {
                    family: "GEMM".to_string(),
                    flops: 48.0,
                    bytes: 52.0,
                    compute_spec: Some(ComputeSpec::MatrixBf16),
                }),
            }],
            short_kernels: ShortKernelCounts::default(),
            idle: IdleCounts::default(),
            anomalies: AnomalyCounts::default(),
        }
    }

    #[test]
    fn gz_round_trip_is_exact_and_deterministic() {
        let snapshot = tiny_snapshot();
        let bytes = snapshot.to_gz_bytes();
        assert_eq!(&bytes[..2], &[0x1f, 0x8b]);
        assert_eq!(bytes, snapshot.to_gz_bytes());
        let back = Snapshot::from_reader("tiny.json.gz", &bytes[..]).expect("loads");
        assert_eq!(back, snapshot);
        // Plain JSON reads too, and `format` is the first key.
        let json = serde_json::to_vec(&snapshot).expect("json");
        assert!(json.starts_with(b"{\"format\":\"tracegate-snapshot\""));
        assert_eq!(
            Snapshot::from_reader("tiny.json", &json[..]).expect("loads"),
            snapshot
        );
    }

    #[test]
    fn fingerprint_text() {
        let snapshot = tiny_snapshot();
        assert_eq!(
            snapshot.fingerprint.gpus_text(),
            "8 × NVIDIA H100 80GB HBM3"
        );
        assert_eq!(
            snapshot.fingerprint.runtime_text().as_deref(),
            Some("CUDA 12.4")
        );
        let rocm = Fingerprint {
            hip_runtime_version: Some("60443483".to_string()),
            world_size: Some(8),
            rank: Some(3),
            ..Fingerprint::default()
        };
        assert_eq!(rocm.runtime_text().as_deref(), Some("HIP 6.4"));
        let summary = rocm.summary(2);
        assert_eq!(summary.distributed.as_deref(), Some("rank 3 of 8"));
        assert_eq!((summary.gpus.as_str(), summary.runs), ("unknown", 2));
    }

    fn json_with(edit: impl FnOnce(&mut serde_json::Value)) -> Vec<u8> {
        let mut value = serde_json::to_value(tiny_snapshot()).expect("value");
        edit(&mut value);
        serde_json::to_vec(&value).expect("json")
    }

    #[test]
    fn unknown_fields_of_a_newer_minor_version_are_ignored() {
        let json = json_with(|v| {
            v["version"]["minor"] = 7.into();
            v["future_field"] = serde_json::json!({"anything": [1, 2]});
            v["ops"][0]["future_op_field"] = 1.into();
            v["fingerprint"]["future"] = "x".into();
        });
        let loaded = Snapshot::from_json_bytes("new.json", &json).expect("a newer minor loads");
        assert_eq!(loaded.version, SnapshotVersion { major: 1, minor: 7 });
        assert_eq!(loaded.ops, tiny_snapshot().ops);
    }

    #[test]
    fn an_incompatible_major_version_is_a_clear_error() {
        let json = json_with(|v| v["version"]["major"] = 2.into());
        let error = Snapshot::from_json_bytes("base.json.gz", &json).expect_err("major 2");
        assert!(matches!(error, SnapshotError::Incompatible { .. }));
        let message = error.to_string();
        assert!(
            message.starts_with("base.json.gz: snapshot format version 2.0"),
            "{message}"
        );
        assert!(message.contains("reads version 1.x"), "{message}");
    }

    #[test]
    fn missing_and_invalid_snapshots_name_the_file() {
        let missing =
            Snapshot::load_path(Path::new("/nonexistent/base.json.gz")).expect_err("missing");
        assert!(
            missing
                .to_string()
                .starts_with("/nonexistent/base.json.gz: cannot read")
        );
        let trace = br#"{"traceEvents": []}"#;
        let error = Snapshot::from_json_bytes("t.json", trace).expect_err("a trace");
        assert_eq!(
            error.to_string(),
            "t.json: not a tracegate snapshot: no `format` key"
        );
        let error = Snapshot::from_json_bytes("t.json", b"{\"format\": ").expect_err("cut");
        assert!(
            error
                .to_string()
                .starts_with("t.json: invalid snapshot: bad JSON"),
            "{error}"
        );
        let error = Snapshot::from_json_bytes("t.json", b"[1, 2]").expect_err("array");
        assert!(matches!(error, SnapshotError::NotSnapshot { .. }));
        let json = json_with(|v| v["ops"][0]["direct"] = "fast".into());
        let error = Snapshot::from_json_bytes("s.json", &json).expect_err("bad field");
        assert!(
            error.to_string().starts_with("s.json: invalid snapshot: "),
            "{error}"
        );
        let broken = &tiny_snapshot().to_gz_bytes()[..30];
        let error = Snapshot::from_reader("s.json.gz", broken).expect_err("cut gzip");
        assert!(error.to_string().contains("broken gzip stream"), "{error}");
    }

    #[test]
    fn sniffing_tells_snapshots_from_traces() {
        let dir = tempfile::tempdir().expect("temp dir");
        let snapshot = dir.path().join("base.json.gz");
        tiny_snapshot().write_path(&snapshot).expect("write");
        assert!(is_snapshot(&snapshot).expect("readable"));
        let plain = dir.path().join("base.json");
        let pretty = serde_json::to_vec_pretty(&tiny_snapshot()).expect("json");
        std::fs::write(&plain, pretty).expect("write");
        assert!(is_snapshot(&plain).expect("readable"));
        let trace = dir.path().join("trace.json");
        std::fs::write(&trace, br#"{"schemaVersion": 1, "traceEvents": []}"#).expect("write");
        assert!(!is_snapshot(&trace).expect("readable"));
        let garbage = dir.path().join("bad.gz");
        std::fs::write(&garbage, [0x1f, 0x8b, 0, 1, 2, 3]).expect("write");
        assert!(!is_snapshot(&garbage).expect("readable"));
        assert!(is_snapshot(&dir.path().join("absent")).is_err());
        let fixture = Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/small_cuda.json"
        ));
        assert!(!is_snapshot(fixture).expect("fixture readable"));
    }

    #[test]
    fn pytorch_version_is_found_in_nested_metadata() {
        let metadata = Metadata {
            fields: vec![
                ("schemaVersion".to_string(), 1.into()),
                (
                    "metadata".to_string(),
                    serde_json::json!({"system": {"torch_env_info": {"torch_version": "2.6.0+cu124"}},
                                       "pip_packages": ["torch==2.5.0"]}),
                ),
            ],
            devices: Vec::new(),
        };
        assert_eq!(pytorch_version(&metadata).as_deref(), Some("2.6.0+cu124"));
        let top = Metadata {
            fields: vec![("pytorch_version".to_string(), "2.7.1".into())],
            devices: Vec::new(),
        };
        assert_eq!(pytorch_version(&top).as_deref(), Some("2.7.1"));
        assert_eq!(pytorch_version(&Metadata::default()), None);
    }

    #[test]
    #[cfg_attr(
        not(tracegate_corpus),
        ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
    )]
    fn corpus_pytorch_versions() {
        let dir = corpus_dir();
        for (relative, version) in [
            (
                "tracelens/h100/gaunernst_bert-small-uncased__1016001.json.gz",
                Some("2.6.0+cu124"),
            ),
            (
                "tracelens/mi300/gaunernst_bert-small-uncased__1016001.json.gz",
                Some("2.7.0+gitf717b2a"),
            ),
            ("hta/triton_example.json.gz", None),
        ] {
            let trace = crate::trace::load_file(&dir.join(relative), &mut |_| {}).expect("loads");
            assert_eq!(
                pytorch_version(&trace.metadata).as_deref(),
                version,
                "{relative}"
            );
        }
    }

    #[test]
    #[cfg_attr(
        not(tracegate_corpus),
        ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
    )]
    fn corpus_snapshots_round_trip_and_stay_small() {
        let dir = corpus_dir();
        for relative in [
            "tracelens/h100/gaunernst_bert-small-uncased__1016001.json.gz",
            "tracelens/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
            "tracelens/mi300/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
            "hta/trace_diff_control_a100.json.gz",
        ] {
            let (profile, sha, bytes) = corpus_profile(relative);
            let snapshot = Snapshot::from_profile(&profile, sha.clone(), bytes);
            assert_eq!(snapshot.fingerprint.trace_sha256, sha);
            assert_eq!(sha.len(), 64);
            assert!(
                snapshot
                    .ops
                    .iter()
                    .all(|op| op.samples_us.len() <= MAX_SAMPLES)
            );
            assert!(
                snapshot
                    .ops
                    .iter()
                    .all(|op| op.direct.count >= op.samples_us.len() as u64)
            );
            let gz = snapshot.to_gz_bytes();
            let json_bytes = profile.source.json_bytes;
            assert!(
                gz.len() as f64 <= 0.05 * json_bytes as f64,
                "{relative}: snapshot {} bytes vs trace JSON {json_bytes} bytes",
                gz.len()
            );
            let path = std::env::temp_dir().join(format!(
                "tracegate-snapshot-test-{}-{}.json.gz",
                std::process::id(),
                snapshot.workload
            ));
            std::fs::write(&path, &gz).expect("write temp snapshot");
            assert!(is_snapshot(&path).expect("readable"));
            assert!(!is_snapshot(&dir.join(relative)).expect("readable"));
            let started = std::time::Instant::now();
            let back = Snapshot::load_path(&path).expect("loads");
            let load_ms = started.elapsed().as_secs_f64() * 1e3;
            std::fs::remove_file(&path).expect("remove temp snapshot");
            assert_eq!(back, snapshot, "{relative}");
            eprintln!(
                "{relative}: {} op rows, snapshot {} bytes ({:.2}% of {json_bytes} JSON bytes), loaded in {load_ms:.1} ms",
                snapshot.ops.len(),
                gz.len(),
                100.0 * gz.len() as f64 / json_bytes as f64
            );
        }
    }

    #[test]
    #[cfg_attr(
        not(tracegate_corpus),
        ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
    )]
    fn corpus_fingerprint_records_the_environment() {
        let snapshot = corpus_snapshot("tracelens/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz");
        let fingerprint = &snapshot.fingerprint;
        assert_eq!(snapshot.workload, "Qwen_Qwen1.5-0.5B-Chat__1016005");
        assert_eq!(fingerprint.gpus_text(), "1 × NVIDIA H100 80GB HBM3");
        assert_eq!(fingerprint.hardware.as_deref(), Some("H100 SXM"));
        assert_eq!(fingerprint.runtime_text().as_deref(), Some("CUDA 12.4"));
        assert!(snapshot.has_gpu_activity);
        assert!(snapshot.ops.iter().any(|op| op.model.is_some()));
    }
}
