use super::*;
use crate::gate::snapshot::tests::tiny_snapshot;

fn origin(commit: &str, time: &str) -> Origin {
    Origin {
        commit: commit.to_string(),
        branch: Some("main".to_string()),
        time: time.to_string(),
        pr: None,
        run_url: None,
    }
}

fn snapshot(workload: &str) -> Snapshot {
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
fn a_bad_index_line_names_the_file_and_line() {
    let (_dir, store) = store();
    store
        .add(&snapshot("bert"), origin("aaa", "2026-01-01T00:00:00Z"))
        .unwrap();
    let path = store.dir().join(INDEX_FILE);
    let mut index = fs::read_to_string(&path).unwrap();
    index.push_str("{\"workload\": 3}\n");
    fs::write(&path, &index).unwrap();
    let error = store.entries().unwrap_err().to_string();
    assert!(
        error.starts_with(&format!("{}:2: not a history entry", path.display())),
        "{error}"
    );
    assert_eq!(error.lines().count(), 1);
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
    let error = store.entries().unwrap_err().to_string();
    assert!(
        error.contains(":1: file `../../etc/passwd` is not a relative path"),
        "{error}"
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
    assert!(store.entries().is_err());
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
