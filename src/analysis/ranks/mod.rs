//! Rank sets: the traces of one distributed job's ranks read together.
//!
//! Each rank's trace alone shows its collectives' kernels but not why they
//! took as long as they did: an NCCL kernel starts when its rank gets there
//! and spins until the last rank arrives. Matching each collective across
//! ranks shows the skew in arrival, who waited for whom (the straggler
//! table), and the bandwidth the collective reached once all ranks were in.
//!
//! `input` reads one rank's communication kernels from its trace (and, for
//! [`RankContext`], its GPU and how much of its communication computation
//! hid), `collective` names their kind and message size, and
//! [`analyse_with`] matches and measures them, reading bus bandwidth
//! against the GPUs' link (`link`). Plain functions: the binary loads the
//! files.

pub mod collective;
pub mod input;
pub mod link;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::analysis::hardware::Hardware;
use crate::analysis::timeline::Breakdown;
use collective::Collective;
use link::LinkUsed;

/// One rank's communication kernels.
#[derive(Clone, Debug, PartialEq)]
pub struct RankInput {
    /// The rank's number.
    pub rank: u32,
    /// The trace it came from, for messages.
    pub source: String,
    /// Its communication kernels, in start order.
    pub kernels: Vec<CommKernel>,
}

/// One communication kernel and what its trace recorded about it.
#[derive(Clone, Debug, PartialEq)]
pub struct CommKernel {
    /// Start, µs.
    pub start_us: f64,
    /// Duration, µs (waiting for the other ranks included).
    pub duration_us: f64,
    /// The stream it ran on.
    pub stream: Option<i64>,
    /// The kernel's name.
    pub kernel: String,
    /// The collective it runs.
    pub collective: Collective,
    /// `Process Group Name`, when recorded.
    pub process_group: Option<String>,
    /// `Seq`, when recorded.
    pub seq: Option<i64>,
    /// The message's bytes ([`collective::message_bytes`]), when recorded.
    pub bytes: Option<u64>,
    /// `dtype`, when recorded.
    pub dtype: Option<String>,
    /// `Group size`, when recorded.
    pub group_size: Option<u32>,
}

/// One collective call as every rank ran it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Instance {
    /// The collective.
    pub collective: Collective,
    /// The process group (`pg 0`) or, when none was recorded, the rank's
    /// communication stream by first use (`comm stream 0`) it was matched
    /// within.
    pub group: String,
    /// `Seq`, when recorded.
    pub seq: Option<i64>,
    /// Each rank's arrival, by rank.
    pub arrivals: Vec<Arrival>,
    /// Last arrival's start minus the first's, µs.
    pub skew_us: f64,
    /// The last-arriving rank's kernel duration, µs: the collective's own
    /// time, with no rank left to wait for.
    pub duration_us: f64,
    /// The message's bytes, when recorded.
    pub bytes: Option<u64>,
    /// Ranks the collective spans: `Group size` when recorded, else the
    /// ranks it was matched on.
    pub group_size: u32,
    /// The rank that arrived last (the lowest of those tied), `None` when
    /// all arrived together.
    pub last: Option<u32>,
}

/// One rank's part in an [`Instance`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Arrival {
    /// The rank.
    pub rank: u32,
    /// Its kernel's start, µs.
    pub start_us: f64,
    /// Its kernel's duration, µs.
    pub duration_us: f64,
    /// From its start to the last rank's start, µs.
    pub wait_us: f64,
}

/// Every instance of one collective, summed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CollectiveRow {
    /// The collective.
    pub collective: Collective,
    /// Instances matched.
    pub count: u64,
    /// The most ranks one instance spans.
    pub group_size: u32,
    /// Sum of the instances' durations, µs.
    pub total_us: f64,
    /// Mean duration, µs.
    pub mean_us: f64,
    /// Mean start skew, µs.
    pub mean_skew_us: f64,
    /// Largest start skew, µs.
    pub max_skew_us: f64,
    /// Bytes moved by the instances that recorded their message size.
    pub bytes: Option<u64>,
    /// Algorithm bandwidth, GB/s: those bytes over those instances' time.
    pub algbw_gbps: Option<f64>,
    /// Bus bandwidth, GB/s: algorithm bandwidth times the collective's
    /// factor for its group size ([`Collective::bus_factor`]).
    pub busbw_gbps: Option<f64>,
    /// Bus bandwidth as a percentage of the link's per-direction peak
    /// ([`RankSet::link`]); `None` when the GPU or its link is unknown.
    pub busbw_link_pct: Option<f64>,
}

/// One rank's row of the straggler table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StragglerRow {
    /// The rank.
    pub rank: u32,
    /// Instances it took part in.
    pub collectives: u64,
    /// Instances it arrived last at (with some skew).
    pub last: u64,
    /// The other ranks' wait at those instances, µs.
    pub caused_wait_us: f64,
    /// Its own wait for later ranks, µs.
    pub waited_us: f64,
    /// Instances it arrived first at (with some skew; the lowest of those
    /// tied).
    pub first: u64,
    /// Its communication kernels' summed durations, µs (waits included,
    /// unmatched kernels too).
    pub comm_kernel_us: f64,
}

/// The rank set's report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RankSet {
    /// The ranks, in order, with the trace each came from.
    pub ranks: Vec<RankSource>,
    /// One row per collective, most total time first.
    pub collectives: Vec<CollectiveRow>,
    /// One row per rank, by rank.
    pub stragglers: Vec<StragglerRow>,
    /// Communication kernels seen on one rank only (no peer to match).
    pub unmatched: u64,
    /// The link bus bandwidth is read against, or why there is none.
    pub link: LinkUsed,
    /// Every matched instance, by first arrival (not in the JSON report:
    /// a long job has millions of arrivals).
    #[serde(skip)]
    pub instances: Vec<Instance>,
}

/// A rank and its trace.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RankSource {
    /// The rank.
    pub rank: u32,
    /// The trace.
    pub source: String,
    /// Communication kernels found in it.
    pub comm_kernels: u64,
    /// The catalog's name for its GPU, when known.
    pub hardware: Option<String>,
    /// Its communication time, hidden and exposed, when its whole trace
    /// was read ([`RankContext`]).
    pub comm_time: Option<CommTime>,
}

/// What one rank's whole trace says beyond its communication kernels.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RankContext {
    /// The rank.
    pub rank: u32,
    /// Its GPU: the catalog entry detected from `deviceProperties` (or
    /// given), `None` when unknown.
    pub hardware: Option<Hardware>,
    /// Its communication time against its computation.
    pub comm_time: CommTime,
}

/// One rank's communication time, split by whether computation ran at the
/// same time (the timeline's comm and computation buckets,
/// `analysis::timeline`), µs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CommTime {
    /// Length of the union of its communication kernels.
    pub total_us: f64,
    /// The part of it under computation kernels.
    pub overlapped_us: f64,
    /// The part no computation hid (`total_us − overlapped_us`).
    pub exposed_us: f64,
}

impl CommTime {
    /// The communication time of a GPU timeline.
    pub fn of(timeline: &Breakdown) -> CommTime {
        CommTime {
            total_us: timeline.total_comm_time,
            overlapped_us: timeline.total_comm_time - timeline.exposed_comm_time,
            exposed_us: timeline.exposed_comm_time,
        }
    }
}

/// What identifies one collective call on every rank: its group, kind,
/// `Seq` when recorded, and its position among calls with the same three.
type Key = (String, Collective, Option<i64>, u64);

/// The group a kernel is matched within: its process group, else the
/// position of its stream among the rank's communication streams by first
/// use (stream ids differ between ranks: NCCL creates its streams in
/// whatever order the rank gets there).
fn group_of(kernel: &CommKernel, streams: &mut Vec<Option<i64>>) -> String {
    if let Some(group) = &kernel.process_group {
        return format!("pg {group}");
    }
    let index = match streams.iter().position(|s| *s == kernel.stream) {
        Some(index) => index,
        None => {
            streams.push(kernel.stream);
            streams.len() - 1
        }
    };
    format!("comm stream {index}")
}

/// Matches the ranks' collectives and measures them, with no more known of
/// each rank than its communication kernels: [`analyse_with`] and no
/// context.
pub fn analyse(ranks: &[RankInput]) -> RankSet {
    analyse_with(ranks, &[])
}

/// Matches the ranks' collectives and measures them. A collective is the
/// same call on two ranks when it has the same process group (else
/// communication stream, counted in order of first use on each rank), kind
/// and `Seq` (when recorded), and the same position among that group's
/// calls of that kind and `Seq` on each rank. Communication kernels with no
/// process group (vLLM's and SGLang's custom all-reduce, symmetric memory)
/// are thus matched by their order on the stream. `context` (one per rank,
/// any order, may be empty) adds each rank's GPU and communication time and
/// the link bus bandwidth is read against.
pub fn analyse_with(ranks: &[RankInput], context: &[RankContext]) -> RankSet {
    let mut calls: BTreeMap<Key, Vec<(u32, &CommKernel)>> = BTreeMap::new();
    for input in ranks {
        let mut seen: BTreeMap<(String, Collective, Option<i64>), u64> = BTreeMap::new();
        let mut streams = Vec::new();
        for kernel in &input.kernels {
            let group = group_of(kernel, &mut streams);
            let ordinal = seen
                .entry((group.clone(), kernel.collective, kernel.seq))
                .or_default();
            calls
                .entry((group, kernel.collective, kernel.seq, *ordinal))
                .or_default()
                .push((input.rank, kernel));
            *ordinal += 1;
        }
    }
    let mut unmatched = 0;
    let mut instances = Vec::new();
    for ((group, collective, seq, _), mut kernels) in calls {
        if kernels.len() < 2 {
            unmatched += kernels.len() as u64;
            continue;
        }
        kernels.sort_by_key(|(rank, _)| *rank);
        instances.push(instance(group, collective, seq, &kernels));
    }
    instances.sort_by(|a, b| first_start(a).total_cmp(&first_start(b)));
    let context_of = |rank: u32| context.iter().find(|c| c.rank == rank);
    let link = link::choose(ranks.iter().map(|input| {
        (
            input.rank,
            context_of(input.rank).and_then(|c| c.hardware.as_ref()),
        )
    }));
    let mut collectives = collective_rows(&instances);
    if let Some(peak) = &link.link {
        for row in &mut collectives {
            row.busbw_link_pct = row.busbw_gbps.map(|gbps| peak.percent_of(gbps));
        }
    }
    RankSet {
        ranks: ranks
            .iter()
            .map(|input| {
                let context = context_of(input.rank);
                RankSource {
                    rank: input.rank,
                    source: input.source.clone(),
                    comm_kernels: input.kernels.len() as u64,
                    hardware: context.and_then(|c| c.hardware.as_ref().map(|h| h.name.clone())),
                    comm_time: context.map(|c| c.comm_time),
                }
            })
            .collect(),
        collectives,
        stragglers: straggler_rows(ranks, &instances),
        unmatched,
        link,
        instances,
    }
}

fn first_start(instance: &Instance) -> f64 {
    instance
        .arrivals
        .iter()
        .map(|a| a.start_us)
        .fold(f64::INFINITY, f64::min)
}

/// One call from its kernels on each rank (sorted by rank).
fn instance(
    group: String,
    collective: Collective,
    seq: Option<i64>,
    kernels: &[(u32, &CommKernel)],
) -> Instance {
    let first = kernels
        .iter()
        .map(|(_, k)| k.start_us)
        .fold(f64::INFINITY, f64::min);
    let (last_rank, last_kernel) = kernels.iter().fold(kernels[0], |latest, candidate| {
        if candidate.1.start_us > latest.1.start_us {
            *candidate
        } else {
            latest
        }
    });
    let last_start = last_kernel.start_us;
    let skew_us = last_start - first;
    let bytes = kernels.iter().find_map(|(_, k)| k.bytes);
    let group_size = kernels
        .iter()
        .find_map(|(_, k)| k.group_size)
        .unwrap_or(kernels.len() as u32);
    Instance {
        collective,
        group,
        seq,
        arrivals: kernels
            .iter()
            .map(|(rank, k)| Arrival {
                rank: *rank,
                start_us: k.start_us,
                duration_us: k.duration_us,
                wait_us: last_start - k.start_us,
            })
            .collect(),
        skew_us,
        duration_us: last_kernel.duration_us,
        bytes,
        group_size,
        last: (skew_us > 0.0).then_some(last_rank),
    }
}

/// The per-collective table, most total time first.
fn collective_rows(instances: &[Instance]) -> Vec<CollectiveRow> {
    let mut by_kind: BTreeMap<Collective, Vec<&Instance>> = BTreeMap::new();
    for instance in instances {
        by_kind
            .entry(instance.collective)
            .or_default()
            .push(instance);
    }
    let mut rows: Vec<CollectiveRow> = by_kind
        .into_iter()
        .map(|(collective, instances)| {
            let count = instances.len() as u64;
            let total_us: f64 = instances.iter().map(|i| i.duration_us).sum();
            let skews = instances.iter().map(|i| i.skew_us);
            let sized: Vec<(&Instance, u64)> = instances
                .iter()
                .filter_map(|i| i.bytes.map(|b| (*i, b)))
                .collect();
            let bytes = (!sized.is_empty()).then(|| sized.iter().map(|(_, b)| b).sum());
            let sized_us: f64 = sized.iter().map(|(i, _)| i.duration_us).sum();
            let gbps = |bytes: f64| (sized_us > 0.0).then(|| bytes / sized_us / 1e3);
            let algbw_gbps = bytes.and_then(|b: u64| gbps(b as f64));
            let bus_bytes: Option<f64> = sized
                .iter()
                .map(|(i, b)| Some(*b as f64 * collective.bus_factor(i.group_size)?))
                .sum();
            CollectiveRow {
                collective,
                count,
                group_size: instances.iter().map(|i| i.group_size).max().unwrap_or(0),
                total_us,
                mean_us: total_us / count as f64,
                mean_skew_us: skews.clone().sum::<f64>() / count as f64,
                max_skew_us: skews.fold(0.0, f64::max),
                bytes,
                algbw_gbps,
                busbw_gbps: bytes.and(bus_bytes).and_then(gbps),
                busbw_link_pct: None,
            }
        })
        .collect();
    rows.sort_by(|a, b| b.total_us.total_cmp(&a.total_us));
    rows
}

/// The straggler table: per rank, how often it arrived last and the wait
/// that cost the others, and its own wait.
fn straggler_rows(ranks: &[RankInput], instances: &[Instance]) -> Vec<StragglerRow> {
    let mut rows: BTreeMap<u32, StragglerRow> = ranks
        .iter()
        .map(|input| {
            let row = StragglerRow {
                rank: input.rank,
                collectives: 0,
                last: 0,
                caused_wait_us: 0.0,
                waited_us: 0.0,
                first: 0,
                comm_kernel_us: input.kernels.iter().map(|k| k.duration_us).sum(),
            };
            (input.rank, row)
        })
        .collect();
    for instance in instances {
        let mut caused = 0.0;
        for arrival in &instance.arrivals {
            if let Some(row) = rows.get_mut(&arrival.rank) {
                row.collectives += 1;
                row.waited_us += arrival.wait_us;
            }
            caused += arrival.wait_us;
        }
        if let Some(row) = instance.last.and_then(|rank| rows.get_mut(&rank)) {
            row.last += 1;
            row.caused_wait_us += caused;
        }
        let first = instance
            .last
            .and_then(|_| {
                instance
                    .arrivals
                    .iter()
                    .min_by(|a, b| a.start_us.total_cmp(&b.start_us))
            })
            .and_then(|arrival| rows.get_mut(&arrival.rank));
        if let Some(row) = first {
            row.first += 1;
        }
    }
    rows.into_values().collect()
}
