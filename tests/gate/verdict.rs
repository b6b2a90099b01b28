//! Issue 23: a verdict people trust at face value. On the corpus, edited
//! with this suite's mutations:
//!
//! - every collective family holding ≥ 10% of a single rank's GPU time,
//!   ×1.3 on every call, fails naming it first (`collectives.floor`);
//! - every op holding ≥ 2% of GPU time, ×1.2 on all its shapes, fails
//!   naming it first and once, and no other op (an op's confidently slower
//!   shapes judged as one op; issue 12 asked for a warning at least);
//! - the step's time +10% from any one source (an op's kernels, a
//!   collective, copies, idle gaps) fails with the `end_to_end` finding
//!   saying where the time went;
//! - two different models say "different workloads" and exit 2.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use tempfile::TempDir;

use super::{
    A100_STEPS, BERT_H100, FALCON_H100, QWEN_H100, V100_STEPS, check_output, corpus, derived,
    events_mut, f64_of, label, op_slowed, read_json, report_json, run_check, snapshot, text,
    write_json,
};

/// GPU work: kernels, copies and sets, as the timeline counts them.
fn is_gpu_work(event: &Value) -> bool {
    event["ph"] == "X"
        && matches!(
            event["cat"].as_str(),
            Some("kernel" | "gpu_memcpy" | "gpu_memset")
        )
}

fn is_copy(event: &Value) -> bool {
    matches!(event["cat"].as_str(), Some("gpu_memcpy" | "gpu_memset"))
}

/// The first group of a check's report: what the verdict names first.
fn first_group(gate: &super::Gate) -> &Value {
    &gate.report["groups"][0]
}

// ------------------------------------------------------------------ collectives

#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn every_collective_family_with_a_tenth_of_gpu_time_slowed_on_one_rank_fails_naming_it_first() {
    let mut judged = 0;
    for relative in [A100_STEPS, V100_STEPS] {
        let report = report_json(&corpus(relative));
        let busy = f64_of(&report["timeline"]["busy_time"]);
        let trace = read_json(&corpus(relative));
        let mut time: BTreeMap<String, f64> = BTreeMap::new();
        for event in events_mut(&mut trace.clone()).iter().filter(|e| {
            e["cat"] == "kernel"
                && e["name"]
                    .as_str()
                    .is_some_and(|n| n.to_ascii_lowercase().contains("nccl"))
        }) {
            *time
                .entry(event["name"].as_str().expect("name").to_string())
                .or_default() += f64_of(&event["dur"]);
        }
        for (family, us) in time.into_iter().filter(|(_, us)| *us >= 0.1 * busy) {
            judged += 1;
            let safe: String = family.chars().filter(char::is_ascii_alphanumeric).collect();
            let name = format!("{}.{safe}x1.3.json", label(relative));
            let candidate = derived(&name, |out| {
                let mut trace = read_json(&corpus(relative));
                for event in events_mut(&mut trace)
                    .iter_mut()
                    .filter(|e| e["cat"] == "kernel" && e["name"] == family.as_str())
                {
                    event["dur"] = Value::from(f64_of(&event["dur"]) * 1.3);
                }
                write_json(out, &trace);
            });
            let gate = run_check(&[snapshot(relative).as_path()], &candidate, &[]);
            let findings = gate.describe();
            let share = us / busy * 100.0;
            assert_eq!(
                gate.code, 1,
                "{relative}: {family} ({share:.0}%):\n{findings}"
            );
            assert_eq!(first_group(&gate)["label"], family.as_str(), "{findings}");
            assert_eq!(first_group(&gate)["kind"], "collective", "{findings}");
        }
    }
    assert!(judged >= 2, "only {judged} collective families hold 10%");
}

// ------------------------------------------------------------------ ops as wholes

#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn every_op_with_two_percent_slowed_a_fifth_on_all_shapes_fails_naming_it_first() {
    let mut judged = 0;
    for relative in [QWEN_H100, FALCON_H100, BERT_H100] {
        let trace = corpus(relative);
        let report = report_json(&trace);
        let busy = f64_of(&report["timeline"]["busy_time"]);
        for op in report["ops"].as_array().expect("ops") {
            let us = f64_of(&op["total_direct_kernel_time_us"]);
            let name = op["name"].as_str().expect("op name");
            if us < 0.02 * busy || op["categories"].to_string().contains("comm") {
                continue;
            }
            judged += 1;
            let gate = run_check(&[&trace], &op_slowed(relative, name, 1.2, us), &[]);
            let findings = gate.describe();
            let share = us / busy * 100.0;
            assert_eq!(
                gate.code, 1,
                "{relative}: {name} ({share:.1}%):\n{findings}"
            );
            let first = first_group(&gate);
            assert_eq!(first["label"], name, "{relative}: {name}:\n{findings}");
            // Named once: one group of the op's slowdown.
            let groups = gate.report["groups"].as_array().expect("groups");
            let named = groups
                .iter()
                .filter(|g| g["label"] == name && g["kind"] == "regression")
                .count();
            assert_eq!(named, 1, "{relative}: {name}:\n{findings}");
            // No other op is flagged (issue 12: the single-step BERT trace's
            // rows are below the old fixed 10 µs floor, and still judged).
            for finding in gate.findings() {
                if let Some(other) = finding["op"]["name"].as_str() {
                    if finding["severity"] != "info" {
                        assert_eq!(other, name, "{relative}: {findings}");
                    }
                }
            }
        }
    }
    assert!(judged >= 10, "only {judged} ops hold 2% of GPU time");
}

// ------------------------------------------------------------------ end to end

/// A copy of a trace whose step time is `1 + percent / 100` times as long,
/// from one source: the GPU work `chosen` selects made that much longer in
/// all (each piece by the same factor), everything after it on the GPU that
/// much later; or, with `chosen` `None`, every gap between GPU work
/// stretched (idle time).
fn step_longer(relative: &str, what: &str, percent: f64, chosen: Chosen, family: &str) -> PathBuf {
    let family = family.to_string();
    derived(
        &format!("{}.e2e-{what}.json", label(relative)),
        move |out| {
            let mut trace = read_json(&corpus(relative));
            let events = events_mut(&mut trace);
            let mut work: Vec<usize> = (0..events.len())
                .filter(|&i| is_gpu_work(&events[i]))
                .collect();
            let ts = |e: &Value| f64_of(&e["ts"]);
            work.sort_by(|&a, &b| ts(&events[a]).total_cmp(&ts(&events[b])));
            let start = ts(&events[work[0]]);
            let end = work
                .iter()
                .map(|&i| ts(&events[i]) + f64_of(&events[i]["dur"]))
                .fold(f64::MIN, f64::max);
            let grow = percent / 100.0;
            match chosen {
                None => {
                    for &i in &work {
                        let at = ts(&events[i]);
                        events[i]["ts"] = Value::from(start + (at - start) * (1.0 + grow));
                    }
                }
                Some(chosen) => {
                    let selected: f64 = work
                        .iter()
                        .filter(|&&i| chosen(&events[i], &family))
                        .map(|&i| f64_of(&events[i]["dur"]))
                        .sum();
                    assert!(selected > 0.0, "{relative}: nothing selected for {what}");
                    let factor = grow * (end - start) / selected;
                    let mut delay = 0.0;
                    for &i in &work {
                        let event = &mut events[i];
                        event["ts"] = Value::from(ts(event) + delay);
                        if chosen(event, &family) {
                            let added = f64_of(&event["dur"]) * factor;
                            event["dur"] = Value::from(f64_of(&event["dur"]) + added);
                            delay += added;
                        }
                    }
                }
            }
            write_json(out, &trace);
        },
    )
}

fn named(event: &Value, family: &str) -> bool {
    event["name"] == family
}

fn copies(event: &Value, _: &str) -> bool {
    is_copy(event)
}

fn send_recv(event: &Value, _: &str) -> bool {
    event["name"]
        .as_str()
        .is_some_and(|n| n.contains("SendRecv"))
}

type Chosen = Option<fn(&Value, &str) -> bool>;

/// The largest kernel name of a trace that is not communication.
fn largest_compute_kernel(relative: &str) -> String {
    let mut trace = read_json(&corpus(relative));
    let mut time: BTreeMap<String, f64> = BTreeMap::new();
    for event in events_mut(&mut trace)
        .iter()
        .filter(|e| e["cat"] == "kernel")
    {
        let name = event["name"].as_str().unwrap_or_default();
        if !name.to_ascii_lowercase().contains("nccl") {
            *time.entry(name.to_string()).or_default() += f64_of(&event["dur"]);
        }
    }
    time.into_iter()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .expect("a kernel")
        .0
}

#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn step_time_a_tenth_longer_from_any_single_source_fails_saying_where_it_went() {
    // Idle time is judged like any other here; the default's allowance for
    // the host's noise is `idle_gaps_within_the_hosts_noise_are_reported_not_judged`.
    let dir = TempDir::new().expect("temp dir");
    let judged_idle = dir.path().join("judged-idle.yaml");
    std::fs::write(
        &judged_idle,
        "version: 1\nend_to_end:\n  idle_noise_percent: null\n",
    )
    .expect("policy");
    let policy = ["--policy", judged_idle.to_str().expect("UTF-8 path")];
    for relative in [A100_STEPS, QWEN_H100] {
        let kernel = largest_compute_kernel(relative);
        let mut sources: Vec<(&str, Chosen, &str)> = vec![
            ("kernel", Some(named), "computation"),
            ("idle", None, "idle"),
        ];
        if relative == A100_STEPS {
            sources.push(("collective", Some(send_recv), "exposed communication"));
            sources.push(("copies", Some(copies), "exposed copies"));
        }
        for (what, chosen, part) in sources {
            let candidate = step_longer(relative, what, 10.0, chosen, &kernel);
            let baseline = if relative == A100_STEPS {
                snapshot(relative)
            } else {
                corpus(relative)
            };
            let gate = run_check(&[baseline.as_path()], &candidate, &policy);
            let findings = gate.describe();
            assert_eq!(gate.code, 1, "{relative} {what}:\n{findings}");
            let guard: Vec<&Value> = gate
                .findings()
                .iter()
                .filter(|f| f["rule"] == "end_to_end")
                .collect();
            assert_eq!(guard.len(), 1, "{relative} {what}:\n{findings}");
            assert_eq!(guard[0]["severity"], "fail", "{relative} {what}");
            let delta = f64_of(&guard[0]["delta_percent"]);
            assert!((9.0..11.0).contains(&delta), "{relative} {what}: {delta}");
            // The largest part of the added time is the source's.
            let message = guard[0]["message"].as_str().expect("message");
            let parts = message.split("of which ").nth(1).expect("parts");
            assert!(parts.starts_with(part), "{relative} {what}: {message}");
        }
    }
}

/// Under the default policy a step a tenth longer from idle gaps alone is
/// within the host's run-to-run noise on both traces (a100 idles a sixth of
/// its step, Qwen a tenth) and reported at `info`; twice as long, the idle
/// time added is beyond the allowance (200% of the baseline's) and fails.
#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn idle_gaps_within_the_hosts_noise_are_reported_not_judged() {
    for relative in [A100_STEPS, QWEN_H100] {
        let kernel = largest_compute_kernel(relative);
        let baseline = if relative == A100_STEPS {
            snapshot(relative)
        } else {
            corpus(relative)
        };
        // Each size its own name: derived traces are cached by name.
        for (what, percent, code, severity, words) in [
            ("idle", 10.0, 0, "info", "not judged"),
            ("idle-double", 100.0, 1, "fail", "without the"),
        ] {
            let candidate = step_longer(relative, what, percent, None, &kernel);
            let gate = run_check(&[baseline.as_path()], &candidate, &[]);
            let findings = gate.describe();
            assert_eq!(gate.code, code, "{relative} +{percent}%:\n{findings}");
            let guard: Vec<&Value> = gate
                .findings()
                .iter()
                .filter(|f| f["rule"] == "end_to_end")
                .collect();
            assert_eq!(guard.len(), 1, "{relative} +{percent}%:\n{findings}");
            assert_eq!(guard[0]["severity"], severity, "{relative} +{percent}%");
            let message = guard[0]["message"].as_str().expect("message");
            assert!(message.contains(words), "{relative} +{percent}%: {message}");
        }
    }
}

// ------------------------------------------------------------------ different workloads

#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn two_different_models_are_different_workloads_with_exit_two() {
    let (bert, qwen) = (corpus(BERT_H100), corpus(QWEN_H100));
    for (baseline, candidate) in [(&bert, &qwen), (&qwen, &bert)] {
        let (output, out) = check_output(&[baseline.as_path()], candidate, &[]);
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        let report: Value = serde_json::from_str(
            &std::fs::read_to_string(out.path().join("report.json")).expect("report.json"),
        )
        .expect("JSON");
        assert_eq!(report["outcome"], "different_workloads");
        let headline = report["headline"].as_str().expect("headline");
        assert!(headline.contains("different workloads"), "{headline}");
        assert!(headline.contains("ops matched"), "{headline}");
        // Nothing else is judged: no five-digit percentage anywhere.
        let findings = report["findings"].as_array().expect("findings");
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert_eq!(findings[0]["rule"], "integrity.min_matched_share");
    }
}

/// The same trace against itself is not "different" (its own rows match).
#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn a_model_against_itself_is_one_workload() {
    let bert: &Path = &corpus(BERT_H100);
    let gate = run_check(&[bert], bert, &[]);
    assert_eq!(gate.code, 0, "{}", gate.describe());
    assert_ne!(gate.report["outcome"], "different_workloads");
}
