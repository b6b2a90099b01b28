//! Replay packages: a minimal, self-contained reproducer for one op call.
//!
//! A kernel team cannot act on "aten::mm got 30% slower in model X"; it can
//! act on a script that runs exactly that call on their machine. From one
//! CPU op of a trace (or one op row of a snapshot) this module builds the
//! **replay IR** ([`ReplayIr`]): the op and its overload, every argument
//! rebuilt from the recorded `Input Dims`, `Input type`, `Input Strides` and
//! `Concrete Inputs` (tensors as shape, dtype and strides; scalars, lists and
//! None as values), the trace's per-call kernel time and kernel names, and
//! the environment. [`write_package`] turns it into a deterministic
//! `.tar.gz` holding `replay_ir.json`, `replay.py` (Python and PyTorch only)
//! and a README (docs/REPLAY.md).
//!
//! Sources of an IR:
//! - [`ir_for_event`]: one CPU op event of a loaded trace;
//! - [`ir_for_row`]: a unique-args row of a trace's profile (its example
//!   event, plus the row's timing and kernels);
//! - [`ir_for_snapshot_row`] and [`ir_for_op_ref`]: an op row of a snapshot,
//!   whose argument lists are Python tuple text, read back;
//! - [`select_packages`]: the findings of a verdict the policy's `replay`
//!   section selects, one package per op row.
//!
//! Like the rest of the library this never touches files: the CLI writes
//! the bytes.

mod package;
mod pyliteral;
mod schema;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use crate::analysis::hardware;
use crate::analysis::ops::args::python_repr;
use crate::analysis::ops::stats::Stats;
use crate::analysis::perf_model::dtype::Dtype;
use crate::analysis::profile::UniqueArgs;
use crate::gate::policy::{self, Pattern};
use crate::gate::snapshot::{self, Fingerprint, GpuCount, OpSnapshot, Snapshot};
use crate::gate::verdict::{EnvironmentSummary, Finding, OpRef, Verdict};
use crate::trace::{Kind, Trace};

pub use package::{PACKAGE_FILES, PackageContext, REPLAY_PY, write_package};
use schema::{Base, Recorded, Schema, SchemaArg};

/// The `format` value of every replay IR.
pub const IR_FORMAT: &str = "tracegate-replay-ir";

/// The replay IR version. Bumped when a field's meaning changes or a field
/// goes away; `replay.py` refuses other versions.
pub const IR_VERSION: u32 = 1;

/// Why no IR could be built for an op.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ReplayError {
    /// No timed event has this `traceEvents` index.
    #[error("the trace has no timed event at index {0}")]
    NoSuchEvent(u32),
    /// The event is not a CPU op.
    #[error("event {index} ({name}) is not a CPU op")]
    NotAnOp {
        /// `traceEvents` index.
        index: u32,
        /// Event name.
        name: String,
    },
    /// No snapshot holds an op row with these arguments.
    #[error("{name}: no op row with these arguments in the workload's traces or snapshots")]
    NoSuchRow {
        /// Op name.
        name: String,
    },
    /// Not a dispatcher operator (`namespace::name`): a Python function, an
    /// autograd node, a Triton kernel launched as an op.
    #[error("{name}: not a dispatcher op (`namespace::name`), so there is no schema to call it by")]
    UnknownSchema {
        /// Op name.
        name: String,
    },
    /// The trace has no `Input Dims` / `Input type` for the event.
    #[error("{name}: the trace recorded no input shapes (profile with record_shapes=True)")]
    NoShapes {
        /// Op name.
        name: String,
    },
    /// An input that cannot be rebuilt from what the trace recorded.
    #[error("{name}: input {position}: {reason}")]
    UnparseableArgs {
        /// Op name.
        name: String,
        /// Position in the recorded inputs.
        position: usize,
        /// What is missing or malformed.
        reason: String,
    },
}

/// Everything needed to call one op again, and what the trace measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReplayIr {
    /// Always [`IR_FORMAT`].
    pub format: String,
    /// [`IR_VERSION`].
    pub version: u32,
    /// The tracegate version that made it.
    pub tracegate_version: String,
    /// The op and its overload.
    pub op: OpTarget,
    /// Positional arguments, in order.
    pub args: Vec<Arg>,
    /// Keyword-only arguments (known from the schema).
    pub kwargs: Vec<Arg>,
    /// The four argument lists as the trace recorded them.
    pub recorded: RecordedArgs,
    /// Bytes of device memory the input tensors need.
    pub input_bytes: u64,
    /// Invocations of this call (same op, same arguments) in the trace.
    pub invocations: Option<u64>,
    /// The trace's kernel time per call (union of the op's own kernels), µs.
    pub kernel_time_us: Option<Stats>,
    /// The kernels one call launched, in order.
    pub kernels: Vec<KernelRef>,
    /// The `nn.Module` path of the call, when recorded.
    pub module_path: Option<String>,
    /// Where the call came from.
    pub origin: Origin,
    /// Hardware and software of the trace the call came from.
    pub environment: Option<EnvironmentSummary>,
    /// The check's finding and both sides' figures; set by [`write_package`].
    pub comparison: Option<Comparison>,
    /// Assumptions made where the trace records nothing (one sentence each).
    pub notes: Vec<String>,
}

/// The op to call.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OpTarget {
    /// As the trace names it: `aten::addmm`.
    pub name: String,
    /// `aten`.
    pub namespace: String,
    /// `addmm`.
    pub op: String,
    /// The overload (`default`, `Tensor`, `out` …) when the schema is known.
    pub overload: Option<String>,
    /// The schema, `aten::add.Tensor(Tensor self, …) -> Tensor`, when known.
    pub schema: Option<String>,
    /// Whether tracegate knows the schema (an `aten::` op whose recorded
    /// input types fit one of its built-in schemas). Unknown schemas are
    /// resolved by `replay.py` against the installed PyTorch.
    pub schema_known: bool,
}

/// One argument of the call.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Arg {
    /// Position in the recorded inputs (and in the schema).
    pub position: usize,
    /// The schema's name for it, when the schema is known.
    pub name: Option<String>,
    /// The schema's type for it (`Tensor?`, `SymInt[]`), when known.
    pub schema_type: Option<String>,
    /// `Input type` as recorded (`c10::BFloat16`, `Scalar`, `""`).
    pub recorded_type: String,
    /// Where the value comes from.
    pub source: ValueSource,
    /// The value.
    #[serde(flatten)]
    pub value: ArgValue,
}

/// Where an argument's value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ValueSource {
    /// The trace recorded it.
    Recorded,
    /// The trace did not record it; the schema's default.
    SchemaDefault,
    /// The trace does not record it (a `Device`); the replay's device.
    ReplayDevice,
}

/// An argument's value.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ArgValue {
    /// A tensor.
    Tensor(TensorSpec),
    /// A list of tensors (`Tensor[]`, e.g. `aten::cat`'s first argument).
    TensorList {
        /// The tensors.
        tensors: Vec<TensorSpec>,
    },
    /// None.
    None,
    /// A bool.
    Bool {
        /// The value.
        value: bool,
    },
    /// An integer (also a dtype, layout or memory format by its enum number).
    Int {
        /// The value.
        value: i64,
    },
    /// A float.
    Float {
        /// The value, when finite.
        value: Option<f64>,
        /// As recorded (Python's `float()` reads it: `0.125`, `inf`).
        text: String,
    },
    /// A list of numbers or bools (`int[]`, `SymInt[]`, `bool[]`).
    List {
        /// The values.
        values: Vec<Value>,
    },
    /// A string.
    Str {
        /// The value.
        value: String,
    },
    /// The device the replay runs on.
    Device,
}

/// A tensor to allocate.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TensorSpec {
    /// Sizes.
    pub shape: Vec<i64>,
    /// Strides in elements.
    pub strides: Vec<i64>,
    /// Whether the trace recorded the strides (else contiguous).
    pub strides_recorded: bool,
    /// Element type as the profiler names it (`c10::BFloat16`, `long int`).
    pub dtype: String,
    /// The `torch` attribute of that type (`bfloat16`, `int64`).
    pub torch_dtype: String,
    /// Whether the trace recorded the dtype (tensor lists record none).
    pub dtype_recorded: bool,
    /// `cpu` for a zero-dimensional tensor the trace most likely got from a
    /// Python number; none for the replay's device.
    pub device: Option<String>,
    /// Storage offset in elements, when known (the profiler records none).
    pub storage_offset: Option<i64>,
    /// Bytes of the storage the shape and strides need.
    pub storage_bytes: u64,
    /// How to fill it.
    pub init: Init,
}

/// How an input tensor is filled.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Init {
    /// Standard normal values (floating types; fp8 and fp4 via float32).
    Normal,
    /// Uniform integers in `[0, high)`: valid indices into every other
    /// tensor argument's dimensions.
    Randint {
        /// Exclusive upper bound.
        high: i64,
    },
    /// Random booleans.
    Bool,
}

/// The argument lists as recorded (JSON values).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RecordedArgs {
    /// `Input Dims`.
    pub input_dims: Value,
    /// `Input type`.
    pub input_type: Value,
    /// `Input Strides`, when recorded.
    pub input_strides: Option<Value>,
    /// `Concrete Inputs`, when recorded.
    pub concrete_inputs: Option<Value>,
}

/// A kernel the call launched.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KernelRef {
    /// Kernel name.
    pub name: String,
    /// How many times it ran in the trace, when known.
    pub count: Option<u64>,
    /// Its median duration, µs, when known.
    pub median_us: Option<f64>,
}

/// Where a call came from.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Origin {
    /// The workload (trace file name without suffixes).
    pub workload: Option<String>,
    /// The trace file, as given to tracegate.
    pub trace: Option<String>,
    /// The op event's index in `traceEvents`.
    pub event_index: Option<u32>,
    /// SHA-256 of the trace file, when built from a snapshot.
    pub trace_sha256: Option<String>,
}

/// What a check said about the call (set by [`write_package`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    /// The workload.
    pub workload: String,
    /// The finding the package was made for.
    pub finding: Option<Finding>,
    /// Baseline kernel time per call, µs.
    pub baseline_us: Option<f64>,
    /// Candidate kernel time per call, µs.
    pub candidate_us: Option<f64>,
    /// Baseline hardware and software.
    pub baseline_environment: Option<EnvironmentSummary>,
    /// Candidate hardware and software.
    pub candidate_environment: Option<EnvironmentSummary>,
}

/// Builds the IR of one CPU op event, by its `traceEvents` index (the
/// `example_event` of a unique-args row).
pub fn ir_for_event(trace: &Trace, event_index: u32) -> Result<ReplayIr, ReplayError> {
    let position = trace
        .events
        .binary_search_by_key(&event_index, |e| e.index)
        .map_err(|_| ReplayError::NoSuchEvent(event_index))?;
    let event = &trace.events[position];
    let name = trace.name(event);
    let args = trace.op_args(event).ok_or_else(|| match event.kind {
        Kind::CpuOp => ReplayError::NoShapes {
            name: name.to_string(),
        },
        _ => ReplayError::NotAnOp {
            index: event_index,
            name: name.to_string(),
        },
    })?;
    let json = |sym: Option<crate::trace::Sym>| {
        sym.and_then(|s| serde_json::from_str::<Value>(trace.strings.get(s)).ok())
    };
    let (Some(input_dims), Some(input_type)) = (json(args.input_dims), json(args.input_type))
    else {
        return Err(ReplayError::NoShapes {
            name: name.to_string(),
        });
    };
    let recorded = RecordedArgs {
        input_dims,
        input_type,
        input_strides: json(args.input_strides),
        concrete_inputs: json(args.concrete_inputs),
    };
    let mut ir = build(name, recorded, &|shapes| {
        neighbour_dtype(trace, position, shapes).or_else(|| majority_dtype(trace_type_lists(trace)))
    })?;
    ir.origin = Origin {
        workload: Some(snapshot::workload_name(Path::new(&trace.source))),
        trace: Some(trace.source.clone()),
        event_index: Some(event_index),
        trace_sha256: None,
    };
    ir.environment = Some(trace_environment(trace));
    Ok(ir)
}

/// Builds the IR of a unique-args row: its example event, with the row's
/// invocations, kernel time per call, kernels and module path.
pub fn ir_for_row(trace: &Trace, row: &UniqueArgs) -> Result<ReplayIr, ReplayError> {
    let mut ir = ir_for_event(trace, row.example_event)?;
    ir.invocations = Some(row.direct.count);
    ir.kernel_time_us = Some(row.direct);
    ir.kernels = row
        .kernels
        .iter()
        .map(|k| KernelRef {
            name: k.name.clone(),
            count: Some(k.duration.count),
            median_us: Some(k.duration.median),
        })
        .collect();
    ir.module_path = row.module_path.clone();
    Ok(ir)
}

/// Builds the IR of a snapshot's op row (whose argument lists are Python
/// tuple text), with the row's timing and kernel sequence.
pub fn ir_for_snapshot_row(snapshot: &Snapshot, row: &OpSnapshot) -> Result<ReplayIr, ReplayError> {
    let tuple = |text: &str| pyliteral::parse(text).ok();
    let (Some(input_dims), Some(input_type)) = (tuple(&row.input_dims), tuple(&row.input_type))
    else {
        return Err(ReplayError::NoShapes {
            name: row.name.clone(),
        });
    };
    let recorded = RecordedArgs {
        input_dims,
        input_type,
        input_strides: tuple(&row.input_strides).filter(|v| !is_empty_list(v)),
        concrete_inputs: tuple(&row.concrete_inputs).filter(|v| !is_empty_list(v)),
    };
    let mut ir = build(&row.name, recorded, &|_| {
        majority_dtype(
            snapshot
                .ops
                .iter()
                .filter_map(|r| Some((pyliteral::parse(&r.input_type).ok()?, r.direct.count))),
        )
    })?;
    ir.invocations = Some(row.direct.count);
    ir.kernel_time_us = Some(row.direct);
    ir.kernels = row
        .kernel_sequence
        .iter()
        .map(|name| KernelRef {
            name: name.clone(),
            count: None,
            median_us: None,
        })
        .collect();
    ir.module_path = row.module_path.clone();
    ir.origin = Origin {
        workload: Some(snapshot.workload.clone()),
        trace: None,
        event_index: None,
        trace_sha256: Some(snapshot.fingerprint.trace_sha256.clone()).filter(|s| !s.is_empty()),
    };
    ir.environment = Some(snapshot.fingerprint.summary(1));
    Ok(ir)
}

/// Builds the IR of the op row a finding names, from the first snapshot
/// (candidate first, say) that has a row with the same name, dims, types
/// and strides; of several such rows (differing in concrete inputs) the one
/// with the most kernel time.
pub fn ir_for_op_ref<'a>(
    snapshots: impl IntoIterator<Item = &'a Snapshot>,
    op: &OpRef,
) -> Result<ReplayIr, ReplayError> {
    for snapshot in snapshots {
        let row = snapshot.ops.iter().find(|row| {
            row.name == op.name
                && row.input_dims == op.input_dims
                && row.input_type == op.input_type
                && row.input_strides == op.input_strides
        });
        if let Some(row) = row {
            return ir_for_snapshot_row(snapshot, row);
        }
    }
    Err(ReplayError::NoSuchRow {
        name: op.name.clone(),
    })
}

/// The unique-args rows whose name matches `name` and, when given, whose
/// `Input Dims` match the shape pattern `dims`; most kernel time first.
pub fn rows_matching<'a>(
    rows: &'a [UniqueArgs],
    name: &Pattern,
    dims: Option<&Pattern>,
) -> Vec<&'a UniqueArgs> {
    rows.iter()
        .filter(|row| name.matches(&row.name) && dims.is_none_or(|d| d.matches(&row.input_dims)))
        .collect()
}

/// The `traceEvents` indices of CPU ops named like `name` (and with `Input
/// Dims` matching `dims`), one per distinct argument set, in trace order.
/// For ops that launch no GPU work themselves (`aten::convolution` above
/// `aten::cudnn_convolution`), which have no unique-args row.
pub fn events_matching(trace: &Trace, name: &Pattern, dims: Option<&Pattern>) -> Vec<u32> {
    let mut seen = std::collections::HashSet::new();
    trace
        .events
        .iter()
        .filter(|e| e.kind == Kind::CpuOp && name.matches(trace.name(e)))
        .filter_map(|e| {
            let args = trace.op_args(e)?;
            args.input_dims?;
            let key = (
                e.name,
                args.input_dims,
                args.input_type,
                args.input_strides,
                args.concrete_inputs,
            );
            if !seen.insert(key) {
                return None;
            }
            let dims_text = python_repr(trace.strings.get(args.input_dims?));
            dims.is_none_or(|d| d.matches(&dims_text))
                .then_some(e.index)
        })
        .collect()
}

/// One package [`select_packages`] chose: the IR and the findings it serves.
#[derive(Clone, Debug, PartialEq)]
pub struct SelectedPackage {
    /// The call.
    pub ir: ReplayIr,
    /// Indices into `verdict.findings` about this op row (same workload,
    /// name, dims, types, strides), most important first.
    pub findings: Vec<usize>,
}

/// What [`select_packages`] chose, and why it left findings out.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Selection {
    /// The packages to write, most important finding first.
    pub packages: Vec<SelectedPackage>,
    /// Selected findings left without a package: (index, reason).
    pub skipped: Vec<(usize, String)>,
}

/// Chooses the findings that get replay packages: op findings whose
/// severity the policy lists, in the verdict's order (most important
/// first), one package per op row (findings about the same row share it),
/// at most `max_packages`; with `only_known_schema`, only calls whose
/// schema tracegate knows. `build` makes the IR of a finding's op (for a
/// check: [`ir_for_op_ref`] over the workload's snapshots).
pub fn select_packages(
    verdict: &Verdict,
    policy: &policy::Replay,
    mut build: impl FnMut(&Finding, &OpRef) -> Result<ReplayIr, ReplayError>,
) -> Selection {
    let mut selection = Selection::default();
    let mut by_row: BTreeMap<(&str, &str, &str, &str, &str), Option<usize>> = BTreeMap::new();
    for (index, finding) in verdict.findings.iter().enumerate() {
        let Some(op) = &finding.op else { continue };
        if !policy.severities.contains(&finding.severity) {
            continue;
        }
        let key = (
            finding.workload.as_str(),
            op.name.as_str(),
            op.input_dims.as_str(),
            op.input_type.as_str(),
            op.input_strides.as_str(),
        );
        if let Some(slot) = by_row.get(&key) {
            if let Some(package) = slot {
                selection.packages[*package].findings.push(index);
            }
            continue;
        }
        if selection.packages.len() >= policy.max_packages {
            by_row.insert(key, None);
            continue;
        }
        let built = build(finding, op).map_err(|e| e.to_string()).and_then(|ir| {
            if policy.only_known_schema && !ir.op.schema_known {
                Err(format!(
                    "{}: tracegate knows no aten schema that fits its arguments (replay.only_known_schema)",
                    ir.op.name
                ))
            } else {
                Ok(ir)
            }
        });
        match built {
            Ok(ir) => {
                by_row.insert(key, Some(selection.packages.len()));
                selection.packages.push(SelectedPackage {
                    ir,
                    findings: vec![index],
                });
            }
            Err(reason) => {
                by_row.insert(key, None);
                selection.skipped.push((index, reason));
            }
        }
    }
    selection
}

/// Hardware and software a trace records, from its metadata alone.
fn trace_environment(trace: &Trace) -> EnvironmentSummary {
    let text = |key: &str| {
        trace.metadata.get(key).map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
    };
    let distributed = |key: &str| {
        trace
            .metadata
            .get("distributedInfo")
            .and_then(|d| d.get(key))
            .and_then(Value::as_i64)
    };
    let mut gpus: Vec<GpuCount> = Vec::new();
    for device in &trace.metadata.devices {
        match gpus.iter_mut().find(|g| g.name == device.name) {
            Some(entry) => entry.count += 1,
            None => gpus.push(GpuCount {
                name: device.name.clone(),
                count: 1,
            }),
        }
    }
    let fingerprint = Fingerprint {
        gpus,
        hardware: hardware::builtin_catalog()
            .detect(&trace.metadata.devices)
            .hardware()
            .map(|h| h.name.clone()),
        cuda_runtime_version: text("cuda_runtime_version"),
        hip_runtime_version: text("hip_runtime_version"),
        pytorch_version: snapshot::pytorch_version(&trace.metadata),
        rank: distributed("rank"),
        world_size: distributed("world_size"),
        ..Fingerprint::default()
    };
    fingerprint.summary(1)
}

fn is_empty_list(value: &Value) -> bool {
    value.as_array().is_some_and(Vec::is_empty)
}

fn int_list(value: &Value) -> Option<Vec<i64>> {
    value.as_array()?.iter().map(Value::as_i64).collect()
}

fn nested_int_lists(value: &Value) -> Option<Vec<Vec<i64>>> {
    value.as_array()?.iter().map(int_list).collect()
}

/// Contiguous strides of a shape.
fn contiguous(shape: &[i64]) -> Vec<i64> {
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

/// The `Input type` lists of a trace's CPU ops, with how many ops share each.
fn trace_type_lists(trace: &Trace) -> impl Iterator<Item = (Value, u64)> + '_ {
    let mut counts: BTreeMap<u32, u64> = BTreeMap::new();
    for event in &trace.events {
        if let Some(sym) = trace.op_args(event).and_then(|a| a.input_type) {
            *counts.entry(sym.0).or_default() += 1;
        }
    }
    counts.into_iter().filter_map(|(sym, count)| {
        let text = trace.strings.get(crate::trace::Sym(sym));
        Some((serde_json::from_str(text).ok()?, count))
    })
}

/// The most common floating-point tensor type over `Input type` lists
/// (each weighted), for a tensor list whose dtype was not recorded.
fn majority_dtype(lists: impl Iterator<Item = (Value, u64)>) -> Option<(String, String)> {
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    for (list, weight) in lists {
        for name in list
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            if let Recorded::Tensor(dtype) = Recorded::of(name) {
                if dtype.is_floating() {
                    *counts.entry(name.to_string()).or_default() += weight;
                }
            }
        }
    }
    let (name, _) = counts
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))?;
    let note = format!(
        "the tensor list's dtype is not recorded: {name}, the trace's most common floating-point input type, is assumed (see --dtype-override)"
    );
    Some((name, note))
}

/// The shapes of a tensor list's members and of their concatenation along
/// each dimension where the others agree (what `aten::cat` returns, and so
/// what the next op reads).
fn with_concatenations(shapes: &[Vec<i64>]) -> Vec<Vec<i64>> {
    let mut targets = shapes.to_vec();
    let Some(first) = shapes.first() else {
        return targets;
    };
    for dim in 0..first.len() {
        let agree = shapes.iter().all(|s| {
            s.len() == first.len()
                && s.iter()
                    .zip(first)
                    .enumerate()
                    .all(|(d, (a, b))| d == dim || a == b)
        });
        if agree {
            let mut joined = first.clone();
            joined[dim] = shapes.iter().map(|s| s[dim]).sum();
            targets.push(joined);
        }
    }
    targets
}

/// The dtype of a tensor list from the nearest CPU op on the same thread
/// that has an input of one of the list's shapes (or of their
/// concatenation).
fn neighbour_dtype(
    trace: &Trace,
    position: usize,
    shapes: &[Vec<i64>],
) -> Option<(String, String)> {
    const REACH: usize = 256;
    let targets = with_concatenations(shapes);
    let track = trace.events[position].track;
    let same_thread = |e: &&crate::trace::Event| e.kind == Kind::CpuOp && e.track == track;
    let before: Vec<_> = trace.events[..position]
        .iter()
        .rev()
        .filter(same_thread)
        .take(REACH)
        .collect();
    let after: Vec<_> = trace.events[position + 1..]
        .iter()
        .filter(same_thread)
        .take(REACH)
        .collect();
    let interleaved = (0..REACH)
        .flat_map(|i| [before.get(i), after.get(i)])
        .flatten();
    for event in interleaved {
        let Some(args) = trace.op_args(event) else {
            continue;
        };
        let (Some(types), Some(dims)) = (args.input_type, args.input_dims) else {
            continue;
        };
        let types: Value = serde_json::from_str(trace.strings.get(types)).ok()?;
        let dims: Value = serde_json::from_str(trace.strings.get(dims)).ok()?;
        let pairs = types
            .as_array()
            .into_iter()
            .flatten()
            .zip(dims.as_array().into_iter().flatten());
        for (ty, dim) in pairs {
            let Some(name) = ty.as_str() else { continue };
            if matches!(Recorded::of(name), Recorded::Tensor(_))
                && int_list(dim).is_some_and(|d| targets.contains(&d))
            {
                let note = format!(
                    "the tensor list's dtype is not recorded: {name} is taken from {} (event {}), which has an input of the list's shapes or of their concatenation (see --dtype-override)",
                    trace.name(event),
                    event.index
                );
                return Some((name.to_string(), note));
            }
        }
    }
    None
}

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
fn build(
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
