//! Op-level building blocks: categories, argument formatting, statistics,
//! grouping by interned keys.

pub mod args;
pub mod category;
pub mod slots;
pub mod stats;
