//! Drift: the candidate against the run N merges ago on the target branch,
//! so that five merges of +1.5% each, every one within a single check's
//! noise, fail together at +7.7% with the commits that added it listed.
//!
//! The workload's value is its GPU computation time per step
//! ([`EntryMeta::computation_per_step_us`]); an op's is its GPU time per
//! step ([`op_times_per_step`]), for the ops holding at least
//! [`DriftRule::min_share_percent`] of the candidate's GPU time. Only a
//! slowdown beyond the limit is drift: getting faster never fails. The
//! limit is raised to the history's own run-to-run noise ([`step_spread`]),
//! so that noisy runs do not drift by chance.
//!
//! The gate does not know the history (history depends on the gate), so a
//! [`Drift`] builds its own [`Finding`] (rule `drift`) for `check` to add.

use super::changepoint::change_percent;
use super::entry::EntryMeta;
use super::series::{Point, op_series, op_times_per_step, workload_series};
use crate::gate::snapshot::Snapshot;
use crate::gate::verdict::{Finding, FindingKind, FindingPriority, OpRef, Per, Severity};

pub use crate::gate::verdict::DRIFT_RULE;

/// Commits a drift message lists by name; more are counted.
const LISTED_COMMITS: usize = 10;

/// How far back drift looks and how much it allows.
#[derive(Clone, Debug, PartialEq)]
pub struct DriftRule {
    /// Compare with the run this many merges before the candidate.
    pub merges: usize,
    /// The most the value may grow over those merges, %.
    pub limit_percent: f64,
    /// Ops below this share of the candidate's GPU time, %, are not
    /// followed one by one.
    pub min_share_percent: f64,
}

impl Default for DriftRule {
    fn default() -> DriftRule {
        DriftRule {
            merges: 5,
            limit_percent: 5.0,
            min_share_percent: 1.0,
        }
    }
}

/// One merge of a drift: its commit, its value and its change from the
/// merge before it.
#[derive(Clone, Debug, PartialEq)]
pub struct DriftStep {
    /// The commit.
    pub commit: String,
    /// Its value, µs per step.
    pub value_us: f64,
    /// `value / previous value − 1`, %.
    pub delta_percent: f64,
}

/// A value that grew beyond the limit over the last merges.
#[derive(Clone, Debug, PartialEq)]
pub struct Drift {
    /// The workload.
    pub workload: String,
    /// The op, for an op's drift; `None` for the workload's computation time.
    pub op: Option<OpRef>,
    /// How many merges back the reference run is.
    pub merges: usize,
    /// The limit exceeded, %.
    pub limit_percent: f64,
    /// The reference run's commit (N merges before the candidate).
    pub reference_commit: String,
    /// The reference run's value, µs per step.
    pub reference_us: f64,
    /// The candidate's value, µs per step.
    pub candidate_us: f64,
    /// `candidate / reference − 1`, %.
    pub total_percent: f64,
    /// The added time as a share of the reference run's GPU busy time, %.
    pub impact_percent: f64,
    /// Every merge after the reference up to the candidate (the last), oldest
    /// first, each with its own change.
    pub steps: Vec<DriftStep>,
}

/// The workload's drift: the candidate's computation time per step against
/// the run `rule.merges` before it in `history` (the workload's runs on the
/// target branch, oldest first, the newest the last merge). `None` when it
/// grew by no more than the limit, or the history is shorter than that.
pub fn workload_drift(
    history: &[EntryMeta],
    candidate: &EntryMeta,
    rule: &DriftRule,
) -> Option<Drift> {
    let window = window(history, rule)?;
    let reference = &window[0];
    let points = workload_series(window);
    let spread = step_spread(&workload_series(spread_runs(history)));
    let candidate_point = workload_series(std::slice::from_ref(candidate)).remove(0);
    drift_of(
        &points,
        &candidate_point,
        rule,
        spread,
        busy_per_step(reference),
    )
    .map(|drift| Drift {
        workload: candidate.workload.clone(),
        ..drift
    })
}

/// The drift of every op holding at least `rule.min_share_percent` of the
/// candidate's GPU time, over the same runs as [`workload_drift`] with their
/// snapshots; most added time first.
pub fn op_drift(
    history: &[(EntryMeta, Snapshot)],
    candidate: &(EntryMeta, Snapshot),
    rule: &DriftRule,
) -> Vec<Drift> {
    let Some(window) = window(history, rule) else {
        return Vec::new();
    };
    let (entry, snapshot) = candidate;
    let busy = busy_per_step(entry);
    let reference_busy = busy_per_step(&window[0].0);
    let mut drifts: Vec<Drift> = op_times_per_step(snapshot)
        .into_iter()
        .filter(|&(_, us)| busy > 0.0 && us / busy * 100.0 >= rule.min_share_percent)
        .filter_map(|(name, us)| {
            let points = op_series(window, &name);
            let candidate_point = Point {
                commit: entry.commit.clone(),
                time: entry.time.clone(),
                run_url: entry.run_url.clone(),
                value_us: us,
            };
            let spread = step_spread(&op_series(spread_runs(history), &name));
            let drift = drift_of(&points, &candidate_point, rule, spread, reference_busy)?;
            let category = snapshot
                .ops
                .iter()
                .find(|op| op.name == name)
                .map(|op| op.category.as_str().to_string())
                .unwrap_or_default();
            Some(Drift {
                workload: entry.workload.clone(),
                op: Some(OpRef {
                    name,
                    category,
                    ..OpRef::default()
                }),
                ..drift
            })
        })
        .collect();
    drifts.sort_by(|a, b| b.impact_percent.total_cmp(&a.impact_percent));
    drifts
}

impl Drift {
    /// The finding `check` reports (`severity`: fail on the target
    /// branch's own runs, info on a pull request, whose own change the
    /// other rules judge): rule `drift`, a timeline finding for the
    /// workload's computation time or a regression of the op, with the
    /// merges that added up to it in the message:
    /// `computation time +7.7% over the last 5 merges (abc1234 +1.5%, …)`.
    pub fn finding(&self, severity: Severity) -> Finding {
        let (kind, what, metric) = match &self.op {
            Some(op) => (
                FindingKind::Regression,
                format!("{} GPU time", op.name),
                "GPU time per step (all shapes)",
            ),
            None => (
                FindingKind::Timeline,
                "computation time".to_string(),
                "computation_time_per_step",
            ),
        };
        let mut commits: Vec<String> = self
            .steps
            .iter()
            .take(LISTED_COMMITS)
            .map(|step| format!("{} {:+.1}%", short(&step.commit), step.delta_percent))
            .collect();
        if self.steps.len() > LISTED_COMMITS {
            commits.push(format!("{} more", self.steps.len() - LISTED_COMMITS));
        }
        let mut message = format!(
            "{what} {:+.1}% over the last {} merges, beyond the {}% drift limit (since {}: {})",
            self.total_percent,
            self.merges,
            crate::gate::verdict::trimmed_number((self.limit_percent * 10.0).round() / 10.0),
            short(&self.reference_commit),
            commits.join(", ")
        );
        if severity == Severity::Info {
            // A pull request is judged on what it adds.
            let added = self.steps.last().map_or(0.0, |s| s.delta_percent);
            message.push_str(&format!(
                "; for information: the drift is the target branch's (judged on its own runs), \
                 this change adds {added:+.1}%"
            ));
        }
        let mut finding = Finding {
            op: self.op.clone(),
            metric: metric.to_string(),
            baseline: Some(self.reference_us),
            candidate: Some(self.candidate_us),
            unit: "µs".to_string(),
            delta_percent: Some(self.total_percent),
            limit: Some(self.limit_percent),
            impact_percent: Some(self.impact_percent),
            priority: FindingPriority::of_impact(self.impact_percent),
            ..Finding::new(DRIFT_RULE, severity, kind, self.workload.as_str(), message)
        };
        finding.statistics.per = Some(Per::Step);
        finding.statistics.limit_unit = Some("%".to_string());
        finding
    }
}

/// The last `rule.merges` runs of the history, the reference first; `None`
/// when there are fewer or none are asked for.
fn window<'a, T>(history: &'a [T], rule: &DriftRule) -> Option<&'a [T]> {
    let start = history.len().checked_sub(rule.merges)?;
    (rule.merges > 0).then(|| &history[start..])
}

/// How many of the newest runs of the history measure its run-to-run
/// spread ([`step_spread`]).
const SPREAD_RUNS: usize = 20;

/// How many of the spread's standard deviations a drift must exceed: the
/// candidate against the reference is one run against another, each with
/// its noise.
const SPREAD_DEVIATIONS: f64 = 3.0;

/// The newest [`SPREAD_RUNS`] runs of a history.
fn spread_runs<T>(history: &[T]) -> &[T] {
    &history[history.len().saturating_sub(SPREAD_RUNS)..]
}

/// The history's run-to-run noise of one value: the spread of its changes
/// from one merge to the next (log ratios) around their median, as a
/// standard deviation (relative; 0.02 = 2%); a steady drift (every merge
/// adding about the same) leaves it small, noise between runs does not.
/// `None` with fewer than 3 changes.
fn step_spread(points: &[Point]) -> Option<f64> {
    let changes: Vec<f64> = points
        .windows(2)
        .filter(|pair| pair[0].value_us > 0.0 && pair[1].value_us > 0.0)
        .map(|pair| (pair[1].value_us / pair[0].value_us).ln())
        .collect();
    if changes.len() < 3 {
        return None;
    }
    let mut sorted = changes.clone();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    let variance = changes.iter().map(|c| (c - median).powi(2)).sum::<f64>() / changes.len() as f64;
    Some(variance.sqrt())
}

/// The drift from `points[0]` (the reference) through the other points to
/// the candidate, when the candidate grew beyond the limit, raised to
/// [`SPREAD_DEVIATIONS`] times the history's measured run-to-run noise
/// (`spread`, [`step_spread`]); the workload is left for the caller to name.
fn drift_of(
    points: &[Point],
    candidate: &Point,
    rule: &DriftRule,
    spread: Option<f64>,
    reference_busy_us: f64,
) -> Option<Drift> {
    let reference = points.first()?;
    if reference.value_us <= 0.0 {
        return None;
    }
    let total_percent = (candidate.value_us / reference.value_us - 1.0) * 100.0;
    let noise_percent = spread.map_or(0.0, |s| (SPREAD_DEVIATIONS * s).exp_m1() * 100.0);
    let limit_percent = rule.limit_percent.max(noise_percent);
    if total_percent <= limit_percent {
        return None;
    }
    let run: Vec<&Point> = points.iter().chain(std::iter::once(candidate)).collect();
    let steps: Vec<DriftStep> = run
        .windows(2)
        .map(|pair| DriftStep {
            commit: pair[1].commit.clone(),
            value_us: pair[1].value_us,
            // From 0 (an op not called) an infinite change; 0 to 0 none.
            delta_percent: change_percent(pair[0].value_us, pair[1].value_us),
        })
        .collect();
    // Drift is added up over merges: one merge holding the growth is a step
    // (the regression rule's and the change points' to report), not drift.
    if contributors(&steps, total_percent) < MIN_CONTRIBUTORS {
        return None;
    }
    let added = candidate.value_us - reference.value_us;
    Some(Drift {
        workload: String::new(),
        op: None,
        merges: rule.merges,
        limit_percent,
        reference_commit: reference.commit.clone(),
        reference_us: reference.value_us,
        candidate_us: candidate.value_us,
        total_percent,
        impact_percent: if reference_busy_us > 0.0 {
            added / reference_busy_us * 100.0
        } else {
            total_percent
        },
        steps,
    })
}

/// Merges that must each add part of a drift for it to be drift.
pub const MIN_CONTRIBUTORS: usize = 2;

/// The merges that added a share of the growth: at least half of an even
/// share of `total_percent` over the steps (five merges of +1.5% are five;
/// a +21% jump among ±0.5% noise is one).
fn contributors(steps: &[DriftStep], total_percent: f64) -> usize {
    let share = total_percent / (2.0 * steps.len().max(1) as f64);
    steps
        .iter()
        .filter(|step| step.delta_percent > 0.0 && step.delta_percent >= share)
        .count()
}

/// A run's GPU busy time per step, µs.
fn busy_per_step(entry: &EntryMeta) -> f64 {
    entry.busy_time_us / entry.steps.max(1) as f64
}

/// A commit as messages show it: its first 7 characters.
fn short(commit: &str) -> &str {
    commit.get(..7).unwrap_or(commit)
}

#[cfg(test)]
mod tests;
