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
    /// Host events that start ≥ 1 µs before the end of the event they start
    /// inside and end after it (a partial overlap; kept as its child).
    pub improper_nesting: u64,
}

/// The linked view of a trace: index tables over `trace.events`. Only the
/// host parent is kept per event; what is known of GPU work alone (its
/// launch and launcher) is kept per GPU event, and a profiler step or an
/// `nn.Module` frame is found on demand ([`Tree::step`], [`Tree::module`]):
/// on a 1 GB trace, per-event tables of those would cost 10 MB each.
#[derive(Clone, Debug, Default)]
pub struct Tree {
    /// Host parent (same thread), or [`NONE`].
    pub parent: Vec<u32>,
    /// `ProfilerStep#N` ranges, sorted by start.
    pub steps: Vec<Step>,
    /// (backward op, forward op) pairs.
    pub forward_of: Vec<(u32, u32)>,
    /// Indices of GPU work (kernels, copies, sets) in trace order.
    pub gpu_events: Vec<u32>,
    /// For each of [`Tree::gpu_events`], at the same position: the
    /// runtime/driver call that launched it, or [`NONE`].
    gpu_launch: Vec<u32>,
    /// For each of [`Tree::gpu_events`], at the same position: the CPU op
    /// that owns it (the first CPU op above the launch), else the launch
    /// itself, else [`NONE`].
    gpu_launcher: Vec<u32>,
    /// What did not link.
    pub anomalies: LinkAnomalies,
}

impl Tree {
    /// The position of a GPU event in [`Tree::gpu_events`].
    fn gpu_position(&self, event: u32) -> Option<usize> {
        self.gpu_events.binary_search(&event).ok()
    }

    /// For GPU work: the runtime/driver call that launched it; else, or
    /// when not linked, [`NONE`].
    pub fn launch(&self, event: u32) -> u32 {
        self.gpu_position(event)
            .map_or(NONE, |at| self.gpu_launch[at])
    }

    /// For GPU work: the CPU op that owns it (the first CPU op above the
    /// launch), else the launch itself; else [`NONE`].
    pub fn launcher(&self, event: u32) -> u32 {
        self.gpu_position(event)
            .map_or(NONE, |at| self.gpu_launcher[at])
    }

    /// Whether a GPU event was linked to a launch.
    pub fn is_linked(&self, gpu_event: u32) -> bool {
        self.launch(gpu_event) != NONE
    }

    /// The index into [`Tree::steps`] an event belongs to, or [`NONE`]: a
    /// host event's is the step whose range holds its start, GPU work's is
    /// its launch's.
    pub fn step(&self, trace: &Trace, event: u32) -> u32 {
        let found = &trace.events[event as usize];
        let ts = if found.kind.is_host() {
            found.ts
        } else if found.kind.is_gpu_work() {
            match self.launch(event) {
                NONE => return NONE,
                launch => trace.events[launch as usize].ts,
            }
        } else {
            return NONE;
        };
        let after = self.steps.partition_point(|s| s.ts <= ts);
        if after > 0 && ts < self.steps[after - 1].end {
            (after - 1) as u32
        } else {
            NONE
        }
    }

    /// For host events: the nearest enclosing `nn.Module: …` Python frame,
    /// or [`NONE`].
    pub fn module(&self, trace: &Trace, event: u32) -> u32 {
        let mut current = self.parent[event as usize];
        while current != NONE {
            if is_module_frame(trace, &trace.events[current as usize]) {
                return current;
            }
            current = self.parent[current as usize];
        }
        NONE
    }

    /// The `nn.Module` path of a host event, outermost first
    /// (e.g. `BertModel_0/BertEncoder_0/BertLayer_3`), if any; a module frame
    /// itself is the last element of its own path.
    pub fn module_path(&self, trace: &Trace, event: u32) -> Option<String> {
        let mut names = Vec::new();
        let mut current = self.module_of_self_or_above(trace, event);
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
            self.module(trace, event)
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
    LAUNCHES.contains(&name) || is_graph_launch(name)
}

/// Whether a runtime or driver call launches a CUDA or HIP graph:
/// `cudaGraphLaunch`, `cuGraphLaunch`, `hipGraphLaunch`, with a per-thread
/// stream (`_ptsz`, `_spt`) or versioned (`_v10000`) suffix.
pub fn is_graph_launch(name: &str) -> bool {
    let base = name.split_once('_').map_or(name, |(base, _)| base);
    matches!(base, "cudaGraphLaunch" | "cuGraphLaunch" | "hipGraphLaunch")
}

/// Links a loaded trace.
pub fn link(trace: &Trace) -> Tree {
    let n = trace.events.len();
    let mut tree = Tree {
        parent: vec![NONE; n],
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
                    if top_event.end() - event.ts < BLEED_US {
                        stack.pop();
                        continue;
                    }
                    tree.anomalies.improper_nesting += 1;
                }
                break;
            }
            if let Some(&top) = stack.last() {
                tree.parent[index as usize] = top;
            }
            stack.push(index);
        }
    }
}

fn link_launches(trace: &Trace, tree: &mut Tree) {
    let mut launch_by_correlation: FxHashMap<u64, u32> = FxHashMap::default();
    for (index, event) in trace.events.iter().enumerate() {
        if matches!(event.kind, Kind::Runtime | Kind::Driver) {
            if let Some(correlation) = event.correlation() {
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
        let launch = match event.correlation() {
            Some(correlation) => launch_by_correlation.get(&correlation).copied(),
            None => flow_links.launch_of(event),
        };
        if launch.is_none() {
            tree.anomalies.gpu_without_launch += 1;
        }
        tree.gpu_launch.push(launch.unwrap_or(NONE));
    }
    let mut has_gpu = vec![false; trace.events.len()];
    for &launch in &tree.gpu_launch {
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
            .any(|e| e.kind.is_gpu_work() && e.correlation().is_none());
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
    tree.gpu_launcher = tree
        .gpu_launch
        .iter()
        .map(|&launch| {
            if launch == NONE {
                NONE
            } else {
                launcher_of(trace, &tree.parent, launch)
            }
        })
        .collect();
}

/// The launcher of a launch call: the first CPU op above it other than
/// `execute` (Python frames, annotations and `execute` wrappers are passed
/// through), else the call itself. `parent` is [`Tree::parent`].
pub fn launcher_of(trace: &Trace, parent: &[u32], launch: u32) -> u32 {
    let mut current = parent[launch as usize];
    while current != NONE {
        let event = &trace.events[current as usize];
        match event.kind {
            Kind::CpuOp if trace.name(event) != "execute" => return current,
            Kind::CpuOp | Kind::PythonFunction | Kind::UserAnnotation => {}
            // A launch nested in another runtime call is its own launcher.
            _ => break,
        }
        current = parent[current as usize];
    }
    launch
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

#[cfg(test)]
mod tests {
    use super::*;

    /// One complete (`ph: "X"`) event as JSON; `args` is a JSON object body.
    fn x(cat: &str, name: &str, tid: u32, ts: f64, dur: f64, args: &str) -> String {
        format!(
            r#"{{"ph": "X", "cat": "{cat}", "name": "{name}", "pid": 1, "tid": {tid}, "ts": {ts}, "dur": {dur}, "args": {{{args}}}}}"#
        )
    }

    /// A kernel on GPU stream 7 (pid 0).
    fn kernel(name: &str, ts: f64, dur: f64, args: &str) -> String {
        format!(
            r#"{{"ph": "X", "cat": "kernel", "name": "{name}", "pid": 0, "tid": 7, "ts": {ts}, "dur": {dur}, "args": {{{args}}}}}"#
        )
    }

    /// A runtime call on host thread `tid` carrying `correlation`.
    fn runtime(name: &str, tid: u32, ts: f64, correlation: u64) -> String {
        x(
            "cuda_runtime",
            name,
            tid,
            ts,
            5.0,
            &format!(r#""correlation": {correlation}"#),
        )
    }

    fn load_and_link(events: &[String]) -> (Trace, Tree) {
        let json = format!(r#"{{"traceEvents": [{}]}}"#, events.join(",\n"));
        let trace =
            crate::trace::load_reader("t.json", json.as_bytes(), &mut || {}).expect("loads");
        let tree = link(&trace);
        (trace, tree)
    }

    /// The index of the only event called `name`.
    fn at(trace: &Trace, name: &str) -> u32 {
        let found: Vec<usize> = (0..trace.events.len())
            .filter(|&i| trace.name(&trace.events[i]) == name)
            .collect();
        assert_eq!(found.len(), 1, "events named {name}: {found:?}");
        found[0] as u32
    }

    fn parent_name<'t>(trace: &'t Trace, tree: &Tree, name: &str) -> Option<&'t str> {
        let parent = tree.parent[at(trace, name) as usize];
        (parent != NONE).then(|| trace.name(&trace.events[parent as usize]))
    }

    #[test]
    fn host_events_nest_by_time_on_one_thread() {
        let (trace, tree) = load_and_link(&[
            // Listed out of order: nesting comes from time, not file order.
            x("cpu_op", "c", 1, 20.0, 10.0, ""),
            x("cpu_op", "a", 1, 0.0, 100.0, ""),
            x("cpu_op", "b", 1, 10.0, 40.0, ""),
            x("cpu_op", "d", 1, 60.0, 30.0, ""),
            // Same start as `e`, shorter: the longer one is the parent.
            x("cpu_op", "f", 1, 200.0, 5.0, ""),
            x("cpu_op", "e", 1, 200.0, 50.0, ""),
            // Starts exactly where `e` ends: not inside it.
            x("cpu_op", "g", 1, 250.0, 5.0, ""),
        ]);
        assert_eq!(parent_name(&trace, &tree, "a"), None);
        assert_eq!(parent_name(&trace, &tree, "b"), Some("a"));
        assert_eq!(parent_name(&trace, &tree, "c"), Some("b"));
        assert_eq!(parent_name(&trace, &tree, "d"), Some("a"));
        assert_eq!(parent_name(&trace, &tree, "e"), None);
        assert_eq!(parent_name(&trace, &tree, "f"), Some("e"));
        assert_eq!(parent_name(&trace, &tree, "g"), None);
        assert_eq!(tree.anomalies.improper_nesting, 0);
    }

    #[test]
    fn threads_and_processes_have_separate_stacks() {
        let (trace, tree) = load_and_link(&[
            x("cpu_op", "outer", 1, 0.0, 100.0, ""),
            x("cpu_op", "other_thread", 2, 10.0, 10.0, ""),
            r#"{"ph": "X", "cat": "cpu_op", "name": "other_process", "pid": 2, "tid": 1, "ts": 30, "dur": 10}"#.to_string(),
            // "1" as a string is the same thread as 1.
            r#"{"ph": "X", "cat": "cpu_op", "name": "same_thread", "pid": 1, "tid": "1", "ts": 50, "dur": 10}"#.to_string(),
        ]);
        assert_eq!(parent_name(&trace, &tree, "other_thread"), None);
        assert_eq!(parent_name(&trace, &tree, "other_process"), None);
        assert_eq!(parent_name(&trace, &tree, "same_thread"), Some("outer"));
    }

    #[test]
    fn gpu_events_are_not_host_children() {
        let (trace, tree) = load_and_link(&[
            r#"{"ph": "X", "cat": "cpu_op", "name": "op", "pid": 0, "tid": 7, "ts": 0, "dur": 100}"#.to_string(),
            kernel("k", 10.0, 5.0, ""),
        ]);
        assert_eq!(tree.parent[at(&trace, "k") as usize], NONE);
        assert_eq!(tree.gpu_events, vec![at(&trace, "k")]);
    }

    #[test]
    fn an_event_bleeding_under_1us_past_its_parent_is_a_sibling() {
        let (trace, tree) = load_and_link(&[
            x("cpu_op", "root", 1, 0.0, 100.0, ""),
            x("cpu_op", "first", 1, 10.0, 40.0, ""),
            // Starts 0.5 µs before `first` ends, ends after it.
            x("cpu_op", "bleeder", 1, 49.5, 10.5, ""),
            x("cpu_op", "inside_bleeder", 1, 52.0, 2.0, ""),
        ]);
        assert_eq!(parent_name(&trace, &tree, "first"), Some("root"));
        assert_eq!(parent_name(&trace, &tree, "bleeder"), Some("root"));
        assert_eq!(
            parent_name(&trace, &tree, "inside_bleeder"),
            Some("bleeder")
        );
        assert_eq!(tree.anomalies.improper_nesting, 0);
    }

    #[test]
    fn an_event_ending_over_1us_past_its_parent_is_improper_nesting() {
        let (trace, tree) = load_and_link(&[
            x("cpu_op", "root", 1, 0.0, 100.0, ""),
            x("cpu_op", "first", 1, 10.0, 40.0, ""),
            // Starts 5 µs before `first` ends and ends after it.
            x("cpu_op", "straddler", 1, 45.0, 15.0, ""),
            // Starts exactly 1 µs before the end: not under 1 µs.
            x("cpu_op", "second", 1, 70.0, 10.0, ""),
            x("cpu_op", "edge", 1, 79.0, 5.0, ""),
        ]);
        // Counted, and kept under the event it starts in.
        assert_eq!(parent_name(&trace, &tree, "straddler"), Some("first"));
        assert_eq!(parent_name(&trace, &tree, "edge"), Some("second"));
        assert_eq!(tree.anomalies.improper_nesting, 2);
    }

    #[test]
    fn a_top_level_event_bleeding_under_1us_is_a_sibling_root() {
        let (trace, tree) = load_and_link(&[
            x("user_annotation", "ProfilerStep#1", 1, 0.0, 100.0, ""),
            x("user_annotation", "ProfilerStep#2", 1, 99.5, 100.0, ""),
        ]);
        assert_eq!(parent_name(&trace, &tree, "ProfilerStep#2"), None);
        assert_eq!(tree.anomalies.improper_nesting, 0);
    }

    #[test]
    fn launch_links_to_kernel_by_correlation() {
        let (trace, tree) = load_and_link(&[
            x("cpu_op", "aten::mm", 1, 0.0, 50.0, ""),
            runtime("cudaLaunchKernel", 1, 10.0, 42),
            kernel("gemm", 100.0, 20.0, r#""correlation": 42, "stream": 7"#),
        ]);
        let (launch, gemm) = (at(&trace, "cudaLaunchKernel"), at(&trace, "gemm"));
        assert_eq!(tree.launch(gemm), launch);
        assert!(tree.is_linked(gemm));
        assert_eq!(tree.launcher(gemm), at(&trace, "aten::mm"));
        assert_eq!(tree.anomalies, LinkAnomalies::default());
    }

    #[test]
    fn launch_links_to_kernel_by_flow_without_correlation() {
        let (trace, tree) = load_and_link(&[
            x("Runtime", "cudaLaunchKernel", 1, 10.0, 5.0, ""),
            kernel("flowed", 100.0, 20.0, ""),
            r#"{"ph": "s", "cat": "async", "id": 9, "pid": 1, "tid": 1, "ts": 10}"#.to_string(),
            r#"{"ph": "f", "cat": "async", "id": 9, "pid": 0, "tid": 7, "ts": 100, "bp": "e"}"#
                .to_string(),
            // No correlation and no flow: nothing to link it to.
            kernel("stray", 200.0, 20.0, ""),
        ]);
        assert_eq!(
            tree.launch(at(&trace, "flowed")),
            at(&trace, "cudaLaunchKernel")
        );
        assert!(!tree.is_linked(at(&trace, "stray")));
        assert_eq!(tree.anomalies.gpu_without_launch, 1);
        assert_eq!(tree.anomalies.launches_without_gpu, 0);
    }

    #[test]
    fn launcher_walks_through_python_and_execute_to_the_cpu_op() {
        let (trace, tree) = load_and_link(&[
            x("cpu_op", "aten::conv2d", 1, 0.0, 100.0, ""),
            x("python_function", "wrapper.py(12): call", 1, 10.0, 80.0, ""),
            x("cpu_op", "execute", 1, 20.0, 60.0, ""),
            runtime("cudaLaunchKernel", 1, 30.0, 1),
            kernel("conv_kernel", 200.0, 10.0, r#""correlation": 1"#),
            // Under `execute` alone: no CPU op, so the launch owns its kernel.
            x("cpu_op", "execute", 2, 0.0, 50.0, ""),
            runtime("cuLaunchKernel", 2, 10.0, 2),
            kernel("lonely_kernel", 300.0, 10.0, r#""correlation": 2"#),
        ]);
        assert_eq!(
            tree.launcher(at(&trace, "conv_kernel")),
            at(&trace, "aten::conv2d")
        );
        let lonely = at(&trace, "lonely_kernel");
        assert_eq!(tree.launcher(lonely), tree.launch(lonely));
        assert_eq!(
            trace.name(&trace.events[tree.launcher(lonely) as usize]),
            "cuLaunchKernel"
        );
    }

    #[test]
    fn graph_launch_owns_every_kernel_with_its_correlation() {
        let (trace, tree) = load_and_link(&[
            runtime("cudaGraphLaunch", 1, 10.0, 7),
            kernel("g1", 100.0, 10.0, r#""correlation": 7"#),
            kernel("g2", 110.0, 10.0, r#""correlation": 7"#),
            kernel("g3", 120.0, 10.0, r#""correlation": 7"#),
        ]);
        let graph = at(&trace, "cudaGraphLaunch");
        for name in ["g1", "g2", "g3"] {
            let k = at(&trace, name) as usize;
            assert_eq!(tree.launch(k as u32), graph, "{name}");
            assert_eq!(tree.launcher(k as u32), graph, "{name}");
        }
        assert_eq!(tree.anomalies, LinkAnomalies::default());
    }

    #[test]
    fn kernel_without_launch_is_counted() {
        let (trace, tree) = load_and_link(&[
            runtime("cudaLaunchKernel", 1, 10.0, 1),
            kernel("linked", 100.0, 10.0, r#""correlation": 1"#),
            kernel("orphan", 120.0, 10.0, r#""correlation": 2"#),
            r#"{"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH", "pid": 0, "tid": 7, "ts": 140, "dur": 5, "args": {"correlation": 3}}"#.to_string(),
        ]);
        let orphan = at(&trace, "orphan") as usize;
        assert_eq!(tree.launch(orphan as u32), NONE);
        assert_eq!(tree.launcher(orphan as u32), NONE);
        assert_eq!(tree.anomalies.gpu_without_launch, 2);
        assert_eq!(tree.gpu_events.len(), 3);
    }

    #[test]
    fn launch_without_gpu_work_is_counted() {
        let (_, tree) = load_and_link(&[
            runtime("cudaLaunchKernel", 1, 10.0, 1),
            runtime("hipLaunchKernel", 1, 20.0, 2),
            // Not launches: no GPU work expected.
            runtime("cudaStreamSynchronize", 1, 30.0, 3),
            x("cuda_runtime", "cudaGetDevice", 1, 40.0, 1.0, ""),
            runtime("cudaLaunchKernel", 1, 50.0, 4),
            kernel("k", 100.0, 10.0, r#""correlation": 4"#),
        ]);
        assert_eq!(tree.anomalies.launches_without_gpu, 2);
        assert_eq!(tree.anomalies.gpu_without_launch, 0);
    }

    #[test]
    fn duplicate_correlation_is_counted_and_the_first_launch_wins() {
        let (trace, tree) = load_and_link(&[
            runtime("cudaLaunchKernel", 1, 10.0, 5),
            runtime("cudaLaunchKernelExC", 2, 20.0, 5),
            kernel("k", 100.0, 10.0, r#""correlation": 5"#),
        ]);
        assert_eq!(tree.anomalies.duplicate_correlations, 1);
        assert_eq!(tree.launch(at(&trace, "k")), at(&trace, "cudaLaunchKernel"));
        // The second launch is left with no GPU work.
        assert_eq!(tree.anomalies.launches_without_gpu, 1);
    }

    #[test]
    fn profiler_steps_hold_ops_and_through_their_launch_kernels() {
        let (trace, tree) = load_and_link(&[
            x("user_annotation", "ProfilerStep#4", 1, 100.0, 100.0, ""),
            x("user_annotation", "ProfilerStep#3", 1, 0.0, 100.0, ""),
            x("cpu_op", "op_in_3", 1, 10.0, 10.0, ""),
            x("cpu_op", "op_in_4", 1, 110.0, 20.0, ""),
            runtime("cudaLaunchKernel", 1, 115.0, 1),
            // Runs on the GPU after both steps ended on the host.
            kernel("late_kernel", 500.0, 10.0, r#""correlation": 1"#),
            // Another thread, inside step 3's time range.
            x("cpu_op", "backward_op", 2, 50.0, 10.0, ""),
            x("cpu_op", "after_steps", 1, 300.0, 10.0, ""),
            kernel("unlinked_kernel", 150.0, 10.0, r#""correlation": 99"#),
            // Not a step: no number.
            x("user_annotation", "ProfilerStep#x", 1, 400.0, 10.0, ""),
        ]);
        let numbers: Vec<u64> = tree.steps.iter().map(|s| s.number).collect();
        assert_eq!(numbers, vec![3, 4], "sorted by start");
        assert_eq!(tree.steps[1].ts, 100.0);
        assert_eq!(tree.steps[1].end, 200.0);
        let step_of = |name: &str| {
            let step = tree.step(&trace, at(&trace, name));
            (step != NONE).then(|| tree.steps[step as usize].number)
        };
        assert_eq!(step_of("op_in_3"), Some(3));
        assert_eq!(step_of("op_in_4"), Some(4));
        assert_eq!(step_of("late_kernel"), Some(4));
        assert_eq!(step_of("backward_op"), Some(3));
        assert_eq!(step_of("after_steps"), None);
        assert_eq!(step_of("unlinked_kernel"), None);
        assert_eq!(profiler_step_number("ProfilerStep#12"), Some(12));
        assert_eq!(profiler_step_number("ProfilerStep#x"), None);
    }

    #[test]
    fn module_path_is_outermost_first() {
        let (trace, tree) = load_and_link(&[
            x("python_function", "nn.Module: Model_0", 1, 0.0, 100.0, ""),
            x("python_function", "model.py(10): forward", 1, 5.0, 90.0, ""),
            x("python_function", "nn.Module: Block_1", 1, 10.0, 80.0, ""),
            x("python_function", "block.py(3): forward", 1, 15.0, 70.0, ""),
            x("cpu_op", "aten::linear", 1, 20.0, 30.0, ""),
            x("cpu_op", "aten::addmm", 1, 25.0, 10.0, ""),
            x("cpu_op", "in_model_only", 1, 92.0, 5.0, ""),
            x("cpu_op", "outside", 1, 200.0, 5.0, ""),
            // Same times on another thread: no module there.
            x("cpu_op", "other_thread", 2, 25.0, 10.0, ""),
        ]);
        let path = |name: &str| tree.module_path(&trace, at(&trace, name));
        assert_eq!(path("aten::addmm").as_deref(), Some("Model_0/Block_1"));
        assert_eq!(path("aten::linear").as_deref(), Some("Model_0/Block_1"));
        assert_eq!(path("in_model_only").as_deref(), Some("Model_0"));
        assert_eq!(path("outside"), None);
        assert_eq!(path("other_thread"), None);
        assert_eq!(
            tree.module(&trace, at(&trace, "aten::addmm")),
            at(&trace, "nn.Module: Block_1")
        );
    }

    #[test]
    fn backward_pairs_with_the_latest_forward_on_another_thread() {
        let backward = "autograd::engine::evaluate_function: AddmmBackward0";
        let (trace, tree) = load_and_link(&[
            x(
                "cpu_op",
                "early_forward",
                1,
                0.0,
                10.0,
                r#""Sequence number": 5"#,
            ),
            x(
                "cpu_op",
                "late_forward",
                1,
                20.0,
                10.0,
                r#""Sequence number": 5"#,
            ),
            // Same thread as the backward: not its forward.
            x(
                "cpu_op",
                "same_thread_op",
                2,
                50.0,
                10.0,
                r#""Sequence number": 5"#,
            ),
            x(
                "cpu_op",
                "unrelated",
                1,
                40.0,
                5.0,
                r#""Sequence number": 6"#,
            ),
            x(
                "cpu_op",
                backward,
                2,
                100.0,
                10.0,
                r#""Sequence number": 5, "Fwd thread id": 1"#,
            ),
            x(
                "cpu_op",
                "autograd::engine::evaluate_function: MulBackward0",
                2,
                120.0,
                10.0,
                r#""Sequence number": 8"#,
            ),
        ]);
        assert_eq!(
            tree.forward_of,
            vec![(at(&trace, backward), at(&trace, "late_forward"))]
        );
    }
}
