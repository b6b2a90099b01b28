//! What `--hardware NAME|SPEC` means: a catalog entry by name or device
//! name, or an inline spec, optionally based on a catalog entry.

use super::catalog::{Catalog, words};
use super::error::HardwareError;
use super::gpu::Hardware;
use super::inline::{apply_pairs, inline_error, parse_pairs};

impl Catalog {
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
