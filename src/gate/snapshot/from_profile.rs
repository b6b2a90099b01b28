//! Building a snapshot from an analysed profile: the fingerprint from the
//! environment, the timeline and steps, and the op rows merged by key with a
//! bounded, evenly spaced sample of invocation times. Everything written
//! keeps the bounds the reader checks (`bounds.rs`): a broken or enormous
//! trace gives a snapshot that can be read back, with lists cut at their
//! limits and impossible times stored as 0.

use std::path::Path;

use super::bounds::{
    MAX_DEVICES, MAX_KERNELS, MAX_OPS, MAX_SAMPLES, MAX_STEPS, stored_breakdown, stored_count,
    stored_stats, stored_string, stored_time,
};
use super::families::kernel_families;
use super::format::{
    AnomalyCounts, Fingerprint, GpuCount, IdleCounts, InferenceStepSnapshot, KernelSamples, OpKey,
    OpSnapshot, PhaseOpsSnapshot, SNAPSHOT_FORMAT, SNAPSHOT_VERSION, SNAPSHOT_VERSION_1_0,
    SNAPSHOT_VERSION_1_1, SNAPSHOT_VERSION_1_2, SNAPSHOT_VERSION_1_3, ShortKernelCounts, Snapshot,
    StepSnapshot,
};
use super::source::workload_name;
use crate::analysis::comm::CommKernels;
use crate::analysis::ops::category;
use crate::analysis::ops::stats::Stats;
use crate::analysis::profile::{GraphPlace, KernelSummary, OpModel, Profile, UniqueArgs};

impl Snapshot {
    /// The snapshot of an analysed trace. `trace_sha256` and `trace_bytes`
    /// describe the trace file as stored (see [`sha256_file`](super::sha256_file));
    /// [`Fingerprint::pytorch_version`] is left empty for the caller to fill
    /// from the trace metadata ([`pytorch_version`](super::pytorch_version)).
    pub fn from_profile(profile: &Profile, trace_sha256: String, trace_bytes: u64) -> Snapshot {
        let environment = &profile.environment;
        let mut gpus: Vec<GpuCount> = Vec::new();
        for device in &environment.devices {
            let name = stored_string(&device.name);
            let full = gpus.len() >= MAX_DEVICES;
            match gpus.iter_mut().find(|g| g.name == name) {
                Some(entry) => entry.count += 1,
                None if !full => gpus.push(GpuCount { name, count: 1 }),
                None => {}
            }
        }
        let text = |value: &Option<String>| value.as_deref().map(stored_string);
        let fingerprint = Fingerprint {
            gpus,
            gpu_count: environment.devices.len() as u64,
            active_devices: environment
                .active_devices
                .iter()
                .take(MAX_DEVICES)
                .copied()
                .collect(),
            hardware: text(&profile.hardware.name),
            hardware_how: stored_string(&profile.hardware.how),
            platform: text(&environment.platform),
            cuda_runtime_version: text(&environment.cuda_runtime_version),
            cuda_driver_version: text(&environment.cuda_driver_version),
            hip_runtime_version: text(&environment.hip_runtime_version),
            hip_driver_version: text(&environment.hip_driver_version),
            tracer_version: text(&environment.tracer_version),
            pytorch_version: None,
            rank: environment.rank,
            world_size: environment.world_size,
            distributed_backend: text(&environment.distributed_backend),
            trace_sha256: stored_string(&trace_sha256),
            trace_bytes,
            trace_json_bytes: profile.source.json_bytes,
        };
        let anomalies = &profile.anomalies;
        let mut ops = op_rows(&profile.unique_args);
        if let Some(replay) = &profile.graph_replay {
            ops.extend(op_rows(&replay.graphs));
        }
        let replayed = profile.graph_replay.iter().flat_map(|r| &r.graphs);
        let families: Vec<KernelSamples> =
            kernel_families(profile.unique_args.iter().chain(replayed))
                .into_iter()
                .map(|(name, launches)| stored_kernel(&name, &launches))
                .collect();
        let mut coverage = profile.coverage.clone();
        if ops.is_empty() && !profile.kernels.is_empty() {
            // A GPU-only trace: its kernels are its rows, and so all of its
            // linked GPU work is in rows.
            ops = kernel_rows(&profile.kernels);
            coverage.in_rows_us += coverage.outside_rows_us;
            coverage.outside_rows_us = 0.0;
        }
        let coverage = (!coverage.is_complete()).then_some(coverage);
        let (inference_steps, phase_ops) = phase_rows(profile);
        let step_ops = inference_steps.iter().any(|s| !s.ops.is_empty());
        let version = if !families.is_empty() || step_ops {
            SNAPSHOT_VERSION
        } else if ops.iter().any(|op| !op.kernel_samples_us.is_empty()) {
            SNAPSHOT_VERSION_1_3
        } else if !inference_steps.is_empty() {
            SNAPSHOT_VERSION_1_2
        } else if coverage.is_some() || ops.iter().any(|op| op.graph.is_some()) {
            SNAPSHOT_VERSION_1_1
        } else {
            SNAPSHOT_VERSION_1_0
        };
        Snapshot {
            format: SNAPSHOT_FORMAT.to_string(),
            version,
            tracegate_version: env!("CARGO_PKG_VERSION").to_string(),
            workload: stored_string(&workload_name(Path::new(&profile.source.path))),
            fingerprint,
            has_gpu_activity: profile.has_gpu_activity,
            timeline: stored_breakdown(&profile.timeline),
            // One row per step number (the reader refuses repeats): a trace
            // that repeats `ProfilerStep#N` keeps its first.
            steps: profile
                .steps
                .iter()
                .filter({
                    let mut seen = std::collections::HashSet::new();
                    move |step| seen.insert(step.number)
                })
                .take(MAX_STEPS)
                .map(|step| StepSnapshot {
                    number: step.number,
                    host_duration_us: stored_time(step.host_duration_us),
                    timeline: stored_breakdown(&step.timeline),
                    kernel_time_us: stored_time(step.kernel_time_us),
                })
                .collect(),
            ops,
            short_kernels: ShortKernelCounts {
                count: profile.short_kernel_histogram.iter().map(|b| b.count).sum(),
                time_us: stored_time(profile.short_kernel_time_us),
            },
            idle: IdleCounts {
                host_wait_us: stored_time(profile.idle.host_wait_us),
                kernel_wait_us: stored_time(profile.idle.kernel_wait_us),
            },
            anomalies: AnomalyCounts {
                negative_durations: anomalies.negative_durations,
                missing_times: anomalies.missing_times,
                gpu_without_launch: anomalies.link.gpu_without_launch,
                launches_without_gpu: anomalies.link.launches_without_gpu,
                duplicate_correlations: anomalies.link.duplicate_correlations,
                improper_nesting: anomalies.link.improper_nesting,
                stream_overlaps: anomalies.stream_overlaps,
            },
            coverage,
            inference_steps,
            phase_ops,
            ranks: Vec::new(),
            kernel_families: families,
        }
    }
}

/// The profile's inference steps and per-phase op totals as stored: at most
/// [`MAX_STEPS`] steps and [`MAX_OPS`] ops per phase (and per step).
fn phase_rows(profile: &Profile) -> (Vec<InferenceStepSnapshot>, Vec<PhaseOpsSnapshot>) {
    let Some(phases) = &profile.phases else {
        return (Vec::new(), Vec::new());
    };
    // Per-step op times only where phases are to be told apart: with one
    // phase the op rows compare the same work.
    let several = phases.summaries.len() > 1;
    let steps = phases
        .steps
        .iter()
        .take(MAX_STEPS)
        .map(|step| InferenceStepSnapshot {
            phase: step.phase,
            host_duration_us: stored_time(step.host_duration_us),
            gpu_time_us: stored_time(step.gpu_time_us),
            ops: match several {
                true => step
                    .ops
                    .iter()
                    .take(MAX_OPS)
                    .map(|(name, us)| (stored_string(name), stored_time(*us)))
                    .collect(),
                false => Vec::new(),
            },
        })
        .collect();
    let ops = phases
        .summaries
        .iter()
        .map(|summary| PhaseOpsSnapshot {
            phase: summary.phase,
            ops: summary
                .ops
                .iter()
                .take(MAX_OPS)
                .map(|op| (stored_string(&op.name), stored_time(op.gpu_time_us)))
                .collect(),
        })
        .collect();
    (steps, ops)
}

/// Up to `limit` values evenly spaced by position: indices ⌊i·n/limit⌋.
pub fn spaced_sample(values: &[f64], limit: usize) -> Vec<f64> {
    let n = values.len();
    if n <= limit {
        return values.to_vec();
    }
    (0..limit).map(|i| values[i * n / limit]).collect()
}

/// The profile's unique-args rows as snapshot rows, merging rows that share
/// an [`OpKey`] (they differ only in process or thread): samples are
/// concatenated, step sums added, statistics recomputed; the first row
/// (most time) gives the category, module path, kernels and model. At most
/// [`MAX_OPS`] rows (the first, with the most time), [`MAX_STEPS`] step
/// sums and [`MAX_KERNELS`] kernel names per row are kept; keys are made of
/// the stored (bounded) strings, so the rows stay one per key.
fn op_rows(rows: &[UniqueArgs]) -> Vec<OpSnapshot> {
    /// A row with the samples and step sums of the rows merged into it.
    struct Merged<'a> {
        key: OpKey,
        first: &'a UniqueArgs,
        samples: Vec<f64>,
        step_us: Vec<(u64, f64)>,
        merged: bool,
        /// Every row merged into it, the first included.
        parts: Vec<&'a UniqueArgs>,
    }
    let mut index: std::collections::HashMap<OpKey, usize> = std::collections::HashMap::new();
    let mut rows_out: Vec<Merged> = Vec::new();
    for row in rows {
        let key = OpKey {
            name: stored_string(&row.name),
            input_dims: stored_string(&row.input_dims),
            input_type: stored_string(&row.input_type),
            input_strides: stored_string(&row.input_strides),
            concrete_inputs: stored_string(&row.concrete_inputs),
            graph: row.graph.as_ref().map_or(String::new(), GraphPlace::key),
        };
        match index.get(&key) {
            Some(&slot) => {
                let entry = &mut rows_out[slot];
                entry.samples.extend_from_slice(&row.samples_us);
                for &(step, us) in &row.step_us {
                    match entry.step_us.iter_mut().find(|(s, _)| *s == step) {
                        Some(existing) => existing.1 += us,
                        None => entry.step_us.push((step, us)),
                    }
                }
                entry.step_us.sort_by_key(|(step, _)| *step);
                entry.merged = true;
                entry.parts.push(row);
            }
            None if rows_out.len() < MAX_OPS => {
                rows_out.push(Merged {
                    key: key.clone(),
                    first: row,
                    samples: row.samples_us.clone(),
                    step_us: row.step_us.clone(),
                    merged: false,
                    parts: vec![row],
                });
                index.insert(key, rows_out.len() - 1);
            }
            None => {}
        }
    }
    rows_out
        .into_iter()
        .map(|entry| {
            let row = entry.first;
            let mut step_us = entry.step_us;
            step_us.truncate(MAX_STEPS);
            let samples: Vec<f64> = spaced_sample(&entry.samples, MAX_SAMPLES)
                .into_iter()
                .map(stored_time)
                .collect();
            OpSnapshot {
                name: entry.key.name,
                input_dims: entry.key.input_dims,
                input_type: entry.key.input_type,
                input_strides: entry.key.input_strides,
                concrete_inputs: entry.key.concrete_inputs,
                category: row.category,
                module_path: row.module_path.as_deref().map(stored_string),
                direct: stored_stats(&if entry.merged {
                    Stats::of(&entry.samples)
                } else {
                    row.direct
                }),
                samples_us: samples,
                step_us: step_us
                    .into_iter()
                    .map(|(step, us)| (step, stored_time(us)))
                    .collect(),
                kernel_sequence: row
                    .kernel_sequence
                    .iter()
                    .take(MAX_KERNELS)
                    .map(|kernel| stored_string(kernel))
                    .collect(),
                model: row.model.as_ref().map(|model| OpModel {
                    family: stored_string(&model.family),
                    flops: stored_count(model.flops),
                    bytes: stored_count(model.bytes),
                    compute_spec: model.compute_spec,
                }),
                graph: row.graph.as_ref().map(stored_place),
                kernel_us: match row.graph {
                    Some(_) => kernel_totals(row),
                    None => Vec::new(),
                },
                kernel_samples_us: match row.graph {
                    None if calls_differ(&entry.parts) => kernel_samples(&entry.parts),
                    _ => Vec::new(),
                },
            }
        })
        .collect()
}

/// Rows for a trace without CPU ops (a GPU-only trace): one per kernel
/// name, merged over streams and launch calls, so that two such traces can
/// still be compared kernel by kernel. The samples are the launches' own
/// durations (a bounded, evenly spaced sample), in an order that does not
/// depend on the row's time: its launches by (stream, launching call), each
/// in the trace's order; so the i-th sample of a baseline row and of its
/// candidate row are the same launch of two runs, as for op rows. At most
/// [`MAX_OPS`] rows, the most time first.
fn kernel_rows(kernels: &[KernelSummary]) -> Vec<OpSnapshot> {
    let mut rows: Vec<(OpSnapshot, Vec<&KernelSummary>)> = Vec::new();
    for kernel in kernels {
        let name = stored_string(&kernel.name);
        match rows.iter_mut().find(|(row, _)| row.name == name) {
            Some((_, parts)) => parts.push(kernel),
            None => rows.push((
                OpSnapshot {
                    name: name.clone(),
                    input_dims: String::new(),
                    input_type: String::new(),
                    input_strides: String::new(),
                    concrete_inputs: String::new(),
                    category: category::of_kernel(&kernel.name, &CommKernels::default()),
                    module_path: None,
                    direct: kernel.duration,
                    samples_us: Vec::new(),
                    step_us: Vec::new(),
                    kernel_sequence: vec![name],
                    model: None,
                    graph: None,
                    kernel_us: Vec::new(),
                    kernel_samples_us: Vec::new(),
                },
                vec![kernel],
            )),
        }
    }
    let mut rows: Vec<OpSnapshot> = rows
        .into_iter()
        .map(|(mut row, mut parts)| {
            parts.sort_by(|a, b| (a.stream, &a.parent_op).cmp(&(b.stream, &b.parent_op)));
            let launches: Vec<f64> = parts
                .iter()
                .flat_map(|kernel| kernel.launches_us.iter().copied())
                .collect();
            if parts.len() > 1 {
                row.direct = Stats::of(&launches);
            }
            row.samples_us = spaced_sample(&launches, MAX_SAMPLES);
            row
        })
        .collect();
    rows.sort_by(|a, b| b.direct.sum.total_cmp(&a.direct.sum));
    rows.truncate(MAX_OPS);
    for row in &mut rows {
        row.direct = stored_stats(&row.direct);
        row.samples_us = row.samples_us.iter().map(|&us| stored_time(us)).collect();
    }
    rows
}

/// Each kernel's total time in a row, µs, by name in first-launch order.
fn kernel_totals(row: &UniqueArgs) -> Vec<(String, f64)> {
    let mut totals: Vec<(String, f64)> = Vec::new();
    for kernel in &row.kernels {
        match totals.iter_mut().find(|(name, _)| *name == kernel.name) {
            Some(entry) => entry.1 += kernel.duration.sum,
            None => totals.push((kernel.name.clone(), kernel.duration.sum)),
        }
    }
    totals
        .into_iter()
        .take(MAX_KERNELS)
        .map(|(name, us)| (stored_string(&name), stored_time(us)))
        .collect()
}

/// A graph place as stored: its strings within the snapshot's bounds.
fn stored_place(place: &GraphPlace) -> GraphPlace {
    GraphPlace {
        graph: stored_string(&place.graph),
        launch: stored_string(&place.launch),
        variant: place.variant.as_deref().map(stored_string),
        ..place.clone()
    }
}

/// Whether a row's calls (over the rows merged into it) launch different
/// kernels: some kernel is launched other than once per call for each time
/// the earliest call's sequence holds it.
fn calls_differ(rows: &[&UniqueArgs]) -> bool {
    let calls: usize = rows.iter().map(|row| row.direct.count as usize).sum();
    let sequence = &rows[0].kernel_sequence;
    launches_by_name(rows).iter().any(|(name, launches)| {
        launches.len() != calls * sequence.iter().filter(|k| *k == name).count()
    })
}

/// Every launch of each kernel of the rows, by name in first-launch order
/// (streams and rows merged).
fn launches_by_name(rows: &[&UniqueArgs]) -> Vec<(String, Vec<f64>)> {
    let mut kernels: Vec<(String, Vec<f64>)> = Vec::new();
    for kernel in rows.iter().flat_map(|row| &row.kernels) {
        match kernels.iter_mut().find(|(name, _)| *name == kernel.name) {
            Some(entry) => entry.1.extend_from_slice(&kernel.launches_us),
            None => kernels.push((kernel.name.clone(), kernel.launches_us.clone())),
        }
    }
    kernels
}

/// Each kernel's launches in the rows as stored: at most [`MAX_KERNELS`]
/// kernels and [`MAX_SAMPLES`] evenly spaced launches each.
fn kernel_samples(rows: &[&UniqueArgs]) -> Vec<KernelSamples> {
    launches_by_name(rows)
        .into_iter()
        .take(MAX_KERNELS)
        .map(|(name, launches)| stored_kernel(&name, &launches))
        .collect()
}

/// One kernel's launches as stored: their count, total and an evenly
/// spaced sample of them.
pub(super) fn stored_kernel(name: &str, launches: &[f64]) -> KernelSamples {
    KernelSamples {
        name: stored_string(name),
        launches: launches.len() as u64,
        total_us: stored_time(launches.iter().sum()),
        samples_us: spaced_sample(launches, MAX_SAMPLES)
            .into_iter()
            .map(stored_time)
            .collect(),
    }
}
