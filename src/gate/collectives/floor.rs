//! One rank's collectives judged by their floor: the communication
//! kernels of a single-rank trace (one rank of a job, or a job's one
//! rank), compared call time against call time, kernel name by kernel
//! name ([`RankSnapshot::kernel_families`]).
//!
//! A collective call's time on one rank is the transfer plus the wait for
//! the other ranks to get there, and only the wait varies wildly: the
//! SendRecv calls of one HTA training rank take 17 µs to 12.6 ms. One
//! rank's trace cannot see the others, so the wait is not judged here;
//! the **floor** is: the [`FLOOR_QUANTILE`] quantile of the calls' times,
//! the calls that waited least, which is about the transfer itself (the
//! rank-set judge's analogue is the time the last-arriving rank sees,
//! `collectives`). A slower floor is a slower link or a slower algorithm
//! (protocol, channel count, a kernel choice); a longer wait on some calls
//! leaves it where it was.
//!
//! The floors are compared as op rows are: the seeded bootstrap of the
//! ratio of the two quantiles (paired call by call with one baseline run
//! of as many calls; the range over the calls below 8 a side), above the
//! policy's threshold (`noise`; raised to how far the floors of a window
//! of baseline runs disagree), with its impact minimum and the
//! false-discovery rate across the families; a family called once a side
//! is one measurement, tested against the noise of one call as an op row
//! of one call is (borrowed from the trace or the policy's prior, at least
//! the timing jitter over the call): confirmed it fails, unconfirmed it is
//! inconclusive (`noise.on_unconfirmed_single_sample`). The finding (rule [`FLOOR_RULE`], kind
//! `collective`) is named after the kernel.
//!
//! [`RankSnapshot::kernel_families`]: crate::gate::snapshot::RankSnapshot::kernel_families

use super::{call_statistics, discoveries, micros};
use crate::gate::judge::{SINGLE_SAMPLE_Z, at_call, single_sample_z};
use crate::gate::policy::Policy;
use crate::gate::snapshot::{KernelSamples, Snapshot};
use crate::gate::stats::{self, RatioEstimate, normal_upper_tail, quantile_sorted};
use crate::gate::verdict::{
    Finding, FindingKind, FindingPriority, OpRef, Per, Severity, SingleSampleNoise,
};

/// The noise of one call and the call's time, µs, a one-call floor is
/// tested against.
type OneCall = (SingleSampleNoise, f64);

/// The rule of a collective's floor.
pub const FLOOR_RULE: &str = "collectives.floor";

/// The quantile of a collective's call times taken as its floor: the 10th
/// percentile. Low enough to sit among the calls that waited least: every
/// rank arrives last at some calls, whose time is the transfer alone (one
/// in eight in a balanced 8-rank job; in the HTA training ranks the lowest
/// quarter or so of the calls take tens of µs, the rest ms of waiting).
/// High enough to be an interpolation
/// of order statistics rather than the one fastest call, whose bootstrap
/// is degenerate (a resample misses it a third of the time) and which one
/// lucky call moves.
pub const FLOOR_QUANTILE: f64 = 0.1;

/// The floor findings of a single-rank workload: none unless the candidate
/// and every baseline hold one rank's communication (rank sets are the
/// `collectives` rules'). `noise` is the noise of one call one-sample rows
/// of the comparison are judged against (`judge::one_call_noise`: borrowed
/// or the policy's prior; `None` when the policy turns both off).
pub fn judge(
    workload: &str,
    baselines: &[&Snapshot],
    candidate: &Snapshot,
    noise: Option<SingleSampleNoise>,
    policy: &Policy,
) -> Vec<Finding> {
    let one_rank = |s: &Snapshot| s.ranks.len() == 1;
    if baselines.is_empty() || !one_rank(candidate) || !baselines.iter().all(|s| one_rank(s)) {
        return Vec::new();
    }
    // The GPU's busy time: at least the timeline's and at least the rank's
    // communication, which counts kernels with no launch in the trace that
    // the timeline leaves out.
    let busy = |s: &Snapshot| s.timeline.busy_time.max(s.ranks[0].total_comm_us);
    let busy_us = baselines.iter().map(|s| busy(s)).sum::<f64>() / baselines.len() as f64;
    let mut tested: Vec<(Finding, f64)> = Vec::new();
    let mut untested: Vec<Finding> = Vec::new();
    for family in &candidate.ranks[0].kernel_families {
        let Some(before) = baselines
            .iter()
            .map(|s| {
                s.ranks[0]
                    .kernel_families
                    .iter()
                    .find(|f| f.name == family.name)
            })
            .collect::<Option<Vec<&KernelSamples>>>()
        else {
            continue;
        };
        let sides = Sides::new(&before, family);
        match judge_family(workload, &sides, busy_us, noise, policy) {
            Some((finding, Some(p))) => tested.push((finding, p)),
            Some((finding, None)) => untested.push(finding),
            None => {}
        }
    }
    let mut findings = discoveries(tested, policy.noise.false_discovery_rate);
    findings.extend(untested);
    findings
}

/// One family's calls on both sides.
struct Sides<'a> {
    name: &'a str,
    baseline: Vec<f64>,
    candidate: &'a [f64],
    /// Baseline time per run, µs.
    baseline_total_us: f64,
    candidate_total_us: f64,
    calls: u64,
    /// Paired call by call: one baseline run of as many calls.
    paired: bool,
    /// The baseline runs' floors disagree by this much (relative), with
    /// two runs or more: the run-to-run noise the threshold is raised to.
    run_noise: Option<f64>,
}

impl<'a> Sides<'a> {
    fn new(before: &[&'a KernelSamples], after: &'a KernelSamples) -> Sides<'a> {
        Sides {
            name: &after.name,
            baseline: before
                .iter()
                .flat_map(|f| f.samples_us.iter().copied())
                .collect(),
            candidate: &after.samples_us,
            baseline_total_us: before.iter().map(|f| f.total_us).sum::<f64>() / before.len() as f64,
            candidate_total_us: after.total_us,
            calls: after.launches,
            paired: before.len() == 1 && before[0].launches == after.launches,
            run_noise: stats::max_relative_deviation(
                &before
                    .iter()
                    .map(|f| floor(&f.samples_us))
                    .collect::<Vec<_>>(),
            ),
        }
    }
}

/// The floor of call times.
fn floor(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    quantile_sorted(&sorted, FLOOR_QUANTILE).unwrap_or(0.0)
}

/// The time a slower floor added, µs: the family's measured added time,
/// counted no lower than the floor's change on every call (the least a
/// slower transfer adds: each call holds one) and no higher than the
/// floor's ratio applied to every call's whole time (the most: a call's
/// transfer is part of its time), so that wait which grew or shrank
/// elsewhere is not charged to the link.
fn added_us(sides: &Sides<'_>, ratio: f64, floors: (f64, f64)) -> f64 {
    let least = (floors.1 - floors.0) * sides.calls as f64;
    let most = (ratio - 1.0) * sides.baseline_total_us;
    (sides.candidate_total_us - sides.baseline_total_us)
        .min(most)
        .max(least)
}

/// One family's finding with its p-value (`None`: not a test that enters
/// the false-discovery procedure), or `None` when its floor did not get
/// materially slower.
fn judge_family(
    workload: &str,
    sides: &Sides<'_>,
    busy_us: f64,
    single: Option<SingleSampleNoise>,
    policy: &Policy,
) -> Option<(Finding, Option<f64>)> {
    let noise = &policy.noise;
    let threshold_percent = noise.threshold_percent(sides.run_noise.map(|n| n * 100.0));
    let up = 1.0 + threshold_percent / 100.0;
    if busy_us <= 0.0
        || sides.baseline_total_us.max(sides.candidate_total_us) < noise.min_time_for(busy_us)
    {
        return None;
    }
    let estimate = stats::ratio_of_quantiles_ci(
        (&sides.baseline, sides.candidate),
        FLOOR_QUANTILE,
        sides.paired,
        (
            noise.confidence,
            noise.resamples as usize,
            stats::seed_from_parts(noise.seed, &[workload, FLOOR_RULE, sides.name]),
        ),
    );
    let floors = (floor(&sides.baseline), floor(sides.candidate));
    let impact_percent = added_us(sides, estimate.ratio, floors) / busy_us * 100.0;
    if estimate.ratio.is_nan() || estimate.ratio <= up || impact_percent < noise.min_impact_percent
    {
        return None;
    }
    let fail = policy.regression.severity;
    let judged = match estimate.bounds() {
        Some(b) if b.interval.low > up => Judged {
            severity: fail,
            p_value: estimate.p_value_above(up),
            inconclusive: false,
            one_call: None,
            noise: None,
        },
        Some(b) if b.interval.low > 1.0 => Judged {
            severity: Severity::Warn,
            p_value: None,
            inconclusive: true,
            one_call: None,
            noise: None,
        },
        Some(_) => return None,
        None => one_call(
            &estimate,
            up,
            single.map(|n| (n, floors.0.min(floors.1))),
            policy,
        ),
    };
    let mut finding = floor_finding(workload, sides, &estimate, floors, judged.severity);
    let delta = (estimate.ratio - 1.0) * 100.0;
    let interval = match (&judged.one_call, finding.interval_percent) {
        (Some(words), _) => words.clone(),
        (None, Some((low, high))) => format!(
            "{} {low:+.1}% to {high:+.1}%",
            finding.statistics.interval_label()
        ),
        (None, None) => "no interval".to_string(),
    };
    let certainty = if judged.inconclusive && judged.noise.is_some() {
        ", inconclusive: one measurement a side cannot tell it from noise (profile more steps \
         or pass several baseline runs)"
            .to_string()
    } else if judged.inconclusive {
        format!(", inconclusive: its interval reaches below the {threshold_percent:.1}% threshold")
    } else {
        String::new()
    };
    let warning = if judged.severity == Severity::Warn && !judged.inconclusive {
        ". A warning: one call a side is a single measurement, which cannot fail the build on \
         its own"
    } else {
        ""
    };
    let floor_is = match sides.calls {
        1 => "one call is its own floor, transfer and wait together: one rank cannot tell \
              wait from transfer"
            .to_string(),
        calls if (calls as f64) < 1.0 / FLOOR_QUANTILE => format!(
            "with {calls} calls the floor is the fastest of them, which may still have waited \
             for the other ranks: one rank cannot tell wait from transfer (profile more steps, \
             or check the job's ranks together with --ranks)"
        ),
        calls => format!(
            "the floor is the {:.0}th percentile of its {calls} calls' times, the calls that \
             waited least for the other ranks: about the transfer itself",
            FLOOR_QUANTILE * 100.0
        ),
    };
    finding.message = format!(
        "{} is {delta:.1}% slower at its floor ({} → {} per call; {interval}){certainty}, \
         {impact_percent:+.2}% of GPU time; {floor_is}. A slower floor is a slower link or \
         collective algorithm; the wait for the other ranks is not judged on one rank{warning}",
        sides.name,
        micros(floors.0),
        micros(floors.1),
    );
    finding.limit = Some(threshold_percent);
    finding.impact_percent = Some(impact_percent);
    finding.priority = FindingPriority::of_impact(impact_percent);
    finding.statistics.inconclusive = judged.inconclusive;
    finding.statistics.single_sample_noise = judged.noise;
    Some((finding, judged.p_value))
}

/// How a floor that got slower is judged.
struct Judged {
    severity: Severity,
    /// Its p-value, when it enters the false-discovery procedure.
    p_value: Option<f64>,
    /// The bounds reach back below the threshold.
    inconclusive: bool,
    /// One call a side: the words that stand for the interval.
    one_call: Option<String>,
    /// One call a side: the noise of one call it was tested against.
    noise: Option<SingleSampleNoise>,
}

/// A one-call-a-side floor, tested against the noise of one call (`noise`:
/// borrowed from the trace's repeating rows or the policy's prior, raised
/// to the timing jitter over the call, as an op row of one call is): z
/// beyond [`SINGLE_SAMPLE_Z`] fails, its p-value entering the
/// false-discovery procedure; short of it the change is unconfirmed, at
/// the policy's `noise.on_unconfirmed_single_sample` (`fail`: the verdict
/// is inconclusive); with no noise at all, a warning: one measurement
/// cannot fail the build on its own.
fn one_call(estimate: &RatioEstimate, up: f64, noise: Option<OneCall>, policy: &Policy) -> Judged {
    let Some((n, call_us)) = noise else {
        return Judged {
            severity: Severity::Warn,
            p_value: None,
            inconclusive: false,
            one_call: Some("one call a side".to_string()),
            noise: None,
        };
    };
    let n = at_call(n, &policy.noise, call_us);
    let z = single_sample_z(estimate.ratio, up, &n);
    if z > SINGLE_SAMPLE_Z {
        return Judged {
            severity: policy.regression.severity,
            p_value: Some(normal_upper_tail(z)),
            inconclusive: false,
            one_call: Some(format!("one call a side; {}", n.describe())),
            noise: Some(n),
        };
    }
    Judged {
        severity: policy.noise.on_unconfirmed_single_sample,
        p_value: None,
        inconclusive: true,
        one_call: Some(format!("one call a side; {}", n.strays(Per::Call))),
        noise: Some(n),
    }
}

/// The finding's figures: the floors, the ratio's interval, the samples.
fn floor_finding(
    workload: &str,
    sides: &Sides<'_>,
    estimate: &RatioEstimate,
    (b_floor, c_floor): (f64, f64),
    severity: Severity,
) -> Finding {
    let mut finding = Finding {
        op: Some(OpRef {
            name: sides.name.to_string(),
            category: "communication".to_string(),
            ..OpRef::default()
        }),
        metric: format!(
            "collective floor per call ({:.0}th percentile of call times)",
            FLOOR_QUANTILE * 100.0
        ),
        baseline: Some(b_floor),
        candidate: Some(c_floor),
        unit: "µs".to_string(),
        delta_percent: Some((estimate.ratio - 1.0) * 100.0),
        ..Finding::new(
            FLOOR_RULE,
            severity,
            FindingKind::Collective,
            workload,
            String::new(),
        )
    };
    call_statistics(&mut finding, estimate);
    finding
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::timeline::Breakdown;
    use crate::gate::snapshot::RankSnapshot;
    use crate::gate::verdict::NoiseSource;

    const KERNEL: &str = "ncclDevKernel_SendRecv";

    /// One rank whose `KERNEL` calls take `times`, 10 ms of busy time.
    fn rank(times: &[f64]) -> Snapshot {
        let mut snapshot = crate::gate::snapshot::tests::tiny_snapshot();
        snapshot.timeline = Breakdown {
            busy_time: 10_000.0,
            ..Breakdown::default()
        };
        snapshot.ranks = vec![RankSnapshot {
            rank: Some(3),
            source: "rank3.json".to_string(),
            exposed_comm_us: times.iter().sum(),
            total_comm_us: times.iter().sum(),
            kernels: Vec::new(),
            kernel_families: vec![KernelSamples {
                name: KERNEL.to_string(),
                launches: times.len() as u64,
                total_us: times.iter().sum(),
                samples_us: times.to_vec(),
            }],
        }];
        snapshot
    }

    /// 40 calls: a 20 µs transfer and a wait of 0 to 390 µs (a tenth of
    /// the calls wait not at all).
    fn calls() -> Vec<f64> {
        (0..40u32)
            .map(|i| 20.0 + f64::from((i * 7) % 40 / 4 * 40 + (i % 4)))
            .collect()
    }

    fn judged(
        baseline: &[f64],
        candidate: &[f64],
        noise: Option<SingleSampleNoise>,
    ) -> Vec<Finding> {
        judge(
            "job",
            &[&rank(baseline)],
            &rank(candidate),
            noise,
            &Policy::default(),
        )
    }

    #[test]
    fn the_same_calls_have_no_findings() {
        assert!(judged(&calls(), &calls(), None).is_empty());
    }

    #[test]
    fn every_call_slower_fails_named_after_the_kernel() {
        let slower: Vec<f64> = calls().iter().map(|t| t * 1.3).collect();
        let findings = judged(&calls(), &slower, None);
        assert_eq!(findings.len(), 1, "{findings:?}");
        let finding = &findings[0];
        assert_eq!(finding.rule, FLOOR_RULE);
        assert_eq!(finding.kind, FindingKind::Collective);
        assert_eq!(finding.severity, Severity::Fail);
        assert_eq!(finding.op.as_ref().unwrap().name, KERNEL);
        assert!((finding.delta_percent.unwrap() - 30.0).abs() < 1e-9);
        // The whole added time (30% of the calls' time), within what the
        // floor's ratio allows.
        let added = 0.3 * calls().iter().sum::<f64>();
        assert!((finding.impact_percent.unwrap() - added / 100.0).abs() < 1e-9);
        assert!(!finding.statistics.inconclusive);
    }

    #[test]
    fn too_few_calls_to_have_a_floor_say_one_rank_cannot_tell_wait_from_transfer() {
        let few = [400.0, 420.0, 900.0, 1500.0, 2600.0];
        let slower: Vec<f64> = few.iter().map(|t| t * 1.3).collect();
        let findings = judged(&few, &slower, None);
        assert_eq!(findings.len(), 1, "{findings:?}");
        let message = &findings[0].message;
        assert!(message.contains("with 5 calls"), "{message}");
        assert!(
            message.contains("cannot tell wait from transfer"),
            "{message}"
        );
        // With enough calls the floor is a low quantile, said as such.
        let slower: Vec<f64> = calls().iter().map(|t| t * 1.3).collect();
        let message = &judged(&calls(), &slower, None)[0].message;
        assert!(!message.contains("cannot tell"), "{message}");
        assert!(message.contains("10th percentile"), "{message}");
    }

    #[test]
    fn longer_waits_above_the_floor_pass() {
        let waited: Vec<f64> = calls()
            .iter()
            .map(|&t| if t > 100.0 { t * 3.0 } else { t })
            .collect();
        assert!(judged(&calls(), &waited, None).is_empty());
    }

    #[test]
    fn one_call_is_tested_against_the_noise_of_one_call() {
        let findings = judged(&[500.0], &[650.0], None);
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert_eq!(findings[0].severity, Severity::Warn);
        assert!(
            findings[0].message.contains("single measurement"),
            "{}",
            findings[0].message
        );
        let noise = |sigma_percent: f64, source: NoiseSource| SingleSampleNoise {
            sigma_percent,
            source,
            rows: Some(12),
            call_us: None,
            jitter_us: None,
        };
        let findings = judged(&[500.0], &[650.0], Some(noise(2.0, NoiseSource::Borrowed)));
        assert_eq!(findings[0].severity, Severity::Fail);
        assert!(!findings[0].statistics.inconclusive);
        assert!(
            findings[0].message.contains("±2.0%"),
            "{}",
            findings[0].message
        );
        // ×1.2 against a noise of 15%: beyond the threshold, but one call
        // cannot tell it from noise: an inconclusive failure.
        let findings = judged(&[500.0], &[600.0], Some(noise(15.0, NoiseSource::Prior)));
        let finding = &findings[0];
        assert_eq!(finding.severity, Severity::Fail);
        assert!(finding.statistics.inconclusive);
        assert_eq!(
            finding
                .statistics
                .single_sample_noise
                .map(|n| n.sigma_percent),
            Some(15.0)
        );
        assert!(
            finding.message.contains("cannot tell it from noise"),
            "{}",
            finding.message
        );
    }

    #[test]
    fn baseline_runs_whose_floors_disagree_raise_the_threshold() {
        // Waits spread evenly, so that each side's floor resamples tightly.
        let scaled = |factor: f64| -> Vec<f64> {
            (0..40u32)
                .map(|i| (100.0 + 5.0 * f64::from(i)) * factor)
                .collect()
        };
        let (one, two) = (rank(&scaled(1.0)), rank(&scaled(1.3)));
        let findings = judge(
            "job",
            &[&one, &two],
            &rank(&scaled(2.0)),
            None,
            &Policy::default(),
        );
        assert_eq!(findings.len(), 1, "{findings:?}");
        // The runs' floors 1.3 apart: 1.3 / 1.15 − 1 = 13.0% from their
        // median, above the 5% of the policy.
        let limit = findings[0].limit.unwrap();
        assert!((limit - (1.3 / 1.15 - 1.0) * 100.0).abs() < 1e-9, "{limit}");
    }

    #[test]
    fn rank_sets_are_left_to_the_rank_set_rules() {
        let mut set = rank(&calls());
        set.ranks.push(set.ranks[0].clone());
        set.ranks[1].rank = Some(4);
        let slower: Vec<f64> = calls().iter().map(|t| t * 1.3).collect();
        let findings = judge("job", &[&set], &rank(&slower), None, &Policy::default());
        assert!(findings.is_empty(), "{findings:?}");
    }

    #[test]
    fn the_added_time_lies_between_the_floor_on_every_call_and_the_ratio_on_all() {
        let samples = |total_us: f64| KernelSamples {
            name: KERNEL.to_string(),
            launches: 10,
            total_us,
            samples_us: Vec::new(),
        };
        let (before, after) = (samples(1000.0), samples(2000.0));
        let sides = Sides::new(&[&before], &after);
        // Grown by 1000 µs, the floor ×1.3: at most 300 µs.
        assert!((added_us(&sides, 1.3, (10.0, 13.0)) - 300.0).abs() < 1e-9);
        // Grown by 1000 µs, the floor +50 µs on each of 10 calls: at least 500.
        assert_eq!(added_us(&sides, 2.0, (50.0, 100.0)), 1000.0);
        assert_eq!(added_us(&sides, 1.01, (50.0, 100.0)), 500.0);
    }
}
