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
    /// A policy's own spec named like the recorded part is no contradiction,
    /// though its device names match nothing.
    #[test]
    fn a_declared_spec_named_as_the_recorded_gpu_is_no_contradiction() {
        let catalog = builtin_catalog();
        let named = catalog
            .resolve("name=H100 SXM,hbm=3.35,bf16=989.5")
            .expect("spec");
        let trace = recorded_on("NVIDIA H100 80GB HBM3");
        assert_eq!(declared_hardware("baseline", &named, &trace), None);
    }

    fn on(gpu: &str, hardware: &str) -> Snapshot {
        let mut snapshot = crate::gate::snapshot::tests::tiny_snapshot();
        snapshot.fingerprint = Fingerprint {
            hardware: Some(hardware.to_string()),
            ..recorded_on(gpu)
        };
        snapshot
    }

    /// The sides' hardware names and whether they differ: the policy's
    /// names when it names both, else the GPUs the traces recorded, with a
    /// note when one side's hardware is unknown or the baseline runs differ.
    #[test]
    fn platforms_are_the_policys_names_else_the_recorded_gpus() {
        let catalog = builtin_catalog();
        let (h100, mi300) = (
            catalog.resolve("H100 SXM").expect("h100"),
            catalog.resolve("MI300X").expect("mi300x"),
        );
        let h100_run = on("NVIDIA H100 80GB HBM3", "H100 SXM");
        let mi300_run = on("AMD Instinct MI300X", "MI300X");
        let run = |baselines: &[Snapshot], candidate: &Snapshot, options: &CompareOptions| {
            let mut notes = Vec::new();
            let result = platforms(baselines, candidate, options, &mut notes);
            (result, notes)
        };
        let name = |n: &str| Some(n.to_string());
        let plain = CompareOptions::default();

        let same = run(std::slice::from_ref(&h100_run), &h100_run, &plain);
        assert_eq!(same, ((false, name("H100 SXM"), name("H100 SXM")), vec![]));

        let (cross, notes) = run(std::slice::from_ref(&h100_run), &mi300_run, &plain);
        assert_eq!(cross, (true, name("H100 SXM"), name("MI300X")));
        assert_eq!(notes.len(), 1);
        assert!(
            notes[0].contains("the hardware of one side is unknown"),
            "{notes:?}"
        );

        let declared = CompareOptions {
            baseline_hardware: Some(h100.clone()),
            candidate_hardware: Some(mi300.clone()),
            ..CompareOptions::default()
        };
        let (cross, notes) = run(std::slice::from_ref(&h100_run), &mi300_run, &declared);
        assert_eq!(cross, (true, name("H100 SXM"), name("MI300X")));
        assert_eq!(notes, Vec::<String>::new());
        // The policy's names decide, whatever the traces recorded.
        let (cross, _) = run(std::slice::from_ref(&h100_run), &h100_run, &declared);
        assert!(cross.0);
        let both_h100 = CompareOptions {
            baseline_hardware: Some(h100.clone()),
            candidate_hardware: Some(h100.clone()),
            ..CompareOptions::default()
        };
        let (cross, _) = run(std::slice::from_ref(&mi300_run), &h100_run, &both_h100);
        assert_eq!(cross, (false, name("H100 SXM"), name("H100 SXM")));

        // One side named: the recorded GPUs decide, and the other is unknown.
        let one = CompareOptions {
            candidate_hardware: Some(mi300.clone()),
            ..CompareOptions::default()
        };
        let (cross, notes) = run(std::slice::from_ref(&h100_run), &mi300_run, &one);
        assert_eq!(cross, (true, name("H100 SXM"), name("MI300X")));
        assert!(
            notes.iter().any(|n| n.contains("one side is unknown")),
            "{notes:?}"
        );

        // Baseline runs on two GPUs; a baseline that recorded no GPU.
        let (_, notes) = run(&[h100_run.clone(), mi300_run.clone()], &h100_run, &plain);
        assert!(notes.contains(&"the baseline runs were recorded on different GPUs".to_string()));
        let mut no_gpu = h100_run.clone();
        no_gpu.fingerprint.gpus.clear();
        let (cross, notes) = run(&[no_gpu], &mi300_run, &plain);
        assert_eq!((cross.0, notes), (false, vec![]));
    }

    #[test]
    fn step_counts_list_once_each_in_order() {
        assert_eq!(join_counts(&[3, 3, 5]), "3/5");
        assert_eq!(join_counts(&[4]), "4");
    }

    #[test]
    fn the_learning_notes_count_runs_and_rows() {
        assert_eq!(
            learning_note(1),
            format!(
                "learning: 1 of {MIN_LEARNED_RUNS} paired runs; until then each op is \
                 reported against the ratio the hardware explains, as information, and from \
                 then on a change of an op's learned ratio fails"
            )
        );
        let snapshot = crate::gate::snapshot::tests::tiny_snapshot();
        let comparison = super::super::compare(
            std::slice::from_ref(&snapshot),
            &snapshot,
            &CompareOptions::default(),
        );
        let mut rows = vec![comparison.ops[0].clone(); 3];
        rows[1].expected = Some(super::super::Expectation {
            ratio: 1.1,
            basis: ExpectationBasis::History {
                runs: 4,
                spread: 0.02,
            },
            spec: None,
        });
        assert_eq!(
            learned_note(&rows, &rows[1..2], 4),
            "expected ratios learned from up to 4 earlier paired run(s) for 1 of 3 matched op \
             rows and 1 of 1 op totals; the other rows keep the hardware's expected ratio"
        );
    }

    #[test]
    fn software_that_changed_on_one_platform_is_noted() {
        let with = |cuda: &str, torch: &str, platform: &str| {
            let mut snapshot = crate::gate::snapshot::tests::tiny_snapshot();
            snapshot.fingerprint.cuda_runtime_version = Some(cuda.to_string());
            snapshot.fingerprint.pytorch_version = Some(torch.to_string());
            snapshot.fingerprint.platform = Some(platform.to_string());
            snapshot
        };
        let notes_for = |baseline: Snapshot, candidate: Snapshot| {
            let mut notes = Vec::new();
            runtime_notes(&[baseline], &candidate, &mut notes);
            notes
        };
        assert_eq!(
            notes_for(
                with("12040", "2.5.0", "CUDA"),
                with("12080", "2.6.0", "CUDA")
            ),
            [
                "runtime changed: CUDA 12.4 → CUDA 12.8",
                "PyTorch changed: 2.5.0 → 2.6.0"
            ]
        );
        assert_eq!(
            notes_for(
                with("12040", "2.5.0", "CUDA"),
                with("12040", "2.5.0", "CUDA")
            ),
            Vec::<String>::new()
        );
        assert_eq!(
            notes_for(
                with("12040", "2.5.0", "CUDA"),
                with("12080", "2.6.0", "ROCm")
            ),
            Vec::<String>::new()
        );
        let mut notes = Vec::new();
        runtime_notes(&[], &with("12040", "2.5.0", "CUDA"), &mut notes);
        assert!(notes.is_empty());
    }

    #[test]
    fn nothing_to_compare_says_why() {
        let snapshot = crate::gate::snapshot::tests::tiny_snapshot();
        let idle = Snapshot {
            has_gpu_activity: false,
            ..snapshot.clone()
        };
        let no_rows = Snapshot {
            ops: Vec::new(),
            ..snapshot.clone()
        };
        let say = |baselines: &[Snapshot], candidate: &Snapshot, matched: usize| {
            nothing_to_compare(baselines, candidate, matched)
        };
        let text = |s: &str| Some(s.to_string());
        assert_eq!(
            say(&[], &snapshot, 0),
            text("no baseline run to compare with")
        );
        assert_eq!(
            say(std::slice::from_ref(&idle), &idle, 0),
            text("neither side has GPU work")
        );
        assert_eq!(
            say(std::slice::from_ref(&idle), &snapshot, 1),
            text("the baseline has no GPU work")
        );
        assert_eq!(
            say(std::slice::from_ref(&snapshot), &idle, 1),
            text("the candidate has no GPU work")
        );
        // One baseline run with GPU work is enough.
        assert_eq!(say(&[idle, snapshot.clone()], &snapshot, 1), None);
        assert_eq!(say(std::slice::from_ref(&snapshot), &snapshot, 1), None);
        assert_eq!(
            say(std::slice::from_ref(&no_rows), &no_rows, 0),
            text(
                "no op launched GPU work on either side (a GPU-only trace?): only the GPU \
                 timeline can be compared"
            )
        );
        assert_eq!(
            say(std::slice::from_ref(&no_rows), &snapshot, 0),
            text("no op row matches between baseline (0 rows) and candidate (1 rows)")
        );
        assert_eq!(
            say(std::slice::from_ref(&snapshot), &no_rows, 0),
            text("no op row matches between baseline (1 rows) and candidate (0 rows)")
        );
    }
}
