//! Help and error texts say what the command does, once: each test is
//! named after a text that was wrong.

use std::fs;
use std::path::PathBuf;

use crate::util::tracegate;

fn small_cuda() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/small_cuda.json")
}

/// `small_cuda.json` with its GPU renamed, written into `dir`.
fn on_gpu(dir: &tempfile::TempDir, gpu: &str) -> PathBuf {
    let mut trace: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(small_cuda()).expect("fixture")).expect("JSON");
    trace["deviceProperties"][0]["name"] = serde_json::Value::from(gpu);
    let path = dir.path().join("trace.json");
    fs::write(&path, trace.to_string()).expect("write");
    path
}

#[test]
fn replay_help_has_no_ranks_option_it_would_ignore() {
    let output = tracegate()
        .args(["replay", "--help"])
        .output()
        .expect("run");
    let help = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{help}");
    assert!(!help.contains("--ranks"), "{help}");
    // What snapshot's --ranks does is not replay's.
    assert!(!help.contains("write one snapshot"), "{help}");
    assert!(help.contains("--op <NAME>"), "{help}");
}

#[test]
fn an_unknown_gpu_is_named_unknown_once() {
    let dir = tempfile::TempDir::new().expect("tempdir");
    let trace = on_gpu(&dir, "Quadro GP100");
    let output = tracegate()
        .arg("report")
        .arg(&trace)
        .env("NO_COLOR", "1")
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{text}");
    let line = text
        .lines()
        .find(|l| l.contains("Hardware:"))
        .unwrap_or_else(|| panic!("no Hardware line in\n{text}"));
    assert_eq!(line.matches("unknown GPU").count(), 1, "{line}");
    assert_eq!(line.matches("--hardware").count(), 1, "{line}");
    assert!(line.contains("\"Quadro GP100\""), "{line}");
}
