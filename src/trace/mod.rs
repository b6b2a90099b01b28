//! Load and link: PyTorch profiler (Kineto) traces into a compact event
//! model ([`model`]), then linked into call trees ([`link`]).

mod build;
pub mod capture_folder;
pub mod error;
mod fast;
mod inflate;
pub mod link;
mod load;
pub mod model;
mod raw;
mod window;

pub use load::{
    DEFAULT_MAX_EVENT_BYTES, LoadLimits, check_file_type, load_file, load_file_with, load_reader,
};
pub use model::*;
