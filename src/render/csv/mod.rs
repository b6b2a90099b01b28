//! TraceLens-compatible CSV files: the same file names, column names, units
//! and number formatting (Python's float repr), so scripts written against
//! TraceLens output keep working. Deliberate differences are listed in
//! docs/TRACELENS.md.

mod cells;
pub mod perf;
pub mod ranks;
mod tables;

use crate::analysis::profile::Profile;
use tables::{
    gpu_timeline, kernel_summary, ops_summary, ops_summary_by_category, ops_unique_args,
    short_kernel_histogram, short_kernels_summary,
};

/// Every CSV file as (file name, contents). GPU-only traces have no CPU ops,
/// so, like TraceLens, they get no op tables.
pub fn render_all(profile: &Profile) -> Vec<(&'static str, String)> {
    let mut files = vec![("gpu_timeline.csv", gpu_timeline(profile))];
    if !profile.ops.is_empty() {
        files.push(("ops_summary.csv", ops_summary(profile)));
        files.push((
            "ops_summary_by_category.csv",
            ops_summary_by_category(profile),
        ));
        files.push(("ops_unique_args.csv", ops_unique_args(profile)));
    }
    files.push(("kernel_summary.csv", kernel_summary(profile)));
    if !profile.ops.is_empty() {
        files.extend(perf::render_all(&profile.perf));
    }
    files.push(("short_kernels_summary.csv", short_kernels_summary(profile)));
    files.push((
        "short_kernel_histogram.csv",
        short_kernel_histogram(profile),
    ));
    files
}
