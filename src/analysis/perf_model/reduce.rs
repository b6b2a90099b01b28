//! Reductions over some or all dimensions.
//!
//! flops = n_in; bytes = n_in·bpe_in + n_out·bpe_out, with n_out from the
//! `dim` and `keepdim` arguments (`Concrete Inputs` strings such as `"[1]"`
//! and `"True"`); `max`/`min` over a dim also write int64 indices; cumulative
//! ops keep every element. Backward: the gradient is broadcast back, flops =
//! n_in, bytes = n_out·bpe_out + n_in·bpe_in.

use super::args::{Args, numel};
use super::count::Count;
use super::dtype::Dtype;
use super::family::{Family, NoModel, PerfModel};
use super::repr::{params, str_repr, str_tuple_repr};

const OPS: &[&str] = &[
    "aten::sum",
    "aten::mean",
    "aten::max",
    "aten::min",
    "aten::norm",
    "aten::linalg_norm",
    "aten::std",
    "aten::var",
    "aten::logsumexp",
    "aten::cumsum",
    "aten::cumprod",
    "aten::amin",
    "aten::amax",
    "aten::prod",
    "aten::nansum",
    "aten::argmax",
    "aten::argmin",
    "aten::all",
    "aten::any",
    "aten::linalg_vector_norm",
    "aten::std_mean",
    "aten::var_mean",
];

/// Whether this module models the op.
pub fn handles(name: &str) -> bool {
    OPS.contains(&name)
}

/// How a reduction's arguments are laid out.
enum Layout {
    /// Every element into one.
    Full,
    /// `dim` and `keepdim` at these `Concrete Inputs` indices.
    Dims { dim: usize, keepdim: usize },
    /// Cumulative: the output has the input's shape.
    Cumulative,
    /// `max(self, other)` / `min(self, other)`: elementwise, not a reduction.
    Elementwise,
}

fn layout(args: &Args) -> Layout {
    let n = args.len();
    let short = args.name.strip_prefix("aten::").unwrap_or(args.name);
    match short {
        "cumsum" | "cumprod" => Layout::Cumulative,
        "sum" | "mean" | "prod" | "nansum" if n >= 3 => Layout::Dims { dim: 1, keepdim: 2 },
        // `max(self, other)`, also with `out=` recorded as a third input.
        "max" | "min" if args.has_tensor(1) => Layout::Elementwise,
        "max" | "min" if n >= 3 => Layout::Dims { dim: 1, keepdim: 2 },
        // `norm(self, p)` has no dim: every dim, as `Full`.
        "norm" | "linalg_norm" | "linalg_vector_norm" => Layout::Dims { dim: 2, keepdim: 3 },
        "std" | "var" | "std_mean" | "var_mean" if n >= 3 => Layout::Dims { dim: 1, keepdim: 3 },
        // Without a dim argument, every dim, as `Full`.
        "amax" | "amin" | "logsumexp" | "argmax" | "argmin" | "all" | "any" => {
            Layout::Dims { dim: 1, keepdim: 2 }
        }
        _ => Layout::Full,
    }
}

/// A reduction's element counts and types.
#[derive(Clone, Debug, PartialEq)]
pub struct Reduction {
    /// Elements read.
    pub n_in: u128,
    /// Elements written (per output tensor).
    pub n_out: u128,
    /// Input type.
    pub dtype_in: Dtype,
    /// Output types (values; indices or a second statistic where the op writes two).
    pub dtype_out: Vec<Dtype>,
}

impl Reduction {
    /// Forward bytes.
    pub fn bytes(&self) -> Count {
        let written: Count = self
            .dtype_out
            .iter()
            .map(|d| Count::from(self.n_out) * d.size())
            .sum();
        Count::from(self.n_in) * self.dtype_in.size() + written
    }

    /// Backward bytes: the output gradient read, the input gradient written.
    pub fn bytes_backward(&self) -> Count {
        let out = self.dtype_out.first().copied().unwrap_or(self.dtype_in);
        Count::from(self.n_out) * out.size() + Count::from(self.n_in) * self.dtype_in.size()
    }
}

fn parse(args: &Args) -> Result<Option<Reduction>, NoModel> {
    let shape = args.shape(0)?;
    let dtype_in = args.dtype(0)?;
    let n_in = args.exact(numel(&shape))?;
    let short = args.name.strip_prefix("aten::").unwrap_or(args.name);
    let n_out = match layout(args) {
        Layout::Elementwise => return Ok(None),
        Layout::Full => 1,
        Layout::Cumulative => n_in,
        Layout::Dims { dim, keepdim } => {
            let keepdim = args.flag(keepdim)?.unwrap_or(false);
            match args.int_list(dim)? {
                None => 1,
                Some(dims) if dims.is_empty() => 1,
                Some(_) if shape.is_empty() => 1,
                Some(dims) => {
                    let rank = shape.len() as i64;
                    let mut reduced = vec![false; shape.len()];
                    for d in dims {
                        let axis = if d < 0 { d + rank } else { d };
                        if !(0..rank).contains(&axis) {
                            return Err(args.bad(format!("dim {d} out of range for {shape:?}")));
                        }
                        reduced[axis as usize] = true;
                    }
                    let kept: Count = shape
                        .iter()
                        .zip(&reduced)
                        .filter_map(|(&size, &gone)| match (gone, keepdim) {
                            (false, _) => Some(Count::from(size)),
                            (true, true) => Some(Count::ONE),
                            (true, false) => None,
                        })
                        .product();
                    args.exact(kept)?
                }
            }
        }
    };
    let has_dim = matches!(layout(args), Layout::Dims { .. });
    let dtype_out = match short {
        "argmax" | "argmin" => vec![Dtype::I64],
        "all" | "any" => vec![Dtype::Bool],
        "max" | "min" if has_dim => vec![dtype_in, Dtype::I64],
        "std_mean" | "var_mean" => vec![dtype_in, dtype_in],
        _ => vec![dtype_in],
    };
    Ok(Some(Reduction {
        n_in,
        n_out,
        dtype_in,
        dtype_out,
    }))
}

fn reduce_type(name: &str) -> &'static str {
    if name.contains("mean") {
        "mean"
    } else if name.contains("max") {
        "max"
    } else if name.contains("min") {
        "min"
    } else if name.contains("norm") {
        "norm"
    } else {
        "sum"
    }
}

fn reduce_params(args: &Args, r: &Reduction) -> Vec<(String, String)> {
    params([
        ("num_input_elems", r.n_in.to_string()),
        ("num_output_elems", r.n_out.to_string()),
        ("dtype_in_out", str_tuple_repr(&[args.type_str(0), None])),
        ("reduce_type", str_repr(Some(reduce_type(args.name)))),
    ])
}

pub(crate) fn model(args: &Args) -> Result<PerfModel, NoModel> {
    let Some(r) = parse(args)? else {
        return super::elementwise::model(args);
    };
    let (flops, bytes) = args.measured(Count::from(r.n_in), r.bytes())?;
    Ok(PerfModel {
        family: Family::ReduceFwd,
        flops,
        bytes,
        compute_spec: r.dtype_in.vector_spec(),
        params: reduce_params(args, &r),
    })
}

pub(crate) fn model_backward(args: &Args) -> Result<PerfModel, NoModel> {
    let Some(r) = parse(args)? else {
        return Err(args.bad("elementwise max/min has no reduction backward"));
    };
    let (flops, bytes) = args.measured(Count::from(r.n_in), r.bytes_backward())?;
    Ok(PerfModel {
        family: Family::ReduceBwd,
        flops,
        bytes,
        compute_spec: r.dtype_in.vector_spec(),
        params: reduce_params(args, &r),
    })
}

#[cfg(test)]
mod tests {
    use super::super::{OpShape, model as model_op, model_backward as backward_op};
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
    fn mean_over_last_dim_with_keepdim() {
        // RMSNorm's variance: mean((16,559,1024), dim=[-1], keepdim=True) → (16,559,1).
        let m = model_op(&op(
            "aten::mean",
            "[[16, 559, 1024], [], [], []]",
            r#"["float", "ScalarList", "Scalar", ""]"#,
            r#"["", "[-1]", "True", ""]"#,
        ))
        .expect("modelled");
        assert_eq!(m.flops, 9_158_656.0);
        assert_eq!(m.bytes, ((9_158_656 + 8_944) * 4) as f64);
        assert_eq!(
            m.params[1],
            ("num_output_elems".to_string(), "8944".to_string())
        );
        assert_eq!(m.params[3].1, "'mean'");
    }

    #[test]
    fn keepdim_false_drops_the_dimension_but_not_the_count() {
        let keep = model_op(&op(
            "aten::sum",
            "[[2, 3, 4], [], [], []]",
            r#"["float", "ScalarList", "Scalar", ""]"#,
            r#"["", "[1]", "True", ""]"#,
        ))
        .expect("modelled");
        let drop = model_op(&op(
            "aten::sum",
            "[[2, 3, 4], [], [], []]",
            r#"["float", "ScalarList", "Scalar", ""]"#,
            r#"["", "[1]", "False", ""]"#,
        ))
        .expect("modelled");
        assert_eq!(keep.bytes, ((24 + 8) * 4) as f64);
        assert_eq!(keep.bytes, drop.bytes);
        // Several dims at once.
        let two = model_op(&op(
            "aten::sum",
            "[[2, 3, 4], [], [], []]",
            r#"["float", "ScalarList", "Scalar", ""]"#,
            r#"["", "[0, -1]", "False", ""]"#,
        ))
        .expect("modelled");
        assert_eq!(two.bytes, ((24 + 3) * 4) as f64);
    }

    #[test]
    fn full_reduction_and_linalg_norm() {
        let m = model_op(&op(
            "aten::sum",
            "[[2, 3], []]",
            r#"["c10::BFloat16", ""]"#,
            r#"["", ""]"#,
        ))
        .expect("modelled");
        assert_eq!(m.bytes, (6 * 2 + 2) as f64);
        // `std(self, unbiased)` and `norm(self, p)` reduce every dim; with a
        // dim list, one value per row.
        for (name, dims, types, concrete, out) in [
            // `sum(self, *, dtype)`: 6 is a type code, not a dim.
            (
                "aten::sum",
                "[[2, 3], []]",
                r#"["c10::BFloat16", "Scalar"]"#,
                r#"["", "6"]"#,
                1,
            ),
            (
                "aten::std",
                "[[2, 3], []]",
                r#"["c10::BFloat16", "Scalar"]"#,
                r#"["", "True"]"#,
                1,
            ),
            (
                "aten::norm",
                "[[2, 3], []]",
                r#"["c10::BFloat16", "Scalar"]"#,
                r#"["", "2"]"#,
                1,
            ),
            (
                "aten::norm",
                "[[2, 3], [], [], []]",
                r#"["c10::BFloat16", "Scalar", "ScalarList", "Scalar"]"#,
                r#"["", "2", "[1]", "False"]"#,
                2,
            ),
        ] {
            let m = model_op(&op(name, dims, types, concrete)).expect(name);
            assert_eq!(m.bytes, ((6 + out) * 2) as f64, "{name} {dims}");
        }
        // An empty dim list reduces every dim too.
        let m = model_op(&op(
            "aten::sum",
            "[[2, 3], [], [], []]",
            r#"["c10::BFloat16", "ScalarList", "Scalar", ""]"#,
            r#"["", "[]", "False", ""]"#,
        ))
        .expect("modelled");
        assert_eq!(m.bytes, (6 * 2 + 2) as f64);
        // linalg_norm(self, ord, dim, keepdim, dtype): (1, 5184, 768) over [-1] → 5184.
        let m = model_op(&op(
            "aten::linalg_norm",
            "[[1, 5184, 768], [], [], [], []]",
            r#"["c10::BFloat16", "", "ScalarList", "Scalar", ""]"#,
            r#"["", "", "[-1]", "True", ""]"#,
        ))
        .expect("modelled");
        assert_eq!(m.bytes, ((3_981_312 + 5_184) * 2) as f64);
    }

    #[test]
    fn amax_over_a_dim_writes_one_value_per_row() {
        // amax((4, 8), dim=[1], keepdim=False) → (4,): 32 read, 4 written.
        let m = model_op(&op(
            "aten::amax",
            "[[4, 8], [], []]",
            r#"["float", "ScalarList", "Scalar"]"#,
            r#"["", "[1]", "False"]"#,
        ))
        .expect("modelled");
        assert_eq!(m.bytes, ((32 + 4) * 4) as f64);
        assert_eq!(
            m.params[1],
            ("num_output_elems".to_string(), "4".to_string())
        );
    }

    #[test]
    fn max_over_a_dim_writes_indices() {
        let m = model_op(&op(
            "aten::max",
            "[[4, 10], [], []]",
            r#"["float", "Scalar", "Scalar"]"#,
            r#"["", "1", "False"]"#,
        ))
        .expect("modelled");
        assert_eq!(m.bytes, (40 * 4 + 4 * 4 + 4 * 8) as f64);
        // Over every element it writes the value alone.
        let m =
            model_op(&op("aten::max", "[[4, 10]]", r#"["float"]"#, r#"[""]"#)).expect("modelled");
        assert_eq!(m.bytes, (40 * 4 + 4) as f64);
        // max(self, other) is elementwise.
        let m = model_op(&op(
            "aten::max",
            "[[4, 10], [4, 10]]",
            r#"["float", "float"]"#,
            r#"["", ""]"#,
        ))
        .expect("modelled");
        assert_eq!(m.family, Family::BinaryElementwise);
        // So is its `out=` form, whose output is a third tensor.
        let m = model_op(&op(
            "aten::max",
            "[[4, 10], [4, 10], [4, 10]]",
            r#"["float", "float", "float"]"#,
            r#"["", "", ""]"#,
        ))
        .expect("modelled");
        assert_eq!(m.family, Family::BinaryElementwise);
    }

    #[test]
    fn a_zero_dim_tensor_reduces_to_itself() {
        let m = model_op(&op(
            "aten::sum",
            "[[], [], [], []]",
            r#"["float", "ScalarList", "Scalar", ""]"#,
            r#"["", "[0]", "False", ""]"#,
        ))
        .expect("modelled");
        assert_eq!(m.bytes, (4 + 4) as f64);
    }

    #[test]
    fn argmax_and_argmin_write_int64_indices() {
        for name in ["aten::argmax", "aten::argmin"] {
            let m = model_op(&op(
                name,
                "[[4, 10], [], []]",
                r#"["float", "Scalar", "Scalar"]"#,
                r#"["", "1", "False"]"#,
            ))
            .expect("modelled");
            assert_eq!(m.bytes, (40 * 4 + 4 * 8) as f64, "{name}");
        }
    }

    #[test]
    fn all_and_any_write_one_byte_booleans() {
        for name in ["aten::all", "aten::any"] {
            // any((4, 8) float, dim=1) → (4,) bool: 32 floats read, 4 bytes written.
            let m = model_op(&op(
                name,
                "[[4, 8], [], []]",
                r#"["float", "Scalar", "Scalar"]"#,
                r#"["", "1", "False"]"#,
            ))
            .expect("modelled");
            assert_eq!(m.bytes, (32 * 4 + 4) as f64, "{name}");
        }
    }

    #[test]
    fn std_mean_and_var_mean_write_both_statistics() {
        for name in ["aten::std_mean", "aten::var_mean"] {
            // (4, 10) float over dim 1 → a (4,) deviation and a (4,) mean.
            let m = model_op(&op(
                name,
                "[[4, 10], [], [], []]",
                r#"["float", "ScalarList", "Scalar", "Scalar"]"#,
                r#"["", "[1]", "", "False"]"#,
            ))
            .expect("modelled");
            assert_eq!(m.bytes, (40 * 4 + 2 * 4 * 4) as f64, "{name}");
        }
    }

    #[test]
    fn cumulative_keeps_every_element() {
        let m = model_op(&op(
            "aten::cumsum",
            "[[8, 16], [], []]",
            r#"["float", "Scalar", ""]"#,
            r#"["", "1", ""]"#,
        ))
        .expect("modelled");
        assert_eq!(m.bytes, (128 * 4 * 2) as f64);
    }

    #[test]
    fn bad_dim_is_refused() {
        assert!(
            model_op(&op(
                "aten::mean",
                "[[2, 3], [], [], []]",
                r#"["float", "ScalarList", "Scalar", ""]"#,
                r#"["", "[5]", "False", ""]"#,
            ))
            .is_err()
        );
    }

    #[test]
    fn backward_broadcasts_the_gradient() {
        let m = backward_op(&op(
            "aten::mean",
            "[[2, 3, 4], [], [], []]",
            r#"["float", "ScalarList", "Scalar", ""]"#,
            r#"["", "[2]", "True", ""]"#,
        ))
        .expect("modelled");
        assert_eq!(m.family, Family::ReduceBwd);
        assert_eq!(m.bytes, ((6 + 24) * 4) as f64);
    }
}
