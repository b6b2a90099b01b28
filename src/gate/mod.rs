//! The gate: a candidate profile against its baseline. Snapshot (the stored
//! form) → compare (matched rows with intervals) → judge under a policy →
//! the verdict; rank sets' collectives judged across ranks (`collectives`).

pub mod collectives;
pub mod compare;
pub mod judge;
pub mod policy;
pub mod snapshot;
pub mod stats;
pub mod verdict;
