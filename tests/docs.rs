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

/// A file's path as the repository names it.
fn relative(path: &Path) -> String {
    path.strip_prefix(repo())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The examples of one Markdown file.
fn examples_in(path: &Path) -> Vec<Example> {
    let text = fs::read_to_string(path).expect("readable doc");
    let name = relative(path);
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

/// A directory where `examples/`, `policies/` and `templates/` are this
/// checkout's and `../shared` holds the corpus, as a reader's checkout has
/// them: the temporary root and the working directory inside it.
fn reader_checkout() -> (tempfile::TempDir, PathBuf) {
    let root = tempfile::TempDir::new().expect("tempdir");
    let work = root.path().join("work");
    fs::create_dir_all(&work).expect("mkdir");
    for dir in ["examples", "policies", "templates"] {
        symlink(repo().join(dir), work.join(dir)).expect("symlink");
    }
    symlink(corpus_path().join(".."), root.path().join("shared")).expect("symlink");
    (root, work)
}

/// The first input of `args` that `work` lacks (the corpus, or a file the
/// reader makes first).
fn missing_input<'a>(work: &Path, args: &'a [String]) -> Option<&'a str> {
    inputs(args)
        .into_iter()
        .find(|input| !work.join(input).exists())
}

#[test]
fn every_example_command_in_the_docs_runs_as_written() {
    let (_root, work) = reader_checkout();
    let (mut ran, mut skipped, mut failures) = (Vec::new(), Vec::new(), Vec::new());
    for doc in documents() {
        for example in examples_in(&doc) {
            if let Some(missing) = missing_input(&work, &example.args) {
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
        let name = relative(&file);
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

/// A sample of real output in a doc: the line before its fenced block is
/// `<!-- sample OPTIONS: tracegate ARGS -->`. OPTIONS: `columns=N` (the
/// terminal width, default 80), `file=NAME` (not stdout but the file NAME
/// that `--out-dir` writes; the test adds `--out-dir`), `excerpt` (the
/// block is parts of the output: its runs of lines between lines that are
/// just `…` must each appear whole, in order; without it the block is the
/// whole output).
struct Sample {
    place: String,
    args: Vec<String>,
    columns: String,
    file: Option<String>,
    excerpt: bool,
    text: String,
}

fn samples_in(path: &Path) -> Vec<Sample> {
    let text = fs::read_to_string(path).expect("readable doc");
    let name = relative(path);
    let mut found = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((number, line)) = lines.next() {
        let Some(marker) = line
            .trim()
            .strip_prefix("<!-- sample")
            .and_then(|m| m.strip_suffix("-->"))
        else {
            continue;
        };
        let place = format!("{name}:{}", number + 1);
        let (options, command) = marker
            .split_once(": tracegate ")
            .unwrap_or_else(|| panic!("{place}: `<!-- sample OPTIONS: tracegate ARGS -->`"));
        let (mut columns, mut file, mut excerpt) = ("80".to_string(), None, false);
        for option in options.split_whitespace() {
            if let Some(n) = option.strip_prefix("columns=") {
                columns = n.to_string();
            } else if let Some(f) = option.strip_prefix("file=") {
                file = Some(f.to_string());
            } else if option == "excerpt" {
                excerpt = true;
            } else {
                panic!("{place}: unknown sample option {option}");
            }
        }
        let (_, fence) = lines.next().unwrap_or_else(|| panic!("{place}: no block"));
        let fence = fence.trim_end();
        assert!(
            fence.starts_with("```"),
            "{place}: the next line opens a block"
        );
        let ticks = &fence[..fence.len() - fence.trim_start_matches('`').len()];
        let mut block = String::new();
        for (_, body) in lines.by_ref() {
            if body.trim_end() == ticks {
                break;
            }
            block.push_str(body);
            block.push('\n');
        }
        found.push(Sample {
            place,
            args: command.split_whitespace().map(String::from).collect(),
            columns,
            file,
            excerpt,
            text: block,
        });
    }
    found
}

/// Where `sample` differs from `actual`, or None.
fn sample_mismatch(sample: &Sample, actual: &str) -> Option<String> {
    let actual: Vec<&str> = actual.lines().map(str::trim_end).collect();
    let shown: Vec<&str> = sample.text.lines().map(str::trim_end).collect();
    if !sample.excerpt {
        return (actual != shown).then(|| "the block is not the whole output".to_string());
    }
    let mut from = 0;
    for part in shown.split(|l| l.trim() == "…").filter(|p| !p.is_empty()) {
        match (from..=actual.len().saturating_sub(part.len()))
            .find(|&i| actual[i..].starts_with(part))
        {
            Some(i) => from = i + part.len(),
            None => {
                return Some(format!(
                    "no run of lines in the output (after line {from}) is\n{}",
                    part.join("\n")
                ));
            }
        }
    }
    None
}

#[test]
fn samples_of_output_in_the_docs_are_what_tracegate_prints() {
    let (_root, work) = reader_checkout();
    let (mut checked, mut skipped, mut failures) = (0, Vec::new(), Vec::new());
    for doc in documents() {
        for sample in samples_in(&doc) {
            if let Some(missing) = missing_input(&work, &sample.args) {
                skipped.push(format!("{} ({missing} is not here)", sample.place));
                continue;
            }
            let out = tempfile::TempDir::new().expect("tempdir");
            let mut command = tracegate();
            command
                .current_dir(&work)
                .args(&sample.args)
                .env("NO_COLOR", "1")
                .env("COLUMNS", &sample.columns)
                .env_remove("GITHUB_ACTIONS");
            if sample.file.is_some() {
                command.arg("--out-dir").arg(out.path());
            }
            let output = command.output().expect("run tracegate");
            let code = output.status.code().unwrap_or(-1);
            assert!(
                matches!(code, 0 | 1),
                "{}: exited {code}: {}",
                sample.place,
                String::from_utf8_lossy(&output.stderr)
            );
            let actual = match &sample.file {
                Some(file) => fs::read_to_string(out.path().join(file))
                    .unwrap_or_else(|e| panic!("{}: {file}: {e}", sample.place)),
                None => String::from_utf8_lossy(&output.stdout).into_owned(),
            };
            if let Some(why) = sample_mismatch(&sample, &actual) {
                failures.push(format!(
                    "{}: `tracegate {}`: {why}\n--- it writes:\n{actual}",
                    sample.place,
                    sample.args.join(" ")
                ));
            }
            checked += 1;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // README's quick start (terminal and comment) and GITHUB.md's comment;
    // with the corpus, CROSS_PLATFORM.md's terminal and comment too.
    let expected = if cfg!(tracegate_corpus) { 5 } else { 3 };
    assert!(
        checked >= expected,
        "checked {checked}; skipped {skipped:?}"
    );
}

#[test]
fn an_excerpt_must_hold_its_lines_whole_and_in_order() {
    let sample = |text: &str, excerpt| Sample {
        place: String::new(),
        args: Vec::new(),
        columns: String::new(),
        file: None,
        excerpt,
        text: text.to_string(),
    };
    let actual = "a\nb\nc\nd\n";
    assert_eq!(
        sample_mismatch(&sample("a\nb\nc\nd\n", false), actual),
        None
    );
    assert!(sample_mismatch(&sample("a\nb\n", false), actual).is_some());
    assert_eq!(sample_mismatch(&sample("a\n…\nc\nd\n", true), actual), None);
    assert_eq!(sample_mismatch(&sample("b\nc\n", true), actual), None);
    assert!(sample_mismatch(&sample("a\nc\n", true), actual).is_some());
    assert!(sample_mismatch(&sample("c\n…\nb\n", true), actual).is_some());
}

fn example_workflow(name: &str) -> serde_yaml::Value {
    let path = repo().join("docs/examples").join(name);
    let text = fs::read_to_string(&path).expect("readable example");
    serde_yaml::from_str(&text).expect("an example workflow is YAML")
}

#[test]
fn the_pr_gate_runs_again_when_the_accept_label_is_added_or_removed() {
    let workflow = example_workflow("pr-gate.yml");
    let types: Vec<&str> = workflow["on"]["pull_request"]["types"]
        .as_sequence()
        .expect("pr-gate.yml lists its pull_request types")
        .iter()
        .filter_map(|t| t.as_str())
        .collect();
    for wanted in ["opened", "synchronize", "reopened", "labeled", "unlabeled"] {
        assert!(
            types.contains(&wanted),
            "pr-gate.yml's types {types:?} lack {wanted}"
        );
    }
}

/// A `gh run list --workflow NAME` in a workflow example or GITHUB.md names
/// an example (or `tracegate.yml`, where GITHUB.md copies pr-gate.yml), and
/// each step an example's comments name is a step of the workflow they name.
#[test]
fn workflows_and_steps_the_examples_refer_to_exist() {
    let examples = repo().join("docs/examples");
    let mut texts = vec![(
        "docs/GITHUB.md".to_string(),
        fs::read_to_string(repo().join("docs/GITHUB.md")).expect("GITHUB.md"),
    )];
    for entry in fs::read_dir(&examples).expect("docs/examples") {
        let path = entry.expect("entry").path();
        let name = format!(
            "docs/examples/{}",
            path.file_name().expect("name").to_string_lossy()
        );
        texts.push((name, fs::read_to_string(&path).expect("readable")));
    }
    let listed = regex::Regex::new(r"gh run list --workflow ([^\s`]+)").expect("regex");
    let step =
        regex::Regex::new(r"(?s)in ([a-z-]+\.yml), replace the \*([^*]+)\* step").expect("regex");
    let mut seen = 0;
    for (name, text) in &texts {
        for found in listed.captures_iter(text) {
            let workflow = &found[1];
            seen += 1;
            assert!(
                workflow == "tracegate.yml" || examples.join(workflow).is_file(),
                "{name}: `gh run list --workflow {workflow}`: no such example"
            );
        }
        for found in step.captures_iter(&text.replace("\n# ", " ")) {
            let (workflow, wanted) = (&found[1], &found[2]);
            let steps = example_workflow(workflow)["jobs"]
                .as_mapping()
                .expect("jobs")
                .values()
                .flat_map(|job| job["steps"].as_sequence().cloned().unwrap_or_default())
                .filter_map(|s| s["name"].as_str().map(String::from))
                .collect::<Vec<_>>();
            assert!(
                steps.iter().any(|s| s == wanted),
                "{name}: {workflow} has no step *{wanted}* (it has {steps:?})"
            );
            seen += 1;
        }
    }
    assert!(seen >= 3, "only {seen} references found");
}
