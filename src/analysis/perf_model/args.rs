//! The recorded arguments of an op (`Input Dims`, `Input type`, `Input
//! Strides`, `Concrete Inputs`) and the typed access the family modules read
//! them through.

use serde_json::Value;

use super::dtype::Dtype;
use super::family::NoModel;
use crate::analysis::ops::args::python_repr;
use crate::trace::{Event, Trace};

/// The recorded arguments of one op invocation, each the raw JSON text as the
/// trace stores it (see [`crate::trace::OpArgs`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpShape<'a> {
    /// Op name, e.g. `aten::addmm`.
    pub name: &'a str,
    /// `Input Dims`, e.g. `[[512], [141, 512], [512, 512], [], []]`.
    pub input_dims: Option<&'a str>,
    /// `Input type`, e.g. `["c10::BFloat16", "c10::BFloat16", "Scalar"]`.
    pub input_type: Option<&'a str>,
    /// `Input Strides`.
    pub input_strides: Option<&'a str>,
    /// `Concrete Inputs`, e.g. `["", "[1]", "True"]`.
    pub concrete_inputs: Option<&'a str>,
}

impl<'a> OpShape<'a> {
    /// The recorded arguments of a CPU-op event (all `None` for other events).
    pub fn of_event(trace: &'a Trace, event: &Event) -> OpShape<'a> {
        let args = trace.op_args(event).copied().unwrap_or_default();
        let text = |sym: Option<crate::trace::Sym>| sym.map(|s| trace.strings.get(s));
        OpShape {
            name: trace.name(event),
            input_dims: text(args.input_dims),
            input_type: text(args.input_type),
            input_strides: text(args.input_strides),
            concrete_inputs: text(args.concrete_inputs),
        }
    }
}

/// The parsed argument lists of one op.
pub(crate) struct Args<'a> {
    /// Op name.
    pub name: &'a str,
    dims: Vec<Value>,
    types: Vec<Value>,
    strides: Option<Vec<Value>>,
    concrete: Vec<Value>,
}

fn parse_list(name: &str, what: &str, raw: Option<&str>) -> Result<Option<Vec<Value>>, NoModel> {
    let Some(raw) = raw else { return Ok(None) };
    match serde_json::from_str::<Value>(raw) {
        Ok(Value::Array(items)) => Ok(Some(items)),
        _ => Err(NoModel::BadArgs {
            name: name.to_string(),
            reason: format!("`{what}` is not a list: {raw}"),
        }),
    }
}

impl<'a> Args<'a> {
    pub(crate) fn parse(op: &OpShape<'a>) -> Result<Args<'a>, NoModel> {
        let dims =
            parse_list(op.name, "Input Dims", op.input_dims)?.ok_or_else(|| NoModel::BadArgs {
                name: op.name.to_string(),
                reason: "no `Input Dims` recorded (profile with record_shapes=True)".to_string(),
            })?;
        let types = parse_list(op.name, "Input type", op.input_type)?.unwrap_or_default();
        let strides = parse_list(op.name, "Input Strides", op.input_strides)?;
        let concrete =
            parse_list(op.name, "Concrete Inputs", op.concrete_inputs)?.unwrap_or_default();
        Ok(Args {
            name: op.name,
            dims,
            types,
            strides,
            concrete,
        })
    }

    /// A `BadArgs` error for this op.
    pub(crate) fn bad(&self, reason: impl Into<String>) -> NoModel {
        NoModel::BadArgs {
            name: self.name.to_string(),
            reason: reason.into(),
        }
    }

    /// Number of recorded inputs.
    pub(crate) fn len(&self) -> usize {
        self.dims.len()
    }

    /// The shape of input `i` (empty for scalars and 0-dim tensors).
    pub(crate) fn shape(&self, i: usize) -> Result<Vec<u64>, NoModel> {
        let value = self
            .dims
            .get(i)
            .ok_or_else(|| self.bad(format!("input {i} not recorded")))?;
        shape_of(value).ok_or_else(|| self.bad(format!("input {i} is not a tensor shape: {value}")))
    }

    /// The shape of input `i` when it is a tensor with at least one dimension.
    pub(crate) fn tensor_shape(&self, i: usize) -> Option<Vec<u64>> {
        self.dims
            .get(i)
            .and_then(shape_of)
            .filter(|shape| !shape.is_empty())
    }

    /// Whether input `i` is a tensor with at least one dimension.
    pub(crate) fn has_tensor(&self, i: usize) -> bool {
        self.tensor_shape(i).is_some()
    }

    /// The `Input type` text of input `i`.
    pub(crate) fn type_str(&self, i: usize) -> Option<&str> {
        self.types.get(i).and_then(Value::as_str)
    }

    /// The dtype of input `i`.
    pub(crate) fn dtype(&self, i: usize) -> Result<Dtype, NoModel> {
        let text = self.type_str(i).unwrap_or("");
        Dtype::parse(text)
            .ok_or_else(|| self.bad(format!("input {i} has no known dtype: `{text}`")))
    }

    /// The `Concrete Inputs` text of input `i` (`None` when not recorded).
    pub(crate) fn concrete(&self, i: usize) -> Option<&str> {
        self.concrete.get(i).and_then(Value::as_str)
    }

    /// A boolean scalar argument (`"True"`/`"False"`); `None` when absent or empty.
    pub(crate) fn flag(&self, i: usize) -> Result<Option<bool>, NoModel> {
        match self.concrete(i).map(str::trim) {
            None | Some("") | Some("None") => Ok(None),
            Some(text) => parse_bool(text)
                .map(Some)
                .ok_or_else(|| self.bad(format!("input {i} is not a boolean: `{text}`"))),
        }
    }

    /// An integer-list scalar argument (`"[16, 16]"` or `"16"`); `None` when absent or empty.
    pub(crate) fn int_list(&self, i: usize) -> Result<Option<Vec<i64>>, NoModel> {
        match self.concrete(i).map(str::trim) {
            None | Some("") | Some("None") => Ok(None),
            Some(text) => parse_int_list(text)
                .map(Some)
                .ok_or_else(|| self.bad(format!("input {i} is not an int list: `{text}`"))),
        }
    }

    /// A float scalar argument (`"0."`, `"0.125"`); `None` when absent or empty.
    pub(crate) fn float(&self, i: usize) -> Result<Option<f64>, NoModel> {
        match self.concrete(i).map(str::trim) {
            None | Some("") | Some("None") => Ok(None),
            Some(text) => parse_float(text)
                .map(Some)
                .ok_or_else(|| self.bad(format!("input {i} is not a number: `{text}`"))),
        }
    }

    /// Input `i`'s strides as a Python tuple (`None` when not recorded).
    pub(crate) fn stride_repr(&self, i: usize) -> String {
        match self.strides.as_ref().and_then(|s| s.get(i)) {
            Some(value) => python_repr(&value.to_string()),
            None => "None".to_string(),
        }
    }
}

fn shape_of(value: &Value) -> Option<Vec<u64>> {
    value.as_array()?.iter().map(Value::as_u64).collect()
}

/// Parses a Python bool as the profiler writes it.
pub(crate) fn parse_bool(text: &str) -> Option<bool> {
    match text.trim() {
        "True" | "true" | "1" => Some(true),
        "False" | "false" | "0" => Some(false),
        _ => None,
    }
}

/// Parses `"[1, 2]"`, `"[-1]"`, `"[]"` or a single `"3"`.
pub(crate) fn parse_int_list(text: &str) -> Option<Vec<i64>> {
    let text = text.trim();
    if let Some(inner) = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
        let inner = inner.trim();
        if inner.is_empty() {
            return Some(Vec::new());
        }
        return inner
            .split(',')
            .map(|part| part.trim().parse::<i64>().ok())
            .collect();
    }
    text.parse::<i64>().ok().map(|n| vec![n])
}

/// Parses a float as Python writes it (`"0."`, `"1e-05"`).
pub(crate) fn parse_float(text: &str) -> Option<f64> {
    let text = text.trim();
    let fixed;
    let text = if text.ends_with('.') {
        fixed = format!("{text}0");
        &fixed
    } else {
        text
    };
    text.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// The number of elements of a shape (1 for a scalar).
pub(crate) fn numel(shape: &[u64]) -> u128 {
    shape.iter().map(|&d| u128::from(d)).product()
}
