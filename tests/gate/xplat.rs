//! Cross-platform from the first scheduled run (issue 26), on the corpus's
//! five H100/MI300X model pairs, both directions:
//!
//! - `--cross-platform` and `--policy policies/cross-platform.yaml` judge
//!   alike, and the same code passes with no failure and no warning;
//! - without learned ratios (day one, and while the history holds fewer
//!   than 3 paired runs) the ops beyond the hardware's ratio are a report,
//!   ranked by the time they take beyond it;
//! - the PR comment on all five workloads stays under 20 KB and the
//!   terminal fits 80 columns.

use std::path::Path;

use tracegate::analysis::hardware::{Hardware, builtin_catalog};
use tracegate::gate::compare::{LearnedRatios, MIN_LEARNED_RUNS};
use tracegate::gate::policy::Policy;
use tracegate::gate::snapshot::Snapshot;
use tracegate::gate::verdict::{Finding, Outcome, Verdict};
use tracegate::history::ratios::learn;
use tracegate::render::gate::render_comment;

use super::learned::{MODELS, check, complaints, jittered, snapshot_of};
use super::{corpus, repo};
use crate::util::{corpus_dir, tracegate};

/// The directed pairs: (what, baseline trace, candidate trace).
fn pairs() -> Vec<(String, String, String)> {
    let mut pairs = Vec::new();
    for model in MODELS {
        for (from, to) in [("h100", "mi300"), ("mi300", "h100")] {
            pairs.push((
                format!("{model} {from}→{to}"),
                format!("tracelens/{from}/{model}.json.gz"),
                format!("tracelens/{to}/{model}.json.gz"),
            ));
        }
    }
    pairs
}

/// Both sides' catalog hardware on the policy's peak basis.
fn hardware_of(
    baseline: &Snapshot,
    candidate: &Snapshot,
    policy: &Policy,
) -> (Option<Hardware>, Option<Hardware>) {
    let catalog = builtin_catalog();
    let b = baseline
        .fingerprint
        .catalog_hardware(&catalog)
        .expect("in the catalog");
    let c = candidate
        .fingerprint
        .catalog_hardware(&catalog)
        .expect("in the catalog");
    let (b, c) = Hardware::pair_on_basis(&b, &c, policy.hardware.peak);
    (Some(b), Some(c))
}

/// report.json without the policy's label, which names where it came from.
fn judged(dir: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("report.json")).expect("report.json");
    let mut report: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    report["policy"] = serde_json::Value::Null;
    report
}

#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn the_flag_and_the_policy_judge_alike_and_the_same_code_is_quiet() {
    let policy = repo("policies/cross-platform.yaml");
    for (what, baseline, candidate) in pairs() {
        let dirs = tempfile::tempdir().expect("temp dir");
        let run = |name: &str, args: &[&std::ffi::OsStr]| {
            let out = dirs.path().join(name);
            let output = tracegate()
                .arg("check")
                .arg("--baseline")
                .arg(corpus(&baseline))
                .arg("--candidate")
                .arg(corpus(&candidate))
                .args(args)
                .arg("--out-dir")
                .arg(&out)
                .args(["--color", "never"])
                .output()
                .expect("tracegate runs");
            (output.status.code(), judged(&out))
        };
        let flag = run("flag", &["--cross-platform".as_ref()]);
        let file = run("policy", &["--policy".as_ref(), policy.as_os_str()]);
        assert_eq!(flag, file, "{what}: flag and policy disagree");
        let (code, report) = flag;
        assert_eq!(code, Some(0), "{what}");
        assert_eq!(report["counts"]["failures"], 0, "{what}");
        assert_eq!(report["counts"]["warnings"], 0, "{what}");
    }
}

/// The day-one rows of `verdict`: its platform gaps, most time beyond first.
fn gaps(verdict: &Verdict) -> Vec<&Finding> {
    let mut gaps: Vec<&Finding> = verdict
        .findings
        .iter()
        .filter(|f| f.is_platform_gap())
        .collect();
    gaps.sort_by(|a, b| {
        b.impact_percent
            .unwrap()
            .total_cmp(&a.impact_percent.unwrap())
    });
    gaps
}

/// The rows of the comment's day-one table: (op, measured, expected,
/// behind, beyond %).
fn table_rows(comment: &str) -> Vec<(String, f64, f64, f64, f64)> {
    let number = |cell: &str| -> f64 {
        cell.trim()
            .trim_start_matches('×')
            .trim_end_matches(['×', '%'])
            .parse()
            .unwrap_or_else(|_| panic!("a number: {cell:?}"))
    };
    let start = comment
        .find("| op | measured / expected | behind |")
        .expect("the day-one table");
    comment[start..]
        .lines()
        .skip(2)
        .take_while(|line| line.starts_with('|'))
        .map(|line| {
            let cells: Vec<&str> = line.split(" | ").collect();
            let op = cells[0].trim_start_matches("| ");
            let (measured, expected) = cells[1].split_once(" / ").expect("measured / expected");
            (
                op[..op.find("<br>").expect("op<br>shape")].replace('\\', ""),
                number(measured),
                number(expected),
                number(cells[2]),
                number(cells[4]),
            )
        })
        .collect()
}

#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn day_one_ranks_each_models_largest_gaps_and_learning_stays_information() {
    let policy = Policy::load(&repo("policies/cross-platform.yaml")).expect("shipped policy");
    let mut reported = 0;
    for (what, baseline, candidate) in pairs() {
        let (baseline, candidate) = (
            snapshot_of(&corpus(&baseline)),
            snapshot_of(&corpus(&candidate)),
        );
        let hardware = hardware_of(&baseline, &candidate, &policy);
        // Day one (nothing learned), then with fewer paired runs than a
        // learned ratio needs: a report, never a warning.
        let runs = MIN_LEARNED_RUNS as u64 - 1;
        let earlier: Vec<(Snapshot, Snapshot)> = (0..runs)
            .map(|run| {
                (
                    jittered(&baseline, 2 * run),
                    jittered(&candidate, 2 * run + 1),
                )
            })
            .collect();
        for (learned, runs) in [(LearnedRatios::default(), 0), (learn(&earlier), runs)] {
            let verdict = check(&baseline, &candidate, &hardware, &learned, &policy);
            assert_eq!(verdict.outcome, Outcome::Pass, "{what}");
            assert!(
                complaints(&verdict).is_empty(),
                "{what}: {:#?}",
                complaints(&verdict)
            );
            let note = format!("learning: {runs} of {MIN_LEARNED_RUNS} paired runs");
            assert!(
                verdict.workloads[0].notes.iter().any(|n| n.contains(&note)),
                "{what}: {:?}",
                verdict.workloads[0].notes
            );
            let gaps = gaps(&verdict);
            let comment = render_comment(&verdict, "default", None).expect("renders");
            if gaps.is_empty() {
                assert!(
                    !comment.contains("is behind what its hardware explains"),
                    "{what}"
                );
                continue;
            }
            reported += 1;
            let rows = table_rows(&comment);
            assert_eq!(rows.len(), gaps.len().min(5), "{what}: {comment}");
            // The largest gap × time first, each row as far behind as its
            // ratios say, and behind.
            assert_eq!(rows[0].0, gaps[0].op.as_ref().unwrap().name, "{what}");
            for pair in rows.windows(2) {
                assert!(pair[0].4 >= pair[1].4, "{what}: {rows:?}");
            }
            for (op, measured, expected, behind, _) in &rows {
                assert!(*behind > 1.0, "{what} {op}");
                let tolerance = 0.06 * behind + 0.05;
                assert!(
                    (measured / expected - behind).abs() <= tolerance,
                    "{what} {op}: {rows:?}"
                );
            }
        }
    }
    // Every H100 → MI300X pair has ops behind its hardware.
    assert!(reported >= 10, "{reported}");
}

#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn five_workloads_fit_a_comment_and_an_80_column_terminal() {
    let out = tempfile::tempdir().expect("temp dir");
    let output = tracegate()
        .arg("check")
        .arg("--baseline")
        .arg(corpus_dir().join("tracelens/h100"))
        .arg("--candidate")
        .arg(corpus_dir().join("tracelens/mi300"))
        .arg("--cross-platform")
        .arg("--out-dir")
        .arg(out.path())
        .args(["--color", "never"])
        .env("COLUMNS", "80")
        .output()
        .expect("tracegate runs");
    assert_eq!(output.status.code(), Some(0));
    let comment = std::fs::read_to_string(out.path().join("comment.md")).expect("comment.md");
    assert!(comment.len() < 20_000, "{} bytes", comment.len());
    assert_eq!(
        comment
            .matches("is behind what its hardware explains")
            .count(),
        5
    );
    let terminal = String::from_utf8(output.stdout).expect("UTF-8");
    for line in terminal.lines() {
        assert!(line.chars().count() <= 80, "{line}");
    }
    // Each workload's title, wrapped to the width.
    let words = terminal.split_whitespace().collect::<Vec<_>>().join(" ");
    assert_eq!(
        words
            .matches("where MI300X is behind what its hardware explains")
            .count(),
        5
    );
}
