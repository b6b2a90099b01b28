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
//!    modelled from the forward op's arguments, unless an op below it with
//!    GPU work has a model of its own (`aten::convolution_backward`): then
//!    the walk goes on down (TraceLens #582);
//! 3. a kernel launcher is a row (unmodelled unless rule 1 applied) — unless
//!    one of its child ops has GPU work and a perf model, itself or on any
//!    op below it (TraceLens #796), in which case those children are
//!    visited instead;
//! 4. anything else is looked through.
//!
//! Invocations are grouped by (name, category, process, thread, Input Dims,
//! Input type, Input Strides, Concrete Inputs); kernel time is the busy time
//! (interval union) of the linked GPU work in the op's subtree.
//! Composite wrappers (`aten::linear`, `aten::softmax`, …, see
//! [`crate::analysis::perf_model::is_composite`]) are looked through so rows
//! keep TraceLens's keys. Deliberate differences from TraceLens:
//! docs/PERF_MODELS.md.

mod agg;
mod memo;
mod op_tree;
mod replayed;
mod row;
mod sheets;
#[cfg(test)]
mod tests;
mod unified;

use serde::Serialize;

use crate::analysis::comm::CommKernels;
use crate::trace::Trace;
use crate::trace::link::Tree;
use memo::Memo;
use op_tree::OpTree;
use sheets::sheet_rows;
use unified::unified_rows;

pub use agg::Agg;
pub(crate) use op_tree::stops_traversal;
pub(in crate::analysis) use replayed::{CapturedOp, ReplayedCall, replayed_rows};
pub use row::{KernelStats, PerfRow};

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

/// Invocations of the unified table left without a model because their
/// recorded arguments are implausible
/// ([`crate::analysis::perf_model::NoModel::Implausible`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ImplausibleArgs {
    /// How many.
    pub invocations: u64,
    /// The reasons of the first few rows, in order of first invocation.
    pub examples: Vec<String>,
}

impl ImplausibleArgs {
    /// How many reasons [`ImplausibleArgs::examples`] keeps.
    pub const EXAMPLES: usize = 5;
}

/// The unified perf table of a linked trace (see [`perf_report`]).
pub fn perf_rows(trace: &Trace, tree: &Tree) -> Vec<PerfRow> {
    perf_report(trace, tree).rows
}

/// The unified table and the family sheets of a linked trace, with the
/// built-in communication kernels.
pub fn perf_report(trace: &Trace, tree: &Tree) -> PerfReport {
    perf_report_checked(trace, tree, &CommKernels::default()).0
}

/// The unified table and the family sheets of a linked trace, with the
/// unified table's invocations whose arguments are implausible;
/// communication kernels told by `comm`.
pub fn perf_report_checked(
    trace: &Trace,
    tree: &Tree,
    comm: &CommKernels,
) -> (PerfReport, ImplausibleArgs) {
    let ops = OpTree::build(trace, tree, comm);
    let mut memo = Memo::new(trace);
    let collected = ops.collect_unified(trace, tree, &mut memo);
    let (rows, implausible) = unified_rows(trace, &ops, &mut memo, &collected);
    let sheets = sheet_rows(trace, &ops, &mut memo, &collected);
    (PerfReport { rows, sheets }, implausible)
}

/// Adds rows built elsewhere (graph-replayed calls, [`replayed_rows`]) to
/// a report: all to the unified table, the modelled ones to their family's
/// sheet; both re-ranked.
pub(crate) fn add_rows(report: &mut PerfReport, rows: Vec<PerfRow>) {
    if rows.is_empty() {
        return;
    }
    let modelled: Vec<PerfRow> = rows
        .iter()
        .filter(|r| r.family.is_some())
        .cloned()
        .collect();
    report.rows.extend(rows);
    row::rank(&mut report.rows);
    report.sheets.extend(modelled);
    report.sheets = sheets::by_sheet(std::mem::take(&mut report.sheets));
}

/// Ops without a perf model in the unified table, most kernel time first.
pub fn unmodelled(rows: &[PerfRow]) -> Vec<Unmodelled> {
    let mut by_name: Vec<Unmodelled> = Vec::new();
    // Indexed by name: a linear search here made `report --format markdown`
    // quadratic in the number of distinct op names. SipHash, not FxHash:
    // names that differ in their last bytes collide under FxHash.
    let mut index: std::collections::HashMap<&str, usize> = Default::default();
    for row in rows.iter().filter(|r| !r.has_perf_model) {
        match index.get(row.name.as_str()) {
            Some(&at) => {
                let entry = &mut by_name[at];
                entry.count += row.count;
                entry.kernel_time_us += row.kernel_time_us.sum;
            }
            None => {
                index.insert(&row.name, by_name.len());
                by_name.push(Unmodelled {
                    name: row.name.clone(),
                    count: row.count,
                    kernel_time_us: row.kernel_time_us.sum,
                    reason: row.no_model.clone(),
                });
            }
        }
    }
    by_name.sort_by(|a, b| b.kernel_time_us.total_cmp(&a.kernel_time_us));
    by_name
}
