//! Model parameter values written as Python prints them, so the family
//! sheets' parameter columns match TraceLens's.

use crate::analysis::ops::args::{python_float, write_python_str};

/// `(512, 1)`, `(512,)`, `()`.
pub(crate) fn tuple_repr<T: std::fmt::Display>(items: &[T]) -> String {
    let mut out = String::from("(");
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(&item.to_string());
    }
    if items.len() == 1 {
        out.push(',');
    }
    out.push(')');
    out
}

/// `True` / `False`.
pub(crate) fn bool_repr(value: bool) -> String {
    if value { "True" } else { "False" }.to_string()
}

/// `'text'`, or `None`.
pub(crate) fn str_repr(value: Option<&str>) -> String {
    match value {
        Some(text) => {
            let mut out = String::new();
            write_python_str(text, &mut out);
            out
        }
        None => "None".to_string(),
    }
}

/// A tuple of optional strings: `('c10::BFloat16', None)`.
pub(crate) fn str_tuple_repr(items: &[Option<&str>]) -> String {
    let reprs: Vec<String> = items.iter().map(|item| str_repr(*item)).collect();
    tuple_repr(&reprs)
}

/// A float as Python prints it.
pub(crate) fn float_repr(value: f64) -> String {
    python_float(value)
}

/// Builds the `params` list.
pub(crate) fn params<const N: usize>(items: [(&str, String); N]) -> Vec<(String, String)> {
    items
        .into_iter()
        .map(|(key, value)| (key.to_string(), value))
        .collect()
}
