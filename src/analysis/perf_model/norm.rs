//! Normalisation: layer, batch, group, instance and RMS norm, forward and
//! backward (TraceLens's normalisation model).
//!
//! Forward, N elements over C channels (C = ∏ normalized_shape for layer
//! and RMS norm, the channel dimension otherwise):
//! flops = 6·C + 2·N (+ 3·N computing batch statistics);
//! bytes = N·bpe_in + N·bpe_out + k·C·bpe_in, with k = 2 (mean, variance),
//! plus one each for the scale and the shift, plus 2 (statistics written)
//! when training.
//!
//! RMS norm: flops = (N/C)·(2·C + 2) + N·(2 with a weight, else 1);
//! bytes = 2·N·bpe (+ C·bpe for the weight).
//!
//! Layer, group and RMS norm always compute their statistics; batch and
//! instance norm do when `training` / `use_input_stats` is `True` (parsed
//! from the string: `"False"` is false).

use super::args::{Args, numel, parse_bool};
use super::count::Count;
use super::family::{Family, NoModel, PerfModel};
use super::repr::{bool_repr, params, str_tuple_repr, tuple_repr};

/// Which norm and where its arguments are.
#[derive(Clone, Copy)]
enum Kind {
    /// Layer norm: `normalized_shape` index, weight and bias indices.
    Layer {
        shape: usize,
        weight: usize,
        bias: usize,
    },
    /// Batch/instance/group norm: weight, bias and `training` indices
    /// (`None`: always computes statistics; `Some(usize::MAX)`: never).
    Channel {
        weight: usize,
        bias: usize,
        training: Option<usize>,
    },
    /// RMS norm: `normalized_shape` and weight indices.
    Rms { shape: usize, weight: usize },
}

/// Backward layouts: where the `train` flag is (None: always training) and
/// the `output_mask` (None: every gradient).
#[derive(Clone, Copy)]
enum BackwardKind {
    Layer,
    Batch {
        train: Option<usize>,
        mask: Option<usize>,
    },
    Group,
    Rms,
}

fn forward_kind(args: &Args) -> Option<Kind> {
    let channel = |weight, bias, training| Kind::Channel {
        weight,
        bias,
        training,
    };
    Some(match args.name {
        "aten::layer_norm" | "aten::native_layer_norm" => Kind::Layer {
            shape: 1,
            weight: 2,
            bias: 3,
        },
        "aten::batch_norm"
        | "aten::native_batch_norm"
        | "aten::cudnn_batch_norm"
        | "aten::miopen_batch_norm"
        | "aten::instance_norm" => channel(1, 2, Some(5)),
        // `_native_batch_norm_legit.no_stats(input, weight, bias, training, momentum, eps)`.
        "aten::_native_batch_norm_legit" if args.len() == 6 => channel(1, 2, Some(3)),
        "aten::_native_batch_norm_legit" => channel(1, 2, Some(5)),
        "aten::_native_batch_norm_legit_no_training" => channel(1, 2, Some(usize::MAX)),
        "aten::group_norm" => channel(2, 3, None),
        "aten::native_group_norm" => channel(1, 2, None),
        "aten::_fused_rms_norm" | "aten::rms_norm" => Kind::Rms {
            shape: 1,
            weight: 2,
        },
        _ => return None,
    })
}

fn backward_kind(name: &str) -> Option<BackwardKind> {
    Some(match name {
        "aten::native_layer_norm_backward" => BackwardKind::Layer,
        "aten::native_batch_norm_backward" => BackwardKind::Batch {
            train: Some(7),
            mask: Some(9),
        },
        // cuDNN/MIOpen backward kernels exist only for training-mode forwards.
        "aten::cudnn_batch_norm_backward" | "aten::miopen_batch_norm_backward" => {
            BackwardKind::Batch {
                train: None,
                mask: None,
            }
        }
        "aten::native_group_norm_backward" => BackwardKind::Group,
        "aten::_fused_rms_norm_backward" => BackwardKind::Rms,
        _ => return None,
    })
}

const OPS: &[&str] = &[
    "aten::layer_norm",
    "aten::native_layer_norm",
    "aten::batch_norm",
    "aten::native_batch_norm",
    "aten::cudnn_batch_norm",
    "aten::miopen_batch_norm",
    "aten::instance_norm",
    "aten::_native_batch_norm_legit",
    "aten::_native_batch_norm_legit_no_training",
    "aten::group_norm",
    "aten::native_group_norm",
    "aten::_fused_rms_norm",
    "aten::rms_norm",
    "aten::native_layer_norm_backward",
    "aten::native_batch_norm_backward",
    "aten::cudnn_batch_norm_backward",
    "aten::miopen_batch_norm_backward",
    "aten::native_group_norm_backward",
    "aten::_fused_rms_norm_backward",
];

/// Whether this module models the op.
pub fn handles(name: &str) -> bool {
    OPS.contains(&name)
}

/// A normalisation's sizes and flags.
#[derive(Clone, Debug, PartialEq)]
pub struct Norm {
    /// Elements normalised.
    pub n: u128,
    /// Channels (the size of the statistics and of the affine parameters).
    pub c: u128,
    /// Bytes per element of the activations.
    pub bpe: u128,
    /// Scale (γ) present.
    pub affine: bool,
    /// Shift (β) present.
    pub bias: bool,
    /// Statistics computed from the batch.
    pub training: bool,
}

/// Figures are `None` where a count overflows 128 bits; the float
/// formulas work on exact counts, whose `f64` values are always finite.
impl Norm {
    fn counts(&self) -> (Count, Count, Count) {
        (
            Count::from(self.n),
            Count::from(self.c),
            Count::from(self.bpe),
        )
    }

    /// Forward FLOPs.
    pub fn flops(&self) -> Option<f64> {
        let (n, c, _) = self.counts();
        let stats = if self.training { 3 * n } else { Count::ZERO };
        (6 * c + stats + 2 * n).to_f64()
    }

    /// Forward bytes.
    pub fn bytes(&self) -> Option<f64> {
        let (n, c, bpe) = self.counts();
        let k = 2 + u128::from(self.affine) + u128::from(self.bias) + 2 * u128::from(self.training);
        (2 * n * bpe + k * c * bpe).to_f64()
    }

    /// RMS norm FLOPs.
    pub fn rms_flops(&self) -> Option<f64> {
        let (n, c, _) = self.counts();
        let rows = self.n as f64 / self.c as f64;
        let per_element = if self.affine { 2 } else { 1 };
        Some(rows * (2 * c + 2).to_f64()? + (n * per_element).to_f64()?)
    }

    /// RMS norm bytes.
    pub fn rms_bytes(&self) -> Option<f64> {
        let (n, c, bpe) = self.counts();
        let weight = if self.affine { c * bpe } else { Count::ZERO };
        (2 * n * bpe + weight).to_f64()
    }

    /// Backward FLOPs (`grad_input` requested or not).
    pub fn flops_backward(&self, grad_input: bool) -> Option<f64> {
        let per_channel_elems = self.n as f64 / self.c as f64;
        let mut per_channel = if self.training { 0.0 } else { 3.0 };
        per_channel += 4.0 * per_channel_elems;
        if grad_input {
            per_channel += if self.training { 5.0 } else { 2.0 } * per_channel_elems;
        }
        Some(self.c as f64 * per_channel)
    }

    /// Backward bytes.
    pub fn bytes_backward(&self, grad_input: bool) -> Option<f64> {
        let (n, c, bpe) = self.counts();
        let reads_input = if grad_input && self.training { 2 } else { 1 };
        let mut total = n * bpe + n * bpe * reads_input;
        if self.training {
            total += c * bpe;
        }
        if self.affine {
            total += c * bpe;
            if self.training {
                total += c * bpe * if self.bias { 2 } else { 1 };
            }
        }
        total.to_f64()
    }

    /// RMS norm backward FLOPs (`mask`: input and weight gradients).
    pub fn rms_flops_backward(&self, mask: [bool; 2]) -> Option<f64> {
        let (n, _, _) = self.counts();
        let mut total = if self.affine { n } else { Count::ZERO } + n;
        if mask[0] {
            total += 6 * n;
        }
        if mask[1] && self.affine {
            total += n;
            if self.n > self.c {
                total += n;
            }
        }
        total.to_f64()
    }

    /// RMS norm backward bytes.
    pub fn rms_bytes_backward(&self) -> Option<f64> {
        let (n, c, bpe) = self.counts();
        let weight = if self.affine {
            2 * c * bpe
        } else {
            Count::ZERO
        };
        (3 * n * bpe + weight).to_f64()
    }
}

fn channels_of_shape(args: &Args, index: usize) -> Result<u128, NoModel> {
    match args.int_list(index)? {
        Some(dims) if !dims.is_empty() && dims.iter().all(|&d| d > 0) => {
            args.exact(dims.iter().map(|&d| Count::from(d as u64)).product())
        }
        other => Err(args.bad(format!("bad normalized_shape {other:?}"))),
    }
}

fn channel_dim(args: &Args, shape: &[u64]) -> Result<u128, NoModel> {
    match shape.get(1) {
        Some(&c) if c > 0 => Ok(u128::from(c)),
        _ => Err(args.bad(format!("no channel dimension in {shape:?}"))),
    }
}

fn mask_of<const N: usize>(args: &Args, index: usize) -> Result<[bool; N], NoModel> {
    let text = args.concrete(index).unwrap_or("").trim();
    let flags: Option<Vec<bool>> = text
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .and_then(|inner| {
            inner
                .split(',')
                .map(parse_bool)
                .collect::<Option<Vec<bool>>>()
        });
    flags
        .and_then(|f| f.try_into().ok())
        .ok_or_else(|| args.bad(format!("bad output_mask `{text}`")))
}

fn norm_params(args: &Args, input: usize, shape: &[u64], norm: &Norm) -> Vec<(String, String)> {
    params([
        ("op_shape", tuple_repr(shape)),
        (
            "dtype_in_out",
            str_tuple_repr(&[args.type_str(input), None]),
        ),
        ("stride_input", args.stride_repr(input)),
        ("stride_output", "None".to_string()),
        ("num_channels", norm.c.to_string()),
        ("has_bias", bool_repr(norm.bias)),
        ("is_affine", bool_repr(norm.affine)),
        ("is_training", bool_repr(norm.training)),
    ])
}

pub(crate) fn model(args: &Args) -> Result<PerfModel, NoModel> {
    if let Some(kind) = backward_kind(args.name) {
        return backward(args, kind);
    }
    let kind = forward_kind(args).ok_or_else(|| NoModel::UnknownOp {
        name: args.name.to_string(),
    })?;
    let shape = args.shape(0)?;
    let dtype = args.dtype(0)?;
    let n = args.exact(numel(&shape))?;
    let bpe = u128::from(dtype.bytes());
    let (norm, rms) = match kind {
        Kind::Layer {
            shape: s,
            weight,
            bias,
        } => {
            let norm = Norm {
                n,
                c: channels_of_shape(args, s)?,
                bpe,
                affine: args.has_tensor(weight),
                bias: args.has_tensor(bias),
                training: true,
            };
            (norm, false)
        }
        Kind::Channel {
            weight,
            bias,
            training,
        } => {
            let training = match training {
                None => true,
                Some(usize::MAX) => false,
                Some(index) => args
                    .flag(index)?
                    .ok_or_else(|| args.bad("`training` not recorded"))?,
            };
            let norm = Norm {
                n,
                c: channel_dim(args, &shape)?,
                bpe,
                affine: args.has_tensor(weight),
                bias: args.has_tensor(bias),
                training,
            };
            (norm, false)
        }
        Kind::Rms { shape: s, weight } => {
            let norm = Norm {
                n,
                c: channels_of_shape(args, s)?,
                bpe,
                affine: args.has_tensor(weight),
                bias: false,
                training: false,
            };
            (norm, true)
        }
    };
    if norm.c == 0 || n % norm.c != 0 {
        return Err(args.bad(format!("{} channels do not divide {n} elements", norm.c)));
    }
    let (flops, bytes) = if rms {
        args.figures(norm.rms_flops(), norm.rms_bytes())?
    } else {
        args.figures(norm.flops(), norm.bytes())?
    };
    Ok(PerfModel {
        family: Family::NormFwd,
        flops,
        bytes,
        compute_spec: dtype.vector_spec(),
        params: norm_params(args, 0, &shape, &norm),
    })
}

fn backward(args: &Args, kind: BackwardKind) -> Result<PerfModel, NoModel> {
    // Input 1 is the input, or for cuDNN's and MIOpen's batch norm the
    // output gradient: the same shape and type either way.
    let shape = args.shape(1)?;
    let dtype = args.dtype(1)?;
    let n = args.exact(numel(&shape))?;
    let bpe = u128::from(dtype.bytes());
    let (norm, flops, bytes) = match kind {
        BackwardKind::Layer => {
            // (grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask)
            let mask: [bool; 3] = mask_of(args, 7)?;
            let norm = Norm {
                n,
                c: channels_of_shape(args, 2)?,
                bpe,
                affine: mask[1],
                bias: mask[2],
                training: true,
            };
            let (f, b) = (norm.flops_backward(mask[0]), norm.bytes_backward(mask[0]));
            (norm, f, b)
        }
        BackwardKind::Batch { train, mask } => {
            let training = match train {
                None => true,
                Some(index) => args
                    .flag(index)?
                    .ok_or_else(|| args.bad("`train` not recorded"))?,
            };
            let grad_input = match mask {
                Some(index) => mask_of::<3>(args, index)?[0],
                None => true,
            };
            let norm = Norm {
                n,
                c: channel_dim(args, &shape)?,
                bpe,
                // The weight is input 2 in native's schema (after grad_out
                // and input) and in cuDNN's and MIOpen's (after input and
                // grad_output) alike.
                affine: args.has_tensor(2),
                bias: true,
                training,
            };
            let (f, b) = (
                norm.flops_backward(grad_input),
                norm.bytes_backward(grad_input),
            );
            (norm, f, b)
        }
        BackwardKind::Group => {
            // (grad_out, input, mean, rstd, weight, N, C, HxW, group, output_mask)
            let mask: [bool; 3] = mask_of(args, 9)?;
            let norm = Norm {
                n,
                c: channel_dim(args, &shape)?,
                bpe,
                affine: args.has_tensor(4),
                bias: mask[2],
                training: true,
            };
            let (f, b) = (norm.flops_backward(mask[0]), norm.bytes_backward(mask[0]));
            (norm, f, b)
        }
        BackwardKind::Rms => {
            // (grad_out, input, normalized_shape, rstd, weight, output_mask)
            let mask: [bool; 2] = mask_of(args, 5)?;
            let norm = Norm {
                n,
                c: channels_of_shape(args, 2)?,
                bpe,
                affine: args.has_tensor(4),
                bias: false,
                training: false,
            };
            let (f, b) = (norm.rms_flops_backward(mask), norm.rms_bytes_backward());
            (norm, f, b)
        }
    };
    if norm.c == 0 || n % norm.c != 0 {
        return Err(args.bad(format!("{} channels do not divide {n} elements", norm.c)));
    }
    let (flops, bytes) = args.figures(flops, bytes)?;
    Ok(PerfModel {
        family: Family::NormBwd,
        flops,
        bytes,
        compute_spec: dtype.vector_spec(),
        params: norm_params(args, 1, &shape, &norm),
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

    const BN_TYPES: &str =
        r#"["float", "float", "float", "float", "float", "Scalar", "Scalar", "Scalar", "Scalar"]"#;

    /// An RMS norm's weight gradient is summed over its rows: one add per
    /// element more once there is more than one row of channels.
    #[test]
    fn rms_backward_sums_the_weight_gradient_over_rows() {
        let norm = |n| Norm {
            n,
            c: 8,
            bpe: 2,
            affine: true,
            bias: false,
            training: false,
        };
        // n for the normalised input, n for the scale, n for γ's gradient.
        assert_eq!(norm(8).rms_flops_backward([false, true]), Some(24.0));
        // And n more to sum γ's gradient over two rows.
        assert_eq!(norm(16).rms_flops_backward([false, true]), Some(64.0));
        // The input gradient costs 6 per element; both: 16 + 16 + 96 + 16 + 16.
        assert_eq!(norm(8).rms_flops_backward([true, false]), Some(64.0));
        assert_eq!(norm(16).rms_flops_backward([true, true]), Some(160.0));
        // Without a weight there is no weight gradient to compute.
        let unweighted = Norm {
            affine: false,
            ..norm(16)
        };
        assert_eq!(unweighted.rms_flops_backward([false, true]), Some(16.0));
    }

    /// A normalised shape with a zero dimension names no channels: the op
    /// has no model, and the reason says which argument.
    #[test]
    fn a_normalised_shape_of_zero_channels_is_refused() {
        let refused = model_op(&op(
            "aten::layer_norm",
            "[[1, 4, 4], [], [0], [0], [], []]",
            r#"["float", "ScalarList", "float", "float", "Scalar", "Scalar"]"#,
            r#"["", "[0]", "", "", "1e-05", "True"]"#,
        ))
        .expect_err("no channels");
        assert!(
            refused.to_string().contains("bad normalized_shape"),
            "{refused}"
        );
    }

    #[test]
    fn layer_norm_bert() {
        // (1, 141, 512) bf16 over 512 channels, with weight and bias.
        let m = model_op(&op(
            "aten::layer_norm",
            "[[1, 141, 512], [], [512], [512], [], []]",
            r#"["c10::BFloat16", "ScalarList", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"]"#,
            r#"["", "[512]", "", "", "9.9999999999999998e-13", "True"]"#,
        ))
        .expect("modelled");
        // 6·512 + 5·72,192
        assert_eq!(m.flops, 364_032.0);
        // 2·72,192·2 + 6·512·2
        assert_eq!(m.bytes, 294_912.0);
        assert_eq!(m.params[4], ("num_channels".to_string(), "512".to_string()));
    }

    #[test]
    fn batch_norm_training_flag_is_parsed() {
        // x (8, 16, 4, 4): N = 2,048, C = 16, fp32, affine with bias.
        let dims = "[[8, 16, 4, 4], [16], [16], [16], [16], [], [], [], []]";
        let eval = model_op(&op(
            "aten::batch_norm",
            dims,
            BN_TYPES,
            r#"["", "", "", "", "", "False", "0.1", "1e-05", "True"]"#,
        ))
        .expect("modelled");
        // Inference: 6·16 + 2·2,048 flops; bytes 2·2,048·4 + (2 + 1 + 1)·16·4.
        assert_eq!(eval.flops, (96 + 4096) as f64);
        assert_eq!(eval.bytes, (16_384 + 256) as f64);
        assert_eq!(eval.params[7].1, "False");
        let train = model_op(&op(
            "aten::batch_norm",
            dims,
            BN_TYPES,
            r#"["", "", "", "", "", "True", "0.1", "1e-05", "True"]"#,
        ))
        .expect("modelled");
        assert_eq!(train.flops, (96 + 3 * 2048 + 4096) as f64);
        assert_eq!(train.bytes, (16_384 + 6 * 16 * 4) as f64);
    }

    /// The decompositions' batch norms read the training flag where each
    /// schema puts it: after the running stats, after the bias when there
    /// are none (`.no_stats`), and nowhere in `_no_training`.
    #[test]
    fn legit_batch_norms_read_training_where_their_schema_puts_it() {
        let (eval_flops, train_flops) = ((96 + 4096) as f64, (96 + 3 * 2048 + 4096) as f64);
        for (name, dims, types, concrete, flops) in [
            (
                "aten::_native_batch_norm_legit",
                "[[8, 16, 4, 4], [16], [16], [16], [16], [], [], []]",
                r#"["float", "float", "float", "float", "float", "Scalar", "Scalar", "Scalar"]"#,
                r#"["", "", "", "", "", "True", "0.1", "1e-05"]"#,
                train_flops,
            ),
            (
                "aten::_native_batch_norm_legit",
                "[[8, 16, 4, 4], [16], [16], [16], [16], [], [], []]",
                r#"["float", "float", "float", "float", "float", "Scalar", "Scalar", "Scalar"]"#,
                r#"["", "", "", "", "", "False", "0.1", "1e-05"]"#,
                eval_flops,
            ),
            (
                "aten::_native_batch_norm_legit",
                "[[8, 16, 4, 4], [16], [16], [], [], []]",
                r#"["float", "float", "float", "Scalar", "Scalar", "Scalar"]"#,
                r#"["", "", "", "True", "0.1", "1e-05"]"#,
                train_flops,
            ),
            (
                "aten::_native_batch_norm_legit_no_training",
                "[[8, 16, 4, 4], [16], [16], [16], [16], [], []]",
                r#"["float", "float", "float", "float", "float", "Scalar", "Scalar"]"#,
                r#"["", "", "", "", "", "0.1", "1e-05"]"#,
                eval_flops,
            ),
        ] {
            let m = model_op(&op(name, dims, types, concrete)).expect(name);
            assert_eq!(m.flops, flops, "{name} {concrete}");
        }
    }

    #[test]
    fn batch_norm_without_training_flag_is_refused() {
        let r = model_op(&op(
            "aten::batch_norm",
            "[[8, 16, 4, 4], [16], [16], [16], [16], [], [], [], []]",
            BN_TYPES,
            r#"["", "", "", "", "", "", "0.1", "1e-05", "True"]"#,
        ));
        assert!(matches!(r, Err(NoModel::BadArgs { .. })));
    }

    #[test]
    fn batch_norm_without_channels_is_refused() {
        for dims in [
            "[[8, 0, 4, 4], [0], [0], [0], [0], [], [], [], []]",
            "[[8], [16], [16], [16], [16], [], [], [], []]",
        ] {
            let r = model_op(&op(
                "aten::batch_norm",
                dims,
                BN_TYPES,
                r#"["", "", "", "", "", "False", "0.1", "1e-05", "True"]"#,
            ));
            match r {
                Err(NoModel::BadArgs { reason, .. }) => {
                    assert!(reason.contains("no channel dimension"), "{dims}: {reason}")
                }
                other => panic!("{dims}: {other:?}"),
            }
        }
    }

    #[test]
    fn group_norm_counts_channels() {
        let m = model_op(&op(
            "aten::group_norm",
            "[[2, 32, 8, 8], [], [32], [32], [], []]",
            r#"["c10::Half", "Scalar", "c10::Half", "c10::Half", "Scalar", "Scalar"]"#,
            r#"["", "8", "", "", "1e-05", "True"]"#,
        ))
        .expect("modelled");
        let n = 2 * 32 * 64;
        assert_eq!(m.flops, (6 * 32 + 5 * n) as f64);
        assert_eq!(m.bytes, (2 * n * 2 + 6 * 32 * 2) as f64);
        // `native_group_norm(input, weight, bias, N, C, HxW, group, eps)`.
        let native = model_op(&op(
            "aten::native_group_norm",
            "[[2, 32, 8, 8], [32], [32], [], [], [], [], []]",
            r#"["c10::Half", "c10::Half", "c10::Half", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar"]"#,
            r#"["", "", "", "2", "32", "64", "8", "1e-05"]"#,
        ))
        .expect("modelled");
        assert_eq!((native.flops, native.bytes), (m.flops, m.bytes));
    }

    #[test]
    fn rms_norm() {
        // (4, 1024) over 1024 with a weight, bf16.
        let m = model_op(&op(
            "aten::_fused_rms_norm",
            "[[4, 1024], [], [1024], []]",
            r#"["c10::BFloat16", "ScalarList", "c10::BFloat16", "Scalar"]"#,
            r#"["", "[1024]", "", "1e-06"]"#,
        ))
        .expect("modelled");
        assert_eq!(m.flops, (4 * (2 * 1024 + 2) + 4096 * 2) as f64);
        assert_eq!(m.bytes, (2 * 4096 * 2 + 1024 * 2) as f64);
    }

    #[test]
    fn rms_norm_whose_shape_does_not_divide_the_input_is_refused() {
        // (4, 10) normalised over 3 elements: 40 is no whole number of rows.
        let m = model_op(&op(
            "aten::_fused_rms_norm",
            "[[4, 10], [], [3], []]",
            r#"["c10::BFloat16", "ScalarList", "c10::BFloat16", "Scalar"]"#,
            r#"["", "[3]", "", "1e-06"]"#,
        ));
        assert!(m.is_err(), "{m:?}");
        // Its backward, `(grad_out, input, normalized_shape, rstd, weight, output_mask)`.
        let m = model_op(&op(
            "aten::_fused_rms_norm_backward",
            "[[4, 10], [4, 10], [], [4, 1], [3], []]",
            r#"["c10::BFloat16", "c10::BFloat16", "ScalarList", "float", "c10::BFloat16", "ScalarList"]"#,
            r#"["", "", "[3]", "", "", "[True, True]"]"#,
        ));
        assert!(m.is_err(), "{m:?}");
    }

    #[test]
    fn rms_norm_backward_reads_and_writes_every_element() {
        // (grad_out, input, normalized_shape, rstd, weight, output_mask):
        // (4, 1024) over 1024, bf16, input and weight gradients.
        let m = model_op(&op(
            "aten::_fused_rms_norm_backward",
            "[[4, 1024], [4, 1024], [], [4, 1], [1024], []]",
            r#"["c10::BFloat16", "c10::BFloat16", "ScalarList", "float", "c10::BFloat16", "ScalarList"]"#,
            r#"["", "", "[1024]", "", "", "[True, True]"]"#,
        ))
        .expect("modelled");
        assert_eq!(m.family, Family::NormBwd);
        // dy and x read, dx written: 3 · 4096 · 2; the weight read and its
        // gradient written: 2 · 1024 · 2.
        assert_eq!(m.bytes, (3 * 4096 * 2 + 2 * 1024 * 2) as f64);
    }

    #[test]
    fn layer_norm_backward() {
        // (grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask)
        let m = model_op(&op(
            "aten::native_layer_norm_backward",
            "[[4, 8], [4, 8], [], [4, 1], [4, 1], [8], [8], []]",
            r#"["float", "float", "ScalarList", "float", "float", "float", "float", "ScalarList"]"#,
            r#"["", "", "[8]", "", "", "", "", "[True, True, True]"]"#,
        ))
        .expect("modelled");
        assert_eq!(m.family, Family::NormBwd);
        // C = 8, N/C = 4: per channel 4·4 + 5·4 = 36.
        assert_eq!(m.flops, (8 * 36) as f64);
        // dy 32·4 + x 2·32·4 + stats 8·4 + weight 8·4 + grads 2·8·4.
        assert_eq!(m.bytes, (128 + 256 + 32 + 32 + 64) as f64);
        // Without the weight's and bias's gradients: no weight read, none written.
        let backward = |mask: &str| {
            model_op(&op(
                "aten::native_layer_norm_backward",
                "[[4, 8], [4, 8], [], [4, 1], [4, 1], [8], [8], []]",
                r#"["float", "float", "ScalarList", "float", "float", "float", "float", "ScalarList"]"#,
                &format!(r#"["", "", "[8]", "", "", "", "", "{mask}"]"#),
            ))
        };
        let m = backward("[True, False, False]").expect("modelled");
        assert_eq!(m.bytes, (128 + 256 + 32) as f64);
        for mask in ["[True, True]", "[True, maybe, True]", "True", ""] {
            let r = backward(mask);
            assert!(matches!(r, Err(NoModel::BadArgs { .. })), "{mask}: {r:?}");
        }
    }

    #[test]
    fn cudnn_and_miopen_batch_norm_backward_train() {
        // (input, grad_output, weight, running_mean, running_var, save_mean, save_var, epsilon, reserve)
        for name in [
            "aten::cudnn_batch_norm_backward",
            "aten::miopen_batch_norm_backward",
        ] {
            let m = model_op(&op(
                name,
                "[[2, 4, 3, 3], [2, 4, 3, 3], [4], [4], [4], [4], [4], [], [0]]",
                r#"["float", "float", "float", "float", "float", "float", "float", "Scalar", "unsigned char"]"#,
                r#"["", "", "", "", "", "", "", "1e-05", ""]"#,
            ))
            .expect(name);
            // C = 4, N/C = 18: per channel 4·18 + 5·18.
            assert_eq!(m.flops, (4 * 9 * 18) as f64, "{name}");
            // dy, x twice, the saved stats, the weight and both gradients.
            assert_eq!(m.bytes, ((3 * 72 + 4 + 4 + 2 * 4) * 4) as f64, "{name}");
        }
    }

    #[test]
    fn group_norm_backward() {
        // (grad_out, input, mean, rstd, weight, N, C, HxW, group, output_mask)
        let m = model_op(&op(
            "aten::native_group_norm_backward",
            "[[2, 32, 8, 8], [2, 32, 8, 8], [2, 8], [2, 8], [32], [], [], [], [], []]",
            r#"["c10::Half", "c10::Half", "c10::Half", "c10::Half", "c10::Half", "Scalar", "Scalar", "Scalar", "Scalar", "ScalarList"]"#,
            r#"["", "", "", "", "", "2", "32", "64", "8", "[True, True, True]"]"#,
        ))
        .expect("modelled");
        assert_eq!(m.family, Family::NormBwd);
        // C = 32, N/C = 128: per channel 4·128 + 5·128.
        assert_eq!(m.flops, (32 * 9 * 128) as f64);
        // dy + x twice (4,096 each), stats, weight, and both gradients (32 each), 2 bytes.
        assert_eq!(m.bytes, ((3 * 4096 + 32 + 32 + 2 * 32) * 2) as f64);
    }

    #[test]
    fn native_batch_norm_backward_eval() {
        let m = model_op(&op(
            "aten::native_batch_norm_backward",
            "[[2, 4, 3, 3], [2, 4, 3, 3], [4], [4], [4], [], [], [], [], []]",
            r#"["float", "float", "float", "float", "float", "", "", "Scalar", "Scalar", "ScalarList"]"#,
            r#"["", "", "", "", "", "", "", "False", "1e-05", "[True, True, True]"]"#,
        ))
        .expect("modelled");
        // Not training: per channel 3 + 4·18 + 2·18 = 111, 4 channels.
        assert_eq!(m.flops, 444.0);
        assert_eq!(m.params[7].1, "False");
    }

    /// Whether the norm had a weight is read from the weight, not from the
    /// running stats beside it.
    #[test]
    fn batch_norm_backward_is_affine_when_it_has_a_weight() {
        let bytes = |dims: &str, concrete: &str| {
            model_op(&op(
                "aten::native_batch_norm_backward",
                dims,
                r#"["float", "float", "float", "float", "float", "float", "float", "Scalar", "Scalar", "ScalarList"]"#,
                concrete,
            ))
            .expect("modelled")
            .bytes
        };
        let eval = r#"["", "", "", "", "", "", "", "False", "1e-05", "[True, False, False]"]"#;
        // dY and x read, 72 elements of 4 bytes each; a weight adds its 4 values.
        let no_weight = "[[2, 4, 3, 3], [2, 4, 3, 3], [], [4], [4], [], [], [], [], []]";
        assert_eq!(bytes(no_weight, eval), (2 * 72 * 4) as f64);
        let weight = "[[2, 4, 3, 3], [2, 4, 3, 3], [4], [4], [4], [], [], [], [], []]";
        assert_eq!(bytes(weight, eval), ((2 * 72 + 4) * 4) as f64);
        // Training without running stats: dY, x twice, the saved stats, the
        // weight, and the weight's and bias's gradients.
        let train = r#"["", "", "", "", "", "", "", "True", "1e-05", "[True, True, True]"]"#;
        let weight_no_stats = "[[2, 4, 3, 3], [2, 4, 3, 3], [4], [], [], [4], [4], [], [], []]";
        assert_eq!(
            bytes(weight_no_stats, train),
            ((3 * 72 + 4 + 4 + 2 * 4) * 4) as f64
        );
    }
}
