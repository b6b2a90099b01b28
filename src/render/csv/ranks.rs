//! A rank set's CSV files, with TraceLens's column names where its
//! NcclAnalyser has the figure (`nccl_summary_implicit_sync`, the
//! straggler summary) and our own names beside them where it does not:
//! `coll_analysis.csv`, one row per collective, and
//! `straggler_summary.csv`, one row per rank (docs/TRACELENS.md, "Rank
//! sets").

use super::cells::{Cell, Table};
use crate::analysis::ranks::RankSet;

/// Bytes in TraceLens's `MB` (it divides by 1024²).
const MB: f64 = 1024.0 * 1024.0;

/// Both files as (file name, contents).
pub fn render_all(set: &RankSet) -> Vec<(&'static str, String)> {
    vec![
        ("coll_analysis.csv", coll_analysis(set)),
        ("straggler_summary.csv", straggler_summary(set)),
    ]
}

/// One row per collective, most total time first.
fn coll_analysis(set: &RankSet) -> String {
    let mut table = Table::new(&[
        "Collective name",
        "Group size",
        "count",
        "Total comm latency (ms)",
        "comm_latency_mean",
        "skew in start time_mean",
        "skew in start time_max",
        "Total msg size (MB)",
        "algo bw (GB/s)",
        "bus bw (GB/s)",
        "bus bw % of link",
        "link",
        "link GB/s per direction",
    ]);
    let link = set.link.link.as_ref();
    for row in &set.collectives {
        table.row([
            Cell::Text(row.collective.name()),
            Cell::Int(u64::from(row.group_size)),
            Cell::Int(row.count),
            Cell::Float(row.total_us / 1e3),
            Cell::Float(row.mean_us),
            Cell::Float(row.mean_skew_us),
            Cell::Float(row.max_skew_us),
            Cell::OptFloat(row.bytes.map(|b| b as f64 / MB)),
            Cell::OptFloat(row.algbw_gbps),
            Cell::OptFloat(row.busbw_gbps),
            Cell::OptFloat(row.busbw_link_pct),
            Cell::Text(link.map_or("", |l| l.name.as_str())),
            Cell::OptFloat(link.map(|l| l.gb_s)),
        ]);
    }
    table.text
}

/// One row per rank, least waiting first (the straggler on top), as
/// TraceLens orders it; ties by rank.
fn straggler_summary(set: &RankSet) -> String {
    let mut table = Table::new(&[
        "rank",
        "total_wait_time_us",
        "mean_wait_time_us",
        "times_arrived_last",
        "times_arrived_first",
        "pct_arrived_last",
        "num_collectives",
        "total_nccl_dur_us",
        "caused_wait_time_us",
        "total_comm_time_us",
        "overlapped_comm_time_us",
        "exposed_comm_time_us",
        "hardware",
    ]);
    let mut rows: Vec<_> = set.stragglers.iter().collect();
    rows.sort_by(|a, b| {
        a.waited_us
            .total_cmp(&b.waited_us)
            .then(a.rank.cmp(&b.rank))
    });
    for row in rows {
        let source = set.ranks.iter().find(|r| r.rank == row.rank);
        let comm = source.and_then(|r| r.comm_time);
        let per_collective =
            |value: f64| (row.collectives > 0).then(|| value / row.collectives as f64);
        table.row([
            Cell::Int(u64::from(row.rank)),
            Cell::Float(row.waited_us),
            Cell::OptFloat(per_collective(row.waited_us)),
            Cell::Int(row.last),
            Cell::Int(row.first),
            Cell::OptFloat(per_collective(100.0 * row.last as f64)),
            Cell::Int(row.collectives),
            Cell::Float(row.comm_kernel_us),
            Cell::Float(row.caused_wait_us),
            Cell::OptFloat(comm.map(|c| c.total_us)),
            Cell::OptFloat(comm.map(|c| c.overlapped_us)),
            Cell::OptFloat(comm.map(|c| c.exposed_us)),
            Cell::Text(source.and_then(|r| r.hardware.as_deref()).unwrap_or("")),
        ]);
    }
    table.text
}
