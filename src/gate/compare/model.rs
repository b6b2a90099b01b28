//! The data a comparison is made of: options, the two sides of an op row,
//! matched and shape-changed rows, timeline metrics and the whole
//! [`Comparison`]. Plain data, serialised into report.json by the judge's
//! callers.

use serde::Serialize;

use crate::analysis::hardware::{ComputeSpec, Hardware};
use crate::analysis::ops::category::Category;
use crate::analysis::ops::stats::Stats;
use crate::analysis::profile::{Coverage, GraphPlace, GraphRole, OpModel, Phase};
use crate::gate::snapshot::{Fingerprint, OpKey};
use crate::gate::stats::RatioEstimate;
use crate::gate::verdict::OpRef;

use super::borrowed::BorrowedNoise;
use super::learned::LearnedRatios;

/// Default two-sided confidence level of the intervals.
pub const DEFAULT_CONFIDENCE: f64 = 0.95;

/// Default number of bootstrap resamples per row.
pub const DEFAULT_RESAMPLES: usize = 2000;

/// Default seed (the bytes of `tracegat`).
pub const DEFAULT_SEED: u64 = 0x7472_6163_6567_6174;

/// How to compare.
#[derive(Clone, Debug)]
pub struct CompareOptions {
    /// The baseline's hardware (policy, `--hardware` or detected), when known.
    pub baseline_hardware: Option<Hardware>,
    /// The candidate's hardware, when known.
    pub candidate_hardware: Option<Hardware>,
    /// Two-sided confidence level of the intervals.
    pub confidence: f64,
    /// Bootstrap resamples per row and timeline metric.
    pub resamples: usize,
    /// Seed of the resampling.
    pub seed: u64,
    /// Cross-platform: the ratios learned from earlier paired runs of this
    /// workload on the same two platforms; a row with one is judged against
    /// it instead of the hardware's expectation.
    pub learned: Option<LearnedRatios>,
}

impl Default for CompareOptions {
    fn default() -> CompareOptions {
        CompareOptions {
            baseline_hardware: None,
            candidate_hardware: None,
            confidence: DEFAULT_CONFIDENCE,
            resamples: DEFAULT_RESAMPLES,
            seed: DEFAULT_SEED,
            learned: None,
        }
    }
}

/// What the per-row samples are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SamplesBasis {
    /// Per-step totals of the row (both sides ran it in ≥ 2 steps).
    Steps,
    /// Per-invocation direct kernel times.
    Invocations,
    /// One sample per run: the row's total (op totals without steps).
    Runs,
}

/// What times and impacts are normalised to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ImpactBasis {
    /// Totals over the whole profiled run.
    PerRun,
    /// Totals divided by the run's profiler steps: used when the two sides
    /// profiled different numbers of steps.
    PerStep,
}

/// Where an expected cross-platform ratio comes from.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ExpectationBasis {
    /// Ratio of roofline times, `max(flops / peak, bytes / bandwidth)`, from
    /// the row's perf model.
    Roofline,
    /// Memory-bandwidth ratio: a memory-bound category without a perf model,
    /// or a model without a compute spec (integer work).
    Bandwidth,
    /// Peak FLOP/s ratio for the row's dtype: a compute-bound category
    /// (GEMM, convolution, attention) without a perf model.
    PeakCompute,
    /// The median ratio the row showed over earlier paired runs of the same
    /// workload on the same two platforms ([`LearnedRatios`]): the stacks'
    /// gap is in it, so only a change of the ratio is a finding.
    History {
        /// Earlier paired runs it was learned from.
        runs: usize,
        /// Robust relative spread of those runs' ratios (0.03 = 3%).
        spread: f64,
    },
}

/// The time ratio (candidate / baseline) the hardware difference alone
/// explains, or the one learned from earlier paired runs.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Expectation {
    /// Expected candidate / baseline time.
    pub ratio: f64,
    /// How it was derived.
    pub basis: ExpectationBasis,
    /// The compute spec whose peaks were used (roofline or peak compute).
    pub spec: Option<ComputeSpec>,
}

/// One op row on one side, figures per run (median over the side's runs).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OpSide {
    /// The row's key.
    #[serde(flatten)]
    pub key: OpKey,
    /// Category.
    pub category: Category,
    /// `nn.Module` path, when recorded.
    pub module_path: Option<String>,
    /// Runs of this side that have the row.
    pub runs: usize,
    /// Invocations per run (median over the runs that have it).
    pub count: u64,
    /// Direct kernel time per run, µs: median over all of the side's runs,
    /// 0 for a run without the row.
    pub total_us: f64,
    /// The time the impact is computed from, µs: `total_us`, or per step
    /// under [`ImpactBasis::PerStep`].
    pub time_us: f64,
    /// Median direct kernel time per invocation, µs (median over runs of
    /// each run's median).
    pub median_us: f64,
    /// Mean per invocation, µs (median over runs of each run's mean).
    pub mean_us: f64,
    /// Smallest invocation over all runs, µs.
    pub min_us: f64,
    /// Largest invocation over all runs, µs.
    pub max_us: f64,
    /// Kernel names of one invocation (the last run that has the row).
    pub kernel_sequence: Vec<String>,
    /// Perf model of one invocation, when one covers the op.
    pub model: Option<OpModel>,
    /// For graph-replayed work: the graph and what the row holds.
    pub graph: Option<GraphPlace>,
    /// For graph rows: each kernel's time per run, µs (the last run that
    /// has the row).
    pub kernel_us: Vec<(String, f64)>,
}

impl OpSide {
    /// A side summarised from its samples alone (an op's total over its
    /// shapes, a kernel family, an op within a phase): their median, mean,
    /// minimum and maximum; no kernel sequence, model or graph of its own.
    /// The caller sets where it ran, how often and how long.
    pub(super) fn from_samples(key: OpKey, category: Category, samples: &[f64]) -> OpSide {
        let stats = Stats::of(samples);
        OpSide {
            key,
            category,
            module_path: None,
            runs: 0,
            count: 0,
            total_us: 0.0,
            time_us: 0.0,
            median_us: stats.median,
            mean_us: stats.mean,
            min_us: stats.min,
            max_us: stats.max,
            kernel_sequence: Vec::new(),
            model: None,
            graph: None,
            kernel_us: Vec::new(),
        }
    }

    /// The op as a verdict finding names it; graph-replayed work says where
    /// it ran after its module path (`… in hipGraphLaunch launch #0`).
    pub fn op_ref(&self) -> OpRef {
        let module_path = match (&self.module_path, &self.graph) {
            (Some(path), Some(graph)) => Some(format!("{path} {}", graph.describe())),
            (None, Some(graph)) => Some(graph.describe()),
            (path, None) => path.clone(),
        };
        OpRef {
            name: self.key.name.clone(),
            input_dims: self.key.input_dims.clone(),
            input_type: self.key.input_type.clone(),
            input_strides: self.key.input_strides.clone(),
            category: self.category.as_str().to_string(),
            module_path,
        }
    }

    /// Whether this is a whole-graph row: its kernel sequence is judged,
    /// its time only when that sequence changed (the graph's other rows
    /// hold the same time).
    pub fn is_whole_graph(&self) -> bool {
        self.graph
            .as_ref()
            .is_some_and(|g| g.role == GraphRole::Graph)
    }
}

/// One op row matched by its exact key.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OpComparison {
    /// The baseline row.
    pub baseline: OpSide,
    /// The candidate row.
    pub candidate: OpSide,
    /// median(candidate) / median(baseline) of the samples, with its interval.
    pub estimate: RatioEstimate,
    /// What the samples are.
    pub samples_basis: SamplesBasis,
    /// Median of the baseline samples the estimate used (per step or per
    /// call, see `samples_basis`), µs.
    pub baseline_sample_median_us: f64,
    /// Median of the candidate samples, µs.
    pub candidate_sample_median_us: f64,
    /// Run-to-run noise of the row's median over the baseline window
    /// (relative, 0.04 = 4%); `None` with fewer than two baseline runs
    /// having the row.
    pub noise: Option<f64>,
    /// Cross-platform: the ratio learned from earlier paired runs, else
    /// the one the hardware explains; `None` on one platform, or without
    /// either.
    pub expected: Option<Expectation>,
    /// Candidate minus baseline time (per run or per step, see
    /// [`Comparison::impact_basis`]), µs.
    pub impact_us: f64,
    /// `impact_us` as a share of the baseline's GPU busy time, %.
    pub impact_percent: f64,
    /// Unified diff of the kernel-name sequences, when they differ.
    pub kernel_diff: Option<String>,
}

impl OpComparison {
    /// The order rows of one kind are listed in: the largest impact first,
    /// then by key, so the same inputs list the same way.
    pub fn most_impact_first(&self, other: &OpComparison) -> std::cmp::Ordering {
        other
            .impact_percent
            .abs()
            .total_cmp(&self.impact_percent.abs())
            .then(self.baseline.key.cmp(&other.baseline.key))
    }
}

/// One kernel of a matched row whose calls launch different kernels,
/// compared over that kernel's launches: a slowed kernel that only some of
/// the row's calls launch barely moves the row's median call.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KernelPart {
    /// The kernel's name.
    pub kernel: String,
    /// The row's sides with the kernel's figures (count, times, its one
    /// name for a kernel sequence), per-launch samples, ratio and impact.
    pub comparison: OpComparison,
}

/// One op name compared within one phase (`phase_ops.rs`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PhaseOpComparison {
    /// The phase.
    pub phase: Phase,
    /// The op's sides over the phase's steps (key: the op name alone),
    /// per-step samples, ratio and impact.
    pub comparison: OpComparison,
}

/// Rows with the same name and call site whose shapes changed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ShapeChange {
    /// The baseline row.
    pub baseline: OpSide,
    /// The candidate row.
    pub candidate: OpSide,
    /// Candidate minus baseline time, µs.
    pub impact_us: f64,
    /// As a share of the baseline's GPU busy time, %.
    pub impact_percent: f64,
    /// Unified diff of the kernel-name sequences, when they differ.
    pub kernel_diff: Option<String>,
}

/// One GPU-timeline metric, baseline vs candidate.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TimelineComparison {
    /// `computation_time`, `exposed_comm_time`, `exposed_memcpy_time`,
    /// `busy_time`, `idle_time`, `total_time`, `total_comm_time`,
    /// `total_memcpy_time`.
    pub metric: String,
    /// Baseline (median over runs), µs; per step under [`ImpactBasis::PerStep`].
    /// A run's value is its steps' sum when every run on both sides has
    /// steps (two or more a side), the time between steps left out.
    pub baseline_us: f64,
    /// Candidate, µs, as the baseline's.
    pub candidate_us: f64,
    /// candidate / baseline − 1, %; `None` when the baseline is 0.
    pub delta_percent: Option<f64>,
    /// Run-to-run noise over the baseline window (relative); `None` with
    /// fewer than two runs.
    pub noise: Option<f64>,
    /// Ratio of medians of the per-step values with its interval, when
    /// both sides have two or more steps.
    pub estimate: Option<RatioEstimate>,
    /// How much the metric varies from step to step within a run
    /// (relative): the larger of the two sides' largest deviation of a
    /// step's value from the side's median step; `None` unless both sides
    /// have two or more steps. Each side around its own median, so a
    /// uniform slowdown of every step does not widen it.
    pub step_spread: Option<f64>,
}

/// A candidate compared with its baseline runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    /// The candidate's workload name.
    pub workload: String,
    /// Baseline runs compared against (the window's size).
    pub baseline_runs: usize,
    /// Fingerprint of each baseline run.
    pub baseline_fingerprints: Vec<Fingerprint>,
    /// Fingerprint of the candidate.
    pub candidate_fingerprint: Fingerprint,
    /// Whether the two sides ran on different hardware (the catalog entries
    /// given in [`CompareOptions`] differ, or, without them, the GPU names do).
    pub cross_platform: bool,
    /// Baseline hardware name, when known.
    pub baseline_hardware: Option<String>,
    /// Candidate hardware name, when known.
    pub candidate_hardware: Option<String>,
    /// What op and timeline figures are normalised to.
    pub impact_basis: ImpactBasis,
    /// Confidence level of the intervals.
    pub confidence: f64,
    /// Bootstrap resamples.
    pub resamples: usize,
    /// Resampling seed.
    pub seed: u64,
    /// The GPU timeline, metric by metric.
    pub timeline: Vec<TimelineComparison>,
    /// GPU time per inference step, one row per phase both sides ran
    /// (`decode GPU time per step`, …); empty when no side tags steps.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<TimelineComparison>,
    /// Each op name within each phase both sides ran, when the snapshots
    /// record per-step op times (more than one phase); largest absolute
    /// impact first. Not counted among the matched rows.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub phase_ops: Vec<PhaseOpComparison>,
    /// Rows matched by exact key, largest absolute impact first.
    pub ops: Vec<OpComparison>,
    /// Same op and call site, other shapes.
    pub shape_changed: Vec<ShapeChange>,
    /// One row per op name and call site summing all its shapes, for ops
    /// with several shapes or shapes that differ between the sides (an op
    /// whose shapes change every step is judged here); largest absolute
    /// impact first. Not counted among the matched rows.
    pub op_totals: Vec<OpComparison>,
    /// The kernels of matched rows whose calls launch different kernels
    /// (`kernel_parts.rs`), each compared over its own launches; not
    /// counted among the matched rows.
    pub kernel_parts: Vec<KernelPart>,
    /// Kernel families: each kernel name several rows launch, compared over
    /// all its launches (`families.rs`), largest absolute impact first; not
    /// counted among the matched rows. Empty across platforms.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub kernel_families: Vec<OpComparison>,
    /// Rows only the candidate has, most time first.
    pub new_ops: Vec<OpSide>,
    /// Rows only the baseline has, most time first.
    pub missing_ops: Vec<OpSide>,
    /// Why nothing (or nothing per op) can be compared: no baseline, no GPU
    /// work on a side, no matched op rows. Never a silent pass.
    pub nothing_to_compare: Option<String>,
    /// The noise of one call, borrowed from the rows that repeat, for the
    /// rows measured once on a side; `None` when too few rows repeat.
    pub borrowed_noise: Option<BorrowedNoise>,
    /// Remarks that are not findings.
    pub notes: Vec<String>,
    /// Baseline GPU busy time (median over runs; per step under
    /// [`ImpactBasis::PerStep`]), µs: the denominator of every impact.
    pub baseline_total_us: f64,
    /// Candidate GPU busy time, µs, on the same basis.
    pub candidate_total_us: f64,
    /// The baseline run whose GPU time rows cover least; `None` without
    /// baseline runs.
    pub baseline_coverage: Option<Coverage>,
    /// The candidate's coverage of GPU time by rows.
    pub candidate_coverage: Coverage,
}
