//! `pip install tracegate`: pyproject.toml builds a wheel holding the
//! `tracegate` binary (maturin, `bindings = "bin"`), and the wheel installed
//! into a fresh virtual environment runs. Needs python3 with venv and PyPI
//! (for maturin), and costs a release build.

use std::path::Path;
use std::process::Command;

fn run(command: &mut Command) -> String {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("{command:?}: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{command:?} failed:\n{text}");
    text
}

fn venv(dir: &Path) {
    run(Command::new("python3").arg("-m").arg("venv").arg(dir));
}

#[test]
#[ignore = "builds a release wheel: run with --ignored"]
fn the_wheel_builds_and_runs_tracegate_from_a_fresh_venv() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let work = tempfile::TempDir::new().expect("tempdir");
    let (tools, fresh, dist) = (
        work.path().join("tools"),
        work.path().join("fresh"),
        work.path().join("dist"),
    );
    venv(&tools);
    run(Command::new(tools.join("bin/pip")).args([
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "maturin>=1.5,<2",
    ]));
    run(Command::new(tools.join("bin/maturin"))
        .args(["build", "--release", "--out"])
        .arg(&dist)
        .current_dir(repo));
    let wheels: Vec<_> = std::fs::read_dir(&dist)
        .expect("dist")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    let version = env!("CARGO_PKG_VERSION");
    assert!(
        wheels.len() == 1 && wheels[0].starts_with(&format!("tracegate-{version}-py3-none-")),
        "one binary wheel (no Python ABI), of Cargo.toml's version: {wheels:?}"
    );
    venv(&fresh);
    run(Command::new(fresh.join("bin/pip"))
        .args([
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-index",
            "--find-links",
        ])
        .arg(&dist)
        .arg("tracegate"));
    let said = run(Command::new(fresh.join("bin/tracegate")).arg("--version"));
    assert_eq!(said.trim(), format!("tracegate {version}"));
    // The installed binary is the whole command line, not a stub.
    let help = run(Command::new(fresh.join("bin/tracegate")).args(["check", "--help"]));
    assert!(help.contains("--baseline"), "{help}");
}
