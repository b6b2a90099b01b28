//! Cross-platform expectations: the time ratio a row should show from the
//! hardware difference alone. Both GPUs' figures must be on one peak basis
//! (the catalog's datasheet figures, or [`Hardware::pair_on_basis`]'s
//! common achievable ones): a ratio of a measured peak to a datasheet peak
//! would blame or excuse the hardware for the difference in basis.

use super::model::{Expectation, ExpectationBasis, OpSide};
use crate::analysis::hardware::{ComputeSpec, Hardware};
use crate::analysis::ops::category::Category;
use crate::analysis::perf_model::dtype::Dtype;

/// The expected candidate / baseline time of a row on two platforms: the
/// ratio of its roofline times when it has a perf model with a compute
/// spec both parts have a peak for; the bandwidth ratio for a model without
/// a compute spec; otherwise by category (compute-bound GEMM, convolution
/// and attention: peak FLOP/s ratio for the row's dtype, bf16 when it has
/// none; memory-bound elementwise, reduce, norm, softmax, Triton and other:
/// bandwidth ratio; collectives and runtime work: none).
pub fn expectation(row: &OpSide, baseline: &Hardware, candidate: &Hardware) -> Option<Expectation> {
    let bandwidth = || {
        (baseline.hbm_tb_s > 0.0 && candidate.hbm_tb_s > 0.0).then(|| Expectation {
            ratio: baseline.hbm_tb_s / candidate.hbm_tb_s,
            basis: ExpectationBasis::Bandwidth,
            spec: None,
        })
    };
    if let Some(model) = &row.model {
        match model.compute_spec {
            Some(spec) => {
                let times = (
                    baseline.roofline_time_us(model.flops, model.bytes, spec),
                    candidate.roofline_time_us(model.flops, model.bytes, spec),
                );
                if let (Some(b), Some(c)) = times {
                    if b > 0.0 {
                        return Some(Expectation {
                            ratio: c / b,
                            basis: ExpectationBasis::Roofline,
                            spec: Some(spec),
                        });
                    }
                }
            }
            None if model.bytes > 0.0 => return bandwidth(),
            None => {}
        }
    }
    match row.category {
        Category::Gemm
        | Category::ConvFwd
        | Category::ConvBwd
        | Category::SdpaFwd
        | Category::SdpaBwd => {
            let spec = row_dtype(&row.key.input_type)
                .and_then(Dtype::matrix_spec)
                .unwrap_or(ComputeSpec::MatrixBf16);
            let (b, c) = (baseline.peak_tflops(spec)?, candidate.peak_tflops(spec)?);
            Some(Expectation {
                ratio: b / c,
                basis: ExpectationBasis::PeakCompute,
                spec: Some(spec),
            })
        }
        Category::Comm | Category::Runtime => None,
        Category::Elementwise
        | Category::Reduce
        | Category::NormFwd
        | Category::NormBwd
        | Category::Softmax
        | Category::Triton
        | Category::Other => bandwidth(),
    }
}

/// The first floating-point tensor dtype of an `Input type` tuple
/// (`('c10::BFloat16', 'Scalar')` → bf16).
pub(super) fn row_dtype(input_type: &str) -> Option<Dtype> {
    input_type
        .split('\'')
        .skip(1)
        .step_by(2)
        .filter_map(Dtype::parse)
        .find(|d| d.is_floating() && *d != Dtype::Scalar)
}
