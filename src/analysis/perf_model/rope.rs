//! Rotary position embedding of inference kernels (`sgl_kernel::rotary_embedding`,
//! vLLM's `_C::rotary_embedding`), TraceLens's `RoPE_fwd` sheet.
//!
//! Both rotate query and key in place: `(positions, query, key, head_size,
//! cos_sin_cache, is_neox)`. Only the first `rot_dim` (the cache's last
//! dimension) of each head turns: rotated = tokens·(q_heads + k_heads)·rot_dim;
//! flops = 3·rotated (four multiplies and two adds per pair of elements);
//! bytes = 2·rotated·bpe (each rotated element read and written). The
//! cos/sin cache and the positions are small and stay in cache.

use super::args::{Args, numel};
use super::family::{Family, NoModel, PerfModel};
use super::repr::params;

/// Whether this module models the op.
pub fn handles(name: &str) -> bool {
    matches!(
        name,
        "sgl_kernel::rotary_embedding" | "_C::rotary_embedding"
    )
}

pub(crate) fn model(args: &Args) -> Result<PerfModel, NoModel> {
    let (query, key) = (args.shape(1)?, args.shape(2)?);
    let dtype = args.dtype(1)?;
    let head_size = match args.concrete(3).map(str::trim) {
        Some(text) if !text.is_empty() => text
            .parse::<u64>()
            .map_err(|_| args.bad(format!("head_size is not an integer: `{text}`")))?,
        _ => *query
            .last()
            .ok_or_else(|| args.bad("the query is a scalar"))?,
    };
    let tokens = *query
        .first()
        .ok_or_else(|| args.bad("the query is a scalar"))?;
    let rot_dim = match args.tensor_shape(4) {
        Some(cache) if cache.len() > 1 => cache[1],
        _ => head_size,
    };
    let heads = |shape: &[u64]| -> Result<u128, NoModel> {
        let per_token = u128::from(tokens) * u128::from(head_size);
        let elements = args.exact(numel(shape))?;
        if per_token == 0 || elements % per_token != 0 {
            return Err(args.bad(format!(
                "{shape:?} is not {tokens} tokens of heads of {head_size}"
            )));
        }
        Ok(elements / per_token)
    };
    let rotated = u128::from(tokens) * (heads(&query)? + heads(&key)?) * u128::from(rot_dim);
    let (flops, bytes) = args.figures(
        Some((3 * rotated) as f64),
        Some((2 * rotated * u128::from(dtype.bytes())) as f64),
    )?;
    Ok(PerfModel {
        family: Family::RopeFwd,
        flops,
        bytes,
        compute_spec: dtype.vector_spec(),
        params: params([("num_elements", rotated.to_string())]),
    })
}

#[cfg(test)]
mod tests {
    use crate::analysis::perf_model::{Family, NoModel, OpShape, model};

    #[test]
    fn sglang_rotary_embedding() {
        // Qwen3-8B decode, batch 32: 32 query and 8 key heads of 128.
        let m = model(&OpShape {
            name: "sgl_kernel::rotary_embedding",
            input_dims: Some("[[32], [32, 4096], [32, 1024], [], [41216, 128], []]"),
            input_type: Some(
                r#"["long int", "c10::BFloat16", "c10::BFloat16", "Scalar", "c10::BFloat16", "Scalar"]"#,
            ),
            concrete_inputs: Some(r#"["", "", "", "128", "", "True"]"#),
            ..OpShape::default()
        })
        .expect("modelled");
        assert_eq!(m.family, Family::RopeFwd);
        assert_eq!(m.flops, 3.0 * 163_840.0);
        assert_eq!(m.bytes, 2.0 * 163_840.0 * 2.0);
    }

    #[test]
    fn partial_rotation_turns_rot_dim_only() {
        let m = model(&OpShape {
            name: "_C::rotary_embedding",
            input_dims: Some("[[4], [4, 256], [4, 128], [], [1024, 32], []]"),
            input_type: Some(
                r#"["long int", "c10::BFloat16", "c10::BFloat16", "Scalar", "c10::BFloat16", "Scalar"]"#,
            ),
            concrete_inputs: Some(r#"["", "", "", "64", "", "True"]"#),
            ..OpShape::default()
        })
        .expect("modelled");
        // 4 tokens · (4 + 2) heads · 32 rotated dims.
        assert_eq!(m.flops, 3.0 * 768.0);
    }

    /// Without a recorded head size, one head is the query's last dim.
    #[test]
    fn an_unrecorded_head_size_is_the_querys_last_dim() {
        for head_size in ["", " ", "256"] {
            let m = model(&OpShape {
                name: "_C::rotary_embedding",
                input_dims: Some("[[4], [4, 256], [4, 256], [], [], []]"),
                input_type: Some(
                    r#"["long int", "c10::BFloat16", "c10::BFloat16", "Scalar", "", "Scalar"]"#,
                ),
                concrete_inputs: Some(&format!(r#"["", "", "", "{head_size}", "", "True"]"#)),
                ..OpShape::default()
            })
            .expect("modelled");
            // 4 tokens · (1 + 1) heads · 256 rotated dims.
            assert_eq!(m.flops, 3.0 * 2048.0, "{head_size:?}");
        }
    }

    /// A cache without a rotary dim rotates whole heads; keys that are not
    /// whole heads are refused.
    #[test]
    fn the_rotated_dims_and_heads_come_from_the_shapes() {
        let rope = |key: &str, cache: &str| {
            let dims = format!("[[4], [4, 256], {key}, [], {cache}, []]");
            model(&OpShape {
                name: "_C::rotary_embedding",
                input_dims: Some(&dims),
                input_type: Some(
                    r#"["long int", "c10::BFloat16", "c10::BFloat16", "Scalar", "c10::BFloat16", "Scalar"]"#,
                ),
                concrete_inputs: Some(r#"["", "", "", "128", "", "True"]"#),
                ..OpShape::default()
            })
        };
        // 4 tokens · (2 + 1) heads · 128 dims.
        assert_eq!(
            rope("[4, 128]", "[1024]").expect("modelled").flops,
            3.0 * 1536.0
        );
        assert!(matches!(
            rope("[4, 192]", "[1024, 64]"),
            Err(NoModel::BadArgs { .. })
        ));
    }
}
