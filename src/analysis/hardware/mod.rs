//! The hardware catalog: peak memory bandwidth and dense peak throughput per
//! compute spec for each GPU we know, detected from a trace's
//! `deviceProperties`, overridable by name or inline spec.
//!
//! The built-in catalog is `hardware/catalog.yaml`, compiled in with
//! `include_str!` and parsed at run time ([`builtin_catalog`]). A user file
//! (`--hardware-file FILE`) has the same format and is layered on top with
//! [`Catalog::merged_with`]; `--hardware NAME|SPEC` goes through
//! [`Catalog::resolve`] (a catalog name, or an inline spec parsed by
//! [`Hardware::from_inline`]).
//!
//! # File format
//!
//! YAML, snake_case keys, unknown keys rejected:
//!
//! ```yaml
//! gpus:
//!   - name: H100 SXM                 # canonical, unique (case-insensitive)
//!     vendor: NVIDIA
//!     match_names: ["H100 80GB HBM3"] # optional; see "Detection"
//!     memory_gb: 80
//!     hbm_tb_s: 3.35                 # TB/s = 1e12 bytes/s
//!     peak_tflops:                   # dense TFLOP/s per ComputeSpec name
//!       matrix_bf16: 990
//!       vector_fp32: 67
//!     source: "NVIDIA H100 datasheet"  # optional in user files
//!     achievable:                    # optional: measured peaks
//!       peak_tflops: {matrix_bf16: 708}
//!       source: "vendor's measured max-achievable figures"
//!     link:                          # optional: intra-node link to peers
//!       name: NVLink 4
//!       gb_s: 450                    # GB/s PER DIRECTION (900 bidirectional)
//!       source: "NVIDIA H100 datasheet"
//!     network:                       # optional: network port per GPU
//!       name: ConnectX-7 NDR
//!       gb_s: 50                     # 400 Gb/s = 50 GB/s per direction
//!       source: "NVIDIA DGX H100 specifications"
//! ```
//!
//! `peak_tflops` and `hbm_tb_s` are datasheet figures (dense, no sparsity)
//! for every entry, so that ratios between two GPUs compare like with like;
//! measured figures go under `achievable` and are used only when a policy
//! asks for them (`hardware.peak: achievable`, [`PeakBasis`]).
//!
//! # Detection
//!
//! A match name is compared with a device name word by word: both are split
//! into words at every character that is not an ASCII letter or digit and
//! upper-cased, and the match name matches when its words appear
//! consecutively in the device name's (`"H100 80GB HBM3"` matches
//! `"NVIDIA H100 80GB HBM3"`; `"B200"` does not match `"NVIDIA GB200"`).
//! The entry whose matching name has the most words wins (so `"H200 NVL"`
//! beats `"H200"`). A tie between entries is settled by the device's
//! `totalGlobalMem` (within 15% of the entry's `memory_gb`, read as GiB);
//! a tie it cannot settle leaves the device unknown.

mod catalog;
mod compute_spec;
mod detect;
mod error;
mod gpu;
mod inline;
mod link;
mod resolve;
#[cfg(test)]
mod tests;

pub use catalog::{BUILTIN_LABEL, BUILTIN_YAML, Catalog, builtin_catalog};

/// The peak compute one GPU can have, TFLOP/s: from 0.001 (1 GFLOP/s, below
/// any GPU's FP64) to 100,000 (ten times the densest FP4 of 2025: B200 9 PFLOP/s,
/// MI355X 10 PFLOP/s, vendors' datasheets). A figure outside is a typo or a
/// unit mistake (1e-300 made an efficiency of 305 digits).
pub const PEAK_TFLOPS_RANGE: (f64, f64) = (0.001, 100_000.0);

/// The memory bandwidth one GPU can have, TB/s: from 0.01 (10 GB/s) to 100
/// (over ten times the 8 TB/s of HBM3e on B200 and MI355X, vendors'
/// datasheets).
pub const BANDWIDTH_TB_S_RANGE: (f64, f64) = (0.01, 100.0);

/// Why `value` (a peak or a bandwidth of `unit`) is no physical figure, or
/// `None` when it lies in `range`.
pub fn out_of_bounds(value: f64, range: (f64, f64), unit: &str) -> Option<String> {
    let (low, high) = range;
    if !value.is_finite() || value <= 0.0 {
        Some(format!("must be a positive number of {unit}, not {value}"))
    } else if value < low || value > high {
        Some(format!(
            "{value} {unit} is outside what a GPU can have ({low} to {high} {unit}; docs/POLICY.md, \"Hardware bounds\")"
        ))
    } else {
        None
    }
}
pub use compute_spec::ComputeSpec;
pub use detect::{Detection, DeviceMatch};
pub use error::HardwareError;
pub use gpu::{Achievable, Hardware, PeakBasis};
pub use link::Link;
