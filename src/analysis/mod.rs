//! Analyse: a linked trace into a [`profile::Profile`] — where GPU time goes,
//! per timeline bucket, step, op, unique argument set and kernel, with
//! FLOPs/bytes models, efficiency against the hardware's roofline and a
//! diagnosis.
//!
//! [`analyse`] orchestrates; each table is built by the module named for it
//! (`op_tables`, `kernels`, `idle`, `sync`, `environment`, `anomalies`, and
//! `graph` for the work CUDA/HIP graphs replay, `phase` for the prefill/decode
//! split of inference steps) from the GPU work `gpu_work`
//! collects once. `profile` holds only the data.

pub mod analyse;
mod anomalies;
pub mod comm;
pub mod diagnose;
mod environment;
mod gpu_work;
pub mod graph;
mod groups;
pub mod hardware;
mod idle;
mod kernels;
mod op_tables;
pub mod ops;
pub mod perf;
pub mod perf_model;
mod phase;
pub mod profile;
pub mod ranks;
mod sync;
#[cfg(test)]
mod tests;
pub mod timeline;
