//! GEMMs of inference libraries: aiter's `gemm_a16w16` and vLLM's
//! `rocm_unquantized_gemm`, both `y = x·Wᵀ (+ bias)` with x `(M, K)` and
//! W `(N, K)`, recorded as `(x, weight, bias, …)`. The figures are
//! [`Gemm`]'s (2·M·N·K, + M·N with a bias; operands read, output written,
//! bias read). The output takes the activation's type for `gemm_a16w16`
//! (its fourth argument is a dtype scalar, not a tensor) and, as TraceLens
//! reads `rocm_unquantized_gemm`, the bias's type when there is a bias and
//! the weight's otherwise.

use super::args::{Args, numel};
use super::family::{Family, NoModel, PerfModel};
use super::gemm::Gemm;
use super::repr::{bool_repr, params, str_tuple_repr};

/// Whether this module models the op.
pub fn handles(name: &str) -> bool {
    matches!(name, "aiter::gemm_a16w16" | "vllm::rocm_unquantized_gemm")
}

pub(crate) fn model(args: &Args) -> Result<PerfModel, NoModel> {
    let (x, w) = (args.shape(0)?, args.shape(1)?);
    if x.len() != 2 || w.len() != 2 || x[1] != w[1] {
        return Err(args.bad(format!("not (M, K)·(N, K)ᵀ: {x:?} x {w:?}")));
    }
    let (dtype_a, dtype_b) = (args.dtype(0)?, args.dtype(1)?);
    let bias = match args.tensor_shape(2) {
        Some(shape) => Some((numel(&shape), args.dtype(2)?)),
        None => None,
    };
    let dtype_out = match (args.name, bias) {
        ("vllm::rocm_unquantized_gemm", Some((_, dtype))) => dtype,
        ("vllm::rocm_unquantized_gemm", None) => dtype_b,
        _ => dtype_a,
    };
    let gemm = Gemm {
        b: 1,
        m: x[0],
        n: w[0],
        k: x[1],
        dtype_a,
        dtype_b,
        dtype_out,
        bias,
    };
    let (flops, bytes) = args.measured(gemm.flops(), gemm.bytes())?;
    let out_type = match args.name {
        "vllm::rocm_unquantized_gemm" => args.type_str(2),
        _ => args.type_str(0),
    };
    Ok(PerfModel {
        family: Family::Gemm,
        flops,
        bytes,
        compute_spec: dtype_a.matrix_spec(),
        params: params([
            ("M", gemm.m.to_string()),
            ("N", gemm.n.to_string()),
            ("K", gemm.k.to_string()),
            ("bias", bool_repr(bias.is_some())),
            (
                "dtype_A_B",
                str_tuple_repr(&[args.type_str(0), args.type_str(1), out_type]),
            ),
            ("B", "1".to_string()),
            ("transpose", "(True, False)".to_string()),
        ]),
    })
}

#[cfg(test)]
mod tests {
    use crate::analysis::perf_model::{Family, OpShape, model};

    #[test]
    fn rocm_unquantized_gemm_with_bias() {
        let m = model(&OpShape {
            name: "vllm::rocm_unquantized_gemm",
            input_dims: Some("[[32, 2880], [5120, 2880], [5120]]"),
            input_type: Some(r#"["c10::BFloat16", "c10::BFloat16", "c10::BFloat16"]"#),
            ..OpShape::default()
        })
        .expect("modelled");
        assert_eq!(m.family, Family::Gemm);
        assert_eq!(m.flops, 943_882_240.0);
        assert_eq!(m.bytes, 30_013_440.0);
    }

    /// vLLM's unquantised GEMM writes its output in the bias's dtype: an
    /// fp32 bias makes an fp32 output from bf16 operands.
    #[test]
    fn rocm_unquantized_gemm_writes_in_the_bias_dtype() {
        let m = model(&OpShape {
            name: "vllm::rocm_unquantized_gemm",
            input_dims: Some("[[32, 2880], [5120, 2880], [5120]]"),
            input_type: Some(r#"["c10::BFloat16", "c10::BFloat16", "float"]"#),
            ..OpShape::default()
        })
        .expect("modelled");
        // (32·2880 + 5120·2880)·2 + 5120·4 (bias) + 32·5120·4 (output)
        assert_eq!(m.bytes, 30_351_360.0);
        assert_eq!(
            m.param("dtype_A_B"),
            Some("('c10::BFloat16', 'c10::BFloat16', 'float')")
        );
        // Without a bias it writes in the weight's dtype, not the activation's.
        let m = model(&OpShape {
            name: "vllm::rocm_unquantized_gemm",
            input_dims: Some("[[32, 2880], [5120, 2880]]"),
            input_type: Some(r#"["float", "c10::BFloat16"]"#),
            ..OpShape::default()
        })
        .expect("modelled");
        assert_eq!(
            m.bytes,
            ((32 * 2880 * 4 + 5120 * 2880 * 2) + 32 * 5120 * 2) as f64
        );
    }

    #[test]
    fn gemm_a16w16_without_bias() {
        let m = model(&OpShape {
            name: "aiter::gemm_a16w16",
            input_dims: Some("[[32, 4096], [24576, 4096], [], [], [], [], []]"),
            input_type: Some(r#"["c10::BFloat16", "c10::BFloat16", "", "Scalar", "", "", ""]"#),
            ..OpShape::default()
        })
        .expect("modelled");
        assert_eq!(m.flops, 6_442_450_944.0);
        assert_eq!(m.bytes, 203_161_600.0);
    }

    /// Only `(M, K)·(N, K)ᵀ` is modelled: a batched activation or weight
    /// (even one whose second size equals K), or unequal K, is refused.
    #[test]
    fn a_gemm_that_is_not_two_matrices_is_refused() {
        for dims in [
            "[[8, 64, 4096], [24576, 64]]",
            "[[32, 4096], [24576, 4096, 7]]",
            "[[2, 32, 4096], [2, 24576, 4096]]",
            "[[32, 4096], [24576, 2048]]",
        ] {
            let refused = model(&OpShape {
                name: "aiter::gemm_a16w16",
                input_dims: Some(dims),
                input_type: Some(r#"["c10::BFloat16", "c10::BFloat16"]"#),
                ..OpShape::default()
            });
            assert!(refused.is_err(), "{dims}");
        }
    }
}
