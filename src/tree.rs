//! Link: host call stacks, launch ↔ GPU work, launcher ops, `nn.Module`
//! ancestry, forward/backward pairs and profiler steps.
//!
//! Rules (docs/ARCHITECTURE.md, "Linking"): host events nest by time
//! containment on their own (pid, tid), with TraceLens's 1 µs bleed rule; a
//! launch finds its GPU work by `correlation` (falling back to flow arrows when
//! GPU events carry no correlation); a kernel's launcher is the first CPU op
//! above its launch. Every kernel of a CUDA/HIP graph launch shares the
//! launch's correlation and is attributed to that launch.

use std::collections::hash_map::Entry;

use serde::Serialize;

use crate::trace::{Event, FlowKind, FxHashMap, Kind, Trace};

/// "No event" in the per-event index tables.
pub const NONE: u32 = u32::MAX;

/// An event that starts less than this before its enclosing event ends, and
/// ends after it, is its sibling rather than its child (TraceLens's bleed
/// rule), in µs.
const BLEED_US: f64 = 1.0;

/// A `ProfilerStep#N` range.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Step {
    /// `N` of `ProfilerStep#N`.
    pub number: u64,
    /// Host start, µs.
    pub ts: f64,
    /// Host end, µs.
    pub end: f64,
    /// The annotation event.
    pub event: u32,
}

/// Linking problems: counted and reported, never silently absorbed.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LinkAnomalies {
    /// GPU work whose launch is not in the trace (or has no correlation at all).
    pub gpu_without_launch: u64,
    /// Kernel-launch calls with no GPU work in the trace.
    pub launches_without_gpu: u64,
    /// Launch events sharing one correlation id (only the first is linked).
    pub duplicate_correlations: u64,
    /// Host events ending ≥ 1 µs after the event they start inside.
    pub improper_nesting: u64,
}

/// The linked view of a trace: per-event index tables over `trace.events`.
#[derive(Clone, Debug, Default)]
pub struct Tree {
    /// Host parent (same thread), or [`NONE`].
    pub parent: Vec<u32>,
    /// For GPU work: the runtime/driver call that launched it, or [`NONE`].
    pub launch: Vec<u32>,
    /// For GPU work: the CPU op that owns it (the first CPU op above the
    /// launch), else the launch itself, else [`NONE`].
    pub launcher: Vec<u32>,
    /// The index into [`Tree::steps`] each event belongs to, or [`NONE`].
    pub step: Vec<u32>,
    /// `ProfilerStep#N` ranges, sorted by start.
    pub steps: Vec<Step>,
    /// For host events: the nearest enclosing `nn.Module: …` Python frame, or [`NONE`].
    pub module: Vec<u32>,
    /// (backward op, forward op) pairs.
    pub forward_of: Vec<(u32, u32)>,
    /// Indices of GPU work (kernels, copies, sets) in trace order.
    pub gpu_events: Vec<u32>,
    /// What did not link.
    pub anomalies: LinkAnomalies,
}

impl Tree {
    /// Whether a GPU event was linked to a launch.
    pub fn is_linked(&self, gpu_event: u32) -> bool {
        self.launch[gpu_event as usize] != NONE
    }

    /// The `nn.Module` path of a host event, outermost first
    /// (e.g. `BertModel_0/BertEncoder_0/BertLayer_3`), if any.
    pub fn module_path(&self, trace: &Trace, event: u32) -> Option<String> {
        let mut names = Vec::new();
        let mut current = self.module[event as usize];
        while current != NONE {
            let name = trace.name(&trace.events[current as usize]);
            names.push(name.strip_prefix("nn.Module: ").unwrap_or(name));
            let parent = self.parent[current as usize];
            current = if parent == NONE {
                NONE
            } else {
                self.module_of_self_or_above(trace, parent)
            };
        }
        if names.is_empty() {
            return None;
        }
        names.reverse();
        Some(names.join("/"))
    }

    fn module_of_self_or_above(&self, trace: &Trace, event: u32) -> u32 {
        if is_module_frame(trace, &trace.events[event as usize]) {
            event
        } else {
            self.module[event as usize]
        }
    }
}

fn is_module_frame(trace: &Trace, event: &Event) -> bool {
    event.kind == Kind::PythonFunction && trace.name(event).starts_with("nn.Module: ")
}

/// Whether a runtime/driver call is expected to put work on the GPU.
pub fn is_launch_call(name: &str) -> bool {
    const LAUNCHES: &[&str] = &[
        "cudaLaunchKernel",
        "cudaLaunchKernelExC",
        "cudaLaunchCooperativeKernel",
        "cuLaunchKernel",
        "cuLaunchKernelEx",
        "cudaGraphLaunch",
        "hipLaunchKernel",
        "hipExtLaunchKernel",
        "hipModuleLaunchKernel",
        "hipExtModuleLaunchKernel",
        "hipGraphLaunch",
    ];
    LAUNCHES.contains(&name)
}

/// Whether a runtime call launches a CUDA or HIP graph.
pub fn is_graph_launch(name: &str) -> bool {
    name == "cudaGraphLaunch" || name == "hipGraphLaunch"
}

/// Links a loaded trace.
pub fn link(trace: &Trace) -> Tree {
    let n = trace.events.len();
    let mut tree = Tree {
        parent: vec![NONE; n],
        launch: vec![NONE; n],
        launcher: vec![NONE; n],
        step: vec![NONE; n],
        module: vec![NONE; n],
        ..Tree::default()
    };
    build_host_stacks(trace, &mut tree);
    link_launches(trace, &mut tree);
    assign_launchers(trace, &mut tree);
    assign_steps(trace, &mut tree);
    pair_forward_backward(trace, &mut tree);
    tree
}

fn build_host_stacks(trace: &Trace, tree: &mut Tree) {
    let mut by_track: Vec<Vec<u32>> = vec![Vec::new(); trace.tracks.len()];
    for (index, event) in trace.events.iter().enumerate() {
        if event.kind.is_host() {
            by_track[event.track as usize].push(index as u32);
        }
    }
    let events = &trace.events;
    let mut stack: Vec<u32> = Vec::new();
    for mut members in by_track {
        // Parents first: earlier start, then the longer of two equal starts.
        members.sort_by(|&a, &b| {
            let (a_ev, b_ev) = (&events[a as usize], &events[b as usize]);
            a_ev.ts
                .total_cmp(&b_ev.ts)
                .then(b_ev.dur.total_cmp(&a_ev.dur))
                .then(a.cmp(&b))
        });
        stack.clear();
        for index in members {
            let event = &events[index as usize];
            while let Some(&top) = stack.last() {
                let top_event = &events[top as usize];
                if event.ts >= top_event.end() {
                    stack.pop();
                    continue;
                }
                if event.end() > top_event.end() {
                    // Starts inside `top` but ends after it. Starting within
                    // 1 µs of its end means a sibling that bled (TraceLens's
                    // rule); more than that is broken nesting, counted, and the
                    // event stays a child of `top`.
                    if top_event.end() - event.ts < BLEED_US && stack.len() >= 2 {
                        stack.pop();
                        continue;
                    }
                    tree.anomalies.improper_nesting += 1;
                }
                break;
            }
            if let Some(&top) = stack.last() {
                tree.parent[index as usize] = top;
                let top_event = &events[top as usize];
                tree.module[index as usize] = if is_module_frame(trace, top_event) {
                    top
                } else {
                    tree.module[top as usize]
                };
            }
            stack.push(index);
        }
    }
}

fn link_launches(trace: &Trace, tree: &mut Tree) {
    let mut launch_by_correlation: FxHashMap<u64, u32> = FxHashMap::default();
    for (index, event) in trace.events.iter().enumerate() {
        if matches!(event.kind, Kind::Runtime | Kind::Driver) {
            if let Some(correlation) = event.correlation {
                match launch_by_correlation.entry(correlation) {
                    // Keep the first launch with this id, as the trace lists it.
                    Entry::Occupied(_) => tree.anomalies.duplicate_correlations += 1,
                    Entry::Vacant(slot) => {
                        slot.insert(index as u32);
                    }
                }
            }
        }
    }
    let flow_links = FlowLinks::new(trace);
    for (index, event) in trace.events.iter().enumerate() {
        if !event.kind.is_gpu_work() {
            continue;
        }
        tree.gpu_events.push(index as u32);
        let launch = match event.correlation {
            Some(correlation) => launch_by_correlation.get(&correlation).copied(),
            None => flow_links.launch_of(event),
        };
        match launch {
            Some(launch) => tree.launch[index] = launch,
            None => tree.anomalies.gpu_without_launch += 1,
        }
    }
    let mut has_gpu = vec![false; trace.events.len()];
    for &gpu in &tree.gpu_events {
        let launch = tree.launch[gpu as usize];
        if launch != NONE {
            has_gpu[launch as usize] = true;
        }
    }
    tree.anomalies.launches_without_gpu = trace
        .events
        .iter()
        .enumerate()
        .filter(|(index, event)| {
            matches!(event.kind, Kind::Runtime | Kind::Driver)
                && !has_gpu[*index]
                && is_launch_call(trace.name(event))
        })
        .count() as u64;
}

/// Launch ↔ GPU links drawn by flow arrows, for traces whose GPU events carry
/// no `correlation` argument: a flow's ends sit at the start of the events
/// they bind, on the same track.
struct FlowLinks {
    start_by_id: FxHashMap<u64, (u32, u64)>,
    end_by_place: FxHashMap<(u32, u64), u64>,
    host_by_place: FxHashMap<(u32, u64), u32>,
}

impl FlowLinks {
    fn new(trace: &Trace) -> FlowLinks {
        let needed = trace
            .events
            .iter()
            .any(|e| e.kind.is_gpu_work() && e.correlation.is_none());
        let mut links = FlowLinks {
            start_by_id: FxHashMap::default(),
            end_by_place: FxHashMap::default(),
            host_by_place: FxHashMap::default(),
        };
        if !needed {
            return links;
        }
        for flow in trace
            .flows
            .iter()
            .filter(|f| f.kind == FlowKind::LaunchToGpu)
        {
            if flow.is_start {
                links
                    .start_by_id
                    .insert(flow.id, (flow.track, flow.ts.to_bits()));
            } else {
                links
                    .end_by_place
                    .insert((flow.track, flow.ts.to_bits()), flow.id);
            }
        }
        for (index, event) in trace.events.iter().enumerate() {
            if matches!(event.kind, Kind::Runtime | Kind::Driver) {
                links
                    .host_by_place
                    .insert((event.track, event.ts.to_bits()), index as u32);
            }
        }
        links
    }

    fn launch_of(&self, event: &Event) -> Option<u32> {
        let id = self.end_by_place.get(&(event.track, event.ts.to_bits()))?;
        let place = self.start_by_id.get(id)?;
        self.host_by_place.get(place).copied()
    }
}

fn assign_launchers(trace: &Trace, tree: &mut Tree) {
    for &gpu in &tree.gpu_events {
        let launch = tree.launch[gpu as usize];
        if launch == NONE {
            continue;
        }
        let mut current = tree.parent[launch as usize];
        let mut launcher = launch;
        while current != NONE {
            let event = &trace.events[current as usize];
            match event.kind {
                Kind::CpuOp if trace.name(event) != "execute" => {
                    launcher = current;
                    break;
                }
                // Python frames, annotations and `execute` wrappers are passed through.
                Kind::CpuOp | Kind::PythonFunction | Kind::UserAnnotation => {}
                // A launch nested in another runtime call is its own launcher.
                _ => break,
            }
            current = tree.parent[current as usize];
        }
        tree.launcher[gpu as usize] = launcher;
    }
}

/// The number of a `ProfilerStep#N` annotation.
pub fn profiler_step_number(name: &str) -> Option<u64> {
    name.strip_prefix("ProfilerStep#")?.parse().ok()
}

fn assign_steps(trace: &Trace, tree: &mut Tree) {
    let mut steps: Vec<Step> = trace
        .events
        .iter()
        .enumerate()
        .filter(|(_, e)| e.kind == Kind::UserAnnotation)
        .filter_map(|(index, e)| {
            profiler_step_number(trace.name(e)).map(|number| Step {
                number,
                ts: e.ts,
                end: e.end(),
                event: index as u32,
            })
        })
        .collect();
    steps.sort_by(|a, b| a.ts.total_cmp(&b.ts));
    let step_at = |ts: f64| -> u32 {
        let after = steps.partition_point(|s| s.ts <= ts);
        if after == 0 {
            return NONE;
        }
        let candidate = &steps[after - 1];
        if ts < candidate.end {
            (after - 1) as u32
        } else {
            NONE
        }
    };
    for (index, event) in trace.events.iter().enumerate() {
        if event.kind.is_host() {
            tree.step[index] = step_at(event.ts);
        }
    }
    for &gpu in &tree.gpu_events {
        let launch = tree.launch[gpu as usize];
        if launch != NONE {
            tree.step[gpu as usize] = tree.step[launch as usize];
        }
    }
    tree.steps = steps;
}

fn pair_forward_backward(trace: &Trace, tree: &mut Tree) {
    const BACKWARD_PREFIX: &str = "autograd::engine::evaluate_function: ";
    let mut ops: Vec<u32> = (0..trace.events.len() as u32)
        .filter(|&i| trace.events[i as usize].kind == Kind::CpuOp)
        .collect();
    ops.sort_by(|&a, &b| {
        trace.events[a as usize]
            .ts
            .total_cmp(&trace.events[b as usize].ts)
    });
    let mut latest_forward: FxHashMap<i64, Vec<u32>> = FxHashMap::default();
    for op in ops {
        let event = &trace.events[op as usize];
        let Some(sequence) = trace.op_args(event).and_then(|a| a.sequence_number) else {
            continue;
        };
        if trace.name(event).starts_with(BACKWARD_PREFIX) {
            let forward = latest_forward.get(&sequence).and_then(|candidates| {
                candidates
                    .iter()
                    .rev()
                    .copied()
                    .find(|&f| trace.events[f as usize].track != event.track)
            });
            if let Some(forward) = forward {
                tree.forward_of.push((op, forward));
            }
        } else {
            latest_forward.entry(sequence).or_default().push(op);
        }
    }
}
