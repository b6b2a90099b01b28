//! The catalog: its YAML format, the built-in catalog, user files layered on
//! top, and lookup by name.

use std::path::Path;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use super::error::HardwareError;
use super::gpu::Hardware;

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
    "/hardware/catalog.yaml"
));

/// The label the built-in catalog's errors and defaults carry.
pub const BUILTIN_LABEL: &str = "hardware/catalog.yaml (built in)";

/// The built-in catalog (`hardware/catalog.yaml`), parsed once.
pub fn builtin_catalog() -> Catalog {
    static BUILTIN: OnceLock<Catalog> = OnceLock::new();
    BUILTIN
        .get_or_init(|| {
            Catalog::from_yaml(BUILTIN_YAML, BUILTIN_LABEL)
                .expect("the built-in hardware catalog parses (a unit test checks it)")
        })
        .clone()
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
            for link in [&mut hardware.link, &mut hardware.network]
                .into_iter()
                .flatten()
            {
                if link.source.trim().is_empty() {
                    link.source = source_label.to_string();
                }
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

    /// The canonical names, in catalog order.
    pub fn names(&self) -> Vec<&str> {
        self.gpus.iter().map(|g| g.name.as_str()).collect()
    }
}

impl Hardware {
    /// Checks a parsed entry (the `index`th of `file`) for unusable values.
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
        let bandwidth = |key: &str, value: f64| {
            super::out_of_bounds(value, super::BANDWIDTH_TB_S_RANGE, "TB/s")
                .map_or(Ok(()), |m| Err(invalid(format!("`{key}` {m}"))))
        };
        let peak = |key: String, value: f64| {
            super::out_of_bounds(value, super::PEAK_TFLOPS_RANGE, "TFLOP/s")
                .map_or(Ok(()), |m| Err(invalid(format!("`{key}` {m}"))))
        };
        bandwidth("hbm_tb_s", self.hbm_tb_s)?;
        if !(self.memory_gb.is_finite() && self.memory_gb >= 0.0) {
            return Err(invalid(format!(
                "`memory_gb` must be a number of GB (0 for unknown), not {}",
                self.memory_gb
            )));
        }
        for (spec, tflops) in &self.peak_tflops {
            peak(format!("peak_tflops.{spec}"), *tflops)?;
        }
        if let Some(measured) = &self.achievable {
            for (spec, tflops) in &measured.peak_tflops {
                peak(format!("achievable.peak_tflops.{spec}"), *tflops)?;
            }
            if let Some(value) = measured.hbm_tb_s {
                bandwidth("achievable.hbm_tb_s", value)?;
            }
        }
        for (key, link) in [("link", &self.link), ("network", &self.network)] {
            if let Some(problem) = link.as_ref().and_then(|l| l.problem(key)) {
                return Err(invalid(problem));
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

/// Upper-cased ASCII words of `text`, split at anything else.
pub(super) fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_ascii_uppercase)
        .collect()
}

/// A [`HardwareError::Yaml`] from a parser error, its location given once, in front.
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
