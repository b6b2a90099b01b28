//! Judging one matched op row statistically: a confident change beyond the
//! threshold on one platform, or a ratio beyond the hardware's expectation
//! across platforms; then Benjamini–Hochberg control over all such rows.

use super::findings::{
    Pending, interval_words, op_finding, priority_of, ratio_finding, sample_per,
    set_sample_figures, short_op,
};
use crate::analysis::hardware::{ComputeSpec, Hardware};
use crate::analysis::ops::stats::percent;
use crate::gate::compare::{Comparison, OpComparison, OpSide};
use crate::gate::policy::{Expectation as PolicyExpectation, Expected, Noise, Policy};
use crate::gate::stats::{bh_adjust, normal_upper_tail};
use crate::gate::verdict::{
    Finding, FindingKind, NoiseSource, Severity, SingleSampleNoise, trimmed_number,
};

/// A row judged on one platform ([`judge_same_platform`]) unless it is
/// below the noise section's minimum time; its threshold raised to its
/// measured noise. Kernel parts, kernel families and per-phase op rows are
/// judged so.
pub(super) fn judge_if_large_enough(
    op: &OpComparison,
    policy: &Policy,
    comparison: &Comparison,
) -> Option<Pending> {
    let noise = &policy.noise;
    let largest = op.baseline.time_us.max(op.candidate.time_us);
    if largest < noise.min_time_for(comparison.baseline_total_us) {
        return None;
    }
    let threshold_percent = noise.threshold_percent(op.noise.map(|n| n * 100.0));
    judge_same_platform(
        op,
        policy,
        &comparison.workload,
        threshold_percent,
        one_call_noise(comparison, policy),
    )
}

/// A regression or improvement of a row on one platform, awaiting
/// false-discovery control; `None` when the row is unchanged or immaterial.
///
/// A slowdown is judged on its bounds ([`RatioEstimate::bounds`]): a
/// confidence interval with 8 or more samples a side, else the range over
/// the samples. Beyond the threshold with a material impact it is a
/// regression at the policy's severity. With a single sample on a side it
/// is judged against the noise of one call (`one_call`: borrowed from the
/// trace, else the policy's prior, [`one_call_noise`]; raised to the
/// policy's timing jitter over the shorter side's call): a regression when
/// that puts it [`SINGLE_SAMPLE_Z`] deviations beyond the threshold, else,
/// with a material impact, inconclusive at the policy's
/// `noise.on_unconfirmed_single_sample`; without such a noise, a warning
/// (one measurement cannot fail a build). It is a warning too
/// when its impact is below `min_impact_percent` but the op holds a
/// material share of GPU time ([`material_share_percent`]). When the point
/// estimate is beyond the threshold but the bounds reach back inside it,
/// the finding is inconclusive, with its minimum detectable effect: a
/// warning when the bounds are above no change and the impact is material,
/// else information (noise between near-identical runs looks like that).
///
/// [`RatioEstimate::bounds`]: crate::gate::stats::RatioEstimate::bounds
pub(super) fn judge_same_platform(
    op: &OpComparison,
    policy: &Policy,
    workload: &str,
    threshold_percent: f64,
    one_call: Option<SingleSampleNoise>,
) -> Option<Pending> {
    let noise = &policy.noise;
    let up = 1.0 + threshold_percent / 100.0;
    let down = 1.0 / up;
    let estimate = &op.estimate;
    let bounds = estimate.bounds();
    let (low, high) = bounds.map_or((estimate.ratio, estimate.ratio), |b| {
        (b.interval.low, b.interval.high)
    });
    let material = op.impact_percent.abs() >= noise.min_impact_percent;
    let share = share_of_gpu_time(op);
    let weighty = share >= material_share_percent(policy);
    let side = &op.candidate;
    let delta = (estimate.ratio - 1.0) * 100.0;
    let per = sample_per(op).as_str();
    if op.impact_percent > 0.0 && estimate.ratio > up && (material || weighty) {
        let confident = low > up;
        // One sample a side: tested against the noise of one call, borrowed
        // from the repeating rows or the policy's prior, and at least the
        // timing jitter over the shorter side's call.
        let call_us = op
            .baseline_sample_median_us
            .min(op.candidate_sample_median_us);
        let one_call = one_call
            .filter(|_| bounds.is_none())
            .map(|n| at_call(n, noise, call_us));
        let single = one_call
            .map(|n| (n, single_sample_z(estimate.ratio, up, &n)))
            .filter(|(_, z)| *z > SINGLE_SAMPLE_Z);
        if let Some(n) = one_call.filter(|_| single.is_none() && material) {
            return Some(unconfirmed(op, policy, workload, threshold_percent, n));
        }
        let mut severity = if material {
            policy.regression.severity
        } else {
            Severity::Warn
        };
        let mut reasons = Vec::new();
        if !material {
            reasons.push(format!(
                "it adds less than the {}% impact minimum, but the op holds {share:.1}% of GPU time",
                trimmed_number(noise.min_impact_percent)
            ));
        }
        if bounds.is_none() && single.is_none() {
            severity = severity.max(Severity::Warn);
            reasons.push(format!(
                "one {per} on a side is a single measurement, which cannot fail the build on its own"
            ));
        }
        let mut finding = op_finding(
            "regression",
            severity,
            FindingKind::Regression,
            workload,
            side,
            String::new(),
        );
        set_sample_figures(&mut finding, op);
        let interval = match single {
            Some((n, _)) => {
                finding.statistics.single_sample_noise = Some(n);
                format!("one {per} a side; {}", n.describe())
            }
            None => interval_words(&finding),
        };
        finding.message = if confident {
            format!(
                "{} is {:.1}% slower per {per} ({interval}), {:+.2}% of total GPU time{}",
                short_op(side),
                delta,
                op.impact_percent,
                main_kernel(op)
            )
        } else {
            // Surely slower but not surely beyond the threshold: a warning;
            // not even surely slower (the bounds hold no change): information.
            // Below the impact minimum an inconclusive slowdown is
            // information even on a weighty op: near-identical runs give
            // such ranges over a few steps.
            severity = if low > 1.0 && material {
                severity.max(Severity::Warn)
            } else {
                Severity::Info
            };
            let mde = estimate.min_detectable_slowdown_percent(up);
            finding.statistics.inconclusive = true;
            finding.statistics.min_detectable_effect_percent = mde;
            format!(
                "{} is {:.1}% slower per {per}, inconclusive: its {interval} reaches below the {:.1}% threshold; these samples confirm only slowdowns beyond {}, {:+.2}% of total GPU time{}",
                short_op(side),
                delta,
                threshold_percent,
                mde.map_or("—".to_string(), |m| format!("{m:+.1}%")),
                op.impact_percent,
                main_kernel(op)
            )
        };
        if !reasons.is_empty() && severity == Severity::Warn {
            finding.message = format!("{}; a warning: {}", finding.message, reasons.join(", and "));
        }
        finding.severity = severity;
        finish(&mut finding, op, threshold_percent);
        let p_value = match single {
            Some((_, z)) => Some(normal_upper_tail(z)),
            None => estimate.p_value_above(up),
        };
        return Some(Pending {
            finding,
            p_value: p_value.unwrap_or(0.0),
            one_call_noise: single.is_some(),
        });
    }
    if !(high < down && op.impact_percent < 0.0 && material) {
        return None;
    }
    let mut finding = op_finding(
        "improvement",
        policy.improvement.severity,
        FindingKind::Improvement,
        workload,
        side,
        String::new(),
    );
    set_sample_figures(&mut finding, op);
    finding.message = format!(
        "{} is {:.1}% faster per {per} ({}), {:+.2}% of total GPU time{}",
        short_op(side),
        delta.abs(),
        interval_words(&finding),
        op.impact_percent,
        main_kernel(op)
    );
    finish(&mut finding, op, threshold_percent);
    Some(Pending {
        finding,
        p_value: estimate.p_value_below(down).unwrap_or(0.0),
        one_call_noise: false,
    })
}

/// A one-sample row beyond the threshold with a material impact whose
/// change the noise of one call `n` cannot confirm: the data cannot tell
/// it from noise, so it is inconclusive at the policy's
/// `noise.on_unconfirmed_single_sample` (`fail`: the verdict is
/// inconclusive), never a silent pass; named like a regression of its row
/// so it groups with its op.
fn unconfirmed(
    op: &OpComparison,
    policy: &Policy,
    workload: &str,
    threshold_percent: f64,
    n: SingleSampleNoise,
) -> Pending {
    let side = &op.candidate;
    let per = sample_per(op);
    let mut finding = op_finding(
        "regression",
        policy.noise.on_unconfirmed_single_sample,
        FindingKind::Regression,
        workload,
        side,
        String::new(),
    );
    set_sample_figures(&mut finding, op);
    let up = 1.0 + threshold_percent / 100.0;
    // The slowdown one sample a side would confirm: z = 3 beyond the threshold.
    let confirmable =
        up * (SINGLE_SAMPLE_Z * std::f64::consts::SQRT_2 * n.sigma_percent / 100.0).exp();
    let statistics = &mut finding.statistics;
    statistics.single_sample_noise = Some(n);
    statistics.inconclusive = true;
    statistics.min_detectable_effect_percent = Some((confirmable - 1.0) * 100.0);
    finding.message = format!(
        "{} measured once a side is {:.1}% slower ({:.1}% of GPU time, {:+.2}% of total) — \
         beyond the {}% threshold, but {}: cannot tell from noise (one {} a side confirms \
         only slowdowns beyond {:+.1}%); profile more steps or pass several baseline runs",
        short_op(side),
        (op.estimate.ratio - 1.0) * 100.0,
        share_of_gpu_time(op),
        op.impact_percent,
        trimmed_number(threshold_percent),
        n.strays(per),
        per.as_str(),
        (confirmable - 1.0) * 100.0,
    );
    finish(&mut finding, op, threshold_percent);
    Pending {
        finding,
        p_value: 1.0,
        one_call_noise: false,
    }
}

/// The noise of one call `n` for a call of `call_us` µs: raised to the
/// policy's timing jitter over that time when that is larger
/// ([`Noise::one_call_sigma_percent`]).
pub fn at_call(n: SingleSampleNoise, noise: &Noise, call_us: f64) -> SingleSampleNoise {
    let sigma_percent = noise.one_call_sigma_percent(n.sigma_percent, call_us);
    SingleSampleNoise {
        sigma_percent,
        source: if sigma_percent > n.sigma_percent {
            NoiseSource::Jitter
        } else {
            n.source
        },
        call_us: Some(call_us),
        jitter_us: noise.single_sample_jitter_us,
        ..n
    }
}

/// How many standard deviations of a ratio of two single measurements
/// (√2 × the noise of one, in log terms) a one-sample ratio must lie
/// beyond the threshold to fail: 3, a one-sided p-value of 0.13%, since
/// one call can stray by chance (docs/POLICY.md).
pub const SINGLE_SAMPLE_Z: f64 = 3.0;

/// The noise of one call a one-sample row of this comparison is judged
/// against: borrowed from its repeating rows (unless the policy turns
/// borrowing off, `noise.borrow_for_single_samples: false`), else the
/// policy's prior (`noise.single_sample_sigma_percent`); `None` when
/// neither applies, and such a row only warns. Every same-platform rule
/// (rows, op totals, kernel parts and families, per-phase ops) uses it.
pub fn one_call_noise(comparison: &Comparison, policy: &Policy) -> Option<SingleSampleNoise> {
    let borrowed = comparison
        .borrowed_noise
        .filter(|_| policy.noise.borrow_for_single_samples)
        .map(|b| SingleSampleNoise {
            sigma_percent: b.sigma * 100.0,
            source: NoiseSource::Borrowed,
            rows: Some(b.rows),
            call_us: None,
            jitter_us: None,
        });
    let prior = || {
        policy
            .noise
            .single_sample_sigma_percent
            .map(|sigma_percent| SingleSampleNoise {
                sigma_percent,
                source: NoiseSource::Prior,
                rows: None,
                call_us: None,
                jitter_us: None,
            })
    };
    borrowed.or_else(prior)
}

/// The z-score of a one-sample ratio beyond `limit` under the noise of one
/// call: ln(ratio / limit) / (√2 σ).
pub fn single_sample_z(ratio: f64, limit: f64, noise: &SingleSampleNoise) -> f64 {
    let sigma = (std::f64::consts::SQRT_2 * noise.sigma_percent / 100.0).max(f64::MIN_POSITIVE);
    (ratio / limit).ln() / sigma
}

/// The limit (a relative threshold, %), impact and priority of a
/// same-platform finding.
fn finish(finding: &mut Finding, op: &OpComparison, threshold_percent: f64) {
    finding.limit = Some(threshold_percent);
    finding.statistics.limit_unit = Some("%".into());
    finding.impact_percent = Some(op.impact_percent);
    finding.priority = priority_of(op.impact_percent);
}

/// The share of the baseline's GPU time that makes a confident slowdown
/// a warning even when its added time is below `min_impact_percent`: twice
/// that minimum (0.6% under the default policy), so a ×1.2 slowdown of an
/// op holding 1% of GPU time (+0.2%) is named.
pub(super) fn material_share_percent(policy: &Policy) -> f64 {
    2.0 * policy.noise.min_impact_percent
}

/// The row's baseline time as a share of the baseline's GPU time, %, from
/// its impact (`impact_us` is that share's `impact_percent`).
fn share_of_gpu_time(op: &OpComparison) -> f64 {
    if op.impact_us == 0.0 {
        return 0.0;
    }
    (op.impact_percent * op.baseline.time_us / op.impact_us).abs()
}

/// The expected candidate/baseline ratio for this op, its slack, %, in
/// words where it comes from, and whether a user wrote it (a rule's
/// `ratio`) rather than a hardware model derived it.
fn expected_ratio(
    op: &OpComparison,
    policy: &Policy,
    baseline: Option<&Hardware>,
    candidate: Option<&Hardware>,
) -> Option<(f64, f64, String, bool)> {
    let side = &op.candidate;
    let (expectation, slack) = policy.cross_platform.expectation_for(
        &side.key.name,
        side.category.as_str(),
        &side.key.input_dims,
        side.module_path.as_deref(),
    );
    let spec = side
        .model
        .as_ref()
        .and_then(|m| m.compute_spec)
        .unwrap_or(ComputeSpec::MatrixBf16);
    let (ratio, basis) = match expectation {
        PolicyExpectation::Ratio(ratio) => {
            return Some((ratio, slack, "policy ratio".into(), true));
        }
        PolicyExpectation::Model(Expected::Roofline) => {
            let expected = op.expected?;
            (
                expected.ratio,
                format!("{:?}", expected.basis).to_lowercase(),
            )
        }
        PolicyExpectation::Model(Expected::Bandwidth) => {
            let (b, c) = (baseline?, candidate?);
            (b.hbm_tb_s / c.hbm_tb_s, "bandwidth".to_string())
        }
        PolicyExpectation::Model(Expected::Compute) => {
            let (b, c) = (baseline?.peak_tflops(spec)?, candidate?.peak_tflops(spec)?);
            (b / c, "peak compute".to_string())
        }
    };
    Some((ratio, slack, basis, false))
}

/// The roofline efficiency of one invocation of a row on a side's
/// hardware, %: its roofline time over its median time per call.
fn efficiency_percent(side: &OpSide, hardware: Option<&Hardware>) -> Option<f64> {
    let model = side.model.as_ref()?;
    let roofline = hardware?.roofline_time_us(model.flops, model.bytes, model.compute_spec?)?;
    (side.median_us > 0.0 && roofline > 0.0).then(|| 100.0 * roofline / side.median_us)
}

/// A row whose ratio is beyond what the hardware explains, awaiting
/// false-discovery control; `None` when it is within the policy's slack.
/// Only a ratio a user wrote (`cross_platform.rules[].ratio`) is an
/// expectation with the policy's severity: a ratio the hardware model
/// derives is information (the report of where the candidate platform is
/// behind what its hardware explains), since real stacks miss the
/// datasheets by far more than any slack on the same code
/// (docs/CROSS_PLATFORM.md).
pub(super) fn judge_cross_platform(
    op: &OpComparison,
    policy: &Policy,
    baseline: Option<&Hardware>,
    candidate: Option<&Hardware>,
    workload: &str,
    threshold_percent: f64,
    baseline_total_us: f64,
) -> Option<Pending> {
    let side = &op.candidate;
    let (expected, slack, basis, written) = expected_ratio(op, policy, baseline, candidate)?;
    let estimate = &op.estimate;
    let bounds = estimate.bounds();
    let (low, high) = bounds.map_or((estimate.ratio, estimate.ratio), |b| {
        (b.interval.low, b.interval.high)
    });
    let tolerance = 1.0 + slack.max(threshold_percent) / 100.0;
    let upper = expected * tolerance;
    let lower = expected / tolerance;
    // Impact beyond what the hardware explains: the candidate's time against
    // the baseline's time scaled by the expected ratio.
    let excess_us = op.candidate.time_us - expected * op.baseline.time_us;
    let excess_percent = percent(excess_us, baseline_total_us);
    if excess_percent.abs() < policy.noise.min_impact_percent {
        return None;
    }
    let (severity, p_value, direction) = if low > upper {
        // One measurement a side cannot fail the build on its own.
        let severity = match (written, bounds) {
            (false, _) => Severity::Info,
            (true, Some(_)) => policy.cross_platform.severity,
            (true, None) => policy.cross_platform.severity.max(Severity::Warn),
        };
        (severity, estimate.p_value_above(upper), "slower")
    } else if high < lower {
        (Severity::Info, estimate.p_value_below(lower), "faster")
    } else {
        return None;
    };
    let mut finding = ratio_finding(
        severity,
        workload,
        side,
        format!(
            "{}: candidate/baseline time ratio per {} {:.2} is {direction} than the {:.2} {} ({basis}, ±{:.0}% slack){}",
            short_op(side),
            sample_per(op).as_str(),
            estimate.ratio,
            expected,
            if written {
                "the policy expects"
            } else {
                "the hardware explains"
            },
            slack.max(threshold_percent),
            if direction == "slower" {
                ": improve the target's kernel"
            } else {
                ""
            },
        ),
    );
    set_sample_figures(&mut finding, op);
    if bounds.is_none() && severity == Severity::Warn {
        finding.message.push_str(
            "; a warning: one sample on a side is a single measurement, which cannot fail the build on its own",
        );
    }
    finding.expected_ratio = Some(expected);
    finding.statistics.efficiency_percent = efficiency_percent(&op.baseline, baseline)
        .zip(efficiency_percent(&op.candidate, candidate));
    finding.limit = Some(upper);
    finding.statistics.limit_unit = Some("×".into());
    finding.impact_percent = Some(excess_percent);
    finding.priority = priority_of(excess_percent);
    Some(Pending {
        finding,
        p_value: p_value.unwrap_or(0.0),
        one_call_noise: false,
    })
}

/// Benjamini–Hochberg over every pending op finding that is a test; those
/// whose adjusted p-value exceeds the rate are dropped. Findings without an
/// interval (one sample) and inconclusive ones claim no significance: they
/// are warnings that say why, kept without entering the adjustment; a
/// one-sample row judged against the noise of one call is a test like any
/// row.
pub(super) fn false_discovery_control(pending: Vec<Pending>, rate: f64) -> Vec<Finding> {
    let (untested, tested): (Vec<Pending>, Vec<Pending>) = pending.into_iter().partition(|p| {
        let statistics = &p.finding.statistics;
        statistics.inconclusive
            || (!p.one_call_noise && statistics.samples.is_some_and(|s| s.fewest() < 2))
    });
    let p_values: Vec<f64> = tested.iter().map(|p| p.p_value).collect();
    let adjusted = bh_adjust(&p_values);
    tested
        .into_iter()
        .zip(adjusted)
        .filter(|(_, q)| *q <= rate)
        .map(|(p, _)| p.finding)
        .chain(untested.into_iter().map(|p| p.finding))
        .collect()
}

/// For a graph row with several kernels, the kernel whose time changed most,
/// in words (`; mostly kernel_x (+50.0%)`); empty otherwise.
fn main_kernel(op: &OpComparison) -> String {
    let (base, cand) = (&op.baseline.kernel_us, &op.candidate.kernel_us);
    if cand.len() < 2 {
        return String::new();
    }
    let scale = |side: &OpSide| side.time_us / side.total_us.max(f64::MIN_POSITIVE);
    let changes = cand.iter().filter_map(|(name, after)| {
        let before = base.iter().find(|(n, _)| n == name)?.1;
        let (before, after) = (before * scale(&op.baseline), after * scale(&op.candidate));
        Some((name, after - before, before))
    });
    match changes.max_by(|a, b| a.1.abs().total_cmp(&b.1.abs())) {
        Some((name, change, before)) if before > 0.0 && change != 0.0 => {
            format!("; mostly {name} ({:+.1}%)", change / before * 100.0)
        }
        _ => String::new(),
    }
}
