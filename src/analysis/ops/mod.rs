//! Op-level building blocks: categories, argument formatting, statistics.

pub mod args;
pub mod category;
pub mod stats;
