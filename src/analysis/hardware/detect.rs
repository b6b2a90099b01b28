//! Detection: which catalog entry a trace's GPUs are, from the names and
//! memory sizes in its `deviceProperties`, by the rules in the
//! [module docs](super).

use std::fmt;

use serde::Serialize;

use super::catalog::{Catalog, words};
use super::gpu::Hardware;
use crate::trace::DeviceProperties;

/// Whether `needle` occurs as consecutive words of `haystack`.
fn contains_words(haystack: &[String], needle: &[String]) -> bool {
    !needle.is_empty()
        && needle.len() <= haystack.len()
        && haystack
            .windows(needle.len())
            .any(|window| window == needle)
}

/// How well a device name matched: the entry, the pattern, or why none.
struct Identified {
    index: Option<usize>,
    pattern: Option<String>,
    reason: Option<String>,
}

impl Catalog {
    /// The entry a `deviceProperties` name (with its `totalGlobalMem` in
    /// bytes, when recorded) is, by the rules in the [module docs](super).
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
                hardware: Box::new(self.gpus[*only].clone()),
                devices: matches,
            },
            _ => Detection::Mixed { devices: matches },
        }
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
        /// The entry (boxed: an entry is far larger than the other
        /// variants).
        hardware: Box<Hardware>,
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
            Detection::Known { hardware, .. } => Some(hardware.as_ref()),
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
