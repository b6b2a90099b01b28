//! What a snapshot may hold: the bounds the writer keeps and the reader
//! checks.
//!
//! A baseline snapshot is an input like any other: a file in a repository
//! or a CI artifact that anyone with write access can change. The work of
//! `check` grows with what a snapshot holds (every sample of every row is
//! resampled thousands of times), so the reader refuses a snapshot that no
//! tracegate would write: more samples per row than [`MAX_SAMPLES`], more
//! rows, steps, kernels, devices or string bytes than the limits below,
//! two rows with one op key, and times or statistics that are negative,
//! not finite or beyond [`MAX_TIME_US`] (`check.rs`). Lists are counted as
//! they are read, so a list of millions stops at the first entry too many.
//! The writer keeps the same bounds (`from_profile.rs`, with the helpers
//! here), so what it writes it can read.

use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{Deserializer, SeqAccess, Visitor};

use crate::analysis::ops::stats::Stats;
use crate::analysis::timeline::Breakdown;

/// At most this many per-invocation samples are kept per op row.
pub const MAX_SAMPLES: usize = 64;

/// The most op rows in a snapshot (the rows with the least kernel time go
/// first when a profile has more).
pub const MAX_OPS: usize = 100_000;

/// The most profiler steps, and step sums per op row.
pub const MAX_STEPS: usize = 10_000;

/// The most kernel names in an op row's kernel sequence.
pub const MAX_KERNELS: usize = 4096;

/// The most ranks in a rank set's snapshot.
pub const MAX_RANKS: usize = 1 << 16;

/// The most communication kernels of one rank.
pub const MAX_COMM_KERNELS: usize = 1 << 20;

/// The most GPUs in the fingerprint's lists.
pub const MAX_DEVICES: usize = 4096;

/// The longest string, bytes (names, argument tuples, module paths).
pub const MAX_STRING_BYTES: usize = 1 << 20;

/// The largest time or time statistic, µs (about 31.7 years).
pub const MAX_TIME_US: f64 = 1e15;

/// The largest FLOP or byte count of an op's perf model.
pub const MAX_MODEL_COUNT: f64 = 1e30;

/// The most bytes of JSON a snapshot may decompress to (256 MiB).
pub const MAX_JSON_BYTES: usize = 256 << 20;

/// A time as stored: negative values and NaN (which only a broken trace
/// gives) become 0, values above [`MAX_TIME_US`] (infinity too) become it.
pub(super) fn stored_time(value: f64) -> f64 {
    if value > 0.0 {
        value.min(MAX_TIME_US)
    } else {
        0.0
    }
}

/// A FLOP or byte count as stored, like [`stored_time`] up to
/// [`MAX_MODEL_COUNT`].
pub(super) fn stored_count(value: f64) -> f64 {
    if value > 0.0 {
        value.min(MAX_MODEL_COUNT)
    } else {
        0.0
    }
}

/// A string as stored: at most [`MAX_STRING_BYTES`], cut at a character
/// boundary.
pub(super) fn stored_string(text: &str) -> String {
    let mut end = text.len().min(MAX_STRING_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_string()
}

/// Statistics as stored: every time through [`stored_time`].
pub(super) fn stored_stats(stats: &Stats) -> Stats {
    Stats {
        count: stats.count,
        sum: stored_time(stats.sum),
        mean: stored_time(stats.mean),
        median: stored_time(stats.median),
        std: stats.std.map(stored_time),
        min: stored_time(stats.min),
        max: stored_time(stats.max),
    }
}

/// A timeline breakdown as stored: every time through [`stored_time`].
pub(super) fn stored_breakdown(breakdown: &Breakdown) -> Breakdown {
    Breakdown {
        computation_time: stored_time(breakdown.computation_time),
        exposed_comm_time: stored_time(breakdown.exposed_comm_time),
        exposed_memcpy_time: stored_time(breakdown.exposed_memcpy_time),
        busy_time: stored_time(breakdown.busy_time),
        idle_time: stored_time(breakdown.idle_time),
        total_time: stored_time(breakdown.total_time),
        total_comm_time: stored_time(breakdown.total_comm_time),
        total_memcpy_time: stored_time(breakdown.total_memcpy_time),
    }
}

/// The message of a list longer than `limit`.
pub(super) fn too_many(length: impl fmt::Display, limit: usize, what: &str) -> String {
    format!("{length} {what}; a snapshot holds at most {limit} (no tracegate writes more)")
}

/// A list of at most `limit` entries, refused at the first entry too many.
fn bounded<'de, D, T>(deserializer: D, limit: usize, what: &'static str) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct Bounded<T> {
        limit: usize,
        what: &'static str,
        entries: PhantomData<T>,
    }
    impl<'de, T: Deserialize<'de>> Visitor<'de> for Bounded<T> {
        type Value = Vec<T>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "a list of at most {} {}", self.limit, self.what)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
            let mut entries = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(self.limit));
            while let Some(entry) = seq.next_element()? {
                if entries.len() == self.limit {
                    return Err(serde::de::Error::custom(too_many(
                        format_args!("more than {}", self.limit),
                        self.limit,
                        self.what,
                    )));
                }
                entries.push(entry);
            }
            Ok(entries)
        }
    }
    deserializer.deserialize_seq(Bounded {
        limit,
        what,
        entries: PhantomData,
    })
}

/// `ops`: at most [`MAX_OPS`] rows.
pub(super) fn ops<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Vec<T>, D::Error> {
    bounded(d, MAX_OPS, "op rows")
}

/// `steps` and `step_us`: at most [`MAX_STEPS`].
pub(super) fn steps<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Vec<T>, D::Error> {
    bounded(d, MAX_STEPS, "steps")
}

/// `samples_us`: at most [`MAX_SAMPLES`].
pub(super) fn samples<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Vec<T>, D::Error> {
    bounded(d, MAX_SAMPLES, "samples")
}

/// `kernel_sequence`: at most [`MAX_KERNELS`].
pub(super) fn kernels<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Vec<T>, D::Error> {
    bounded(d, MAX_KERNELS, "kernel names")
}

/// The fingerprint's device lists: at most [`MAX_DEVICES`].
pub(super) fn devices<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Vec<T>, D::Error> {
    bounded(d, MAX_DEVICES, "devices")
}

/// `ranks`: at most [`MAX_RANKS`].
pub(super) fn ranks<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Vec<T>, D::Error> {
    bounded(d, MAX_RANKS, "ranks")
}

/// A rank's `kernels`: at most [`MAX_COMM_KERNELS`].
pub(super) fn comm_kernels<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Vec<T>, D::Error> {
    bounded(d, MAX_COMM_KERNELS, "communication kernels")
}
