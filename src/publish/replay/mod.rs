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
//!
//! The parts: `ir` holds the IR's types, `sources` reads a call from a trace
//! or snapshot, `args` rebuilds its arguments (with `schema` and
//! `pyliteral`), `select` picks the calls, `package` writes the archive.

mod args;
mod ir;
mod package;
mod pyliteral;
mod schema;
mod select;
mod sources;
#[cfg(test)]
mod tests;

pub use ir::{
    Arg, ArgValue, Comparison, IR_FORMAT, IR_VERSION, Init, KernelRef, MathSettings, OpTarget,
    Origin, RecordedArgs, ReplayError, ReplayIr, TensorSpec, ValueSource,
};
pub use package::{PACKAGE_FILES, PackageContext, REPLAY_PY, write_package};
pub use select::{SelectedPackage, Selection, events_matching, rows_matching, select_packages};
pub use sources::{ir_for_event, ir_for_op_ref, ir_for_row, ir_for_snapshot_row};
