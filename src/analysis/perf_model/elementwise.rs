//! Elementwise ops.
//!
//! Unary: flops = n; bytes = n·(bpe_in + bpe_out) (a copy reads its source
//! and writes its destination, each at its own size and type).
//! Binary: n_out = ∏ broadcast(shape₁, shape₂); flops = n_out;
//! bytes = n₁·bpe₁ + n₂·bpe₂ + n_out·bpe_out, where a Python-number operand
//! counts one element of its recorded type (`Scalar`: 4 bytes, `double`: 8).

use super::args::{Args, numel};
use super::dtype::Dtype;
use super::family::{Family, NoModel, PerfModel};
use super::repr::{params, str_tuple_repr, tuple_repr};

/// One-input ops (TraceLens's set first, then leaf ops of the same shape).
const UNARY: &[&str] = &[
    "aten::copy",
    "aten::copy_",
    "aten::clamp_min",
    "aten::clamp_min_",
    "aten::clamp_max",
    "aten::clamp_max_",
    "aten::sigmoid",
    "aten::rsqrt",
    "aten::silu",
    "aten::neg",
    "aten::pow",
    "aten::sigmoid_",
    "aten::rsqrt_",
    "aten::silu_",
    "aten::neg_",
    "aten::pow_",
    "aten::clamp",
    "aten::clamp_",
    "aten::gelu",
    "aten::gelu_",
    "aten::tanh",
    "aten::tanh_",
    "aten::exp",
    "aten::exp_",
    "aten::log",
    "aten::sqrt",
    "aten::abs",
    "aten::cos",
    "aten::sin",
    "aten::reciprocal",
    "aten::erf",
];

/// Two-input ops with broadcasting.
const BINARY: &[&str] = &[
    "aten::div",
    "aten::div_",
    "aten::mul",
    "aten::mul_",
    "aten::add",
    "aten::add_",
    "aten::sigmoid_backward",
    "aten::threshold_backward",
    "aten::sub",
    "aten::sub_",
    "aten::maximum",
    "aten::minimum",
    "aten::gelu_backward",
    "aten::silu_backward",
    "aten::tanh_backward",
];

/// Nearest-neighbour upsampling: one read per input element, one write
/// (and one flop) per output element.
const UPSAMPLE: &[&str] = &[
    "aten::upsample_nearest1d",
    "aten::upsample_nearest2d",
    "aten::upsample_nearest3d",
    "aten::_upsample_nearest_exact1d",
    "aten::_upsample_nearest_exact2d",
    "aten::_upsample_nearest_exact3d",
];

/// Whether this module models the op.
pub fn handles(name: &str) -> bool {
    UNARY.contains(&name) || BINARY.contains(&name) || UPSAMPLE.contains(&name)
}

/// NumPy/PyTorch broadcasting of two shapes; `None` when they do not broadcast.
pub fn broadcast(a: &[u64], b: &[u64]) -> Option<Vec<u64>> {
    let rank = a.len().max(b.len());
    let at = |shape: &[u64], i: usize| -> u64 {
        let offset = rank - shape.len();
        if i < offset { 1 } else { shape[i - offset] }
    };
    (0..rank)
        .map(|i| {
            let (x, y) = (at(a, i), at(b, i));
            match (x, y) {
                _ if x == y => Some(x),
                (1, _) => Some(y),
                (_, 1) => Some(x),
                _ => None,
            }
        })
        .collect()
}

pub(crate) fn model(args: &Args) -> Result<PerfModel, NoModel> {
    let name = args.name;
    let is_copy = name == "aten::copy" || name == "aten::copy_";
    if UPSAMPLE.contains(&name) {
        return upsample(args);
    }
    if BINARY.contains(&name) || (!is_copy && args.has_tensor(1)) {
        return binary(args);
    }
    unary(args, is_copy)
}

fn unary(args: &Args, is_copy: bool) -> Result<PerfModel, NoModel> {
    let shape = args.shape(0)?;
    let dtype_in = args.dtype(0)?;
    let n = numel(&shape);
    // `copy_(self, src)`: the destination is written, the source read.
    let (second, has_out) = if is_copy && args.len() > 1 {
        let src = args.shape(1)?;
        (Some((numel(&src), args.dtype(1)?)), !src.is_empty())
    } else {
        (None, false)
    };
    let bytes = match second {
        Some((n_src, dtype_src)) => n * dtype_in.size() + n_src * dtype_src.size(),
        None => n * 2 * dtype_in.size(),
    };
    let (flops, bytes) = args.measured(n, bytes)?;
    let out_type = has_out.then(|| args.type_str(1)).flatten();
    Ok(PerfModel {
        family: Family::UnaryElementwise,
        flops,
        bytes,
        compute_spec: dtype_in.vector_spec(),
        params: params([
            ("op_shape", tuple_repr(&shape)),
            (
                "dtype_in_out",
                str_tuple_repr(&[args.type_str(0), out_type]),
            ),
            ("stride_input", args.stride_repr(0)),
            (
                "stride_output",
                if has_out {
                    args.stride_repr(1)
                } else {
                    "None".to_string()
                },
            ),
        ]),
    })
}

/// `upsample_nearest*(input, output_size, scales…)` or the `.vec` form
/// `(input, output_size?, scale_factors?)`.
fn upsample(args: &Args) -> Result<PerfModel, NoModel> {
    let input = args.shape(0)?;
    let spatial = input.len().saturating_sub(2);
    if spatial == 0 {
        return Err(args.bad(format!("no spatial dims in {input:?}")));
    }
    let sizes: Vec<u64> = match args.int_list(1)? {
        Some(sizes) if sizes.len() == spatial && sizes.iter().all(|&s| s > 0) => {
            sizes.into_iter().map(|s| s as u64).collect()
        }
        Some(other) => return Err(args.bad(format!("bad output_size {other:?}"))),
        None => {
            // `.vec`: scale_factors as a float list.
            let text = args.concrete(2).unwrap_or("").trim();
            let factors: Option<Vec<f64>> = text
                .strip_prefix('[')
                .and_then(|t| t.strip_suffix(']'))
                .and_then(|inner| inner.split(',').map(super::args::parse_float).collect());
            match factors {
                Some(f) if f.len() == spatial => {
                    let sizes: Vec<f64> = input[2..]
                        .iter()
                        .zip(f)
                        .map(|(&size, scale)| (size as f64 * scale).floor())
                        .collect();
                    // A saturating cast would turn a negative or huge size into 0 or u64::MAX.
                    if sizes.iter().any(|&s| !(0.0..=i64::MAX as f64).contains(&s)) {
                        return Err(args.implausible(format!(
                            "scale_factors `{text}` give output sizes {sizes:?}"
                        )));
                    }
                    sizes.into_iter().map(|s| s as u64).collect()
                }
                _ => return Err(args.bad("neither output_size nor scale_factors recorded")),
            }
        }
    };
    let output: Vec<u64> = input[..2].iter().copied().chain(sizes).collect();
    let dtype = args.dtype(0)?;
    let (n_in, n_out) = (numel(&input), numel(&output));
    let (flops, bytes) = args.measured(n_out, (n_in + n_out) * dtype.size())?;
    Ok(PerfModel {
        family: Family::UnaryElementwise,
        flops,
        bytes,
        compute_spec: dtype.vector_spec(),
        params: params([
            ("input_shape", tuple_repr(&input)),
            ("output_shape", tuple_repr(&output)),
            ("op_shape", tuple_repr(&output)),
            (
                "dtype_in_out",
                str_tuple_repr(&[args.type_str(0), args.type_str(0)]),
            ),
            ("stride_input", args.stride_repr(0)),
            ("stride_output", "None".to_string()),
        ]),
    })
}

fn binary(args: &Args) -> Result<PerfModel, NoModel> {
    let (shape1, shape2) = (args.shape(0)?, args.shape(1)?);
    let (dtype1, dtype2) = (args.dtype(0)?, args.dtype(1)?);
    let out_shape = broadcast(&shape1, &shape2)
        .ok_or_else(|| args.bad(format!("shapes do not broadcast: {shape1:?}, {shape2:?}")))?;
    let has_out = args.has_tensor(2);
    let in_place = args.name.ends_with('_');
    let dtype_out = if has_out {
        args.dtype(2)?
    } else if in_place {
        dtype1
    } else {
        match (shape1.is_empty(), shape2.is_empty()) {
            (false, false) | (true, true) => Dtype::promote(dtype1, dtype2),
            (false, true) => Dtype::promote_with_scalar(dtype1, dtype2),
            (true, false) => Dtype::promote_with_scalar(dtype2, dtype1),
        }
    };
    let (n1, n2, n_out) = (numel(&shape1), numel(&shape2), numel(&out_shape));
    let bytes = n1 * dtype1.size() + n2 * dtype2.size() + n_out * dtype_out.size();
    let (flops, bytes) = args.measured(n_out, bytes)?;
    let out_type = has_out.then(|| args.type_str(2)).flatten();
    Ok(PerfModel {
        family: Family::BinaryElementwise,
        flops,
        bytes,
        compute_spec: dtype1.vector_spec(),
        params: params([
            ("shape_in1", tuple_repr(&shape1)),
            ("shape_in2", tuple_repr(&shape2)),
            (
                "dtype_in1_in2_out",
                str_tuple_repr(&[args.type_str(0), args.type_str(1), out_type]),
            ),
            ("stride_input1", args.stride_repr(0)),
            ("stride_input2", args.stride_repr(1)),
            (
                "stride_output",
                if has_out {
                    args.stride_repr(2)
                } else {
                    "None".to_string()
                },
            ),
        ]),
    })
}

#[cfg(test)]
mod tests;
