//! Learned cross-platform ratios: the candidate/baseline time ratio each op
//! showed over earlier paired runs of the same workload on the same two
//! platforms. Real software stacks miss the roofline ratio by ±50% per op
//! (docs/CROSS_PLATFORM.md), so a scheduled cross-platform job judges each
//! op against its own history when it has one: the question it asks is
//! whether the ratio changed, not whether it matches the datasheets.
//!
//! The gate only reads them; `crate::history::ratios` learns them from the
//! history store (the gate must not depend on the history).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::gate::snapshot::OpKey;

/// Earlier paired runs a learned ratio needs before it is expected: until
/// then the run-to-run spread is not measured, and the comparison keeps
/// the hardware's ratio (information only) with a "learning" note.
pub const MIN_LEARNED_RUNS: usize = 3;

/// One op's ratio over the earlier paired runs.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct LearnedRatio {
    /// Median candidate/baseline ratio over the runs.
    pub ratio: f64,
    /// Robust relative spread of the runs' ratios around it: 1.4826 × the
    /// median absolute relative deviation (a standard deviation for normal
    /// noise), 0.03 = 3%.
    pub spread: f64,
    /// Earlier paired runs the ratio was learned from.
    pub runs: usize,
}

/// The key of an op total: op name and call site (`nn.Module` path).
pub type TotalKey = (String, Option<String>);

/// Learned ratios of one workload on one (baseline, candidate) hardware
/// pair, per matched row and per op total; passed to
/// [`compare`](super::compare) through
/// [`CompareOptions::learned`](super::CompareOptions::learned). A row or
/// total without an entry keeps the hardware (roofline) expectation.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LearnedRatios {
    /// Per matched row, by its exact key.
    pub rows: BTreeMap<OpKey, LearnedRatio>,
    /// Per op total (every shape of an op name at one call site summed).
    pub totals: BTreeMap<TotalKey, LearnedRatio>,
}

impl LearnedRatios {
    /// Whether nothing was learned.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty() && self.totals.is_empty()
    }

    /// The entries learned from at least [`MIN_LEARNED_RUNS`] runs: the
    /// ones a comparison expects.
    pub fn settled(&self) -> LearnedRatios {
        LearnedRatios {
            rows: settled(&self.rows),
            totals: settled(&self.totals),
        }
    }

    /// The most earlier runs any entry was learned from.
    pub fn runs(&self) -> usize {
        self.rows
            .values()
            .chain(self.totals.values())
            .map(|r| r.runs)
            .max()
            .unwrap_or(0)
    }
}

/// The entries of `learned` from at least [`MIN_LEARNED_RUNS`] runs.
fn settled<K: Ord + Clone>(learned: &BTreeMap<K, LearnedRatio>) -> BTreeMap<K, LearnedRatio> {
    learned
        .iter()
        .filter(|(_, r)| r.runs >= MIN_LEARNED_RUNS)
        .map(|(k, r)| (k.clone(), *r))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn learned(runs: usize) -> LearnedRatio {
        LearnedRatio {
            ratio: 1.2,
            spread: 0.03,
            runs,
        }
    }

    fn key(name: &str) -> OpKey {
        OpKey {
            name: name.to_string(),
            ..OpKey::default()
        }
    }

    #[test]
    fn entries_of_three_runs_or_more_are_settled_and_the_most_runs_counted() {
        let all = LearnedRatios {
            rows: BTreeMap::from([(key("a"), learned(2)), (key("b"), learned(3))]),
            totals: BTreeMap::from([
                (("c".to_string(), None), learned(5)),
                (("d".to_string(), None), learned(1)),
            ]),
        };
        let settled = all.settled();
        assert_eq!(
            settled.rows,
            BTreeMap::from([(key("b"), learned(MIN_LEARNED_RUNS))])
        );
        assert_eq!(
            settled.totals,
            BTreeMap::from([(("c".to_string(), None), learned(5))])
        );
        assert_eq!((all.runs(), settled.runs()), (5, 5));
    }

    #[test]
    fn nothing_learned_is_empty_and_either_kind_alone_is_not() {
        assert!(LearnedRatios::default().is_empty());
        assert_eq!(LearnedRatios::default().runs(), 0);
        let rows = LearnedRatios {
            rows: BTreeMap::from([(key("a"), learned(4))]),
            ..LearnedRatios::default()
        };
        assert!(!rows.is_empty());
        assert_eq!(rows.runs(), 4);
        let totals = LearnedRatios {
            totals: BTreeMap::from([(("t".to_string(), Some("m".to_string())), learned(2))]),
            ..LearnedRatios::default()
        };
        assert!(!totals.is_empty());
        assert_eq!(totals.runs(), 2);
        assert!(totals.settled().is_empty());
    }
}
