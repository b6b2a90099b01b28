//! Load: PyTorch profiler (Kineto) traces into a compact event model.

mod load;
pub mod model;
mod raw;

pub use load::{load_file, load_reader};
pub use model::*;
