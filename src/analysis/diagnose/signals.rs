//! The figures of an analysis the diagnosis reads besides the modelled ops.
//! The analysis fills them in, so the diagnosis depends on these few numbers
//! and not on the whole profile (which holds the diagnosis).

use crate::analysis::timeline::Breakdown;

/// What the bottleneck classification and the launch-overhead pattern read.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Signals {
    /// The GPU timeline over GPU work linked to a launch, µs.
    pub timeline: Breakdown,
    /// GPU idle time spent waiting for the host to launch (host-wait), µs.
    pub host_wait_us: f64,
    /// Host time blocked in synchronisation, µs.
    pub sync_time_us: f64,
    /// Host span of the trace (first to last host event), µs.
    pub host_span_us: f64,
    /// Kernels in the trace's kernel table.
    pub kernels: u64,
    /// Kernels shorter than `short_kernel_us`, linked or not.
    pub short_kernels: u64,
    /// The threshold below which a kernel is short, µs.
    pub short_kernel_us: f64,
}
