//! The calls the perf table gets from graph replays: each replayed work
//! item goes to the topmost op with a perf model above the op that
//! launched it during capture (`aiter::gemm_a16w16` rather than the
//! `aten::mm` it calls, as the perf table's tree walk picks in an eager
//! trace), or to that op itself when none above has a model; one call per
//! such op per replay. A MoE call is then split into TraceLens's pseudo
//! ops ([`super::pseudo_ops`]).

use std::collections::HashMap;

use super::Capture;
use super::merge::Owner;
use super::replays::Replay;
use crate::analysis::gpu_work::GpuWork;
use crate::analysis::perf::{CapturedOp, ReplayedCall, stops_traversal};
use crate::trace::Kind;
use crate::trace::link::NONE;

/// The topmost modelled CPU op at or above `op` in its capture trace, else `op`.
fn perf_op(captures: &[Capture<'_>], op: CapturedOp) -> CapturedOp {
    let capture = captures[op.capture as usize];
    let mut chosen = op.op;
    let mut current = op.op;
    while current != NONE {
        let event = &capture.trace.events[current as usize];
        if event.kind == Kind::CpuOp && stops_traversal(capture.trace.name(event)) {
            chosen = current;
        }
        current = capture.tree.parent[current as usize];
    }
    CapturedOp { op: chosen, ..op }
}

/// The perf table's calls of every replay; `owners` has one entry per work
/// item of each replay.
pub(super) fn perf_calls(
    trace: &crate::trace::Trace,
    gpu: &GpuWork,
    captures: &[Capture<'_>],
    replays: &[Replay],
    owners: &[Vec<Owner>],
) -> Vec<ReplayedCall> {
    let mut chosen: HashMap<CapturedOp, CapturedOp> = HashMap::new();
    let topk: Vec<HashMap<u32, u64>> = captures
        .iter()
        .map(|&c| super::pseudo_ops::moe_topk(c))
        .collect();
    let mut out = Vec::new();
    for (replay, owners) in replays.iter().zip(owners) {
        let mut by_op: HashMap<CapturedOp, usize> = HashMap::new();
        let mut calls: Vec<ReplayedCall> = Vec::new();
        for (&work, owner) in replay.work.iter().zip(owners) {
            let op = match owner {
                Owner::Op(op) => Some(*chosen.entry(*op).or_insert_with(|| perf_op(captures, *op))),
                _ => None,
            };
            match op.and_then(|op| by_op.get(&op).map(|&at| (op, at))) {
                Some((_, at)) => calls[at].work.push(work),
                None => {
                    if let Some(op) = op {
                        by_op.insert(op, calls.len());
                    }
                    calls.push(ReplayedCall {
                        op,
                        launch: replay.launch,
                        work: vec![work],
                        variant: String::new(),
                        pseudo: None,
                        topk: None,
                    });
                }
            }
        }
        if !captures.is_empty() {
            calls = calls
                .into_iter()
                .flat_map(|call| super::pseudo_ops::split(trace, gpu, captures, &topk, call))
                .collect();
        }
        for call in &mut calls {
            call.variant = super::rows::variant(trace, gpu, &call.work);
        }
        out.extend(calls);
    }
    out
}
