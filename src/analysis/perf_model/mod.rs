//! Perf models: FLOPs and bytes moved of one op invocation, from the shapes,
//! types and scalar arguments the profiler recorded (`Input Dims`, `Input
//! type`, `Input Strides`, `Concrete Inputs`).
//!
//! The formulas follow TraceLens's perf models (docs/PERF_MODELS.md), with its
//! known bugs corrected: each tensor's bytes use its own dtype, the convolution
//! bias is read from the third input, reductions honour `dim`/`keepdim`,
//! batch-norm's `training` flag is parsed ("False" is false). Nothing is
//! guessed: arguments that cannot be read give [`NoModel`].
//!
//! Each family module (`gemm`, `sdpa`, `conv`, …) models its ops from the
//! arguments `args` reads; `repr` writes the parameter values; this file
//! dispatches by op name.

mod args;
pub mod conv;
pub mod dtype;
pub mod elementwise;
mod family;
pub mod gemm;
pub mod norm;
pub mod reduce;
mod repr;
pub mod sdpa;
pub mod softmax;

use args::Args;

pub use args::OpShape;
pub use dtype::Dtype;
pub use family::{Family, NoModel, PerfModel};

/// Models one op invocation (forward or a named backward op).
pub fn model(op: &OpShape) -> Result<PerfModel, NoModel> {
    let name = op.name;
    if gemm::handles(name) {
        return gemm::model(&Args::parse(op)?);
    }
    if sdpa::handles(name) {
        return sdpa::model(&Args::parse(op)?);
    }
    if conv::handles(name) {
        return conv::model(&Args::parse(op)?);
    }
    if norm::handles(name) {
        return norm::model(&Args::parse(op)?);
    }
    if softmax::handles(name) {
        return softmax::model(&Args::parse(op)?);
    }
    if reduce::handles(name) {
        return reduce::model(&Args::parse(op)?);
    }
    if elementwise::handles(name) {
        return elementwise::model(&Args::parse(op)?);
    }
    Err(NoModel::UnknownOp {
        name: name.to_string(),
    })
}

/// Models the backward pass of a forward op from the forward's own
/// arguments (for autograd nodes such as `ConvolutionBackward0`, whose
/// recorded arguments are gradients): GEMMs, attention, convolution and
/// reductions.
pub fn model_backward(forward: &OpShape) -> Result<PerfModel, NoModel> {
    let name = forward.name;
    if gemm::handles(name) {
        return gemm::model_backward(&Args::parse(forward)?);
    }
    if sdpa::handles(name) && !sdpa::is_backward(name) {
        return sdpa::model_backward(&Args::parse(forward)?);
    }
    if conv::handles(name) && name != "aten::convolution_backward" {
        return conv::model_backward(&Args::parse(forward)?);
    }
    if reduce::handles(name) {
        return reduce::model_backward(&Args::parse(forward)?);
    }
    Err(NoModel::UnknownOp {
        name: name.to_string(),
    })
}

/// Whether [`model`] knows the op name (its arguments may still be unreadable).
pub fn has_model(name: &str) -> bool {
    gemm::handles(name)
        || sdpa::handles(name)
        || conv::handles(name)
        || norm::handles(name)
        || softmax::handles(name)
        || reduce::handles(name)
        || elementwise::handles(name)
}

/// Composite ops that dispatch to a modelled op below them (`aten::linear`
/// → `aten::addmm`, `aten::softmax` → `aten::_softmax`, …). A per-op table
/// models the inner op so its rows keep TraceLens's keys; [`model`] still
/// models these when asked directly.
pub fn is_composite(name: &str) -> bool {
    matches!(
        name,
        "aten::linear"
            | "aten::matmul"
            | "aten::softmax"
            | "aten::log_softmax"
            | "aten::rms_norm"
            | "aten::_convolution"
    )
}
#[cfg(test)]
mod tests {
    use super::args::{parse_bool, parse_float, parse_int_list};
    use super::repr::{str_tuple_repr, tuple_repr};
    use super::*;

    #[test]
    fn unknown_ops_say_so() {
        let op = OpShape {
            name: "aten::index_select",
            input_dims: Some("[[4, 4], [], [2]]"),
            ..OpShape::default()
        };
        assert_eq!(
            model(&op),
            Err(NoModel::UnknownOp {
                name: "aten::index_select".to_string()
            })
        );
    }

    #[test]
    fn missing_shapes_are_bad_args() {
        let op = OpShape {
            name: "aten::mm",
            ..OpShape::default()
        };
        assert!(matches!(model(&op), Err(NoModel::BadArgs { .. })));
    }

    #[test]
    fn scalar_argument_parsing() {
        assert_eq!(parse_int_list("[1]"), Some(vec![1]));
        assert_eq!(parse_int_list("[-1, 2]"), Some(vec![-1, 2]));
        assert_eq!(parse_int_list("[]"), Some(vec![]));
        assert_eq!(parse_int_list("3"), Some(vec![3]));
        assert_eq!(parse_int_list("x"), None);
        assert_eq!(parse_bool("False"), Some(false));
        assert_eq!(parse_bool("True"), Some(true));
        assert_eq!(parse_float("0."), Some(0.0));
        assert_eq!(parse_float("0.125"), Some(0.125));
        assert_eq!(tuple_repr(&[512]), "(512,)");
        assert_eq!(tuple_repr(&[512, 1]), "(512, 1)");
        assert_eq!(
            str_tuple_repr(&[Some("c10::BFloat16"), None]),
            "('c10::BFloat16', None)"
        );
    }

    #[test]
    fn composites_are_modelled_directly() {
        assert!(has_model("aten::linear"));
        assert!(is_composite("aten::linear"));
        assert!(has_model("aten::addmm"));
        assert!(!is_composite("aten::addmm"));
    }
}
