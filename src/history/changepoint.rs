//! Change points: where a series of runs stepped to a new level, whether the
//! step made the workload slower (a regression) or faster, and which commits
//! it lies between; a step the newest runs have not confirmed yet is only
//! suspicious.
//!
//! # Method
//!
//! - **PELT** (Killick, Fearnhead & Eckley, "Optimal detection of
//!   changepoints with a linear computational cost", JASA 107 (2012)
//!   1590–1598): the exact segmentation minimising the summed cost of the
//!   segments plus a penalty per change point, with the candidates that can
//!   no longer start the last segment pruned. The cost of a segment is the
//!   Gaussian mean-change cost, its squared deviations from its mean in
//!   units of the noise σ; every segment holds at least
//!   [`ChangeOptions::confirm_runs`] runs, so one outlier is never a step.
//! - **Penalty**: MBIC, `3 · ln n` (Zhang & Siegmund, "A modified Bayes
//!   information criterion with applications to the analysis of comparative
//!   genomic hybridization data", Biometrics 63 (2007) 22–32), the default of
//!   R's `changepoint` package for a change in mean (Killick & Eckley, JSS
//!   58(3), 2014); [`ChangeOptions::penalty_factor`] scales the `ln n`.
//! - **Noise**: σ is estimated from the successive differences `xᵢ₊₁ − xᵢ`
//!   (a step moves one difference only, so the steps do not inflate the
//!   noise they are judged against): their root mean square over √2,
//!   leaving out those beyond 3 robust σ (1.4826 × their median absolute
//!   deviation), steps and outliers.
//! - **Uncertainty** of a step's place: every place between its neighbouring
//!   change points whose two-segment cost is within 3.84 (χ²₁ at 95%) of
//!   the best one's, a profile-likelihood interval (as asv reports a step's
//!   uncertainty beside its place).
//! - **Levels** before and after a step are the medians of its segments;
//!   steps smaller than [`ChangeOptions::min_change_percent`] are merged
//!   away, smallest first, so a shift too small to act on is no step.
//!
//! docs/HISTORY.md ("Change points and drift") gives the labels, the
//! defaults and their measured detection rates.

use serde::{Deserialize, Serialize};

use super::series::Point;
use crate::gate::stats::median;

/// How change points are looked for.
#[derive(Clone, Debug, PartialEq)]
pub struct ChangeOptions {
    /// Runs a step must be confirmed by: every segment holds at least this
    /// many, and a step with fewer runs after it is only suspicious.
    pub confirm_runs: usize,
    /// The smallest step that counts, as a change of the level, %.
    pub min_change_percent: f64,
    /// The penalty per change point is this times `ln n` (3: MBIC).
    pub penalty_factor: f64,
    /// Fewer runs than this, or than two segments of `confirm_runs`, are
    /// `insufficient_data`.
    pub min_runs: usize,
}

impl Default for ChangeOptions {
    fn default() -> ChangeOptions {
        ChangeOptions {
            confirm_runs: 3,
            min_change_percent: 2.0,
            penalty_factor: 3.0,
            min_runs: 6,
        }
    }
}

/// What a series did, as one word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeLabel {
    /// The newest confirmed step made the value higher (slower).
    Regression,
    /// The newest confirmed step made the value lower (faster).
    Improvement,
    /// The newest runs stepped away from the level before them, but fewer
    /// of them than [`ChangeOptions::confirm_runs`]: wait for more runs.
    Suspicious,
    /// No step of at least the minimum change.
    NoChange,
    /// Fewer runs than [`ChangeOptions::min_runs`], or a value that is not
    /// a finite number.
    InsufficientData,
}

impl ChangeLabel {
    /// `regression`, `improvement`, `suspicious`, `no_change` or
    /// `insufficient_data`.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeLabel::Regression => "regression",
            ChangeLabel::Improvement => "improvement",
            ChangeLabel::Suspicious => "suspicious",
            ChangeLabel::NoChange => "no_change",
            ChangeLabel::InsufficientData => "insufficient_data",
        }
    }
}

/// The commits a step lies between: it happened after `last_before` and
/// by `first_after`; the commits between them (the uncertainty) are the
/// suspects.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CommitRange {
    /// The newest commit surely before the step.
    pub last_before: String,
    /// The oldest commit surely after it.
    pub first_after: String,
}

/// One step of a series.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// The first run after the step (index into the series).
    pub index: usize,
    /// Where else the step may be: the first and last plausible `index`.
    pub uncertainty: (usize, usize),
    /// The level before (median of the runs since the previous step).
    pub before: f64,
    /// The level after (median of the runs up to the next step).
    pub after: f64,
    /// `after / before − 1`, %; infinite when `before` is 0.
    pub change_percent: f64,
    /// Whether at least [`ChangeOptions::confirm_runs`] runs follow it.
    pub confirmed: bool,
    /// The commits it lies between, when the series has commits
    /// ([`detect_points`]).
    pub commits: Option<CommitRange>,
}

/// What [`detect`] found in a series.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Detection {
    /// The series in one word: the newest step's direction.
    pub label: ChangeLabel,
    /// The steps, oldest first; the last one is unconfirmed when the label
    /// is `suspicious`.
    pub steps: Vec<Step>,
    /// The run-to-run noise the steps were judged against, % of the median
    /// value; `None` with insufficient data or an all-zero series.
    pub noise_percent: Option<f64>,
}

/// Half-width of the location interval in cost units: χ²₁'s 95% quantile.
const LOCATION_CHI2_95: f64 = 3.84;

/// Successive differences further than this many robust σ from 0 are
/// steps or outliers, left out of the noise estimate.
const OUTLIER_SIGMAS: f64 = 3.0;

/// The noise σ never counts as less than this share of the median value, so
/// a series of identical runs still has a scale.
const MIN_NOISE_SHARE: f64 = 1e-4;

/// Change points of a series of values, one per run, oldest first.
pub fn detect(values: &[f64], options: &ChangeOptions) -> Detection {
    let confirm = options.confirm_runs.max(1);
    let min_runs = options.min_runs.max(2 * confirm);
    if values.len() < min_runs || values.iter().any(|v| !v.is_finite()) {
        return Detection {
            label: ChangeLabel::InsufficientData,
            steps: Vec::new(),
            noise_percent: None,
        };
    }
    let scale = median(&values.iter().map(|v| v.abs()).collect::<Vec<_>>()).unwrap_or(0.0);
    let sigma = robust_sigma(values).max(MIN_NOISE_SHARE * scale);
    if sigma <= 0.0 {
        return Detection {
            label: ChangeLabel::NoChange,
            steps: Vec::new(),
            noise_percent: None,
        };
    }
    let cost = Cost::new(values, sigma);
    let penalty = options.penalty_factor * (values.len() as f64).ln();
    let mut bounds = pelt(&cost, penalty, confirm);
    drop_small_steps(values, &mut bounds, options.min_change_percent);
    let mut steps: Vec<Step> = bounds
        .windows(3)
        .map(|w| step_in(values, &cost, (w[0], w[1], w[2]), confirm))
        .collect();
    let last_start = bounds[bounds.len() - 2];
    if let Some(tail) = tail_step(values, &cost, last_start, penalty, options) {
        steps.push(tail);
    }
    let label = match steps.last() {
        None => ChangeLabel::NoChange,
        Some(step) if !step.confirmed => ChangeLabel::Suspicious,
        Some(step) if step.after > step.before => ChangeLabel::Regression,
        Some(_) => ChangeLabel::Improvement,
    };
    Detection {
        label,
        steps,
        noise_percent: (scale > 0.0).then(|| sigma / scale * 100.0),
    }
}

/// [`detect`] over a series' values, with each step's commit range.
pub fn detect_points(points: &[Point], options: &ChangeOptions) -> Detection {
    let values: Vec<f64> = points.iter().map(|p| p.value_us).collect();
    let mut detection = detect(&values, options);
    for step in &mut detection.steps {
        let (first, last) = step.uncertainty;
        step.commits = Some(CommitRange {
            last_before: points[first - 1].commit.clone(),
            first_after: points[last].commit.clone(),
        });
    }
    detection
}

/// σ from the successive differences: their root mean square about 0,
/// leaving out those beyond [`OUTLIER_SIGMAS`] robust σ of it (the
/// steps and outliers), the robust σ being 1.4826 × their median absolute
/// deviation (consistent for a normal σ). A difference has √2 σ.
fn robust_sigma(values: &[f64]) -> f64 {
    let differences: Vec<f64> = values.windows(2).map(|w| w[1] - w[0]).collect();
    let center = median(&differences).unwrap_or(0.0);
    let deviations: Vec<f64> = differences.iter().map(|d| (d - center).abs()).collect();
    let robust = 1.4826 * median(&deviations).unwrap_or(0.0);
    let kept: Vec<f64> = differences
        .iter()
        .filter(|d| d.abs() <= OUTLIER_SIGMAS * robust)
        .copied()
        .collect();
    if kept.is_empty() {
        return robust / std::f64::consts::SQRT_2;
    }
    let mean_square = kept.iter().map(|d| d * d).sum::<f64>() / kept.len() as f64;
    (mean_square / 2.0).sqrt()
}

/// The Gaussian mean-change cost of any segment in O(1), from prefix sums
/// of the values in units of σ.
struct Cost {
    sums: Vec<f64>,
    squares: Vec<f64>,
}

impl Cost {
    fn new(values: &[f64], sigma: f64) -> Cost {
        let mut sums = vec![0.0];
        let mut squares = vec![0.0];
        for value in values {
            let z = value / sigma;
            sums.push(sums[sums.len() - 1] + z);
            squares.push(squares[squares.len() - 1] + z * z);
        }
        Cost { sums, squares }
    }

    /// Σ (zᵢ − z̄)² over runs `start..end`.
    fn of(&self, start: usize, end: usize) -> f64 {
        let n = (end - start) as f64;
        let sum = self.sums[end] - self.sums[start];
        let squares = self.squares[end] - self.squares[start];
        (squares - sum * sum / n).max(0.0)
    }
}

/// PELT: the segment bounds (`0`, the change points, `n`) minimising the
/// segments' costs plus `penalty` per segment, each segment at least
/// `min_len` runs.
fn pelt(cost: &Cost, penalty: f64, min_len: usize) -> Vec<usize> {
    let n = cost.sums.len() - 1;
    let mut best = vec![f64::INFINITY; n + 1];
    let mut previous = vec![0usize; n + 1];
    best[0] = -penalty;
    let mut candidates: Vec<usize> = Vec::new();
    for end in min_len..=n {
        // A run `end − min_len` can start the last segment from now on,
        // once a segmentation can end there.
        let start = end - min_len;
        if start == 0 || start >= min_len {
            candidates.push(start);
        }
        let (choice, total) = candidates
            .iter()
            .map(|&s| (s, best[s] + cost.of(s, end) + penalty))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .expect("the start of the series is a candidate");
        best[end] = total;
        previous[end] = choice;
        // A start that cannot beat the best now never will (the cost
        // gains nothing from a further split, Killick et al.'s K = 0).
        candidates.retain(|&s| best[s] + cost.of(s, end) <= total);
    }
    let mut bounds = vec![n];
    let mut end = n;
    while end > 0 {
        end = previous[end];
        bounds.push(end);
    }
    bounds.reverse();
    bounds
}

/// Removes the change points whose step is below `min_percent`, smallest
/// first, re-measuring the neighbours of each one removed.
fn drop_small_steps(values: &[f64], bounds: &mut Vec<usize>, min_percent: f64) {
    loop {
        let smallest = (1..bounds.len() - 1)
            .map(|i| {
                let before = level(&values[bounds[i - 1]..bounds[i]]);
                let after = level(&values[bounds[i]..bounds[i + 1]]);
                (i, change_percent(before, after).abs())
            })
            .filter(|&(_, change)| change < min_percent)
            .min_by(|a, b| a.1.total_cmp(&b.1));
        match smallest {
            Some((i, _)) => {
                bounds.remove(i);
            }
            None => return,
        }
    }
}

/// The step between the change points `start` and `end` found near `at`:
/// placed where one step fits the runs `start..end` best, with no segment
/// length imposed, so the runs counted as confirming it are all after it.
fn step_in(
    values: &[f64],
    cost: &Cost,
    (start, at, end): (usize, usize, usize),
    confirm: usize,
) -> Step {
    let (index, uncertainty) = best_split(cost, start, at, end);
    let before = level(&values[start..index]);
    let after = level(&values[index..end]);
    Step {
        index,
        uncertainty,
        before,
        after,
        change_percent: change_percent(before, after),
        confirmed: end - index >= confirm,
        commits: None,
    }
}

/// The place in `start + 1..end` where a single step fits best (`at` on a
/// tie), and the first and last place whose fit is within
/// [`LOCATION_CHI2_95`] of it.
fn best_split(cost: &Cost, start: usize, at: usize, end: usize) -> (usize, (usize, usize)) {
    let split = |k: usize| cost.of(start, k) + cost.of(k, end);
    let best = (start + 1..end)
        .map(|k| (k, split(k)))
        .fold((at, split(at)), |a, b| if b.1 < a.1 { b } else { a });
    let plausible: Vec<usize> = (start + 1..end)
        .filter(|&k| split(k) - best.1 <= LOCATION_CHI2_95)
        .collect();
    let first = plausible.first().copied().unwrap_or(best.0);
    let last = plausible.last().copied().unwrap_or(best.0);
    (best.0, (first.min(best.0), last.max(best.0)))
}

/// A step in the newest runs of the last segment (`start..n`) that fewer
/// than `confirm_runs` runs follow: the split of the tail that gains the
/// most over the penalty, when it also changes the level enough.
fn tail_step(
    values: &[f64],
    cost: &Cost,
    start: usize,
    penalty: f64,
    options: &ChangeOptions,
) -> Option<Step> {
    let n = values.len();
    let confirm = options.confirm_runs.max(1);
    let whole = cost.of(start, n);
    (1..confirm)
        .filter(|&k| n - k >= start + confirm)
        .map(|k| (n - k, whole - cost.of(start, n - k) - cost.of(n - k, n)))
        .filter(|&(at, gain)| {
            let before = level(&values[start..at]);
            let after = level(&values[at..]);
            gain > penalty && change_percent(before, after).abs() >= options.min_change_percent
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(at, _)| step_in(values, cost, (start, at, n), confirm))
}

/// A segment's level: the median of its runs.
fn level(values: &[f64]) -> f64 {
    median(values).unwrap_or(0.0)
}

/// `after / before − 1` in %: 0 for 0 → 0, infinite from 0 to anything else.
pub(super) fn change_percent(before: f64, after: f64) -> f64 {
    if before != 0.0 {
        (after / before - 1.0) * 100.0
    } else if after == 0.0 {
        0.0
    } else {
        f64::INFINITY.copysign(after)
    }
}

#[cfg(test)]
mod tests;
