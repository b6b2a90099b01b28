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
//! anomaly counts. Rows of graph-replayed work carry their place in the
//! graph; each graph adds a whole-graph row (`analysis::graph`). A trace
//! with communication kernels keeps its rank's kernels and exposed
//! communication; the snapshots of one job's ranks merge into one.
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
//!
//! # Files
//!
//! `format.rs` holds the stored types; `bounds.rs` what a snapshot may
//! hold (the writer keeps it, lists are counted as they are read) and
//! `check.rs` the reader's check of the rest; `from_profile.rs`
//! builds them from an analysed profile; `io.rs` writes and reads the gzip
//! JSON, checks the version and sniffs files; `ranks.rs` keeps a rank's
//! communication and merges the snapshots of one job's ranks; `source.rs` names the
//! workload and finds the PyTorch version; `sha256.rs` hashes the trace
//! file.

mod bounds;
mod check;
mod families;
mod format;
mod from_profile;
#[cfg(test)]
mod fuzz;
mod io;
mod ranks;
mod sha256;
mod source;
#[cfg(test)]
#[allow(clippy::print_stderr)] // corpus tests say when they skip, and print sizes
pub(crate) mod tests;

pub use bounds::{
    MAX_COMM_KERNELS, MAX_DEVICES, MAX_JSON_BYTES, MAX_KERNELS, MAX_MODEL_COUNT, MAX_OPS,
    MAX_RANKS, MAX_SAMPLES, MAX_STEPS, MAX_STRING_BYTES, MAX_TIME_US,
};
pub use format::{
    AnomalyCounts, CommKernelSnapshot, Fingerprint, GpuCount, IdleCounts, InferenceStepSnapshot,
    KernelSamples, OpKey, OpSnapshot, PhaseOpsSnapshot, RankSnapshot, SNAPSHOT_FORMAT,
    SNAPSHOT_VERSION, SNAPSHOT_VERSION_1_0, SNAPSHOT_VERSION_1_1, SNAPSHOT_VERSION_1_2,
    SNAPSHOT_VERSION_1_3, ShortKernelCounts, Snapshot, SnapshotVersion, StepSnapshot,
};
pub use from_profile::spaced_sample;
pub use io::{SNIFF_BYTES, SnapshotError, is_snapshot};
pub use ranks::{RankSetError, missing_ranks};
pub use sha256::{sha256_file, sha256_hex};
pub use source::{artifact_file_name, pytorch_version, workload_name};
