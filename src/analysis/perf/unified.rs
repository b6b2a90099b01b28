//! The unified table (TraceLens's `unified_perf_summary`): one row per op
//! and argument set among the invocations the tree walk collected.

use super::ImplausibleArgs;
use super::memo::Memo;
use super::op_tree::{Collected, OpTree};
use super::row::{
    Group, Invocation, OpKey, OpSyms, PerfRow, build_row, invocation, op_key, op_syms, rank,
    raw_args,
};
use crate::analysis::ops::slots::Slots;
use crate::analysis::perf_model::NoModel;
use crate::trace::Trace;

/// The unified table's rows, ranked by kernel time, and its invocations
/// whose arguments are implausible.
pub(super) fn unified_rows(
    trace: &Trace,
    ops: &OpTree,
    memo: &mut Memo,
    collected: &[Collected],
) -> (Vec<PerfRow>, ImplausibleArgs) {
    let invocations: Vec<Invocation> = collected
        .iter()
        .map(|c| invocation(trace, ops, memo, c.op, c.forward))
        .collect();
    let mut slots: Slots<OpSyms, OpKey> = Slots::default();
    let mut groups: Vec<Group> = Vec::new();
    for inv in &invocations {
        let cheap = op_syms(trace, ops, memo, inv.op);
        let (slot, opened) = slots.slot(cheap, groups.len(), || op_key(trace, ops, memo, inv.op));
        if let Some(key) = opened {
            groups.push((key, raw_args(trace, inv.op), Vec::new()));
        }
        groups[slot].2.push(inv);
    }
    let mut implausible = ImplausibleArgs::default();
    for (_, _, group) in &groups {
        if let Err(reason @ NoModel::Implausible { .. }) = group[0].model() {
            implausible.invocations += group.len() as u64;
            if implausible.examples.len() < ImplausibleArgs::EXAMPLES {
                implausible.examples.push(reason.to_string());
            }
        }
    }
    let mut rows: Vec<PerfRow> = groups
        .iter()
        .map(|(key, raw, group)| build_row(trace, key, raw, group))
        .collect();
    rank(&mut rows);
    (rows, implausible)
}
