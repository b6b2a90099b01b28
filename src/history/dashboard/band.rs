//! The noise band drawn behind a series: per level of the series (before
//! and after its marked step), median ± 3 × the scaled median absolute
//! deviation, a robust spread a single outlier cannot widen.

use crate::analysis::ops::stats::median;

/// How many scaled MADs the band spans either side of the median.
pub const K: f64 = 3.0;
/// Scales a MAD to a standard deviation for normally distributed noise.
const MAD_TO_SIGMA: f64 = 1.4826;

/// The band over runs `start..=end` (indices into the series).
#[derive(Clone, Debug, PartialEq)]
pub struct Segment {
    /// The first run the segment covers.
    pub start: usize,
    /// The last run it covers.
    pub end: usize,
    /// Median − K·MAD.
    pub low: f64,
    /// Median + K·MAD.
    pub high: f64,
}

/// The band of a series (missing values left out), split at `step` (the
/// first run after a marked step) so that a step does not count as noise.
pub fn band(values: &[Option<f64>], step: Option<usize>) -> Vec<Segment> {
    let cuts = match step {
        Some(index) if index > 0 && index < values.len() => {
            vec![(0, index - 1), (index, values.len() - 1)]
        }
        _ if values.is_empty() => Vec::new(),
        _ => vec![(0, values.len() - 1)],
    };
    cuts.into_iter()
        .filter_map(|(start, end)| {
            let present: Vec<f64> = values[start..=end]
                .iter()
                .flatten()
                .copied()
                .filter(|v| v.is_finite())
                .collect();
            let center = median(&present)?;
            let deviations: Vec<f64> = present.iter().map(|v| (v - center).abs()).collect();
            let spread = K * MAD_TO_SIGMA * median(&deviations)?;
            Some(Segment {
                start,
                end,
                low: center - spread,
                high: center + spread,
            })
        })
        .collect()
}
