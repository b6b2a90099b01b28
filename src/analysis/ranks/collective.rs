//! What kind of collective a communication kernel runs, how many bytes its
//! message holds, and the factor that turns its algorithm bandwidth into bus
//! bandwidth. The kind comes from Kineto's `Collective name` when recorded
//! (`allreduce`, `_allgather_base`, `reduce_scatter_tensor_coalesced`), else
//! from the kernel's name (`ncclDevKernel_AllReduce_Sum_bf16_RING_LL`).

use serde::{Deserialize, Serialize};

use crate::analysis::comm::words;

/// A collective, as NCCL's performance notes group them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Collective {
    /// Every rank ends with the reduction of all ranks' buffers.
    AllReduce,
    /// Every rank ends with all ranks' buffers, concatenated.
    AllGather,
    /// Every rank ends with its slice of the reduction.
    ReduceScatter,
    /// Every rank sends a slice to every other rank.
    AllToAll,
    /// One rank's buffer to all.
    Broadcast,
    /// All ranks' buffers reduced onto one.
    Reduce,
    /// Point-to-point send and receive.
    SendRecv,
    /// Anything else (`barrier`, `gather`, a kernel named by a user pattern).
    Other,
}

impl Collective {
    /// The kind named by Kineto's `Collective name`.
    pub fn from_recorded(name: &str) -> Collective {
        let joined: String = words(name).concat();
        Collective::from_joined(&joined, &joined)
    }

    /// The kind a kernel's name says it runs (`ncclDevKernel_AllReduce_…`,
    /// vLLM's `cross_device_reduce_1stage`, `multimem_all_reduce`).
    pub fn from_kernel(name: &str) -> Collective {
        let words = words(name);
        let joined: String = words.concat();
        match Collective::from_joined(&joined, "") {
            Collective::Other if joined.contains("crossdevicereduce") => Collective::AllReduce,
            Collective::Other if words.iter().any(|w| w == "reduce") => Collective::Reduce,
            Collective::Other if words.iter().any(|w| w == "send" || w == "recv") => {
                Collective::SendRecv
            }
            kind => kind,
        }
    }

    /// The kind named in `joined` (a name's words run together); `whole` is
    /// matched exactly for the short names (`reduce`, `send`) that would
    /// otherwise match inside longer ones.
    fn from_joined(joined: &str, whole: &str) -> Collective {
        const NAMED: &[(&str, Collective)] = &[
            ("allreduce", Collective::AllReduce),
            ("allgather", Collective::AllGather),
            ("reducescatter", Collective::ReduceScatter),
            ("alltoall", Collective::AllToAll),
            ("broadcast", Collective::Broadcast),
            ("sendrecv", Collective::SendRecv),
        ];
        if let Some((_, kind)) = NAMED.iter().find(|(text, _)| joined.contains(text)) {
            return *kind;
        }
        match whole {
            "reduce" => Collective::Reduce,
            "send" | "recv" => Collective::SendRecv,
            _ => Collective::Other,
        }
    }

    /// The name reports use (`all_reduce`).
    pub fn name(self) -> &'static str {
        match self {
            Collective::AllReduce => "all_reduce",
            Collective::AllGather => "all_gather",
            Collective::ReduceScatter => "reduce_scatter",
            Collective::AllToAll => "all_to_all",
            Collective::Broadcast => "broadcast",
            Collective::Reduce => "reduce",
            Collective::SendRecv => "send_recv",
            Collective::Other => "other",
        }
    }

    /// Bus bandwidth over algorithm bandwidth for `n` ranks, as nccl-tests
    /// defines it (doc/PERFORMANCE.md): what each rank's link carries, so
    /// that results compare with the hardware's peak whatever `n` is.
    /// `None` for [`Collective::Other`] and for fewer than one rank.
    pub fn bus_factor(self, n: u32) -> Option<f64> {
        if n == 0 {
            return None;
        }
        let n = f64::from(n);
        match self {
            Collective::AllReduce => Some(2.0 * (n - 1.0) / n),
            Collective::AllGather | Collective::ReduceScatter | Collective::AllToAll => {
                Some((n - 1.0) / n)
            }
            Collective::Broadcast | Collective::Reduce | Collective::SendRecv => Some(1.0),
            Collective::Other => None,
        }
    }
}

/// Bytes per element of a dtype as `record_param_comms` writes it
/// (`c10::toString(ScalarType)`: `Float`, `BFloat16`, `Float8_e4m3fn`).
pub fn dtype_bytes(dtype: &str) -> Option<u64> {
    let bytes = match dtype {
        "Bool" | "Byte" | "Char" | "QInt8" | "QUInt8" | "UInt8" | "Int8" => 1,
        "Short" | "Half" | "BFloat16" | "UInt16" | "Int16" => 2,
        "Int" | "Float" | "QInt32" | "UInt32" | "ComplexHalf" => 4,
        "Long" | "Double" | "ComplexFloat" | "UInt64" => 8,
        "ComplexDouble" => 16,
        other if other.starts_with("Float8") => 1,
        _ => return None,
    };
    Some(bytes)
}

/// The bytes a collective moves in nccl-tests' sense: the larger of its
/// input and output buffers (all-gather's whole output, reduce-scatter's
/// whole input, all-reduce's one buffer).
pub fn message_bytes(in_nelems: Option<i64>, out_nelems: Option<i64>, dtype: &str) -> Option<u64> {
    let nelems = in_nelems.into_iter().chain(out_nelems).max()?;
    u64::try_from(nelems).ok()?.checked_mul(dtype_bytes(dtype)?)
}
