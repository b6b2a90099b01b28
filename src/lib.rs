//! tracegate: PyTorch profiler traces in, a performance verdict out.
//!
//! The folders are the pipeline (docs/ARCHITECTURE.md): two chains of plain
//! functions share them.
//!
//! - Analyse one trace: load and link ([`trace`]) → analyse ([`analysis`]) →
//!   render ([`render`]).
//! - Gate two profiles: snapshot, compare, judge ([`gate`]) → render
//!   ([`render`]) → publish ([`publish`]).
//!
//! Only loading reads files, only the binary writes them, and the library
//! never prints. [`echo`] is the one leaf every stage shares: input text made
//! safe to quote in a terminal or a CI log.

// The library never prints: output flows back to the binary as values.
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod analysis;
pub mod driver;
pub mod echo;
pub mod gate;
pub mod history;
pub mod publish;
pub mod render;
pub mod trace;
