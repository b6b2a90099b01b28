use std::collections::BTreeSet;

use super::*;
use crate::analysis::ops::category::Category;
use crate::analysis::ops::stats::Stats;
use crate::analysis::timeline::Breakdown;
use crate::gate::snapshot::{
    AnomalyCounts, Fingerprint, GpuCount, IdleCounts, OpSnapshot, SNAPSHOT_FORMAT,
    SNAPSHOT_VERSION_1_0, ShortKernelCounts,
};

const REPO: &str = "https://github.com/acme/model";

fn entry(index: usize, value_us: f64) -> EntryMeta {
    EntryMeta {
        workload: "train".to_string(),
        commit: format!("{index:08x}{}", "c".repeat(32)),
        branch: Some("main".to_string()),
        time: format!(
            "2026-{:02}-{:02}T09:30:00Z",
            1 + index / 28 % 12,
            1 + index % 28
        ),
        pr: None,
        run_url: Some(format!(
            "https://github.com/acme/model/actions/runs/{}",
            10_000_000_000u64 + index as u64
        )),
        hardware: Some("H100 SXM".to_string()),
        gpus: "8 × NVIDIA H100 80GB HBM3".to_string(),
        runtime: Some("CUDA 12.4".to_string()),
        pytorch: Some(if index < 600 { "2.5.1" } else { "2.6.0" }.to_string()),
        steps: 1,
        computation_time_us: value_us,
        busy_time_us: value_us,
        file: String::new(),
    }
}

fn op(name: String, sum: f64) -> OpSnapshot {
    OpSnapshot {
        name,
        input_dims: String::new(),
        input_type: String::new(),
        input_strides: String::new(),
        concrete_inputs: String::new(),
        category: Category::Gemm,
        module_path: None,
        direct: Stats {
            sum,
            ..Stats::default()
        },
        samples_us: Vec::new(),
        step_us: Vec::new(),
        kernel_sequence: Vec::new(),
        model: None,
        graph: None,
        kernel_us: Vec::new(),
        kernel_samples_us: Vec::new(),
    }
}

/// A run whose 200 ops take 1 + i µs each (jittered a little by run).
fn snapshot(run: usize, ops: usize) -> Snapshot {
    Snapshot {
        format: SNAPSHOT_FORMAT.to_string(),
        version: SNAPSHOT_VERSION_1_0,
        tracegate_version: "0.0.0".to_string(),
        workload: "train".to_string(),
        fingerprint: Fingerprint {
            gpus: vec![GpuCount {
                name: "NVIDIA H100 80GB HBM3".to_string(),
                count: 8,
            }],
            ..Fingerprint::default()
        },
        has_gpu_activity: true,
        timeline: Breakdown::default(),
        steps: Vec::new(),
        ops: (0..ops)
            .map(|i| {
                op(
                    format!("aten::op_number_{i:03}_with_a_long_name"),
                    (1 + i) as f64 * (1.0 + (run % 7) as f64 / 100.0),
                )
            })
            .collect(),
        short_kernels: ShortKernelCounts::default(),
        idle: IdleCounts::default(),
        anomalies: AnomalyCounts::default(),
        coverage: None,
        inference_steps: Vec::new(),
        phase_ops: Vec::new(),
        ranks: Vec::new(),
        kernel_families: Vec::new(),
    }
}

fn mark(label: &str, index: usize) -> ChangeMark {
    ChangeMark {
        label: label.to_string(),
        step: Some(Step {
            index,
            before: 1000.0,
            after: 1040.0,
        }),
    }
}

/// 1,000 runs of a workload with 200 ops each, and a pair of 1,000
/// comparisons.
fn big_input() -> SiteInput {
    let runs: Vec<(EntryMeta, Snapshot)> = (0..1000)
        .map(|i| {
            (
                entry(
                    i,
                    1000.0 + (i % 13) as f64 * 3.217 + if i >= 700 { 40.0 } else { 0.0 },
                ),
                snapshot(i, 200),
            )
        })
        .collect();
    let mut workload = WorkloadInput::from_runs("train", &runs, TOP_OPS);
    workload.change = Some(mark("regression", 700));
    workload.ops[0].change = Some(mark("suspicious", 300));
    let pair = PairInput {
        name: "train: H100 → MI300X".to_string(),
        runs: (0..1000)
            .map(|i| {
                let e = entry(i, 0.0);
                PairRun {
                    commit: e.commit,
                    time: e.time,
                    run_url: e.run_url,
                }
            })
            .collect(),
        ops: (0..TOP_OPS)
            .map(|o| RatioSeries {
                op: format!("aten::op_{o}"),
                ratios: (0..1000)
                    .map(|i| (i % 17 != 0).then(|| 1.2345 + (i % 11) as f64 / 1000.0))
                    .collect(),
                expected: Some(1.5),
                change: None,
            })
            .collect(),
    };
    SiteInput {
        repository_url: Some(REPO.to_string()),
        footer: "made by a test".to_string(),
        workloads: vec![workload],
        pairs: vec![pair],
    }
}

/// Every value of `attribute="…"` in a page.
fn attribute_values<'a>(page: &'a str, attribute: &str) -> Vec<&'a str> {
    let needle = format!(" {attribute}=\"");
    page.match_indices(&needle)
        .map(|(at, _)| {
            let rest = &page[at + needle.len()..];
            &rest[..rest.find('"').expect("closed attribute")]
        })
        .collect()
}

/// `target` (relative to the page at `from`) as a path from the site root.
fn resolve(from: &str, target: &str) -> String {
    let mut parts: Vec<&str> = from.split('/').collect();
    parts.pop();
    for piece in target.split('/') {
        match piece {
            ".." => {
                parts.pop();
            }
            "." => {}
            other => parts.push(other),
        }
    }
    parts.join("/")
}

#[test]
fn a_thousand_runs_of_two_hundred_ops_stay_under_two_mib() {
    let input = big_input();
    assert_eq!(input.workloads[0].ops.len(), TOP_OPS);
    assert_eq!(
        input.workloads[0].ops[0].name,
        "aten::op_number_199_with_a_long_name"
    );
    let files = site(&input);
    let total: usize = files.iter().map(|f| f.contents.len()).sum();
    assert!(total <= 2 * 1024 * 1024, "the site takes {total} bytes");
    // Each run is in its page's table once (plus its link), not per chart.
    let page = &files
        .iter()
        .find(|f| f.path == "workloads/train.html")
        .expect("page")
        .contents;
    assert_eq!(page.matches("<tr").count(), 1001);
    assert_eq!(page.matches("<figure").count(), 1 + TOP_OPS);
}

#[test]
fn pages_link_out_only_to_runs_and_commits_and_reference_only_site_files() {
    let mut input = big_input();
    input.workloads[0].runs.truncate(50);
    input.workloads[0].runs[3].run_url = Some("javascript:alert(1)".to_string());
    input.workloads.push(WorkloadInput {
        workload: "<script>x</script>".to_string(),
        ..WorkloadInput::default()
    });
    let files = site(&input);
    let paths: BTreeSet<&str> = files.iter().map(|f| f.path.as_str()).collect();
    let allowed: BTreeSet<String> = input
        .workloads
        .iter()
        .flat_map(|w| w.runs.iter())
        .flat_map(|r| {
            [
                r.run_url.clone().unwrap_or_default(),
                format!("{REPO}/commit/{}", r.commit),
            ]
        })
        .chain(
            input
                .pairs
                .iter()
                .flat_map(|p| p.runs.iter())
                .flat_map(|r| {
                    [
                        r.run_url.clone().unwrap_or_default(),
                        format!("{REPO}/commit/{}", r.commit),
                    ]
                }),
        )
        .collect();
    for file in files.iter().filter(|f| f.path.ends_with(".html")) {
        assert!(
            !file.contents.contains("<script>x"),
            "{}: unescaped name",
            file.path
        );
        assert!(
            !file.contents.contains("javascript:"),
            "{}: a script link",
            file.path
        );
        let targets = attribute_values(&file.contents, "src")
            .into_iter()
            .chain(attribute_values(&file.contents, "href"));
        let mut links = 0;
        for target in targets {
            if target.contains("://") || target.starts_with("//") {
                assert!(allowed.contains(target), "{}: external {target}", file.path);
                links += 1;
            } else {
                let resolved = resolve(&file.path, target);
                assert!(
                    paths.contains(resolved.as_str()),
                    "{}: {target} is not in the site",
                    file.path
                );
            }
        }
        if file.path.starts_with("workloads/train") {
            assert_eq!(links, 50 + 49, "50 commits and 49 runs");
        }
    }
    assert!(paths.contains("workloads/script-x-script.html"));
    assert!(paths.contains("assets/uPlot-LICENSE.txt"));
}

#[test]
fn a_workload_page_marks_its_step_environment_changes_and_band() {
    let files = site(&big_input());
    let page = &files
        .iter()
        .find(|f| f.path == "workloads/train.html")
        .expect("page")
        .contents;
    // PyTorch 2.5.1 → 2.6.0 at run 601.
    assert_eq!(page.matches("<tr data-env>").count(), 1);
    assert!(page.contains("<tr data-env><td>601</td>"));
    assert!(page.contains("data-label=\"regression\" data-step=\"700\""));
    assert!(page.contains("data-label=\"suspicious\" data-step=\"300\""));
    assert!(
        page.contains("step at run #701 (commit <code>000002bc</code>): 1000 µs → 1040 µs (+4.0%)")
    );
    // Two levels, each its own band.
    assert!(page.contains("data-band=\"[[0,699,"), "{}", &page[..2000]);
    assert!(page.contains("],[700,999,"));
    let index = &files
        .iter()
        .find(|f| f.path == "index.html")
        .expect("index")
        .contents;
    assert!(index.contains("<a href=\"workloads/train.html\">train</a>"));
    // The label carries its step's change, and the latest value its unit.
    assert!(index.contains("<span class=\"badge regression\">regression +4.0%</span>"));
    assert!(index.contains("latest (per step)"));
    assert!(index.contains("<a href=\"pairs/train-h100-mi300x.html\">"));
}

#[test]
fn durations_carry_a_unit_that_keeps_them_readable() {
    use super::html::duration;
    assert_eq!(duration(552_189.0), "552.2 ms");
    assert_eq!(duration(87.0), "87.00 µs");
    assert_eq!(duration(1_500_000.0), "1.500 s");
    assert_eq!(duration(999.9), "999.9 µs");
    assert_eq!(duration(f64::NAN), "");
}

#[test]
fn a_pair_page_counts_only_present_ratios() {
    let files = site(&big_input());
    let page = &files
        .iter()
        .find(|f| f.path == "pairs/train-h100-mi300x.html")
        .expect("pair")
        .contents;
    let present = (0..1000).filter(|i| i % 17 != 0).count();
    assert_eq!(
        attribute_values(page, "data-points"),
        vec![present.to_string(); TOP_OPS]
    );
    assert!(page.contains("data-expected=\"1.500\""));
}

#[test]
fn the_band_splits_at_the_step_and_ignores_an_outlier() {
    let mut values: Vec<Option<f64>> = (0..20)
        .map(|i| Some(if i < 10 { 100.0 } else { 110.0 } + (i % 2) as f64))
        .collect();
    values[4] = Some(500.0);
    values[7] = None;
    let segments = band(&values, Some(10));
    assert_eq!(segments.len(), 2);
    assert_eq!((segments[0].start, segments[0].end), (0, 9));
    assert!(
        segments[0].high < 106.0 && segments[0].low > 95.0,
        "{segments:?}"
    );
    assert!(segments[1].low > 105.0, "{segments:?}");
    assert_eq!(band(&values, None).len(), 1);
    assert!(band(&[], Some(3)).is_empty());
}

#[test]
fn names_are_escaped_and_slugs_unique() {
    let input = SiteInput {
        workloads: ["a b", "a-b", "A/B"]
            .iter()
            .map(|name| WorkloadInput {
                workload: name.to_string(),
                ..WorkloadInput::default()
            })
            .collect(),
        ..SiteInput::default()
    };
    let paths: Vec<String> = site(&input)
        .into_iter()
        .map(|f| f.path)
        .filter(|p| p.starts_with("workloads/"))
        .collect();
    assert_eq!(
        paths,
        vec![
            "workloads/a-b.html",
            "workloads/a-b-2.html",
            "workloads/a-b-3.html"
        ]
    );
    assert_eq!(
        html::esc("<a href='x'>&\""),
        "&lt;a href=&#39;x&#39;&gt;&amp;&quot;"
    );
    assert_eq!(html::number(1234.5678), "1235");
    assert_eq!(html::number(0.000_012_34), "0.000012");
    assert_eq!(html::number(1.23456), "1.235");
}
