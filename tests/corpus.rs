//! Real traces from ../shared/corpus, with TraceLens's own CSVs as the oracle.
//! Skipped, saying so, where the corpus is absent.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::util::{Csv, corpus_dir, corpus_traces, relative_difference, tracegate};

/// Traces that have TraceLens reference CSVs beside them.
fn traces_with_oracle(corpus: &Path) -> Vec<(PathBuf, PathBuf)> {
    corpus_traces(&corpus.join("tracelens"))
        .into_iter()
        .filter_map(|trace| {
            let name = trace.file_name()?.to_str()?;
            let stem = name
                .strip_suffix(".json.gz")
                .or_else(|| name.strip_suffix(".json"))?;
            let oracle = trace.with_file_name(format!("{stem}_perf_report_csvs"));
            oracle.is_dir().then_some((trace, oracle))
        })
        .collect()
}

fn csv_report(trace: &Path) -> tempfile::TempDir {
    let out = tempfile::tempdir().expect("temp dir");
    tracegate()
        .args(["report", "--format", "csv", "--out-dir"])
        .arg(out.path())
        .arg(trace)
        .assert()
        .success();
    out
}

#[test]
fn gpu_timeline_matches_tracelens_on_every_row() {
    let Some(corpus) = corpus_dir() else { return };
    let pairs = traces_with_oracle(&corpus);
    assert!(
        pairs.len() >= 12,
        "expected the 12 TraceLens traces, found {}",
        pairs.len()
    );
    for (trace, oracle) in pairs {
        let ours = Csv::read(&csv_report(&trace).path().join("gpu_timeline.csv"));
        let theirs = Csv::read(&oracle.join("gpu_timeline.csv"));
        assert_eq!(ours.header, theirs.header, "{}", trace.display());
        assert_eq!(ours.rows.len(), theirs.rows.len(), "{}", trace.display());
        for (our_row, their_row) in ours.rows.iter().zip(&theirs.rows) {
            assert_eq!(our_row[0], their_row[0], "{}: row order", trace.display());
            for column in 1..=2 {
                let (a, b): (f64, f64) = (
                    our_row[column].parse().unwrap(),
                    their_row[column].parse().unwrap(),
                );
                assert!(
                    relative_difference(a, b) <= 1e-6,
                    "{}: {} column {column}: ours {a}, TraceLens {b}",
                    trace.display(),
                    our_row[0]
                );
            }
        }
    }
}

#[test]
fn ops_summary_matches_tracelens_time_and_count_per_op() {
    let Some(corpus) = corpus_dir() else { return };
    let mut compared = 0;
    for (trace, oracle) in traces_with_oracle(&corpus) {
        let theirs_path = oracle.join("ops_summary.csv");
        let out = csv_report(&trace);
        let ours_path = out.path().join("ops_summary.csv");
        if !theirs_path.exists() {
            // GPU-only traces: TraceLens writes no op tables, and neither do we.
            assert!(
                !ours_path.exists(),
                "{}: op table for a GPU-only trace",
                trace.display()
            );
            continue;
        }
        let (ours, theirs) = (Csv::read(&ours_path), Csv::read(&theirs_path));
        let index = |csv: &Csv| -> HashMap<String, (f64, u64)> {
            let (name, time, count) = (
                csv.column("name"),
                csv.column("total_direct_kernel_time_ms"),
                csv.column("Count"),
            );
            csv.rows
                .iter()
                .map(|r| {
                    (
                        r[name].clone(),
                        (r[time].parse().unwrap(), r[count].parse().unwrap()),
                    )
                })
                .collect()
        };
        let (ours, theirs) = (index(&ours), index(&theirs));
        let mut names: Vec<&String> = theirs.keys().chain(ours.keys()).collect();
        names.sort();
        names.dedup();
        for name in names {
            let (Some(a), Some(b)) = (ours.get(name), theirs.get(name)) else {
                panic!(
                    "{}: op {name} only on one side (ours {:?}, TraceLens {:?})",
                    trace.display(),
                    ours.get(name),
                    theirs.get(name)
                );
            };
            assert_eq!(a.1, b.1, "{}: {name} Count", trace.display());
            assert!(
                relative_difference(a.0, b.0) <= 1e-6,
                "{}: {name} time ours {} TraceLens {}",
                trace.display(),
                a.0,
                b.0
            );
            compared += 1;
        }
    }
    assert!(compared > 100, "compared only {compared} ops");
}
