//! Which link a rank set's bus bandwidth is read against: the intra-node
//! link of the GPU every rank ran on (the catalog's `link`, per direction),
//! with the network port beside it; when some rank's GPU is unknown, the
//! ranks ran on different GPUs, or the catalog lists no link for theirs,
//! none, and the note says which of those it was.

use serde::Serialize;

use crate::analysis::hardware::{Hardware, Link};

/// The link a rank set's bus bandwidth is a percentage of.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LinkUsed {
    /// The GPU every rank ran on, when all ran on one known GPU.
    pub hardware: Option<String>,
    /// Its intra-node link: the peak the percentages are of.
    pub link: Option<Link>,
    /// Its network port per GPU, when the catalog has one: the bound for a
    /// collective that spans nodes (the trace does not say whether one
    /// did).
    pub network: Option<Link>,
    /// One line saying which figure was used, or why none was.
    pub note: String,
}

/// The link for ranks that ran on these GPUs (`None`: unknown), in rank
/// order.
pub fn choose<'a>(ranks: impl IntoIterator<Item = (u32, Option<&'a Hardware>)>) -> LinkUsed {
    let ranks: Vec<(u32, Option<&Hardware>)> = ranks.into_iter().collect();
    let unknown: Vec<String> = ranks
        .iter()
        .filter(|(_, hardware)| hardware.is_none())
        .map(|(rank, _)| rank.to_string())
        .collect();
    let none = |note: String| LinkUsed {
        note,
        ..LinkUsed::default()
    };
    if ranks.is_empty() {
        return none("no ranks".to_string());
    }
    if !unknown.is_empty() {
        let note = if unknown.len() == ranks.len() {
            "no link percentage: no rank's GPU is in the hardware catalog".to_string()
        } else {
            format!(
                "no link percentage: the GPU of rank {} is not in the hardware catalog",
                unknown.join(", ")
            )
        };
        return none(note);
    }
    let first = ranks[0].1.expect("every rank's GPU is known");
    let mut distinct: Vec<&str> = ranks
        .iter()
        .filter_map(|(_, hardware)| hardware.map(|h| h.name.as_str()))
        .collect();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.len() > 1 {
        return none(format!(
            "no link percentage: the ranks ran on different GPUs ({})",
            distinct.join(", ")
        ));
    }
    let Some(link) = &first.link else {
        return LinkUsed {
            hardware: Some(first.name.clone()),
            network: first.network.clone(),
            ..none(format!(
                "no link percentage: the hardware catalog lists no intra-node link for {}",
                first.name
            ))
        };
    };
    LinkUsed {
        hardware: Some(first.name.clone()),
        link: Some(link.clone()),
        network: first.network.clone(),
        note: format!(
            "% of link: bus bandwidth over {}'s {} peak, {} GB/s per direction",
            first.name,
            link.name,
            trimmed(link.gb_s)
        ),
    }
}

/// A figure without trailing zeros: `450`, `537.6`.
fn trimmed(value: f64) -> String {
    let text = format!("{value:.1}");
    text.strip_suffix(".0").unwrap_or(&text).to_string()
}
