//! Diagnose: what limits the workload, with the evidence in numbers — the
//! primary bottleneck, prioritised ops with their two improvement paths and
//! impact projections, and the patterns the analysis guides name.

pub mod patterns;
