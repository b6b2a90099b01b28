//! Tests of the elementwise perf models against hand-computed FLOPs and bytes.

use super::super::{OpShape, model};
use super::*;
use crate::analysis::hardware::ComputeSpec;

fn op<'a>(name: &'a str, dims: &'a str, types: &'a str) -> OpShape<'a> {
    OpShape {
        name,
        input_dims: Some(dims),
        input_type: Some(types),
        input_strides: None,
        concrete_inputs: None,
    }
}

#[test]
fn broadcasting_rules() {
    assert_eq!(
        broadcast(&[16, 559, 1024], &[16, 559, 1]),
        Some(vec![16, 559, 1024])
    );
    assert_eq!(
        broadcast(&[1024], &[16, 559, 1024]),
        Some(vec![16, 559, 1024])
    );
    assert_eq!(broadcast(&[4, 1, 3], &[2, 1]), Some(vec![4, 2, 3]));
    assert_eq!(broadcast(&[], &[5]), Some(vec![5]));
    assert_eq!(broadcast(&[3], &[4]), None);
}

#[test]
fn binary_with_broadcast_and_promotion() {
    // fp32 (16,559,1024) · fp32 (16,559,1): 9,158,656 outputs.
    let m = model(&op(
        "aten::mul",
        "[[16, 559, 1024], [16, 559, 1]]",
        r#"["float", "float"]"#,
    ))
    .expect("modelled");
    assert_eq!(m.flops, 9_158_656.0);
    assert_eq!(m.bytes, ((9_158_656 + 8_944 + 9_158_656) * 4) as f64);
    assert_eq!(m.compute_spec, Some(ComputeSpec::VectorFp32));
    // bf16 (4, 8) + fp32 (8,) → an fp32 result.
    let m = model(&op(
        "aten::add",
        "[[4, 8], [8], []]",
        r#"["c10::BFloat16", "float", "Scalar"]"#,
    ))
    .expect("modelled");
    assert_eq!(m.bytes, (32 * 2 + 8 * 4 + 32 * 4) as f64);
}

#[test]
fn scalar_operands_count_one_element_of_their_type() {
    // A `Scalar` counts 4 bytes.
    let m = model(&op(
        "aten::mul",
        "[[1, 5, 768], []]",
        r#"["c10::BFloat16", "Scalar"]"#,
    ))
    .expect("modelled");
    assert_eq!(m.flops, 3840.0);
    assert_eq!(m.bytes, (3840 * 2 + 4 + 3840 * 2) as f64);
    // A recorded `double` counts 8 (as the profiler typed it); the result keeps fp32.
    let m = model(&op(
        "aten::add",
        "[[16, 559, 1], [], []]",
        r#"["float", "double", "Scalar"]"#,
    ))
    .expect("modelled");
    assert_eq!(m.bytes, (8_944 * 4 + 8 + 8_944 * 4) as f64);
}

#[test]
fn unary_keeps_its_type() {
    let m = model(&op(
        "aten::silu",
        "[[16, 559, 2816]]",
        r#"["c10::BFloat16"]"#,
    ))
    .expect("modelled");
    assert_eq!(m.flops, 25_186_304.0);
    assert_eq!(m.bytes, (25_186_304 * 4) as f64);
    // pow(Tensor, Scalar) is unary.
    let m = model(&op("aten::pow", "[[2, 3], []]", r#"["float", "Scalar"]"#)).expect("modelled");
    assert_eq!(m.family, Family::UnaryElementwise);
    assert_eq!(m.bytes, 48.0);
}

#[test]
fn copies_between_types() {
    // fp32 destination, bf16 source: 4 + 2 bytes per element.
    let m = model(&op(
        "aten::copy_",
        "[[16, 559, 1024], [16, 559, 1024], []]",
        r#"["float", "c10::BFloat16", "Scalar"]"#,
    ))
    .expect("modelled");
    assert_eq!(m.bytes, (9_158_656 * 6) as f64);
    assert_eq!(m.param("dtype_in_out"), Some("('float', 'c10::BFloat16')"));
    // A bool source counts one byte.
    let m = model(&op(
        "aten::copy_",
        "[[1, 1, 5, 5], [1, 1, 5, 5], []]",
        r#"["bool", "c10::BFloat16", "Scalar"]"#,
    ))
    .expect("modelled");
    assert_eq!(m.bytes, (25 + 25 * 2) as f64);
    assert_eq!(m.compute_spec, None);
}

/// A copy recorded without its source reads and writes its destination's
/// type, as a unary op does.
#[test]
fn a_copy_without_its_source_is_unary() {
    let m = model(&op("aten::copy_", "[[4, 8]]", r#"["c10::BFloat16"]"#)).expect("modelled");
    assert_eq!(m.bytes, (32 * 2 * 2) as f64);
    assert_eq!(m.param("dtype_in_out"), Some("('c10::BFloat16', None)"));
}

#[test]
fn upsample_reads_input_writes_output() {
    // (1, 768, 8) → (1, 768, 128), bf16.
    let m = model(&OpShape {
        name: "aten::upsample_nearest1d",
        input_dims: Some("[[1, 768, 8], [], []]"),
        input_type: Some(r#"["c10::BFloat16", "ScalarList", ""]"#),
        input_strides: None,
        concrete_inputs: Some(r#"["", "[128]", ""]"#),
    })
    .expect("modelled");
    assert_eq!(m.flops, 98_304.0);
    assert_eq!(m.bytes, ((6_144 + 98_304) * 2) as f64);
    // The .vec form with scale factors.
    let m = model(&OpShape {
        name: "aten::upsample_nearest2d",
        input_dims: Some("[[1, 3, 4, 4], [], []]"),
        input_type: Some(r#"["float", "", "GenericList"]"#),
        input_strides: None,
        concrete_inputs: Some(r#"["", "", "[2., 2.]"]"#),
    })
    .expect("modelled");
    assert_eq!(m.flops, 192.0);
}

#[test]
fn upsample_refuses_sizes_that_do_not_fit_its_spatial_dims() {
    // (1, 3, 4, 4) has two spatial dims: one size or one factor is no 2-D output.
    for (sizes, factors) in [
        ("[8]", ""),
        ("[8, 0]", ""),
        ("", "[2.]"),
        ("", "[2., 2., 2.]"),
    ] {
        let concrete = format!(r#"["", "{sizes}", "{factors}"]"#);
        let result = model(&OpShape {
            name: "aten::upsample_nearest2d",
            input_dims: Some("[[1, 3, 4, 4], [], []]"),
            input_type: Some(r#"["float", "", "GenericList"]"#),
            input_strides: None,
            concrete_inputs: Some(&concrete),
        });
        assert!(
            matches!(result, Err(NoModel::BadArgs { .. })),
            "{sizes} {factors}: {result:?}"
        );
    }
}

#[test]
fn in_place_binary_writes_its_own_type() {
    // add_ into bf16 self from an fp32 other: the result is stored as bf16.
    let m = model(&op(
        "aten::add_",
        "[[1, 5184, 4], [5184, 4], []]",
        r#"["c10::BFloat16", "float", "Scalar"]"#,
    ))
    .expect("modelled");
    assert_eq!(m.bytes, (20_736 * (2 + 4 + 2)) as f64);
}

#[test]
fn unbroadcastable_shapes_are_refused() {
    assert!(
        model(&op(
            "aten::add",
            "[[3], [4], []]",
            r#"["float", "float", "Scalar"]"#
        ))
        .is_err()
    );
}
