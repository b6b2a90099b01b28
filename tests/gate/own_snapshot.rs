//! Every corpus trace against the snapshot `tracegate snapshot` wrote of
//! it: the file loads again, and the check passes with no finding. A
//! snapshot of hta/trace_diff_test_v100 once failed to load ("the same op
//! key … as ops[55]"): the reader keyed rows without their graph place, so
//! one kernel replayed by two graph launches looked like a duplicate row.
//! The rank-set snapshot of `snapshot --ranks` keeps the lowest rank's rows
//! and is read by the same reader, so it is checked here too.

use super::{Gate, assert_quiet, command, corpus_dir, run_check, snapshot, text};
use crate::util::{corpus_traces, read_gz_json};

/// The corpus folders each test covers: a test per group, so that they
/// run side by side and none takes long in a debug build (the OWLv2 and
/// TimeSformer traces take seconds each). Every corpus trace is in one.
const GROUPS: [&[&str]; 5] = [
    &["hta"],
    &["kineto"],
    &["tracelens/h100"],
    &["tracelens/mi300"],
    &[
        "tracelens/inference",
        "tracelens/mi210",
        "tracelens/torch_compile_triton",
    ],
];

/// The traces under the corpus folders of `group` (not the capture traces'
/// `execution_details.json`), as corpus-relative paths.
fn traces(group: &[&str]) -> Vec<String> {
    let corpus = corpus_dir();
    group
        .iter()
        .flat_map(|folder| corpus_traces(&corpus.join(folder)))
        .filter(|path| !path.ends_with("execution_details.json"))
        .map(|path| {
            let relative = path.strip_prefix(&corpus).expect("under the corpus");
            relative.to_str().expect("UTF-8 path").replace('\\', "/")
        })
        .collect()
}

/// No finding about a difference: [`assert_quiet`] allows any info
/// finding, a trace against its own snapshot has only the info
/// `efficiency` ones, which judge the candidate alone against its roofline
/// (the same whatever the baseline).
fn assert_no_findings(gate: &Gate, what: &str) {
    assert_quiet(gate, what);
    assert!(
        gate.findings()
            .iter()
            .all(|f| f["kind"] == "efficiency" && f["severity"] == "info"),
        "{what}:\n{}",
        gate.describe()
    );
}

/// `check` of each trace against its own snapshot. A trace without GPU
/// work has nothing to compare, which the gate fails on purpose; its
/// snapshot must load all the same.
fn each_against_its_own_snapshot(traces: &[String]) {
    assert!(!traces.is_empty(), "no corpus trace in this group");
    for relative in traces {
        let trace = corpus_dir().join(relative);
        let baseline = snapshot(relative);
        let gate = run_check(&[&baseline], &trace, &[]);
        if read_gz_json(&baseline)["has_gpu_activity"] == true {
            assert_no_findings(&gate, relative);
        } else {
            let kinds: Vec<&str> = gate
                .findings()
                .iter()
                .filter_map(|f| f["kind"].as_str())
                .collect();
            assert_eq!(kinds, ["nothing_to_compare"], "{relative}");
        }
    }
}

#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn the_groups_hold_every_corpus_trace() {
    let corpus = corpus_dir();
    let mut every: Vec<String> = traces(&[""]);
    every.sort();
    let mut grouped: Vec<String> = GROUPS.iter().flat_map(|group| traces(group)).collect();
    grouped.sort();
    assert!(
        every.len() >= 25,
        "found only {} traces in {}",
        every.len(),
        corpus.display()
    );
    assert_eq!(grouped, every);
    // trace_diff_test_v100's graph-replayed rows once broke the reader.
    assert!(every.iter().any(|t| t == super::V100_STEPS), "{every:?}");
}

/// One test per entry of [`GROUPS`].
macro_rules! group_tests {
    ($($name:ident: $index:literal,)*) => {$(
        #[test]
        #[cfg_attr(
            not(tracegate_corpus),
            ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
        )]
        fn $name() {
            each_against_its_own_snapshot(&traces(GROUPS[$index]));
        }
    )*};
}

group_tests! {
    hta_traces_pass_against_their_own_snapshots: 0,
    kineto_traces_pass_against_their_own_snapshots: 1,
    tracelens_h100_traces_pass_against_their_own_snapshots: 2,
    tracelens_mi300_traces_pass_against_their_own_snapshots: 3,
    other_tracelens_traces_pass_against_their_own_snapshots: 4,
}

#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn a_rank_set_passes_against_its_own_rank_snapshot() {
    // Ranks 1 (v100, the lowest: its rows are the set's) and 3 (a100), by
    // their distributedInfo.rank, named by a glob.
    let ranks = corpus_dir().join("hta").join("trace_diff_*.json.gz");
    let dir = tempfile::tempdir().expect("tempdir");
    let baseline = dir.path().join("trace_diff.snapshot.json.gz");
    let output = command()
        .args(["snapshot", "--ranks", "--quiet"])
        .arg(&ranks)
        .arg("-o")
        .arg(&baseline)
        .output()
        .expect("run tracegate snapshot --ranks");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let written = read_gz_json(&baseline);
    let numbers: Vec<u64> = written["ranks"]
        .as_array()
        .expect("ranks")
        .iter()
        .filter_map(|r| r["rank"].as_u64())
        .collect();
    assert_eq!(numbers, [1, 3]);
    let gate = run_check(&[&baseline], &ranks, &["--ranks"]);
    assert_no_findings(&gate, "the trace_diff ranks");
}
