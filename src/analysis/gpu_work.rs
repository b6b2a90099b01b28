//! The GPU work of a trace as every analysis table reads it: each GPU event
//! with its bucket, stream, launch and owning op, and the op invocations that
//! own GPU work with their direct and subtree busy time. Collected once per
//! analysis and shared by the tables.

use crate::analysis::comm::CommKernels;
use crate::analysis::groups::{Groups, MAX_SUBTREE_DEPTH};
use crate::analysis::timeline::{Bucket, Interval, IntervalSet, bucket_of};
use crate::trace::link::{self, NONE, Tree};
use crate::trace::{Event, FxHashMap, Kind, Sym, Trace, TrackId};

/// One piece of GPU work with what the analysis needs of it.
pub(super) struct Work {
    /// The GPU event.
    pub(super) event: u32,
    /// Its time span, µs.
    pub(super) interval: Interval,
    /// Its timeline bucket.
    pub(super) bucket: Bucket,
    /// Whether a launch links it to the host.
    pub(super) linked: bool,
    /// The owning CPU op, or NONE.
    pub(super) op: u32,
    /// The runtime call that launched it, or NONE.
    pub(super) launch: u32,
    /// Stream, when recorded.
    pub(super) stream: Option<i64>,
    /// Device, when recorded.
    pub(super) device: Option<i64>,
    /// Whether a CUDA/HIP graph launch replayed it: its rows are the graph's
    /// (`analysis::graph`), not those of an op above the launch.
    pub(super) graph: bool,
}

/// Every piece of GPU work of a trace, in the link tree's order.
pub(super) struct GpuWork<'a> {
    /// The work items.
    pub(super) items: Vec<Work>,
    /// The communication-kernel detector the buckets were chosen by: the
    /// tables built from this work categorise kernels by the same one.
    pub(super) comm: &'a CommKernels,
}

impl<'a> GpuWork<'a> {
    /// The GPU work of a linked trace, communication told by `comm`.
    pub(super) fn collect(trace: &Trace, tree: &Tree, comm: &'a CommKernels) -> GpuWork<'a> {
        // A kernel name's bucket is decided once: the detector splits the
        // name into words, and a trace launches each name thousands of times.
        let mut bucket_of_name: FxHashMap<(Sym, bool), Bucket> = FxHashMap::default();
        let items = tree
            .gpu_events
            .iter()
            .map(|&index| {
                let event = &trace.events[index as usize];
                let launcher = tree.launcher(index);
                let op = if launcher != NONE && trace.events[launcher as usize].kind == Kind::CpuOp
                {
                    launcher
                } else {
                    NONE
                };
                let args = trace.gpu_args(event);
                let launch = tree.launch(index);
                Work {
                    event: index,
                    interval: Interval {
                        start: event.ts,
                        end: event.end(),
                    },
                    bucket: *bucket_of_name
                        .entry((event.name, event.kind == Kind::Memcpy))
                        .or_insert_with(|| {
                            bucket_of(event.kind == Kind::Memcpy, trace.name(event), comm)
                        }),
                    linked: tree.is_linked(index),
                    op,
                    launch,
                    stream: args
                        .and_then(|a| a.stream)
                        .or_else(|| stream_from_track(trace, event)),
                    device: args.and_then(|a| a.device),
                    graph: launch != NONE
                        && link::is_graph_launch(trace.name(&trace.events[launch as usize])),
                }
            })
            .collect();
        GpuWork { items, comm }
    }

    /// The work linked to a launch.
    pub(super) fn linked(&self) -> impl Iterator<Item = &Work> {
        self.items.iter().filter(|w| w.linked)
    }
}

/// Old traces name the stream only in the tid (`"stream 7"`).
fn stream_from_track(trace: &Trace, event: &Event) -> Option<i64> {
    match trace.tracks[event.track as usize].tid {
        TrackId::Num(n) => Some(n),
        TrackId::Label(sym) => trace
            .strings
            .get(sym)
            .strip_prefix("stream ")?
            .trim()
            .parse()
            .ok(),
    }
}

/// Op invocations that own GPU work, with their direct and subtree work.
pub(super) struct Invocations {
    /// (op event, direct work indices into GpuWork::items), by op start time.
    pub(super) direct: Vec<(u32, Vec<u32>)>,
    /// Subtree work per op event (for ops that have direct work or below).
    subtree: Groups,
}

impl Invocations {
    /// The invocations owning the linked work of `gpu`.
    pub(super) fn collect(trace: &Trace, tree: &Tree, gpu: &GpuWork) -> Invocations {
        let mut direct: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
        let mut subtree: Vec<(u32, u32)> = Vec::new();
        for (work_index, work) in gpu.items.iter().enumerate() {
            if !work.linked || work.op == NONE || work.graph {
                continue;
            }
            direct.entry(work.op).or_default().push(work_index as u32);
            let mut current = work.op;
            let mut levels = 0;
            while current != NONE && levels < MAX_SUBTREE_DEPTH {
                if trace.events[current as usize].kind == Kind::CpuOp {
                    subtree.push((current, work_index as u32));
                    levels += 1;
                }
                current = tree.parent[current as usize];
            }
        }
        // Launchers in host-time order; ties keep the order of their first GPU work.
        let mut direct: Vec<(u32, Vec<u32>)> = direct.into_iter().collect();
        direct.sort_by(|a, b| {
            let (a_ts, b_ts) = (trace.events[a.0 as usize].ts, trace.events[b.0 as usize].ts);
            a_ts.total_cmp(&b_ts).then(a.1[0].cmp(&b.1[0]))
        });
        Invocations {
            direct,
            subtree: Groups::new(subtree),
        }
    }

    fn union_us(gpu: &GpuWork, work: &[u32]) -> f64 {
        IntervalSet::from_intervals(
            work.iter()
                .map(|&w| gpu.items[w as usize].interval)
                .collect(),
        )
        .len()
    }

    /// Busy time of the direct work of the invocation at `position`, µs.
    pub(super) fn direct_us(&self, gpu: &GpuWork, position: usize) -> f64 {
        Self::union_us(gpu, &self.direct[position].1)
    }

    /// Busy time of the work at or below `op`, µs.
    pub(super) fn subtree_us(&self, gpu: &GpuWork, op: u32) -> f64 {
        Self::union_us(gpu, self.subtree.get(op))
    }
}
