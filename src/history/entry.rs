//! One run recorded in the history: which workload, commit, branch, time,
//! pull request and CI run it came from, and the few figures `history list`
//! shows without opening the snapshot.

use serde::{Deserialize, Serialize};

use crate::gate::snapshot::Snapshot;

/// What the history records about one run of one workload, beside its
/// snapshot. One line of the index holds one of these.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EntryMeta {
    /// The workload ([`Snapshot::workload`], or as given).
    pub workload: String,
    /// The commit the run measured (full or abbreviated SHA, as given).
    pub commit: String,
    /// The branch the commit was on (`main`, a PR's head branch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// When the run was recorded, RFC 3339 in UTC (`2026-11-24T09:30:00Z`);
    /// entries are ordered by it.
    pub time: String,
    /// The pull request, when the run was one's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pr: Option<u64>,
    /// The CI run's URL, for the dashboard's links.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_url: Option<String>,
    /// Catalog hardware of the run (`H100 SXM`), when known; the baseline
    /// window only takes runs on the same hardware.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hardware: Option<String>,
    /// GPUs as text ([`crate::gate::snapshot::Fingerprint::gpus_text`]).
    pub gpus: String,
    /// Runtime as text (`CUDA 12.4`), when recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<String>,
    /// PyTorch version, when recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pytorch: Option<String>,
    /// Profiler steps in the trace (0 when it has none).
    pub steps: u64,
    /// GPU computation time of the run, µs (the timeline's computation union).
    pub computation_time_us: f64,
    /// GPU busy time of the run, µs.
    pub busy_time_us: f64,
    /// The snapshot file, relative to the history directory (`/`-separated).
    pub file: String,
}

impl EntryMeta {
    /// The run's record from its snapshot and where it came from; `file` is
    /// left empty for the store to fill in.
    pub fn of_snapshot(snapshot: &Snapshot, origin: Origin) -> EntryMeta {
        let fingerprint = &snapshot.fingerprint;
        EntryMeta {
            workload: snapshot.workload.clone(),
            commit: origin.commit,
            branch: origin.branch,
            time: origin.time,
            pr: origin.pr,
            run_url: origin.run_url,
            hardware: fingerprint.hardware.clone(),
            gpus: fingerprint.gpus_text(),
            runtime: fingerprint.runtime_text(),
            pytorch: fingerprint.pytorch_version.clone(),
            steps: snapshot.steps.len() as u64,
            computation_time_us: snapshot.timeline.computation_time,
            busy_time_us: snapshot.timeline.busy_time,
            file: String::new(),
        }
    }

    /// GPU computation time per profiler step, µs (the whole run's when the
    /// trace has no steps): the workload's point in its series.
    pub fn computation_per_step_us(&self) -> f64 {
        self.computation_time_us / self.steps.max(1) as f64
    }

    /// The environment the dashboard marks changes of: GPUs, runtime and
    /// PyTorch, as one line.
    pub fn environment(&self) -> String {
        let mut parts = vec![self.gpus.clone()];
        parts.extend(self.runtime.clone());
        parts.extend(self.pytorch.as_ref().map(|p| format!("PyTorch {p}")));
        parts.join(" · ")
    }
}

/// Where a run came from: what CI (or the user) says about it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Origin {
    /// The commit.
    pub commit: String,
    /// The branch.
    pub branch: Option<String>,
    /// When, RFC 3339 UTC.
    pub time: String,
    /// The pull request.
    pub pr: Option<u64>,
    /// The CI run's URL.
    pub run_url: Option<String>,
}
