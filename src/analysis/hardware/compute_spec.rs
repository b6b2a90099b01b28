//! Compute specs: what a roofline peak is looked up by, and the fallbacks
//! tried when a part does not list one.

use serde::{Deserialize, Serialize};

/// What a roofline peak is looked up by: the unit that does the work
/// (`matrix` = tensor/matrix cores, `vector` = CUDA cores / SIMD) and the
/// dtype. Names follow TraceLens's `Compute Spec` column (`matrix_bf16`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ComputeSpec {
    /// Matrix cores, fp64.
    MatrixFp64,
    /// Matrix cores, fp32 (no TF32 down-conversion).
    MatrixFp32,
    /// Matrix cores, tf32.
    MatrixTf32,
    /// Matrix cores, bf16.
    MatrixBf16,
    /// Matrix cores, fp16.
    MatrixFp16,
    /// Matrix cores, fp8 (e4m3/e5m2).
    MatrixFp8,
    /// Matrix cores, int8.
    MatrixInt8,
    /// Matrix cores, fp4.
    MatrixFp4,
    /// Vector units, fp64.
    VectorFp64,
    /// Vector units, fp32.
    VectorFp32,
    /// Vector units, bf16.
    VectorBf16,
    /// Vector units, fp16.
    VectorFp16,
}

impl ComputeSpec {
    /// Every spec, in declaration order.
    pub const ALL: [ComputeSpec; 12] = [
        ComputeSpec::MatrixFp64,
        ComputeSpec::MatrixFp32,
        ComputeSpec::MatrixTf32,
        ComputeSpec::MatrixBf16,
        ComputeSpec::MatrixFp16,
        ComputeSpec::MatrixFp8,
        ComputeSpec::MatrixInt8,
        ComputeSpec::MatrixFp4,
        ComputeSpec::VectorFp64,
        ComputeSpec::VectorFp32,
        ComputeSpec::VectorBf16,
        ComputeSpec::VectorFp16,
    ];

    /// The TraceLens-style name, e.g. `matrix_bf16`.
    pub fn as_str(self) -> &'static str {
        match self {
            ComputeSpec::MatrixFp64 => "matrix_fp64",
            ComputeSpec::MatrixFp32 => "matrix_fp32",
            ComputeSpec::MatrixTf32 => "matrix_tf32",
            ComputeSpec::MatrixBf16 => "matrix_bf16",
            ComputeSpec::MatrixFp16 => "matrix_fp16",
            ComputeSpec::MatrixFp8 => "matrix_fp8",
            ComputeSpec::MatrixInt8 => "matrix_int8",
            ComputeSpec::MatrixFp4 => "matrix_fp4",
            ComputeSpec::VectorFp64 => "vector_fp64",
            ComputeSpec::VectorFp32 => "vector_fp32",
            ComputeSpec::VectorBf16 => "vector_bf16",
            ComputeSpec::VectorFp16 => "vector_fp16",
        }
    }

    /// The spec named `name` (`matrix_bf16`, case-insensitive), if any.
    pub fn from_name(name: &str) -> Option<ComputeSpec> {
        ComputeSpec::ALL
            .into_iter()
            .find(|spec| spec.as_str().eq_ignore_ascii_case(name))
    }

    /// The specs tried, in order, when this one's peak is looked up; see
    /// [`Hardware::peak_tflops`](super::Hardware::peak_tflops).
    pub fn fallbacks(self) -> &'static [ComputeSpec] {
        use ComputeSpec::*;
        match self {
            MatrixFp16 => &[MatrixFp16, MatrixBf16],
            MatrixTf32 => &[MatrixTf32, MatrixFp32, VectorFp32],
            MatrixFp32 => &[MatrixFp32, VectorFp32],
            MatrixFp64 => &[MatrixFp64, VectorFp64],
            VectorBf16 => &[VectorBf16, VectorFp32],
            VectorFp16 => &[VectorFp16, VectorFp32],
            MatrixBf16 => &[MatrixBf16],
            MatrixFp8 => &[MatrixFp8],
            MatrixInt8 => &[MatrixInt8],
            MatrixFp4 => &[MatrixFp4],
            VectorFp64 => &[VectorFp64],
            VectorFp32 => &[VectorFp32],
        }
    }
}

impl std::fmt::Display for ComputeSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
