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
//!
//! Names the built-in rules cannot know (DeepEP's `dispatch`/`combine`,
//! gloo, a vendor's own collective) are added by the user as patterns
//! ([`CommKernels`]: `--comm-kernel`, the policy's `communication.kernels`);
//! the analysis options carry them to every caller.

use std::fmt;

use regex::{Regex, RegexBuilder};

/// The longest pattern a user may give, in characters.
const MAX_PATTERN_CHARS: usize = 1000;

/// The most a pattern's compiled regex may take, in bytes.
const MAX_REGEX_BYTES: usize = 1 << 20;

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

/// The communication-kernel detector: the built-in rules
/// ([`is_comm_kernel`]) and the patterns a user adds. A pattern is matched
/// case-insensitively anywhere in the kernel name: plain text is a
/// substring (`dispatch`), `*` stands for any run of characters and `?` for
/// one (`deep_ep::*combine`), and `re:` starts a regex (`re:^gloo`).
#[derive(Clone, Debug, Default)]
pub struct CommKernels {
    /// The user's patterns as written, each with its compiled regex.
    patterns: Vec<(String, Regex)>,
}

impl PartialEq for CommKernels {
    fn eq(&self, other: &CommKernels) -> bool {
        self.patterns().eq(other.patterns())
    }
}

impl fmt::Display for CommKernels {
    /// The patterns as written, comma-separated.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.patterns().collect::<Vec<_>>().join(", "))
    }
}

impl CommKernels {
    /// The built-in rules and `patterns`; an error names the first pattern
    /// that is empty, too long or not a valid regex.
    pub fn with_patterns<S: AsRef<str>>(
        patterns: impl IntoIterator<Item = S>,
    ) -> Result<CommKernels, String> {
        let patterns = patterns
            .into_iter()
            .map(|text| {
                let text = text.as_ref();
                compile(text).map(|regex| (text.to_string(), regex))
            })
            .collect::<Result<_, _>>()?;
        Ok(CommKernels { patterns })
    }

    /// These patterns and `other`'s (the policy's and the command line's).
    pub fn merged(&self, other: &CommKernels) -> CommKernels {
        let mut patterns = self.patterns.clone();
        for pattern in &other.patterns {
            if !patterns.iter().any(|(text, _)| *text == pattern.0) {
                patterns.push(pattern.clone());
            }
        }
        CommKernels { patterns }
    }

    /// The user's patterns as written.
    pub fn patterns(&self) -> impl Iterator<Item = &str> {
        self.patterns.iter().map(|(text, _)| text.as_str())
    }

    /// Whether a kernel is collective communication: by the built-in rules
    /// or one of the user's patterns.
    pub fn is_comm(&self, name: &str) -> bool {
        is_comm_kernel(name) || self.patterns.iter().any(|(_, regex)| regex.is_match(name))
    }
}

/// A user's pattern as a case-insensitive, unanchored regex.
fn compile(text: &str) -> Result<Regex, String> {
    if text.trim().is_empty() {
        return Err("an empty communication-kernel pattern matches every kernel".to_string());
    }
    if text.chars().count() > MAX_PATTERN_CHARS {
        return Err(format!(
            "a communication-kernel pattern is longer than {MAX_PATTERN_CHARS} characters"
        ));
    }
    let source = match text.strip_prefix("re:") {
        Some(regex) => regex.to_string(),
        None => text
            .split('*')
            .map(|part| {
                part.split('?')
                    .map(regex::escape)
                    .collect::<Vec<_>>()
                    .join(".")
            })
            .collect::<Vec<_>>()
            .join(".*"),
    };
    RegexBuilder::new(&source)
        .case_insensitive(true)
        .size_limit(MAX_REGEX_BYTES)
        .build()
        .map_err(|error| {
            // The regex crate's message spans lines (the pattern, a caret, the
            // reason): the reason is what a one-line error needs.
            let error = error.to_string();
            let reason = error.lines().last().unwrap_or_default().trim();
            format!("communication-kernel pattern `{text}`: {reason}")
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

    #[test]
    fn user_patterns_add_to_the_built_in_rules() {
        let comm = CommKernels::with_patterns([
            "DISPATCH",
            "gloo*allreduce",
            "re:^void deep_ep::.*combine",
            "k?rnel_x",
        ])
        .unwrap();
        for name in [
            "void deep_ep::intranode::dispatch<8, 768>(int4*)",
            "void deep_ep::internode::combine<true>",
            "gloo::cuda_allreduce_ring",
            "kernel_x",
            "ncclDevKernel_AllGather_RING_LL",
        ] {
            assert!(comm.is_comm(name), "{name}");
        }
        for name in [
            "void at::native::reduce_kernel<512, 1>",
            "x deep_ep::combine",
            "kernelx",
        ] {
            assert!(!comm.is_comm(name), "{name}");
        }
        assert!(!CommKernels::default().is_comm("void deep_ep::intranode::dispatch<8>"));
        assert_eq!(
            comm.to_string(),
            "DISPATCH, gloo*allreduce, re:^void deep_ep::.*combine, k?rnel_x"
        );
        let merged = comm.merged(&CommKernels::with_patterns(["dispatch", "DISPATCH"]).unwrap());
        assert_eq!(merged.patterns().count(), 5);
        for bad in ["", "  ", "re:(", &"x".repeat(1001)] {
            assert!(CommKernels::with_patterns([bad]).is_err(), "{bad}");
        }
    }
}
