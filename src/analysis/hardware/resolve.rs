//! What `--hardware NAME|SPEC` means: a catalog entry by name or device
//! name, or an inline spec, optionally based on a catalog entry.

use super::catalog::{Catalog, words};
use super::error::{HardwareError, did_you_mean};
use super::gpu::Hardware;
use super::inline::{apply_pairs, inline_error, parse_pairs};

/// The most names a "did you mean" offers.
const MAX_SUGGESTIONS: usize = 4;

/// How alike (1 − edit distance / length) a name must be to be offered.
const MIN_SIMILARITY: f64 = 0.6;

/// How much less alike than the best a name may be and still be offered.
const RUNNERS_UP: f64 = 0.1;

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
                    "no catalog entry `{base}`; known: {}{}",
                    self.names().join(", "),
                    did_you_mean(&self.suggestions(base)),
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
        // Measured figures were measured on the catalog part, not on one
        // with overridden figures.
        if pairs
            .iter()
            .any(|(key, _)| !matches!(key.as_str(), "base" | "name" | "vendor"))
        {
            hardware.achievable = None;
        }
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
            suggestions: self.suggestions(name),
        }
    }

    /// Canonical names close to `name`, best first, at most
    /// [`MAX_SUGGESTIONS`]: those containing it (letters and digits
    /// compared, case ignored: `H100` → `H100 SXM`, `H100 PCIe`), in catalog
    /// order; else the closest by edit distance (`MI30X` → `MI300X`), if
    /// close at all.
    pub fn suggestions(&self, name: &str) -> Vec<String> {
        let query = words(name).concat();
        if query.is_empty() {
            return Vec::new();
        }
        let key = |hardware: &Hardware| words(&hardware.name).concat();
        let containing: Vec<String> = self
            .gpus
            .iter()
            .filter(|g| key(g).contains(&query))
            .map(|g| g.name.clone())
            .take(MAX_SUGGESTIONS)
            .collect();
        if !containing.is_empty() {
            return containing;
        }
        let mut close: Vec<(f64, &str)> = self
            .gpus
            .iter()
            .map(|g| {
                (
                    strsim::normalized_damerau_levenshtein(&query, &key(g)),
                    g.name.as_str(),
                )
            })
            .filter(|&(similarity, _)| similarity >= MIN_SIMILARITY)
            .collect();
        close.sort_by(|a, b| b.0.total_cmp(&a.0));
        let best = close.first().map_or(1.0, |&(similarity, _)| similarity);
        close
            .into_iter()
            .take_while(|&(similarity, _)| similarity >= best - RUNNERS_UP)
            .take(MAX_SUGGESTIONS)
            .map(|(_, name)| name.to_string())
            .collect()
    }
}
