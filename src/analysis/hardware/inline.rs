//! Inline hardware specs (`--hardware hbm=3.35,bf16=990,...`): parsing
//! `key=value` pairs and applying them to an entry.

use std::collections::BTreeMap;

use super::compute_spec::ComputeSpec;
use super::error::HardwareError;
use super::gpu::Hardware;

impl Hardware {
    /// Parses an inline spec: comma-separated `key=value` pairs, keys
    /// case-insensitive, spaces around keys and values ignored.
    ///
    /// | key | meaning |
    /// |---|---|
    /// | `name` | the name shown in reports (default `custom`) |
    /// | `vendor` | default `custom` |
    /// | `hbm` (`hbm_tb_s`, `bw`, `bandwidth`) | memory bandwidth, TB/s (required) |
    /// | `mem` (`memory`, `memory_gb`) | memory, GB (default 0 = unknown) |
    /// | `fp64`, `fp32` | `vector_fp64`, `vector_fp32` peak, TFLOP/s |
    /// | `tf32`, `bf16`, `fp16`, `fp8`, `int8`, `fp4` | `matrix_*` peak, TFLOP/s |
    /// | any [`ComputeSpec`] name (`matrix_fp32`, `vector_bf16`, ...) | that peak |
    ///
    /// At least one peak is required. Example:
    /// `hbm=3.35,bf16=990,fp32=67,name=custom`. Numbers must be positive
    /// and finite; a key may appear once. `base=NAME` (start from a catalog
    /// entry) needs the catalog: use [`Catalog::resolve`](super::Catalog::resolve).
    pub fn from_inline(text: &str) -> Result<Hardware, HardwareError> {
        let pairs = parse_pairs(text)?;
        if pairs.iter().any(|(key, _)| key == "base") {
            return Err(inline_error(
                text,
                Some("base"),
                "`base` names a catalog entry; it is resolved by Catalog::resolve".to_string(),
            ));
        }
        let mut hardware = Hardware {
            name: "custom".to_string(),
            vendor: "custom".to_string(),
            match_names: Vec::new(),
            memory_gb: 0.0,
            hbm_tb_s: 0.0,
            peak_tflops: BTreeMap::new(),
            source: format!("inline spec `{}`", text.trim()),
            achievable: None,
            link: None,
            network: None,
        };
        apply_pairs(&mut hardware, &pairs, text)?;
        if hardware.hbm_tb_s <= 0.0 {
            return Err(inline_error(
                text,
                Some("hbm"),
                "missing: give the memory bandwidth as hbm=TB/s".to_string(),
            ));
        }
        if hardware.peak_tflops.is_empty() {
            return Err(inline_error(
                text,
                None,
                "no peak given: add at least one of fp64, fp32, tf32, bf16, fp16, fp8, int8, fp4 (TFLOP/s)"
                    .to_string(),
            ));
        }
        Ok(hardware)
    }
}

/// An [`HardwareError::Inline`] for `spec`, naming `key` when one is at fault.
pub(super) fn inline_error(spec: &str, key: Option<&str>, message: String) -> HardwareError {
    let message = match key {
        Some(key) => format!("key `{key}`: {message}"),
        None => message,
    };
    HardwareError::Inline {
        spec: spec.trim().to_string(),
        key: key.map(str::to_string),
        message,
    }
}

/// The keys an inline spec accepts, for error messages.
const INLINE_KEYS: &str = "name, vendor, base, hbm, mem, fp64, fp32, tf32, bf16, fp16, fp8, int8, fp4, \
     or a compute spec such as matrix_bf16";

/// Splits `key=value,...` into lower-cased keys and trimmed values, rejecting
/// empty specs, missing `=`, empty keys and values, and repeated keys.
pub(super) fn parse_pairs(text: &str) -> Result<Vec<(String, String)>, HardwareError> {
    if text.trim().is_empty() {
        return Err(inline_error(text, None, "empty spec".to_string()));
    }
    let mut pairs: Vec<(String, String)> = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let Some((key, value)) = part.split_once('=') else {
            return Err(inline_error(
                text,
                Some(part),
                "expected key=value".to_string(),
            ));
        };
        let key = key.trim().to_ascii_lowercase();
        let value = value.trim().to_string();
        if key.is_empty() {
            return Err(inline_error(
                text,
                None,
                format!("`{part}` has no key before `=`"),
            ));
        }
        if value.is_empty() {
            return Err(inline_error(text, Some(&key), "no value".to_string()));
        }
        if pairs.iter().any(|(k, _)| *k == key) {
            return Err(inline_error(text, Some(&key), "given twice".to_string()));
        }
        pairs.push((key, value));
    }
    Ok(pairs)
}

/// Applies parsed pairs (other than `base`) to `hardware`.
pub(super) fn apply_pairs(
    hardware: &mut Hardware,
    pairs: &[(String, String)],
    text: &str,
) -> Result<(), HardwareError> {
    let number = |key: &str, value: &str| -> Result<f64, HardwareError> {
        match value.parse::<f64>() {
            Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
            Ok(_) => Err(inline_error(
                text,
                Some(key),
                format!("`{value}` must be a positive number"),
            )),
            Err(_) => Err(inline_error(
                text,
                Some(key),
                format!("`{value}` is not a number"),
            )),
        }
    };
    let bounded = |key: &str, value: &str, range: (f64, f64), unit: &str| {
        let v = number(key, value)?;
        match super::out_of_bounds(v, range, unit) {
            Some(message) => Err(inline_error(text, Some(key), message)),
            None => Ok(v),
        }
    };
    for (key, value) in pairs {
        match key.as_str() {
            "base" => {}
            "name" => hardware.name = value.clone(),
            "vendor" => hardware.vendor = value.clone(),
            "hbm" | "hbm_tb_s" | "bw" | "bandwidth" => {
                hardware.hbm_tb_s = bounded(key, value, super::BANDWIDTH_TB_S_RANGE, "TB/s")?;
            }
            "mem" | "memory" | "memory_gb" => hardware.memory_gb = number(key, value)?,
            other => {
                let spec = match other {
                    "fp64" => Some(ComputeSpec::VectorFp64),
                    "fp32" => Some(ComputeSpec::VectorFp32),
                    "tf32" => Some(ComputeSpec::MatrixTf32),
                    "bf16" => Some(ComputeSpec::MatrixBf16),
                    "fp16" => Some(ComputeSpec::MatrixFp16),
                    "fp8" => Some(ComputeSpec::MatrixFp8),
                    "int8" => Some(ComputeSpec::MatrixInt8),
                    "fp4" => Some(ComputeSpec::MatrixFp4),
                    _ => ComputeSpec::from_name(other),
                };
                let Some(spec) = spec else {
                    return Err(inline_error(
                        text,
                        Some(other),
                        format!("unknown key; expected one of {INLINE_KEYS}"),
                    ));
                };
                let tflops = bounded(key, value, super::PEAK_TFLOPS_RANGE, "TFLOP/s")?;
                hardware.peak_tflops.insert(spec, tflops);
            }
        }
    }
    Ok(())
}
