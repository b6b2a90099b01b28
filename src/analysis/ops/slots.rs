//! Grouping rows by a key made of strings without building the strings
//! for every member: a cheap key of interned symbols finds the group, and
//! the full key is built once per distinct cheap key.

use std::collections::HashMap;
use std::hash::Hash;

use crate::trace::FxHashMap;

/// Group slots found by a cheap key (symbols) first and by the full key
/// (strings) only the first time a cheap key is seen, so invocations whose
/// different symbols print the same strings still share a group while the
/// strings are built once per distinct cheap key, not once per invocation.
pub struct Slots<C, F> {
    cheap: FxHashMap<C, usize>,
    full: HashMap<F, usize>,
}

impl<C, F> Default for Slots<C, F> {
    fn default() -> Self {
        Slots {
            cheap: FxHashMap::default(),
            full: HashMap::new(),
        }
    }
}

impl<C: Hash + Eq, F: Hash + Eq + Clone> Slots<C, F> {
    /// The slot of `cheap`, with the full key when it opens a new slot
    /// (numbered `next`); `full` is called only for an unseen cheap key.
    pub fn slot(&mut self, cheap: C, next: usize, full: impl FnOnce() -> F) -> (usize, Option<F>) {
        if let Some(&slot) = self.cheap.get(&cheap) {
            return (slot, None);
        }
        let full = full();
        let (slot, opened) = match self.full.get(&full) {
            Some(&slot) => (slot, None),
            None => {
                self.full.insert(full.clone(), next);
                (next, Some(full))
            }
        };
        self.cheap.insert(cheap, slot);
        (slot, opened)
    }
}
