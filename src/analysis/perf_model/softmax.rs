//! Softmax and log-softmax along one dimension, forward and backward.
//!
//! Forward: each element is read once and written once; flops = 3·n (an
//! exponential, an add into the row sum and a divide per element, as
//! TraceLens's softmax model counts them). Backward (`dx = y·(dy − Σdy·y)`,
//! or `dy − exp(y)·Σdy` for log-softmax): flops = 4·n; bytes = dy and y
//! read, dx written.

use super::args::{Args, numel};
use super::dtype::Dtype;
use super::family::{Family, NoModel, PerfModel};
use super::repr::{params, str_tuple_repr, tuple_repr};

const FORWARD: &[&str] = &[
    "aten::_softmax",
    "aten::_log_softmax",
    "aten::softmax",
    "aten::log_softmax",
    "aten::_safe_softmax",
];

const BACKWARD: &[&str] = &[
    "aten::_softmax_backward_data",
    "aten::_log_softmax_backward_data",
];

/// FLOPs per element of the forward pass.
pub const FLOPS_PER_ELEMENT: u128 = 3;

/// FLOPs per element of the backward pass.
pub const FLOPS_PER_ELEMENT_BACKWARD: u128 = 4;

/// Whether this module models the op.
pub fn handles(name: &str) -> bool {
    FORWARD.contains(&name) || BACKWARD.contains(&name)
}

fn check_dim(args: &Args, shape: &[u64], index: usize) -> Result<i64, NoModel> {
    let rank = shape.len().max(1) as i64;
    match args.int_list(index)?.as_deref() {
        Some([d]) if (-rank..rank).contains(d) => Ok(*d),
        other => Err(args.bad(format!("bad softmax dim {other:?} for {shape:?}"))),
    }
}

pub(crate) fn model(args: &Args) -> Result<PerfModel, NoModel> {
    let shape = args.shape(0)?;
    let n = numel(&shape);
    let dtype_in = args.dtype(0)?;
    if BACKWARD.contains(&args.name) {
        // (grad_output, output, dim, input_dtype)
        let dtype_y = args.dtype(1)?;
        let dim = check_dim(args, &shape, 2)?;
        let dtype_dx = args
            .concrete(3)
            .and_then(Dtype::from_scalar_type_code)
            .unwrap_or(dtype_in);
        let bytes = n * (dtype_in.size() + dtype_y.size() + dtype_dx.size());
        let (flops, bytes) = args.measured(FLOPS_PER_ELEMENT_BACKWARD * n, bytes)?;
        return Ok(PerfModel {
            family: Family::SoftmaxBwd,
            flops,
            bytes,
            compute_spec: dtype_in.vector_spec(),
            params: params([
                ("op_shape", tuple_repr(&shape)),
                ("dim", dim.to_string()),
                (
                    "dtype_in_out",
                    str_tuple_repr(&[args.type_str(0), args.type_str(1)]),
                ),
            ]),
        });
    }
    let dim = check_dim(args, &shape, 1)?;
    // `_softmax(self, dim, half_to_float)`; `softmax(self, dim, dtype)`.
    let dtype_out = if args.name.starts_with("aten::_") && args.name != "aten::_safe_softmax" {
        if args.flag(2)?.unwrap_or(false) {
            Dtype::F32
        } else {
            dtype_in
        }
    } else {
        args.concrete(2)
            .and_then(Dtype::from_scalar_type_code)
            .unwrap_or(dtype_in)
    };
    let bytes = n * (dtype_in.size() + dtype_out.size());
    let (flops, bytes) = args.measured(FLOPS_PER_ELEMENT * n, bytes)?;
    Ok(PerfModel {
        family: Family::SoftmaxFwd,
        flops,
        bytes,
        compute_spec: dtype_in.vector_spec(),
        params: params([
            ("op_shape", tuple_repr(&shape)),
            ("dim", dim.to_string()),
            ("dtype_in_out", str_tuple_repr(&[args.type_str(0), None])),
        ]),
    })
}

#[cfg(test)]
mod tests {
    use super::super::{OpShape, model as model_op};
    use super::*;

    fn op<'a>(name: &'a str, dims: &'a str, types: &'a str, concrete: &'a str) -> OpShape<'a> {
        OpShape {
            name,
            input_dims: Some(dims),
            input_type: Some(types),
            input_strides: None,
            concrete_inputs: Some(concrete),
        }
    }

    #[test]
    fn attention_scores_softmax() {
        // (16, 5185, 5185) bf16 over the last dim.
        let m = model_op(&op(
            "aten::_softmax",
            "[[16, 5185, 5185], [], []]",
            r#"["c10::BFloat16", "Scalar", "Scalar"]"#,
            r#"["", "-1", "False"]"#,
        ))
        .expect("modelled");
        let n = 16u128 * 5185 * 5185;
        assert_eq!(m.flops, (3 * n) as f64);
        assert_eq!(m.bytes, (n * 4) as f64);
        assert_eq!(m.family, Family::SoftmaxFwd);
    }

    #[test]
    fn half_to_float_writes_fp32() {
        let m = model_op(&op(
            "aten::_log_softmax",
            "[[8, 100], [], []]",
            r#"["c10::Half", "Scalar", "Scalar"]"#,
            r#"["", "1", "True"]"#,
        ))
        .expect("modelled");
        assert_eq!(m.bytes, (800 * (2 + 4)) as f64);
        // `softmax(self, dim, dtype)` writes the dtype it is given (6: fp32).
        for name in ["aten::softmax", "aten::_safe_softmax"] {
            let m = model_op(&op(
                name,
                "[[8, 100], [], []]",
                r#"["c10::Half", "Scalar", "Scalar"]"#,
                r#"["", "1", "6"]"#,
            ))
            .expect(name);
            assert_eq!(m.bytes, (800 * (2 + 4)) as f64, "{name}");
        }
    }

    #[test]
    fn backward_reads_grad_and_output() {
        let m = model_op(&op(
            "aten::_softmax_backward_data",
            "[[4, 10], [4, 10], [], []]",
            r#"["float", "float", "Scalar", "Scalar"]"#,
            r#"["", "", "-1", "6"]"#,
        ))
        .expect("modelled");
        assert_eq!(m.family, Family::SoftmaxBwd);
        assert_eq!(m.flops, 160.0);
        assert_eq!(m.bytes, (40 * 12) as f64);
    }

    #[test]
    fn dim_out_of_range_is_refused() {
        assert!(
            model_op(&op(
                "aten::_softmax",
                "[[4, 10], [], []]",
                r#"["float", "Scalar", "Scalar"]"#,
                r#"["", "2", "False"]"#,
            ))
            .is_err()
        );
    }
}
