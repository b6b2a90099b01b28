//! Learned cross-platform ratios: from earlier paired runs of one workload
//! (the baseline platform's snapshot and the candidate platform's, of the
//! same commit), each op's candidate/baseline time ratio over those runs
//! with its spread, which a scheduled cross-platform check judges against
//! instead of the roofline ratio (docs/CROSS_PLATFORM.md, "Learned
//! ratios").
//!
//! Each pair is compared exactly as the check compares its two sides
//! ([`compare`]: per-step totals when both sides have steps and call the op
//! equally often per step, else per-call times; op totals summed over
//! shapes), so a learned ratio and the ratio it is judged against are the
//! same statistic.

use std::collections::BTreeMap;

use crate::gate::compare::{
    CompareOptions, LearnedRatio, LearnedRatios, OpComparison, TotalKey, compare,
};
use crate::gate::snapshot::{OpKey, Snapshot};
use crate::gate::stats;

/// Scales a median absolute deviation to a standard deviation for normal
/// noise.
const MAD_TO_SIGMA: f64 = 1.4826;

/// Learns each op row's and op total's ratio from `pairs` of (baseline
/// platform, candidate platform) snapshots of the same workload and
/// commit, one pair per earlier run; the caller picks the last K pairs on
/// the same hardware pair. A row learns from the pairs that have it on
/// both sides; its ratio is the median over them, its spread the robust
/// relative deviation around it ([`LearnedRatio`]).
pub fn learn(pairs: &[(Snapshot, Snapshot)]) -> LearnedRatios {
    // Point estimates only: the intervals of the earlier runs are not used.
    let options = CompareOptions {
        resamples: 0,
        ..CompareOptions::default()
    };
    let mut rows: BTreeMap<OpKey, Vec<f64>> = BTreeMap::new();
    let mut totals: BTreeMap<TotalKey, Vec<f64>> = BTreeMap::new();
    for (baseline, candidate) in pairs {
        let comparison = compare(std::slice::from_ref(baseline), candidate, &options);
        for op in &comparison.ops {
            push_ratio(&mut rows, op.baseline.key.clone(), op);
        }
        for total in &comparison.op_totals {
            let key = (
                total.candidate.key.name.clone(),
                total.candidate.module_path.clone(),
            );
            push_ratio(&mut totals, key, total);
        }
    }
    LearnedRatios {
        rows: summarise(rows),
        totals: summarise(totals),
    }
}

/// Records a row's ratio when it is a usable one.
fn push_ratio<K: Ord>(into: &mut BTreeMap<K, Vec<f64>>, key: K, op: &OpComparison) {
    let ratio = op.estimate.ratio;
    if ratio.is_finite() && ratio > 0.0 {
        into.entry(key).or_default().push(ratio);
    }
}

/// Each key's ratios as a median with its spread.
fn summarise<K: Ord>(ratios: BTreeMap<K, Vec<f64>>) -> BTreeMap<K, LearnedRatio> {
    ratios
        .into_iter()
        .filter_map(|(key, values)| Some((key, learned_ratio(&values)?)))
        .collect()
}

/// The median of `values` and 1.4826 × their median absolute relative
/// deviation from it; `None` for no values.
pub fn learned_ratio(values: &[f64]) -> Option<LearnedRatio> {
    let ratio = stats::median(values)?;
    let deviations: Vec<f64> = values.iter().map(|v| (v / ratio - 1.0).abs()).collect();
    Some(LearnedRatio {
        ratio,
        spread: MAD_TO_SIGMA * stats::median(&deviations).unwrap_or(0.0),
        runs: values.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_robust_spread() {
        let learned = learned_ratio(&[0.8, 0.82, 0.84, 0.81, 2.0]).expect("values");
        assert_eq!(learned.ratio, 0.82);
        assert_eq!(learned.runs, 5);
        // One wild run moves neither the median nor the spread much.
        assert!(learned.spread < 0.04, "{}", learned.spread);
        let same = learned_ratio(&[1.5, 1.5, 1.5]).expect("values");
        assert_eq!((same.ratio, same.spread), (1.5, 0.0));
        assert!(learned_ratio(&[]).is_none());
    }
}
