//! Descriptive statistics of per-invocation samples, and the one median
//! every table and the gate use (numpy's: the mean of the two middle values
//! for an even count, which TraceLens agreement relies on).

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
        let std = (count > 1).then(|| {
            let squares: f64 = samples.iter().map(|x| (x - mean) * (x - mean)).sum();
            (squares / (count - 1) as f64).sqrt()
        });
        Stats {
            count: count as u64,
            sum,
            mean,
            median: median(samples).expect("samples are not empty"),
            std,
            min: samples
                .iter()
                .copied()
                .min_by(f64::total_cmp)
                .expect("not empty"),
            max: samples
                .iter()
                .copied()
                .max_by(f64::total_cmp)
                .expect("not empty"),
        }
    }
}

/// The median (mean of the two middle values for an even count); `None`
/// for no values. NaNs sort last ([`f64::total_cmp`]).
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut scratch = values.to_vec();
    Some(median_in_place(&mut scratch))
}

/// The median of a non-empty buffer, reordering it (linear-time selection;
/// the bootstrap reuses its buffers through this).
pub fn median_in_place(values: &mut [f64]) -> f64 {
    let n = values.len();
    let mid = n / 2;
    let (left, upper, _) = values.select_nth_unstable_by(mid, f64::total_cmp);
    let upper = *upper;
    if n % 2 == 1 {
        upper
    } else {
        let lower = left
            .iter()
            .copied()
            .max_by(f64::total_cmp)
            .expect("an even count ≥ 2 has a left half");
        (lower + upper) / 2.0
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

    #[test]
    fn median_is_numpys() {
        // numpy.median: the mean of the two middle values for an even count.
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0]), Some(3.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[5.0, 1.0, 3.0]), Some(3.0));
        assert_eq!(median(&[1.0, f64::NAN, 2.0]), Some(2.0), "NaN sorts last");
        let mut buffer = vec![9.0, 7.0, 8.0, 6.0];
        assert_eq!(median_in_place(&mut buffer), 7.5);
        // The table statistics use the same median.
        assert_eq!(Stats::of(&[10.0, 30.0, 20.0, 40.0]).median, 25.0);
    }
}
