//! Perf models: FLOPs and bytes moved of one op invocation, from the shapes,
//! types and scalar arguments the profiler recorded (`Input Dims`, `Input
//! type`, `Input Strides`, `Concrete Inputs`).
//!
//! The formulas follow TraceLens's perf models (docs/PERF_MODELS.md), with its
//! known bugs corrected: each tensor's bytes use its own dtype, the convolution
//! bias is read from the third input, reductions honour `dim`/`keepdim`,
//! batch-norm's `training` flag is parsed ("False" is false). Nothing is
//! guessed: arguments that cannot be read give [`NoModel`].

pub mod conv;
pub mod dtype;
pub mod elementwise;
pub mod gemm;
pub mod norm;
pub mod reduce;
pub mod sdpa;
pub mod softmax;

use serde::Serialize;
use serde_json::Value;

pub use dtype::Dtype;

use crate::analysis::hardware::ComputeSpec;
use crate::analysis::ops::args::{python_float, python_repr, write_python_str};
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

/// Which family of perf model (and which TraceLens sheet) an op belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Family {
    /// Matrix multiplies, forward.
    #[serde(rename = "GEMM")]
    Gemm,
    /// The backward of a matrix multiply (input and weight gradients).
    #[serde(rename = "GEMM_bwd")]
    GemmBwd,
    /// Fused attention, forward.
    #[serde(rename = "SDPA_fwd")]
    SdpaFwd,
    /// Fused attention, backward.
    #[serde(rename = "SDPA_bwd")]
    SdpaBwd,
    /// Convolution, forward.
    #[serde(rename = "CONV_fwd")]
    ConvFwd,
    /// Convolution, backward.
    #[serde(rename = "CONV_bwd")]
    ConvBwd,
    /// One-input elementwise ops and copies.
    #[serde(rename = "UnaryElementwise")]
    UnaryElementwise,
    /// Two-input elementwise ops with broadcasting.
    #[serde(rename = "BinaryElementwise")]
    BinaryElementwise,
    /// Layer/RMS/batch/group/instance norm, forward.
    #[serde(rename = "NORM_fwd")]
    NormFwd,
    /// Layer/RMS/batch/group norm, backward.
    #[serde(rename = "NORM_bwd")]
    NormBwd,
    /// Reductions, forward.
    #[serde(rename = "Reduce_fwd")]
    ReduceFwd,
    /// Reductions, backward (gradient broadcast back to the input).
    #[serde(rename = "Reduce_bwd")]
    ReduceBwd,
    /// Softmax and log-softmax, forward.
    #[serde(rename = "Softmax_fwd")]
    SoftmaxFwd,
    /// Softmax and log-softmax, backward.
    #[serde(rename = "Softmax_bwd")]
    SoftmaxBwd,
}

impl Family {
    /// Every family, in sheet order.
    pub const ALL: [Family; 14] = [
        Family::Gemm,
        Family::GemmBwd,
        Family::SdpaFwd,
        Family::SdpaBwd,
        Family::ConvFwd,
        Family::ConvBwd,
        Family::UnaryElementwise,
        Family::BinaryElementwise,
        Family::NormFwd,
        Family::NormBwd,
        Family::ReduceFwd,
        Family::ReduceBwd,
        Family::SoftmaxFwd,
        Family::SoftmaxBwd,
    ];

    /// The family's name (as serialised).
    pub fn as_str(self) -> &'static str {
        match self {
            Family::Gemm => "GEMM",
            Family::GemmBwd => "GEMM_bwd",
            Family::SdpaFwd => "SDPA_fwd",
            Family::SdpaBwd => "SDPA_bwd",
            Family::ConvFwd => "CONV_fwd",
            Family::ConvBwd => "CONV_bwd",
            Family::UnaryElementwise => "UnaryElementwise",
            Family::BinaryElementwise => "BinaryElementwise",
            Family::NormFwd => "NORM_fwd",
            Family::NormBwd => "NORM_bwd",
            Family::ReduceFwd => "Reduce_fwd",
            Family::ReduceBwd => "Reduce_bwd",
            Family::SoftmaxFwd => "Softmax_fwd",
            Family::SoftmaxBwd => "Softmax_bwd",
        }
    }

    /// The TraceLens sheet (CSV file stem) the family's rows go to: GEMM
    /// forward and backward share `GEMM`, norms share `Normalization`.
    pub fn sheet(self) -> &'static str {
        match self {
            Family::Gemm | Family::GemmBwd => "GEMM",
            Family::NormFwd | Family::NormBwd => "Normalization",
            other => other.as_str(),
        }
    }

    /// Whether the family models a backward pass.
    pub fn is_backward(self) -> bool {
        matches!(
            self,
            Family::GemmBwd
                | Family::SdpaBwd
                | Family::ConvBwd
                | Family::NormBwd
                | Family::ReduceBwd
                | Family::SoftmaxBwd
        )
    }
}

impl std::fmt::Display for Family {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// FLOPs and bytes of one op invocation.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PerfModel {
    /// The model family.
    pub family: Family,
    /// Floating-point operations.
    pub flops: f64,
    /// Bytes read and written (each tensor at its own dtype's size).
    pub bytes: f64,
    /// The roofline peak the op runs at (`None` for types with no peak, such as ints).
    pub compute_spec: Option<ComputeSpec>,
    /// The model's parameters, name then Python-repr value, in TraceLens's
    /// order (`M`, `N`, `K`, … for a GEMM).
    pub params: Vec<(String, String)>,
}

impl PerfModel {
    /// FLOPs per byte moved (`None` when no bytes move).
    pub fn arithmetic_intensity(&self) -> Option<f64> {
        (self.bytes > 0.0).then(|| self.flops / self.bytes)
    }
}

/// Why an op has no perf model.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum NoModel {
    /// No model exists for this op name.
    #[error("no perf model for `{name}`")]
    UnknownOp {
        /// The op name.
        name: String,
    },
    /// A model exists but the recorded arguments cannot be read.
    #[error("`{name}`: {reason}")]
    BadArgs {
        /// The op name.
        name: String,
        /// What could not be read.
        reason: String,
    },
}

/// Models one op invocation (forward or a named backward op).
pub fn model(op: &OpShape) -> Result<PerfModel, NoModel> {
    let name = op.name;
    if gemm::handles(name) {
        return gemm::model(&Args::parse(op)?);
    }
    if sdpa::handles(name) {
        return sdpa::model(&Args::parse(op)?);
    }
    if conv::handles(name) {
        return conv::model(&Args::parse(op)?);
    }
    if norm::handles(name) {
        return norm::model(&Args::parse(op)?);
    }
    if softmax::handles(name) {
        return softmax::model(&Args::parse(op)?);
    }
    if reduce::handles(name) {
        return reduce::model(&Args::parse(op)?);
    }
    if elementwise::handles(name) {
        return elementwise::model(&Args::parse(op)?);
    }
    Err(NoModel::UnknownOp {
        name: name.to_string(),
    })
}

/// Models the backward pass of a forward op from the forward's own
/// arguments (for autograd nodes such as `ConvolutionBackward0`, whose
/// recorded arguments are gradients): GEMMs, attention, convolution and
/// reductions.
pub fn model_backward(forward: &OpShape) -> Result<PerfModel, NoModel> {
    let name = forward.name;
    if gemm::handles(name) {
        return gemm::model_backward(&Args::parse(forward)?);
    }
    if sdpa::handles(name) && !sdpa::is_backward(name) {
        return sdpa::model_backward(&Args::parse(forward)?);
    }
    if conv::handles(name) && name != "aten::convolution_backward" {
        return conv::model_backward(&Args::parse(forward)?);
    }
    if reduce::handles(name) {
        return reduce::model_backward(&Args::parse(forward)?);
    }
    Err(NoModel::UnknownOp {
        name: name.to_string(),
    })
}

/// Whether [`model`] knows the op name (its arguments may still be unreadable).
pub fn has_model(name: &str) -> bool {
    gemm::handles(name)
        || sdpa::handles(name)
        || conv::handles(name)
        || norm::handles(name)
        || softmax::handles(name)
        || reduce::handles(name)
        || elementwise::handles(name)
}

/// Composite ops that dispatch to a modelled op below them (`aten::linear`
/// → `aten::addmm`, `aten::softmax` → `aten::_softmax`, …). A per-op table
/// models the inner op so its rows keep TraceLens's keys; [`model`] still
/// models these when asked directly.
pub fn is_composite(name: &str) -> bool {
    matches!(
        name,
        "aten::linear"
            | "aten::matmul"
            | "aten::softmax"
            | "aten::log_softmax"
            | "aten::rms_norm"
            | "aten::_convolution"
    )
}

// ----------------------------------------------------------------------------
// Argument access shared by the family modules.

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

// ----------------------------------------------------------------------------
// Python-repr parameter values.

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_ops_say_so() {
        let op = OpShape {
            name: "aten::index_select",
            input_dims: Some("[[4, 4], [], [2]]"),
            ..OpShape::default()
        };
        assert_eq!(
            model(&op),
            Err(NoModel::UnknownOp {
                name: "aten::index_select".to_string()
            })
        );
    }

    #[test]
    fn missing_shapes_are_bad_args() {
        let op = OpShape {
            name: "aten::mm",
            ..OpShape::default()
        };
        assert!(matches!(model(&op), Err(NoModel::BadArgs { .. })));
    }

    #[test]
    fn scalar_argument_parsing() {
        assert_eq!(parse_int_list("[1]"), Some(vec![1]));
        assert_eq!(parse_int_list("[-1, 2]"), Some(vec![-1, 2]));
        assert_eq!(parse_int_list("[]"), Some(vec![]));
        assert_eq!(parse_int_list("3"), Some(vec![3]));
        assert_eq!(parse_int_list("x"), None);
        assert_eq!(parse_bool("False"), Some(false));
        assert_eq!(parse_bool("True"), Some(true));
        assert_eq!(parse_float("0."), Some(0.0));
        assert_eq!(parse_float("0.125"), Some(0.125));
        assert_eq!(tuple_repr(&[512]), "(512,)");
        assert_eq!(tuple_repr(&[512, 1]), "(512, 1)");
        assert_eq!(
            str_tuple_repr(&[Some("c10::BFloat16"), None]),
            "('c10::BFloat16', None)"
        );
    }

    #[test]
    fn composites_are_modelled_directly() {
        assert!(has_model("aten::linear"));
        assert!(is_composite("aten::linear"));
        assert!(has_model("aten::addmm"));
        assert!(!is_composite("aten::addmm"));
    }
}
