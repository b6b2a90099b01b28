//! The capture merge: which captured call, and so which op of the capture
//! trace, put each replayed work item in its graph.
//!
//! Every replay is paired with the capture that fits it best (most work
//! items paired, [`super::align`]); a graph replayed many times is aligned
//! once per distinct kernel sequence. When several captures fit equally well
//! and would attach different ops (the same kernels captured for two batch
//! sizes, say), none is attached: the work stays in kernel rows and a note
//! says why — wrong shapes are never attached.

use std::collections::HashMap;

use super::align::{Alignment, align};
use super::capture::{Label, Window, windows};
use super::replays::Replay;
use crate::analysis::gpu_work::GpuWork;
use crate::trace::link::{NONE, Tree};
use crate::trace::{Kind, OpArgs, Sym, Trace};

/// What the merge found for one replayed work item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Owner {
    /// No captured call matched it (or no capture trace was given).
    Unmatched,
    /// A captured call with no op above it (a launch from Python).
    Call,
    /// A captured call under this op of the capture trace.
    Op(u32),
}

/// The merge of a capture trace into the replays.
pub(super) struct Merge {
    /// Per replay, per work item (in the replay's order): its owner.
    pub(super) owners: Vec<Vec<Owner>>,
    /// Captures found in the capture trace.
    pub(super) captures: u64,
    /// One line per graph whose work was left (partly) unmatched.
    pub(super) notes: Vec<String>,
}

/// The label of a replayed work item.
pub(super) fn replay_label<'a>(trace: &'a Trace, gpu: &GpuWork, work: u32) -> Label<'a> {
    let event = &trace.events[gpu.items[work as usize].event as usize];
    match event.kind {
        Kind::Memcpy => Label::Copy,
        Kind::Memset => Label::Set,
        _ => Label::Kernel(trace.name(event)),
    }
}

/// The owners of one replay's work and why some are unmatched.
type Attribution = (Vec<Owner>, Option<String>);

/// Attributes each replayed work item to a call of the capture trace.
pub(super) fn merge(
    trace: &Trace,
    gpu: &GpuWork,
    replays: &[Replay],
    capture: &Trace,
    capture_tree: &Tree,
) -> Merge {
    let windows = windows(capture, capture_tree);
    let mut cache: HashMap<(String, Vec<Label<'_>>), Attribution> = HashMap::new();
    let mut owners = Vec::with_capacity(replays.len());
    let mut notes: Vec<String> = Vec::new();
    for replay in replays {
        let replayed: Vec<(Label<'_>, Option<i64>)> = replay
            .work
            .iter()
            .map(|&w| (replay_label(trace, gpu, w), gpu.items[w as usize].stream))
            .collect();
        let labels: Vec<Label<'_>> = replayed.iter().map(|(l, _)| *l).collect();
        let key = (replay.graph.clone(), labels);
        let (found, note) = cache
            .entry(key)
            .or_insert_with(|| attribute(capture, &windows, &replay.graph, &replayed))
            .clone();
        if let Some(note) = note {
            if !notes.contains(&note) {
                notes.push(note);
            }
        }
        owners.push(found);
    }
    Merge {
        owners,
        captures: windows.len() as u64,
        notes,
    }
}

/// The owners of one replay's work, from the capture that fits it best, and
/// a note when work is left unmatched.
fn attribute(
    capture: &Trace,
    windows: &[Window<'_>],
    graph: &str,
    replayed: &[(Label<'_>, Option<i64>)],
) -> Attribution {
    let unmatched = vec![Owner::Unmatched; replayed.len()];
    if windows.is_empty() {
        return (
            unmatched,
            Some(format!(
                "{graph}: the capture trace has no graph capture (no StreamBeginCapture … StreamEndCapture)"
            )),
        );
    }
    let alignments: Vec<Alignment> = windows
        .iter()
        .map(|w| {
            let labels: Vec<Label<'_>> = w.dispatches.iter().map(|d| d.label).collect();
            align(&labels, replayed)
        })
        .collect();
    let best = alignments.iter().map(Alignment::matched).max().unwrap_or(0);
    if best == 0 {
        let why = alignments
            .iter()
            .find_map(|a| a.note.clone())
            .unwrap_or_else(|| "no captured call names its kernels".to_string());
        return (
            unmatched,
            Some(format!("{graph}: no capture fits its work: {why}")),
        );
    }
    let owners_of = |(window, alignment): (&Window<'_>, &Alignment)| -> Vec<Owner> {
        alignment
            .pairs
            .iter()
            .map(|pair| match pair {
                None => Owner::Unmatched,
                Some(call) => match window.dispatches[*call].op {
                    NONE => Owner::Call,
                    op => Owner::Op(op),
                },
            })
            .collect()
    };
    let fitting: Vec<Vec<Owner>> = windows
        .iter()
        .zip(&alignments)
        .filter(|(_, a)| a.matched() == best)
        .map(owners_of)
        .collect();
    let same_ops = fitting.windows(2).all(|pair| {
        pair[0]
            .iter()
            .zip(&pair[1])
            .all(|(a, b)| op_identity(capture, *a) == op_identity(capture, *b))
    });
    if !same_ops {
        return (
            unmatched,
            Some(format!(
                "{graph}: {} captures fit its work equally well and their ops differ: none is attached",
                fitting.len()
            )),
        );
    }
    let owners = fitting.into_iter().next().expect("the best capture");
    let missed = owners.iter().filter(|o| **o == Owner::Unmatched).count();
    let note = (missed > 0).then(|| {
        let index = alignments
            .iter()
            .position(|a| a.matched() == best)
            .expect("the best capture");
        let why = alignments[index]
            .note
            .clone()
            .unwrap_or_else(|| "renamed or added since the capture".to_string());
        format!(
            "{graph}: {missed} of {} replayed work items matched no captured call ({why})",
            replayed.len()
        )
    });
    (owners, note)
}

/// What an owner attaches to a row: the op's name and arguments.
fn op_identity(capture: &Trace, owner: Owner) -> Option<(Sym, Option<OpArgs>)> {
    match owner {
        Owner::Op(op) => {
            let event = &capture.events[op as usize];
            Some((event.name, capture.op_args(event).copied()))
        }
        _ => None,
    }
}
