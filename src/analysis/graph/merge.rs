//! The capture merge: which captured call, and so which op of which
//! capture trace, put each replayed work item in its graph.
//!
//! A launch in an annotated execution step is paired with the graph its
//! step's capture holds at its position ([`super::select`]), as TraceLens
//! pairs them; a step no capture listed in `execution_details.json` holds
//! stays unmerged, as there. Any other replay is paired with the capture that fits it
//! best (most work items paired, [`super::align`]) among every capture of
//! every capture trace; a graph replayed many times is aligned once per
//! distinct kernel sequence. When several captures fit equally well and
//! would attach different ops (the same kernels captured for two batch
//! sizes, say), none is attached: the work stays in kernel rows and a note
//! says why — wrong shapes are never attached.

use std::collections::{BTreeMap, HashMap};

use super::Capture;
use super::align::{Alignment, align};
use super::capture::{Label, Window, windows};
use super::replays::Replay;
use super::select::{self, Details};
use crate::analysis::gpu_work::GpuWork;
use crate::analysis::perf::CapturedOp;
use crate::trace::link::NONE;
use crate::trace::{Kind, OpArgs, Sym, Trace};

/// What the merge found for one replayed work item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Owner {
    /// No captured call matched it (or no capture trace was given).
    Unmatched,
    /// A captured call with no op above it (a launch from Python).
    Call,
    /// A captured call under this op of a capture trace.
    Op(CapturedOp),
}

/// The merge of capture traces into the replays.
pub(super) struct Merge {
    /// Per replay, per work item (in the replay's order): its owner.
    pub(super) owners: Vec<Vec<Owner>>,
    /// Captures found in the capture traces.
    pub(super) captures: u64,
    /// Which capture the annotated steps took, one line per capture trace.
    pub(super) chosen: Vec<String>,
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

/// A replay's graph, its work's labels and its planned capture graph: the
/// replays one attribution serves.
type CacheKey<'a> = (String, Vec<Label<'a>>, Option<Option<(usize, usize)>>);

/// The graphs of every capture trace, each tagged with its trace's index.
type Graphs<'a> = [(usize, &'a Window<'a>)];

/// Attributes each replayed work item to a call of a capture trace. A
/// replay of an annotated step recorded with no graph id is renamed after
/// its place in its step's capture (`PIECEWISE graph #1, batch 16`): its
/// position in the whole trace would make every step's graphs new ones.
pub(super) fn merge(
    trace: &Trace,
    gpu: &GpuWork,
    replays: &mut [Replay],
    captures: &[Capture<'_>],
) -> Merge {
    let windows: Vec<Vec<Window<'_>>> = captures.iter().map(|c| windows(c.trace, c.tree)).collect();
    let details: Vec<Option<Details>> = captures
        .iter()
        .zip(&windows)
        .map(|(c, w)| c.details().or_else(|| select::classify(c.trace, w.len())))
        .collect();
    let steps = select::steps(trace, &details);
    // Listed details are followed as TraceLens follows them: a step no
    // listed capture holds stays unmerged. Details read from the traces are
    // a hint: such a step is fitted by kernels instead.
    let listed = captures.iter().any(|c| c.details().is_some());
    let mut notes: Vec<String> = Vec::new();
    let mut planned: HashMap<u32, Option<(usize, usize)>> = HashMap::new();
    let mut used: BTreeMap<usize, (usize, u64, u64)> = BTreeMap::new();
    for step in &steps {
        let Some(capture) = step.capture else {
            let note = format!(
                "steps of batch {} with {} graph launch(es): no {} capture of that batch size or larger{}",
                step.batch,
                step.launches.len(),
                step.mode.as_str(),
                if listed { "" } else { ": fitted by kernels" }
            );
            if !notes.contains(&note) {
                notes.push(note);
            }
            if listed {
                planned.extend(step.launches.iter().map(|&l| (l, None)));
            }
            continue;
        };
        let entry = used.entry(capture).or_insert((0, u64::MAX, 0));
        *entry = (
            entry.0 + 1,
            entry.1.min(step.batch),
            entry.2.max(step.batch),
        );
        for (position, &launch) in step.launches.iter().enumerate() {
            planned.insert(launch, Some((capture, position)));
        }
    }
    let chosen = used
        .iter()
        .map(|(&capture, &(count, low, high))| {
            let (size, mode) = details[capture].expect("a chosen capture has details");
            let batches = if low == high {
                format!("{low}")
            } else {
                format!("{low}–{high}")
            };
            format!(
                "{}: batch {size} {}, for {count} step(s) of batch {batches}",
                captures[capture].trace.source,
                mode.as_str()
            )
        })
        .collect();
    let all: Vec<(usize, &Window<'_>)> = windows
        .iter()
        .enumerate()
        .flat_map(|(c, ws)| ws.iter().map(move |w| (c, w)))
        .collect();
    let mut cache: HashMap<CacheKey<'_>, Attribution> = HashMap::new();
    for replay in replays.iter_mut().filter(|r| r.positional) {
        if let Some(&Some((c, k))) = planned.get(&replay.launch) {
            let (size, mode) = details[c].expect("a chosen capture has details");
            replay.graph = format!("{} graph #{k}, batch {size}", mode.as_str());
        }
    }
    let mut owners = Vec::with_capacity(replays.len());
    for replay in replays.iter() {
        let replayed: Vec<(Label<'_>, Option<i64>)> = replay
            .work
            .iter()
            .map(|&w| (replay_label(trace, gpu, w), gpu.items[w as usize].stream))
            .collect();
        let labels: Vec<Label<'_>> = replayed.iter().map(|(l, _)| *l).collect();
        let plan = planned.get(&replay.launch).copied();
        let key = (replay.graph.clone(), labels, plan);
        let (found, note) = cache
            .entry(key)
            .or_insert_with(|| match plan {
                None => attribute(captures, &all, &replay.graph, &replayed),
                Some(Some((c, k))) if k < windows[c].len() => {
                    attribute(captures, &[(c, &windows[c][k])], &replay.graph, &replayed)
                }
                Some(Some((c, _))) => (
                    vec![Owner::Unmatched; replayed.len()],
                    Some(format!(
                        "{}: its step's capture {} holds {} graph(s), fewer than the step launches",
                        replay.graph,
                        captures[c].trace.source,
                        windows[c].len()
                    )),
                ),
                Some(None) => (vec![Owner::Unmatched; replayed.len()], None),
            })
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
        captures: all.len() as u64,
        chosen,
        notes,
    }
}

/// The owners of one replay's work, from the graph of `graphs` that fits
/// it best, and a note when work is left unmatched.
fn attribute(
    captures: &[Capture<'_>],
    graphs: &Graphs<'_>,
    graph: &str,
    replayed: &[(Label<'_>, Option<i64>)],
) -> Attribution {
    let unmatched = vec![Owner::Unmatched; replayed.len()];
    if graphs.is_empty() {
        return (
            unmatched,
            Some(format!(
                "{graph}: the capture trace has no graph capture (no StreamBeginCapture … StreamEndCapture)"
            )),
        );
    }
    let alignments: Vec<Alignment> = graphs
        .iter()
        .map(|(_, w)| {
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
    let owners_of = |(&(capture, window), alignment): (&(usize, &Window<'_>), &Alignment)| {
        alignment
            .pairs
            .iter()
            .map(|pair| match pair {
                None => Owner::Unmatched,
                Some(call) => match window.dispatches[*call].op {
                    NONE => Owner::Call,
                    op => Owner::Op(CapturedOp {
                        capture: capture as u32,
                        op,
                    }),
                },
            })
            .collect::<Vec<Owner>>()
    };
    let fitting: Vec<Vec<Owner>> = graphs
        .iter()
        .zip(&alignments)
        .filter(|(_, a)| a.matched() == best)
        .map(owners_of)
        .collect();
    let same_ops = fitting.windows(2).all(|pair| {
        pair[0]
            .iter()
            .zip(&pair[1])
            .all(|(a, b)| op_identity(captures, *a) == op_identity(captures, *b))
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

/// What an owner attaches to a row: the op's name and arguments, as text
/// (symbols of two capture traces are not comparable).
fn op_identity<'a>(
    captures: &[Capture<'a>],
    owner: Owner,
) -> Option<(&'a str, [Option<&'a str>; 4])> {
    match owner {
        Owner::Op(CapturedOp { capture, op }) => {
            let trace = captures[capture as usize].trace;
            let event = &trace.events[op as usize];
            let text = |sym: Option<Sym>| sym.map(|s| trace.strings.get(s));
            let args = trace.op_args(event).map_or([None; 4], |a: &OpArgs| {
                [
                    text(a.input_dims),
                    text(a.input_type),
                    text(a.input_strides),
                    text(a.concrete_inputs),
                ]
            });
            Some((trace.name(event), args))
        }
        _ => None,
    }
}
