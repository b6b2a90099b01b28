//! Matrix multiplies: `(M×K)·(K×N)`, batched `B` times.
//!
//! flops = B·(2·M·N·K + M·N with a bias);
//! bytes = B·(M·K·bpe_A + K·N·bpe_B + M·N·bpe_out) + bias elements·bpe_bias.
//! Backward (input and weight gradients): 2·(2·M·N·K) (+ M·N for the bias).

use super::args::{Args, numel};
use super::count::Count;
use super::dtype::Dtype;
use super::family::{Family, NoModel, PerfModel};
use super::repr::{bool_repr, params, str_tuple_repr};

const OPS: &[&str] = &[
    "aten::mm",
    "aten::addmm",
    "aten::_addmm_activation",
    "aten::bmm",
    "aten::baddbmm",
    "aten::_scaled_mm",
    "aten::_int_mm",
    "aten::linear",
    "aten::matmul",
];

/// Whether this module models the op.
pub fn handles(name: &str) -> bool {
    OPS.contains(&name)
}

/// A batched GEMM with its operand types.
#[derive(Clone, Debug, PartialEq)]
pub struct Gemm {
    /// Batch count.
    pub b: u64,
    /// Rows of A and of the output.
    pub m: u64,
    /// Columns of B and of the output.
    pub n: u64,
    /// The reduced dimension.
    pub k: u64,
    /// A's type.
    pub dtype_a: Dtype,
    /// B's type.
    pub dtype_b: Dtype,
    /// The output's type.
    pub dtype_out: Dtype,
    /// The bias (added tensor): its element count and type.
    pub bias: Option<(Count, Dtype)>,
}

impl Gemm {
    /// Forward FLOPs: 2·M·N·K per batch, plus M·N for the bias add.
    pub fn flops(&self) -> Count {
        let (b, m, n, k) = self.dims();
        let bias = if self.bias.is_some() {
            m * n
        } else {
            Count::ZERO
        };
        b * (2 * m * n * k + bias)
    }

    /// Forward bytes: A and B read, the output written, the bias read.
    pub fn bytes(&self) -> Count {
        let (b, m, n, k) = self.dims();
        let per_batch = m * k * self.dtype_a.size()
            + k * n * self.dtype_b.size()
            + m * n * self.dtype_out.size();
        let bias = self
            .bias
            .map_or(Count::ZERO, |(elems, dtype)| elems * dtype.size());
        b * per_batch + bias
    }

    /// Backward FLOPs: dA = dY·Bᵀ (2·M·K·N), dB = Aᵀ·dY (2·K·N·M), plus
    /// M·N to reduce dY into the bias gradient.
    pub fn flops_backward(&self) -> Count {
        let (b, m, n, k) = self.dims();
        let bias = if self.bias.is_some() {
            m * n
        } else {
            Count::ZERO
        };
        b * (2 * m * k * n + 2 * k * n * m + bias)
    }

    /// Backward bytes: dA reads dY and B and writes dA; dB reads dY and A and
    /// writes dB; the bias gradient reads dY and writes N elements.
    pub fn bytes_backward(&self) -> Count {
        let (b, m, n, k) = self.dims();
        let (a, bb, out) = (
            self.dtype_a.size(),
            self.dtype_b.size(),
            self.dtype_out.size(),
        );
        let grad_a = m * n * out + k * n * bb + m * k * a;
        let grad_b = m * n * out + m * k * a + k * n * bb;
        let grad_bias = self
            .bias
            .map_or(Count::ZERO, |(_, dtype)| m * n * out + n * dtype.size());
        b * (grad_a + grad_b + grad_bias)
    }

    fn dims(&self) -> (Count, Count, Count, Count) {
        (
            Count::from(self.b),
            Count::from(self.m),
            Count::from(self.n),
            Count::from(self.k),
        )
    }
}

/// Reads the GEMM an op performs, with the indices of A and B (for strides and types).
fn parse(args: &Args) -> Result<(Gemm, usize, usize), NoModel> {
    let matrix = |i: usize| -> Result<Vec<u64>, NoModel> {
        let shape = args.shape(i)?;
        if shape.len() == 2 {
            Ok(shape)
        } else {
            Err(args.bad(format!("input {i} is not a matrix: {shape:?}")))
        }
    };
    let check_k = |ka: u64, kb: u64| -> Result<(), NoModel> {
        if ka == kb {
            Ok(())
        } else {
            Err(args.bad(format!("inner dimensions differ: {ka} vs {kb}")))
        }
    };
    // The recorded output tensor, when the op was called with `out=`.
    let out_dtype = |i: usize, default: Dtype| -> Result<Dtype, NoModel> {
        if args.has_tensor(i) {
            args.dtype(i)
        } else {
            Ok(default)
        }
    };
    let bias_of = |i: usize| -> Result<Option<(Count, Dtype)>, NoModel> {
        match args.tensor_shape(i) {
            Some(shape) => Ok(Some((numel(&shape), args.dtype(i)?))),
            None => Ok(None),
        }
    };
    let name = args.name;
    let gemm = match name {
        "aten::mm" | "aten::_int_mm" => {
            let (a, b) = (matrix(0)?, matrix(1)?);
            check_k(a[1], b[0])?;
            let (dtype_a, dtype_b) = (args.dtype(0)?, args.dtype(1)?);
            let default_out = if name == "aten::_int_mm" {
                Dtype::I32
            } else {
                dtype_a
            };
            let gemm = Gemm {
                b: 1,
                m: a[0],
                n: b[1],
                k: a[1],
                dtype_a,
                dtype_b,
                dtype_out: out_dtype(2, default_out)?,
                bias: None,
            };
            (gemm, 0, 1)
        }
        "aten::addmm" | "aten::_addmm_activation" => {
            let (a, b) = (matrix(1)?, matrix(2)?);
            check_k(a[1], b[0])?;
            let dtype_a = args.dtype(1)?;
            let gemm = Gemm {
                b: 1,
                m: a[0],
                n: b[1],
                k: a[1],
                dtype_a,
                dtype_b: args.dtype(2)?,
                dtype_out: dtype_a,
                bias: bias_of(0)?,
            };
            (gemm, 1, 2)
        }
        "aten::bmm" | "aten::baddbmm" => {
            let (ia, ib) = if name == "aten::bmm" { (0, 1) } else { (1, 2) };
            let (a, b) = (args.shape(ia)?, args.shape(ib)?);
            if a.len() != 3 || b.len() != 3 || a[0] != b[0] {
                return Err(args.bad(format!("not a batched matmul: {a:?} x {b:?}")));
            }
            check_k(a[2], b[1])?;
            let dtype_a = args.dtype(ia)?;
            let (dtype_out, bias) = if name == "aten::bmm" {
                (out_dtype(2, dtype_a)?, None)
            } else {
                (dtype_a, bias_of(0)?)
            };
            let gemm = Gemm {
                b: a[0],
                m: a[1],
                n: b[2],
                k: a[2],
                dtype_a,
                dtype_b: args.dtype(ib)?,
                dtype_out,
                bias,
            };
            (gemm, ia, ib)
        }
        "aten::_scaled_mm" => {
            // (self, mat2, scale_a, scale_b, bias, scale_result, out_dtype, use_fast_accum)
            let (a, b) = (matrix(0)?, matrix(1)?);
            check_k(a[1], b[0])?;
            let (dtype_a, dtype_b) = (args.dtype(0)?, args.dtype(1)?);
            let requested = args.concrete(6).and_then(Dtype::from_scalar_type_code);
            let dtype_out = match requested {
                Some(dtype) => dtype,
                // fp8 GEMMs write a 16-bit result unless told otherwise.
                None if dtype_a.is_fp8() => Dtype::Bf16,
                None => dtype_a,
            };
            let gemm = Gemm {
                b: 1,
                m: a[0],
                n: b[1],
                k: a[1],
                dtype_a,
                dtype_b,
                dtype_out,
                bias: bias_of(4)?,
            };
            (gemm, 0, 1)
        }
        "aten::linear" => {
            // (input, weight, bias): y = x·Wᵀ + b, W is (N, K).
            let x = args.shape(0)?;
            let w = matrix(1)?;
            let Some((&k, rows)) = x.split_last() else {
                return Err(args.bad("input is a scalar"));
            };
            check_k(k, w[1])?;
            let dtype_a = args.dtype(0)?;
            let gemm = Gemm {
                b: 1,
                m: args.size(numel(rows))?,
                n: w[0],
                k,
                dtype_a,
                dtype_b: args.dtype(1)?,
                dtype_out: dtype_a,
                bias: bias_of(2)?,
            };
            (gemm, 0, 1)
        }
        "aten::matmul" => {
            let (a, b) = (args.shape(0)?, args.shape(1)?);
            let gemm = matmul_dims(args, &a, &b)?;
            (gemm, 0, 1)
        }
        _ => {
            return Err(NoModel::UnknownOp {
                name: name.to_string(),
            });
        }
    };
    Ok(gemm)
}

/// `torch.matmul`'s cases: vectors, matrices, batched with broadcasting.
fn matmul_dims(args: &Args, a: &[u64], b: &[u64]) -> Result<Gemm, NoModel> {
    if a.is_empty() || b.is_empty() {
        return Err(args.bad("matmul of a scalar"));
    }
    // A matrix takes the batched arms with an empty batch.
    let (m, ka, batch_a): (u64, u64, &[u64]) = match a.len() {
        1 => (1, a[0], &[]),
        _ if b.len() <= 2 => (args.size(numel(&a[..a.len() - 1]))?, a[a.len() - 1], &[]),
        _ => (a[a.len() - 2], a[a.len() - 1], &a[..a.len() - 2]),
    };
    let (n, kb, batch_b): (u64, u64, &[u64]) = match b.len() {
        1 => (1, b[0], &[]),
        _ => (b[b.len() - 1], b[b.len() - 2], &b[..b.len() - 2]),
    };
    if ka != kb {
        return Err(args.bad(format!("inner dimensions differ: {ka} vs {kb}")));
    }
    let batch = super::elementwise::broadcast(batch_a, batch_b)
        .ok_or_else(|| args.bad(format!("batch dimensions do not broadcast: {a:?} x {b:?}")))?;
    let dtype_a = args.dtype(0)?;
    Ok(Gemm {
        b: args.size(numel(&batch))?,
        m,
        n,
        k: ka,
        dtype_a,
        dtype_b: args.dtype(1)?,
        dtype_out: dtype_a,
        bias: None,
    })
}

fn gemm_params(args: &Args, gemm: &Gemm, ia: usize, ib: usize) -> Vec<(String, String)> {
    let mut list = params([
        ("M", gemm.m.to_string()),
        ("N", gemm.n.to_string()),
        ("K", gemm.k.to_string()),
        ("bias", bool_repr(gemm.bias.is_some())),
        ("stride_A", args.stride_repr(ia)),
        ("stride_B", args.stride_repr(ib)),
        (
            "dtype_A_B",
            str_tuple_repr(&[args.type_str(ia), args.type_str(ib)]),
        ),
    ]);
    // TraceLens lists the batch first for batched ops, last otherwise.
    let batch = ("B".to_string(), gemm.b.to_string());
    if matches!(args.name, "aten::bmm" | "aten::baddbmm") {
        list.insert(0, batch);
    } else {
        list.push(batch);
    }
    list
}

pub(crate) fn model(args: &Args) -> Result<PerfModel, NoModel> {
    let (gemm, ia, ib) = parse(args)?;
    let (flops, bytes) = args.measured(gemm.flops(), gemm.bytes())?;
    Ok(PerfModel {
        family: Family::Gemm,
        flops,
        bytes,
        compute_spec: gemm.dtype_a.matrix_spec(),
        params: gemm_params(args, &gemm, ia, ib),
    })
}

pub(crate) fn model_backward(args: &Args) -> Result<PerfModel, NoModel> {
    let (gemm, ia, ib) = parse(args)?;
    let (flops, bytes) = args.measured(gemm.flops_backward(), gemm.bytes_backward())?;
    Ok(PerfModel {
        family: Family::GemmBwd,
        flops,
        bytes,
        compute_spec: gemm.dtype_a.matrix_spec(),
        params: gemm_params(args, &gemm, ia, ib),
    })
}

#[cfg(test)]
mod tests;
