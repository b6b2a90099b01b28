//! The rows of replayed work: one per captured op and argument set, or per
//! kernel name and launch configuration where no op is known, in each
//! graph; and one per graph with its whole kernel sequence.

use std::collections::HashMap;

use super::Capture;
use super::merge::Owner;
use super::replays::Replay;
use crate::analysis::gpu_work::GpuWork;
use crate::analysis::op_tables::{ArgsKey, args_key, kernel_details, op_model, step_sums};
use crate::analysis::ops::category::{self, Category};
use crate::analysis::ops::stats::Stats;
use crate::analysis::perf::CapturedOp;
use crate::analysis::profile::{GraphPlace, GraphRole, UniqueArgs};
use crate::analysis::timeline::IntervalSet;
use crate::trace::link::Tree;
use crate::trace::{FxHashMap, Trace};

/// The name of a whole-graph row.
const GRAPH_ROW_NAME: &str = "graph replay";

/// The traces rows are read from: the replay, and the captures given.
pub(super) struct Sources<'a> {
    /// The replayed trace.
    pub(super) trace: &'a Trace,
    /// Its link tree.
    pub(super) tree: &'a Tree,
    /// Its GPU work.
    pub(super) gpu: &'a GpuWork<'a>,
    /// The capture traces.
    pub(super) captures: &'a [Capture<'a>],
}

/// One execution of a row: the launch that replayed it and its work.
struct Call {
    launch: u32,
    work: Vec<u32>,
}

/// What a row is keyed by, besides its graph.
#[derive(Clone, PartialEq, Eq, Hash)]
enum RowKey {
    /// An op of the capture trace, by name and arguments, and the kernel
    /// sequence of the call ([`variant`]): an op that runs other kernels in
    /// some layers (attention with and without a sliding window, say) makes
    /// one row per sequence, as TraceLens does, so that each row's calls are
    /// alike.
    Op(ArgsKey, String),
    /// A kernel by name and launch configuration.
    Kernel(String, String),
}

/// A row being built.
struct Group {
    graph: String,
    launch_name: String,
    key: RowKey,
    /// The capture op of the first call, for op rows.
    op: Option<CapturedOp>,
    calls: Vec<Call>,
}

/// The rows of the replays' work ([`GraphRole::Kernel`] and
/// [`GraphRole::CapturedOp`]), most time first, with the row name of each
/// replayed work item (an index into [`GpuWork::items`]); `owners` has one
/// entry per work item of each replay.
pub(super) fn work_rows(
    sources: &Sources<'_>,
    replays: &[Replay],
    owners: &[Vec<Owner>],
) -> (Vec<UniqueArgs>, FxHashMap<u32, String>) {
    let (trace, gpu) = (sources.trace, sources.gpu);
    let mut capture_reprs: Vec<FxHashMap<_, _>> =
        vec![FxHashMap::default(); sources.captures.len()];
    let mut index: HashMap<(String, RowKey), usize> = HashMap::new();
    let mut groups: Vec<Group> = Vec::new();
    for (replay, owners) in replays.iter().zip(owners) {
        // Calls of this replay in first-work order: one per execution of a
        // captured op, one per kernel execution otherwise.
        let mut calls: Vec<(Option<CapturedOp>, Vec<u32>)> = Vec::new();
        let mut op_call: HashMap<CapturedOp, usize> = HashMap::new();
        for (&work, owner) in replay.work.iter().zip(owners) {
            match owner {
                Owner::Op(op) => match op_call.get(op) {
                    Some(&call) => calls[call].1.push(work),
                    None => {
                        op_call.insert(*op, calls.len());
                        calls.push((Some(*op), vec![work]));
                    }
                },
                _ => calls.push((None, vec![work])),
            }
        }
        for (op, work) in calls {
            let key = match op {
                Some(op) => RowKey::Op(
                    args_key(
                        sources.captures[op.capture as usize].trace,
                        op.op,
                        &mut capture_reprs[op.capture as usize],
                    ),
                    variant(trace, gpu, &work),
                ),
                None => kernel_key(trace, gpu, work[0]),
            };
            let slot = *index
                .entry((replay.graph.clone(), key.clone()))
                .or_insert_with(|| {
                    groups.push(Group {
                        graph: replay.graph.clone(),
                        launch_name: trace
                            .name(&trace.events[replay.launch as usize])
                            .to_string(),
                        key,
                        op,
                        calls: Vec::new(),
                    });
                    groups.len() - 1
                });
            groups[slot].calls.push(Call {
                launch: replay.launch,
                work,
            });
        }
    }
    let mut names = FxHashMap::default();
    for group in &groups {
        let name = match &group.key {
            RowKey::Op(key, _) => &key.name,
            RowKey::Kernel(name, _) => name,
        };
        for call in &group.calls {
            names.extend(call.work.iter().map(|&w| (w, name.clone())));
        }
    }
    let mut rows: Vec<UniqueArgs> = groups
        .into_iter()
        .map(|group| {
            let (role, variant) = match &group.key {
                RowKey::Op(_, variant) => (GraphRole::CapturedOp, Some(variant.clone())),
                RowKey::Kernel(..) => (GraphRole::Kernel, None),
            };
            let place = GraphPlace {
                graph: group.graph.clone(),
                role,
                launch: group.launch_name.clone(),
                variant,
            };
            let (name, op) = match &group.key {
                RowKey::Op(key, _) => (key.name.clone(), group.op),
                RowKey::Kernel(name, _) => (name.clone(), None),
            };
            let mut row = build_row(sources, &group.calls, name, place, op);
            match &group.key {
                RowKey::Op(key, _) => {
                    row.input_dims = key.input_dims.clone();
                    row.input_type = key.input_type.clone();
                    row.input_strides = key.input_strides.clone();
                    row.concrete_inputs = key.concrete_inputs.clone();
                }
                RowKey::Kernel(_, config) => row.input_dims = config.clone(),
            }
            row
        })
        .collect();
    sort_rows(&mut rows);
    (rows, names)
}

/// The kernel sequence of a call as a short stable text: FNV-1a (64 bits)
/// of the names, in hex.
pub(super) fn variant(trace: &Trace, gpu: &GpuWork, work: &[u32]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &w in work {
        let name = trace.name(&trace.events[gpu.items[w as usize].event as usize]);
        for &byte in name.as_bytes().iter().chain(std::iter::once(&0)) {
            hash = (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("{hash:016x}")
}

/// One row per graph: every replay of it is a call, its kernel sequence the
/// whole graph's.
pub(super) fn graph_rows(sources: &Sources<'_>, replays: &[Replay]) -> Vec<UniqueArgs> {
    let trace = sources.trace;
    let mut order: Vec<String> = Vec::new();
    let mut calls: HashMap<String, (String, Vec<Call>)> = HashMap::new();
    for replay in replays {
        let entry = calls.entry(replay.graph.clone()).or_insert_with(|| {
            order.push(replay.graph.clone());
            (
                trace
                    .name(&trace.events[replay.launch as usize])
                    .to_string(),
                Vec::new(),
            )
        });
        entry.1.push(Call {
            launch: replay.launch,
            work: replay.work.clone(),
        });
    }
    let mut rows: Vec<UniqueArgs> = order
        .into_iter()
        .map(|graph| {
            let (launch, calls) = calls.remove(&graph).expect("a graph seen");
            let place = GraphPlace {
                graph,
                role: GraphRole::Graph,
                launch,
                variant: None,
            };
            let mut row = build_row(sources, &calls, GRAPH_ROW_NAME.to_string(), place, None);
            row.category = Category::Other;
            row
        })
        .collect();
    sort_rows(&mut rows);
    rows
}

/// Most time first, ties by the earliest event (as the op table sorts).
pub(super) fn sort_rows(rows: &mut [UniqueArgs]) {
    rows.sort_by(|a, b| {
        b.direct
            .sum
            .total_cmp(&a.direct.sum)
            .then(a.example_event.cmp(&b.example_event))
    });
}

/// A kernel row's key: the kernel's name and, when recorded, its launch
/// configuration (`grid [x, y, z] block [x, y, z]`).
fn kernel_key(trace: &Trace, gpu: &GpuWork, work: u32) -> RowKey {
    let event = &trace.events[gpu.items[work as usize].event as usize];
    let config = trace
        .gpu_args(event)
        .and_then(|a| Some((a.grid?, a.block?)))
        .map_or(String::new(), |(g, b)| {
            format!(
                "grid [{}, {}, {}] block [{}, {}, {}]",
                g[0], g[1], g[2], b[0], b[1], b[2]
            )
        });
    RowKey::Kernel(trace.name(event).to_string(), config)
}

/// A row from its calls. `op` is the capture op the row stands for, when
/// it is one; the argument lists are left for the caller to fill in.
fn build_row(
    sources: &Sources<'_>,
    calls: &[Call],
    name: String,
    place: GraphPlace,
    op: Option<CapturedOp>,
) -> UniqueArgs {
    let (trace, tree, gpu) = (sources.trace, sources.tree, sources.gpu);
    let busy = |work: &[u32]| {
        IntervalSet::from_intervals(
            work.iter()
                .map(|&w| gpu.items[w as usize].interval)
                .collect(),
        )
        .len()
    };
    let samples: Vec<f64> = calls.iter().map(|call| busy(&call.work)).collect();
    let first = &calls[0];
    let kernel_names: Vec<&str> = first
        .work
        .iter()
        .map(|&w| trace.name(&trace.events[gpu.items[w as usize].event as usize]))
        .collect();
    let capture_op = op.map(|o| (o.op, sources.captures[o.capture as usize]));
    let category = match capture_op {
        Some(_) => category::of_op_and_kernels(&name, kernel_names.iter().copied(), gpu.comm),
        None => category::of_kernel(&name, gpu.comm),
    };
    let all_work: Vec<u32> = calls.iter().flat_map(|c| c.work.iter().copied()).collect();
    let labels = args_key(trace, first.launch, &mut FxHashMap::default());
    let stats = Stats::of(&samples);
    UniqueArgs {
        name,
        category,
        process_name: labels.process_name,
        process_label: labels.process_label,
        thread_name: labels.thread_name,
        input_dims: String::new(),
        input_type: String::new(),
        input_strides: String::new(),
        concrete_inputs: String::new(),
        direct: stats,
        subtree: stats,
        example_event: trace.events[gpu.items[first.work[0] as usize].event as usize].index,
        module_path: capture_op
            .and_then(|(op, capture)| capture.tree.module_path(capture.trace, op)),
        kernels: kernel_details(trace, gpu, &all_work),
        kernel_sequence: kernel_names.iter().map(|n| n.to_string()).collect(),
        step_us: step_sums(
            trace,
            tree,
            calls
                .iter()
                .zip(&samples)
                .map(|(call, &us)| (call.launch, us)),
        ),
        samples_us: samples,
        model: capture_op.and_then(|(op, capture)| op_model(capture.trace, op)),
        graph: Some(place),
    }
}
