//! Policy tests: the shipped files, the defaults, the summary and the error
//! messages (pinned exactly: docs/POLICY.md quotes them).

use std::path::PathBuf;

use super::*;
use crate::gate::verdict::Severity;

fn error(text: &str) -> String {
    Policy::from_yaml(text, "policy.yaml")
        .unwrap_err()
        .to_string()
}

fn shipped(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("policies")
        .join(name)
}

/// The policy with the fields a file cannot share with another blanked.
fn comparable(mut policy: Policy) -> Policy {
    policy.label = String::new();
    policy.description = None;
    policy.source = String::new();
    policy
}

#[test]
fn shipped_policies_load() {
    for name in ["default.yaml", "cross-platform.yaml", "strict.yaml"] {
        let policy = Policy::load(&shipped(name)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(policy.version, 1, "{name}");
        assert!(policy.description.is_some(), "{name}");
        assert!(policy.label.ends_with(name));
    }
    let strict = Policy::load(&shipped("strict.yaml")).unwrap();
    assert_eq!(strict.budgets.len(), 3);
    assert_eq!(strict.kernel_selection.severity, Severity::Fail);
    assert_eq!(strict.noise.min_effect_percent, 3.0);
    let cross = Policy::load(&shipped("cross-platform.yaml")).unwrap();
    assert!(cross.timeline.is_empty());
    assert_eq!(cross.cross_platform.rules.len(), 2);
}

#[test]
fn version_alone_is_the_default_file() {
    let minimal = Policy::from_yaml("version: 1\n", "minimal.yaml").unwrap();
    assert_eq!(minimal.label, "minimal.yaml");
    assert_eq!(minimal.description, None);
    let default = Policy::default();
    assert_eq!(default.label, DEFAULT_LABEL);
    assert_eq!(comparable(minimal.clone()), comparable(default.clone()));
    let file = Policy::load(&shipped("default.yaml")).unwrap();
    assert_eq!(comparable(file), comparable(default.clone()));
    assert_eq!(init_text(), DEFAULT_YAML);
    assert_eq!(
        Policy::from_yaml(init_text(), DEFAULT_LABEL).unwrap(),
        default
    );

    // The values the docs promise.
    assert_eq!(minimal.noise, Noise::default());
    assert_eq!(minimal.noise.confidence, 0.95);
    assert_eq!(minimal.regression.severity, Severity::Fail);
    assert_eq!(minimal.improvement.severity, Severity::Info);
    assert_eq!(minimal.kernel_selection.severity, Severity::Warn);
    assert_eq!(minimal.nothing_to_compare.severity, Severity::Fail);
    assert_eq!(minimal.hardware.baseline, HardwareChoice::Detected);
    assert_eq!(minimal.hardware.candidate, HardwareChoice::Detected);
    assert_eq!(minimal.hardware.file, None);
    assert_eq!(minimal.cross_platform, CrossPlatform::default());
    assert_eq!(minimal.replay, Replay::default());
    assert_eq!(minimal.new_ops, NewOps::default());
    assert_eq!(minimal.missing_ops, MissingOps::default());
    assert!(minimal.budgets.is_empty() && minimal.ignore.is_empty());
    assert_eq!(minimal.end_to_end, EndToEnd::default());
    let timeline: Vec<String> = minimal.timeline.iter().map(|r| r.to_string()).collect();
    assert_eq!(
        timeline,
        [
            "computation_time +5% fail",
            "exposed_comm_time +10% info",
            "exposed_memcpy_time +25% warn"
        ]
    );
    assert_eq!(minimal.efficiency.len(), 4);
}

#[test]
fn partial_sections_keep_the_other_defaults() {
    let policy = Policy::from_yaml(
        "version: 1\nnoise:\n  min_effect_percent: 2\nnew_ops:\n  min_share_percent: 3\n\
         budgets:\nignore:\n",
        "p.yaml",
    )
    .unwrap();
    assert_eq!(policy.noise.min_effect_percent, 2.0);
    assert_eq!(policy.noise.confidence, 0.95);
    assert_eq!(policy.new_ops.severity, Severity::Info);
    assert_eq!(policy.new_ops.min_share_percent, 3.0);
    // An empty list value (every entry commented out) is an empty list.
    assert!(policy.budgets.is_empty() && policy.ignore.is_empty());
    // A list written replaces the default list.
    let policy = Policy::from_yaml(
        "version: 1\ntimeline:\n  - {metric: idle_percent, max: 30}\n",
        "p.yaml",
    )
    .unwrap();
    assert_eq!(policy.timeline.len(), 1);
    assert_eq!(policy.timeline[0].severity, Severity::Fail);
    assert_eq!(policy.timeline[0].to_string(), "idle_percent ≤ 30% fail");
}

#[test]
fn unknown_keys_give_line_column_and_did_you_mean() {
    let text = "version: 1\nnoise:\n  confidence: 0.9\n  min_efect_percent: 3\n";
    assert_eq!(
        error(text),
        "policy.yaml:4:3: noise: unknown field `min_efect_percent`, did you mean \
         `min_effect_percent`? (expected one of `confidence`, `min_effect_percent`, \
         `min_impact_percent`, `noise_floor_percent`, `min_time_us`, `resamples`, `seed`, \
         `false_discovery_rate`, `borrow_for_single_samples`, `single_sample_sigma_percent`, \
         `single_sample_jitter_us`, `on_unconfirmed_single_sample`)"
    );
    assert_eq!(
        error("version: 1\nbudgets:\n  - match: { name: x }\n    max_count: 3\n    max_time: 3\n"),
        "policy.yaml:5:5: budgets[0]: unknown field `max_time`, did you mean \
         `max_time_per_step_us`? (expected one of `label`, `match`, `max_time_per_step_us`, \
         `max_share_percent`, `max_regression_percent`, `max_count`, `severity`)"
    );
    assert!(
        error("version: 1\nregresion:\n  severity: fail\n")
            .starts_with("policy.yaml:2:1: unknown field `regresion`, did you mean `regression`?")
    );
    assert!(
        error("version: 1\nbudgets:\n  - match: { nme: x }\n    max_count: 3\n").starts_with(
            "policy.yaml:3:14: budgets[0].match: unknown field `nme`, did you mean `name`?"
        )
    );
    // A section's key at the top level.
    assert!(
        error("version: 1\nconfidence: 0.9\n").starts_with(
            "policy.yaml:2:1: unknown field `confidence`: it belongs under `noise:` (expected one of `version`, "
        )
    );
    // Nothing close: the list alone.
    assert!(
        error("version: 1\nnoise:\n  bogus: 1\n")
            .starts_with("policy.yaml:3:3: noise: unknown field `bogus`, expected one of ")
    );
    // Enum values too.
    assert_eq!(
        error("version: 1\nregression:\n  severity: fial\n"),
        "policy.yaml:3:13: regression.severity: unknown variant `fial`, did you mean `fail`? \
         (expected one of `fail`, `warn`, `info`)"
    );
    assert!(
        error("version: 1\nefficiency:\n  - category: GEM\n    min_percent: 3\n").starts_with(
            "policy.yaml:3:15: efficiency[0].category: unknown category `GEM`, did you mean `GEMM`?"
        )
    );
    assert!(
        error("version: 1\ntimeline:\n  - metric: busy_tme\n    max: 3\n").starts_with(
            "policy.yaml:3:13: timeline[0].metric: unknown variant `busy_tme`, did you mean `busy_time`?"
        )
    );
}

#[test]
fn wrong_types_give_line_column_and_what_was_expected() {
    assert_eq!(
        error("version: 1\nnoise:\n  min_time_us: abc\n"),
        "policy.yaml:3:16: noise.min_time_us: invalid type: string \"abc\", expected a number ≥ 0"
    );
    assert_eq!(
        error("version: 1\nnoise: 3\n"),
        "policy.yaml:2:8: noise: invalid type: integer `3`, expected a mapping"
    );
    assert_eq!(
        error("version: 1\nbudgets: 3\n"),
        "policy.yaml:2:10: budgets: invalid type: integer `3`, expected a list, each entry \
         a budget (match, and at least one limit)"
    );
    assert_eq!(
        error("version: 1\nreplay:\n  max_packages: -1\n"),
        "policy.yaml:3:17: replay.max_packages: invalid type: integer `-1`, expected a whole number ≥ 0"
    );
    assert_eq!(
        error("- a\n"),
        "policy.yaml:1:1: invalid type: sequence, expected a policy: a mapping that starts \
         with `version: 1`"
    );
}

#[test]
fn versions() {
    assert_eq!(
        error("version: 2\n"),
        "policy.yaml:1:10: version: unsupported policy version 2: this tracegate reads version 1"
    );
    assert_eq!(
        error(""),
        "policy.yaml:1:1: missing field `version`: a policy starts with `version: 1`"
    );
    assert_eq!(
        error("# nothing\nnoise: {}\n"),
        "policy.yaml:2:1: missing field `version`: a policy starts with `version: 1`"
    );
    assert!(error("version: \"1\"\n").starts_with("policy.yaml:1:10: version: invalid type"));
}

#[test]
fn values_are_checked_where_they_stand() {
    let cases = [
        (
            "version: 1\nnoise:\n  confidence: 1.5\n",
            "policy.yaml:3:15: noise.confidence: must be between 0 and 1 exclusive (0.95 for 95%), not 1.5",
        ),
        (
            "version: 1\nnoise:\n  min_effect_percent: -1\n",
            "policy.yaml:3:23: noise.min_effect_percent: must be ≥ 0, not -1",
        ),
        (
            "version: 1\nnoise:\n  resamples: 10\n",
            "policy.yaml:3:14: noise.resamples: must be at least 100 (intervals from fewer resamples are unstable), not 10",
        ),
        (
            "version: 1\nnoise:\n  false_discovery_rate: 0\n",
            "policy.yaml:3:25: noise.false_discovery_rate: must be above 0 and at most 1 (0.05 for 5%), not 0",
        ),
        (
            "version: 1\nnoise:\n  noise_floor_percent: .nan\n",
            "policy.yaml:3:24: noise.noise_floor_percent: NaN is not a finite number",
        ),
        (
            "version: 1\nnew_ops:\n  min_share_percent: 120\n",
            "policy.yaml:3:22: new_ops.min_share_percent: must be a percentage from 0 to 100, not 120",
        ),
        (
            "version: 1\ncross_platform:\n  rules:\n    - match: {category: comm}\n      ratio: 0\n",
            "policy.yaml:5:14: cross_platform.rules[0].ratio: must be > 0, not 0",
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(error(text), expected);
    }
}

#[test]
fn bad_regex_and_glob_are_located() {
    let text = "version: 1\nbudgets:\n  - label: mm\n    match:\n      name: \"re:aten::(mm\"\n    max_count: 3\n";
    assert_eq!(
        error(text),
        "policy.yaml:5:13: budgets[0].match.name: invalid regex: unclosed group"
    );
    assert_eq!(
        error("version: 1\nignore:\n  - module: \"**/Layer_[0\"\n"),
        "policy.yaml:3:13: ignore[0].module: invalid glob: unclosed character class; missing ']'"
    );
    assert_eq!(
        error("version: 1\nignore:\n  - {}\n"),
        "policy.yaml:3:5: ignore[0]: matches every op: give `match:` with at least one of name, category, shape, module"
    );
}

#[test]
fn rules_without_limits_are_errors() {
    let text = "version: 1\nbudgets:\n  - match: { name: aten::mm }\n    max_count: 3\n  - match:\n      category: GEMM\n    severity: warn\n";
    assert_eq!(
        error(text),
        "policy.yaml:5:5: budgets[1]: a budget needs a limit: max_time_per_step_us, \
         max_share_percent, max_regression_percent or max_count"
    );
    assert_eq!(
        error("version: 1\ntimeline:\n  - metric: busy_time\n"),
        "policy.yaml:3:5: timeline[0]: `busy_time` has no limit: give max_regression_percent, max or both"
    );
    assert_eq!(
        error("version: 1\ntimeline:\n  - {metric: idle_percent, max: 120}\n"),
        "policy.yaml:3:5: timeline[0]: `max` of idle_percent is a % of total time: at most 100"
    );
    assert_eq!(
        error("version: 1\ncross_platform:\n  rules:\n    - match: {category: comm}\n"),
        "policy.yaml:4:7: cross_platform.rules[0]: sets nothing: give `expected`, `ratio` or `slack_percent`"
    );
    assert_eq!(
        error(
            "version: 1\ncross_platform:\n  rules:\n    - {match: {category: comm}, expected: compute, ratio: 2}\n"
        ),
        "policy.yaml:4:7: cross_platform.rules[0]: give `expected` or `ratio`, not both"
    );
}

#[test]
fn hardware_resolves_at_load_time() {
    let policy = Policy::from_yaml(
        "version: 1\nhardware:\n  baseline: h100 sxm\n  candidate: \"base=MI300X, hbm=5\"\n",
        "p.yaml",
    )
    .unwrap();
    assert_eq!(
        policy.hardware.baseline.hardware().unwrap().name,
        "H100 SXM"
    );
    assert_eq!(policy.hardware.baseline.to_string(), "H100 SXM");
    let candidate = policy.hardware.candidate.hardware().unwrap();
    assert_eq!(candidate.name, "MI300X (custom)");
    assert_eq!(candidate.hbm_tb_s, 5.0);
    let inline = Policy::from_yaml(
        "version: 1\nhardware: {baseline: \"name=x,hbm=3,bf16=900\", candidate: Detected}\n",
        "p.yaml",
    )
    .unwrap();
    assert_eq!(inline.hardware.baseline.hardware().unwrap().name, "x");
    assert_eq!(inline.hardware.candidate, HardwareChoice::Detected);

    let message = error("version: 1\nhardware:\n  baseline: detected # or H10\n  candidate: H10\n");
    assert!(
        message.starts_with(
            "policy.yaml:4:14: hardware.candidate: unknown GPU `H10`: no catalog entry has that name; known: "
        ),
        "{message}"
    );
    assert_eq!(
        error("version: 1\nhardware:\n  baseline: \"hbm=3,bf16=x\"\n"),
        "policy.yaml:3:13: hardware.baseline: hardware spec `hbm=3,bf16=x`: key `bf16`: `x` is not a number"
    );
    assert!(
        error("version: 1\nhardware:\n  baseline: ''\n")
            .starts_with("policy.yaml:3:13: hardware.baseline: empty")
    );
}

#[test]
fn hardware_file_is_read_beside_the_policy() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("gpus.yaml"),
        "gpus:\n  - {name: Lab GPU, vendor: Acme, memory_gb: 16, hbm_tb_s: 1, peak_tflops: {matrix_bf16: 100}}\n",
    )
    .unwrap();
    let path = dir.path().join("policy.yaml");
    std::fs::write(
        &path,
        "version: 1\nhardware:\n  baseline: H100 SXM\n  candidate: lab gpu\n  file: gpus.yaml\n",
    )
    .unwrap();
    let policy = Policy::load(&path).unwrap();
    assert_eq!(
        policy.hardware.candidate.hardware().unwrap().name,
        "Lab GPU"
    );
    assert_eq!(policy.hardware.file, Some(dir.path().join("gpus.yaml")));
    assert!(policy.hardware.catalog.by_name("Lab GPU").is_some());
    assert!(policy.hardware.catalog.by_name("MI300X").is_some());

    std::fs::write(&path, "version: 1\nhardware:\n  file: none.yaml\n").unwrap();
    let message = Policy::load(&path).unwrap_err().to_string();
    let label = path.display().to_string();
    assert!(
        message.starts_with(&format!("{label}:3:9: hardware.file: ")),
        "{message}"
    );
    assert!(message.contains("none.yaml: cannot read"), "{message}");

    let message = Policy::load(&dir.path().join("missing.yaml"))
        .unwrap_err()
        .to_string();
    assert!(message.contains("missing.yaml: cannot read: "), "{message}");
}

#[test]
fn budgets_and_ignore_match_ops() {
    let policy = Policy::load(&shipped("strict.yaml")).unwrap();
    let matmuls = &policy.budgets[0];
    assert_eq!(matmuls.label.as_deref(), Some("matmuls"));
    assert!(matmuls.matcher.matches("aten::addmm", "GEMM", "", None));
    assert!(
        !matmuls
            .matcher
            .matches("aten::_addmm_activation", "GEMM", "", None)
    );
    assert_eq!(matmuls.max_regression_percent, Some(3.0));
    assert_eq!(matmuls.severity, Severity::Fail);

    let policy = Policy::from_yaml(
        "version: 1\nignore:\n  - name: \"aten::copy_\"\n  - module: \"**/Loss_*\"\n",
        "p.yaml",
    )
    .unwrap();
    assert!(policy.is_ignored("aten::copy_", "elementwise", "", None));
    assert!(policy.is_ignored("aten::mm", "GEMM", "", Some("Model_0/Loss_0")));
    assert!(!policy.is_ignored("aten::mm", "GEMM", "", Some("Model_0/Linear_0")));
    assert!(!policy.is_ignored("aten::mm", "GEMM", "", None));
}

/// `ignore` entries take `match:` as budgets and `accept` entries do, and
/// the older bare form means the same; both at once is an error.
#[test]
fn ignore_entries_take_match_as_accept_does_and_the_bare_form_still() {
    let with_match = Policy::from_yaml(
        "version: 1\nignore:\n  - match: { name: \"aten::copy_\", module: \"**/Loss_*\" }\n\
         accept:\n  - match: { name: \"aten::copy_\", module: \"**/Loss_*\" }\n    reason: r\n",
        "p.yaml",
    )
    .unwrap();
    let bare = Policy::from_yaml(
        "version: 1\nignore:\n  - name: \"aten::copy_\"\n    module: \"**/Loss_*\"\n",
        "p.yaml",
    )
    .unwrap();
    assert_eq!(with_match.ignore, bare.ignore);
    assert_eq!(with_match.accept[0].matcher.as_ref(), Some(&bare.ignore[0]));
    assert!(with_match.is_ignored("aten::copy_", "elementwise", "", Some("M_0/Loss_0")));
    assert!(!with_match.is_ignored("aten::copy_", "elementwise", "", Some("M_0/Linear_0")));
    assert_eq!(
        error("version: 1\nignore:\n  - match: { name: a }\n    name: b\n"),
        "policy.yaml:3:5: ignore[0]: give the op match under `match:` only (name, category, \
         shape and module beside it are the older form of the same)"
    );
    assert!(
        error("version: 1\nignore:\n  - match: { nmae: a }\n")
            .starts_with("policy.yaml:3:14: ignore[0].match: unknown field `nmae`"),
        "{}",
        error("version: 1\nignore:\n  - match: { nmae: a }\n")
    );
}

#[test]
fn cross_platform_expectations() {
    let policy = Policy::load(&shipped("cross-platform.yaml")).unwrap();
    let cross = &policy.cross_platform;
    assert_eq!(
        cross.expectation_for("c10d::allreduce_", "comm", "", None),
        (Expectation::Model(Expected::Roofline), 25.0)
    );
    assert_eq!(
        cross.expectation_for("aten::add", "elementwise", "", None),
        (Expectation::Model(Expected::Bandwidth), 25.0)
    );
    assert_eq!(
        cross.expectation_for("aten::mm", "GEMM", "", None),
        (Expectation::Model(Expected::Roofline), 25.0)
    );
    let policy = Policy::from_yaml(
        "version: 1\ncross_platform:\n  rules:\n    - {match: {name: my::op}, ratio: 0.5}\n    - {match: {name: \"my::*\"}, slack_percent: 5}\n",
        "p.yaml",
    )
    .unwrap();
    let cross = &policy.cross_platform;
    assert_eq!(
        cross.expectation_for("my::op", "other", "", None),
        (Expectation::Ratio(0.5), 25.0)
    );
    assert_eq!(
        cross.expectation_for("my::other", "other", "", None),
        (Expectation::Model(Expected::Roofline), 5.0)
    );
}

#[test]
fn noise_thresholds_combine() {
    let noise = Noise::default();
    assert_eq!(noise.threshold_percent(None), 5.0);
    assert_eq!(noise.threshold_percent(Some(7.5)), 7.5);
    assert_eq!(noise.raise(1.0, None), 3.0);
    assert_eq!(noise.raise(10.0, Some(4.0)), 10.0);
}

#[test]
fn the_prior_noise_of_one_call_is_a_percentage_or_null() {
    let sigma = |text: &str| {
        Policy::from_yaml(text, "policy.yaml")
            .unwrap()
            .noise
            .single_sample_sigma_percent
    };
    assert_eq!(sigma("version: 1\n"), Some(SINGLE_SAMPLE_SIGMA_PERCENT));
    assert_eq!(
        sigma("version: 1\nnoise:\n  single_sample_sigma_percent: 3\n"),
        Some(3.0)
    );
    assert_eq!(
        sigma("version: 1\nnoise:\n  single_sample_sigma_percent: 2.5\n"),
        Some(2.5)
    );
    assert_eq!(
        sigma("version: 1\nnoise:\n  single_sample_sigma_percent: null\n"),
        None
    );
    assert_eq!(
        error("version: 1\nnoise:\n  single_sample_sigma_percent: 0\n"),
        "policy.yaml:3:32: noise.single_sample_sigma_percent: must be in (0, 100], or null, not 0"
    );
}

#[test]
fn the_jitter_of_one_call_is_positive_or_null_and_unconfirmed_rows_have_a_severity() {
    let noise = |text: &str| Policy::from_yaml(text, "policy.yaml").unwrap().noise;
    let default = noise("version: 1\n");
    assert_eq!(
        default.single_sample_jitter_us,
        Some(SINGLE_SAMPLE_JITTER_US)
    );
    assert_eq!(default.on_unconfirmed_single_sample, Severity::Fail);
    let set = noise(
        "version: 1\nnoise:\n  single_sample_jitter_us: 4\n  on_unconfirmed_single_sample: warn\n",
    );
    assert_eq!(set.single_sample_jitter_us, Some(4.0));
    assert_eq!(set.on_unconfirmed_single_sample, Severity::Warn);
    assert_eq!(
        noise("version: 1\nnoise:\n  single_sample_jitter_us: null\n").single_sample_jitter_us,
        None
    );
    assert_eq!(
        error("version: 1\nnoise:\n  single_sample_jitter_us: -1\n"),
        "policy.yaml:3:28: noise.single_sample_jitter_us: must be positive, or null, not -1"
    );
    assert!(
        error("version: 1\nnoise:\n  on_unconfirmed_single_sample: maybe\n")
            .contains("noise.on_unconfirmed_single_sample"),
    );
}

#[test]
fn check_file_summarises() {
    let summary = check_file(&shipped("strict.yaml")).unwrap();
    let text = summary.to_string();
    assert!(
        text.contains("strict.yaml: valid policy, version 1\n"),
        "{text}"
    );
    assert!(text.contains("  3 budgets, 0 ignore entries\n"), "{text}");
    assert!(
        text.contains("  regression: fail above +3% (whole 95% interval; noise floor 2%), impact ≥ 0.25% of GPU time, rows ≥ 5 µs; improvement: info\n"),
        "{text}"
    );
    let summary = Policy::default().summary().to_string();
    assert!(
        summary.starts_with("built-in default: valid policy, version 1\n"),
        "{summary}"
    );
    assert!(
        summary.contains("  hardware: baseline detected, candidate detected, datasheet peaks\n"),
        "{summary}"
    );
    assert!(
        summary.contains("timeline: computation_time +5% fail; exposed_comm_time"),
        "{summary}"
    );
    assert!(
        summary.contains("  end to end: step total_time +5% fail\n"),
        "{summary}"
    );
    assert!(
        summary.contains(
            "cross-platform: off (sides on different GPUs are an error); roofline expected ratio, 25% slack, warn\n"
        ),
        "{summary}"
    );
    let summary = Policy::from_yaml("version: 1\nnoise: {confidence: 0.9}\n", "p.yaml")
        .unwrap()
        .summary()
        .to_string();
    assert!(summary.contains("(whole 90% interval;"), "{summary}");
    let cross = check_file(&shipped("cross-platform.yaml"))
        .unwrap()
        .to_string();
    assert!(
        cross.contains("25% slack, warn, 2 ratio rules\n"),
        "{cross}"
    );
}

// ------------------------------------------------ hostile policies (fuzzing)

#[test]
fn resamples_of_1e8_are_refused_at_load() {
    assert_eq!(
        error("version: 1\nnoise:\n  resamples: 100000000\n"),
        "policy.yaml:3:14: noise.resamples: must be at most 20000 (every row keeps its resamples: \
         more cost time and memory for nothing), not 100000000"
    );
    let message = error("version: 1\nnoise:\n  resamples: 1e8\n");
    assert_eq!(
        message,
        "policy.yaml:3:14: noise.resamples: invalid type: floating point `100000000.0`, \
         expected a whole number of resamples from 100 to 20000"
    );
    // The wording names the bound the statistics keep.
    assert!(message.contains(&crate::gate::stats::MAX_RESAMPLES.to_string()));
    let policy = Policy::from_yaml("version: 1\nnoise:\n  resamples: 20000\n", "p.yaml").unwrap();
    assert_eq!(policy.noise.resamples, 20_000);
}

#[test]
fn work_sizing_knobs_and_lists_are_bounded() {
    assert_eq!(
        error("version: 1\nreplay:\n  max_packages: 1001\n"),
        "policy.yaml:3:17: replay.max_packages: must be at most 1000 (a package per finding), not 1001"
    );
    let entries: String = (0..=MAX_LIST)
        .map(|i| format!("  - name: op{i}\n"))
        .collect();
    assert_eq!(
        error(&format!("version: 1\nignore:\n{entries}")),
        "policy.yaml:3:3: ignore: more than 1000 entries; a list may have at most 1000"
    );
    let severities = vec!["info"; MAX_LIST + 1].join(", ");
    assert!(
        error(&format!(
            "version: 1\nreplay:\n  severities: [{severities}]\n"
        ))
        .starts_with("policy.yaml:3:15: replay.severities: more than 1000 entries")
    );
}

#[test]
fn glob_with_nested_braces_is_an_error_not_a_panic() {
    let nested = |depth: usize| {
        let mut glob = String::from("c");
        for _ in 0..depth {
            glob = format!("{{a,{glob}}}");
        }
        glob
    };
    assert!(Pattern::name(&nested(MAX_GLOB_BRACES)).is_ok());
    assert_eq!(
        error(&format!(
            "version: 1\nignore:\n  - name: \"{}\"\n",
            nested(200)
        )),
        "policy.yaml:3:11: ignore[0].name: invalid glob: `{…}` nested 200 deep; a glob may nest \
         them at most 8 deep"
    );
    assert!(
        Pattern::module(&nested(MAX_GLOB_BRACES + 1))
            .unwrap_err()
            .contains("nested 9 deep")
    );
    // Whatever fits the length limit compiles or is an error: never a panic.
    for glob in [
        format!("{}*", "{a,b,c,d,e,f,g,h}".repeat(58)),
        format!("{}x", "[!a]*?".repeat(160)),
        "**/".repeat(330),
    ] {
        let _ = Pattern::name(&glob);
        let _ = Pattern::module(&glob);
    }
}

#[test]
fn patterns_and_regexes_are_bounded() {
    let long = "a".repeat(MAX_PATTERN_CHARS + 1);
    assert_eq!(
        Pattern::name(&long).unwrap_err(),
        "the pattern is 1001 characters long; a pattern may have at most 1000"
    );
    assert!(Pattern::shape(&long).is_err());
    let deep = format!("re:{}a{}", "(".repeat(300), ")".repeat(300));
    assert!(
        Pattern::name(&deep)
            .unwrap_err()
            .starts_with("invalid regex: "),
        "nest limit"
    );
    let large = Pattern::name(r"re:(\w{100}){100}").unwrap_err();
    assert!(
        large.contains("exceeds size limit of 524288 bytes"),
        "{large}"
    );
}

#[test]
fn a_thousand_large_regexes_are_refused_at_the_hundred_and_first() {
    let entries: String = (0..1000)
        .map(|i| format!("  - name: \"re:\\\\w{{8}}x{i}\"\n"))
        .collect();
    // Refused at the 101st: the other 899 are never compiled.
    assert_eq!(
        error(&format!("version: 1\nignore:\n{entries}")),
        "policy.yaml:103:5: ignore[100]: more than 100 regexes, globs and shape patterns in this \
         list, the limit for one list"
    );
    // Exact names are not compiled: a long list of them is fine.
    let names: String = (0..MAX_LIST)
        .map(|i| format!("  - name: op{i}\n"))
        .collect();
    assert!(Policy::from_yaml(&format!("version: 1\nignore:\n{names}"), "p.yaml").is_ok());
}

#[test]
fn yaml_nested_100000_levels_is_refused_before_parsing() {
    for text in [
        format!("version: 1\nignore: {}\n", "[".repeat(100_000)),
        format!("version: 1\nignore: {}\n", "{a: ".repeat(100_000)),
        format!("version: 1\nignore:\n{}x\n", "- ".repeat(100_000)),
    ] {
        let message = error(&text);
        assert!(
            message.contains(": nested more than 32 levels deep"),
            "{message}"
        );
    }
}

#[test]
fn billion_laughs_is_refused_before_parsing() {
    let mut text = String::from("version: 1\ndescription: &a0 lol\n");
    for level in 1..10 {
        let aliases = vec![format!("*a{}", level - 1); 10].join(", ");
        text.push_str(&format!("x{level}: &a{level} [{aliases}]\n"));
    }
    assert_eq!(
        error(&text),
        "policy.yaml:9:30: more than 64 aliases (`*name`): the limit for a policy, which bounds \
         how far aliases can expand"
    );
}

#[test]
fn oversized_policy_file_is_refused_unread() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.yaml");
    let text = format!("version: 1\n#{}\n", "x".repeat(MAX_POLICY_BYTES));
    std::fs::write(&path, text).unwrap();
    let message = Policy::load(&path).unwrap_err().to_string();
    assert!(
        message.ends_with(
            "big.yaml: the file is larger than 1048576 bytes (1 MiB), the limit for a policy"
        ),
        "{message}"
    );
}

#[test]
fn errors_echo_no_control_characters_and_stay_short() {
    // As YAML writes it in double quotes: a newline and an escape.
    let injected = r"a\n::error title=injected::boom\e[2J";
    for text in [
        format!("version: 1\n\"{}\": 1\n", injected),
        format!("version: 1\nregression:\n  severity: \"{}\"\n", injected),
        format!("version: 1\nhardware:\n  baseline: \"{}\"\n", injected),
        format!("version: 1\nignore:\n  - category: \"{injected}\"\n"),
        format!(
            "version: 1\nnoise:\n  \"{}{}\": 1\n",
            injected,
            "x".repeat(100_000)
        ),
    ] {
        let message = error(&text);
        assert!(!message.chars().any(char::is_control), "{message:?}");
        assert!(
            message.contains("::error title=injected::boom"),
            "{message}"
        );
        assert!(message.chars().count() <= 2100, "{}", message.len());
    }
    // Labels (file names) too.
    let message = Policy::from_yaml("version: 2\n", "p\n::warning::x.yaml")
        .unwrap_err()
        .to_string();
    assert!(
        message.starts_with("p\\n::warning::x.yaml:1:10: version:"),
        "{message}"
    );
}

#[test]
fn summary_lines_echo_no_control_characters() {
    let policy = Policy::from_yaml(
        "version: 1\ndescription: \"first\\n::error title=injected::boom\"\n",
        "p.yaml",
    )
    .unwrap();
    let text = policy.summary().to_string();
    assert!(
        text.contains("  first\\n::error title=injected::boom\n"),
        "{text}"
    );
    assert!(text.lines().all(|line| !line.starts_with("::")), "{text}");
}

#[test]
fn hardware_file_is_held_to_the_policy_bounds() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("gpus.yaml"),
        format!("gpus: {}\n", "[".repeat(100_000)),
    )
    .unwrap();
    let path = dir.path().join("policy.yaml");
    std::fs::write(&path, "version: 1\nhardware:\n  file: gpus.yaml\n").unwrap();
    let message = Policy::load(&path).unwrap_err().to_string();
    assert!(message.contains(":3:9: hardware.file: "), "{message}");
    assert!(
        message.contains("gpus.yaml:1:37: nested more than 32 levels deep"),
        "{message}"
    );
    if cfg!(unix) {
        std::fs::write(&path, "version: 1\nhardware:\n  file: /dev/zero\n").unwrap();
        let message = Policy::load(&path).unwrap_err().to_string();
        assert!(
            message.ends_with("hardware.file: /dev/zero: the file is larger than 1048576 bytes (1 MiB), the limit for a policy"),
            "{message}"
        );
    }
}

#[test]
fn accept_entries_parse() {
    let policy = Policy::from_yaml(
        "version: 1\naccept:\n  - match: {name: \"aten::*mm\"}\n    reason: \"#12 on purpose\"\n    expires: 2025-06-30\n  - rule: \"timeline.*\"\n    reason: slower by design\n",
        "policy.yaml",
    )
    .unwrap();
    assert_eq!(policy.accept.len(), 2);
    assert_eq!(policy.accept[0].reason, "#12 on purpose");
    assert_eq!(
        policy.accept[0].expires,
        Some(Date {
            year: 2025,
            month: 6,
            day: 30
        })
    );
    assert_eq!(policy.accept[0].matcher_text(), "name=aten::*mm");
    assert_eq!(policy.accept[1].matcher_text(), "rule=timeline.*");
    assert_eq!(policy.line_of(&["accept", "1"]), Some(6));
    assert!(Policy::default().accept.is_empty());
}

#[test]
fn accept_errors_point_at_the_entry() {
    assert_eq!(
        error("version: 1\naccept:\n  - reason: why\n"),
        "policy.yaml:3:5: accept[0]: accepts nothing: give `match` (the ops) or `rule` (the rule's findings)"
    );
    assert_eq!(
        error("version: 1\naccept:\n  - match: {name: a}\n"),
        "policy.yaml:3:5: accept[0]: missing field `reason`"
    );
    assert_eq!(
        error("version: 1\naccept:\n  - match: {name: a}\n    reason: \" \"\n"),
        "policy.yaml:4:13: accept[0].reason: empty: say why the change is intended (a PR, an issue, a sentence)"
    );
    assert_eq!(
        error(
            "version: 1\naccept:\n  - match: {name: a}\n    reason: r\n    expires: 2025-02-30\n"
        ),
        "policy.yaml:5:14: accept[0].expires: `2025-02-30` is not a date: 2025-02 has 28 days"
    );
    assert_eq!(
        error("version: 1\naccept:\n  - rule: \"re:(\"\n    reason: r\n"),
        "policy.yaml:3:11: accept[0].rule: invalid regex: unclosed group"
    );
    // `accepted` is the judge's word, not a severity a rule may ask for.
    assert!(
        error("version: 1\nregression:\n  severity: accepted\n")
            .contains("unknown variant `accepted`, expected one of `fail`, `warn`, `info`"),
    );
}

#[test]
fn accept_from_the_command_line() {
    let entry = Accept::from_arg("aten::mm", "").unwrap();
    assert_eq!(entry.matcher_text(), "name=aten::mm");
    assert_eq!(entry.reason, "accepted on the command line");
    let entry = Accept::from_arg("rule:timeline.*", "label tracegate-accept").unwrap();
    assert_eq!(entry.matcher_text(), "rule=timeline.*");
    assert_eq!(entry.reason, "label tracegate-accept");
    assert!(Accept::from_arg("re:(", "").is_err());
    assert!(Accept::from_arg("", "").is_err());
}

#[test]
fn the_history_section_is_read_strictly() {
    let default = Policy::default().history;
    assert_eq!((default.window, default.branch.as_str()), (10, "main"));
    assert_eq!(
        (default.drift.merges, default.drift.limit_percent),
        (5, 5.0)
    );
    let policy = Policy::from_yaml(
        "version: 1\nhistory:\n  window: 20\n  branch: trunk\n  drift: {merges: 3, limit_percent: 2.5}\n",
        "p.yaml",
    )
    .unwrap();
    assert_eq!(policy.history.window, 20);
    assert_eq!(policy.history.branch, "trunk");
    assert_eq!(
        policy.history.drift,
        Drift {
            merges: 3,
            limit_percent: 2.5
        }
    );
    assert!(
        error("version: 1\nhistory:\n  window: 0\n")
            .starts_with("policy.yaml:3:11: history.window: must be at least 1"),
        "{}",
        error("version: 1\nhistory:\n  window: 0\n")
    );
    let typo = error("version: 1\nhistory:\n  windw: 5\n");
    assert!(typo.contains("did you mean `window`"), "{typo}");
    let stray = error("version: 1\nmerges: 5\n");
    assert!(
        stray.contains("it belongs under `history.drift:`"),
        "{stray}"
    );
    let empty = error("version: 1\nhistory:\n  branch: ' '\n");
    assert!(empty.contains("history.branch: empty"), "{empty}");
}

#[test]
fn communication_kernels_are_compiled_patterns_with_their_place_on_error() {
    let policy = Policy::from_yaml(
        "version: 1\ncommunication:\n  kernels: [dispatch, 'gloo*', 're:^void deep_ep::']\n",
        "p.yaml",
    )
    .unwrap();
    let kernels = &policy.communication.kernels;
    assert_eq!(
        kernels.patterns().collect::<Vec<_>>(),
        ["dispatch", "gloo*", "re:^void deep_ep::"]
    );
    assert!(kernels.is_comm("void deep_ep::intranode::combine<8>"));
    assert!(kernels.is_comm("GLOO_ring"));
    assert!(!kernels.is_comm("void at::native::reduce_kernel<512, 1>"));
    assert!(
        Policy::default()
            .communication
            .kernels
            .patterns()
            .next()
            .is_none()
    );
    assert!(
        error("version: 1\ncommunication:\n  kernel: [x]\n").starts_with(
            "policy.yaml:3:3: communication: unknown field `kernel`, did you mean `kernels`?"
        )
    );
    assert!(
        error("version: 1\ncommunication:\n  kernels: ['re:(']\n")
            .starts_with("policy.yaml:3:13: communication.kernels[0]: communication-kernel pattern `re:(`: error: unclosed group")
    );
    assert!(
        error("version: 1\ncommunication:\n  kernels: ['']\n").starts_with(
            "policy.yaml:3:13: communication.kernels[0]: an empty communication-kernel pattern"
        )
    );
}
