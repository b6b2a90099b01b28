//! The family sheets (TraceLens's `GEMM`, `SDPA_fwd`, … sheets): every
//! invocation of a modelled op, nested or CPU-only ones included, grouped by
//! family, name and model parameters.

use super::memo::{Memo, ModelKey};
use super::op_tree::{Collected, OpTree, stops_traversal};
use super::row::{Group, Invocation, PerfRow, build_row, invocation, op_key, rank, raw_args};
use crate::analysis::ops::slots::Slots;
use crate::analysis::perf_model::Family;
use crate::trace::{Kind, Sym, Trace};

/// The family sheets' rows, family by family in sheet order, each ranked
/// by kernel time.
pub(super) fn sheet_rows(
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
        .filter(|inv| inv.model().is_ok())
        .collect();
    // Rows group by (family, name, model parameters); the op name and the
    // model's key decide all three, so parameters are compared once per key.
    type SheetKey = (Family, String, Vec<(String, String)>);
    let mut slots: Slots<(Sym, ModelKey), SheetKey> = Slots::default();
    let mut groups: Vec<Group> = Vec::new();
    for inv in &invocations {
        let model = inv.model().expect("modelled");
        let name = trace.events[inv.op as usize].name;
        let (slot, opened) = slots.slot((name, inv.model_key), groups.len(), || {
            (
                model.family,
                trace.strings.get(name).to_string(),
                model.params.clone(),
            )
        });
        if opened.is_some() {
            groups.push((
                op_key(trace, ops, memo, inv.op),
                raw_args(trace, inv.op),
                Vec::new(),
            ));
        }
        groups[slot].2.push(inv);
    }
    let rows: Vec<PerfRow> = groups
        .iter()
        .map(|(key, raw, group)| build_row(trace, key, raw, group))
        .collect();
    by_sheet(rows)
}

/// Rows ordered family sheet by family sheet (in sheet order), each sheet
/// ranked by kernel time.
pub(super) fn by_sheet(mut rows: Vec<PerfRow>) -> Vec<PerfRow> {
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
