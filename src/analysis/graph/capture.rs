//! The capture trace: the trace recorded while the graphs were captured.
//! Each capture (`…StreamBeginCapture` to `…StreamEndCapture`) lists the
//! launch, copy and set calls made during it, in host order, each with the
//! kernel it names (ROCm launch calls carry `args.kernel`) and the op above
//! it — what TraceLens's capture merge attributes replayed kernels to.

use crate::trace::link::{self, NONE, Tree};
use crate::trace::{Kind, Trace};

/// What a piece of GPU work, or the call that put it in a graph, is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) enum Label<'a> {
    /// A kernel, by name.
    Kernel(&'a str),
    /// A launch call that does not name its kernel (CUDA runtime calls).
    UnnamedKernel,
    /// A memory copy.
    Copy,
    /// A memory set.
    Set,
}

impl Label<'_> {
    /// Whether a captured call can be the call that put this replayed work
    /// in the graph (`self` captured, `replayed` from the replay).
    pub(super) fn fits(self, replayed: Label<'_>) -> bool {
        match (self, replayed) {
            (Label::Kernel(a), Label::Kernel(b)) => a == b,
            (Label::UnnamedKernel, Label::Kernel(_)) => true,
            (Label::Copy, Label::Copy) | (Label::Set, Label::Set) => true,
            _ => false,
        }
    }
}

/// One call made during a capture.
pub(super) struct Dispatch<'a> {
    /// What it captured.
    pub(super) label: Label<'a>,
    /// The CPU op above it in the capture trace ([`link::launcher_of`]), or
    /// [`NONE`] when a runtime call or Python frame made it directly.
    pub(super) op: u32,
}

/// One graph capture: its calls in host order.
pub(super) struct Window<'a> {
    /// The calls.
    pub(super) dispatches: Vec<Dispatch<'a>>,
}

/// The graph captures of a capture trace, in order.
pub(super) fn windows<'a>(trace: &'a Trace, tree: &Tree) -> Vec<Window<'a>> {
    let calls = |marker: &str| -> Vec<(f64, f64)> {
        let mut found: Vec<(f64, f64)> = trace
            .events
            .iter()
            .filter(|e| matches!(e.kind, Kind::Runtime | Kind::Driver))
            .filter(|e| trace.name(e).contains(marker))
            .map(|e| (e.ts, e.end()))
            .collect();
        found.sort_by(|a, b| a.0.total_cmp(&b.0));
        found
    };
    let begins = calls("StreamBeginCapture");
    let ends = calls("StreamEndCapture");
    let mut dispatches: Vec<(f64, u32)> = trace
        .events
        .iter()
        .enumerate()
        .filter(|(_, e)| matches!(e.kind, Kind::Runtime | Kind::Driver))
        .filter(|(_, e)| dispatch_kind(trace.name(e)).is_some())
        .map(|(index, e)| (e.ts, index as u32))
        .collect();
    dispatches.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    begins
        .iter()
        .zip(&ends)
        .map(|(&(_, open), &(close, _))| Window {
            dispatches: dispatches
                .iter()
                .filter(|&&(ts, index)| ts >= open && trace.events[index as usize].end() <= close)
                .map(|&(_, index)| {
                    let event = &trace.events[index as usize];
                    let label = match dispatch_kind(trace.name(event)) {
                        Some(Label::Copy) => Label::Copy,
                        Some(Label::Set) => Label::Set,
                        _ => trace
                            .launch_args(event)
                            .and_then(|a| a.kernel)
                            .map_or(Label::UnnamedKernel, |k| {
                                Label::Kernel(trace.strings.get(k))
                            }),
                    };
                    let launcher = link::launcher_of(trace, &tree.parent, index);
                    let op = if launcher != index
                        && trace.events[launcher as usize].kind == Kind::CpuOp
                    {
                        launcher
                    } else {
                        NONE
                    };
                    Dispatch { label, op }
                })
                .collect(),
        })
        .collect()
}

/// Whether a runtime or driver call puts work in a graph being captured,
/// and which: a kernel launch (other than a graph launch), a copy or a set.
fn dispatch_kind(name: &str) -> Option<Label<'static>> {
    let lower = name.to_ascii_lowercase();
    if lower.contains("memcpy") {
        Some(Label::Copy)
    } else if lower.contains("memset") {
        Some(Label::Set)
    } else if lower.contains("launch") && !link::is_graph_launch(name) {
        Some(Label::UnnamedKernel)
    } else {
        None
    }
}
