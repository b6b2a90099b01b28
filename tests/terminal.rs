//! `tracegate check` as a reader's terminal shows it: the bundled example
//! pair under `policies/default.yaml` at 80 and 120 columns, with and
//! without colour (insta snapshots), every line within the width.

use tracegate::render::fit::{visible, width_of};

use crate::util::tracegate;

fn check(columns: u16, color: &str) -> String {
    let root = env!("CARGO_MANIFEST_DIR");
    let output = tracegate()
        .current_dir(root)
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_OUTPUT")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("NO_COLOR")
        .env("COLUMNS", columns.to_string())
        .args([
            "check",
            "--baseline",
            "examples/baseline.json.gz",
            "--candidate",
            "examples/candidate.json.gz",
            "--policy",
            "policies/default.yaml",
            "--quiet",
            "--color",
            color,
        ])
        .output()
        .expect("run tracegate check");
    assert_eq!(output.status.code(), Some(1), "the examples regress");
    let text = String::from_utf8(output.stdout).expect("UTF-8");
    let plain = visible(&text);
    for line in plain.lines() {
        let width = width_of(line);
        assert!(width <= usize::from(columns), "{width} > {columns}: {line}");
    }
    if color == "never" {
        assert_eq!(plain, text, "no escape codes without colour");
    }
    text
}

#[test]
fn example_check_80() {
    insta::assert_snapshot!(check(80, "never"));
}

#[test]
fn example_check_120() {
    insta::assert_snapshot!(check(120, "never"));
}

#[test]
fn example_check_80_colour() {
    let text = check(80, "always");
    assert_eq!(visible(&text), check(80, "never"));
    insta::assert_snapshot!(text);
}

#[test]
fn example_check_120_colour() {
    insta::assert_snapshot!(check(120, "always"));
}
