//! Work done once per distinct argument set rather than once per
//! invocation: perf models and Python tuples of argument lists. Recorded
//! argument lists can be megabytes long (a fuzzed `Input Dims` of ten
//! million sizes), so neither is recomputed or copied per call.
//!
//! Inference attention run eagerly (vLLM's attention between piecewise
//! graphs, aiter's `mha_batch_prefill` in SGLang) is modelled with the step
//! annotation around it, as TraceLens's inference report annotates those
//! ops: the annotation is then part of what the model depends on.

use std::rc::Rc;

use crate::analysis::ops::args::{arg_syms, python_repr};
use crate::analysis::perf_model::{self, NoModel, OpContext, OpShape, PerfModel};
use crate::trace::{FxHashMap, Kind, Sym, Trace};

/// An op's name and recorded arguments, whether its backward is wanted, and
/// the step annotation it ran under when its model reads one: what a model
/// depends on.
pub(super) type ModelKey = (Sym, [Option<Sym>; 4], bool, Option<Sym>);

/// A model shared by every invocation with the same [`ModelKey`].
pub(super) type SharedModel = Rc<Result<PerfModel, NoModel>>;

/// Models and argument tuples, computed once per distinct argument set.
#[derive(Default)]
pub(super) struct Memo {
    reprs: FxHashMap<Sym, Rc<str>>,
    models: FxHashMap<ModelKey, SharedModel>,
    /// Step annotations with sequence statistics, (start, end, name) by start.
    steps: Vec<(f64, f64, Sym)>,
}

impl Memo {
    /// A memo for `trace`, its step annotations found.
    pub(super) fn new(trace: &Trace) -> Memo {
        let mut steps: Vec<(f64, f64, Sym)> = trace
            .events
            .iter()
            .filter(|e| e.kind == Kind::UserAnnotation)
            .filter(|e| perf_model::chunk_stats(trace.name(e)).is_some())
            .map(|e| (e.ts, e.end(), e.name))
            .collect();
        steps.sort_by(|a, b| a.0.total_cmp(&b.0));
        Memo {
            steps,
            ..Memo::default()
        }
    }

    /// The step annotation an inference attention op ran under (the first
    /// by start whose range holds the op's start); `None` for other ops.
    fn annotation(&self, trace: &Trace, op: u32) -> Option<Sym> {
        let event = &trace.events[op as usize];
        if !perf_model::inference_attention::handles(trace.name(event)) {
            return None;
        }
        // Steps follow one another: the last to start before the op holds
        // it, unless steps nest or overlap (then the earliest that holds it).
        let before = &self.steps[..self.steps.partition_point(|s| s.0 <= event.ts)];
        let holds = |s: &&(f64, f64, Sym)| event.ts <= s.1;
        let last = before.last().filter(holds);
        let nested = before.len() > 1 && before[before.len() - 2].1 > before[before.len() - 1].0;
        match (last, nested) {
            (Some(step), false) => Some(step.2),
            _ => before.iter().find(holds).map(|s| s.2),
        }
    }

    /// The model key of an op event (or of the backward of a forward op event).
    pub(super) fn model_key(&self, trace: &Trace, op: u32, backward: bool) -> ModelKey {
        (
            trace.events[op as usize].name,
            arg_syms(trace, op),
            backward,
            self.annotation(trace, op),
        )
    }

    /// The model of an op event (or of the backward of a forward op event).
    pub(super) fn model(&mut self, trace: &Trace, op: u32, backward: bool) -> SharedModel {
        let key = self.model_key(trace, op, backward);
        Rc::clone(self.models.entry(key).or_insert_with(|| {
            let shape = OpShape::of_event(trace, &trace.events[op as usize]);
            let context = OpContext {
                annotation: key.3.map(|s| trace.strings.get(s)),
                ..OpContext::default()
            };
            Rc::new(if backward {
                perf_model::model_backward(&shape)
            } else {
                perf_model::model_in(&shape, &context)
            })
        }))
    }

    /// An argument list as a Python tuple.
    pub(super) fn repr(&mut self, trace: &Trace, sym: Option<Sym>) -> Option<Rc<str>> {
        let sym = sym?;
        Some(Rc::clone(self.reprs.entry(sym).or_insert_with(|| {
            python_repr(trace.strings.get(sym)).into()
        })))
    }
}
