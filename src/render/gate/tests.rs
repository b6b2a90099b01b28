//! Tests of the gate's outputs: snapshots of the comment, the summary and the
//! terminal table, escaping of hostile trace text, size fitting and
//! template overrides.

use super::chart::{chart, fenced_diff};
use super::finding::headline_text;
use super::*;
use crate::gate::judge::verdict_groups;
use crate::gate::verdict::{
    Counts, EnvironmentSummary, Finding, FindingGroup, FindingKind, FindingPriority, OpRef,
    Outcome, Severity, TimelineRow, VERDICT_SCHEMA_VERSION, Verdict, WorkloadSummary,
};
use crate::render::text::escape;

pub(super) fn finding(name: &str, severity: Severity, kind: FindingKind, impact: f64) -> Finding {
    Finding {
        rule: "regression".to_string(),
        severity,
        kind,
        workload: "bert".to_string(),
        op: Some(OpRef {
            name: name.to_string(),
            input_dims: "((512, 768), (768, 768))".to_string(),
            input_type: "('c10::BFloat16', 'c10::BFloat16')".to_string(),
            input_strides: "((768, 1), (1, 768))".to_string(),
            category: "GEMM".to_string(),
            module_path: Some("Bert_0/Linear_0".to_string()),
        }),
        metric: "median kernel time per call".to_string(),
        baseline: Some(100.0),
        candidate: Some(100.0 * (1.0 + impact / 10.0)),
        unit: "µs".to_string(),
        delta_percent: Some(impact * 10.0),
        interval_percent: Some((impact * 8.0, impact * 12.0)),
        expected_ratio: None,
        limit: Some(10.0),
        impact_percent: Some(impact),
        priority: FindingPriority::High,
        message: format!("{name} is {:.0}% slower per call", impact * 10.0),
        path_a: None,
        path_b: None,
        kernel_diff: None,
        replay_package: None,
        accepted: None,
        statistics: Default::default(),
    }
}

pub(super) fn verdict(findings: Vec<Finding>) -> Verdict {
    let side = |gpus: &str, runtime: &str| EnvironmentSummary {
        gpus: gpus.to_string(),
        hardware: None,
        runtime: Some(runtime.to_string()),
        pytorch: Some("2.5.1".to_string()),
        distributed: None,
        runs: 1,
    };
    let mut verdict = Verdict {
        schema_version: VERDICT_SCHEMA_VERSION,
        schema_minor: 1,
        tracegate_version: "0.1.0".to_string(),
        outcome: if findings.iter().any(|f| f.severity == Severity::Fail) {
            Outcome::Fail
        } else {
            Outcome::Pass
        },
        headline: "❌ 1 regression fails the gate".to_string(),
        counts: Counts {
            regressions: 1,
            warnings: 1,
            failures: 1,
            improvements: 1,
            unchanged: 40,
            new: 0,
            missing: 0,
            failing_groups: 1,
            inconclusive_groups: 0,
            warning_groups: 1,
            accepted: 0,
        },
        workloads: vec![WorkloadSummary {
            name: "bert".to_string(),
            baseline: side("NVIDIA H100 80GB HBM3", "CUDA 12.4"),
            candidate: side("NVIDIA H100 80GB HBM3", "CUDA 12.6"),
            cross_platform: false,
            timeline: vec![
                TimelineRow {
                    metric: "total_time".to_string(),
                    baseline_us: 3907.8,
                    candidate_us: 4210.2,
                    delta_percent: Some(7.74),
                },
                TimelineRow {
                    metric: "idle_time".to_string(),
                    baseline_us: 598.4,
                    candidate_us: 611.0,
                    delta_percent: Some(2.1),
                },
            ],
            matched: 43,
            unchanged: 40,
            notes: vec!["one sample per op: no confidence interval".to_string()],
        }],
        findings,
        groups: Vec::new(),
        policy: "policies/default.yaml".to_string(),
    };
    verdict.sort_findings();
    verdict
}

pub(super) fn small_verdict() -> Verdict {
    let mut regression = finding("aten::mm", Severity::Fail, FindingKind::Regression, 3.1);
    regression.priority = FindingPriority::Critical;
    regression.path_a = Some("Fuse the bias add into the GEMM epilogue.".to_string());
    regression.path_b = Some("Replay the GEMM and tune its kernel for this shape.".to_string());
    regression.replay_package = Some("replay/aten_mm_0.zip".to_string());
    let mut selection = finding(
        "aten::bmm",
        Severity::Warn,
        FindingKind::KernelSelection,
        0.4,
    );
    selection.kernel_diff = Some(
        "--- baseline\n+++ candidate\n@@ -1 +1 @@\n-sm90_xmma_gemm_bf16_128x128\n+cutlass_80_wmma_tensorop_bf16_s161616gemm_32x32\n"
            .to_string(),
    );
    let mut improvement = finding(
        "aten::softmax",
        Severity::Info,
        FindingKind::Improvement,
        -1.2,
    );
    improvement.priority = FindingPriority::Medium;
    improvement.rule = "improvement".to_string();
    verdict(vec![improvement, selection, regression])
}

/// [`small_verdict`] with two more `aten::mm` shapes: the same dims with the
/// other operand transposed, and other dims; each shape with its own Δ and
/// interval, and notes that fit findings with intervals.
fn grouped_verdict() -> Verdict {
    let mut v = small_verdict();
    let regression = v
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::Regression)
        .unwrap()
        .clone();
    let mut transposed = regression.clone();
    transposed.op.as_mut().unwrap().input_strides = "((768, 1), (768, 1))".to_string();
    transposed.candidate = Some(130.0);
    transposed.delta_percent = Some(30.0);
    transposed.interval_percent = Some((27.1, 33.2));
    transposed.impact_percent = Some(2.0);
    transposed.replay_package = Some("replay/aten_mm_1.zip".to_string());
    let mut other = regression.clone();
    other.op.as_mut().unwrap().input_dims = "((512, 3072), (3072, 768))".to_string();
    other.candidate = Some(118.0);
    other.delta_percent = Some(18.0);
    other.interval_percent = Some((9.5, 26.4));
    other.impact_percent = Some(1.0);
    other.replay_package = None;
    v.findings.extend([transposed, other]);
    v.workloads[0].notes =
        vec!["1 matched op row launches a different kernel sequence".to_string()];
    v.sort_findings();
    v.counts.failures = 3;
    v.counts.regressions = 3;
    v
}

#[test]
fn comment_snapshot() {
    let text = render_comment(&grouped_verdict(), "default", None).unwrap();
    insta::assert_snapshot!(text);
}

#[test]
fn each_shape_row_shows_its_own_interval() {
    let text = render_comment(&grouped_verdict(), "default", None).unwrap();
    for (shape, delta, interval) in [
        (
            "((512, 768), (768, 768)) **NT**",
            "+31.0%",
            "+24.8% … +37.2%",
        ),
        (
            "((512, 768), (768, 768)) **NN**",
            "+30.0%",
            "+27.1% … +33.2%",
        ),
        ("((512, 3072), (3072, 768))", "+18.0%", "+9.5% … +26.4%"),
    ] {
        let row = text
            .lines()
            .find(|l| l.starts_with(&format!("| {shape} |")))
            .unwrap_or_else(|| panic!("no row for {shape}:\n{text}"));
        assert!(
            row.contains(&format!("| {delta} | {interval} |")),
            "{shape}: {row}"
        );
    }
}

/// Two workloads, one of them cross-platform; warnings only.
#[test]
fn comment_snapshot_cross_platform() {
    let mut ratio = finding(
        "aten::_flash_attention_forward",
        Severity::Warn,
        FindingKind::UnexpectedRatio,
        1.5,
    );
    ratio.workload = "llama".to_string();
    ratio.expected_ratio = Some(0.74);
    ratio.rule = "cross_platform.slack".to_string();
    ratio.path_b = Some(
        "Generate a replay package for the kernel team and compare the attention kernel's \
         achieved bandwidth with the candidate platform's peak."
            .to_string(),
    );
    let mut missing = finding("aten::addmm", Severity::Info, FindingKind::MissingOp, 0.0);
    missing.baseline = Some(812.0);
    missing.candidate = None;
    missing.delta_percent = None;
    missing.interval_percent = None;
    missing.impact_percent = None;
    missing.priority = FindingPriority::Low;
    missing.message = "aten::addmm ran only in the baseline".to_string();
    let mut v = verdict(vec![ratio, missing]);
    v.outcome = Outcome::Pass;
    v.headline = "⚠️ 1 warning".to_string();
    v.counts = Counts {
        regressions: 0,
        warnings: 1,
        failures: 0,
        improvements: 0,
        unchanged: 80,
        new: 0,
        missing: 1,
        failing_groups: 0,
        inconclusive_groups: 0,
        warning_groups: 1,
        accepted: 0,
    };
    let mut llama = v.workloads[0].clone();
    llama.name = "llama".to_string();
    llama.cross_platform = true;
    llama.candidate.gpus = "8 × AMD Instinct MI300X".to_string();
    llama.candidate.hardware = Some("mi300x".to_string());
    llama.baseline.hardware = Some("h100-sxm".to_string());
    llama.candidate.runtime = Some("ROCm 6.2".to_string());
    llama.candidate.distributed = Some("rank 0 of 8".to_string());
    llama.notes.clear();
    v.workloads.push(llama);
    let text = render_comment(&v, "default", None).unwrap();
    insta::assert_snapshot!(text);
}

#[test]
fn summary_snapshot() {
    let text = render_summary(&grouped_verdict(), None).unwrap();
    insta::assert_snapshot!(text);
}

#[test]
fn headlines_lose_their_status_prefix() {
    assert_eq!(
        headline_text("❌ tracegate: 2 failing findings (2 regressions): x"),
        "2 failing findings (2 regressions): x"
    );
    assert_eq!(headline_text("⚠️ 1 warning"), "1 warning");
    assert_eq!(headline_text("no icon"), "no icon");
}

#[test]
fn marker_keys_are_sanitised() {
    assert_eq!(comment_marker("default"), "<!-- tracegate:default -->");
    assert_eq!(comment_marker("a-->b\nc"), "<!-- tracegate:a--_b_c -->");
    assert_eq!(comment_marker(""), "<!-- tracegate:default -->");
    let text = render_comment(&small_verdict(), "nightly/h100", None).unwrap();
    assert!(text.starts_with("<!-- tracegate:nightly/h100 -->\n"));
}

#[test]
fn escapes_hostile_trace_strings() {
    let hostile = "k|<script>alert(1)</script> @someone `x` ```\nnew line #12 ~~s~~ $x$";
    let escaped = escape(hostile);
    assert!(!escaped.contains('\n'));
    assert!(!escaped.contains('<'));
    assert!(!escaped.contains('`'));
    assert!(escaped.contains("\\|"));
    assert!(escaped.contains("@\u{200d}someone"));
    assert!(escaped.contains("#\u{200d}12"));
    assert!(escaped.contains("\\~\\~s\\~\\~"));
    assert!(escaped.contains("\\$x\\$"));
    assert_eq!(escape("a\u{202e}b\u{7}c"), "ab c");

    let mut f = finding(hostile, Severity::Fail, FindingKind::KernelSelection, 2.0);
    f.op.as_mut().unwrap().input_dims = "((1,)) | <img src=x> @dev".to_string();
    f.message = "slower @team <b>bold</b>\n| injected | row |".to_string();
    f.path_a = Some("see #123 and @octocat".to_string());
    f.kernel_diff = Some(format!("-{hostile}\n+kernel_with_````_backticks\n"));
    let text = render_comment(&verdict(vec![f]), "default", None).unwrap();
    let (prose, code) = split_code(&text);
    assert!(!prose.contains("<script>"));
    assert!(!prose.contains("<img"));
    assert!(!prose.contains("<b>"));
    for mention in ["@someone", "@dev", "@team", "@octocat"] {
        assert!(!prose.contains(mention), "{mention} would notify");
    }
    assert!(!prose.contains("#123"));
    // Every table row still has the header's number of cells (six).
    for line in prose.lines().filter(|l| l.starts_with("| ❌")) {
        assert_eq!(unescaped_pipes(line), 7, "{line}");
    }
    // The diff stays inside its block: the fence is longer than the
    // longest backtick run in it.
    assert!(text.contains("`````diff\n"), "{text}");
    assert!(code.contains("+kernel_with_````_backticks\n"), "{code}");
    assert!(code.contains("-k|<script>"), "{code}");
    assert!(!prose.contains("kernel_with_"), "{prose}");
}

/// The text outside fenced code blocks, and the text inside them.
fn split_code(text: &str) -> (String, String) {
    let (mut prose, mut code) = (String::new(), String::new());
    let mut fence: Option<usize> = None;
    for line in text.lines() {
        let ticks = line.chars().take_while(|&c| c == '`').count();
        match fence {
            None if ticks >= 3 => fence = Some(ticks),
            Some(open) if ticks >= open && line.trim_end().len() == ticks => fence = None,
            Some(_) => {
                code.push_str(line);
                code.push('\n');
            }
            None => {
                prose.push_str(line);
                prose.push('\n');
            }
        }
    }
    (prose, code)
}

fn unescaped_pipes(line: &str) -> usize {
    let mut count = 0;
    let mut escaped = false;
    for c in line.chars() {
        match c {
            '\\' if !escaped => escaped = true,
            '|' if !escaped => count += 1,
            _ => escaped = false,
        }
        if c != '\\' {
            escaped = false;
        }
    }
    count
}

#[test]
fn fences_outgrow_backtick_runs() {
    assert!(fenced_diff("-a\n+b\n").starts_with("```diff\n"));
    assert!(fenced_diff("-a```b\n").starts_with("````diff\n"));
    let long: String = (0..500).map(|i| format!("+kernel_{i}\n")).collect();
    let block = fenced_diff(&long);
    assert!(block.contains("… 420 more lines"));
}

#[test]
fn kernel_diff_block_shows_control_characters_as_escapes() {
    let block = fenced_diff("-k\u{1b}[31m\u{202e}abc\r\n+k\u{2067}x\u{0}\n");
    assert_eq!(
        block,
        "```diff\n-k\\u{1b}[31m\\u{202e}abc\n+k\\u{2067}x\\u{0}\n```"
    );
}

#[test]
fn comment_breaks_links_references_and_shortcodes() {
    let name = "aten::x::mm https://evil.example www.evil.example GH-9 a/b#4 :rocket: @team";
    let mut f = finding(name, Severity::Fail, FindingKind::Regression, 2.0);
    f.message = format!("{name} is slower");
    let text = render_comment(&verdict(vec![f]), "default", None).unwrap();
    // The Mermaid labels keep only a safe ASCII set; code shows no links.
    let (prose, _) = split_code(&text);
    for trigger in [
        "https://", "www.evil", "GH-9", "#4", ":rocket:", "@team", "::x::",
    ] {
        assert!(!prose.contains(trigger), "{trigger} in {prose}");
    }
    assert!(prose.contains("https:\u{200d}//evil.example"), "{prose}");
}

#[test]
fn huge_verdicts_fit_github_limits() {
    let long_kernel = format!(
        "void at::native::{}<float, 128>",
        "very_long_kernel_name_".repeat(20)
    );
    let findings: Vec<Finding> = (0..5_000)
        .map(|i| {
            let severity = match i % 3 {
                0 => Severity::Fail,
                1 => Severity::Warn,
                _ => Severity::Info,
            };
            let mut f = finding(
                &format!("aten::op_{i}_{long_kernel}"),
                severity,
                FindingKind::Regression,
                (i % 97) as f64 / 10.0 + if i == 4_242 { 50.0 } else { 0.0 },
            );
            if i % 5 == 0 {
                f.kind = FindingKind::KernelSelection;
                f.kernel_diff = Some(format!("-{long_kernel}_a\n+{long_kernel}_b\n"));
            }
            f.message = format!("{long_kernel} got slower");
            f
        })
        .collect();
    let v = verdict(findings);
    let text = render_comment(&v, "default", None).unwrap();
    assert!(
        text.encode_utf16().count() <= COMMENT_LIMIT,
        "{}",
        text.len()
    );
    assert!(text.starts_with("<!-- tracegate:default -->\n"));
    assert!(text.contains("> [!NOTE]"));
    assert!(text.contains("info lines"));
    assert!(text.contains("flagged lines (those with the least impact)"));
    assert!(text.contains("`report.json` has everything"));
    // The largest impact stays.
    assert!(text.contains("aten::op\\_4242\\_"));
    // Not needlessly short either.
    assert!(text.encode_utf16().count() > COMMENT_LIMIT - 2_000);

    let summary = render_summary(&v, None).unwrap();
    assert!(summary.len() <= SUMMARY_LIMIT);
}

/// A temporary template directory holding `file`.
fn template_dir(file: &str, source: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(file), source).unwrap();
    dir
}

#[test]
fn minimal_fallback_when_nothing_else_fits() {
    let dir = template_dir("comment.md.j2", "{% for i in range(70000) %}x{% endfor %}");
    let text = render_comment(&small_verdict(), "default", Some(dir.path())).unwrap();
    assert!(text.encode_utf16().count() <= COMMENT_LIMIT);
    assert!(text.contains("holds only the verdict"));
    assert!(text.starts_with("<!-- tracegate:default -->\n## ❌ tracegate: fail"));
}

#[test]
fn template_dir_overrides_and_escapes_by_default() {
    let dir = template_dir(
        "comment.md.j2",
        "custom {{ status }} {% for f in flagged %}[{{ f.op }}]{% endfor %} {{ f_raw|md }}\n",
    );
    let mut v = small_verdict();
    v.findings[0].op.as_mut().unwrap().name = "<b>@x|y".to_string();
    let err = render_comment(&v, "k", Some(dir.path())).unwrap_err();
    assert!(err.to_string().contains("f_raw"), "{err}");

    // Values are escaped without asking; `md` escapes explicitly, once.
    let source = "custom {{ status }} {% for f in flagged %}[{{ f.op }}]{% endfor %} \
         {{ verdict.findings[0].op.name|md }} \
         {% autoescape false %}{{ flagged[0].op|md }} {{ flagged[0].op }}{% endautoescape %}\n";
    std::fs::write(dir.path().join("comment.md.j2"), source).unwrap();
    let text = render_comment(&v, "k", Some(dir.path())).unwrap();
    let escaped = "&lt;b&gt;@\u{200d}x\\|y";
    assert_eq!(
        text,
        format!(
            "<!-- tracegate:k -->\ncustom fail [{escaped}][aten::bmm] {escaped} {escaped} <b>@x|y"
        )
    );
    // No summary.md.j2 in the directory: the embedded one is used.
    let summary = render_summary(&v, Some(dir.path())).unwrap();
    assert!(summary.starts_with("## ❌ tracegate: fail"));
}

#[test]
fn unknown_variables_are_errors_naming_them() {
    let dir = template_dir(
        "summary.md.j2",
        "line one\n{{ verdict.outcome }} {{ no_such_variable }}\n",
    );
    let err = render_summary(&small_verdict(), Some(dir.path())).unwrap_err();
    let message = err.to_string();
    assert!(message.contains("no_such_variable"), "{message}");
    assert!(message.contains("summary.md.j2:2:"), "{message}");

    std::fs::write(dir.path().join("summary.md.j2"), "{% if %}").unwrap();
    let err = render_summary(&small_verdict(), Some(dir.path())).unwrap_err();
    assert!(err.to_string().contains("syntax error"), "{err}");
}

#[test]
fn report_json_round_trips() {
    let v = small_verdict();
    let text = render_report_json(&v);
    assert!(text.ends_with("}\n"));
    let back: Verdict = serde_json::from_str(&text).unwrap();
    assert_eq!(back, v);
}

#[test]
fn chart_labels_name_op_and_shape() {
    let mut a = finding(
        "aten::mm\"]\n```",
        Severity::Fail,
        FindingKind::Regression,
        2.0,
    );
    a.delta_percent = Some(-30.0);
    a.candidate = Some(70.0);
    let mut b = a.clone();
    b.op.as_mut().unwrap().input_dims = "((8, 16), (16, 32))".to_string();
    let mut c = finding("aten::bmm", Severity::Warn, FindingKind::Regression, 1.0);
    c.op.as_mut().unwrap().input_dims = "((4, 64, 64), (4, 64, 64))".to_string();
    let v = verdict(vec![a, b, c]);
    let groups = verdict_groups(&v);
    let refs: Vec<&FindingGroup> = groups.iter().collect();
    let text = chart(&refs, &v.findings);
    assert!(
        text.contains("x-axis [\"aten::mm?????? 2 shapes\", \"aten::bmm 4x64x64 4x64x64\"]"),
        "{text}"
    );
    assert!(text.contains("bar [70.0, 110.0]"), "{text}");
    assert!(text.contains("0 --> 130"), "{text}");
    assert_eq!(text.matches("```").count(), 2);
    assert_eq!(chart(&refs[..1], &v.findings), "");
}

/// A failing regression on `name` changed by `delta` %: one chart bar.
fn bar(name: &str, delta: f64) -> Finding {
    let mut f = finding(name, Severity::Fail, FindingKind::Regression, 1.0);
    f.delta_percent = Some(delta);
    f
}

#[test]
fn an_outlier_bar_is_cut_and_named_not_stretching_the_chart() {
    let v = verdict(vec![
        bar("aten::mm", 15_016.7),
        bar("aten::bmm", 20.0),
        bar("aten::add", 10.0),
    ]);
    let groups = verdict_groups(&v);
    let refs: Vec<&FindingGroup> = groups.iter().collect();
    let text = chart(&refs, &v.findings);
    // The axis follows the bulk (3 × the median bar), the outlier is cut
    // there and says its real change, in its label and under the chart.
    assert!(text.contains("0 --> 400"), "{text}");
    assert!(text.contains("bar [360.0, 120.0, 110.0]"), "{text}");
    assert!(text.contains("+15017% cut"), "{text}");
    assert!(text.contains("Bars cut at 360% of baseline"), "{text}");
}

#[test]
fn a_cut_bar_whose_change_is_longer_than_its_label_still_renders() {
    // Regression (fuzzed): a +1e300% change's "cut" suffix is longer than a
    // Mermaid label, and the label's room was computed by a subtraction
    // that overflowed.
    let v = verdict(vec![
        bar("aten::mm", 1e300),
        bar("aten::bmm", 20.0),
        bar("aten::add", 10.0),
    ]);
    let groups = verdict_groups(&v);
    let refs: Vec<&FindingGroup> = groups.iter().collect();
    let text = chart(&refs, &v.findings);
    assert!(text.contains("% cut"), "{text}");
    assert!(text.contains("bar [360.0, 120.0, 110.0]"), "{text}");
}

#[test]
fn rows_name_the_interval_the_per_and_the_limit_unit() {
    use super::finding::Row;
    use crate::gate::verdict::{FindingStatistics, IntervalKind, Per, SampleCounts};
    let mut f = finding("aten::mm", Severity::Warn, FindingKind::Regression, 2.0);
    f.limit = Some(5.0);
    f.statistics = FindingStatistics {
        per: Some(Per::Step),
        limit_unit: Some("%".to_string()),
        interval_kind: Some(IntervalKind::Range),
        confidence: None,
        samples: Some(SampleCounts {
            per: Per::Step,
            baseline: 3,
            candidate: 3,
        }),
        inconclusive: true,
        min_detectable_effect_percent: Some(31.6),
        expected_learned: None,
        single_sample_noise: None,
        efficiency_percent: None,
    };
    let row = Row::new(&f);
    assert_eq!(row.baseline, "100.0 µs/step");
    assert_eq!(row.per, "per step");
    assert_eq!(row.limit, "5.0%");
    assert_eq!(
        row.interval,
        "+16.0% … +24.0% (range over 3 steps), inconclusive (detects ≥ +32%)"
    );
    f.statistics.interval_kind = Some(IntervalKind::Confidence);
    f.statistics.confidence = Some(0.95);
    f.statistics.inconclusive = false;
    assert_eq!(Row::new(&f).interval, "+16.0% … +24.0% (95% interval)");
    f.interval_percent = None;
    f.statistics.samples = Some(SampleCounts {
        per: Per::Call,
        baseline: 1,
        candidate: 4,
    });
    assert_eq!(Row::new(&f).interval, "one call on a side");
    f.statistics.limit_unit = Some("×".to_string());
    f.limit = Some(1.3);
    assert_eq!(Row::new(&f).limit, "×1.30");
}
