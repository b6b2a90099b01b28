//! Which ops get packages: unique-args rows and op events matching a name
//! (and shape) pattern for `replay`, and the findings of a verdict the
//! policy's `replay` section selects for `check`, one package per op row.

use std::collections::BTreeMap;

use super::ir::{ReplayError, ReplayIr};
use crate::analysis::ops::args::python_repr;
use crate::analysis::profile::UniqueArgs;
use crate::gate::policy::{self, Pattern};
use crate::gate::verdict::{Finding, OpRef, Verdict};
use crate::trace::{Kind, Trace};

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

/// Chooses the findings that get replay packages: op findings (not a rank
/// set's collectives or stragglers, which have no call) whose
/// severity the policy lists or that the cross-platform report lists
/// ([`Finding::is_platform_gap`]), in the verdict's order (most important
/// first), one package per op row (findings about the same row share it),
/// at most `max_packages`; with `only_known_schema`, only calls whose
/// schema tracegate knows. `build` makes the IR of a finding's op (for a
/// check: [`ir_for_op_ref`](super::ir_for_op_ref) over the workload's snapshots).
pub fn select_packages(
    verdict: &Verdict,
    policy: &policy::Replay,
    mut build: impl FnMut(&Finding, &OpRef) -> Result<ReplayIr, ReplayError>,
) -> Selection {
    let mut selection = Selection::default();
    let mut by_row: BTreeMap<(&str, &str, &str, &str, &str), Option<usize>> = BTreeMap::new();
    for (index, finding) in verdict.findings.iter().enumerate() {
        let Some(op) = &finding.op else { continue };
        // A collective or a straggler is a rank set's, not an op row's:
        // there is no call to replay.
        // The cross-platform day-one report's ops get one for the kernel
        // team (Path B), information though they are.
        let selected = policy.severities.contains(&finding.severity) || finding.is_platform_gap();
        if !selected || finding.kind.is_rank_set() {
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
