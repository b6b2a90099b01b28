//! The kernel tables of a profile: every kernel by parent op and stream, and
//! the short kernels (launch overhead dominates) by parent op and arguments,
//! with the histogram of their durations.

use std::collections::BTreeMap;

use crate::analysis::gpu_work::{GpuWork, Work};
use crate::analysis::op_tables::{ArgsSyms, args_key, args_syms};
use crate::analysis::ops::category::{self, Category};
use crate::analysis::ops::slots::Slots;
use crate::analysis::ops::stats::{Stats, percent};
use crate::analysis::profile::{HistogramBin, KernelSummary, SHORT_KERNEL_US, ShortKernelGroup};
use crate::analysis::timeline::Breakdown;
use crate::trace::link::{self, NONE, Tree};
use crate::trace::{FxHashMap, Kind, Sym, Trace};

/// Bins of the short-kernel histogram.
const HISTOGRAM_BINS: usize = 100;

/// The parent op and category of a kernel, for the kernel tables: the first
/// CPU op above its launch; with none, the launch call itself (category
/// `runtime`, or by kernel name under a graph launch); unlinked kernels have
/// neither.
fn parent_of(trace: &Trace, tree: &Tree, gpu: &GpuWork, work: &Work) -> (Option<Category>, String) {
    let event = &trace.events[work.event as usize];
    if work.launch == NONE {
        return (None, String::new());
    }
    let mut current = tree.parent[work.launch as usize];
    while current != NONE {
        let candidate = &trace.events[current as usize];
        if candidate.kind == Kind::CpuOp {
            let op_name = trace.name(candidate);
            let category = category::of_op_and_kernels(op_name, [trace.name(event)], gpu.comm);
            return (Some(category), op_name.to_string());
        }
        current = tree.parent[current as usize];
    }
    let launch_name = trace.name(&trace.events[work.launch as usize]);
    let category = if link::is_graph_launch(launch_name) {
        category::of_kernel(trace.name(event), gpu.comm)
    } else {
        Category::Runtime
    };
    (Some(category), launch_name.to_string())
}

/// The kernel rows' share of the trace's total time. Timestamps are
/// absolute µs (about 1e12 in a real trace), and the total, made from them,
/// carries their rounding (about 1e-4 µs there) where a row's recorded
/// durations do not: one 1.76 µs kernel filling a trace read 100.013%. A
/// share within that rounding of 100% is 100%; one above it is kept (the
/// row's launches overlap) and counted as an anomaly.
pub(super) struct TotalShare {
    total: f64,
    rounding: f64,
}

impl TotalShare {
    pub(super) fn of(gpu: &GpuWork, timeline: &Breakdown) -> TotalShare {
        let latest = gpu.items.iter().fold(0.0_f64, |latest, w| {
            latest.max(w.interval.start.abs()).max(w.interval.end.abs())
        });
        TotalShare {
            total: timeline.total_time,
            rounding: latest * f64::EPSILON,
        }
    }

    /// `sum` µs of `launches` launches as a percentage of the total time.
    fn percent(&self, sum: f64, launches: usize) -> f64 {
        let share = percent(sum, self.total);
        let slack = 4.0 * self.rounding * (launches as f64 + 1.0);
        if self.total > 0.0 && (sum - self.total).abs() <= slack {
            100.0
        } else {
            share
        }
    }
}

/// (parent category, parent op, kernel name, stream).
type KernelKey = (Option<Category>, String, String, Option<i64>);

/// Kernels grouped by parent op and stream, most time first.
pub(super) fn kernel_summary(
    trace: &Trace,
    tree: &Tree,
    gpu: &GpuWork,
    share: &TotalShare,
) -> Vec<KernelSummary> {
    let mut groups: BTreeMap<KernelKey, Vec<f64>> = BTreeMap::new();
    for work in gpu
        .items
        .iter()
        .filter(|w| trace.events[w.event as usize].kind == Kind::Kernel)
    {
        let (category, parent) = parent_of(trace, tree, gpu, work);
        let event = &trace.events[work.event as usize];
        groups
            .entry((category, parent, trace.name(event).to_string(), work.stream))
            .or_default()
            .push(event.dur);
    }
    let all_kernel_time: f64 = groups.values().flatten().fold(0.0, |total, d| total + d);
    let mut rows: Vec<KernelSummary> = groups
        .into_iter()
        .map(|((parent_category, parent_op, name, stream), durations)| {
            let duration = Stats::of(&durations);
            KernelSummary {
                parent_category,
                parent_op,
                name,
                stream,
                percent_of_kernel_time: percent(duration.sum, all_kernel_time),
                percent_of_total_time: share.percent(duration.sum, durations.len()),
                duration,
                launches_us: durations,
            }
        })
        .collect();
    rows.sort_by(|a, b| b.duration.sum.total_cmp(&a.duration.sum));
    rows
}

/// Short kernels (linked or not) by parent op, arguments and kernel name,
/// with the histogram of their durations and their total duration (µs).
/// As in TraceLens, kernels whose parent op lacks recorded arguments are left
/// out of the groups (they stay in the histogram); a trace with no CPU ops at
/// all groups by kernel name alone.
pub(super) fn short_kernels(
    trace: &Trace,
    tree: &Tree,
    gpu: &GpuWork,
    share: &TotalShare,
) -> (Vec<ShortKernelGroup>, Vec<HistogramBin>, f64) {
    let gpu_only = !trace.events.iter().any(|e| e.kind == Kind::CpuOp);
    let mut reprs = FxHashMap::default();
    // Grouped by the parent op's name, dims, strides and concrete inputs as
    // printed, and the kernel name; found by their symbols first.
    let mut slots: Slots<(Option<ArgsSyms>, Sym), [String; 5]> = Slots::default();
    let mut groups: Vec<([String; 5], Vec<f64>)> = Vec::new();
    let mut durations = Vec::new();
    for work in &gpu.items {
        let event = &trace.events[work.event as usize];
        if event.kind != Kind::Kernel || event.dur >= SHORT_KERNEL_US {
            continue;
        }
        durations.push(event.dur);
        let parent = if gpu_only {
            None
        } else {
            let Some(op) = parent_op_with_args(trace, tree, work) else {
                continue;
            };
            Some(op)
        };
        let cheap = (parent.map(|op| args_syms(trace, op)), event.name);
        let (slot, opened) = slots.slot(cheap, groups.len(), || {
            let kernel = trace.name(event).to_string();
            match parent {
                None => [
                    String::new(),
                    String::new(),
                    String::new(),
                    String::new(),
                    kernel,
                ],
                Some(op) => {
                    let key = args_key(trace, op, &mut reprs);
                    [
                        key.name,
                        key.input_dims,
                        key.input_strides,
                        key.concrete_inputs,
                        kernel,
                    ]
                }
            }
        });
        if let Some(key) = opened {
            groups.push((key, Vec::new()));
        }
        groups[slot].1.push(event.dur);
    }
    let mut rows: Vec<ShortKernelGroup> = groups
        .into_iter()
        .map(
            |([parent_op, input_dims, input_strides, concrete_inputs, name], durs)| {
                let total_us: f64 = durs.iter().sum();
                ShortKernelGroup {
                    parent_op,
                    input_dims,
                    input_strides,
                    concrete_inputs,
                    name,
                    total_us,
                    count: durs.len() as u64,
                    percent_of_total_time: share.percent(total_us, durs.len()),
                }
            },
        )
        .collect();
    rows.sort_by(|a, b| {
        b.total_us
            .total_cmp(&a.total_us)
            .then(a.count.cmp(&b.count))
    });
    let total_us = durations.iter().fold(0.0, |total, d| total + d);
    (rows, histogram(&durations, HISTOGRAM_BINS), total_us)
}

/// The first CPU op above a kernel's launch, if it recorded all four argument lists.
fn parent_op_with_args(trace: &Trace, tree: &Tree, work: &Work) -> Option<u32> {
    if work.launch == NONE {
        return None;
    }
    let mut current = tree.parent[work.launch as usize];
    while current != NONE {
        let event = &trace.events[current as usize];
        if event.kind == Kind::CpuOp {
            let args = trace.op_args(event)?;
            let complete = args.input_dims.is_some()
                && args.input_strides.is_some()
                && args.concrete_inputs.is_some();
            return complete.then_some(current);
        }
        current = tree.parent[current as usize];
    }
    None
}

/// Equal-width bins from the smallest to the largest value (numpy's rule:
/// the last bin includes its right edge).
fn histogram(values: &[f64], bins: usize) -> Vec<HistogramBin> {
    let Some(min) = values.iter().copied().min_by(f64::total_cmp) else {
        return Vec::new();
    };
    let max = values
        .iter()
        .copied()
        .max_by(f64::total_cmp)
        .expect("non-empty");
    let (low, high) = if min == max {
        (min - 0.5, max + 0.5)
    } else {
        (min, max)
    };
    // numpy.histogram: edges from linspace (the last edge exactly `high`), a
    // first guess from the scaled value, then a correction against the
    // computed edges so values on an edge land where numpy puts them.
    let step = (high - low) / bins as f64;
    let edges: Vec<f64> = (0..=bins)
        .map(|i| {
            if i == bins {
                high
            } else {
                low + step * i as f64
            }
        })
        .collect();
    let mut counts = vec![0u64; bins];
    for &value in values {
        let mut bin = (((value - low) / (high - low)) * bins as f64) as usize;
        bin = bin.min(bins - 1);
        if value < edges[bin] {
            bin = bin.saturating_sub(1);
        } else if bin + 1 < bins && value >= edges[bin + 1] {
            bin += 1;
        }
        counts[bin] += 1;
    }
    counts
        .into_iter()
        .enumerate()
        .map(|(i, count)| HistogramBin {
            start: edges[i],
            end: edges[i + 1],
            count,
        })
        .collect()
}
