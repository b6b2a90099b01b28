//! Op totals: one row per op name and call site (`nn.Module` path) summing
//! every shape of it, so that an op whose shapes change from step to step
//! (an embedding lookup over a different number of indices each step) is
//! judged at all. Each of its shapes alone is a one-step row that appears
//! on one side only, or a single sample below the impact bar.
//!
//! The samples are the name's per-step totals over every step of each side
//! (0 in a step without a call), when both sides have two or more steps;
//! otherwise one sample per side, the run's total.

use std::collections::BTreeMap;

use super::learned::TotalKey;
use super::model::{OpComparison, OpSide, SamplesBasis};
use super::rows::{Context, learned_expectation, median_or_zero};
use crate::analysis::ops::stats::percent;
use crate::gate::snapshot::{OpKey, OpSnapshot, Snapshot};
use crate::gate::stats;

/// The rows of one op name and call site on each side.
#[derive(Default)]
struct Group<'a> {
    /// Per baseline run, its rows.
    baseline: Vec<Vec<&'a OpSnapshot>>,
    /// The candidate's rows.
    candidate: Vec<&'a OpSnapshot>,
}

/// The op totals worth comparing: names (and call sites) present on both
/// sides with more than one row on a side, or whose rows' keys differ
/// between the sides. Rows of graph-replayed work are left out (their
/// place in the graph is their key). Largest absolute impact first.
pub(super) fn op_totals(context: &Context<'_>) -> Vec<OpComparison> {
    let runs = context.baselines.len();
    let mut groups: BTreeMap<TotalKey, Group<'_>> = BTreeMap::new();
    // CUDA against ROCm, as the traces record it (learned ratios compare
    // earlier pairs without hardware figures, and must pair the same way).
    let platform = |s: &Snapshot| s.fingerprint.platform.clone();
    let across_platforms = context
        .baselines
        .iter()
        .any(|b| platform(b) != platform(context.candidate));
    let key_of = |op: &OpSnapshot| {
        let name = match vendor_twin(&op.name) {
            Some(both) if across_platforms => both.to_string(),
            _ => op.name.clone(),
        };
        (name, op.module_path.clone())
    };
    for (run, baseline) in context.baselines.iter().enumerate() {
        for op in baseline.ops.iter().filter(|op| op.graph.is_none()) {
            let group = groups.entry(key_of(op)).or_default();
            group.baseline.resize(runs, Vec::new());
            group.baseline[run].push(op);
        }
    }
    for op in context.candidate.ops.iter().filter(|op| op.graph.is_none()) {
        groups.entry(key_of(op)).or_default().candidate.push(op);
    }
    let mut totals: Vec<OpComparison> = groups
        .into_iter()
        .filter(|(_, group)| worth_a_total(group))
        .map(|(key, group)| compare_total(context, &key, &group))
        .collect();
    totals.sort_by(OpComparison::most_impact_first);
    totals
}

/// One op under the two vendor libraries' names (PyTorch dispatches it to
/// cuDNN on CUDA and MIOpen on ROCm, with other arguments): across
/// platforms its totals pair under both names, so its time ratio can be
/// expected and judged like any other op's.
const VENDOR_TWINS: [(&str, &str, &str); 6] = [
    (
        "aten::cudnn_convolution",
        "aten::miopen_convolution",
        "aten::cudnn_convolution / aten::miopen_convolution",
    ),
    (
        "aten::cudnn_convolution_transpose",
        "aten::miopen_convolution_transpose",
        "aten::cudnn_convolution_transpose / aten::miopen_convolution_transpose",
    ),
    (
        "aten::cudnn_batch_norm",
        "aten::miopen_batch_norm",
        "aten::cudnn_batch_norm / aten::miopen_batch_norm",
    ),
    (
        "aten::cudnn_batch_norm_backward",
        "aten::miopen_batch_norm_backward",
        "aten::cudnn_batch_norm_backward / aten::miopen_batch_norm_backward",
    ),
    (
        "aten::_cudnn_rnn",
        "aten::miopen_rnn",
        "aten::_cudnn_rnn / aten::miopen_rnn",
    ),
    (
        "aten::cudnn_grid_sampler",
        "aten::miopen_grid_sampler",
        "aten::cudnn_grid_sampler / aten::miopen_grid_sampler",
    ),
];

/// The name an op's total has across platforms when it is a vendor twin.
fn vendor_twin(name: &str) -> Option<&'static str> {
    VENDOR_TWINS
        .iter()
        .find(|(cuda, rocm, _)| name == *cuda || name == *rocm)
        .map(|(_, _, both)| *both)
}

/// Present on both sides, and either several shapes on a side or shapes
/// that differ between the sides.
fn worth_a_total(group: &Group<'_>) -> bool {
    let present = group.baseline.iter().any(|rows| !rows.is_empty());
    if !present || group.candidate.is_empty() {
        return false;
    }
    // A baseline run with several shapes against one candidate shape differs
    // in its keys below; only the candidate's count needs a look here.
    let several = group.candidate.len() > 1;
    let keys = |rows: &[&OpSnapshot]| {
        let mut keys: Vec<OpKey> = rows.iter().map(|op| op.key()).collect();
        keys.sort();
        keys
    };
    let candidate_keys = keys(&group.candidate);
    several
        || group
            .baseline
            .iter()
            .filter(|rows| !rows.is_empty())
            .any(|rows| keys(rows) != candidate_keys)
}

/// One side's rows summed into a single row.
fn summed(context: &Context<'_>, rows: &[&OpSnapshot], snapshot: &Snapshot) -> (f64, Vec<f64>) {
    let total: f64 = rows.iter().map(|op| op.direct.sum).sum();
    let per_step = snapshot
        .steps
        .iter()
        .map(|step| {
            rows.iter()
                .flat_map(|op| op.step_us.iter())
                .filter(|(number, _)| *number == step.number)
                .map(|(_, us)| us)
                .sum()
        })
        .collect();
    (total * (context.scale)(snapshot), per_step)
}

/// The side of a total: the summed time, shapes counted in the key;
/// `rows` is not empty.
fn total_side(
    key: &TotalKey,
    rows: &[&OpSnapshot],
    runs: usize,
    totals: &[f64],
    time_us: f64,
) -> OpSide {
    let mut shapes: Vec<OpKey> = rows.iter().map(|op| op.key()).collect();
    shapes.sort();
    shapes.dedup();
    let count = rows.iter().map(|op| op.direct.count).sum();
    let samples: Vec<f64> = rows
        .iter()
        .flat_map(|op| op.samples_us.iter().copied())
        .collect();
    let module_path = key.1.clone();
    let key = OpKey {
        name: key.0.clone(),
        input_dims: match shapes.len() {
            1 => "1 shape".to_string(),
            n => format!("{n} shapes"),
        },
        ..OpKey::default()
    };
    OpSide {
        module_path,
        runs,
        count,
        total_us: median_or_zero(totals.iter().copied()),
        time_us,
        ..OpSide::from_samples(key, rows[0].category, &samples)
    }
}

/// Compares one op total: per-step samples when both sides have steps.
fn compare_total(context: &Context<'_>, key: &TotalKey, group: &Group<'_>) -> OpComparison {
    let candidate = context.candidate;
    let base_sums: Vec<(f64, Vec<f64>)> = group
        .baseline
        .iter()
        .zip(context.baselines)
        .map(|(rows, run)| summed(context, rows, run))
        .collect();
    let (cand_time, cand_steps) = summed(context, &group.candidate, candidate);
    let base_time = median_or_zero(base_sums.iter().map(|(time, _)| *time));
    let base_steps: Vec<f64> = base_sums
        .iter()
        .flat_map(|(_, steps)| steps.iter().copied())
        .collect();
    let (samples_basis, base_samples, cand_samples) =
        if base_steps.len() >= 2 && cand_steps.len() >= 2 {
            (SamplesBasis::Steps, base_steps, cand_steps)
        } else {
            (SamplesBasis::Runs, vec![base_time], vec![cand_time])
        };
    let options = context.options;
    let seed = stats::seed_from_parts(
        options.seed,
        &["total", &key.0, key.1.as_deref().unwrap_or("")],
    );
    let estimate = if context.baselines.len() == 1 {
        stats::paired_ratio_of_medians_ci(
            &base_samples,
            &cand_samples,
            options.confidence,
            options.resamples,
            seed,
        )
    } else {
        stats::ratio_of_medians_ci(
            &base_samples,
            &cand_samples,
            options.confidence,
            options.resamples,
            seed,
        )
    };
    let base_rows: Vec<&OpSnapshot> = group.baseline.iter().flatten().copied().collect();
    let runs = group
        .baseline
        .iter()
        .filter(|rows| !rows.is_empty())
        .count();
    let run_totals: Vec<f64> = group
        .baseline
        .iter()
        .map(|rows| rows.iter().map(|op| op.direct.sum).sum())
        .collect();
    let baseline = total_side(key, &base_rows, runs, &run_totals, base_time);
    let candidate_side = total_side(
        key,
        &group.candidate,
        1,
        &[group.candidate.iter().map(|op| op.direct.sum).sum()],
        cand_time,
    );
    let impact_us = cand_time - base_time;
    OpComparison {
        baseline_sample_median_us: stats::median(&base_samples).unwrap_or(0.0),
        candidate_sample_median_us: stats::median(&cand_samples).unwrap_or(0.0),
        estimate,
        samples_basis,
        noise: stats::max_relative_deviation(
            &base_sums.iter().map(|(time, _)| *time).collect::<Vec<_>>(),
        ),
        // Only a learned ratio: a total has no perf model to derive one from.
        expected: context
            .learned
            .and_then(|l| l.totals.get(key))
            .map(learned_expectation),
        impact_percent: percent(impact_us, context.baseline_total_us),
        impact_us,
        baseline,
        candidate: candidate_side,
        kernel_diff: None,
    }
}

#[cfg(test)]
mod tests {
    use crate::analysis::ops::stats::Stats;
    use crate::analysis::profile::{GraphPlace, GraphRole};
    use crate::gate::compare::tests::steps_of;
    use crate::gate::compare::{CompareOptions, Comparison, ImpactBasis, SamplesBasis, compare};
    use crate::gate::snapshot::tests::tiny_snapshot;
    use crate::gate::snapshot::{OpSnapshot, Snapshot};
    use crate::gate::stats;

    /// A row of `name` and `dims` at call site `path`, with its time in
    /// each profiler step (one call per step).
    fn row(name: &str, dims: &str, path: Option<&str>, steps: &[(u64, f64)]) -> OpSnapshot {
        let samples: Vec<f64> = steps.iter().map(|&(_, us)| us).collect();
        OpSnapshot {
            name: name.to_string(),
            input_dims: dims.to_string(),
            module_path: path.map(str::to_string),
            direct: Stats::of(&samples),
            samples_us: samples,
            step_us: steps.to_vec(),
            ..tiny_snapshot().ops[0].clone()
        }
    }

    fn run(ops: Vec<OpSnapshot>, steps: u64, platform: &str) -> Snapshot {
        let mut snapshot = Snapshot {
            ops,
            steps: steps_of(steps),
            ..tiny_snapshot()
        };
        snapshot.fingerprint.platform = Some(platform.to_string());
        snapshot
    }

    fn in_graph(mut op: OpSnapshot) -> OpSnapshot {
        op.graph = Some(GraphPlace {
            graph: "graph 1".to_string(),
            role: GraphRole::CapturedOp,
            launch: "cudaGraphLaunch".to_string(),
            variant: None,
        });
        op
    }

    fn totals(comparison: &Comparison) -> Vec<(&str, &str)> {
        comparison
            .op_totals
            .iter()
            .map(|t| {
                (
                    t.baseline.key.name.as_str(),
                    t.baseline.key.input_dims.as_str(),
                )
            })
            .collect()
    }

    /// An op's shapes at one call site summed per step on each side (a
    /// step without a shape adds 0), graph rows left out, on the
    /// comparison's per-step basis when the step counts differ. An op of
    /// one unchanged shape, or on one side only, has no total.
    #[test]
    fn an_ops_shapes_at_one_call_site_are_summed_per_step() {
        let p = Some("Model/Linear");
        let baseline = run(
            vec![
                row("aten::mm", "A", p, &[(1, 10.0), (2, 12.0)]),
                row("aten::mm", "B", p, &[(1, 5.0)]),
                in_graph(row("aten::mm", "G", p, &[(1, 100.0), (2, 100.0)])),
                row("aten::add", "X", None, &[(1, 1.0), (2, 1.0)]),
                row("aten::gone", "Y", None, &[(1, 1.0)]),
                row("aten::gone", "Z", None, &[(2, 1.0)]),
            ],
            2,
            "CUDA",
        );
        let candidate = run(
            vec![
                row("aten::mm", "A", p, &[(1, 11.0), (2, 13.0), (3, 12.0)]),
                row("aten::mm", "C", p, &[(2, 20.0)]),
                in_graph(row(
                    "aten::mm",
                    "G",
                    p,
                    &[(1, 900.0), (2, 900.0), (3, 900.0)],
                )),
                row("aten::add", "X", None, &[(1, 1.0), (2, 1.0), (3, 1.0)]),
                row("aten::new", "N1", None, &[(1, 1.0)]),
                row("aten::new", "N2", None, &[(2, 1.0)]),
            ],
            3,
            "CUDA",
        );
        let comparison = compare(
            std::slice::from_ref(&baseline),
            &candidate,
            &CompareOptions::default(),
        );
        assert_eq!(comparison.impact_basis, ImpactBasis::PerStep);
        assert_eq!(totals(&comparison), [("aten::mm", "2 shapes")]);
        let mm = &comparison.op_totals[0];
        assert_eq!(mm.samples_basis, SamplesBasis::Steps);
        assert_eq!(mm.baseline_sample_median_us, (15.0 + 12.0) / 2.0);
        assert_eq!(mm.candidate_sample_median_us, 12.0);
        assert_eq!(mm.estimate.n_baseline, 2);
        assert_eq!(mm.estimate.n_candidate, 3);
        for (side, calls, total, time) in [
            (&mm.baseline, 3, 27.0, 27.0 / 2.0),
            (&mm.candidate, 4, 56.0, 56.0 / 3.0),
        ] {
            assert_eq!(side.module_path.as_deref(), p);
            assert_eq!((side.runs, side.count), (1, calls));
            assert_eq!(side.total_us, total);
            assert!((side.time_us - time).abs() < 1e-9, "{side:?}");
        }
        assert!((mm.impact_us - (56.0 / 3.0 - 27.0 / 2.0)).abs() < 1e-9);
        assert_eq!((mm.noise, mm.expected), (None, None));
    }

    /// One shape a side, but another one: a total. Without steps, one
    /// sample a side, the run's total.
    #[test]
    fn a_changed_single_shape_is_a_total_of_one_shape_per_run() {
        let baseline = run(vec![row("aten::mm", "A", None, &[(1, 10.0)])], 0, "CUDA");
        let candidate = run(vec![row("aten::mm", "B", None, &[(1, 14.0)])], 0, "CUDA");
        let comparison = compare(
            std::slice::from_ref(&baseline),
            &candidate,
            &CompareOptions::default(),
        );
        assert_eq!(totals(&comparison), [("aten::mm", "1 shape")]);
        let mm = &comparison.op_totals[0];
        assert_eq!(mm.samples_basis, SamplesBasis::Runs);
        assert_eq!((mm.baseline.time_us, mm.candidate.time_us), (10.0, 14.0));
        assert_eq!(mm.impact_us, 4.0);
        assert_eq!(mm.estimate.interval, None);
    }

    /// A total is compared step by step only when both sides have two
    /// steps or more, else run against run; one baseline run's steps are
    /// paired with the candidate's (the same resampling as
    /// `paired_ratio_of_medians_ci` under the total's seed).
    #[test]
    fn a_total_pairs_its_steps_with_one_baseline_run_and_needs_steps_on_both_sides() {
        let steps =
            |times: &[f64]| -> Vec<(u64, f64)> { (1..).zip(times.iter().copied()).collect() };
        let base_times = [10.0, 14.0, 9.0, 13.0, 11.0, 16.0, 10.5, 12.0];
        let cand_times = [12.0, 13.0, 15.0, 11.0, 17.0, 12.5, 14.0, 13.5];
        let baseline = run(
            vec![row("aten::mm", "A", None, &steps(&base_times))],
            8,
            "CUDA",
        );
        let candidate = run(
            vec![row("aten::mm", "B", None, &steps(&cand_times))],
            8,
            "CUDA",
        );
        let options = CompareOptions::default();
        let comparison = compare(std::slice::from_ref(&baseline), &candidate, &options);
        let mm = &comparison.op_totals[0];
        assert_eq!(mm.samples_basis, SamplesBasis::Steps);
        let seed = stats::seed_from_parts(options.seed, &["total", "aten::mm", ""]);
        let paired = stats::paired_ratio_of_medians_ci(
            &base_times,
            &cand_times,
            options.confidence,
            options.resamples,
            seed,
        );
        let unpaired = stats::ratio_of_medians_ci(
            &base_times,
            &cand_times,
            options.confidence,
            options.resamples,
            seed,
        );
        assert_ne!(paired, unpaired, "the data must tell the two apart");
        assert_eq!(mm.estimate, paired);

        let one_step = run(vec![row("aten::mm", "B", None, &[(1, 13.0)])], 1, "CUDA");
        let comparison = compare(std::slice::from_ref(&baseline), &one_step, &options);
        let mm = &comparison.op_totals[0];
        assert_eq!(mm.samples_basis, SamplesBasis::Runs);
        assert_eq!((mm.estimate.n_baseline, mm.estimate.n_candidate), (1, 1));
    }

    /// Across CUDA and ROCm a vendor library's op pairs with its twin under
    /// both names; on one platform the two names are two ops.
    #[test]
    fn vendor_twins_pair_only_across_platforms() {
        let conv = |name: &str, dims: &str| row(name, dims, None, &[(1, 10.0)]);
        let cuda = run(vec![conv("aten::cudnn_convolution", "A")], 0, "CUDA");
        for (platform, expected) in [
            (
                "ROCm",
                vec!["aten::cudnn_convolution / aten::miopen_convolution"],
            ),
            ("CUDA", vec![]),
        ] {
            let other = run(vec![conv("aten::miopen_convolution", "A")], 0, platform);
            let comparison = compare(
                std::slice::from_ref(&cuda),
                &other,
                &CompareOptions::default(),
            );
            let names: Vec<&str> = totals(&comparison).iter().map(|t| t.0).collect();
            assert_eq!(names, expected, "{platform}");
        }
    }
}
