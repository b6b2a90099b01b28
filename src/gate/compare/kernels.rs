//! Kernel selection: a unified diff of the kernel names two sides of a row
//! launch, when they launch other kernels or other numbers of them (the
//! order alone is timing, not selection).
//!
//! A line diff costs time in the product of the lengths of the parts that
//! differ (Myers), and a CUDA-graph replay can launch 40,000 kernels under
//! one op: two such sequences with different names took 21 s. The common
//! prefix and suffix cost nothing; when what lies between them is longer
//! than [`MAX_DIFF_LINES`], the diff is a summary instead: how many
//! kernels differ and the names whose counts changed. Deterministic, unlike
//! a deadline.
//!
//! Runtime copies and fills are compared as `<copy>` and `<fill>`: ROCm 7.1
//! runs them as blit kernels (`__amd_rocclr_copyBuffer`,
//! `__amd_rocclr_fillBufferAligned`), ROCm 7.2 as SDMA copies and memsets,
//! so a runtime upgrade is no kernel selection change on every
//! `aten::copy_`. Only the decision whether the kernels changed reads these
//! tokens; a diff, once there is one, shows the names the trace recorded.

use std::collections::HashMap;

use similar::TextDiff;

use crate::analysis::timeline;
use crate::echo;

/// The most differing kernels (both sides together, after the common prefix
/// and suffix) diffed line by line.
pub const MAX_DIFF_LINES: usize = 2_000;

/// The most names a summary lists.
const MAX_SUMMARY_NAMES: usize = 40;

/// A unified diff of two kernel-name sequences, `None` when they hold the
/// same kernels the same number of times (in any order: kernels on
/// concurrent streams start in an order timing decides, so the order alone
/// is no change of kernel selection); a summary (still `---`/`+++`/`@@`
/// headed, `-`/`+` lines) when the parts that differ are too long to diff
/// line by line.
pub fn kernel_diff(baseline: &[String], candidate: &[String]) -> Option<String> {
    // One line per kernel whatever its name holds: a newline in a name must
    // not make lines of the diff (`-old` / `+new` forged).
    let one_line = |names: &[String]| -> Option<Vec<String>> {
        names
            .iter()
            .any(|n| n.chars().any(echo::is_unsafe))
            .then(|| names.iter().map(|n| echo::echo(n, usize::MAX)).collect())
    };
    let (escaped_baseline, escaped_candidate) = (one_line(baseline), one_line(candidate));
    let baseline = escaped_baseline.as_deref().unwrap_or(baseline);
    let candidate = escaped_candidate.as_deref().unwrap_or(candidate);
    if same_multiset(&normalised(baseline), &normalised(candidate)) {
        return None;
    }
    let prefix = baseline
        .iter()
        .zip(candidate)
        .take_while(|(b, c)| b == c)
        .count();
    let suffix = baseline[prefix..]
        .iter()
        .rev()
        .zip(candidate[prefix..].iter().rev())
        .take_while(|(b, c)| b == c)
        .count();
    let old = &baseline[prefix..baseline.len() - suffix];
    let new = &candidate[prefix..candidate.len() - suffix];
    if old.len() + new.len() > MAX_DIFF_LINES {
        return Some(summary(baseline, candidate, old, new));
    }
    let lines =
        |names: &[String]| -> String { names.iter().map(|name| format!("{name}\n")).collect() };
    let (old, new) = (lines(baseline), lines(candidate));
    let diff = TextDiff::from_lines(&old, &new);
    Some(
        diff.unified_diff()
            .context_radius(3)
            .header("baseline", "candidate")
            .to_string(),
    )
}

/// The names as the kernel-selection test compares them: runtime copies and
/// fills as `<copy>` and `<fill>` ([`diff_name`]).
fn normalised(names: &[String]) -> Vec<String> {
    names
        .iter()
        .map(|name| diff_name(name).to_string())
        .collect()
}

/// A kernel (or memcpy/memset) name as the kernel-selection test compares it: `<copy>` for a
/// runtime copy however the runtime ran it (a blit kernel, a `Memcpy …`
/// event, rocprofiler's `MEMORY_COPY_*`), `<fill>` for a runtime fill
/// (`__amd_rocclr_fillBuffer*`, `Memset …`, `MEMORY_SET*`), else the name.
fn diff_name(name: &str) -> &str {
    if timeline::is_copy_kernel(name) || name.starts_with("Memcpy") {
        "<copy>"
    } else if name.starts_with("__amd_rocclr_fillBuffer")
        || name.starts_with("Memset")
        || name.starts_with("MEMORY_SET")
    {
        "<fill>"
    } else {
        name
    }
}

/// The summary of two long differing parts: their sizes, then each kernel
/// name whose count differs (`-name ×n` fewer in the candidate, `+name ×n`
/// more), most changed first, at most [`MAX_SUMMARY_NAMES`].
fn summary(baseline: &[String], candidate: &[String], old: &[String], new: &[String]) -> String {
    let mut change: HashMap<&str, i64> = HashMap::new();
    for name in old {
        *change.entry(name).or_default() -= 1;
    }
    for name in new {
        *change.entry(name).or_default() += 1;
    }
    let mut changed: Vec<(&str, i64)> = change.into_iter().filter(|&(_, n)| n != 0).collect();
    changed.sort_by(|a, b| b.1.abs().cmp(&a.1.abs()).then(a.0.cmp(b.0)));
    let mut out = format!(
        "--- baseline\n+++ candidate\n@@ summarised: {} of {} baseline kernels and {} of {} candidate kernels differ, \
         too many to diff line by line (at most {MAX_DIFF_LINES}); kernel counts that changed @@\n",
        old.len(),
        baseline.len(),
        new.len(),
        candidate.len(),
    );
    for (name, n) in changed.iter().take(MAX_SUMMARY_NAMES) {
        let sign = if *n < 0 { '-' } else { '+' };
        out.push_str(&format!("{sign}{name} ×{}\n", n.unsigned_abs()));
    }
    if changed.len() > MAX_SUMMARY_NAMES {
        out.push_str(&format!(
            " … {} more names\n",
            changed.len() - MAX_SUMMARY_NAMES
        ));
    }
    out
}

/// Whether two sequences hold the same names the same number of times.
fn same_multiset(baseline: &[String], candidate: &[String]) -> bool {
    if baseline.len() != candidate.len() {
        return false;
    }
    fn sorted(names: &[String]) -> Vec<&String> {
        let mut names: Vec<&String> = names.iter().collect();
        names.sort_unstable();
        names
    }
    sorted(baseline) == sorted(candidate)
}
