//! Prefill / decode: an inference trace's steps (one model forward each)
//! recognised from the annotation the serving engine writes around them and
//! tagged by phase, so that decode is compared with decode and prefill with
//! prefill — a batch of prompts costs orders of magnitude more per step than
//! a batch of next tokens, and mixing them makes every step figure noise.
//!
//! Recognised annotations (`user_annotation` ranges on the host):
//!
//! - vLLM (and SGLang, which writes the same one):
//!   `execute_<n>_context_<p>(sq…sk…)_generation_<d>(sq…sk…)`, read by
//!   [`chunk_stats`]: context tokens only → prefill, generation tokens only →
//!   decode, both → mixed (chunked prefill), neither → not a step;
//! - SGLang: `step[<MODE> bs=<n>]` from its forward mode: `DECODE` → decode,
//!   `EXTEND`/`PREFILL` → prefill, `MIXED` → mixed; `IDLE` and speculative
//!   modes are not tagged.
//!
//! Where both nest (SGLang writes both), the outermost range is the step.
//! A trace with no step annotation has its steps found from its repeating
//! structure instead ([`structure`]: graph replays, or a repeating forward).
//! GPU work belongs to the step whose range holds its launch (same process),
//! graph replays included; ops are named as their rows are (a replayed
//! kernel by its captured op, else by the kernel).

mod structure;

use structure::Step;

use std::collections::BTreeMap;

use crate::analysis::gpu_work::GpuWork;
use crate::analysis::ops::stats::median;
use crate::analysis::perf_model::chunk_stats;
use crate::analysis::profile::{InferenceStep, Phase, PhaseOp, PhaseSummary, Phases};
use crate::analysis::timeline::{Interval, IntervalSet};
use crate::trace::link::{NONE, Tree};
use crate::trace::{FxHashMap, Kind, Trace};

/// The engine an annotation comes from.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Engine {
    Vllm,
    Sglang,
}

/// The phase an annotation names, and the engine whose form it has; `None`
/// when it is not a step annotation (or names an idle or speculative step).
fn annotation_phase(name: &str) -> Option<(Phase, Engine)> {
    if let Some(stats) = chunk_stats(name) {
        let (context, generation) = (stats.context[0] > 0, stats.generation[0] > 0);
        let phase = match (context, generation) {
            (true, true) => Phase::Mixed,
            (true, false) => Phase::Prefill,
            (false, true) => Phase::Decode,
            (false, false) => return None,
        };
        return Some((phase, Engine::Vllm));
    }
    let mode = name.strip_prefix("step[")?.split([' ', ']']).next()?;
    let phase = match mode {
        "DECODE" => Phase::Decode,
        "EXTEND" | "PREFILL" => Phase::Prefill,
        "MIXED" => Phase::Mixed,
        _ => return None,
    };
    Some((phase, Engine::Sglang))
}

/// A recognised step range.
struct Range {
    phase: Phase,
    engine: Engine,
    event: u32,
    start: f64,
    end: f64,
}

/// The prefill/decode split of a trace; `None` when no step annotation is
/// found and the structure does not clearly repeat. `work_names` names
/// graph-replayed work by its row. Every annotation form seen is named in
/// [`Phases::recognised_by`], nested ones too; else how the structure gave
/// the steps.
pub(super) fn phases(
    trace: &Trace,
    tree: &Tree,
    gpu: &GpuWork,
    work_names: &FxHashMap<u32, String>,
) -> Option<Phases> {
    let (ranges, recognised_by) =
        annotated_steps(trace).or_else(|| structure::inferred_steps(trace, tree))?;
    Some(split(trace, gpu, work_names, &ranges, recognised_by))
}

/// The outermost step annotations in start order, and the annotation forms
/// seen; `None` when there is none.
fn annotated_steps(trace: &Trace) -> Option<(Vec<Step>, String)> {
    let mut found: Vec<Range> = trace
        .events
        .iter()
        .enumerate()
        .filter(|(_, e)| e.kind == Kind::UserAnnotation)
        .filter_map(|(index, e)| {
            let (phase, engine) = annotation_phase(trace.name(e))?;
            Some(Range {
                phase,
                engine,
                event: index as u32,
                start: e.ts,
                end: e.end(),
            })
        })
        .collect();
    if found.is_empty() {
        return None;
    }
    let mut engines: Vec<Engine> = found.iter().map(|r| r.engine).collect();
    engines.sort();
    engines.dedup();
    // Outermost first at equal starts, so nested annotations are dropped.
    found.sort_by(|a, b| a.start.total_cmp(&b.start).then(b.end.total_cmp(&a.end)));
    let pid = |event: u32| &trace.tracks[trace.events[event as usize].track as usize].pid;
    let mut ranges: Vec<Range> = Vec::new();
    for range in found {
        let nested = ranges.iter().rev().any(|outer| {
            pid(outer.event) == pid(range.event)
                && range.start >= outer.start
                && range.end <= outer.end
        });
        if !nested {
            ranges.push(range);
        }
    }
    let recognised_by = engines
        .iter()
        .map(|e| match e {
            Engine::Vllm => "vllm annotation",
            Engine::Sglang => "sglang annotation",
        })
        .collect::<Vec<_>>()
        .join(", ");
    let steps = ranges
        .into_iter()
        .map(|r| Step {
            phase: r.phase,
            event: r.event,
            start: r.start,
            end: r.end,
        })
        .collect();
    Some((steps, recognised_by))
}

/// The phases of `ranges` (host-time order): the work launched inside each,
/// per step and per phase.
fn split(
    trace: &Trace,
    gpu: &GpuWork,
    work_names: &FxHashMap<u32, String>,
    ranges: &[Step],
    recognised_by: String,
) -> Phases {
    let pid = |event: u32| &trace.tracks[trace.events[event as usize].track as usize].pid;

    // The work launched inside each step, by launch time and process.
    let mut work_of: Vec<Vec<u32>> = vec![Vec::new(); ranges.len()];
    for (index, work) in gpu.items.iter().enumerate() {
        if work.launch == NONE {
            continue;
        }
        let launch = &trace.events[work.launch as usize];
        let after = ranges.partition_point(|r| r.start <= launch.ts);
        let step = ranges[..after].iter().rposition(|r| {
            launch.ts < r.end && pid(r.event) == &trace.tracks[launch.track as usize].pid
        });
        if let Some(step) = step {
            work_of[step].push(index as u32);
        }
    }

    let steps: Vec<InferenceStep> = ranges
        .iter()
        .zip(&work_of)
        .map(|(range, work)| InferenceStep {
            phase: range.phase,
            annotation: trace.name(&trace.events[range.event as usize]).to_string(),
            host_duration_us: range.end - range.start,
            gpu_time_us: IntervalSet::from_intervals(
                work.iter()
                    .map(|&w| gpu.items[w as usize].interval)
                    .collect(),
            )
            .len(),
            ops: step_ops(trace, gpu, work_names, work),
        })
        .collect();
    let summaries = Phase::ALL
        .iter()
        .filter_map(|&phase| summary(trace, gpu, work_names, phase, &steps, &work_of))
        .collect();
    Phases {
        recognised_by,
        steps,
        summaries,
    }
}

/// The figures of one phase; `None` when no step has it.
fn summary(
    trace: &Trace,
    gpu: &GpuWork,
    work_names: &FxHashMap<u32, String>,
    phase: Phase,
    steps: &[InferenceStep],
    work_of: &[Vec<u32>],
) -> Option<PhaseSummary> {
    let times: Vec<f64> = steps
        .iter()
        .filter(|s| s.phase == phase)
        .map(|s| s.gpu_time_us)
        .collect();
    let per_step = median(&times)?;
    let mut ops: BTreeMap<&str, PhaseOp> = BTreeMap::new();
    for (_, work) in steps.iter().zip(work_of).filter(|(s, _)| s.phase == phase) {
        for &w in work {
            let item = &gpu.items[w as usize];
            let name = op_name(trace, gpu, work_names, w);
            let entry = ops.entry(name).or_insert_with(|| PhaseOp {
                name: name.to_string(),
                work_items: 0,
                gpu_time_us: 0.0,
            });
            entry.work_items += 1;
            entry.gpu_time_us += duration(item.interval);
        }
    }
    let mut ops: Vec<PhaseOp> = ops.into_values().collect();
    ops.sort_by(|a, b| b.gpu_time_us.total_cmp(&a.gpu_time_us));
    Some(PhaseSummary {
        phase,
        steps: times.len() as u64,
        gpu_time_us: times.iter().sum(),
        gpu_time_per_step_us: per_step,
        ops,
    })
}

/// The name a piece of GPU work is counted under: its graph row's, else
/// its launching op's, else its own.
fn op_name<'a>(
    trace: &'a Trace,
    gpu: &GpuWork,
    work_names: &'a FxHashMap<u32, String>,
    w: u32,
) -> &'a str {
    let item = &gpu.items[w as usize];
    match work_names.get(&w) {
        Some(name) => name.as_str(),
        None if item.op != NONE => trace.name(&trace.events[item.op as usize]),
        None => trace.name(&trace.events[item.event as usize]),
    }
}

/// The GPU time of each op name in one step's work, most first.
fn step_ops(
    trace: &Trace,
    gpu: &GpuWork,
    work_names: &FxHashMap<u32, String>,
    work: &[u32],
) -> Vec<(String, f64)> {
    let mut ops: BTreeMap<&str, f64> = BTreeMap::new();
    for &w in work {
        *ops.entry(op_name(trace, gpu, work_names, w)).or_default() +=
            duration(gpu.items[w as usize].interval);
    }
    let mut ops: Vec<(String, f64)> = ops
        .into_iter()
        .map(|(name, us)| (name.to_string(), us))
        .collect();
    ops.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    ops
}

fn duration(interval: Interval) -> f64 {
    interval.end - interval.start
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_from_vllm_and_sglang_annotations() {
        let decode =
            "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)";
        let prefill =
            "execute_2_context_2(sq1024sk1024sqsq524288sqsk524288)_generation_0(sq0sk0sqsq0sqsk0)";
        let mixed = "execute_3_context_1(sq512sk512sqsq262144sqsk262144)_generation_2(sq2sk900sqsq2sqsk900)";
        let idle = "execute_0_context_0(sq0sk0sqsq0sqsk0)_generation_0(sq0sk0sqsq0sqsk0)";
        let phase = |name: &str| annotation_phase(name).map(|(p, _)| p);
        assert_eq!(phase(decode), Some(Phase::Decode));
        assert_eq!(phase(prefill), Some(Phase::Prefill));
        assert_eq!(phase(mixed), Some(Phase::Mixed));
        assert_eq!(phase(idle), None);
        assert_eq!(phase("step[DECODE bs=32]"), Some(Phase::Decode));
        assert_eq!(phase("step[EXTEND bs=4]"), Some(Phase::Prefill));
        assert_eq!(phase("step[MIXED bs=9]"), Some(Phase::Mixed));
        assert_eq!(phase("step[IDLE bs=0]"), None);
        assert_eq!(phase("ProfilerStep#3"), None);
    }
}
