//! The one place that says whether a GPU kernel is collective communication.
//!
//! The op categories (`ops::category`), the timeline's comm bucket
//! (`timeline::bucket_of`) and the perf-table descent (`perf::op_tree`) all
//! ask [`is_comm_kernel`], so a kernel is communication everywhere or
//! nowhere; the gate's communication rule reads the category. Library names
//! change (`ncclKernel_*` became `ncclDevKernel_*`; ROCm has rccl; vLLM's
//! custom all-reduce is `cross_device_reduce_*`; PyTorch's symmetric memory
//! runs `multimem_all_reduce`), so matching is case-insensitive on name
//! fragments, and collective words are matched as whole words (`all_reduce`,
//! `AllGather`, `reduce_scatter`, `all_to_all`), never as a bare `reduce`.

/// Name fragments that mark a communication library's kernel wherever
/// they occur (lower case).
const LIBRARY_FRAGMENTS: &[&str] = &[
    "nccl",
    "rccl",
    "cross_device_reduce",
    "multimem",
    "symmetric_memory",
];

/// Collective names as word sequences: `all_reduce`, `AllReduce` and
/// `allreduce` all match `["all", "reduce"]`.
const COLLECTIVES: &[&[&str]] = &[
    &["all", "reduce"],
    &["all", "gather"],
    &["reduce", "scatter"],
    &["all", "to", "all"],
];

/// Whether a kernel name is a collective-communication kernel: a
/// communication library's kernel (NCCL, RCCL, vLLM's custom all-reduce,
/// symmetric memory), or a kernel named after a collective.
pub fn is_comm_kernel(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    if LIBRARY_FRAGMENTS.iter().any(|f| lower.contains(f)) {
        return true;
    }
    let words = words(name);
    COLLECTIVES.iter().any(|collective| {
        let joined: String = collective.concat();
        words.contains(&joined)
            || words
                .windows(collective.len())
                .any(|window| window.iter().zip(collective.iter()).all(|(w, c)| w == c))
    })
}

/// A name's words, lower case: split on every character that is not a
/// letter or digit and at camelCase boundaries (`ncclDevKernel_AllReduce`
/// → `nccl dev kernel all reduce`; `SFLayout` → `sf layout`). Digits stay
/// with the letters before them (`conv2d`, `sm90`).
pub fn words(name: &str) -> Vec<String> {
    let chars: Vec<char> = name.chars().collect();
    let mut out = Vec::new();
    let mut current = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            continue;
        }
        let prev = i.checked_sub(1).map(|p| chars[p]);
        let next = chars.get(i + 1).copied();
        let boundary = c.is_ascii_uppercase()
            && prev.is_some_and(|p| {
                p.is_ascii_lowercase()
                    || p.is_ascii_digit()
                    || (p.is_ascii_uppercase() && next.is_some_and(|n| n.is_ascii_lowercase()))
            });
        if boundary && !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
        current.push(c.to_ascii_lowercase());
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_on_separators_and_camel_case() {
        assert_eq!(
            words("flashinfer::QuantizationSFLayout"),
            ["flashinfer", "quantization", "sf", "layout"]
        );
        assert_eq!(
            words("ncclDevKernel_AllReduce_Sum_f32"),
            ["nccl", "dev", "kernel", "all", "reduce", "sum", "f32"]
        );
        assert_eq!(
            words("void cudnn::conv2d_grouped"),
            ["void", "cudnn", "conv2d", "grouped"]
        );
    }

    #[test]
    fn communication_kernels_under_every_name() {
        for name in [
            "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)",
            "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
            "NCCLDEVKERNEL_BROADCAST",
            "void RCCL_kernel",
            "rcclGenericKernel<1, false>",
            "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>",
            "void c10d::symmetric_memory::multimem_all_reduce_kernel<__nv_bfloat16, 16>",
            "symm_mem::multimem_all_reduce_",
            "void allreduce_fusion_kernel_oneshot_lamport<true>",
            "void flashinfer::trtllm_allreduce_fusion::allreduce_fusion_kernel",
            "reduce_scatter_kernel",
            "all_to_all_dispatch",
        ] {
            assert!(is_comm_kernel(name), "{name}");
        }
        for name in [
            "void at::native::reduce_kernel<512, 1>",
            "void at::native::vectorized_elementwise_kernel<4>",
            "gather_kernel",
            "ReduceOp_all",
            "mystery",
        ] {
            assert!(!is_comm_kernel(name), "{name}");
        }
    }
}
