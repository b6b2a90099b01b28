//! History: every workload's snapshots over commits, so the gate can measure
//! noise from earlier runs, catch slow drift across merges, find the commit
//! where a series stepped, and learn the ratio between two platforms.
//!
//! A stage beside [`crate::gate`]: it reads and writes snapshots. The store
//! ([`entry`] is what one run records) is the one place here that touches
//! files; everything else is a plain function of entries and snapshots.

pub mod changepoint;
pub mod dashboard;
pub mod drift;
pub mod entry;
pub mod ratios;
pub mod report;
pub mod series;
pub mod store;
pub mod window;
