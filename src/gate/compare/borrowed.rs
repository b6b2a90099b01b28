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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::profile::{GraphPlace, GraphRole};
    use crate::gate::snapshot::tests::tiny_snapshot;

    /// Nine calls whose log times are `step` apart, centred on 100 µs: a MAD
    /// of log time of exactly 2·`step` (deviations 0, 1, 1, 2, 2, 3, 3, 4, 4
    /// steps).
    fn calls(step: f64) -> Vec<f64> {
        (-4..=4).map(|k| 100.0 * (step * k as f64).exp()).collect()
    }

    fn row(name: &str, samples_us: Vec<f64>) -> OpSnapshot {
        OpSnapshot {
            name: name.to_string(),
            samples_us,
            ..tiny_snapshot().ops[0].clone()
        }
    }

    fn snapshot(rows: Vec<OpSnapshot>) -> Snapshot {
        Snapshot {
            ops: rows,
            ..tiny_snapshot()
        }
    }

    /// Rows `op0`, `op1`, … with the calls of each step.
    fn rows(steps: &[f64]) -> Vec<OpSnapshot> {
        steps
            .iter()
            .enumerate()
            .map(|(i, &step)| row(&format!("op{i}"), calls(step)))
            .collect()
    }

    /// The median of a list, by hand: the middle value, or the mean of the two.
    fn median(values: &[f64]) -> f64 {
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        (sorted[(n - 1) / 2] + sorted[n / 2]) / 2.0
    }

    #[test]
    fn a_rows_spread_is_its_scaled_mad_of_log_call_time_in_any_order() {
        let mut samples = calls(0.01);
        samples.reverse();
        samples.swap(0, 5);
        let spread = log_spread(&row("op", samples)).unwrap();
        assert!((spread - 1.4826 * 0.02).abs() < 1e-12, "{spread}");
    }

    #[test]
    fn calls_of_no_time_or_no_finite_time_are_not_calls() {
        let mut samples = calls(0.01);
        samples.extend([0.0, -1.0, f64::INFINITY, f64::NAN]);
        let spread = log_spread(&row("op", samples)).unwrap();
        assert!((spread - 1.4826 * 0.02).abs() < 1e-12, "{spread}");
        // Seven calls with time and a call of 0 µs are too few.
        let mut seven = calls(0.01)[..7].to_vec();
        seven.push(0.0);
        assert_eq!(log_spread(&row("op", seven)), None);
    }

    #[test]
    fn eight_calls_have_a_spread_and_seven_do_not() {
        let eight = calls(0.01)[..MIN_REPEAT_CALLS].to_vec();
        assert!(log_spread(&row("op", eight)).is_some());
        let seven = calls(0.01)[..MIN_REPEAT_CALLS - 1].to_vec();
        assert_eq!(log_spread(&row("op", seven)), None);
    }

    #[test]
    fn the_noise_is_the_median_spread_over_the_rows_both_sides_repeat() {
        let candidate_steps = [0.01, 0.02, 0.03, 0.04, 0.05];
        let baseline_steps = [0.06, 0.07, 0.08, 0.09, 0.10];
        let noise = borrowed_noise(
            &[snapshot(rows(&baseline_steps))],
            &snapshot(rows(&candidate_steps)),
        )
        .unwrap();
        let spreads: Vec<f64> = candidate_steps
            .iter()
            .chain(&baseline_steps)
            .map(|step| 1.4826 * 2.0 * step)
            .collect();
        assert_eq!(noise.rows, 5);
        assert!((noise.sigma - median(&spreads)).abs() < 1e-12, "{noise:?}");
    }

    #[test]
    fn four_repeating_rows_borrow_nothing_and_five_do() {
        let steps = [0.02; MIN_REPEATING_ROWS];
        let five = snapshot(rows(&steps));
        assert_eq!(
            borrowed_noise(std::slice::from_ref(&five), &five).map(|n| n.rows),
            Some(MIN_REPEATING_ROWS)
        );
        let four = snapshot(rows(&steps[1..]));
        assert_eq!(borrowed_noise(std::slice::from_ref(&four), &four), None);
    }

    #[test]
    fn communication_whole_graphs_and_rows_a_baseline_lacks_lend_no_spread() {
        let steps = [0.02; MIN_REPEATING_ROWS];
        let mut candidate = rows(&steps);
        let mut comm = row("nccl:all_reduce", calls(0.5));
        comm.category = Category::Comm;
        let mut graph = row("graph 7", calls(0.5));
        graph.graph = Some(GraphPlace {
            graph: "graph 7".to_string(),
            role: GraphRole::Graph,
            launch: "cudaGraphLaunch".to_string(),
            variant: None,
        });
        let lacking = row("only_in_one_baseline", calls(0.5));
        candidate.extend([comm.clone(), graph.clone(), lacking.clone()]);
        let mut first = rows(&steps);
        first.extend([comm.clone(), graph.clone(), lacking]);
        let mut second = rows(&steps);
        second.extend([comm, graph]);
        let baselines = [snapshot(first), snapshot(second)];
        let noise = borrowed_noise(&baselines, &snapshot(candidate)).unwrap();
        assert_eq!(noise.rows, MIN_REPEATING_ROWS);
        assert!((noise.sigma - 1.4826 * 0.04).abs() < 1e-12, "{noise:?}");
    }

    #[test]
    fn calls_that_agree_to_the_microsecond_borrow_the_least_noise() {
        let same = snapshot(
            (0..MIN_REPEATING_ROWS)
                .map(|i| row(&format!("op{i}"), vec![50.0; 9]))
                .collect(),
        );
        let noise = borrowed_noise(std::slice::from_ref(&same), &same).unwrap();
        assert_eq!(noise.sigma, MIN_SIGMA);
        // A wider spread than the least is kept as it is.
        let wide = snapshot(rows(&[0.02; MIN_REPEATING_ROWS]));
        let noise = borrowed_noise(std::slice::from_ref(&wide), &wide).unwrap();
        assert!((noise.sigma - 1.4826 * 0.04).abs() < 1e-12, "{noise:?}");
    }
}
