//! Render safety (docs/RELIABILITY.md, "Output"): trace strings reach a
//! terminal, a CI log, a Markdown document or a spreadsheet only as inert
//! text; long and many names cost linear time; and a fuzzed verdict renders
//! within GitHub's limits. Each test is named after the defect it reproduces.

use std::path::Path;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use serde_json::json;
use tracegate::analysis::analyse;
use tracegate::analysis::profile::Profile;
use tracegate::gate::compare::{self, CompareOptions};
use tracegate::gate::judge::{self, Workload};
use tracegate::gate::policy::Policy;
use tracegate::gate::snapshot::Snapshot;
use tracegate::gate::verdict::{Finding, FindingKind, FindingPriority, Severity, Verdict};
use tracegate::render::terminal::Style;
use tracegate::render::{self, actions, gate};
use tracegate::trace::{self, link};

use crate::util::{Csv, tracegate};

/// Everything a name has been seen to carry: terminal controls (OSC title,
/// clear screen, bell, NUL, a C1 CSI), line breaks that start workflow
/// commands, the legacy `##[` form, bidi overrides and isolates, and what
/// GitHub Markdown turns into mentions, references, links, HTML or emoji.
const HOSTILE: &str = "evil\u{1b}]0;pwned\u{7}\u{1b}[2J\u{0}\r\n::add-mask::secret\n\
    ::stop-commands::x\n  ::error::boom\r##[error]legacy \u{9b}31m \u{202e}gnp.exe\u{2066}x\u{2069} \
    \u{2028}@octocat #12 GH-7 owner/repo#3 https://evil.example www.evil.example \
    <img src=x onerror=alert(1)> :rocket: `code` | cell";

/// The fragments of [`HOSTILE`] that must not survive into Markdown prose.
const MARKDOWN_TRIGGERS: &[&str] = &[
    "@octocat", "#12", "GH-7", "repo#3", "https://", "www.evil", "<img", ":rocket:", "`code`",
];

/// A Kineto trace with one op per name, each launching one kernel of
/// `kernel_us` named by `kernel`, on a GPU called `device`.
fn trace_json(
    ops: &[String],
    kernel: impl Fn(usize) -> String,
    kernel_us: f64,
    device: &str,
) -> String {
    let mut events = vec![
        json!({"ph": "M", "name": "process_name", "pid": 100, "tid": 0, "args": {"name": "python"}}),
    ];
    for (i, name) in ops.iter().enumerate() {
        let (id, ts) = (i + 1, i as f64 * 1000.0);
        events.push(
            json!({"ph": "X", "cat": "cpu_op", "name": name, "pid": 100, "tid": 100,
            "ts": ts, "dur": 10, "args": {"External id": id, "Input Dims": [[4, 8]],
            "Input type": ["float"], "Input Strides": [[8, 1]], "Concrete Inputs": [""]}}),
        );
        events.push(
            json!({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
            "pid": 100, "tid": 100, "ts": ts + 1.0, "dur": 2,
            "args": {"External id": id, "correlation": id}}),
        );
        events.push(
            json!({"ph": "X", "cat": "kernel", "name": kernel(i), "pid": 0, "tid": 7,
            "ts": ts + 5.0, "dur": kernel_us,
            "args": {"External id": id, "correlation": id, "device": 0, "stream": 7}}),
        );
    }
    json!({"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": device,
        "totalGlobalMem": 85045690368u64, "computeMajor": 9, "computeMinor": 0, "numSms": 132}],
        "traceEvents": events})
    .to_string()
}

fn profile_of(label: &str, json: &str) -> Profile {
    let trace = trace::load_reader(label, json.as_bytes(), &mut || {}).expect("a valid trace");
    let tree = link::link(&trace);
    analyse::analyse(&trace, &tree)
}

fn hostile_profile() -> Profile {
    let ops = vec![HOSTILE.to_string(), format!("aten::mm {HOSTILE}")];
    let json = trace_json(&ops, |i| format!("{HOSTILE} kernel {i}"), 50.0, HOSTILE);
    profile_of(&format!("{HOSTILE}.json"), &json)
}

const PLAIN: Style = Style {
    color: false,
    width: 120,
};

/// Terminal or log text: one line per line, nothing that drives a terminal,
/// reorders text or starts a workflow command.
fn assert_inert_terminal(text: &str) {
    for c in text.chars() {
        assert!(
            c == '\n' || !(c.is_control() || ('\u{2028}'..='\u{2029}').contains(&c)),
            "raw {c:?} in:\n{text}"
        );
        assert!(
            !matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'),
            "bidi {c:?} in:\n{text}"
        );
    }
    for line in text.lines() {
        assert!(!line.trim_start().starts_with("::"), "command line: {line}");
        assert!(!line.contains("##["), "legacy command: {line}");
    }
}

/// Markdown prose (outside fenced code): no raw control or bidi character,
/// no line that starts a workflow command, and none of the hostile
/// fragments that GitHub would turn into something.
fn assert_inert_markdown(text: &str) {
    let mut prose = String::new();
    let mut fence: Option<usize> = None;
    for line in text.lines() {
        let ticks = line.chars().take_while(|&c| c == '`').count();
        match fence {
            None if ticks >= 3 => fence = Some(ticks),
            Some(open) if ticks >= open && line.trim_end().len() == ticks => fence = None,
            Some(_) => {}
            None => {
                prose.push_str(line);
                prose.push('\n');
            }
        }
    }
    for c in text.chars() {
        assert!(c == '\n' || !c.is_control(), "raw {c:?} in:\n{text}");
        assert!(
            !matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{2028}' | '\u{2029}'),
            "{c:?} in:\n{text}"
        );
    }
    for line in text.lines() {
        assert!(!line.trim_start().starts_with("::"), "command line: {line}");
    }
    for trigger in MARKDOWN_TRIGGERS {
        assert!(!prose.contains(trigger), "{trigger} survives in:\n{prose}");
    }
}

#[test]
fn long_op_name_is_shortened_before_table_layout() {
    // A 100 KB op and kernel name took comfy-table 23–29 s to lay out.
    let name = "x".repeat(100_000);
    let json = trace_json(
        std::slice::from_ref(&name),
        |_| "k".repeat(100_000),
        50.0,
        "GPU",
    );
    let profile = profile_of("long.json", &json);
    let terminal = render::terminal::render(&profile, 10, PLAIN);
    let markdown = render::markdown::render(&profile, 10);
    for text in [&terminal, &markdown] {
        assert!(text.len() < 20_000, "{} bytes", text.len());
        assert!(text.contains("xxxxx…"), "{text}");
    }
    // The full name stays in the JSON report and the CSVs.
    assert!(render::json::render(&profile).contains(&name));
    let csvs = render::csv::render_all(&profile);
    let (_, ops) = csvs.iter().find(|(n, _)| *n == "ops_summary.csv").unwrap();
    assert!(ops.contains(&name));
}

#[test]
fn control_characters_in_names_never_reach_the_terminal() {
    let profile = hostile_profile();
    let text = render::terminal::render(&profile, 10, PLAIN);
    assert_inert_terminal(&text);
    // Shown, not dropped: the reader sees that the name holds an escape.
    assert!(text.contains("evil\\u{1b}]0;pwned\\u{7}"), "{text}");
    assert!(text.contains("\\u{202e}gnp.exe"), "{text}");
    let coloured = render::terminal::render(
        &profile,
        10,
        Style {
            color: true,
            width: 80,
        },
    );
    assert!(!coloured.contains("\u{1b}]0;"), "{coloured}");
    assert!(!coloured.contains("\u{1b}[2J"), "{coloured}");
}

#[test]
fn markdown_report_neutralises_mentions_links_html_and_shortcodes() {
    let text = render::markdown::render(&hostile_profile(), 10);
    assert_inert_markdown(&text);
    assert!(text.contains("@\u{200d}octocat"), "{text}");
}

#[test]
fn csv_formula_cells_get_a_leading_quote() {
    let ops: Vec<String> = [
        "=HYPERLINK(\"http://x\",\"y\")",
        "+cmd",
        "-2+3",
        "@SUM(A1)",
        "\tx",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let profile = profile_of(
        "formula.json",
        &trace_json(&ops, |i| format!("=k{i}"), 5.0, "GPU"),
    );
    for (file, text) in render::csv::render_all(&profile) {
        let csv = Csv::parse(&text);
        for row in &csv.rows {
            for cell in row {
                let formula = cell.starts_with(['=', '+', '@', '\t', '\r'])
                    || (cell.starts_with('-') && cell.parse::<f64>().is_err());
                assert!(!formula, "{file}: formula cell {cell:?}");
            }
        }
    }
    let csvs = render::csv::render_all(&profile);
    let (_, ops) = csvs.iter().find(|(n, _)| *n == "ops_summary.csv").unwrap();
    let csv = Csv::parse(ops);
    let names: Vec<&str> = csv
        .rows
        .iter()
        .map(|r| r[csv.column("name")].as_str())
        .collect();
    assert!(
        names.contains(&"'=HYPERLINK(\"http://x\",\"y\")"),
        "{names:?}"
    );
    assert!(names.contains(&"'-2+3"), "{names:?}");
}

/// `check` of `base.json` against `cand.json`, writing into `out`.
const CHECK_ARGS: &[&str] = &[
    "check",
    "--quiet",
    "--baseline",
    "base.json",
    "--candidate",
    "cand.json",
    "--out-dir",
    "out",
];

/// Runs the binary under GitHub Actions (outputs into `dir`) and returns
/// stdout and stderr.
fn run_in_actions(dir: &Path, args: &[&str]) -> String {
    let output = tracegate()
        .args(args)
        .current_dir(dir)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_OUTPUT", dir.join("github_output"))
        .env("GITHUB_STEP_SUMMARY", dir.join("step_summary"))
        .env_remove("GITHUB_TOKEN")
        .env("COLUMNS", "100")
        .output()
        .expect("runs");
    assert!(
        output.status.code().is_some_and(|c| c <= 1),
        "{args:?}: {output:?}"
    );
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[test]
fn no_workflow_command_from_a_trace_under_github_actions() {
    let dir = tempfile::tempdir().expect("temp dir");
    let ops: Vec<String> = (0..40).map(|_| HOSTILE.to_string()).collect();
    let kernel = |_: usize| format!("{HOSTILE} kernel");
    std::fs::write(
        dir.path().join("base.json"),
        trace_json(&ops, kernel, 100.0, HOSTILE),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("cand.json"),
        trace_json(&ops, kernel, 200.0, HOSTILE),
    )
    .unwrap();
    for format in ["terminal", "markdown"] {
        let text = run_in_actions(
            dir.path(),
            &["report", "--quiet", "--format", format, "base.json"],
        );
        for line in text.lines() {
            assert!(!line.trim_start().starts_with("::"), "{format}: {line}");
            assert!(!line.contains("##["), "{format}: {line}");
        }
    }
    let text = run_in_actions(dir.path(), CHECK_ARGS);
    // Only our own annotations start with `::`, one line each, the name escaped.
    let annotations: Vec<&str> = text
        .lines()
        .filter(|l| l.trim_start().starts_with("::"))
        .collect();
    assert!(
        !annotations.is_empty(),
        "the regression is annotated:\n{text}"
    );
    for line in &annotations {
        assert!(
            line.starts_with("::error title=") || line.starts_with("::warning title="),
            "{line}"
        );
    }
    let rest: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("::"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_inert_terminal(&rest);
    for line in annotations {
        assert_inert_terminal(line.trim_start_matches("::"));
    }
    for file in ["comment.md", "summary.md"] {
        let markdown = std::fs::read_to_string(dir.path().join("out").join(file)).unwrap();
        assert_inert_markdown(&markdown);
    }
}

/// [`HOSTILE`] with what the comment's details and kernel diffs were seen
/// to let through: maths, a `<details>` tag, and a newline that forges diff
/// lines.
fn hostile_kernel(side: &str) -> String {
    format!("{HOSTILE} $$x^2$$ <details> kernel_{side}\n+forged_new\n-forged_old")
}

/// `$GITHUB_OUTPUT` text as the Actions runner parses it: a line whose
/// first `=` comes before its first `<<` is `key=value`; otherwise it is
/// `key<<DELIM`, a heredoc closed by its delimiter. No value can start a
/// key of its own.
fn assert_output_lines(outputs: &str) {
    let key_ok = |key: &str| {
        !key.is_empty()
            && key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    let mut lines = outputs.lines();
    while let Some(line) = lines.next() {
        let equals = line.find('=');
        let heredoc = line.find("<<");
        match (equals, heredoc) {
            (Some(e), h) if h.is_none_or(|h| e < h) => {
                assert!(key_ok(&line[..e]), "{line}");
            }
            (_, Some(h)) => {
                assert!(key_ok(&line[..h]), "{line}");
                let delimiter = &line[h + 2..];
                assert!(
                    lines.any(|l| l == delimiter),
                    "unclosed heredoc {line} in:\n{outputs}"
                );
            }
            _ => panic!("neither key=value nor a heredoc: {line}"),
        }
    }
}

/// One hostile name set through every channel of `check` under GitHub
/// Actions: terminal, annotations, `$GITHUB_OUTPUT` (headline included),
/// comment and summary (kernel diffs and `<summary>` lines included).
#[test]
fn every_output_channel_escapes_the_same_hostile_names() {
    let dir = tempfile::tempdir().expect("temp dir");
    let ops: Vec<String> = (0..40).map(|_| format!("{HOSTILE} $$x^2$$")).collect();
    std::fs::write(
        dir.path().join("base.json"),
        trace_json(&ops, |_| hostile_kernel("a"), 100.0, HOSTILE),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("cand.json"),
        trace_json(&ops, |_| hostile_kernel("b"), 200.0, HOSTILE),
    )
    .unwrap();
    let text = run_in_actions(dir.path(), CHECK_ARGS);
    for line in text
        .lines()
        .filter(|l| !l.starts_with("::error title=") && !l.starts_with("::warning title="))
    {
        assert_inert_terminal(&format!("{line}\n"));
    }
    // Outputs: every line is `key=value`, a heredoc's, and the headline one
    // inert line.
    let outputs = std::fs::read_to_string(dir.path().join("github_output")).unwrap();
    let headline = outputs
        .lines()
        .find(|l| l.starts_with("headline"))
        .expect("a headline output");
    assert!(headline.starts_with("headline="), "{headline}");
    assert_inert_terminal(&outputs);
    assert_output_lines(&outputs);
    for file in ["comment.md", "summary.md"] {
        let markdown = std::fs::read_to_string(dir.path().join("out").join(file)).unwrap();
        assert_inert_markdown(&markdown);
        for line in markdown.lines() {
            assert!(
                !line.starts_with("+forged") && !line.starts_with("-forged"),
                "{file}: forged diff line {line}"
            );
            if line.contains("<summary>") {
                assert!(!line.contains('$'), "{file}: maths in {line}");
                assert!(!line.contains("<details> "), "{file}: a tag in {line}");
            }
        }
    }
    let comment = std::fs::read_to_string(dir.path().join("out/comment.md")).unwrap();
    assert!(comment.contains("Kernel selection changed"), "{comment}");
    assert_inert_dashboard(dir.path(), &ops);
}

/// A file name with what a file system allows of the hostile set.
const HOSTILE_FILE: &str =
    "evil\u{1b}]0;x\u{7} <img src=x onerror=alert(1)> \u{202e}gnp $$x^2$$ `code` | cell :*?.json";

/// The dashboard channel: two runs of a workload named [`HOSTILE_FILE`]
/// whose ops and kernels are the hostile set, recorded with `history add`
/// and drawn with `history report`. Every page is inert HTML (no raw
/// control or bidi character, the hostile tag shown as text, not parsed),
/// and every file name is one an artifact upload takes.
fn assert_inert_dashboard(dir: &Path, ops: &[String]) {
    let history = dir.join("history");
    for (commit, kernel_us, side) in [("c1", 100.0, "a"), ("c2", 200.0, "b")] {
        let trace = dir.join(HOSTILE_FILE);
        std::fs::write(
            &trace,
            trace_json(ops, |_| hostile_kernel(side), kernel_us, HOSTILE),
        )
        .unwrap();
        tracegate()
            .args([
                "history", "add", "--quiet", "--branch", "main", "--commit", commit, "--dir",
            ])
            .arg(&history)
            .arg(&trace)
            .env_remove("GITHUB_SHA")
            .assert()
            .success();
    }
    let site = dir.join("site");
    tracegate()
        .args(["history", "report", "--branch", "main", "--dir"])
        .arg(&history)
        .arg("--out")
        .arg(&site)
        .env_remove("GITHUB_SERVER_URL")
        .assert()
        .success();
    let mut pages = 0;
    let mut stack = vec![site.clone()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let name = path
                .strip_prefix(&site)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_graphic() && !"\":<>|*?".contains(c)),
                "not an artifact-safe name: {name:?}"
            );
            let text = std::fs::read_to_string(&path).unwrap();
            for c in text.chars() {
                assert!(
                    matches!(c, '\n' | '\t') || !c.is_control(),
                    "{name}: raw {c:?}"
                );
                assert!(
                    !matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{2028}' | '\u{2029}'),
                    "{name}: {c:?}"
                );
            }
            assert!(
                !text.contains("<img"),
                "{name}: a hostile tag parsed as HTML"
            );
            assert!(
                !text.contains("<details> kernel"),
                "{name}: a hostile tag parsed as HTML"
            );
            pages += usize::from(text.contains("&lt;img src=x onerror=alert(1)&gt;"));
        }
    }
    assert!(
        pages >= 2,
        "the hostile names reach the index and the workload's page"
    );
}

/// The verdict of the examples (baseline against candidate), judged by the
/// default policy through the library: the real report.json the fuzzer
/// mutates.
fn example_verdict() -> &'static Verdict {
    static VERDICT: OnceLock<Verdict> = OnceLock::new();
    VERDICT.get_or_init(|| {
        let snapshot = |name: &str| {
            let path = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("examples")
                .join(name);
            let trace = trace::load_file(&path, &mut |_| {}).expect("the example loads");
            let tree = link::link(&trace);
            Snapshot::from_profile(&analyse::analyse(&trace, &tree), String::new(), 0)
        };
        let (baseline, candidate) = (snapshot("baseline.json.gz"), snapshot("candidate.json.gz"));
        let comparison = compare::compare(
            std::slice::from_ref(&baseline),
            &candidate,
            &CompareOptions::default(),
        );
        let verdict = judge::judge(
            &[Workload::Compared {
                comparison,
                candidate: &candidate,
                baseline_hardware: None,
                candidate_hardware: None,
            }],
            &Policy::default(),
        );
        assert!(!verdict.findings.is_empty(), "the examples regress");
        verdict
    })
}

/// Text the fuzzer writes into string fields: hostile fragments, arbitrary
/// Unicode, and long runs.
fn fuzz_text() -> impl Strategy<Value = String> {
    let fragment = prop_oneof![
        Just(HOSTILE.to_string()),
        Just("\n::add-mask::x".to_string()),
        Just("::error::x".to_string()),
        Just("````".to_string()),
        Just("| a | b |".to_string()),
        Just("%0A%25".to_string()),
        Just(":tada: @a/b #1 https://x www.y".to_string()),
        any::<String>(),
        "[\\x00-\\x1f\\x7f-\\x9f\u{202a}-\u{202e}\u{2066}-\u{2069}]{0,8}",
        (1usize..20_000).prop_map(|n| "é|`<".repeat(n / 4)),
    ];
    proptest::collection::vec(fragment, 1..4).prop_map(|parts| parts.concat())
}

fn fuzz_number() -> impl Strategy<Value = Option<f64>> {
    prop_oneof![
        Just(None),
        Just(Some(f64::NAN)),
        Just(Some(f64::INFINITY)),
        Just(Some(-1e300)),
        any::<f64>().prop_map(Some),
    ]
}

/// One change to the verdict.
#[derive(Clone, Debug)]
enum Mutation {
    Text(u8, usize, String),
    Number(u8, usize, Option<f64>),
    Severity(usize, u8),
    Repeat(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (any::<u8>(), any::<usize>(), fuzz_text()).prop_map(|(f, i, t)| Mutation::Text(f, i, t)),
        2 => (any::<u8>(), any::<usize>(), fuzz_number()).prop_map(|(f, i, n)| Mutation::Number(f, i, n)),
        1 => (any::<usize>(), any::<u8>()).prop_map(|(i, s)| Mutation::Severity(i, s)),
        1 => (1usize..120).prop_map(Mutation::Repeat),
    ]
}

fn apply(verdict: &mut Verdict, mutation: Mutation) {
    let n = verdict.findings.len().max(1);
    match mutation {
        Mutation::Text(field, index, text) => {
            let Some(f) = verdict.findings.get_mut(index % n) else {
                return;
            };
            let op = f.op.get_or_insert_with(Default::default);
            match field % 16 {
                0 => op.name = text,
                1 => op.input_dims = text,
                2 => op.input_type = text,
                3 => f.rule = text,
                4 => f.workload = text,
                5 => f.metric = text,
                6 => f.unit = text,
                7 => f.message = text,
                8 => op.module_path = Some(text),
                9 => f.kernel_diff = Some(format!("-{text}\n+{text}\n")),
                10 => {
                    (f.path_a, f.path_b) = (Some(text.clone()), Some(text.clone()));
                    f.replay_package = Some(text);
                }
                11 => verdict.headline = text,
                12 => verdict.policy = text,
                13 => verdict.tracegate_version = text,
                _ => {
                    let Some(w) = verdict.workloads.first_mut() else {
                        return;
                    };
                    match field / 16 % 5 {
                        0 => w.notes.push(text),
                        1 => w.baseline.gpus = text,
                        2 => w.candidate.runtime = Some(text),
                        3 => w.name = text,
                        _ => {
                            if let Some(row) = w.timeline.first_mut() {
                                row.metric = text;
                            }
                        }
                    }
                }
            }
        }
        Mutation::Number(field, index, value) => {
            if let Some(f) = verdict.findings.get_mut(index % n) {
                match field % 6 {
                    0 => f.baseline = value,
                    1 => f.candidate = value,
                    2 => f.delta_percent = value,
                    3 => f.impact_percent = value,
                    4 => f.interval_percent = value.map(|v| (v, -v)),
                    _ => f.expected_ratio = value,
                }
            }
        }
        Mutation::Severity(index, choice) => {
            if let Some(f) = verdict.findings.get_mut(index % n) {
                f.severity = [Severity::Fail, Severity::Warn, Severity::Info][choice as usize % 3];
                f.kind = [
                    FindingKind::Regression,
                    FindingKind::KernelSelection,
                    FindingKind::NewOp,
                ][choice as usize % 3];
                f.priority = [FindingPriority::Critical, FindingPriority::Low][choice as usize % 2];
            }
        }
        Mutation::Repeat(times) => {
            let copies: Vec<Finding> = verdict.findings.iter().take(3).cloned().collect();
            for _ in 0..times {
                verdict.findings.extend(copies.iter().cloned());
            }
        }
    }
}

fn fuzz_cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(24)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(fuzz_cases()))]

    /// report.json → every output channel (comment, summary, terminal,
    /// annotations, `$GITHUB_OUTPUT` with its headline): a verdict mutated
    /// from a real one never panics a renderer, the comment fits GitHub's
    /// 65,536 characters, no output carries a raw control character or a
    /// line that starts a workflow command, and every output line is a
    /// `key=value` or a heredoc's. `scripts/fuzz channels` runs it long.
    #[test]
    fn fuzzed_verdicts_render_within_limits(mutations in proptest::collection::vec(mutation(), 1..12)) {
        let mut verdict = example_verdict().clone();
        for m in mutations {
            apply(&mut verdict, m);
        }
        let start = Instant::now();
        // What `comment` reads: the verdict through report.json.
        let json = gate::render_report_json(&verdict);
        let verdict = serde_json::from_str::<Verdict>(&json).unwrap_or(verdict);
        let comment = gate::render_comment(&verdict, "default", None).expect("renders");
        prop_assert!(comment.encode_utf16().count() <= gate::COMMENT_LIMIT);
        assert_inert_markdown(&comment);
        let summary = gate::render_summary(&verdict, None).expect("renders");
        prop_assert!(summary.len() <= gate::SUMMARY_LIMIT);
        assert_inert_markdown(&summary);
        assert_inert_terminal(&gate::render_terminal(&verdict, 10, PLAIN));
        for line in actions::annotations(&verdict) {
            prop_assert!(line.starts_with("::error title=") || line.starts_with("::warning title="));
            assert_inert_terminal(line.trim_start_matches("::"));
        }
        let outputs = actions::github_output_lines(&verdict, &actions::OutputPaths::default());
        assert_inert_terminal(&outputs);
        assert_output_lines(&outputs);
        // A 20 KB unit in a terminal table cell took comfy-table 19 s; the
        // bound is a watchdog, not a benchmark: a hang fails it, a loaded machine does not.
        prop_assert!(start.elapsed() < Duration::from_secs(60), "{:?}", start.elapsed());
    }
}
