//! Series over the history: one value per run, oldest first, for a workload
//! (its GPU computation time per step) or for one op (its GPU time per
//! step). Change-point detection, drift and the dashboard read these.

use std::collections::BTreeMap;

use super::entry::EntryMeta;
use crate::gate::snapshot::Snapshot;

/// One run's value in a series.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// The run's commit.
    pub commit: String,
    /// When it was recorded, RFC 3339 UTC.
    pub time: String,
    /// The CI run's URL, when recorded.
    pub run_url: Option<String>,
    /// The value, µs per step.
    pub value_us: f64,
}

impl Point {
    fn of(entry: &EntryMeta, value_us: f64) -> Point {
        Point {
            commit: entry.commit.clone(),
            time: entry.time.clone(),
            run_url: entry.run_url.clone(),
            value_us,
        }
    }
}

/// The workload's series: GPU computation time per step of each entry, in
/// the order given (the store lists entries oldest first).
pub fn workload_series(entries: &[EntryMeta]) -> Vec<Point> {
    entries
        .iter()
        .map(|entry| Point::of(entry, entry.computation_per_step_us()))
        .collect()
}

/// GPU time per step of every op name in a snapshot, µs: the direct kernel
/// time of its rows (whole-graph rows left out, their time is in the graph's
/// other rows), divided by the run's steps.
pub fn op_times_per_step(snapshot: &Snapshot) -> BTreeMap<String, f64> {
    let steps = snapshot.steps.len().max(1) as f64;
    let mut times = BTreeMap::new();
    for op in snapshot.ops.iter().filter(|op| !op.is_whole_graph()) {
        *times.entry(op.name.clone()).or_insert(0.0) += op.direct.sum / steps;
    }
    times
}

/// One op's series over entries and their snapshots (same order); a run
/// without the op contributes 0.
pub fn op_series(runs: &[(EntryMeta, Snapshot)], op: &str) -> Vec<Point> {
    runs.iter()
        .map(|(entry, snapshot)| {
            let value = op_times_per_step(snapshot).get(op).copied().unwrap_or(0.0);
            Point::of(entry, value)
        })
        .collect()
}

/// The ops holding the most GPU time in the newest run, at most `limit`,
/// most first: the ops the dashboard and `history show` chart.
pub fn top_ops(runs: &[(EntryMeta, Snapshot)], limit: usize) -> Vec<String> {
    let Some((_, newest)) = runs.last() else {
        return Vec::new();
    };
    let mut ops: Vec<(String, f64)> = op_times_per_step(newest).into_iter().collect();
    ops.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    ops.into_iter().take(limit).map(|(name, _)| name).collect()
}
