//! The recorded arguments of an op (`Input Dims`, `Input type`, `Input
//! Strides`, `Concrete Inputs`) and the typed access the family modules read
//! them through.

use serde::de::{SeqAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

use super::count::Count;
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

/// The parsed argument lists of one op. `Input Dims` is parsed once into
/// shapes (a number per dimension, nothing per element of an array of
/// arrays), and `Input Strides` stays raw text until a parameter column
/// writes it: recorded lists can hold millions of entries.
pub(crate) struct Args<'a> {
    /// Op name.
    pub name: &'a str,
    /// Each input's shape, or its raw text when it is not one (a scalar
    /// list, a tensor list).
    dims: Vec<Result<Vec<u64>, &'a RawValue>>,
    types: Vec<Value>,
    strides: Option<Vec<&'a RawValue>>,
    concrete: Vec<Value>,
}

fn bad_list(name: &str, what: &str, raw: &str) -> NoModel {
    NoModel::BadArgs {
        name: name.to_string(),
        reason: format!("`{what}` is not a list: {}", excerpt(raw)),
    }
}

fn parse_list(name: &str, what: &str, raw: Option<&str>) -> Result<Option<Vec<Value>>, NoModel> {
    let Some(raw) = raw else { return Ok(None) };
    match serde_json::from_str::<Value>(raw) {
        Ok(Value::Array(items)) => Ok(Some(items)),
        _ => Err(bad_list(name, what, raw)),
    }
}

fn parse_raw_list<'a>(
    name: &str,
    what: &str,
    raw: Option<&'a str>,
) -> Result<Option<Vec<&'a RawValue>>, NoModel> {
    let Some(raw) = raw else { return Ok(None) };
    serde_json::from_str::<Vec<&'a RawValue>>(raw)
        .map(Some)
        .map_err(|_| bad_list(name, what, raw))
}

impl<'a> Args<'a> {
    /// Parses an op's recorded arguments. A dimension that is negative or
    /// above `i64::MAX` (PyTorch sizes are `int64`) anywhere in `Input
    /// Dims` makes the arguments [`NoModel::Implausible`].
    pub(crate) fn parse(op: &OpShape<'a>) -> Result<Args<'a>, NoModel> {
        let items = parse_raw_list(op.name, "Input Dims", op.input_dims)?.ok_or_else(|| {
            NoModel::BadArgs {
                name: op.name.to_string(),
                reason: "no `Input Dims` recorded (profile with record_shapes=True)".to_string(),
            }
        })?;
        let mut dims = Vec::with_capacity(items.len());
        for (i, item) in items.into_iter().enumerate() {
            dims.push(match shape_of(item) {
                Shape::Dims(shape) => Ok(shape),
                Shape::Other => Err(item),
                Shape::Implausible(dim) => {
                    return Err(NoModel::Implausible {
                        name: op.name.to_string(),
                        reason: format!(
                            "input {i} has a dimension of {dim}: sizes are from 0 to 2^63 − 1"
                        ),
                    });
                }
            });
        }
        let types = parse_list(op.name, "Input type", op.input_type)?.unwrap_or_default();
        let strides = parse_raw_list(op.name, "Input Strides", op.input_strides)?;
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

    /// An `Implausible` error for this op.
    pub(crate) fn implausible(&self, reason: impl Into<String>) -> NoModel {
        NoModel::Implausible {
            name: self.name.to_string(),
            reason: reason.into(),
        }
    }

    /// FLOPs and bytes as the model reports them; [`NoModel::Implausible`]
    /// when either overflowed (never a wrapped 0 or an infinity).
    pub(crate) fn measured(&self, flops: Count, bytes: Count) -> Result<(f64, f64), NoModel> {
        self.figures(flops.to_f64(), bytes.to_f64())
    }

    /// FLOPs and bytes computed partly in floating point from exact counts
    /// (`None` where a count overflowed); [`NoModel::Implausible`] unless
    /// both are finite.
    pub(crate) fn figures(
        &self,
        flops: Option<f64>,
        bytes: Option<f64>,
    ) -> Result<(f64, f64), NoModel> {
        match (flops, bytes) {
            (Some(flops), Some(bytes)) if flops.is_finite() && bytes.is_finite() => {
                Ok((flops, bytes))
            }
            _ => Err(self.implausible(OVERFLOW)),
        }
    }

    /// An exact count, or [`NoModel::Implausible`] when it overflowed.
    pub(crate) fn exact(&self, count: Count) -> Result<u128, NoModel> {
        count.exact().ok_or_else(|| self.implausible(OVERFLOW))
    }

    /// A product of sizes used as one size (`M` of a GEMM over a batch of
    /// rows), refused above `i64::MAX` as PyTorch refuses such a tensor.
    pub(crate) fn size(&self, count: Count) -> Result<u64, NoModel> {
        count
            .exact()
            .and_then(|n| i64::try_from(n).ok())
            .map(|n| n as u64)
            .ok_or_else(|| self.implausible("a tensor with more than 2^63 − 1 elements"))
    }

    /// Number of recorded inputs.
    pub(crate) fn len(&self) -> usize {
        self.dims.len()
    }

    /// The shape of input `i` (empty for scalars and 0-dim tensors).
    pub(crate) fn shape(&self, i: usize) -> Result<Vec<u64>, NoModel> {
        match self.dims.get(i) {
            None => Err(self.bad(format!("input {i} not recorded"))),
            Some(Ok(shape)) => Ok(shape.clone()),
            Some(Err(raw)) => Err(self.bad(format!(
                "input {i} is not a tensor shape: {}",
                excerpt(raw.get())
            ))),
        }
    }

    /// The shape of input `i` when it is a tensor with at least one dimension.
    pub(crate) fn tensor_shape(&self, i: usize) -> Option<Vec<u64>> {
        match self.dims.get(i) {
            Some(Ok(shape)) if !shape.is_empty() => Some(shape.clone()),
            _ => None,
        }
    }

    /// Whether input `i` is a tensor with at least one dimension.
    pub(crate) fn has_tensor(&self, i: usize) -> bool {
        matches!(self.dims.get(i), Some(Ok(shape)) if !shape.is_empty())
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
            Some(raw) => python_repr(raw.get()),
            None => "None".to_string(),
        }
    }
}

/// What overflowing counts say.
const OVERFLOW: &str =
    "FLOPs or bytes overflow 128 bits: the recorded shapes are implausibly large";

/// At most the first 80 characters of a raw argument, for a message.
fn excerpt(raw: &str) -> String {
    const MAX: usize = 80;
    match raw.char_indices().nth(MAX) {
        Some((end, _)) => format!("{}…", &raw[..end]),
        None => raw.to_string(),
    }
}

/// One input of `Input Dims` read as a shape.
enum Shape {
    /// A list of sizes.
    Dims(Vec<u64>),
    /// A list holding a size no tensor can have (negative, or above `i64::MAX`).
    Implausible(String),
    /// Anything else (a scalar's `[]` is a shape; a tensor list is not).
    Other,
}

/// Reads one `Input Dims` entry without building a tree of its elements.
fn shape_of(raw: &RawValue) -> Shape {
    let mut deserializer = serde_json::Deserializer::from_str(raw.get());
    serde::Deserializer::deserialize_any(&mut deserializer, ShapeVisitor).unwrap_or(Shape::Other)
}

struct ShapeVisitor;

impl<'de> Visitor<'de> for ShapeVisitor {
    type Value = Shape;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list of sizes")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Shape, A::Error> {
        let mut sizes = Vec::new();
        let mut other = false;
        let mut implausible = None;
        while let Some(value) = seq.next_element::<serde_json::Value>()? {
            match value.as_u64() {
                Some(size) if i64::try_from(size).is_ok() => sizes.push(size),
                _ if is_integer(&value) => {
                    implausible.get_or_insert_with(|| value.to_string());
                }
                _ => other = true,
            }
        }
        Ok(match implausible {
            Some(size) => Shape::Implausible(size),
            None if other => Shape::Other,
            None => Shape::Dims(sizes),
        })
    }
}

/// Whether a JSON value is an integer (one beyond 64 bits parses as a
/// float with no fraction).
fn is_integer(value: &Value) -> bool {
    value.is_i64()
        || value.is_u64()
        || value
            .as_f64()
            .is_some_and(|f| f.fract() == 0.0 && f.abs() >= 9.0e18)
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
pub(crate) fn numel(shape: &[u64]) -> Count {
    shape.iter().map(|&d| Count::from(d)).product()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A size written as a float is no shape; an integer beyond `int64`
    /// (which JSON parsers read as a float) is an implausible one.
    #[test]
    fn whole_floats_are_no_sizes_and_huge_integers_are_implausible() {
        let op = |dims| OpShape {
            name: "aten::mm",
            input_dims: Some(dims),
            ..OpShape::default()
        };
        let args = Args::parse(&op("[[4.0, 8], [8, 2]]")).expect("readable");
        assert!(matches!(args.shape(0), Err(NoModel::BadArgs { .. })));
        assert_eq!(args.shape(1), Ok(vec![8, 2]));
        for dims in ["[[1e19, 8]]", "[[-4, 8]]"] {
            assert!(
                matches!(Args::parse(&op(dims)), Err(NoModel::Implausible { .. })),
                "{dims}"
            );
        }
    }

    #[test]
    fn figures_are_implausible_unless_both_are_finite() {
        let op = OpShape {
            name: "aten::mm",
            input_dims: Some("[[2, 2], [2, 2]]"),
            ..OpShape::default()
        };
        let args = Args::parse(&op).expect("readable");
        assert_eq!(args.figures(Some(16.0), Some(48.0)), Ok((16.0, 48.0)));
        for (flops, bytes) in [
            (Some(f64::INFINITY), Some(48.0)),
            (Some(16.0), Some(f64::NAN)),
            (None, Some(48.0)),
            (Some(16.0), None),
        ] {
            assert!(
                matches!(args.figures(flops, bytes), Err(NoModel::Implausible { .. })),
                "{flops:?} {bytes:?}"
            );
        }
    }
}
