//! tracegate: PyTorch profiler traces in, a performance verdict out.
//!
//! The pipeline is the architecture (docs/ARCHITECTURE.md):
//! load ([`trace`]) → link ([`tree`]) → analyse ([`analyse`], with [`timeline`]
//! and [`ops`]) → render ([`report`]). Every stage is a plain function of its
//! inputs; only loading reads files, and the library never prints.

// The library never prints: output flows back to the binary as values.
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod analyse;
pub mod compare;
pub mod diagnose;
pub mod error;
pub mod github;
pub mod hardware;
pub mod judge;
pub mod ops;
pub mod perf;
pub mod perf_model;
pub mod policy;
pub mod replay;
pub mod report;
pub mod snapshot;
pub mod stats;
pub mod timeline;
pub mod trace;
pub mod tree;
pub mod verdict;
