//! Findings grouped by op: the eight `aten::mm` shapes that got slower for
//! one reason are one line for the reader, with one piece of advice, and
//! every renderer shows the same lines ([`FindingGroup`]).
//!
//! A group is the findings of one kind about one op name in one workload;
//! a finding without an op is a group of its own. The group's change is the
//! ratio of its rows' summed times (a median of per-row ratios would
//! contradict the totals), its impact the sum of theirs. Rows that share
//! input dims get a tag telling them apart (layout from the strides, dtypes
//! or module path). The advice says what the rows' figures point to: the
//! same kernels slower per call, another kernel, more calls, and which
//! recorded versions differ between the sides.

use std::collections::HashMap;

use super::summary::op_key_text;
use crate::gate::compare::OpComparison;
use crate::gate::verdict::{
    DRIFT_RULE, Finding, FindingGroup, FindingKind, OpRef, Per, Severity, WorkloadSummary,
};

/// Groups `findings` (already sorted) by workload, op name and kind, in the
/// order of each group's most important finding. `rows` finds a finding's
/// matched row by workload and op key; `summaries` give the environments.
pub(super) fn group_findings(
    findings: &[Finding],
    rows: &HashMap<(String, String), &OpComparison>,
    summaries: &[WorkloadSummary],
) -> Vec<FindingGroup> {
    // Each workload's matched rows, once each: how much of its time moved.
    let mut workload_rows: HashMap<&str, Vec<&OpComparison>> = HashMap::new();
    for ((workload, _), &row) in rows {
        let list = workload_rows.entry(workload.as_str()).or_default();
        if !list.iter().any(|r| std::ptr::eq(*r, row)) {
            list.push(row);
        }
    }
    let mut order: Vec<Vec<usize>> = Vec::new();
    // A drift finding (over merges, from the history) is a group of its own.
    let mut index: HashMap<(String, String, FindingKind, bool), usize> = HashMap::new();
    for (i, f) in findings.iter().enumerate() {
        match &f.op {
            Some(op) => {
                let key = (
                    f.workload.clone(),
                    op.name.clone(),
                    f.kind,
                    f.rule == DRIFT_RULE,
                );
                match index.get(&key) {
                    Some(&g) => order[g].push(i),
                    None => {
                        index.insert(key, order.len());
                        order.push(vec![i]);
                    }
                }
            }
            None => order.push(vec![i]),
        }
    }
    order
        .into_iter()
        .map(|members| {
            let first = &findings[members[0]];
            let environment = summaries
                .iter()
                .find(|s| s.name == first.workload)
                .map(|s| environment_changes(s, first.op.as_ref().map(|o| o.category.as_str())))
                .unwrap_or_default();
            let mut matched: Vec<&OpComparison> = Vec::new();
            for &i in &members {
                let f = &findings[i];
                let row =
                    f.op.as_ref()
                        .and_then(|op| rows.get(&(f.workload.clone(), op_key_text(op))));
                // Two findings about one row (per call and per launch) count it once.
                if let Some(&row) = row.filter(|r| !matched.iter().any(|m| std::ptr::eq(*m, **r))) {
                    matched.push(row);
                }
            }
            let workload = workload_rows
                .get(first.workload.as_str())
                .map_or(&[][..], Vec::as_slice);
            build(findings, members, &matched, workload, environment)
        })
        .collect()
}

fn build(
    findings: &[Finding],
    members: Vec<usize>,
    matched: &[&OpComparison],
    workload_rows: &[&OpComparison],
    environment_changes: String,
) -> FindingGroup {
    let group: Vec<&Finding> = members.iter().map(|&i| &findings[i]).collect();
    let first = group[0];
    let label = match &first.op {
        Some(op) => op.name.clone(),
        // What these are about: the workload, the policy entry.
        None if first.kind == FindingKind::NothingToCompare => {
            format!("workload {}", first.workload)
        }
        None if first.kind == FindingKind::Policy => format!("policy {}", first.rule),
        None => first.metric.replace('_', " "),
    };
    let severity = group
        .iter()
        .map(|f| f.severity)
        .min()
        .unwrap_or(Severity::Info);
    let ops: Vec<Option<&OpRef>> = group.iter().map(|f| f.op.as_ref()).collect();
    let tags = tags(&ops);
    // A finding about the op's rows summed ("46 shapes") counts the op's
    // shapes; its pseudo-dims are no shape of their own.
    let mut dims: Vec<(&str, &str, &str)> = ops
        .iter()
        .flatten()
        .filter(|op| summed_shapes(op).is_none())
        .map(|op| {
            (
                op.input_dims.as_str(),
                op.input_type.as_str(),
                op.input_strides.as_str(),
            )
        })
        .collect();
    dims.sort_unstable();
    dims.dedup();
    let summed: Vec<&Finding> = group
        .iter()
        .copied()
        .filter(|f| f.op.as_ref().is_some_and(|op| summed_shapes(op).is_some()))
        .collect();
    let shapes = summed
        .iter()
        .filter_map(|f| f.op.as_ref().and_then(summed_shapes))
        .fold(dims.len(), usize::max);
    let deltas: Vec<f64> = group
        .iter()
        .filter_map(|f| f.delta_percent.filter(|d| d.is_finite()))
        .collect();
    let delta_range_percent = (!deltas.is_empty()).then(|| {
        deltas
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &d| {
                (lo.min(d), hi.max(d))
            })
    });
    // The group's change is one of the figures its rows show, so that the
    // line and its rows never disagree: the op's summed rows when a finding
    // judged them, else the ratio of the summed figures the rows show when
    // they share one metric, else the most important row's own figure.
    let lead = summed.first().copied().unwrap_or(first);
    let (delta_percent, delta_per) = if deltas.is_empty() {
        (None, None)
    } else if let Some(d) = shown_totals(&group).filter(|_| summed.is_empty() && group.len() > 1) {
        (Some(d), per_of(first))
    } else {
        (lead.delta_percent.filter(|d| d.is_finite()), per_of(lead))
    };
    let impacts: Vec<f64> = group
        .iter()
        .filter_map(|f| f.impact_percent.filter(|v| v.is_finite()))
        .collect();
    let impact_percent = (!impacts.is_empty()).then(|| impacts.iter().sum());
    let same_kernels =
        (!matched.is_empty()).then(|| matched.iter().all(|r| r.kernel_diff.is_none()));
    let calls = (!matched.is_empty()).then(|| {
        (
            matched.iter().map(|r| r.baseline.count).sum::<u64>(),
            matched.iter().map(|r| r.candidate.count).sum::<u64>(),
        )
    });
    // No calls on a side make its time per call no finite figure: no change.
    let per_call_delta_percent = calls.and_then(|(b, c)| {
        let base: f64 = matched.iter().map(|r| r.baseline.total_us).sum();
        let cand: f64 = matched.iter().map(|r| r.candidate.total_us).sum();
        ratio_percent(base / b as f64, cand / c as f64)
    });
    let inconclusive = severity == Severity::Fail
        && group
            .iter()
            .filter(|f| f.severity == Severity::Fail)
            .all(|f| f.statistics.inconclusive);
    let mut result = FindingGroup {
        workload: first.workload.clone(),
        label,
        kind: first.kind,
        severity,
        inconclusive,
        findings: members,
        tags,
        shapes,
        delta_percent,
        delta_per,
        delta_range_percent,
        impact_percent,
        same_kernels,
        per_call_delta_percent,
        calls,
        environment_changes,
        summary: String::new(),
        advice: None,
        // How to make a slow op faster is premature while its slowdown is
        // unconfirmed: the advice says what would settle it instead.
        path_a: group
            .iter()
            .find_map(|f| f.path_a.clone())
            .filter(|_| !inconclusive),
        path_b: group
            .iter()
            .find_map(|f| f.path_b.clone())
            .filter(|_| !inconclusive),
    };
    result.summary = summary_line(&result, first);
    result.advice = if first.rule == DRIFT_RULE || first.kind.is_rank_set() {
        // The merges that added up to it are the advice: where to look; a
        // rank set's message says what its figures cannot (who waits for
        // whom, how long per call, the bandwidth).
        Some(first.message.clone())
    } else if inconclusive {
        Some(UNCONFIRMED_ADVICE.to_string())
    } else {
        advice(
            &result,
            moved_share(workload_rows, matched, result.per_call_delta_percent),
        )
    };
    result
}

/// How much of a workload's GPU time moved with a group: the share of its
/// other matched rows' baseline time in rows whose time per call grew by at
/// least half of `delta_percent`, when those rows together grew by at least
/// that much too; else 0 (one row's noise is no machine-wide move). Near 1
/// when the whole GPU slowed (clocks, power, the machine), small when one
/// op moved alone. `None` without other rows or without a slowdown.
fn moved_share(
    rows: &[&OpComparison],
    own: &[&OpComparison],
    delta_percent: Option<f64>,
) -> Option<f64> {
    // A change per call is finite (`ratio_percent`).
    let delta = delta_percent.filter(|d| *d > 0.0)?;
    let per_call = |side: &crate::gate::compare::OpSide| {
        if side.count > 0 {
            side.total_us / side.count as f64
        } else {
            side.median_us
        }
    };
    let (mut moved, mut all, mut before, mut after) = (0.0, 0.0, 0.0, 0.0);
    for row in rows
        .iter()
        .filter(|r| !own.iter().any(|o| std::ptr::eq(*o, **r)))
    {
        let (base, cand) = (per_call(&row.baseline), per_call(&row.candidate));
        let weight = row.baseline.time_us.max(0.0);
        all += weight;
        if base > 0.0 && cand.is_finite() {
            before += weight;
            after += weight * cand / base;
            if (cand / base - 1.0) * 100.0 >= delta / 2.0 {
                moved += weight;
            }
        }
    }
    if all <= 0.0 {
        return None;
    }
    // Only rows in `before` can have moved: without them, nothing did.
    let together = (after / before - 1.0) * 100.0 >= delta / 2.0;
    Some(if together { moved / all } else { 0.0 })
}

/// The advice of an inconclusive group: what would settle it.
const UNCONFIRMED_ADVICE: &str = "Measured once a side: one measurement cannot tell this change \
     from noise. Profile more steps, or pass several baseline runs (`--baseline` more than once, \
     or `--history`), to confirm or clear it.";

/// The ratio of the summed figures the findings show, when they all show
/// both sides in one metric (a report.json read back has no rows).
fn shown_totals(group: &[&Finding]) -> Option<f64> {
    let first = group[0];
    let same = group
        .iter()
        .all(|f| f.metric == first.metric && f.unit == first.unit);
    let pairs: Option<Vec<(f64, f64)>> = group
        .iter()
        .map(|f| Some((f.baseline?, f.candidate?)))
        .collect();
    let pairs = pairs.filter(|_| same)?;
    ratio_percent(
        pairs.iter().map(|p| p.0).sum(),
        pairs.iter().map(|p| p.1).sum(),
    )
}

/// What a finding's times are per: its statistics' `per`, else its
/// metric's words (`median kernel time per call`).
pub fn per_of(f: &Finding) -> Option<Per> {
    f.statistics.per.or_else(|| {
        [Per::Call, Per::Step, Per::Run]
            .into_iter()
            .find(|per| f.metric.contains(&format!("per {}", per.as_str())))
    })
}

/// The shapes an op finding about its rows summed stands for: `46` for the
/// dims `46 shapes` (see `findings::summed_rows`); `None` for one shape's row.
pub fn summed_shapes(op: &OpRef) -> Option<usize> {
    (op.input_type.is_empty() && op.input_strides.is_empty())
        .then(|| summed_shapes_text(&op.input_dims))
        .flatten()
}

fn summed_shapes_text(dims: &str) -> Option<usize> {
    let number = dims
        .strip_suffix(" shapes")
        .or_else(|| dims.strip_suffix(" shape"))?;
    number.parse().ok()
}

fn ratio_percent(baseline: f64, candidate: f64) -> Option<f64> {
    (baseline > 0.0 && baseline.is_finite() && candidate.is_finite())
        .then(|| (candidate / baseline - 1.0) * 100.0)
}

/// What tells each row from the group's other rows with the same dims.
fn tags(ops: &[Option<&OpRef>]) -> Vec<Option<String>> {
    ops.iter()
        .map(|op| {
            let op = (*op)?;
            let twins: Vec<&OpRef> = ops
                .iter()
                .flatten()
                .filter(|o| o.input_dims == op.input_dims && !std::ptr::eq(**o, op))
                .copied()
                .collect();
            if twins.is_empty() {
                return None;
            }
            let other_strides: Vec<&&OpRef> = twins
                .iter()
                .filter(|o| o.input_strides != op.input_strides)
                .collect();
            if !other_strides.is_empty() {
                // The layout letters when they tell the rows apart, else the strides.
                let own = layout(&op.input_strides);
                let distinct = own.is_some()
                    && other_strides
                        .iter()
                        .all(|o| layout(&o.input_strides) != own);
                return Some(match own {
                    Some(letters) if distinct => letters,
                    _ => op.input_strides.clone(),
                });
            }
            if twins.iter().any(|o| o.input_type != op.input_type) {
                return Some(op.input_type.clone());
            }
            op.module_path.clone()
        })
        .collect()
}

/// `NT`, `TN` …: one letter per 2-D operand of `Input Strides`, `N` when its
/// rows are contiguous (last stride 1), `T` when its columns are (first
/// stride 1); `None` without a 2-D operand or with another layout.
pub(super) fn layout(strides: &str) -> Option<String> {
    let mut letters = String::new();
    let mut depth_start: Vec<usize> = Vec::new();
    for (i, c) in strides.char_indices() {
        match c {
            '(' => depth_start.push(i),
            ')' => {
                let start = depth_start.pop()?;
                let inner = &strides[start + 1..i];
                if inner.contains('(') {
                    continue;
                }
                let numbers: Vec<&str> = inner
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .collect();
                if numbers.len() != 2 || depth_start.is_empty() {
                    continue;
                }
                match (numbers[0], numbers[1]) {
                    (_, "1") => letters.push('N'),
                    ("1", _) => letters.push('T'),
                    _ => return None,
                }
            }
            _ => {}
        }
    }
    (!letters.is_empty()).then_some(letters)
}

/// What differs between the two sides' recorded environments, for an op
/// of `category`. Across vendors (CUDA against ROCm) the vendor's stack
/// explains a kernel difference: the runtimes and, for GEMMs, convolutions
/// and norms, the library that picks the kernels (cuBLAS against
/// hipBLASLt, cuDNN against MIOpen); the PyTorch version is then no
/// suspect, as each vendor's build differs anyway. Across GPUs of one
/// vendor the GPUs differ on purpose and are left out.
fn environment_changes(summary: &WorkloadSummary, category: Option<&str>) -> String {
    let (b, c) = (&summary.baseline, &summary.candidate);
    let stack = |runtime: Option<&str>| {
        let runtime = runtime?;
        let vendor = vendor(runtime)?;
        let named = match category.and_then(|c| vendor.library(c)) {
            Some(library) => format!("{runtime} with {library}"),
            None => runtime.to_string(),
        };
        Some((vendor, named))
    };
    if summary.cross_platform
        && let (Some((vb, from)), Some((vc, to))) =
            (stack(b.runtime.as_deref()), stack(c.runtime.as_deref()))
        && vb != vc
    {
        return format!("vendor stack {from} → {to}");
    }
    let fields = [
        ("GPUs", Some(&b.gpus), Some(&c.gpus)),
        ("hardware", b.hardware.as_ref(), c.hardware.as_ref()),
        ("runtime", b.runtime.as_ref(), c.runtime.as_ref()),
        ("PyTorch", b.pytorch.as_ref(), c.pytorch.as_ref()),
    ];
    fields
        .iter()
        .filter(|(label, x, y)| {
            x != y && !(summary.cross_platform && matches!(*label, "GPUs" | "hardware" | "runtime"))
        })
        .map(|(label, x, y)| {
            let show = |v: &Option<&String>| {
                v.filter(|s| !s.is_empty())
                    .map_or("not recorded".to_string(), |s| s.to_string())
            };
            format!("{label} {} → {}", show(x), show(y))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// A GPU vendor's software stack, as a recorded runtime names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Vendor {
    Cuda,
    Rocm,
}

/// The vendor of a runtime text (`CUDA 12.4`, `HIP 6.4`, `ROCm 6.2`).
fn vendor(runtime: &str) -> Option<Vendor> {
    let runtime = runtime.to_ascii_lowercase();
    if runtime.starts_with("cuda") {
        Some(Vendor::Cuda)
    } else if runtime.starts_with("hip") || runtime.starts_with("rocm") {
        Some(Vendor::Rocm)
    } else {
        None
    }
}

impl Vendor {
    /// The vendor library that picks the kernels of an op category.
    fn library(self, category: &str) -> Option<&'static str> {
        match (self, category) {
            (Vendor::Cuda, "GEMM") => Some("cuBLAS"),
            (Vendor::Rocm, "GEMM") => Some("hipBLASLt"),
            (Vendor::Cuda, "CONV_fwd" | "CONV_bwd" | "NORM_fwd" | "NORM_bwd") => Some("cuDNN"),
            (Vendor::Rocm, "CONV_fwd" | "CONV_bwd" | "NORM_fwd" | "NORM_bwd") => Some("MIOpen"),
            _ => None,
        }
    }
}

fn signed(v: f64) -> String {
    let text = format!("{v:+.1}");
    text.strip_suffix(".0").map_or(text.clone(), str::to_string)
}

/// `1 shape`, `8 shapes`.
pub fn shapes_text(shapes: usize) -> String {
    if shapes == 1 {
        "1 shape".to_string()
    } else {
        format!("{shapes} shapes")
    }
}

/// `aten::mm — 8 shapes, +29.5% per call (rows +27…+32%), same kernels,
/// +12.0% of GPU time`.
fn summary_line(g: &FindingGroup, first: &Finding) -> String {
    let mut parts: Vec<String> = Vec::new();
    if first.rule == DRIFT_RULE {
        // A drift finding sums every shape of the op over the merges.
        parts.push("all shapes, over the last merges".to_string());
    } else if first.op.is_some() && !first.kind.is_rank_set() {
        let n = g.findings.len();
        let shapes = shapes_text(g.shapes);
        parts.push(if n > g.shapes {
            format!("{shapes}, {n} findings")
        } else {
            shapes
        });
    }
    // The group's Δ (the line's figure) with what it is per, then the
    // rows' range when they differ (one row's range is its own Δ).
    let per = g
        .delta_per
        .map_or(String::new(), |per| format!(" per {}", per.as_str()));
    match (g.delta_percent, g.delta_range_percent) {
        (Some(d), Some((lo, hi))) if (hi - lo).abs() >= 0.5 => parts.push(format!(
            "{d:+.1}%{per} (rows {}…{}%)",
            signed(lo.round()),
            signed(hi.round())
        )),
        (Some(d), _) => parts.push(format!("{d:+.1}%{per}")),
        (None, Some((lo, hi))) if (hi - lo).abs() >= 0.5 => {
            parts.push(format!("{}…{}%", signed(lo.round()), signed(hi.round())));
        }
        (None, Some((lo, _))) => parts.push(format!("{lo:+.1}%")),
        _ => {}
    }
    if matches!(
        g.kind,
        FindingKind::Regression
            | FindingKind::Improvement
            | FindingKind::UnexpectedRatio
            | FindingKind::KernelSelection
    ) {
        match g.same_kernels {
            Some(true) => parts.push("same kernels".to_string()),
            Some(false) => parts.push("kernels changed".to_string()),
            None => {}
        }
    }
    if let Some(i) = g.impact_percent.filter(|_| first.op.is_some()) {
        parts.push(format!("{i:+.1}% of GPU time"));
    }
    if parts.is_empty() {
        // Nothing to count: the finding's own words say what it is.
        format!("{}: {}", g.label, first.message)
    } else {
        format!("{} — {}", g.label, parts.join(", "))
    }
}

/// Above this share of the matched GPU time moving with a group, the
/// machine (clocks, power) is the likelier cause than the op.
const MOVED_TOGETHER: f64 = 0.5;

/// Why a slowdown group likely happened, from its figures, the environments
/// and `moved` (the share of the workload's GPU time that slowed with it,
/// [`moved_share`]); `None` for groups that are not slowdowns.
fn advice(g: &FindingGroup, moved: Option<f64>) -> Option<String> {
    let slower = matches!(
        g.kind,
        FindingKind::Regression | FindingKind::UnexpectedRatio
    ) && g
        .delta_percent
        .or(g.delta_range_percent.map(|r| r.1))
        .unwrap_or(0.0)
        > 0.0;
    if !slower {
        return None;
    }
    let mut sentences: Vec<String> = Vec::new();
    if let Some((b, c)) = g.calls.filter(|(b, c)| b != c) {
        sentences.push(format!(
            "It is called {c} times instead of {b}: the model calls it more often (Path A)."
        ));
    }
    let per_call = g
        .per_call_delta_percent
        .map(|d| format!(" ({d:+.1}% per call)"))
        .unwrap_or_default();
    let versions = if g.environment_changes.is_empty() {
        None
    } else {
        Some(g.environment_changes.as_str())
    };
    sentences.push(match (g.same_kernels, versions) {
        (Some(true), Some(v)) => format!(
            "The same kernels take longer{per_call}, and the sides differ in {v}: check that change first."
        ),
        (Some(true), None) => match moved {
            Some(share) if share > MOVED_TOGETHER => format!(
                "The same kernels take longer{per_call}, no recorded version differs between the sides, and most of the GPU time moved with it ({:.0}% of the other ops' time slowed too): suspect clocks, power or the machine (rerun with locked clocks).",
                share * 100.0
            ),
            Some(share) => format!(
                "The same kernels take longer{per_call} and no recorded version differs, but this op moved alone ({:.0}% of the other ops' GPU time slowed with it): unlikely to be the machine; look at what reaches it (its input data, layouts, what runs beside it).",
                share * 100.0
            ),
            None => format!(
                "The same kernels take longer{per_call} and no recorded version differs between the sides: compare its inputs and the GPU time around it."
            ),
        },
        (Some(false), Some(v)) => format!(
            "Another kernel runs{per_call}, and the sides differ in {v}: that change likely chose it; pin or tune the kernel (Path B)."
        ),
        (Some(false), None) => format!(
            "Another kernel runs{per_call} with the same recorded versions: the library's heuristics chose it for these shapes; pin or tune the kernel (Path B)."
        ),
        (None, Some(v)) => format!("The sides differ in {v}: check that change first."),
        (None, None) => return (!sentences.is_empty()).then(|| sentences.join(" ")),
    });
    Some(sentences.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::verdict::EnvironmentSummary;

    #[test]
    fn layout_from_strides() {
        assert_eq!(layout("((1, 1024), (4096, 1))").as_deref(), Some("TN"));
        assert_eq!(layout("((4096, 1), (1024, 1))").as_deref(), Some("NN"));
        assert_eq!(layout("((4096, 1), (), ())").as_deref(), Some("N"));
        assert_eq!(layout("((8, 4, 1),)"), None);
        assert_eq!(layout(""), None);
        assert_eq!(layout("((2, 3), (1, 1))"), None);
    }

    #[test]
    fn across_vendors_the_stack_explains_kernels_and_pytorch_is_no_suspect() {
        let side = |runtime: &str, pytorch: &str| EnvironmentSummary {
            gpus: "1 × GPU".to_string(),
            hardware: None,
            runtime: Some(runtime.to_string()),
            pytorch: Some(pytorch.to_string()),
            distributed: None,
            runs: 1,
        };
        let summary = |b, c, cross_platform| WorkloadSummary {
            name: "w".to_string(),
            baseline: b,
            candidate: c,
            cross_platform,
            timeline: Vec::new(),
            matched: 0,
            unchanged: 0,
            notes: Vec::new(),
        };
        let across = summary(
            side("CUDA 12.4", "2.6.0+cu124"),
            side("HIP 6.4", "2.7.0+rocm"),
            true,
        );
        let gemm = environment_changes(&across, Some("GEMM"));
        assert_eq!(
            gemm,
            "vendor stack CUDA 12.4 with cuBLAS → HIP 6.4 with hipBLASLt"
        );
        assert!(
            environment_changes(&across, Some("CONV_fwd")).contains("cuDNN → HIP 6.4 with MIOpen")
        );
        assert!(!environment_changes(&across, Some("elementwise")).contains("PyTorch"));
        // One vendor on both sides: the PyTorch version is a suspect.
        let same = summary(
            side("CUDA 12.4", "2.6.0+cu124"),
            side("CUDA 12.4", "2.7.0+cu124"),
            true,
        );
        assert_eq!(
            environment_changes(&same, Some("GEMM")),
            "PyTorch 2.6.0+cu124 → 2.7.0+cu124"
        );
    }

    #[test]
    fn signed_drops_a_zero_decimal() {
        assert_eq!(signed(27.0), "+27");
        assert_eq!(signed(-3.4), "-3.4");
    }
}
