use super::*;
use std::time::SystemTime;

use crate::gate::snapshot::tests::tiny_snapshot;

pub(super) fn origin(commit: &str, time: &str) -> Origin {
    Origin {
        commit: commit.to_string(),
        branch: Some("main".to_string()),
        time: time.to_string(),
        pr: None,
        run_url: None,
    }
}

pub(super) fn snapshot(workload: &str) -> Snapshot {
    Snapshot {
        workload: workload.to_string(),
        ..tiny_snapshot()
    }
}

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::TempDir::new().unwrap();
    let store = Store::open(&dir.path().join("history")).unwrap();
    (dir, store)
}

fn commits(entries: &[EntryMeta]) -> Vec<&str> {
    entries.iter().map(|e| e.commit.as_str()).collect()
}

#[test]
fn an_added_run_is_its_snapshot_sidecar_and_index_line() {
    let (_dir, store) = store();
    let entry = store
        .add(
            &snapshot("bert"),
            origin("0123456789abcdef", "2026-11-24T10:30:00+01:00"),
        )
        .unwrap();
    assert_eq!(entry.time, "2026-11-24T09:30:00Z");
    assert!(
        entry
            .file
            .starts_with("runs/bert/20261124T093000Z-0123456-"),
        "{}",
        entry.file
    );
    assert!(entry.file.ends_with(".snapshot.json.gz"));
    assert_eq!(store.load(&entry).unwrap(), snapshot("bert"));
    let sidecar = store
        .dir()
        .join(entry.file.replace(".snapshot.json.gz", ".meta.json"));
    let from_sidecar: EntryMeta =
        serde_json::from_str(&fs::read_to_string(sidecar).unwrap()).unwrap();
    assert_eq!(from_sidecar, entry);
    let index = fs::read_to_string(store.dir().join(INDEX_FILE)).unwrap();
    assert_eq!(index.lines().count(), 1);
    assert_eq!(
        fs::read_to_string(store.dir().join(".gitattributes")).unwrap(),
        "index.jsonl merge=union\n"
    );
    assert_eq!(store.entries().unwrap(), vec![entry]);
}

#[test]
fn entries_are_oldest_first_by_time_then_commit() {
    let (_dir, store) = store();
    store
        .add(&snapshot("bert"), origin("ccc", "2026-11-24T09:00:00Z"))
        .unwrap();
    store
        .add(&snapshot("bert"), origin("bbb", "2026-11-23T09:00:00.5Z"))
        .unwrap();
    store
        .add(&snapshot("gpt"), origin("aaa", "2026-11-24T09:00:00Z"))
        .unwrap();
    store
        .add(&snapshot("bert"), origin("ddd", "2026-11-23T09:00:00Z"))
        .unwrap();
    assert_eq!(
        commits(&store.entries().unwrap()),
        ["ddd", "bbb", "aaa", "ccc"]
    );
}

#[test]
fn an_empty_time_is_now_and_a_bad_one_is_refused() {
    let (_dir, store) = store();
    let entry = store.add(&snapshot("bert"), origin("abc", "")).unwrap();
    assert!(parse_time(&entry.time).is_ok(), "{}", entry.time);
    let error = store
        .add(&snapshot("bert"), origin("abc", "yesterday"))
        .unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("time `yesterday`: not an RFC 3339"),
        "{error}"
    );
}

#[test]
fn mismatches_between_index_and_files_are_reported() {
    let (_dir, store) = store();
    let gone = store
        .add(&snapshot("bert"), origin("aaa", "2026-01-01T00:00:00Z"))
        .unwrap();
    let unindexed = store
        .add(&snapshot("bert"), origin("bbb", "2026-01-02T00:00:00Z"))
        .unwrap();
    // The snapshot of the first went; the index line of the second was lost;
    // a stray snapshot has neither line nor sidecar.
    fs::remove_file(store.dir().join(&gone.file)).unwrap();
    let index = fs::read_to_string(store.dir().join(INDEX_FILE)).unwrap();
    fs::write(
        store.dir().join(INDEX_FILE),
        index.lines().next().unwrap().to_string() + "\n",
    )
    .unwrap();
    fs::write(
        store.dir().join("runs/bert/stray.snapshot.json.gz"),
        snapshot("bert").to_gz_bytes(),
    )
    .unwrap();
    let scan = store.scan().unwrap();
    assert_eq!(scan.entries, vec![unindexed.clone()]);
    assert_eq!(scan.unindexed, vec![unindexed]);
    assert_eq!(scan.missing, vec![gone]);
    assert_eq!(scan.orphans, ["runs/bert/stray.snapshot.json.gz"]);
    let problems = scan.problems();
    assert_eq!(problems.len(), 3, "{problems:?}");
    assert!(problems[0].contains("missing"), "{}", problems[0]);
}

#[test]
fn a_damaged_index_line_is_skipped_with_a_warning_naming_the_file_and_line() {
    let (_dir, store) = store();
    let entry = store
        .add(&snapshot("bert"), origin("aaa", "2026-01-01T00:00:00Z"))
        .unwrap();
    let path = store.dir().join(INDEX_FILE);
    let mut index = fs::read_to_string(&path).unwrap();
    index.push_str("{\"workload\": 3}\n");
    fs::write(&path, &index).unwrap();
    let scan = store.scan().unwrap();
    assert_eq!(scan.entries, vec![entry]);
    assert!(scan.index_damaged);
    assert_eq!(scan.damaged.len(), 1, "{:?}", scan.damaged);
    assert!(
        scan.damaged[0].starts_with(&format!("{}:2: not a history entry", path.display())),
        "{}",
        scan.damaged[0]
    );
    assert!(scan.problems().iter().all(|p| p.lines().count() == 1));
}

#[test]
fn an_index_line_cannot_point_outside_the_history() {
    let (_dir, store) = store();
    fs::create_dir_all(store.dir()).unwrap();
    let mut entry =
        EntryMeta::of_snapshot(&snapshot("bert"), origin("aaa", "2026-01-01T00:00:00Z"));
    entry.file = "../../etc/passwd".to_string();
    fs::write(
        store.dir().join(INDEX_FILE),
        serde_json::to_string(&entry).unwrap() + "\n",
    )
    .unwrap();
    let scan = store.scan().unwrap();
    assert!(scan.entries.is_empty());
    assert!(
        scan.damaged[0].contains(":1: file `../../etc/passwd` is not a relative path"),
        "{:?}",
        scan.damaged
    );
    assert!(store.load(&entry).is_err());
}

#[test]
fn prune_keeps_the_newest_runs_of_each_workload() {
    let (_dir, store) = store();
    let mut added = Vec::new();
    for (day, workload) in [
        (1, "bert"),
        (2, "bert"),
        (3, "gpt"),
        (4, "bert"),
        (5, "gpt"),
    ] {
        let time = format!("2026-01-0{day}T00:00:00Z");
        added.push(
            store
                .add(&snapshot(workload), origin(&format!("c{day}"), &time))
                .unwrap(),
        );
    }
    let pruned = store.prune(2).unwrap();
    assert_eq!(commits(&pruned.removed), ["c1"]);
    assert_eq!(commits(&pruned.kept), ["c2", "c3", "c4", "c5"]);
    assert_eq!(store.entries().unwrap(), pruned.kept);
    assert!(!store.dir().join(&added[0].file).exists());
    assert!(
        !store
            .dir()
            .join(added[0].file.replace(".snapshot.json.gz", ".meta.json"))
            .exists()
    );
    let pruned = store.prune(1).unwrap();
    assert_eq!(commits(&pruned.kept), ["c4", "c5"]);
    let index = fs::read_to_string(store.dir().join(INDEX_FILE)).unwrap();
    assert_eq!(index.lines().count(), 2);
}

#[test]
fn the_index_is_rebuilt_from_the_sidecars() {
    let (_dir, store) = store();
    let a = store
        .add(&snapshot("bert"), origin("aaa", "2026-01-01T00:00:00Z"))
        .unwrap();
    let b = store
        .add(&snapshot("gpt"), origin("bbb", "2026-01-02T00:00:00Z"))
        .unwrap();
    fs::write(store.dir().join(INDEX_FILE), "not json\n").unwrap();
    assert_eq!(store.scan().unwrap().damaged.len(), 1);
    let scan = store.rebuild_index().unwrap();
    assert_eq!(scan.entries, vec![a.clone(), b.clone()]);
    assert_eq!(store.entries().unwrap(), vec![a, b]);
}

#[test]
fn slugs_keep_file_names_plain() {
    assert_eq!(slug("Qwen1.5-0.5B", 100), "Qwen1.5-0.5B");
    assert_eq!(slug("a/b c:d", 100), "a_b_c_d");
    assert_eq!(slug("..", 100), "_..");
    assert_eq!(slug("", 100), "_");
    assert_eq!(slug("0123456789abcdef", 7), "0123456");
}

#[test]
fn a_missing_history_directory_is_an_error_naming_it() {
    let (dir, store) = store();
    let error = store.entries().unwrap_err().to_string();
    assert!(error.starts_with(&dir.path().join("history").display().to_string()));
    let file = dir.path().join("file");
    fs::write(&file, "").unwrap();
    assert!(Store::open(&file).is_err());
}

/// The history's files and their bytes, for "nothing lost, nothing
/// changed outside" comparisons.
fn index_lines(store: &Store) -> usize {
    fs::read_to_string(store.dir().join(INDEX_FILE))
        .unwrap()
        .lines()
        .count()
}

#[test]
fn a_short_write_of_the_index_is_skipped_and_repaired_by_the_next_add() {
    let (_dir, store) = store();
    let first = store
        .add(&snapshot("bert"), origin("aaa", "2026-01-01T00:00:00Z"))
        .unwrap();
    let torn = store
        .add(&snapshot("bert"), origin("bbb", "2026-01-02T00:00:00Z"))
        .unwrap();
    // The disk filled half-way through the second line.
    let path = store.dir().join(INDEX_FILE);
    let index = fs::read(&path).unwrap();
    let first_line = index.iter().position(|&b| b == b'\n').unwrap() + 1;
    let cut = first_line + (index.len() - first_line) / 2;
    fs::write(&path, &index[..cut]).unwrap();
    let scan = store.scan().unwrap();
    assert!(scan.index_damaged);
    assert!(
        scan.damaged[0].contains(":2: a torn last line"),
        "{:?}",
        scan.damaged
    );
    // The torn run is still read, from its sidecar.
    assert_eq!(scan.entries, vec![first.clone(), torn.clone()]);
    let third = store
        .add(&snapshot("bert"), origin("ccc", "2026-01-03T00:00:00Z"))
        .unwrap();
    let scan = store.scan().unwrap();
    assert_eq!(scan.problems(), Vec::<String>::new());
    assert_eq!(scan.entries, vec![first, torn, third]);
    assert_eq!(index_lines(&store), 3);
}

#[test]
fn a_whole_last_line_without_its_newline_is_not_joined_by_the_next_add() {
    let (_dir, store) = store();
    store
        .add(&snapshot("bert"), origin("aaa", "2026-01-01T00:00:00Z"))
        .unwrap();
    let path = store.dir().join(INDEX_FILE);
    let index = fs::read_to_string(&path).unwrap();
    fs::write(&path, index.trim_end()).unwrap();
    store
        .add(&snapshot("bert"), origin("bbb", "2026-01-02T00:00:00Z"))
        .unwrap();
    let scan = store.scan().unwrap();
    assert_eq!(scan.problems(), Vec::<String>::new());
    assert_eq!(commits(&scan.entries), ["aaa", "bbb"]);
}

#[test]
fn a_damaged_sidecar_is_skipped_with_a_warning_naming_it() {
    let (_dir, store) = store();
    let good = store
        .add(&snapshot("bert"), origin("aaa", "2026-01-01T00:00:00Z"))
        .unwrap();
    let bad = store
        .add(&snapshot("bert"), origin("bbb", "2026-01-02T00:00:00Z"))
        .unwrap();
    let sidecar = bad.file.replace(".snapshot.json.gz", ".meta.json");
    fs::write(store.dir().join(&sidecar), "{\"workload\": ").unwrap();
    let scan = store.scan().unwrap();
    // The index still names the run; only the sidecar is skipped.
    assert_eq!(scan.entries, vec![good, bad]);
    assert_eq!(scan.damaged.len(), 1, "{:?}", scan.damaged);
    assert!(scan.damaged[0].contains(&sidecar), "{}", scan.damaged[0]);
}

#[test]
fn a_damaged_run_snapshot_is_one_runs_error() {
    let (_dir, store) = store();
    let entry = store
        .add(&snapshot("bert"), origin("aaa", "2026-01-01T00:00:00Z"))
        .unwrap();
    let path = store.dir().join(&entry.file);
    let bytes = fs::read(&path).unwrap();
    fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let error = store.load(&entry).unwrap_err();
    assert!(error.is_damaged_run(), "{error}");
    assert!(error.to_string().contains(&entry.file), "{error}");
}

#[cfg(unix)]
#[test]
fn a_symlink_under_runs_is_never_followed_written_or_pruned_through() {
    let (dir, store) = store();
    let outside = dir.path().join("outside");
    fs::create_dir_all(&outside).unwrap();
    let victim = outside.join("20250101T000000Z-aaa-00000000.snapshot.json.gz");
    fs::write(&victim, snapshot("gpt").to_gz_bytes()).unwrap();
    fs::write(
        outside.join("20250101T000000Z-aaa-00000000.meta.json"),
        serde_json::to_string(&EntryMeta {
            file: String::new(),
            ..EntryMeta::of_snapshot(&snapshot("gpt"), origin("aaa", "2025-01-01T00:00:00Z"))
        })
        .unwrap(),
    )
    .unwrap();
    store
        .add(&snapshot("bert"), origin("bbb", "2026-01-01T00:00:00Z"))
        .unwrap();
    std::os::unix::fs::symlink(&outside, store.dir().join("runs/gpt")).unwrap();
    let scan = store.scan().unwrap();
    assert_eq!(commits(&scan.entries), ["bbb"]);
    assert!(
        scan.damaged
            .iter()
            .any(|d| d.starts_with("runs/gpt: a symbolic link")),
        "{:?}",
        scan.damaged
    );
    store.prune(1).unwrap();
    store.repair().unwrap();
    assert!(victim.exists(), "prune deleted a file outside the history");
    let error = store
        .add(&snapshot("gpt"), origin("ccc", "2026-01-02T00:00:00Z"))
        .unwrap_err();
    assert!(error.to_string().contains("refused"), "{error}");
    assert_eq!(fs::read_dir(&outside).unwrap().count(), 2);
}

#[cfg(unix)]
#[test]
fn a_symlinked_index_is_refused_and_never_written_through() {
    let (dir, store) = store();
    store
        .add(&snapshot("bert"), origin("aaa", "2026-01-01T00:00:00Z"))
        .unwrap();
    let elsewhere = dir.path().join("elsewhere.jsonl");
    fs::write(&elsewhere, "precious\n").unwrap();
    fs::remove_file(store.dir().join(INDEX_FILE)).unwrap();
    std::os::unix::fs::symlink(&elsewhere, store.dir().join(INDEX_FILE)).unwrap();
    for error in [
        store.scan().unwrap_err(),
        store
            .add(&snapshot("bert"), origin("bbb", "2026-01-02T00:00:00Z"))
            .unwrap_err(),
        store.prune(1).unwrap_err(),
    ] {
        let error = error.to_string();
        assert!(error.contains("refused: a symbolic link"), "{error}");
        assert_eq!(error.lines().count(), 1);
    }
    assert_eq!(fs::read_to_string(&elsewhere).unwrap(), "precious\n");
}

#[test]
fn stale_temporary_files_are_reported_and_removed_by_the_next_writer() {
    let (_dir, store) = store();
    let entry = store
        .add(&snapshot("bert"), origin("aaa", "2026-01-01T00:00:00Z"))
        .unwrap();
    // What an add killed while writing leaves.
    let folder = store.dir().join("runs/bert");
    fs::write(folder.join(".x.snapshot.json.gz.99-1.tmp"), b"half").unwrap();
    fs::write(store.dir().join(".index.jsonl.99-2.tmp"), b"half").unwrap();
    let scan = store.scan().unwrap();
    assert_eq!(scan.entries, vec![entry]);
    assert_eq!(
        scan.temporaries,
        [
            ".index.jsonl.99-2.tmp",
            "runs/bert/.x.snapshot.json.gz.99-1.tmp"
        ]
    );
    store
        .add(&snapshot("bert"), origin("bbb", "2026-01-02T00:00:00Z"))
        .unwrap();
    assert!(store.scan().unwrap().temporaries.is_empty());
}

#[test]
fn a_lock_left_by_a_killed_writer_is_broken() {
    let (_dir, store) = store();
    fs::create_dir_all(store.dir()).unwrap();
    // A process that is gone: its lock is stale at once.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    let host = fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    fs::write(
        store.dir().join(lock::LOCK_FILE),
        format!("{pid} {}\n", host.trim()),
    )
    .unwrap();
    store
        .add(&snapshot("bert"), origin("aaa", "2026-01-01T00:00:00Z"))
        .unwrap();
    assert!(!store.dir().join(lock::LOCK_FILE).exists());
}

#[test]
fn concurrent_adds_and_prunes_lose_nothing() {
    let (_dir, store) = store();
    store
        .add(&snapshot("bert"), origin("seed", "2026-01-01T00:00:00Z"))
        .unwrap();
    let adds = 4;
    let per_thread = 6;
    std::thread::scope(|scope| {
        for t in 0..adds {
            let store = store.clone();
            scope.spawn(move || {
                for i in 0..per_thread {
                    let time = format!("2026-02-{:02}T00:00:{i:02}Z", t + 1);
                    store
                        .add(&snapshot("bert"), origin(&format!("t{t}i{i}"), &time))
                        .unwrap();
                }
            });
        }
        let store = store.clone();
        scope.spawn(move || {
            for _ in 0..per_thread * 2 {
                store.prune(1000).unwrap();
            }
        });
    });
    let scan = store.scan().unwrap();
    assert_eq!(scan.problems(), Vec::<String>::new());
    assert_eq!(scan.entries.len(), 1 + adds * per_thread);
    assert_eq!(index_lines(&store), 1 + adds * per_thread);
}

/// Each state a writer killed at some point of `add` or `prune` leaves:
/// the history is read without error, the runs written before are all
/// there, and after the next writer and `repair` nothing is left to report.
#[test]
fn a_writer_killed_at_any_point_of_add_or_prune_loses_nothing() {
    type Crash = fn(&Store, &EntryMeta);
    let sidecar = |e: &EntryMeta| e.file.replace(".snapshot.json.gz", ".meta.json");
    let crashes: [(&str, Crash); 6] = [
        ("holding the lock", |s, _| {
            fs::write(s.dir().join(lock::LOCK_FILE), "4194304999 -\n").unwrap();
            filetime_past(&s.dir().join(lock::LOCK_FILE));
        }),
        ("writing the snapshot", |s, e| {
            let folder = s.dir().join(&e.file);
            fs::write(folder.with_file_name(".n.snapshot.json.gz.1-1.tmp"), b"x").unwrap();
        }),
        ("before the sidecar", |s, e| {
            let name = e.file.replace("-", "_");
            fs::copy(s.dir().join(&e.file), s.dir().join(name)).unwrap();
        }),
        ("before the index line", |s, e| {
            let path = s.dir().join(INDEX_FILE);
            let index = fs::read_to_string(&path).unwrap();
            let kept: Vec<&str> = index.lines().filter(|l| !l.contains(&e.file)).collect();
            fs::write(&path, kept.join("\n") + "\n").unwrap();
        }),
        ("half-way through the index line", |s, _| {
            let path = s.dir().join(INDEX_FILE);
            let index = fs::read(&path).unwrap();
            fs::write(&path, &index[..index.len() - 40]).unwrap();
        }),
        ("pruning, after removing a sidecar", |s, e| {
            fs::remove_file(
                s.dir()
                    .join(e.file.replace(".snapshot.json.gz", ".meta.json")),
            )
            .unwrap();
        }),
    ];
    for (point, crash) in crashes {
        let (_dir, store) = store();
        let kept = store
            .add(&snapshot("bert"), origin("aaa", "2026-01-01T00:00:00Z"))
            .unwrap();
        let last = store
            .add(&snapshot("bert"), origin("bbb", "2026-01-02T00:00:00Z"))
            .unwrap();
        crash(&store, &last);
        let scan = store.scan().unwrap();
        assert!(scan.entries.contains(&kept), "{point}: {scan:?}");
        assert!(store.dir().join(sidecar(&kept)).exists(), "{point}");
        let next = store
            .add(&snapshot("bert"), origin("ccc", "2026-01-03T00:00:00Z"))
            .unwrap();
        store.repair().unwrap();
        let scan = store.scan().unwrap();
        assert_eq!(scan.problems(), Vec::<String>::new(), "{point}");
        assert!(scan.entries.contains(&kept), "{point}");
        assert!(scan.entries.contains(&next), "{point}");
        assert_eq!(fs::read_dir(store.dir()).unwrap().count(), 4, "{point}");
    }
}

/// Makes `path` older than any lock may be.
fn filetime_past(path: &Path) {
    let file = fs::File::options().write(true).open(path).unwrap();
    let past = SystemTime::now() - lock::STALE_AFTER - std::time::Duration::from_secs(60);
    file.set_modified(past).unwrap();
}
