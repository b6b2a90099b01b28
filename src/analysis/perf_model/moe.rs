//! Unfused mixture-of-experts projections: the pseudo ops TraceLens makes
//! of vLLM's `vllm::moe_forward` when it runs Triton's `matmul_ogs` kernels
//! (GPT-OSS), its `MoE_unfused_fwd` sheet. The first `matmul_ogs` kernel of
//! a call is the up (gate + up) projection, each later one a down
//! projection, and the `…matmul_scatter` kernel the finalize step
//! (unmodelled); [`pseudo_op`] names them.
//!
//! The pseudo ops carry `moe_forward`'s arguments `(hidden_states (M, K),
//! router_logits (M, E), …)`; top-k comes from the `TopK` op under it
//! ([`OpContext::topk`]), and from the kernel's name ([`OpContext::kernel`])
//! whether the projection is gated (`_swiglu`, `_glu`) and the weights'
//! type (`mxfp4`/`fp4`: 0.5 byte, `fp8`/`e4m3`: 1 byte). The intermediate
//! size N is not recorded: it is taken equal to K, as TraceLens does (true
//! of GPT-OSS, 2880 padded to 3072 both).
//!
//! With g = 2 when gated, else 1, and E_active = E·(1 − ((E − k)/E)^M) the
//! experts M tokens reach under uniform routing:
//! - up: flops = 2·M·K·N·k·g; bytes = M·K·bpe_in + E_active·g·K·N·bpe_w
//!   + M·k·N·bpe_in (one intermediate row per token and expert);
//! - down: flops = 2·M·N·K·k; bytes = M·k·N·bpe_in + E_active·N·K·bpe_w
//!   + M·K·bpe_in.

use super::args::Args;
use super::context::OpContext;
use super::family::{Family, NoModel, PerfModel};
use super::repr::{bool_repr, params, str_repr};
use crate::analysis::hardware::ComputeSpec;

/// The op whose kernels the pseudo ops split.
pub const MOE_FORWARD: &str = "vllm::moe_forward";
/// The up (gate + up) projection.
pub const UP: &str = "pseudo_op::moe_triton_unfused_up";
/// A down projection.
pub const DOWN: &str = "pseudo_op::moe_triton_unfused_down";
/// The weighted scatter of expert outputs back to tokens (unmodelled).
pub const FINALIZE: &str = "pseudo_op::moe_triton_unfused_finalize_matmul_scatter";

/// Whether a kernel is one of the expert GEMMs (`_matmul_ogs_…`).
pub fn is_expert_gemm(kernel: &str) -> bool {
    kernel.to_ascii_lowercase().contains("matmul_ogs")
}

/// Whether a kernel is the finalize scatter (`_finalize_matmul_scatter_…`).
pub fn is_finalize(kernel: &str) -> bool {
    kernel.to_ascii_lowercase().contains("matmul_scatter")
}

/// The pseudo op of the `index`-th expert GEMM of a call (in start order).
pub fn pseudo_op(index: usize) -> &'static str {
    if index == 0 { UP } else { DOWN }
}

/// Whether this module models the op.
pub fn handles(name: &str) -> bool {
    matches!(name, UP | DOWN)
}

/// The weights' type read from a kernel name: (TraceLens's name, bytes per
/// element, compute spec).
fn weight_type(kernel: &str) -> Option<(&'static str, f64, ComputeSpec)> {
    let lower = kernel.to_ascii_lowercase();
    if lower.contains("fp4") {
        Some(("FP4", 0.5, ComputeSpec::MatrixFp4))
    } else if lower.contains("fp8") || lower.contains("e4m3") {
        Some(("FP8", 1.0, ComputeSpec::MatrixFp8))
    } else {
        None
    }
}

/// Whether a kernel applies a gated activation (two projections per expert).
fn is_gated(kernel: &str) -> bool {
    let lower = kernel.to_ascii_lowercase();
    lower.contains("_swiglu") || lower.contains("_glu")
}

pub(crate) fn model(args: &Args, context: &OpContext) -> Result<PerfModel, NoModel> {
    let (hidden, router) = (args.shape(0)?, args.shape(1)?);
    let (&[m, k], &[_, e]) = (hidden.as_slice(), router.as_slice()) else {
        return Err(args.bad(format!(
            "not hidden states (M, K) and router logits (M, E): {hidden:?}, {router:?}"
        )));
    };
    let topk = context
        .topk
        .ok_or_else(|| args.bad("top-k unknown: no `TopK` op under the MoE op"))?;
    if topk == 0 || topk > e {
        return Err(args.bad(format!("top-{topk} of {e} experts")));
    }
    let kernel = context
        .kernel
        .ok_or_else(|| args.bad("no kernel to read the weights' type from"))?;
    let (weight_name, bpe_w, spec) = weight_type(kernel)
        .ok_or_else(|| args.bad(format!("weights' type unknown from kernel `{kernel}`")))?;
    let dtype = args.dtype(0)?;
    let bpe = dtype.bytes() as f64;
    let gated = is_gated(kernel);
    let g = if args.name == UP && gated { 2.0 } else { 1.0 };
    let n = k;
    let (mf, kf, nf, ef, topf) = (m as f64, k as f64, n as f64, e as f64, topk as f64);
    let active = ef * (1.0 - ((ef - topf) / ef).powf(mf));
    let intermediate = mf * topf * nf * bpe;
    let tokens = mf * kf * bpe;
    let weights = active * g * kf * nf * bpe_w;
    let (flops, bytes) = args.figures(
        Some(2.0 * mf * kf * nf * topf * g),
        Some(tokens + weights + intermediate),
    )?;
    Ok(PerfModel {
        family: Family::MoeUnfused,
        flops,
        bytes,
        compute_spec: Some(spec),
        params: params([
            ("num_tokens", m.to_string()),
            ("hidden_dim", k.to_string()),
            ("inter_dim", n.to_string()),
            ("num_experts", e.to_string()),
            ("topk", topk.to_string()),
            ("gated", bool_repr(gated)),
            ("input_dtype", str_repr(args.type_str(0))),
            ("weight_dtype", str_repr(Some(weight_name))),
        ]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::perf_model::{OpShape, model_in};

    const GEMM: &str = "_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1";
    const GEMM_SWIGLU: &str = "_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1_swiglu";

    /// GPT-OSS decode, batch 32: hidden 3072 (2880 padded), 32 experts.
    fn gpt_oss(name: &str, kernel: Option<&str>, topk: Option<u64>) -> Result<PerfModel, NoModel> {
        model_in(
            &OpShape {
                name,
                input_dims: Some("[[32, 3072], [32, 32], [], []]"),
                input_type: Some(r#"["c10::BFloat16", "c10::BFloat16", "", ""]"#),
                ..OpShape::default()
            },
            &OpContext {
                kernel,
                topk,
                ..OpContext::default()
            },
        )
    }

    #[test]
    fn gated_up_projection() {
        let m = gpt_oss(UP, Some(GEMM_SWIGLU), Some(4)).expect("modelled");
        assert_eq!(m.family, Family::MoeUnfused);
        assert_eq!(m.flops, 2.0 * 32.0 * 3072.0 * 3072.0 * 4.0 * 2.0);
        let active = 32.0 * (1.0 - (28.0f64 / 32.0).powi(32));
        let bytes =
            32.0 * 3072.0 * 2.0 + active * 2.0 * 3072.0 * 3072.0 * 0.5 + 32.0 * 4.0 * 3072.0 * 2.0;
        assert_eq!(m.bytes, bytes);
        // TraceLens's MoE_unfused_fwd sheet: 284.9228269331473 MB.
        assert!((m.bytes / 1048576.0 - 284.9228269331473).abs() < 1e-9);
        assert_eq!(m.compute_spec, Some(ComputeSpec::MatrixFp4));
        assert!(
            m.params
                .contains(&("gated".to_string(), "True".to_string()))
        );
        assert!(
            m.params
                .contains(&("weight_dtype".to_string(), "'FP4'".to_string()))
        );
    }

    #[test]
    fn down_projection() {
        let m = gpt_oss(DOWN, Some(GEMM), Some(4)).expect("modelled");
        assert_eq!(m.flops, 2.0 * 32.0 * 3072.0 * 3072.0 * 4.0);
        assert!((m.bytes / 1048576.0 - 142.93016346657365).abs() < 1e-9);
        // A gated kernel doubles the up projection's work only.
        let gated_kernel = gpt_oss(DOWN, Some(GEMM_SWIGLU), Some(4)).expect("modelled");
        assert_eq!(gated_kernel.flops, m.flops);
        // Every token may go to all 32 experts.
        let all = gpt_oss(DOWN, Some(GEMM), Some(32)).expect("top-32 of 32 is modelled");
        assert_eq!(all.flops, 2.0 * 32.0 * 3072.0 * 3072.0 * 32.0);
        assert!(
            m.params
                .contains(&("gated".to_string(), "False".to_string()))
        );
    }

    #[test]
    fn one_token_reaches_topk_experts() {
        let m = model_in(
            &OpShape {
                name: DOWN,
                input_dims: Some("[[1, 64], [1, 8], [], []]"),
                input_type: Some(r#"["c10::BFloat16", "c10::BFloat16", "", ""]"#),
                ..OpShape::default()
            },
            &OpContext {
                kernel: Some("_matmul_ogs_fp8"),
                topk: Some(2),
                ..OpContext::default()
            },
        )
        .expect("modelled");
        // 2 experts of 64×64 fp8 weights, 2 intermediate rows, 1 output row.
        assert_eq!(m.bytes, 2.0 * 64.0 * 64.0 + 2.0 * 64.0 * 2.0 + 64.0 * 2.0);
        assert_eq!(m.compute_spec, Some(ComputeSpec::MatrixFp8));
    }

    #[test]
    fn missing_topk_or_weight_type_is_no_model() {
        assert!(matches!(
            gpt_oss(UP, Some(GEMM_SWIGLU), None),
            Err(NoModel::BadArgs { .. })
        ));
        assert!(matches!(
            gpt_oss(UP, Some("_matmul_ogs_bf16xbf16"), Some(4)),
            Err(NoModel::BadArgs { .. })
        ));
        assert!(matches!(
            gpt_oss(UP, None, Some(4)),
            Err(NoModel::BadArgs { .. })
        ));
        assert!(matches!(
            gpt_oss(DOWN, Some(GEMM), Some(33)),
            Err(NoModel::BadArgs { .. })
        ));
    }

    #[test]
    fn kernels_and_pseudo_ops() {
        assert!(is_expert_gemm(GEMM_SWIGLU));
        assert!(!is_expert_gemm("_finalize_matmul_scatter_bf16"));
        assert!(is_finalize("_finalize_matmul_scatter_bf16"));
        assert_eq!(pseudo_op(0), UP);
        assert_eq!(pseudo_op(1), DOWN);
        assert_eq!(pseudo_op(2), DOWN);
        assert!(handles(UP) && handles(DOWN) && !handles(FINALIZE));
    }
}
