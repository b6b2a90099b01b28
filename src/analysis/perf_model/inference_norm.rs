//! RMS norms of inference kernels (aiter), TraceLens's `RMSNorm` sheet.
//!
//! Each op records its input, weight and (for the fused ones) residual at
//! its own positions; the figures are the RMS norm's ([`Norm::rms_flops`],
//! [`Norm::rms_bytes`]: rows·(2·C + 2) + 2·n FLOPs with the affine weight,
//! input read and output written plus the weight), and the fused residual
//! add (`add_rmsnorm`, `rmsnorm2d_fwd_with_add_ck`) adds n FLOPs and reads
//! the residual and writes the updated one: 4·n·bpe + C·bpe bytes in all.

use super::args::{Args, numel};
use super::family::{Family, NoModel, PerfModel};
use super::norm::Norm;
use super::repr::{bool_repr, params, str_tuple_repr, tuple_repr};

/// Where an op records its input and weight, and whether it adds a residual.
struct Layout {
    input: usize,
    weight: usize,
    residual_add: bool,
}

fn layout(name: &str) -> Option<Layout> {
    let (input, weight, residual_add) = match name {
        // rms_norm(x, weight, eps)
        "aiter::rms_norm" => (0, 1, false),
        // rmsnorm(out, input, weight, eps)
        "aiter::rmsnorm" => (1, 2, false),
        // (out, input, residual_in, residual_out, weight, eps, …)
        "aiter::add_rmsnorm" | "aiter::rmsnorm2d_fwd_with_add_ck" => (1, 4, true),
        _ => return None,
    };
    Some(Layout {
        input,
        weight,
        residual_add,
    })
}

/// Whether this module models the op.
pub fn handles(name: &str) -> bool {
    layout(name).is_some()
}

pub(crate) fn model(args: &Args) -> Result<PerfModel, NoModel> {
    let layout = layout(args.name).ok_or_else(|| NoModel::UnknownOp {
        name: args.name.to_string(),
    })?;
    let shape = args.shape(layout.input)?;
    let dtype = args.dtype(layout.input)?;
    let channels = *args
        .shape(layout.weight)?
        .first()
        .ok_or_else(|| args.bad("the weight is a scalar"))?;
    let n = args.exact(numel(&shape))?;
    let c = u128::from(channels);
    if c == 0 || n % c != 0 {
        return Err(args.bad(format!("{c} channels do not divide {n} elements")));
    }
    let bpe = u128::from(dtype.bytes());
    let norm = Norm {
        n,
        c,
        bpe,
        affine: true,
        bias: false,
        training: false,
    };
    let (mut flops, mut bytes) = args.figures(norm.rms_flops(), norm.rms_bytes())?;
    if layout.residual_add {
        // The residual read and the updated residual written, and one add per element.
        flops += n as f64;
        bytes += (2 * n * bpe) as f64;
    }
    Ok(PerfModel {
        family: Family::RmsNorm,
        flops,
        bytes,
        compute_spec: dtype.vector_spec(),
        params: params([
            ("op_shape", tuple_repr(&shape)),
            (
                "dtype_in_out",
                str_tuple_repr(&[args.type_str(layout.input), None]),
            ),
            ("stride_input", args.stride_repr(layout.input)),
            ("stride_output", "None".to_string()),
            ("num_channels", channels.to_string()),
            ("has_bias", bool_repr(false)),
            ("is_affine", bool_repr(true)),
            ("is_training", bool_repr(false)),
        ]),
    })
}

#[cfg(test)]
mod tests {
    use crate::analysis::perf_model::{Family, NoModel, OpShape, model};

    fn op<'a>(name: &'a str, dims: &'a str, types: &'a str) -> OpShape<'a> {
        OpShape {
            name,
            input_dims: Some(dims),
            input_type: Some(types),
            ..OpShape::default()
        }
    }

    #[test]
    fn aiter_rms_norm_and_rmsnorm() {
        // TraceLens: 32·(2·2880 + 2) + 2·92160 FLOPs; 2·92160·2 + 2880·2 bytes.
        let m = model(&op(
            "aiter::rms_norm",
            "[[32, 2880], [2880], [], []]",
            r#"["c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"]"#,
        ))
        .expect("modelled");
        assert_eq!(m.family, Family::RmsNorm);
        assert_eq!(m.flops, 368_704.0);
        assert_eq!(m.bytes, 374_400.0);
        let m = model(&op(
            "aiter::rmsnorm",
            "[[256, 128], [256, 128], [128], []]",
            r#"["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar"]"#,
        ))
        .expect("modelled");
        assert_eq!((m.flops, m.bytes), (131_584.0, 131_328.0));
        // A weight whose length does not divide the input is refused.
        let r = model(&op(
            "aiter::rms_norm",
            "[[32, 2880], [2800], [], []]",
            r#"["c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"]"#,
        ));
        assert!(matches!(r, Err(NoModel::BadArgs { .. })), "{r:?}");
    }

    #[test]
    fn fused_residual_add() {
        let dims = "[[32, 4096], [32, 4096], [32, 4096], [32, 4096], [4096], []]";
        let types = r#"["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar"]"#;
        let m = model(&op("aiter::add_rmsnorm", dims, types)).expect("modelled");
        assert_eq!(m.flops, 655_424.0);
        assert_eq!(m.bytes, (4 * 131_072 * 2 + 4096 * 2) as f64);
    }
}
