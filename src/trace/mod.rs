//! Load and link: PyTorch profiler (Kineto) traces into a compact event
//! model ([`model`]), then linked into call trees ([`link`]).

pub mod error;
pub mod link;
mod load;
pub mod model;
mod raw;

pub use load::{load_file, load_reader};
pub use model::*;
