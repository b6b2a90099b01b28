//! The CSVs of the profile's own tables, as TraceLens writes them: the GPU
//! timeline, the op summaries (by name, by category, by unique arguments),
//! the kernel summary and the short kernels.

use super::cells::{Cell, KernelEntry, Table, kernel_details_cell, trunc_kernel_details_cell};
use crate::analysis::ops::args::{python_float, write_python_str};
use crate::analysis::profile::{KernelDetail, Profile};
use crate::render::text::percent;

pub(super) fn gpu_timeline(profile: &Profile) -> String {
    let mut table = Table::new(&["type", "time ms", "percent"]);
    let total = profile.timeline.total_time;
    for (name, us) in profile.timeline.rows() {
        table.row([
            Cell::Text(name),
            Cell::Float(us / 1000.0),
            Cell::Float(percent(us, total)),
        ]);
    }
    table.text
}

/// (percentage, cumulative percentage) for each value of a descending list.
fn shares(values: impl Iterator<Item = f64> + Clone) -> Vec<(f64, f64)> {
    let total: f64 = values.clone().fold(0.0, |total, v| total + v);
    let mut cumulative = 0.0;
    values
        .map(|v| {
            let share = percent(v, total);
            cumulative += share;
            (share, cumulative)
        })
        .collect()
}

fn python_list_of_strings(items: impl Iterator<Item = String>) -> String {
    let mut out = String::from("[");
    for (i, item) in items.enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_python_str(&item, &mut out);
    }
    out.push(']');
    out
}

pub(super) fn ops_summary(profile: &Profile) -> String {
    let mut table = Table::new(&[
        "name",
        "total_direct_kernel_time_sum",
        "total_subtree_kernel_time_sum",
        "total_direct_kernel_time_ms",
        "total_subtree_kernel_time_ms",
        "Count",
        "Categories",
        "Percentage (%)",
        "Cumulative Percentage (%)",
    ]);
    let shares = shares(profile.ops.iter().map(|o| o.total_direct_kernel_time_us));
    for (op, (share, cumulative)) in profile.ops.iter().zip(shares) {
        let categories = python_list_of_strings(op.categories.iter().map(|c| c.to_string()));
        table.row([
            Cell::Text(&op.name),
            Cell::Float(op.total_direct_kernel_time_us),
            Cell::Float(op.total_subtree_kernel_time_us),
            Cell::Float(op.total_direct_kernel_time_us / 1000.0),
            Cell::Float(op.total_subtree_kernel_time_us / 1000.0),
            Cell::Int(op.count),
            Cell::Text(&categories),
            Cell::Float(share),
            Cell::Float(cumulative),
        ]);
    }
    table.text
}

pub(super) fn ops_summary_by_category(profile: &Profile) -> String {
    let mut table = Table::new(&[
        "op category",
        "Count",
        "total_direct_kernel_time_ms",
        "Percentage (%)",
        "Cumulative Percentage (%)",
    ]);
    let shares = shares(
        profile
            .categories
            .iter()
            .map(|c| c.total_direct_kernel_time_us),
    );
    for (category, (share, cumulative)) in profile.categories.iter().zip(shares) {
        table.row([
            Cell::Text(category.category.as_str()),
            Cell::Int(category.count),
            Cell::Float(category.total_direct_kernel_time_us / 1000.0),
            Cell::Float(share),
            Cell::Float(cumulative),
        ]);
    }
    table.text
}

/// Our `kernel_details_summary`: one entry per (kernel name, stream), with
/// statistics over all invocations (docs/TRACELENS.md).
fn kernel_details_repr(kernels: &[KernelDetail]) -> String {
    let entries = kernels.iter().map(|kernel| {
        let d = &kernel.duration;
        KernelEntry {
            name: &kernel.name,
            stream: kernel.stream,
            count: d.count,
            total: d.sum,
            mean: d.mean,
            median: d.median,
            std: d.std.unwrap_or(0.0),
            min: d.min,
            max: d.max,
        }
    });
    kernel_details_cell(entries, python_float)
}

/// Our `trunc_kernel_details`: the mean rounded half away from zero.
fn trunc_kernel_details_repr(kernels: &[KernelDetail]) -> String {
    let entries = kernels.iter().map(|k| {
        (
            k.name.as_str(),
            k.stream,
            (k.duration.mean * 100.0).round() / 100.0,
        )
    });
    trunc_kernel_details_cell(entries, python_float)
}

pub(super) fn ops_unique_args(profile: &Profile) -> String {
    let mut table = Table::new(&[
        "name",
        "op category",
        "process_name",
        "process_label",
        "thread_name",
        "Input Dims",
        "Input type",
        "Input Strides",
        "Concrete Inputs",
        "operation_count",
        "total_direct_kernel_time_mean",
        "total_subtree_kernel_time_mean",
        "total_direct_kernel_time_median",
        "total_subtree_kernel_time_median",
        "total_direct_kernel_time_std",
        "total_subtree_kernel_time_std",
        "total_direct_kernel_time_min",
        "total_subtree_kernel_time_min",
        "total_direct_kernel_time_max",
        "total_subtree_kernel_time_max",
        "total_direct_kernel_time_sum",
        "total_subtree_kernel_time_sum",
        "ex_UID",
        "kernel_details_summary",
        "trunc_kernel_details",
        "Percentage (%)",
        "Cumulative Percentage (%)",
    ]);
    let shares = shares(profile.unique_args.iter().map(|r| r.direct.sum));
    for (row, (share, cumulative)) in profile.unique_args.iter().zip(shares) {
        let details = kernel_details_repr(&row.kernels);
        let trunc = trunc_kernel_details_repr(&row.kernels);
        let (d, s) = (&row.direct, &row.subtree);
        table.row([
            Cell::Text(&row.name),
            Cell::Text(row.category.as_str()),
            Cell::Text(&row.process_name),
            Cell::Text(&row.process_label),
            Cell::Text(&row.thread_name),
            Cell::Text(&row.input_dims),
            Cell::Text(&row.input_type),
            Cell::Text(&row.input_strides),
            Cell::Text(&row.concrete_inputs),
            Cell::Int(d.count),
            Cell::Float(d.mean),
            Cell::Float(s.mean),
            Cell::Float(d.median),
            Cell::Float(s.median),
            Cell::OptFloat(d.std),
            Cell::OptFloat(s.std),
            Cell::Float(d.min),
            Cell::Float(s.min),
            Cell::Float(d.max),
            Cell::Float(s.max),
            Cell::Float(d.sum),
            Cell::Float(s.sum),
            Cell::Int(u64::from(row.example_event)),
            Cell::Text(&details),
            Cell::Text(&trunc),
            Cell::Float(share),
            Cell::Float(cumulative),
        ]);
    }
    table.text
}

pub(super) fn kernel_summary(profile: &Profile) -> String {
    // GPU-only traces have no CPU ops, and TraceLens then drops the column.
    let with_parent = !profile.ops.is_empty();
    let parent_column: &[&str] = if with_parent { &["Parent cpu_op"] } else { &[] };
    let header: Vec<&str> = ["Parent op category"]
        .iter()
        .chain(parent_column)
        .chain(&[
            "Kernel name",
            "Kernel stream",
            "Kernel duration (µs)_sum",
            "Kernel duration (µs)_count",
            "Kernel duration (µs)_mean",
            "Kernel duration (µs)_min",
            "Kernel duration (µs)_max",
            "Percent of kernels time (%)",
            "Percent of total time (%)",
        ])
        .copied()
        .collect();
    let mut table = Table::new(&header);
    for row in &profile.kernels {
        let d = &row.duration;
        let category = row.parent_category.map_or("", |c| c.as_str());
        let parent = with_parent.then_some(Cell::Text(&row.parent_op));
        table.row([Cell::Text(category)].into_iter().chain(parent).chain([
            Cell::Text(&row.name),
            Cell::OptInt(row.stream),
            Cell::Float(d.sum),
            Cell::Int(d.count),
            Cell::Float(d.mean),
            Cell::Float(d.min),
            Cell::Float(d.max),
            Cell::Float(row.percent_of_kernel_time),
            Cell::Float(row.percent_of_total_time),
        ]));
    }
    table.text
}

pub(super) fn short_kernels_summary(profile: &Profile) -> String {
    let mut table = Table::new(&[
        "Parent cpu_op",
        "Input dims",
        "Input strides",
        "Concrete Inputs",
        "Kernel name",
        "Short Kernel duration (µs) sum",
        "Short Kernel count",
        "Short Kernel duration (µs) mean",
        "Short Kernel duration (µs) percent of total time",
    ]);
    for row in &profile.short_kernels {
        table.row([
            Cell::Text(&row.parent_op),
            Cell::Text(&row.input_dims),
            Cell::Text(&row.input_strides),
            Cell::Text(&row.concrete_inputs),
            Cell::Text(&row.name),
            Cell::Float(row.total_us),
            Cell::Int(row.count),
            Cell::Float(row.total_us / row.count as f64),
            Cell::Float(row.percent_of_total_time),
        ]);
    }
    table.text
}

pub(super) fn short_kernel_histogram(profile: &Profile) -> String {
    let mut table = Table::new(&["bin_start", "bin_end", "count"]);
    for bin in &profile.short_kernel_histogram {
        table.row([
            Cell::Float(bin.start),
            Cell::Float(bin.end),
            Cell::Int(bin.count),
        ]);
    }
    table.text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_accumulate() {
        let s = shares([3.0, 1.0].into_iter());
        assert_eq!(s, vec![(75.0, 75.0), (25.0, 100.0)]);
    }
}
