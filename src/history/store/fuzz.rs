//! Fuzzing the history store (proptest): a history of three runs damaged at
//! random — bytes of the index, a sidecar or a run snapshot changed, cut,
//! duplicated or the file removed; stale temporary files; symbolic links
//! under `runs/` and in place of the index, pointing outside — then
//! scanned, loaded, added to, pruned and repaired. Whatever the damage: no
//! panic; every error one printable line; a run that cannot be loaded is
//! one run's error; nothing outside the folder is written or removed; and
//! after a repair the history reports no torn index, temporary, missing or
//! orphan file, and an add loses none of the runs before it.
//!
//! CI runs a few cases; a long campaign is `scripts/fuzz history`
//! (docs/RELIABILITY.md).

use std::fs;
use std::path::{Path, PathBuf};

use proptest::prelude::*;

use super::tests::{origin, snapshot};
use super::*;
use crate::gate::snapshot::tests::fuzz_config;

/// One piece of damage.
#[derive(Clone, Debug)]
enum Damage {
    /// Overwrite `length` bytes of the `file`th file at a fraction of it.
    Scribble {
        file: usize,
        at: f64,
        bytes: Vec<u8>,
    },
    /// Cut the `file`th file to a fraction of its length (a short write).
    Truncate { file: usize, at: f64 },
    /// Append the file's first `length` bytes to it (a duplicated line).
    Duplicate { file: usize, length: usize },
    /// Remove the `file`th file.
    Remove { file: usize },
    /// A temporary file a killed writer left, under `runs/` or beside the index.
    Temporary { in_runs: bool },
    /// A workload folder under `runs/` that is a symbolic link outside.
    LinkedWorkload,
    /// The index replaced by a symbolic link to a file outside.
    LinkedIndex,
}

fn damage() -> impl Strategy<Value = Damage> {
    let file = any::<usize>();
    let at = 0.0..=1.0f64;
    prop_oneof![
        4 => (file, at.clone(), proptest::collection::vec(any::<u8>(), 1..64))
            .prop_map(|(file, at, bytes)| Damage::Scribble { file, at, bytes }),
        3 => (file, at).prop_map(|(file, at)| Damage::Truncate { file, at }),
        2 => (file, 1..400usize).prop_map(|(file, length)| Damage::Duplicate { file, length }),
        2 => file.prop_map(|file| Damage::Remove { file }),
        1 => any::<bool>().prop_map(|in_runs| Damage::Temporary { in_runs }),
        1 => Just(Damage::LinkedWorkload),
        1 => Just(Damage::LinkedIndex),
    ]
}

/// Every regular file under `dir` (links not followed), sorted.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        let Ok(entries) = fs::read_dir(&current) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                stack.push(entry.path());
            } else if kind.is_file() {
                found.push(entry.path());
            }
        }
    }
    found.sort();
    found
}

fn apply(history: &Path, outside: &Path, damage: &Damage) {
    let files = files_under(history);
    let pick = |file: usize| files.get(file % files.len().max(1)).cloned();
    match damage {
        Damage::Scribble { file, at, bytes } => {
            if let Some(path) = pick(*file) {
                let mut data = fs::read(&path).unwrap_or_default();
                let start = ((data.len() as f64) * at) as usize;
                let end = (start + bytes.len()).min(data.len());
                data.splice(start.min(data.len())..end, bytes.iter().copied());
                let _ = fs::write(&path, data);
            }
        }
        Damage::Truncate { file, at } => {
            if let Some(path) = pick(*file) {
                let data = fs::read(&path).unwrap_or_default();
                let _ = fs::write(&path, &data[..((data.len() as f64) * at) as usize]);
            }
        }
        Damage::Duplicate { file, length } => {
            if let Some(path) = pick(*file) {
                let mut data = fs::read(&path).unwrap_or_default();
                let copy = data[..(*length).min(data.len())].to_vec();
                data.extend(copy);
                let _ = fs::write(&path, data);
            }
        }
        Damage::Remove { file } => {
            if let Some(path) = pick(*file) {
                let _ = fs::remove_file(path);
            }
        }
        Damage::Temporary { in_runs } => {
            let dir = if *in_runs {
                history.join("runs/bert")
            } else {
                history.to_path_buf()
            };
            let _ = fs::write(dir.join(".x.snapshot.json.gz.77-1.tmp"), b"half");
        }
        Damage::LinkedWorkload => {
            let _ = std::os::unix::fs::symlink(outside, history.join("runs/linked"));
        }
        Damage::LinkedIndex => {
            let index = history.join(INDEX_FILE);
            let _ = fs::remove_file(&index);
            let _ = std::os::unix::fs::symlink(outside.join("precious.jsonl"), index);
        }
    }
}

/// An error as a user reads it: one line, not empty.
fn assert_one_line(error: &StoreError) {
    let text = error.to_string();
    assert!(!text.is_empty() && !text.contains('\n'), "{text:?}");
}

/// What lies outside the history: every file's path and bytes.
fn contents(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    files_under(dir)
        .into_iter()
        .map(|path| {
            let bytes = fs::read(&path).expect("readable");
            (path, bytes)
        })
        .collect()
}

proptest! {
    #![proptest_config(fuzz_config(32))]

    #[test]
    fn a_damaged_history_is_read_repaired_and_never_left(
        damages in proptest::collection::vec(damage(), 1..6)
    ) {
        let dir = tempfile::TempDir::new().expect("temp dir");
        let (history, outside) = (dir.path().join("history"), dir.path().join("outside"));
        fs::create_dir_all(&outside).expect("outside");
        fs::write(outside.join("precious.jsonl"), b"precious\n").expect("canary");
        fs::write(outside.join("x.snapshot.json.gz"), snapshot("gpt").to_gz_bytes()).expect("canary");
        let store = Store::open(&history).expect("opens");
        for (workload, commit, time) in [
            ("bert", "aaa1", "2026-01-01T00:00:00Z"),
            ("bert", "bbb2", "2026-01-02T00:00:00Z"),
            ("gpt", "ccc3", "2026-01-03T00:00:00Z"),
        ] {
            store.add(&snapshot(workload), origin(commit, time)).expect("adds");
        }
        for damage in &damages {
            apply(&history, &outside, damage);
        }
        let before = contents(&outside);

        match store.scan() {
            Ok(scan) => {
                for entry in &scan.entries {
                    if let Err(error) = store.load(entry) {
                        assert_one_line(&error);
                        prop_assert!(error.is_damaged_run(), "{error}");
                    }
                }
                prop_assert!(scan.problems().iter().all(|p| !p.contains('\n')));
            }
            Err(error) => assert_one_line(&error),
        }
        if let Err(error) = store.prune(2) {
            assert_one_line(&error);
        }
        match store.repair() {
            Ok(_) => {
                let scan = store.scan().expect("a repaired history scans");
                prop_assert!(!scan.index_damaged, "{scan:?}");
                prop_assert!(scan.temporaries.is_empty(), "{scan:?}");
                prop_assert!(scan.missing.is_empty(), "{scan:?}");
                prop_assert!(scan.orphans.is_empty(), "{scan:?}");
                let commits = |entries: &[EntryMeta]| -> Vec<String> {
                    entries.iter().map(|e| e.commit.clone()).collect()
                };
                let had = commits(&scan.entries);
                match store.add(&snapshot("bert"), origin("ddd4", "2026-01-04T00:00:00Z")) {
                    Ok(_) => {
                        let now = commits(&store.entries().expect("reads after an add"));
                        prop_assert!(had.iter().all(|c| now.contains(c)), "{had:?} → {now:?}");
                        prop_assert!(now.contains(&"ddd4".to_string()), "{now:?}");
                    }
                    Err(error) => assert_one_line(&error),
                }
            }
            Err(error) => assert_one_line(&error),
        }
        prop_assert_eq!(contents(&outside), before, "a file outside the history changed");
    }
}
