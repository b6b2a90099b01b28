//! Kernel families: each kernel (or copy, or set) name that several rows
//! launch, compared over all its launches (the snapshot's
//! [`Snapshot::kernel_families`]). A kernel spread over many rows — one
//! GEMM in every shape of a backward pass, a norm kernel in every layer of
//! a graph — adds less than the impact minimum to each row when it slows,
//! but its total does not; this is where that total is measured.
//!
//! The samples are the family's launch durations, pooled over its rows
//! (per launch, as kernel parts are): paired launch by launch with one
//! baseline run of as many launches, else resampled side by side. Its time
//! is its launches' total on the comparison's basis (per run or per step).
//! Only families every side has are compared; across platforms none (the
//! kernels of two platforms are not the same kernels).
//!
//! [`Snapshot::kernel_families`]: crate::gate::snapshot::Snapshot::kernel_families

use super::kernel_parts::per_launch;
use super::model::{OpComparison, OpSide};
use super::rows::{Context, median_or_zero};
use crate::analysis::comm::CommKernels;
use crate::analysis::ops::category;
use crate::gate::snapshot::{KernelSamples, OpKey, Snapshot};
use crate::gate::stats;

/// The kernel families both sides have, compared; largest absolute impact
/// first.
pub(super) fn kernel_families(context: &Context<'_>) -> Vec<OpComparison> {
    let family = |snapshot: &'_ Snapshot, name: &str| -> Option<KernelSamples> {
        snapshot
            .kernel_families
            .iter()
            .find(|f| f.name == name)
            .cloned()
    };
    let mut families: Vec<OpComparison> = context
        .candidate
        .kernel_families
        .iter()
        .filter_map(|candidate| {
            let baseline: Vec<(KernelSamples, &Snapshot)> = context
                .baselines
                .iter()
                .map(|run| family(run, &candidate.name).map(|f| (f, run)))
                .collect::<Option<_>>()?;
            (!baseline.is_empty()).then(|| compare_family(context, &baseline, candidate))
        })
        .collect();
    families.sort_by(OpComparison::most_impact_first);
    families
}

/// One family's comparison: its launches pooled over its rows.
fn compare_family(
    context: &Context<'_>,
    baseline: &[(KernelSamples, &Snapshot)],
    candidate: &KernelSamples,
) -> OpComparison {
    let options = context.options;
    let seed = stats::seed_from_parts(options.seed, &["family", &candidate.name]);
    let base_times: Vec<f64> = baseline
        .iter()
        .map(|(f, run)| f.total_us * (context.scale)(run))
        .collect();
    let base_side = side(
        &baseline.iter().map(|(f, _)| f).collect::<Vec<_>>(),
        median_or_zero(base_times.iter().copied()),
    );
    let cand_side = side(
        &[candidate],
        candidate.total_us * (context.scale)(context.candidate),
    );
    let runs: Vec<&KernelSamples> = baseline.iter().map(|(f, _)| f).collect();
    per_launch(context, seed, &runs, candidate, base_side, cand_side)
}

/// One side of a family (its runs' launches), `time_us` on the
/// comparison's basis. Its key is the kernel name alone.
fn side(runs: &[&KernelSamples], time_us: f64) -> OpSide {
    let name = runs[0].name.clone();
    let launches: Vec<f64> = runs
        .iter()
        .flat_map(|f| f.samples_us.iter().copied())
        .collect();
    let mut counts: Vec<u64> = runs.iter().map(|f| f.launches).collect();
    counts.sort_unstable();
    let category = category::of_kernel(&name, &CommKernels::default());
    let key = OpKey {
        name: name.clone(),
        ..OpKey::default()
    };
    OpSide {
        runs: runs.len(),
        count: counts[counts.len().saturating_sub(1) / 2],
        total_us: median_or_zero(runs.iter().map(|f| f.total_us)),
        time_us,
        kernel_sequence: vec![name],
        ..OpSide::from_samples(key, category, &launches)
    }
}
