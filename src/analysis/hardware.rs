//! The hardware catalog: peak memory bandwidth and dense peak throughput per
//! compute spec for each GPU we know, detected from a trace's
//! `deviceProperties`, overridable by name or inline spec.
//!
//! The built-in catalog is `policies/hardware.yaml`, compiled in with
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
//! ```
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

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::trace::DeviceProperties;

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
    /// [`Hardware::peak_tflops`].
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

/// Why a catalog or a `--hardware` spec could not be used. Each message is one
/// line naming the file (with YAML line:column where there is one), the
/// entry, or the inline key at fault.
#[derive(Debug, thiserror::Error)]
pub enum HardwareError {
    /// A catalog file could not be read.
    #[error("{path}: cannot read: {source}")]
    Io {
        /// The file.
        path: String,
        /// What the OS said.
        source: std::io::Error,
    },
    /// A catalog file is not valid YAML or does not have the expected shape.
    #[error("{file}{}: {message}", location_suffix(*.location))]
    Yaml {
        /// The file (or the label the text was given under).
        file: String,
        /// 1-based line and column, when the parser knows them.
        location: Option<(usize, usize)>,
        /// What the parser said.
        message: String,
    },
    /// A catalog entry parsed but its values are unusable.
    #[error("{file}: GPU `{entry}`: {message}")]
    Invalid {
        /// The file.
        file: String,
        /// The entry's name (or its position when it has none).
        entry: String,
        /// What is wrong.
        message: String,
    },
    /// An inline `--hardware` spec is malformed.
    #[error("hardware spec `{spec}`: {message}")]
    Inline {
        /// The spec as given.
        spec: String,
        /// The key at fault, when one is.
        key: Option<String>,
        /// What is wrong.
        message: String,
    },
    /// A `--hardware NAME` names no catalog entry.
    #[error("unknown GPU `{name}`: {reason}; known: {known}")]
    UnknownName {
        /// The name as given.
        name: String,
        /// Why it matched nothing (or too much).
        reason: String,
        /// The catalog's canonical names, comma-separated.
        known: String,
    },
}

fn location_suffix(location: Option<(usize, usize)>) -> String {
    match location {
        Some((line, column)) => format!(":{line}:{column}"),
        None => String::new(),
    }
}

/// One GPU: bandwidth, memory and dense peak throughput per compute spec.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hardware {
    /// Canonical name, e.g. `H100 SXM`.
    pub name: String,
    /// `NVIDIA`, `AMD`, ...
    pub vendor: String,
    /// Patterns matched against `deviceProperties` names (see the module
    /// docs for the matching rule).
    #[serde(default)]
    pub match_names: Vec<String>,
    /// Device memory in GB as the vendor quotes it (0 when unknown).
    pub memory_gb: f64,
    /// Peak memory bandwidth in TB/s (1e12 bytes/s). HBM on every built-in
    /// part but the L40S (GDDR6).
    pub hbm_tb_s: f64,
    /// Dense peak TFLOP/s (int8: tera-ops/s) per compute spec.
    #[serde(default)]
    pub peak_tflops: BTreeMap<ComputeSpec, f64>,
    /// Where the figures come from (a vendor datasheet citation).
    #[serde(default)]
    pub source: String,
}

impl Hardware {
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
    /// entry) needs the catalog: use [`Catalog::resolve`].
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

    fn validate(&self, file: &str, index: usize) -> Result<(), HardwareError> {
        let entry = if self.name.trim().is_empty() {
            format!("#{}", index + 1)
        } else {
            self.name.clone()
        };
        let invalid = |message: String| HardwareError::Invalid {
            file: file.to_string(),
            entry: entry.clone(),
            message,
        };
        if self.name.trim().is_empty() {
            return Err(invalid("`name` is blank".to_string()));
        }
        if !(self.hbm_tb_s.is_finite() && self.hbm_tb_s > 0.0) {
            return Err(invalid(format!(
                "`hbm_tb_s` must be a positive number of TB/s, not {}",
                self.hbm_tb_s
            )));
        }
        if !(self.memory_gb.is_finite() && self.memory_gb >= 0.0) {
            return Err(invalid(format!(
                "`memory_gb` must be a number of GB (0 for unknown), not {}",
                self.memory_gb
            )));
        }
        for (spec, tflops) in &self.peak_tflops {
            if !(tflops.is_finite() && *tflops > 0.0) {
                return Err(invalid(format!(
                    "`peak_tflops.{spec}` must be a positive number of TFLOP/s, not {tflops}"
                )));
            }
        }
        for pattern in &self.match_names {
            if words(pattern).is_empty() {
                return Err(invalid(format!(
                    "match name `{pattern}` has no letters or digits"
                )));
            }
        }
        Ok(())
    }
}

fn inline_error(spec: &str, key: Option<&str>, message: String) -> HardwareError {
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
fn parse_pairs(text: &str) -> Result<Vec<(String, String)>, HardwareError> {
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
fn apply_pairs(
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
    for (key, value) in pairs {
        match key.as_str() {
            "base" => {}
            "name" => hardware.name = value.clone(),
            "vendor" => hardware.vendor = value.clone(),
            "hbm" | "hbm_tb_s" | "bw" | "bandwidth" => hardware.hbm_tb_s = number(key, value)?,
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
                let tflops = number(key, value)?;
                hardware.peak_tflops.insert(spec, tflops);
            }
        }
    }
    Ok(())
}

/// Upper-cased ASCII words of `text`, split at anything else.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_ascii_uppercase)
        .collect()
}

/// Whether `needle` occurs as consecutive words of `haystack`.
fn contains_words(haystack: &[String], needle: &[String]) -> bool {
    !needle.is_empty()
        && needle.len() <= haystack.len()
        && haystack
            .windows(needle.len())
            .any(|window| window == needle)
}

/// A set of GPUs. Order matters only for listing.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Catalog {
    /// The entries.
    pub gpus: Vec<Hardware>,
}

/// The built-in catalog's text.
pub const BUILTIN_YAML: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/policies/hardware.yaml"
));

/// The label the built-in catalog's errors and defaults carry.
pub const BUILTIN_LABEL: &str = "policies/hardware.yaml (built in)";

/// The built-in catalog (`policies/hardware.yaml`), parsed once.
pub fn builtin_catalog() -> Catalog {
    static BUILTIN: OnceLock<Catalog> = OnceLock::new();
    BUILTIN
        .get_or_init(|| {
            Catalog::from_yaml(BUILTIN_YAML, BUILTIN_LABEL)
                .expect("the built-in hardware catalog parses (a unit test checks it)")
        })
        .clone()
}

/// How well a device name matched: the entry, the pattern, or why none.
struct Identified {
    index: Option<usize>,
    pattern: Option<String>,
    reason: Option<String>,
}

impl Catalog {
    /// Parses a catalog file's text; `source_label` (usually the path) names
    /// it in errors and is the `source` of entries that give none.
    pub fn from_yaml(text: &str, source_label: &str) -> Result<Catalog, HardwareError> {
        let mut catalog: Catalog =
            serde_yaml::from_str(text).map_err(|error| yaml_error(&error, source_label))?;
        let mut seen: Vec<Vec<String>> = Vec::new();
        for (index, hardware) in catalog.gpus.iter_mut().enumerate() {
            hardware.validate(source_label, index)?;
            let name = words(&hardware.name);
            if seen.contains(&name) {
                return Err(HardwareError::Invalid {
                    file: source_label.to_string(),
                    entry: hardware.name.clone(),
                    message: "the name appears twice".to_string(),
                });
            }
            seen.push(name);
            if hardware.source.trim().is_empty() {
                hardware.source = source_label.to_string();
            }
        }
        Ok(catalog)
    }

    /// Reads and parses a catalog file (`--hardware-file FILE`).
    pub fn load_file(path: &Path) -> Result<Catalog, HardwareError> {
        let label = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| HardwareError::Io {
            path: label.clone(),
            source,
        })?;
        Catalog::from_yaml(&text, &label)
    }

    /// This catalog with `user`'s entries layered on top: an entry whose
    /// name equals an existing one (case- and punctuation-insensitive)
    /// replaces it in place, any other is appended. A match name a user
    /// entry lists is taken away from every other entry, so the user's
    /// entry wins detection for it.
    pub fn merged_with(mut self, user: Catalog) -> Catalog {
        for entry in user.gpus {
            let name = words(&entry.name);
            let claimed: Vec<Vec<String>> = entry.match_names.iter().map(|p| words(p)).collect();
            let existing = self.gpus.iter().position(|g| words(&g.name) == name);
            for (index, other) in self.gpus.iter_mut().enumerate() {
                if Some(index) != existing {
                    other
                        .match_names
                        .retain(|pattern| !claimed.contains(&words(pattern)));
                }
            }
            match existing {
                Some(index) => self.gpus[index] = entry,
                None => self.gpus.push(entry),
            }
        }
        self
    }

    /// The entry called `name`, case- and punctuation-insensitive
    /// (`h100-sxm` finds `H100 SXM`), else the one entry with a match name
    /// equal to it; `None` when nothing, or more than one entry, has it as
    /// a match name.
    pub fn by_name(&self, name: &str) -> Option<&Hardware> {
        let query = words(name);
        if query.is_empty() {
            return None;
        }
        if let Some(hardware) = self.gpus.iter().find(|g| words(&g.name) == query) {
            return Some(hardware);
        }
        let mut hits = self
            .gpus
            .iter()
            .filter(|g| g.match_names.iter().any(|p| words(p) == query));
        match (hits.next(), hits.next()) {
            (Some(hardware), None) => Some(hardware),
            _ => None,
        }
    }

    /// The entry a `deviceProperties` name (with its `totalGlobalMem` in
    /// bytes, when recorded) is, by the rules in the module docs.
    pub fn identify(&self, device_name: &str, total_global_mem: Option<u64>) -> Option<&Hardware> {
        self.identify_inner(device_name, total_global_mem)
            .index
            .map(|index| &self.gpus[index])
    }

    fn identify_inner(&self, device_name: &str, total_global_mem: Option<u64>) -> Identified {
        let none = |reason: String| Identified {
            index: None,
            pattern: None,
            reason: Some(reason),
        };
        let name = words(device_name);
        if name.is_empty() {
            return none("blank name".to_string());
        }
        // Per entry, its longest matching pattern.
        let mut best_len = 0;
        let mut candidates: Vec<(usize, &str)> = Vec::new();
        for (index, hardware) in self.gpus.iter().enumerate() {
            let best = hardware
                .match_names
                .iter()
                .map(|p| (words(p).len(), p.as_str()))
                .filter(|(_, p)| contains_words(&name, &words(p)))
                .max_by_key(|(len, _)| *len);
            let Some((len, pattern)) = best else { continue };
            if len > best_len {
                best_len = len;
                candidates.clear();
            }
            if len == best_len {
                candidates.push((index, pattern));
            }
        }
        let found = |(index, pattern): (usize, &str)| Identified {
            index: Some(index),
            pattern: Some(pattern.to_string()),
            reason: None,
        };
        match candidates.len() {
            0 => return none("no catalog entry matches".to_string()),
            1 => return found(candidates[0]),
            _ => {}
        }
        let names: Vec<&str> = candidates
            .iter()
            .map(|(index, _)| self.gpus[*index].name.as_str())
            .collect();
        let Some(bytes) = total_global_mem else {
            return none(format!(
                "matches {} equally and no memory size is recorded to decide",
                names.join(", ")
            ));
        };
        let gib = bytes as f64 / f64::from(1u32 << 30);
        let close: Vec<(usize, &str)> = candidates
            .iter()
            .copied()
            .filter(|(index, _)| {
                let quoted = self.gpus[*index].memory_gb;
                quoted > 0.0 && (gib - quoted).abs() / quoted <= 0.15
            })
            .collect();
        if close.len() == 1 {
            return found(close[0]);
        }
        none(format!(
            "matches {} equally and its memory ({gib:.1} GiB) does not decide",
            names.join(", ")
        ))
    }

    /// Which catalog entry the trace's GPUs are. Devices are grouped by name
    /// (and resolved entry). All named devices resolving to one entry is
    /// [`Detection::Known`] (blank names beside them are listed but do not
    /// count against it); none resolving is [`Detection::Unknown`]; two
    /// entries, or resolved and unknown named devices together, is
    /// [`Detection::Mixed`].
    pub fn detect(&self, devices: &[DeviceProperties]) -> Detection {
        if devices.is_empty() {
            return Detection::NoDevices;
        }
        let mut groups: Vec<(DeviceMatch, Option<usize>)> = Vec::new();
        for device in devices {
            let identified = self.identify_inner(&device.name, device.total_global_mem);
            if let Some((group, _)) = groups
                .iter_mut()
                .find(|(g, index)| g.device_name == device.name && *index == identified.index)
            {
                group.count += 1;
                continue;
            }
            groups.push((
                DeviceMatch {
                    device_name: device.name.clone(),
                    count: 1,
                    hardware: identified.index.map(|i| self.gpus[i].name.clone()),
                    pattern: identified.pattern,
                    reason: identified.reason,
                },
                identified.index,
            ));
        }
        let mut entries: Vec<usize> = Vec::new();
        for index in groups.iter().filter_map(|(_, index)| *index) {
            if !entries.contains(&index) {
                entries.push(index);
            }
        }
        let named_unknown = groups
            .iter()
            .any(|(g, index)| index.is_none() && !words(&g.device_name).is_empty());
        let matches: Vec<DeviceMatch> = groups.into_iter().map(|(g, _)| g).collect();
        match entries.as_slice() {
            [] => Detection::Unknown { devices: matches },
            [only] if !named_unknown => Detection::Known {
                hardware: self.gpus[*only].clone(),
                devices: matches,
            },
            _ => Detection::Mixed { devices: matches },
        }
    }

    /// What `--hardware NAME|SPEC` means. Without `=`, a catalog entry: by
    /// [`Catalog::by_name`], else as a device name by
    /// [`Catalog::identify`]. With `=`, an inline spec
    /// ([`Hardware::from_inline`]), where `base=NAME` starts from that
    /// catalog entry and the other keys override its figures (then `hbm`
    /// and a peak are not required; the name becomes `NAME (custom)` unless
    /// `name=` is given).
    pub fn resolve(&self, spec: &str) -> Result<Hardware, HardwareError> {
        if !spec.contains('=') {
            return self
                .by_name(spec)
                .or_else(|| self.identify(spec, None))
                .cloned()
                .ok_or_else(|| self.unknown_name(spec));
        }
        let pairs = parse_pairs(spec)?;
        let Some((_, base)) = pairs.iter().find(|(key, _)| key == "base") else {
            return Hardware::from_inline(spec);
        };
        let mut hardware = self.by_name(base).cloned().ok_or_else(|| {
            inline_error(
                spec,
                Some("base"),
                format!(
                    "no catalog entry `{base}`; known: {}",
                    self.names().join(", ")
                ),
            )
        })?;
        hardware.name = format!("{} (custom)", hardware.name);
        hardware.match_names.clear();
        hardware.source = format!(
            "{}; overridden by inline spec `{}`",
            hardware.source,
            spec.trim()
        );
        apply_pairs(&mut hardware, &pairs, spec)?;
        Ok(hardware)
    }

    /// The canonical names, in catalog order.
    pub fn names(&self) -> Vec<&str> {
        self.gpus.iter().map(|g| g.name.as_str()).collect()
    }

    fn unknown_name(&self, name: &str) -> HardwareError {
        let query = words(name);
        let sharing: Vec<&str> = self
            .gpus
            .iter()
            .filter(|g| g.match_names.iter().any(|p| words(p) == query))
            .map(|g| g.name.as_str())
            .collect();
        let reason = if sharing.len() > 1 {
            format!("ambiguous between {}", sharing.join(", "))
        } else {
            "no catalog entry has that name".to_string()
        };
        HardwareError::UnknownName {
            name: name.to_string(),
            reason,
            known: self.names().join(", "),
        }
    }
}

fn yaml_error(error: &serde_yaml::Error, file: &str) -> HardwareError {
    let location = error.location().map(|l| (l.line(), l.column()));
    let mut message = error.to_string();
    // The parser appends " at line L column C"; the location is already in
    // front, so drop the repetition.
    if let Some((line, column)) = location {
        let suffix = format!(" at line {line} column {column}");
        if let Some(stripped) = message.strip_suffix(&suffix) {
            message = stripped.to_string();
        }
    }
    HardwareError::Yaml {
        file: file.to_string(),
        location,
        message,
    }
}

/// How one device name (with however many devices carry it) resolved.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DeviceMatch {
    /// The `deviceProperties` name as recorded (`""` when blank).
    pub device_name: String,
    /// How many devices carry it (and resolved to the same entry).
    pub count: usize,
    /// The catalog entry's canonical name, when one matched.
    pub hardware: Option<String>,
    /// The match name that decided it.
    pub pattern: Option<String>,
    /// Why no entry matched: blank name, no pattern, or an undecidable tie.
    pub reason: Option<String>,
}

/// Which GPU a trace ran on, from its `deviceProperties`.
#[derive(Clone, Debug, PartialEq)]
pub enum Detection {
    /// The trace records no devices.
    NoDevices,
    /// Every named device is this entry.
    Known {
        /// The entry.
        hardware: Hardware,
        /// Each device name and how it matched.
        devices: Vec<DeviceMatch>,
    },
    /// No device matched an entry (blank or unknown names).
    Unknown {
        /// Each device name and why it did not match.
        devices: Vec<DeviceMatch>,
    },
    /// Different GPUs appear (two entries, or known and unknown names).
    Mixed {
        /// Each device name and what it matched.
        devices: Vec<DeviceMatch>,
    },
}

impl Detection {
    /// The detected entry, when there is exactly one.
    pub fn hardware(&self) -> Option<&Hardware> {
        match self {
            Detection::Known { hardware, .. } => Some(hardware),
            _ => None,
        }
    }

    /// The per-name matches (empty for [`Detection::NoDevices`]).
    pub fn devices(&self) -> &[DeviceMatch] {
        match self {
            Detection::NoDevices => &[],
            Detection::Known { devices, .. }
            | Detection::Unknown { devices }
            | Detection::Mixed { devices } => devices,
        }
    }
}

/// Writes `"NAME" ×N → ENTRY` (or `(why not)`) per device name; `arrows`
/// false leaves out the entry (the caller has already said it).
fn describe_devices(
    f: &mut fmt::Formatter<'_>,
    devices: &[DeviceMatch],
    arrows: bool,
) -> fmt::Result {
    for (i, device) in devices.iter().enumerate() {
        if i > 0 {
            f.write_str("; ")?;
        }
        let name = if device.device_name.is_empty() {
            "(blank)".to_string()
        } else {
            format!("\"{}\"", device.device_name)
        };
        write!(f, "{name} ×{}", device.count)?;
        match (&device.hardware, &device.reason) {
            (Some(hardware), _) if arrows => write!(f, " → {hardware}")?,
            (Some(_), _) => {}
            (None, Some(reason)) => write!(f, " ({reason})")?,
            (None, None) => {}
        }
    }
    Ok(())
}

impl fmt::Display for Detection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Detection::NoDevices => f.write_str("no GPU recorded (no deviceProperties)"),
            Detection::Known { hardware, devices } => {
                write!(f, "{} (", hardware.name)?;
                describe_devices(f, devices, false)?;
                f.write_str(")")
            }
            Detection::Unknown { devices } => {
                f.write_str("unknown GPU: ")?;
                describe_devices(f, devices, true)?;
                f.write_str("; name one with --hardware NAME|SPEC")
            }
            Detection::Mixed { devices } => {
                f.write_str("several different GPUs: ")?;
                describe_devices(f, devices, true)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn device(name: &str, mem: Option<u64>) -> DeviceProperties {
        DeviceProperties {
            name: name.to_string(),
            total_global_mem: mem,
            ..DeviceProperties::default()
        }
    }

    fn detected(name: &str, mem: Option<u64>) -> Option<String> {
        builtin_catalog()
            .detect(&[device(name, mem)])
            .hardware()
            .map(|h| h.name.clone())
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
    }

    #[test]
    fn builtin_catalog_parses_and_is_complete() {
        let catalog = builtin_catalog();
        let required = [
            "MI300X",
            "MI325X",
            "MI355X",
            "MI400",
            "H200 SXM",
            "H100 SXM",
            "H100 PCIe",
            "A100 80GB",
            "A100 40GB",
            "V100 SXM2",
            "L40S",
            "B200",
            "MI250X",
            "MI210",
        ];
        for name in required {
            assert!(catalog.by_name(name).is_some(), "{name} missing");
        }
        for gpu in &catalog.gpus {
            assert!(gpu.hbm_tb_s > 0.0, "{}: bandwidth", gpu.name);
            assert!(gpu.memory_gb > 0.0, "{}: memory", gpu.name);
            assert!(
                !gpu.source.is_empty() && gpu.source != BUILTIN_LABEL,
                "{}: source",
                gpu.name
            );
            assert!(!gpu.vendor.is_empty(), "{}: vendor", gpu.name);
            assert!(!gpu.match_names.is_empty(), "{}: match names", gpu.name);
            // Every part has a 16-bit matrix rate; only Volta lacks bf16.
            if gpu.name.starts_with("V100") {
                assert!(gpu.peak_tflops(ComputeSpec::MatrixBf16).is_none());
                assert!(gpu.peak_tflops(ComputeSpec::MatrixFp16).is_some());
            } else {
                assert!(
                    gpu.peak_tflops.contains_key(&ComputeSpec::MatrixBf16),
                    "{}: bf16",
                    gpu.name
                );
                assert_eq!(
                    gpu.peak_tflops(ComputeSpec::MatrixFp16),
                    gpu.peak_tflops(ComputeSpec::MatrixBf16),
                    "{}: fp16 and bf16 run at the same rate",
                    gpu.name
                );
            }
        }
    }

    #[test]
    fn builtin_figures_follow_the_reference() {
        // docs/REFERENCE.md section 5.
        let catalog = builtin_catalog();
        let table = [
            ("MI300X", 5.3, 708.0, 192.0),
            ("MI325X", 6.0, 708.0, 256.0),
            ("MI355X", 6.5, 850.0, 288.0),
            ("MI400", 7.0, 1000.0, 320.0),
            ("H200 SXM", 4.8, 990.0, 141.0),
            ("H100 SXM", 3.35, 990.0, 80.0),
            ("A100 80GB", 2.0, 312.0, 80.0),
        ];
        for (name, hbm, bf16, memory) in table {
            let gpu = catalog.by_name(name).unwrap();
            assert_eq!(gpu.hbm_tb_s, hbm, "{name}");
            assert_eq!(
                gpu.peak_tflops(ComputeSpec::MatrixBf16),
                Some(bf16),
                "{name}"
            );
            assert_eq!(gpu.memory_gb, memory, "{name}");
        }
    }

    #[test]
    fn detects_real_device_names() {
        let gib = |g: u64| Some(g << 30);
        let cases: &[(&str, Option<u64>, Option<&str>)] = &[
            (
                "NVIDIA H100 80GB HBM3",
                Some(85_018_279_936),
                Some("H100 SXM"),
            ),
            ("NVIDIA H100 PCIe", None, Some("H100 PCIe")),
            ("NVIDIA H100 NVL", None, None),
            ("NVIDIA H100", None, None),
            ("NVIDIA H200", None, Some("H200 SXM")),
            ("NVIDIA H200 NVL", None, Some("H200 NVL")),
            ("NVIDIA GH200 480GB", None, None),
            ("AMD Instinct MI300X", Some(206_141_652_992), Some("MI300X")),
            (
                "AMD Instinct MI300X VF",
                Some(205_571_227_648),
                Some("MI300X"),
            ),
            ("MI300X VF", None, Some("MI300X")),
            ("AMD Instinct MI300A", None, None),
            ("AMD Instinct MI325X", None, Some("MI325X")),
            ("AMD Instinct MI355X", None, Some("MI355X")),
            ("NVIDIA A100-SXM4-80GB", None, Some("A100 80GB")),
            ("NVIDIA A100-SXM4-40GB", None, Some("A100 40GB")),
            ("NVIDIA A100-PCIE-40GB", None, Some("A100 40GB")),
            ("NVIDIA A100 80GB PCIe", None, Some("A100 80GB PCIe")),
            // Meta's SXM4 board, named by its board number: memory decides.
            (
                "NVIDIA A100-PG509-200",
                Some(42_297_524_224),
                Some("A100 40GB"),
            ),
            ("NVIDIA A100-PG509-200", gib(79), Some("A100 80GB")),
            ("NVIDIA A100-PG509-200", None, None),
            ("NVIDIA A100-PG509-200", gib(24), None),
            (
                "Tesla V100-SXM2-16GB",
                Some(16_945_512_448),
                Some("V100 SXM2"),
            ),
            (
                "Tesla V100-DGXS-32GB",
                Some(34_084_028_416),
                Some("V100 SXM2"),
            ),
            ("Tesla V100-PCIE-32GB", None, Some("V100 PCIe")),
            ("Tesla V100S-PCIE-32GB", None, None),
            ("AMD Instinct MI250X", None, Some("MI250X")),
            ("AMD Instinct MI250X/MI250", None, Some("MI250X")),
            ("AMD Instinct MI210", Some(68_702_699_520), Some("MI210")),
            ("AMD Radeon Graphics", Some(68_702_699_520), None),
            ("NVIDIA L40S", None, Some("L40S")),
            ("NVIDIA L40", None, None),
            ("NVIDIA B200", None, Some("B200")),
            ("NVIDIA GB200", None, None),
            ("Quadro GP100", Some(17_069_309_952), None),
            ("", None, None),
            ("   ", None, None),
        ];
        for (name, mem, want) in cases {
            assert_eq!(
                detected(name, *mem).as_deref(),
                *want,
                "{name:?} with {mem:?} bytes"
            );
        }
    }

    #[test]
    fn detection_outcomes() {
        let catalog = builtin_catalog();
        assert_eq!(catalog.detect(&[]), Detection::NoDevices);

        let eight = vec![device("NVIDIA H100 80GB HBM3", None); 8];
        let detection = catalog.detect(&eight);
        let Detection::Known { hardware, devices } = &detection else {
            panic!("{detection:?}");
        };
        assert_eq!(hardware.name, "H100 SXM");
        assert_eq!(devices.len(), 1);
        assert_eq!(devices[0].count, 8);
        assert_eq!(devices[0].pattern.as_deref(), Some("H100 80GB HBM3"));
        assert_eq!(
            detection.to_string(),
            "H100 SXM (\"NVIDIA H100 80GB HBM3\" ×8)"
        );

        // A blank name beside a known one does not make it unknown.
        let detection = catalog.detect(&[device("", None), device("NVIDIA B200", None)]);
        assert_eq!(detection.hardware().map(|h| h.name.as_str()), Some("B200"));
        assert_eq!(detection.devices().len(), 2);
        assert_eq!(detection.devices()[0].reason.as_deref(), Some("blank name"));

        let detection = catalog.detect(&[device("Quadro GP100", None), device("", None)]);
        assert!(
            matches!(detection, Detection::Unknown { .. }),
            "{detection:?}"
        );
        assert!(
            detection
                .to_string()
                .starts_with("unknown GPU: \"Quadro GP100\" ×1")
        );

        let detection = catalog.detect(&[device("", None)]);
        assert!(matches!(detection, Detection::Unknown { .. }));

        let detection = catalog.detect(&[
            device("NVIDIA H100 80GB HBM3", None),
            device("AMD Instinct MI300X", None),
        ]);
        let Detection::Mixed { devices } = &detection else {
            panic!("{detection:?}");
        };
        assert_eq!(devices[1].hardware.as_deref(), Some("MI300X"));
        assert!(detection.hardware().is_none());
        assert_eq!(
            detection.to_string(),
            "several different GPUs: \"NVIDIA H100 80GB HBM3\" ×1 → H100 SXM; \
             \"AMD Instinct MI300X\" ×1 → MI300X"
        );

        let detection = catalog.detect(&[
            device("NVIDIA H100 80GB HBM3", None),
            device("Quadro GP100", None),
        ]);
        assert!(matches!(detection, Detection::Mixed { .. }));
    }

    #[test]
    fn peak_fallbacks() {
        let catalog = builtin_catalog();
        let h100 = catalog.by_name("H100 SXM").unwrap();
        // No fp32 matrix units on NVIDIA: the CUDA-core rate.
        assert_eq!(
            h100.resolve_peak(ComputeSpec::MatrixFp32),
            Some((ComputeSpec::VectorFp32, 67.0))
        );
        assert_eq!(h100.peak_tflops(ComputeSpec::VectorBf16), Some(67.0));
        assert_eq!(h100.peak_tflops(ComputeSpec::MatrixFp4), None);
        let mi250x = catalog.by_name("mi250x").unwrap();
        // No tf32 on CDNA2: fp32 matrix rate.
        assert_eq!(
            mi250x.resolve_peak(ComputeSpec::MatrixTf32),
            Some((ComputeSpec::MatrixFp32, 47.85))
        );
        let l40s = catalog.by_name("L40S").unwrap();
        assert_eq!(l40s.peak_tflops(ComputeSpec::VectorFp64), None);
        assert_eq!(l40s.peak_tflops(ComputeSpec::MatrixFp64), None);
        // fp16 falls back to bf16, never bf16 to fp16.
        let bf16_only = Hardware::from_inline("hbm=1,bf16=100").unwrap();
        assert_eq!(bf16_only.peak_tflops(ComputeSpec::MatrixFp16), Some(100.0));
        let fp16_only = Hardware::from_inline("hbm=1,fp16=100").unwrap();
        assert_eq!(fp16_only.peak_tflops(ComputeSpec::MatrixBf16), None);
    }

    #[test]
    fn ridge_point_and_roofline_time_h100() {
        let h100 = builtin_catalog().by_name("H100 SXM").unwrap().clone();
        // 990e12 FLOP/s / 3.35e12 B/s = 295.52 FLOP/B.
        let ridge = h100.ridge_point(ComputeSpec::MatrixBf16).unwrap();
        assert!(close(ridge, 990.0 / 3.35), "{ridge}");
        assert!((ridge - 295.52).abs() < 0.01);

        // 8192^3 bf16 GEMM: 2·8192³ = 1.0995e12 FLOP, 3·8192²·2 = 402.65 MB.
        // Compute 1.0995e12 / 990e12 s = 1110.62 µs; memory 402.65e6 /
        // 3.35e12 s = 120.2 µs; compute-bound.
        let n = 8192.0_f64;
        let flops = 2.0 * n * n * n;
        let bytes = 3.0 * n * n * 2.0;
        let t = h100
            .roofline_time_us(flops, bytes, ComputeSpec::MatrixBf16)
            .unwrap();
        assert!(close(t, flops / 990e12 * 1e6), "{t}");
        assert!((t - 1110.62).abs() < 0.01, "{t}");

        // Elementwise add of 2^28 bf16 elements: 2^28 FLOP, 3·2^28·2 bytes
        // = 1.61 GB → 480.8 µs memory-bound.
        let elems = (1u64 << 28) as f64;
        let t = h100
            .roofline_time_us(elems, elems * 6.0, ComputeSpec::VectorBf16)
            .unwrap();
        assert!(close(t, elems * 6.0 / 3.35e12 * 1e6), "{t}");
        assert!((t - 480.78).abs() < 0.01, "{t}");

        // No FLOPs (a copy): memory time without a peak.
        assert_eq!(
            h100.roofline_time_us(0.0, 3.35e6, ComputeSpec::MatrixFp4),
            Some(1.0)
        );
        // FLOPs on a unit the part lacks: no roofline.
        assert_eq!(
            h100.roofline_time_us(1.0, 1.0, ComputeSpec::MatrixFp4),
            None
        );
        assert_eq!(
            h100.roofline_time_us(f64::NAN, 1.0, ComputeSpec::MatrixBf16),
            None
        );
        assert_eq!(
            h100.roofline_time_us(-1.0, 1.0, ComputeSpec::MatrixBf16),
            None
        );
    }

    #[test]
    fn by_name_is_forgiving_but_not_ambiguous() {
        let catalog = builtin_catalog();
        assert_eq!(catalog.by_name("h100 sxm").unwrap().name, "H100 SXM");
        assert_eq!(catalog.by_name("H100-SXM").unwrap().name, "H100 SXM");
        assert_eq!(catalog.by_name("h100 80gb hbm3").unwrap().name, "H100 SXM");
        assert_eq!(catalog.by_name("v100-dgxs").unwrap().name, "V100 SXM2");
        // "A100" is a match name of two entries.
        assert!(catalog.by_name("A100").is_none());
        assert!(catalog.by_name("").is_none());
        assert!(catalog.by_name("TPU v5").is_none());
    }

    #[test]
    fn resolve_names_device_names_and_specs() {
        let catalog = builtin_catalog();
        assert_eq!(catalog.resolve("mi300x").unwrap().name, "MI300X");
        assert_eq!(
            catalog.resolve("NVIDIA H100 80GB HBM3").unwrap().name,
            "H100 SXM"
        );
        let error = catalog.resolve("A100").unwrap_err().to_string();
        assert!(
            error.starts_with("unknown GPU `A100`: ambiguous between A100 80GB, A100 40GB"),
            "{error}"
        );
        let error = catalog.resolve("GP100").unwrap_err().to_string();
        assert!(error.contains("known: MI300X, MI325X"), "{error}");

        let custom = catalog
            .resolve("hbm=3.35,bf16=990,fp32=67,name=custom")
            .unwrap();
        assert_eq!(custom.name, "custom");

        let based = catalog.resolve("base=H100 SXM, hbm=3.0").unwrap();
        assert_eq!(based.name, "H100 SXM (custom)");
        assert_eq!(based.hbm_tb_s, 3.0);
        assert_eq!(based.peak_tflops(ComputeSpec::MatrixBf16), Some(990.0));
        assert!(based.source.contains("overridden by inline spec"));
        assert!(based.match_names.is_empty());

        let error = catalog.resolve("base=TPU,hbm=1").unwrap_err();
        assert!(
            matches!(&error, HardwareError::Inline { key: Some(k), .. } if k == "base"),
            "{error}"
        );
    }

    #[test]
    fn inline_spec_parses() {
        let hw = Hardware::from_inline("hbm=3.35,bf16=990,fp32=67,name=custom").unwrap();
        assert_eq!(hw.name, "custom");
        assert_eq!(hw.hbm_tb_s, 3.35);
        assert_eq!(hw.memory_gb, 0.0);
        assert_eq!(hw.peak_tflops(ComputeSpec::MatrixBf16), Some(990.0));
        assert_eq!(hw.peak_tflops(ComputeSpec::VectorFp32), Some(67.0));
        assert!(hw.source.contains("inline spec"));

        let hw = Hardware::from_inline(
            " Name = My GPU , HBM=2 , mem=96, matrix_fp8=1000, Vector_BF16=50, tf32=200, fp64=10, int8=5, fp4=7, fp16=9, vendor=Acme,",
        )
        .unwrap();
        assert_eq!(hw.name, "My GPU");
        assert_eq!(hw.vendor, "Acme");
        assert_eq!(hw.memory_gb, 96.0);
        assert_eq!(hw.peak_tflops(ComputeSpec::MatrixFp8), Some(1000.0));
        assert_eq!(hw.peak_tflops(ComputeSpec::VectorBf16), Some(50.0));
        assert_eq!(hw.peak_tflops(ComputeSpec::MatrixTf32), Some(200.0));
        assert_eq!(hw.peak_tflops(ComputeSpec::VectorFp64), Some(10.0));
        assert_eq!(hw.peak_tflops.len(), 7);
    }

    #[test]
    fn inline_spec_errors_name_the_key() {
        let cases: &[(&str, Option<&str>, &str)] = &[
            ("", None, "empty spec"),
            ("hbm=3,bf16=abc", Some("bf16"), "`abc` is not a number"),
            ("hbm=3,bf16=-1", Some("bf16"), "must be a positive number"),
            ("hbm=3,bf16=inf", Some("bf16"), "must be a positive number"),
            ("hbm=3,bf61=1", Some("bf61"), "unknown key"),
            ("hbm=3,bf16", Some("bf16"), "expected key=value"),
            ("hbm=3,bf16=", Some("bf16"), "no value"),
            ("hbm=3,=5", None, "no key"),
            ("hbm=3,bf16=1,BF16=2", Some("bf16"), "given twice"),
            ("bf16=990", Some("hbm"), "missing"),
            ("hbm=3,name=x", None, "no peak given"),
            ("base=H100 SXM,hbm=3", Some("base"), "Catalog::resolve"),
        ];
        for (spec, key, needle) in cases {
            let error = Hardware::from_inline(spec).unwrap_err();
            let HardwareError::Inline { key: got, .. } = &error else {
                panic!("{spec}: {error:?}");
            };
            assert_eq!(got.as_deref(), *key, "{spec}");
            let text = error.to_string();
            assert!(text.contains(needle), "{spec}: {text}");
            if let Some(key) = key {
                assert!(text.contains(&format!("key `{key}`")), "{spec}: {text}");
            }
        }
    }

    #[test]
    fn merge_overrides_and_adds() {
        let user = Catalog::from_yaml(
            r#"
gpus:
  - name: h100-sxm   # same entry, other spelling: replaces it
    vendor: NVIDIA
    match_names: ["H100 80GB HBM3"]
    memory_gb: 80
    hbm_tb_s: 3.0
    peak_tflops: { matrix_bf16: 790 }
  - name: My H100 NVL
    vendor: NVIDIA
    match_names: ["H100 NVL"]
    memory_gb: 94
    hbm_tb_s: 3.9
    peak_tflops: { matrix_bf16: 835 }
  - name: Lab A100
    vendor: NVIDIA
    match_names: ["A100"]
    memory_gb: 40
    hbm_tb_s: 1.5
    peak_tflops: { matrix_bf16: 300 }
"#,
            "my.yaml",
        )
        .unwrap();
        assert_eq!(user.gpus[0].source, "my.yaml");
        let builtin = builtin_catalog();
        let count = builtin.gpus.len();
        let merged = builtin.merged_with(user);
        assert_eq!(merged.gpus.len(), count + 2);
        let h100 = merged.by_name("H100 SXM").unwrap();
        assert_eq!(h100.name, "h100-sxm");
        assert_eq!(h100.hbm_tb_s, 3.0);
        // Replaced in place: the order is kept.
        let position = merged.gpus.iter().position(|g| g.name == "h100-sxm");
        let original = builtin_catalog()
            .gpus
            .iter()
            .position(|g| g.name == "H100 SXM");
        assert_eq!(position, original);
        let detect = |name: &str, mem: Option<u64>| {
            merged
                .detect(&[device(name, mem)])
                .hardware()
                .map(|h| h.name.clone())
        };
        assert_eq!(
            detect("NVIDIA H100 80GB HBM3", None).as_deref(),
            Some("h100-sxm")
        );
        assert_eq!(
            detect("NVIDIA H100 NVL", None).as_deref(),
            Some("My H100 NVL")
        );
        // The user's "A100" takes the bare name from both built-in A100s...
        assert_eq!(
            detect("NVIDIA A100-PG509-200", None).as_deref(),
            Some("Lab A100")
        );
        // ...but the specific built-in patterns still win on word count.
        assert_eq!(
            detect("NVIDIA A100-SXM4-80GB", None).as_deref(),
            Some("A100 80GB")
        );
    }

    #[test]
    fn yaml_errors_give_file_line_and_column() {
        let text =
            "gpus:\n  - name: X\n    vendor: Y\n    memory_gb: 1\n    hbm_tb_s: 1\n    bogus: 2\n";
        let error = Catalog::from_yaml(text, "my.yaml").unwrap_err();
        let HardwareError::Yaml { location, .. } = &error else {
            panic!("{error:?}");
        };
        assert_eq!(*location, Some((6, 5)));
        let message = error.to_string();
        assert!(message.starts_with("my.yaml:6:5: "), "{message}");
        assert!(message.contains("bogus"), "{message}");
        assert!(!message.contains("at line"), "{message}");

        let error = Catalog::from_yaml("gpus: [\n  {name: X", "x.yaml").unwrap_err();
        assert!(error.to_string().starts_with("x.yaml:"), "{error}");
        assert!(matches!(
            error,
            HardwareError::Yaml {
                location: Some(_),
                ..
            }
        ));

        let bad_spec = "gpus:\n  - name: X\n    vendor: Y\n    memory_gb: 1\n    hbm_tb_s: 1\n    peak_tflops:\n      matrix_bf17: 3\n";
        let error = Catalog::from_yaml(bad_spec, "s.yaml")
            .unwrap_err()
            .to_string();
        assert!(error.starts_with("s.yaml:7:"), "{error}");
        assert!(error.contains("matrix_bf17"), "{error}");
    }

    #[test]
    fn invalid_entries_are_named() {
        let entry = |body: &str| format!("gpus:\n  - name: X\n    vendor: Y\n{body}");
        let cases = [
            (entry("    memory_gb: 1\n    hbm_tb_s: 0\n"), "`hbm_tb_s`"),
            (entry("    memory_gb: -1\n    hbm_tb_s: 1\n"), "`memory_gb`"),
            (
                entry("    memory_gb: 1\n    hbm_tb_s: 1\n    peak_tflops: {matrix_bf16: 0}\n"),
                "`peak_tflops.matrix_bf16`",
            ),
            (
                entry("    memory_gb: 1\n    hbm_tb_s: 1\n    match_names: [\"--\"]\n"),
                "match name",
            ),
        ];
        for (text, needle) in cases {
            let error = Catalog::from_yaml(&text, "f.yaml").unwrap_err().to_string();
            assert!(error.starts_with("f.yaml: GPU `X`: "), "{error}");
            assert!(error.contains(needle), "{error}");
        }
        let twice = "gpus:\n  - {name: X, vendor: V, memory_gb: 1, hbm_tb_s: 1}\n  - {name: x, vendor: V, memory_gb: 1, hbm_tb_s: 1}\n";
        let error = Catalog::from_yaml(twice, "t.yaml").unwrap_err().to_string();
        assert_eq!(error, "t.yaml: GPU `x`: the name appears twice");
        let blank = "gpus:\n  - {name: ' ', vendor: V, memory_gb: 1, hbm_tb_s: 1}\n";
        let error = Catalog::from_yaml(blank, "b.yaml").unwrap_err().to_string();
        assert_eq!(error, "b.yaml: GPU `#1`: `name` is blank");
    }

    #[test]
    fn load_file_reads_and_reports_missing_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gpus.yaml");
        std::fs::write(
            &path,
            "gpus:\n  - {name: X, vendor: V, memory_gb: 1, hbm_tb_s: 2, peak_tflops: {vector_fp32: 3}}\n",
        )
        .unwrap();
        let catalog = Catalog::load_file(&path).unwrap();
        assert_eq!(catalog.names(), vec!["X"]);
        assert_eq!(catalog.gpus[0].source, path.display().to_string());
        let error = Catalog::load_file(&dir.path().join("none.yaml")).unwrap_err();
        assert!(
            error.to_string().contains("none.yaml: cannot read"),
            "{error}"
        );
    }

    #[test]
    fn compute_spec_names_round_trip() {
        for spec in ComputeSpec::ALL {
            assert_eq!(ComputeSpec::from_name(spec.as_str()), Some(spec));
            assert_eq!(spec.fallbacks()[0], spec);
        }
        assert_eq!(
            ComputeSpec::from_name("MATRIX_BF16"),
            Some(ComputeSpec::MatrixBf16)
        );
        assert_eq!(ComputeSpec::from_name("bf16"), None);
    }
}
