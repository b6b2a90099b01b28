//! Building a snapshot from an analysed profile: the fingerprint from the
//! environment, the timeline and steps, and the op rows merged by key with a
//! bounded, evenly spaced sample of invocation times.

use std::path::Path;

use super::format::{
    AnomalyCounts, Fingerprint, GpuCount, IdleCounts, MAX_SAMPLES, OpKey, OpSnapshot,
    SNAPSHOT_FORMAT, SNAPSHOT_VERSION, SNAPSHOT_VERSION_1_0, ShortKernelCounts, Snapshot,
    StepSnapshot,
};
use super::source::workload_name;
use crate::analysis::ops::stats::Stats;
use crate::analysis::profile::{GraphPlace, Profile, UniqueArgs};

impl Snapshot {
    /// The snapshot of an analysed trace. `trace_sha256` and `trace_bytes`
    /// describe the trace file as stored (see [`sha256_file`](super::sha256_file));
    /// [`Fingerprint::pytorch_version`] is left empty for the caller to fill
    /// from the trace metadata ([`pytorch_version`](super::pytorch_version)).
    pub fn from_profile(profile: &Profile, trace_sha256: String, trace_bytes: u64) -> Snapshot {
        let environment = &profile.environment;
        let mut gpus: Vec<GpuCount> = Vec::new();
        for device in &environment.devices {
            match gpus.iter_mut().find(|g| g.name == device.name) {
                Some(entry) => entry.count += 1,
                None => gpus.push(GpuCount {
                    name: device.name.clone(),
                    count: 1,
                }),
            }
        }
        let fingerprint = Fingerprint {
            gpus,
            gpu_count: environment.devices.len() as u64,
            active_devices: environment.active_devices.clone(),
            hardware: profile.hardware.name.clone(),
            hardware_how: profile.hardware.how.clone(),
            platform: environment.platform.clone(),
            cuda_runtime_version: environment.cuda_runtime_version.clone(),
            cuda_driver_version: environment.cuda_driver_version.clone(),
            hip_runtime_version: environment.hip_runtime_version.clone(),
            hip_driver_version: environment.hip_driver_version.clone(),
            tracer_version: environment.tracer_version.clone(),
            pytorch_version: None,
            rank: environment.rank,
            world_size: environment.world_size,
            distributed_backend: environment.distributed_backend.clone(),
            trace_sha256,
            trace_bytes,
            trace_json_bytes: profile.source.json_bytes,
        };
        let anomalies = &profile.anomalies;
        let mut ops = op_rows(&profile.unique_args);
        if let Some(replay) = &profile.graph_replay {
            ops.extend(op_rows(&replay.graphs));
        }
        let coverage = (!profile.coverage.is_complete()).then(|| profile.coverage.clone());
        let version = if coverage.is_some() || ops.iter().any(|op| op.graph.is_some()) {
            SNAPSHOT_VERSION
        } else {
            SNAPSHOT_VERSION_1_0
        };
        Snapshot {
            format: SNAPSHOT_FORMAT.to_string(),
            version,
            tracegate_version: env!("CARGO_PKG_VERSION").to_string(),
            workload: workload_name(Path::new(&profile.source.path)),
            fingerprint,
            has_gpu_activity: profile.has_gpu_activity,
            timeline: profile.timeline,
            steps: profile
                .steps
                .iter()
                .map(|step| StepSnapshot {
                    number: step.number,
                    host_duration_us: step.host_duration_us,
                    timeline: step.timeline,
                    kernel_time_us: step.kernel_time_us,
                })
                .collect(),
            ops,
            short_kernels: ShortKernelCounts {
                count: profile.short_kernel_histogram.iter().map(|b| b.count).sum(),
                time_us: profile.short_kernel_time_us,
            },
            idle: IdleCounts {
                host_wait_us: profile.idle.host_wait_us,
                kernel_wait_us: profile.idle.kernel_wait_us,
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
        }
    }
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
/// (most time) gives the category, module path, kernels and model.
fn op_rows(rows: &[UniqueArgs]) -> Vec<OpSnapshot> {
    /// A row with the samples and step sums of the rows merged into it.
    struct Merged<'a> {
        first: &'a UniqueArgs,
        samples: Vec<f64>,
        step_us: Vec<(u64, f64)>,
        merged: bool,
    }
    let mut index: std::collections::HashMap<OpKey, usize> = std::collections::HashMap::new();
    let mut rows_out: Vec<Merged> = Vec::new();
    for row in rows {
        let key = OpKey {
            name: row.name.clone(),
            input_dims: row.input_dims.clone(),
            input_type: row.input_type.clone(),
            input_strides: row.input_strides.clone(),
            concrete_inputs: row.concrete_inputs.clone(),
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
            }
            None => {
                index.insert(key, rows_out.len());
                rows_out.push(Merged {
                    first: row,
                    samples: row.samples_us.clone(),
                    step_us: row.step_us.clone(),
                    merged: false,
                });
            }
        }
    }
    rows_out
        .into_iter()
        .map(|entry| {
            let row = entry.first;
            OpSnapshot {
                name: row.name.clone(),
                input_dims: row.input_dims.clone(),
                input_type: row.input_type.clone(),
                input_strides: row.input_strides.clone(),
                concrete_inputs: row.concrete_inputs.clone(),
                category: row.category,
                module_path: row.module_path.clone(),
                direct: if entry.merged {
                    Stats::of(&entry.samples)
                } else {
                    row.direct
                },
                samples_us: spaced_sample(&entry.samples, MAX_SAMPLES),
                step_us: entry.step_us,
                kernel_sequence: row.kernel_sequence.clone(),
                model: row.model.clone(),
                graph: row.graph.clone(),
                kernel_us: match row.graph {
                    Some(_) => kernel_totals(row),
                    None => Vec::new(),
                },
            }
        })
        .collect()
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
}
