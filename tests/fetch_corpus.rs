//! `scripts/fetch-corpus`, offline: `--verify` on a directory made here,
//! and a whole fetch (and `--pin`) from upstream repositories that are local
//! git repositories (`CORPUS_GIT_BASE=file://...`), so the blob-id pinning,
//! the history search and the SHA-256 check run without a network. With the
//! corpus present, the shared copy is checked against the manifest.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tempfile::TempDir;
use tracegate::gate::snapshot::sha256_hex;

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/fetch-corpus")
}

/// `git` with no user or system configuration, identity given.
fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "test")
        .env("GIT_AUTHOR_EMAIL", "test@example.com")
        .env("GIT_COMMITTER_NAME", "test")
        .env("GIT_COMMITTER_EMAIL", "test@example.com")
        .output()
        .expect("run git");
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .expect("UTF-8")
        .trim()
        .to_string()
}

/// Runs the script with a manifest and a clone cache of this test's own.
fn fetch_corpus(work: &Path, args: &[&str]) -> Output {
    Command::new("bash")
        .arg(script())
        .args(args)
        .env("CORPUS_MANIFEST", work.join("manifest"))
        .env("CORPUS_CACHE", work.join("clones"))
        .env(
            "CORPUS_GIT_BASE",
            format!("file://{}", work.join("upstream").display()),
        )
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .expect("run scripts/fetch-corpus")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// One manifest line for `bytes`, as the real manifest writes it.
fn line(path: &str, bytes: &[u8], blob: &str, upstream: &str, commit: &str, kind: &str) -> String {
    format!(
        "{path} {} {blob} someone/traces {upstream} {commit} {kind}\n",
        sha256_hex(bytes)
    )
}

/// `git hash-object` of bytes.
fn blob_id(work: &Path, bytes: &[u8]) -> String {
    let file = work.join("hash-me");
    fs::write(&file, bytes).expect("write");
    git(work, &["hash-object", file.to_str().expect("UTF-8")])
}

#[test]
fn verify_passes_a_matching_directory_and_names_each_wrong_file() {
    let work = TempDir::new().expect("tempdir");
    let dir = work.path().join("corpus");
    fs::create_dir_all(dir.join("sub")).expect("mkdir");
    let (a, b) = (b"trace a".as_slice(), b"trace b".as_slice());
    fs::write(dir.join("a.json"), a).expect("write");
    fs::write(dir.join("sub/b.json.gz"), b).expect("write");
    let manifest = format!(
        "# comment\n\n{}{}{}",
        line("a.json", a, "x", "a.json", "-", "data"),
        line("sub/b.json.gz", b, "x", "b.json.gz", "-", "data"),
        line("licence.txt", b"MIT", "x", "LICENSE", "-", "licence"),
    );
    fs::write(work.path().join("manifest"), manifest).expect("write");
    let dir_arg = dir.to_str().expect("UTF-8");

    let output = fetch_corpus(work.path(), &["--verify", dir_arg]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("2 files match"),
        "{}",
        stderr(&output)
    );
    assert!(
        stderr(&output).contains("warning: licence.txt is missing"),
        "{}",
        stderr(&output)
    );

    fs::write(dir.join("a.json"), b"trace A").expect("write");
    fs::remove_file(dir.join("sub/b.json.gz")).expect("remove");
    let output = fetch_corpus(work.path(), &["--verify", dir_arg]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let said = stderr(&output);
    assert!(said.contains("SHA-256 differs: a.json"), "{said}");
    assert!(said.contains("missing: sub/b.json.gz"), "{said}");
}

#[test]
fn fetch_takes_each_file_by_content_from_upstream_history_and_pin_names_the_commit() {
    let work = TempDir::new().expect("tempdir");
    let upstream = work.path().join("upstream/someone/traces");
    fs::create_dir_all(upstream.join("tests")).expect("mkdir");
    git(&upstream, &["init", "--quiet", "--initial-branch=main"]);
    // The corpus took the first version of old.json; upstream changed it later.
    let (old_v1, old_v2, csv) = (
        b"{\"traceEvents\": [1]}".as_slice(),
        b"{\"traceEvents\": [2]}".as_slice(),
        b"a,b\n1,2\n".as_slice(),
    );
    fs::write(upstream.join("tests/old.json"), old_v1).expect("write");
    git(&upstream, &["add", "."]);
    git(&upstream, &["commit", "--quiet", "-m", "first"]);
    let first = git(&upstream, &["rev-parse", "HEAD"]);
    fs::write(upstream.join("tests/old.json"), old_v2).expect("write");
    fs::write(upstream.join("tests/report.csv"), csv).expect("write");
    git(&upstream, &["add", "."]);
    git(&upstream, &["commit", "--quiet", "-m", "second"]);
    let second = git(&upstream, &["rev-parse", "HEAD"]);

    let manifest = format!(
        "{}{}",
        line(
            "old.json",
            old_v1,
            &blob_id(work.path(), old_v1),
            "?",
            "-",
            "data"
        ),
        line(
            "csvs/report.csv",
            csv,
            &blob_id(work.path(), csv),
            "tests/report.csv",
            &second,
            "data"
        ),
    );
    fs::write(work.path().join("manifest"), &manifest).expect("write");
    let dir = work.path().join("corpus");
    let dir_arg = dir.to_str().expect("UTF-8");

    let output = fetch_corpus(work.path(), &[dir_arg]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(fs::read(dir.join("old.json")).expect("fetched"), old_v1);
    assert_eq!(fs::read(dir.join("csvs/report.csv")).expect("fetched"), csv);
    assert!(
        stderr(&output).contains("fetched 2 files"),
        "{}",
        stderr(&output)
    );

    // Again: nothing to fetch, everything verified.
    let output = fetch_corpus(work.path(), &[dir_arg]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("fetched 0 files"),
        "{}",
        stderr(&output)
    );

    let output = fetch_corpus(work.path(), &["--pin"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let pinned = String::from_utf8_lossy(&output.stdout);
    let old_line = pinned.lines().next().expect("old.json line");
    assert!(
        old_line.ends_with(&format!("someone/traces tests/old.json {first} data")),
        "{pinned}"
    );
    assert!(
        pinned.contains(&format!("tests/report.csv {second} data")),
        "{pinned}"
    );

    // Content upstream never had is an error naming the file; so is a pin
    // whose commit does not hold the content.
    let missing = b"not upstream".as_slice();
    fs::write(
        work.path().join("manifest"),
        format!(
            "{}{}",
            line(
                "gone.json",
                missing,
                &blob_id(work.path(), missing),
                "?",
                "-",
                "data"
            ),
            line(
                "moved.json",
                old_v2,
                &blob_id(work.path(), old_v2),
                "tests/old.json",
                &first,
                "data"
            )
        ),
    )
    .expect("write");
    let output = fetch_corpus(work.path(), &[dir_arg]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let said = stderr(&output);
    assert!(said.contains("gone.json: blob"), "{said}");
    assert!(said.contains("not in someone/traces's history"), "{said}");
    assert!(
        said.contains(&format!(
            "moved.json: someone/traces {first} does not hold it"
        )),
        "{said}"
    );
    assert!(!dir.join("gone.json").exists() && !dir.join("moved.json").exists());
}

#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn the_shared_corpus_matches_the_manifest() {
    let output = Command::new("bash")
        .arg(script())
        .arg("--verify")
        .output()
        .expect("run scripts/fetch-corpus --verify");
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("219 files match"),
        "{}",
        stderr(&output)
    );
}
