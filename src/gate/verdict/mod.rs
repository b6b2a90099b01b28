//! The verdict of a check: findings with severity, impact and priority, the
//! counts a PR comment leads with, and the exit code they map to.
//!
//! Produced by the judge stage (a comparison judged by a policy), consumed by
//! the renderers (terminal, `comment.md`, `summary.md`, `report.json`) and the
//! publish edge. Plain data: serialisable, and read back by
//! `tracegate comment --report report.json`.

use serde::{Deserialize, Serialize};

pub use crate::gate::stats::IntervalKind;

mod statistics;
pub(crate) use statistics::trimmed_number;
pub use statistics::{
    FindingStatistics, LearnedFrom, NoiseSource, Per, SampleCounts, SingleSampleNoise,
};

/// Version of the `report.json` schema written by `check` (docs/REPORT.md).
pub const VERDICT_SCHEMA_VERSION: u32 = 1;

/// The rule name of drift findings (`accept: - rule: drift`): the history's
/// comparison of a candidate with the run several merges before it, judged
/// and grouped apart from the one-pair comparison.
pub const DRIFT_RULE: &str = "drift";

/// Compatible additions to that version: 1 added the `inconclusive`
/// outcome and the `integrity` finding kind; 2 the finding `groups`, the
/// group counts (`failing_groups`, `warning_groups`), the `accepted`
/// severity, a finding's `accepted`, `counts.accepted`, the `policy`
/// finding kind and the finding fields of [`FindingStatistics`] (`per`,
/// `limit_unit`, `interval_kind`, `confidence`, `samples`, `inconclusive`,
/// `min_detectable_effect_percent`); 3 the finding field
/// `expected_learned` (a cross-platform expected ratio learned from earlier
/// paired runs); 4 the `collective` and `straggler` finding kinds (rank
/// sets: a collective slower per call, a new straggler); 5 the finding
/// field `single_sample_noise` (the noise of one call a one-sample row was
/// judged against, borrowed or a prior); 6 that noise's `call_us`,
/// `jitter_us` and source `jitter` (a short call's timing jitter), and a
/// failing `regression` that is `inconclusive` (a one-sample change the
/// noise of one call cannot confirm), which makes the outcome
/// `inconclusive`, with the group field `inconclusive` and the count
/// `inconclusive_groups`; 7 the `different_workloads` outcome (exit 2)
/// with its `nothing_to_compare` finding of rule
/// `integrity.min_matched_share`, and the `timeline` finding of rule
/// `end_to_end` (the whole step's time, with where the added time went); 8
/// the finding field `efficiency_percent` (a cross-platform row's roofline
/// efficiency on each side).
pub const VERDICT_SCHEMA_MINOR: u32 = 8;

/// How much a finding matters, as the policy rule that raised it says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Fails the gate (exit 1).
    Fail,
    /// Reported, gate still passes.
    Warn,
    /// A fail or warn finding an `accept` entry or `--accept` covers: shown
    /// as accepted, never failing. Only the judge sets it: a policy rule
    /// cannot ask for it.
    #[serde(skip_deserializing)]
    Accepted,
    /// For information.
    Info,
}

impl Severity {
    /// Lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Fail => "fail",
            Severity::Warn => "warn",
            Severity::Accepted => "accepted",
            Severity::Info => "info",
        }
    }
}

/// What kind of change a finding reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// An op got slower beyond the threshold, with confidence.
    Regression,
    /// An op got faster beyond the threshold, with confidence.
    Improvement,
    /// Cross-platform: the op's ratio is outside its expected hardware ratio plus slack.
    UnexpectedRatio,
    /// A matched op launches a different sequence of kernels.
    KernelSelection,
    /// An op with the same name and call site ran with different shapes.
    ShapeChanged,
    /// An op only the candidate has.
    NewOp,
    /// An op only the baseline has.
    MissingOp,
    /// A GPU-timeline gate (total, busy, idle, exposed comm/memcpy), and a
    /// rank set's exposed communication over its ranks.
    Timeline,
    /// A collective slower per call: a rank set's (kind and process group)
    /// once every rank is in, or one rank's communication kernel at its
    /// floor (`collectives.floor`).
    Collective,
    /// Rank sets: a rank that arrives last at most collectives and did not
    /// in the baseline.
    Straggler,
    /// An op below the policy's efficiency threshold for its category.
    Efficiency,
    /// A per-op budget (time per step, share, regression, count) exceeded.
    Budget,
    /// Nothing to compare: no GPU work, no matched ops, a workload on one side only.
    NothingToCompare,
    /// The trace cannot support a verdict: too little GPU time in the rows
    /// the gate judges, or the trace says it is under-recorded.
    Integrity,
    /// A policy entry that did nothing: a matcher that selects no row in any
    /// workload, or an `accept` entry past its expiry date.
    Policy,
}

impl FindingKind {
    /// Whether it is about collectives ([`Collective`], [`Straggler`]):
    /// its `op` names a collective, a communication kernel or a rank, not
    /// an op row, so it has no shapes and no call to replay.
    ///
    /// [`Collective`]: FindingKind::Collective
    /// [`Straggler`]: FindingKind::Straggler
    pub fn is_rank_set(self) -> bool {
        matches!(self, FindingKind::Collective | FindingKind::Straggler)
    }
}

/// The op a finding is about.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OpRef {
    /// Op name.
    pub name: String,
    /// `Input Dims` (Python tuple text).
    pub input_dims: String,
    /// `Input type`.
    pub input_type: String,
    /// `Input Strides`.
    pub input_strides: String,
    /// Op category.
    pub category: String,
    /// `nn.Module` path, when the trace records modules.
    pub module_path: Option<String>,
}

/// Priority of a finding for the reader (critical first).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingPriority {
    /// Large impact on total GPU time.
    Critical,
    /// Material impact.
    High,
    /// Noticeable.
    Medium,
    /// Small.
    Low,
}

impl FindingPriority {
    /// The priority of a finding that adds (or saves) this share of the
    /// total GPU time, %: critical from 5%, high from 2%, medium from 0.5%.
    pub fn of_impact(impact_percent: f64) -> FindingPriority {
        match impact_percent.abs() {
            i if i >= 5.0 => FindingPriority::Critical,
            i if i >= 2.0 => FindingPriority::High,
            i if i >= 0.5 => FindingPriority::Medium,
            _ => FindingPriority::Low,
        }
    }
}

/// Why a finding is accepted: the entry that covers it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Acceptance {
    /// Which entry: `accept[0]` in the policy, or `--accept` (the command
    /// line, where the Action passes commit trailers and PR labels).
    pub by: String,
    /// The entry's matcher, as written (`name=aten::mm`, `rule=timeline*`).
    pub matcher: String,
    /// Why the change is intended.
    pub reason: String,
    /// The severity the finding had before it was accepted.
    pub severity: Severity,
    /// The entry's expiry date (`YYYY-MM-DD`), when it has one.
    #[serde(default)]
    pub expires: Option<String>,
}

/// One finding.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// The policy rule that raised it (e.g. `regression`, `budgets[2]`, `timeline.idle_percent`).
    pub rule: String,
    /// Its severity.
    #[serde(deserialize_with = "report_severity")]
    pub severity: Severity,
    /// What kind of change.
    pub kind: FindingKind,
    /// The workload (file stem) it belongs to.
    pub workload: String,
    /// The op, for op-level findings.
    pub op: Option<OpRef>,
    /// What was measured (e.g. `median kernel time per call`, `total_time`).
    pub metric: String,
    /// Baseline value (unit in `unit`).
    pub baseline: Option<f64>,
    /// Candidate value.
    pub candidate: Option<f64>,
    /// Unit of baseline/candidate/limit (`µs`, `%`, `calls`).
    pub unit: String,
    /// Relative change, candidate/baseline − 1, in %.
    pub delta_percent: Option<f64>,
    /// Confidence interval of the change, in % (low, high).
    pub interval_percent: Option<(f64, f64)>,
    /// Cross-platform: the expected candidate/baseline time ratio.
    pub expected_ratio: Option<f64>,
    /// The limit the rule compares with.
    pub limit: Option<f64>,
    /// Added (positive) or saved (negative) GPU time as a share of the
    /// baseline's total GPU time, %.
    pub impact_percent: Option<f64>,
    /// Priority for the reader.
    pub priority: FindingPriority,
    /// One sentence: what changed, in numbers.
    pub message: String,
    /// Path A (fusion/algorithmic) recommendation, when one applies.
    pub path_a: Option<String>,
    /// Path B (kernel tuning) recommendation, when one applies.
    pub path_b: Option<String>,
    /// Kernel-sequence diff (unified format), for kernel-selection findings.
    pub kernel_diff: Option<String>,
    /// Replay package written for this finding (relative to the out dir).
    pub replay_package: Option<String>,
    /// Set when an accept entry covers the finding (its severity is then
    /// [`Severity::Accepted`]). Absent in a report.json before schema minor 2.
    #[serde(default)]
    pub accepted: Option<Acceptance>,
    /// What the figures are per, what the interval is, and how sure the
    /// finding is (schema minor 2; written flat into the finding).
    #[serde(flatten, default)]
    pub statistics: FindingStatistics,
}

impl Finding {
    /// Whether it is a row of the cross-platform day-one report: an op
    /// slower than the ratio the hardware explains (information, not
    /// learned, not a ratio a user wrote), which the report lists for the
    /// kernel team with a replay package.
    pub fn is_platform_gap(&self) -> bool {
        self.kind == FindingKind::UnexpectedRatio
            && self.severity == Severity::Info
            && self.statistics.expected_learned.is_none()
            && self.expected_ratio.is_some_and(|expected| {
                self.delta_percent
                    .is_some_and(|d| 1.0 + d / 100.0 > expected)
            })
    }

    /// A finding with its rule, severity, kind, workload and message, and
    /// nothing else yet: no op, no figures, no advice, priority low. Each
    /// rule fills in what it measured.
    pub fn new(
        rule: impl Into<String>,
        severity: Severity,
        kind: FindingKind,
        workload: impl Into<String>,
        message: String,
    ) -> Finding {
        Finding {
            rule: rule.into(),
            severity,
            kind,
            workload: workload.into(),
            op: None,
            metric: String::new(),
            baseline: None,
            candidate: None,
            unit: String::new(),
            delta_percent: None,
            interval_percent: None,
            expected_ratio: None,
            limit: None,
            impact_percent: None,
            priority: FindingPriority::Low,
            message,
            path_a: None,
            path_b: None,
            kernel_diff: None,
            replay_package: None,
            accepted: None,
            statistics: FindingStatistics::default(),
        }
    }
}

/// A finding's severity as report.json writes it: [`Severity`]'s names and
/// `accepted`, which policies cannot write.
fn report_severity<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Severity, D::Error> {
    let name = String::deserialize(d)?;
    match name.as_str() {
        "fail" => Ok(Severity::Fail),
        "warn" => Ok(Severity::Warn),
        "accepted" => Ok(Severity::Accepted),
        "info" => Ok(Severity::Info),
        other => Err(serde::de::Error::unknown_variant(
            other,
            &["fail", "warn", "accepted", "info"],
        )),
    }
}

/// Baseline or candidate environment, for the comment's environment table.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EnvironmentSummary {
    /// GPU names with counts, e.g. `8 × NVIDIA H100 80GB HBM3`.
    pub gpus: String,
    /// Catalog hardware used for expected ratios, when known.
    pub hardware: Option<String>,
    /// Runtime: `CUDA 12.4`, `ROCm 6.2` …, when recorded.
    pub runtime: Option<String>,
    /// PyTorch version, when recorded.
    pub pytorch: Option<String>,
    /// Rank / world size, when distributed.
    pub distributed: Option<String>,
    /// How many traces or snapshots this side combines.
    pub runs: usize,
}

/// One GPU-timeline metric, baseline vs candidate (µs).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimelineRow {
    /// `total_time`, `busy_time`, `idle_time`, `computation_time`,
    /// `exposed_comm_time`, `exposed_memcpy_time`.
    pub metric: String,
    /// Baseline, µs.
    pub baseline_us: f64,
    /// Candidate, µs.
    pub candidate_us: f64,
    /// Change, %.
    pub delta_percent: Option<f64>,
}

/// One workload's comparison summary.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkloadSummary {
    /// Workload name (file stem).
    pub name: String,
    /// Baseline environment.
    pub baseline: EnvironmentSummary,
    /// Candidate environment.
    pub candidate: EnvironmentSummary,
    /// Whether the two sides ran on different hardware.
    pub cross_platform: bool,
    /// GPU timeline, baseline vs candidate.
    pub timeline: Vec<TimelineRow>,
    /// Op rows matched exactly.
    pub matched: usize,
    /// Matched rows with no finding.
    pub unchanged: usize,
    /// Notes that are not findings (e.g. "one sample per op: no confidence interval").
    pub notes: Vec<String>,
}

/// Finding counts for the headline.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Regressions that fail the gate (slowdowns, a rank set's slower
    /// collectives and slower-than-expected cross-platform ratios of
    /// severity `fail`); a warn-severity one counts
    /// as a warning only.
    pub regressions: usize,
    /// Warn-severity findings.
    pub warnings: usize,
    /// Fail-severity findings.
    pub failures: usize,
    /// Improvements.
    pub improvements: usize,
    /// Matched op rows without a finding.
    pub unchanged: usize,
    /// New ops.
    pub new: usize,
    /// Missing ops.
    pub missing: usize,
    /// Groups (one line per op and kind, see [`FindingGroup`]) of severity
    /// `fail` that are not [`FindingGroup::inconclusive`]: the lines a
    /// reader sees failing.
    #[serde(default)]
    pub failing_groups: usize,
    /// Groups of severity `fail` that are [`FindingGroup::inconclusive`]:
    /// changes the data cannot confirm, which make the verdict inconclusive.
    #[serde(default)]
    pub inconclusive_groups: usize,
    /// Groups of severity `warn`.
    #[serde(default)]
    pub warning_groups: usize,
    /// Findings an accept entry covers (they do not fail the gate).
    #[serde(default)]
    pub accepted: usize,
}

/// Findings of one kind about one op in one workload, shown as one line
/// (`aten::mm — 8 shapes, +27…+32%, same kernels, +12.0% of GPU time`) with
/// the per-shape findings under it. A finding without an op (timeline,
/// integrity, nothing to compare) is a group of its own. Every finding is in
/// exactly one group.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FindingGroup {
    /// The workload.
    pub workload: String,
    /// The op name, or what a finding without an op is about (its metric).
    pub label: String,
    /// The findings' kind.
    pub kind: FindingKind,
    /// The most severe of its findings.
    #[serde(deserialize_with = "report_severity")]
    pub severity: Severity,
    /// A failing group whose failing findings are all changes the data
    /// cannot confirm (`statistics.inconclusive`: a one-sample change the
    /// noise of one call cannot tell from noise): shown as inconclusive, not
    /// as failing.
    #[serde(default)]
    pub inconclusive: bool,
    /// Indices into [`Verdict::findings`], most important first.
    pub findings: Vec<usize>,
    /// Per finding (parallel to `findings`): what tells it from a finding of
    /// the group with the same input dims — a layout from the strides
    /// (`NT`, `TN`: each 2-D operand row-major `N` or transposed `T`), the
    /// dtypes, or the module path; `null` when its dims are unique.
    pub tags: Vec<Option<String>>,
    /// Distinct shapes among the findings (input dims, dtypes and strides:
    /// a layout is a shape of its own to a kernel).
    pub shapes: usize,
    /// The change of the group as a whole, %, always one its rows show: the
    /// op's rows summed when a finding judged them (`46 shapes`), else the
    /// ratio of the summed candidate figures of its rows to their summed
    /// baseline figures, minus 1 (not a median of the rows' ratios), when
    /// they share one metric, else its most important row's; `null` when the
    /// rows have no times.
    pub delta_percent: Option<f64>,
    /// What the times behind `delta_percent` are per (`call`, `step`,
    /// `run`); `null` when not known.
    #[serde(default)]
    pub delta_per: Option<Per>,
    /// The smallest and largest change among its findings, %.
    pub delta_range_percent: Option<(f64, f64)>,
    /// Summed `impact_percent` of its findings.
    pub impact_percent: Option<f64>,
    /// Whether every row launches the same kernel sequence on both sides;
    /// `null` when not known (no matched rows).
    pub same_kernels: Option<bool>,
    /// Change of the time per call, % (summed time over summed calls on each side).
    pub per_call_delta_percent: Option<f64>,
    /// Calls (per run or per step) summed over its rows: (baseline, candidate).
    pub calls: Option<(u64, u64)>,
    /// What differs between the two sides' environments (`runtime CUDA 12.4 →
    /// CUDA 12.6`), `;`-separated; empty when nothing recorded differs. Across
    /// platforms the GPUs and hardware, which differ on purpose, are left out.
    pub environment_changes: String,
    /// The group in one line, as every renderer shows it.
    pub summary: String,
    /// Why it likely happened and where to look, specific to the group;
    /// `null` for groups that are not slowdowns.
    pub advice: Option<String>,
    /// Path A (model/API change), once for the group.
    pub path_a: Option<String>,
    /// Path B (kernel tuning), once for the group.
    pub path_b: Option<String>,
}

/// The outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// No fail finding.
    Pass,
    /// At least one fail finding.
    Fail,
    /// No fail finding but a failing integrity finding: the trace cannot
    /// support a pass (too little GPU time in judged rows, under-recorded).
    Inconclusive,
    /// Too little of the two sides' work matches (the policy's
    /// `integrity.min_matched_share`): they look like different workloads,
    /// and comparing them is an input error, not a regression.
    DifferentWorkloads,
}

impl Outcome {
    /// The process exit code: 0 pass, 1 fail or inconclusive, 2 different
    /// workloads (an input error, like a file that cannot be read).
    pub fn exit_code(self) -> u8 {
        match self {
            Outcome::Pass => 0,
            Outcome::Fail | Outcome::Inconclusive => 1,
            Outcome::DifferentWorkloads => 2,
        }
    }

    /// Lower-case name, as report.json writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail => "fail",
            Outcome::Inconclusive => "inconclusive",
            Outcome::DifferentWorkloads => "different_workloads",
        }
    }
}

/// The verdict: what `report.json` holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// [`VERDICT_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// [`VERDICT_SCHEMA_MINOR`]; 0 in a report.json written before it existed.
    #[serde(default)]
    pub schema_minor: u32,
    /// tracegate version.
    pub tracegate_version: String,
    /// Pass, fail or inconclusive.
    pub outcome: Outcome,
    /// One line, e.g. `❌ 2 regressions fail the gate`.
    pub headline: String,
    /// Counts over all workloads.
    pub counts: Counts,
    /// Per-workload summaries.
    pub workloads: Vec<WorkloadSummary>,
    /// All findings, most important first (severity, then priority, then impact).
    pub findings: Vec<Finding>,
    /// The findings grouped by op, most important group first; empty in a
    /// report.json of schema minor below 2.
    #[serde(default)]
    pub groups: Vec<FindingGroup>,
    /// The policy file used (or `built-in default`).
    pub policy: String,
}

impl Verdict {
    /// Sorts findings: fail before warn before info; within a severity, op
    /// slowdowns (the causes) before the timeline and budget findings they
    /// cause, then integrity findings (they put the rest in doubt); then
    /// priority, then larger absolute impact first.
    pub fn sort_findings(&mut self) {
        let is_cause = |f: &Finding| {
            f.op.is_some()
                && matches!(
                    f.kind,
                    FindingKind::Regression
                        | FindingKind::UnexpectedRatio
                        | FindingKind::Collective
                )
        };
        let doubts = |f: &Finding| f.kind == FindingKind::Integrity;
        self.findings.sort_by(|a, b| {
            a.severity
                .cmp(&b.severity)
                .then(is_cause(b).cmp(&is_cause(a)))
                // A confirmed slowdown before one the data cannot confirm.
                .then(a.statistics.inconclusive.cmp(&b.statistics.inconclusive))
                .then(doubts(b).cmp(&doubts(a)))
                .then(a.priority.cmp(&b.priority))
                .then(
                    b.impact_percent
                        .unwrap_or(0.0)
                        .abs()
                        .total_cmp(&a.impact_percent.unwrap_or(0.0).abs()),
                )
        });
    }
}
