//! TraceLens's pseudo ops for replayed calls: a `vllm::moe_forward` call
//! running Triton's `matmul_ogs` kernels is split as TraceLens splits it in
//! its trace tree, each expert GEMM a call of its own
//! (`pseudo_op::moe_triton_unfused_up` for the first in start order,
//! `…_down` for each later one) and the `…matmul_scatter` kernel another
//! (`…_finalize_matmul_scatter`), so the projections get a perf model
//! ([`crate::analysis::perf_model::moe`]) instead of one unmodelled row
//! holding most of a GPT-OSS decode step. The rest of the call's work stays
//! with `moe_forward`. A call with no expert GEMM, or with more than one
//! scatter kernel (which TraceLens leaves whole), is not split.

use std::collections::HashMap;

use super::Capture;
use crate::analysis::gpu_work::GpuWork;
use crate::analysis::perf::ReplayedCall;
use crate::analysis::perf_model::moe;
use crate::trace::link::NONE;
use crate::trace::{Kind, Trace};

/// The k of each `moe_forward` op's routing, from the `TopK` op under it
/// (its second concrete input), by the MoE op's index in the capture.
pub(super) fn moe_topk(capture: Capture<'_>) -> HashMap<u32, u64> {
    let trace = capture.trace;
    let mut out = HashMap::new();
    for event in trace.events.iter().filter(|e| e.kind == Kind::CpuOp) {
        if trace.name(event) != "TopK" {
            continue;
        }
        let shape = crate::analysis::perf_model::OpShape::of_event(trace, event);
        let k = shape
            .concrete_inputs
            .and_then(|raw| serde_json::from_str::<Vec<serde_json::Value>>(raw).ok())
            .and_then(|items| items.get(1)?.as_str()?.trim().parse::<u64>().ok());
        let Some(k) = k else { continue };
        let mut current = capture.tree.parent[event.index as usize];
        while current != NONE {
            let ancestor = &trace.events[current as usize];
            if ancestor.kind == Kind::CpuOp && trace.name(ancestor) == moe::MOE_FORWARD {
                out.entry(current).or_insert(k);
                break;
            }
            current = capture.tree.parent[current as usize];
        }
    }
    out
}

/// Splits `call` into its pseudo-op calls (the call itself first, keeping
/// the work no pseudo op takes, when any is left); `call` unchanged when
/// it is no MoE call TraceLens splits. `topk` is [`moe_topk`]'s, per capture.
pub(super) fn split(
    trace: &Trace,
    gpu: &GpuWork,
    captures: &[Capture<'_>],
    topk: &[HashMap<u32, u64>],
    call: ReplayedCall,
) -> Vec<ReplayedCall> {
    let Some(op) = call.op else {
        return vec![call];
    };
    let capture = captures[op.capture as usize].trace;
    if capture.name(&capture.events[op.op as usize]) != moe::MOE_FORWARD {
        return vec![call];
    }
    let kernel = |w: u32| trace.name(&trace.events[gpu.items[w as usize].event as usize]);
    let mut gemms: Vec<u32> = call
        .work
        .iter()
        .copied()
        .filter(|&w| moe::is_expert_gemm(kernel(w)))
        .collect();
    let scatter: Vec<u32> = call
        .work
        .iter()
        .copied()
        .filter(|&w| moe::is_finalize(kernel(w)))
        .collect();
    if gemms.is_empty() || scatter.len() > 1 {
        return vec![call];
    }
    gemms.sort_by(|&a, &b| {
        gpu.items[a as usize]
            .interval
            .start
            .total_cmp(&gpu.items[b as usize].interval.start)
    });
    let topk = topk[op.capture as usize].get(&op.op).copied();
    let pseudo = |work: u32, name: &'static str| ReplayedCall {
        op: Some(op),
        launch: call.launch,
        work: vec![work],
        variant: String::new(),
        pseudo: Some(name),
        topk,
    };
    let mut split: Vec<ReplayedCall> = gemms
        .iter()
        .enumerate()
        .map(|(i, &w)| pseudo(w, moe::pseudo_op(i)))
        .chain(scatter.iter().map(|&w| pseudo(w, moe::FINALIZE)))
        .collect();
    let rest: Vec<u32> = call
        .work
        .iter()
        .copied()
        .filter(|w| !gemms.contains(w) && !scatter.contains(w))
        .collect();
    if !rest.is_empty() {
        split.insert(0, ReplayedCall { work: rest, ..call });
    }
    split
}
