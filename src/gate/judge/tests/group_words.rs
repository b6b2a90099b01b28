//! The words of a grouped line (`groups.rs`): what its summary counts
//! for each kind of line, and the advice its evidence points to (more
//! calls, the same kernels slower alone or with the rest of the GPU,
//! another kernel, a recorded version that differs).

use super::groups::{about, about_no_op, environments, grouped, one_group, row, slower};
use super::*;
use crate::gate::compare::OpComparison;
use crate::gate::verdict::{DRIFT_RULE, WorkloadSummary};

/// The summary counts what each kind of line is about: the shapes of an
/// op's line, all of them over the merges for a drift, none for a rank
/// set; whether the kernels changed only for a change in time; the GPU
/// time only of an op; a line with nothing to count is its finding's words.
#[test]
fn the_summary_counts_what_each_kind_of_line_is_about() {
    let a = row("aten::mm", "[[8, 8]]", (1, 1), (100.0, 150.0));
    let rows = std::slice::from_ref(&a);
    let of_kind =
        |kind: FindingKind| one_group(&[about(&a, kind, Severity::Warn, 1.0)], rows).summary;
    for kind in [
        FindingKind::Regression,
        FindingKind::Improvement,
        FindingKind::UnexpectedRatio,
        FindingKind::KernelSelection,
    ] {
        assert_eq!(
            of_kind(kind),
            "aten::mm — 1 shape, +50.0% per step, same kernels, +1.0% of GPU time",
            "{kind:?}"
        );
    }
    assert_eq!(
        of_kind(FindingKind::NewOp),
        "aten::mm — 1 shape, +50.0% per step, +1.0% of GPU time"
    );
    assert_eq!(
        of_kind(FindingKind::Collective),
        "aten::mm — +50.0% per step, +1.0% of GPU time"
    );
    let mut drift = slower(&a);
    drift.rule = DRIFT_RULE.to_string();
    assert_eq!(
        one_group(&[drift], rows).summary,
        "aten::mm — all shapes, over the last merges, +50.0% per step, same kernels, +1.0% of GPU time"
    );

    let mut idle = about_no_op(FindingKind::Timeline, "timeline", "idle_percent");
    assert_eq!(
        one_group(std::slice::from_ref(&idle), &[]).summary,
        "idle percent: the words"
    );
    idle.delta_percent = Some(5.0);
    idle.impact_percent = Some(2.0);
    assert_eq!(one_group(&[idle], &[]).summary, "idle percent — +5.0%");
}

/// A slower line (per call +50%) whose rows ran the same kernels, in a
/// workload whose other rows are `others`, with unchanged environments:
/// its advice.
fn advice_beside(others: &[OpComparison]) -> String {
    let own = row("aten::mm", "[[8, 8]]", (10, 10), (20.0, 30.0));
    let mut rows = vec![own.clone()];
    rows.extend_from_slice(others);
    let groups = grouped(&[slower(&own)], &rows, environments(|_, _| ()));
    groups[0].advice.clone().expect("advice")
}

/// Another op's row: `calls` calls of `us` µs in the baseline, each ×`factor` in the candidate.
fn other(name: &str, us: f64, factor: f64) -> OpComparison {
    row(name, "[[1]]", (10, 10), (us, us * factor))
}

/// Whether the same kernels took longer because the machine did: the
/// share of the other rows' baseline time whose time per call grew by at
/// least half the line's change per call, when those rows together grew by
/// that much; above half of it, the machine is the suspect. The line's own
/// rows are not among the others; a row's time per call is its median
/// when it has no calls.
#[test]
fn the_same_kernels_slower_with_the_rest_of_the_gpu_point_to_the_machine() {
    let machine = |share: &str| {
        format!(
            "The same kernels take longer (+50.0% per call), no recorded version differs between the sides, and most of the GPU time moved with it ({share}% of the other ops' time slowed too): suspect clocks, power or the machine (rerun with locked clocks)."
        )
    };
    let alone = |share: &str| {
        format!(
            "The same kernels take longer (+50.0% per call) and no recorded version differs, but this op moved alone ({share}% of the other ops' GPU time slowed with it): unlikely to be the machine; look at what reaches it (its input data, layouts, what runs beside it)."
        )
    };
    // Both others slowed by at least half of +50%: all of their time moved.
    assert_eq!(
        advice_beside(&[other("a", 300.0, 1.25), other("b", 100.0, 1.5)]),
        machine("100")
    );
    // One moved by +25% but the others together by less: nothing moved.
    assert_eq!(
        advice_beside(&[other("a", 300.0, 1.25), other("b", 100.0, 1.0)]),
        alone("0")
    );
    // Together exactly +25%, half the time moved: not more than half.
    assert_eq!(
        advice_beside(&[other("a", 200.0, 1.5), other("b", 200.0, 1.0)]),
        alone("50")
    );
    let mut uncounted = other("a", 200.0, 1.5);
    for (side, median) in [
        (&mut uncounted.baseline, 1.0),
        (&mut uncounted.candidate, 1.5),
    ] {
        side.count = 0;
        side.median_us = median;
    }
    assert_eq!(
        advice_beside(&[uncounted, other("b", 200.0, 1.0)]),
        alone("50")
    );
    // More calls, none slower: the rest of the GPU is not asked about.
    for (calls, per_call) in [(15, "+0.0"), (20, "-25.0")] {
        let own = row("aten::mm", "[[8, 8]]", (10, calls), (20.0, 30.0));
        let rows = [own.clone(), other("a", 300.0, 1.5)];
        let advice = grouped(&[slower(&own)], &rows, environments(|_, _| ()))
            .remove(0)
            .advice;
        assert_eq!(
            advice.expect("advice"),
            format!(
                "It is called {calls} times instead of 10: the model calls it more often (Path A). The same kernels take longer ({per_call}% per call) and no recorded version differs between the sides: compare its inputs and the GPU time around it."
            )
        );
    }
    // A row's time per call is its mean, not its median: twice the calls
    // at the same mean did not slow, whatever its median did.
    let mut more_calls = row("b", "[[1]]", (10, 20), (300.0, 600.0));
    more_calls.candidate.median_us = 60.0;
    assert_eq!(
        advice_beside(&[more_calls, other("c", 100.0, 1.5)]),
        alone("0")
    );
    // A row with no time per call on the baseline moves nowhere, but its
    // time is still of the others'.
    let mut timeless = other("a", 0.0, 1.0);
    timeless.baseline.time_us = 200.0;
    timeless.candidate.time_us = 200.0;
    assert_eq!(
        advice_beside(&[timeless, other("b", 200.0, 1.5)]),
        alone("50")
    );
    // No other time: nothing to compare with.
    let inputs = "The same kernels take longer (+50.0% per call) and no recorded version differs between the sides: compare its inputs and the GPU time around it.";
    assert_eq!(advice_beside(&[]), inputs);
    assert_eq!(advice_beside(&[other("a", 0.0, 1.5)]), inputs);
}

/// The advice says what the figures point to: more calls (Path A), the
/// same kernels slower, another kernel (Path B), and a recorded version
/// that differs as the first suspect. A line that is no slowdown has no
/// advice; a drift's or a rank set's is its own message.
#[test]
fn the_advice_follows_the_calls_the_kernels_and_the_versions() {
    let own = row("aten::mm", "[[8, 8]]", (10, 10), (20.0, 30.0));
    let mut changed = own.clone();
    changed.kernel_diff = Some("-a\n+b".to_string());
    let newer = || environments(|_, c| c.pytorch = Some("2.7.0".to_string()));
    let advice = |finding: &Finding, rows: &[OpComparison], summary: WorkloadSummary| {
        grouped(std::slice::from_ref(finding), rows, summary)
            .remove(0)
            .advice
    };
    let version = "PyTorch 2.6.0 → 2.7.0";
    assert_eq!(
        advice(&slower(&own), std::slice::from_ref(&own), newer()).as_deref(),
        Some(format!("The same kernels take longer (+50.0% per call), and the sides differ in {version}: check that change first.").as_str())
    );
    assert_eq!(
        advice(&slower(&changed), std::slice::from_ref(&changed), newer()).as_deref(),
        Some(format!("Another kernel runs (+50.0% per call), and the sides differ in {version}: that change likely chose it; pin or tune the kernel (Path B).").as_str())
    );
    assert_eq!(
        advice(
            &slower(&changed),
            std::slice::from_ref(&changed),
            environments(|_, _| ())
        )
        .as_deref(),
        Some(
            "Another kernel runs (+50.0% per call) with the same recorded versions: the library's heuristics chose it for these shapes; pin or tune the kernel (Path B)."
        )
    );
    assert_eq!(
        advice(&slower(&own), &[], newer()).as_deref(),
        Some(format!("The sides differ in {version}: check that change first.").as_str())
    );
    assert_eq!(advice(&slower(&own), &[], environments(|_, _| ())), None);

    // Twice the calls, each a quarter faster.
    let more = row("aten::mm", "[[8, 8]]", (10, 20), (20.0, 30.0));
    assert_eq!(
        advice(
            &slower(&more),
            std::slice::from_ref(&more),
            environments(|_, _| ())
        )
        .as_deref(),
        Some(
            "It is called 20 times instead of 10: the model calls it more often (Path A). The same kernels take longer (-25.0% per call) and no recorded version differs between the sides: compare its inputs and the GPU time around it."
        )
    );

    // No slowdown, no advice; a ratio beyond the expected one is one.
    let improved = about(&own, FindingKind::Improvement, Severity::Info, -1.0);
    assert_eq!(advice(&improved, std::slice::from_ref(&own), newer()), None);
    for delta in [0.0, -10.0] {
        let mut flat = slower(&own);
        flat.delta_percent = Some(delta);
        assert_eq!(
            advice(&flat, std::slice::from_ref(&own), newer()),
            None,
            "{delta}"
        );
    }
    let ratio = about(&own, FindingKind::UnexpectedRatio, Severity::Warn, 1.0);
    assert!(advice(&ratio, std::slice::from_ref(&own), newer()).is_some());
    // Without a change of its own, the rows' range says whether it is slower.
    let mut endless = slower(&own);
    endless.delta_percent = Some(f64::INFINITY);
    endless.metric = "another metric".to_string();
    let mut ranged = slower(&own);
    ranged.op.as_mut().expect("an op").input_dims = "[[4, 4]]".to_string();
    for (delta, advised) in [(10.0, true), (-10.0, false)] {
        ranged.delta_percent = Some(delta);
        let groups = grouped(&[endless.clone(), ranged.clone()], &[], newer());
        assert_eq!(groups[0].delta_percent, None);
        assert_eq!(groups[0].advice.is_some(), advised, "{delta}");
    }

    // A drift's merges and a rank set's figures are their own advice.
    let mut drift = slower(&own);
    drift.rule = DRIFT_RULE.to_string();
    let straggler = about(&own, FindingKind::Straggler, Severity::Fail, 1.0);
    for finding in [drift, straggler] {
        assert_eq!(
            advice(&finding, std::slice::from_ref(&own), newer()).as_deref(),
            Some("its words")
        );
    }
}
