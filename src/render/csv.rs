//! TraceLens-compatible CSV files: the same file names, column names, units
//! and number formatting (Python's float repr), so scripts written against
//! TraceLens output keep working. Deliberate differences are listed in
//! docs/TRACELENS.md.

use std::fmt::Write;

use crate::analysis::ops::args::{python_float, write_python_str};
use crate::analysis::profile::{KernelDetail, Profile};

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
        files.extend(super::perf_csv::render_all(&profile.perf));
    }
    files.push(("short_kernels_summary.csv", short_kernels_summary(profile)));
    files.push((
        "short_kernel_histogram.csv",
        short_kernel_histogram(profile),
    ));
    files
}

/// A CSV under construction, quoting cells as pandas does (only when needed).
pub(crate) struct Table {
    pub(crate) text: String,
}

impl Table {
    pub(crate) fn new(header: &[&str]) -> Table {
        let mut table = Table {
            text: String::new(),
        };
        table.row(header.iter().map(|h| Cell::Text(h)));
        table
    }

    pub(crate) fn row<'a>(&mut self, cells: impl IntoIterator<Item = Cell<'a>>) {
        for (i, cell) in cells.into_iter().enumerate() {
            if i > 0 {
                self.text.push(',');
            }
            match cell {
                Cell::Text(text) => push_quoted(&mut self.text, text),
                Cell::Float(value) => self.text.push_str(&python_float(value)),
                Cell::OptFloat(value) => {
                    if let Some(value) = value {
                        self.text.push_str(&python_float(value));
                    }
                }
                Cell::Int(value) => {
                    let _ = write!(self.text, "{value}");
                }
                Cell::OptInt(value) => {
                    if let Some(value) = value {
                        let _ = write!(self.text, "{value}");
                    }
                }
            }
        }
        self.text.push('\n');
    }
}

pub(crate) enum Cell<'a> {
    Text(&'a str),
    Float(f64),
    OptFloat(Option<f64>),
    Int(u64),
    OptInt(Option<i64>),
}

fn push_quoted(out: &mut String, text: &str) {
    if text.contains([',', '"', '\n', '\r']) {
        out.push('"');
        out.push_str(&text.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(text);
    }
}

fn gpu_timeline(profile: &Profile) -> String {
    let mut table = Table::new(&["type", "time ms", "percent"]);
    let total = profile.timeline.total_time;
    for (name, us) in profile.timeline.rows() {
        let percent = super::percent(us, total);
        table.row([
            Cell::Text(name),
            Cell::Float(us / 1000.0),
            Cell::Float(percent),
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
            let share = super::percent(v, total);
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

fn ops_summary(profile: &Profile) -> String {
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

fn ops_summary_by_category(profile: &Profile) -> String {
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

/// One kernel entry of TraceLens's `kernel_details_summary` cell.
pub(crate) struct KernelEntry<'a> {
    pub(crate) name: &'a str,
    pub(crate) stream: Option<i64>,
    pub(crate) count: u64,
    pub(crate) total: f64,
    pub(crate) mean: f64,
    pub(crate) median: f64,
    pub(crate) std: f64,
    pub(crate) min: f64,
    pub(crate) max: f64,
}

fn stream_repr(stream: Option<i64>) -> String {
    stream.map_or("None".to_string(), |s| s.to_string())
}

/// TraceLens's `kernel_details_summary`: a Python list of dicts, each float
/// written by `float` (plain repr, or numpy's `np.float64(...)`).
pub(crate) fn kernel_details_cell<'a>(
    kernels: impl IntoIterator<Item = KernelEntry<'a>>,
    float: fn(f64) -> String,
) -> String {
    let mut out = String::from("[");
    for (i, k) in kernels.into_iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str("{'name': ");
        write_python_str(k.name, &mut out);
        let _ = write!(
            out,
            ", 'stream': {}, 'count': {}, 'total_duration_us': {}, 'mean_duration_us': {}, \
             'median_duration_us': {}, 'std_dev_duration_us': {}, 'min_duration_us': {}, \
             'max_duration_us': {}}}",
            stream_repr(k.stream),
            k.count,
            float(k.total),
            float(k.mean),
            float(k.median),
            float(k.std),
            float(k.min),
            float(k.max),
        );
    }
    out.push(']');
    out
}

/// TraceLens's `trunc_kernel_details`: (name, stream, mean already rounded by
/// the caller) entries, names cut to 64 characters plus `...`.
pub(crate) fn trunc_kernel_details_cell<'a>(
    kernels: impl IntoIterator<Item = (&'a str, Option<i64>, f64)>,
    float: fn(f64) -> String,
) -> String {
    let mut out = String::from("[");
    for (i, (name, stream, mean)) in kernels.into_iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let name: String = if name.chars().count() > 64 {
            name.chars().take(64).chain("...".chars()).collect()
        } else {
            name.to_string()
        };
        out.push_str("{'name': ");
        write_python_str(&name, &mut out);
        let _ = write!(
            out,
            ", 'stream': {}, 'mean_duration_us': {}}}",
            stream_repr(stream),
            float(mean)
        );
    }
    out.push(']');
    out
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

fn ops_unique_args(profile: &Profile) -> String {
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

fn kernel_summary(profile: &Profile) -> String {
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

fn short_kernels_summary(profile: &Profile) -> String {
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

fn short_kernel_histogram(profile: &Profile) -> String {
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
    fn quoting_follows_pandas() {
        let mut out = String::new();
        push_quoted(&mut out, "plain");
        out.push('|');
        push_quoted(&mut out, "a, b");
        out.push('|');
        push_quoted(&mut out, "say \"hi\"");
        assert_eq!(out, "plain|\"a, b\"|\"say \"\"hi\"\"\"");
    }

    #[test]
    fn shares_accumulate() {
        let s = shares([3.0, 1.0].into_iter());
        assert_eq!(s, vec![(75.0, 75.0), (25.0, 100.0)]);
    }
}
