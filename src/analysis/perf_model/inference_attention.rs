//! Attention over a paged KV cache (vLLM's `unified_attention_with_output`,
//! aiter's `mha_varlen_fwd`/`mha_batch_prefill`, SGLang's
//! `attention_paged_attention_ragged`) and the KV-cache store
//! (`sglang::store_cache`): TraceLens's `InferenceAttention` sheet.
//!
//! The recorded shapes give heads and head sizes, but not how long each
//! request's context is: that comes from the step's annotation
//! ([`ChunkStats`]), context (prefill) and generation (decode) requests
//! apart. With H_Q query heads, H_KV key/value heads and head sizes d_qk, d_v:
//! - flops = H_Q·(2·Σsq·sk·(d_qk + d_v)) for both kinds, less
//!   H_Q·Σsq²·(d_qk + d_v) for the causal half of prefill chunks;
//! - bytes = (Σsq·(H_Q·(d_qk + d_v) + H_KV·(d_qk + d_v)))·bpe_Q (queries read,
//!   outputs written, the new keys/values read) + (Σsk − Σsq)·H_KV·(d_qk + d_v)·bpe_KV
//!   (the cached keys and values read), both kinds summed.
//!
//! Without an annotation the op has no model (a decode kernel's cost is
//! all in the context length). `store_cache` writes T new rows of D into
//! the K and V caches: 0 flops, 4·T·D·bpe bytes (k, v read; two rows written).

use super::args::{Args, numel};
use super::context::{ChunkStats, OpContext, chunk_stats};
use super::count::Count;
use super::dtype::Dtype;
use super::family::{Family, NoModel, PerfModel};
use super::repr::{params, str_repr, tuple_repr};

/// The attention ops, by how they record their tensors.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    /// `(query (N, H_Q, d), key (…, N_KV, H_KV, d), value, out, …)`.
    Unified,
    /// As [`Op::Unified`], `d_v` read from the value tensor.
    ValueHead,
    /// SGLang's ragged paged attention: `(out, workspace, query, key_cache,
    /// value_cache, …)`; N_KV is the annotation's Σsk.
    PagedRagged,
    /// The KV-cache store.
    StoreCache,
}

/// SGLang's profiler names an op after its Python function and line
/// (`sglang_profiler::attention_paged_attention_ragged_100`); the line is dropped.
fn base_name(name: &str) -> &str {
    if !name.starts_with("sglang_profiler::") {
        return name;
    }
    match name.rsplit_once('_') {
        Some((base, line)) if !line.is_empty() && line.bytes().all(|b| b.is_ascii_digit()) => base,
        _ => name,
    }
}

fn op_of(name: &str) -> Option<Op> {
    Some(match base_name(name) {
        "vllm::unified_attention_with_output" | "aiter::mha_varlen_fwd" => Op::Unified,
        "aiter::mha_batch_prefill" | "aiter::fmha_v3_varlen_fwd" => Op::ValueHead,
        "sglang_profiler::attention_paged_attention_ragged" => Op::PagedRagged,
        "sglang::store_cache" => Op::StoreCache,
        _ => return None,
    })
}

/// Whether this module models the op.
pub fn handles(name: &str) -> bool {
    op_of(name).is_some()
}

/// The shapes an attention invocation works on.
struct Heads {
    n_q: u64,
    h_q: u64,
    n_kv: u64,
    h_kv: u64,
    d_qk: u64,
    d_v: u64,
    dtype_q: Dtype,
    dtype_kv: Option<Dtype>,
}

pub(crate) fn model(args: &Args, context: &OpContext) -> Result<PerfModel, NoModel> {
    let op = op_of(args.name).ok_or_else(|| NoModel::UnknownOp {
        name: args.name.to_string(),
    })?;
    if op == Op::StoreCache {
        return store_cache(args);
    }
    let stats = context.annotation.and_then(chunk_stats).ok_or_else(|| {
        args.bad(
            "no step annotation with sequence statistics \
             (execute_…_context_…(sq…sk…)_generation_…(sq…sk…)) around the op",
        )
    })?;
    let last3 = |i: usize| -> Result<[u64; 3], NoModel> {
        let shape = args.shape(i)?;
        match shape.len() {
            n if n >= 3 => Ok([shape[n - 3], shape[n - 2], shape[n - 1]]),
            _ => Err(args.bad(format!("input {i} has fewer than 3 dims: {shape:?}"))),
        }
    };
    let heads = match op {
        Op::PagedRagged => {
            let [n_q, h_q, d_qk] = last3(2)?;
            let [_, h_kv, _] = last3(3)?;
            let [_, _, d_v] = last3(4)?;
            Heads {
                n_q,
                h_q,
                n_kv: stats.context[1] + stats.generation[1],
                h_kv,
                d_qk,
                d_v,
                dtype_q: args.dtype(2)?,
                dtype_kv: None,
            }
        }
        _ => {
            let [n_q, h_q, d_qk] = last3(0)?;
            let [n_kv, h_kv, mut d_v] = last3(1)?;
            if op == Op::ValueHead {
                d_v = *args.shape(2)?.last().unwrap_or(&d_v);
            }
            let dtype_q = args.dtype(0)?;
            Heads {
                n_q,
                h_q,
                n_kv,
                h_kv,
                d_qk,
                d_v,
                dtype_q,
                dtype_kv: Some(args.dtype(1).unwrap_or(dtype_q)),
            }
        }
    };
    attention(args, &heads, &stats)
}

fn attention(args: &Args, heads: &Heads, stats: &ChunkStats) -> Result<PerfModel, NoModel> {
    let [c_sq, c_sk, c_sqsq, c_sqsk] = stats.context.map(u128::from);
    let [g_sq, g_sk, g_sqsq, g_sqsk] = stats.generation.map(u128::from);
    if c_sq == 0 && g_sq == 0 {
        return Err(args.bad("the annotation has no query tokens"));
    }
    let (h_q, h_kv) = (u128::from(heads.h_q), u128::from(heads.h_kv));
    let d = u128::from(heads.d_qk) + u128::from(heads.d_v);
    let flops = h_q
        .checked_mul(d)
        .and_then(|hd| {
            let full = 2u128.checked_mul(c_sqsk.checked_add(g_sqsk)?)?;
            hd.checked_mul(full.checked_sub(c_sqsq)?)
        })
        .map(|f| f as f64);
    let bpe_q = u128::from(heads.dtype_q.bytes());
    let bpe_kv = heads.dtype_kv.map_or(bpe_q, |t| u128::from(t.bytes()));
    let cached = c_sk.saturating_sub(c_sq) + g_sk.saturating_sub(g_sq);
    let bytes = (c_sq + g_sq)
        .checked_mul((h_q + h_kv) * d)
        .and_then(|q| q.checked_mul(bpe_q))
        .zip(cached.checked_mul(h_kv * d * bpe_kv))
        .and_then(|(q, kv)| q.checked_add(kv))
        .map(|b| b as f64);
    let (flops, bytes) = args.figures(flops, bytes)?;
    let type_name = |t: Dtype| -> String { str_repr(Some(dtype_text(args, t))) };
    let mut list = params([
        ("B", "1".to_string()),
        ("N_Q", heads.n_q.to_string()),
        ("H_Q", heads.h_q.to_string()),
        ("H_V", heads.h_kv.to_string()),
        ("H_K", heads.h_kv.to_string()),
        ("N_KV", heads.n_kv.to_string()),
        ("H_KV", heads.h_kv.to_string()),
        ("d_h_qk", heads.d_qk.to_string()),
        ("d_h_v", heads.d_v.to_string()),
        ("dropout", "0.0".to_string()),
        ("causal", "False".to_string()),
        ("flash_impl", "True".to_string()),
        ("c_sq", c_sq.to_string()),
        ("c_sk", c_sk.to_string()),
        ("c_sqsq", c_sqsq.to_string()),
        ("c_sqsk", c_sqsk.to_string()),
        ("g_sq", g_sq.to_string()),
        ("g_sk", g_sk.to_string()),
        ("g_sqsq", g_sqsq.to_string()),
        ("g_sqsk", g_sqsk.to_string()),
        ("dtype_Q", type_name(heads.dtype_q)),
    ]);
    if let Some(kv) = heads.dtype_kv {
        list.push(("dtype_KV".to_string(), type_name(kv)));
    }
    Ok(PerfModel {
        family: Family::InferenceAttention,
        flops,
        bytes,
        compute_spec: heads.dtype_q.matrix_spec(),
        params: list,
    })
}

/// The recorded `Input type` text of a dtype among the op's inputs.
fn dtype_text<'a>(args: &'a Args, dtype: Dtype) -> &'a str {
    (0..args.len())
        .filter_map(|i| args.type_str(i))
        .find(|text| Dtype::parse(text) == Some(dtype))
        .unwrap_or("")
}

fn store_cache(args: &Args) -> Result<PerfModel, NoModel> {
    let k = args.shape(0)?;
    let dtype = args.dtype(0)?;
    let n = numel(&k);
    let (flops, bytes) = args.measured(Count::ZERO, 4 * n * dtype.size())?;
    Ok(PerfModel {
        family: Family::InferenceAttention,
        flops,
        bytes,
        compute_spec: dtype.vector_spec(),
        params: params([
            ("op_shape", tuple_repr(&k)),
            ("nelems", args.exact(n)?.to_string()),
            ("dtype", str_repr(args.type_str(0))),
        ]),
    })
}

#[cfg(test)]
mod tests {
    use crate::analysis::perf_model::{Family, NoModel, OpContext, OpShape, model_in};

    const DECODE: &str =
        "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)";

    fn unified() -> OpShape<'static> {
        OpShape {
            name: "vllm::unified_attention_with_output",
            input_dims: Some(
                "[[32, 64, 64], [32, 8, 64], [32, 8, 64], [32, 64, 64], [], [], [], [0]]",
            ),
            input_type: Some(
                r#"["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "", "", "", "c10::BFloat16"]"#,
            ),
            ..OpShape::default()
        }
    }

    #[test]
    fn decode_reads_the_context_from_the_annotation() {
        let context = OpContext {
            annotation: Some(DECODE),
            ..OpContext::default()
        };
        let m = model_in(&unified(), &context).expect("modelled");
        assert_eq!(m.family, Family::InferenceAttention);
        assert_eq!(m.flops, 902_529_024.0);
        assert_eq!(m.bytes, 108.08984375 * 1024.0 * 1024.0);
        let dtype_q = m.params.iter().find(|(name, _)| name == "dtype_Q");
        assert_eq!(
            dtype_q.map(|(_, text)| text.as_str()),
            Some(super::str_repr(Some("c10::BFloat16")).as_str())
        );
    }

    #[test]
    fn prefill_alone_reads_the_context_requests() {
        // One request of 32 new tokens: Σsq·sk = Σsq² = 1,024.
        let context = OpContext {
            annotation: Some(
                "execute_32_context_32(sq32sk32sqsq1024sqsk1024)_generation_0(sq0sk0sqsq0sqsk0)",
            ),
            ..OpContext::default()
        };
        let m = model_in(&unified(), &context).expect("modelled");
        // 64 heads · (64 + 64) · (2 · 1,024 − 1,024) causal.
        assert_eq!(m.flops, (64 * 128 * 1024) as f64);
        // 32 tokens of Q, K and V heads (64 + 8 + 8 … as (h_q + h_kv)·d), nothing cached.
        assert_eq!(m.bytes, (32 * (64 + 8) * 128 * 2) as f64);
    }

    /// aiter's prefill kernels take V's head size from V itself: equal to
    /// K's, the figures are the unified op's; wider, more FLOPs.
    #[test]
    fn a_value_head_op_reads_vs_head_size() {
        let context = OpContext {
            annotation: Some(DECODE),
            ..OpContext::default()
        };
        let reference = model_in(&unified(), &context).expect("modelled");
        let prefill = |v_dims: &'static str| OpShape {
            name: "aiter::mha_batch_prefill",
            input_dims: Some(v_dims),
            ..unified()
        };
        let same = model_in(
            &prefill("[[32, 64, 64], [32, 8, 64], [32, 8, 64], [32, 64, 64], [], [], [], [0]]"),
            &context,
        )
        .expect("modelled");
        assert_eq!((same.flops, same.bytes), (reference.flops, reference.bytes));
        let wide = model_in(
            &prefill("[[32, 64, 64], [32, 8, 64], [32, 8, 128], [32, 64, 64], [], [], [], [0]]"),
            &context,
        )
        .expect("modelled");
        assert!(
            wide.flops > reference.flops,
            "{} {}",
            wide.flops,
            reference.flops
        );
    }

    #[test]
    fn no_annotation_no_model() {
        assert!(model_in(&unified(), &OpContext::default()).is_err());
    }

    #[test]
    fn only_a_numeric_suffix_is_a_line_number() {
        let base = super::base_name;
        assert_eq!(
            base("sglang_profiler::attention_paged_attention_ragged_100"),
            "sglang_profiler::attention_paged_attention_ragged"
        );
        for name in [
            "sglang_profiler::attention_paged",
            "sglang_profiler::attention_",
            "vllm::unified_attention_1",
        ] {
            assert_eq!(base(name), name);
        }
    }

    #[test]
    fn sglang_paged_attention_and_store_cache() {
        let context = OpContext {
            annotation: Some(
                "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk32785sqsq32sqsk32785)",
            ),
            ..OpContext::default()
        };
        let paged = OpShape {
            name: "sglang_profiler::attention_paged_attention_ragged_100",
            input_dims: Some(
                "[[32, 32, 128], [10905190400], [32, 32, 128], [835874, 1, 8, 128], [835874, 1, 8, 128], [33], [20971520], [4096], [], [1], [1], []]",
            ),
            input_type: Some(
                r#"["c10::BFloat16", "unsigned char", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "int", "int", "int", "", "float", "float", ""]"#,
            ),
            ..OpShape::default()
        };
        let m = model_in(&paged, &context).expect("modelled");
        assert_eq!(m.flops, 537_149_440.0);
        assert_eq!(m.bytes, 134_811_648.0);
        // The keys of prefill and decode requests together: 0 + 32,785.
        assert_eq!(m.param("N_KV"), Some("32785"));
        // A cache with more leading dims reads its heads from the last three.
        let blocked = OpShape {
            input_dims: Some(
                "[[32, 32, 128], [10905190400], [32, 32, 128], [835874, 1, 1, 8, 128], [835874, 1, 1, 8, 128], [33], [20971520], [4096], [], [1], [1], []]",
            ),
            ..paged
        };
        let b = model_in(&blocked, &context).expect("modelled");
        assert_eq!((b.flops, b.bytes), (m.flops, m.bytes));
        // Q needs its three.
        let flat = OpShape {
            input_dims: Some(
                "[[32, 32, 128], [10905190400], [32, 4096], [835874, 1, 8, 128], [835874, 1, 8, 128], [33], [20971520], [4096], [], [1], [1], []]",
            ),
            ..paged
        };
        assert!(matches!(
            model_in(&flat, &context),
            Err(NoModel::BadArgs { .. })
        ));
        // Q is (tokens, heads, head size): its first dim is N_Q.
        let fewer_heads = OpShape {
            input_dims: Some(
                "[[32, 16, 128], [10905190400], [32, 16, 128], [835874, 1, 8, 128], [835874, 1, 8, 128], [33], [20971520], [4096], [], [1], [1], []]",
            ),
            ..paged
        };
        let m = model_in(&fewer_heads, &context).expect("modelled");
        assert_eq!((m.param("N_Q"), m.param("H_Q")), (Some("32"), Some("16")));
        let store = OpShape {
            name: "sglang::store_cache",
            input_dims: Some(
                "[[32, 1024], [32, 1024], [835874, 1024], [835874, 1024], [32], [], []]",
            ),
            input_type: Some(
                r#"["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "long int", "Scalar", "Scalar"]"#,
            ),
            ..OpShape::default()
        };
        let m = model_in(&store, &OpContext::default()).expect("modelled");
        assert_eq!((m.flops, m.bytes), (0.0, 262_144.0));
    }
}
