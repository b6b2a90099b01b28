//! Compare: baseline snapshots (one run, or a window of earlier runs) against
//! a candidate snapshot. Produces plain data, a [`Comparison`]; the judge
//! (`src/judge.rs`) applies a policy to it and writes the verdict.
//!
//! # Matching op rows
//!
//! 1. **Exact key**: name, `Input Dims`, `Input type`, `Input Strides` and
//!    `Concrete Inputs` ([`OpKey`]; the process and thread labels are left
//!    out, they carry ids that change between runs). These are
//!    [`Comparison::ops`].
//! 2. **Shape changed**: rows left over on both sides with the same name and
//!    the same `nn.Module` path (the call site) are paired, largest time
//!    first. Where neither row has a module path, the name alone pairs them
//!    only when exactly one row of that name is left on each side.
//!    These are [`Comparison::shape_changed`].
//! 3. Everything else is **new** (candidate only) or **missing** (baseline
//!    only). Nothing is dropped.
//!
//! # Statistics per matched row
//!
//! - **Samples.** When both sides have the row in two or more profiler steps,
//!   the samples are its per-step totals (what the user waits for per
//!   step); otherwise its per-invocation direct kernel times (the bounded
//!   sample a snapshot keeps). [`OpComparison::samples_basis`] says which.
//! - **Ratio of medians with a bootstrap interval** ([`crate::gate::stats`]): with
//!   one baseline run and samples of equal length on both sides, pairs
//!   (i-th invocation or step with i-th) are resampled; otherwise the sides
//!   are resampled independently, baseline samples pooled over the window.
//!   Seeded by [`CompareOptions::seed`] and the row's key, so each row's
//!   interval depends only on its own data. One sample on a side: no
//!   interval ([`RatioEstimate::interval`] is `None`).
//! - **Noise** (window of two or more baseline runs): the largest relative
//!   deviation of a run's median from the window's median of run medians
//!   ([`stats::max_relative_deviation`]); the judge can raise its noise
//!   floor to it. Traces within one run do not show run-to-run noise.
//! - **Impact**: candidate time minus baseline time, per run (or per step
//!   when the two sides profiled different numbers of steps), as a share of
//!   the baseline's GPU busy time over the same span.
//! - **Kernel selection**: when the kernel-name sequences differ, a unified
//!   diff (the `similar` crate), whether or not the time changed.
//! - **Cross-platform expectation** when the hardware differs: the ratio of
//!   roofline times on the two platforms (REFERENCE §4–5), or by category
//!   when the row has no perf model.

use std::collections::{HashMap, HashSet};

use serde::Serialize;
use similar::TextDiff;

use crate::analysis::hardware::{ComputeSpec, Hardware};
use crate::analysis::ops::category::Category;
use crate::analysis::ops::stats::percent;
use crate::analysis::perf_model::dtype::Dtype;
use crate::analysis::profile::OpModel;
use crate::gate::snapshot::{Fingerprint, OpKey, OpSnapshot, Snapshot};
use crate::gate::stats::{self, RatioEstimate};
use crate::gate::verdict::OpRef;

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
}

impl Default for CompareOptions {
    fn default() -> CompareOptions {
        CompareOptions {
            baseline_hardware: None,
            candidate_hardware: None,
            confidence: DEFAULT_CONFIDENCE,
            resamples: DEFAULT_RESAMPLES,
            seed: DEFAULT_SEED,
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
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
}

/// The time ratio (candidate / baseline) the hardware difference alone explains.
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
}

impl OpSide {
    /// The op as a verdict finding names it.
    pub fn op_ref(&self) -> OpRef {
        OpRef {
            name: self.key.name.clone(),
            input_dims: self.key.input_dims.clone(),
            input_type: self.key.input_type.clone(),
            input_strides: self.key.input_strides.clone(),
            category: self.category.as_str().to_string(),
            module_path: self.module_path.clone(),
        }
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
    /// Cross-platform: the ratio the hardware explains; `None` on one
    /// platform or without hardware figures.
    pub expected: Option<Expectation>,
    /// Candidate minus baseline time (per run or per step, see
    /// [`Comparison::impact_basis`]), µs.
    pub impact_us: f64,
    /// `impact_us` as a share of the baseline's GPU busy time, %.
    pub impact_percent: f64,
    /// Unified diff of the kernel-name sequences, when they differ.
    pub kernel_diff: Option<String>,
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
    pub baseline_us: f64,
    /// Candidate, µs; per step under [`ImpactBasis::PerStep`].
    pub candidate_us: f64,
    /// candidate / baseline − 1, %; `None` when the baseline is 0.
    pub delta_percent: Option<f64>,
    /// Run-to-run noise over the baseline window (relative); `None` with
    /// fewer than two runs.
    pub noise: Option<f64>,
    /// Ratio of medians of the per-step values with its interval, when
    /// both sides have two or more steps.
    pub estimate: Option<RatioEstimate>,
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
    /// Rows matched by exact key, largest absolute impact first.
    pub ops: Vec<OpComparison>,
    /// Same op and call site, other shapes.
    pub shape_changed: Vec<ShapeChange>,
    /// Rows only the candidate has, most time first.
    pub new_ops: Vec<OpSide>,
    /// Rows only the baseline has, most time first.
    pub missing_ops: Vec<OpSide>,
    /// Why nothing (or nothing per op) can be compared: no baseline, no GPU
    /// work on a side, no matched op rows. Never a silent pass.
    pub nothing_to_compare: Option<String>,
    /// Remarks that are not findings.
    pub notes: Vec<String>,
    /// Baseline GPU busy time (median over runs; per step under
    /// [`ImpactBasis::PerStep`]), µs: the denominator of every impact.
    pub baseline_total_us: f64,
    /// Candidate GPU busy time, µs, on the same basis.
    pub candidate_total_us: f64,
}

/// Compares `candidate` with the baseline runs in `baselines` (one snapshot,
/// or a window of earlier runs of the same workload, in any order).
pub fn compare(
    baselines: &[Snapshot],
    candidate: &Snapshot,
    options: &CompareOptions,
) -> Comparison {
    let mut notes = Vec::new();
    let runs = baselines.len();
    let baseline_steps: Vec<usize> = baselines.iter().map(|b| b.steps.len()).collect();
    let step_counts_differ = baseline_steps.iter().any(|&n| n != candidate.steps.len());
    let impact_basis = if runs > 0
        && !candidate.steps.is_empty()
        && baseline_steps.iter().all(|&n| n > 0)
        && step_counts_differ
    {
        notes.push(format!(
            "the baseline profiled {} step(s) and the candidate {}: times are compared per step",
            join_counts(&baseline_steps),
            candidate.steps.len()
        ));
        ImpactBasis::PerStep
    } else {
        ImpactBasis::PerRun
    };
    let per_step = impact_basis == ImpactBasis::PerStep;
    let scale = |snapshot: &Snapshot| {
        if per_step {
            1.0 / snapshot.steps.len().max(1) as f64
        } else {
            1.0
        }
    };
    let baseline_total_us =
        median_or_zero(baselines.iter().map(|b| b.timeline.busy_time * scale(b)));
    let candidate_total_us = candidate.timeline.busy_time * scale(candidate);

    let (cross_platform, baseline_hardware, candidate_hardware) =
        platforms(baselines, candidate, options, &mut notes);
    let hardware_pair = match (&options.baseline_hardware, &options.candidate_hardware) {
        (Some(b), Some(c)) if cross_platform => Some((b, c)),
        _ => None,
    };

    let context = Context {
        baselines,
        candidate,
        options,
        scale: &scale,
        baseline_total_us,
        hardware_pair,
    };
    let timeline = compare_timeline(&context);
    let matching = match_rows(baselines, candidate);

    let mut ops: Vec<OpComparison> = matching
        .matched
        .iter()
        .map(|(key, rows, cand)| context.compare_row(key, rows, cand))
        .collect();
    ops.sort_by(|a, b| {
        b.impact_percent
            .abs()
            .total_cmp(&a.impact_percent.abs())
            .then(b.baseline.total_us.total_cmp(&a.baseline.total_us))
            .then(a.baseline.key.cmp(&b.baseline.key))
    });
    let shape_changed: Vec<ShapeChange> = matching
        .shape_changed
        .iter()
        .map(|(base_rows, cand)| {
            let baseline = context.baseline_side(base_rows);
            let candidate_side = context.candidate_side(cand);
            let impact_us = candidate_side.time_us - baseline.time_us;
            ShapeChange {
                kernel_diff: kernel_diff(
                    &baseline.kernel_sequence,
                    &candidate_side.kernel_sequence,
                ),
                impact_percent: percent(impact_us, baseline_total_us),
                impact_us,
                baseline,
                candidate: candidate_side,
            }
        })
        .collect();
    let mut new_ops: Vec<OpSide> = matching
        .new
        .iter()
        .map(|cand| context.candidate_side(cand))
        .collect();
    new_ops.sort_by(|a, b| b.time_us.total_cmp(&a.time_us));
    let mut missing_ops: Vec<OpSide> = matching
        .missing
        .iter()
        .map(|rows| context.baseline_side(rows))
        .collect();
    missing_ops.sort_by(|a, b| b.time_us.total_cmp(&a.time_us));

    let without_interval = ops.iter().filter(|o| !o.estimate.has_interval()).count();
    if without_interval > 0 {
        notes.push(format!(
            "{without_interval} of {} matched op rows have a single sample on a side: \
             their ratios have no confidence interval",
            ops.len()
        ));
    }
    let diffs = ops.iter().filter(|o| o.kernel_diff.is_some()).count();
    if diffs > 0 {
        notes.push(format!(
            "{diffs} matched op rows launch a different kernel sequence"
        ));
    }
    runtime_notes(baselines, candidate, &mut notes);

    let nothing_to_compare = nothing_to_compare(baselines, candidate, ops.len());
    Comparison {
        workload: candidate.workload.clone(),
        baseline_runs: runs,
        baseline_fingerprints: baselines.iter().map(|b| b.fingerprint.clone()).collect(),
        candidate_fingerprint: candidate.fingerprint.clone(),
        cross_platform,
        baseline_hardware,
        candidate_hardware,
        impact_basis,
        confidence: options.confidence,
        resamples: options.resamples,
        seed: options.seed,
        timeline,
        ops,
        shape_changed,
        new_ops,
        missing_ops,
        nothing_to_compare,
        notes,
        baseline_total_us,
        candidate_total_us,
    }
}

/// `1, 1, 2`-style list of step counts (deduplicated).
fn join_counts(counts: &[usize]) -> String {
    let mut unique: Vec<usize> = counts.to_vec();
    unique.dedup();
    unique
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join("/")
}

/// Whether the sides differ in hardware, and the names used.
fn platforms(
    baselines: &[Snapshot],
    candidate: &Snapshot,
    options: &CompareOptions,
    notes: &mut Vec<String>,
) -> (bool, Option<String>, Option<String>) {
    let baseline_name = options
        .baseline_hardware
        .as_ref()
        .map(|h| h.name.clone())
        .or_else(|| {
            baselines
                .first()
                .and_then(|b| b.fingerprint.hardware.clone())
        });
    let candidate_name = options
        .candidate_hardware
        .as_ref()
        .map(|h| h.name.clone())
        .or_else(|| candidate.fingerprint.hardware.clone());
    let gpu_names = |f: &Fingerprint| {
        let mut names: Vec<String> = f.gpus.iter().map(|g| g.name.clone()).collect();
        names.sort();
        names
    };
    let mut baseline_gpus: Vec<Vec<String>> = baselines
        .iter()
        .map(|b| gpu_names(&b.fingerprint))
        .collect();
    baseline_gpus.dedup();
    if baseline_gpus.len() > 1 {
        notes.push("the baseline runs were recorded on different GPUs".to_string());
    }
    let cross = match (&options.baseline_hardware, &options.candidate_hardware) {
        (Some(b), Some(c)) => !b.name.eq_ignore_ascii_case(&c.name),
        _ => baseline_gpus
            .first()
            .is_some_and(|b| !b.is_empty() && *b != gpu_names(&candidate.fingerprint)),
    };
    if cross && (options.baseline_hardware.is_none() || options.candidate_hardware.is_none()) {
        notes.push(
            "the two sides ran on different GPUs, but the hardware of one side is unknown: \
             no expected ratios (name it in the policy's hardware section)"
                .to_string(),
        );
    }
    (cross, baseline_name, candidate_name)
}

/// Notes on software that changed between the sides.
fn runtime_notes(baselines: &[Snapshot], candidate: &Snapshot, notes: &mut Vec<String>) {
    let Some(last) = baselines.last() else { return };
    if last.fingerprint.platform != candidate.fingerprint.platform {
        return; // CUDA against ROCm: every version differs, nothing to note
    }
    let pairs = [
        (
            "runtime",
            last.fingerprint.runtime_text(),
            candidate.fingerprint.runtime_text(),
        ),
        (
            "PyTorch",
            last.fingerprint.pytorch_version.clone(),
            candidate.fingerprint.pytorch_version.clone(),
        ),
    ];
    for (what, before, after) in pairs {
        if let (Some(before), Some(after)) = (before, after) {
            if before != after {
                notes.push(format!("{what} changed: {before} → {after}"));
            }
        }
    }
}

fn nothing_to_compare(
    baselines: &[Snapshot],
    candidate: &Snapshot,
    matched: usize,
) -> Option<String> {
    if baselines.is_empty() {
        return Some("no baseline run to compare with".to_string());
    }
    let baseline_gpu = baselines.iter().any(|b| b.has_gpu_activity);
    match (baseline_gpu, candidate.has_gpu_activity) {
        (false, false) => return Some("neither side has GPU work".to_string()),
        (false, true) => return Some("the baseline has no GPU work".to_string()),
        (true, false) => return Some("the candidate has no GPU work".to_string()),
        (true, true) => {}
    }
    if matched > 0 {
        return None;
    }
    let baseline_rows: usize = baselines.iter().map(|b| b.ops.len()).max().unwrap_or(0);
    let candidate_rows = candidate.ops.len();
    Some(if baseline_rows == 0 && candidate_rows == 0 {
        "no op launched GPU work on either side (a GPU-only trace?): only the GPU timeline \
         can be compared"
            .to_string()
    } else {
        format!(
            "no op row matches between baseline ({baseline_rows} rows) and candidate \
             ({candidate_rows} rows)"
        )
    })
}

/// The baseline rows of one key: one entry per baseline run, `None` where
/// the run lacks it.
type RunRows<'a> = Vec<Option<&'a OpSnapshot>>;

/// The result of matching rows.
struct Matching<'a> {
    matched: Vec<(OpKey, RunRows<'a>, &'a OpSnapshot)>,
    shape_changed: Vec<(RunRows<'a>, &'a OpSnapshot)>,
    new: Vec<&'a OpSnapshot>,
    missing: Vec<RunRows<'a>>,
}

fn match_rows<'a>(baselines: &'a [Snapshot], candidate: &'a Snapshot) -> Matching<'a> {
    // Baseline keys in first-seen order (first run's order, then later runs').
    let mut order: Vec<OpKey> = Vec::new();
    let mut pooled: HashMap<OpKey, RunRows<'a>> = HashMap::new();
    for (run, baseline) in baselines.iter().enumerate() {
        for op in &baseline.ops {
            let key = op.key();
            let rows = pooled.entry(key.clone()).or_insert_with(|| {
                order.push(key);
                vec![None; baselines.len()]
            });
            rows[run].get_or_insert(op);
        }
    }
    let mut matched = Vec::new();
    let mut seen: HashSet<OpKey> = HashSet::new();
    let mut unmatched_candidate: Vec<&OpSnapshot> = Vec::new();
    for op in &candidate.ops {
        let key = op.key();
        if !seen.insert(key.clone()) {
            continue; // a snapshot keeps keys unique; tolerate hand-made duplicates
        }
        match pooled.remove(&key) {
            Some(rows) => matched.push((key, rows, op)),
            None => unmatched_candidate.push(op),
        }
    }
    let mut unmatched_baseline: Vec<RunRows<'a>> = order
        .into_iter()
        .filter_map(|key| pooled.remove(&key))
        .collect();

    // Shape changes: same name and call site.
    let representative = |rows: &RunRows<'a>| -> &'a OpSnapshot {
        rows.iter()
            .rev()
            .flatten()
            .next()
            .copied()
            .expect("a pooled key has a row")
    };
    let baseline_time =
        |rows: &RunRows<'a>| -> f64 { rows.iter().flatten().map(|op| op.direct.sum).sum() };
    unmatched_baseline.sort_by(|a, b| baseline_time(b).total_cmp(&baseline_time(a)));
    unmatched_candidate.sort_by(|a, b| b.direct.sum.total_cmp(&a.direct.sum));
    let mut shape_changed = Vec::new();
    let mut used_baseline = vec![false; unmatched_baseline.len()];
    let mut new = Vec::new();
    for op in unmatched_candidate.iter().copied() {
        let partner = unmatched_baseline.iter().enumerate().position(|(i, rows)| {
            let base = representative(rows);
            !used_baseline[i]
                && base.name == op.name
                && match (&base.module_path, &op.module_path) {
                    (Some(a), Some(b)) => a == b,
                    (None, None) => {
                        let count_base = unmatched_baseline
                            .iter()
                            .filter(|r| {
                                let r = representative(r);
                                r.name == op.name && r.module_path.is_none()
                            })
                            .count();
                        let count_cand = unmatched_candidate
                            .iter()
                            .filter(|c| c.name == op.name && c.module_path.is_none())
                            .count();
                        count_base == 1 && count_cand == 1
                    }
                    _ => false,
                }
        });
        match partner {
            Some(i) => {
                used_baseline[i] = true;
                shape_changed.push((unmatched_baseline[i].clone(), op));
            }
            None => new.push(op),
        }
    }
    let missing = unmatched_baseline
        .into_iter()
        .zip(used_baseline)
        .filter(|(_, used)| !used)
        .map(|(rows, _)| rows)
        .collect();
    Matching {
        matched,
        shape_changed,
        new,
        missing,
    }
}

/// What every row comparison needs.
struct Context<'a> {
    baselines: &'a [Snapshot],
    candidate: &'a Snapshot,
    options: &'a CompareOptions,
    scale: &'a dyn Fn(&Snapshot) -> f64,
    baseline_total_us: f64,
    hardware_pair: Option<(&'a Hardware, &'a Hardware)>,
}

impl Context<'_> {
    fn baseline_side(&self, rows: &RunRows<'_>) -> OpSide {
        let present: Vec<&OpSnapshot> = rows.iter().flatten().copied().collect();
        let last = *present.last().expect("a pooled key has a row");
        let totals = rows.iter().map(|row| row.map_or(0.0, |op| op.direct.sum));
        let times = rows
            .iter()
            .zip(self.baselines)
            .map(|(row, run)| row.map_or(0.0, |op| op.direct.sum) * (self.scale)(run));
        let counts: Vec<u64> = present.iter().map(|op| op.direct.count).collect();
        OpSide {
            key: last.key(),
            category: last.category,
            module_path: present.iter().find_map(|op| op.module_path.clone()),
            runs: present.len(),
            count: lower_median(&counts),
            total_us: median_or_zero(totals),
            time_us: median_or_zero(times),
            median_us: median_or_zero(present.iter().map(|op| op.direct.median)),
            mean_us: median_or_zero(present.iter().map(|op| op.direct.mean)),
            min_us: present
                .iter()
                .map(|op| op.direct.min)
                .fold(f64::INFINITY, f64::min),
            max_us: present
                .iter()
                .map(|op| op.direct.max)
                .fold(f64::NEG_INFINITY, f64::max),
            kernel_sequence: last.kernel_sequence.clone(),
            model: present.iter().find_map(|op| op.model.clone()),
        }
    }

    fn candidate_side(&self, op: &OpSnapshot) -> OpSide {
        OpSide {
            key: op.key(),
            category: op.category,
            module_path: op.module_path.clone(),
            runs: 1,
            count: op.direct.count,
            total_us: op.direct.sum,
            time_us: op.direct.sum * (self.scale)(self.candidate),
            median_us: op.direct.median,
            mean_us: op.direct.mean,
            min_us: op.direct.min,
            max_us: op.direct.max,
            kernel_sequence: op.kernel_sequence.clone(),
            model: op.model.clone(),
        }
    }

    fn compare_row(&self, key: &OpKey, rows: &RunRows<'_>, candidate: &OpSnapshot) -> OpComparison {
        let present: Vec<&OpSnapshot> = rows.iter().flatten().copied().collect();
        let baseline_steps: Vec<f64> = present
            .iter()
            .flat_map(|op| op.step_us.iter().map(|&(_, us)| us))
            .collect();
        let candidate_steps: Vec<f64> = candidate.step_us.iter().map(|&(_, us)| us).collect();
        // Per-step totals are what the user experiences, but only comparable
        // when both sides call the op equally often per step; otherwise (a
        // different batch split, another platform's schedule) per-call times are.
        let calls_per_step = |op: &OpSnapshot| {
            (!op.step_us.is_empty()).then(|| op.direct.count as f64 / op.step_us.len() as f64)
        };
        let same_rate = present
            .iter()
            .all(|op| calls_per_step(op) == calls_per_step(candidate));
        let (samples_basis, base_samples, cand_samples) =
            if baseline_steps.len() >= 2 && candidate_steps.len() >= 2 && same_rate {
                (SamplesBasis::Steps, baseline_steps, candidate_steps)
            } else {
                let pooled: Vec<f64> = present
                    .iter()
                    .flat_map(|op| op.samples_us.iter().copied())
                    .collect();
                (
                    SamplesBasis::Invocations,
                    pooled,
                    candidate.samples_us.clone(),
                )
            };
        let seed = stats::seed_from_parts(
            self.options.seed,
            &[
                &key.name,
                &key.input_dims,
                &key.input_type,
                &key.input_strides,
                &key.concrete_inputs,
            ],
        );
        let single_run = self.baselines.len() == 1;
        let estimate = if single_run {
            stats::paired_ratio_of_medians_ci(
                &base_samples,
                &cand_samples,
                self.options.confidence,
                self.options.resamples,
                seed,
            )
        } else {
            stats::ratio_of_medians_ci(
                &base_samples,
                &cand_samples,
                self.options.confidence,
                self.options.resamples,
                seed,
            )
        };
        let run_medians: Vec<f64> = present
            .iter()
            .filter_map(|op| match samples_basis {
                SamplesBasis::Steps => {
                    stats::median(&op.step_us.iter().map(|&(_, us)| us).collect::<Vec<_>>())
                }
                SamplesBasis::Invocations => Some(op.direct.median),
            })
            .collect();
        let baseline = self.baseline_side(rows);
        let candidate_side = self.candidate_side(candidate);
        let expected = self
            .hardware_pair
            .and_then(|(b, c)| expectation(&baseline, b, c));
        let impact_us = candidate_side.time_us - baseline.time_us;
        OpComparison {
            baseline_sample_median_us: stats::median(&base_samples).unwrap_or(0.0),
            candidate_sample_median_us: stats::median(&cand_samples).unwrap_or(0.0),
            kernel_diff: kernel_diff(&baseline.kernel_sequence, &candidate_side.kernel_sequence),
            estimate,
            samples_basis,
            noise: stats::max_relative_deviation(&run_medians),
            expected,
            impact_percent: percent(impact_us, self.baseline_total_us),
            impact_us,
            baseline,
            candidate: candidate_side,
        }
    }
}

fn compare_timeline(context: &Context<'_>) -> Vec<TimelineComparison> {
    let Context {
        baselines,
        candidate,
        options,
        scale,
        ..
    } = context;
    let pooled_steps: usize = baselines.iter().map(|b| b.steps.len()).sum();
    let with_steps = pooled_steps >= 2 && candidate.steps.len() >= 2;
    candidate
        .timeline
        .rows()
        .iter()
        .enumerate()
        .map(|(index, &(metric, candidate_value))| {
            let per_run: Vec<f64> = baselines
                .iter()
                .map(|b| b.timeline.rows()[index].1 * scale(b))
                .collect();
            let baseline_us = median_or_zero(per_run.iter().copied());
            let candidate_us = candidate_value * scale(candidate);
            let estimate = with_steps.then(|| {
                let base: Vec<f64> = baselines
                    .iter()
                    .flat_map(|b| b.steps.iter().map(move |s| s.timeline.rows()[index].1))
                    .collect();
                let cand: Vec<f64> = candidate
                    .steps
                    .iter()
                    .map(|s| s.timeline.rows()[index].1)
                    .collect();
                let seed = stats::seed_from_parts(options.seed, &["timeline", metric]);
                if baselines.len() == 1 {
                    stats::paired_ratio_of_medians_ci(
                        &base,
                        &cand,
                        options.confidence,
                        options.resamples,
                        seed,
                    )
                } else {
                    stats::ratio_of_medians_ci(
                        &base,
                        &cand,
                        options.confidence,
                        options.resamples,
                        seed,
                    )
                }
            });
            TimelineComparison {
                metric: metric.to_string(),
                baseline_us,
                candidate_us,
                delta_percent: (baseline_us > 0.0)
                    .then(|| (candidate_us / baseline_us - 1.0) * 100.0),
                noise: stats::max_relative_deviation(&per_run),
                estimate,
            }
        })
        .collect()
}

/// The expected candidate / baseline time of a row on two platforms: the
/// ratio of its roofline times when it has a perf model with a compute
/// spec both parts have a peak for; the bandwidth ratio for a model without
/// a compute spec; otherwise by category (compute-bound GEMM, convolution
/// and attention: peak FLOP/s ratio for the row's dtype, bf16 when it has
/// none; memory-bound elementwise, reduce, norm, softmax, Triton and other:
/// bandwidth ratio; collectives and runtime work: none).
pub fn expectation(row: &OpSide, baseline: &Hardware, candidate: &Hardware) -> Option<Expectation> {
    let bandwidth = || {
        (baseline.hbm_tb_s > 0.0 && candidate.hbm_tb_s > 0.0).then(|| Expectation {
            ratio: baseline.hbm_tb_s / candidate.hbm_tb_s,
            basis: ExpectationBasis::Bandwidth,
            spec: None,
        })
    };
    if let Some(model) = &row.model {
        match model.compute_spec {
            Some(spec) => {
                let times = (
                    baseline.roofline_time_us(model.flops, model.bytes, spec),
                    candidate.roofline_time_us(model.flops, model.bytes, spec),
                );
                if let (Some(b), Some(c)) = times {
                    if b > 0.0 {
                        return Some(Expectation {
                            ratio: c / b,
                            basis: ExpectationBasis::Roofline,
                            spec: Some(spec),
                        });
                    }
                }
            }
            None if model.bytes > 0.0 => return bandwidth(),
            None => {}
        }
    }
    match row.category {
        Category::Gemm
        | Category::ConvFwd
        | Category::ConvBwd
        | Category::SdpaFwd
        | Category::SdpaBwd => {
            let spec = row_dtype(&row.key.input_type)
                .and_then(Dtype::matrix_spec)
                .unwrap_or(ComputeSpec::MatrixBf16);
            let (b, c) = (baseline.peak_tflops(spec)?, candidate.peak_tflops(spec)?);
            Some(Expectation {
                ratio: b / c,
                basis: ExpectationBasis::PeakCompute,
                spec: Some(spec),
            })
        }
        Category::Comm | Category::Runtime => None,
        Category::Elementwise
        | Category::Reduce
        | Category::NormFwd
        | Category::NormBwd
        | Category::Softmax
        | Category::Triton
        | Category::Other => bandwidth(),
    }
}

/// The first floating-point tensor dtype of an `Input type` tuple
/// (`('c10::BFloat16', 'Scalar')` → bf16).
fn row_dtype(input_type: &str) -> Option<Dtype> {
    input_type
        .split('\'')
        .skip(1)
        .step_by(2)
        .filter_map(Dtype::parse)
        .find(|d| d.is_floating() && *d != Dtype::Scalar)
}

/// A unified diff of two kernel-name sequences, `None` when they are equal.
pub fn kernel_diff(baseline: &[String], candidate: &[String]) -> Option<String> {
    if baseline == candidate {
        return None;
    }
    let lines =
        |names: &[String]| -> String { names.iter().map(|name| format!("{name}\n")).collect() };
    let (old, new) = (lines(baseline), lines(candidate));
    let diff = TextDiff::from_lines(&old, &new);
    Some(
        diff.unified_diff()
            .context_radius(3)
            .header("baseline", "candidate")
            .to_string(),
    )
}

fn median_or_zero(values: impl Iterator<Item = f64>) -> f64 {
    let values: Vec<f64> = values.collect();
    stats::median(&values).unwrap_or(0.0)
}

/// The lower median of counts (an integer); 0 for none.
fn lower_median(values: &[u64]) -> u64 {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    sorted
        .get(sorted.len().saturating_sub(1) / 2)
        .copied()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::hardware::builtin_catalog;
    use crate::analysis::ops::stats::Stats;
    use crate::analysis::profile::Profile;
    use crate::gate::snapshot::tests::{corpus_profile, corpus_snapshot};
    use crate::gate::stats::SplitMix64;

    const QWEN_H100: &str = "tracelens/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz";
    const QWEN_MI300: &str = "tracelens/mi300/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz";
    const STEPS_A100: &str = "hta/trace_diff_control_a100.json.gz";

    /// A copy of the profile with every per-invocation sample and per-step
    /// time multiplied by a deterministic factor in [0.97, 1.03] (per row,
    /// per sample), statistics recomputed; `scale_row` (row index, factor)
    /// multiplies one row on top.
    fn jittered(profile: &Profile, seed: u64, scale_row: Option<(usize, f64)>) -> Profile {
        let mut copy = profile.clone();
        let mut rng = SplitMix64::new(seed);
        let mut factor = move || 0.97 + 0.06 * (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        for (index, row) in copy.unique_args.iter_mut().enumerate() {
            let extra = match scale_row {
                Some((target, f)) if target == index => f,
                _ => 1.0,
            };
            for sample in &mut row.samples_us {
                *sample *= factor() * extra;
            }
            for (_, us) in &mut row.step_us {
                *us *= factor() * extra;
            }
            row.direct = Stats::of(&row.samples_us);
        }
        copy
    }

    fn snapshot_of(profile: &Profile) -> Snapshot {
        Snapshot::from_profile(profile, "0".repeat(64), 0)
    }

    fn compare_one(baseline: &Snapshot, candidate: &Snapshot) -> Comparison {
        compare(
            std::slice::from_ref(baseline),
            candidate,
            &CompareOptions::default(),
        )
    }

    #[test]
    #[cfg_attr(
        not(tracegate_corpus),
        ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
    )]
    fn a_trace_against_itself_changes_nothing() {
        for relative in [QWEN_H100, STEPS_A100] {
            let snapshot = corpus_snapshot(relative);
            let comparison = compare_one(&snapshot, &snapshot);
            assert_eq!(comparison.nothing_to_compare, None, "{relative}");
            assert_eq!(comparison.ops.len(), snapshot.ops.len());
            assert!(comparison.new_ops.is_empty() && comparison.missing_ops.is_empty());
            assert!(comparison.shape_changed.is_empty());
            assert!(!comparison.cross_platform);
            for op in &comparison.ops {
                assert_eq!(op.estimate.ratio, 1.0, "{:?}", op.baseline.key);
                if let Some(interval) = op.estimate.interval {
                    assert!(interval.contains(1.0), "{:?}", op.baseline.key);
                }
                assert_eq!(op.kernel_diff, None);
                assert_eq!(op.impact_us, 0.0);
                assert_eq!(op.expected, None);
                assert_eq!(op.noise, None);
            }
            for metric in &comparison.timeline {
                assert_eq!(metric.baseline_us, metric.candidate_us);
                if let Some(estimate) = &metric.estimate {
                    assert_eq!(estimate.ratio, 1.0);
                }
            }
            if relative == STEPS_A100 {
                assert!(
                    comparison
                        .ops
                        .iter()
                        .any(|op| op.samples_basis == SamplesBasis::Steps)
                );
                assert!(comparison.timeline.iter().all(|m| m.estimate.is_some()));
            }
        }
    }

    #[test]
    #[cfg_attr(
        not(tracegate_corpus),
        ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
    )]
    fn three_percent_jitter_stays_within_five_percent() {
        for relative in [QWEN_H100, STEPS_A100] {
            let (profile, _, _) = corpus_profile(relative);
            let baseline = snapshot_of(&profile);
            let candidate = snapshot_of(&jittered(&profile, 1, None));
            let comparison = compare_one(&baseline, &candidate);
            let mut with_interval = 0;
            for op in &comparison.ops {
                let ratio = op.estimate.ratio;
                assert!(
                    (0.95..=1.05).contains(&ratio),
                    "{:?}: {ratio}",
                    op.baseline.key
                );
                if let Some(interval) = op.estimate.interval {
                    with_interval += 1;
                    assert!(
                        interval.low >= 0.95 && interval.high <= 1.05,
                        "{relative} {:?}: {interval:?}",
                        op.baseline.key
                    );
                }
                assert!(op.impact_percent.abs() < 3.0);
            }
            assert!(with_interval > 0, "{relative}");
        }
    }

    #[test]
    #[cfg_attr(
        not(tracegate_corpus),
        ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
    )]
    fn one_op_thirty_percent_slower_stands_out() {
        for relative in [QWEN_H100, STEPS_A100] {
            let (profile, _, _) = corpus_profile(relative);
            // Slow down the third-largest row, over a jittered background.
            let target = 2;
            let key = {
                let row = &profile.unique_args[target];
                (row.name.clone(), row.input_dims.clone())
            };
            let baseline = snapshot_of(&profile);
            let candidate = snapshot_of(&jittered(&profile, 2, Some((target, 1.3))));
            let comparison = compare_one(&baseline, &candidate);
            let top = &comparison.ops[0];
            assert_eq!(
                (
                    top.baseline.key.name.clone(),
                    top.baseline.key.input_dims.clone()
                ),
                key,
                "{relative}: the slowed op has the largest impact"
            );
            let interval = top.estimate.interval.expect("several samples");
            assert!(interval.low > 1.2, "{relative}: {interval:?}");
            assert!(top.impact_percent > 0.0);
            assert!(top.estimate.p_value_above(1.2).expect("replicates") < 0.025);
            for op in &comparison.ops[1..] {
                if let Some(interval) = op.estimate.interval {
                    assert!(interval.low < 1.2, "{:?}", op.baseline.key);
                }
            }
        }
    }

    #[test]
    #[cfg_attr(
        not(tracegate_corpus),
        ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
    )]
    fn a_renamed_kernel_shows_as_a_diff_on_its_row_only() {
        let snapshot = corpus_snapshot(QWEN_H100);
        let mut candidate = snapshot.clone();
        let target = candidate
            .ops
            .iter()
            .position(|op| !op.kernel_sequence.is_empty())
            .expect("a row with kernels");
        let old_name = candidate.ops[target].kernel_sequence[0].clone();
        candidate.ops[target].kernel_sequence[0] = "renamed_gemm_kernel_v2".to_string();
        let comparison = compare_one(&snapshot, &candidate);
        let with_diff: Vec<&OpComparison> = comparison
            .ops
            .iter()
            .filter(|op| op.kernel_diff.is_some())
            .collect();
        assert_eq!(with_diff.len(), 1);
        assert_eq!(with_diff[0].baseline.key, snapshot.ops[target].key());
        let diff = with_diff[0].kernel_diff.as_deref().expect("diff");
        assert!(
            diff.starts_with("--- baseline\n+++ candidate\n@@"),
            "{diff}"
        );
        assert!(diff.contains(&format!("-{old_name}\n")), "{diff}");
        assert!(diff.contains("+renamed_gemm_kernel_v2\n"), "{diff}");
        assert_eq!(with_diff[0].estimate.ratio, 1.0);
    }

    #[test]
    #[cfg_attr(
        not(tracegate_corpus),
        ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
    )]
    fn cross_platform_rows_carry_their_roofline_ratio() {
        let (h100, mi300) = (corpus_snapshot(QWEN_H100), corpus_snapshot(QWEN_MI300));
        let catalog = builtin_catalog();
        let (b, c) = (
            h100.fingerprint
                .catalog_hardware(&catalog)
                .expect("H100 SXM"),
            mi300
                .fingerprint
                .catalog_hardware(&catalog)
                .expect("MI300X"),
        );
        assert_eq!((b.name.as_str(), c.name.as_str()), ("H100 SXM", "MI300X"));
        let options = CompareOptions {
            baseline_hardware: Some(b.clone()),
            candidate_hardware: Some(c.clone()),
            ..CompareOptions::default()
        };
        let comparison = compare(std::slice::from_ref(&h100), &mi300, &options);
        assert!(comparison.cross_platform);
        assert_eq!(comparison.nothing_to_compare, None);
        assert!(
            comparison.ops.len() >= 20,
            "{} matched",
            comparison.ops.len()
        );
        let mut gemms = 0;
        for op in &comparison.ops {
            let Some(model) = &op.baseline.model else {
                continue;
            };
            let expected = op
                .expected
                .unwrap_or_else(|| panic!("{:?}", op.baseline.key));
            if let Some(spec) = model.compute_spec {
                let roofline = c
                    .roofline_time_us(model.flops, model.bytes, spec)
                    .expect("c")
                    / b.roofline_time_us(model.flops, model.bytes, spec)
                        .expect("b");
                assert_eq!(expected.basis, ExpectationBasis::Roofline);
                assert!((expected.ratio - roofline).abs() < 1e-12);
            }
            if op.baseline.category == Category::Gemm {
                gemms += 1;
                // Between the compute-bound (990/708) and memory-bound (3.35/5.3) ratios.
                assert!((3.35 / 5.3 - 1e-9..=990.0 / 708.0 + 1e-9).contains(&expected.ratio));
            }
        }
        assert!(gemms > 0);
        // Every matched row has an expectation unless it is a collective or runtime work.
        for op in &comparison.ops {
            assert!(
                op.expected.is_some()
                    || matches!(op.baseline.category, Category::Comm | Category::Runtime),
                "{:?}",
                op.baseline.key
            );
        }
        // Different libraries pick different kernels.
        assert!(comparison.ops.iter().any(|op| op.kernel_diff.is_some()));
    }

    #[test]
    #[cfg_attr(
        not(tracegate_corpus),
        ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
    )]
    fn a_window_of_baselines_measures_noise() {
        let (profile, _, _) = corpus_profile(QWEN_H100);
        let window: Vec<Snapshot> = (10..13)
            .map(|seed| snapshot_of(&jittered(&profile, seed, None)))
            .collect();
        let candidate = snapshot_of(&profile);
        let comparison = compare(&window, &candidate, &CompareOptions::default());
        assert_eq!(comparison.baseline_runs, 3);
        assert!(comparison.ops.iter().all(|op| op.baseline.runs == 3));
        for op in &comparison.ops {
            let noise = op.noise.expect("three runs");
            assert!(noise < 0.06, "{:?}: {noise}", op.baseline.key);
            assert!(matches!(
                op.estimate.resampling,
                stats::Resampling::Independent | stats::Resampling::None
            ));
        }
        assert!(
            comparison
                .ops
                .iter()
                .any(|op| op.noise.unwrap_or(0.0) > 0.0)
        );
        let total = comparison
            .timeline
            .iter()
            .find(|m| m.metric == "total_time")
            .expect("row");
        assert_eq!(total.noise, Some(0.0)); // the timeline itself was not jittered
    }

    #[test]
    #[cfg_attr(
        not(tracegate_corpus),
        ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
    )]
    fn changed_shapes_pair_by_call_site_and_the_rest_is_new_or_missing() {
        let snapshot = corpus_snapshot(QWEN_H100);
        let mut candidate = snapshot.clone();
        let changed = candidate
            .ops
            .iter()
            .position(|op| op.module_path.is_some())
            .expect("Qwen records modules");
        candidate.ops[changed].input_dims.push_str(" [changed]");
        let removed = candidate.ops.remove(candidate.ops.len() - 1);
        let mut extra = candidate.ops[0].clone();
        extra.name = "aten::brand_new_op".to_string();
        candidate.ops.push(extra);
        let comparison = compare_one(&snapshot, &candidate);
        assert_eq!(comparison.shape_changed.len(), 1);
        let change = &comparison.shape_changed[0];
        assert_eq!(change.baseline.key, snapshot.ops[changed].key());
        assert!(change.candidate.key.input_dims.ends_with("[changed]"));
        assert_eq!(comparison.new_ops.len(), 1);
        assert_eq!(comparison.new_ops[0].key.name, "aten::brand_new_op");
        assert_eq!(comparison.missing_ops.len(), 1);
        assert_eq!(comparison.missing_ops[0].key, removed.key());
        assert_eq!(comparison.ops.len(), snapshot.ops.len() - 2);
        assert!(comparison.missing_ops[0].op_ref().name == removed.name);
    }

    #[test]
    #[cfg_attr(
        not(tracegate_corpus),
        ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
    )]
    fn nothing_to_compare_is_said_out_loud() {
        let cpu_only = corpus_snapshot("hta/cpu_only.json.gz");
        let comparison = compare_one(&cpu_only, &cpu_only);
        assert_eq!(
            comparison.nothing_to_compare.as_deref(),
            Some("neither side has GPU work")
        );
        let gpu_only = corpus_snapshot("tracelens/mi210/gpu_only_trace.json.gz");
        let comparison = compare_one(&gpu_only, &gpu_only);
        let reason = comparison.nothing_to_compare.expect("no op rows");
        assert!(
            reason.starts_with("no op launched GPU work on either side"),
            "{reason}"
        );
        assert!(comparison.timeline.iter().any(|m| m.baseline_us > 0.0));
        let comparison = compare(&[], &gpu_only, &CompareOptions::default());
        assert_eq!(
            comparison.nothing_to_compare.as_deref(),
            Some("no baseline run to compare with")
        );
        let comparison = compare_one(&cpu_only, &gpu_only);
        assert_eq!(
            comparison.nothing_to_compare.as_deref(),
            Some("the baseline has no GPU work")
        );
    }

    fn side(category: Category, input_type: &str, model: Option<OpModel>) -> OpSide {
        OpSide {
            key: OpKey {
                name: "op".to_string(),
                input_type: input_type.to_string(),
                ..OpKey::default()
            },
            category,
            module_path: None,
            runs: 1,
            count: 1,
            total_us: 1.0,
            time_us: 1.0,
            median_us: 1.0,
            mean_us: 1.0,
            min_us: 1.0,
            max_us: 1.0,
            kernel_sequence: Vec::new(),
            model,
        }
    }

    #[test]
    fn expectations_fall_back_by_category() {
        let catalog = builtin_catalog();
        let h100 = catalog.by_name("H100 SXM").expect("h100");
        let mi300 = catalog.by_name("MI300X").expect("mi300x");
        let gemm = expectation(
            &side(Category::Gemm, "('c10::BFloat16', 'c10::BFloat16')", None),
            h100,
            mi300,
        )
        .expect("peak ratio");
        assert_eq!(gemm.basis, ExpectationBasis::PeakCompute);
        assert_eq!(gemm.spec, Some(ComputeSpec::MatrixBf16));
        assert!((gemm.ratio - 990.0 / 708.0).abs() < 1e-12);
        let add = expectation(
            &side(Category::Elementwise, "('float',)", None),
            h100,
            mi300,
        )
        .expect("bw");
        assert_eq!(add.basis, ExpectationBasis::Bandwidth);
        assert!((add.ratio - 3.35 / 5.3).abs() < 1e-12);
        assert_eq!(
            expectation(&side(Category::Comm, "", None), h100, mi300),
            None
        );
        // A large bf16 GEMM is compute-bound on both: the peak ratio.
        let n = 8192.0_f64;
        let model = OpModel {
            family: "GEMM".to_string(),
            flops: 2.0 * n * n * n,
            bytes: 3.0 * n * n * 2.0,
            compute_spec: Some(ComputeSpec::MatrixBf16),
        };
        let big =
            expectation(&side(Category::Gemm, "", Some(model)), h100, mi300).expect("roofline");
        assert_eq!(big.basis, ExpectationBasis::Roofline);
        assert!((big.ratio - 990.0 / 708.0).abs() < 1e-12);
        assert_eq!(row_dtype("('Scalar', 'c10::Half', '')"), Some(Dtype::F16));
        assert_eq!(row_dtype("('long int',)"), None);
    }

    #[test]
    fn kernel_diffs_are_unified_diffs() {
        let names = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(kernel_diff(&names(&["a", "b"]), &names(&["a", "b"])), None);
        let diff =
            kernel_diff(&names(&["a", "b", "c"]), &names(&["a", "x", "c"])).expect("differs");
        assert_eq!(
            diff,
            "--- baseline\n+++ candidate\n@@ -1,3 +1,3 @@\n a\n-b\n+x\n c\n"
        );
    }
}
