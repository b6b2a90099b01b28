//! Work done once per distinct argument set rather than once per
//! invocation: perf models and Python tuples of argument lists. Recorded
//! argument lists can be megabytes long (a fuzzed `Input Dims` of ten
//! million sizes), so neither is recomputed or copied per call.

use std::rc::Rc;

use crate::analysis::ops::args::{arg_syms, python_repr};
use crate::analysis::perf_model::{self, NoModel, OpShape, PerfModel};
use crate::trace::{FxHashMap, Sym, Trace};

/// An op's name and recorded arguments, and whether its backward is wanted:
/// what a model depends on.
pub(super) type ModelKey = (Sym, [Option<Sym>; 4], bool);

/// A model shared by every invocation with the same [`ModelKey`].
pub(super) type SharedModel = Rc<Result<PerfModel, NoModel>>;

/// Models and argument tuples, computed once per distinct argument set.
#[derive(Default)]
pub(super) struct Memo {
    reprs: FxHashMap<Sym, Rc<str>>,
    models: FxHashMap<ModelKey, SharedModel>,
}

/// The model key of an op event (or of the backward of a forward op event).
pub(super) fn model_key(trace: &Trace, op: u32, backward: bool) -> ModelKey {
    (
        trace.events[op as usize].name,
        arg_syms(trace, op),
        backward,
    )
}

impl Memo {
    /// The model of an op event (or of the backward of a forward op event).
    pub(super) fn model(&mut self, trace: &Trace, op: u32, backward: bool) -> SharedModel {
        let key = model_key(trace, op, backward);
        Rc::clone(self.models.entry(key).or_insert_with(|| {
            let shape = OpShape::of_event(trace, &trace.events[op as usize]);
            Rc::new(if backward {
                perf_model::model_backward(&shape)
            } else {
                perf_model::model(&shape)
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
