//! What a finding's numbers rest on: the samples per side, the interval and
//! its kind, the noise of one call, what a learned ratio was learned from.
//! Part of the verdict ([`super`]); split from it by responsibility.

use serde::{Deserialize, Serialize};

use super::IntervalKind;

/// What a time in a finding is per.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Per {
    /// One call of the op (median over calls).
    Call,
    /// One profiler step (median over steps, or the run's total divided by
    /// its steps).
    Step,
    /// The whole profiled run.
    Run,
}

impl Per {
    /// `call`, `step` or `run`.
    pub fn as_str(self) -> &'static str {
        match self {
            Per::Call => "call",
            Per::Step => "step",
            Per::Run => "run",
        }
    }
}

/// How many samples each side of a finding's estimate had, and of what.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SampleCounts {
    /// What one sample is: a call's time or a step's total.
    pub per: Per,
    /// Baseline samples.
    pub baseline: usize,
    /// Candidate samples.
    pub candidate: usize,
}

impl SampleCounts {
    /// The fewer of the two sides' samples.
    pub fn fewest(&self) -> usize {
        self.baseline.min(self.candidate)
    }

    /// `3 steps`, `1 call`, `5–7 calls` (baseline–candidate when they differ).
    pub fn describe(&self) -> String {
        let (b, c) = (self.baseline, self.candidate);
        let count = if b == c {
            b.to_string()
        } else {
            format!("{}–{}", b.min(c), b.max(c))
        };
        let plural = if b.max(c) == 1 { "" } else { "s" };
        format!("{count} {}{plural}", self.per.as_str())
    }
}

/// The statistical reading of a finding: what its figures are per, the unit
/// of its limit, what its interval is, and whether the data could decide.
/// Every field is optional in report.json (absent before schema minor 2).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FindingStatistics {
    /// What `baseline` and `candidate` are per, for times (`unit` µs).
    pub per: Option<Per>,
    /// Unit of `limit` when it differs from `unit`: `%` for a relative
    /// threshold on `delta_percent`, `×` for a time ratio.
    pub limit_unit: Option<String>,
    /// What `interval_percent` is: a `confidence` interval at `confidence`,
    /// or the `range` over the samples (fewer than 8 a side).
    pub interval_kind: Option<IntervalKind>,
    /// Two-sided level of a `confidence` interval (0.95).
    pub confidence: Option<f64>,
    /// How many samples each side had.
    pub samples: Option<SampleCounts>,
    /// The data cannot decide: the change's point estimate is beyond the
    /// threshold but its interval or range reaches back inside it.
    pub inconclusive: bool,
    /// The smallest slowdown, %, these samples would have confirmed (see
    /// docs/POLICY.md); with `inconclusive`.
    pub min_detectable_effect_percent: Option<f64>,
    /// Cross-platform: `expected_ratio` was learned from earlier paired
    /// runs, not derived from the hardware (schema minor 3).
    pub expected_learned: Option<LearnedFrom>,
    /// A row with one sample on a side judged against the noise of one
    /// call: that noise and where it came from (schema minor 5).
    pub single_sample_noise: Option<SingleSampleNoise>,
    /// Cross-platform, against a hardware ratio: the row's roofline
    /// efficiency on the baseline's and the candidate's GPU, % (its
    /// roofline time over its time per call; schema minor 7).
    pub efficiency_percent: Option<(f64, f64)>,
}

/// The noise of one call (or launch, or step) a one-sample row is judged
/// against (docs/POLICY.md, "What one measurement can decide").
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SingleSampleNoise {
    /// Standard deviation of the log time of one call, % (2.1 ≈ ±2.1%):
    /// the larger of the borrowed or assumed noise and jitter / call time.
    pub sigma_percent: f64,
    /// Measured in the trace, assumed by the policy, or the timing jitter
    /// of a short call.
    pub source: NoiseSource,
    /// The repeating rows it was borrowed from; `None` for a prior.
    pub rows: Option<usize>,
    /// The call time the noise is for, µs: the shorter side's (schema
    /// minor 6).
    pub call_us: Option<f64>,
    /// The policy's timing jitter of one call, µs, when it applies
    /// (`noise.single_sample_jitter_us`; schema minor 6).
    pub jitter_us: Option<f64>,
}

/// Where a [`SingleSampleNoise`] came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoiseSource {
    /// Borrowed from the rows of the compared traces that repeat.
    Borrowed,
    /// The policy's `noise.single_sample_sigma_percent`: too few rows
    /// repeat to borrow one.
    Prior,
    /// The policy's `noise.single_sample_jitter_us` over the call's time:
    /// a short call strays more than the borrowed or assumed noise says
    /// (schema minor 6).
    Jitter,
}

impl SingleSampleNoise {
    /// In words: `noise of one call ±2.1% from 37 repeating rows of this
    /// trace`, `noise of one call assumed ±3.5% (policy
    /// noise.single_sample_sigma_percent): too few rows of this trace
    /// repeat to measure it`, or `noise of one call of 41 µs ±6.1% (timing
    /// jitter 2.5 µs, policy noise.single_sample_jitter_us)`.
    pub fn describe(&self) -> String {
        format!("noise of one call {}", self.spread_words())
    }

    /// How far one sample strays, for a message: `one call of 41 µs
    /// strays ±6.1% here (timing jitter 2.5 µs, policy
    /// noise.single_sample_jitter_us)`.
    pub fn strays(&self, per: Per) -> String {
        let of = self
            .call_us
            .map_or(String::new(), |us| format!(" of {}", call_time(us)));
        let why = match (self.source, self.rows) {
            (NoiseSource::Borrowed, Some(rows)) => {
                format!("borrowed from {rows} repeating rows of this trace")
            }
            (NoiseSource::Borrowed, None) => {
                "borrowed from the repeating rows of this trace".to_string()
            }
            (NoiseSource::Prior, _) => "assumed: policy noise.single_sample_sigma_percent; \
                 too few rows of this trace repeat to measure it"
                .to_string(),
            (NoiseSource::Jitter, _) => self.jitter_words(),
        };
        format!(
            "one {}{of} strays ±{:.1}% here ({why})",
            per.as_str(),
            self.sigma_percent
        )
    }

    /// `timing jitter 2.5 µs, policy noise.single_sample_jitter_us`.
    fn jitter_words(&self) -> String {
        format!(
            "timing jitter {} µs, policy noise.single_sample_jitter_us",
            trimmed_number(self.jitter_us.unwrap_or(0.0))
        )
    }

    /// The spread and its source, in words, after `noise of one call`.
    fn spread_words(&self) -> String {
        match (self.source, self.rows) {
            (NoiseSource::Borrowed, Some(rows)) => format!(
                "±{:.1}% from {rows} repeating rows of this trace",
                self.sigma_percent
            ),
            (NoiseSource::Borrowed, None) => format!(
                "±{:.1}% from the repeating rows of this trace",
                self.sigma_percent
            ),
            (NoiseSource::Prior, _) => format!(
                "assumed ±{}% (policy noise.single_sample_sigma_percent): \
                 too few rows of this trace repeat to measure it",
                trimmed_number(self.sigma_percent)
            ),
            (NoiseSource::Jitter, _) => format!(
                "of {} ±{:.1}% ({})",
                self.call_us.map_or_else(|| "—".to_string(), call_time),
                self.sigma_percent,
                self.jitter_words()
            ),
        }
    }
}

/// A call's time in a message: `41 µs`, `1.8 µs`.
fn call_time(us: f64) -> String {
    if us >= 10.0 {
        format!("{us:.0} µs")
    } else {
        format!("{us:.1} µs")
    }
}

/// A number in a message, to two decimals without trailing zeros: `15`,
/// `2.5`, `0.25`.
pub(crate) fn trimmed_number(value: f64) -> String {
    let text = format!("{value:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// What a learned expected ratio rests on.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LearnedFrom {
    /// Earlier paired runs of the workload on the same two platforms.
    pub runs: usize,
    /// Robust spread of the ratio over those runs, % (1.4826 × the median
    /// absolute relative deviation).
    pub spread_percent: f64,
}

impl LearnedFrom {
    /// `learned over 8 runs ±1.6%`.
    pub fn describe(&self) -> String {
        let runs = if self.runs == 1 { "run" } else { "runs" };
        format!(
            "learned over {} {runs} ±{:.1}%",
            self.runs,
            self.spread_percent.max(0.0)
        )
    }
}

impl FindingStatistics {
    /// The interval's name in words: `95% interval` or `range over 3 steps`.
    pub fn interval_label(&self) -> String {
        match (self.interval_kind, self.samples) {
            (Some(IntervalKind::Range), Some(samples)) => {
                format!("range over {}", samples.describe())
            }
            (Some(IntervalKind::Range), None) => "range".to_string(),
            _ => match self.confidence {
                Some(level) => format!("{:.0}% interval", level * 100.0),
                None => "interval".to_string(),
            },
        }
    }
}
