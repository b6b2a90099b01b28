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
use crate::analysis::perf::{ReplayedCall, stops_traversal};
use crate::trace::Kind;
use crate::trace::link::NONE;

/// The topmost modelled CPU op at or above `op` in the capture trace, else `op`.
fn perf_op(capture: Capture<'_>, op: u32) -> u32 {
    let mut chosen = op;
    let mut current = op;
    while current != NONE {
        let event = &capture.trace.events[current as usize];
        if event.kind == Kind::CpuOp && stops_traversal(capture.trace.name(event)) {
            chosen = current;
        }
        current = capture.tree.parent[current as usize];
    }
    chosen
}

/// The perf table's calls of every replay; `owners` has one entry per work
/// item of each replay.
pub(super) fn perf_calls(
    trace: &crate::trace::Trace,
    gpu: &GpuWork,
    capture: Option<Capture<'_>>,
    replays: &[Replay],
    owners: &[Vec<Owner>],
) -> Vec<ReplayedCall> {
    let mut chosen: HashMap<u32, u32> = HashMap::new();
    let topk = capture.map(super::pseudo_ops::moe_topk).unwrap_or_default();
    let mut out = Vec::new();
    for (replay, owners) in replays.iter().zip(owners) {
        let mut by_op: HashMap<u32, usize> = HashMap::new();
        let mut calls: Vec<ReplayedCall> = Vec::new();
        for (&work, owner) in replay.work.iter().zip(owners) {
            let op = match (owner, capture) {
                (Owner::Op(op), Some(capture)) => {
                    Some(*chosen.entry(*op).or_insert_with(|| perf_op(capture, *op)))
                }
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
        if let Some(capture) = capture {
            calls = calls
                .into_iter()
                .flat_map(|call| super::pseudo_ops::split(trace, gpu, capture, &topk, call))
                .collect();
        }
        for call in &mut calls {
            call.variant = super::rows::variant(trace, gpu, &call.work);
        }
        out.extend(calls);
    }
    out
}
