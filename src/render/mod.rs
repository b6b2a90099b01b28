//! Render: a [`Profile`](crate::analysis::profile::Profile) as terminal text, JSON,
//! Markdown or TraceLens-compatible CSV. Renderers return strings; the binary
//! decides where they go.

pub mod actions;
pub mod analysis;
pub mod csv;
pub mod facts;
pub mod fit;
pub mod gate;
pub mod hardware_table;
pub mod history;
pub mod json;
pub mod markdown;
pub mod ranks;
pub mod terminal;
pub mod text;
