//! Interval algebra and the GPU timeline breakdown.
//!
//! The breakdown follows TraceLens's definitions (docs/ARCHITECTURE.md,
//! "Timeline"): GPU work is split into three buckets (computation, comm,
//! memcpy), each bucket is merged into a union of intervals, and the
//! "exposed" figures subtract the buckets that hide them. All arithmetic is on
//! `f64` microseconds, as TraceLens computes it, so figures agree to the last
//! digits rather than only to a tolerance.

use serde::{Deserialize, Serialize};

use crate::analysis::comm;

/// A half-open time interval `[start, end)` in microseconds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Interval {
    /// Start, µs.
    pub start: f64,
    /// End, µs.
    pub end: f64,
}

impl Interval {
    /// Length in µs.
    pub fn len(&self) -> f64 {
        self.end - self.start
    }

    /// Whether the interval is empty or inverted.
    pub fn is_empty(&self) -> bool {
        self.end <= self.start
    }
}

/// A union of disjoint intervals, sorted by start.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct IntervalSet {
    intervals: Vec<Interval>,
}

impl IntervalSet {
    /// Merges any intervals (in any order) into a disjoint sorted union.
    /// Touching intervals merge; empty or inverted ones are dropped.
    pub fn from_intervals(mut intervals: Vec<Interval>) -> IntervalSet {
        intervals.retain(|i| !i.is_empty());
        intervals.sort_by(|a, b| a.start.total_cmp(&b.start).then(a.end.total_cmp(&b.end)));
        let mut merged: Vec<Interval> = Vec::with_capacity(intervals.len());
        for interval in intervals {
            match merged.last_mut() {
                Some(last) if interval.start <= last.end => last.end = last.end.max(interval.end),
                _ => merged.push(interval),
            }
        }
        IntervalSet { intervals: merged }
    }

    /// The disjoint intervals, sorted.
    pub fn intervals(&self) -> &[Interval] {
        &self.intervals
    }

    /// Total covered length in µs.
    pub fn len(&self) -> f64 {
        // fold from +0.0: an empty f64 `sum()` is -0.0, which prints as "-0.0".
        self.intervals
            .iter()
            .map(Interval::len)
            .fold(0.0, |total, len| total + len)
    }

    /// Whether nothing is covered.
    pub fn is_empty(&self) -> bool {
        self.intervals.is_empty()
    }

    /// The union with another set.
    pub fn union(&self, other: &IntervalSet) -> IntervalSet {
        let mut all = self.intervals.clone();
        all.extend_from_slice(&other.intervals);
        IntervalSet::from_intervals(all)
    }

    /// What of `self` is not covered by `other`.
    pub fn subtract(&self, other: &IntervalSet) -> IntervalSet {
        let mut result = Vec::new();
        let cut = &other.intervals;
        let mut j = 0;
        for interval in &self.intervals {
            let mut start = interval.start;
            let end = interval.end;
            while j < cut.len() && cut[j].end <= start {
                j += 1;
            }
            let mut k = j;
            while k < cut.len() && cut[k].start < end {
                if cut[k].start > start {
                    result.push(Interval {
                        start,
                        end: cut[k].start,
                    });
                }
                start = start.max(cut[k].end);
                if start >= end {
                    break;
                }
                k += 1;
            }
            if start < end {
                result.push(Interval { start, end });
            }
        }
        IntervalSet { intervals: result }
    }

    /// What `self` and `other` both cover.
    pub fn intersect(&self, other: &IntervalSet) -> IntervalSet {
        self.subtract(&self.subtract(other))
    }
}

/// Which timeline bucket a piece of GPU work falls in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Bucket {
    /// Kernels and memsets that are neither comm nor copies.
    Computation,
    /// Collective-communication kernels (NCCL, RCCL, custom all-reduce).
    Comm,
    /// Copies, including ROCm's copy kernels.
    Memcpy,
}

/// Classifies GPU work: copies by category or ROCm copy-kernel name, comm by
/// kernel name ([`comm::CommKernels`]).
pub fn bucket_of(is_memcpy_event: bool, name: &str, comm: &comm::CommKernels) -> Bucket {
    if is_memcpy_event || is_copy_kernel(name) {
        return Bucket::Memcpy;
    }
    if comm.is_comm(name) {
        return Bucket::Comm;
    }
    Bucket::Computation
}

/// Whether a kernel is a runtime's buffer copy recorded as a kernel (ROCm's
/// blit kernels `__amd_rocclr_copyBuffer*`, rocprofiler's `MEMORY_COPY_*`):
/// a copy, not computation.
pub fn is_copy_kernel(name: &str) -> bool {
    name.starts_with("__amd_rocclr_copyBuffer") || name.starts_with("MEMORY_COPY_")
}

/// The GPU timeline breakdown, all in µs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Breakdown {
    /// Length of the computation union.
    pub computation_time: f64,
    /// Comm not hidden under computation.
    pub exposed_comm_time: f64,
    /// Copies not hidden under computation or comm.
    pub exposed_memcpy_time: f64,
    /// Length of the union of all GPU work.
    pub busy_time: f64,
    /// `total_time − busy_time`.
    pub idle_time: f64,
    /// Last end − first start over all GPU work.
    pub total_time: f64,
    /// Length of the comm union.
    pub total_comm_time: f64,
    /// Length of the copy union.
    pub total_memcpy_time: f64,
}

impl Breakdown {
    /// Computes the breakdown from GPU work intervals tagged with their bucket.
    pub fn compute(work: impl IntoIterator<Item = (Bucket, Interval)>) -> Breakdown {
        let (mut comp, mut comm, mut memcpy) = (Vec::new(), Vec::new(), Vec::new());
        let mut first = f64::INFINITY;
        let mut last = f64::NEG_INFINITY;
        for (bucket, interval) in work {
            first = first.min(interval.start);
            last = last.max(interval.end);
            match bucket {
                Bucket::Computation => comp.push(interval),
                Bucket::Comm => comm.push(interval),
                Bucket::Memcpy => memcpy.push(interval),
            }
        }
        if first > last {
            return Breakdown::default();
        }
        let comp = IntervalSet::from_intervals(comp);
        let comm = IntervalSet::from_intervals(comm);
        let memcpy = IntervalSet::from_intervals(memcpy);
        let all = comp.union(&comm).union(&memcpy);
        let total_time = last - first;
        let busy_time = all.len();
        Breakdown {
            computation_time: comp.len(),
            exposed_comm_time: comm.subtract(&comp).len(),
            exposed_memcpy_time: memcpy.subtract(&comp).subtract(&comm).len(),
            busy_time,
            idle_time: total_time - busy_time,
            total_time,
            total_comm_time: comm.len(),
            total_memcpy_time: memcpy.len(),
        }
    }

    /// The rows of TraceLens's `gpu_timeline.csv`, in its order.
    pub fn rows(&self) -> [(&'static str, f64); 8] {
        [
            ("computation_time", self.computation_time),
            ("exposed_comm_time", self.exposed_comm_time),
            ("exposed_memcpy_time", self.exposed_memcpy_time),
            ("busy_time", self.busy_time),
            ("idle_time", self.idle_time),
            ("total_time", self.total_time),
            ("total_comm_time", self.total_comm_time),
            ("total_memcpy_time", self.total_memcpy_time),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn set(pairs: &[(f64, f64)]) -> IntervalSet {
        IntervalSet::from_intervals(
            pairs
                .iter()
                .map(|&(start, end)| Interval { start, end })
                .collect(),
        )
    }

    #[test]
    fn union_merges_overlapping_and_touching() {
        let merged = set(&[(5.0, 7.0), (0.0, 2.0), (1.0, 3.0), (3.0, 4.0), (9.0, 9.0)]);
        assert_eq!(merged, set(&[(0.0, 4.0), (5.0, 7.0)]));
        assert_eq!(merged.len(), 6.0);
        assert!(!merged.is_empty());
    }

    /// Empty and inverted intervals cover nothing: a set of only those is
    /// empty, as is what a set leaves of itself.
    #[test]
    fn a_set_of_empty_intervals_is_empty() {
        let nothing = set(&[(3.0, 3.0), (5.0, 4.0)]);
        assert!(nothing.is_empty());
        assert_eq!(nothing.len(), 0.0);
        let some = set(&[(0.0, 4.0)]);
        assert!(some.subtract(&some).is_empty());
    }

    #[test]
    fn subtract_cuts_holes_and_edges() {
        let a = set(&[(0.0, 10.0), (20.0, 30.0)]);
        let b = set(&[(2.0, 3.0), (8.0, 22.0), (29.0, 40.0)]);
        assert_eq!(a.subtract(&b), set(&[(0.0, 2.0), (3.0, 8.0), (22.0, 29.0)]));
        assert_eq!(
            a.intersect(&b),
            set(&[(2.0, 3.0), (8.0, 10.0), (20.0, 22.0), (29.0, 30.0)])
        );
        // A cut ending where the interval ends leaves no empty remainder.
        let cut_to_the_end = set(&[(0.0, 10.0)]).subtract(&set(&[(5.0, 10.0)]));
        assert_eq!(cut_to_the_end.intervals(), set(&[(0.0, 5.0)]).intervals());
    }

    #[test]
    fn buckets_by_name() {
        assert_eq!(
            bucket_of(
                false,
                "ncclDevKernel_AllReduce_Sum",
                &comm::CommKernels::default()
            ),
            Bucket::Comm
        );
        assert_eq!(
            bucket_of(false, "void RCCL_kernel", &comm::CommKernels::default()),
            Bucket::Comm
        );
        assert_eq!(
            bucket_of(
                false,
                "cross_device_reduce_1stage",
                &comm::CommKernels::default()
            ),
            Bucket::Comm
        );
        assert_eq!(
            bucket_of(
                false,
                "__amd_rocclr_copyBuffer.kd",
                &comm::CommKernels::default()
            ),
            Bucket::Memcpy
        );
        assert_eq!(
            bucket_of(true, "Memcpy HtoD", &comm::CommKernels::default()),
            Bucket::Memcpy
        );
        assert_eq!(
            bucket_of(false, "gemm", &comm::CommKernels::default()),
            Bucket::Computation
        );
    }

    #[test]
    fn breakdown_of_a_small_timeline() {
        let b = Breakdown::compute([
            (
                Bucket::Computation,
                Interval {
                    start: 0.0,
                    end: 10.0,
                },
            ),
            (
                Bucket::Comm,
                Interval {
                    start: 5.0,
                    end: 15.0,
                },
            ),
            (
                Bucket::Memcpy,
                Interval {
                    start: 12.0,
                    end: 20.0,
                },
            ),
            (
                Bucket::Computation,
                Interval {
                    start: 30.0,
                    end: 40.0,
                },
            ),
        ]);
        assert_eq!(b.computation_time, 20.0);
        assert_eq!(b.exposed_comm_time, 5.0);
        assert_eq!(b.exposed_memcpy_time, 5.0);
        assert_eq!(b.busy_time, 30.0);
        assert_eq!(b.total_time, 40.0);
        assert_eq!(b.idle_time, 10.0);
        assert_eq!(b.total_comm_time, 10.0);
        assert_eq!(b.total_memcpy_time, 8.0);
    }

    fn arb_work() -> impl Strategy<Value = Vec<(Bucket, Interval)>> {
        let bucket = prop_oneof![
            Just(Bucket::Computation),
            Just(Bucket::Comm),
            Just(Bucket::Memcpy)
        ];
        prop::collection::vec((bucket, 0u32..10_000, 0u32..500), 1..60).prop_map(|items| {
            items
                .into_iter()
                .map(|(bucket, start, len)| {
                    let start = f64::from(start) / 8.0;
                    (
                        bucket,
                        Interval {
                            start,
                            end: start + f64::from(len) / 8.0,
                        },
                    )
                })
                .collect()
        })
    }

    proptest! {
        #[test]
        fn timeline_invariant_holds(work in arb_work()) {
            let b = Breakdown::compute(work);
            let sum = b.computation_time + b.exposed_comm_time + b.exposed_memcpy_time + b.idle_time;
            prop_assert!((sum - b.total_time).abs() < 1e-9, "{b:?}");
            prop_assert!(b.busy_time <= b.total_time + 1e-9);
            prop_assert!(b.exposed_comm_time <= b.total_comm_time + 1e-9);
            prop_assert!(b.exposed_memcpy_time <= b.total_memcpy_time + 1e-9);
        }

        #[test]
        fn union_and_subtract_agree_on_lengths(a in arb_work(), b in arb_work()) {
            let a = IntervalSet::from_intervals(a.into_iter().map(|(_, i)| i).collect());
            let b = IntervalSet::from_intervals(b.into_iter().map(|(_, i)| i).collect());
            let union = a.union(&b).len();
            let parts = a.subtract(&b).len() + b.len();
            prop_assert!((union - parts).abs() < 1e-9);
            prop_assert!((a.intersect(&b).len() + a.subtract(&b).len() - a.len()).abs() < 1e-9);
            // The disjoint intervals are the set: they cover its length,
            // none of them empty, each apart from the next.
            let merged = a.union(&b);
            let covered = merged.intervals().iter().map(Interval::len).fold(0.0, |t, l| t + l);
            prop_assert!((covered - merged.len()).abs() < 1e-9);
            prop_assert_eq!(merged.intervals().is_empty(), merged.is_empty());
            prop_assert!(merged.intervals().iter().all(|i| !i.is_empty()));
            prop_assert!(a.subtract(&b).intervals().iter().all(|i| !i.is_empty()));
            for window in merged.intervals().windows(2) {
                prop_assert!(window[0].end < window[1].start);
            }
        }
    }
}
