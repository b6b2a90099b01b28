//! Which capture each graph launch is merged with, as TraceLens's capture
//! merge chooses it (`Trace2Tree/trace_capture_merge_experimental.py`):
//! each execution step the engine annotates
//! (`execute_<n>_context_…_generation_…`, or
//! `execute_context_<c>(…)_generation_<g>(…)`) runs at a batch size — `n`,
//! or the sum of the parenthesised counts — and launches one graph (FULL
//! capture) or several with eager ops between them (PIECEWISE). The step
//! takes the capture of its mode with the smallest batch size that holds
//! it (vLLM pads a batch up to the next captured size), and its k-th graph
//! launch the capture's k-th graph.
//!
//! A capture's batch size and mode come from `execution_details.json`
//! when the folder has one; else from the capture trace as TraceLens's
//! `classify_graph_capture_trace` reads it: a `capture_<n>_<MODE>`
//! annotation, else FULL for one capture and PIECEWISE for more, the batch
//! size being the most common first dimension of the ops' inputs.

use std::collections::HashMap;

use crate::trace::capture_folder::{CaptureFile, CaptureMode};
use crate::trace::link;
use crate::trace::{Kind, Trace};

/// A capture's batch size and mode.
pub(super) type Details = (u64, CaptureMode);

/// One annotated execution step with graph launches.
pub(super) struct Step {
    /// Its batch size.
    pub(super) batch: u64,
    /// Its graph launches (event indices), in host order.
    pub(super) launches: Vec<u32>,
    /// FULL for one launch, PIECEWISE for several.
    pub(super) mode: CaptureMode,
    /// The capture chosen (an index into the details given), if any fits.
    pub(super) capture: Option<usize>,
}

/// The batch size of a step annotation TraceLens merges by; `None` for any
/// other text.
pub(super) fn step_batch(name: &str) -> Option<u64> {
    if let Some(rest) = name.strip_prefix("execute_context_") {
        if !rest.contains("_generation_") {
            return None;
        }
        // The parenthesised pure counts, summed.
        return Some(
            rest.split('(')
                .skip(1)
                .filter_map(|piece| piece.split_once(')'))
                .filter(|(inside, _)| {
                    !inside.is_empty() && inside.bytes().all(|b| b.is_ascii_digit())
                })
                .filter_map(|(inside, _)| inside.parse::<u64>().ok())
                .sum(),
        );
    }
    crate::analysis::perf_model::chunk_stats(name)?;
    let (count, rest) = name.strip_prefix("execute_")?.split_once('_')?;
    rest.starts_with("context_")
        .then(|| count.parse().ok())
        .flatten()
}

/// The graph launch calls of a trace, in host order.
pub(super) fn graph_launches(trace: &Trace) -> Vec<u32> {
    let mut launches: Vec<u32> = trace
        .events
        .iter()
        .enumerate()
        .filter(|(_, e)| {
            matches!(e.kind, Kind::Runtime | Kind::Driver) && link::is_graph_launch(trace.name(e))
        })
        .map(|(index, _)| index as u32)
        .collect();
    launches.sort_by(|&a, &b| {
        let (a_ts, b_ts) = (trace.events[a as usize].ts, trace.events[b as usize].ts);
        a_ts.total_cmp(&b_ts).then(a.cmp(&b))
    });
    launches
}

/// The annotated steps of a trace with their graph launches (a launch in
/// two nested steps belongs to the first), each with the capture `details`
/// (one per capture; `None` where unknown) give it.
pub(super) fn steps(trace: &Trace, details: &[Option<Details>]) -> Vec<Step> {
    let mut annotated: Vec<(f64, f64, u64)> = trace
        .events
        .iter()
        .filter(|e| e.kind == Kind::UserAnnotation)
        .filter_map(|e| Some((e.ts, e.end(), step_batch(trace.name(e))?)))
        .collect();
    annotated.sort_by(|a, b| a.0.total_cmp(&b.0));
    let launches = graph_launches(trace);
    let mut taken = vec![false; launches.len()];
    let mut steps = Vec::new();
    for (start, end, batch) in annotated {
        let mut mine = Vec::new();
        for (slot, &launch) in launches.iter().enumerate() {
            let event = &trace.events[launch as usize];
            if !taken[slot] && start <= event.ts && event.end() <= end {
                taken[slot] = true;
                mine.push(launch);
            }
        }
        if mine.is_empty() {
            continue;
        }
        let mode = if mine.len() == 1 {
            CaptureMode::Full
        } else {
            CaptureMode::Piecewise
        };
        let capture = details
            .iter()
            .enumerate()
            .filter_map(|(index, d)| d.map(|d| (index, d)))
            .filter(|(_, (size, m))| *m == mode && *size >= batch)
            .min_by_key(|&(index, (size, _))| (size, index))
            .map(|(index, _)| index);
        steps.push(Step {
            batch,
            launches: mine,
            mode,
            capture,
        });
    }
    steps
}

/// The capture files a trace's graph launches need, as indices into
/// `files`: those the steps choose when every file's batch size and mode
/// are listed and every launch is in a step that has one; else all of
/// them (each is then read to learn its details, or to fit by kernels).
pub fn wanted(trace: &Trace, files: &[CaptureFile]) -> Vec<usize> {
    let details: Option<Vec<Option<Details>>> = files
        .iter()
        .map(|f| Some(Some((f.batch_size?, f.mode?))))
        .collect();
    let all = (0..files.len()).collect();
    let Some(details) = details else {
        return all;
    };
    let steps = steps(trace, &details);
    let in_steps: usize = steps.iter().map(|s| s.launches.len()).sum();
    if in_steps < graph_launches(trace).len() || steps.iter().any(|s| s.capture.is_none()) {
        return all;
    }
    let mut chosen: Vec<usize> = steps.iter().filter_map(|s| s.capture).collect();
    chosen.sort_unstable();
    chosen.dedup();
    chosen
}

/// A capture trace's batch size and mode as TraceLens classifies a capture
/// file with no `execution_details.json` entry: its `capture_<n>_<MODE>`
/// annotation, else (`windows` graph captures) FULL for at most one and
/// PIECEWISE for more, with the most common first dimension of its ops'
/// inputs (first seen wins a tie) as the batch size.
pub(super) fn classify(capture: &Trace, windows: usize) -> Option<Details> {
    let annotated = capture
        .events
        .iter()
        .filter(|e| e.kind == Kind::UserAnnotation)
        .find_map(|e| {
            let (size, mode) = capture.name(e).strip_prefix("capture_")?.split_once('_')?;
            Some((size.parse().ok()?, CaptureMode::parse(mode)?))
        });
    if annotated.is_some() {
        return annotated;
    }
    let mode = if windows <= 1 {
        CaptureMode::Full
    } else {
        CaptureMode::Piecewise
    };
    let mut counts: HashMap<u64, (usize, usize)> = HashMap::new();
    let mut seen = 0;
    for event in capture.events.iter().filter(|e| e.kind == Kind::CpuOp) {
        let Some(dims) = capture.op_args(event).and_then(|a| a.input_dims) else {
            continue;
        };
        let Ok(lists) = serde_json::from_str::<Vec<serde_json::Value>>(capture.strings.get(dims))
        else {
            continue;
        };
        for first in lists
            .iter()
            .filter_map(|list| list.as_array()?.first()?.as_u64())
        {
            let entry = counts.entry(first).or_insert((0, seen));
            entry.0 += 1;
            seen += 1;
        }
    }
    let batch = counts
        .into_iter()
        .max_by(|a, b| a.1.0.cmp(&b.1.0).then(b.1.1.cmp(&a.1.1)))
        .map(|(size, _)| size)?;
    Some((batch, mode))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::load_reader;
    use serde_json::{Value, json};

    fn load(events: Vec<Value>) -> Trace {
        let text = json!({ "traceEvents": events }).to_string();
        load_reader("fixture.json", text.as_bytes(), &mut || {}).expect("valid trace")
    }

    fn span(cat: &str, name: &str, ts: f64, dur: f64) -> Value {
        json!({"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur,
               "args": {}})
    }

    fn decode(batch: u64) -> String {
        format!(
            "execute_{batch}_context_0(sq0sk0sqsq0sqsk0)_generation_{batch}(sq{batch}sk99sqsq{batch}sqsk99)"
        )
    }

    #[test]
    fn step_batch_reads_both_annotation_forms() {
        assert_eq!(step_batch(&decode(12)), Some(12));
        assert_eq!(
            step_batch("execute_context_3(40)_generation_5(5)"),
            Some(45)
        );
        assert_eq!(
            step_batch("execute_context_3(4_0)_generation_5(5)"),
            Some(5)
        );
        assert_eq!(step_batch("step[DECODE bs=32]"), None);
        assert_eq!(step_batch("execute_context_3(40)"), None);
        assert_eq!(step_batch("ProfilerStep#3"), None);
    }

    /// Two steps: batch 12 with three graph launches, batch 30 with one.
    fn two_steps() -> Trace {
        load(vec![
            span("user_annotation", &decode(12), 0.0, 100.0),
            span("cuda_runtime", "hipGraphLaunch", 10.0, 5.0),
            span("cuda_runtime", "hipGraphLaunch", 40.0, 5.0),
            span("cuda_runtime", "hipGraphLaunch", 70.0, 5.0),
            span("user_annotation", &decode(30), 200.0, 100.0),
            span("cuda_runtime", "hipGraphLaunch", 210.0, 5.0),
        ])
    }

    #[test]
    fn each_step_takes_the_smallest_capture_of_its_mode_that_holds_it() {
        let trace = two_steps();
        let details = [
            Some((16, CaptureMode::Full)),
            Some((32, CaptureMode::Piecewise)),
            Some((16, CaptureMode::Piecewise)),
            Some((8, CaptureMode::Piecewise)),
            Some((64, CaptureMode::Full)),
            None,
        ];
        let found = steps(&trace, &details);
        let summary: Vec<(u64, usize, CaptureMode, Option<usize>)> = found
            .iter()
            .map(|s| (s.batch, s.launches.len(), s.mode, s.capture))
            .collect();
        assert_eq!(
            summary,
            [
                (12, 3, CaptureMode::Piecewise, Some(2)),
                (30, 1, CaptureMode::Full, Some(4)),
            ]
        );
        // No capture large enough: none chosen.
        let small = steps(&trace, &[Some((8, CaptureMode::Piecewise))]);
        assert!(small.iter().all(|s| s.capture.is_none()));
    }

    #[test]
    fn only_the_listed_files_the_steps_choose_are_wanted() {
        let trace = two_steps();
        let file = |batch, mode| CaptureFile {
            path: format!("bs{batch:?}.json").into(),
            batch_size: batch,
            mode,
        };
        let listed = [
            file(Some(8), Some(CaptureMode::Piecewise)),
            file(Some(16), Some(CaptureMode::Piecewise)),
            file(Some(32), Some(CaptureMode::Full)),
        ];
        assert_eq!(wanted(&trace, &listed), [1, 2]);
        // A step no listed capture holds, or a file with nothing listed:
        // every file.
        assert_eq!(wanted(&trace, &listed[..2]), [0, 1]);
        let mut unlisted = listed.clone();
        unlisted[0].mode = None;
        assert_eq!(wanted(&trace, &unlisted), [0, 1, 2]);
        // A launch outside every step needs every file too.
        let mut events = vec![span("cuda_runtime", "hipGraphLaunch", 500.0, 5.0)];
        events.push(span("user_annotation", &decode(12), 0.0, 100.0));
        events.push(span("cuda_runtime", "hipGraphLaunch", 10.0, 5.0));
        assert_eq!(wanted(&load(events), &listed), [0, 1, 2]);
    }

    #[test]
    fn captures_are_classified_by_annotation_else_count_and_first_dimension() {
        let op = |dims: Value| {
            json!({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1,
                   "ts": 1.0, "dur": 1.0, "args": {"Input Dims": dims}})
        };
        let annotated = load(vec![span(
            "user_annotation",
            "capture_24_PIECEWISE",
            0.0,
            9.0,
        )]);
        assert_eq!(classify(&annotated, 1), Some((24, CaptureMode::Piecewise)));
        // 16 is the first dimension of four inputs, 512 of three.
        let shapes = load(vec![
            op(json!([[512, 4], [16, 512]])),
            op(json!([[16, 512], [512, 64]])),
            op(json!([[16, 64], [[16, 2]], []])),
            op(json!([[512, 2], [16, 4]])),
        ]);
        assert_eq!(classify(&shapes, 1), Some((16, CaptureMode::Full)));
        assert_eq!(classify(&shapes, 3), Some((16, CaptureMode::Piecewise)));
        assert_eq!(classify(&load(vec![]), 2), None);
    }
}
