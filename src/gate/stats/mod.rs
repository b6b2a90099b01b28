//! Deterministic statistics for the gate: a seeded PRNG, bootstrap confidence
//! intervals and p-values for the ratio of two medians, the Benjamini–Hochberg
//! adjustment, and a run-to-run noise estimator.
//!
//! Everything here is a pure function of its inputs and a seed: the same
//! samples and seed give the same interval on every machine, so a CI verdict
//! never flips between reruns of the same comparison.
//!
//! # Methods
//!
//! - **Percentile bootstrap** (Efron & Tibshirani, *An Introduction to the
//!   Bootstrap*, 1993, ch. 13): resample each side with replacement, compute
//!   the statistic (candidate median / baseline median) on every resample, and
//!   take the `α/2` and `1 − α/2` quantiles of those replicates as the
//!   interval. Quantiles interpolate linearly between order statistics
//!   (Hyndman & Fan's type 7, numpy's default).
//! - **Paired bootstrap** (same book, ch. 9 and 13 applied to pairs): when
//!   the two samples are the same invocations of the same workload (the i-th
//!   call of an op in the baseline is the i-th call in the candidate), whole
//!   pairs are resampled, so variation shared by both runs (layer position,
//!   cache state, input) cancels.
//! - **Bootstrap p-value** (Efron & Tibshirani, ch. 16, the achieved
//!   significance level): for H₀ "ratio ≤ t" against "ratio > t", the share
//!   of replicates at or below `t`. It is the p-value that inverts the
//!   one-sided percentile interval: the lower `1 − p` bound exceeds `t`
//!   exactly when the share is below `p`. A share of 0 means "below 1/B".
//! - **Benjamini–Hochberg** (Benjamini & Hochberg, "Controlling the false
//!   discovery rate", J. R. Statist. Soc. B 57 (1995) 289–300): step-up
//!   adjusted p-values; rejecting those ≤ q controls the false discovery rate
//!   at q for independent (or positively dependent) tests.
//! - **Ranges for small samples**: a percentile bootstrap of 3 samples has
//!   10 distinct resamples, too few for its quantiles to mean a confidence
//!   level. Below [`MIN_CONFIDENCE_SAMPLES`] per side the gate decides on
//!   the range of the ratio over the samples instead
//!   ([`RatioEstimate::bounds`]): the per-pair ratios when paired, else
//!   `min(candidate) / max(baseline)` to `max(candidate) / min(baseline)`
//!   ("every candidate sample slower than every baseline sample").

use serde::{Deserialize, Serialize};

pub use crate::analysis::ops::stats::{median, median_in_place};

/// The most bootstrap resamples drawn for one estimate: every estimate
/// keeps its replicates (8 bytes each) for p-values, so this bounds the
/// memory and time of each compared row. A policy asks for at most this
/// many (`noise.resamples`); larger requests are cut to it.
pub const MAX_RESAMPLES: usize = 20_000;

/// The fewest samples per side for which a bootstrap interval is called a
/// confidence interval: with 8 distinct samples a percentile bootstrap of
/// the median has thousands of distinct resamples, with 3 only 10. Below
/// it the gate shows and decides on the range over the samples.
pub const MIN_CONFIDENCE_SAMPLES: usize = 8;

/// SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number
/// generators", OOPSLA 2014; the constants of Vigna's reference code): a
/// 64-bit state advanced by a Weyl sequence and mixed by a bijective
/// finaliser. Small, fast, and statistically good enough for resampling.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator started from `seed`.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform index in `0..n` (`n > 0`), by Lemire's multiply-shift
    /// (bias below 2⁻⁵⁸ for the sample sizes used here).
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

/// FNV-1a over byte strings separated by a 0xFF byte: a stable per-row seed
/// component, so a row's interval depends on its own key and data only, not
/// on where it sits in a table.
pub fn seed_from_parts(seed: u64, parts: &[&str]) -> u64 {
    let mut hash: u64 = 0xCBF2_9CE4_8422_2325 ^ seed;
    for part in parts {
        for &byte in part.as_bytes().iter().chain(std::iter::once(&0xFF)) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01B3);
        }
    }
    hash
}

/// The `q` quantile (0 ≤ q ≤ 1) of sorted values by linear interpolation
/// between order statistics (Hyndman & Fan type 7, numpy's default);
/// `None` for no values.
pub fn quantile_sorted(sorted: &[f64], q: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let position = q.clamp(0.0, 1.0) * last as f64;
    let below = position.floor() as usize;
    let above = position.ceil() as usize;
    let fraction = position - below as f64;
    Some(sorted[below] + (sorted[above] - sorted[below]) * fraction)
}

/// P(Z > z) for a standard normal Z (Abramowitz & Stegun 7.1.26, absolute
/// error below 1.5e-7): the p-value of a test whose noise is a measured
/// spread rather than a bootstrap distribution.
pub fn normal_upper_tail(z: f64) -> f64 {
    if z.is_nan() {
        return f64::NAN;
    }
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erfc = poly * (-x * x).exp();
    if z >= 0.0 {
        erfc / 2.0
    } else {
        1.0 - erfc / 2.0
    }
}

/// `candidate / baseline`, with the edge cases of zero times: 0/0 is 1 (no
/// change), x/0 is +∞.
pub fn ratio(candidate: f64, baseline: f64) -> f64 {
    if baseline > 0.0 {
        candidate / baseline
    } else if candidate > 0.0 {
        f64::INFINITY
    } else {
        1.0
    }
}

/// The largest relative deviation of the values from their median,
/// `max |vᵢ / median − 1|`: the run-to-run noise of a figure measured once
/// per run over a window of runs. A range-based estimator, chosen because
/// windows are small (2–10 runs) and it is easy to read: "runs differ from
/// their typical value by up to 4%". `None` with fewer than two values;
/// `Some(0)` when they are all equal (zero too); +∞ when the median is 0 and
/// some value is not.
pub fn max_relative_deviation(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let center = median(values)?;
    Some(
        values
            .iter()
            .map(|&v| (ratio(v, center) - 1.0).abs())
            .fold(0.0, f64::max),
    )
}

/// A confidence interval of a ratio.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct RatioInterval {
    /// Lower bound.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
}

/// What the bounds of a ratio are ([`RatioEstimate::bounds`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IntervalKind {
    /// A percentile-bootstrap confidence interval at the estimate's level:
    /// both sides had [`MIN_CONFIDENCE_SAMPLES`] or more samples.
    Confidence,
    /// The range of the ratio over the samples: too few samples for a
    /// confidence level.
    Range,
}

/// The interval a decision rests on and what it is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounds {
    /// The interval.
    pub interval: RatioInterval,
    /// Confidence interval or range.
    pub kind: IntervalKind,
}

/// How the two samples were resampled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Resampling {
    /// Each side on its own.
    Independent,
    /// Whole (baseline, candidate) pairs, for samples of equal length
    /// taken in the same order.
    Paired,
    /// Not resampled: fewer than two samples on a side.
    None,
}

/// The ratio of medians (candidate / baseline) with its bootstrap interval.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RatioEstimate {
    /// median(candidate) / median(baseline) on the samples given (see
    /// [`ratio`] for zeros).
    pub ratio: f64,
    /// The percentile-bootstrap interval at [`RatioEstimate::confidence`];
    /// `None` when a side has fewer than two samples: a single sample says
    /// nothing about its spread, so no confidence is claimed.
    pub interval: Option<RatioInterval>,
    /// The range of the ratio over the samples (see [`sample_range`]);
    /// `None` when a side has fewer than two samples.
    pub range: Option<RatioInterval>,
    /// Two-sided confidence level of `interval` (e.g. 0.95).
    pub confidence: f64,
    /// Baseline samples.
    pub n_baseline: usize,
    /// Candidate samples.
    pub n_candidate: usize,
    /// How they were resampled.
    pub resampling: Resampling,
    /// Bootstrap replicates drawn (0 when not resampled).
    pub resamples: usize,
    /// The bootstrap replicates of the ratio, sorted ascending (empty when
    /// not resampled). Kept for p-values and intervals at other levels; not
    /// serialised.
    #[serde(skip)]
    pub replicates: Vec<f64>,
}

impl RatioEstimate {
    /// Whether a bootstrap interval exists (both sides had two or more samples).
    pub fn has_interval(&self) -> bool {
        self.interval.is_some()
    }

    /// Whether both sides have enough samples ([`MIN_CONFIDENCE_SAMPLES`])
    /// for `interval` to be called a confidence interval.
    pub fn supports_confidence(&self) -> bool {
        self.interval.is_some() && self.n_baseline.min(self.n_candidate) >= MIN_CONFIDENCE_SAMPLES
    }

    /// The interval a verdict rests on: the confidence interval when the
    /// samples support one, else the range over the samples; `None` with
    /// fewer than two samples on a side.
    pub fn bounds(&self) -> Option<Bounds> {
        if self.supports_confidence() {
            let interval = self.interval?;
            return Some(Bounds {
                interval,
                kind: IntervalKind::Confidence,
            });
        }
        self.range.map(|interval| Bounds {
            interval,
            kind: IntervalKind::Range,
        })
    }

    /// The smallest slowdown, %, that these samples would show beyond
    /// `threshold` (a ratio): the bounds' relative width below the point
    /// estimate (`ratio / low`) applied on top of the threshold. `None`
    /// without bounds.
    pub fn min_detectable_slowdown_percent(&self, threshold: f64) -> Option<f64> {
        let low = self.bounds()?.interval.low;
        let width = if low > 0.0 && self.ratio.is_finite() {
            (self.ratio / low).max(1.0)
        } else {
            f64::INFINITY
        };
        Some((threshold * width - 1.0) * 100.0)
    }

    /// One-sided bootstrap p-value for "ratio > `threshold`" (H₀: ratio ≤
    /// threshold): the share of replicates ≤ `threshold` (Efron & Tibshirani
    /// ch. 16). `None` without replicates. 0 means below 1/B.
    pub fn p_value_above(&self, threshold: f64) -> Option<f64> {
        if self.replicates.is_empty() {
            return None;
        }
        let at_or_below = self.replicates.partition_point(|&r| r <= threshold);
        Some(at_or_below as f64 / self.replicates.len() as f64)
    }

    /// One-sided bootstrap p-value for "ratio < `threshold`" (an
    /// improvement): the share of replicates ≥ `threshold`. `None` without
    /// replicates.
    pub fn p_value_below(&self, threshold: f64) -> Option<f64> {
        if self.replicates.is_empty() {
            return None;
        }
        let below = self.replicates.partition_point(|&r| r < threshold);
        Some((self.replicates.len() - below) as f64 / self.replicates.len() as f64)
    }

    /// The two-sided percentile interval at another confidence level (for
    /// example a false-coverage-adjusted one, Benjamini & Yekutieli 2005:
    /// `1 − R·q/m` for R selected rows of m). `None` without replicates.
    pub fn interval_at(&self, confidence: f64) -> Option<RatioInterval> {
        percentile_interval(&self.replicates, confidence)
    }
}

/// The range of the candidate/baseline ratio over the samples: with
/// `paired`, the smallest and largest per-pair ratio; otherwise
/// `min(candidate) / max(baseline)` to `max(candidate) / min(baseline)`.
/// Widened to hold `point` (a ratio of medians need not lie between pair
/// ratios). `None` with fewer than two samples on a side.
pub fn sample_range(
    baseline: &[f64],
    candidate: &[f64],
    paired: bool,
    point: f64,
) -> Option<RatioInterval> {
    if baseline.len() < 2 || candidate.len() < 2 {
        return None;
    }
    let (low, high) = if paired && baseline.len() == candidate.len() {
        baseline
            .iter()
            .zip(candidate)
            .map(|(&b, &c)| ratio(c, b))
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), r| {
                (lo.min(r), hi.max(r))
            })
    } else {
        let extremes = |values: &[f64]| {
            values
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
                    (lo.min(v), hi.max(v))
                })
        };
        let ((b_low, b_high), (c_low, c_high)) = (extremes(baseline), extremes(candidate));
        (ratio(c_low, b_high), ratio(c_high, b_low))
    };
    Some(RatioInterval {
        low: low.min(point),
        high: high.max(point),
    })
}

fn percentile_interval(sorted: &[f64], confidence: f64) -> Option<RatioInterval> {
    let alpha = (1.0 - confidence).clamp(0.0, 1.0);
    Some(RatioInterval {
        low: quantile_sorted(sorted, alpha / 2.0)?,
        high: quantile_sorted(sorted, 1.0 - alpha / 2.0)?,
    })
}

/// The ratio of medians `median(candidate) / median(baseline)` with a
/// percentile-bootstrap confidence interval, the two samples resampled
/// independently (Efron & Tibshirani ch. 13). Deterministic for a given
/// `seed`. With fewer than two samples on either side (or `resamples` = 0)
/// there is no interval; with an empty side the ratio is NaN. At most
/// [`MAX_RESAMPLES`] are drawn.
pub fn ratio_of_medians_ci(
    baseline: &[f64],
    candidate: &[f64],
    confidence: f64,
    resamples: usize,
    seed: u64,
) -> RatioEstimate {
    bootstrap(baseline, candidate, confidence, resamples, seed, false)
}

/// Like [`ratio_of_medians_ci`], but resampling whole pairs
/// `(baseline[i], candidate[i])`: for two runs of the same workload whose
/// samples line up (same op, same call order). Falls back to independent
/// resampling when the lengths differ.
pub fn paired_ratio_of_medians_ci(
    baseline: &[f64],
    candidate: &[f64],
    confidence: f64,
    resamples: usize,
    seed: u64,
) -> RatioEstimate {
    let paired = baseline.len() == candidate.len();
    bootstrap(baseline, candidate, confidence, resamples, seed, paired)
}

/// The ratio of the `q` quantiles (type 7, 0 ≤ q ≤ 1) `quantile(candidate)
/// / quantile(baseline)` with its percentile-bootstrap interval: a low
/// quantile is the floor of a sample whose values are a fixed cost plus a
/// varying wait (the calls of a collective on one rank). Pairs are
/// resampled whole with `paired` when the lengths agree, as in
/// [`paired_ratio_of_medians_ci`]; otherwise, and without it, each side on
/// its own. The same edge cases as [`ratio_of_medians_ci`].
pub fn ratio_of_quantiles_ci(
    (baseline, candidate): (&[f64], &[f64]),
    q: f64,
    paired: bool,
    (confidence, resamples, seed): (f64, usize, u64),
) -> RatioEstimate {
    let paired = paired && baseline.len() == candidate.len();
    let quantile = |values: &mut [f64]| {
        values.sort_by(f64::total_cmp);
        quantile_sorted(values, q).unwrap_or(f64::NAN)
    };
    estimate_with(
        (baseline, candidate),
        (confidence, resamples, seed),
        paired,
        &quantile,
    )
}

fn bootstrap(
    baseline: &[f64],
    candidate: &[f64],
    confidence: f64,
    resamples: usize,
    seed: u64,
    paired: bool,
) -> RatioEstimate {
    estimate_with(
        (baseline, candidate),
        (confidence, resamples, seed),
        paired,
        &median_in_place,
    )
}

/// The ratio of `statistic` (of a non-empty buffer, which it may reorder)
/// on the two samples, with its percentile-bootstrap interval.
fn estimate_with(
    (baseline, candidate): (&[f64], &[f64]),
    (confidence, resamples, seed): (f64, usize, u64),
    paired: bool,
    statistic: &dyn Fn(&mut [f64]) -> f64,
) -> RatioEstimate {
    let of = |values: &[f64]| (!values.is_empty()).then(|| statistic(&mut values.to_vec()));
    let point = match (of(baseline), of(candidate)) {
        (Some(b), Some(c)) => ratio(c, b),
        _ => f64::NAN,
    };
    let mut estimate = RatioEstimate {
        ratio: point,
        interval: None,
        range: sample_range(baseline, candidate, paired, point),
        confidence,
        n_baseline: baseline.len(),
        n_candidate: candidate.len(),
        resampling: Resampling::None,
        resamples: 0,
        replicates: Vec::new(),
    };
    if baseline.len() < 2 || candidate.len() < 2 || resamples == 0 {
        return estimate;
    }
    let resamples = resamples.min(MAX_RESAMPLES);
    let mut rng = SplitMix64::new(seed);
    let mut base = vec![0.0; baseline.len()];
    let mut cand = vec![0.0; candidate.len()];
    let mut replicates = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        if paired {
            for (b, c) in base.iter_mut().zip(cand.iter_mut()) {
                let i = rng.below(baseline.len());
                *b = baseline[i];
                *c = candidate[i];
            }
        } else {
            for b in base.iter_mut() {
                *b = baseline[rng.below(baseline.len())];
            }
            for c in cand.iter_mut() {
                *c = candidate[rng.below(candidate.len())];
            }
        }
        replicates.push(ratio(statistic(&mut cand), statistic(&mut base)));
    }
    replicates.sort_by(f64::total_cmp);
    estimate.interval = percentile_interval(&replicates, confidence);
    estimate.resampling = if paired {
        Resampling::Paired
    } else {
        Resampling::Independent
    };
    estimate.resamples = resamples;
    estimate.replicates = replicates;
    estimate
}

/// Benjamini–Hochberg adjusted p-values (1995), in the input order: with the
/// p-values sorted ascending, `adj₍ᵢ₎ = min over j ≥ i of (m / j)·p₍ⱼ₎`,
/// capped at 1 (R's `p.adjust(method = "BH")`). Rejecting every hypothesis
/// whose adjusted p-value is ≤ q is the BH step-up procedure at level q. A
/// NaN p-value counts as 1.
pub fn bh_adjust(p_values: &[f64]) -> Vec<f64> {
    let m = p_values.len();
    let clean: Vec<f64> = p_values
        .iter()
        .map(|&p| if p.is_nan() { 1.0 } else { p.clamp(0.0, 1.0) })
        .collect();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| clean[a].total_cmp(&clean[b]).then(a.cmp(&b)));
    let mut adjusted = vec![1.0; m];
    let mut running = 1.0_f64;
    for (rank, &index) in order.iter().enumerate().rev() {
        let scaled = clean[index] * m as f64 / (rank + 1) as f64;
        running = running.min(scaled);
        adjusted[index] = running.min(1.0);
    }
    adjusted
}

#[cfg(test)]
mod tests;
