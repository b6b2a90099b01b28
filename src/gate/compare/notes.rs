//! The remarks a comparison carries besides its rows: how the step counts
//! and platforms of the two sides differ, software that changed, and why
//! nothing can be compared when that is so.

use super::learned::MIN_LEARNED_RUNS;
use super::model::{CompareOptions, ExpectationBasis, OpComparison};
use crate::analysis::hardware::{Catalog, Hardware, builtin_catalog};
use crate::gate::snapshot::{Fingerprint, Snapshot};
use crate::trace::model::DeviceProperties;

/// A note when the policy names a side's GPU and the trace recorded a
/// different one the built-in catalog knows: the efficiency and expected
/// ratios then rest on a GPU the run did not use. A declared entry whose
/// own device names match the trace (a `hardware.file` entry for the same
/// part, an inline spec `base=H100 SXM,…`) is no contradiction; a trace whose GPU the
/// catalog does not know cannot contradict anything.
pub(super) fn declared_hardware(
    side: &str,
    declared: &Hardware,
    fingerprint: &Fingerprint,
) -> Option<String> {
    let devices: Vec<DeviceProperties> = fingerprint
        .gpus
        .iter()
        .map(|g| DeviceProperties {
            name: g.name.clone(),
            ..DeviceProperties::default()
        })
        .collect();
    let recorded = builtin_catalog().detect(&devices).hardware()?.clone();
    // An inline spec based on an entry is named `NAME (custom)`.
    let base = declared
        .name
        .strip_suffix(" (custom)")
        .unwrap_or(&declared.name);
    let same_name = recorded.name.eq_ignore_ascii_case(base);
    let own = Catalog {
        gpus: vec![declared.clone()],
    };
    if same_name || own.detect(&devices).hardware().is_some() {
        return None;
    }
    Some(format!(
        "the policy says the {side} ran on {}, but its trace records {} ({}): efficiency and \
         expected ratios use {}; fix the policy's hardware.{side} or use `detected`",
        declared.name,
        recorded.name,
        fingerprint.gpus_text(),
        declared.name
    ))
}

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
    if let (Some(declared), Some(first)) = (&options.baseline_hardware, baselines.first()) {
        notes.extend(declared_hardware("baseline", declared, &first.fingerprint));
    }
    if let Some(declared) = &options.candidate_hardware {
        notes.extend(declared_hardware(
            "candidate",
            declared,
            &candidate.fingerprint,
        ));
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::snapshot::GpuCount;

    fn recorded_on(gpu: &str) -> Fingerprint {
        Fingerprint {
            gpus: vec![GpuCount {
                name: gpu.to_string(),
                count: 1,
            }],
            ..Fingerprint::default()
        }
    }

    #[test]
    fn a_declared_gpu_the_trace_contradicts_is_a_note() {
        let catalog = builtin_catalog();
        let h100 = catalog.resolve("H100 SXM").expect("H100 SXM");
        let note = declared_hardware("candidate", &h100, &recorded_on("NVIDIA L4"))
            .expect("H100 declared, L4 recorded");
        assert!(
            note.starts_with(
                "the policy says the candidate ran on H100 SXM, but its trace records L4"
            ),
            "{note}"
        );
        // The same part, named or based on, or a GPU the catalog lacks: none.
        let trace = recorded_on("NVIDIA H100 80GB HBM3");
        assert_eq!(declared_hardware("baseline", &h100, &trace), None);
        let based = catalog
            .resolve("base=H100 SXM,hbm=3.0")
            .expect("inline spec");
        assert_eq!(declared_hardware("baseline", &based, &trace), None);
        let unknown = recorded_on("Quadro GP100");
        assert_eq!(declared_hardware("baseline", &h100, &unknown), None);
        let custom = catalog.resolve("name=next,hbm=8,bf16=2500").expect("spec");
        assert!(declared_hardware("baseline", &custom, &trace).is_some());
    }
}
