//! The policy as the judge reads it: plain data with the defaults of
//! `policies/default.yaml`. Reading it from YAML is `load.rs`; the checks
//! made while deserializing are `de.rs`.

use std::fmt;
use std::path::PathBuf;

use serde::Deserialize;

use super::date::Date;
use super::de::{self, Validate};
use super::history::History;
use super::matcher::{OpMatcher, Pattern};
use super::noise::Noise;
use crate::analysis::comm::CommKernels;
use crate::analysis::hardware::{Catalog, Hardware, PeakBasis};
use crate::analysis::ops::category::Category;
use crate::gate::verdict::Severity;

/// The policy format version this tracegate reads.
pub const POLICY_VERSION: u32 = 1;

/// The built-in default policy's text (`policies/default.yaml`): what
/// `tracegate policy init` writes and what `version: 1` alone means.
pub const DEFAULT_YAML: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/policies/default.yaml"
));

/// The label of the built-in default policy (in errors and report footers).
pub const DEFAULT_LABEL: &str = "built-in default";

/// The built-in cross-platform policy's text (`policies/cross-platform.yaml`):
/// what `check --cross-platform` judges with when no `--policy` is given.
pub const CROSS_PLATFORM_YAML: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/policies/cross-platform.yaml"
));

/// The label of the built-in cross-platform policy.
pub const CROSS_PLATFORM_LABEL: &str = "built-in policies/cross-platform.yaml";

/// A validated policy.
#[derive(Clone, Debug, PartialEq)]
pub struct Policy {
    /// Where it came from: the file path as given, or [`DEFAULT_LABEL`].
    pub label: String,
    /// The format version (always [`POLICY_VERSION`]).
    pub version: u32,
    /// A free-text description, shown in report footers.
    pub description: Option<String>,
    /// The hardware of each side, resolved.
    pub hardware: HardwarePolicy,
    /// Statistics: confidence, effect and impact thresholds, noise floor.
    pub noise: Noise,
    /// Severity of a confident slowdown of a matched op (same hardware).
    pub regression: Rule,
    /// Severity of a confident speed-up of a matched op (same hardware).
    pub improvement: Rule,
    /// How ops are judged when the two sides ran on different hardware.
    pub cross_platform: CrossPlatform,
    /// Gates on GPU-timeline metrics.
    pub timeline: Vec<TimelineRule>,
    /// The guard on the whole step's time.
    pub end_to_end: EndToEnd,
    /// Minimum roofline efficiency per category (where the hardware is known).
    pub efficiency: Vec<EfficiencyRule>,
    /// Per-op budgets.
    pub budgets: Vec<Budget>,
    /// Severity of a changed kernel sequence under a matched op.
    pub kernel_selection: Rule,
    /// Ops only the candidate has.
    pub new_ops: NewOps,
    /// Ops only the baseline has.
    pub missing_ops: MissingOps,
    /// Severity of an op seen with other shapes (same name and call site).
    pub shape_changed: Rule,
    /// Severity of "nothing to compare" (no GPU work, no matched ops, a
    /// workload on one side only).
    pub nothing_to_compare: Rule,
    /// Ops no op-level rule looks at.
    pub ignore: Vec<OpMatcher>,
    /// Which findings get replay packages.
    pub replay: Replay,
    /// When the trace cannot support a verdict (too little GPU time in
    /// rows, an under-recorded trace).
    pub integrity: Integrity,
    /// Which kernels count as collective communication besides the
    /// built-in ones.
    pub communication: Communication,
    /// Intended regressions: fail and warn findings these cover are shown
    /// as accepted and do not fail the gate.
    pub accept: Vec<Accept>,
    /// Where `check --history` takes its baseline window, and the drift
    /// rule's settings.
    pub history: History,
    /// The policy's YAML text, to point warnings about its entries at
    /// their lines ([`Policy::line_of`]).
    pub source: String,
}

impl Policy {
    /// The severity of a changed kernel sequence: the policy's, except
    /// across GPUs, where every library picks kernels per architecture
    /// (and vendors name them differently), so a difference is information
    /// for the reader, never a warning to dismiss.
    pub fn kernel_selection_severity(&self, cross_platform: bool) -> Severity {
        if cross_platform {
            Severity::Info
        } else {
            self.kernel_selection.severity
        }
    }

    /// Whether an op row is on the ignore list (same arguments as
    /// [`OpMatcher::matches`]).
    pub fn is_ignored(
        &self,
        name: &str,
        category: &str,
        input_dims: &str,
        module_path: Option<&str>,
    ) -> bool {
        self.ignore
            .iter()
            .any(|m| m.matches(name, category, input_dims, module_path))
    }
}

/// A rule that only sets a severity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// `fail`, `warn` or `info`.
    pub severity: Severity,
}

/// The hardware of each side, resolved at load time.
#[derive(Clone, Debug, PartialEq)]
pub struct HardwarePolicy {
    /// The baseline's hardware.
    pub baseline: HardwareChoice,
    /// The candidate's hardware.
    pub candidate: HardwareChoice,
    /// The extra catalog file (`hardware.file`), resolved against the
    /// policy's directory.
    pub file: Option<PathBuf>,
    /// The built-in catalog merged with `file`: what `detected` sides are
    /// detected against ([`Catalog::detect`]).
    pub catalog: Catalog,
    /// Which peaks roofline figures (efficiency, expected cross-platform
    /// ratios) use: the datasheet (default) or measured achievable ones.
    pub peak: PeakBasis,
}

/// One side's hardware.
#[derive(Clone, Debug, PartialEq)]
pub enum HardwareChoice {
    /// Detect it from the trace's `deviceProperties` (`detected`).
    Detected,
    /// A catalog name or inline spec, resolved.
    Given {
        /// The text as written in the policy.
        spec: String,
        /// What it resolved to.
        hardware: Box<Hardware>,
    },
}

impl HardwareChoice {
    /// The given hardware; `None` for [`HardwareChoice::Detected`].
    pub fn hardware(&self) -> Option<&Hardware> {
        match self {
            HardwareChoice::Detected => None,
            HardwareChoice::Given { hardware, .. } => Some(hardware),
        }
    }
}

impl fmt::Display for HardwareChoice {
    /// `detected`, or the resolved entry's name.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HardwareChoice::Detected => f.write_str("detected"),
            HardwareChoice::Given { hardware, .. } => f.write_str(&hardware.name),
        }
    }
}

/// How cross-platform comparisons are judged.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CrossPlatform {
    /// Whether the two sides may run on different GPUs. When false (the
    /// default) a check whose sides ran on different GPUs is an error, so
    /// that a mixed GPU pool never switches a same-platform gate to
    /// hardware-ratio judging silently; `check --cross-platform` sets it.
    pub enabled: bool,
    /// The model of the expected candidate/baseline time ratio.
    pub expected: Expected,
    /// How far beyond the expected ratio is still explained by the
    /// hardware, %: an op is unexpected when its ratio's interval is
    /// entirely above expected × (1 + slack / 100) (slower) or below
    /// expected / (1 + slack / 100) (faster).
    #[serde(deserialize_with = "de::non_negative")]
    pub slack_percent: f64,
    /// Severity of an op slower than a ratio a rule wrote (`rules[].ratio`)
    /// beyond the slack. A ratio a hardware model derives is information
    /// whatever this says, and unexpectedly fast ops are `info`.
    pub severity: Severity,
    /// With ratios learned from earlier paired runs (history): the smallest
    /// change of an op's ratio that is a finding, %; the tolerance is the
    /// larger of this and three times the ratio's spread over those runs.
    #[serde(deserialize_with = "de::non_negative")]
    pub history_tolerance_percent: f64,
    /// Severity of an op whose ratio rose beyond its learned ratio and
    /// tolerance (a fall is `info`).
    pub history_severity: Severity,
    /// Per-op overrides, first match wins.
    #[serde(deserialize_with = "de::validated_list")]
    pub rules: Vec<RatioRule>,
}

impl Default for CrossPlatform {
    fn default() -> CrossPlatform {
        CrossPlatform {
            enabled: false,
            expected: Expected::Roofline,
            slack_percent: 25.0,
            severity: Severity::Warn,
            history_tolerance_percent: 10.0,
            history_severity: Severity::Fail,
            rules: Vec::new(),
        }
    }
}

impl CrossPlatform {
    /// The expectation for an op row and the slack around it, %: the first
    /// matching rule's, else the section's.
    pub fn expectation_for(
        &self,
        name: &str,
        category: &str,
        input_dims: &str,
        module_path: Option<&str>,
    ) -> (Expectation, f64) {
        let rule = self
            .rules
            .iter()
            .find(|r| r.matcher.matches(name, category, input_dims, module_path));
        let Some(rule) = rule else {
            return (Expectation::Model(self.expected), self.slack_percent);
        };
        let expectation = match (rule.ratio, rule.expected) {
            (Some(ratio), _) => Expectation::Ratio(ratio),
            (None, Some(model)) => Expectation::Model(model),
            (None, None) => Expectation::Model(self.expected),
        };
        (
            expectation,
            rule.slack_percent.unwrap_or(self.slack_percent),
        )
    }
}

/// The model of an op's expected candidate/baseline time ratio across
/// hardware.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Expected {
    /// The ratio of the op's roofline times on the two sides (its FLOPs and
    /// bytes from the perf model); without a perf model, by category:
    /// memory-bound families by bandwidth, GEMM/conv/SDPA by compute.
    Roofline,
    /// The inverse ratio of HBM bandwidths, for every op.
    Bandwidth,
    /// The inverse ratio of peak FLOP/s for the op's compute spec, for every op.
    Compute,
}

impl Expected {
    /// Lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Expected::Roofline => "roofline",
            Expected::Bandwidth => "bandwidth",
            Expected::Compute => "compute",
        }
    }
}

/// What a cross-platform comparison expects for one op.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Expectation {
    /// Computed from the hardware by this model.
    Model(Expected),
    /// A fixed candidate/baseline time ratio.
    Ratio(f64),
}

/// A per-op override of the cross-platform expectation.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RatioRule {
    /// The ops it applies to.
    #[serde(rename = "match")]
    pub matcher: OpMatcher,
    /// The model for these ops.
    #[serde(default)]
    pub expected: Option<Expected>,
    /// A fixed expected candidate/baseline time ratio (> 0) instead of a model.
    #[serde(default, deserialize_with = "de::opt_positive")]
    pub ratio: Option<f64>,
    /// The slack for these ops, %.
    #[serde(default, deserialize_with = "de::opt_non_negative")]
    pub slack_percent: Option<f64>,
}

impl Validate for RatioRule {
    const EXPECTING: &'static str = "a ratio rule (match, and expected, ratio or slack_percent)";
    fn patterns(&self) -> usize {
        self.matcher.patterns()
    }
    fn validate(&self) -> Result<(), String> {
        if self.expected.is_some() && self.ratio.is_some() {
            return Err("give `expected` or `ratio`, not both".to_string());
        }
        if self.expected.is_none() && self.ratio.is_none() && self.slack_percent.is_none() {
            return Err("sets nothing: give `expected`, `ratio` or `slack_percent`".to_string());
        }
        Ok(())
    }
}

/// A GPU-timeline metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimelineMetric {
    /// First start to last end of the GPU work, µs.
    TotalTime,
    /// Time with any GPU work running, µs.
    BusyTime,
    /// Total minus busy, µs.
    IdleTime,
    /// Idle time as a % of total time.
    IdlePercent,
    /// Time with computation running, µs.
    ComputationTime,
    /// Communication not overlapped by computation, µs.
    ExposedCommTime,
    /// Copies not overlapped by computation or communication, µs.
    ExposedMemcpyTime,
}

impl TimelineMetric {
    /// The snake_case name (as in the timeline table of a report).
    pub fn as_str(self) -> &'static str {
        match self {
            TimelineMetric::TotalTime => "total_time",
            TimelineMetric::BusyTime => "busy_time",
            TimelineMetric::IdleTime => "idle_time",
            TimelineMetric::IdlePercent => "idle_percent",
            TimelineMetric::ComputationTime => "computation_time",
            TimelineMetric::ExposedCommTime => "exposed_comm_time",
            TimelineMetric::ExposedMemcpyTime => "exposed_memcpy_time",
        }
    }

    /// The unit of the metric and of a rule's `max`: `%` or `µs`.
    pub fn unit(self) -> &'static str {
        match self {
            TimelineMetric::IdlePercent => "%",
            _ => "µs",
        }
    }
}

/// `end_to_end:`: the guard on the whole step. Whatever the rules per op,
/// per collective or per timeline metric attribute a slowdown to, the
/// step's time growing beyond this limit (and beyond the measured noise)
/// fails, as one finding that says where the added time went.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EndToEnd {
    /// What the step's time is: `total_time` (first GPU start to last GPU
    /// end per step: the step time the GPU sees) or `busy_time` (the GPU
    /// busy, idle gaps left out).
    pub metric: TimelineMetric,
    /// Largest allowed increase, %, raised to the noise floor and the
    /// run-to-run noise of a baseline window; `null` turns the guard off.
    #[serde(deserialize_with = "de::nullable_non_negative")]
    pub max_regression_percent: Option<f64>,
    /// Severity (default `fail`).
    pub severity: Severity,
    /// The run-to-run noise of the GPU's idle time, %: idle time the
    /// candidate added, up to this share of the baseline's idle time, is
    /// left out of the judged step time (and reported at `info`). The GPU
    /// waits for a host whose pace differs between processes far more than
    /// the GPU's own work, and a few baseline runs under-measure it;
    /// `null`: idle time is judged like any other.
    #[serde(deserialize_with = "de::nullable_non_negative")]
    pub idle_noise_percent: Option<f64>,
}

/// The default [`EndToEnd::idle_noise_percent`], %: 200, above the largest
/// growth of idle time per step between two separate runs of one job on
/// one GPU (+136%, over 240 pairs of real H200 runs in
/// tests/fixtures/h200; docs/RELIABILITY.md).
pub const IDLE_NOISE_PERCENT: f64 = 200.0;

impl Default for EndToEnd {
    fn default() -> EndToEnd {
        EndToEnd {
            metric: TimelineMetric::TotalTime,
            max_regression_percent: Some(5.0),
            severity: Severity::Fail,
            idle_noise_percent: Some(IDLE_NOISE_PERCENT),
        }
    }
}

/// A gate on one GPU-timeline metric.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimelineRule {
    /// The metric.
    pub metric: TimelineMetric,
    /// Largest allowed increase, candidate/baseline − 1, in % (raised to
    /// the noise floor; not judged when the baseline is below `min_time_us`).
    #[serde(default, deserialize_with = "de::opt_non_negative")]
    pub max_regression_percent: Option<f64>,
    /// Largest allowed candidate value (µs, or % for `idle_percent`), per
    /// step where the trace has steps, else per run.
    #[serde(default, deserialize_with = "de::opt_non_negative")]
    pub max: Option<f64>,
    /// Severity (default `fail`).
    #[serde(default = "fail")]
    pub severity: Severity,
}

impl Validate for TimelineRule {
    const EXPECTING: &'static str = "a timeline rule (metric, and max_regression_percent or max)";
    fn validate(&self) -> Result<(), String> {
        if self.max_regression_percent.is_none() && self.max.is_none() {
            return Err(format!(
                "`{}` has no limit: give max_regression_percent, max or both",
                self.metric.as_str()
            ));
        }
        if self.metric == TimelineMetric::IdlePercent && self.max.is_some_and(|m| m > 100.0) {
            return Err("`max` of idle_percent is a % of total time: at most 100".to_string());
        }
        Ok(())
    }
}

/// A minimum roofline efficiency for one category.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EfficiencyRule {
    /// The category (`GEMM`, `SDPA_fwd`, …).
    #[serde(deserialize_with = "de::category")]
    pub category: Category,
    /// Smallest acceptable efficiency: roofline time / measured time, %.
    #[serde(deserialize_with = "de::percent_0_100")]
    pub min_percent: f64,
    /// Only rows with at least this share of the candidate's GPU time, %.
    #[serde(default = "five", deserialize_with = "de::percent_0_100")]
    pub min_share_percent: f64,
    /// Severity (default `warn`).
    #[serde(default = "warn")]
    pub severity: Severity,
}

impl Validate for EfficiencyRule {
    const EXPECTING: &'static str = "an efficiency rule (category and min_percent)";
    fn validate(&self) -> Result<(), String> {
        Ok(())
    }
}

/// A budget for the ops a matcher selects. Limits apply to the matched rows
/// together (their sum), on the candidate.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Budget {
    /// A name shown with its findings.
    #[serde(default)]
    pub label: Option<String>,
    /// The ops it covers.
    #[serde(rename = "match")]
    pub matcher: OpMatcher,
    /// Largest GPU time per step (per run without steps), µs.
    #[serde(default, deserialize_with = "de::opt_non_negative")]
    pub max_time_per_step_us: Option<f64>,
    /// Largest share of total GPU time, %.
    #[serde(default, deserialize_with = "de::opt_percent_0_100")]
    pub max_share_percent: Option<f64>,
    /// Largest increase of their time against the baseline, % (raised to
    /// the noise floor).
    #[serde(default, deserialize_with = "de::opt_non_negative")]
    pub max_regression_percent: Option<f64>,
    /// Largest number of calls per step (per run without steps).
    #[serde(default)]
    pub max_count: Option<u64>,
    /// Severity (default `fail`).
    #[serde(default = "fail")]
    pub severity: Severity,
}

impl Validate for Budget {
    const EXPECTING: &'static str = "a budget (match, and at least one limit)";
    fn patterns(&self) -> usize {
        self.matcher.patterns()
    }
    fn validate(&self) -> Result<(), String> {
        if self.max_time_per_step_us.is_none()
            && self.max_share_percent.is_none()
            && self.max_regression_percent.is_none()
            && self.max_count.is_none()
        {
            return Err(
                "a budget needs a limit: max_time_per_step_us, max_share_percent, \
                 max_regression_percent or max_count"
                    .to_string(),
            );
        }
        Ok(())
    }
}

/// An accepted regression: the findings it covers are reported with
/// severity `accepted` and do not fail the gate.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Accept {
    /// The ops whose findings it covers.
    #[serde(default, rename = "match")]
    pub matcher: Option<OpMatcher>,
    /// The rules whose findings it covers, as report.json names them
    /// (`regression`, `budgets[0]`, `timeline.busy_time`): an op-name
    /// pattern (exact, glob or `re:`).
    #[serde(default, deserialize_with = "super::matcher::rule_pattern")]
    pub rule: Option<Pattern>,
    /// Why the change is intended (required, shown with every finding).
    #[serde(deserialize_with = "de::reason")]
    pub reason: String,
    /// The last day it applies (`YYYY-MM-DD`, UTC); after it the entry is
    /// a warning instead.
    #[serde(default, deserialize_with = "de::opt_date")]
    pub expires: Option<Date>,
}

impl Accept {
    /// An entry from the command line (`check --accept TEXT`): `rule:PATTERN`
    /// for a rule, else an op-name pattern (exact, glob or `re:`).
    pub fn from_arg(text: &str, reason: &str) -> Result<Accept, String> {
        let (matcher, rule) = match text.strip_prefix("rule:") {
            Some(rule) => (None, Some(Pattern::name(rule.trim())?)),
            None => {
                let name = Pattern::name(text.trim())?;
                let matcher = OpMatcher {
                    name: Some(name),
                    category: None,
                    shape: None,
                    module: None,
                };
                (Some(matcher), None)
            }
        };
        let reason = reason.trim();
        Ok(Accept {
            matcher,
            rule,
            reason: if reason.is_empty() {
                "accepted on the command line".to_string()
            } else {
                reason.to_string()
            },
            expires: None,
        })
    }

    /// What it matches, as written: `name=aten::mm rule=timeline*`.
    pub fn matcher_text(&self) -> String {
        let mut parts = Vec::new();
        if let Some(matcher) = &self.matcher {
            parts.push(matcher.to_string());
        }
        if let Some(rule) = &self.rule {
            parts.push(format!("rule={rule}"));
        }
        parts.join(" ")
    }
}

impl Validate for Accept {
    const EXPECTING: &'static str = "an accept entry (match or rule, and reason)";
    fn patterns(&self) -> usize {
        let rule = usize::from(matches!(&self.rule, Some(p) if !matches!(p, Pattern::Exact(_))));
        self.matcher.as_ref().map_or(0, Validate::patterns) + rule
    }
    fn validate(&self) -> Result<(), String> {
        if self.matcher.is_none() && self.rule.is_none() {
            return Err(
                "accepts nothing: give `match` (the ops) or `rule` (the rule's findings)"
                    .to_string(),
            );
        }
        Ok(())
    }
}

/// Ops only the candidate has.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NewOps {
    /// Severity (default `info`).
    pub severity: Severity,
    /// Only ops with at least this share of the candidate's GPU time, %
    /// (the others are counted, not listed).
    #[serde(deserialize_with = "de::percent_0_100")]
    pub min_share_percent: f64,
}

impl Default for NewOps {
    fn default() -> NewOps {
        NewOps {
            severity: Severity::Info,
            min_share_percent: 1.0,
        }
    }
}

/// Ops only the baseline has.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MissingOps {
    /// Severity (default `warn`).
    pub severity: Severity,
    /// Only ops with at least this share of the baseline's GPU time, %.
    #[serde(deserialize_with = "de::percent_0_100")]
    pub min_share_percent: f64,
}

impl Default for MissingOps {
    fn default() -> MissingOps {
        MissingOps {
            severity: Severity::Warn,
            min_share_percent: 1.0,
        }
    }
}

/// When a verdict is inconclusive: the rows the gate judges hold too little
/// of a side's GPU time, or the trace says it is under-recorded (graph
/// launches without GPU work, dropped profiler records).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Integrity {
    /// Rows must hold at least this share of each side's GPU busy time, 0–1.
    #[serde(deserialize_with = "de::share_0_1")]
    pub min_judged_share: f64,
    /// Severity of the integrity finding: `fail` makes the verdict
    /// `inconclusive` (exit 1) unless a failing regression makes it `fail`;
    /// `warn` and `info` report it and let the gate pass.
    pub on_inconclusive: Severity,
    /// The rows both sides have must hold at least this share of each
    /// side's time in rows, 0–1; below it the sides look like different
    /// workloads and the verdict says so (exit 2). 0 turns the rule off.
    #[serde(deserialize_with = "de::share_0_1")]
    pub min_matched_share: f64,
}

impl Default for Integrity {
    fn default() -> Integrity {
        Integrity {
            min_judged_share: 0.8,
            on_inconclusive: Severity::Fail,
            min_matched_share: 0.25,
        }
    }
}

/// `communication:`: kernels the analysis counts as collective
/// communication besides those it knows (DeepEP, gloo, a vendor's own
/// collectives), in the op categories, the timeline's comm bucket and the
/// perf table.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Communication {
    /// Kernel-name patterns ([`CommKernels`]): case-insensitive, anywhere
    /// in the name, `*` and `?` wildcards, `re:` a regex.
    #[serde(deserialize_with = "de::comm_kernels")]
    pub kernels: CommKernels,
    /// Rank sets (`check --ranks`): a rank is a straggler when it arrives
    /// last at more than this share of the collectives, in (0, 1].
    #[serde(deserialize_with = "de::rate")]
    pub straggler_share: f64,
    /// Rank sets: the most the exposed communication time (the largest
    /// over ranks, and the mean) may grow, % (raised to the noise floor).
    #[serde(deserialize_with = "de::non_negative")]
    pub max_exposed_growth_percent: f64,
    /// Rank sets: the severity of a new straggler and of exposed
    /// communication growth (a collective's own slowdown is a `regression`).
    pub severity: Severity,
}

impl Default for Communication {
    fn default() -> Communication {
        Communication {
            kernels: CommKernels::default(),
            straggler_share: 0.6,
            max_exposed_growth_percent: 10.0,
            severity: Severity::Warn,
        }
    }
}

/// Which findings get replay packages (self-contained reproducers).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Replay {
    /// Findings of these severities get a package.
    #[serde(deserialize_with = "de::bounded_list")]
    pub severities: Vec<Severity>,
    /// At most this many packages per check, highest priority first (at
    /// most [`MAX_REPLAY_PACKAGES`](super::limits::MAX_REPLAY_PACKAGES)).
    #[serde(deserialize_with = "de::replay_packages")]
    pub max_packages: usize,
    /// Only ops whose argument schema tracegate knows how to rebuild.
    pub only_known_schema: bool,
}

impl Default for Replay {
    fn default() -> Replay {
        Replay {
            severities: vec![Severity::Fail, Severity::Warn],
            max_packages: 20,
            only_known_schema: true,
        }
    }
}

fn fail() -> Severity {
    Severity::Fail
}

fn warn() -> Severity {
    Severity::Warn
}

fn five() -> f64 {
    5.0
}
