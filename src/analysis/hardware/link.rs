//! A GPU's links to its peers: the intra-node fabric (NVLink, Infinity
//! Fabric) and, where the vendor's reference system fixes one, the network
//! port each GPU has. A rank set's bus bandwidth is read against these
//! (`analysis::ranks`): nccl-tests' bus bandwidth is what one rank's link
//! carries in one direction, so the peak it compares with is the link's
//! per-direction figure, not the bidirectional total vendors quote.

use serde::{Deserialize, Serialize};

/// One link of a GPU to its peers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Link {
    /// What it is: `NVLink 4`, `Infinity Fabric (7 links)`, `ConnectX-7 NDR`.
    pub name: String,
    /// Peak bandwidth in one direction, GB/s (1e9 bytes/s): half the
    /// bidirectional figure datasheets give for NVLink and Infinity Fabric,
    /// the port speed over 8 for a NIC quoted in Gb/s.
    pub gb_s: f64,
    /// Where the figure comes from (a vendor datasheet citation).
    #[serde(default)]
    pub source: String,
}

impl Link {
    /// Why the link is unusable (a blank name, a bandwidth that is not a
    /// positive number), for the catalog's validation; `None` when usable.
    pub(super) fn problem(&self, key: &str) -> Option<String> {
        if self.name.trim().is_empty() {
            return Some(format!("`{key}.name` is blank"));
        }
        if !(self.gb_s.is_finite() && self.gb_s > 0.0) {
            return Some(format!(
                "`{key}.gb_s` must be a positive number of GB/s per direction, not {}",
                self.gb_s
            ));
        }
        None
    }

    /// `figure` as a percentage of this link's per-direction peak.
    pub fn percent_of(&self, gb_s: f64) -> f64 {
        gb_s / self.gb_s * 100.0
    }
}
