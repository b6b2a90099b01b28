//! TraceLens-compatible perf-model CSVs: `unified_perf_summary.csv` and one
//! sheet per model family (`GEMM.csv`, `SDPA_fwd.csv`, `CONV_fwd.csv`, …),
//! with TraceLens's column names and order and Python-repr numbers.

use serde_json::Value;

use super::cells::{Cell, KernelEntry, Table, kernel_details_cell, trunc_kernel_details_cell};
use crate::analysis::ops::args::{python_float, write_python_str};
use crate::analysis::perf::{Agg, KernelStats, PerfReport, PerfRow};
use crate::analysis::perf_model::Family;

/// Every perf CSV as (file name, contents): the unified summary, then each
/// family sheet that has rows.
pub fn render_all(report: &PerfReport) -> Vec<(&'static str, String)> {
    let mut files = vec![("unified_perf_summary.csv", unified(&report.rows))];
    let mut sheets: Vec<&str> = Family::ALL.iter().map(|f| f.sheet()).collect();
    sheets.dedup();
    for sheet in sheets {
        let rows: Vec<&PerfRow> = report
            .sheets
            .iter()
            .filter(|r| r.family.is_some_and(|f| f.sheet() == sheet))
            .collect();
        if !rows.is_empty() {
            files.push((file_name(sheet), family_sheet(&rows)));
        }
    }
    files
}

fn file_name(sheet: &str) -> &'static str {
    match sheet {
        "GEMM" => "GEMM.csv",
        "SDPA_fwd" => "SDPA_fwd.csv",
        "SDPA_bwd" => "SDPA_bwd.csv",
        "CONV_fwd" => "CONV_fwd.csv",
        "CONV_bwd" => "CONV_bwd.csv",
        "UnaryElementwise" => "UnaryElementwise.csv",
        "BinaryElementwise" => "BinaryElementwise.csv",
        "Normalization" => "Normalization.csv",
        "Reduce_fwd" => "Reduce_fwd.csv",
        "Reduce_bwd" => "Reduce_bwd.csv",
        "Softmax_fwd" => "Softmax_fwd.csv",
        "RMSNorm_fwd" => "RMSNorm_fwd.csv",
        "InferenceAttention_fwd" => "InferenceAttention_fwd.csv",
        "RoPE_fwd" => "RoPE_fwd.csv",
        "MoE_unfused_fwd" => "MoE_unfused_fwd.csv",
        "Triton" => "Triton.csv",
        _ => "Softmax_bwd.csv",
    }
}

const UNIFIED_HEADER: [&str; 43] = [
    "name",
    "op category",
    "process_name",
    "process_label",
    "thread_name",
    "Input Dims",
    "Input type",
    "Input Strides",
    "Concrete Inputs",
    "ex_UID",
    "operation_count",
    "total_duration_us",
    "mean_duration_us",
    "std_duration_us",
    "GFLOPS",
    "Data Moved (MB)",
    "FLOPS/Byte",
    "Compute Spec",
    "TB/s_mean",
    "TB/s_std",
    "TFLOPS/s_mean",
    "TFLOPS/s_std",
    "Kernel Time (µs)_mean",
    "Kernel Time (µs)_std",
    "Kernel Time (µs)_sum",
    "duration_us_median",
    "duration_us_min",
    "duration_us_max",
    "TB/s_median",
    "TB/s_min",
    "TB/s_max",
    "TFLOPS/s_median",
    "TFLOPS/s_min",
    "TFLOPS/s_max",
    "Kernel Time (µs)_median",
    "Kernel Time (µs)_min",
    "Kernel Time (µs)_max",
    "kernel_details_summary",
    "trunc_kernel_details",
    "perf_params",
    "has_perf_model",
    "Percentage (%)",
    "Cumulative Percentage (%)",
];

fn unified(rows: &[PerfRow]) -> String {
    let mut table = Table::new(&UNIFIED_HEADER);
    for row in rows {
        let text = |v: &Option<String>| v.clone().unwrap_or_default();
        let strings = [
            text(&row.input_dims),
            text(&row.input_type),
            text(&row.input_strides),
            text(&row.concrete_inputs),
            row.compute_spec.map(|c| c.to_string()).unwrap_or_default(),
            kernel_details(&row.kernels),
            trunc_kernel_details(&row.kernels),
            perf_params(row),
        ];
        let (d, k) = (&row.duration_us, &row.kernel_time_us);
        let rate = |agg: &Option<Agg>, pick: fn(&Agg) -> Option<f64>| agg.as_ref().and_then(pick);
        let (tb, tf) = (&row.tb_per_s, &row.tflops_per_s);
        table.row([
            Cell::Text(&row.name),
            Cell::Text(row.category.as_str()),
            Cell::Text(&row.process_name),
            Cell::Text(&row.process_label),
            Cell::Text(&row.thread_name),
            Cell::Text(&strings[0]),
            Cell::Text(&strings[1]),
            Cell::Text(&strings[2]),
            Cell::Text(&strings[3]),
            Cell::Int(u64::from(row.example_event)),
            Cell::Int(row.count),
            Cell::Float(d.sum),
            Cell::Float(d.mean),
            Cell::OptFloat(d.std),
            Cell::OptFloat(row.gflops),
            Cell::OptFloat(row.data_moved_mb),
            Cell::OptFloat(row.flops_per_byte),
            Cell::Text(&strings[4]),
            Cell::OptFloat(rate(tb, |a| Some(a.mean))),
            Cell::OptFloat(rate(tb, |a| a.std)),
            Cell::OptFloat(rate(tf, |a| Some(a.mean))),
            Cell::OptFloat(rate(tf, |a| a.std)),
            Cell::Float(k.mean),
            Cell::OptFloat(k.std),
            Cell::Float(k.sum),
            Cell::Float(d.median),
            Cell::Float(d.min),
            Cell::Float(d.max),
            Cell::OptFloat(rate(tb, |a| Some(a.median))),
            Cell::OptFloat(rate(tb, |a| Some(a.min))),
            Cell::OptFloat(rate(tb, |a| Some(a.max))),
            Cell::OptFloat(rate(tf, |a| Some(a.median))),
            Cell::OptFloat(rate(tf, |a| Some(a.min))),
            Cell::OptFloat(rate(tf, |a| Some(a.max))),
            Cell::Float(k.median),
            Cell::Float(k.min),
            Cell::Float(k.max),
            Cell::Text(&strings[5]),
            Cell::Text(&strings[6]),
            Cell::Text(&strings[7]),
            Cell::Text(if row.has_perf_model { "True" } else { "False" }),
            Cell::Float(row.percentage),
            Cell::Float(row.cumulative_percentage),
        ]);
    }
    table.text
}

/// A sheet: `name`, the family's `param: …` columns, then the metrics.
fn family_sheet(rows: &[&PerfRow]) -> String {
    let mut params: Vec<&str> = Vec::new();
    for row in rows {
        for (key, _) in &row.params {
            if !params.contains(&key.as_str()) {
                params.push(key);
            }
        }
    }
    let param_headers: Vec<String> = params.iter().map(|p| format!("param: {p}")).collect();
    let mut header: Vec<&str> = vec!["name"];
    header.extend(param_headers.iter().map(String::as_str));
    header.extend([
        "GFLOPS_first",
        "Data Moved (MB)_first",
        "FLOPS/Byte_first",
        "TB/s_mean",
        "TB/s_median",
        "TB/s_std",
        "TB/s_min",
        "TB/s_max",
        "TFLOPS/s_mean",
        "TFLOPS/s_median",
        "TFLOPS/s_std",
        "TFLOPS/s_min",
        "TFLOPS/s_max",
        "process_name_first",
        "process_label_first",
        "thread_name_first",
        "Compute Spec",
        "kernel_details__summarize_kernel_stats",
        "trunc_kernel_details",
        "Input Dims_first",
        "Input type_first",
        "Input Strides_first",
        "Concrete Inputs_first",
        "Kernel Time (µs)_mean",
        "Kernel Time (µs)_median",
        "Kernel Time (µs)_std",
        "Kernel Time (µs)_min",
        "Kernel Time (µs)_max",
        "Kernel Time (µs)_sum",
        "name_count",
        "UID_first",
    ]);
    let mut table = Table::new(&header);
    for row in rows {
        let param_cells: Vec<String> = params
            .iter()
            .map(|p| {
                row.params
                    .iter()
                    .find(|(key, _)| key == p)
                    .map_or(String::new(), |(_, value)| sheet_value(value))
            })
            .collect();
        let strings = [
            row.compute_spec.map(|c| c.to_string()).unwrap_or_default(),
            kernel_details(&row.kernels),
            trunc_kernel_details(&row.kernels),
            list_repr(row.raw_args[0].as_deref()),
            list_repr(row.raw_args[1].as_deref()),
            list_repr(row.raw_args[2].as_deref()),
            list_repr(row.raw_args[3].as_deref()),
        ];
        let pick = |agg: &Option<Agg>, f: fn(&Agg) -> Option<f64>| agg.as_ref().and_then(f);
        let (tb, tf, k) = (&row.tb_per_s, &row.tflops_per_s, &row.kernel_time_us);
        let mut cells: Vec<Cell> = vec![Cell::Text(&row.name)];
        cells.extend(param_cells.iter().map(|c| Cell::Text(c)));
        cells.extend([
            Cell::OptFloat(row.gflops),
            Cell::OptFloat(row.data_moved_mb),
            Cell::OptFloat(row.flops_per_byte),
            Cell::OptFloat(pick(tb, |a| Some(a.mean))),
            Cell::OptFloat(pick(tb, |a| Some(a.median))),
            Cell::OptFloat(pick(tb, |a| a.std)),
            Cell::OptFloat(pick(tb, |a| Some(a.min))),
            Cell::OptFloat(pick(tb, |a| Some(a.max))),
            Cell::OptFloat(pick(tf, |a| Some(a.mean))),
            Cell::OptFloat(pick(tf, |a| Some(a.median))),
            Cell::OptFloat(pick(tf, |a| a.std)),
            Cell::OptFloat(pick(tf, |a| Some(a.min))),
            Cell::OptFloat(pick(tf, |a| Some(a.max))),
            Cell::Text(&row.process_name),
            Cell::Text(&row.process_label),
            Cell::Text(&row.thread_name),
            Cell::Text(&strings[0]),
            Cell::Text(&strings[1]),
            Cell::Text(&strings[2]),
            Cell::Text(&strings[3]),
            Cell::Text(&strings[4]),
            Cell::Text(&strings[5]),
            Cell::Text(&strings[6]),
            Cell::Float(k.mean),
            Cell::Float(k.median),
            Cell::OptFloat(k.std),
            Cell::Float(k.min),
            Cell::Float(k.max),
            Cell::Float(k.sum),
            Cell::Int(row.count),
            Cell::Int(u64::from(row.example_event)),
        ]);
        table.row(cells);
    }
    table.text
}

/// A parameter as a sheet cell: `None` is empty, a quoted string bare.
fn sheet_value(value: &str) -> String {
    if value == "None" {
        return String::new();
    }
    let quoted = value.len() >= 2
        && ((value.starts_with('\'') && value.ends_with('\''))
            || (value.starts_with('"') && value.ends_with('"')));
    if quoted {
        value[1..value.len() - 1].to_string()
    } else {
        value.to_string()
    }
}

/// The parameters as a Python dict, `{'M': 141, …}`; empty without a model.
fn perf_params(row: &PerfRow) -> String {
    if !row.has_perf_model || row.params.is_empty() {
        return String::new();
    }
    let mut out = String::from("{");
    for (i, (key, value)) in row.params.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_python_str(key, &mut out);
        out.push_str(": ");
        out.push_str(value);
    }
    out.push('}');
    out
}

/// A raw JSON argument list as the Python list TraceLens prints.
fn list_repr(raw: Option<&str>) -> String {
    fn write(value: &Value, out: &mut String) {
        match value {
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write(item, out);
                }
                out.push(']');
            }
            Value::String(text) => write_python_str(text, out),
            Value::Null => out.push_str("None"),
            Value::Bool(b) => out.push_str(if *b { "True" } else { "False" }),
            Value::Number(n) => match n.as_f64() {
                Some(f) if n.is_f64() => out.push_str(&python_float(f)),
                _ => out.push_str(&n.to_string()),
            },
            Value::Object(_) => out.push_str(&value.to_string()),
        }
    }
    let Some(raw) = raw else {
        return String::new();
    };
    match serde_json::from_str::<Value>(raw) {
        Ok(value) => {
            let mut out = String::new();
            write(&value, &mut out);
            out
        }
        Err(_) => raw.to_string(),
    }
}

/// `np.float64(<repr>)`.
fn np_float(value: f64) -> String {
    format!("np.float64({})", python_float(value))
}

/// TraceLens's `kernel_details_summary`: a Python list of dicts (empty cell
/// when there are no kernels).
fn kernel_details(kernels: &[KernelStats]) -> String {
    if kernels.is_empty() {
        return String::new();
    }
    let entries = kernels.iter().map(|k| KernelEntry {
        name: &k.name,
        stream: k.stream,
        count: k.count,
        total: k.total_us,
        mean: k.mean_us,
        median: k.median_us,
        std: k.std_us,
        min: k.min_us,
        max: k.max_us,
    });
    kernel_details_cell(entries, np_float)
}

/// TraceLens's `trunc_kernel_details`: names cut to 64 characters, the
/// mean rounded to two decimals (numpy's half-to-even on the scaled value).
fn trunc_kernel_details(kernels: &[KernelStats]) -> String {
    if kernels.is_empty() {
        return String::new();
    }
    let entries = kernels.iter().map(|k| {
        (
            k.name.as_str(),
            k.stream,
            (k.mean_us * 100.0).round_ties_even() / 100.0,
        )
    });
    trunc_kernel_details_cell(entries, np_float)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::ops::category::Category;
    use crate::analysis::perf::PerfRow;

    fn row() -> PerfRow {
        let agg = Agg::of([5.0, 7.0]).expect("samples");
        PerfRow {
            name: "aten::addmm".to_string(),
            category: Category::Gemm,
            process_name: "python3".to_string(),
            process_label: "CPU".to_string(),
            thread_name: "thread 1 (python3)".to_string(),
            input_dims: Some("((512,), (141, 512), (512, 512), (), ())".to_string()),
            input_type: Some("('c10::BFloat16', 'c10::BFloat16')".to_string()),
            input_strides: None,
            concrete_inputs: Some("('', '', '', '1', '1')".to_string()),
            example_event: 48,
            count: 2,
            has_perf_model: true,
            backward_of: None,
            family: Some(Family::Gemm),
            gflops: Some(0.0739968),
            data_moved_mb: Some(0.7763671875),
            flops_per_byte: Some(90.89622641509433),
            compute_spec: Some(crate::analysis::hardware::ComputeSpec::MatrixBf16),
            params: vec![
                ("M".to_string(), "141".to_string()),
                ("bias".to_string(), "True".to_string()),
                ("stride_A".to_string(), "None".to_string()),
                ("convNd".to_string(), "'conv2d'".to_string()),
            ],
            no_model: None,
            duration_us: agg,
            kernel_time_us: agg,
            tflops_per_s: None,
            tb_per_s: Some(agg),
            kernels: vec![KernelStats {
                name: "k".repeat(70),
                stream: Some(7),
                count: 2,
                total_us: 12.0,
                mean_us: 6.005,
                median_us: 6.0,
                std_us: 1.0,
                min_us: 5.0,
                max_us: 7.0,
            }],
            percentage: 100.0,
            cumulative_percentage: 100.0,
            raw_args: [
                Some("[[512], [141, 512], [512, 512], [], []]".to_string()),
                Some(r#"["c10::BFloat16", "Scalar"]"#.to_string()),
                None,
                Some(r#"["", "1"]"#.to_string()),
            ],
        }
    }

    #[test]
    fn unified_header_and_cells() {
        let report = PerfReport {
            rows: vec![row()],
            sheets: vec![row()],
        };
        let files = render_all(&report);
        let names: Vec<&str> = files.iter().map(|f| f.0).collect();
        assert_eq!(names, ["unified_perf_summary.csv", "GEMM.csv"]);
        let unified = &files[0].1;
        let mut lines = unified.lines();
        assert_eq!(lines.next().expect("header").split(',').count(), 43);
        let line = lines.next().expect("row");
        assert!(line.starts_with(
            "aten::addmm,GEMM,python3,CPU,thread 1 (python3),\"((512,), (141, 512), (512, 512), (), ())\","
        ));
        assert!(line.contains(",0.0739968,0.7763671875,90.89622641509433,matrix_bf16,6.0,"));
        assert!(line.contains(
            "\"{'M': 141, 'bias': True, 'stride_A': None, 'convNd': 'conv2d'}\",True,100.0,100.0"
        ));
        assert!(line.contains("'mean_duration_us': np.float64(6.0)}]"));
        assert!(line.contains(&format!("{}...", "k".repeat(64))));
    }

    #[test]
    fn sheet_columns() {
        let r = row();
        let sheet = family_sheet(&[&r]);
        let header = sheet.lines().next().expect("header");
        assert!(header.starts_with(
            "name,param: M,param: bias,param: stride_A,param: convNd,GFLOPS_first,Data Moved (MB)_first"
        ));
        assert!(header.ends_with("Kernel Time (µs)_sum,name_count,UID_first"));
        let line = sheet.lines().nth(1).expect("row");
        assert!(line.starts_with("aten::addmm,141,True,,conv2d,0.0739968,"));
        assert!(line.contains(",\"[[512], [141, 512], [512, 512], [], []]\",\"['c10::BFloat16', 'Scalar']\",,\"['', '1']\","));
        assert!(line.ends_with(",12.0,2,48"));
    }
}
