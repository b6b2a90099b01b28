//! The replay IR: everything needed to call one op again (the op, its
//! arguments rebuilt as tensors and values, what the trace recorded and
//! measured, where the call came from), serialised as `replay_ir.json`.

use serde::Serialize;
use serde_json::Value;

use crate::analysis::ops::stats::Stats;
use crate::gate::verdict::{EnvironmentSummary, Finding};

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
    /// The float math settings the replay applies before its first call.
    pub math: MathSettings,
    /// The `nn.Module` path of the call, when recorded.
    pub module_path: Option<String>,
    /// Where the call came from.
    pub origin: Origin,
    /// Hardware and software of the trace the call came from.
    pub environment: Option<EnvironmentSummary>,
    /// The check's finding and both sides' figures; set by
    /// [`write_package`](super::write_package).
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

/// The float math settings a call ran under. They decide which kernel an
/// fp32 GEMM or convolution runs (TF32 tensor cores or not, cuDNN's
/// algorithm search), so a replay that ignored them could time another
/// kernel than the trace did. The profiler records none of them: TF32 is
/// read from the call's kernel names, the rest are PyTorch's defaults.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MathSettings {
    /// `torch.backends.cuda.matmul.allow_tf32`.
    pub matmul_allow_tf32: bool,
    /// `torch.backends.cudnn.allow_tf32`.
    pub cudnn_allow_tf32: bool,
    /// `torch.backends.cudnn.benchmark`.
    pub cudnn_benchmark: bool,
    /// `torch.backends.cudnn.deterministic`.
    pub cudnn_deterministic: bool,
    /// Where the values come from, one sentence.
    pub source: String,
}

impl Default for MathSettings {
    /// PyTorch's defaults (since 1.12): no TF32 for matmuls, TF32 for cuDNN
    /// convolutions, no algorithm search, nondeterministic algorithms allowed.
    fn default() -> MathSettings {
        MathSettings {
            matmul_allow_tf32: false,
            cudnn_allow_tf32: true,
            cudnn_benchmark: false,
            cudnn_deterministic: false,
            source: "PyTorch's defaults: the trace does not record these settings, and no \
                     kernel of the call names TF32"
                .to_string(),
        }
    }
}

impl MathSettings {
    /// The settings a call's kernels show: when one of them names TF32
    /// (cuBLAS, cuDNN, CUTLASS and hipBLASLt kernels say `tf32` in their
    /// names), TF32 was allowed for matmuls and convolutions alike; else
    /// [`MathSettings::default`].
    pub fn of_kernels(kernels: &[KernelRef]) -> MathSettings {
        let tf32 = kernels
            .iter()
            .find(|k| k.name.to_ascii_lowercase().contains("tf32"));
        match tf32 {
            Some(kernel) => MathSettings {
                matmul_allow_tf32: true,
                cudnn_allow_tf32: true,
                source: format!(
                    "TF32 from the trace: the call's kernel {} runs TF32 math; the cuDNN \
                     choices are PyTorch's defaults (not recorded)",
                    kernel.name
                ),
                ..MathSettings::default()
            },
            None => MathSettings::default(),
        }
    }
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

/// What a check said about the call (set by
/// [`write_package`](super::write_package)).
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
