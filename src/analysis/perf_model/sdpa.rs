//! Fused scaled-dot-product attention, forward and backward, with grouped
//! query attention (H_KV dividing H_Q) and causal masking.
//!
//! Forward: flops = 2·B·H_Q·N_Q·N_KV·(d_qk + d_v), halved when causal;
//! bytes = (Q + K + V + O elements), each at its own dtype's size.
//! Backward: QKᵀ recomputed (flash implementations) + dV + dP + dQ + dK
//! (2·B·H_Q·N_Q·N_KV·d each) + the GQA reduction B·N_KV·d·(H_Q/H_KV − 1) for
//! dK and dV, halved when causal; bytes = Q, K, V, dO read and dQ, dK, dV written.
//!
//! Layouts: aten `_scaled_dot_product_*` ops take (B, H, N, D); the flash
//! kernels (`aten::_flash_attention_*`, `flash_attn::*`) take (B, N, H, D);
//! varlen forms take (total tokens, H, D) with cumulative sequence lengths.

use super::args::Args;
use super::count::Count;
use super::dtype::Dtype;
use super::family::{Family, NoModel, PerfModel};
use super::repr::{bool_repr, float_repr, params, str_tuple_repr};

/// Where an attention op keeps its arguments.
struct Layout {
    /// Index of Q (K and V follow).
    q: usize,
    /// Tensors are (B, N, H, D) rather than (B, H, N, D).
    bnhd: bool,
    /// Index of `dropout_p` in `Concrete Inputs`.
    dropout: usize,
    /// Index of `is_causal`.
    causal: usize,
    /// Flash implementation (recomputes QKᵀ in the backward).
    flash: bool,
    /// Backward op.
    backward: bool,
    /// Varlen: indices of `cu_seqlens_q`, `cu_seqlens_k`, `max_seqlen_q`, `max_seqlen_k`.
    varlen: Option<[usize; 4]>,
}

fn layout(name: &str) -> Option<Layout> {
    let l = |q, bnhd, dropout, causal, flash, backward| Layout {
        q,
        bnhd,
        dropout,
        causal,
        flash,
        backward,
        varlen: None,
    };
    Some(match name {
        "aten::_scaled_dot_product_flash_attention" => l(0, false, 3, 4, true, false),
        "aten::_scaled_dot_product_efficient_attention"
        | "aten::_scaled_dot_product_cudnn_attention" => l(0, false, 5, 6, false, false),
        "aten::_flash_attention_forward" => Layout {
            varlen: Some([3, 4, 5, 6]),
            ..l(0, true, 7, 8, true, false)
        },
        "flash_attn::_flash_attn_forward" => l(0, true, 3, 5, true, false),
        "flash_attn::_flash_attn_varlen_forward" => Layout {
            varlen: Some([3, 4, 5, 6]),
            ..l(0, true, 7, 9, true, false)
        },
        "aten::_scaled_dot_product_flash_attention_backward" => l(1, false, 10, 11, true, true),
        "aten::_scaled_dot_product_efficient_attention_backward" => l(1, false, 9, 11, false, true),
        "aten::_scaled_dot_product_cudnn_attention_backward" => l(1, false, 13, 14, false, true),
        "aten::_flash_attention_backward" => Layout {
            varlen: Some([6, 7, 8, 9]),
            ..l(1, true, 10, 11, true, true)
        },
        "flash_attn::_flash_attn_backward" => l(1, true, 9, 11, true, true),
        "flash_attn::_flash_attn_varlen_backward" => Layout {
            varlen: Some([9, 10, 11, 12]),
            ..l(1, true, 13, 15, true, true)
        },
        _ => return None,
    })
}

/// Whether this module models the op.
pub fn handles(name: &str) -> bool {
    layout(name).is_some()
}

/// Whether the op is an attention backward.
pub fn is_backward(name: &str) -> bool {
    layout(name).is_some_and(|l| l.backward)
}

/// Variable-length batches: sequence counts and the longest sequences.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Varlen {
    /// Number of query sequences.
    pub num_seqs: u64,
    /// Longest query sequence.
    pub max_q: u64,
    /// Longest key/value sequence.
    pub max_kv: u64,
}

/// One attention call's dimensions.
#[derive(Clone, Debug, PartialEq)]
pub struct Attention {
    /// Batch (1 for varlen, whose N are token totals).
    pub b: u64,
    /// Query length (varlen: total query tokens).
    pub n_q: u64,
    /// Query heads.
    pub h_q: u64,
    /// Key/value length (varlen: total tokens).
    pub n_kv: u64,
    /// Key/value heads (H_Q for MHA, fewer for GQA/MQA).
    pub h_kv: u64,
    /// Q/K head dimension.
    pub d_qk: u64,
    /// V head dimension.
    pub d_v: u64,
    /// Causal mask.
    pub causal: bool,
    /// Dropout probability.
    pub dropout: f64,
    /// Flash implementation.
    pub flash: bool,
    /// Q, K and V types.
    pub dtypes: [Dtype; 3],
    /// Varlen batches.
    pub varlen: Option<Varlen>,
}

/// Forward flops of one (B, N_Q, N_KV) block.
fn flops_block(a: &Attention, b: u128, n_q: u128, n_kv: u128) -> Result<Option<f64>, String> {
    let total = 2
        * Count::from(b)
        * Count::from(a.h_q)
        * Count::from(n_q)
        * Count::from(n_kv)
        * (Count::from(a.d_qk) + Count::from(a.d_v));
    halve_if_causal(a, n_q, n_kv, total)
}

fn flops_block_backward(
    a: &Attention,
    b: u128,
    n_q: u128,
    n_kv: u128,
) -> Result<Option<f64>, String> {
    let (b, n_q_count, n_kv_count) = (Count::from(b), Count::from(n_q), Count::from(n_kv));
    let matmul = |d: u64| 2 * b * Count::from(a.h_q) * n_q_count * n_kv_count * Count::from(d);
    // Query heads sharing each KV head, less the one that needs no reduction.
    let extra_heads = Count::from((a.h_q / a.h_kv).saturating_sub(1));
    let group_reduce = |d: u64| b * n_kv_count * Count::from(d) * extra_heads;
    let recompute = if a.flash { matmul(a.d_qk) } else { Count::ZERO };
    let total = recompute
        + matmul(a.d_v)
        + group_reduce(a.d_v)
        + matmul(a.d_v)
        + matmul(a.d_qk)
        + matmul(a.d_qk)
        + group_reduce(a.d_qk);
    halve_if_causal(a, n_q, n_kv, total)
}

fn halve_if_causal(
    a: &Attention,
    n_q: u128,
    n_kv: u128,
    flops: Count,
) -> Result<Option<f64>, String> {
    if !a.causal {
        Ok(flops.to_f64())
    } else if n_q == n_kv {
        Ok(flops.to_f64().map(|f| f / 2.0))
    } else {
        Err(format!(
            "causal attention with N_Q ({n_q}) != N_KV ({n_kv}): the masked fraction depends on the alignment"
        ))
    }
}

/// FLOPs of one block of a call: `Err` with the reason the model does not
/// apply, `Ok(None)` when the count overflows.
type BlockFlops = Result<Option<f64>, String>;

impl Attention {
    /// Applies `block` to the whole call: once for fixed-length batches;
    /// for varlen, the longest sequence plus the other sequences at their
    /// average length (the remaining tokens shared evenly), a lower bound.
    fn over_sequences(
        &self,
        block: impl Fn(&Attention, u128, u128, u128) -> BlockFlops,
    ) -> BlockFlops {
        let Some(v) = self.varlen else {
            return block(
                self,
                u128::from(self.b),
                u128::from(self.n_q),
                u128::from(self.n_kv),
            );
        };
        let Some(mut total) = block(self, 1, u128::from(v.max_q), u128::from(v.max_kv))? else {
            return Ok(None);
        };
        if v.num_seqs > 1 {
            let rest = u128::from(v.num_seqs - 1);
            let q = u128::from(self.n_q.saturating_sub(v.max_q)) / rest;
            let kv = u128::from(self.n_kv.saturating_sub(v.max_kv)) / rest;
            let Some(others) = block(self, 1, q, kv)? else {
                return Ok(None);
            };
            total += rest as f64 * others;
        }
        Ok(Some(total))
    }

    /// Forward FLOPs (`Err`: why the model does not apply; `Ok(None)`: overflow).
    pub fn flops(&self) -> BlockFlops {
        self.over_sequences(flops_block)
    }

    /// Backward FLOPs (`Err`: why the model does not apply; `Ok(None)`: overflow).
    pub fn flops_backward(&self) -> BlockFlops {
        self.over_sequences(flops_block_backward)
    }

    fn elements(&self) -> (Count, Count, Count, Count) {
        let b = Count::from(self.b);
        let (n_q, n_kv) = (Count::from(self.n_q), Count::from(self.n_kv));
        let (h_q, h_kv) = (Count::from(self.h_q), Count::from(self.h_kv));
        let (d_qk, d_v) = (Count::from(self.d_qk), Count::from(self.d_v));
        (
            b * n_q * h_q * d_qk,
            b * n_kv * h_kv * d_qk,
            b * n_kv * h_kv * d_v,
            b * n_q * h_q * d_v,
        )
    }

    /// Forward bytes: Q, K, V read, O written (at Q's type).
    pub fn bytes(&self) -> Count {
        let (q, k, v, o) = self.elements();
        let [tq, tk, tv] = self.dtypes.map(Dtype::size);
        q * tq + k * tk + v * tv + o * tq
    }

    /// Backward bytes: Q, K, V and dO read; dQ, dK, dV written.
    pub fn bytes_backward(&self) -> Count {
        let (q, k, v, o) = self.elements();
        let [tq, tk, tv] = self.dtypes.map(Dtype::size);
        2 * (q * tq + k * tk + v * tv) + o * tq
    }
}

fn parse(args: &Args, layout: &Layout) -> Result<Attention, NoModel> {
    let (q, k, v) = (
        args.shape(layout.q)?,
        args.shape(layout.q + 1)?,
        args.shape(layout.q + 2)?,
    );
    let varlen_indices = layout
        .varlen
        .filter(|[cu_q, _, _, _]| args.has_tensor(*cu_q));
    // (batch, heads, length, head dim) of each tensor.
    let bhnd = |shape: &[u64], what: &str| -> Result<[u64; 4], NoModel> {
        match (shape, varlen_indices.is_some(), layout.bnhd) {
            ([t, h, d], true, _) => Ok([1, *h, *t, *d]),
            ([b, n, h, d], false, true) => Ok([*b, *h, *n, *d]),
            ([b, h, n, d], false, false) => Ok([*b, *h, *n, *d]),
            _ => Err(args.bad(format!("{what} has an unexpected shape {shape:?}"))),
        }
    };
    let ([bq, hq, nq, dq], [bk, hk, nk, dk], [bv, hv, nv, dv]) =
        (bhnd(&q, "Q")?, bhnd(&k, "K")?, bhnd(&v, "V")?);
    if bq != bk || bq != bv || hk != hv || nk != nv || dq != dk {
        return Err(args.bad(format!("Q {q:?}, K {k:?}, V {v:?} do not fit together")));
    }
    if hk == 0 || hq % hk != 0 {
        return Err(args.bad(format!("{hk} KV heads do not divide {hq} query heads")));
    }
    let varlen = match varlen_indices {
        None => None,
        Some([cu_q, cu_k, max_q, max_k]) => {
            let count = |i: usize| -> Result<u64, NoModel> {
                match args.shape(i)?.as_slice() {
                    [n] if *n >= 2 => Ok(n - 1),
                    other => Err(args.bad(format!("bad cu_seqlens shape {other:?}"))),
                }
            };
            let (seqs_q, seqs_k) = (count(cu_q)?, count(cu_k)?);
            if seqs_q != seqs_k {
                return Err(args.bad("different numbers of query and key sequences"));
            }
            let max = |i: usize| -> Result<u64, NoModel> {
                match args.int_list(i)?.as_deref() {
                    Some([n]) if *n >= 1 => Ok(*n as u64),
                    _ => Err(args.bad(format!("max_seqlen (input {i}) not recorded"))),
                }
            };
            Some(Varlen {
                num_seqs: seqs_q,
                max_q: max(max_q)?,
                max_kv: max(max_k)?,
            })
        }
    };
    Ok(Attention {
        b: bq,
        n_q: nq,
        h_q: hq,
        n_kv: nk,
        h_kv: hk,
        d_qk: dq,
        d_v: dv,
        causal: args.flag(layout.causal)?.unwrap_or(false),
        dropout: args.float(layout.dropout)?.unwrap_or(0.0),
        flash: layout.flash,
        dtypes: [
            args.dtype(layout.q)?,
            args.dtype(layout.q + 1)?,
            args.dtype(layout.q + 2)?,
        ],
        varlen,
    })
}

fn attention_params(args: &Args, a: &Attention, q: usize) -> Vec<(String, String)> {
    let mut list = params([
        ("B", a.b.to_string()),
        ("N_Q", a.n_q.to_string()),
        ("H_Q", a.h_q.to_string()),
        ("N_KV", a.n_kv.to_string()),
        ("H_KV", a.h_kv.to_string()),
        ("d_h_qk", a.d_qk.to_string()),
        ("d_h_v", a.d_v.to_string()),
        ("dropout", float_repr(a.dropout)),
        ("causal", bool_repr(a.causal)),
        ("flash_impl", bool_repr(a.flash)),
        (
            "dtype_A_B",
            str_tuple_repr(&[args.type_str(q), args.type_str(q + 1)]),
        ),
    ]);
    if let Some(v) = a.varlen {
        list.extend(params([
            ("num_seqs", v.num_seqs.to_string()),
            ("max_seqlen_q", v.max_q.to_string()),
            ("max_seqlen_kv", v.max_kv.to_string()),
        ]));
    }
    list
}

fn build(args: &Args, backward: bool) -> Result<PerfModel, NoModel> {
    let layout = layout(args.name).ok_or_else(|| NoModel::UnknownOp {
        name: args.name.to_string(),
    })?;
    let a = parse(args, &layout)?;
    let (family, flops, bytes) = if backward {
        (Family::SdpaBwd, a.flops_backward(), a.bytes_backward())
    } else {
        (Family::SdpaFwd, a.flops(), a.bytes())
    };
    let flops = flops.map_err(|reason| args.bad(reason))?;
    let (flops, bytes) = args.figures(flops, bytes.to_f64())?;
    Ok(PerfModel {
        family,
        flops,
        bytes,
        compute_spec: a.dtypes[0].matrix_spec(),
        params: attention_params(args, &a, layout.q),
    })
}

pub(crate) fn model(args: &Args) -> Result<PerfModel, NoModel> {
    let backward = is_backward(args.name);
    build(args, backward)
}

pub(crate) fn model_backward(args: &Args) -> Result<PerfModel, NoModel> {
    build(args, true)
}

#[cfg(test)]
mod tests {
    use super::super::{OpShape, model as model_op, model_backward as backward_op};
    use super::*;
    use crate::analysis::hardware::ComputeSpec;

    fn op<'a>(name: &'a str, dims: &'a str, types: &'a str, concrete: &'a str) -> OpShape<'a> {
        OpShape {
            name,
            input_dims: Some(dims),
            input_type: Some(types),
            input_strides: None,
            concrete_inputs: Some(concrete),
        }
    }

    const SDPA_TYPES: &str = r#"["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar", "Scalar", "Scalar"]"#;

    #[test]
    fn bert_flash_attention() {
        // B=1, H=8, N=141, d=64, bf16, not causal.
        let m = model_op(&op(
            "aten::_scaled_dot_product_flash_attention",
            "[[1, 8, 141, 64], [1, 8, 141, 64], [1, 8, 141, 64], [], [], [], []]",
            SDPA_TYPES,
            r#"["", "", "", "0.", "False", "False", "0.125"]"#,
        ))
        .expect("modelled");
        // 2·1·8·141·141·(64+64)
        assert_eq!(m.flops, 40_716_288.0);
        // 4 tensors of 72,192 elements, 2 bytes each.
        assert_eq!(m.bytes, 577_536.0);
        assert_eq!(m.compute_spec, Some(ComputeSpec::MatrixBf16));
        // The parameter columns, as TraceLens's sheets print them.
        let params: Vec<(&str, &str)> = m
            .params
            .iter()
            .map(|(key, value)| (key.as_str(), value.as_str()))
            .collect();
        assert_eq!(
            params,
            [
                ("B", "1"),
                ("N_Q", "141"),
                ("H_Q", "8"),
                ("N_KV", "141"),
                ("H_KV", "8"),
                ("d_h_qk", "64"),
                ("d_h_v", "64"),
                ("dropout", "0.0"),
                ("causal", "False"),
                ("flash_impl", "True"),
                ("dtype_A_B", "('c10::BFloat16', 'c10::BFloat16')"),
            ]
        );
    }

    /// Q, K and V are each read at their own type; O is written at Q's.
    #[test]
    fn each_operand_is_read_at_its_own_type() {
        let m = model_op(&op(
            "aten::_scaled_dot_product_flash_attention",
            "[[1, 8, 141, 64], [1, 8, 141, 64], [1, 8, 141, 64], [], [], [], []]",
            r#"["c10::BFloat16", "float", "c10::Float8_e4m3fn", "Scalar", "Scalar", "Scalar", "Scalar"]"#,
            r#"["", "", "", "0.", "False", "False", "0.125"]"#,
        ))
        .expect("modelled");
        assert_eq!(m.bytes, (72_192 * (2 + 4 + 1 + 2)) as f64);
        assert_eq!(m.param("dtype_A_B"), Some("('c10::BFloat16', 'float')"));
    }

    #[test]
    fn flash_backward_recomputes_the_scores() {
        // (grad_out, q, k, v, out, logsumexp, cum_seq_q, cum_seq_k, max_q,
        // max_k, dropout_p, is_causal, philox_seed, philox_offset, scale)
        let t = "[1, 8, 141, 64]";
        let m = model_op(&op(
            "aten::_scaled_dot_product_flash_attention_backward",
            &format!("[{t}, {t}, {t}, {t}, {t}, [1, 8, 141], [], [], [], [], [], [], [], [], []]"),
            r#"["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "float", "", "", "Scalar", "Scalar", "Scalar", "Scalar", "", "", "Scalar"]"#,
            r#"["", "", "", "", "", "", "", "", "141", "141", "0.", "False", "", "", "0.125"]"#,
        ))
        .expect("modelled");
        assert_eq!(m.family, Family::SdpaBwd);
        // Five matmuls to the forward's two (40,716,288 FLOPs).
        assert_eq!(m.flops, 2.5 * 40_716_288.0);
    }

    #[test]
    fn causal_halves_the_flops() {
        // Qwen: B=16, H=16, N=559, d=64, causal.
        let m = model_op(&op(
            "aten::_scaled_dot_product_flash_attention",
            "[[16, 16, 559, 64], [16, 16, 559, 64], [16, 16, 559, 64], [], [], [], []]",
            SDPA_TYPES,
            r#"["", "", "", "0.", "True", "False", "0.125"]"#,
        ))
        .expect("modelled");
        // 2·16·16·559·559·128 / 2
        assert_eq!(m.flops, 10_239_377_408.0);
        assert_eq!(m.params[8].1, "True");
    }

    #[test]
    fn grouped_query_attention() {
        // flash_attn layout (B, N, H, D): Q (2, 128, 32, 128), K/V (2, 128, 8, 128), fp16.
        let m = model_op(&op(
            "flash_attn::_flash_attn_forward",
            "[[2, 128, 32, 128], [2, 128, 8, 128], [2, 128, 8, 128], [], [], [], [], [], [], [], []]",
            r#"["c10::Half", "c10::Half", "c10::Half", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "", "Scalar"]"#,
            r#"["", "", "", "0.", "0.088", "False", "-1", "-1", "0.", "", "False"]"#,
        ))
        .expect("modelled");
        assert_eq!(m.flops, (2 * 2 * 32 * 128 * 128 * 256) as f64);
        let q = 2 * 128 * 32 * 128;
        let kv = 2 * 128 * 8 * 128;
        assert_eq!(m.bytes, ((q + kv + kv + q) * 2) as f64);
        assert_eq!(m.params[4], ("H_KV".to_string(), "8".to_string()));
    }

    #[test]
    fn fp32_attention_uses_four_bytes() {
        let m = model_op(&op(
            "aten::_scaled_dot_product_efficient_attention",
            "[[1, 2, 4, 8], [1, 2, 4, 8], [1, 2, 4, 8], [], [], [], [], []]",
            r#"["float", "float", "float", "", "Scalar", "Scalar", "Scalar", "Scalar"]"#,
            r#"["", "", "", "", "True", "0.", "False", ""]"#,
        ))
        .expect("modelled");
        assert_eq!(m.bytes, (4 * 64 * 4) as f64);
        assert_eq!(m.params[9].1, "False");
    }

    #[test]
    fn backward_with_gqa_and_causal() {
        // Q (1, 64, 4, 16), K/V (1, 64, 2, 16), causal, flash backward layout.
        let m = model_op(&op(
            "flash_attn::_flash_attn_backward",
            "[[1, 64, 4, 16], [1, 64, 4, 16], [1, 64, 2, 16], [1, 64, 2, 16], [1, 64, 4, 16], [1, 4, 64], [], [], [], [], [], [], [], [], [], [], [], []]",
            r#"["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "float", "", "", "", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "", "Scalar", ""]"#,
            r#"["", "", "", "", "", "", "", "", "", "0.", "0.25", "True", "-1", "0", "0.", "", "False", ""]"#,
        ))
        .expect("modelled");
        assert_eq!(m.family, Family::SdpaBwd);
        let matmul = 2 * 4 * 64 * 64 * 16;
        let reduce = 64 * 16; // B·N_KV·d·(4/2 − 1)
        let expected = (5 * matmul + 2 * reduce) as f64 / 2.0;
        assert_eq!(m.flops, expected);
        let (q, kv) = (64 * 4 * 16, 64 * 2 * 16);
        assert_eq!(m.bytes, ((2 * (q + kv + kv) + q) * 2) as f64);
    }

    #[test]
    fn backward_from_the_forward_op() {
        let m = backward_op(&op(
            "aten::_scaled_dot_product_flash_attention",
            "[[1, 8, 141, 64], [1, 8, 141, 64], [1, 8, 141, 64], [], [], [], []]",
            SDPA_TYPES,
            r#"["", "", "", "0.", "False", "False", "0.125"]"#,
        ))
        .expect("modelled");
        assert_eq!(m.flops, (5 * 2 * 8 * 141 * 141 * 64) as f64);
    }

    #[test]
    fn q_k_v_that_do_not_fit_together_are_refused_one_mismatch_at_a_time() {
        let attention = |q: &str, k: &str, v: &str| {
            let dims = format!("[{q}, {k}, {v}, [], [], [], []]");
            model_op(&op(
                "aten::_scaled_dot_product_flash_attention",
                &dims,
                SDPA_TYPES,
                r#"["", "", "", "0.", "False", "False", "0.125"]"#,
            ))
        };
        let fits = "[2, 8, 16, 64]";
        // V's head dim may differ from Q's and K's (MLA): that still fits.
        assert!(attention(fits, fits, "[2, 8, 16, 128]").is_ok());
        for (q, k, v, what) in [
            (fits, "[3, 8, 16, 64]", fits, "K's batch"),
            (fits, fits, "[3, 8, 16, 64]", "V's batch"),
            (fits, "[2, 4, 16, 64]", fits, "K's heads, not V's"),
            (fits, "[2, 8, 32, 64]", fits, "K's length, not V's"),
            (fits, "[2, 8, 16, 32]", fits, "K's head dim"),
        ] {
            match attention(q, k, v) {
                Err(NoModel::BadArgs { reason, .. }) => {
                    assert!(reason.ends_with("do not fit together"), "{what}: {reason}");
                }
                other => panic!("{what}: {other:?}"),
            }
        }
        // Grouped-query attention needs KV heads that divide the query heads.
        for kv_heads in ["[2, 0, 16, 64]", "[2, 3, 16, 64]"] {
            match attention(fits, kv_heads, kv_heads) {
                Err(NoModel::BadArgs { reason, .. }) => {
                    assert!(reason.ends_with("do not divide 8 query heads"), "{reason}");
                }
                other => panic!("{kv_heads}: {other:?}"),
            }
        }
    }

    #[test]
    fn causal_with_unequal_lengths_is_refused() {
        let r = model_op(&op(
            "aten::_scaled_dot_product_flash_attention",
            "[[1, 8, 1, 64], [1, 8, 141, 64], [1, 8, 141, 64], [], [], [], []]",
            SDPA_TYPES,
            r#"["", "", "", "0.", "True", "False", "0.125"]"#,
        ));
        assert!(matches!(r, Err(NoModel::BadArgs { .. })));
    }

    #[test]
    fn varlen_forward() {
        // 3 sequences, 100 query/key tokens in total, longest 50, H=2, d=8.
        let m = model_op(&op(
            "flash_attn::_flash_attn_varlen_forward",
            "[[100, 2, 8], [100, 2, 8], [100, 2, 8], [4], [4], [], [], [], [], []]",
            r#"["float", "float", "float", "int", "int", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar"]"#,
            r#"["", "", "", "", "", "50", "50", "0.", "0.35", "False"]"#,
        ))
        .expect("modelled");
        let block = |n: u64| (2 * 2 * n * n * 16) as f64;
        assert_eq!(m.flops, block(50) + 2.0 * block(25));
        assert_eq!(m.bytes, (4 * 100 * 2 * 8 * 4) as f64);
        // One sequence is one block, with its dropout among the parameters.
        let m = model_op(&op(
            "flash_attn::_flash_attn_varlen_forward",
            "[[50, 2, 8], [50, 2, 8], [50, 2, 8], [2], [2], [], [], [], [], []]",
            r#"["float", "float", "float", "int", "int", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar"]"#,
            r#"["", "", "", "", "", "50", "50", "0.1", "0.35", "False"]"#,
        ))
        .expect("modelled");
        assert_eq!(m.flops, block(50));
        assert_eq!(m.param("dropout"), Some("0.1"));
        // A max_seqlen of 0 bounds no sequence either.
        let r = model_op(&op(
            "flash_attn::_flash_attn_varlen_forward",
            "[[50, 2, 8], [50, 2, 8], [50, 2, 8], [2], [2], [], [], [], [], []]",
            r#"["float", "float", "float", "int", "int", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar"]"#,
            r#"["", "", "", "", "", "0", "50", "0.1", "0.35", "False"]"#,
        ));
        assert!(matches!(r, Err(NoModel::BadArgs { .. })), "{r:?}");
        // cu_seqlens of one offset bound no sequence.
        let r = model_op(&op(
            "flash_attn::_flash_attn_varlen_forward",
            "[[50, 2, 8], [50, 2, 8], [50, 2, 8], [1], [1], [], [], [], [], []]",
            r#"["float", "float", "float", "int", "int", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar"]"#,
            r#"["", "", "", "", "", "50", "50", "0.1", "0.35", "False"]"#,
        ));
        assert!(matches!(r, Err(NoModel::BadArgs { .. })), "{r:?}");
    }

    #[test]
    fn varlen_backward() {
        // The forward above's sequences, backward: flash recomputes QKᵀ,
        // five matmuls to the forward's two.
        let m = model_op(&op(
            "flash_attn::_flash_attn_varlen_backward",
            "[[100, 2, 8], [100, 2, 8], [100, 2, 8], [100, 2, 8], [100, 2, 8], [2, 100], [100, 2, 8], [100, 2, 8], [100, 2, 8], [4], [4], [], [], [], [], []]",
            r#"["float", "float", "float", "float", "float", "float", "float", "float", "float", "int", "int", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar"]"#,
            r#"["", "", "", "", "", "", "", "", "", "", "", "50", "50", "0.", "0.35", "False"]"#,
        ))
        .expect("modelled");
        assert_eq!(m.family, Family::SdpaBwd);
        let block = |n: u64| (2 * 2 * n * n * 16) as f64;
        assert_eq!(m.flops, 2.5 * (block(50) + 2.0 * block(25)));
    }

    #[test]
    fn efficient_and_cudnn_backward_read_q_and_causal_where_they_record_them() {
        // Q, K, V (1, 2, 4, 8) after the output gradient, causal: four matmuls
        // (no recompute), half of them masked.
        let t = "[1, 2, 4, 8]";
        let efficient = format!("[{t}, {t}, {t}, {t}, [], {t}, [1, 2, 4], [], [], [], [], [], []]");
        let cudnn =
            format!("[{t}, {t}, {t}, {t}, {t}, [1, 2, 4], [], [], [], [], [], [], [], [], [], []]");
        let cases = [
            (
                "aten::_scaled_dot_product_efficient_attention_backward",
                efficient.as_str(),
                r#"["", "", "", "", "", "", "", "", "", "0.", "", "True", ""]"#,
            ),
            (
                "aten::_scaled_dot_product_cudnn_attention_backward",
                cudnn.as_str(),
                r#"["", "", "", "", "", "", "", "", "", "", "", "", "", "0.", "True", ""]"#,
            ),
        ];
        for (name, dims, concrete) in cases {
            let types = r#"["float", "float", "float", "float"]"#;
            let m = model_op(&op(name, dims, types, concrete)).expect(name);
            assert_eq!(m.family, Family::SdpaBwd, "{name}");
            assert_eq!(m.flops, (4 * 2 * 2 * 4 * 4 * 8 / 2) as f64, "{name}");
            assert_eq!(m.params[8].1, "True", "{name}");
            assert_eq!(m.params[9].1, "False", "{name}");
        }
    }

    #[test]
    fn aten_flash_ops_read_packed_sequences_too() {
        // The varlen forward above as `aten::_flash_attention_forward` records it
        // (cum_seq_q, cum_seq_k, max_q, max_k after Q, K, V), and its backward.
        let forward = model_op(&op(
            "aten::_flash_attention_forward",
            "[[100, 2, 8], [100, 2, 8], [100, 2, 8], [4], [4], [], [], [], [], [], []]",
            r#"["float", "float", "float", "int", "int", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", ""]"#,
            r#"["", "", "", "", "", "50", "50", "0.", "False", "False", ""]"#,
        ))
        .expect("modelled");
        let backward = model_op(&op(
            "aten::_flash_attention_backward",
            "[[100, 2, 8], [100, 2, 8], [100, 2, 8], [100, 2, 8], [100, 2, 8], [2, 100], [4], [4], [], [], [], [], [], [], []]",
            r#"["float", "float", "float", "float", "float", "float", "int", "int", "Scalar", "Scalar", "Scalar", "Scalar", "", "", ""]"#,
            r#"["", "", "", "", "", "", "", "", "50", "50", "0.", "False", "", "", ""]"#,
        ))
        .expect("modelled");
        let block = |n: u64| (2 * 2 * n * n * 16) as f64;
        assert_eq!(forward.flops, block(50) + 2.0 * block(25));
        assert_eq!(backward.flops, 2.5 * forward.flops);
        for m in [&forward, &backward] {
            assert_eq!(
                m.params.last(),
                Some(&("max_seqlen_kv".to_string(), "50".to_string()))
            );
        }
    }
}
