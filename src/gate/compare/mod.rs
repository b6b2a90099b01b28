//! Compare: baseline snapshots (one run, or a window of earlier runs) against
//! a candidate snapshot. Produces plain data, a [`Comparison`]; the judge
//! (`src/gate/judge/`) applies a policy to it and writes the verdict.
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
//! 3. **Renamed kernels** of a trace without CPU ops (its rows are its
//!    kernel names): a left-over kernel row on each side, the only one
//!    there with its launch count, are one row compared across the rename,
//!    so the rename is a kernel-selection change (`matching.rs`).
//! 4. Everything else is **new** (candidate only) or **missing** (baseline
//!    only). Nothing is dropped.
//! 5. Besides, **op totals** sum every shape of an op name at one call site
//!    ([`Comparison::op_totals`], `totals.rs`), per step when both sides
//!    have steps: an op whose shapes change from step to step has no shape
//!    in common between two runs, but its total is comparable.
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
//! - **Cross-platform expectation** when the hardware differs: the ratio
//!   learned from earlier paired runs when [`CompareOptions::learned`] has
//!   one for the row (or op total), else the ratio of roofline times on the
//!   two platforms (one peak basis on both sides, see `expected.rs`), or by
//!   category when the row has no perf model.
//!
//! 6. Besides, **kernel families** sum each kernel name over every row
//!    that launches it ([`Comparison::kernel_families`], `families.rs`),
//!    per launch: a kernel spread over many rows slows each row by less
//!    than the impact minimum, but not its total.
//!
//! # Graph replay
//!
//! Rows of graph-replayed work carry their graph in the key. When a graph's
//! whole-graph row launches a different kernel sequence, that row holds the
//! change: the graph's other rows drop their own kernel diff and its new and
//! missing rows are folded into it (`graph.rs`). Each side's coverage of GPU
//! time by rows is passed on for the judge's integrity rule.
//!
//! # Prefill and decode
//!
//! When the snapshots tag inference steps, each phase both sides ran gets a
//! row of its own ([`Comparison::phases`]: `decode GPU time per step`, …)
//! over the per-step GPU times of that phase only; a phase on one side only
//! is a note. With more than one phase, each op name is also compared
//! within each phase ([`Comparison::phase_ops`], `phase_ops.rs`), over its
//! GPU time per step of that phase.
//!
//! # Files
//!
//! `model.rs` holds the data a comparison is made of; `matching.rs` pairs op
//! rows; `rows.rs` builds each side of a row and its samples, interval and
//! noise; `timeline.rs` compares the GPU-timeline metrics; `expected.rs`
//! derives cross-platform ratios from the hardware and `learned.rs` holds
//! those learned from history; `kernels.rs` diffs kernel sequences;
//! `graph.rs` folds changes inside graphs and reads coverage;
//! `kernel_parts.rs` compares the kernels of rows whose calls launch
//! different kernels, each over its own launches;
//! `families.rs` compares each kernel name several rows launch over all
//! its launches; `phases.rs` compares prefill with prefill and decode with decode,
//! `phase_ops.rs` each op within a phase;
//! `notes.rs` writes the remarks and the nothing-to-compare reason. This
//! file puts them together.
//!
//! [`OpKey`]: crate::gate::snapshot::OpKey
//! [`RatioEstimate::interval`]: crate::gate::stats::RatioEstimate::interval
//! [`stats::max_relative_deviation`]: crate::gate::stats::max_relative_deviation

mod borrowed;
mod expected;
mod families;
mod graph;
mod kernel_parts;
mod kernels;
mod learned;
mod matching;
mod model;
mod notes;
mod phase_ops;
mod phases;
mod rows;
#[cfg(test)]
pub(crate) mod tests;
mod timeline;
mod totals;

use crate::analysis::ops::stats::percent;
use crate::gate::snapshot::Snapshot;

pub use borrowed::{BorrowedNoise, MIN_REPEAT_CALLS, MIN_REPEATING_ROWS};
pub use expected::expectation;
pub use kernels::kernel_diff;
pub use learned::{LearnedRatio, LearnedRatios, MIN_LEARNED_RUNS, TotalKey};
pub use model::{
    CompareOptions, Comparison, DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED, Expectation,
    ExpectationBasis, ImpactBasis, KernelPart, OpComparison, OpSide, PhaseOpComparison,
    SamplesBasis, ShapeChange, TimelineComparison,
};

use families::kernel_families;
use graph::{coverage_of, fold_graph_changes};
use kernel_parts::kernel_parts;
use matching::match_rows;
pub use phases::phase_metric;

pub use notes::learning_note;
use notes::{join_counts, learned_note, nothing_to_compare, platforms, runtime_notes};
use phase_ops::phase_ops;
use phases::compare_phases;
use rows::{Context, median_or_zero};
use timeline::compare_timeline;
use totals::op_totals;

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
    // Only a baseline run can differ: no run, no per-step basis.
    let step_counts_differ = baseline_steps.iter().any(|&n| n != candidate.steps.len());
    let impact_basis = if !candidate.steps.is_empty()
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
    let settled = options
        .learned
        .as_ref()
        .filter(|_| cross_platform)
        .map(LearnedRatios::settled);
    if let Some(all) = options.learned.as_ref().filter(|_| cross_platform) {
        if settled.as_ref().is_some_and(LearnedRatios::is_empty) {
            notes.push(learning_note(all.runs()));
        }
    }
    let learned = settled.as_ref().filter(|l| !l.is_empty());

    let context = Context {
        baselines,
        candidate,
        options,
        scale: &scale,
        baseline_total_us,
        hardware_pair,
        learned,
    };
    let timeline = compare_timeline(&context);
    let phases = compare_phases(baselines, candidate, options, &mut notes);
    let op_totals = op_totals(&context);
    let matching = match_rows(baselines, candidate);

    let mut ops: Vec<OpComparison> = matching
        .matched
        .iter()
        .map(|(key, rows, cand)| context.compare_row(key, rows, cand))
        .chain(
            matching
                .renamed
                .iter()
                .map(|(rows, cand)| context.compare_row(&cand.key(), rows, cand)),
        )
        .collect();
    let phase_ops = if cross_platform {
        Vec::new()
    } else {
        phase_ops(&context)
    };
    let kernel_families = if cross_platform {
        Vec::new()
    } else {
        kernel_families(&context)
    };
    let kernel_parts: Vec<KernelPart> = if cross_platform {
        Vec::new()
    } else {
        matching
            .matched
            .iter()
            .zip(&ops)
            .flat_map(|((key, rows, cand), row)| kernel_parts(&context, key, rows, cand, row))
            .collect()
    };
    ops.sort_by(|a, b| {
        b.impact_percent
            .abs()
            .total_cmp(&a.impact_percent.abs())
            .then(b.baseline.total_us.total_cmp(&a.baseline.total_us))
            .then(a.baseline.key.cmp(&b.baseline.key))
    });
    let mut shape_changed: Vec<ShapeChange> = matching
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

    fold_graph_changes(
        &mut ops,
        &mut shape_changed,
        &mut new_ops,
        &mut missing_ops,
        &mut notes,
    );

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
        notes.push(if diffs == 1 {
            "1 matched op row launches a different kernel sequence".to_string()
        } else {
            format!("{diffs} matched op rows launch a different kernel sequence")
        });
    }
    if let Some(learned) = learned {
        notes.push(learned_note(&ops, &op_totals, learned.runs()));
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
        phases,
        phase_ops,
        ops,
        shape_changed,
        op_totals,
        kernel_parts,
        kernel_families,
        new_ops,
        missing_ops,
        nothing_to_compare,
        borrowed_noise: borrowed::borrowed_noise(baselines, candidate),
        notes,
        baseline_total_us,
        candidate_total_us,
        baseline_coverage: baselines
            .iter()
            .map(coverage_of)
            .min_by(|a, b| a.in_rows_percent().total_cmp(&b.in_rows_percent())),
        candidate_coverage: coverage_of(candidate),
    }
}
