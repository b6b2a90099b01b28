//! The CSV writer TraceLens's files need: a table whose cells are quoted as
//! pandas quotes them and numbers written as Python's float repr, and the
//! Python-literal kernel-details cells both op tables and perf sheets carry.
//!
//! A text cell that a spreadsheet would read as a formula (it starts with
//! `=`, `+`, `-`, `@`, a tab or a carriage return, and is not a plain
//! number) gets a leading `'`, as OWASP advises against CSV injection: op
//! and kernel names come from the trace, and a spreadsheet is where these
//! files are opened. TraceLens does not do this; no real name starts so.

use std::fmt::Write;

use crate::analysis::ops::args::{python_float, write_python_str};

/// A CSV under construction, quoting cells as pandas does (only when needed).
pub(super) struct Table {
    pub(super) text: String,
}

impl Table {
    pub(super) fn new(header: &[&str]) -> Table {
        let mut table = Table {
            text: String::new(),
        };
        table.row(header.iter().map(|h| Cell::Text(h)));
        table
    }

    pub(super) fn row<'a>(&mut self, cells: impl IntoIterator<Item = Cell<'a>>) {
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

/// One cell; an absent optional value is an empty cell.
pub(super) enum Cell<'a> {
    Text(&'a str),
    Float(f64),
    OptFloat(Option<f64>),
    Int(u64),
    OptInt(Option<i64>),
}

/// Whether a spreadsheet would take `text` for a formula: it starts with a
/// formula character and is not just a number (`-1`, `+2.5e3` stay numbers).
fn is_formula(text: &str) -> bool {
    text.starts_with(['=', '+', '-', '@', '\t', '\r'])
        && !(text.parse::<f64>().is_ok()
            && text
                .bytes()
                .all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'e' | b'E')))
}

fn push_quoted(out: &mut String, text: &str) {
    let defused;
    let text = if is_formula(text) {
        defused = format!("'{text}");
        &defused
    } else {
        text
    };
    if text.contains([',', '"', '\n', '\r']) {
        out.push('"');
        out.push_str(&text.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(text);
    }
}

/// One kernel entry of TraceLens's `kernel_details_summary` cell.
pub(super) struct KernelEntry<'a> {
    pub(super) name: &'a str,
    pub(super) stream: Option<i64>,
    pub(super) count: u64,
    pub(super) total: f64,
    pub(super) mean: f64,
    pub(super) median: f64,
    pub(super) std: f64,
    pub(super) min: f64,
    pub(super) max: f64,
}

fn stream_repr(stream: Option<i64>) -> String {
    stream.map_or("None".to_string(), |s| s.to_string())
}

/// TraceLens's `kernel_details_summary`: a Python list of dicts, each float
/// written by `float` (plain repr, or numpy's `np.float64(...)`).
pub(super) fn kernel_details_cell<'a>(
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
pub(super) fn trunc_kernel_details_cell<'a>(
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
    fn csv_formula_cells_are_defused() {
        let cell = |text: &str| {
            let mut out = String::new();
            push_quoted(&mut out, text);
            out
        };
        assert_eq!(cell("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
        assert_eq!(cell("+cmd|' /C calc'!A0"), "'+cmd|' /C calc'!A0");
        assert_eq!(cell("-2+3"), "'-2+3");
        assert_eq!(cell("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(cell("\t=1"), "'\t=1");
        assert_eq!(cell("\r=1"), "\"'\r=1\"");
        // Numbers stay numbers; names that merely contain the characters stay.
        assert_eq!(cell("-1"), "-1");
        assert_eq!(cell("+2.5e3"), "+2.5e3");
        assert_eq!(cell("aten::add_"), "aten::add_");
        assert_eq!(cell("a=b"), "a=b");
        let mut table = Table::new(&["name", "n"]);
        table.row([Cell::Text("=1+1"), Cell::Float(-1.0)]);
        assert_eq!(table.text, "name,n\n'=1+1,-1.0\n");
    }
}
