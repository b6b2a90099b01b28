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
//! dispatches by op name. The inference families (`inference_gemm`,
//! `inference_norm`, `inference_attention`, `rope`, `activation`, `moe`)
//! model the custom ops of vLLM, SGLang and aiter; attention also reads the
//! step's annotation, MoE pseudo ops their kernel and top-k ([`OpContext`]).

pub mod activation;
mod args;
mod context;
pub mod conv;
pub mod count;
pub mod dtype;
pub mod elementwise;
mod family;
pub mod gemm;
pub mod inference_attention;
pub mod inference_gemm;
pub mod inference_norm;
pub mod moe;
pub mod norm;
pub mod reduce;
mod repr;
pub mod rope;
pub mod sdpa;
pub mod softmax;
pub mod triton;

use args::Args;

pub use args::OpShape;
pub use context::{ChunkStats, OpContext, chunk_stats};
pub use count::Count;
pub use dtype::Dtype;
pub use family::{Family, NoModel, PerfModel};

/// Models one op invocation (forward or a named backward op).
pub fn model(op: &OpShape) -> Result<PerfModel, NoModel> {
    model_in(op, &OpContext::default())
}

/// Models one op invocation in its context (the step annotation it ran under).
pub fn model_in(op: &OpShape, context: &OpContext) -> Result<PerfModel, NoModel> {
    let name = op.name;
    if inference_attention::handles(name) {
        return inference_attention::model(&Args::parse(op)?, context);
    }
    if inference_gemm::handles(name) {
        return inference_gemm::model(&Args::parse(op)?);
    }
    if inference_norm::handles(name) {
        return inference_norm::model(&Args::parse(op)?);
    }
    if rope::handles(name) {
        return rope::model(&Args::parse(op)?);
    }
    if moe::handles(name) {
        return moe::model(&Args::parse(op)?, context);
    }
    if activation::handles(name) {
        return activation::model(&Args::parse(op)?);
    }
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
    if triton::handles(name) {
        return triton::model(&Args::parse(op)?);
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
        || inference_attention::handles(name)
        || inference_gemm::handles(name)
        || inference_norm::handles(name)
        || rope::handles(name)
        || moe::handles(name)
        || activation::handles(name)
        || triton::handles(name)
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

    /// An op with the given dims, fp32 inputs and empty scalar arguments.
    fn huge_op<'a>(name: &'a str, dims: &'a str, concrete: &'a str) -> OpShape<'a> {
        OpShape {
            name,
            input_dims: Some(dims),
            input_type: Some(
                r#"["float", "float", "float", "float", "float", "float", "float", "float", "float"]"#,
            ),
            input_strides: None,
            concrete_inputs: Some(concrete),
        }
    }

    #[test]
    fn huge_dims_overflow_is_implausible_not_zero_flops() {
        // Dims near i64::MAX: products beyond 128 bits used to wrap to 0 FLOPs
        // in release builds (and panic in debug ones).
        const BIG: u64 = i64::MAX as u64;
        let two = format!("[[{BIG}, {BIG}], [{BIG}, {BIG}]]");
        let three = format!("[[{BIG}, {BIG}, {BIG}], [{BIG}, {BIG}, {BIG}]]");
        let linear = format!("[[{BIG}, {BIG}, {BIG}], [{BIG}, {BIG}]]");
        let four = format!(
            "[[{BIG}, 2, {BIG}, {BIG}], [{BIG}, 2, {BIG}, {BIG}], [{BIG}, 2, {BIG}, {BIG}]]"
        );
        let conv =
            format!("[[{BIG}, 1, {BIG}, {BIG}], [{BIG}, 1, 1, 1], [], [], [], [], [], [], []]");
        let cases: Vec<(&str, &str, &str)> = vec![
            ("aten::mm", &two, "[]"),
            ("aten::bmm", &three, "[]"),
            ("aten::matmul", &three, "[]"),
            ("aten::linear", &linear, "[]"),
            ("aten::add", &three, "[]"),
            ("aten::copy_", &three, "[]"),
            ("aten::sum", &three, "[]"),
            ("aten::_softmax", &three, r#"["", "-1", "False"]"#),
            (
                "aten::layer_norm",
                &three,
                r#"["", "[9223372036854775807]"]"#,
            ),
            (
                "aten::native_batch_norm",
                &three,
                r#"["", "", "", "", "", "True"]"#,
            ),
            (
                "aten::_scaled_dot_product_flash_attention",
                &four,
                r#"["", "", "", "0.", "False"]"#,
            ),
            (
                "aten::convolution",
                &conv,
                r#"["", "", "", "[1, 1]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1"]"#,
            ),
        ];
        for (name, dims, concrete) in cases {
            for result in [
                model(&huge_op(name, dims, concrete)),
                model_backward(&huge_op(name, dims, concrete)),
            ] {
                match result {
                    Err(NoModel::Implausible { .. } | NoModel::UnknownOp { .. }) => {}
                    other => panic!("{name} {dims}: {other:?}"),
                }
            }
            assert!(
                matches!(
                    model(&huge_op(name, dims, concrete)),
                    Err(NoModel::Implausible { .. })
                ),
                "{name}"
            );
        }
    }

    #[test]
    fn large_but_representable_dims_keep_exact_figures() {
        // 2^40 × 2^20 · 2^20 × 2^10: 2^71 multiply-adds, far beyond u64, inside u128.
        let m = model(&huge_op(
            "aten::mm",
            "[[1099511627776, 1048576], [1048576, 1024]]",
            "[]",
        ))
        .expect("modelled");
        assert_eq!(m.flops, 2.0 * 2f64.powi(70));
        assert!(m.bytes.is_finite() && m.bytes > 0.0);
    }

    #[test]
    fn negative_and_oversized_dims_are_implausible() {
        for dims in [
            "[[-1, 4], [4]]",
            "[[4, 4], [-9223372036854775808]]",
            "[[9223372036854775808, 4], [4]]",
            "[[18446744073709551615, 4], [4]]",
            "[[100000000000000000000000, 4], [4]]",
        ] {
            let result = model(&huge_op("aten::add", dims, "[]"));
            assert!(
                matches!(result, Err(NoModel::Implausible { .. })),
                "{dims}: {result:?}"
            );
        }
        // A fraction is no size at all: unreadable, not implausible.
        let result = model(&huge_op("aten::add", "[[1.5, 4], [4]]", "[]"));
        assert!(matches!(result, Err(NoModel::BadArgs { .. })), "{result:?}");
    }

    /// Why `model` could not read the op's arguments.
    fn bad_args_reason(op: &OpShape) -> String {
        match model(op) {
            Err(NoModel::BadArgs { reason, .. }) => reason,
            other => panic!("{}: {other:?}", op.name),
        }
    }

    #[test]
    fn unreadable_arguments_are_quoted_up_to_80_characters() {
        // A short input is quoted whole.
        let reason = bad_args_reason(&huge_op("aten::add", "[[1.5, 4], [4]]", "[]"));
        assert!(reason.ends_with(": [1.5, 4]"), "{reason}");
        // A long one is cut after 80 characters (not bytes), with an ellipsis.
        let names = vec!["\"é\""; 40].join(", ");
        let dims = format!("[[{names}], [4]]");
        let reason = bad_args_reason(&huge_op("aten::add", &dims, "[]"));
        let first_80: String = format!("[{names}]").chars().take(80).collect();
        assert!(reason.ends_with(&format!(": {first_80}…")), "{reason}");
        // A whole list that is no list is quoted too.
        let op = OpShape {
            name: "aten::add",
            input_dims: Some("[[4], [4]]"),
            input_type: Some(r#"{"float": 1}"#),
            ..OpShape::default()
        };
        assert_eq!(
            bad_args_reason(&op),
            r#"`Input type` is not a list: {"float": 1}"#
        );
    }

    /// `has_model` knows what `model` models: one name from each family's module.
    #[test]
    fn has_model_knows_every_modules_ops() {
        for name in [
            "aten::mm",
            "aten::_scaled_dot_product_flash_attention",
            "aten::convolution",
            "aten::layer_norm",
            "aten::_softmax",
            "aten::sum",
            "aten::add",
            "vllm::unified_attention_with_output",
            "aiter::gemm_a16w16",
            "aiter::rms_norm",
            "_C::rotary_embedding",
            moe::UP,
            "aiter::gelu_and_mul",
            "triton_poi_fused_add_0",
        ] {
            assert!(has_model(name), "{name}");
            let op = OpShape {
                name,
                ..OpShape::default()
            };
            assert!(
                !matches!(model(&op), Err(NoModel::UnknownOp { .. })),
                "{name}"
            );
        }
        assert!(!has_model("aten::index_select"));
    }

    #[test]
    fn composites_are_modelled_directly() {
        assert!(has_model("aten::linear"));
        assert!(is_composite("aten::linear"));
        assert!(has_model("aten::addmm"));
        assert!(!is_composite("aten::addmm"));
    }
}
