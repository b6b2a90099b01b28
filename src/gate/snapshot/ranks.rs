//! The ranks of a snapshot: one rank's communication kept from its trace
//! ([`RankSnapshot::of`]), read back as the input of the rank-set analysis
//! ([`Snapshot::rank_inputs`]), and the snapshots of one job's ranks merged
//! into one ([`Snapshot::merge_ranks`]) wherever each was made.
//!
//! A merged snapshot's op rows, steps and timeline are those of its lowest
//! rank (docs/ARCHITECTURE.md#many-machines says why); its `ranks` hold
//! every rank's communication, which the gate judges over all ranks.

use std::collections::BTreeMap;
use std::fmt;

use super::bounds::{MAX_KERNELS, stored_string, stored_time};
use super::format::{
    AnomalyCounts, CommKernelSnapshot, Fingerprint, IdleCounts, KernelSamples, RankSnapshot,
    SNAPSHOT_FORMAT, SNAPSHOT_VERSION, ShortKernelCounts, Snapshot,
};
use super::from_profile::stored_kernel;
use crate::analysis::ranks::input::rank_in_name;
use crate::analysis::ranks::{CommKernel, CommTime, RankInput};
use crate::analysis::timeline::Breakdown;

/// Why the snapshots given as one job's ranks are not a rank set; one line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankSetError(pub String);

impl fmt::Display for RankSetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RankSetError {}

impl RankSnapshot {
    /// One rank's communication: `kernels` (from
    /// [`crate::analysis::ranks::input::rank_input`]) and its exposed and
    /// total communication time (from
    /// [`crate::analysis::ranks::input::comm_time`], as `report DIR` reads
    /// it).
    pub fn of(
        rank: Option<u32>,
        source: &str,
        kernels: &[CommKernel],
        comm_time: &CommTime,
    ) -> RankSnapshot {
        RankSnapshot {
            rank,
            source: stored_string(source),
            exposed_comm_us: stored_time(comm_time.exposed_us),
            total_comm_us: stored_time(comm_time.total_us),
            kernels: kernels
                .iter()
                .take(super::bounds::MAX_COMM_KERNELS)
                .map(|k| CommKernelSnapshot {
                    start_us: if k.start_us.is_finite() {
                        k.start_us
                    } else {
                        0.0
                    },
                    duration_us: stored_time(k.duration_us),
                    collective: k.collective,
                    stream: k.stream,
                    process_group: k.process_group.as_deref().map(stored_string),
                    seq: k.seq,
                    bytes: k.bytes,
                    dtype: k.dtype.as_deref().map(stored_string),
                    group_size: k.group_size,
                })
                .collect(),
            kernel_families: comm_families(kernels),
        }
    }
}

/// A rank's communication kernels by name: each name's durations in start
/// order, as stored ([`stored_kernel`]), most time first, at most
/// [`MAX_KERNELS`].
fn comm_families(kernels: &[CommKernel]) -> Vec<KernelSamples> {
    let mut by_name: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for kernel in kernels {
        by_name
            .entry(kernel.kernel.as_str())
            .or_default()
            .push(kernel.duration_us);
    }
    let mut families: Vec<KernelSamples> = by_name
        .into_iter()
        .map(|(name, durations)| stored_kernel(name, &durations))
        .collect();
    families.sort_by(|a, b| b.total_us.total_cmp(&a.total_us).then(a.name.cmp(&b.name)));
    families.truncate(MAX_KERNELS);
    families
}

impl Snapshot {
    /// A snapshot holding only one rank's communication: what a rank other
    /// than the lowest contributes to [`Snapshot::merge_ranks`], read
    /// without analysing its trace (`rank` has kernels).
    pub fn of_rank(rank: RankSnapshot) -> Snapshot {
        Snapshot {
            format: SNAPSHOT_FORMAT.to_string(),
            version: SNAPSHOT_VERSION,
            tracegate_version: env!("CARGO_PKG_VERSION").to_string(),
            workload: String::new(),
            fingerprint: Fingerprint::default(),
            has_gpu_activity: true,
            timeline: Breakdown::default(),
            steps: Vec::new(),
            ops: Vec::new(),
            short_kernels: ShortKernelCounts::default(),
            idle: IdleCounts::default(),
            anomalies: AnomalyCounts::default(),
            coverage: None,
            inference_steps: Vec::new(),
            phase_ops: Vec::new(),
            ranks: vec![rank],
            kernel_families: Vec::new(),
        }
    }

    /// This snapshot with one rank's communication (version 1.4); unchanged
    /// when the rank ran no communication kernel, so a single-GPU trace's
    /// snapshot stays what it was.
    pub fn with_rank(mut self, rank: RankSnapshot) -> Snapshot {
        if !rank.kernels.is_empty() {
            self.ranks = vec![rank];
            self.version = SNAPSHOT_VERSION;
        }
        self
    }

    /// The input of [`crate::analysis::ranks::analyse`]: each rank's
    /// kernels (named by their collective), by rank; ranks without a number
    /// are left out.
    pub fn rank_inputs(&self) -> Vec<RankInput> {
        let mut inputs: Vec<RankInput> = self
            .ranks
            .iter()
            .filter_map(|r| {
                Some(RankInput {
                    rank: r.rank?,
                    source: r.source.clone(),
                    kernels: r
                        .kernels
                        .iter()
                        .map(|k| CommKernel {
                            start_us: k.start_us,
                            duration_us: k.duration_us,
                            stream: k.stream,
                            kernel: k.collective.name().to_string(),
                            collective: k.collective,
                            process_group: k.process_group.clone(),
                            seq: k.seq,
                            bytes: k.bytes,
                            dtype: k.dtype.clone(),
                            group_size: k.group_size,
                        })
                        .collect(),
                })
            })
            .collect();
        inputs.sort_by_key(|input| input.rank);
        inputs
    }

    /// This one rank's snapshot told as rank `rank`, whatever its trace
    /// recorded (`--rank-regex` reads ranks from file names); `None` when
    /// it holds several ranks already.
    pub fn as_rank(mut self, rank: u32) -> Option<Snapshot> {
        if self.ranks.len() > 1 {
            return None;
        }
        for part in &mut self.ranks {
            part.rank = Some(rank);
        }
        self.fingerprint.rank = Some(i64::from(rank));
        Some(self)
    }

    /// The ranks this snapshot holds, by rank.
    pub fn rank_numbers(&self) -> Vec<u32> {
        let mut numbers: Vec<u32> = self.ranks.iter().filter_map(|r| r.rank).collect();
        numbers.sort_unstable();
        numbers
    }

    /// One snapshot of a job's ranks from the snapshots of its ranks (each
    /// of one rank, or already merged), each with its file name: the lowest
    /// rank's snapshot (op rows, steps, timeline, fingerprint) holding every
    /// rank's communication, named `workload`. A rank is the one its
    /// snapshot recorded, else `distributedInfo.rank`, else `rank<N>` in
    /// the file name; a rank without communication kernels is kept with
    /// none. Also returns the index of the part the op rows came from.
    /// Errors: a snapshot whose rank cannot be told, a rank twice, no
    /// snapshot.
    pub fn merge_ranks(
        parts: Vec<(String, Snapshot)>,
        workload: &str,
    ) -> Result<(Snapshot, usize), RankSetError> {
        // Each rank with the file it came from.
        let mut ranks: Vec<(String, RankSnapshot)> = Vec::new();
        let mut lowest: Option<(u32, usize, Snapshot)> = None;
        for (index, (name, mut snapshot)) in parts.into_iter().enumerate() {
            let fallback = snapshot
                .fingerprint
                .rank
                .and_then(|r| u32::try_from(r).ok())
                .or_else(|| rank_in_name(&name));
            let mut own = std::mem::take(&mut snapshot.ranks);
            if own.is_empty() {
                // No trace to read: its timeline is all it has.
                let comm_time = CommTime::of(&snapshot.timeline);
                own.push(RankSnapshot::of(None, &name, &[], &comm_time));
            }
            let single = own.len() == 1;
            let mut part_lowest = u32::MAX;
            for mut rank in own {
                if rank.rank.is_none() && single {
                    rank.rank = fallback;
                }
                let Some(number) = rank.rank else {
                    return Err(RankSetError(format!(
                        "{name}: cannot tell its rank: no distributedInfo.rank and no rank<N> in \
                         the file name"
                    )));
                };
                if let Some((other, _)) = ranks.iter().find(|(_, r)| r.rank == Some(number)) {
                    return Err(RankSetError(format!(
                        "{other} and {name} are both rank {number}"
                    )));
                }
                part_lowest = part_lowest.min(number);
                ranks.push((name.clone(), rank));
            }
            if lowest.as_ref().is_none_or(|(low, ..)| part_lowest < *low) {
                lowest = Some((part_lowest, index, snapshot));
            }
        }
        let (_, index, mut merged) = lowest.ok_or_else(|| {
            RankSetError(format!("{workload}: no rank snapshots or traces to merge"))
        })?;
        ranks.sort_by_key(|(_, r)| r.rank);
        merged.ranks = ranks.into_iter().map(|(_, r)| r).collect();
        merged.workload = stored_string(workload);
        merged.version = merged.version.max(SNAPSHOT_VERSION);
        Ok((merged, index))
    }

    /// This snapshot without its op rows and steps: what a rank other than
    /// the lowest contributes to a merge, so that reading a thousand ranks
    /// holds one rank's rows.
    pub fn without_rows(self) -> Snapshot {
        Snapshot {
            steps: Vec::new(),
            ops: Vec::new(),
            inference_steps: Vec::new(),
            phase_ops: Vec::new(),
            ..self
        }
    }

    /// `merged`'s ranks, workload and version on this snapshot's rows (the
    /// full snapshot of the part [`Snapshot::merge_ranks`] based `merged`
    /// on, read again after a merge of [`Snapshot::without_rows`]).
    pub fn with_ranks_of(self, merged: Snapshot) -> Snapshot {
        Snapshot {
            ranks: merged.ranks,
            workload: merged.workload,
            version: merged.version,
            ..self
        }
    }
}

/// The ranks one side has and the other lacks, as an error naming them;
/// `None` when both hold the same ranks.
pub fn missing_ranks(baseline: &[u32], candidate: &[u32]) -> Option<RankSetError> {
    let lacking = |of: &[u32], from: &[u32]| -> Vec<String> {
        from.iter()
            .filter(|r| !of.contains(r))
            .map(u32::to_string)
            .collect()
    };
    let (no_candidate, no_baseline) = (lacking(candidate, baseline), lacking(baseline, candidate));
    if no_candidate.is_empty() && no_baseline.is_empty() {
        return None;
    }
    let mut parts = Vec::new();
    if !no_candidate.is_empty() {
        parts.push(format!(
            "the candidate lacks rank(s) {} of the baseline",
            no_candidate.join(", ")
        ));
    }
    if !no_baseline.is_empty() {
        parts.push(format!(
            "the baseline lacks rank(s) {} of the candidate",
            no_baseline.join(", ")
        ));
    }
    Some(RankSetError(format!(
        "the rank sets differ: {}",
        parts.join("; ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::ranks::collective::Collective;
    use crate::gate::snapshot::tests::tiny_snapshot;

    fn kernel(start_us: f64) -> CommKernel {
        CommKernel {
            start_us,
            duration_us: 100.0,
            stream: Some(20),
            kernel: "ncclDevKernel_AllReduce_Sum_bf16_RING_LL".to_string(),
            collective: Collective::AllReduce,
            process_group: Some("0".to_string()),
            seq: None,
            bytes: Some(2 << 20),
            dtype: Some("BFloat16".to_string()),
            group_size: Some(2),
        }
    }

    /// One rank's snapshot: the tiny snapshot with `ops_name` as its row and
    /// two all-reduces recorded as `rank`.
    fn rank_snapshot(rank: Option<u32>, ops_name: &str) -> Snapshot {
        let mut snapshot = tiny_snapshot();
        snapshot.ops[0].name = ops_name.to_string();
        let part = RankSnapshot::of(
            rank,
            "trace.json",
            &[kernel(1000.0), kernel(2000.0)],
            &CommTime::of(&snapshot.timeline),
        );
        snapshot.with_rank(part)
    }

    #[test]
    fn a_rank_without_communication_leaves_the_snapshot_as_it_was() {
        let snapshot = tiny_snapshot();
        let part = RankSnapshot::of(Some(0), "t.json", &[], &CommTime::default());
        assert_eq!(snapshot.clone().with_rank(part), snapshot);
        let with = rank_snapshot(Some(0), "aten::mm");
        assert_eq!(with.version, SNAPSHOT_VERSION);
        let read = Snapshot::from_json_bytes("x", &serde_json::to_vec(&with).unwrap()).unwrap();
        assert_eq!(read, with);
    }

    #[test]
    fn ranks_merge_in_rank_order_on_the_lowest_ranks_rows() {
        let parts = vec![
            (
                "b.snapshot.json.gz".to_string(),
                rank_snapshot(Some(3), "three"),
            ),
            (
                "a.snapshot.json.gz".to_string(),
                rank_snapshot(Some(1), "one"),
            ),
            ("rank2.json.gz".to_string(), rank_snapshot(None, "two")),
        ];
        let (merged, index) = Snapshot::merge_ranks(parts, "job").unwrap();
        assert_eq!(index, 1);
        assert_eq!(merged.workload, "job");
        assert_eq!(merged.ops[0].name, "one");
        assert_eq!(merged.rank_numbers(), vec![1, 2, 3]);
        let inputs = merged.rank_inputs();
        assert_eq!(inputs.len(), 3);
        assert_eq!(inputs[1].rank, 2);
        assert_eq!(inputs[1].kernels[1].start_us, 2000.0);
        assert_eq!(inputs[1].kernels[1].collective, Collective::AllReduce);
        // A merged set merges again with more ranks (a tree of merges).
        let more = vec![
            ("set".to_string(), merged),
            ("rank0.json".to_string(), rank_snapshot(Some(0), "zero")),
        ];
        let (again, index) = Snapshot::merge_ranks(more, "job").unwrap();
        assert_eq!((index, again.ops[0].name.as_str()), (1, "zero"));
        assert_eq!(again.rank_numbers(), vec![0, 1, 2, 3]);
    }

    #[test]
    fn a_rank_twice_or_no_rank_is_an_error_naming_the_files() {
        let twice = vec![
            ("a.json".to_string(), rank_snapshot(Some(1), "x")),
            ("b.json".to_string(), rank_snapshot(Some(1), "x")),
        ];
        assert_eq!(
            Snapshot::merge_ranks(twice, "job").unwrap_err().to_string(),
            "a.json and b.json are both rank 1"
        );
        let nameless = vec![("mystery.json".to_string(), rank_snapshot(None, "x"))];
        assert!(
            Snapshot::merge_ranks(nameless, "job")
                .unwrap_err()
                .to_string()
                .starts_with("mystery.json: cannot tell its rank")
        );
        // No communication and no rank entry: distributedInfo.rank says.
        let mut quiet = tiny_snapshot();
        quiet.fingerprint.rank = Some(5);
        let (merged, _) = Snapshot::merge_ranks(vec![("q.json".into(), quiet)], "job").unwrap();
        assert_eq!(merged.rank_numbers(), vec![5]);
        assert!(merged.ranks[0].kernels.is_empty());
        assert!(Snapshot::merge_ranks(Vec::new(), "job").is_err());
    }

    #[test]
    fn missing_ranks_are_named_for_each_side() {
        assert_eq!(missing_ranks(&[0, 1, 2], &[0, 1, 2]), None);
        assert_eq!(
            missing_ranks(&[0, 1, 2, 3], &[0, 1, 4])
                .unwrap()
                .to_string(),
            "the rank sets differ: the candidate lacks rank(s) 2, 3 of the baseline; \
             the baseline lacks rank(s) 4 of the candidate"
        );
    }
}
