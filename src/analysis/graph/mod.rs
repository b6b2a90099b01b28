//! Graph replay: rows for the GPU work CUDA/HIP graph launches replay, the
//! capture-trace merge that names the ops behind it, and the coverage of
//! GPU time by rows.
//!
//! A graph launch (`cudaGraphLaunch`, `cuGraphLaunch`, `hipGraphLaunch`, …)
//! puts hundreds of kernels on the GPU under one correlation id, with no op
//! above them: without this module an inference trace with full graph
//! capture has nearly all its GPU time outside the op table, where the gate
//! cannot see it. Each replayed kernel, copy and set lands in a row that the
//! snapshot, compare and judge stages treat like an op row:
//!
//! - with capture traces ([`Capture`]), in the row of the op that launched it
//!   during capture (name, shapes, types, strides, module path, perf model),
//!   one call per execution of that op in a replay ([`merge`]); a replay in
//!   an annotated execution step takes the capture its batch size and mode
//!   choose, as TraceLens does ([`select`]): one graph per step (FULL) or
//!   several with eager ops between them (PIECEWISE, vLLM's default);
//! - otherwise, or where no captured call matches, in a row named after the
//!   kernel, keyed by its launch configuration, one call per execution.
//!
//! Every row is placed in its graph ([`GraphPlace`]): Kineto's `graph id`
//! when the work carries one, else the launch's position among the graph
//! launches of its step ([`replays`]). Each graph also gets a row of its own
//! whose kernel sequence is the whole graph's ([`GraphRole::Graph`]): a kernel
//! renamed or swapped inside the graph is one kernel-selection finding there.
//! Those rows are kept apart (`GraphReplay::graphs`), their time being the
//! other rows' time again.
//!
//! # Files
//!
//! `replays.rs` finds the launches, their work and the graph identity;
//! `capture.rs` reads the captures of a capture trace; `select.rs` picks
//! the capture of each annotated step by batch size and mode; `align.rs`
//! pairs a capture's calls with a replay's work; `merge.rs` merges each
//! replay with its step's capture or the one that fits it best; `rows.rs` builds the rows; `coverage.rs` measures how
//! much GPU time the rows hold; `perf_calls.rs` hands the replayed calls to
//! the perf table; `pseudo_ops.rs` splits MoE calls into TraceLens's pseudo
//! ops there.

mod align;
mod capture;
mod coverage;
mod merge;
mod perf_calls;
mod pseudo_ops;
mod replays;
mod rows;
mod select;
#[cfg(test)]
mod tests;

use crate::analysis::gpu_work::GpuWork;
use crate::analysis::perf::ReplayedCall;
use crate::analysis::profile::{
    CaptureMerge, CategorySummary, Coverage, GraphReplay, OpSummary, StepProfile, UniqueArgs,
};
use crate::analysis::timeline::IntervalSet;
use crate::trace::capture_folder::{CaptureFile, CaptureMode};
use crate::trace::link::Tree;
use crate::trace::{FxHashMap, Trace};

#[cfg(doc)]
use crate::analysis::profile::{GraphPlace, GraphRole};

use merge::Owner;
use rows::{Sources, graph_rows, work_rows};

pub use select::wanted;

/// A capture trace (recorded while the graphs were captured) with its link
/// tree, and the batch size and mode its capture folder lists for it.
#[derive(Clone, Copy)]
pub struct Capture<'a> {
    /// The capture trace.
    pub trace: &'a Trace,
    /// Its link tree.
    pub tree: &'a Tree,
    /// The batch size its graphs were captured for, when listed
    /// (`execution_details.json`); else read from the trace.
    pub batch_size: Option<u64>,
    /// Its mode, when listed.
    pub mode: Option<CaptureMode>,
}

impl<'a> Capture<'a> {
    /// A capture trace with nothing listed about it.
    pub fn new(trace: &'a Trace, tree: &'a Tree) -> Capture<'a> {
        Capture {
            trace,
            tree,
            batch_size: None,
            mode: None,
        }
    }

    /// A capture trace with what its folder lists about it.
    pub fn listed(trace: &'a Trace, tree: &'a Tree, file: &CaptureFile) -> Capture<'a> {
        Capture {
            batch_size: file.batch_size,
            mode: file.mode,
            ..Capture::new(trace, tree)
        }
    }

    /// Its batch size and mode, when both are listed.
    fn details(&self) -> Option<select::Details> {
        Some((self.batch_size?, self.mode?))
    }
}

/// What graph replay adds to a profile.
pub(super) struct GraphAnalysis {
    /// Rows of replayed work, most time first.
    pub(super) rows: Vec<UniqueArgs>,
    /// The replay summary; `None` when the trace launches no graph.
    pub(super) replay: Option<GraphReplay>,
    /// The coverage of GPU time by rows.
    pub(super) coverage: Coverage,
    /// The replayed calls, for the perf table.
    pub(super) perf_calls: Vec<ReplayedCall>,
    /// The row name of each replayed work item (an index into
    /// [`GpuWork::items`]), for the per-phase op totals.
    pub(super) work_names: FxHashMap<u32, String>,
}

/// The graph rows of a linked trace, merged with the capture traces given.
pub(super) fn analyse(
    trace: &Trace,
    tree: &Tree,
    gpu: &GpuWork,
    captures: &[Capture<'_>],
) -> GraphAnalysis {
    let mut found = replays::collect(trace, tree, gpu);
    let coverage = coverage::coverage(trace, gpu, found.without_work);
    if found.launches == 0 {
        return GraphAnalysis {
            rows: Vec::new(),
            replay: None,
            coverage,
            perf_calls: Vec::new(),
            work_names: FxHashMap::default(),
        };
    }
    let sources = Sources {
        trace,
        tree,
        gpu,
        captures,
    };
    let (owners, capture_merge) = match captures {
        [] => (
            found
                .replays
                .iter()
                .map(|r| vec![Owner::Unmatched; r.work.len()])
                .collect(),
            None,
        ),
        _ => {
            let merged = merge::merge(trace, gpu, &mut found.replays, captures);
            let count = |matched: bool| {
                merged
                    .owners
                    .iter()
                    .flatten()
                    .filter(|o| (**o != Owner::Unmatched) == matched)
                    .count() as u64
            };
            let summary = CaptureMerge {
                source: captures
                    .iter()
                    .map(|c| c.trace.source.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                captures: merged.captures,
                matched: count(true),
                unmatched: count(false),
                chosen: merged.chosen.clone(),
                notes: merged.notes.clone(),
            };
            (merged.owners, Some(summary))
        }
    };
    let all_work: Vec<u32> = found
        .replays
        .iter()
        .flat_map(|r| r.work.iter().copied())
        .collect();
    let replay = GraphReplay {
        launches: found.launches,
        launches_without_work: found.without_work,
        work_items: all_work.len() as u64,
        busy_us: IntervalSet::from_intervals(
            all_work
                .iter()
                .map(|&w| gpu.items[w as usize].interval)
                .collect(),
        )
        .len(),
        graphs: graph_rows(&sources, &found.replays),
        capture: capture_merge,
    };
    let (rows, work_names) = work_rows(&sources, &found.replays, &owners);
    GraphAnalysis {
        rows,
        replay: Some(replay),
        coverage,
        perf_calls: perf_calls::perf_calls(trace, gpu, captures, &found.replays, &owners),
        work_names,
    }
}

/// Adds graph rows to the op tables built from op invocations: the rows
/// themselves, their time per op name, per category and per step.
pub(super) fn extend_tables(
    rows: Vec<UniqueArgs>,
    unique_args: &mut Vec<UniqueArgs>,
    ops: &mut Vec<OpSummary>,
    categories: &mut Vec<CategorySummary>,
    steps: &mut [StepProfile],
) {
    if rows.is_empty() {
        return;
    }
    for row in &rows {
        match ops.iter_mut().find(|o| o.name == row.name) {
            Some(op) => {
                op.total_direct_kernel_time_us += row.direct.sum;
                op.total_subtree_kernel_time_us += row.subtree.sum;
                op.count += row.direct.count;
                if !op.categories.contains(&row.category) {
                    op.categories.push(row.category);
                }
            }
            None => ops.push(OpSummary {
                name: row.name.clone(),
                total_direct_kernel_time_us: row.direct.sum,
                total_subtree_kernel_time_us: row.subtree.sum,
                count: row.direct.count,
                categories: vec![row.category],
            }),
        }
        match categories.iter_mut().find(|c| c.category == row.category) {
            Some(category) => {
                category.count += row.direct.count;
                category.total_direct_kernel_time_us += row.direct.sum;
            }
            None => categories.push(CategorySummary {
                category: row.category,
                count: row.direct.count,
                total_direct_kernel_time_us: row.direct.sum,
            }),
        }
        for &(number, us) in &row.step_us {
            if let Some(step) = steps.iter_mut().find(|s| s.number == number) {
                step.kernel_time_us += us;
            }
        }
    }
    ops.sort_by(|a, b| {
        b.total_direct_kernel_time_us
            .total_cmp(&a.total_direct_kernel_time_us)
    });
    categories.sort_by(|a, b| {
        b.total_direct_kernel_time_us
            .total_cmp(&a.total_direct_kernel_time_us)
    });
    unique_args.extend(rows);
    rows::sort_rows(unique_args);
}
