//! One rank's collectives judged by their floor (`src/gate/collectives/
//! floor.rs`) on the real training ranks of the corpus: a SendRecv whose
//! every call is slower fails naming the kernel; calls that waited longer
//! above the floor, and the trace against itself, pass.

use std::path::PathBuf;

use serde_json::Value;

use super::{
    A100_STEPS, V100_STEPS, corpus, derived, dur, events_mut, is_kernel, label, read_json,
    run_check, scale_dur, snapshot, write_json,
};

/// The point-to-point kernel of both training ranks (26% of the A100's
/// GPU time, its calls 17 µs to 12.6 ms).
const SEND_RECV: &str = "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)";

/// The floor rule's findings.
fn floor_findings(gate: &super::Gate) -> Vec<&Value> {
    gate.findings()
        .iter()
        .filter(|f| f["rule"] == "collectives.floor")
        .collect()
}

/// A copy of a corpus trace with `edit` applied to every kernel named
/// `kernel`, given its duration and the kernel's calls sorted by time.
fn edited(relative: &str, what: &str, kernel: &str, edit: fn(&mut Value, &[f64])) -> PathBuf {
    let source = corpus(relative);
    derived(&format!("{}.{what}.json", label(relative)), |out| {
        let mut trace = read_json(&source);
        let events = events_mut(&mut trace);
        let mut times: Vec<f64> = events
            .iter()
            .filter(|e| is_kernel(e) && e["name"] == kernel)
            .map(dur)
            .collect();
        times.sort_by(f64::total_cmp);
        assert!(times.len() > 10, "{relative}: {} calls", times.len());
        for event in events
            .iter_mut()
            .filter(|e| is_kernel(e) && e["name"] == kernel)
        {
            edit(event, &times);
        }
        write_json(out, &trace);
    })
}

#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn a_send_recv_slower_at_its_floor_fails_naming_the_kernel() {
    for relative in [A100_STEPS, V100_STEPS] {
        let slower = edited(relative, "send-recv-x1.3", SEND_RECV, |e, _| {
            scale_dur(e, 1.3)
        });
        let gate = run_check(&[corpus(relative).as_path()], &slower, &[]);
        let findings = gate.describe();
        assert_eq!(gate.code, 1, "{relative}:\n{findings}");
        let first = &gate.report["groups"][0];
        assert_eq!(first["label"], SEND_RECV, "{relative}:\n{findings}");
        assert_eq!(first["kind"], "collective", "{relative}:\n{findings}");
        let floor = floor_findings(&gate);
        assert_eq!(floor.len(), 1, "{relative}:\n{findings}");
        assert_eq!(floor[0]["severity"], "fail", "{relative}");
        let delta = floor[0]["delta_percent"].as_f64().expect("Δ");
        assert!((delta - 30.0).abs() < 0.5, "{relative}: {delta}");
        let message = floor[0]["message"].as_str().expect("message");
        assert!(message.contains("10th percentile"), "{message}");
        assert!(message.contains("not judged on one rank"), "{message}");
    }
}

#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn longer_waits_above_the_floor_and_the_trace_itself_pass() {
    // The longest quarter of the calls (waits of milliseconds) three times
    // as long: the collective's time grows by far more than ×1.3, its
    // floor not at all.
    let waited = edited(A100_STEPS, "send-recv-waits", SEND_RECV, |e, times| {
        if dur(e) >= times[times.len() * 3 / 4] {
            scale_dur(e, 3.0);
        }
    });
    let baseline = snapshot(A100_STEPS);
    for (what, candidate) in [
        ("longer waits", waited),
        ("the trace itself", corpus(A100_STEPS)),
    ] {
        let gate = run_check(&[baseline.as_path()], &candidate, &[]);
        let findings = gate.describe();
        assert_eq!(gate.code, 0, "{what}:\n{findings}");
        assert!(floor_findings(&gate).is_empty(), "{what}:\n{findings}");
        assert!(gate.of_kind("collective").is_empty(), "{what}:\n{findings}");
    }
}
