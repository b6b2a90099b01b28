//! The fast path reads every event it takes exactly as serde_json does, and
//! takes the common ones.

use std::io::Read;

use proptest::prelude::*;

use super::event;
use crate::trace::raw::RawEvent;
use crate::trace::window::value_extent;

/// serde_json's reading of the event at the start of `bytes`: the event (as
/// its debug text) and its length, or `None` when it fails.
fn by_serde(bytes: &[u8]) -> Option<(String, usize)> {
    let mut stream = serde_json::Deserializer::from_slice(bytes).into_iter::<RawEvent>();
    let raw = stream.next()?.ok()?;
    Some((format!("{raw:?}"), stream.byte_offset()))
}

/// The fast path agrees with serde_json on `bytes`; whether it took them.
fn agrees(bytes: &[u8]) -> Result<bool, TestCaseError> {
    let Some((raw, len)) = event(bytes) else {
        return Ok(false);
    };
    let text = String::from_utf8_lossy(bytes);
    let Some((expected, expected_len)) = by_serde(bytes) else {
        return Err(TestCaseError::fail(format!(
            "the fast path read what serde_json refuses: {text}"
        )));
    };
    prop_assert_eq!(format!("{raw:?}"), expected, "{}", text);
    prop_assert_eq!(len, expected_len, "{}", text);
    Ok(true)
}

/// A value for a top-level key: the usual ones and the odd ones the fast
/// path must leave to serde_json.
fn any_value() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (0i64..5_000_000_000).prop_map(|n| n.to_string()),
        4 => (0.0f64..2e12).prop_map(|v| format!("{v:?}")),
        2 => "[a-zA-Z0-9_:./() ]{0,12}".prop_map(|s| format!("\"{s}\"")),
        1 => any::<f64>().prop_map(|v| format!("{v:e}")),
        1 => any::<i64>().prop_map(|n| n.to_string()),
        1 => any::<u64>().prop_map(|n| n.to_string()),
        1 => prop::sample::select(vec![
            "-0", "-0.0", "0", "01", "1.", "1e", "1e400", "-1e400", "1e-400", "-1e-400", "1E+2",
            "2e-3", "null",
            "true", "\"12.5\"", "\"0x1f\"", "\"a\\\"b\"", "\"\\u0041\"", "\"tab\there\"",
            "\"\u{e9}t\u{e9}\"", "[1, 2, 3]", "{}", "{\"a\": [1, {\"b\": null}]}",
            "18446744073709551616", "-9223372036854775809", "9223372036854775808",
            "NaN", "Infinity", "\"\\ud800\"",
        ])
        .prop_map(str::to_string),
    ]
}

/// An `args` object: as a CPU op, a kernel or a Python frame writes it, or
/// something odd.
fn any_args() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(r#"{"Python id": 3, "Python parent id": null, "Python thread": 0}"#.to_string()),
        Just(
            r#"{"External id": 7, "Input Dims": [[2, 3], []], "Input type": ["float", ""], "Sequence number": 4, "Fwd thread id": 1}"#
                .to_string()
        ),
        Just(
            r#"{"device": 0, "stream": 7, "correlation": 12, "grid": [1, 2, 3], "block": [128, 1, 1], "kernel": "k"}"#
                .to_string()
        ),
        Just("null".to_string()),
        Just("[1, 2]".to_string()),
        Just(r#"{"correlation": "x", "correlation": 2}"#.to_string()),
        any_value(),
    ]
}

const KEYS: &[&str] = &[
    "ph", "cat", "name", "pid", "tid", "ts", "dur", "id", "args", "bp", "s", "p\\u0068",
];

/// An event: keys (some repeated, some unknown) with values, in any order,
/// with any JSON white space (and a form feed, which is not).
fn any_event() -> impl Strategy<Value = String> {
    let entry = (
        prop::sample::select(KEYS),
        any_value(),
        any_args(),
        prop::sample::select(vec!["", " ", "\n  ", "\t", "\r\n", "\u{c}"]),
    );
    (prop::collection::vec(entry, 0..12), any::<bool>()).prop_map(|(entries, trailing)| {
        let mut text = String::from("{");
        for (i, (key, value, args, space)) in entries.iter().enumerate() {
            if i > 0 {
                text.push(',');
            }
            let value = if *key == "args" { args } else { value };
            text.push_str(&format!("{space}\"{key}\"{space}:{space}{value}{space}"));
        }
        if trailing {
            text.push(',');
        }
        text.push('}');
        text
    })
}

/// An event as the profiler writes it, its values in their usual types.
fn usual_event() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec!["python_function", "cpu_op", "kernel", "cuda_runtime"]),
        "[a-zA-Z0-9_:./() ]{1,40}",
        0u32..100_000,
        1.0e12f64..2.0e12,
        0.0f64..1.0e6,
        any_args(),
    )
        .prop_map(|(cat, name, tid, ts, dur, args)| {
            format!(
                "{{\n    \"ph\": \"X\", \"cat\": \"{cat}\", \"name\": \"{name}\", \"pid\": 4242, \"tid\": {tid},\n    \"ts\": {ts:.3}, \"dur\": {dur:.3},\n    \"args\": {args}\n  }}"
            )
        })
}

proptest! {
    #[test]
    fn the_fast_path_reads_what_it_takes_as_serde_json_does(
        text in any_event(),
        cut in any::<prop::sample::Index>(),
    ) {
        let bytes = text.as_bytes();
        agrees(bytes)?;
        // Cut by the window's end anywhere, followed by more of the array.
        agrees(&bytes[..cut.index(bytes.len() + 1)])?;
        agrees(format!("{text}, {{}}]").as_bytes())?;
    }

    #[test]
    fn the_fast_path_takes_the_events_the_profiler_writes(text in usual_event()) {
        let odd_args = !text.contains("\"args\": {") || text.contains("\"correlation\": \"x\"");
        let took = agrees(format!("{text},\n  {{").as_bytes())?;
        prop_assert!(took || odd_args, "{}", text);
    }
}

/// Each event of the `traceEvents` array in `json`, as its bytes.
fn events_of(json: &[u8]) -> Vec<&[u8]> {
    let key = b"\"traceEvents\"";
    let start = json
        .windows(key.len())
        .position(|w| w == key)
        .expect("a traceEvents key");
    let mut at = start + key.len();
    let skip = |at: &mut usize, bytes: &[u8]| {
        while bytes[*at].is_ascii_whitespace() || matches!(bytes[*at], b':' | b'[' | b',') {
            *at += 1;
        }
    };
    let mut events = Vec::new();
    loop {
        skip(&mut at, json);
        if json[at] != b'{' {
            return events;
        }
        let len = value_extent(&json[at..], true).expect("a whole event");
        events.push(&json[at..at + len]);
        at += len;
    }
}

#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn every_corpus_event_reads_the_same_on_both_paths() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    let mut pending = vec![root];
    let (mut traces, mut events, mut taken) = (0, 0, 0);
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).expect("readable corpus").flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
                continue;
            }
            if !path.to_string_lossy().ends_with(".json.gz") {
                continue;
            }
            let mut json = Vec::new();
            flate2::read::MultiGzDecoder::new(std::fs::File::open(&path).expect("a trace"))
                .read_to_end(&mut json)
                .expect("gzip");
            for bytes in events_of(&json) {
                let took = agrees(bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                events += 1;
                taken += usize::from(took);
            }
            traces += 1;
        }
    }
    assert!(traces >= 20, "found {traces} traces");
    // The fast path is for the common event: nearly all of them.
    assert!(
        taken * 100 >= events * 95,
        "the fast path took {taken} of {events} events"
    );
}
