//! Gated activations of inference kernels (`silu_and_mul`, `gelu_and_mul`):
//! `out[…, :d] = act(input[…, :d]) · input[…, d:]`, recorded as
//! `(out, input)`. TraceLens's `UnaryElementwise` sheet.
//!
//! n = elements of `out`; flops = k·n with k the activation's cost plus the
//! gate multiply (SiLU 5, erf GELU 8, tanh GELU 10, as TraceLens counts);
//! bytes = 2·n·bpe_in (both halves of the input read) + n·bpe_out.

use super::args::{Args, numel};
use super::family::{Family, NoModel, PerfModel};
use super::repr::{params, str_tuple_repr, tuple_repr};

/// FLOPs per output element of each op.
fn flops_per_element(name: &str) -> Option<u32> {
    Some(match name {
        "sgl_kernel::silu_and_mul" | "aiter::silu_and_mul" | "_C::silu_and_mul" => 5,
        "aiter::gelu_and_mul" => 8,
        "aiter::gelu_tanh_and_mul" => 10,
        _ => return None,
    })
}

/// Whether this module models the op.
pub fn handles(name: &str) -> bool {
    flops_per_element(name).is_some()
}

pub(crate) fn model(args: &Args) -> Result<PerfModel, NoModel> {
    let per_element = flops_per_element(args.name).ok_or_else(|| NoModel::UnknownOp {
        name: args.name.to_string(),
    })?;
    let out = args.shape(0)?;
    let (dtype_out, dtype_in) = (args.dtype(0)?, args.dtype(1)?);
    let n = numel(&out);
    let flops = n * u128::from(per_element);
    let bytes = 2 * n * dtype_in.size() + n * dtype_out.size();
    let (flops, bytes) = args.measured(flops, bytes)?;
    Ok(PerfModel {
        family: Family::UnaryElementwise,
        flops,
        bytes,
        compute_spec: dtype_in.vector_spec(),
        params: params([
            ("op_shape", tuple_repr(&out)),
            (
                "dtype_in_out",
                str_tuple_repr(&[args.type_str(1), args.type_str(0)]),
            ),
            ("stride_input", args.stride_repr(1)),
            ("stride_output", args.stride_repr(0)),
        ]),
    })
}

#[cfg(test)]
mod tests {
    use crate::analysis::perf_model::{Family, OpShape, model};

    #[test]
    fn silu_and_mul_reads_both_halves() {
        let m = model(&OpShape {
            name: "sgl_kernel::silu_and_mul",
            input_dims: Some("[[32, 12288], [32, 24576]]"),
            input_type: Some(r#"["c10::BFloat16", "c10::BFloat16"]"#),
            ..OpShape::default()
        })
        .expect("modelled");
        assert_eq!(m.family, Family::UnaryElementwise);
        assert_eq!(m.flops, 5.0 * 393_216.0);
        assert_eq!(m.bytes, 2.25 * 1024.0 * 1024.0);
    }

    #[test]
    fn each_gated_activation_has_its_flops_per_element() {
        for (name, per_element) in [
            ("aiter::silu_and_mul", 5.0),
            ("_C::silu_and_mul", 5.0),
            ("aiter::gelu_and_mul", 8.0),
            ("aiter::gelu_tanh_and_mul", 10.0),
        ] {
            let m = model(&OpShape {
                name,
                input_dims: Some("[[4, 8], [4, 16]]"),
                input_type: Some(r#"["c10::BFloat16", "c10::BFloat16"]"#),
                ..OpShape::default()
            })
            .expect(name);
            assert_eq!(m.flops, per_element * 32.0, "{name}");
        }
    }
}
