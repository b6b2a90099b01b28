//! Kernel families as stored: every launch of one kernel (or copy, or set)
//! name summed over all the rows that launch it (1.4). A kernel spread over
//! many rows — one GEMM over every shape of a backward pass, a norm kernel
//! in every layer of a graph — adds little to each row when it slows, but
//! its total is judged as one (`gate/compare/families.rs`).
//!
//! The launches come from the rows' direct work (each launch is in one
//! row), whole-graph rows left out (their kernels are in the graph's other
//! rows). Only families that rows share are kept: a family in one row is
//! that row's (or its kernel part's) to judge. A GPU-only trace's rows are
//! its kernel names already, so it has none.

use std::collections::BTreeMap;

use super::bounds::MAX_KERNELS;
use crate::analysis::profile::{GraphRole, UniqueArgs};

/// The smallest share of all launches' time, %, a stored family holds:
/// below it, a ×2 slowdown adds less than any sensible impact minimum.
const MIN_FAMILY_PERCENT: f64 = 0.1;

/// The kernel families of `rows` (op rows, then graph rows), most time
/// first, at most [`MAX_KERNELS`]: each name with its launch durations, in
/// an order that does not depend on time: by row key (name, arguments,
/// graph place) and stream, each row's launches in the trace's order, so
/// the i-th launch of two runs is the same launch.
pub(super) fn kernel_families<'a>(
    rows: impl Iterator<Item = &'a UniqueArgs>,
) -> Vec<(String, Vec<f64>)> {
    // Per kernel name: (row order key, launches) per row launching it.
    let mut families: BTreeMap<&str, Vec<(String, &[f64])>> = BTreeMap::new();
    for row in rows.filter(|r| r.graph.as_ref().is_none_or(|g| g.role != GraphRole::Graph)) {
        let place = row.graph.as_ref().map_or(String::new(), |g| g.key());
        for kernel in &row.kernels {
            let order = format!(
                "{}\u{1}{}\u{1}{}\u{1}{}\u{1}{}\u{1}{place}\u{1}{:?}",
                row.name,
                row.input_dims,
                row.input_type,
                row.input_strides,
                row.concrete_inputs,
                kernel.stream
            );
            families
                .entry(kernel.name.as_str())
                .or_default()
                .push((order, &kernel.launches_us));
        }
    }
    let all_us: f64 = families
        .values()
        .flatten()
        .map(|(_, launches)| launches.iter().sum::<f64>())
        .sum();
    let mut kept: Vec<(String, Vec<f64>)> = families
        .into_iter()
        .filter(|(_, parts)| parts.len() > 1)
        .map(|(name, mut parts)| {
            parts.sort_by(|a, b| a.0.cmp(&b.0));
            let launches: Vec<f64> = parts
                .iter()
                .flat_map(|(_, launches)| launches.iter().copied())
                .collect();
            (name.to_string(), launches)
        })
        .filter(|(_, launches)| launches.iter().sum::<f64>() * 100.0 >= MIN_FAMILY_PERCENT * all_us)
        .collect();
    let total = |launches: &[f64]| launches.iter().sum::<f64>();
    kept.sort_by(|a, b| total(&b.1).total_cmp(&total(&a.1)).then(a.0.cmp(&b.0)));
    kept.truncate(MAX_KERNELS);
    kept
}
