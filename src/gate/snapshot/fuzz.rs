//! Fuzzing the snapshot reader (proptest): arbitrary bytes (plain and
//! gzip-wrapped), and a real snapshot (made from `examples/baseline.json.gz`)
//! with hostile values put at random places in its JSON, rows and samples
//! repeated, and bytes of its gzip stream changed. Whatever the input, the
//! reader gives a snapshot within the bounds or a typed error, never a
//! panic, within a time bound; an error is one printable line naming the
//! file; a snapshot it accepts is written and read back unchanged.
//!
//! CI runs a few cases; a long campaign is
//! `PROPTEST_CASES=100000 cargo test --release --lib gate::snapshot::fuzz`
//! (docs/RELIABILITY.md).

use std::io::Write;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use serde_json::Value;

use super::tests::{example_snapshot, fuzz_config};
use super::*;

/// The longest one read (and round trip) of `bytes` may take: a watchdog
/// (a hang fails it, a busy machine running a debug build does not), a
/// constant plus a rate of 2 MB a second.
fn bound(bytes: &[u8]) -> Duration {
    Duration::from_secs(60) + Duration::from_micros(bytes.len() as u64 / 2)
}

/// The snapshot of the examples' baseline trace, and its JSON.
fn original() -> &'static (Snapshot, Value) {
    static ORIGINAL: OnceLock<(Snapshot, Value)> = OnceLock::new();
    ORIGINAL.get_or_init(|| {
        let snapshot = example_snapshot();
        let json = serde_json::to_value(&snapshot).expect("a snapshot serialises");
        (snapshot, json)
    })
}

/// Hostile values: wrong signs, absurd sizes, wrong types, text that
/// looks like a number, control characters, long and deep structures.
fn hostile() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::from(-1.0)),
        Just(Value::from(-0.0)),
        Just(Value::from(1e300)),
        Just(Value::from(f64::MAX)),
        Just(Value::from(5e-324)),
        Just(Value::from(u64::MAX)),
        Just(Value::from(i64::MIN)),
        Just(Value::from(0)),
        Just(Value::from("NaN")),
        Just(Value::from("Infinity")),
        Just(Value::from("x\n::error title=injected::boom\u{1b}[2J")),
        Just(Value::Null),
        Just(Value::Bool(true)),
        Just(Value::Array(Vec::new())),
        Just(Value::Object(serde_json::Map::new())),
        (1..200_000usize).prop_map(|n| Value::from(vec![1.0; n])),
        (1..50_000usize).prop_map(|n| Value::from(vec![Value::from("k"); n])),
        (1..2_000_000usize).prop_map(|n| Value::from("x".repeat(n))),
        (1..300usize).prop_map(|depth| {
            (0..depth).fold(Value::from(1.0), |inner, _| Value::Array(vec![inner]))
        }),
    ]
}

/// One change to the snapshot's JSON: a path of fractions (each picks a
/// child), and what to do there.
#[derive(Clone, Debug)]
enum Edit {
    /// Replace the value there.
    Replace(Vec<f64>, Value),
    /// Remove it from its object or array.
    Remove(Vec<f64>),
    /// Repeat an array's entries (op rows, samples) `times` over.
    Repeat(Vec<f64>, usize),
}

fn path() -> impl Strategy<Value = Vec<f64>> {
    proptest::collection::vec(0.0..1.0f64, 0..6)
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        6 => (path(), hostile()).prop_map(|(path, value)| Edit::Replace(path, value)),
        1 => path().prop_map(Edit::Remove),
        1 => (path(), 2..3000usize).prop_map(|(path, times)| Edit::Repeat(path, times)),
    ]
}

/// The child a fraction picks, if the value has children.
fn child(value: &mut Value, fraction: f64) -> Option<&mut Value> {
    match value {
        Value::Object(map) if !map.is_empty() => {
            let index = (((map.len() as f64) * fraction) as usize).min(map.len() - 1);
            map.values_mut().nth(index)
        }
        Value::Array(items) if !items.is_empty() => {
            let index = ((items.len() as f64) * fraction) as usize;
            let last = items.len() - 1;
            items.get_mut(index.min(last))
        }
        _ => None,
    }
}

fn apply(json: &mut Value, edit: &Edit) {
    let (path, last) = match edit {
        Edit::Replace(path, _) | Edit::Remove(path) | Edit::Repeat(path, _) => {
            match path.split_last() {
                Some((last, path)) => (path, *last),
                None => (&[][..], 0.0),
            }
        }
    };
    let mut parent = json;
    for &fraction in path {
        // Stop early where the JSON is shallower than the path.
        if child(parent, fraction).is_none() {
            break;
        }
        parent = child(parent, fraction).expect("checked above");
    }
    match edit {
        Edit::Replace(_, value) => match child(parent, last) {
            Some(target) => *target = value.clone(),
            None => *parent = value.clone(),
        },
        Edit::Remove(_) => match parent {
            Value::Object(map) if !map.is_empty() => {
                let index = ((map.len() as f64) * last) as usize;
                let key = map.keys().nth(index.min(map.len() - 1)).cloned();
                if let Some(key) = key {
                    map.remove(&key);
                }
            }
            Value::Array(items) if !items.is_empty() => {
                let index = ((items.len() as f64) * last) as usize;
                items.remove(index.min(items.len() - 1));
            }
            _ => {}
        },
        Edit::Repeat(_, times) => {
            let target = match child(parent, last) {
                Some(Value::Array(_)) => child(parent, last).expect("an array"),
                _ => parent,
            };
            if let Value::Array(items) = target {
                let copy = items.clone();
                for _ in 1..*times {
                    items.extend(copy.iter().cloned());
                    if items.len() > 200_000 {
                        break;
                    }
                }
            }
        }
    }
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(bytes).expect("memory");
    encoder.finish().expect("memory")
}

/// The properties every input must keep.
fn reads_or_fails_cleanly(bytes: &[u8]) -> Result<(), TestCaseError> {
    let started = Instant::now();
    let result = Snapshot::from_reader("fuzz.snapshot.json.gz", bytes);
    match result {
        Ok(snapshot) => {
            prop_assert_eq!(snapshot.check_bounds(), Ok(()));
            let again = Snapshot::from_reader("again", &snapshot.to_gz_bytes()[..]).ok();
            prop_assert_eq!(again, Some(snapshot));
        }
        Err(error) => {
            let message = error.to_string();
            prop_assert!(message.starts_with("fuzz.snapshot.json.gz: "), "{message}");
            prop_assert!(!message.chars().any(char::is_control), "{message:?}");
            prop_assert!(message.chars().count() <= 3200, "{} chars", message.len());
        }
    }
    let took = started.elapsed();
    prop_assert!(
        took < bound(bytes),
        "took {took:?} for {} bytes",
        bytes.len()
    );
    Ok(())
}

#[test]
fn the_original_reads_back() {
    let (snapshot, _) = original();
    let read = Snapshot::from_reader("original", &snapshot.to_gz_bytes()[..]).expect("reads back");
    assert_eq!(&read, snapshot);
}

proptest! {
    #![proptest_config(fuzz_config(32))]

    #[test]
    fn snapshot_reader_survives_arbitrary_bytes(
        bytes in proptest::collection::vec(any::<u8>(), 0..4096),
        wrapped in any::<bool>(),
    ) {
        let bytes = if wrapped { gzip(&bytes) } else { bytes };
        reads_or_fails_cleanly(&bytes)?;
    }

    #[test]
    fn snapshot_reader_survives_mutated_snapshots(
        edits in proptest::collection::vec(edit(), 1..5),
        wrapped in any::<bool>(),
    ) {
        let mut json = original().1.clone();
        for edit in &edits {
            apply(&mut json, edit);
        }
        let text = serde_json::to_vec(&json).expect("JSON");
        let bytes = if wrapped { gzip(&text) } else { text };
        reads_or_fails_cleanly(&bytes)?;
    }

    #[test]
    fn snapshot_reader_survives_damaged_gzip(
        flips in proptest::collection::vec((0.0..1.0f64, any::<u8>()), 1..8),
    ) {
        let mut bytes = original().0.to_gz_bytes();
        for (at, byte) in flips {
            let index = ((bytes.len() as f64) * at) as usize;
            let last = bytes.len() - 1;
            bytes[index.min(last)] = byte;
        }
        reads_or_fails_cleanly(&bytes)?;
    }
}
