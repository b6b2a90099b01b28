//! The remarks a comparison carries besides its rows: how the step counts
//! and platforms of the two sides differ, software that changed, and why
//! nothing can be compared when that is so.

use super::learned::MIN_LEARNED_RUNS;
use super::model::{CompareOptions, ExpectationBasis, OpComparison};
use crate::gate::snapshot::{Fingerprint, Snapshot};

/// `1, 1, 2`-style list of step counts (deduplicated).
pub(super) fn join_counts(counts: &[usize]) -> String {
    let mut unique: Vec<usize> = counts.to_vec();
    unique.dedup();
    unique
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join("/")
}

/// Whether the sides differ in hardware, and the names used.
pub(super) fn platforms(
    baselines: &[Snapshot],
    candidate: &Snapshot,
    options: &CompareOptions,
    notes: &mut Vec<String>,
) -> (bool, Option<String>, Option<String>) {
    let baseline_name = options
        .baseline_hardware
        .as_ref()
        .map(|h| h.name.clone())
        .or_else(|| {
            baselines
                .first()
                .and_then(|b| b.fingerprint.hardware.clone())
        });
    let candidate_name = options
        .candidate_hardware
        .as_ref()
        .map(|h| h.name.clone())
        .or_else(|| candidate.fingerprint.hardware.clone());
    let gpu_names = |f: &Fingerprint| {
        let mut names: Vec<String> = f.gpus.iter().map(|g| g.name.clone()).collect();
        names.sort();
        names
    };
    let mut baseline_gpus: Vec<Vec<String>> = baselines
        .iter()
        .map(|b| gpu_names(&b.fingerprint))
        .collect();
    baseline_gpus.dedup();
    if baseline_gpus.len() > 1 {
        notes.push("the baseline runs were recorded on different GPUs".to_string());
    }
    let cross = match (&options.baseline_hardware, &options.candidate_hardware) {
        (Some(b), Some(c)) => !b.name.eq_ignore_ascii_case(&c.name),
        _ => baseline_gpus
            .first()
            .is_some_and(|b| !b.is_empty() && *b != gpu_names(&candidate.fingerprint)),
    };
    if cross && (options.baseline_hardware.is_none() || options.candidate_hardware.is_none()) {
        notes.push(
            "the two sides ran on different GPUs, but the hardware of one side is unknown: \
             no expected ratios (name it in the policy's hardware section)"
                .to_string(),
        );
    }
    (cross, baseline_name, candidate_name)
}

/// Too few earlier paired runs (`runs` of [`MIN_LEARNED_RUNS`]) for a
/// learned ratio: the day-one report until there are enough.
pub fn learning_note(runs: usize) -> String {
    format!(
        "learning: {runs} of {MIN_LEARNED_RUNS} paired runs; until then each op is reported \
         against the ratio the hardware explains, as information, and from then on a change \
         of an op's learned ratio fails"
    )
}

/// How many matched rows are judged against a ratio learned over `runs`
/// earlier paired runs, and how many fall back to the hardware's.
pub(super) fn learned_note(ops: &[OpComparison], totals: &[OpComparison], runs: usize) -> String {
    let learned = |rows: &[OpComparison]| {
        rows.iter()
            .filter(|o| {
                o.expected
                    .is_some_and(|e| matches!(e.basis, ExpectationBasis::History { .. }))
            })
            .count()
    };
    let (rows, op_totals) = (learned(ops), learned(totals));
    format!(
        "expected ratios learned from up to {runs} earlier paired run(s) for {rows} of {} matched op rows and {op_totals} of {} op totals; the other rows keep the hardware's expected ratio",
        ops.len(),
        totals.len()
    )
}

/// Notes on software that changed between the sides.
pub(super) fn runtime_notes(baselines: &[Snapshot], candidate: &Snapshot, notes: &mut Vec<String>) {
    let Some(last) = baselines.last() else { return };
    if last.fingerprint.platform != candidate.fingerprint.platform {
        return; // CUDA against ROCm: every version differs, nothing to note
    }
    let pairs = [
        (
            "runtime",
            last.fingerprint.runtime_text(),
            candidate.fingerprint.runtime_text(),
        ),
        (
            "PyTorch",
            last.fingerprint.pytorch_version.clone(),
            candidate.fingerprint.pytorch_version.clone(),
        ),
    ];
    for (what, before, after) in pairs {
        if let (Some(before), Some(after)) = (before, after) {
            if before != after {
                notes.push(format!("{what} changed: {before} → {after}"));
            }
        }
    }
}

/// Why nothing (or nothing per op) can be compared, when that is so.
pub(super) fn nothing_to_compare(
    baselines: &[Snapshot],
    candidate: &Snapshot,
    matched: usize,
) -> Option<String> {
    if baselines.is_empty() {
        return Some("no baseline run to compare with".to_string());
    }
    let baseline_gpu = baselines.iter().any(|b| b.has_gpu_activity);
    match (baseline_gpu, candidate.has_gpu_activity) {
        (false, false) => return Some("neither side has GPU work".to_string()),
        (false, true) => return Some("the baseline has no GPU work".to_string()),
        (true, false) => return Some("the candidate has no GPU work".to_string()),
        (true, true) => {}
    }
    if matched > 0 {
        return None;
    }
    let baseline_rows: usize = baselines.iter().map(|b| b.ops.len()).max().unwrap_or(0);
    let candidate_rows = candidate.ops.len();
    Some(if baseline_rows == 0 && candidate_rows == 0 {
        "no op launched GPU work on either side (a GPU-only trace?): only the GPU timeline \
         can be compared"
            .to_string()
    } else {
        format!(
            "no op row matches between baseline ({baseline_rows} rows) and candidate \
             ({candidate_rows} rows)"
        )
    })
}
