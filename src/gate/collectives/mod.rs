//! Gating rank sets: a job's collectives matched across its ranks
//! ([`crate::analysis::ranks::analyse`]) on each side and judged.
//!
//! Three rules, each a [`Finding`] for `check` to add to the verdict
//! (through `JudgeOptions::findings`, as drift enters):
//!
//! - **`collectives`** (kind `collective`): a collective (kind and process
//!   group, `all_reduce (pg 0)`) got slower. One sample per instance: its time once
//!   every rank was in (the last arrival's kernel duration, so a straggler's
//!   wait is not counted as the network's). The samples are judged as op
//!   rows are: the seeded bootstrap of the ratio of medians, the policy's
//!   threshold (`noise`), its impact minimum and the false-discovery rate
//!   across the collectives; the algorithm bandwidth is shown.
//! - **`collectives.straggler`** (kind `straggler`): a rank arrives last
//!   at more than `communication.straggler_share` of the candidate's
//!   collectives but not the baseline's, with the wait it makes the other
//!   ranks sit through; its figures are every rank's wait for the last
//!   arrival, per rank, so a straggler that took over another's wait adds
//!   nothing.
//! - **`collectives.exposed_comm`** (kind `timeline`, as the one-trace
//!   `exposed_comm_time` gate it extends to every rank): the exposed
//!   communication time (not hidden behind the rank's compute) grew beyond
//!   `communication.max_exposed_growth_percent`, the largest over ranks or
//!   the mean.
//!
//! Impacts are shares of the lowest rank's GPU busy time (the timeline a
//! merged snapshot carries), per rank.

pub mod floor;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use crate::analysis::ranks::{self, Instance, RankSet};
use crate::gate::policy::Policy;
use crate::gate::snapshot::{Snapshot, spaced_sample};
use crate::gate::stats::{self, IntervalKind, RatioEstimate, bh_adjust};
use crate::gate::verdict::{
    Finding, FindingKind, FindingPriority, OpRef, Per, SampleCounts, Severity,
};

/// The rule of a collective's slowdown.
pub const COLLECTIVES_RULE: &str = "collectives";
/// The rule of a new straggler.
pub const STRAGGLER_RULE: &str = "collectives.straggler";
/// The rule of exposed communication growth.
pub const EXPOSED_RULE: &str = "collectives.exposed_comm";

/// The most instances of one collective a side's sample keeps (evenly
/// spaced), so a long job's bootstrap stays cheap.
const MAX_INSTANCE_SAMPLES: usize = 4096;

/// One collective's instances on one side: durations, µs, and the bytes and
/// time of those that recorded their message size.
#[derive(Clone, Debug, Default)]
struct Samples {
    durations_us: Vec<f64>,
    sized_bytes: f64,
    sized_us: f64,
}

impl Samples {
    fn add(&mut self, instance: &Instance) {
        self.durations_us.push(instance.duration_us);
        if let Some(bytes) = instance.bytes {
            self.sized_bytes += bytes as f64;
            self.sized_us += instance.duration_us;
        }
    }

    /// Algorithm bandwidth, GB/s.
    fn algbw_gbps(&self) -> Option<f64> {
        (self.sized_us > 0.0).then(|| self.sized_bytes / self.sized_us / 1e3)
    }
}

/// The label of a collective: `all_reduce (pg 0)`.
pub fn label(instance: &Instance) -> String {
    format!("{} ({})", instance.collective.name(), instance.group)
}

/// The rank sets of `baselines` and `candidate` judged; no findings when
/// either side holds no ranks' communication.
pub fn judge(
    workload: &str,
    baselines: &[&Snapshot],
    candidate: &Snapshot,
    policy: &Policy,
) -> Vec<Finding> {
    let baseline_sets: Vec<RankSet> = baselines
        .iter()
        .filter(|s| !s.ranks.is_empty())
        .map(|s| ranks::analyse(&s.rank_inputs()))
        .collect();
    if baseline_sets.is_empty() || candidate.ranks.is_empty() {
        return Vec::new();
    }
    let candidate_set = ranks::analyse(&candidate.rank_inputs());
    let busy_us =
        baselines.iter().map(|s| s.timeline.busy_time).sum::<f64>() / baselines.len() as f64;
    let mut findings =
        collective_findings(workload, &baseline_sets, &candidate_set, busy_us, policy);
    findings.extend(straggler_finding(
        workload,
        &baseline_sets,
        &candidate_set,
        busy_us,
        policy,
    ));
    findings.extend(exposed_finding(
        workload, baselines, candidate, busy_us, policy,
    ));
    findings
}

/// Each collective's samples, by label.
fn by_collective<'a>(sets: impl IntoIterator<Item = &'a RankSet>) -> BTreeMap<String, Samples> {
    let mut samples: BTreeMap<String, Samples> = BTreeMap::new();
    for set in sets {
        for instance in &set.instances {
            samples.entry(label(instance)).or_default().add(instance);
        }
    }
    samples
}

/// The `collectives` findings: slowdowns beyond the threshold with a
/// material impact, the false-discovery rate controlled across them.
fn collective_findings(
    workload: &str,
    baselines: &[RankSet],
    candidate: &RankSet,
    busy_us: f64,
    policy: &Policy,
) -> Vec<Finding> {
    let noise = &policy.noise;
    let threshold_percent = noise.threshold_percent(None);
    let up = 1.0 + threshold_percent / 100.0;
    let baseline = by_collective(baselines);
    let candidate = by_collective([candidate]);
    let runs = baselines.len() as f64;
    let mut tested: Vec<(Finding, f64)> = Vec::new();
    for (name, c) in &candidate {
        let Some(b) = baseline.get(name) else {
            continue;
        };
        let b_samples = spaced_sample(&b.durations_us, MAX_INSTANCE_SAMPLES);
        let c_samples = spaced_sample(&c.durations_us, MAX_INSTANCE_SAMPLES);
        let estimate = stats::ratio_of_medians_ci(
            &b_samples,
            &c_samples,
            noise.confidence,
            noise.resamples as usize,
            stats::seed_from_parts(noise.seed, &[workload, name]),
        );
        let median = |values: &[f64]| {
            let mut sorted = values.to_vec();
            sorted.sort_by(f64::total_cmp);
            stats::quantile_sorted(&sorted, 0.5).unwrap_or(0.0)
        };
        let (b_median, c_median) = (median(&b_samples), median(&c_samples));
        let b_total = b.durations_us.iter().sum::<f64>() / runs;
        let c_total: f64 = c.durations_us.iter().sum();
        let min_time = noise.min_time_for(busy_us);
        if b_total.max(c_total) < min_time || busy_us <= 0.0 {
            continue;
        }
        let added = (c_median - b_median) * c.durations_us.len() as f64;
        let impact_percent = added / busy_us * 100.0;
        if estimate.ratio <= up || impact_percent < noise.min_impact_percent {
            continue;
        }
        let bounds = estimate.bounds();
        let low = bounds.map_or(estimate.ratio, |b| b.interval.low);
        let confident = low > up;
        let severity = if confident {
            policy.regression.severity
        } else if low > 1.0 {
            Severity::Warn
        } else {
            continue;
        };
        let delta = (estimate.ratio - 1.0) * 100.0;
        let bandwidth = match (b.algbw_gbps(), c.algbw_gbps()) {
            (Some(before), Some(after)) => {
                format!("; algbw {before:.1} → {after:.1} GB/s")
            }
            _ => String::new(),
        };
        let certainty = if confident {
            String::new()
        } else {
            format!(
                ", inconclusive: its interval reaches below the {threshold_percent:.1}% threshold"
            )
        };
        let message = format!(
            "{name} is {delta:.1}% slower per call once every rank is in (median {} → {} over {} \
             calls){certainty}, {impact_percent:+.2}% of GPU time per rank{bandwidth}",
            micros(b_median),
            micros(c_median),
            c.durations_us.len()
        );
        let mut finding = Finding {
            op: Some(OpRef {
                name: name.clone(),
                category: "communication".to_string(),
                ..OpRef::default()
            }),
            metric: "collective time per call (last arrival's kernel)".to_string(),
            baseline: Some(b_median),
            candidate: Some(c_median),
            unit: "µs".to_string(),
            delta_percent: Some(delta),
            limit: Some(threshold_percent),
            impact_percent: Some(impact_percent),
            priority: FindingPriority::of_impact(impact_percent),
            ..Finding::new(
                COLLECTIVES_RULE,
                severity,
                FindingKind::Collective,
                workload,
                message,
            )
        };
        call_statistics(&mut finding, &estimate);
        finding.statistics.inconclusive = !confident;
        tested.push((finding, estimate.p_value_above(up).unwrap_or(0.0)));
    }
    discoveries(tested, noise.false_discovery_rate)
}

/// A per-call finding's interval and sample figures from its estimate:
/// the interval (confidence, or the range over the calls), the calls a
/// side, a relative limit.
fn call_statistics(finding: &mut Finding, estimate: &RatioEstimate) {
    let bounds = estimate.bounds();
    finding.interval_percent = bounds.map(|b| {
        (
            (b.interval.low - 1.0) * 100.0,
            (b.interval.high - 1.0) * 100.0,
        )
    });
    let statistics = &mut finding.statistics;
    statistics.per = Some(Per::Call);
    statistics.limit_unit = Some("%".to_string());
    statistics.samples = Some(SampleCounts {
        per: Per::Call,
        baseline: estimate.n_baseline,
        candidate: estimate.n_candidate,
    });
    statistics.interval_kind = bounds.map(|b| b.kind);
    statistics.confidence = bounds
        .filter(|b| b.kind == IntervalKind::Confidence)
        .map(|_| estimate.confidence);
}

/// The tested findings that survive the Benjamini–Hochberg procedure at
/// `rate` (inconclusive ones are kept: they fail nothing), largest impact
/// first.
fn discoveries(tested: Vec<(Finding, f64)>, rate: f64) -> Vec<Finding> {
    let p_values: Vec<f64> = tested.iter().map(|(_, p)| *p).collect();
    let adjusted = bh_adjust(&p_values);
    let mut findings: Vec<Finding> = tested
        .into_iter()
        .zip(adjusted)
        .filter(|((finding, _), q)| finding.statistics.inconclusive || *q <= rate)
        .map(|((finding, _), _)| finding)
        .collect();
    findings.sort_by(|a, b| {
        b.impact_percent
            .unwrap_or(0.0)
            .total_cmp(&a.impact_percent.unwrap_or(0.0))
    });
    findings
}

/// The rank that arrives last at more than `share` of a set's collectives,
/// with that share, the wait it caused and the instances it took part in.
fn straggler(set: &RankSet, share: f64) -> Option<(u32, f64, f64, u64)> {
    set.stragglers
        .iter()
        .filter(|row| row.collectives > 0)
        .map(|row| {
            let part = row.last as f64 / row.collectives as f64;
            (row.rank, part, row.caused_wait_us, row.collectives)
        })
        .filter(|(_, part, _, _)| *part > share)
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

/// Every rank's wait for the last arrival, summed over a set's
/// collectives, µs.
fn total_wait_us(set: &RankSet) -> f64 {
    set.instances
        .iter()
        .flat_map(|i| &i.arrivals)
        .map(|a| a.wait_us)
        .sum()
}

/// The collective `rank` arrives last at most often, as (label, calls it
/// was last at, calls of it the rank took part in, the others' wait at
/// those it was last at, µs).
fn most_late_at(set: &RankSet, rank: u32) -> Option<(String, u64, u64, f64)> {
    let mut by_label: BTreeMap<String, (u64, u64, f64)> = BTreeMap::new();
    for instance in &set.instances {
        if !instance.arrivals.iter().any(|a| a.rank == rank) {
            continue;
        }
        let entry = by_label.entry(label(instance)).or_default();
        entry.1 += 1;
        if instance.last == Some(rank) {
            entry.0 += 1;
            entry.2 += instance.arrivals.iter().map(|a| a.wait_us).sum::<f64>();
        }
    }
    by_label
        .into_iter()
        .max_by(|a, b| a.1.0.cmp(&b.1.0).then(a.1.2.total_cmp(&b.1.2)))
        .map(|(name, (last, calls, wait))| (name, last, calls, wait))
}

/// The `collectives.straggler` finding: a straggler in the candidate that
/// no baseline had. Its label says where it arrives last and how often;
/// its figures are every rank's wait for the last arrival, per rank, on
/// each side (Δ its change, impact the added wait over the GPU busy time):
/// a straggler that only took over another's wait adds nothing.
fn straggler_finding(
    workload: &str,
    baselines: &[RankSet],
    candidate: &RankSet,
    busy_us: f64,
    policy: &Policy,
) -> Option<Finding> {
    let share = policy.communication.straggler_share;
    let (rank, part, caused_us, collectives) = straggler(candidate, share)?;
    let before: Vec<Option<(u32, f64, f64, u64)>> =
        baselines.iter().map(|set| straggler(set, share)).collect();
    if before.iter().flatten().any(|(r, ..)| *r == rank) {
        return None;
    }
    let ranks = candidate.ranks.len().max(1) as f64;
    let per_rank = caused_us / ranks;
    if busy_us <= 0.0 || per_rank < policy.noise.min_time_for(busy_us) {
        return None;
    }
    let (name, last, calls, wait_us) = most_late_at(candidate, rank)?;
    let b_wait = baselines
        .iter()
        .map(|set| total_wait_us(set) / set.ranks.len().max(1) as f64)
        .sum::<f64>()
        / baselines.len().max(1) as f64;
    let c_wait = total_wait_us(candidate) / ranks;
    let impact_percent = (c_wait - b_wait) / busy_us * 100.0;
    let delta_percent = (b_wait > 0.0).then(|| (c_wait / b_wait - 1.0) * 100.0);
    let baseline_words = match before.iter().flatten().next() {
        Some((other, other_part, ..)) => {
            format!(
                "the baseline's straggler was rank {other} (last at {:.0}%)",
                other_part * 100.0
            )
        }
        None => "the baseline had none".to_string(),
    };
    let others = if collectives > calls {
        format!(
            " (last at {:.0}% of its {collectives} collectives in all)",
            part * 100.0
        )
    } else {
        String::new()
    };
    let message = format!(
        "rank {rank} is a new straggler: last in {last} of {calls} {name} calls{others}, the other \
         ranks wait {} per call for it ({} per rank in all); every rank's wait for the last \
         arrival, per rank: {} → {} ({:+.2}% of GPU time); {baseline_words}",
        micros(wait_us / last.max(1) as f64),
        micros(per_rank),
        micros(b_wait),
        micros(c_wait),
        impact_percent,
    );
    Some(Finding {
        op: Some(OpRef {
            name: format!("rank {rank} arrives last in {last} of {calls} {name} calls"),
            category: "communication".to_string(),
            ..OpRef::default()
        }),
        metric: "wait for the last arrival at collectives, per rank".to_string(),
        baseline: Some(b_wait),
        candidate: Some(c_wait),
        unit: "µs".to_string(),
        delta_percent,
        limit: Some(share * 100.0),
        ..run_finding(
            (STRAGGLER_RULE, FindingKind::Straggler),
            workload,
            message,
            impact_percent,
            policy,
        )
    })
}

/// A finding of the whole run of `kind` under `rule` (severity
/// `communication.severity`, a relative limit), with its impact and the
/// priority that follows.
fn run_finding(
    (rule, kind): (&str, FindingKind),
    workload: &str,
    message: String,
    impact_percent: f64,
    policy: &Policy,
) -> Finding {
    let mut finding = Finding {
        impact_percent: Some(impact_percent),
        priority: FindingPriority::of_impact(impact_percent),
        ..Finding::new(rule, policy.communication.severity, kind, workload, message)
    };
    finding.statistics.per = Some(Per::Run);
    finding.statistics.limit_unit = Some("%".to_string());
    finding
}

/// The largest and the mean exposed communication time over a snapshot's
/// ranks, µs.
fn exposed(snapshot: &Snapshot) -> (f64, f64) {
    let values: Vec<f64> = snapshot.ranks.iter().map(|r| r.exposed_comm_us).collect();
    let max = values.iter().copied().fold(0.0, f64::max);
    (max, values.iter().sum::<f64>() / values.len().max(1) as f64)
}

/// The `collectives.exposed_comm` finding: the largest or mean exposed
/// communication over ranks grew beyond the limit with a material impact.
fn exposed_finding(
    workload: &str,
    baselines: &[&Snapshot],
    candidate: &Snapshot,
    busy_us: f64,
    policy: &Policy,
) -> Option<Finding> {
    let sides: Vec<(f64, f64)> = baselines
        .iter()
        .filter(|s| !s.ranks.is_empty())
        .map(|s| exposed(s))
        .collect();
    let n = sides.len() as f64;
    let b_max = sides.iter().map(|s| s.0).sum::<f64>() / n;
    let b_mean = sides.iter().map(|s| s.1).sum::<f64>() / n;
    let (c_max, c_mean) = exposed(candidate);
    let limit = policy
        .noise
        .raise(policy.communication.max_exposed_growth_percent, None);
    let growth = |before: f64, after: f64| (before > 0.0).then(|| (after / before - 1.0) * 100.0);
    let (max_growth, mean_growth) = (growth(b_max, c_max)?, growth(b_mean, c_mean)?);
    let impact_percent = (c_mean - b_mean) / busy_us * 100.0;
    if max_growth.max(mean_growth) <= limit
        || busy_us <= 0.0
        || impact_percent < policy.noise.min_impact_percent
    {
        return None;
    }
    let message = format!(
        "exposed communication grew beyond the {limit:.1}% limit: largest over ranks {} → {} \
         ({max_growth:+.1}%), mean {} → {} ({mean_growth:+.1}%), {impact_percent:+.2}% of GPU \
         time per rank",
        micros(b_max),
        micros(c_max),
        micros(b_mean),
        micros(c_mean),
    );
    Some(Finding {
        metric: "exposed communication time (largest over ranks)".to_string(),
        baseline: Some(b_max),
        candidate: Some(c_max),
        unit: "µs".to_string(),
        delta_percent: Some(max_growth),
        limit: Some(limit),
        ..run_finding(
            (EXPOSED_RULE, FindingKind::Timeline),
            workload,
            message,
            impact_percent,
            policy,
        )
    })
}

/// A time in words: `850.0 µs`, `1.25 ms`, `2.10 s`.
fn micros(us: f64) -> String {
    if us >= 1e6 {
        format!("{:.2} s", us / 1e6)
    } else if us >= 1e3 {
        format!("{:.2} ms", us / 1e3)
    } else {
        format!("{us:.1} µs")
    }
}
