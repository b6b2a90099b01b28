//! Lists of event indices grouped by an event index (an op's children, the
//! GPU work below it), stored as two flat sorted arrays rather than a hash
//! map of vectors: on a 1 GB trace the map of one small vector per op cost
//! tens of MB at the analysis's peak; the arrays cost 8 bytes per entry.

/// The most op levels above a piece of GPU work that count it in their
/// subtree. Real programs nest a few dozen ops; a trace that nests
/// thousands (12,000 nested ops over 12,000 kernels made 144 million pairs
/// and aborted on a 2 GiB allocation) keeps memory and time linear in its
/// kernels, and an op more than 256 op levels above a kernel does not
/// count that kernel in its subtree.
pub(super) const MAX_SUBTREE_DEPTH: usize = 256;

/// `u32` values grouped by `u32` keys, each group in the order it was given.
#[derive(Debug, Default)]
pub(super) struct Groups {
    /// The key of each value, ascending.
    keys: Vec<u32>,
    /// The values, grouped by key.
    values: Vec<u32>,
}

impl Groups {
    /// Groups (key, value) pairs by key; within a key, values keep the
    /// order of `pairs` (a stable sort).
    pub(super) fn new(mut pairs: Vec<(u32, u32)>) -> Groups {
        pairs.sort_by_key(|&(key, _)| key);
        let keys = pairs.iter().map(|&(key, _)| key).collect();
        let values = pairs.iter().map(|&(_, value)| value).collect();
        Groups { keys, values }
    }

    /// The values of `key`, in order; empty when it has none.
    pub(super) fn get(&self, key: u32) -> &[u32] {
        let start = self.keys.partition_point(|&k| k < key);
        let end = start + self.keys[start..].partition_point(|&k| k == key);
        &self.values[start..end]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_keep_the_order_values_were_given_in() {
        let groups = Groups::new(vec![(5, 1), (2, 9), (5, 0), (2, 3), (7, 4)]);
        assert_eq!(groups.get(2), &[9, 3]);
        assert_eq!(groups.get(5), &[1, 0]);
        assert_eq!(groups.get(7), &[4]);
        assert!(groups.get(3).is_empty());
        assert!(groups.get(0).is_empty());
        assert!(groups.get(8).is_empty());
    }
}
