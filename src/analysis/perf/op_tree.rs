//! The CPU-op tree with each op's GPU work, and the walk that picks the
//! unified table's invocations (the rules in the [module docs](super)).

use super::memo::Memo;
use crate::analysis::comm::CommKernels;
use crate::analysis::groups::{Groups, MAX_SUBTREE_DEPTH};
use crate::analysis::perf_model;
use crate::trace::link::{NONE, Tree};
use crate::trace::{FxHashMap, Kind, Trace};

/// CPU ops only, with their GPU work.
pub(super) struct OpTree<'a> {
    /// CPU-op children of each CPU op (host events in between looked
    /// through), ordered by start.
    children: Groups,
    /// CPU ops with no CPU op above them, ordered by start.
    roots: Vec<u32>,
    /// Linked GPU events anywhere below each CPU op.
    subtree: Groups,
    /// CPU ops that launch GPU work themselves, ascending.
    launchers: Vec<u32>,
    /// The link tree, for the CPU op above an op ([`cpu_op_above`]).
    tree: &'a Tree,
    /// Which kernels are communication (a launcher of only those is no row).
    pub(super) comm: &'a CommKernels,
}

/// The nearest CPU op above `event`, or NONE.
fn cpu_op_above(trace: &Trace, tree: &Tree, event: u32) -> u32 {
    let mut current = tree.parent[event as usize];
    while current != NONE {
        if trace.events[current as usize].kind == Kind::CpuOp {
            return current;
        }
        current = tree.parent[current as usize];
    }
    NONE
}

/// A key whose unsigned order is `f64::total_cmp`'s order.
fn total_order_key(value: f64) -> u64 {
    let bits = value.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | 1 << 63
    }
}

impl<'a> OpTree<'a> {
    /// The CPU-op tree of a linked trace, communication told by `comm`.
    pub(super) fn build(trace: &Trace, tree: &'a Tree, comm: &'a CommKernels) -> OpTree<'a> {
        let by_start = |a: &u32, b: &u32| {
            let (ea, eb) = (&trace.events[*a as usize], &trace.events[*b as usize]);
            ea.ts.total_cmp(&eb.ts).then(a.cmp(b))
        };
        // (parent, start, child): sorted with the start at hand rather than
        // looked up per comparison (600k ops on a 1 GB trace).
        let mut child_starts: Vec<(u32, u64, u32)> = Vec::new();
        let mut roots = Vec::new();
        for (index, event) in trace.events.iter().enumerate() {
            if event.kind != Kind::CpuOp {
                continue;
            }
            let index = index as u32;
            let above = cpu_op_above(trace, tree, index);
            if above == NONE {
                roots.push(index);
            } else {
                child_starts.push((above, total_order_key(event.ts), index));
            }
        }
        roots.sort_by(by_start);
        child_starts.sort_unstable();
        let children = Groups::new(
            child_starts
                .into_iter()
                .map(|(parent, _, child)| (parent, child))
                .collect(),
        );
        let mut subtree_pairs: Vec<(u32, u32)> = Vec::new();
        let mut launchers: Vec<u32> = Vec::new();
        for &gpu in &tree.gpu_events {
            if !tree.is_linked(gpu) {
                continue;
            }
            let launcher = tree.launcher(gpu);
            if launcher != NONE && trace.events[launcher as usize].kind == Kind::CpuOp {
                launchers.push(launcher);
            }
            let mut current = tree.launch(gpu);
            let mut levels = 0;
            while current != NONE && levels < MAX_SUBTREE_DEPTH {
                if trace.events[current as usize].kind == Kind::CpuOp {
                    subtree_pairs.push((current, gpu));
                    levels += 1;
                }
                current = tree.parent[current as usize];
            }
        }
        launchers.sort_unstable();
        launchers.dedup();
        OpTree {
            children,
            roots,
            subtree: Groups::new(subtree_pairs),
            launchers,
            tree,
            comm,
        }
    }

    /// Linked GPU events anywhere below `op`.
    pub(super) fn gpu(&self, op: u32) -> &[u32] {
        self.subtree.get(op)
    }

    /// CPU-op children of `op`, by start.
    fn children(&self, op: u32) -> &[u32] {
        self.children.get(op)
    }

    /// Whether an op below `op` with GPU work has a perf model of its own
    /// (`aten::convolution_backward` under `ConvolutionBackward0`, the two
    /// `aten::mm` under `AddmmBackward0`): the walk then goes on down so rows
    /// are keyed by the op that launches the kernels, with its own shapes, as
    /// TraceLens does since its #582 (else different shapes merge into one
    /// node row).
    fn modelled_below(&self, trace: &Trace, op: u32) -> bool {
        let mut pending = vec![op];
        while let Some(current) = pending.pop() {
            for &child in self.children(current) {
                if self.gpu(child).is_empty() {
                    continue;
                }
                if stops_traversal(trace.name(&trace.events[child as usize])) {
                    return true;
                }
                pending.push(child);
            }
        }
        false
    }

    /// Walks the tree as TraceLens's unified table does.
    pub(super) fn collect_unified(
        &self,
        trace: &Trace,
        tree: &Tree,
        memo: &mut Memo,
    ) -> Vec<Collected> {
        let mut out = Vec::new();
        let mut backward = BackwardLinks::new(trace, tree);
        let mut stack: Vec<u32> = self.roots.iter().rev().copied().collect();
        while let Some(op) = stack.pop() {
            if self.gpu(op).is_empty() {
                continue;
            }
            let name = trace.name(&trace.events[op as usize]);
            if stops_traversal(name) {
                out.push(Collected { op, forward: None });
                continue;
            }
            if let Some(forward) = backward.sole_backward_of(trace, self, memo, op) {
                out.push(Collected {
                    op,
                    forward: Some(forward),
                });
                continue;
            }
            let next: Vec<u32> = if self.launchers.binary_search(&op).is_ok() {
                // Children that are modelled or hold a modelled op anywhere
                // below (a custom op or compiled region wrapping `aten::mm`
                // through layers of its own), as TraceLens does since its
                // #796: the launcher is then no opaque row of its own.
                let modelled: Vec<u32> = self
                    .children(op)
                    .iter()
                    .copied()
                    .filter(|&c| {
                        !self.gpu(c).is_empty()
                            && (stops_traversal(trace.name(&trace.events[c as usize]))
                                || self.modelled_below(trace, c))
                    })
                    .collect();
                if modelled.is_empty() {
                    let comm = self
                        .gpu(op)
                        .iter()
                        .any(|&g| self.comm.is_comm(trace.name(&trace.events[g as usize])));
                    if !comm {
                        out.push(Collected { op, forward: None });
                    }
                    continue;
                }
                modelled
            } else {
                self.children(op).to_vec()
            };
            stack.extend(next.into_iter().rev());
        }
        out.sort_by(|a, b| {
            let (ea, eb) = (&trace.events[a.op as usize], &trace.events[b.op as usize]);
            ea.ts.total_cmp(&eb.ts).then(a.op.cmp(&b.op))
        });
        out
    }
}

/// Whether a modelled op ends the walk down the tree (composites are looked through).
pub(crate) fn stops_traversal(name: &str) -> bool {
    perf_model::has_model(name) && !perf_model::is_composite(name)
}

/// A collected invocation: the op, and for an autograd backward op the
/// forward op it is modelled from.
pub(super) struct Collected {
    /// The op event.
    pub(super) op: u32,
    /// The forward op event a backward op is modelled from.
    pub(super) forward: Option<u32>,
}

/// Autograd backward wrappers (`autograd::engine::evaluate_function: X`)
/// with their forward op.
struct BackwardLinks {
    forward_of: FxHashMap<u32, u32>,
    /// Ops named after each wrapper's node that have GPU work, counted once
    /// per wrapper (every op below a wrapper asks).
    node_ops: FxHashMap<u32, usize>,
}

/// The name prefix of autograd backward wrappers.
const BACKWARD_PREFIX: &str = "autograd::engine::evaluate_function: ";

impl BackwardLinks {
    /// The wrappers whose forward op is a CPU op.
    fn new(trace: &Trace, tree: &Tree) -> BackwardLinks {
        let forward_of = tree
            .forward_of
            .iter()
            .filter(|(backward, forward)| {
                trace
                    .name(&trace.events[*backward as usize])
                    .starts_with(BACKWARD_PREFIX)
                    && trace.events[*forward as usize].kind == Kind::CpuOp
            })
            .copied()
            .collect();
        BackwardLinks {
            forward_of,
            node_ops: FxHashMap::default(),
        }
    }

    /// The forward op `op` is the sole backward of: `op` is the one op named
    /// after its autograd node (within five CPU ops above it) that has GPU
    /// work, and the forward op has a backward model.
    fn sole_backward_of(
        &mut self,
        trace: &Trace,
        ops: &OpTree,
        memo: &mut Memo,
        op: u32,
    ) -> Option<u32> {
        if self.forward_of.is_empty() {
            return None;
        }
        let mut current = op;
        let mut wrapper = None;
        for _ in 0..5 {
            if trace.events[current as usize].kind != Kind::CpuOp {
                return None;
            }
            let above = cpu_op_above(trace, ops.tree, current);
            if above == NONE {
                return None;
            }
            if self.forward_of.contains_key(&above) {
                wrapper = Some(above);
                break;
            }
            current = above;
        }
        let wrapper = wrapper?;
        let forward = self.forward_of[&wrapper];
        let node = trace
            .name(&trace.events[wrapper as usize])
            .strip_prefix(BACKWARD_PREFIX)?;
        if trace.name(&trace.events[op as usize]) != node {
            return None;
        }
        let matches = *self.node_ops.entry(wrapper).or_insert_with(|| {
            let mut matches = 0;
            let mut pending = vec![wrapper];
            while let Some(current) = pending.pop() {
                for &child in ops.children(current) {
                    if trace.name(&trace.events[child as usize]) == node
                        && !ops.gpu(child).is_empty()
                    {
                        matches += 1;
                    }
                    pending.push(child);
                }
            }
            matches
        });
        if matches != 1 || ops.modelled_below(trace, op) {
            return None;
        }
        memo.model(trace, forward, true).is_ok().then_some(forward)
    }
}

#[cfg(test)]
mod tests {
    use super::total_order_key;

    #[test]
    fn the_key_orders_as_total_cmp() {
        let values = [
            f64::NEG_INFINITY,
            -1e300,
            -2.5,
            -0.0,
            0.0,
            1e-300,
            3.0,
            1e300,
            f64::INFINITY,
        ];
        for a in values {
            for b in values {
                assert_eq!(
                    total_order_key(a).cmp(&total_order_key(b)),
                    a.total_cmp(&b),
                    "{a} vs {b}"
                );
            }
        }
    }
}
