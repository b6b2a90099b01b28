//! The replays of a trace: every CUDA/HIP graph launch call with the GPU
//! work it put on the GPU, and the graph's identity across runs — Kineto's
//! `graph id` when the work carries one, else the launch's position among
//! the graph launches of its profiler step.

use std::collections::BTreeMap;

use crate::analysis::gpu_work::GpuWork;
use crate::trace::Trace;
use crate::trace::link::Tree;

/// One graph launch and the work it replayed.
pub(super) struct Replay {
    /// The launch call.
    pub(super) launch: u32,
    /// The graph, e.g. `graph 7` or `launch #0`.
    pub(super) graph: String,
    /// Whether `graph` is the launch's position (no graph id recorded).
    pub(super) positional: bool,
    /// Its work, as indices into `GpuWork::items`, stream by stream (streams
    /// in ascending order), each in start order: an order that does not
    /// depend on how concurrent streams interleaved in this run.
    pub(super) work: Vec<u32>,
}

/// The replays of a trace.
pub(super) struct Replays {
    /// Launches that replayed work, in host order.
    pub(super) replays: Vec<Replay>,
    /// Graph launch calls.
    pub(super) launches: u64,
    /// Graph launch calls without GPU work in the trace.
    pub(super) without_work: u64,
}

/// Finds the graph launches of a linked trace and the work each replayed.
pub(super) fn collect(trace: &Trace, tree: &Tree, gpu: &GpuWork) -> Replays {
    let mut work_by_launch: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for (index, work) in gpu.items.iter().enumerate() {
        if work.graph {
            work_by_launch
                .entry(work.launch)
                .or_default()
                .push(index as u32);
        }
    }
    let launches = super::select::graph_launches(trace);
    let mut position_in_step: BTreeMap<u32, u64> = BTreeMap::new();
    let mut replays = Vec::new();
    let mut without_work = 0;
    for &launch in &launches {
        let position = position_in_step
            .entry(tree.step(trace, launch))
            .or_default();
        let graph_position = *position;
        *position += 1;
        let Some(mut work) = work_by_launch.remove(&launch) else {
            without_work += 1;
            continue;
        };
        work.sort_by(|&a, &b| {
            let (a, b) = (&gpu.items[a as usize], &gpu.items[b as usize]);
            a.stream
                .cmp(&b.stream)
                .then(a.interval.start.total_cmp(&b.interval.start))
                .then(a.event.cmp(&b.event))
        });
        let graph_id = work.iter().find_map(|&w| {
            let event = &trace.events[gpu.items[w as usize].event as usize];
            trace.gpu_args(event).and_then(|a| a.graph_id)
        });
        let graph = match graph_id {
            Some(id) => format!("graph {id}"),
            None => format!("launch #{graph_position}"),
        };
        replays.push(Replay {
            launch,
            graph,
            positional: graph_id.is_none(),
            work,
        });
    }
    Replays {
        replays,
        launches: launches.len() as u64,
        without_work,
    }
}
