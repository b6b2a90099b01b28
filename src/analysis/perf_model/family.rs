//! Model families (TraceLens's sheets) and what a model yields: FLOPs,
//! bytes and the compute spec of one invocation, or why there is none.

use serde::Serialize;

use crate::analysis::hardware::ComputeSpec;

/// Which family of perf model (and which TraceLens sheet) an op belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Family {
    /// Matrix multiplies, forward.
    #[serde(rename = "GEMM")]
    Gemm,
    /// The backward of a matrix multiply (input and weight gradients).
    #[serde(rename = "GEMM_bwd")]
    GemmBwd,
    /// Fused attention, forward.
    #[serde(rename = "SDPA_fwd")]
    SdpaFwd,
    /// Fused attention, backward.
    #[serde(rename = "SDPA_bwd")]
    SdpaBwd,
    /// Convolution, forward.
    #[serde(rename = "CONV_fwd")]
    ConvFwd,
    /// Convolution, backward.
    #[serde(rename = "CONV_bwd")]
    ConvBwd,
    /// One-input elementwise ops and copies.
    #[serde(rename = "UnaryElementwise")]
    UnaryElementwise,
    /// Two-input elementwise ops with broadcasting.
    #[serde(rename = "BinaryElementwise")]
    BinaryElementwise,
    /// Layer/RMS/batch/group/instance norm, forward.
    #[serde(rename = "NORM_fwd")]
    NormFwd,
    /// Layer/RMS/batch/group norm, backward.
    #[serde(rename = "NORM_bwd")]
    NormBwd,
    /// Reductions, forward.
    #[serde(rename = "Reduce_fwd")]
    ReduceFwd,
    /// Reductions, backward (gradient broadcast back to the input).
    #[serde(rename = "Reduce_bwd")]
    ReduceBwd,
    /// Softmax and log-softmax, forward.
    #[serde(rename = "Softmax_fwd")]
    SoftmaxFwd,
    /// Softmax and log-softmax, backward.
    #[serde(rename = "Softmax_bwd")]
    SoftmaxBwd,
    /// Inference RMS norms (aiter's `rmsnorm`, `add_rmsnorm`, …).
    #[serde(rename = "RMSNorm")]
    RmsNorm,
    /// Inference attention over a KV cache, and KV-cache stores.
    #[serde(rename = "InferenceAttention")]
    InferenceAttention,
    /// Rotary position embedding, forward.
    #[serde(rename = "RoPE_fwd")]
    RopeFwd,
    /// Unfused MoE expert projections (TraceLens's pseudo ops).
    #[serde(rename = "MoE_unfused")]
    MoeUnfused,
    /// Kernels torch.compile generates with Triton (pointwise, reductions,
    /// matrix-multiply templates).
    #[serde(rename = "Triton")]
    Triton,
}

impl Family {
    /// Every family, in sheet order.
    pub const ALL: [Family; 19] = [
        Family::Gemm,
        Family::GemmBwd,
        Family::SdpaFwd,
        Family::SdpaBwd,
        Family::ConvFwd,
        Family::ConvBwd,
        Family::UnaryElementwise,
        Family::BinaryElementwise,
        Family::NormFwd,
        Family::NormBwd,
        Family::ReduceFwd,
        Family::ReduceBwd,
        Family::SoftmaxFwd,
        Family::SoftmaxBwd,
        Family::RmsNorm,
        Family::InferenceAttention,
        Family::RopeFwd,
        Family::MoeUnfused,
        Family::Triton,
    ];

    /// The family's name (as serialised).
    pub fn as_str(self) -> &'static str {
        match self {
            Family::Gemm => "GEMM",
            Family::GemmBwd => "GEMM_bwd",
            Family::SdpaFwd => "SDPA_fwd",
            Family::SdpaBwd => "SDPA_bwd",
            Family::ConvFwd => "CONV_fwd",
            Family::ConvBwd => "CONV_bwd",
            Family::UnaryElementwise => "UnaryElementwise",
            Family::BinaryElementwise => "BinaryElementwise",
            Family::NormFwd => "NORM_fwd",
            Family::NormBwd => "NORM_bwd",
            Family::ReduceFwd => "Reduce_fwd",
            Family::ReduceBwd => "Reduce_bwd",
            Family::SoftmaxFwd => "Softmax_fwd",
            Family::SoftmaxBwd => "Softmax_bwd",
            Family::RmsNorm => "RMSNorm",
            Family::InferenceAttention => "InferenceAttention",
            Family::RopeFwd => "RoPE_fwd",
            Family::MoeUnfused => "MoE_unfused",
            Family::Triton => "Triton",
        }
    }

    /// The TraceLens sheet (CSV file stem) the family's rows go to: GEMM
    /// forward and backward share `GEMM`, norms share `Normalization`; the
    /// inference families add `_fwd` as TraceLens's inference report does.
    pub fn sheet(self) -> &'static str {
        match self {
            Family::Gemm | Family::GemmBwd => "GEMM",
            Family::NormFwd | Family::NormBwd => "Normalization",
            Family::RmsNorm => "RMSNorm_fwd",
            Family::InferenceAttention => "InferenceAttention_fwd",
            Family::MoeUnfused => "MoE_unfused_fwd",
            other => other.as_str(),
        }
    }
}

impl std::fmt::Display for Family {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// FLOPs and bytes of one op invocation.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PerfModel {
    /// The model family.
    pub family: Family,
    /// Floating-point operations.
    pub flops: f64,
    /// Bytes read and written (each tensor at its own dtype's size).
    pub bytes: f64,
    /// The roofline peak the op runs at (`None` for types with no peak, such as ints).
    pub compute_spec: Option<ComputeSpec>,
    /// The model's parameters, name then Python-repr value, in TraceLens's
    /// order (`M`, `N`, `K`, … for a GEMM).
    pub params: Vec<(String, String)>,
}

#[cfg(test)]
impl PerfModel {
    /// The value of the parameter `name`, as the sheets print it.
    pub(crate) fn param(&self, name: &str) -> Option<&str> {
        let found = self.params.iter().find(|(key, _)| key == name);
        found.map(|(_, value)| value.as_str())
    }
}

/// Why an op has no perf model.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum NoModel {
    /// No model exists for this op name.
    #[error("no perf model for `{name}`")]
    UnknownOp {
        /// The op name.
        name: String,
    },
    /// A model exists but the recorded arguments cannot be read.
    #[error("`{name}`: {reason}")]
    BadArgs {
        /// The op name.
        name: String,
        /// What could not be read.
        reason: String,
    },
    /// The recorded arguments describe no tensor PyTorch can hold (a
    /// negative size, a size above `i64::MAX`) or FLOPs/bytes that overflow
    /// 128 bits: a corrupt or fuzzed trace. Counted as an anomaly.
    #[error("`{name}`: {reason}")]
    Implausible {
        /// The op name.
        name: String,
        /// What is implausible.
        reason: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A family's name is its serialised name, the one report.json and the
    /// TraceLens-compatible sheets carry, and no two families share one.
    #[test]
    fn every_family_is_named_as_it_is_serialised() {
        let mut names = std::collections::BTreeSet::new();
        for family in Family::ALL {
            let serialised = serde_json::to_string(&family).expect("serialises");
            assert_eq!(serialised, format!("\"{}\"", family.as_str()));
            assert!(names.insert(family.as_str()), "{family:?}");
            assert_eq!(family.to_string(), family.as_str());
        }
    }
}
