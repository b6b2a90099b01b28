//! Descriptive statistics of per-invocation samples.

use serde::{Deserialize, Serialize};

/// Count, sum, mean, median, sample standard deviation, min and max.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// Number of samples.
    pub count: u64,
    /// Sum.
    pub sum: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Median (mean of the two middle samples for an even count).
    pub median: f64,
    /// Sample standard deviation (n − 1); `None` with fewer than two samples,
    /// where pandas (and so TraceLens) prints an empty cell.
    pub std: Option<f64>,
    /// Smallest sample.
    pub min: f64,
    /// Largest sample.
    pub max: f64,
}

impl Stats {
    /// Statistics of `samples` (any order); all zero for no samples.
    pub fn of(samples: &[f64]) -> Stats {
        if samples.is_empty() {
            return Stats::default();
        }
        let count = samples.len();
        let sum: f64 = samples.iter().fold(0.0, |total, x| total + x);
        let mean = sum / count as f64;
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let median = if count % 2 == 1 {
            sorted[count / 2]
        } else {
            (sorted[count / 2 - 1] + sorted[count / 2]) / 2.0
        };
        let std = (count > 1).then(|| {
            let squares: f64 = samples.iter().map(|x| (x - mean) * (x - mean)).sum();
            (squares / (count - 1) as f64).sqrt()
        });
        Stats {
            count: count as u64,
            sum,
            mean,
            median,
            std,
            min: sorted[0],
            max: sorted[count - 1],
        }
    }
}

/// `part` as a percentage of `whole`; 0 when `whole` is not positive.
pub fn percent(part: f64, whole: f64) -> f64 {
    if whole > 0.0 {
        part / whole * 100.0
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_of_samples() {
        let s = Stats::of(&[4.0, 1.0, 3.0, 2.0]);
        assert_eq!(
            (s.count, s.sum, s.mean, s.median, s.min, s.max),
            (4, 10.0, 2.5, 2.5, 1.0, 4.0)
        );
        assert!((s.std.expect("two or more") - 1.290_994_448_735_805_6).abs() < 1e-12);
        let one = Stats::of(&[7.0]);
        assert_eq!((one.median, one.std), (7.0, None));
        assert_eq!(Stats::of(&[]).count, 0);
    }
}
