//! The `noise` section of a policy: the statistics and thresholds every
//! op-level comparison shares, and the noise of one call a one-sample row
//! is judged against (docs/POLICY.md, "What one measurement can decide").

use serde::Deserialize;

use super::de;
use crate::gate::verdict::Severity;

/// Statistics and the thresholds every op-level comparison shares.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Noise {
    /// Confidence level of the slowdown's interval, in (0, 1).
    #[serde(deserialize_with = "de::confidence")]
    pub confidence: f64,
    /// Smallest slowdown that counts, %: a regression needs the whole
    /// interval of candidate/baseline above 1 + this / 100.
    #[serde(deserialize_with = "de::non_negative")]
    pub min_effect_percent: f64,
    /// Smallest impact that counts: the added time as a % of the baseline's
    /// total GPU time.
    #[serde(deserialize_with = "de::non_negative")]
    pub min_impact_percent: f64,
    /// Run-to-run noise assumed when it cannot be measured, %: traces from
    /// one job do not show it. The threshold is the largest of
    /// `min_effect_percent`, this, and the noise measured from several
    /// baselines.
    #[serde(deserialize_with = "de::non_negative")]
    pub noise_floor_percent: f64,
    /// Rows whose GPU time per run is below this on both sides, µs, are not
    /// judged for regressions, improvements or ratios; in a workload with
    /// less than 100 × this of GPU time the floor is 1% of its GPU time
    /// instead ([`Noise::min_time_for`]).
    #[serde(deserialize_with = "de::non_negative")]
    pub min_time_us: f64,
    /// Bootstrap resamples per row (100 to
    /// [`MAX_RESAMPLES`](crate::gate::stats::MAX_RESAMPLES)).
    #[serde(deserialize_with = "de::resamples")]
    pub resamples: u32,
    /// Seed of the bootstrap's random numbers (same seed, same verdict).
    pub seed: u64,
    /// False-discovery rate across all rows of a check (Benjamini–Hochberg),
    /// in (0, 1].
    #[serde(deserialize_with = "de::rate")]
    pub false_discovery_rate: f64,
    /// Judge a row with one sample on a side against the noise of one call
    /// borrowed from the trace's repeating rows, so a large enough slowdown
    /// of it can fail (docs/POLICY.md, "What one measurement can decide");
    /// `false`: such a row only warns.
    pub borrow_for_single_samples: bool,
    /// The least noise of one call, % (a standard deviation of its log
    /// time), assumed for a row with one sample on a side when the trace
    /// cannot lend one (too few rows repeat, or borrowing is off): a
    /// prior, the floor of [`Noise::one_call_sigma_percent`] for long
    /// calls, at least the noise of calls of 50 µs or more on every corpus
    /// trace (docs/POLICY.md, "What one measurement can decide"); `None`
    /// (`null`): such a row only warns.
    #[serde(deserialize_with = "de::nullable_positive_percent")]
    pub single_sample_sigma_percent: Option<f64>,
    /// The timing jitter of one call, µs: a call of d µs strays at least
    /// jitter / d in relative terms (whole-microsecond timestamps, launch
    /// jitter), whether its noise is borrowed or assumed
    /// ([`Noise::one_call_sigma_percent`]); `None` (`null`): no such term.
    #[serde(deserialize_with = "de::nullable_positive")]
    pub single_sample_jitter_us: Option<f64>,
    /// Severity of a one-sample row beyond the threshold whose change the
    /// noise of one call cannot confirm, with a material impact: `fail`
    /// makes the verdict `inconclusive` (exit 1) unless a confirmed failure
    /// makes it `fail`; `warn` and `info` report it and let the gate pass.
    pub on_unconfirmed_single_sample: Severity,
}

/// The default [`Noise::single_sample_sigma_percent`], %: 3.5, at least
/// the median noise of calls of 50 µs or more on every corpus trace that
/// lends one (3.2% at most; docs/POLICY.md), and above the largest change
/// of such a call between two of five separate runs on one H200 (2.67%,
/// tests/fixtures/h200; docs/RELIABILITY.md).
pub const SINGLE_SAMPLE_SIGMA_PERCENT: f64 = 3.5;

/// The default [`Noise::single_sample_jitter_us`], µs: 2.5, the least
/// jitter whose curve max(3.5%, jitter / d) lies above every corpus
/// trace's median noise of one call in every call-time bin (2.15 µs
/// needed; docs/POLICY.md); on five separate H200 runs a call of 10 to
/// 50 µs moved at most 4.07% (2.5 µs / 50 µs = 5%), one under 10 µs 17.4%
/// (2.5 / 10 = 25%; docs/RELIABILITY.md).
pub const SINGLE_SAMPLE_JITTER_US: f64 = 2.5;

impl Default for Noise {
    fn default() -> Noise {
        Noise {
            confidence: 0.95,
            min_effect_percent: 5.0,
            min_impact_percent: 0.3,
            noise_floor_percent: 3.0,
            min_time_us: 10.0,
            resamples: 2000,
            seed: 1,
            false_discovery_rate: 0.05,
            borrow_for_single_samples: true,
            single_sample_sigma_percent: Some(SINGLE_SAMPLE_SIGMA_PERCENT),
            single_sample_jitter_us: Some(SINGLE_SAMPLE_JITTER_US),
            on_unconfirmed_single_sample: Severity::Fail,
        }
    }
}

impl Noise {
    /// The noise of one call of `call_us` µs, %: at least `base_percent`
    /// (borrowed from the trace, or the prior floor) and at least
    /// jitter / `call_us`, the relative spread a fixed timing jitter gives
    /// a short call.
    pub fn one_call_sigma_percent(&self, base_percent: f64, call_us: f64) -> f64 {
        match self.single_sample_jitter_us {
            Some(jitter) => base_percent.max(100.0 * jitter / call_us.max(f64::MIN_POSITIVE)),
            None => base_percent,
        }
    }

    /// The effective relative threshold, %: the largest of
    /// `min_effect_percent`, `noise_floor_percent` and the measured
    /// run-to-run noise (when several baselines measure it). Relative limits
    /// of other rules (`max_regression_percent`) are raised to the noise
    /// part of it the same way: see [`Noise::raise`].
    pub fn threshold_percent(&self, measured_noise_percent: Option<f64>) -> f64 {
        self.raise(self.min_effect_percent, measured_noise_percent)
    }

    /// The time floor of a workload whose baseline has `total_us` of GPU
    /// time: `min_time_us`, or 1% of that time when smaller, so a short
    /// trace (309 µs) still judges its ops holding a few percent of it.
    pub fn min_time_for(&self, total_us: f64) -> f64 {
        self.min_time_us.min(total_us / 100.0)
    }

    /// A relative limit raised to the noise: max(limit, noise floor,
    /// measured noise).
    pub fn raise(&self, limit_percent: f64, measured_noise_percent: Option<f64>) -> f64 {
        limit_percent
            .max(self.noise_floor_percent)
            .max(measured_noise_percent.unwrap_or(0.0))
    }
}
