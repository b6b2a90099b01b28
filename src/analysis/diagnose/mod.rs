//! Diagnose: what limits the workload, with the evidence in numbers — the
//! primary bottleneck, prioritised ops with their two improvement paths and
//! impact projections, and the patterns the analysis guides name.
//!
//! Thresholds are the guides' (docs/ANALYSIS.md): efficiency > 80% excellent,
//! 60–80% good, 40–60% acceptable, < 40% investigate; priority critical =
//! > 15% of compute time and < 30% efficiency, high = > 10% or < 40%, medium =
//! > 5% or a notable pattern, low = the rest.

pub mod patterns;
mod signals;

use serde::Serialize;

use crate::analysis::hardware::ComputeSpec;
use crate::analysis::ops::stats::percent;
use patterns::{Pattern, PatternKind};
pub use signals::Signals;

/// An op row with a perf model, as the diagnosis needs it.
#[derive(Clone, Debug)]
pub struct ModelledOp {
    /// Op name.
    pub name: String,
    /// `Input Dims`, Python tuple.
    pub input_dims: String,
    /// `Input type`, Python tuple.
    pub input_type: String,
    /// Perf-model family (e.g. `GEMM`, `SDPA_fwd`, `BinaryElementwise`).
    pub family: String,
    /// Invocations.
    pub count: u64,
    /// Kernel time over all invocations, µs.
    pub kernel_time_us: f64,
    /// FLOPs of one invocation.
    pub flops: f64,
    /// Bytes moved by one invocation.
    pub bytes: f64,
    /// What the peak is looked up by (`None` for integer or boolean work).
    pub compute_spec: Option<ComputeSpec>,
}

/// The peaks of the platform the trace ran on.
#[derive(Clone, Debug, Serialize)]
pub struct Peaks {
    /// Catalog name of the GPU.
    pub gpu: String,
    /// Peak HBM bandwidth, TB/s.
    pub hbm_tb_s: f64,
    /// Dense peak TFLOP/s for each compute spec the modelled ops use.
    pub tflops: Vec<(ComputeSpec, f64)>,
}

impl Peaks {
    fn tflops(&self, spec: ComputeSpec) -> Option<f64> {
        self.tflops
            .iter()
            .find(|(s, _)| *s == spec)
            .map(|(_, t)| *t)
    }
}

/// The primary bottleneck classes of the analysis guides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Bottleneck {
    /// Most kernel time is in ops whose intensity is above the ridge point.
    ComputeBound,
    /// Most kernel time is in ops whose intensity is below the ridge point.
    MemoryBound,
    /// The GPU idles waiting for the host to launch many short kernels.
    LaunchOverhead,
    /// Collective communication not hidden under computation.
    CommunicationBound,
    /// The host blocks on the device and the GPU idles meanwhile.
    SyncBound,
    /// Not enough modelled GPU work to say.
    Undetermined,
}

impl Bottleneck {
    /// Human wording.
    pub fn label(self) -> &'static str {
        match self {
            Bottleneck::ComputeBound => "compute-bound",
            Bottleneck::MemoryBound => "memory-bound",
            Bottleneck::LaunchOverhead => "launch-overhead",
            Bottleneck::CommunicationBound => "communication-bound",
            Bottleneck::SyncBound => "sync-bound",
            Bottleneck::Undetermined => "undetermined",
        }
    }
}

/// One number behind a classification.
#[derive(Clone, Debug, Serialize)]
pub struct Evidence {
    /// What was measured.
    pub metric: String,
    /// Its value, formatted with its unit.
    pub value: String,
    /// What it is compared with.
    pub threshold: String,
}

/// Which resource bounds an op.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// Arithmetic intensity at or above the ridge point.
    Compute,
    /// Below it.
    Memory,
}

/// Priority of an op for optimisation work.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Priority {
    /// > 15% of compute time and < 30% efficiency.
    Critical,
    /// > 10% of compute time, or < 40% efficiency.
    High,
    /// > 5% of compute time, or part of a notable pattern.
    Medium,
    /// The rest.
    Low,
}

/// An op's time if it reached a fraction of its roofline.
#[derive(Clone, Debug, Serialize)]
pub struct Projection {
    /// Target efficiency, % of roofline.
    pub target_efficiency: f64,
    /// The op's total kernel time at that efficiency, µs.
    pub time_us: f64,
    /// End-to-end GPU time saved, % of the timeline's total time.
    pub e2e_saving_percent: f64,
}

/// One op judged against the hardware.
#[derive(Clone, Debug, Serialize)]
pub struct OpAssessment {
    /// Op name.
    pub name: String,
    /// `Input Dims`.
    pub input_dims: String,
    /// `Input type`.
    pub input_type: String,
    /// Perf-model family.
    pub family: String,
    /// Invocations.
    pub count: u64,
    /// Kernel time, µs.
    pub kernel_time_us: f64,
    /// Share of computation time, %.
    pub share_of_compute: f64,
    /// FLOP per byte; 0 when the model moves no bytes (empty tensors: no
    /// FLOPs either), never infinite.
    pub intensity: f64,
    /// Achieved TFLOP/s (mean over invocations).
    pub achieved_tflops: f64,
    /// Achieved TB/s (mean over invocations).
    pub achieved_tb_s: f64,
    /// Compute spec the peak was looked up by.
    pub compute_spec: Option<ComputeSpec>,
    /// Compute or memory bound (from the ridge point, or the 100/50 FLOP/B
    /// rule of thumb when the hardware is unknown; `None` in between).
    pub bound: Option<Bound>,
    /// Roofline time of all invocations, µs (hardware known).
    pub roofline_time_us: Option<f64>,
    /// Roofline time / measured time, % (hardware known).
    pub efficiency: Option<f64>,
    /// Priority.
    pub priority: Priority,
    /// Path A: fusion or algorithmic change.
    pub path_a: String,
    /// Path B: kernel tuning only, with a replay package.
    pub path_b: String,
    /// Impact if the op reached 50% and 80% of roofline.
    pub projections: Vec<Projection>,
}

/// The whole diagnosis.
#[derive(Clone, Debug, Serialize)]
pub struct Diagnosis {
    /// The primary bottleneck.
    pub primary: Bottleneck,
    /// The numbers behind it.
    pub evidence: Vec<Evidence>,
    /// Peaks used, when the GPU is known.
    pub peaks: Option<Peaks>,
    /// Modelled ops, highest priority then most time first.
    pub ops: Vec<OpAssessment>,
    /// Detected patterns.
    pub patterns: Vec<Pattern>,
    /// Best TB/s simple elementwise ops reach in this trace, the yardstick
    /// for other memory-bound ops.
    pub elementwise_baseline_tb_s: Option<f64>,
    /// Memory-bound ops well below that yardstick.
    pub below_elementwise_baseline: Vec<String>,
    /// What a trace cannot show, and what to say instead.
    pub cannot_infer: Vec<(String, String)>,
}

/// Ops below this share of compute time are not escalated for low efficiency alone, %.
const MIN_SHARE_FOR_EFFICIENCY_PRIORITY: f64 = 1.0;
/// A memory-bound op below this fraction of the elementwise baseline is flagged.
const BELOW_BASELINE_FRACTION: f64 = 0.5;

/// Diagnoses an analysis from its signals, its modelled ops, the platform's
/// peaks and the detected patterns.
pub fn diagnose(
    signals: &Signals,
    modelled: &[ModelledOp],
    peaks: Option<Peaks>,
    patterns: Vec<Pattern>,
) -> Diagnosis {
    let compute_us = signals.timeline.computation_time;
    let total_us = signals.timeline.total_time;
    let pattern_ops: Vec<&str> = patterns
        .iter()
        .flat_map(|p| p.ops.iter().map(String::as_str))
        .collect();
    let mut ops: Vec<OpAssessment> = modelled
        .iter()
        .filter(|op| op.count > 0 && op.kernel_time_us > 0.0)
        .map(|op| assess(op, peaks.as_ref(), compute_us, total_us, &pattern_ops))
        .collect();
    ops.sort_by(|a, b| {
        a.priority
            .cmp(&b.priority)
            .then(b.kernel_time_us.total_cmp(&a.kernel_time_us))
    });
    let (elementwise_baseline_tb_s, below_elementwise_baseline) = elementwise_baseline(&ops);
    let (primary, evidence) = classify(signals, &ops);
    Diagnosis {
        primary,
        evidence,
        peaks,
        ops,
        patterns,
        elementwise_baseline_tb_s,
        below_elementwise_baseline,
        cannot_infer: cannot_infer(),
    }
}

fn assess(
    op: &ModelledOp,
    peaks: Option<&Peaks>,
    compute_us: f64,
    total_us: f64,
    pattern_ops: &[&str],
) -> OpAssessment {
    let mean_us = op.kernel_time_us / op.count as f64;
    let intensity = if op.bytes > 0.0 {
        op.flops / op.bytes
    } else {
        f64::INFINITY
    };
    // flops / µs = MFLOP/s; / 1e6 → TFLOP/s. bytes / µs = MB/s; / 1e6 → TB/s.
    let achieved_tflops = op.flops / mean_us / 1e6;
    let achieved_tb_s = op.bytes / mean_us / 1e6;
    let peak_tflops = peaks
        .zip(op.compute_spec)
        .and_then(|(p, spec)| p.tflops(spec));
    let hbm = peaks.map(|p| p.hbm_tb_s);
    let roofline_per_call_us = match (peak_tflops, hbm) {
        (Some(tflops), Some(tb_s)) if tflops > 0.0 && tb_s > 0.0 => {
            Some((op.flops / (tflops * 1e6)).max(op.bytes / (tb_s * 1e6)))
        }
        (None, Some(tb_s)) if tb_s > 0.0 && op.flops == 0.0 => Some(op.bytes / (tb_s * 1e6)),
        _ => None,
    };
    let bound = match (peak_tflops, hbm) {
        (Some(tflops), Some(tb_s)) if tb_s > 0.0 => Some(if intensity >= tflops / tb_s {
            Bound::Compute
        } else {
            Bound::Memory
        }),
        _ if intensity > 100.0 => Some(Bound::Compute),
        _ if intensity < 50.0 => Some(Bound::Memory),
        _ => None,
    };
    let roofline_time_us = roofline_per_call_us.map(|r| r * op.count as f64);
    let efficiency = roofline_time_us.map(|r| r / op.kernel_time_us * 100.0);
    let share_of_compute = percent(op.kernel_time_us, compute_us);
    let in_pattern = pattern_ops.contains(&op.name.as_str());
    let priority = priority(share_of_compute, efficiency, in_pattern);
    let projections = roofline_time_us
        .map(|roofline| {
            [50.0, 80.0]
                .into_iter()
                .map(|target| {
                    let time_us = roofline / (target / 100.0);
                    let saved = (op.kernel_time_us - time_us).max(0.0);
                    Projection {
                        target_efficiency: target,
                        time_us,
                        e2e_saving_percent: percent(saved, total_us),
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    let (path_a, path_b) = paths(&op.family, bound);
    OpAssessment {
        name: op.name.clone(),
        input_dims: op.input_dims.clone(),
        input_type: op.input_type.clone(),
        family: op.family.clone(),
        count: op.count,
        kernel_time_us: op.kernel_time_us,
        share_of_compute,
        // Classified above as if infinite; reported finite (JSON has no ∞).
        intensity: if intensity.is_finite() {
            intensity
        } else {
            0.0
        },
        achieved_tflops,
        achieved_tb_s,
        compute_spec: op.compute_spec,
        bound,
        roofline_time_us,
        efficiency,
        priority,
        path_a,
        path_b,
        projections,
    }
}

/// The guides' priority rules; low efficiency escalates only ops with at
/// least [`MIN_SHARE_FOR_EFFICIENCY_PRIORITY`] of compute time, so a 0.01% op
/// at 5% efficiency does not crowd the list.
pub fn priority(share_of_compute: f64, efficiency: Option<f64>, in_pattern: bool) -> Priority {
    let relevant_efficiency =
        efficiency.filter(|_| share_of_compute >= MIN_SHARE_FOR_EFFICIENCY_PRIORITY);
    if share_of_compute > 15.0 && relevant_efficiency.is_some_and(|e| e < 30.0) {
        Priority::Critical
    } else if share_of_compute > 10.0 || relevant_efficiency.is_some_and(|e| e < 40.0) {
        Priority::High
    } else if share_of_compute > 5.0 || in_pattern {
        Priority::Medium
    } else {
        Priority::Low
    }
}

/// Path A (fusion/algorithmic) and Path B (kernel tuning) for a family.
pub fn paths(family: &str, bound: Option<Bound>) -> (String, String) {
    let replay = "a replay package reproduces the call for the kernel team";
    let (a, b): (&str, String) = match family {
        "GEMM" => (
            "fuse the bias/activation epilogue into the GEMM (torch.compile or a fused linear), and batch small GEMMs that share weights",
            format!(
                "tune or select a better GEMM kernel for this shape (e.g. PyTorch TunableOp, hipBLASLt/cuBLASLt heuristics); {replay}"
            ),
        ),
        "SDPA_fwd" | "SDPA_bwd" => (
            "use a fused flash-attention backend (torch.nn.functional.scaled_dot_product_attention with the flash or cuDNN backend) and keep Q/K/V contiguous in the layout it expects",
            format!(
                "tune the attention kernel's tile sizes for this head dimension and sequence length; {replay}"
            ),
        ),
        "CONV_fwd" | "CONV_bwd" => (
            "run the model in channels_last end to end so convolutions avoid layout transposes; fuse bias and activation",
            format!(
                "enable the convolution autotuner (cudnn.benchmark / MIOpen find mode) for this shape; {replay}"
            ),
        ),
        "Normalization" | "NORM_fwd" | "NORM_bwd" => (
            "fuse the normalisation with its neighbours (residual add, activation) or use a fused RMSNorm/LayerNorm kernel",
            format!("check the kernel reaches the elementwise baseline bandwidth; {replay}"),
        ),
        _ if bound == Some(Bound::Compute) => (
            "restructure the computation to use matrix units (batch it into a GEMM) or fuse it with its consumer",
            format!("tune the kernel's launch configuration; {replay}"),
        ),
        _ => (
            "fuse this memory-bound op with its producer or consumer (torch.compile) so the tensor is read and written once",
            format!(
                "compare its bandwidth with the elementwise baseline and vectorise the kernel; {replay}"
            ),
        ),
    };
    (a.to_string(), b)
}

/// What kind of work an op is, for advice: its perf family or category,
/// refined by its name where the category cannot tell (an embedding lookup
/// is `other`, or looked like a GEMM by its `fbgemm` kernels; a copy is
/// `elementwise`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    /// Embedding lookups (`aten::embedding`, fbgemm's split table batched lookups).
    Embedding,
    /// Normalisations.
    Norm,
    /// Fused attention.
    Attention,
    /// Matrix multiplies.
    Gemm,
    /// Convolutions.
    Conv,
    /// Elementwise ops, softmax, reductions.
    Elementwise,
    /// Collective and point-to-point communication.
    Communication,
    /// Copies and dtype/layout/device conversions.
    Copy,
}

impl OpKind {
    /// The kind of op `name` with perf family or category `family`; `None`
    /// when neither says (an `other` op without a perf model, a runtime
    /// call, a Triton kernel).
    pub fn of(name: &str, family: &str) -> Option<OpKind> {
        let lower = name.to_ascii_lowercase();
        if lower.contains("embedding") || lower.contains("splitlookup") {
            return Some(OpKind::Embedding);
        }
        let copy = [
            "aten::copy_",
            "aten::to",
            "aten::_to_copy",
            "aten::clone",
            "aten::contiguous",
        ];
        if copy.contains(&name) || lower.contains("memcpy") {
            return Some(OpKind::Copy);
        }
        Some(match family {
            "GEMM" => OpKind::Gemm,
            "SDPA_fwd" | "SDPA_bwd" => OpKind::Attention,
            "CONV_fwd" | "CONV_bwd" => OpKind::Conv,
            "Normalization" | "NORM_fwd" | "NORM_bwd" => OpKind::Norm,
            "comm" => OpKind::Communication,
            "elementwise" | "UnaryElementwise" | "BinaryElementwise" | "softmax" | "reduce"
            | "Reduce_fwd" => OpKind::Elementwise,
            _ => return None,
        })
    }
}

/// Path A and Path B for a slower op, by its kind ([`OpKind::of`]);
/// `None` when there is nothing specific to say.
pub fn op_paths(name: &str, family: &str, bound: Option<Bound>) -> Option<(String, String)> {
    let replay = "a replay package reproduces the call for the kernel team";
    let (a, b) = match OpKind::of(name, family) {
        Some(OpKind::Embedding) => (
            "check the lookups' inputs first (more indices per bag, a skewed index distribution, larger tables): they set an embedding's cost; keep the tables' dtype and cache placement".to_string(),
            format!(
                "tune the lookup kernel (fbgemm's table-batched embedding: its cache and optimizer variants) for this table layout; {replay}"
            ),
        ),
        Some(OpKind::Copy) => (
            "avoid the copy: keep tensors in the dtype, layout and device their consumer wants (no .contiguous() or .to() in the hot path); host copies: pinned memory and non_blocking=True".to_string(),
            "check the copy reaches the memory bandwidth (PCIe or the link for host and peer copies) and that it is not waiting on a synchronisation".to_string(),
        ),
        Some(OpKind::Communication) => (
            "overlap the communication with computation (bucket sizes, async collectives), or send fewer, larger messages".to_string(),
            "compare its bus bandwidth with the link's and check the collective library's settings (algorithm, protocol, channels) and the topology".to_string(),
        ),
        Some(OpKind::Gemm | OpKind::Attention | OpKind::Conv | OpKind::Norm) => paths(family, bound),
        Some(OpKind::Elementwise) => paths("elementwise", bound),
        None => match bound {
            Some(_) => paths(family, bound),
            None => return None,
        },
    };
    Some((a, b))
}

fn is_simple_elementwise(family: &str) -> bool {
    matches!(family, "UnaryElementwise" | "BinaryElementwise")
}

fn elementwise_baseline(ops: &[OpAssessment]) -> (Option<f64>, Vec<String>) {
    // Only ops with enough calls and time to be a stable yardstick.
    let baseline = ops
        .iter()
        .filter(|op| is_simple_elementwise(&op.family) && op.kernel_time_us >= 20.0)
        .map(|op| op.achieved_tb_s)
        .filter(|tb_s| tb_s.is_finite())
        .max_by(f64::total_cmp);
    let Some(baseline) = baseline else {
        return (None, Vec::new());
    };
    let below = ops
        .iter()
        .filter(|op| op.bound == Some(Bound::Memory) && op.share_of_compute >= MIN_SHARE_FOR_EFFICIENCY_PRIORITY)
        // Matrix-unit families have their own roofline story; the baseline is
        // for ops that only stream memory.
        .filter(|op| !matches!(op.family.as_str(), "GEMM" | "SDPA_fwd" | "SDPA_bwd" | "CONV_fwd" | "CONV_bwd"))
        .filter(|op| op.achieved_tb_s < baseline * BELOW_BASELINE_FRACTION)
        .map(|op| {
            format!(
                "{} {} reaches {:.2} TB/s, {:.0}% of the {:.2} TB/s that simple elementwise ops reach in this trace",
                op.name,
                op.input_dims,
                op.achieved_tb_s,
                op.achieved_tb_s / baseline * 100.0,
                baseline
            )
        })
        .collect();
    (Some(baseline), below)
}

fn classify(signals: &Signals, ops: &[OpAssessment]) -> (Bottleneck, Vec<Evidence>) {
    let t = &signals.timeline;
    let total = t.total_time;
    let pct = |part: f64| percent(part, total);
    let mut evidence = vec![
        Evidence {
            metric: "computation".into(),
            value: format!("{:.1}% of GPU time", pct(t.computation_time)),
            threshold: "< 95% → look at comm, copies and idle first".into(),
        },
        Evidence {
            metric: "exposed communication".into(),
            value: format!("{:.1}%", pct(t.exposed_comm_time)),
            threshold: "≥ 15% → communication-bound".into(),
        },
        Evidence {
            metric: "idle waiting for the host".into(),
            value: format!("{:.1}%", pct(signals.host_wait_us)),
            threshold: "≥ 20% with mostly short kernels → launch-overhead".into(),
        },
    ];
    if total <= 0.0 {
        return (Bottleneck::Undetermined, evidence);
    }
    if pct(t.exposed_comm_time) >= 15.0 {
        return (Bottleneck::CommunicationBound, evidence);
    }
    let sync_share = percent(signals.sync_time_us, signals.host_span_us);
    evidence.push(Evidence {
        metric: "host blocked in synchronisation".into(),
        value: format!("{sync_share:.1}% of the host span"),
        threshold: "≥ 20% with ≥ 20% GPU idle → sync-bound".into(),
    });
    let (kernels, short) = (signals.kernels, signals.short_kernels);
    let short_share = if kernels > 0 {
        short as f64 / kernels as f64 * 100.0
    } else {
        0.0
    };
    evidence.push(Evidence {
        metric: "kernels under 10 µs".into(),
        value: format!("{short_share:.0}% of {kernels}"),
        threshold: "≥ 50% → launch overhead likely".into(),
    });
    if pct(signals.host_wait_us) >= 20.0 && short_share >= 50.0 {
        return (Bottleneck::LaunchOverhead, evidence);
    }
    if sync_share >= 20.0 && pct(t.idle_time) >= 20.0 {
        return (Bottleneck::SyncBound, evidence);
    }
    let (mut compute, mut memory) = (0.0, 0.0);
    for op in ops {
        match op.bound {
            Some(Bound::Compute) => compute += op.kernel_time_us,
            Some(Bound::Memory) => memory += op.kernel_time_us,
            None => {}
        }
    }
    let modelled = compute + memory;
    evidence.push(Evidence {
        metric: "modelled kernel time in compute-bound ops".into(),
        value: format!(
            "{:.1}% ({:.1}% memory-bound)",
            percent(compute, modelled),
            percent(memory, modelled)
        ),
        threshold: "the larger side names the bottleneck".into(),
    });
    if modelled <= 0.0 {
        if pct(signals.host_wait_us) >= 20.0 {
            return (Bottleneck::LaunchOverhead, evidence);
        }
        return (Bottleneck::Undetermined, evidence);
    }
    (
        if compute >= memory {
            Bottleneck::ComputeBound
        } else {
            Bottleneck::MemoryBound
        },
        evidence,
    )
}

/// The guides' "what you cannot infer" table: what a trace does not show and
/// what to say instead.
pub fn cannot_infer() -> Vec<(String, String)> {
    [
        (
            "Bank conflicts",
            "Low efficiency: profile the replay package with a kernel profiler to diagnose",
        ),
        (
            "Memory coalescing",
            "Replay package provided for kernel-team investigation",
        ),
        ("Occupancy", "Kernel running slower than its roofline"),
        (
            "Cache hit rates",
            "A large working set may exceed the cache",
        ),
        (
            "Specific root causes",
            "Traces show what, not why: bottleneck identified, reproducer attached",
        ),
    ]
    .into_iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect()
}

/// Whether a pattern kind names ops as medium priority.
pub fn pattern_is_notable(kind: PatternKind) -> bool {
    !matches!(kind, PatternKind::LaunchOverhead)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_follow_the_op_kind_and_say_nothing_without_one() {
        let (a, _) = op_paths(
            "torch::autograd::CppNode<SplitLookupFunction_rowwise_adagrad_Op>",
            "GEMM",
            None,
        )
        .expect("an embedding has advice");
        assert!(a.contains("lookups") && !a.contains("GEMM"), "{a}");
        assert_eq!(OpKind::of("aten::copy_", "elementwise"), Some(OpKind::Copy));
        assert_eq!(
            OpKind::of("nccl:all_reduce", "comm"),
            Some(OpKind::Communication)
        );
        assert_eq!(OpKind::of("aten::mm", "GEMM"), Some(OpKind::Gemm));
        assert_eq!(op_paths("my::custom_op", "other", None), None);
    }

    #[test]
    fn priorities_follow_the_guides() {
        assert_eq!(priority(20.0, Some(25.0), false), Priority::Critical);
        assert_eq!(priority(20.0, Some(50.0), false), Priority::High);
        assert_eq!(priority(12.0, None, false), Priority::High);
        assert_eq!(priority(3.0, Some(35.0), false), Priority::High);
        assert_eq!(priority(0.5, Some(5.0), false), Priority::Low);
        assert_eq!(priority(6.0, Some(90.0), false), Priority::Medium);
        assert_eq!(priority(1.0, Some(90.0), true), Priority::Medium);
        assert_eq!(priority(1.0, Some(90.0), false), Priority::Low);
    }

    fn gemm(kernel_time_us: f64, count: u64) -> ModelledOp {
        ModelledOp {
            name: "aten::mm".into(),
            input_dims: "((4096, 4096), (4096, 4096))".into(),
            input_type: "('c10::BFloat16', 'c10::BFloat16')".into(),
            family: "GEMM".into(),
            count,
            kernel_time_us,
            flops: 2.0 * 4096f64.powi(3),
            bytes: 3.0 * 4096.0 * 4096.0 * 2.0,
            compute_spec: Some(ComputeSpec::MatrixBf16),
        }
    }

    fn h100() -> Peaks {
        Peaks {
            gpu: "H100 SXM".into(),
            hbm_tb_s: 3.35,
            tflops: vec![(ComputeSpec::MatrixBf16, 990.0)],
        }
    }

    #[test]
    fn roofline_efficiency_and_projection_by_hand() {
        // 2·4096³ = 137.4 GFLOP at 990 TFLOP/s = 138.83 µs per call; bytes
        // 100.7 MB at 3.35 TB/s = 30.05 µs, so compute-bound.
        let per_call_roofline = 2.0 * 4096f64.powi(3) / 990e6;
        let op = gemm(4.0 * per_call_roofline, 2);
        let a = assess(&op, Some(&h100()), 1000.0, 2000.0, &[]);
        assert_eq!(a.bound, Some(Bound::Compute));
        let roofline = a.roofline_time_us.expect("known hardware");
        assert!((roofline - 2.0 * 138.827).abs() < 0.01, "{roofline}");
        assert!((a.efficiency.expect("known") - 50.0).abs() < 0.01);
        // At 80% the op would take 347.07 µs instead of 555.32: 208.25 µs of 2000 saved.
        let at_80 = &a.projections[1];
        assert!((at_80.e2e_saving_percent - 10.41).abs() < 0.01, "{at_80:?}");
        assert!(a.projections[0].e2e_saving_percent.abs() < 1e-9);
        assert!((a.achieved_tflops - 495.0).abs() < 0.5);
    }

    #[test]
    fn unknown_hardware_uses_rule_of_thumb() {
        let a = assess(&gemm(300.0, 1), None, 1000.0, 2000.0, &[]);
        assert_eq!(a.bound, Some(Bound::Compute));
        assert!(a.efficiency.is_none() && a.projections.is_empty());
    }
}
