//! The loader's fuzz target, as proptest properties: arbitrary bytes
//! (plain and gzip) and mutated small traces never panic; they load or give
//! a `LoadError`, the same one whatever the window; what loads has finite,
//! sound times. PROPTEST_CASES sets the number of cases (default 256, a few
//! seconds); docs/RELIABILITY.md says how to run it long.

use proptest::prelude::*;

use super::tests::{gzip, load_window, summary};
use super::*;
use crate::trace::{MAX_ABS_TS_US, MAX_DURATION_US};

/// Loads `bytes` with a window of `window` bytes and with the usual one;
/// both must agree, and a loaded trace must be sound. Broken gzip may be
/// noticed before or after broken JSON in it, depending on the window, so
/// for gzip only success must agree.
fn check(bytes: &[u8], window: usize) -> Result<(), TestCaseError> {
    let trace = load_window(bytes, WINDOW);
    if let Ok(trace) = &trace {
        for event in &trace.events {
            prop_assert!(event.ts.is_finite() && event.ts.abs() <= MAX_ABS_TS_US);
            prop_assert!(event.dur.is_finite() && (0.0..=MAX_DURATION_US).contains(&event.dur));
        }
        for flow in &trace.flows {
            prop_assert!(flow.ts.is_finite() && flow.ts.abs() <= MAX_ABS_TS_US);
        }
        prop_assert_eq!(trace.counts.timed, trace.events.len() as u64);
        prop_assert_eq!(trace.counts.flows, trace.flows.len() as u64);
    }
    let (small, large) = (summary(load_window(bytes, window)), summary(trace));
    if bytes.starts_with(&GZIP_MAGIC) && small.is_err() && large.is_err() {
        return Ok(());
    }
    prop_assert_eq!(small, large);
    Ok(())
}

/// One event of a small generated trace, with values of every kind.
fn any_event() -> impl Strategy<Value = String> {
    let ph = prop::sample::select(vec!["X", "X", "X", "s", "f", "M", "i"]);
    let cat = prop::sample::select(vec![
        "cpu_op",
        "kernel",
        "cuda_runtime",
        "ac2g",
        "gpu_memcpy",
        "user_annotation",
    ]);
    let number = prop_oneof![
        (0u32..1_000_000).prop_map(|n| n.to_string()),
        any::<f64>().prop_map(|v| if v.is_finite() {
            format!("{v:?}")
        } else {
            "NaN".into()
        }),
        prop::sample::select(vec![
            "-1", "1e400", "\"12.5\"", "\"inf\"", "Infinity", "null"
        ])
        .prop_map(str::to_string),
    ];
    (ph, cat, number.clone(), number.clone(), number, "[a-z:_]{0,8}").prop_map(
        |(ph, cat, ts, dur, id, name)| {
            format!(
                r#"{{"ph": "{ph}", "cat": "{cat}", "name": "{name}", "pid": 1, "tid": "{name}", "ts": {ts}, "dur": {dur}, "id": {id}, "args": {{"correlation": {id}, "Input Dims": [[{id}, 2]], "grid": [1, 2, 3], "name": "{name}"}}}}"#
            )
        },
    )
}

/// Bytes that break JSON in the ways fuzzing found most productive.
const INSERTS: &[&str] = &[
    "NaN",
    "-Infinity",
    "1e400",
    "-",
    "1.",
    "1e",
    "\"",
    "\\",
    "\\u12",
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\n",
    "\u{0}",
    "\"traceEvents\": [",
    "\u{e9}",
    "tru",
    "nul",
    "00",
];

/// One edit of a trace's bytes.
#[derive(Debug, Clone)]
enum Mutation {
    Insert(prop::sample::Index, &'static str),
    Delete(prop::sample::Index, usize),
    Flip(prop::sample::Index, u8),
    Duplicate(prop::sample::Index, usize),
    Truncate(prop::sample::Index),
}

fn any_mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<prop::sample::Index>(), prop::sample::select(INSERTS))
            .prop_map(|(at, text)| Mutation::Insert(at, text)),
        (any::<prop::sample::Index>(), 1usize..20).prop_map(|(at, n)| Mutation::Delete(at, n)),
        (any::<prop::sample::Index>(), any::<u8>()).prop_map(|(at, b)| Mutation::Flip(at, b)),
        (any::<prop::sample::Index>(), 1usize..200).prop_map(|(at, n)| Mutation::Duplicate(at, n)),
        any::<prop::sample::Index>().prop_map(Mutation::Truncate),
    ]
}

fn mutate(mut bytes: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for mutation in mutations {
        if bytes.is_empty() {
            break;
        }
        match mutation {
            Mutation::Insert(at, text) => {
                let at = at.index(bytes.len() + 1);
                bytes.splice(at..at, text.bytes());
            }
            Mutation::Delete(at, n) => {
                let at = at.index(bytes.len());
                bytes.drain(at..(at + n).min(bytes.len()));
            }
            Mutation::Flip(at, byte) => {
                let at = at.index(bytes.len());
                bytes[at] = *byte;
            }
            Mutation::Duplicate(at, n) => {
                let at = at.index(bytes.len());
                let copy = bytes[at..(at + n).min(bytes.len())].to_vec();
                bytes.splice(at..at, copy);
            }
            Mutation::Truncate(at) => bytes.truncate(at.index(bytes.len())),
        }
    }
    bytes
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2048), window in 1usize..300) {
        check(&bytes, window)?;
    }

    #[test]
    fn arbitrary_gzip_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..2048), cut in any::<prop::sample::Index>()) {
        let mut compressed = gzip(&bytes);
        compressed.truncate(cut.index(compressed.len() + 1).max(2));
        check(&compressed, 64)?;
    }

    #[test]
    fn mutated_traces_never_panic(
        events in prop::collection::vec(any_event(), 0..12),
        mutations in prop::collection::vec(any_mutation(), 0..5),
        window in 1usize..400,
        compress in any::<bool>(),
    ) {
        let text = format!(r#"{{"schemaVersion": 1, "traceEvents": [{}], "meta": {{"a": [1.5, -2]}}}}"#, events.join(",\n"));
        let mutated = mutate(text.into_bytes(), &mutations);
        check(&mutated, window)?;
        if compress {
            check(&gzip(&mutated), window)?;
        }
    }
}
