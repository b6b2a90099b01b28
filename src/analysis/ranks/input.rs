//! One rank's side of a rank set, read from its loaded trace: which rank
//! it is, its communication kernels with what they recorded about their
//! collective, and its context: the GPU it ran on and how much of its
//! communication computation hid.

use std::sync::LazyLock;

use regex::Regex;

use super::collective::{Collective, message_bytes};
use super::{CommKernel, CommTime, RankContext, RankInput};
use crate::analysis::comm::CommKernels;
use crate::analysis::hardware::{Catalog, Hardware};
use crate::analysis::timeline::{Breakdown, Interval, bucket_of};
use crate::trace::{Kind, Trace};

/// `rank3`, `rank_3`, `rank-3`, `RANK3` in a file name.
static RANK_IN_NAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)rank[_-]?(\d+)").expect("valid regex"));

/// The rank a trace belongs to: `distributedInfo.rank`, else the number
/// after `rank` in its file name; `None` when neither says.
pub fn rank_of(trace: &Trace, file_name: &str) -> Option<u32> {
    let recorded = trace
        .metadata
        .get("distributedInfo")
        .and_then(|info| info.get("rank"))
        .and_then(serde_json::Value::as_u64)
        .and_then(|rank| u32::try_from(rank).ok());
    recorded.or_else(|| rank_in_name(file_name))
}

/// The number after the last `rank` in a file name (`trace_rank3.json`).
pub fn rank_in_name(file_name: &str) -> Option<u32> {
    RANK_IN_NAME
        .captures_iter(file_name)
        .last()
        .and_then(|captures| captures[1].parse().ok())
}

/// The rank's input to [`super::analyse`]: every kernel `comm` calls
/// communication, or that recorded a collective, in start order.
pub fn rank_input(trace: &Trace, rank: u32, comm: &CommKernels) -> RankInput {
    let mut kernels: Vec<CommKernel> = trace
        .events
        .iter()
        .filter(|event| event.kind == Kind::Kernel)
        .filter_map(|event| {
            let name = trace.name(event);
            let args = trace.comm_args(event);
            if args.is_none() && !comm.is_comm(name) {
                return None;
            }
            let text = |sym| trace.strings.get(sym).to_string();
            let collective = match args {
                Some(args) => Collective::from_recorded(trace.strings.get(args.collective)),
                None => Collective::from_kernel(name),
            };
            let dtype = args.and_then(|a| a.dtype).map(text);
            Some(CommKernel {
                start_us: event.ts,
                duration_us: event.dur,
                stream: trace.gpu_args(event).and_then(|gpu| gpu.stream),
                kernel: name.to_string(),
                collective,
                process_group: args.and_then(|a| a.process_group).map(text),
                seq: args.and_then(|a| a.seq),
                bytes: args
                    .and_then(|a| message_bytes(a.in_nelems, a.out_nelems, dtype.as_deref()?)),
                group_size: args
                    .and_then(|a| a.group_size)
                    .and_then(|n| u32::try_from(n).ok()),
                dtype,
            })
        })
        .collect();
    kernels.sort_by(|a, b| a.start_us.total_cmp(&b.start_us));
    RankInput {
        rank,
        source: trace.source.clone(),
        kernels,
    }
}

/// The rank's context for [`super::analyse_with`]: its GPU (`given`, else
/// detected from `deviceProperties` in `catalog`) and its [`comm_time`].
pub fn rank_context(
    trace: &Trace,
    rank: u32,
    comm: &CommKernels,
    catalog: &Catalog,
    given: Option<&Hardware>,
) -> RankContext {
    let hardware = given
        .cloned()
        .or_else(|| catalog.detect(&trace.metadata.devices).hardware().cloned());
    RankContext {
        rank,
        hardware,
        comm_time: comm_time(trace, comm),
    }
}

/// A rank's communication time split into the part under computation and
/// the exposed part, over all of its GPU work (kernels, copies, memsets;
/// linked to a launch or not, unlike the profile's timeline, which keeps
/// to the kernels its ops launched), communication told by `comm` as in
/// the timeline. `report DIR` and a rank's snapshot both read it here.
pub fn comm_time(trace: &Trace, comm: &CommKernels) -> CommTime {
    let work = trace
        .events
        .iter()
        .filter(|event| matches!(event.kind, Kind::Kernel | Kind::Memcpy | Kind::Memset))
        .map(|event| {
            let bucket = bucket_of(event.kind == Kind::Memcpy, trace.name(event), comm);
            let interval = Interval {
                start: event.ts,
                end: event.end(),
            };
            (bucket, interval)
        });
    CommTime::of(&Breakdown::compute(work))
}
