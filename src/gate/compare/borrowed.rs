//! Borrowed noise: the spread of one measurement, estimated from the rows
//! of the same traces that repeat. A row with one call (or launch, or
//! step) on a side has no spread of its own, so no interval; the per-call
//! spread of the rows that were called many times, pooled robustly, says
//! how far one call of this GPU and stack strays, and lets the judge test
//! a single measurement against it (docs/POLICY.md, "What one measurement
//! can decide").

use std::collections::BTreeMap;

use serde::Serialize;

use crate::analysis::ops::category::Category;
use crate::gate::snapshot::{OpKey, OpSnapshot, Snapshot};
use crate::gate::stats::quantile_sorted;

/// Calls a row needs on each side before its spread is borrowed.
pub const MIN_REPEAT_CALLS: usize = 8;

/// Repeating rows needed before a noise is borrowed at all: fewer say too
/// little about the trace's noise.
pub const MIN_REPEATING_ROWS: usize = 5;

/// The least noise of one call borrowed, 1%: repeating calls that agree to
/// the microsecond (a MAD of 0) do not show that one call cannot stray.
pub const MIN_SIGMA: f64 = 0.01;

/// Scales a median absolute deviation to a normal standard deviation.
const MAD_TO_SIGMA: f64 = 1.4826;

/// The noise of one measurement, borrowed from the repeating rows.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct BorrowedNoise {
    /// Standard deviation of the log time of one call: the median, over
    /// the repeating rows and both sides, of each row's MAD of log call
    /// time × 1.4826 (0.03 ≈ ±3%), at least [`MIN_SIGMA`].
    pub sigma: f64,
    /// Repeating rows it was estimated from.
    pub rows: usize,
}

/// The robust spread of a row's log call times, when it has
/// [`MIN_REPEAT_CALLS`] positive ones.
fn log_spread(row: &OpSnapshot) -> Option<f64> {
    let mut logs: Vec<f64> = row
        .samples_us
        .iter()
        .filter(|&&us| us > 0.0 && us.is_finite())
        .map(|us| us.ln())
        .collect();
    if logs.len() < MIN_REPEAT_CALLS {
        return None;
    }
    logs.sort_by(f64::total_cmp);
    let median = quantile_sorted(&logs, 0.5)?;
    let mut deviations: Vec<f64> = logs.iter().map(|l| (l - median).abs()).collect();
    deviations.sort_by(f64::total_cmp);
    Some(MAD_TO_SIGMA * quantile_sorted(&deviations, 0.5)?)
}

/// The rows of a snapshot whose spread can be borrowed, by key: computed
/// work (not communication, which waits for other ranks; not whole-graph
/// rows, whose time their rows hold again) with enough calls.
fn spreads(snapshot: &Snapshot) -> BTreeMap<OpKey, f64> {
    snapshot
        .ops
        .iter()
        .filter(|row| row.category != Category::Comm && !row.is_whole_graph())
        .filter_map(|row| Some((row.key(), log_spread(row)?)))
        .collect()
}

/// The noise of one call in these traces: pooled over the rows that repeat
/// [`MIN_REPEAT_CALLS`] times on the candidate and on every baseline, from
/// all sides; `None` with fewer than [`MIN_REPEATING_ROWS`] such rows.
pub fn borrowed_noise(baselines: &[Snapshot], candidate: &Snapshot) -> Option<BorrowedNoise> {
    let baseline_spreads: Vec<BTreeMap<OpKey, f64>> = baselines.iter().map(spreads).collect();
    let mut pooled = Vec::new();
    let mut rows = 0;
    for (key, spread) in spreads(candidate) {
        let others: Option<Vec<f64>> = baseline_spreads
            .iter()
            .map(|side| side.get(&key).copied())
            .collect();
        let Some(others) = others.filter(|o| !o.is_empty()) else {
            continue;
        };
        rows += 1;
        pooled.push(spread);
        pooled.extend(others);
    }
    if rows < MIN_REPEATING_ROWS {
        return None;
    }
    pooled.sort_by(f64::total_cmp);
    Some(BorrowedNoise {
        sigma: quantile_sorted(&pooled, 0.5)?.max(MIN_SIGMA),
        rows,
    })
}
