//! Tests of the GEMM perf models against hand-computed FLOPs and bytes.

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

#[test]
fn addmm_with_bias() {
    // bert: bias (512,), (141×512)·(512×512), bf16.
    let m = model_op(&op(
        "aten::addmm",
        "[[512], [141, 512], [512, 512], [], []]",
        r#"["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"]"#,
        r#"["", "", "", "1", "1"]"#,
    ))
    .expect("modelled");
    // 2·141·512·512 + 141·512 = 73,924,608 + 72,192
    assert_eq!(m.flops, 73_996_800.0);
    // (141·512 + 512·512 + 141·512 + 512)·2 = 814,080
    assert_eq!(m.bytes, 814_080.0);
    assert_eq!(m.compute_spec, Some(ComputeSpec::MatrixBf16));
    assert_eq!(m.params[0], ("M".to_string(), "141".to_string()));
    assert_eq!(m.params[3], ("bias".to_string(), "True".to_string()));
}

#[test]
fn mm_fp32() {
    let m = model_op(&op(
        "aten::mm",
        "[[4, 8], [8, 16]]",
        r#"["float", "float"]"#,
        "[]",
    ))
    .expect("modelled");
    assert_eq!(m.flops, (2 * 4 * 16 * 8) as f64);
    assert_eq!(m.bytes, ((4 * 8 + 8 * 16 + 4 * 16) * 4) as f64);
    assert_eq!(m.compute_spec, Some(ComputeSpec::MatrixFp32));
}

/// The parameters name each operand's strides as a Python tuple, `None`
/// when the trace did not record them.
#[test]
fn mm_names_its_operands_strides() {
    let strided = OpShape {
        input_strides: Some("[[8, 1], [1, 8]]"),
        ..op(
            "aten::mm",
            "[[4, 8], [8, 16]]",
            r#"["float", "float"]"#,
            "[]",
        )
    };
    let m = model_op(&strided).expect("modelled");
    assert_eq!(m.param("stride_A"), Some("(8, 1)"));
    assert_eq!(m.param("stride_B"), Some("(1, 8)"));
    let plain = op(
        "aten::mm",
        "[[4, 8], [8, 16]]",
        r#"["float", "float"]"#,
        "[]",
    );
    let m = model_op(&plain).expect("modelled");
    assert_eq!(m.param("stride_A"), Some("None"));
}

#[test]
fn bmm_scales_by_batch() {
    // (96, 3137, 64)·(96, 64, 3137) bf16: 2·96·3137·3137·64 flops.
    let m = model_op(&op(
        "aten::bmm",
        "[[96, 3137, 64], [96, 64, 3137]]",
        r#"["c10::BFloat16", "c10::BFloat16"]"#,
        r#"["", ""]"#,
    ))
    .expect("modelled");
    assert_eq!(m.flops, 120_923_369_472.0);
    let per_batch = (3137 * 64 + 64 * 3137 + 3137 * 3137) * 2;
    assert_eq!(m.bytes, (96 * per_batch) as f64);
}

#[test]
fn bmm_of_different_batches_is_refused() {
    for dims in [
        "[[2, 3, 4], [3, 4, 5]]",
        "[[2, 3, 4], [4, 5]]",
        "[[4, 3, 4], [4, 5]]",
        "[[4, 5], [4, 5, 6]]",
    ] {
        let r = model_op(&op(
            "aten::bmm",
            dims,
            r#"["float", "float"]"#,
            r#"["", ""]"#,
        ));
        assert!(matches!(r, Err(NoModel::BadArgs { .. })), "{dims}: {r:?}");
    }
}

#[test]
fn baddbmm_reads_its_whole_bias() {
    let m = model_op(&op(
        "aten::baddbmm",
        "[[2, 3, 5], [2, 3, 4], [2, 4, 5], [], []]",
        r#"["float", "float", "float", "Scalar", "Scalar"]"#,
        r#"["", "", "", "1", "1"]"#,
    ))
    .expect("modelled");
    assert_eq!(m.flops, (2 * (2 * 3 * 5 * 4 + 3 * 5)) as f64);
    // A 2·12, B 2·20, out 2·15, bias 30 elements, 4 bytes each.
    assert_eq!(m.bytes, ((24 + 40 + 30 + 30) * 4) as f64);
}

#[test]
fn scaled_mm_fp8_inputs_bf16_output() {
    // (self, mat2, scale_a, scale_b, bias, scale_result, out_dtype=15 (bf16), use_fast_accum)
    let m = model_op(&op(
            "aten::_scaled_mm",
            "[[128, 256], [256, 512], [], [], [], [], [], []]",
            r#"["c10::Float8_e4m3fn", "c10::Float8_e4m3fn", "float", "float", "", "", "Scalar", "Scalar"]"#,
            r#"["", "", "", "", "", "", "15", "False"]"#,
        ))
        .expect("modelled");
    assert_eq!(m.flops, (2 * 128 * 512 * 256) as f64);
    // A and B 1 byte each, the bf16 output 2 bytes.
    assert_eq!(m.bytes, (128 * 256 + 256 * 512 + 128 * 512 * 2) as f64);
    assert_eq!(m.compute_spec, Some(ComputeSpec::MatrixFp8));
    assert_eq!(m.params[3].1, "False");
}

#[test]
fn scaled_mm_with_bias_and_default_output() {
    let m = model_op(&op(
            "aten::_scaled_mm",
            "[[16, 32], [32, 64], [], [], [64], [], [], []]",
            r#"["c10::Float8_e4m3fnuz", "c10::Float8_e4m3fnuz", "float", "float", "c10::BFloat16", "", "", "Scalar"]"#,
            r#"["", "", "", "", "", "", "", "False"]"#,
        ))
        .expect("modelled");
    assert_eq!(m.flops, (2 * 16 * 64 * 32 + 16 * 64) as f64);
    assert_eq!(m.bytes, (16 * 32 + 32 * 64 + 16 * 64 * 2 + 64 * 2) as f64);
    // Only fp8 operands default to a 16-bit result: fp32 ones write fp32.
    let m = model_op(&op(
        "aten::_scaled_mm",
        "[[16, 32], [32, 64], [], [], [], [], [], []]",
        r#"["float", "float", "float", "float", "", "", "", "Scalar"]"#,
        r#"["", "", "", "", "", "", "", "False"]"#,
    ))
    .expect("modelled");
    assert_eq!(m.bytes, ((16 * 32 + 32 * 64 + 16 * 64) * 4) as f64);
}

#[test]
fn linear_folds_leading_dimensions() {
    // x (2, 3, 8) · W (16, 8)ᵀ + b (16,)
    let m = model_op(&op(
        "aten::linear",
        "[[2, 3, 8], [16, 8], [16]]",
        r#"["c10::Half", "c10::Half", "c10::Half"]"#,
        r#"["", "", ""]"#,
    ))
    .expect("modelled");
    assert_eq!(m.flops, (2 * 6 * 16 * 8 + 6 * 16) as f64);
    assert_eq!(m.bytes, ((6 * 8 + 16 * 8 + 6 * 16 + 16) * 2) as f64);
}

#[test]
fn matmul_broadcasts_batches() {
    // (4, 1, 3, 5) · (2, 5, 7) → batch (4, 2)
    let m = model_op(&op(
        "aten::matmul",
        "[[4, 1, 3, 5], [2, 5, 7]]",
        r#"["float", "float"]"#,
        r#"["", ""]"#,
    ))
    .expect("modelled");
    assert_eq!(m.flops, (8 * 2 * 3 * 7 * 5) as f64);
}

#[test]
fn matmul_of_a_matrix_and_a_vector() {
    // (3, 8) · (8,): one output column.
    let m = model_op(&op(
        "aten::matmul",
        "[[3, 8], [8]]",
        r#"["float", "float"]"#,
        r#"["", ""]"#,
    ))
    .expect("modelled");
    assert_eq!(m.flops, (2 * 3 * 8) as f64);
    assert_eq!(m.bytes, ((24 + 8 + 3) * 4) as f64);
}

#[test]
fn matmul_of_a_vector_and_a_batch() {
    // (8,) · (2, 8, 4): two 1×8 · 8×4 products.
    let m = model_op(&op(
        "aten::matmul",
        "[[8], [2, 8, 4]]",
        r#"["float", "float"]"#,
        r#"["", ""]"#,
    ))
    .expect("modelled");
    assert_eq!(m.flops, (2 * 2 * 4 * 8) as f64);
}

#[test]
fn matmul_of_a_batch_and_a_matrix_reads_the_matrix_once() {
    // (2, 3, 8) · (8, 16) is one (6, 8) · (8, 16) product.
    let m = model_op(&op(
        "aten::matmul",
        "[[2, 3, 8], [8, 16]]",
        r#"["float", "float"]"#,
        r#"["", ""]"#,
    ))
    .expect("modelled");
    assert_eq!(m.flops, (2 * 6 * 16 * 8) as f64);
    assert_eq!(m.bytes, ((48 + 128 + 96) * 4) as f64);
}

#[test]
fn matmul_of_two_batches_keeps_the_batch_out_of_m() {
    // (2, 3, 5) · (2, 5, 7): two 3×5 · 5×7 products, not one 6×5 · 5×7
    // against both of the second's matrices.
    let m = model_op(&op(
        "aten::matmul",
        "[[2, 3, 5], [2, 5, 7]]",
        r#"["float", "float"]"#,
        r#"["", ""]"#,
    ))
    .expect("modelled");
    assert_eq!(m.flops, (2 * 2 * 3 * 7 * 5) as f64);
    assert_eq!(m.bytes, ((2 * 3 * 5 + 2 * 5 * 7 + 2 * 3 * 7) * 4) as f64);
    // A batch against one matrix folds into M: (2, 3, 5) · (5, 7) is 6×5 · 5×7.
    let folded = model_op(&op(
        "aten::matmul",
        "[[2, 3, 5], [5, 7]]",
        r#"["float", "float"]"#,
        r#"["", ""]"#,
    ))
    .expect("modelled");
    assert_eq!(folded.flops, (2 * 6 * 7 * 5) as f64);
}

#[test]
fn matmul_reads_the_last_two_dims_of_any_rank() {
    // (2, 3, 4, 5, 6) · (2, 3, 4, 6, 7): 24 products of 5×6 · 6×7.
    let m = model_op(&op(
        "aten::matmul",
        "[[2, 3, 4, 5, 6], [2, 3, 4, 6, 7]]",
        r#"["float", "float"]"#,
        r#"["", ""]"#,
    ))
    .expect("modelled");
    assert_eq!(m.flops, (24 * 2 * 5 * 7 * 6) as f64);
    assert_eq!(m.bytes, (24 * (5 * 6 + 6 * 7 + 5 * 7) * 4) as f64);
}

#[test]
fn matmul_of_a_scalar_is_refused() {
    for dims in ["[[], [8, 4]]", "[[4, 8], []]"] {
        let r = model_op(&op(
            "aten::matmul",
            dims,
            r#"["float", "float"]"#,
            r#"["", ""]"#,
        ));
        assert!(matches!(r, Err(NoModel::BadArgs { .. })), "{dims}: {r:?}");
    }
}

#[test]
fn mismatched_inner_dimensions_are_refused() {
    assert!(
        model_op(&op(
            "aten::mm",
            "[[4, 8], [9, 16]]",
            r#"["float", "float"]"#,
            "[]"
        ))
        .is_err()
    );
}

#[test]
fn linear_backward() {
    // M=6 (2·3 rows), N=16, K=8, with bias, fp32.
    let m = backward_op(&op(
        "aten::linear",
        "[[2, 3, 8], [16, 8], [16]]",
        r#"["float", "float", "float"]"#,
        r#"["", "", ""]"#,
    ))
    .expect("modelled");
    assert_eq!(m.family, Family::GemmBwd);
    assert_eq!(m.flops, (2 * 6 * 8 * 16 * 2 + 6 * 16) as f64);
    let grad_x = 6 * 16 + 8 * 16 + 6 * 8;
    let grad_w = 6 * 16 + 6 * 8 + 8 * 16;
    let grad_b = 6 * 16 + 16;
    assert_eq!(m.bytes, ((grad_x + grad_w + grad_b) * 4) as f64);
}

#[test]
fn int_mm_reads_int8_and_writes_int32() {
    // torch._int_mm: int8 (32×64)·(64×16) accumulates into an int32 result
    // (aten's `_int_mm` always returns int32), so the output is 4 bytes an element.
    let m = model_op(&op(
        "aten::_int_mm",
        "[[32, 64], [64, 16]]",
        r#"["signed char", "signed char"]"#,
        r#"["", ""]"#,
    ))
    .expect("modelled");
    assert_eq!(m.flops, (2 * 32 * 16 * 64) as f64);
    assert_eq!(m.bytes, ((32 * 64 + 64 * 16) + 32 * 16 * 4) as f64);
    assert_eq!(m.compute_spec, Some(ComputeSpec::MatrixInt8));
}
