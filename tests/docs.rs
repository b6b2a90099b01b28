//! The example commands of README.md, docs/*.md and examples/README.md run
//! as written. Every `tracegate ...` line of a fenced block (and `cargo run
//! --release -- ...`, the same binary) is run from a directory where
//! `examples/` and `policies/` are this checkout's and `../shared/corpus` is
//! the corpus; it must not fail with an error (exit 2 or 3). A `$ tracegate`
//! line followed by output must print exactly that output. Usage synopses
//! (with `...`, `[`, `|` or CAPITALISED placeholders) are not commands;
//! steps of a recipe whose input the reader makes first (their model's
//! trace) cannot run here and are listed as skipped in the failure message
//! of the count check.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use crate::util::{corpus_path, tracegate};

/// One example: where it is, its arguments, and the output it shows.
struct Example {
    place: String,
    args: Vec<String>,
    shown: Option<String>,
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn documents() -> Vec<PathBuf> {
    let mut files = vec![repo().join("README.md"), repo().join("examples/README.md")];
    let mut docs: Vec<PathBuf> = fs::read_dir(repo().join("docs"))
        .expect("docs/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// A synopsis, not a command: `...`, `[`, `|`, or a placeholder word in
/// capitals (PATH, TRACE, NAME).
fn is_synopsis(line: &str) -> bool {
    line.contains("...")
        || line.contains('[')
        || line.contains('|')
        || line.split_whitespace().any(|w| {
            let w = w.trim_matches(|c: char| !c.is_ascii_alphanumeric());
            w.len() >= 2 && w.chars().all(|c| c.is_ascii_uppercase() || c == '_')
        })
}

/// The examples of one Markdown file.
fn examples_in(path: &Path) -> Vec<Example> {
    let text = fs::read_to_string(path).expect("readable doc");
    let name = path
        .strip_prefix(repo())
        .unwrap_or(path)
        .display()
        .to_string();
    let mut found = Vec::new();
    let mut in_block = false;
    let mut lines = text.lines().enumerate().peekable();
    while let Some((number, line)) = lines.next() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if !in_block {
            continue;
        }
        let prompt = line.starts_with("$ ");
        let mut command = line.trim_start_matches("$ ").trim().to_string();
        while command.ends_with('\\') {
            command.pop();
            let (_, next) = lines.next().expect("a continued line");
            command.push(' ');
            command.push_str(next.trim());
        }
        let command = match command.split_once(" #") {
            Some((before, _)) => before.trim().to_string(),
            None => command,
        };
        let rest = if let Some(rest) = command.strip_prefix("tracegate ") {
            rest
        } else if let Some(rest) = command.strip_prefix("cargo run --release -- ") {
            rest
        } else {
            continue;
        };
        if is_synopsis(rest) {
            continue;
        }
        let mut shown = None;
        if prompt {
            let mut output = String::new();
            while let Some((_, next)) = lines.peek() {
                if next.starts_with("$ ") || next.trim_start().starts_with("```") {
                    break;
                }
                output.push_str(next);
                output.push('\n');
                lines.next();
            }
            shown = Some(output);
        }
        found.push(Example {
            place: format!("{name}:{}", number + 1),
            args: rest.split_whitespace().map(String::from).collect(),
            shown,
        });
    }
    found
}

/// The arguments that name inputs (files the command reads).
fn inputs(args: &[String]) -> Vec<&str> {
    let mut out = Vec::new();
    let mut previous = "";
    for arg in args {
        let output_option = matches!(previous, "-o" | "--output" | "--out-dir" | "--out");
        if !output_option && (arg.contains('/') || arg.ends_with(".gz") || arg.ends_with(".yaml")) {
            out.push(arg.as_str());
        }
        previous = arg;
    }
    out
}

#[test]
fn every_example_command_in_the_docs_runs_as_written() {
    let root = tempfile::TempDir::new().expect("tempdir");
    let work = root.path().join("work");
    fs::create_dir_all(&work).expect("mkdir");
    for dir in ["examples", "policies", "templates"] {
        symlink(repo().join(dir), work.join(dir)).expect("symlink");
    }
    symlink(corpus_path().join(".."), root.path().join("shared")).expect("symlink");
    let (mut ran, mut skipped, mut failures) = (Vec::new(), Vec::new(), Vec::new());
    for doc in documents() {
        for example in examples_in(&doc) {
            if let Some(missing) = inputs(&example.args)
                .into_iter()
                .find(|input| !work.join(input).exists())
            {
                skipped.push(format!("{} ({missing} is not here)", example.place));
                continue;
            }
            let output = tracegate()
                .current_dir(&work)
                .args(&example.args)
                .env("NO_COLOR", "1")
                .env("COLUMNS", "100")
                .env_remove("GITHUB_ACTIONS")
                .output()
                .expect("run tracegate");
            let code = output.status.code().unwrap_or(-1);
            let stdout = String::from_utf8_lossy(&output.stdout);
            if !matches!(code, 0 | 1) {
                failures.push(format!(
                    "{}: `tracegate {}` exited {code}: {}",
                    example.place,
                    example.args.join(" "),
                    String::from_utf8_lossy(&output.stderr)
                ));
            } else if let Some(shown) = &example.shown {
                if stdout.trim_end() != shown.trim_end() {
                    failures.push(format!(
                        "{}: `tracegate {}` prints\n{stdout}\nbut the doc shows\n{shown}",
                        example.place,
                        example.args.join(" ")
                    ));
                }
            }
            ran.push(example.place);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // The README's quick start and POLICY.md's three policy checks at least;
    // with the corpus, CROSS_PLATFORM.md's check too.
    let expected = if cfg!(tracegate_corpus) { 5 } else { 4 };
    assert!(ran.len() >= expected, "ran {ran:?}; skipped {skipped:?}");
}

/// The version `Cargo.toml` states.
fn cargo_version() -> String {
    let manifest = fs::read_to_string(repo().join("Cargo.toml")).expect("Cargo.toml");
    manifest
        .lines()
        .find_map(|l| l.strip_prefix("version = \""))
        .and_then(|v| v.strip_suffix('"'))
        .expect("a version line")
        .to_string()
}

/// The tag the release workflow moves for `version`: its own shell (the
/// `case "$version" in ... esac` of the `version` job) run by bash, so the
/// docs are checked against the rule that runs, not a copy of it.
fn moving_tag(version: &str) -> String {
    let workflow =
        fs::read_to_string(repo().join(".github/workflows/release.yml")).expect("release.yml");
    let start = workflow
        .find("case \"$version\" in")
        .expect("release.yml computes the moving tag with a case on $version");
    let end = start + workflow[start..].find("esac").expect("esac") + "esac".len();
    let output = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "set -eu\n{}\nprintf %s \"$moving\"",
            &workflow[start..end]
        ))
        .env("version", version)
        .output()
        .expect("bash");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).expect("utf-8")
}

#[test]
fn the_release_rule_moves_v0_minor_before_1_0_and_the_major_after() {
    assert_eq!(moving_tag("0.1.0"), "v0.1");
    assert_eq!(moving_tag("0.12.3"), "v0.12");
    assert_eq!(moving_tag("1.2.3"), "v1");
    assert_eq!(moving_tag("2.0.0-rc.1"), "");
}

/// The files a user copies pins from: README.md, CONTRIBUTING.md, every
/// file under docs/ and examples/, and the Actions' own descriptions.
fn pinning_files() -> Vec<PathBuf> {
    let mut files = vec![
        repo().join("README.md"),
        repo().join("CONTRIBUTING.md"),
        repo().join("action.yml"),
        repo().join("install/action.yml"),
    ];
    let mut stack = vec![repo().join("docs"), repo().join("examples")];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).expect("readable dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path
                .extension()
                .is_some_and(|e| e == "md" || e == "yml" || e == "yaml")
            {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

#[test]
fn every_documented_pin_resolves_under_the_release_rule() {
    let version = cargo_version();
    let moving = moving_tag(&version);
    assert!(
        !moving.is_empty(),
        "{version} is a pre-release: no tag moves"
    );
    let exact = format!("v{version}");
    let pin =
        regex::Regex::new(r"tracegate/tracegate(/install)?@([A-Za-z0-9._-]+)").expect("regex");
    let (mut seen, mut wrong) = (0, Vec::new());
    for file in pinning_files() {
        let text = fs::read_to_string(&file).expect("readable");
        let name = file
            .strip_prefix(repo())
            .unwrap_or(&file)
            .display()
            .to_string();
        for (number, line) in text.lines().enumerate() {
            for found in pin.captures_iter(line) {
                let reference = &found[2];
                // A placeholder (`@REF`) names no tag.
                if reference.chars().all(|c| c.is_ascii_uppercase()) {
                    continue;
                }
                seen += 1;
                if reference != moving && reference != exact {
                    wrong.push(format!("{name}:{}: @{reference}", number + 1));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "pins that no release of {version} creates (release.yml moves {moving}; \
         {exact} is the exact tag):\n{}",
        wrong.join("\n")
    );
    // The README, GITHUB.md and every workflow example pin the Action.
    assert!(seen >= 10, "only {seen} pins found");
}
