//! The unified table (TraceLens's `unified_perf_summary`): one row per op
//! and argument set among the invocations the tree walk collected.

use super::op_tree::{Collected, OpTree};
use super::row::{Group, Invocation, Memo, OpKey, PerfRow, build_row, invocation, op_key, rank};
use crate::trace::Trace;

/// The unified table's rows, ranked by kernel time.
pub(super) fn unified_rows(
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
