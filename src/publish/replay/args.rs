//! Building the IR from the recorded argument lists (`Input Dims`, `Input
//! type`, `Input Strides`, `Concrete Inputs`): each input becomes a tensor
//! spec or a value, matched against the op's built-in schema where one fits,
//! with defaults, devices and fill rules filled in.

use serde_json::Value;

use super::ir::{
    Arg, ArgValue, IR_FORMAT, IR_VERSION, Init, MathSettings, OpTarget, Origin, RecordedArgs,
    ReplayError, ReplayIr, TensorSpec, ValueSource,
};
use super::pyliteral;
use super::schema::{self, Base, Recorded, Schema, SchemaArg};
use crate::analysis::perf_model::dtype::Dtype;

/// Splits `ns::op`; `None` when the name is not a dispatcher op name.
fn split_op_name(name: &str) -> Option<(&str, &str)> {
    let (namespace, op) = name.split_once("::")?;
    let identifier = |s: &str| {
        !s.is_empty()
            && !s.starts_with(|c: char| c.is_ascii_digit())
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    (identifier(namespace) && identifier(op)).then_some((namespace, op))
}

/// A tensor before the whole call is known (its device and init depend on
/// the other tensors).
struct PendingTensor {
    shape: Vec<i64>,
    strides: Vec<i64>,
    strides_recorded: bool,
    dtype_name: String,
    dtype: Dtype,
    dtype_recorded: bool,
}

enum Pending {
    Tensor(PendingTensor),
    TensorList(Vec<PendingTensor>),
    Value(ArgValue, ValueSource),
}

/// A guess at a tensor list's dtype (the profiler records none) from its
/// shapes: `(dtype name, note saying where it comes from)`.
type ListDtype<'a> = &'a dyn Fn(&[Vec<i64>]) -> Option<(String, String)>;

/// Builds the IR from the recorded lists; `list_dtype` guesses the dtype of
/// tensor lists.
pub(super) fn build(
    name: &str,
    recorded: RecordedArgs,
    list_dtype: ListDtype,
) -> Result<ReplayIr, ReplayError> {
    let (namespace, op) = split_op_name(name).ok_or_else(|| ReplayError::UnknownSchema {
        name: name.to_string(),
    })?;
    let bad = |position: usize, reason: String| ReplayError::UnparseableArgs {
        name: name.to_string(),
        position,
        reason,
    };
    let types: Vec<&str> = recorded
        .input_type
        .as_array()
        .and_then(|t| t.iter().map(Value::as_str).collect())
        .ok_or_else(|| bad(0, "`Input type` is not a list of strings".to_string()))?;
    let dims = recorded
        .input_dims
        .as_array()
        .filter(|d| d.len() == types.len())
        .ok_or_else(|| {
            bad(
                0,
                "`Input Dims` and `Input type` differ in length".to_string(),
            )
        })?;
    let mut notes = Vec::new();
    let strides = recorded
        .input_strides
        .as_ref()
        .and_then(Value::as_array)
        .filter(|s| s.len() == types.len());
    if strides.is_none() {
        notes.push("the trace records no strides: tensors are contiguous".to_string());
    }
    let concrete: Option<Vec<&str>> = recorded
        .concrete_inputs
        .as_ref()
        .and_then(Value::as_array)
        .filter(|c| c.len() == types.len())
        .and_then(|c| c.iter().map(Value::as_str).collect());
    let kinds: Vec<Recorded> = types.iter().map(|t| Recorded::of(t)).collect();
    let schema = (namespace == "aten")
        .then(|| schema::lookup(op, &kinds))
        .flatten();

    let mut pending = Vec::with_capacity(types.len());
    for (position, (&type_name, &kind)) in types.iter().zip(&kinds).enumerate() {
        let arg = schema.map(|s| &s.args[position]);
        let concrete_text = concrete
            .as_ref()
            .map(|c| c[position])
            .filter(|c| !c.is_empty());
        let stride_value = strides.map(|s| &s[position]);
        let value = match kind {
            Recorded::Tensor(dtype) => {
                let shape = int_list(&dims[position]).ok_or_else(|| {
                    bad(
                        position,
                        format!("tensor dims {} are not a list of integers", dims[position]),
                    )
                })?;
                Pending::Tensor(tensor(shape, stride_value, type_name, dtype, true))
            }
            Recorded::TensorList => {
                let shapes = nested_int_lists(&dims[position])
                    .filter(|s| !s.is_empty())
                    .ok_or_else(|| {
                        bad(
                            position,
                            "the tensor list's shapes are not recorded".to_string(),
                        )
                    })?;
                let member_strides = stride_value.and_then(nested_int_lists);
                let (dtype_name, note) = list_dtype(&shapes).unwrap_or_else(|| {
                    (
                        "float".to_string(),
                        "the tensor list's dtype is not recorded: float32 is assumed (see --dtype-override)".to_string(),
                    )
                });
                notes.push(note);
                let dtype = Dtype::parse(&dtype_name).unwrap_or(Dtype::F32);
                let tensors = shapes
                    .into_iter()
                    .enumerate()
                    .map(|(i, shape)| {
                        let recorded_strides = member_strides
                            .as_ref()
                            .and_then(|s| s.get(i))
                            .map(|s| Value::from(s.clone()));
                        tensor(shape, recorded_strides.as_ref(), &dtype_name, dtype, false)
                    })
                    .collect();
                Pending::TensorList(tensors)
            }
            Recorded::Scalar | Recorded::ScalarList | Recorded::GenericList => {
                match concrete_text {
                    Some(text) => Pending::Value(
                        concrete_value(kind, text).map_err(|reason| bad(position, reason))?,
                        ValueSource::Recorded,
                    ),
                    None => match arg.filter(|a| a.default.is_some()) {
                        Some(arg) => Pending::Value(
                            default_value(arg).map_err(|reason| bad(position, reason))?,
                            ValueSource::SchemaDefault,
                        ),
                        None => {
                            return Err(bad(
                                position,
                                format!(
                                    "the value of this {type_name} is not recorded (the trace has no Concrete Inputs for it) and its schema gives no default"
                                ),
                            ));
                        }
                    },
                }
            }
            Recorded::Empty => match arg {
                None => Pending::Value(ArgValue::None, ValueSource::Recorded),
                Some(arg) if arg.ty.base == Base::Device => {
                    Pending::Value(ArgValue::Device, ValueSource::ReplayDevice)
                }
                Some(arg) if arg.ty.optional => {
                    Pending::Value(ArgValue::None, ValueSource::Recorded)
                }
                Some(arg) if arg.default.is_some() => Pending::Value(
                    default_value(arg).map_err(|reason| bad(position, reason))?,
                    ValueSource::SchemaDefault,
                ),
                Some(arg) if arg.ty.base == Base::Generator => {
                    Pending::Value(ArgValue::None, ValueSource::Recorded)
                }
                Some(arg) => {
                    return Err(bad(
                        position,
                        format!(
                            "`{}` ({}) is not recorded by the profiler",
                            arg.name, arg.type_text
                        ),
                    ));
                }
            },
            Recorded::Unknown => {
                return Err(bad(position, format!("unknown input type `{type_name}`")));
            }
        };
        pending.push(value);
    }

    let args = finish(&pending, &types, &mut notes, schema);
    let (kwargs, args): (Vec<Arg>, Vec<Arg>) = args
        .into_iter()
        .partition(|a| schema.is_some_and(|s| s.args[a.position].kwarg_only));
    let input_bytes = args
        .iter()
        .chain(&kwargs)
        .flat_map(|a| match &a.value {
            ArgValue::Tensor(t) => std::slice::from_ref(t),
            ArgValue::TensorList { tensors } => tensors.as_slice(),
            _ => &[],
        })
        .map(|t| t.storage_bytes)
        .sum();
    Ok(ReplayIr {
        format: IR_FORMAT.to_string(),
        version: IR_VERSION,
        tracegate_version: env!("CARGO_PKG_VERSION").to_string(),
        op: OpTarget {
            name: name.to_string(),
            namespace: namespace.to_string(),
            op: op.to_string(),
            overload: schema.map(|s| s.overload.clone()),
            schema: schema.map(|s| format!("{namespace}::{}", s.text)),
            schema_known: schema.is_some(),
        },
        args,
        kwargs,
        recorded,
        input_bytes,
        invocations: None,
        kernel_time_us: None,
        kernels: Vec::new(),
        math: MathSettings::default(),
        module_path: None,
        origin: Origin::default(),
        environment: None,
        comparison: None,
        notes,
    })
}

fn tensor(
    shape: Vec<i64>,
    recorded_strides: Option<&Value>,
    dtype_name: &str,
    dtype: Dtype,
    dtype_recorded: bool,
) -> PendingTensor {
    let recorded = recorded_strides
        .and_then(int_list)
        .filter(|s| s.len() == shape.len());
    PendingTensor {
        strides: recorded.clone().unwrap_or_else(|| contiguous(&shape)),
        strides_recorded: recorded.is_some(),
        shape,
        dtype_name: dtype_name.to_string(),
        dtype,
        dtype_recorded,
    }
}

/// Turns pending values into arguments: places likely Python numbers on
/// the CPU and bounds integer tensors by the other tensors' sizes.
fn finish(
    pending: &[Pending],
    types: &[&str],
    notes: &mut Vec<String>,
    schema: Option<&Schema>,
) -> Vec<Arg> {
    let shapes: Vec<(usize, &Vec<i64>)> = pending
        .iter()
        .enumerate()
        .flat_map(|(i, p)| match p {
            Pending::Tensor(t) => vec![(i, &t.shape)],
            Pending::TensorList(ts) => ts.iter().map(|t| (i, &t.shape)).collect(),
            Pending::Value(..) => Vec::new(),
        })
        .collect();
    let spec = |position: usize, t: &PendingTensor, notes: &mut Vec<String>| {
        let others = shapes
            .iter()
            .filter(|(i, _)| *i != position)
            .map(|(_, s)| *s);
        let wrapped = t.shape.is_empty()
            && matches!(t.dtype, Dtype::F64 | Dtype::I64)
            && others.clone().any(|s| !s.is_empty());
        if wrapped {
            notes.push(format!(
                "input {position}: a zero-dimensional {} tensor beside larger ones is most likely a Python number: it stays on the CPU, as PyTorch passes such numbers",
                t.dtype_name
            ));
        }
        let init = match t.dtype {
            Dtype::Bool => Init::Bool,
            d if d.is_floating() => Init::Normal,
            _ => Init::Randint {
                high: others
                    .flatten()
                    .copied()
                    .filter(|&d| d > 0)
                    .min()
                    .unwrap_or(16),
            },
        };
        let elements = if t.shape.contains(&0) {
            0
        } else {
            1 + t
                .shape
                .iter()
                .zip(&t.strides)
                .map(|(&size, &stride)| (size - 1) * stride.abs())
                .sum::<i64>()
        };
        TensorSpec {
            shape: t.shape.clone(),
            strides: t.strides.clone(),
            strides_recorded: t.strides_recorded,
            dtype: t.dtype_name.clone(),
            torch_dtype: torch_dtype(t.dtype).to_string(),
            dtype_recorded: t.dtype_recorded,
            device: wrapped.then(|| "cpu".to_string()),
            storage_offset: None,
            storage_bytes: elements.max(0) as u64 * t.dtype.bytes(),
            init,
        }
    };
    pending
        .iter()
        .enumerate()
        .map(|(position, p)| {
            let (value, source) = match p {
                Pending::Tensor(t) => (
                    ArgValue::Tensor(spec(position, t, notes)),
                    ValueSource::Recorded,
                ),
                Pending::TensorList(ts) => (
                    ArgValue::TensorList {
                        tensors: ts.iter().map(|t| spec(position, t, notes)).collect(),
                    },
                    ValueSource::Recorded,
                ),
                Pending::Value(value, source) => (value.clone(), *source),
            };
            let arg: Option<&SchemaArg> = schema.map(|s| &s.args[position]);
            Arg {
                position,
                name: arg.map(|a| a.name.clone()),
                schema_type: arg.map(|a| a.type_text.clone()),
                recorded_type: types[position].to_string(),
                source,
                value,
            }
        })
        .collect()
}

/// A recorded scalar or list, from its `Concrete Inputs` text.
fn concrete_value(kind: Recorded, text: &str) -> Result<ArgValue, String> {
    if kind == Recorded::Scalar {
        return scalar_value(text.trim())
            .ok_or_else(|| format!("`{text}` is not a number or bool"));
    }
    let list = pyliteral::parse(text).map_err(|e| format!("`{text}`: {e}"))?;
    match list {
        Value::Array(values) if values.iter().all(|v| v.is_number() || v.is_boolean()) => {
            Ok(ArgValue::List { values })
        }
        _ => Err(format!("`{text}` is not a list of numbers")),
    }
}

/// `True`/`False`, an integer or a float.
fn scalar_value(text: &str) -> Option<ArgValue> {
    Some(match text {
        "True" | "true" => ArgValue::Bool { value: true },
        "False" | "false" => ArgValue::Bool { value: false },
        _ => match text.parse::<i64>() {
            Ok(value) => ArgValue::Int { value },
            Err(_) => {
                let value: f64 = text.parse().ok()?;
                ArgValue::Float {
                    value: value.is_finite().then_some(value),
                    text: text.to_string(),
                }
            }
        },
    })
}

/// A schema argument's default as a value (`SymInt[2] stride=1` is `[1, 1]`).
fn default_value(arg: &SchemaArg) -> Result<ArgValue, String> {
    let text = arg.default.as_deref().unwrap_or("None");
    if text == "None" {
        return Ok(ArgValue::None);
    }
    if let Some(quoted) = text.strip_prefix('\'').and_then(|t| t.strip_suffix('\'')) {
        return Ok(ArgValue::Str {
            value: quoted.to_string(),
        });
    }
    if arg.ty.base == Base::MemoryFormat && text == "contiguous_format" {
        return Ok(ArgValue::Int { value: 0 });
    }
    if let Some(list) = arg.ty.list {
        if text.starts_with('[') {
            return concrete_value(Recorded::ScalarList, text);
        }
        let one = scalar_value(text).ok_or_else(|| format!("default `{text}`"))?;
        let element = match one {
            ArgValue::Int { value } => Value::from(value),
            ArgValue::Bool { value } => Value::from(value),
            _ => return Err(format!("default `{text}` of a list")),
        };
        return Ok(ArgValue::List {
            values: vec![element; list.unwrap_or(1)],
        });
    }
    scalar_value(text).ok_or_else(|| format!("default `{text}`"))
}
pub(super) fn int_list(value: &Value) -> Option<Vec<i64>> {
    value.as_array()?.iter().map(Value::as_i64).collect()
}

fn nested_int_lists(value: &Value) -> Option<Vec<Vec<i64>>> {
    value.as_array()?.iter().map(int_list).collect()
}

/// Contiguous strides of a shape.
pub(super) fn contiguous(shape: &[i64]) -> Vec<i64> {
    let mut strides = vec![1i64; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * shape[i + 1].max(1);
    }
    strides
}

/// The torch attribute naming a dtype.
fn torch_dtype(dtype: Dtype) -> &'static str {
    match dtype {
        Dtype::F64 => "float64",
        Dtype::F32 | Dtype::Scalar => "float32",
        Dtype::F16 => "float16",
        Dtype::Bf16 => "bfloat16",
        Dtype::F8E4m3fn => "float8_e4m3fn",
        Dtype::F8E4m3fnuz => "float8_e4m3fnuz",
        Dtype::F8E5m2 => "float8_e5m2",
        Dtype::F8E5m2fnuz => "float8_e5m2fnuz",
        Dtype::F8E8m0fnu => "float8_e8m0fnu",
        Dtype::F4E2m1fnX2 => "float4_e2m1fn_x2",
        Dtype::I64 => "int64",
        Dtype::I32 => "int32",
        Dtype::I16 => "int16",
        Dtype::I8 => "int8",
        Dtype::U8 => "uint8",
        Dtype::U16 => "uint16",
        Dtype::U32 => "uint32",
        Dtype::U64 => "uint64",
        Dtype::Bool => "bool",
        Dtype::C32 => "complex32",
        Dtype::C64 => "complex64",
        Dtype::C128 => "complex128",
    }
}
