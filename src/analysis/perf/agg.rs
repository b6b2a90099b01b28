//! Statistics over a row's invocations with pandas' and numpy's semantics
//! (Kahan and pairwise sums, sample and population standard deviations), so
//! figures agree with TraceLens's to the last digits.

use serde::Serialize;

use crate::analysis::ops::stats::median;

/// Statistics over invocations (pandas semantics: Kahan sum, mean = sum/n,
/// sample standard deviation by Welford, absent for a single sample).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Agg {
    /// Number of samples.
    pub count: u64,
    /// Sum.
    pub sum: f64,
    /// Mean.
    pub mean: f64,
    /// Median.
    pub median: f64,
    /// Sample standard deviation (n − 1); `None` with fewer than two samples.
    pub std: Option<f64>,
    /// Smallest.
    pub min: f64,
    /// Largest.
    pub max: f64,
}

impl Agg {
    /// Statistics of the finite samples; `None` when there are none.
    pub fn of(samples: impl IntoIterator<Item = f64>) -> Option<Agg> {
        let values: Vec<f64> = samples.into_iter().filter(|v| v.is_finite()).collect();
        if values.is_empty() {
            return None;
        }
        let sum = kahan_sum(&values);
        let count = values.len();
        let (mut n, mut mean, mut m2) = (0.0f64, 0.0f64, 0.0f64);
        for &x in &values {
            n += 1.0;
            let old = mean;
            mean += (x - old) / n;
            m2 += (x - mean) * (x - old);
        }
        let std = (count > 1).then(|| (m2 / (n - 1.0)).sqrt());
        Some(Agg {
            count: count as u64,
            sum,
            mean: sum / count as f64,
            median: median(&values).expect("values are not empty"),
            std,
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        })
    }
}
/// Kahan (compensated) summation, as pandas sums.
fn kahan_sum(values: &[f64]) -> f64 {
    let (mut sum, mut c) = (0.0f64, 0.0f64);
    for &x in values {
        let y = x - c;
        let t = sum + y;
        c = (t - sum) - y;
        sum = t;
    }
    sum
}

/// numpy's pairwise summation (blocks of 8, split above 128).
pub(super) fn pairwise_sum(values: &[f64]) -> f64 {
    let n = values.len();
    if n < 8 {
        return values.iter().fold(0.0, |s, v| s + v);
    }
    if n <= 128 {
        let mut r = [0.0f64; 8];
        r.copy_from_slice(&values[..8]);
        let mut i = 8;
        while i + 8 <= n {
            for j in 0..8 {
                r[j] += values[i + j];
            }
            i += 8;
        }
        let mut total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for v in &values[i..] {
            total += v;
        }
        return total;
    }
    let half = n / 2;
    let split = half - half % 8;
    pairwise_sum(&values[..split]) + pairwise_sum(&values[split..])
}
