//! One GPU's figures (bandwidth, memory, datasheet dense peaks, and where
//! published, measured achievable peaks) and the roofline arithmetic on
//! them: peak lookup with fallbacks, ridge point, roofline time, and the
//! choice of one peak basis for one or two GPUs.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::compute_spec::ComputeSpec;
use super::link::Link;

/// One GPU: bandwidth, memory and dense peak throughput per compute spec.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hardware {
    /// Canonical name, e.g. `H100 SXM`.
    pub name: String,
    /// `NVIDIA`, `AMD`, ...
    pub vendor: String,
    /// Patterns matched against `deviceProperties` names (see the [module
    /// docs](super) for the matching rule).
    #[serde(default)]
    pub match_names: Vec<String>,
    /// Device memory in GB as the vendor quotes it (0 when unknown).
    pub memory_gb: f64,
    /// Peak memory bandwidth in TB/s (1e12 bytes/s). HBM on every built-in
    /// part but the inference cards (L40S, L4, A10, T4: GDDR6).
    pub hbm_tb_s: f64,
    /// Dense peak TFLOP/s (int8: tera-ops/s) per compute spec.
    #[serde(default)]
    pub peak_tflops: BTreeMap<ComputeSpec, f64>,
    /// Where the figures come from (a vendor datasheet citation).
    #[serde(default)]
    pub source: String,
    /// Measured achievable peaks the vendor publishes, kept apart from the
    /// datasheet figures above; used only on the [`PeakBasis::Achievable`]
    /// basis ([`Hardware::on_basis`], [`Hardware::pair_on_basis`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub achievable: Option<Achievable>,
    /// The intra-node link to the other GPUs (NVLink, Infinity Fabric),
    /// when the part has one of a known speed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<Link>,
    /// The network port per GPU of the vendor's reference system, when it
    /// fixes one (DGX: one 400 Gb/s ConnectX-7 per GPU).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<Link>,
}

/// Measured achievable peaks of one GPU (e.g. AMD's published
/// max-achievable FLOPs), each figure for the exact spec it was measured in.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Achievable {
    /// Achievable TFLOP/s per compute spec (no fallbacks between specs).
    #[serde(default)]
    pub peak_tflops: BTreeMap<ComputeSpec, f64>,
    /// Achievable memory bandwidth, TB/s, when published.
    #[serde(default)]
    pub hbm_tb_s: Option<f64>,
    /// Where the measured figures come from.
    pub source: String,
}

/// Which peaks roofline figures are computed against.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PeakBasis {
    /// The vendors' datasheet dense peaks, the same basis for every GPU.
    #[default]
    Datasheet,
    /// Measured achievable peaks where the catalog has them (datasheet
    /// elsewhere); across two GPUs only where both have one.
    Achievable,
}

impl PeakBasis {
    /// Lower-case name, as written in a policy.
    pub fn as_str(self) -> &'static str {
        match self {
            PeakBasis::Datasheet => "datasheet",
            PeakBasis::Achievable => "achievable",
        }
    }
}

impl Hardware {
    /// This GPU's figures on `basis`: on [`PeakBasis::Achievable`], each
    /// measured figure replaces the datasheet one of the same spec (and
    /// bandwidth); everything else stays on the datasheet.
    pub fn on_basis(&self, basis: PeakBasis) -> Hardware {
        let mut hardware = self.clone();
        if let (PeakBasis::Achievable, Some(measured)) = (basis, &self.achievable) {
            for (spec, tflops) in &measured.peak_tflops {
                hardware.peak_tflops.insert(*spec, *tflops);
            }
            if let Some(bandwidth) = measured.hbm_tb_s {
                hardware.hbm_tb_s = bandwidth;
            }
        }
        hardware
    }

    /// Two GPUs' figures on one common `basis`, for ratios between them: on
    /// [`PeakBasis::Achievable`] a measured figure is used only where both
    /// GPUs have one for the same spec (bandwidth likewise), so that a
    /// ratio never divides a measured figure by a datasheet one.
    pub fn pair_on_basis(a: &Hardware, b: &Hardware, basis: PeakBasis) -> (Hardware, Hardware) {
        let (mut a_out, mut b_out) = (a.clone(), b.clone());
        if let (PeakBasis::Achievable, Some(ma), Some(mb)) = (basis, &a.achievable, &b.achievable) {
            for (spec, ta) in &ma.peak_tflops {
                if let Some(tb) = mb.peak_tflops.get(spec) {
                    a_out.peak_tflops.insert(*spec, *ta);
                    b_out.peak_tflops.insert(*spec, *tb);
                }
            }
            if let (Some(ba), Some(bb)) = (ma.hbm_tb_s, mb.hbm_tb_s) {
                a_out.hbm_tb_s = ba;
                b_out.hbm_tb_s = bb;
            }
        }
        (a_out, b_out)
    }

    /// The peak for `spec` in TFLOP/s, with the spec it was read from: the
    /// spec itself, else the first of its documented fallbacks the entry
    /// lists ([`ComputeSpec::fallbacks`]):
    ///
    /// - `matrix_fp16` → `matrix_bf16`: every catalogued part with bf16
    ///   matrix units runs fp16 at the same rate. Not the other way round: a
    ///   part listing only fp16 (V100) has no bf16 hardware, so `matrix_bf16`
    ///   has no fallback.
    /// - `matrix_tf32` → `matrix_fp32` → `vector_fp32`: a part without tf32
    ///   matrix units (CDNA2, CDNA4, V100) runs a tf32-allowed GEMM in fp32.
    /// - `matrix_fp32` → `vector_fp32`: NVIDIA has no fp32 matrix units; an
    ///   fp32 GEMM runs on the CUDA cores.
    /// - `matrix_fp64` → `vector_fp64`: likewise for fp64.
    /// - `vector_bf16`, `vector_fp16` → `vector_fp32`: no cited datasheet
    ///   gives a vector half-precision rate, and PyTorch's elementwise
    ///   kernels compute half types in fp32 anyway (a lower bound on parts
    ///   with packed half math).
    /// - `matrix_fp8`, `matrix_int8`, `matrix_fp4`, `vector_fp64`,
    ///   `vector_fp32`, `matrix_bf16`: no fallback; `None` when not listed.
    pub fn resolve_peak(&self, spec: ComputeSpec) -> Option<(ComputeSpec, f64)> {
        spec.fallbacks()
            .iter()
            .find_map(|s| self.peak_tflops.get(s).map(|&tflops| (*s, tflops)))
    }

    /// The dense peak for `spec` in TFLOP/s, after the fallbacks of
    /// [`Hardware::resolve_peak`]; `None` when the part has no such unit.
    pub fn peak_tflops(&self, spec: ComputeSpec) -> Option<f64> {
        self.resolve_peak(spec).map(|(_, tflops)| tflops)
    }

    /// The roofline ridge point for `spec` in FLOP/byte: peak FLOP/s over
    /// peak bytes/s. Kernels with a higher arithmetic intensity are
    /// compute-bound, lower memory-bound.
    pub fn ridge_point(&self, spec: ComputeSpec) -> Option<f64> {
        let peak = self.peak_tflops(spec)?;
        (self.hbm_tb_s > 0.0).then(|| peak / self.hbm_tb_s)
    }

    /// The roofline time in µs for `flops` operations moving `bytes`:
    /// max(flops / peak(spec), bytes / bandwidth). `None` when an input is
    /// negative or not finite, when there is no bandwidth, or when `flops`
    /// is positive and the part has no peak for `spec`; with `flops` = 0 the
    /// peak is not needed and the memory time is returned.
    pub fn roofline_time_us(&self, flops: f64, bytes: f64, spec: ComputeSpec) -> Option<f64> {
        if !(flops.is_finite() && bytes.is_finite() && flops >= 0.0 && bytes >= 0.0) {
            return None;
        }
        if self.hbm_tb_s <= 0.0 {
            return None;
        }
        // TB/s and TFLOP/s are 1e12 per second = 1e6 per µs.
        let memory_us = bytes / (self.hbm_tb_s * 1e6);
        if flops == 0.0 {
            return Some(memory_us);
        }
        let peak = self.peak_tflops(spec)?;
        Some((flops / (peak * 1e6)).max(memory_us))
    }
}
