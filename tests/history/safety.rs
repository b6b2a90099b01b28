//! The history store under crashes, full disks, concurrent writers and
//! damage, through the binary as CI runs it (issue: "the history store
//! never corrupts or leaves its folder").

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use tracegate::history::store::{INDEX_FILE, Store};

use super::{add, small_cuda, stdout};
use crate::util::tracegate;

fn binary() -> std::path::PathBuf {
    assert_cmd::cargo::cargo_bin("tracegate")
}

fn add_command(history: &Path, commit: &str) -> Command {
    let mut command = Command::new(binary());
    command
        .args(["history", "add", "--quiet", "--dir"])
        .arg(history)
        .args(["--commit", commit, "--branch", "main"])
        .arg(small_cuda())
        .env_remove("GITHUB_SHA")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    command
}

fn fsck(history: &Path, repair: bool) -> (i32, String) {
    let mut command = tracegate();
    command.args(["history", "fsck", "--dir"]).arg(history);
    if repair {
        command.arg("--repair");
    }
    let output = command.output().expect("runs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

fn list(history: &Path) -> std::process::Output {
    tracegate()
        .args(["history", "list", "--dir"])
        .arg(history)
        .output()
        .expect("runs")
}

fn entries(history: &Path) -> Vec<String> {
    let scan = Store::open(history).unwrap().scan().unwrap();
    scan.entries.into_iter().map(|e| e.commit).collect()
}

/// `add`s and `prune`s killed with SIGKILL at a spread of moments: every
/// run whose `add` finished is still there, every command still reads the
/// history, and `fsck --repair` leaves nothing to report.
#[cfg(unix)]
#[test]
fn a_writer_killed_with_sigkill_at_any_moment_loses_no_finished_run() {
    let dir = tempfile::TempDir::new().expect("tempdir");
    let history = dir.path().join("history");
    add(&history, "done0000", "main", "2026-01-01T00:00:00Z");
    let mut finished = vec!["done0000".to_string()];
    for round in 0..16u64 {
        let mut child = if round % 4 == 3 {
            let mut prune = Command::new(binary());
            prune
                .args(["history", "prune", "--keep", "1000", "--dir"])
                .arg(&history)
                .stdout(Stdio::null());
            prune.spawn().expect("spawn")
        } else {
            add_command(&history, &format!("kill{round:04}"))
                .spawn()
                .expect("spawn")
        };
        // From at once to past the end of a debug build's add.
        std::thread::sleep(Duration::from_millis(round * round * 2));
        let _ = child.kill();
        child.wait().expect("reaped");
        let list = list(&history);
        assert!(list.status.success(), "round {round}: {list:?}");
        let found = entries(&history);
        for commit in &finished {
            assert!(found.contains(commit), "round {round}: {commit} lost");
        }
        let commit = format!("done{:04}", round + 1);
        assert!(add_command(&history, &commit).status().unwrap().success());
        finished.push(commit);
    }
    let (_, repaired) = fsck(&history, true);
    assert!(repaired.contains("repaired"), "{repaired}");
    assert_eq!(
        fsck(&history, false),
        (
            0,
            format!("{} run(s), no problem found\n", entries(&history).len())
        )
    );
    let found = entries(&history);
    for commit in &finished {
        assert!(found.contains(commit), "{commit} lost after repair");
    }
    assert!(!history.join(".tracegate.lock").exists());
}

/// The disk fills half-way through the index line (a file size limit,
/// `prlimit --fsize`): the half line is skipped with a warning, the run is
/// still read from its sidecar, and the next `add` repairs the index.
#[cfg(target_os = "linux")]
#[test]
fn a_short_write_of_the_index_is_skipped_and_repaired() {
    let dir = tempfile::TempDir::new().expect("tempdir");
    let history = dir.path().join("history");
    add(&history, "first000", "main", "2026-01-01T00:00:00Z");
    // An index longer than a snapshot, so that the limit cuts the index.
    let store = Store::open(&history).unwrap();
    let first = store.entries().unwrap().remove(0);
    let snapshot = store.load(&first).unwrap();
    let snapshot_size = std::fs::metadata(history.join(&first.file)).unwrap().len();
    let line = std::fs::metadata(history.join(INDEX_FILE)).unwrap().len();
    for i in 0..(snapshot_size / line + 2) {
        let origin = tracegate::history::entry::Origin {
            commit: format!("fill{i:04}"),
            branch: Some("main".to_string()),
            time: format!("2026-01-02T00:{:02}:00Z", i % 60),
            pr: None,
            run_url: None,
        };
        store.add(&snapshot, origin).unwrap();
    }
    let size = std::fs::metadata(history.join(INDEX_FILE)).unwrap().len();
    let status = Command::new("prlimit")
        .arg(format!("--fsize={}", size + line / 2))
        .arg(binary())
        .args(["history", "add", "--quiet", "--dir"])
        .arg(&history)
        .args(["--commit", "torn0000", "--branch", "main"])
        .arg(small_cuda())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("prlimit runs");
    assert!(!status.success(), "the file size limit stopped the add");
    let index = std::fs::read(history.join(INDEX_FILE)).unwrap();
    assert_ne!(index.last(), Some(&b'\n'), "a torn last line");
    let list = list(&history);
    assert!(list.status.success(), "{list:?}");
    let warned = String::from_utf8_lossy(&list.stderr);
    assert!(warned.contains("a torn last line"), "{warned}");
    assert!(entries(&history).contains(&"torn0000".to_string()));
    add(&history, "next0000", "main", "2026-01-03T00:00:00Z");
    assert_eq!(fsck(&history, false).0, 0);
    let found = entries(&history);
    assert!(found.contains(&"torn0000".to_string()) && found.contains(&"next0000".to_string()));
}

/// Adds and prunes from separate processes at once: every add's index line
/// is there, nothing read from a sidecar.
#[test]
fn add_and_prune_at_once_lose_no_index_line() {
    let dir = tempfile::TempDir::new().expect("tempdir");
    let history = dir.path().join("history");
    add(&history, "seed0000", "main", "2026-01-01T00:00:00Z");
    let mut children: Vec<_> = (0..6)
        .map(|i| {
            add_command(&history, &format!("c{i:07}"))
                .spawn()
                .expect("spawn")
        })
        .collect();
    for _ in 0..3 {
        children.push(
            Command::new(binary())
                .args(["history", "prune", "--keep", "100", "--dir"])
                .arg(&history)
                .stdout(Stdio::null())
                .spawn()
                .expect("spawn"),
        );
    }
    for mut child in children {
        assert!(child.wait().expect("wait").success());
    }
    let index = std::fs::read_to_string(history.join(INDEX_FILE)).expect("index");
    assert_eq!(index.lines().count(), 7, "{index}");
    assert_eq!(fsck(&history, false).0, 0);
}

/// One truncated run snapshot and one damaged sidecar: `check --history`,
/// `history report` and `history list` still use the rest, each warning
/// names the file.
#[test]
fn one_damaged_run_is_skipped_and_the_rest_of_the_history_used() {
    let dir = tempfile::TempDir::new().expect("tempdir");
    let history = dir.path().join("history");
    for (i, commit) in ["aaaaaaa1", "bbbbbbb2", "ccccccc3"].iter().enumerate() {
        add(
            &history,
            commit,
            "main",
            &format!("2026-01-0{}T00:00:00Z", i + 1),
        );
    }
    let store = Store::open(&history).unwrap();
    let runs = store.entries().unwrap();
    let truncated = &runs[2].file;
    let bytes = std::fs::read(history.join(truncated)).unwrap();
    std::fs::write(history.join(truncated), &bytes[..bytes.len() / 2]).unwrap();
    let sidecar = runs[0].file.replace(".snapshot.json.gz", ".meta.json");
    std::fs::write(history.join(&sidecar), "{").unwrap();
    let list = list(&history);
    assert!(list.status.success(), "{list:?}");
    assert!(String::from_utf8_lossy(&list.stderr).contains(&sidecar));
    let out = dir.path().join("out");
    let check = tracegate()
        .args([
            "check",
            "--color",
            "never",
            "--commit",
            "ddddddd4",
            "--history",
        ])
        .arg(&history)
        .arg("--candidate")
        .arg(small_cuda())
        .arg("--out-dir")
        .arg(&out)
        .env_remove("GITHUB_ACTIONS")
        .output()
        .expect("runs");
    assert!(check.status.success(), "{check:?}");
    let warned = String::from_utf8_lossy(&check.stderr);
    assert!(
        warned.contains(truncated.as_str()) && warned.contains("run skipped"),
        "{warned}"
    );
    assert!(String::from_utf8_lossy(&check.stdout).contains("baseline: 2 run(s)"));
    let site = dir.path().join("site");
    let report = tracegate()
        .args(["history", "report", "--dir"])
        .arg(&history)
        .arg("-o")
        .arg(&site)
        .output()
        .expect("runs");
    assert!(report.status.success(), "{report:?}");
    assert!(String::from_utf8_lossy(&report.stderr).contains(truncated.as_str()));
    let show = stdout(&["history", "list"], &history);
    assert!(
        show.contains("aaaaaaa"),
        "the index still names the run: {show}"
    );
}

/// `history fsck` finds a torn index and exits 1; `--repair` rewrites it.
#[test]
fn fsck_reports_damage_and_repair_removes_it() {
    let dir = tempfile::TempDir::new().expect("tempdir");
    let history = dir.path().join("history");
    add(&history, "aaaaaaa1", "main", "2026-01-01T00:00:00Z");
    add(&history, "bbbbbbb2", "main", "2026-01-02T00:00:00Z");
    assert_eq!(
        fsck(&history, false),
        (0, "2 run(s), no problem found\n".to_string())
    );
    let index = std::fs::read(history.join(INDEX_FILE)).unwrap();
    std::fs::write(history.join(INDEX_FILE), &index[..index.len() - 30]).unwrap();
    let (code, text) = fsck(&history, false);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains(":2: a torn last line"), "{text}");
    let (code, text) = fsck(&history, true);
    assert_eq!(code, 0, "{text}");
    assert_eq!(
        fsck(&history, false),
        (0, "2 run(s), no problem found\n".to_string())
    );
}
