//! Op categories: what family an op (or an unowned kernel) belongs to.
//!
//! The names follow TraceLens (docs/ARCHITECTURE.md, "Categories"), with its
//! known gaps closed: `aten::linear`/`aten::matmul` are GEMMs, the aten flash
//! attention entry points are SDPA, softmax and collective ops have their own
//! categories, and CUDA-graph kernels are categorised by kernel name.

use serde::{Deserialize, Serialize};

use crate::analysis::comm::{self, CommKernels};

/// An op family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Category {
    /// Matrix multiplies.
    #[serde(rename = "GEMM")]
    Gemm,
    /// Convolution forward.
    #[serde(rename = "CONV_fwd")]
    ConvFwd,
    /// Convolution backward.
    #[serde(rename = "CONV_bwd")]
    ConvBwd,
    /// Fused attention forward.
    #[serde(rename = "SDPA_fwd")]
    SdpaFwd,
    /// Fused attention backward.
    #[serde(rename = "SDPA_bwd")]
    SdpaBwd,
    /// Normalisation forward.
    #[serde(rename = "NORM_fwd")]
    NormFwd,
    /// Normalisation backward.
    #[serde(rename = "NORM_bwd")]
    NormBwd,
    /// Softmax and log-softmax, forward and backward.
    #[serde(rename = "softmax")]
    Softmax,
    /// Elementwise ops and copies.
    #[serde(rename = "elementwise")]
    Elementwise,
    /// Reductions.
    #[serde(rename = "reduce")]
    Reduce,
    /// Collective communication.
    #[serde(rename = "comm")]
    Comm,
    /// Triton kernels (torch.compile).
    #[serde(rename = "triton")]
    Triton,
    /// Kernels launched by a runtime call with no CPU op above it.
    #[serde(rename = "runtime")]
    Runtime,
    /// Everything else.
    #[serde(rename = "other")]
    Other,
}

impl Category {
    /// The name as TraceLens writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Gemm => "GEMM",
            Category::ConvFwd => "CONV_fwd",
            Category::ConvBwd => "CONV_bwd",
            Category::SdpaFwd => "SDPA_fwd",
            Category::SdpaBwd => "SDPA_bwd",
            Category::NormFwd => "NORM_fwd",
            Category::NormBwd => "NORM_bwd",
            Category::Softmax => "softmax",
            Category::Elementwise => "elementwise",
            Category::Reduce => "reduce",
            Category::Comm => "comm",
            Category::Triton => "triton",
            Category::Runtime => "runtime",
            Category::Other => "other",
        }
    }
}

impl std::fmt::Display for Category {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

const GEMM_OPS: &[&str] = &[
    "aten::mm",
    "aten::addmm",
    "aten::_scaled_mm",
    "aten::bmm",
    "aten::baddbmm",
    "aten::linear",
    "aten::matmul",
    "aten::_addmm_activation",
    "aten::_int_mm",
];

const SDPA_FWD_OPS: &[&str] = &[
    "aten::_scaled_dot_product_flash_attention",
    "aten::_scaled_dot_product_efficient_attention",
    "aten::_scaled_dot_product_cudnn_attention",
    "aten::_scaled_dot_product_fused_attention_overrideable",
    "aten::_flash_attention_forward",
    "aten::_efficient_attention_forward",
];

const SDPA_BWD_OPS: &[&str] = &[
    "aten::_scaled_dot_product_flash_attention_backward",
    "aten::_scaled_dot_product_efficient_attention_backward",
    "aten::_scaled_dot_product_cudnn_attention_backward",
    "aten::_flash_attention_backward",
    "aten::_efficient_attention_backward",
];

const NORM_FWD_OPS: &[&str] = &[
    "aten::native_layer_norm",
    "aten::layer_norm",
    "aten::native_batch_norm",
    "aten::_native_batch_norm_legit",
    "aten::_native_batch_norm_legit_no_training",
    "aten::cudnn_batch_norm",
    "aten::miopen_batch_norm",
    "aten::batch_norm",
    "aten::_batch_norm_impl_index",
    "aten::native_group_norm",
    "aten::group_norm",
    "aten::instance_norm",
    "aten::rms_norm",
    "aten::_fused_rms_norm",
];

const NORM_BWD_OPS: &[&str] = &[
    "aten::native_layer_norm_backward",
    "aten::native_batch_norm_backward",
    "aten::cudnn_batch_norm_backward",
    "aten::miopen_batch_norm_backward",
    "aten::native_group_norm_backward",
    "aten::_fused_rms_norm_backward",
];

const SOFTMAX_OPS: &[&str] = &[
    "aten::softmax",
    "aten::_softmax",
    "aten::log_softmax",
    "aten::_log_softmax",
    "aten::_softmax_backward_data",
    "aten::_log_softmax_backward_data",
    "aten::_safe_softmax",
];

const ELEMENTWISE_OPS: &[&str] = &[
    "copy_",
    "add",
    "add_",
    "sub",
    "sub_",
    "mul",
    "mul_",
    "div",
    "div_",
    "clamp",
    "clamp_",
    "clamp_min",
    "clamp_min_",
    "clamp_max",
    "sigmoid",
    "sigmoid_",
    "rsqrt",
    "rsqrt_",
    "sqrt",
    "silu",
    "silu_",
    "neg",
    "pow",
    "exp",
    "exp_",
    "log",
    "tanh",
    "tanh_",
    "gelu",
    "gelu_",
    "relu",
    "relu_",
    "threshold_backward",
    "gelu_backward",
    "silu_backward",
    "sigmoid_backward",
    "tanh_backward",
    "fill_",
    "zero_",
    "where",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "abs",
    "cos",
    "sin",
    "reciprocal",
    "masked_fill",
    "masked_fill_",
    "addcmul_",
    "addcdiv_",
    "lerp_",
    "maximum",
    "minimum",
    "_foreach_add_",
    "_foreach_mul_",
    "bitwise_and",
    "bitwise_not",
    "bitwise_or",
    "logical_and",
    "logical_not",
    "erf",
    "floor",
    "ceil",
    "round",
    "hardtanh",
    "hardtanh_",
    "leaky_relu",
    "elu",
    "mish",
    "softplus",
    "remainder",
    "fmod",
    "clone",
    "contiguous",
    "upsample_nearest1d",
    "upsample_nearest2d",
    "upsample_nearest3d",
];

const REDUCE_OPS: &[&str] = &[
    "sum",
    "mean",
    "max",
    "min",
    "norm",
    "std",
    "var",
    "logsumexp",
    "cumsum",
    "amax",
    "amin",
    "argmax",
    "argmin",
    "prod",
    "all",
    "any",
    "topk",
    "sort",
    "linalg_vector_norm",
    "var_mean",
    "std_mean",
    "cumprod",
];

/// The category of a CPU op by name.
pub fn of_op(name: &str) -> Category {
    if GEMM_OPS.contains(&name) {
        return Category::Gemm;
    }
    if name == "aten::convolution"
        || name == "aten::_convolution"
        || name == "aten::cudnn_convolution"
        || name == "aten::miopen_convolution"
        || name == "aten::conv2d"
        || name == "aten::conv1d"
        || name == "aten::conv3d"
        || name == "aten::cudnn_convolution_transpose"
    {
        return Category::ConvFwd;
    }
    if name == "aten::convolution_backward" || name == "aten::cudnn_convolution_backward" {
        return Category::ConvBwd;
    }
    if SDPA_FWD_OPS.contains(&name)
        || (name.starts_with("flash_attn::") && !name.contains("backward"))
    {
        return Category::SdpaFwd;
    }
    if SDPA_BWD_OPS.contains(&name)
        || (name.starts_with("flash_attn::") && name.contains("backward"))
    {
        return Category::SdpaBwd;
    }
    if NORM_FWD_OPS.contains(&name) {
        return Category::NormFwd;
    }
    if NORM_BWD_OPS.contains(&name) {
        return Category::NormBwd;
    }
    if SOFTMAX_OPS.contains(&name) {
        return Category::Softmax;
    }
    if name.starts_with("c10d::")
        || name.starts_with("nccl:")
        || name.starts_with("symm_mem::")
        || name.starts_with("_c10d_functional::")
        || name == "record_param_comms"
    {
        return Category::Comm;
    }
    if let Some(short) = name.strip_prefix("aten::") {
        if ELEMENTWISE_OPS.contains(&short) {
            return Category::Elementwise;
        }
        if REDUCE_OPS.contains(&short) {
            return Category::Reduce;
        }
    }
    if name.starts_with("triton") {
        return Category::Triton;
    }
    Category::Other
}

/// The category of an op from its name, else from its kernels when they all
/// agree (a CUDA-graph replay or a custom op running GEMMs, say). A backward
/// op whose kernels look like a forward family gets that family's backward.
pub fn of_op_and_kernels<'a>(
    op_name: &str,
    kernel_names: impl IntoIterator<Item = &'a str>,
    comm: &CommKernels,
) -> Category {
    let by_name = of_op(op_name);
    if by_name != Category::Other {
        return by_name;
    }
    let mut kernels = kernel_names.into_iter().map(|name| of_kernel(name, comm));
    let first = kernels.next().unwrap_or(Category::Other);
    let agreed = if kernels.all(|c| c == first) {
        first
    } else {
        Category::Other
    };
    let is_backward = op_name.contains("backward") || op_name.contains("Backward");
    match agreed {
        Category::ConvFwd if is_backward => Category::ConvBwd,
        Category::NormFwd if is_backward => Category::NormBwd,
        Category::SdpaFwd if is_backward => Category::SdpaBwd,
        other => other,
    }
}

/// The category of a kernel by its name alone: used for kernels with no CPU
/// op (GPU-only traces, CUDA-graph replays) and to refine an `other` op.
///
/// Family words are matched as whole words of the name ([`comm::words`]), not
/// as substrings: `flash` is not `flashinfer::QuantizationSFLayout`, `conv`
/// is not `convert_binary_result_type_wrapper`. `cutlass` makes a GEMM only
/// as the kernel's own namespace (`cutlass::Kernel2<…gemm…>`), not as a
/// library namespace further in (`…::cutlass_kernels::finalizeMoeRoutingKernel`)
/// nor in template arguments (`cutlass::bfloat16_t`).
pub fn of_kernel(name: &str, comm: &CommKernels) -> Category {
    if comm.is_comm(name) {
        return Category::Comm;
    }
    let lower = name.to_ascii_lowercase();
    if lower.starts_with("triton") {
        return Category::Triton;
    }
    let words = comm::words(name);
    // `fbgemm` is a library's name (its embedding lookups run no GEMM).
    if words
        .iter()
        .any(|w| w.contains("gemm") && !w.starts_with("fbgemm"))
        || lower.contains("cublas")
        || lower.starts_with("cijk_")
        || lower.contains("hipblaslt")
        || lower.contains("_mm_")
    {
        return Category::Gemm;
    }
    if is_attention(&words) {
        return Category::SdpaFwd;
    }
    if function_path(&lower).starts_with("cutlass") {
        return Category::Gemm;
    }
    if lower.contains("softmax") {
        return Category::Softmax;
    }
    if lower.contains("layer_norm")
        || lower.contains("batch_norm")
        || lower.contains("group_norm")
        || lower.contains("rms_norm")
        || lower.contains("layernorm")
        || lower.contains("rmsnorm")
    {
        return Category::NormFwd;
    }
    if words.iter().any(|w| is_conv_word(w) || w == "winograd") {
        return Category::ConvFwd;
    }
    if lower.contains("reduce") {
        return Category::Reduce;
    }
    if lower.contains("elementwise")
        || lower.contains("multi_tensor_apply")
        || lower.contains("copy")
    {
        return Category::Elementwise;
    }
    Category::Other
}

/// Whether a kernel's words name fused attention: `flash`, `fmha` or
/// `attention` as words, or a FlashInfer-style paged/KV-cache prefill or
/// decode kernel (`BatchPrefillWithPagedKVCacheKernel`).
fn is_attention(words: &[String]) -> bool {
    let has = |word: &str| words.iter().any(|w| w == word);
    has("flash")
        || has("flashattn")
        || has("fmha")
        || has("attention")
        || ((has("prefill") || has("decode")) && (has("kv") || has("paged")))
}

/// Whether a word is a convolution's: `conv`, `convolution`, `convolve`,
/// `conv2d`-like (`conv` then digits and a `d`).
fn is_conv_word(word: &str) -> bool {
    match word.strip_prefix("conv") {
        Some("" | "olution" | "olve") => true,
        Some(rest) => rest
            .strip_suffix('d')
            .is_some_and(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())),
        None => false,
    }
}

/// A kernel's function path: the name without a leading `void ` and from
/// its first template argument list or parameter list on
/// (`void cutlass::Kernel2<…>(…)` → `cutlass::Kernel2`).
fn function_path(name: &str) -> &str {
    let name = name.strip_prefix("void ").unwrap_or(name);
    let end = name.find(['<', '(']).unwrap_or(name.len());
    &name[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`super::of_kernel`] under the built-in rules alone.
    fn of_kernel(name: &str) -> Category {
        super::of_kernel(name, &CommKernels::default())
    }

    /// [`super::of_op_and_kernels`] under the built-in rules alone.
    fn of_op_and_kernels<'a>(op: &str, kernels: impl IntoIterator<Item = &'a str>) -> Category {
        super::of_op_and_kernels(op, kernels, &CommKernels::default())
    }

    #[test]
    fn ops_map_to_their_families() {
        assert_eq!(of_op("aten::addmm"), Category::Gemm);
        assert_eq!(of_op("aten::linear"), Category::Gemm);
        assert_eq!(of_op("aten::_flash_attention_forward"), Category::SdpaFwd);
        assert_eq!(
            of_op("flash_attn::_flash_attn_varlen_backward"),
            Category::SdpaBwd
        );
        assert_eq!(of_op("aten::native_layer_norm"), Category::NormFwd);
        assert_eq!(of_op("aten::_softmax"), Category::Softmax);
        assert_eq!(of_op("aten::copy_"), Category::Elementwise);
        assert_eq!(of_op("aten::sum"), Category::Reduce);
        assert_eq!(of_op("c10d::allreduce_"), Category::Comm);
        assert_eq!(of_op("aten::convolution_backward"), Category::ConvBwd);
        assert_eq!(of_op("aten::index_select"), Category::Other);
    }

    #[test]
    fn ops_fall_back_to_agreeing_kernels() {
        let conv = ["void cudnn::conv2d_grouped_direct_kernel"];
        assert_eq!(
            of_op_and_kernels("aten::cudnn_convolution_backward_input", conv),
            Category::ConvBwd
        );
        assert_eq!(of_op_and_kernels("my::op", conv), Category::ConvFwd);
        assert_eq!(
            of_op_and_kernels("my::op", ["gemm_kernel", "void at::native::reduce_kernel"]),
            Category::Other
        );
        assert_eq!(
            of_op_and_kernels("aten::upsample_nearest1d", []),
            Category::Elementwise
        );
        assert_eq!(
            of_op_and_kernels("aten::addmm", ["anything"]),
            Category::Gemm
        );
    }

    #[test]
    fn kernels_map_by_name() {
        assert_eq!(
            of_kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL"),
            Category::Comm
        );
        assert_eq!(
            of_kernel("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n"),
            Category::Gemm
        );
        assert_eq!(
            of_kernel("Cijk_Alik_Bljk_BBS_BH_MT128x128x64"),
            Category::Gemm
        );
        assert_eq!(of_kernel("triton_poi_fused_add_0"), Category::Triton);
        assert_eq!(
            of_kernel("void at::native::vectorized_elementwise_kernel<4>"),
            Category::Elementwise
        );
        assert_eq!(
            of_kernel("void at::native::reduce_kernel<512, 1>"),
            Category::Reduce
        );
        assert_eq!(of_kernel("mystery"), Category::Other);
    }

    /// Issue #11: family words are whole words of the name, not substrings
    /// (names from a B200 vLLM/FlashInfer trace).
    #[test]
    fn kernel_family_words_are_whole_words() {
        assert_eq!(
            of_kernel("void flashinfer::QuantizationSFLayout<128>(int, int)"),
            Category::Other
        );
        assert_eq!(
            of_kernel("void convert_binary_result_type_wrapper<float>(float*)"),
            Category::Other
        );
        assert_eq!(
            of_kernel(
                "void tensorrt_llm::kernels::cutlass_kernels::finalizeMoeRoutingKernel<__nv_bfloat16, float>(__nv_bfloat16 const*)"
            ),
            Category::Other
        );
        assert_eq!(
            of_op_and_kernels(
                "symm_mem::multimem_all_reduce_",
                ["void c10d::symmetric_memory::multimem_all_reduce_kernel<__nv_bfloat16, 16>"]
            ),
            Category::Comm
        );
        assert_eq!(
            of_kernel("void c10d::symmetric_memory::multimem_all_reduce_kernel<float, 16>"),
            Category::Comm
        );
        // What landed right still does.
        assert_eq!(
            of_kernel("void flashinfer::BatchPrefillWithPagedKVCacheKernel<128>"),
            Category::SdpaFwd
        );
        assert_eq!(
            of_kernel(
                "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, cutlass::bfloat16_t>>"
            ),
            Category::SdpaFwd
        );
        assert_eq!(of_kernel("fmha_fwd_hd128_bf16"), Category::SdpaFwd);
        assert_eq!(of_kernel("kernel_unified_attention_3d"), Category::SdpaFwd);
        assert_eq!(
            of_kernel(
                "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x6_tn_align8>"
            ),
            Category::Gemm
        );
        assert_eq!(
            of_kernel(
                "void cutlass__5x_cudnn::Kernel<cutlass_tensorop_bf16_s16816fprop_optimized_bf16>"
            ),
            Category::Gemm
        );
        assert_eq!(
            of_kernel("void cudnn::conv2d_grouped_direct_kernel<float>"),
            Category::ConvFwd
        );
        assert_eq!(
            of_kernel("miopenSp3AsmConv_v21_1_3_gfx9_fp32"),
            Category::ConvFwd
        );
        assert_eq!(of_kernel("naive_conv_fwd_nchw_float"), Category::ConvFwd);
    }
}
