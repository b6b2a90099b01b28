//! Checking a snapshot read from a file against the bounds of
//! `bounds.rs`: string sizes, list lengths, one row per op key, and times
//! and statistics that are finite, ≥ 0 and at most [`MAX_TIME_US`]. The
//! first field out of bounds is named in the error (`ops[3].direct.mean`).

use std::collections::HashMap;
use std::fmt;

use super::bounds::{
    MAX_DEVICES, MAX_KERNELS, MAX_MODEL_COUNT, MAX_OPS, MAX_SAMPLES, MAX_STEPS, MAX_STRING_BYTES,
    MAX_TIME_US, too_many,
};
use super::format::{KernelSamples, OpSnapshot, Snapshot};
use crate::analysis::ops::stats::Stats;
use crate::analysis::timeline::Breakdown;

/// A problem at a place in the snapshot: `ops[3].samples_us: …`.
fn at(place: impl fmt::Display, problem: String) -> String {
    format!("{place}: {problem}")
}

/// A number as a message shows it: huge and tiny ones in `1e300` form.
fn number(value: f64) -> String {
    let size = value.abs();
    if size != 0.0 && !(1e-6..1e15).contains(&size) {
        format!("{value:e}")
    } else {
        format!("{value}")
    }
}

fn time(value: f64) -> Result<(), String> {
    if !value.is_finite() {
        Err(format!("{value} is not a finite number"))
    } else if value < 0.0 {
        Err(format!("{} is negative; times are ≥ 0 µs", number(value)))
    } else if value > MAX_TIME_US {
        Err(format!(
            "{} µs is more than {MAX_TIME_US:e} µs (about 31.7 years), the limit for a time",
            number(value)
        ))
    } else {
        Ok(())
    }
}

fn count(value: f64) -> Result<(), String> {
    if !(0.0..=MAX_MODEL_COUNT).contains(&value) {
        Err(format!(
            "{} is not a count from 0 to {MAX_MODEL_COUNT:e}",
            number(value)
        ))
    } else {
        Ok(())
    }
}

fn string(text: &str) -> Result<(), String> {
    if text.len() > MAX_STRING_BYTES {
        Err(format!(
            "a string of {} bytes; a snapshot's strings hold at most {MAX_STRING_BYTES}",
            text.len()
        ))
    } else {
        Ok(())
    }
}

fn length(length: usize, limit: usize, what: &str) -> Result<(), String> {
    if length > limit {
        Err(too_many(length, limit, what))
    } else {
        Ok(())
    }
}

/// Every named time of a structure at `place`.
fn times(place: &str, fields: &[(&str, f64)]) -> Result<(), String> {
    for (name, value) in fields {
        time(*value).map_err(|problem| at(format_args!("{place}.{name}"), problem))?;
    }
    Ok(())
}

fn stats(place: &str, stats: &Stats) -> Result<(), String> {
    times(
        place,
        &[
            ("sum", stats.sum),
            ("mean", stats.mean),
            ("median", stats.median),
            ("std", stats.std.unwrap_or(0.0)),
            ("min", stats.min),
            ("max", stats.max),
        ],
    )
}

fn breakdown(place: &str, breakdown: &Breakdown) -> Result<(), String> {
    times(
        place,
        &[
            ("computation_time", breakdown.computation_time),
            ("exposed_comm_time", breakdown.exposed_comm_time),
            ("exposed_memcpy_time", breakdown.exposed_memcpy_time),
            ("busy_time", breakdown.busy_time),
            ("idle_time", breakdown.idle_time),
            ("total_time", breakdown.total_time),
            ("total_comm_time", breakdown.total_comm_time),
            ("total_memcpy_time", breakdown.total_memcpy_time),
        ],
    )
}

fn op_row(index: usize, op: &OpSnapshot) -> Result<(), String> {
    let place = format!("ops[{index}]");
    let strings = [
        ("name", op.name.as_str()),
        ("input_dims", &op.input_dims),
        ("input_type", &op.input_type),
        ("input_strides", &op.input_strides),
        ("concrete_inputs", &op.concrete_inputs),
        ("module_path", op.module_path.as_deref().unwrap_or("")),
    ];
    for (name, text) in strings {
        string(text).map_err(|problem| at(format_args!("{place}.{name}"), problem))?;
    }
    stats(&format!("{place}.direct"), &op.direct)?;
    length(op.samples_us.len(), MAX_SAMPLES, "samples")
        .map_err(|problem| at(format_args!("{place}.samples_us"), problem))?;
    for (i, &sample) in op.samples_us.iter().enumerate() {
        time(sample).map_err(|problem| at(format_args!("{place}.samples_us[{i}]"), problem))?;
    }
    length(op.step_us.len(), MAX_STEPS, "step sums")
        .map_err(|problem| at(format_args!("{place}.step_us"), problem))?;
    for (i, &(_, us)) in op.step_us.iter().enumerate() {
        time(us).map_err(|problem| at(format_args!("{place}.step_us[{i}]"), problem))?;
    }
    length(op.kernel_sequence.len(), MAX_KERNELS, "kernel names")
        .map_err(|problem| at(format_args!("{place}.kernel_sequence"), problem))?;
    for (i, kernel) in op.kernel_sequence.iter().enumerate() {
        string(kernel)
            .map_err(|problem| at(format_args!("{place}.kernel_sequence[{i}]"), problem))?;
    }
    kernel_samples(&format!("{place}.kernel_samples_us"), &op.kernel_samples_us)?;
    if let Some(graph) = &op.graph {
        let strings = [
            ("graph", graph.graph.as_str()),
            ("launch", &graph.launch),
            ("variant", graph.variant.as_deref().unwrap_or("")),
        ];
        for (name, text) in strings {
            string(text).map_err(|problem| at(format_args!("{place}.graph.{name}"), problem))?;
        }
    }
    length(op.kernel_us.len(), MAX_KERNELS, "kernel times")
        .map_err(|problem| at(format_args!("{place}.kernel_us"), problem))?;
    for (k, (name, us)) in op.kernel_us.iter().enumerate() {
        string(name).map_err(|problem| at(format_args!("{place}.kernel_us[{k}]"), problem))?;
        time(*us).map_err(|problem| at(format_args!("{place}.kernel_us[{k}]"), problem))?;
    }
    if let Some(model) = &op.model {
        string(&model.family)
            .map_err(|problem| at(format_args!("{place}.model.family"), problem))?;
        count(model.flops).map_err(|problem| at(format_args!("{place}.model.flops"), problem))?;
        count(model.bytes).map_err(|problem| at(format_args!("{place}.model.bytes"), problem))?;
    }
    Ok(())
}

impl Snapshot {
    /// Whether the snapshot keeps every bound of this module; the error
    /// names the first field that does not (`ops[3].samples_us: …`).
    pub fn check_bounds(&self) -> Result<(), String> {
        let fingerprint = &self.fingerprint;
        let strings = [
            ("format", self.format.as_str()),
            ("tracegate_version", &self.tracegate_version),
            ("workload", &self.workload),
            ("fingerprint.hardware_how", &fingerprint.hardware_how),
            ("fingerprint.trace_sha256", &fingerprint.trace_sha256),
        ];
        let optional = [
            ("fingerprint.hardware", &fingerprint.hardware),
            ("fingerprint.platform", &fingerprint.platform),
            (
                "fingerprint.cuda_runtime_version",
                &fingerprint.cuda_runtime_version,
            ),
            (
                "fingerprint.cuda_driver_version",
                &fingerprint.cuda_driver_version,
            ),
            (
                "fingerprint.hip_runtime_version",
                &fingerprint.hip_runtime_version,
            ),
            (
                "fingerprint.hip_driver_version",
                &fingerprint.hip_driver_version,
            ),
            ("fingerprint.tracer_version", &fingerprint.tracer_version),
            ("fingerprint.pytorch_version", &fingerprint.pytorch_version),
            (
                "fingerprint.distributed_backend",
                &fingerprint.distributed_backend,
            ),
        ];
        let optional = optional
            .iter()
            .map(|(name, text)| (*name, text.as_deref().unwrap_or("")));
        for (name, text) in strings.into_iter().chain(optional) {
            string(text).map_err(|problem| at(name, problem))?;
        }
        length(fingerprint.gpus.len(), MAX_DEVICES, "GPU names")
            .map_err(|problem| at("fingerprint.gpus", problem))?;
        for (i, gpu) in fingerprint.gpus.iter().enumerate() {
            string(&gpu.name)
                .map_err(|problem| at(format_args!("fingerprint.gpus[{i}].name"), problem))?;
        }
        length(fingerprint.active_devices.len(), MAX_DEVICES, "devices")
            .map_err(|problem| at("fingerprint.active_devices", problem))?;
        breakdown("timeline", &self.timeline)?;
        length(self.steps.len(), MAX_STEPS, "steps").map_err(|problem| at("steps", problem))?;
        let mut first_of_step = HashMap::with_capacity(self.steps.len());
        for (i, step) in self.steps.iter().enumerate() {
            // A repeated row would count its step twice in every per-step
            // figure (an identical candidate then "+66.7%").
            if let Some(first) = first_of_step.insert(step.number, i) {
                return Err(format!(
                    "steps[{i}]: step {} again (as steps[{first}]); a snapshot has one row per step",
                    step.number
                ));
            }
            time(step.host_duration_us)
                .map_err(|problem| at(format_args!("steps[{i}].host_duration_us"), problem))?;
            time(step.kernel_time_us)
                .map_err(|problem| at(format_args!("steps[{i}].kernel_time_us"), problem))?;
            breakdown(&format!("steps[{i}].timeline"), &step.timeline)?;
        }
        length(self.ops.len(), MAX_OPS, "op rows").map_err(|problem| at("ops", problem))?;
        let mut first_of_key = HashMap::with_capacity(self.ops.len());
        for (i, op) in self.ops.iter().enumerate() {
            op_row(i, op)?;
            // The comparison key, graph place included: rows of graph
            // launches share name and launch configuration across graphs.
            if let Some(first) = first_of_key.insert(op.key(), i) {
                return Err(format!(
                    "ops[{i}]: the same op key (name, dims, types, strides, concrete inputs, \
                     graph place) as ops[{first}]; a snapshot has one row per key"
                ));
            }
        }
        self.check_phases()?;
        self.check_ranks()?;
        kernel_samples("kernel_families", &self.kernel_families)?;
        times("short_kernels", &[("time_us", self.short_kernels.time_us)])?;
        times(
            "idle",
            &[
                ("host_wait_us", self.idle.host_wait_us),
                ("kernel_wait_us", self.idle.kernel_wait_us),
            ],
        )
    }

    /// The bounds of the inference steps and per-phase op totals.
    fn check_phases(&self) -> Result<(), String> {
        length(self.inference_steps.len(), MAX_STEPS, "inference steps")
            .map_err(|problem| at("inference_steps", problem))?;
        for (i, step) in self.inference_steps.iter().enumerate() {
            times(
                &format!("inference_steps[{i}]"),
                &[
                    ("host_duration_us", step.host_duration_us),
                    ("gpu_time_us", step.gpu_time_us),
                ],
            )?;
            op_times(&format!("inference_steps[{i}].ops"), &step.ops)?;
        }
        length(self.phase_ops.len(), MAX_STEPS, "phases")
            .map_err(|problem| at("phase_ops", problem))?;
        for (i, phase) in self.phase_ops.iter().enumerate() {
            op_times(&format!("phase_ops[{i}].ops"), &phase.ops)?;
        }
        Ok(())
    }

    /// The ranks' times: finite starts (a clock's, so any size) and
    /// durations and totals as every other time.
    fn check_ranks(&self) -> Result<(), String> {
        for (i, rank) in self.ranks.iter().enumerate() {
            string(&rank.source)
                .map_err(|problem| at(format_args!("ranks[{i}].source"), problem))?;
            times(
                &format!("ranks[{i}]"),
                &[
                    ("exposed_comm_us", rank.exposed_comm_us),
                    ("total_comm_us", rank.total_comm_us),
                ],
            )?;
            for (j, kernel) in rank.kernels.iter().enumerate() {
                let place = || format!("ranks[{i}].kernels[{j}]");
                if !kernel.start_us.is_finite() {
                    return Err(at(
                        place(),
                        format!("start {} is not finite", kernel.start_us),
                    ));
                }
                time(kernel.duration_us).map_err(|problem| at(place(), problem))?;
                for text in [&kernel.process_group, &kernel.dtype].into_iter().flatten() {
                    string(text).map_err(|problem| at(place(), problem))?;
                }
            }
            kernel_samples(
                &format!("ranks[{i}].kernel_families"),
                &rank.kernel_families,
            )?;
        }
        Ok(())
    }
}

/// The bounds of a list of kernels' launches at `place`.
fn kernel_samples(place: &str, kernels: &[KernelSamples]) -> Result<(), String> {
    length(kernels.len(), MAX_KERNELS, "kernels").map_err(|problem| at(place, problem))?;
    for (k, kernel) in kernels.iter().enumerate() {
        let place = format!("{place}[{k}]");
        string(&kernel.name).map_err(|problem| at(format_args!("{place}.name"), problem))?;
        time(kernel.total_us).map_err(|problem| at(format_args!("{place}.total_us"), problem))?;
        length(kernel.samples_us.len(), MAX_SAMPLES, "samples")
            .map_err(|problem| at(format_args!("{place}.samples_us"), problem))?;
        for (i, &sample) in kernel.samples_us.iter().enumerate() {
            time(sample).map_err(|problem| at(format_args!("{place}.samples_us[{i}]"), problem))?;
        }
    }
    Ok(())
}

/// The bounds of a list of `(op name, µs)` at `place`.
fn op_times(place: &str, ops: &[(String, f64)]) -> Result<(), String> {
    length(ops.len(), MAX_OPS, "op totals").map_err(|problem| at(place, problem))?;
    for (j, (name, us)) in ops.iter().enumerate() {
        string(name).map_err(|problem| at(format_args!("{place}[{j}]"), problem))?;
        time(*us).map_err(|problem| at(format_args!("{place}[{j}]"), problem))?;
    }
    Ok(())
}
