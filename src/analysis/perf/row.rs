//! One perf row from a group of invocations: each invocation measured and
//! modelled, the grouping key, per-position kernel statistics, and the
//! ranking of a table by kernel time.

use serde::Serialize;

use std::rc::Rc;

use super::agg::{Agg, pairwise_sum};
use super::memo::{Memo, ModelKey, SharedModel};
use super::op_tree::OpTree;
use crate::analysis::hardware::ComputeSpec;
use crate::analysis::ops::category::{self, Category};
use crate::analysis::ops::stats::{median, percent};
use crate::analysis::perf_model::{Family, NoModel, OpShape, PerfModel};
use crate::analysis::timeline::{Interval, IntervalSet};
use crate::trace::{Sym, Trace};

/// Statistics of one kernel position across a row's invocations (numpy
/// semantics: pairwise sum, population standard deviation).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KernelStats {
    /// Kernel name.
    pub name: String,
    /// Stream.
    pub stream: Option<i64>,
    /// Invocations contributing.
    pub count: u64,
    /// Total duration, µs (raw `dur`).
    pub total_us: f64,
    /// Mean, µs.
    pub mean_us: f64,
    /// Median, µs.
    pub median_us: f64,
    /// Population standard deviation, µs.
    pub std_us: f64,
    /// Smallest, µs.
    pub min_us: f64,
    /// Largest, µs.
    pub max_us: f64,
}

/// One row: an op with one argument set (unified table), or an op with one
/// set of model parameters (family sheet).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PerfRow {
    /// Op name.
    pub name: String,
    /// Op category.
    pub category: Category,
    /// `process_name` of the op's pid.
    pub process_name: String,
    /// `process_labels` of the op's pid.
    pub process_label: String,
    /// `thread_name` of the op's thread.
    pub thread_name: String,
    /// `Input Dims` as a Python tuple (`None` when not recorded).
    pub input_dims: Option<String>,
    /// `Input type` as a Python tuple.
    pub input_type: Option<String>,
    /// `Input Strides` as a Python tuple.
    pub input_strides: Option<String>,
    /// `Concrete Inputs` as a Python tuple.
    pub concrete_inputs: Option<String>,
    /// Position in `traceEvents` of the first invocation (TraceLens's `ex_UID`).
    pub example_event: u32,
    /// Invocations.
    pub count: u64,
    /// Whether FLOPs and bytes were modelled.
    pub has_perf_model: bool,
    /// For a backward op modelled from its forward op's arguments: the forward op's name.
    pub backward_of: Option<String>,
    /// The model family.
    pub family: Option<Family>,
    /// GFLOPs per invocation.
    pub gflops: Option<f64>,
    /// Data moved per invocation, MiB (TraceLens's "MB").
    pub data_moved_mb: Option<f64>,
    /// FLOPs per byte.
    pub flops_per_byte: Option<f64>,
    /// The roofline peak the op runs at.
    pub compute_spec: Option<ComputeSpec>,
    /// Model parameters, name then Python-repr value.
    pub params: Vec<(String, String)>,
    /// Why there is no model (unmodelled op, or unreadable arguments).
    pub no_model: Option<String>,
    /// Host (CPU op) duration per invocation, µs.
    pub duration_us: Agg,
    /// Kernel busy time per invocation, µs.
    pub kernel_time_us: Agg,
    /// Achieved TFLOP/s per invocation (invocations with kernel time).
    pub tflops_per_s: Option<Agg>,
    /// Achieved TB/s per invocation (invocations with kernel time).
    pub tb_per_s: Option<Agg>,
    /// Per-position kernel statistics (kernels of each invocation ordered by duration).
    pub kernels: Vec<KernelStats>,
    /// Share of the table's kernel time, %.
    pub percentage: f64,
    /// Running total of `percentage`, %.
    pub cumulative_percentage: f64,
    /// The first invocation's raw argument JSON (`Input Dims`, `Input type`,
    /// `Input Strides`, `Concrete Inputs`), for list-style CSV cells.
    #[serde(skip)]
    pub raw_args: [Option<String>; 4],
}

/// One measured invocation.
pub(super) struct Invocation {
    /// The op event.
    pub(super) op: u32,
    /// What its model depends on (its own arguments, or its forward op's).
    pub(super) model_key: ModelKey,
    /// Its model (or its forward op's backward model), shared with every
    /// invocation of the same key.
    model: SharedModel,
    /// The forward op's name, for a backward op modelled from it.
    backward_of: Option<String>,
    /// Busy time of its GPU work, µs.
    kernel_us: f64,
    /// (kernel name, raw dur, stream), ordered by duration.
    kernels: Vec<(Sym, f64, Option<i64>)>,
}

/// Measures and models the invocation `op` (from `forward`'s arguments for
/// a backward op).
pub(super) fn invocation(
    trace: &Trace,
    ops: &OpTree,
    memo: &mut Memo,
    op: u32,
    forward: Option<u32>,
) -> Invocation {
    let (model_op, backward) = match forward {
        Some(f) => (f, true),
        None => (op, false),
    };
    let model = memo.model(trace, model_op, backward);
    let gpu = ops.gpu(op);
    let kernel_us = IntervalSet::from_intervals(
        gpu.iter()
            .map(|&g| {
                let e = &trace.events[g as usize];
                Interval {
                    start: e.ts,
                    end: e.end(),
                }
            })
            .collect(),
    )
    .len();
    let mut kernels: Vec<(Sym, f64, Option<i64>)> = gpu
        .iter()
        .map(|&g| {
            let e = &trace.events[g as usize];
            let stream = trace.gpu_args(e).and_then(|a| a.stream);
            (e.name, e.dur, stream)
        })
        .collect();
    kernels.sort_by(|a, b| a.1.total_cmp(&b.1));
    Invocation {
        op,
        model_key: memo.model_key(trace, model_op, backward),
        model,
        backward_of: forward.map(|f| trace.name(&trace.events[f as usize]).to_string()),
        kernel_us,
        kernels,
    }
}

impl Invocation {
    /// Its model, or why there is none.
    pub(super) fn model(&self) -> Result<&PerfModel, &NoModel> {
        (*self.model).as_ref()
    }
}

/// The grouping key and first-invocation columns of an op (argument tuples
/// shared with the [`Memo`], not copied per invocation).
#[derive(Clone, PartialEq, Eq, Hash)]
pub(super) struct OpKey {
    /// Op name.
    pub(super) name: String,
    category: Category,
    process_name: String,
    process_label: String,
    thread_name: String,
    args: [Option<Rc<str>>; 4],
    /// The step annotation an attention op's model reads.
    annotation: Option<Sym>,
}

/// What makes two invocations share an [`OpKey`] without building it: the
/// op name, category, track, argument strings (interned symbols) and the
/// step annotation an attention op's model reads.
pub(super) type OpSyms = (Sym, Category, u32, [Option<Sym>; 4], Option<Sym>);

/// The category of an op: by name, else by its kernels when they all agree
/// (as the ops tables do).
fn op_category(trace: &Trace, ops: &OpTree, op: u32) -> Category {
    category::of_op_and_kernels(
        trace.name(&trace.events[op as usize]),
        ops.gpu(op)
            .iter()
            .map(|&g| trace.name(&trace.events[g as usize])),
        ops.comm,
    )
}

/// The [`OpSyms`] of an op.
pub(super) fn op_syms(trace: &Trace, ops: &OpTree, memo: &Memo, op: u32) -> OpSyms {
    let event = &trace.events[op as usize];
    let (_, args, _, annotation) = memo.model_key(trace, op, false);
    (
        event.name,
        op_category(trace, ops, op),
        event.track,
        args,
        annotation,
    )
}

/// The grouping key of an op.
pub(super) fn op_key(trace: &Trace, ops: &OpTree, memo: &mut Memo, op: u32) -> OpKey {
    let event = &trace.events[op as usize];
    let (_, args, _, annotation) = memo.model_key(trace, op, false);
    let track = trace.tracks[event.track as usize];
    let label = |sym: Option<&Sym>| {
        sym.map_or_else(
            || "Unknown".to_string(),
            |s| trace.strings.get(*s).to_string(),
        )
    };
    OpKey {
        name: trace.name(event).to_string(),
        category: op_category(trace, ops, op),
        process_name: label(trace.track_names.process.get(&track.pid)),
        process_label: label(trace.track_names.process_label.get(&track.pid)),
        thread_name: label(trace.track_names.thread.get(&track)),
        args: args.map(|sym| memo.repr(trace, sym)),
        annotation,
    }
}

/// An op's raw argument JSON (`Input Dims`, `Input type`, `Input Strides`,
/// `Concrete Inputs`), for a row's first invocation.
pub(super) fn raw_args(trace: &Trace, op: u32) -> [Option<String>; 4] {
    let shape = OpShape::of_event(trace, &trace.events[op as usize]);
    [
        shape.input_dims,
        shape.input_type,
        shape.input_strides,
        shape.concrete_inputs,
    ]
    .map(|raw| raw.map(str::to_string))
}

/// Per-position kernel statistics: the first invocation with kernels is the
/// template; invocations with a different kernel count are left out.
fn kernel_stats(trace: &Trace, invocations: &[&Invocation]) -> Vec<KernelStats> {
    let lists: Vec<&[(Sym, f64, Option<i64>)]> =
        invocations.iter().map(|i| i.kernels.as_slice()).collect();
    position_stats(trace, &lists)
}

/// Per-position kernel statistics of invocations given as their kernel
/// lists ((name, raw dur, stream), ordered by duration): the first
/// non-empty list is the template; lists of another length are left out.
pub(super) fn position_stats(
    trace: &Trace,
    lists: &[&[(Sym, f64, Option<i64>)]],
) -> Vec<KernelStats> {
    let Some(template) = lists.iter().find(|k| !k.is_empty()) else {
        return Vec::new();
    };
    let width = template.len();
    let matching: Vec<&&[(Sym, f64, Option<i64>)]> =
        lists.iter().filter(|k| k.len() == width).collect();
    (0..width)
        .map(|position| {
            let durations: Vec<f64> = matching.iter().map(|k| k[position].1).collect();
            let n = durations.len() as f64;
            let total = pairwise_sum(&durations);
            let mean = total / n;
            let squares: Vec<f64> = durations.iter().map(|d| (d - mean) * (d - mean)).collect();
            let (name, _, stream) = &template[position];
            KernelStats {
                name: trace.strings.get(*name).to_string(),
                stream: *stream,
                count: durations.len() as u64,
                total_us: total,
                mean_us: mean,
                median_us: median(&durations).expect("the template's invocation"),
                std_us: (pairwise_sum(&squares) / n).sqrt(),
                min_us: durations.iter().copied().fold(f64::INFINITY, f64::min),
                max_us: durations.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            }
        })
        .collect()
}

/// Builds one row from a group of invocations with the same key.
pub(super) fn build_row(
    trace: &Trace,
    key: &OpKey,
    raw: &[Option<String>; 4],
    group: &[&Invocation],
) -> PerfRow {
    let first = group[0];
    let first_event = &trace.events[first.op as usize];
    let model = first.model().ok();
    let kernel_us: Vec<f64> = group.iter().map(|i| i.kernel_us).collect();
    let rate = |per_invocation: &dyn Fn(&PerfModel, f64) -> f64| -> Option<Agg> {
        model?;
        Agg::of(group.iter().filter_map(|i| {
            let m = i.model().ok()?;
            Some(if i.kernel_us > 0.0 {
                per_invocation(m, i.kernel_us)
            } else {
                f64::NAN
            })
        }))
    };
    let tflops = rate(&|m, us| (m.flops / 1e9 / 1e3) / (us / 1e6));
    let tbps = rate(&|m, us| (m.bytes / 1e12) / (us / 1e6));
    PerfRow {
        name: key.name.clone(),
        category: key.category,
        process_name: key.process_name.clone(),
        process_label: key.process_label.clone(),
        thread_name: key.thread_name.clone(),
        input_dims: key.args[0].as_deref().map(str::to_string),
        input_type: key.args[1].as_deref().map(str::to_string),
        input_strides: key.args[2].as_deref().map(str::to_string),
        concrete_inputs: key.args[3].as_deref().map(str::to_string),
        example_event: first_event.index,
        count: group.len() as u64,
        has_perf_model: model.is_some(),
        backward_of: first.backward_of.clone(),
        family: model.map(|m| m.family),
        gflops: model.map(|m| m.flops / 1e9),
        data_moved_mb: model.map(|m| m.bytes / (1024.0 * 1024.0)),
        flops_per_byte: model
            .and_then(|m| (m.bytes > 0.0).then(|| (m.flops / 1e9) * 1e9 / m.bytes)),
        compute_spec: model.and_then(|m| m.compute_spec),
        params: model.map(|m| m.params.clone()).unwrap_or_default(),
        no_model: first.model().err().map(ToString::to_string),
        duration_us: Agg::of(group.iter().map(|i| trace.events[i.op as usize].dur))
            .unwrap_or_default(),
        kernel_time_us: Agg::of(kernel_us).unwrap_or_default(),
        tflops_per_s: tflops,
        tb_per_s: tbps,
        kernels: kernel_stats(trace, group),
        percentage: 0.0,
        cumulative_percentage: 0.0,
        raw_args: raw.clone(),
    }
}

/// Sorts rows by kernel time (most first, then earliest example) and fills
/// in the percentages.
pub(super) fn rank(rows: &mut [PerfRow]) {
    rows.sort_by(|a, b| {
        b.kernel_time_us
            .sum
            .total_cmp(&a.kernel_time_us.sum)
            .then(a.example_event.cmp(&b.example_event))
    });
    let sums: Vec<f64> = rows.iter().map(|r| r.kernel_time_us.sum).collect();
    let total = pairwise_sum(&sums);
    let mut cumulative = 0.0;
    for row in rows.iter_mut() {
        row.percentage = percent(row.kernel_time_us.sum, total);
        cumulative += row.percentage;
        row.cumulative_percentage = cumulative;
    }
}

/// A row under construction: its key, the first invocation's raw
/// arguments, and the invocations.
pub(super) type Group<'a> = (OpKey, [Option<String>; 4], Vec<&'a Invocation>);
