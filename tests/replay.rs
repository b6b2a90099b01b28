//! Replay packages from hostile traces: `replay` and `check --out-dir` (the
//! Action's own path) must end with an exit code, never abort.

use std::io::Read;
use std::path::PathBuf;

use crate::util::tracegate;

fn example(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(name)
}

#[test]
fn deeply_nested_concrete_inputs_do_not_abort_replay_or_check() {
    // The fuzz finding: a `Concrete Inputs` value nested ~50,000 levels deep
    // overflowed the stack of the Python-literal reader (exit 134, no message).
    let mut text = String::new();
    flate2::read::MultiGzDecoder::new(
        std::fs::File::open(example("candidate.json.gz")).expect("example"),
    )
    .read_to_string(&mut text)
    .expect("gzip");
    let mut trace: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let deep = format!("{}{}", "[".repeat(50_000), "]".repeat(50_000));
    let mut poisoned = 0;
    for event in trace["traceEvents"].as_array_mut().expect("events") {
        if let Some(inputs) = event
            .pointer_mut("/args/Concrete Inputs")
            .and_then(|v| v.as_array_mut())
        {
            for value in inputs.iter_mut().skip(1) {
                *value = serde_json::Value::String(deep.clone());
                poisoned += 1;
            }
        }
    }
    assert!(poisoned > 100, "the example records concrete inputs");
    let dir = tempfile::tempdir().expect("temp dir");
    let candidate = dir.path().join("candidate.json");
    std::fs::write(&candidate, serde_json::to_vec(&trace).expect("JSON")).expect("write");

    // Poisoned arguments are the op rows' keys, so few rows match: the
    // different-workloads rule is off here, and the gate judges what matches.
    let policy = dir.path().join("policy.yaml");
    std::fs::write(&policy, "version: 1\nintegrity:\n  min_matched_share: 0\n").expect("write");
    let check = tracegate()
        .args(["check", "--quiet", "--color", "never", "--baseline"])
        .arg(example("baseline.json.gz"))
        .arg("--candidate")
        .arg(&candidate)
        .arg("--policy")
        .arg(&policy)
        .arg("--out-dir")
        .arg(dir.path().join("out"))
        .assert();
    let output = check.get_output();
    let stderr = String::from_utf8_lossy(&output.stderr);
    // The gate still judges (the mm slowdown fails it); packages whose
    // arguments cannot be read are left out with a note, not a crash.
    assert_eq!(output.status.code(), Some(1), "stderr: {stderr}");
    assert!(!stderr.contains("overflow"), "{stderr}");

    let replay = tracegate()
        .args(["replay", "--quiet", "--op", "aten::_softmax", "--out"])
        .arg(dir.path().join("replay"))
        .arg(&candidate)
        .assert();
    let code = replay.get_output().status.code();
    assert!(matches!(code, Some(0 | 2)), "exit {code:?}");
}
