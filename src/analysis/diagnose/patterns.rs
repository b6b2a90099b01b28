//! Patterns the analysis guides name, detected from what a trace shows:
//! unfused attention, many tiny batched GEMMs, layout transposes around
//! convolutions, and short-kernel launch overhead. The elementwise-baseline
//! comparison needs perf models and lives with the prioritisation.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::value::RawValue;

use super::signals::Signals;
use crate::analysis::timeline::{Interval, IntervalSet};
use crate::trace::link::{NONE, Tree};
use crate::trace::{FxHashMap, Kind, Sym, Trace};

/// Which pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PatternKind {
    /// softmax + bmm/matmul (+ mul, copy_) inside one module: attention done
    /// in pieces instead of a fused kernel.
    UnfusedAttention,
    /// Batched GEMMs whose matrices are tiny: launch- and occupancy-bound.
    TinyBatchedGemms,
    /// Layout copies of 4-D tensors in a trace with convolutions: NCHW ↔ NHWC
    /// transposes around the convolutions.
    ConvLayoutTransposes,
    /// Many kernels shorter than 10 µs while the GPU waits on the host.
    LaunchOverhead,
}

/// A detected pattern with the evidence in numbers.
#[derive(Clone, Debug, Serialize)]
pub struct Pattern {
    /// Which pattern.
    pub kind: PatternKind,
    /// One sentence with the numbers.
    pub evidence: String,
    /// GPU time involved, µs.
    pub time_us: f64,
    /// Ops involved (names).
    pub ops: Vec<String>,
}

/// GPU time (union of direct kernels) of every launcher op invocation, with its
/// module scope: the input every pattern here needs.
struct OpTimes {
    /// (op event, direct kernel µs).
    ops: Vec<(u32, f64)>,
}

impl OpTimes {
    fn collect(trace: &Trace, tree: &Tree) -> OpTimes {
        let mut by_op: FxHashMap<u32, Vec<Interval>> = FxHashMap::default();
        for &gpu in &tree.gpu_events {
            let launcher = tree.launcher(gpu);
            if launcher == NONE || trace.events[launcher as usize].kind != Kind::CpuOp {
                continue;
            }
            let event = &trace.events[gpu as usize];
            by_op.entry(launcher).or_default().push(Interval {
                start: event.ts,
                end: event.end(),
            });
        }
        let mut ops: Vec<(u32, f64)> = by_op
            .into_iter()
            .map(|(op, intervals)| (op, IntervalSet::from_intervals(intervals).len()))
            .collect();
        ops.sort_unstable_by_key(|(op, _)| *op);
        OpTimes { ops }
    }
}

/// Detects the patterns in a linked trace and the signals of its analysis.
pub fn detect(trace: &Trace, tree: &Tree, signals: &Signals) -> Vec<Pattern> {
    let times = OpTimes::collect(trace, tree);
    let mut patterns = Vec::new();
    patterns.extend(unfused_attention(trace, tree, &times));
    patterns.extend(tiny_batched_gemms(trace, &times));
    patterns.extend(conv_layout_transposes(trace, &times));
    patterns.extend(launch_overhead(signals));
    patterns
}

fn short_name(name: &str) -> &str {
    name.strip_prefix("aten::").unwrap_or(name)
}

fn unfused_attention(trace: &Trace, tree: &Tree, times: &OpTimes) -> Option<Pattern> {
    #[derive(Default)]
    struct Scope {
        softmax: bool,
        matmul: bool,
        time_us: f64,
        names: Vec<String>,
    }
    let mut scopes: BTreeMap<u32, Scope> = BTreeMap::new();
    for &(op, us) in &times.ops {
        let module = tree.module(trace, op);
        if module == NONE {
            continue;
        }
        let name = short_name(trace.name(&trace.events[op as usize]));
        let is_softmax = name.contains("softmax");
        let is_matmul = matches!(name, "bmm" | "baddbmm" | "matmul");
        let is_glue = matches!(
            name,
            "mul" | "div" | "copy_" | "clone" | "masked_fill" | "add"
        );
        if !(is_softmax || is_matmul || is_glue) {
            continue;
        }
        let scope = scopes.entry(module).or_default();
        scope.softmax |= is_softmax;
        scope.matmul |= is_matmul;
        scope.time_us += us;
        if !scope.names.iter().any(|n| n == name) {
            scope.names.push(name.to_string());
        }
    }
    let hits: Vec<(u32, Scope)> = scopes
        .into_iter()
        .filter(|(_, s)| s.softmax && s.matmul)
        .collect();
    if hits.is_empty() {
        return None;
    }
    let time_us: f64 = hits.iter().map(|(_, s)| s.time_us).sum();
    let example = tree.module_path(trace, hits[0].0).unwrap_or_default();
    let example = if example.is_empty() {
        trace.name(&trace.events[hits[0].0 as usize]).to_string()
    } else {
        example
    };
    let mut ops: Vec<String> = hits
        .iter()
        .flat_map(|(_, s)| s.names.iter().cloned())
        .collect();
    ops.sort();
    ops.dedup();
    Some(Pattern {
        kind: PatternKind::UnfusedAttention,
        evidence: format!(
            "{} module instances (e.g. `{example}`) run softmax and batched matmuls as separate kernels ({}), {:.1} µs of GPU time",
            hits.len(),
            ops.join(", "),
            time_us
        ),
        time_us,
        ops,
    })
}

/// (B, M, K, N) of a batched matmul.
type BmmDims = (i64, i64, i64, i64);

/// `[[B, M, K], [B, K, N], ...]` of a bmm (after the first `skip` inputs),
/// when every input from there on is a list of integers.
fn bmm_dims(raw: &str, skip: usize) -> Option<BmmDims> {
    let inputs: Vec<&RawValue> = serde_json::from_str(raw).ok()?;
    let dims: Vec<Vec<i64>> = inputs
        .get(skip..)?
        .iter()
        .map(|input| serde_json::from_str(input.get()))
        .collect::<Result<_, _>>()
        .ok()?;
    let (a, b) = (dims.first()?, dims.get(1)?);
    if a.len() != 3 || b.len() != 3 {
        return None;
    }
    Some((a[0], a[1], a[2], b[2]))
}

fn tiny_batched_gemms(trace: &Trace, times: &OpTimes) -> Option<Pattern> {
    const TINY: i64 = 64;
    let mut count = 0u64;
    let mut time_us = 0.0;
    let mut example = None;
    // Parsed once per distinct `Input Dims` (and op), not once per call.
    let mut parsed: FxHashMap<(bool, Sym), Option<BmmDims>> = FxHashMap::default();
    for &(op, us) in &times.ops {
        let event = &trace.events[op as usize];
        let name = trace.name(event);
        if !matches!(name, "aten::bmm" | "aten::baddbmm") {
            continue;
        }
        let Some(raw) = trace.op_args(event).and_then(|a| a.input_dims) else {
            continue;
        };
        // baddbmm(self, batch1, batch2, …): the matrices follow `self`.
        let skip = usize::from(name == "aten::baddbmm");
        let dims = *parsed
            .entry((skip == 1, raw))
            .or_insert_with(|| bmm_dims(trace.strings.get(raw), skip));
        let Some((batch, m, k, n)) = dims else {
            continue;
        };
        if m.max(n).max(k) <= TINY && batch >= 64 {
            count += 1;
            time_us += us;
            example.get_or_insert(format!("[{batch}, {m}, {k}] × [{batch}, {k}, {n}]"));
        }
    }
    let example = example?;
    Some(Pattern {
        kind: PatternKind::TinyBatchedGemms,
        evidence: format!(
            "{count} batched GEMM calls with matrices of at most {TINY}×{TINY} (e.g. {example}) take {time_us:.1} µs: \
             too small to fill the GPU; batch them into larger GEMMs or fuse"
        ),
        time_us,
        ops: vec!["aten::bmm".to_string()],
    })
}

fn conv_layout_transposes(trace: &Trace, times: &OpTimes) -> Option<Pattern> {
    let has_conv = times.ops.iter().any(|&(op, _)| {
        let name = trace.name(&trace.events[op as usize]);
        name.contains("convolution") || name.contains("conv2d")
    });
    if !has_conv {
        return None;
    }
    let mut count = 0u64;
    let mut time_us = 0.0;
    // Decided once per distinct (`Input Dims`, `Input Strides`), not once per call.
    let mut transposes: FxHashMap<(Sym, Sym), bool> = FxHashMap::default();
    for &(op, us) in &times.ops {
        let event = &trace.events[op as usize];
        if !matches!(
            trace.name(event),
            "aten::copy_" | "aten::contiguous" | "aten::clone"
        ) {
            continue;
        }
        let Some(args) = trace.op_args(event) else {
            continue;
        };
        let (Some(dims), Some(strides)) = (args.input_dims, args.input_strides) else {
            continue;
        };
        let transposed = *transposes.entry((dims, strides)).or_insert_with(|| {
            let dims: Vec<Vec<i64>> =
                serde_json::from_str(trace.strings.get(dims)).unwrap_or_default();
            let strides: Vec<Vec<i64>> =
                serde_json::from_str(trace.strings.get(strides)).unwrap_or_default();
            let four_d = dims.first().is_some_and(|d| d.len() == 4);
            four_d && strides.len() >= 2 && strides[0] != strides[1]
        });
        if transposed {
            count += 1;
            time_us += us;
        }
    }
    (count > 0).then(|| Pattern {
        kind: PatternKind::ConvLayoutTransposes,
        evidence: format!(
            "{count} copies between 4-D layouts in a convolution model take {time_us:.1} µs: \
             NCHW ↔ NHWC transposes around convolutions; channels_last end to end avoids them"
        ),
        time_us,
        ops: vec!["aten::copy_".to_string()],
    })
}

fn launch_overhead(signals: &Signals) -> Option<Pattern> {
    let (kernels, short) = (signals.kernels, signals.short_kernels);
    let total = signals.timeline.total_time;
    if kernels == 0 || total <= 0.0 {
        return None;
    }
    let short_share = short as f64 / kernels as f64;
    let host_wait_share = signals.host_wait_us / total;
    let short_kernel_us = signals.short_kernel_us;
    (short_share >= 0.5 && host_wait_share >= 0.1).then(|| Pattern {
        kind: PatternKind::LaunchOverhead,
        evidence: format!(
            "{short} of {kernels} kernels ({:.0}%) run under {short_kernel_us} µs and the GPU waits {:.1}% of the time \
             for the host to launch the next one: CUDA graphs or fusion (torch.compile) cut launches",
            short_share * 100.0,
            host_wait_share * 100.0
        ),
        time_us: signals.host_wait_us,
        ops: Vec::new(),
    })
}
