//! Perf rows for graph-replayed GPU work, as TraceLens's inference report
//! makes synthetic op rows: each call of a captured op (the topmost op with
//! a perf model above the captured launch, as the tree walk of the
//! [module docs](super) would pick it in an eager trace) becomes one
//! invocation, with that op's name, arguments and perf model; the step
//! annotation around the graph launch gives attention its context lengths.
//! Work no captured op owns gets a row per kernel name, unmodelled. A call
//! split into a pseudo op (MoE projections) takes the pseudo op's name and
//! model, with the op's arguments.

use std::collections::HashMap;

use super::agg::Agg;
use super::row::{KernelStats, PerfRow, position_stats};
use crate::analysis::comm::CommKernels;
use crate::analysis::gpu_work::GpuWork;
use crate::analysis::ops::args::python_repr;
use crate::analysis::ops::category;
use crate::analysis::perf_model::{self, NoModel, OpContext, OpShape, PerfModel};
use crate::analysis::timeline::IntervalSet;
use crate::trace::{Kind, Sym, Trace};

/// An op of one of the capture traces given.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(in crate::analysis) struct CapturedOp {
    /// Which capture trace (an index into those given).
    pub(in crate::analysis) capture: u32,
    /// The op event in it.
    pub(in crate::analysis) op: u32,
}

/// One execution of a captured op (or of one unowned work item) in a replay.
#[derive(Clone, Debug, PartialEq)]
pub(in crate::analysis) struct ReplayedCall {
    /// The op of a capture trace the work belongs to (`None`: no op known).
    pub(in crate::analysis) op: Option<CapturedOp>,
    /// The graph launch that replayed it.
    pub(in crate::analysis) launch: u32,
    /// Its work items (indices into the GPU work).
    pub(in crate::analysis) work: Vec<u32>,
    /// The kernel-name sequence of the call, so that an op running other
    /// kernels in some layers makes a row per sequence.
    pub(in crate::analysis) variant: String,
    /// The TraceLens pseudo op the work forms inside `op` (a MoE
    /// projection), if any: the row's name and perf model.
    pub(in crate::analysis) pseudo: Option<&'static str>,
    /// The top-k of the MoE routing under `op`, for its pseudo ops.
    pub(in crate::analysis) topk: Option<u64>,
}

/// The iteration annotations of a trace that carry sequence statistics,
/// as (start, end, name), for the context of replayed attention.
fn step_annotations(trace: &Trace) -> Vec<(f64, f64, &str)> {
    trace
        .events
        .iter()
        .filter(|e| e.kind == Kind::UserAnnotation)
        .map(|e| (e.ts, e.end(), trace.name(e)))
        .filter(|(_, _, name)| perf_model::chunk_stats(name).is_some())
        .collect()
}

/// A row being built: the first call's identity and every call.
struct Group<'c> {
    op: Option<CapturedOp>,
    pseudo: Option<&'static str>,
    topk: Option<u64>,
    annotation: Option<&'c str>,
    calls: Vec<&'c ReplayedCall>,
}

/// The perf rows of replayed calls (unranked), `captures` the traces the
/// calls' ops belong to.
pub(in crate::analysis) fn replayed_rows<'c>(
    trace: &'c Trace,
    gpu: &GpuWork,
    captures: &[&Trace],
    calls: &'c [ReplayedCall],
    comm: &CommKernels,
) -> Vec<PerfRow> {
    let annotations = step_annotations(trace);
    let annotation_at = |launch: u32| -> Option<&'c str> {
        let ts = trace.events[launch as usize].ts;
        annotations
            .iter()
            .find(|(start, end, _)| *start <= ts && ts <= *end)
            .map(|(_, _, name)| *name)
    };
    type Key = (
        Option<(u32, Sym, [Option<Sym>; 4])>,
        Option<&'static str>,
        Option<Sym>,
        String,
        Option<String>,
    );
    let mut index: HashMap<Key, usize> = HashMap::new();
    let mut groups: Vec<Group> = Vec::new();
    for call in calls {
        let annotation = annotation_at(call.launch);
        let who = call
            .op
            .and_then(|o| Some((o, *captures.get(o.capture as usize)?)))
            .map(|(o, capture)| {
                (
                    o.capture,
                    capture.events[o.op as usize].name,
                    crate::analysis::ops::args::arg_syms(capture, o.op),
                )
            });
        let kernel = match who {
            Some(_) => None,
            None => Some(trace.events[gpu.items[call.work[0] as usize].event as usize].name),
        };
        let key = (
            who,
            call.pseudo,
            kernel,
            call.variant.clone(),
            annotation.map(str::to_string),
        );
        let slot = *index.entry(key).or_insert_with(|| {
            groups.push(Group {
                op: call.op.filter(|_| who.is_some()),
                pseudo: call.pseudo,
                topk: call.topk,
                annotation,
                calls: Vec::new(),
            });
            groups.len() - 1
        });
        groups[slot].calls.push(call);
    }
    groups
        .iter()
        .map(|group| build(trace, gpu, captures, group, comm))
        .collect()
}

/// One row from a group of calls.
fn build(
    trace: &Trace,
    gpu: &GpuWork,
    captures: &[&Trace],
    group: &Group,
    comm: &CommKernels,
) -> PerfRow {
    let first = group.calls[0];
    let kernels: Vec<Vec<(Sym, f64, Option<i64>)>> = group
        .calls
        .iter()
        .map(|call| {
            let mut list: Vec<(Sym, f64, Option<i64>)> = call
                .work
                .iter()
                .map(|&w| {
                    let item = &gpu.items[w as usize];
                    let event = &trace.events[item.event as usize];
                    (event.name, event.dur, item.stream)
                })
                .collect();
            list.sort_by(|a, b| a.1.total_cmp(&b.1));
            list
        })
        .collect();
    let kernel_us: Vec<f64> = group
        .calls
        .iter()
        .map(|call| {
            IntervalSet::from_intervals(
                call.work
                    .iter()
                    .map(|&w| gpu.items[w as usize].interval)
                    .collect(),
            )
            .len()
        })
        .collect();
    let first_kernel = &trace.events[gpu.items[first.work[0] as usize].event as usize];
    let op = group.op.map(|o| (o.op, captures[o.capture as usize]));
    let (name, raw, model): (String, [Option<String>; 4], Result<PerfModel, NoModel>) = match op {
        Some((op, capture)) => {
            let mut shape = OpShape::of_event(capture, &capture.events[op as usize]);
            if let Some(pseudo) = group.pseudo {
                shape.name = pseudo;
            }
            let context = OpContext {
                annotation: group.annotation,
                kernel: Some(trace.name(first_kernel)),
                topk: group.topk,
            };
            (
                shape.name.to_string(),
                [
                    shape.input_dims,
                    shape.input_type,
                    shape.input_strides,
                    shape.concrete_inputs,
                ]
                .map(|raw| raw.map(str::to_string)),
                perf_model::model_in(&shape, &context),
            )
        }
        None => {
            let name = trace.name(first_kernel).to_string();
            let reason = NoModel::UnknownOp { name: name.clone() };
            (name, [None, None, None, None], Err(reason))
        }
    };
    let category = match op {
        Some(_) => category::of_op_and_kernels(
            &name,
            kernels[0].iter().map(|(k, _, _)| trace.strings.get(*k)),
            comm,
        ),
        None => category::of_kernel(&name, comm),
    };
    let modelled = model.as_ref().ok();
    let rate = |per_call: &dyn Fn(&PerfModel, f64) -> f64| -> Option<Agg> {
        let m = modelled?;
        Agg::of(
            kernel_us
                .iter()
                .map(|&us| if us > 0.0 { per_call(m, us) } else { f64::NAN }),
        )
    };
    let launch = &trace.events[first.launch as usize];
    let track = trace.tracks[launch.track as usize];
    let label = |sym: Option<&Sym>| {
        sym.map_or_else(
            || "Unknown".to_string(),
            |s| trace.strings.get(*s).to_string(),
        )
    };
    let lists: Vec<&[(Sym, f64, Option<i64>)]> = kernels.iter().map(Vec::as_slice).collect();
    let stats: Vec<KernelStats> = position_stats(trace, &lists);
    PerfRow {
        name,
        category,
        process_name: label(trace.track_names.process.get(&track.pid)),
        process_label: label(trace.track_names.process_label.get(&track.pid)),
        thread_name: label(trace.track_names.thread.get(&track)),
        input_dims: raw[0].as_deref().map(python_repr),
        input_type: raw[1].as_deref().map(python_repr),
        input_strides: raw[2].as_deref().map(python_repr),
        concrete_inputs: raw[3].as_deref().map(python_repr),
        example_event: first_kernel.index,
        count: group.calls.len() as u64,
        has_perf_model: modelled.is_some(),
        backward_of: None,
        family: modelled.map(|m| m.family),
        gflops: modelled.map(|m| m.flops / 1e9),
        data_moved_mb: modelled.map(|m| m.bytes / (1024.0 * 1024.0)),
        flops_per_byte: modelled
            .and_then(|m| (m.bytes > 0.0).then(|| (m.flops / 1e9) * 1e9 / m.bytes)),
        compute_spec: modelled.and_then(|m| m.compute_spec),
        params: modelled.map(|m| m.params.clone()).unwrap_or_default(),
        no_model: model.as_ref().err().map(ToString::to_string),
        duration_us: Agg::of(
            group
                .calls
                .iter()
                .map(|c| trace.events[c.launch as usize].dur),
        )
        .unwrap_or_default(),
        kernel_time_us: Agg::of(kernel_us.iter().copied()).unwrap_or_default(),
        tflops_per_s: rate(&|m, us| (m.flops / 1e9 / 1e3) / (us / 1e6)),
        tb_per_s: rate(&|m, us| (m.bytes / 1e12) / (us / 1e6)),
        kernels: stats,
        percentage: 0.0,
        cumulative_percentage: 0.0,
        raw_args: raw,
    }
}
