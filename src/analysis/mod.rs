//! Analyse: a linked trace into a [`profile::Profile`] — where GPU time goes,
//! per timeline bucket, step, op, unique argument set and kernel, with
//! FLOPs/bytes models, efficiency against the hardware's roofline and a
//! diagnosis.

pub mod diagnose;
pub mod hardware;
pub mod ops;
pub mod perf;
pub mod perf_model;
pub mod profile;
pub mod timeline;
