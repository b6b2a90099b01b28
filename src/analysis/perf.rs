//! The per-op perf table: TraceLens's `unified_perf_summary` and its
//! per-family sheets (`GEMM`, `SDPA_fwd`, …), built from a linked trace.
//!
//! Which invocations get a row (TraceLens's traversal, from each root CPU op
//! down, skipping subtrees with no linked GPU work):
//! 1. an op with a perf model is a row, with its whole subtree's kernel time,
//!    and nothing below it is listed again (`aten::layer_norm` rather than
//!    the `aten::native_layer_norm` it calls);
//! 2. the one main op of an autograd backward node whose forward op has a
//!    backward model (`ConvolutionBackward0` under
//!    `autograd::engine::evaluate_function: ConvolutionBackward0`) is a row
//!    modelled from the forward op's arguments;
//! 3. a kernel launcher is a row (unmodelled unless rule 1 applied) — unless
//!    one of its direct child ops has a perf model and GPU work, in which
//!    case those children are visited instead;
//! 4. anything else is looked through.
//!
//! Invocations are grouped by (name, category, process, thread, Input Dims,
//! Input type, Input Strides, Concrete Inputs); kernel time is the busy time
//! (interval union) of the linked GPU work in the op's subtree.
//! Composite wrappers (`aten::linear`, `aten::softmax`, …, see
//! [`perf_model::is_composite`]) are looked through so rows keep TraceLens's
//! keys. Deliberate differences from TraceLens: docs/PERF_MODELS.md.

use serde::Serialize;

use crate::analysis::hardware::ComputeSpec;
use crate::analysis::ops::args::python_repr;
use crate::analysis::ops::category::{self, Category};
use crate::analysis::ops::stats::percent;
use crate::analysis::perf_model::{self, Family, NoModel, OpShape, PerfModel};
use crate::analysis::timeline::{Interval, IntervalSet};
use crate::trace::link::{NONE, Tree};
use crate::trace::{FxHashMap, Kind, Sym, Trace};

/// The unified table and the family sheets of one trace.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PerfReport {
    /// One row per op and argument set, most kernel time first
    /// (TraceLens's `unified_perf_summary`).
    pub rows: Vec<PerfRow>,
    /// Every invocation of a modelled op (nested or CPU-only ones included),
    /// grouped by family, name and model parameters (TraceLens's `GEMM`,
    /// `SDPA_fwd`, … sheets), each family most kernel time first.
    pub sheets: Vec<PerfRow>,
}

/// Statistics over invocations (pandas semantics: Kahan sum, mean = sum/n,
/// sample standard deviation by Welford, absent for a single sample).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Agg {
    /// Number of samples.
    pub count: u64,
    /// Sum.
    pub sum: f64,
    /// Mean.
    pub mean: f64,
    /// Median.
    pub median: f64,
    /// Sample standard deviation (n − 1); `None` with fewer than two samples.
    pub std: Option<f64>,
    /// Smallest.
    pub min: f64,
    /// Largest.
    pub max: f64,
}

impl Agg {
    /// Statistics of the finite samples; `None` when there are none.
    pub fn of(samples: impl IntoIterator<Item = f64>) -> Option<Agg> {
        let values: Vec<f64> = samples.into_iter().filter(|v| v.is_finite()).collect();
        if values.is_empty() {
            return None;
        }
        let sum = kahan_sum(&values);
        let count = values.len();
        let (mut n, mut mean, mut m2) = (0.0f64, 0.0f64, 0.0f64);
        for &x in &values {
            n += 1.0;
            let old = mean;
            mean += (x - old) / n;
            m2 += (x - mean) * (x - old);
        }
        let std = (count > 1).then(|| (m2 / (n - 1.0)).sqrt());
        Some(Agg {
            count: count as u64,
            sum,
            mean: sum / count as f64,
            median: median(&values),
            std,
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        })
    }
}

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

/// An op with no perf model, summed over its rows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Unmodelled {
    /// Op name.
    pub name: String,
    /// Invocations.
    pub count: u64,
    /// Kernel time, µs.
    pub kernel_time_us: f64,
    /// The first reason given (unknown op, unreadable arguments).
    pub reason: Option<String>,
}

/// The unified perf table of a linked trace (see [`perf_report`]).
pub fn perf_rows(trace: &Trace, tree: &Tree) -> Vec<PerfRow> {
    perf_report(trace, tree).rows
}

/// The unified table and the family sheets of a linked trace.
pub fn perf_report(trace: &Trace, tree: &Tree) -> PerfReport {
    let ops = OpTree::build(trace, tree);
    let collected = ops.collect_unified(trace, tree);
    let mut memo = Memo::default();
    let rows = unified_rows(trace, &ops, &mut memo, &collected);
    let sheets = sheet_rows(trace, &ops, &mut memo, &collected);
    PerfReport { rows, sheets }
}

/// Ops without a perf model in the unified table, most kernel time first.
pub fn unmodelled(rows: &[PerfRow]) -> Vec<Unmodelled> {
    let mut by_name: Vec<Unmodelled> = Vec::new();
    for row in rows.iter().filter(|r| !r.has_perf_model) {
        match by_name.iter_mut().find(|u| u.name == row.name) {
            Some(entry) => {
                entry.count += row.count;
                entry.kernel_time_us += row.kernel_time_us.sum;
            }
            None => by_name.push(Unmodelled {
                name: row.name.clone(),
                count: row.count,
                kernel_time_us: row.kernel_time_us.sum,
                reason: row.no_model.clone(),
            }),
        }
    }
    by_name.sort_by(|a, b| b.kernel_time_us.total_cmp(&a.kernel_time_us));
    by_name
}

// ----------------------------------------------------------------------------
// The CPU-op tree and each op's GPU work.

/// CPU ops only, with their GPU work.
struct OpTree {
    /// CPU-op children of each CPU op (host events in between looked
    /// through), ordered by start.
    children: FxHashMap<u32, Vec<u32>>,
    /// CPU ops with no CPU op above them, ordered by start.
    roots: Vec<u32>,
    /// Linked GPU events anywhere below each CPU op.
    subtree: FxHashMap<u32, Vec<u32>>,
    /// CPU ops that launch GPU work themselves.
    launchers: FxHashMap<u32, bool>,
    /// The CPU op above each CPU op, or NONE.
    parent: FxHashMap<u32, u32>,
}

fn cpu_op_above(trace: &Trace, tree: &Tree, event: u32) -> u32 {
    let mut current = tree.parent[event as usize];
    while current != NONE {
        if trace.events[current as usize].kind == Kind::CpuOp {
            return current;
        }
        current = tree.parent[current as usize];
    }
    NONE
}

impl OpTree {
    fn build(trace: &Trace, tree: &Tree) -> OpTree {
        let by_start = |a: &u32, b: &u32| {
            let (ea, eb) = (&trace.events[*a as usize], &trace.events[*b as usize]);
            ea.ts.total_cmp(&eb.ts).then(a.cmp(b))
        };
        let mut children: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
        let mut parent: FxHashMap<u32, u32> = FxHashMap::default();
        let mut roots = Vec::new();
        for (index, event) in trace.events.iter().enumerate() {
            if event.kind != Kind::CpuOp {
                continue;
            }
            let index = index as u32;
            let above = cpu_op_above(trace, tree, index);
            parent.insert(index, above);
            if above == NONE {
                roots.push(index);
            } else {
                children.entry(above).or_default().push(index);
            }
        }
        roots.sort_by(by_start);
        for list in children.values_mut() {
            list.sort_by(by_start);
        }
        let mut subtree: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
        let mut launchers: FxHashMap<u32, bool> = FxHashMap::default();
        for &gpu in &tree.gpu_events {
            if !tree.is_linked(gpu) {
                continue;
            }
            let launcher = tree.launcher[gpu as usize];
            if launcher != NONE && trace.events[launcher as usize].kind == Kind::CpuOp {
                launchers.insert(launcher, true);
            }
            let mut current = tree.launch[gpu as usize];
            while current != NONE {
                if trace.events[current as usize].kind == Kind::CpuOp {
                    subtree.entry(current).or_default().push(gpu);
                }
                current = tree.parent[current as usize];
            }
        }
        OpTree {
            children,
            roots,
            subtree,
            launchers,
            parent,
        }
    }

    fn gpu(&self, op: u32) -> &[u32] {
        self.subtree.get(&op).map_or(&[], Vec::as_slice)
    }

    fn children(&self, op: u32) -> &[u32] {
        self.children.get(&op).map_or(&[], Vec::as_slice)
    }

    /// Walks the tree as TraceLens's unified table does.
    fn collect_unified(&self, trace: &Trace, tree: &Tree) -> Vec<Collected> {
        let mut out = Vec::new();
        let backward = BackwardLinks::new(trace, tree, self);
        let mut stack: Vec<u32> = self.roots.iter().rev().copied().collect();
        while let Some(op) = stack.pop() {
            if self.gpu(op).is_empty() {
                continue;
            }
            let name = trace.name(&trace.events[op as usize]);
            if stops_traversal(name) {
                out.push(Collected { op, forward: None });
                continue;
            }
            if let Some(forward) = backward.sole_backward_of(trace, self, op) {
                out.push(Collected {
                    op,
                    forward: Some(forward),
                });
                continue;
            }
            let next: Vec<u32> = if self.launchers.contains_key(&op) {
                let modelled: Vec<u32> = self
                    .children(op)
                    .iter()
                    .copied()
                    .filter(|&c| {
                        stops_traversal(trace.name(&trace.events[c as usize]))
                            && !self.gpu(c).is_empty()
                    })
                    .collect();
                if modelled.is_empty() {
                    let nccl = self.gpu(op).iter().any(|&g| {
                        trace
                            .name(&trace.events[g as usize])
                            .to_ascii_lowercase()
                            .contains("nccl")
                    });
                    if !nccl {
                        out.push(Collected { op, forward: None });
                    }
                    continue;
                }
                modelled
            } else {
                self.children(op).to_vec()
            };
            stack.extend(next.into_iter().rev());
        }
        out.sort_by(|a, b| {
            let (ea, eb) = (&trace.events[a.op as usize], &trace.events[b.op as usize]);
            ea.ts.total_cmp(&eb.ts).then(a.op.cmp(&b.op))
        });
        out
    }
}

/// Whether a modelled op ends the walk down the tree (composites are looked through).
fn stops_traversal(name: &str) -> bool {
    perf_model::has_model(name) && !perf_model::is_composite(name)
}

/// A collected invocation: the op, and for an autograd backward op the
/// forward op it is modelled from.
struct Collected {
    op: u32,
    forward: Option<u32>,
}

/// Autograd backward wrappers (`autograd::engine::evaluate_function: X`)
/// with their forward op.
struct BackwardLinks {
    forward_of: FxHashMap<u32, u32>,
}

const BACKWARD_PREFIX: &str = "autograd::engine::evaluate_function: ";

impl BackwardLinks {
    fn new(trace: &Trace, tree: &Tree, ops: &OpTree) -> BackwardLinks {
        let forward_of = tree
            .forward_of
            .iter()
            .filter(|(backward, forward)| {
                trace
                    .name(&trace.events[*backward as usize])
                    .starts_with(BACKWARD_PREFIX)
                    && ops.parent.contains_key(forward)
            })
            .copied()
            .collect();
        BackwardLinks { forward_of }
    }

    /// The forward op `op` is the sole backward of: `op` is the one op named
    /// after its autograd node (within five CPU ops above it) that has GPU
    /// work, and the forward op has a backward model.
    fn sole_backward_of(&self, trace: &Trace, ops: &OpTree, op: u32) -> Option<u32> {
        if self.forward_of.is_empty() {
            return None;
        }
        let mut current = op;
        let mut wrapper = None;
        for _ in 0..5 {
            let above = *ops.parent.get(&current)?;
            if above == NONE {
                return None;
            }
            if self.forward_of.contains_key(&above) {
                wrapper = Some(above);
                break;
            }
            current = above;
        }
        let wrapper = wrapper?;
        let forward = self.forward_of[&wrapper];
        let node = trace
            .name(&trace.events[wrapper as usize])
            .strip_prefix(BACKWARD_PREFIX)?;
        if trace.name(&trace.events[op as usize]) != node {
            return None;
        }
        let mut matches = 0;
        let mut pending = vec![wrapper];
        while let Some(current) = pending.pop() {
            for &child in ops.children(current) {
                if trace.name(&trace.events[child as usize]) == node && !ops.gpu(child).is_empty() {
                    matches += 1;
                }
                pending.push(child);
            }
        }
        if matches != 1 {
            return None;
        }
        let shape = OpShape::of_event(trace, &trace.events[forward as usize]);
        perf_model::model_backward(&shape).ok().map(|_| forward)
    }
}

// ----------------------------------------------------------------------------
// Rows.

/// An op's name and recorded arguments, and whether its backward is wanted.
type ModelKey = (Sym, [Option<Sym>; 4], bool);

/// Models and argument tuples, computed once per distinct argument set.
#[derive(Default)]
struct Memo {
    reprs: FxHashMap<Sym, String>,
    models: FxHashMap<ModelKey, Result<PerfModel, NoModel>>,
}

impl Memo {
    /// The model of an op event (or of the backward of a forward op event).
    fn model(&mut self, trace: &Trace, op: u32, backward: bool) -> Result<PerfModel, NoModel> {
        let event = &trace.events[op as usize];
        let args = trace.op_args(event).copied().unwrap_or_default();
        let key = (
            event.name,
            [
                args.input_dims,
                args.input_type,
                args.input_strides,
                args.concrete_inputs,
            ],
            backward,
        );
        self.models
            .entry(key)
            .or_insert_with(|| {
                let shape = OpShape::of_event(trace, event);
                if backward {
                    perf_model::model_backward(&shape)
                } else {
                    perf_model::model(&shape)
                }
            })
            .clone()
    }

    /// An argument list as a Python tuple.
    fn repr(&mut self, trace: &Trace, sym: Option<Sym>) -> Option<String> {
        let sym = sym?;
        Some(
            self.reprs
                .entry(sym)
                .or_insert_with(|| python_repr(trace.strings.get(sym)))
                .clone(),
        )
    }
}

/// One measured invocation.
struct Invocation {
    op: u32,
    model: Result<PerfModel, NoModel>,
    backward_of: Option<String>,
    kernel_us: f64,
    /// (kernel name, raw dur, stream), ordered by duration.
    kernels: Vec<(Sym, f64, Option<i64>)>,
}

fn invocation(
    trace: &Trace,
    ops: &OpTree,
    memo: &mut Memo,
    op: u32,
    forward: Option<u32>,
) -> Invocation {
    let model = match forward {
        Some(f) => memo.model(trace, f, true),
        None => memo.model(trace, op, false),
    };
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
        model,
        backward_of: forward.map(|f| trace.name(&trace.events[f as usize]).to_string()),
        kernel_us,
        kernels,
    }
}

/// The grouping key and first-invocation columns of an op.
#[derive(Clone, PartialEq, Eq, Hash)]
struct OpKey {
    name: String,
    category: Category,
    process_name: String,
    process_label: String,
    thread_name: String,
    args: [Option<String>; 4],
}

fn op_key(trace: &Trace, ops: &OpTree, memo: &mut Memo, op: u32) -> (OpKey, [Option<String>; 4]) {
    let event = &trace.events[op as usize];
    let shape = OpShape::of_event(trace, event);
    let args = trace.op_args(event).copied().unwrap_or_default();
    let reprs = [
        args.input_dims,
        args.input_type,
        args.input_strides,
        args.concrete_inputs,
    ]
    .map(|sym| memo.repr(trace, sym));
    let raw = [
        shape.input_dims,
        shape.input_type,
        shape.input_strides,
        shape.concrete_inputs,
    ];
    let name = trace.name(event);
    // By name, else by its kernels when they all agree (as the ops tables do).
    let category = category::of_op_and_kernels(
        name,
        ops.gpu(op)
            .iter()
            .map(|&g| trace.name(&trace.events[g as usize])),
    );
    let track = trace.tracks[event.track as usize];
    let label = |sym: Option<&crate::trace::Sym>| {
        sym.map_or_else(
            || "Unknown".to_string(),
            |s| trace.strings.get(*s).to_string(),
        )
    };
    let key = OpKey {
        name: name.to_string(),
        category,
        process_name: label(trace.track_names.process.get(&track.pid)),
        process_label: label(trace.track_names.process_label.get(&track.pid)),
        thread_name: label(trace.track_names.thread.get(&track)),
        args: reprs,
    };
    (key, raw.map(|r| r.map(str::to_string)))
}

fn kahan_sum(values: &[f64]) -> f64 {
    let (mut sum, mut c) = (0.0f64, 0.0f64);
    for &x in values {
        let y = x - c;
        let t = sum + y;
        c = (t - sum) - y;
        sum = t;
    }
    sum
}

/// numpy's pairwise summation (blocks of 8, split above 128).
fn pairwise_sum(values: &[f64]) -> f64 {
    let n = values.len();
    if n < 8 {
        return values.iter().fold(0.0, |s, v| s + v);
    }
    if n <= 128 {
        let mut r = [0.0f64; 8];
        r.copy_from_slice(&values[..8]);
        let mut i = 8;
        while i + 8 <= n {
            for j in 0..8 {
                r[j] += values[i + j];
            }
            i += 8;
        }
        let mut total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for v in &values[i..] {
            total += v;
        }
        return total;
    }
    let half = n / 2;
    let split = half - half % 8;
    pairwise_sum(&values[..split]) + pairwise_sum(&values[split..])
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// Per-position kernel statistics: the first invocation with kernels is the
/// template; invocations with a different kernel count are left out.
fn kernel_stats(trace: &Trace, invocations: &[&Invocation]) -> Vec<KernelStats> {
    let Some(template) = invocations.iter().find(|i| !i.kernels.is_empty()) else {
        return Vec::new();
    };
    let width = template.kernels.len();
    let matching: Vec<&&Invocation> = invocations
        .iter()
        .filter(|i| i.kernels.len() == width)
        .collect();
    (0..width)
        .map(|position| {
            let durations: Vec<f64> = matching.iter().map(|i| i.kernels[position].1).collect();
            let n = durations.len() as f64;
            let total = pairwise_sum(&durations);
            let mean = total / n;
            let squares: Vec<f64> = durations.iter().map(|d| (d - mean) * (d - mean)).collect();
            let (name, _, stream) = &template.kernels[position];
            KernelStats {
                name: trace.strings.get(*name).to_string(),
                stream: *stream,
                count: durations.len() as u64,
                total_us: total,
                mean_us: mean,
                median_us: median(&durations),
                std_us: (pairwise_sum(&squares) / n).sqrt(),
                min_us: durations.iter().copied().fold(f64::INFINITY, f64::min),
                max_us: durations.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            }
        })
        .collect()
}

/// Builds one row from a group of invocations with the same key.
fn build_row(
    trace: &Trace,
    key: &OpKey,
    raw: &[Option<String>; 4],
    group: &[&Invocation],
) -> PerfRow {
    let first = group[0];
    let first_event = &trace.events[first.op as usize];
    let model = first.model.as_ref().ok();
    let kernel_us: Vec<f64> = group.iter().map(|i| i.kernel_us).collect();
    let rate = |per_invocation: &dyn Fn(&PerfModel, f64) -> f64| -> Option<Agg> {
        model?;
        Agg::of(group.iter().filter_map(|i| {
            let m = i.model.as_ref().ok()?;
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
        input_dims: key.args[0].clone(),
        input_type: key.args[1].clone(),
        input_strides: key.args[2].clone(),
        concrete_inputs: key.args[3].clone(),
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
        no_model: first.model.as_ref().err().map(ToString::to_string),
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
fn rank(rows: &mut [PerfRow]) {
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
type Group<'a> = (OpKey, [Option<String>; 4], Vec<&'a Invocation>);

fn unified_rows(
    trace: &Trace,
    ops: &OpTree,
    memo: &mut Memo,
    collected: &[Collected],
) -> Vec<PerfRow> {
    let invocations: Vec<Invocation> = collected
        .iter()
        .map(|c| invocation(trace, ops, memo, c.op, c.forward))
        .collect();
    let mut index: std::collections::HashMap<OpKey, usize> = std::collections::HashMap::new();
    let mut groups: Vec<Group> = Vec::new();
    for inv in &invocations {
        let (key, raw) = op_key(trace, ops, memo, inv.op);
        let slot = *index.entry(key.clone()).or_insert_with(|| {
            groups.push((key, raw, Vec::new()));
            groups.len() - 1
        });
        groups[slot].2.push(inv);
    }
    let mut rows: Vec<PerfRow> = groups
        .iter()
        .map(|(key, raw, group)| build_row(trace, key, raw, group))
        .collect();
    rank(&mut rows);
    rows
}

fn sheet_rows(
    trace: &Trace,
    ops: &OpTree,
    memo: &mut Memo,
    collected: &[Collected],
) -> Vec<PerfRow> {
    // Every invocation of a modelled op, plus the backward ops modelled from their forward.
    let mut members: Vec<(u32, Option<u32>)> = trace
        .events
        .iter()
        .enumerate()
        .filter(|(_, e)| e.kind == Kind::CpuOp && stops_traversal(trace.name(e)))
        .map(|(i, _)| (i as u32, None))
        .collect();
    members.extend(
        collected
            .iter()
            .filter(|c| c.forward.is_some())
            .map(|c| (c.op, c.forward)),
    );
    members.sort_by(|a, b| {
        let (ea, eb) = (&trace.events[a.0 as usize], &trace.events[b.0 as usize]);
        ea.ts.total_cmp(&eb.ts).then(a.0.cmp(&b.0))
    });
    let invocations: Vec<Invocation> = members
        .iter()
        .map(|&(op, forward)| invocation(trace, ops, memo, op, forward))
        .filter(|inv| inv.model.is_ok())
        .collect();
    type SheetKey = (Family, String, Vec<(String, String)>);
    let mut index: std::collections::HashMap<SheetKey, usize> = std::collections::HashMap::new();
    let mut groups: Vec<Group> = Vec::new();
    for inv in &invocations {
        let model = inv.model.as_ref().expect("modelled");
        let (key, raw) = op_key(trace, ops, memo, inv.op);
        let sheet_key = (model.family, key.name.clone(), model.params.clone());
        let slot = *index.entry(sheet_key).or_insert_with(|| {
            groups.push((key, raw, Vec::new()));
            groups.len() - 1
        });
        groups[slot].2.push(inv);
    }
    let mut rows: Vec<PerfRow> = groups
        .iter()
        .map(|(key, raw, group)| build_row(trace, key, raw, group))
        .collect();
    let mut sheets = Vec::new();
    let mut names: Vec<&str> = Family::ALL.iter().map(|f| f.sheet()).collect();
    names.dedup();
    for sheet in names {
        let mut part: Vec<PerfRow> = Vec::new();
        rows.retain(|row| {
            if row.family.is_some_and(|f| f.sheet() == sheet) {
                part.push(row.clone());
                false
            } else {
                true
            }
        });
        rank(&mut part);
        sheets.extend(part);
    }
    sheets
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::path::{Path, PathBuf};

    use super::*;

    // ------------------------------------------------------------------
    // Synthetic traces.

    fn linked(json: &str) -> (Trace, Tree) {
        let trace = crate::trace::load_reader("synthetic", json.as_bytes(), &mut || {})
            .expect("valid trace");
        let tree = crate::trace::link::link(&trace);
        (trace, tree)
    }

    fn cpu_op(name: &str, ts: f64, dur: f64, dims: &str, types: &str, concrete: &str) -> String {
        format!(
            r#"{{"ph": "X", "cat": "cpu_op", "name": "{name}", "pid": 1, "tid": 1, "ts": {ts}, "dur": {dur},
               "args": {{"Input Dims": {dims}, "Input type": {types}, "Input Strides": [], "Concrete Inputs": {concrete}}}}}"#
        )
    }

    fn launch(ts: f64, correlation: u64) -> String {
        format!(
            r#"{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": {ts}, "dur": 1, "args": {{"correlation": {correlation}}}}}"#
        )
    }

    fn kernel(name: &str, ts: f64, dur: f64, correlation: u64) -> String {
        format!(
            r#"{{"ph": "X", "cat": "kernel", "name": "{name}", "pid": 0, "tid": 7, "ts": {ts}, "dur": {dur}, "args": {{"correlation": {correlation}, "stream": 7}}}}"#
        )
    }

    fn synthetic() -> String {
        let events = [
            // layer_norm → native_layer_norm → two launches.
            cpu_op(
                "aten::layer_norm",
                0.0,
                100.0,
                "[[2, 8], [], [8], [8], [], []]",
                r#"["float", "ScalarList", "float", "float", "Scalar", "Scalar"]"#,
                r#"["", "[8]", "", "", "1e-05", "True"]"#,
            ),
            cpu_op(
                "aten::native_layer_norm",
                1.0,
                90.0,
                "[[2, 8], [], [8], [8], []]",
                r#"["float", "ScalarList", "float", "float", "Scalar"]"#,
                r#"["", "[8]", "", "", "1e-05"]"#,
            ),
            launch(2.0, 1),
            launch(10.0, 2),
            kernel("layer_norm_kernel", 200.0, 10.0, 1),
            kernel("layer_norm_kernel", 205.0, 10.0, 2),
            // An unmodelled launcher, twice.
            cpu_op(
                "aten::cat",
                110.0,
                20.0,
                "[[], []]",
                r#"["TensorList", "Scalar"]"#,
                r#"["", "0"]"#,
            ),
            launch(111.0, 3),
            kernel("CatArrayBatchedCopy", 220.0, 4.0, 3),
            cpu_op(
                "aten::cat",
                140.0,
                20.0,
                "[[], []]",
                r#"["TensorList", "Scalar"]"#,
                r#"["", "0"]"#,
            ),
            launch(141.0, 4),
            kernel("CatArrayBatchedCopy", 230.0, 6.0, 4),
            // A CPU-only modelled op: in the sheets, not in the unified table.
            cpu_op(
                "aten::add",
                170.0,
                5.0,
                "[[2, 8], [2, 8], []]",
                r#"["float", "float", "Scalar"]"#,
                r#"["", "", "1"]"#,
            ),
        ];
        format!(r#"{{"traceEvents": [{}]}}"#, events.join(",\n"))
    }

    #[test]
    fn modelled_ops_take_their_subtree_and_launchers_get_rows() {
        let (trace, tree) = linked(&synthetic());
        let report = perf_report(&trace, &tree);
        let names: Vec<&str> = report.rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["aten::layer_norm", "aten::cat"]);
        let norm = &report.rows[0];
        assert!(norm.has_perf_model);
        assert_eq!(norm.family, Some(Family::NormFwd));
        // Two overlapping 10 µs kernels, 200–215: 15 µs busy.
        assert_eq!(norm.kernel_time_us.sum, 15.0);
        assert_eq!(
            norm.input_dims.as_deref(),
            Some("((2, 8), (), (8,), (8,), (), ())")
        );
        // 6·8 + 5·16 flops.
        assert_eq!(norm.gflops, Some(128.0 / 1e9));
        let tflops = norm.tflops_per_s.expect("timed");
        assert_eq!(tflops.mean, (128.0 / 1e9 / 1e3) / (15.0 / 1e6));
        let cat = &report.rows[1];
        assert!(!cat.has_perf_model);
        assert_eq!(cat.count, 2);
        assert_eq!(cat.kernel_time_us.sum, 10.0);
        assert_eq!(cat.kernel_time_us.std, Some(2f64.sqrt()));
        assert_eq!(cat.gflops, None);
        assert!(cat.no_model.as_deref().unwrap_or("").contains("aten::cat"));
        assert_eq!(norm.percentage, 60.0);
        assert_eq!(cat.cumulative_percentage, 100.0);
        let missing = unmodelled(&report.rows);
        assert_eq!(missing.len(), 1);
        assert_eq!(
            (missing[0].name.as_str(), missing[0].count),
            ("aten::cat", 2)
        );
        // Sheets list nested and CPU-only invocations too.
        let sheet_names: Vec<&str> = report.sheets.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(
            sheet_names,
            ["aten::add", "aten::layer_norm", "aten::native_layer_norm"]
        );
        assert_eq!(report.sheets[0].kernel_time_us.sum, 0.0);
        assert_eq!(report.sheets[0].tflops_per_s, None);
        assert_eq!(report.sheets[2].kernel_time_us.sum, 15.0);
    }

    #[test]
    fn autograd_backward_ops_are_modelled_from_their_forward() {
        let conv_dims = "[[1, 4, 8, 8], [8, 4, 3, 3], [], [], [], [], [], [], []]";
        let conv_types = r#"["float", "float", "", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"]"#;
        let conv_concrete = r#"["", "", "", "[1, 1]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1"]"#;
        let with_seq = |event: String, tid: u32| {
            event
                .replace(r#""tid": 1"#, &format!(r#""tid": {tid}"#))
                .replace(r#""args": {"#, r#""args": {"Sequence number": 42, "#)
        };
        let on_thread =
            |event: String, tid: u32| event.replace(r#""tid": 1"#, &format!(r#""tid": {tid}"#));
        let events = [
            with_seq(
                cpu_op(
                    "aten::convolution",
                    0.0,
                    20.0,
                    conv_dims,
                    conv_types,
                    conv_concrete,
                ),
                1,
            ),
            launch(1.0, 1),
            kernel("conv_fwd", 100.0, 10.0, 1),
            with_seq(
                cpu_op(
                    "autograd::engine::evaluate_function: ConvolutionBackward0",
                    50.0,
                    40.0,
                    "[]",
                    "[]",
                    "[]",
                ),
                2,
            ),
            on_thread(
                cpu_op("ConvolutionBackward0", 51.0, 38.0, "[]", "[]", "[]"),
                2,
            ),
            on_thread(
                cpu_op(
                    "aten::convolution_backward",
                    52.0,
                    36.0,
                    "[[1, 8, 6, 6], [1, 4, 8, 8], [8, 4, 3, 3], [], [], [], [], [], [], [], []]",
                    r#"["float", "float", "float", "ScalarList", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar", "ScalarList"]"#,
                    r#"["", "", "", "[8]", "[1, 1]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1", "[True, True, False]"]"#,
                ),
                2,
            ),
            on_thread(launch(53.0, 2), 2),
            on_thread(launch(54.0, 3), 2),
            kernel("conv_dgrad", 200.0, 20.0, 2),
            kernel("conv_wgrad", 220.0, 30.0, 3),
        ];
        let json = format!(r#"{{"traceEvents": [{}]}}"#, events.join(",\n"));
        let (trace, tree) = linked(&json);
        let rows = perf_rows(&trace, &tree);
        let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["ConvolutionBackward0", "aten::convolution"]);
        let backward = &rows[0];
        assert_eq!(backward.family, Some(Family::ConvBwd));
        assert_eq!(backward.backward_of.as_deref(), Some("aten::convolution"));
        assert_eq!(backward.kernel_time_us.sum, 50.0);
        // Input and weight gradients: twice the forward's 2·4·9 flops per output
        // element of (1, 8, 6, 6).
        assert_eq!(backward.gflops, Some((2 * 288 * 72) as f64 / 1e9));
    }

    #[test]
    fn statistics_follow_pandas() {
        let agg = Agg::of([1.0, 2.0, 4.0, f64::NAN]).expect("samples");
        assert_eq!(
            (agg.count, agg.sum, agg.median, agg.min, agg.max),
            (3, 7.0, 2.0, 1.0, 4.0)
        );
        assert!((agg.std.expect("std") - 1.527_525_231_651_946_6).abs() < 1e-12);
        assert_eq!(Agg::of([3.0]).expect("one").std, None);
        assert_eq!(Agg::of([f64::NAN]), None);
        let values: Vec<f64> = (0..300).map(|i| i as f64 * 0.1).collect();
        assert!((pairwise_sum(&values) - 4485.0).abs() < 1e-9);
    }

    // ------------------------------------------------------------------
    // TraceLens's own unified_perf_summary.csv as the oracle.

    /// A tiny quote-aware CSV reader (pandas `to_csv` output).
    fn parse_csv(text: &str) -> Vec<Vec<String>> {
        let mut rows = Vec::new();
        let mut row = Vec::new();
        let mut field = String::new();
        let mut quoted = false;
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            match (c, quoted) {
                ('"', true) if chars.peek() == Some(&'"') => {
                    field.push('"');
                    chars.next();
                }
                ('"', _) => quoted = !quoted,
                (',', false) => row.push(std::mem::take(&mut field)),
                ('\n', false) => {
                    row.push(std::mem::take(&mut field));
                    rows.push(std::mem::take(&mut row));
                }
                (c, _) => field.push(c),
            }
        }
        if !field.is_empty() || !row.is_empty() {
            row.push(field);
            rows.push(row);
        }
        rows
    }

    /// The rows of a CSV file as column → value maps.
    fn read_csv(path: &Path) -> Vec<HashMap<String, String>> {
        let text = std::fs::read_to_string(path).expect("readable CSV");
        let mut rows = parse_csv(&text).into_iter();
        let header = rows.next().unwrap_or_default();
        rows.map(|row| header.iter().cloned().zip(row).collect())
            .collect()
    }

    /// `((4, 3), (), (768,))` → `[[4, 3], [], [768]]`.
    fn tuple_dims(text: &str) -> Vec<Vec<u64>> {
        let inner = text
            .trim()
            .strip_prefix('(')
            .and_then(|t| t.strip_suffix(')'))
            .unwrap_or("");
        let mut out = Vec::new();
        let mut depth = 0;
        let mut current = String::new();
        for c in inner.chars() {
            match c {
                '(' => {
                    depth += 1;
                    current.clear();
                }
                ')' => {
                    depth -= 1;
                    out.push(
                        current
                            .split(',')
                            .filter_map(|n| n.trim().parse().ok())
                            .collect(),
                    );
                }
                c if depth > 0 => current.push(c),
                _ => {}
            }
        }
        out
    }

    /// `('c10::BFloat16', '', None)` → `["c10::BFloat16", "", "None"]`.
    fn tuple_strings(text: &str) -> Vec<String> {
        let inner = text
            .trim()
            .strip_prefix('(')
            .and_then(|t| t.strip_suffix(')'))
            .unwrap_or("");
        let mut out = Vec::new();
        let mut current = String::new();
        let mut quote: Option<char> = None;
        for c in inner.chars() {
            match (c, quote) {
                ('\'' | '"', None) => quote = Some(c),
                (c, Some(q)) if c == q => {
                    quote = None;
                    out.push(std::mem::take(&mut current));
                }
                (c, Some(_)) => current.push(c),
                (c, None) if c.is_alphanumeric() => current.push(c),
                (',', None) if !current.is_empty() => out.push(std::mem::take(&mut current)),
                _ => {}
            }
        }
        if !current.is_empty() {
            out.push(current);
        }
        out
    }

    /// Bytes per element, the test's own table (REFERENCE §4).
    fn bpe(type_name: &str) -> u64 {
        match type_name {
            "double" | "long int" => 8,
            "float" | "int" | "Scalar" => 4,
            "c10::BFloat16" | "c10::Half" => 2,
            "bool" | "signed char" | "unsigned char" => 1,
            other => panic!("no size for {other}"),
        }
    }

    fn close(ours: f64, theirs: f64) -> bool {
        let scale = ours.abs().max(theirs.abs());
        scale == 0.0 || (ours - theirs).abs() <= 1e-4 * scale
    }

    fn number(row: &HashMap<String, String>, column: &str) -> Option<f64> {
        row.get(column).and_then(|v| v.parse().ok())
    }

    /// What TraceLens's value should have been, where it is wrong
    /// (docs/PERF_MODELS.md), computed here from the row's own arguments:
    /// (GFLOPS, Data Moved (MB), which divergence).
    fn corrected(
        row: &HashMap<String, String>,
    ) -> (Option<f64>, Option<f64>, Option<&'static str>) {
        const MIB: f64 = 1024.0 * 1024.0;
        let gflops = number(row, "GFLOPS");
        let mb = number(row, "Data Moved (MB)");
        let name = row["name"].as_str();
        let dims = tuple_dims(&row["Input Dims"]);
        let types = tuple_strings(&row["Input type"]);
        let concrete = tuple_strings(&row["Concrete Inputs"]);
        let numel = |shape: &[u64]| shape.iter().product::<u64>();
        match name {
            // Conv bias: TraceLens tests `len(Input Dims) == 3`; traces record 9 inputs.
            "aten::convolution" if !dims[2].is_empty() => {
                let per_output = 2 * numel(&dims[1][1..]);
                let flops = gflops.expect("GFLOPS") * 1e9;
                let outputs = flops / per_output as f64;
                let bias_bytes = (dims[2][0] * bpe(&types[2])) as f64;
                (
                    Some((flops + outputs) / 1e9),
                    Some(mb.expect("MB") + bias_bytes / MIB),
                    Some("conv bias"),
                )
            }
            // Reductions: TraceLens writes one output element whatever dim/keepdim say.
            "aten::mean" | "aten::sum" | "aten::amax" | "aten::amin" | "aten::linalg_norm" => {
                let dim_index = if name == "aten::linalg_norm" { 2 } else { 1 };
                let dim_text = concrete[dim_index].trim_matches(|c| c == '[' || c == ']');
                let keepdim = concrete[dim_index + 1] == "True";
                let shape = &dims[0];
                let mut out: Vec<u64> = Vec::new();
                let reduced: Vec<usize> = dim_text
                    .split(',')
                    .map(|d| {
                        let d: i64 = d.trim().parse().expect("dim");
                        (if d < 0 { d + shape.len() as i64 } else { d }) as usize
                    })
                    .collect();
                for (axis, &size) in shape.iter().enumerate() {
                    if !reduced.contains(&axis) {
                        out.push(size);
                    } else if keepdim {
                        out.push(1);
                    }
                }
                let size = bpe(&types[0]) as f64;
                let fixed = mb.expect("MB") + (numel(&out) as f64 - 1.0) * size / MIB;
                let label = (numel(&out) != 1).then_some("reduce output size");
                (gflops, Some(fixed), label)
            }
            // SDPA: TraceLens assumes 2 bytes per element whatever the dtype.
            "aten::_scaled_dot_product_flash_attention" => {
                let size = bpe(&types[0]);
                let label = (size != 2).then_some("sdpa dtype");
                (gflops, mb.map(|m| m / 2.0 * size as f64), label)
            }
            // In-place binary ops store into `self`; TraceLens sizes the result as
            // the wider input.
            "aten::add_" | "aten::mul_" | "aten::div_" if bpe(&types[0]) != bpe(&types[1]) => {
                let out: u64 = numel(&dims[0]);
                let wider = bpe(&types[0]).max(bpe(&types[1]));
                let fixed = mb.expect("MB") - (out * wider) as f64 / MIB
                    + (out * bpe(&types[0])) as f64 / MIB;
                (gflops, Some(fixed), Some("in-place output type"))
            }
            // TraceLens has no size for bool, so it writes no bytes at all.
            "aten::copy_" if mb.is_none() && types.iter().any(|t| t == "bool") => {
                let bytes = numel(&dims[0]) * bpe(&types[0]) + numel(&dims[1]) * bpe(&types[1]);
                (gflops, Some(bytes as f64 / MIB), Some("bool size"))
            }
            _ => (gflops, mb, None),
        }
    }

    fn corpus() -> PathBuf {
        PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../shared/corpus/tracelens"
        ))
    }

    /// (trace, its unified_perf_summary.csv) for every corpus trace with CPU ops.
    fn oracle_pairs(corpus: &Path) -> Vec<(PathBuf, PathBuf)> {
        let mut pairs = Vec::new();
        for platform in std::fs::read_dir(corpus).expect("corpus").flatten() {
            for entry in std::fs::read_dir(platform.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                let path = entry.path();
                let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
                    continue;
                };
                let Some(stem) = name.strip_suffix(".json.gz") else {
                    continue;
                };
                let csv = path
                    .with_file_name(format!("{stem}_perf_report_csvs"))
                    .join("unified_perf_summary.csv");
                if csv.is_file() {
                    pairs.push((path, csv));
                }
            }
        }
        pairs.sort();
        pairs
    }

    /// Checks one trace against its oracle; returns (rows checked, divergences seen).
    fn check_against_tracelens(trace_path: &Path, csv: &Path) -> (usize, Vec<&'static str>) {
        let trace = crate::trace::load_file(trace_path, &mut |_| {}).expect("corpus trace loads");
        let tree = crate::trace::link::link(&trace);
        let report = perf_report(&trace, &tree);
        let rows = &report.rows;
        let label = trace_path.display();
        let files = crate::render::perf_csv::render_all(&report);
        let oracle_text = std::fs::read_to_string(csv).expect("oracle CSV");
        assert_eq!(
            files[0].1.lines().next(),
            oracle_text.lines().next(),
            "{label}: unified_perf_summary.csv header"
        );
        let key =
            |name: &str, cells: [&str; 4]| -> String { format!("{name}|{}", cells.join("|")) };
        let ours: HashMap<String, &PerfRow> = rows
            .iter()
            .map(|r| {
                let cell = |v: &Option<String>| v.clone().unwrap_or_default();
                let cells = [
                    cell(&r.input_dims),
                    cell(&r.input_type),
                    cell(&r.input_strides),
                    cell(&r.concrete_inputs),
                ];
                (key(&r.name, cells.each_ref().map(String::as_str)), r)
            })
            .collect();
        let oracle = read_csv(csv);
        let mut checked = 0;
        let mut divergences = Vec::new();
        for row in &oracle {
            let name = row["name"].as_str();
            let k = key(
                name,
                [
                    &row["Input Dims"],
                    &row["Input type"],
                    &row["Input Strides"],
                    &row["Concrete Inputs"],
                ],
            );
            let Some(mine) = ours.get(&k) else {
                panic!("{label}: TraceLens row {k} missing from ours");
            };
            let kernel_sum = number(row, "Kernel Time (µs)_sum").expect("kernel time");
            assert!(
                close(mine.kernel_time_us.sum, kernel_sum),
                "{label}: {k}: kernel time {} vs TraceLens {kernel_sum}",
                mine.kernel_time_us.sum
            );
            assert_eq!(
                mine.count.to_string(),
                row["operation_count"],
                "{label}: {k}: count"
            );
            if row["has_perf_model"] != "True" {
                continue;
            }
            if name.starts_with("triton_") {
                // TraceLens reads Inductor's generated sources, not in the trace.
                assert!(!mine.has_perf_model, "{label}: {k}");
                divergences.push("triton (no model)");
                continue;
            }
            assert!(mine.has_perf_model, "{label}: {k}: {:?}", mine.no_model);
            let (gflops, mb, divergence) = corrected(row);
            let gflops = gflops.expect("GFLOPS");
            let mb = mb.expect("Data Moved");
            assert!(
                close(mine.gflops.expect("ours"), gflops),
                "{label}: {k}: GFLOPS {:?} vs expected {gflops}",
                mine.gflops
            );
            assert!(
                close(mine.data_moved_mb.expect("ours"), mb),
                "{label}: {k}: Data Moved {:?} vs expected {mb}",
                mine.data_moved_mb
            );
            divergences.extend(divergence);
            checked += 1;
        }
        assert_eq!(rows.len(), oracle.len(), "{label}: row count");
        (checked, divergences)
    }

    fn check_corpus(select: impl Fn(&Path) -> bool) {
        let corpus = corpus();
        let pairs: Vec<(PathBuf, PathBuf)> = oracle_pairs(&corpus)
            .into_iter()
            .filter(|(trace, _)| select(trace))
            .collect();
        assert!(!pairs.is_empty(), "no traces selected");
        for (trace, csv) in pairs {
            let (checked, divergences) = check_against_tracelens(&trace, &csv);
            assert!(checked > 0, "{}: no modelled rows", trace.display());
            #[allow(clippy::print_stdout)]
            {
                println!(
                    "{}: {checked} modelled rows match; diverging on purpose: {divergences:?}",
                    trace.display()
                );
            }
        }
    }

    fn is_large(trace: &Path) -> bool {
        trace.to_string_lossy().contains("owlv2")
    }

    #[test]
    #[cfg_attr(
        not(tracegate_corpus),
        ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
    )]
    fn unified_table_matches_tracelens() {
        check_corpus(|trace| !is_large(trace));
    }

    #[test]
    #[cfg_attr(
        not(tracegate_corpus),
        ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
    )]
    fn unified_table_matches_tracelens_on_the_largest_traces() {
        check_corpus(is_large);
    }
}
