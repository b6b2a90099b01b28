//! Inference steps without a step annotation: found from the trace's
//! repeating structure, so that an engine run without its step
//! `record_function` still splits into steps and phases. Conservative by
//! design — no phases is better than wrong phases:
//!
//! - each CUDA/HIP graph replay (`cudaGraphLaunch`, `hipGraphLaunch`) is one
//!   decode step: vLLM and SGLang capture decode forwards only (prefill runs
//!   eagerly), so replays are tagged decode and eager prefill is not found.
//!   Only in a trace that names the engine (a host event whose name holds
//!   `vllm` or `sglang`, such as a Python frame's file): other programs
//!   replay graphs of other things;
//! - else, the outermost CPU ops of the busiest host thread repeat exactly,
//!   period after period (the model's forward, at least two ops, at least
//!   twice, nothing before or after): each period is a step, tagged by the
//!   query length per sequence of its attention ops — 1 for every one is
//!   decode, more than 1 for every one is prefill. A step that cannot be
//!   tagged so (no attention op with readable shapes, or both lengths)
//!   leaves the whole trace without steps, and so does a trace of prefill
//!   steps only that does not name the engine (a repeated encoder forward
//!   looks the same).
//!
//! Traces with backward ops are training, not inference: nothing is
//! inferred from them.

use crate::analysis::profile::Phase;
use crate::trace::link::{NONE, Tree};
use crate::trace::{Kind, Trace};

/// A step: its phase, the event that names it (the annotation, the graph
/// launch, or the period's first op), and its host range.
pub(super) struct Step {
    pub phase: Phase,
    pub event: u32,
    pub start: f64,
    pub end: f64,
}

/// The steps of a trace with no step annotation, in host-time order, and
/// how they were found (for [`crate::analysis::profile::Phases::recognised_by`]);
/// `None` when the structure does not clearly repeat.
pub(super) fn inferred_steps(trace: &Trace, tree: &Tree) -> Option<(Vec<Step>, String)> {
    let training = trace.events.iter().any(|e| {
        e.kind == Kind::CpuOp && {
            let name = trace.name(e);
            name.contains("Backward") || name.starts_with("autograd::engine")
        }
    });
    if training {
        return None;
    }
    let engine = names_engine(trace);
    let replays = if engine { graph_replays(trace) } else { None };
    replays.or_else(|| {
        repeating_forwards(trace, tree)
            .filter(|(steps, _)| engine || steps.iter().any(|s| s.phase == Phase::Decode))
    })
}

/// Whether a host event names vLLM or SGLang (their Python frames' files,
/// their custom ops).
fn names_engine(trace: &Trace) -> bool {
    trace.events.iter().any(|e| {
        matches!(
            e.kind,
            Kind::PythonFunction | Kind::CpuOp | Kind::UserAnnotation
        ) && {
            let name = trace.name(e);
            name.contains("vllm") || name.contains("sglang")
        }
    })
}

/// Each graph replay as one decode step.
fn graph_replays(trace: &Trace) -> Option<(Vec<Step>, String)> {
    let mut steps: Vec<Step> = trace
        .events
        .iter()
        .enumerate()
        .filter(|(_, e)| {
            e.kind == Kind::Runtime && matches!(trace.name(e), "cudaGraphLaunch" | "hipGraphLaunch")
        })
        .map(|(index, e)| Step {
            phase: Phase::Decode,
            event: index as u32,
            start: e.ts,
            end: e.end(),
        })
        .collect();
    if steps.is_empty() {
        return None;
    }
    steps.sort_by(|a, b| a.start.total_cmp(&b.start));
    let how = format!(
        "repeating structure: {} graph replay{}",
        steps.len(),
        if steps.len() == 1 { "" } else { "s" }
    );
    Some((steps, how))
}

/// Each period of an exactly repeating sequence of outermost CPU ops as one
/// step, tagged by its attention ops.
fn repeating_forwards(trace: &Trace, tree: &Tree) -> Option<(Vec<Step>, String)> {
    let outermost = |index: usize| {
        let mut up = tree.parent[index];
        while up != NONE {
            if trace.events[up as usize].kind == Kind::CpuOp {
                return false;
            }
            up = tree.parent[up as usize];
        }
        true
    };
    // Outermost CPU ops per host thread, in start order.
    let mut by_track: Vec<Vec<u32>> = vec![Vec::new(); trace.tracks.len()];
    for (index, e) in trace.events.iter().enumerate() {
        if e.kind == Kind::CpuOp && outermost(index) {
            by_track[e.track as usize].push(index as u32);
        }
    }
    let ops = by_track.into_iter().max_by_key(Vec::len)?;
    let mut ops = ops;
    ops.sort_by(|&a, &b| {
        let (a, b) = (&trace.events[a as usize], &trace.events[b as usize]);
        a.ts.total_cmp(&b.ts)
    });
    let names: Vec<_> = ops.iter().map(|&o| trace.events[o as usize].name).collect();
    let period = period(&names)?;

    // Attention ops of the thread: (start, end, query length), by start.
    let track = trace.events[ops[0] as usize].track;
    let mut attention: Vec<(f64, f64, u64)> = trace
        .events
        .iter()
        .filter(|e| e.kind == Kind::CpuOp && e.track == track)
        .filter_map(|e| {
            let length = query_length(trace.name(e), || {
                Some(trace.strings.get(trace.op_args(e)?.input_dims?))
            })?;
            Some((e.ts, e.end(), length))
        })
        .collect();
    attention.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut steps = Vec::new();
    for chunk in ops.chunks(period) {
        let first = &trace.events[chunk[0] as usize];
        let end = chunk
            .iter()
            .map(|&o| trace.events[o as usize].end())
            .fold(f64::MIN, f64::max);
        let phase = step_phase(&attention, first.ts, end)?;
        steps.push(Step {
            phase,
            event: chunk[0],
            start: first.ts,
            end,
        });
    }
    let how = format!(
        "repeating structure: {} forwards of {period} ops",
        steps.len()
    );
    Some((steps, how))
}

/// The shortest period of a sequence made of whole periods repeated at
/// least twice; `None` otherwise, or when one item repeats (a forward is
/// more than one op).
fn period<T: PartialEq>(items: &[T]) -> Option<usize> {
    (1..=items.len() / 2)
        .find(|&p| items.len() % p == 0 && items.iter().zip(&items[p..]).all(|(a, b)| a == b))
        .filter(|&p| p > 1)
}

/// The phase of the step within `[start, end]`, from the query length per
/// sequence of its `attention` ops; `None` when none tells or they disagree.
fn step_phase(attention: &[(f64, f64, u64)], start: f64, end: f64) -> Option<Phase> {
    let from = attention.partition_point(|a| a.0 < start);
    let mut lengths = attention[from..]
        .iter()
        .take_while(|a| a.0 <= end)
        .filter(|a| a.1 <= end)
        .map(|a| a.2);
    let first = lengths.next()?;
    let decode = first == 1;
    if lengths.any(|l| (l == 1) != decode) {
        return None;
    }
    Some(if decode {
        Phase::Decode
    } else {
        Phase::Prefill
    })
}

/// Query tokens per sequence of an attention op, from its `Input Dims`
/// (read only for attention ops); `None` for other ops or unreadable shapes.
fn query_length<'a>(name: &str, dims: impl FnOnce() -> Option<&'a str>) -> Option<u64> {
    // Where the query length is: q's dim, or tokens over cu_seqlens_q.
    enum Layout {
        Dim(usize),
        Varlen,
    }
    let layout = match name {
        // q: [batch, heads, length, dim].
        "aten::scaled_dot_product_attention"
        | "aten::_scaled_dot_product_flash_attention"
        | "aten::_scaled_dot_product_efficient_attention"
        | "aten::_scaled_dot_product_cudnn_attention" => Layout::Dim(2),
        // q: [batch, length, heads, dim].
        "aten::_flash_attention_forward" | "flash_attn::_flash_attn_forward" => Layout::Dim(1),
        // q: [tokens, heads, dim], cu_seqlens_q: [sequences + 1].
        "flash_attn::_flash_attn_varlen_forward" => Layout::Varlen,
        _ => return None,
    };
    let dims: Vec<Vec<u64>> = serde_json::from_str::<Vec<serde_json::Value>>(dims()?)
        .ok()?
        .iter()
        .map(|d| {
            d.as_array()
                .map(|d| d.iter().filter_map(serde_json::Value::as_u64).collect())
                .unwrap_or_default()
        })
        .collect();
    let query = dims.first()?;
    let length = match layout {
        Layout::Dim(at) if query.len() == 4 => query[at],
        Layout::Dim(_) => return None,
        Layout::Varlen => {
            let sequences = dims.get(3)?.first()?.checked_sub(1)?;
            (sequences > 0 && query.len() == 3 && query[0] % sequences == 0)
                .then(|| query[0] / sequences)?
        }
    };
    (length > 0).then_some(length)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_period_needs_whole_repeats_of_at_least_two_items() {
        assert_eq!(period(&[1, 2, 1, 2, 1, 2]), Some(2));
        assert_eq!(period(&[1, 2, 3, 1, 2, 3]), Some(3));
        assert_eq!(period(&[1, 2, 1, 2, 1]), None);
        assert_eq!(period(&[1, 1, 1, 1]), None);
        assert_eq!(period(&[1, 2, 3]), None);
        assert_eq!(period::<u8>(&[]), None);
    }

    #[test]
    fn query_length_per_sequence_from_attention_shapes() {
        let sdpa = "aten::scaled_dot_product_attention";
        assert_eq!(
            query_length(sdpa, || Some("[[4, 32, 1, 128], [4, 32, 9, 128]]")),
            Some(1)
        );
        assert_eq!(
            query_length(sdpa, || Some("[[1, 32, 512, 128]]")),
            Some(512)
        );
        let varlen = "flash_attn::_flash_attn_varlen_forward";
        assert_eq!(
            query_length(varlen, || Some("[[1024, 32, 128], [], [], [3], [3]]")),
            Some(512)
        );
        assert_eq!(
            query_length(varlen, || Some("[[4, 32, 128], [], [], [5]]")),
            Some(1)
        );
        assert_eq!(
            query_length("aten::mm", || Some("[[4, 4096], [4096, 4096]]")),
            None
        );
        assert_eq!(query_length(sdpa, || Some("[[4, 32]]")), None);
    }
}
