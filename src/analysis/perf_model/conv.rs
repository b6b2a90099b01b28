//! Convolution, forward and backward (any number of spatial dimensions,
//! grouped, dilated, transposed).
//!
//! out = ⌊(in + 2p − d·(k−1) − 1)/s⌋ + 1 per spatial dim (transposed:
//! (in−1)·s − 2p + d·(k−1) + output_padding + 1);
//! flops = 2·∏w[1:]·∏out (transposed: ·∏x) + ∏out with a bias;
//! bytes = ∏x·bpe_x + ∏w·bpe_w + ∏out·bpe_x + C_out·bpe_bias.
//! Backward: the input gradient and the weight gradient each cost one
//! forward convolution; the bias gradient reads dY once.

use super::args::{Args, numel};
use super::count::Count;
use super::dtype::Dtype;
use super::family::{Family, NoModel, PerfModel};
use super::repr::{bool_repr, params, str_repr, str_tuple_repr, tuple_repr};

/// Whether this module models the op.
pub fn handles(name: &str) -> bool {
    matches!(
        name,
        "aten::convolution" | "aten::_convolution" | "aten::convolution_backward"
    )
}

/// One convolution with its derived output shape.
#[derive(Clone, Debug, PartialEq)]
pub struct Conv {
    /// Input shape `(N, C_in, spatial…)`.
    pub input: Vec<u64>,
    /// Weight shape `(C_out, C_in/groups, k…)` (transposed: `(C_in, C_out/groups, k…)`).
    pub weight: Vec<u64>,
    /// Output shape `(N, C_out, spatial…)`.
    pub output: Vec<u64>,
    /// Stride per spatial dim.
    pub stride: Vec<i64>,
    /// Padding per spatial dim.
    pub padding: Vec<i64>,
    /// Dilation per spatial dim.
    pub dilation: Vec<i64>,
    /// Output padding per spatial dim (transposed only).
    pub output_padding: Vec<i64>,
    /// Whether it is a transposed convolution.
    pub transposed: bool,
    /// Channel groups.
    pub groups: u64,
    /// The input's type (and the output's).
    pub dtype_input: Dtype,
    /// The weight's type.
    pub dtype_weight: Dtype,
    /// The bias's type, when there is a bias.
    pub bias: Option<Dtype>,
}

impl Conv {
    /// FLOPs of the convolution itself (2 per multiply-add), without the bias.
    fn conv_flops(&self) -> Count {
        let per_element = 2 * numel(&self.weight[1..]);
        if self.transposed {
            per_element * numel(&self.input)
        } else {
            per_element * numel(&self.output)
        }
    }

    /// Forward FLOPs.
    pub fn flops(&self) -> Count {
        let bias = if self.bias.is_some() {
            numel(&self.output)
        } else {
            Count::ZERO
        };
        self.conv_flops() + bias
    }

    /// Forward bytes.
    pub fn bytes(&self) -> Count {
        let x = self.dtype_input.size();
        let bias = self.bias.map_or(Count::ZERO, |dtype| {
            Count::from(self.output[1]) * dtype.size()
        });
        numel(&self.input) * x
            + numel(&self.weight) * self.dtype_weight.size()
            + numel(&self.output) * x
            + bias
    }

    /// Backward FLOPs for the gradients `mask` asks for (input, weight, bias).
    pub fn flops_backward(&self, mask: [bool; 3]) -> Count {
        let conv = self.conv_flops();
        let mut total = Count::ZERO;
        if mask[0] {
            total += conv;
        }
        if mask[1] {
            total += conv;
        }
        if mask[2] {
            total += numel(&self.output);
        }
        total
    }

    /// Backward bytes for the gradients `mask` asks for: the input gradient
    /// reads dY and W and writes dX; the weight gradient reads dY and X and
    /// writes dW; the bias gradient reads dY and writes C_out elements.
    pub fn bytes_backward(&self, mask: [bool; 3], dtype_grad: Dtype) -> Count {
        let (x, w, dy) = (
            numel(&self.input) * self.dtype_input.size(),
            numel(&self.weight) * self.dtype_weight.size(),
            numel(&self.output) * dtype_grad.size(),
        );
        let mut total = Count::ZERO;
        if mask[0] {
            total += dy + w + x;
        }
        if mask[1] {
            total += dy + x + w;
        }
        if mask[2] {
            let bias = self.bias.unwrap_or(dtype_grad);
            total += dy + Count::from(self.output[1]) * bias.size();
        }
        total
    }
}

/// Reads a convolution from `(input, weight, bias, stride, padding,
/// dilation, transposed, output_padding, groups)` starting at index `base`
/// (0 for `aten::convolution`, 1 for `convolution_backward`, whose bias
/// slot holds `bias_sizes`).
fn parse(args: &Args, base: usize, has_bias: Option<bool>) -> Result<Conv, NoModel> {
    let input = args.shape(base)?;
    let weight = args.shape(base + 1)?;
    if input.len() < 3 || weight.len() != input.len() {
        return Err(args.bad(format!(
            "not a convolution: input {input:?}, weight {weight:?}"
        )));
    }
    let spatial = input.len() - 2;
    let per_dim = |i: usize, default: i64| -> Result<Vec<i64>, NoModel> {
        let values = args.int_list(i)?.unwrap_or_else(|| vec![default]);
        match values.len() {
            1 => Ok(vec![values[0]; spatial]),
            n if n == spatial => Ok(values),
            _ => Err(args.bad(format!(
                "input {i} has {} values for {spatial} dims",
                values.len()
            ))),
        }
    };
    let stride = per_dim(base + 3, 1)?;
    let padding = per_dim(base + 4, 0)?;
    let dilation = per_dim(base + 5, 1)?;
    let transposed = args.flag(base + 6)?.unwrap_or(false);
    let output_padding = per_dim(base + 7, 0)?;
    let groups = match args.int_list(base + 8)? {
        None => 1,
        Some(values) if values.len() == 1 && values[0] >= 1 => values[0] as u64,
        Some(values) => return Err(args.bad(format!("bad groups: {values:?}"))),
    };
    if stride.iter().chain(&dilation).any(|&v| v < 1) || padding.iter().any(|&v| v < 0) {
        return Err(args.bad("non-positive stride or dilation, or negative padding"));
    }
    let grouped = weight[1]
        .checked_mul(groups)
        .ok_or_else(|| args.implausible(format!("{groups} groups of {} channels", weight[1])))?;
    let (c_in, c_out) = if transposed {
        (weight[0], grouped)
    } else {
        (grouped, weight[0])
    };
    if input[1] != c_in {
        return Err(args.bad(format!(
            "input has {} channels, the weight expects {c_in} ({groups} groups)",
            input[1]
        )));
    }
    let mut output = vec![input[0], c_out];
    for d in 0..spatial {
        let size = output_size(
            input[d + 2],
            weight[d + 2],
            [stride[d], padding[d], dilation[d], output_padding[d]],
            transposed,
        )
        .ok_or_else(|| {
            args.implausible(format!(
                "the output size of spatial dim {d} overflows 64 bits: input {input:?}, weight {weight:?}"
            ))
        })?;
        if size < 1 {
            return Err(args.bad(if transposed {
                "empty output"
            } else {
                "kernel larger than the padded input"
            }));
        }
        output.push(size as u64);
    }
    let bias = match has_bias {
        Some(false) => None,
        Some(true) => Some(args.dtype(0)?),
        None => match args.tensor_shape(base + 2) {
            Some(_) => Some(args.dtype(base + 2)?),
            None => None,
        },
    };
    Ok(Conv {
        input,
        weight,
        output,
        stride,
        padding,
        dilation,
        output_padding,
        transposed,
        groups,
        dtype_input: args.dtype(base)?,
        dtype_weight: args.dtype(base + 1)?,
        bias,
    })
}

/// One spatial output size, in 128 bits (sizes and arguments are 64-bit):
/// `(in−1)·s − 2p + d·(k−1) + output_padding + 1` transposed, else
/// `⌊(in + 2p − d·(k−1) − 1)/s⌋ + 1` (0 when the kernel overhangs the
/// padded input). `None` when it does not fit an `i64` size.
fn output_size(input: u64, kernel: u64, [s, p, d, op]: [i64; 4], transposed: bool) -> Option<i64> {
    let (i, k) = (i128::from(input), i128::from(kernel));
    let (s, p, d, op) = (i128::from(s), i128::from(p), i128::from(d), i128::from(op));
    let size = if transposed {
        (i - 1)
            .checked_mul(s)?
            .checked_sub(p.checked_mul(2)?)?
            .checked_add(d.checked_mul(k - 1)?)?
            .checked_add(op)?
            .checked_add(1)?
    } else {
        let span = i
            .checked_add(p.checked_mul(2)?)?
            .checked_sub(d.checked_mul(k - 1)?)?
            .checked_sub(1)?;
        if span < 0 { 0 } else { span / s + 1 }
    };
    i64::try_from(size).ok()
}

fn conv_params(args: &Args, conv: &Conv, base: usize) -> Vec<(String, String)> {
    params([
        (
            "convNd",
            str_repr(Some(&format!("conv{}d", conv.input.len() - 2))),
        ),
        ("input_shape", tuple_repr(&conv.input)),
        ("filter_shape", tuple_repr(&conv.weight)),
        (
            "dtype_input_weight",
            str_tuple_repr(&[args.type_str(base), args.type_str(base + 1)]),
        ),
        ("input_stride", args.stride_repr(base)),
        ("weight_stride", args.stride_repr(base + 1)),
        ("bias", bool_repr(conv.bias.is_some())),
        ("stride", tuple_repr(&conv.stride)),
        ("padding", tuple_repr(&conv.padding)),
        ("dilation", tuple_repr(&conv.dilation)),
        ("transposed_conv", bool_repr(conv.transposed)),
        ("output_padding", tuple_repr(&conv.output_padding)),
        ("groups", conv.groups.to_string()),
    ])
}

fn parse_mask(args: &Args, i: usize) -> Result<[bool; 3], NoModel> {
    let text = args.concrete(i).unwrap_or("").trim();
    let inner = text
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .ok_or_else(|| args.bad(format!("output_mask not recorded: `{text}`")))?;
    let flags: Option<Vec<bool>> = inner.split(',').map(super::args::parse_bool).collect();
    match flags.as_deref() {
        Some([a, b, c]) => Ok([*a, *b, *c]),
        _ => Err(args.bad(format!("bad output_mask: `{text}`"))),
    }
}

pub(crate) fn model(args: &Args) -> Result<PerfModel, NoModel> {
    if args.name == "aten::convolution_backward" {
        // (grad_output, input, weight, bias_sizes, stride, padding, dilation,
        //  transposed, output_padding, groups, output_mask)
        let mask = parse_mask(args, 10)?;
        let conv = parse(args, 1, Some(mask[2]))?;
        let grad = args.shape(0)?;
        if grad != conv.output {
            return Err(args.bad(format!(
                "grad_output {grad:?} does not match the output {:?}",
                conv.output
            )));
        }
        let dtype_grad = args.dtype(0)?;
        let (flops, bytes) = args.measured(
            conv.flops_backward(mask),
            conv.bytes_backward(mask, dtype_grad),
        )?;
        return Ok(PerfModel {
            family: Family::ConvBwd,
            flops,
            bytes,
            compute_spec: conv.dtype_input.matrix_spec(),
            params: conv_params(args, &conv, 1),
        });
    }
    let conv = parse(args, 0, None)?;
    let (flops, bytes) = args.measured(conv.flops(), conv.bytes())?;
    Ok(PerfModel {
        family: Family::ConvFwd,
        flops,
        bytes,
        compute_spec: conv.dtype_input.matrix_spec(),
        params: conv_params(args, &conv, 0),
    })
}

pub(crate) fn model_backward(args: &Args) -> Result<PerfModel, NoModel> {
    let conv = parse(args, 0, None)?;
    let mask = [true, true, conv.bias.is_some()];
    let (flops, bytes) = args.measured(
        conv.flops_backward(mask),
        conv.bytes_backward(mask, conv.dtype_input),
    )?;
    Ok(PerfModel {
        family: Family::ConvBwd,
        flops,
        bytes,
        compute_spec: conv.dtype_input.matrix_spec(),
        params: conv_params(args, &conv, 0),
    })
}

#[cfg(test)]
mod tests {
    use super::super::{OpShape, model as model_op, model_backward as backward_op};
    use super::*;
    use crate::analysis::hardware::ComputeSpec;

    const TYPES_9: &str = r#"["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"]"#;

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
    fn patch_embedding_with_bias() {
        // ViT patch embedding: x (4,3,224,224), w (768,3,16,16), bias (768,), stride 16.
        let m = model_op(&op(
            "aten::convolution",
            "[[4, 3, 224, 224], [768, 3, 16, 16], [768], [], [], [], [], [], []]",
            TYPES_9,
            r#"["", "", "", "[16, 16]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1"]"#,
        ))
        .expect("modelled");
        // out (4,768,14,14) = 602,112 elements; 2·3·16·16 = 1,536 flops each, plus the bias.
        assert_eq!(m.flops, (602_112u64 * 1_536 + 602_112) as f64);
        // (602,112 + 589,824 + 602,112 + 768)·2
        assert_eq!(m.bytes, 3_589_632.0);
        assert_eq!(m.compute_spec, Some(ComputeSpec::MatrixBf16));
        assert_eq!(m.params[6], ("bias".to_string(), "True".to_string()));
        // A bias of its own type is read at that type.
        let m = model_op(&op(
            "aten::convolution",
            "[[4, 3, 224, 224], [768, 3, 16, 16], [768], [], [], [], [], [], []]",
            r#"["c10::BFloat16", "c10::BFloat16", "float", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"]"#,
            r#"["", "", "", "[16, 16]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1"]"#,
        ))
        .expect("modelled");
        assert_eq!(
            m.bytes,
            ((602_112 + 589_824 + 602_112) * 2 + 768 * 4) as f64
        );
    }

    /// The parameters name the input's type and the weight's, each its own.
    #[test]
    fn the_parameters_name_the_input_and_weight_types() {
        let m = model_op(&op(
            "aten::convolution",
            "[[1, 4, 8, 8], [8, 4, 3, 3], [], [], [], [], [], [], []]",
            r#"["float", "c10::Half", "", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"]"#,
            r#"["", "", "", "[1]", "[0]", "[1]", "False", "[0]", "1"]"#,
        ))
        .expect("modelled");
        assert_eq!(
            m.param("dtype_input_weight"),
            Some("('float', 'c10::Half')")
        );
        // x (256) and the output (8·6·6 = 288) at 4 bytes, w (288) at 2.
        assert_eq!(m.bytes, (256 * 4 + 288 * 2 + 288 * 4) as f64);
        // And each operand's strides.
        let strided = OpShape {
            input_strides: Some("[[256, 64, 8, 1], [36, 9, 3, 1], [], [], [], [], [], [], []]"),
            ..op(
                "aten::convolution",
                "[[1, 4, 8, 8], [8, 4, 3, 3], [], [], [], [], [], [], []]",
                r#"["float", "float", "", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"]"#,
                r#"["", "", "", "[1]", "[0]", "[1]", "False", "[0]", "1"]"#,
            )
        };
        let m = model_op(&strided).expect("modelled");
        assert_eq!(m.param("input_stride"), Some("(256, 64, 8, 1)"));
        assert_eq!(m.param("weight_stride"), Some("(36, 9, 3, 1)"));
    }

    #[test]
    fn no_bias_when_the_third_input_is_empty() {
        let m = model_op(&op(
            "aten::convolution",
            "[[1, 3, 1008, 1008], [1024, 3, 14, 14], [], [], [], [], [], [], []]",
            TYPES_9,
            r#"["", "", "", "[14, 14]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1"]"#,
        ))
        .expect("modelled");
        // out (1,1024,72,72); 2·3·14·14 = 1,176 per output element.
        assert_eq!(m.flops, (1024u64 * 72 * 72 * 1_176) as f64);
        assert_eq!(m.params[6].1, "False");
    }

    #[test]
    fn grouped_padded_strided_dilated() {
        // Depthwise-ish: x (2,8,10,10), w (8,2,3,3), groups 4, stride 2, padding 2, dilation 2.
        let m = model_op(&op(
            "aten::convolution",
            "[[2, 8, 10, 10], [8, 2, 3, 3], [], [], [], [], [], [], []]",
            r#"["float", "float", "", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"]"#,
            r#"["", "", "", "[2]", "[2]", "[2]", "False", "[0]", "4"]"#,
        ))
        .expect("modelled");
        // out spatial: (10 + 4 − 2·2 − 1)/2 + 1 = 5 → (2,8,5,5) = 400 elements; 2·2·3·3 = 36 each.
        assert_eq!(m.flops, (400 * 36) as f64);
        assert_eq!(m.bytes, ((2 * 8 * 100 + 8 * 2 * 9 + 400) * 4) as f64);
    }

    #[test]
    fn groups_are_one_positive_integer() {
        // Four groups fit the shapes, so only the list itself is refused.
        for groups in ["0", "-4", "[4, 4]"] {
            let r = model_op(&op(
                "aten::convolution",
                "[[2, 8, 10, 10], [8, 2, 3, 3], [], [], [], [], [], [], []]",
                r#"["float", "float", "", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"]"#,
                &format!(r#"["", "", "", "[1]", "[0]", "[1]", "False", "[0]", "{groups}"]"#),
            ));
            assert!(matches!(r, Err(NoModel::BadArgs { .. })), "{groups}: {r:?}");
        }
    }

    #[test]
    fn a_zero_stride_or_dilation_or_a_negative_padding_is_refused() {
        for (stride, padding, dilation) in [
            ("[1, 1, 1]", "[0]", "[1]"),
            ("[1]", "[0, 0, 0]", "[1]"),
            ("[0]", "[0]", "[1]"),
            ("[1]", "[-1]", "[1]"),
            ("[1]", "[0]", "[0]"),
        ] {
            let r = model_op(&op(
                "aten::convolution",
                "[[2, 8, 10, 10], [8, 2, 3, 3], [], [], [], [], [], [], []]",
                r#"["float", "float", "", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"]"#,
                &format!(
                    r#"["", "", "", "{stride}", "{padding}", "{dilation}", "False", "[0]", "4"]"#
                ),
            ));
            assert!(
                matches!(r, Err(NoModel::BadArgs { .. })),
                "{stride} {padding} {dilation}: {r:?}"
            );
        }
    }

    #[test]
    fn transposed_grouped() {
        // x (1,4,5,5), w (4,3,3,3) transposed, groups 2 → C_out 6; stride 2, output_padding 1.
        let m = model_op(&op(
            "aten::convolution",
            "[[1, 4, 5, 5], [4, 3, 3, 3], [6], [], [], [], [], [], []]",
            r#"["float", "float", "float", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"]"#,
            r#"["", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "True", "[1, 1]", "2"]"#,
        ))
        .expect("modelled");
        // out spatial: (5−1)·2 − 2 + 2 + 1 + 1 = 10 → (1,6,10,10) = 600.
        // Each of the 100 input elements does 2·3·3·3 = 54 flops; bias 600.
        assert_eq!(m.flops, (100 * 54 + 600) as f64);
        assert_eq!(m.bytes, ((100 + 108 + 600 + 6) * 4) as f64);
    }

    #[test]
    fn a_conv1d_is_modelled_and_a_matrix_is_no_convolution() {
        // Conv1d: x (2,4,16), w (8,4,3), stride 1, no padding → out (2,8,14),
        // 224 elements of 2·4·3 = 24 flops.
        let m = model_op(&op(
            "aten::convolution",
            "[[2, 4, 16], [8, 4, 3], [], [], [], [], [], [], []]",
            TYPES_9,
            r#"["", "", "", "[1]", "[0]", "[1]", "False", "[0]", "1"]"#,
        ))
        .expect("a conv1d is modelled");
        assert_eq!(m.flops, (224 * 24) as f64);
        // Conv3d: x (1,2,4,4,4), w (3,2,3,3,3) → out (1,3,2,2,2), 24 elements
        // of 2·2·27 flops.
        let m = model_op(&op(
            "aten::convolution",
            "[[1, 2, 4, 4, 4], [3, 2, 3, 3, 3], [], [], [], [], [], [], []]",
            TYPES_9,
            r#"["", "", "", "[1]", "[0]", "[1]", "False", "[0]", "1"]"#,
        ))
        .expect("a conv3d is modelled");
        assert_eq!(m.flops, (24 * 108) as f64);
        // Two dims have no spatial one: not a convolution.
        let matrix = model_op(&op(
            "aten::convolution",
            "[[4, 8], [8, 8], [], [], [], [], [], [], []]",
            TYPES_9,
            r#"["", "", "", "[1]", "[0]", "[1]", "False", "[0]", "1"]"#,
        ));
        assert!(matrix.is_err(), "{matrix:?}");
    }

    #[test]
    fn a_kernel_the_size_of_the_input_gives_one_output_and_a_larger_one_none() {
        // x (1,3,4,4), w (8,3,4,4), no padding: a 1×1 output of 8 channels,
        // 2·3·4·4 = 96 flops each.
        let one = model_op(&op(
            "aten::convolution",
            "[[1, 3, 4, 4], [8, 3, 4, 4], [], [], [], [], [], [], []]",
            TYPES_9,
            r#"["", "", "", "[1, 1]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1"]"#,
        ))
        .expect("a 1×1 output is modelled");
        assert_eq!(one.flops, (8 * 96) as f64);
        let none = model_op(&op(
            "aten::convolution",
            "[[1, 3, 3, 3], [8, 3, 4, 4], [], [], [], [], [], [], []]",
            TYPES_9,
            r#"["", "", "", "[1, 1]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1"]"#,
        ));
        assert!(none.is_err(), "{none:?}");
    }

    #[test]
    fn channel_mismatch_is_refused() {
        assert!(
            model_op(&op(
                "aten::convolution",
                "[[1, 4, 5, 5], [8, 3, 3, 3], [], [], [], [], [], [], []]",
                TYPES_9,
                r#"["", "", "", "[1, 1]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1"]"#,
            ))
            .is_err()
        );
    }

    #[test]
    fn convolution_backward_honours_output_mask() {
        // dY (2,8,6,6), x (2,4,8,8), w (8,4,3,3); mask: input and weight grads, no bias.
        let m = model_op(&op(
            "aten::convolution_backward",
            "[[2, 8, 6, 6], [2, 4, 8, 8], [8, 4, 3, 3], [], [], [], [], [], [], [], []]",
            r#"["float", "float", "float", "ScalarList", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar", "ScalarList"]"#,
            r#"["", "", "", "[8]", "[1, 1]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1", "[True, True, False]"]"#,
        ))
        .expect("modelled");
        assert_eq!(m.family, Family::ConvBwd);
        let conv = 2 * 4 * 9 * (2 * 8 * 36);
        assert_eq!(m.flops, (2 * conv) as f64);
        let (dy, x, w) = (2 * 8 * 36 * 4, 2 * 4 * 64 * 4, 8 * 4 * 9 * 4);
        assert_eq!(m.bytes, (2 * (dy + x + w)) as f64);
    }

    #[test]
    fn backward_from_the_forward_op() {
        let m = backward_op(&op(
            "aten::convolution",
            "[[4, 3, 224, 224], [768, 3, 16, 16], [768], [], [], [], [], [], []]",
            TYPES_9,
            r#"["", "", "", "[16, 16]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1"]"#,
        ))
        .expect("modelled");
        assert_eq!(m.flops, (2 * 602_112u64 * 1_536 + 602_112) as f64);
        // Input and weight gradients each read dY and the other operand and
        // write their own; the bias gradient reads dY and writes 768 values (bf16).
        let (x, w, dy) = (4 * 3 * 224 * 224, 768 * 3 * 16 * 16, 4 * 768 * 14 * 14);
        assert_eq!(m.bytes, ((2 * (dy + x + w) + dy + 768) * 2) as f64);
    }
}
