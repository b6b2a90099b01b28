//! The op tables of a profile: ops by name, by category, by unique
//! arguments (with their kernels, step times and perf model), and the
//! per-step breakdown — all from the op invocations that own GPU work.

use std::collections::BTreeMap;

use crate::analysis::gpu_work::{GpuWork, Invocations};
use crate::analysis::ops::args::{arg_syms, python_repr};
use crate::analysis::ops::category::{self, Category};
use crate::analysis::ops::slots::Slots;
use crate::analysis::ops::stats::Stats;
use crate::analysis::perf_model::{self, OpShape};
use crate::analysis::profile::{
    CategorySummary, KernelDetail, OpModel, OpSummary, StepProfile, UniqueArgs,
};
use crate::analysis::timeline::{Breakdown, Bucket, Interval};
use crate::trace::link::{NONE, Tree};
use crate::trace::{FxHashMap, Sym, Trace};

/// The category of an op invocation: by name, else by its kernels.
fn op_category(trace: &Trace, gpu: &GpuWork, op: u32, work: &[u32]) -> Category {
    let kernels = work
        .iter()
        .map(|&w| trace.name(&trace.events[gpu.items[w as usize].event as usize]));
    category::of_op_and_kernels(trace.name(&trace.events[op as usize]), kernels, gpu.comm)
}

/// Ops that launched GPU work, by name, most GPU time first.
pub(super) fn ops_by_name(
    trace: &Trace,
    gpu: &GpuWork,
    invocations: &Invocations,
) -> Vec<OpSummary> {
    let mut by_name: BTreeMap<&str, OpSummary> = BTreeMap::new();
    for (position, (op, work)) in invocations.direct.iter().enumerate() {
        let name = trace.name(&trace.events[*op as usize]);
        let category = op_category(trace, gpu, *op, work);
        let entry = by_name.entry(name).or_insert_with(|| OpSummary {
            name: name.to_string(),
            total_direct_kernel_time_us: 0.0,
            total_subtree_kernel_time_us: 0.0,
            count: 0,
            categories: Vec::new(),
        });
        entry.total_direct_kernel_time_us += invocations.direct_us(gpu, position);
        entry.total_subtree_kernel_time_us += invocations.subtree_us(gpu, *op);
        entry.count += 1;
        if !entry.categories.contains(&category) {
            entry.categories.push(category);
        }
    }
    let mut ops: Vec<OpSummary> = by_name.into_values().collect();
    ops.sort_by(|a, b| {
        b.total_direct_kernel_time_us
            .total_cmp(&a.total_direct_kernel_time_us)
    });
    ops
}

/// GPU time by op category, most first.
pub(super) fn categories(
    trace: &Trace,
    gpu: &GpuWork,
    invocations: &Invocations,
) -> Vec<CategorySummary> {
    let mut by_category: BTreeMap<Category, CategorySummary> = BTreeMap::new();
    for (position, (op, work)) in invocations.direct.iter().enumerate() {
        let category = op_category(trace, gpu, *op, work);
        let entry = by_category.entry(category).or_insert(CategorySummary {
            category,
            count: 0,
            total_direct_kernel_time_us: 0.0,
        });
        entry.count += 1;
        entry.total_direct_kernel_time_us += invocations.direct_us(gpu, position);
    }
    let mut categories: Vec<CategorySummary> = by_category.into_values().collect();
    categories.sort_by(|a, b| {
        b.total_direct_kernel_time_us
            .total_cmp(&a.total_direct_kernel_time_us)
    });
    categories
}

/// One entry per `ProfilerStep#N`: its host duration, GPU timeline and kernel time.
pub(super) fn steps(
    trace: &Trace,
    tree: &Tree,
    gpu: &GpuWork,
    invocations: &Invocations,
) -> Vec<StepProfile> {
    let mut work_by_step: Vec<Vec<(Bucket, Interval)>> = vec![Vec::new(); tree.steps.len()];
    for work in gpu.linked() {
        let step = tree.step(trace, work.event);
        if step != NONE {
            work_by_step[step as usize].push((work.bucket, work.interval));
        }
    }
    let mut kernel_time = vec![0.0; tree.steps.len()];
    for (position, (op, _)) in invocations.direct.iter().enumerate() {
        let step = tree.step(trace, *op);
        if step != NONE {
            kernel_time[step as usize] += invocations.direct_us(gpu, position);
        }
    }
    tree.steps
        .iter()
        .zip(work_by_step)
        .zip(kernel_time)
        .map(|((step, work), kernel_time_us)| StepProfile {
            number: step.number,
            host_duration_us: step.end - step.ts,
            timeline: Breakdown::compute(work),
            kernel_time_us,
        })
        .collect()
}

/// The unique-args key of an op event, with each list as its Python tuple.
#[derive(Clone, PartialEq, Eq, Hash)]
pub(super) struct ArgsKey {
    /// Op name.
    pub(super) name: String,
    /// `Input Dims`.
    pub(super) input_dims: String,
    /// `Input type`.
    pub(super) input_type: String,
    /// `Input Strides`.
    pub(super) input_strides: String,
    /// `Concrete Inputs`.
    pub(super) concrete_inputs: String,
    /// `process_name` of the op's pid.
    pub(super) process_name: String,
    /// `process_labels` of the op's pid.
    pub(super) process_label: String,
    /// `thread_name` of the op's thread.
    pub(super) thread_name: String,
}

/// What makes two op events share an [`ArgsKey`] without building it: the
/// op name, track and argument strings (interned symbols).
pub(super) type ArgsSyms = (Sym, u32, [Option<Sym>; 4]);

/// The [`ArgsSyms`] of the op event `op`.
pub(super) fn args_syms(trace: &Trace, op: u32) -> ArgsSyms {
    let event = &trace.events[op as usize];
    (event.name, event.track, arg_syms(trace, op))
}

/// The unique-args key of the op event `op`; `reprs` caches the tuple of
/// each argument string.
pub(super) fn args_key(trace: &Trace, op: u32, reprs: &mut FxHashMap<u32, String>) -> ArgsKey {
    let event = &trace.events[op as usize];
    let mut text = |sym: Option<Sym>| match sym {
        Some(sym) => reprs
            .entry(sym.0)
            .or_insert_with(|| python_repr(trace.strings.get(sym)))
            .clone(),
        None => String::new(),
    };
    let args = trace.op_args(event).copied().unwrap_or_default();
    let input_dims = text(args.input_dims);
    let input_type = text(args.input_type);
    let input_strides = text(args.input_strides);
    let concrete_inputs = text(args.concrete_inputs);
    let track = trace.tracks[event.track as usize];
    let label = |sym: Option<&Sym>| sym.map(|s| trace.strings.get(*s).to_string());
    ArgsKey {
        name: trace.name(event).to_string(),
        input_dims,
        input_type,
        input_strides,
        concrete_inputs,
        process_name: label(trace.track_names.process.get(&track.pid)).unwrap_or_else(unknown),
        process_label: label(trace.track_names.process_label.get(&track.pid))
            .unwrap_or_else(unknown),
        thread_name: label(trace.track_names.thread.get(&track)).unwrap_or_else(unknown),
    }
}

fn unknown() -> String {
    "Unknown".to_string()
}

/// Ops by unique arguments (TraceLens's unique-args table), most GPU time first.
pub(super) fn unique_args(
    trace: &Trace,
    tree: &Tree,
    gpu: &GpuWork,
    invocations: &Invocations,
) -> Vec<UniqueArgs> {
    struct Group {
        key: ArgsKey,
        /// (position in invocations.direct, direct µs, subtree µs)
        ops: Vec<(usize, f64, f64)>,
        work: Vec<u32>,
    }
    let mut reprs = FxHashMap::default();
    let mut slots: Slots<ArgsSyms, ArgsKey> = Slots::default();
    let mut groups: Vec<Group> = Vec::new();
    for (position, (op, work)) in invocations.direct.iter().enumerate() {
        let (slot, opened) = slots.slot(args_syms(trace, *op), groups.len(), || {
            args_key(trace, *op, &mut reprs)
        });
        if let Some(key) = opened {
            groups.push(Group {
                key,
                ops: Vec::new(),
                work: Vec::new(),
            });
        }
        let group = &mut groups[slot];
        group.ops.push((
            position,
            invocations.direct_us(gpu, position),
            invocations.subtree_us(gpu, *op),
        ));
        group.work.extend_from_slice(work);
    }
    let mut rows: Vec<UniqueArgs> = groups
        .into_iter()
        .map(|group| {
            let key = group.key;
            let direct: Vec<f64> = group.ops.iter().map(|o| o.1).collect();
            let subtree: Vec<f64> = group.ops.iter().map(|o| o.2).collect();
            let (example_op, example_work) = &invocations.direct[group.ops[0].0];
            let category = op_category(trace, gpu, *example_op, example_work);
            let kernel_sequence = example_work
                .iter()
                .map(|&w| {
                    trace
                        .name(&trace.events[gpu.items[w as usize].event as usize])
                        .to_string()
                })
                .collect();
            UniqueArgs {
                name: key.name,
                category,
                process_name: key.process_name,
                process_label: key.process_label,
                thread_name: key.thread_name,
                input_dims: key.input_dims,
                input_type: key.input_type,
                input_strides: key.input_strides,
                concrete_inputs: key.concrete_inputs,
                direct: Stats::of(&direct),
                subtree: Stats::of(&subtree),
                example_event: trace.events[*example_op as usize].index,
                module_path: tree.module_path(trace, *example_op),
                kernels: kernel_details(trace, gpu, &group.work),
                kernel_sequence,
                samples_us: direct,
                step_us: step_sums(
                    trace,
                    tree,
                    group
                        .ops
                        .iter()
                        .map(|&(position, us, _)| (invocations.direct[position].0, us)),
                ),
                model: op_model(trace, *example_op),
                graph: None,
            }
        })
        .collect();
    rows.sort_by(|a, b| {
        b.direct
            .sum
            .total_cmp(&a.direct.sum)
            .then(a.example_event.cmp(&b.example_event))
    });
    rows
}

/// Sums per profiler step of (op event, µs) pairs, by step number.
pub(super) fn step_sums(
    trace: &Trace,
    tree: &Tree,
    ops: impl Iterator<Item = (u32, f64)>,
) -> Vec<(u64, f64)> {
    let mut by_step: BTreeMap<u64, f64> = BTreeMap::new();
    for (op, us) in ops {
        let step = tree.step(trace, op);
        if step != NONE {
            *by_step.entry(tree.steps[step as usize].number).or_default() += us;
        }
    }
    by_step.into_iter().collect()
}

/// The perf model of one op invocation, when one covers it.
pub(super) fn op_model(trace: &Trace, op: u32) -> Option<OpModel> {
    let event = &trace.events[op as usize];
    let model = perf_model::model(&OpShape::of_event(trace, event)).ok()?;
    Some(OpModel {
        family: model.family.sheet().to_string(),
        flops: model.flops,
        bytes: model.bytes,
        compute_spec: model.compute_spec,
    })
}

/// The kernels of a unique-args row, by (name, stream) in first-launch order.
pub(super) fn kernel_details(trace: &Trace, gpu: &GpuWork, work: &[u32]) -> Vec<KernelDetail> {
    let mut order: Vec<(String, Option<i64>)> = Vec::new();
    let mut durations: BTreeMap<(String, Option<i64>), Vec<f64>> = BTreeMap::new();
    for &w in work {
        let item = &gpu.items[w as usize];
        let event = &trace.events[item.event as usize];
        let key = (trace.name(event).to_string(), item.stream);
        let entry = durations.entry(key.clone()).or_default();
        if entry.is_empty() {
            order.push(key);
        }
        entry.push(event.dur);
    }
    order
        .into_iter()
        .map(|key| {
            let launches_us = durations.remove(&key).unwrap_or_default();
            KernelDetail {
                duration: Stats::of(&launches_us),
                name: key.0,
                stream: key.1,
                launches_us,
            }
        })
        .collect()
}
