//! Kernels torch.compile (Inductor) generates with Triton, modelled from
//! what the trace records for their launch (PyTorch 2.4+ records each one
//! as a CPU op named after the kernel, with the kernel's tensor arguments
//! in `Input Dims`/`Input type` and its size arguments in `Concrete
//! Inputs`), as TraceLens's `TritonCompiledPerfModel` (its #621) does.
//!
//! Pointwise (`triton_poi_*`) and reductions (`triton_red_*`,
//! `triton_per_*`): the fused ATen ops are read from the kernel name
//! (`triton_red_fused_add_mean_mul_pow_rsqrt_0` → add, mean, mul, pow,
//! rsqrt), and the element counts from the trailing integers of `Concrete
//! Inputs` (`xnumel`, and `rnumel` for a reduction):
//!
//! - flops = Σ flops-per-element(op) · xnumel · rnumel (an op the table
//!   does not know counts 0);
//! - bytes = Σ over tensor arguments numel · element size, plus, for a
//!   pointwise kernel, xnumel elements of the first tensor's size (the
//!   write of its output).
//!
//! Templates (`triton_tem_*`) that are matrix multiplies (`mm`, `addmm`,
//! `bmm`, `baddbmm` among the fused ops): flops = 2·B·M·N·K from the first
//! pair of tensor arguments shaped `[B,] M×K` and `[B,] K×N`; bytes = every
//! tensor argument once. TraceLens has no template model.

use super::args::{Args, numel};
use super::count::Count;
use super::dtype::Dtype;
use super::family::{Family, NoModel, PerfModel};
use super::repr::{params, str_repr, tuple_repr};

/// FLOPs per element of the ATen ops Inductor fuses (TraceLens's table, so
/// rows agree): arithmetic counts, memory-only ops 0.
const FLOPS_PER_ELEMENT: &[(&str, u64)] = &[
    ("add", 1),
    ("sub", 1),
    ("mul", 1),
    ("div", 1),
    ("pow", 2),
    ("sqrt", 2),
    ("rsqrt", 2),
    ("exp", 4),
    ("log", 4),
    ("sigmoid", 4),
    ("tanh", 4),
    ("relu", 1),
    ("silu", 4),
    ("gelu", 8),
    ("mean", 1),
    ("sum", 1),
    ("var", 2),
    ("abs", 1),
    ("neg", 1),
    ("reciprocal", 2),
    ("ne", 1),
    ("eq", 1),
    ("lt", 1),
    ("gt", 1),
    ("_to_copy", 0),
    ("copy_", 0),
    ("clone", 0),
    ("embedding", 0),
    ("_unsafe_view", 0),
    ("view", 0),
];

/// The fused ops that make a template a matrix multiply.
const MATMUL_OPS: &[&str] = &["mm", "addmm", "bmm", "baddbmm"];

/// What kind of Inductor kernel a name is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Pointwise,
    Reduction,
    MatmulTemplate,
}

/// The kind of kernel and the text between `fused_` and the trailing index.
fn kind_of(name: &str) -> Option<(Kind, &str)> {
    let (kind, rest) = if let Some(rest) = name.strip_prefix("triton_poi_") {
        (Kind::Pointwise, rest)
    } else if let Some(rest) = name
        .strip_prefix("triton_red_")
        .or_else(|| name.strip_prefix("triton_per_"))
    {
        (Kind::Reduction, rest)
    } else {
        (Kind::MatmulTemplate, name.strip_prefix("triton_tem_")?)
    };
    // The kernel's trailing index (`_0`) names no op: `fused_ops` skips it.
    let fused = rest.strip_prefix("fused_").unwrap_or(rest);
    if kind == Kind::MatmulTemplate && !fused.split('_').any(|w| MATMUL_OPS.contains(&w)) {
        return None;
    }
    Some((kind, fused))
}

/// Whether this module models the op: Inductor's pointwise and reduction
/// kernels, and its matrix-multiply templates.
pub fn handles(name: &str) -> bool {
    kind_of(name).is_some()
}

/// The fused ops named in a kernel name's fused part, each with its FLOPs
/// per element: the longest known op at each place, unknown words skipped.
fn fused_ops(fused: &str) -> Vec<(&'static str, u64)> {
    let mut ops = Vec::new();
    let mut rest = fused;
    while !rest.is_empty() {
        let found = FLOPS_PER_ELEMENT
            .iter()
            .filter(|(op, _)| {
                rest == *op
                    || rest
                        .strip_prefix(op)
                        .is_some_and(|after| after.starts_with('_'))
            })
            .max_by_key(|(op, _)| op.len());
        match found {
            Some(&(op, flops)) => {
                ops.push((op, flops));
                rest = rest[op.len()..].trim_start_matches('_');
            }
            None => rest = rest.split_once('_').map_or("", |(_, after)| after),
        }
    }
    ops
}

pub(crate) fn model(args: &Args) -> Result<PerfModel, NoModel> {
    let Some((kind, fused)) = kind_of(args.name) else {
        return Err(args.bad("not an Inductor kernel name"));
    };
    let tensors = tensors(args)?;
    let Some(&(_, first)) = tensors.first() else {
        return Err(args.bad("no tensor arguments recorded"));
    };
    let tensor_bytes: Count = tensors
        .iter()
        .map(|(shape, dtype)| numel(shape) * dtype.size())
        .sum();
    if kind == Kind::MatmulTemplate {
        return matmul_template(args, &tensors, tensor_bytes);
    }
    let sizes = sizes(args)?;
    let (xnumel, rnumel) = match (kind, sizes.as_slice()) {
        (Kind::Reduction, [.., x, r]) => (*x, *r),
        (_, [.., x]) => (*x, 1),
        _ => return Err(args.bad("no element count in `Concrete Inputs`")),
    };
    let ops = fused_ops(fused);
    let per_element: u64 = ops.iter().map(|(_, flops)| flops).sum();
    let flops = Count::from(per_element) * Count::from(xnumel) * Count::from(rnumel);
    let bytes = match kind {
        Kind::Pointwise => tensor_bytes + Count::from(xnumel) * first.size(),
        _ => tensor_bytes,
    };
    let (flops, bytes) = args.measured(flops, bytes)?;
    let names: Vec<String> = ops.iter().map(|(op, _)| format!("aten.{op}")).collect();
    Ok(PerfModel {
        family: Family::Triton,
        flops,
        bytes,
        compute_spec: first.vector_spec(),
        params: params([
            ("fused_ops", str_repr(Some(&names.join(", ")))),
            ("xnumel", xnumel.to_string()),
            ("rnumel", rnumel.to_string()),
        ]),
    })
}

/// The tensor arguments (a shape with at least one dimension and a tensor
/// type), in order; a tensor of a type with no known size is an error.
fn tensors(args: &Args) -> Result<Vec<(Vec<u64>, Dtype)>, NoModel> {
    let mut out = Vec::new();
    for i in 0..args.len() {
        let Some(shape) = args.tensor_shape(i) else {
            continue;
        };
        if args.type_str(i) == Some("Scalar") {
            continue;
        }
        out.push((shape, args.dtype(i)?));
    }
    Ok(out)
}

/// The integer size arguments of `Concrete Inputs`, in order (`xnumel`,
/// `rnumel` come last).
fn sizes(args: &Args) -> Result<Vec<u64>, NoModel> {
    let mut out = Vec::new();
    for i in 0..args.len() {
        match args.concrete(i).map(str::trim) {
            None | Some("") => {}
            Some(text) => {
                out.push(text.parse::<u64>().map_err(|_| {
                    args.bad(format!("input {i} is not an element count: `{text}`"))
                })?)
            }
        }
    }
    Ok(out)
}

/// A matrix-multiply template: the first pair of tensors `[B,] M×K`,
/// `[B,] K×N`.
fn matmul_template(
    args: &Args,
    tensors: &[(Vec<u64>, Dtype)],
    tensor_bytes: Count,
) -> Result<PerfModel, NoModel> {
    let operands = tensors.windows(2).find_map(|pair| {
        let (a, b) = (&pair[0].0, &pair[1].0);
        match (a.as_slice(), b.as_slice()) {
            ([m, k], [k2, n]) if k == k2 => Some((1, *m, *n, *k, pair[0].1)),
            ([batch, m, k], [batch2, k2, n]) if k == k2 && batch == batch2 => {
                Some((*batch, *m, *n, *k, pair[0].1))
            }
            _ => None,
        }
    });
    let Some((batch, m, n, k, dtype)) = operands else {
        return Err(args.bad("no [B,] M×K and [B,] K×N tensor pair among the arguments"));
    };
    let flops =
        Count::from(2u64) * Count::from(batch) * Count::from(m) * Count::from(n) * Count::from(k);
    let (flops, bytes) = args.measured(flops, tensor_bytes)?;
    Ok(PerfModel {
        family: Family::Triton,
        flops,
        bytes,
        compute_spec: dtype.matrix_spec(),
        params: params([
            ("M", m.to_string()),
            ("N", n.to_string()),
            ("K", k.to_string()),
            ("B", batch.to_string()),
            (
                "shape_A_B",
                tuple_repr(&[format!("{m}x{k}"), format!("{k}x{n}")]),
            ),
        ]),
    })
}

#[cfg(test)]
mod tests {
    use super::super::{OpShape, model as dispatch};
    use super::*;

    fn modelled(name: &str, dims: &str, types: &str, concrete: &str) -> PerfModel {
        dispatch(&OpShape {
            name,
            input_dims: Some(dims),
            input_type: Some(types),
            input_strides: None,
            concrete_inputs: Some(concrete),
        })
        .unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    #[test]
    fn names_give_kind_and_fused_ops() {
        assert!(handles("triton_poi_fused_add_0"));
        assert!(handles("triton_red_fused_add_mean_mul_pow_rsqrt_0"));
        assert!(handles("triton_per_fused__softmax_3"));
        assert!(handles("triton_tem_fused_addmm_relu_1"));
        assert!(!handles("triton_tem_fused_flex_attention_0"));
        assert!(!handles("triton_kernel"));
        assert!(!handles("aten::add"));
        let ops = |name: &str| -> Vec<&str> {
            fused_ops(kind_of(name).unwrap().1)
                .into_iter()
                .map(|(op, _)| op)
                .collect()
        };
        assert_eq!(
            ops("triton_poi_fused__unsafe_view_mul_silu_2"),
            ["_unsafe_view", "mul", "silu"]
        );
        assert_eq!(ops("triton_poi_fused_add_cos_sin_0"), ["add"]);
        assert_eq!(
            ops("triton_per_fused_native_layer_norm_0"),
            Vec::<&str>::new()
        );
        assert_eq!(ops("triton_poi_fused_clone_view_12"), ["clone", "view"]);
        // Only a numeric suffix is the kernel's index.
        assert_eq!(ops("triton_poi_fused_clone_view"), ["clone", "view"]);
    }

    /// The RMSNorm reduction of the torch_compile_triton trace: 7 flops per
    /// element (add 1, mean 1, mul 1, pow 2, rsqrt 2), every tensor once.
    #[test]
    fn reduction_counts_every_element_and_every_tensor_once() {
        let m = modelled(
            "triton_red_fused_add_mean_mul_pow_rsqrt_0",
            "[[8, 4096, 2048], [2048], [8, 4096, 2048], [], []]",
            r#"["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"]"#,
            r#"["", "", "", "32768", "2048"]"#,
        );
        assert_eq!(m.family, Family::Triton);
        assert_eq!(m.flops, 7.0 * 32768.0 * 2048.0);
        assert_eq!(m.bytes, (2 * 8 * 4096 * 2048 * 2 + 2048 * 2) as f64);
        assert_eq!(
            m.compute_spec,
            Some(crate::analysis::hardware::ComputeSpec::VectorBf16)
        );
        assert_eq!(m.params[2], ("rnumel".to_string(), "2048".to_string()));
    }

    /// Pointwise: the output write is xnumel elements of the first tensor's
    /// size on top of the tensor arguments.
    #[test]
    fn pointwise_adds_the_output_write() {
        let m = modelled(
            "triton_poi_fused_add_cos_sin_0",
            "[[10, 10], [10, 10], [10, 10], []]",
            r#"["float", "float", "float", "Scalar"]"#,
            r#"["", "", "", "100"]"#,
        );
        assert_eq!(m.flops, 100.0);
        assert_eq!(m.bytes, (3 * 100 * 4 + 100 * 4) as f64);
        assert_eq!(
            m.params[0],
            ("fused_ops".to_string(), "'aten.add'".to_string())
        );
    }

    #[test]
    fn matmul_templates_are_gemms_of_their_operands() {
        let m = modelled(
            "triton_tem_fused_addmm_relu_0",
            "[[1024], [64, 512], [512, 1024], [64, 1024]]",
            r#"["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16"]"#,
            r#"["", "", "", ""]"#,
        );
        assert_eq!(m.flops, 2.0 * 64.0 * 1024.0 * 512.0);
        assert_eq!(
            m.bytes,
            ((1024 + 64 * 512 + 512 * 1024 + 64 * 1024) * 2) as f64
        );
        let bmm = modelled(
            "triton_tem_fused_bmm_3",
            "[[4, 8, 16], [4, 16, 32], [4, 8, 32]]",
            r#"["float", "float", "float"]"#,
            "[]",
        );
        assert_eq!(bmm.flops, 2.0 * 4.0 * 8.0 * 32.0 * 16.0);
        // A pair of different batches is no operand pair.
        let bmm = modelled(
            "triton_tem_fused_bmm_4",
            "[[2, 8, 16], [4, 16, 32], [4, 8, 16], [4, 16, 32]]",
            r#"["float", "float", "float", "float"]"#,
            "[]",
        );
        assert_eq!(bmm.flops, 2.0 * 4.0 * 8.0 * 32.0 * 16.0);
    }

    #[test]
    fn unreadable_arguments_say_why() {
        let op = |concrete| OpShape {
            name: "triton_poi_fused_add_0",
            input_dims: Some("[[4], []]"),
            input_type: Some(r#"["float", "Scalar"]"#),
            input_strides: None,
            concrete_inputs: Some(concrete),
        };
        assert!(matches!(
            dispatch(&op(r#"["", ""]"#)),
            Err(NoModel::BadArgs { .. })
        ));
        assert!(matches!(
            dispatch(&op(r#"["", "0.5"]"#)),
            Err(NoModel::BadArgs { .. })
        ));
        assert!(dispatch(&op(r#"["", "4"]"#)).is_ok());
        let unpaired = OpShape {
            name: "triton_tem_fused_mm_0",
            input_dims: Some("[[4, 8], [4, 8]]"),
            input_type: Some(r#"["float", "float"]"#),
            input_strides: None,
            concrete_inputs: None,
        };
        assert!(matches!(dispatch(&unpaired), Err(NoModel::BadArgs { .. })));
    }
}
