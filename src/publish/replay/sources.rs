//! Where an IR comes from: a CPU op event of a loaded trace, a unique-args
//! row of its profile, or an op row of a snapshot. Each reads the recorded
//! argument lists, guesses the dtype of tensor lists from the rest of the
//! trace, and adds the timing, kernels, origin and environment it knows.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::args::{build, int_list};
use super::ir::{KernelRef, MathSettings, Origin, RecordedArgs, ReplayError, ReplayIr};
use super::pyliteral;
use super::schema::Recorded;
use crate::analysis::hardware;
use crate::analysis::profile::UniqueArgs;
use crate::gate::snapshot::{self, Fingerprint, GpuCount, OpSnapshot, Snapshot};
use crate::gate::verdict::{EnvironmentSummary, OpRef};
use crate::trace::{Kind, Trace};

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
    ir.math = MathSettings::of_kernels(&ir.kernels);
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
    ir.math = MathSettings::of_kernels(&ir.kernels);
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
