//! The policy's `history` section: where `check --history` takes its
//! baseline window (the last runs of the target branch), and the drift
//! rule's reach and limit. Plain data, checked while deserializing as the
//! other sections are.

use serde::{Deserialize, Deserializer};

use super::de::{checked_str, checked_whole};

/// The most runs a baseline window or a drift reach may span: each is a
/// snapshot loaded and compared.
pub const MAX_HISTORY_RUNS: u64 = 1000;

/// `history:`: how the history feeds the gate.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct History {
    /// How many of the newest runs of the same workload on the same
    /// hardware and branch form the baseline window of `check --history`
    /// (1 to [`MAX_HISTORY_RUNS`]); run-to-run noise is measured from them.
    #[serde(deserialize_with = "runs")]
    pub window: usize,
    /// The branch whose runs are the baseline: the one pull requests merge
    /// into.
    #[serde(deserialize_with = "branch")]
    pub branch: String,
    /// The drift rule: the candidate against the run some merges ago.
    pub drift: Drift,
}

impl Default for History {
    fn default() -> History {
        History {
            window: 10,
            branch: "main".to_string(),
            drift: Drift::default(),
        }
    }
}

/// `history.drift:`: slow accumulation across merges, each too small to
/// fail alone.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Drift {
    /// How many merges back the candidate is compared with (1 to
    /// [`MAX_HISTORY_RUNS`]).
    #[serde(deserialize_with = "runs")]
    pub merges: usize,
    /// The largest slowdown allowed over those merges, %.
    #[serde(deserialize_with = "super::de::non_negative")]
    pub limit_percent: f64,
}

impl Default for Drift {
    fn default() -> Drift {
        Drift {
            merges: 5,
            limit_percent: 5.0,
        }
    }
}

fn runs<'de, D: Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    let n = checked_whole(d, "a whole number of runs from 1 to 1000", |v| {
        if v == 0 {
            Err("must be at least 1".to_string())
        } else if v > MAX_HISTORY_RUNS {
            Err(format!(
                "must be at most {MAX_HISTORY_RUNS} (each run is a snapshot to load), not {v}"
            ))
        } else {
            Ok(())
        }
    })?;
    Ok(usize::try_from(n).unwrap_or(usize::MAX))
}

fn branch<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    checked_str(d, "a branch name such as main", |text| {
        if text.trim().is_empty() {
            Err("empty: name the branch pull requests merge into".to_string())
        } else {
            Ok(text.trim().to_string())
        }
    })
}
