//! tracegate: PyTorch profiler traces in, a performance verdict out.
//!
//! The pipeline is the architecture (docs/ARCHITECTURE.md):
//! load ([`trace`]) → link ([`tree`]) → analyse ([`timeline`], [`ops`]) → render ([`report`]).
//! Every stage is a plain function of its inputs; only loading reads files.

pub mod error;
pub mod trace;
