//! One source of truth (issue 23, item 5): the terminal, `comment.md`, the
//! GitHub outputs and annotations say what `report.json` says — the same
//! line counts, the same shape counts, the same Δ with its unit, one
//! annotation per line — on every corpus pair and on seeded mutations of
//! them.
//!
//! The pairs: each TraceLens model on H100 and on MI300X against itself
//! (jittered), against the same model on the other platform (judged across
//! platforms), and against every other model (different workloads); the
//! two HTA jobs against each other. The mutations are snapshots, not
//! traces (cheap enough for a debug test run): rows of a few seeded op
//! names slowed or sped up by factors from ×0.5 to ×150 (an outlier that
//! must not stretch the chart), over ±2% jitter of every row.

use std::collections::BTreeMap;

use serde_json::Value;
use tracegate::gate::policy::Policy;
use tracegate::gate::snapshot::Snapshot;
use tracegate::render::actions::{
    ANNOTATIONS_PER_TYPE, OutputPaths, annotations, github_output_lines,
};
use tracegate::render::gate::{render_comment, render_report_json, render_terminal};
use tracegate::render::terminal::Style;

use super::learned::{MODELS, hardware_pair, jittered, judged, scale_row, snapshot_of, splitmix64};
use super::{A100_STEPS, V100_STEPS, corpus};

/// Seeded mutations per base pair.
const MUTATIONS: u64 = 24;

/// Bootstrap resamples per row.
const RESAMPLES: u32 = 64;

/// Judges `candidate` against `baseline` with `policy` (across platforms
/// when their GPUs differ) and checks every rendering against the report.
fn check_consistent(what: &str, baseline: &Snapshot, candidate: &Snapshot, policy: &Policy) {
    let hardware = hardware_pair(baseline, candidate, policy);
    let verdict = judged(baseline, candidate, &hardware, None, policy);
    let report: Value =
        serde_json::from_str(&render_report_json(&verdict)).expect("report.json parses");
    let comment = render_comment(&verdict, "default", None).expect("the comment renders");
    let terminal = render_terminal(
        &verdict,
        usize::MAX,
        Style {
            color: false,
            width: 80,
        },
    );
    let outputs = github_output_lines(&verdict, &OutputPaths::default());
    let notes = annotations(&verdict);
    let context = || format!("{what}\n{comment}\n{terminal}");

    let groups = report["groups"].as_array().expect("groups");
    let count = |keep: &dyn Fn(&Value) -> bool| groups.iter().filter(|g| keep(g)).count();
    let severity = |g: &Value, s: &str| g["severity"] == s;
    let failing = count(&|g| severity(g, "fail") && g["inconclusive"] != true);
    let inconclusive = count(&|g| severity(g, "fail") && g["inconclusive"] == true);
    let warning = count(&|g| severity(g, "warn"));
    let improvements = count(&|g| g["kind"] == "improvement");

    // Counts: the comment's line, the terminal's, the outputs.
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let mut line = format!("{failing} failing");
    if inconclusive > 0 {
        line.push_str(&format!(" · {inconclusive} inconclusive"));
    }
    line.push_str(&format!(
        " · {warning} warning{} · {improvements} improvement{}",
        plural(warning),
        plural(improvements)
    ));
    assert!(comment.contains(&line), "{line}\n{}", context());
    assert!(
        terminal
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .contains(&line),
        "{line}\n{}",
        context()
    );
    for (key, value) in [
        ("failures", failing),
        ("inconclusive", inconclusive),
        ("warnings", warning),
        ("improvements", improvements),
    ] {
        assert!(
            outputs.lines().any(|l| l == format!("{key}={value}")),
            "{key}={value}\n{outputs}\n{}",
            context()
        );
    }
    // One annotation per line, up to the cap.
    for (command, n) in [
        ("::error ", failing + inconclusive),
        ("::warning ", warning),
    ] {
        let shown = notes.iter().filter(|a| a.starts_with(command)).count();
        assert_eq!(
            shown,
            n.min(ANNOTATIONS_PER_TYPE),
            "{command}{notes:#?}\n{}",
            context()
        );
    }

    // The lines: the same Δ (with its unit) and shape counts in report.json,
    // the comment's tables and the terminal's.
    let flagged: Vec<&Value> = groups
        .iter()
        .filter(|g| matches!(g["severity"].as_str(), Some("fail" | "warn" | "accepted")))
        .collect();
    let mut expected_delta: BTreeMap<String, usize> = BTreeMap::new();
    let mut expected_shapes: BTreeMap<u64, usize> = BTreeMap::new();
    for g in &flagged {
        *expected_delta.entry(delta_cell(g)).or_default() += 1;
        let shapes = g["shapes"].as_u64().unwrap_or(0);
        if shapes > 1 {
            *expected_shapes.entry(shapes).or_default() += 1;
        }
        // The line's words count the shapes the report counts.
        let summary = g["summary"].as_str().unwrap_or("");
        if let Some(n) = shapes_in(summary) {
            assert_eq!(n, shapes, "{summary}\n{}", context());
        }
        // A line about no op says its message, never a bare kind.
        if g["label"] == "policy" || g["label"] == "comparison" {
            panic!("a line without its subject: {g}\n{}", context());
        }
    }
    let rows: Vec<Vec<&str>> = comment
        .lines()
        .filter(|l| {
            ["| ❌", "| ⚠️", "| ❔", "| ☑️"]
                .iter()
                .any(|icon| l.starts_with(icon))
        })
        .map(|l| l.split(" | ").collect())
        .filter(|cells: &Vec<&str>| cells.len() == 6)
        .collect();
    let mut shown_delta: BTreeMap<String, usize> = BTreeMap::new();
    let mut shown_shapes: BTreeMap<u64, usize> = BTreeMap::new();
    for cells in &rows {
        *shown_delta.entry(cells[2].to_string()).or_default() += 1;
        if let Some(n) = shapes_in(cells[1]) {
            if n > 1 {
                *shown_shapes.entry(n).or_default() += 1;
            }
        }
        assert!(
            !matches!(cells[4], "policy" | "nothing to compare" | "integrity"),
            "a line without its message: {cells:?}\n{}",
            context()
        );
    }
    if comment.contains("To stay within GitHub's") {
        // Lines were left out to fit: those shown are the report's.
        for (cell, n) in &shown_delta {
            assert!(
                expected_delta.get(cell).is_some_and(|e| e >= n),
                "{cell}\n{}",
                context()
            );
        }
    } else {
        assert_eq!(shown_delta, expected_delta, "Δ cells\n{}", context());
        assert_eq!(shown_shapes, expected_shapes, "shape cells\n{}", context());
    }
    // Each group's collapsed line counts its shapes as its row does.
    for summary in comment
        .lines()
        .filter(|l| l.starts_with("<details><summary>"))
    {
        if let Some(n) = shapes_in(summary) {
            assert!(
                flagged.iter().any(|g| g["shapes"].as_u64() == Some(n)),
                "{summary}\n{}",
                context()
            );
        }
    }
    // The Δ column is right-aligned under its header's `Δ`.
    let column = terminal
        .lines()
        .find(|l| l.starts_with('│') && l.contains(" Δ "))
        .and_then(|l| l.chars().position(|c| c == 'Δ'));
    let mut terminal_delta: BTreeMap<String, usize> = BTreeMap::new();
    for line in terminal.lines().filter(|l| {
        ["│ FAIL ", "│ warn ", "│ UNSURE ", "│ accepted "]
            .iter()
            .any(|s| l.starts_with(s))
    }) {
        let chars: Vec<char> = line.chars().collect();
        let end = column.expect("a table with a Δ column") + 1;
        let start = chars[..end]
            .iter()
            .rposition(|c| *c == ' ')
            .map_or(0, |p| p + 1);
        let cell: String = chars[start..end].iter().collect();
        *terminal_delta.entry(cell).or_default() += 1;
    }
    assert_eq!(terminal_delta, expected_delta, "terminal Δ\n{}", context());

    // The chart is scaled to its bulk: no bar above the axis, the axis
    // within a few medians.
    if let Some(chart) = comment.split("```mermaid").nth(1) {
        let top: f64 = chart
            .split("0 --> ")
            .nth(1)
            .and_then(|s| s.lines().next())
            .and_then(|s| s.trim().parse().ok())
            .expect("the y axis");
        let bars: Vec<f64> = chart
            .split("bar [")
            .nth(1)
            .and_then(|s| s.split(']').next())
            .map(|s| s.split(", ").filter_map(|v| v.parse().ok()).collect())
            .expect("the bars");
        let mut sorted = bars.clone();
        sorted.sort_by(f64::total_cmp);
        let median = sorted[sorted.len() / 2];
        assert!(bars.iter().all(|&b| b <= top), "{chart}");
        assert!(top <= (median * 3.0).max(200.0) * 1.1 + 10.0, "{chart}");
    }
}

/// The Δ cell of a group as report.json gives it: `+7.4%/run`, or `—`.
fn delta_cell(g: &Value) -> String {
    match g["delta_percent"].as_f64() {
        Some(d) => match g["delta_per"].as_str() {
            Some(per) => format!("{d:+.1}%/{per}"),
            None => format!("{d:+.1}%"),
        },
        None => "—".to_string(),
    }
}

/// `8` in `aten::mm — 8 shapes, …`.
fn shapes_in(text: &str) -> Option<u64> {
    let at = text.find(" shape")?;
    text[..at]
        .rsplit(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|n| n.parse().ok())
}

/// `run` with the rows of a few op names, picked by `seed`, each scaled by
/// a factor from ×0.5 to ×150.
fn mutated(run: &Snapshot, seed: u64) -> Snapshot {
    let mut run = jittered(run, seed);
    let mut names: Vec<String> = run.ops.iter().map(|op| op.name.clone()).collect();
    names.sort();
    names.dedup();
    const FACTORS: [f64; 7] = [0.5, 0.8, 1.1, 1.2, 1.5, 3.0, 150.0];
    let picks = 1 + splitmix64(seed) % 4;
    for k in 0..picks {
        let bits = splitmix64(seed.wrapping_mul(31).wrapping_add(k));
        let name = &names[(bits % names.len() as u64) as usize];
        let factor = FACTORS[((bits >> 32) % FACTORS.len() as u64) as usize];
        for index in 0..run.ops.len() {
            if &run.ops[index].name == name && run.ops[index].graph.is_none() {
                scale_row(&mut run, index, factor);
            }
        }
    }
    run
}

#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn every_output_says_what_report_json_says() {
    // Rendering, not statistics, is under test: few resamples keep a debug
    // run within a minute or two.
    let mut policy = Policy::default();
    policy.noise.resamples = RESAMPLES;
    let mut across = policy.clone();
    across.cross_platform.enabled = true;
    let mut sides: Vec<(String, Snapshot)> = Vec::new();
    for platform in ["h100", "mi300"] {
        for model in MODELS {
            let path = corpus(&format!("tracelens/{platform}/{model}.json.gz"));
            sides.push((format!("{platform}/{model}"), snapshot_of(&path)));
        }
    }
    for (i, (b_name, b)) in sides.iter().enumerate() {
        for (c_name, c) in &sides[i..] {
            let platforms_differ = b_name.split('/').next() != c_name.split('/').next();
            let policy = if platforms_differ { &across } else { &policy };
            let what = format!("{b_name} → {c_name}");
            if std::ptr::eq(b, c) {
                check_consistent(&what, b, &jittered(c, 1), policy);
                for seed in 0..MUTATIONS {
                    let what = format!("{what}, mutation {seed}");
                    check_consistent(&what, b, &mutated(c, seed), policy);
                }
            } else {
                check_consistent(&what, b, c, policy);
                check_consistent(&format!("{c_name} → {b_name}"), c, b, policy);
            }
        }
    }
    let (a100, v100) = (
        snapshot_of(&corpus(A100_STEPS)),
        snapshot_of(&corpus(V100_STEPS)),
    );
    check_consistent("A100 → V100", &a100, &v100, &across);
    check_consistent("A100 → A100, jittered", &a100, &jittered(&a100, 2), &policy);
    for seed in 0..MUTATIONS {
        check_consistent(
            &format!("A100 mutation {seed}"),
            &a100,
            &mutated(&a100, seed),
            &policy,
        );
    }
}
