//! Loader tests: parsing, window boundaries, anomalies, limits.

use std::io::Write;

use proptest::prelude::*;

use super::*;
use crate::trace::{Kind, LoadCounts, Sym, TrackId};

fn load(text: &str) -> Result<Trace, LoadError> {
    load_reader("t.json", text.as_bytes(), &mut || {})
}

/// Loads `text` with the window starting at `window` bytes.
pub(super) fn load_window(text: &[u8], window: usize) -> Result<Trace, LoadError> {
    load_windowed("t.json", text, &LoadLimits::default(), window, &mut |_| {})
}

fn load_limited(bytes: &[u8], limits: &LoadLimits) -> Result<Trace, LoadError> {
    load_windowed("t.json", bytes, limits, WINDOW, &mut |_| {})
}

/// Everything a load produced, comparable: two loads of the same text must
/// give equal summaries (or the same error) whatever the window.
pub(super) fn summary(result: Result<Trace, LoadError>) -> Result<String, String> {
    let trace = result.map_err(|e| e.to_string())?;
    let strings: Vec<&str> = (0..trace.strings.len())
        .map(|i| trace.strings.get(Sym(i as u32)))
        .collect();
    let mut names: Vec<String> = trace
        .track_names
        .thread
        .iter()
        .map(|(track, sym)| format!("{track:?}={}", trace.strings.get(*sym)))
        .collect();
    names.sort();
    Ok(format!(
        "{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{strings:?}\n{names:?}\n{:?}\n{}",
        trace.counts,
        trace.events,
        trace.flows,
        trace.tracks,
        trace.op_args,
        trace.gpu_args,
        trace.metadata.fields,
        trace.json_bytes
    ))
}

/// gzip of `bytes` as one member.
pub(super) fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(bytes).expect("gzip");
    encoder.finish().expect("gzip")
}

#[test]
fn loads_events_metadata_and_names() {
    let trace = load(
        r#"{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85018279936, "numSms": 132}],
        "traceEvents": [
          {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": "1", "ts": 10.5, "dur": 5, "args": {"External id": 3, "Input Dims": [[2, 3], [3, 4]], "Input type": ["float", "float"]}},
          {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": "stream 7", "ts": 20, "dur": 2.25, "args": {"correlation": 9, "stream": 7, "device": 0, "grid": [1, 2, 3], "block": [128, 1, 1]}},
          {"ph": "s", "cat": "ac2g", "id": 9, "pid": 1, "tid": 1, "ts": 11},
          {"name": "thread_name", "ph": "M", "pid": 1, "tid": 1, "args": {"name": "main"}},
          {"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 12}
        ], "traceName": "x"}"#,
    )
    .expect("loads");
    assert_eq!(trace.events.len(), 2);
    assert_eq!(trace.counts.events, 5);
    assert_eq!(trace.counts.skipped, 1);
    assert_eq!(trace.flows.len(), 1);
    assert_eq!(trace.metadata.devices[0].name, "NVIDIA H100 80GB HBM3");
    assert_eq!(
        trace.metadata.get("traceName").and_then(|v| v.as_str()),
        Some("x")
    );
    let op = &trace.events[0];
    assert_eq!(trace.name(op), "aten::mm");
    let args = trace.op_args(op).expect("op args");
    assert_eq!(
        trace.strings.get(args.input_dims.expect("dims")),
        "[[2, 3], [3, 4]]"
    );
    // "1" and 1 are the same thread.
    assert_eq!(trace.tracks[op.track as usize].tid, TrackId::Num(1));
    assert_eq!(trace.flows[0].track, op.track);
    let kernel = &trace.events[1];
    assert_eq!(kernel.correlation(), Some(9));
    let gpu = trace.gpu_args(kernel).expect("gpu args");
    assert_eq!((gpu.stream, gpu.grid), (Some(7), Some([1, 2, 3])));
    assert_eq!(kernel.end(), 22.25);
    assert_eq!(trace.track_names.thread.len(), 1);
}

#[test]
fn bare_array_and_big_ids() {
    let trace = load(
        r#"[{"ph": "X", "cat": "cpu_op", "name": "c", "pid": 0, "tid": 1, "ts": 200, "dur": 100,
             "args": {"Comms Id": 10159970886766084423, "correlation": 18446744073709551616}}]"#,
    )
    .expect("loads");
    assert_eq!(trace.events.len(), 1);
    assert!(trace.events[0].correlation().is_some());
}

#[test]
fn errors_name_file_and_place() {
    let error = load(r#"{"traceEvents": [{"ph": "X", "ts": "nope"}]}"#)
        .unwrap_err()
        .to_string();
    assert!(error.starts_with("t.json: event 0 (byte "), "{error}");
    let error = load(r#"{"other": 1}"#).unwrap_err().to_string();
    assert!(error.contains("no `traceEvents`"), "{error}");
    let error = load(r#"{"traceEvents": [{"ph": "X"}, "#)
        .unwrap_err()
        .to_string();
    assert!(error.contains("truncated"), "{error}");
    let error = load("hello").unwrap_err().to_string();
    assert!(error.starts_with("t.json: byte 0: "), "{error}");
    let error = load("").unwrap_err().to_string();
    assert!(error.contains("empty file"), "{error}");
    // In a pretty-printed event the offset still points at the problem.
    let text = "{\"traceEvents\": [{\n  \"ph\": \"X\",\n  \"ts\": \"nope\"\n}]}";
    let error = load(text).unwrap_err().to_string();
    let at = text.find("\"nope\"").expect("in the text");
    assert!(
        (at..at + 8).any(|byte| error.contains(&format!("(byte {byte})"))),
        "{error}"
    );
}

#[test]
fn events_larger_than_a_chunk_load() {
    let long_name = "k".repeat(3 * WINDOW);
    let text = format!(
        r#"{{"traceEvents": [{{"ph": "X", "cat": "kernel", "name": "{long_name}", "pid": 0, "tid": 7, "ts": 1, "dur": 1}}]}}"#
    );
    let trace = load(&text).expect("loads");
    assert_eq!(trace.name(&trace.events[0]).len(), 3 * WINDOW);
}

// ------------------------------------------------------- window boundaries

/// Every kind of token, in every place the loader reads one.
const ALL_TOKENS: &str = r#"{"schemaVersion": 1, "meta": {"f": -8, "g": 1.5, "h": 1e3, "i": -2.5E-3, "t": true, "n": null, "s": "a\"b\\c\u00e9\n\ud83d\ude00"}, "big": 12345678901234567890123, "py": NaN,
"traceEvents": [
 {"ph": "X", "cat": "kernel", "name": "k\u0041\"x", "pid": -8, "tid": 1.5, "ts": 1e3, "dur": 2.5E+1, "args": {"correlation": 7, "x": [true, false, null, -0.0, 12345678901234567890], "grid": [1, 2, 3], "block": [4,5,6], "stream": "7", "bytes": 1e2, "device": -1}},
 {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 100.25, "dur": 0.5, "args": {"Input Dims": [[2, 3], [3, 4]], "Input type": ["float", "c10::Half"], "External id": 3, "Sequence number": -1, "Fwd thread id": 0, "est. %": -0.75e-2}},
 {"ph": "s", "cat": "ac2g", "id": 7, "pid": 1, "tid": 1, "ts": 100.25},
 {"ph": "X", "name": "nan", "ts": NaN, "dur": 1},
 {"ph": "X", "name": "inf", "ts": 1, "dur": Infinity, "other": -Infinity},
 {"ph": "X", "name": "big", "ts": 1, "dur": 1e400},
 {"ph": "X", "name": "strings", "ts": "12.5", "dur": "NaN"},
 {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "main\tthread"}},
 {"ph": "i", "s": "t", "ts": 5}
], "traceName": "x"}"#;

#[test]
fn every_window_size_loads_the_same_trace() {
    let expected = summary(load_window(ALL_TOKENS.as_bytes(), WINDOW));
    assert!(expected.is_ok(), "{expected:?}");
    for window in 1..ALL_TOKENS.len() + 2 {
        let got = summary(load_window(ALL_TOKENS.as_bytes(), window));
        assert_eq!(got, expected, "window of {window} bytes");
    }
}

#[test]
fn split_number_at_the_window_boundary_loads() {
    // The fuzz finding: `-8`, `1.5`, `1e3` cut by the window's end were
    // "invalid number" when their field was skipped rather than read.
    for token in ["-8", "1.5", "1e3", "-2.5E-3", "true", "null", r#""\u00e9""#] {
        let field = format!(r#""skipped": {token}"#);
        for split in 1..field.len() {
            let text = placed(r#"{"traceEvents": [{"ph": "X", "#, &field, split, 64);
            let small = summary(load_window(text.as_bytes(), 64));
            assert!(small.is_ok(), "{token} split at {split}: {small:?}");
            assert_eq!(small, summary(load_window(text.as_bytes(), WINDOW)));
        }
    }
}

/// `head`, padding, then `token` placed so that the window's first end
/// (at `window`) falls `split` bytes into it, then the rest of a trace.
fn placed(head: &str, token: &str, split: usize, window: usize) -> String {
    let start = window - split;
    let padding = start
        .checked_sub(head.len() + r#""pad": "", "#.len())
        .expect("head short enough");
    let text = format!(
        r#"{head}"pad": "{}", {token}, "ts": 1, "dur": 2, "name": "n", "cat": "kernel"}}, {{"ph": "X", "ts": 3, "dur": 4}}]}}"#,
        "p".repeat(padding)
    );
    assert_eq!(&text[start..start + token.len()], token);
    text
}

/// A token of each kind the loader must read across a window end.
fn any_token() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        any::<u64>().prop_map(|n| n.to_string()),
        any::<f64>()
            .prop_filter("finite", |v| v.is_finite())
            .prop_map(|v| format!("{v:?}")),
        any::<f64>()
            .prop_filter("finite", |v| v.is_finite())
            .prop_map(|v| format!("{v:e}")),
        prop::sample::select(vec![
            "-8",
            "1.5",
            "1e3",
            "-0.0",
            "1E+2",
            "2.5e-7",
            "0",
            "true",
            "false",
            "null",
            "NaN",
            "Infinity",
            "-Infinity",
            "1e400",
            "-1e400",
            "123456789012345678901234567890",
        ])
        .prop_map(str::to_string),
        "[a-z\"\\\\/\\u{e9}\\u{1F600}\\n\\t]{0,12}"
            .prop_map(|s| { serde_json::to_string(&s).expect("a string serialises") }),
        prop::sample::select(vec![
            r#""\u00e9\ud83d\ude00""#,
            r#""\"\\\/\b\f\n\r\t""#,
            r#""\u0041""#,
        ])
        .prop_map(str::to_string),
    ]
}

proptest! {
    /// Each token kind, in each place a value is read (a time, a skipped
    /// field, a shape argument, a name, top-level metadata), with the
    /// window's end at each byte of it: the result is the 1 MiB window's.
    #[test]
    fn tokens_across_the_window_end_load_as_with_a_large_window(
        token in any_token(),
        place in 0usize..5,
        split_fraction in 0.0f64..1.0,
    ) {
        let head = [
            r#"{"traceEvents": [{"ph": "X", "x": 1, "#,
            r#"{"traceEvents": [{"ph": "X", "x": 2, "#,
            r#"{"traceEvents": [{"ph": "X", "cat": "cpu_op", "#,
            r#"{"traceEvents": [{"ph": "X", "#,
            r#"{"m": 1, "#,
        ][place];
        let field = [r#""dur": "#, r#""skipped": "#, r#""args": {"Input Dims": [["#, r#""name": "#, r#""meta": "#][place];
        let close = ["", "", "]]}", "", ""][place];
        let token_text = format!("{field}{token}{close}");
        let split = 1 + ((token_text.len() - 1) as f64 * split_fraction) as usize;
        let text = if place == 4 {
            let window = 128;
            let start = window - split;
            let padding = start - head.len() - r#""pad": "", "#.len();
            format!(
                r#"{head}"pad": "{}", {token_text}, "traceEvents": [{{"ph": "X", "ts": 1, "dur": 2}}]}}"#,
                "p".repeat(padding)
            )
        } else {
            placed(head, &token_text, split, 128)
        };
        prop_assert_eq!(
            summary(load_window(text.as_bytes(), 128)),
            summary(load_window(text.as_bytes(), WINDOW))
        );
    }
}

// ------------------------------------------------------------- anomalies

#[test]
fn non_finite_and_absurd_times_are_counted_and_left_out() {
    let trace = load(
        r#"{"traceEvents": [
          {"ph": "X", "name": "ok", "ts": 1, "dur": 2},
          {"ph": "X", "name": "a", "ts": NaN, "dur": 2},
          {"ph": "X", "name": "b", "ts": 1, "dur": Infinity},
          {"ph": "X", "name": "c", "ts": 1, "dur": -Infinity},
          {"ph": "X", "name": "d", "ts": "NaN", "dur": 2},
          {"ph": "X", "name": "e", "ts": 1, "dur": "inf"},
          {"ph": "X", "name": "f", "ts": 1, "dur": "1e400"},
          {"ph": "X", "name": "g", "ts": 1, "dur": 1e400},
          {"ph": "X", "name": "h", "ts": -1e400, "dur": 1},
          {"ph": "X", "name": "i", "ts": 1, "dur": 2e15},
          {"ph": "X", "name": "j", "ts": 1e17, "dur": 1},
          {"ph": "X", "name": "k", "ts": 1, "dur": -3},
          {"ph": "s", "cat": "ac2g", "id": 1, "ts": NaN},
          {"ph": "f", "cat": "ac2g", "id": 1, "ts": 1e300},
          {"ph": "X", "name": "ok2", "ts": 1700000000000000.5, "dur": 1e14}
        ], "meta": [NaN, Infinity, 1e400]}"#,
    )
    .expect("loads");
    let names: Vec<&str> = trace.events.iter().map(|e| trace.name(e)).collect();
    assert_eq!(names, ["ok", "ok2"]);
    assert_eq!(trace.counts.non_finite_times, 9);
    assert_eq!(trace.counts.out_of_range_times, 3);
    assert_eq!(trace.counts.negative_durations, 1);
    assert!(trace.flows.is_empty());
    assert_eq!(
        trace.metadata.get("meta"),
        Some(&serde_json::json!(["NaN", "Infinity", "1e400"]))
    );
    // Index keeps counting every entry, as TraceLens numbers them.
    assert_eq!(trace.events[1].index, 14);
}

#[test]
fn new_counters_are_serialised_only_when_non_zero() {
    let sound = serde_json::to_value(LoadCounts::default()).expect("serialises");
    assert!(sound.get("non_finite_times").is_none());
    let counts = LoadCounts {
        non_finite_times: 2,
        ..LoadCounts::default()
    };
    let value = serde_json::to_value(counts).expect("serialises");
    assert_eq!(value["non_finite_times"], 2);
    assert!(value.get("oversized_args").is_none());
}

#[test]
fn oversized_shape_arguments_are_dropped_and_counted() {
    let dims = vec!["1"; 600_000].join(",");
    let text = format!(
        r#"{{"traceEvents": [{{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 2, "args": {{"Input Dims": [[{dims}]], "Input type": ["float"]}}}}]}}"#
    );
    let trace = load(&text).expect("loads");
    let args = trace.op_args(&trace.events[0]).expect("op args");
    assert_eq!(args.input_dims, None);
    assert!(args.input_type.is_some());
    assert_eq!(trace.counts.oversized_args, 1);
}

// ---------------------------------------------------------------- limits

#[test]
fn an_event_over_the_limit_is_refused_naming_it() {
    let limits = LoadLimits {
        max_event_bytes: 1000,
        ..LoadLimits::default()
    };
    let name = "n".repeat(2000);
    let text = format!(
        r#"{{"traceEvents": [{{"ph": "X", "ts": 1, "dur": 1}}, {{"ph": "X", "name": "{name}"}}]}}"#
    );
    let error = load_limited(text.as_bytes(), &limits)
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with("t.json: byte 49: event 1 is larger than 1000 bytes"),
        "{error}"
    );
    assert!(error.contains("--max-event-bytes"), "{error}");
    // At the limit exactly, it loads.
    let fits = format!(
        r#"{{"traceEvents": [{{"ph": "X", "name": "{}"}}]}}"#,
        "n".repeat(968)
    );
    let trace = load_limited(fits.as_bytes(), &limits).expect("an event of 1000 bytes loads");
    assert_eq!(trace.counts.events, 1);
}

#[test]
fn a_metadata_value_or_key_over_the_limit_is_refused() {
    let limits = LoadLimits {
        max_event_bytes: 1000,
        ..LoadLimits::default()
    };
    let zeros = "0".repeat(5000);
    let text = format!(r#"{{"meta": "{zeros}", "traceEvents": []}}"#);
    let error = load_limited(text.as_bytes(), &limits)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("byte 9: the value of `meta` is larger than 1000"),
        "{error}"
    );
    let text = format!(r#"{{"{zeros}": 1, "traceEvents": []}}"#);
    let error = load_limited(text.as_bytes(), &limits)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("byte 1: a top-level key is larger"),
        "{error}"
    );
}

#[test]
fn a_gzip_bomb_is_refused_by_its_inflation() {
    // Members of a megabyte of spaces each, between a valid head and tail:
    // white space, so no event limit applies; only the ratio stops it.
    let limits = LoadLimits {
        inflation_floor_bytes: 8 << 20,
        ..LoadLimits::default()
    };
    let spaces = gzip(&vec![b' '; 1 << 20]);
    let mut bytes = gzip(br#"{"traceEvents": ["#);
    for _ in 0..64 {
        bytes.extend_from_slice(&spaces);
    }
    bytes.extend_from_slice(&gzip(b"]}"));
    let error = load_limited(&bytes, &limits).unwrap_err();
    assert!(matches!(error, LoadError::Inflation { .. }), "{error}");
    assert!(error.to_string().contains("more than 500:1"), "{error}");
    // The same text, compressed less absurdly, loads.
    let text = String::from_utf8(vec![b' '; 16 << 20]).expect("ASCII");
    let plain = format!(r#"{{"traceEvents": [{text}]}}"#);
    assert!(load_limited(plain.as_bytes(), &limits).is_ok());
}

#[test]
fn a_second_trace_events_key_is_an_error() {
    let error =
        load(r#"{"traceEvents": [{"ph": "X", "ts": 1, "dur": 1}], "x": 1, "traceEvents": []}"#)
            .unwrap_err()
            .to_string();
    assert!(
        error.starts_with("t.json: byte 58: a second `traceEvents` key"),
        "{error}"
    );
}

#[test]
fn error_messages_never_echo_control_characters() {
    let key = "k\\n::error title=injected::owned\\r\\u001b[31m";
    for text in [
        format!(r#"{{"{key}": }}"#),
        format!(r#"{{"{key}": 1, "traceEvents": [{{"ph": "X", "ts": "{key}"}}]}}"#),
        "{\"traceEvents\": [\n{\"ph\": \"X\"} \n\u{1b}]}".to_string(),
    ] {
        let error = load(&text).unwrap_err().to_string();
        assert!(!error.chars().any(char::is_control), "{error:?}");
        assert!(!error.contains("\n::error"), "{error:?}");
    }
    let long = format!(
        r#"{{"traceEvents": [{{"ph": "X", "ts": "{}"}}]}}"#,
        "x".repeat(100_000)
    );
    assert!(load(&long).unwrap_err().to_string().len() < 1000);
}

#[test]
fn special_files_are_refused_unless_allowed() {
    let limits = LoadLimits::default();
    let error = load_file_with(Path::new("/dev/zero"), &limits, &mut |_| {})
        .unwrap_err()
        .to_string();
    assert_eq!(
        error,
        "/dev/zero: is a character device, not a regular file (pass --allow-special-files to read it anyway)"
    );
    // Allowed, /dev/zero is a NUL at byte 0: not JSON, at once.
    let allowed = LoadLimits {
        allow_special_files: true,
        ..LoadLimits::default()
    };
    let error = load_file_with(Path::new("/dev/zero"), &allowed, &mut |_| {})
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with("/dev/zero: byte 0: expected a JSON object"),
        "{error}"
    );
}

// ------------------------------------------------------------------ cost

/// A trace of `ops` CPU ops, each with its own name and shape.
fn distinct_ops(ops: usize) -> String {
    let mut text = String::from(r#"{"traceEvents": ["#);
    for i in 0..ops {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&format!(
            r#"{{"ph": "X", "cat": "cpu_op", "name": "op{i}", "pid": 1, "tid": 1, "ts": {}, "dur": 5, "args": {{"Input Dims": [[2, {i}]], "Input type": ["float"]}}}}"#,
            i * 10
        ));
    }
    text.push_str("]}");
    text
}

#[test]
fn hundred_thousand_distinct_ops_load_with_each_name_interned_once() {
    // Regression: 100,000 distinct ops once took a search per op. Their
    // cost is timed in benches/complexity.rs (no wall clock in `cargo
    // test`); here, each distinct name and shape is one interned string.
    let trace = load(&distinct_ops(100_000)).expect("loads");
    assert_eq!(trace.events.len(), 100_000);
    assert!(trace.strings.len() >= trace.events.len());
    assert!(
        trace.strings.len() <= 3 * trace.events.len(),
        "{}",
        trace.strings.len()
    );
}

#[test]
fn events_are_kinds_from_categories_after_all_checks() {
    let trace = load(r#"[{"ph": "X", "cat": "kernel", "ts": 0, "dur": 0}]"#).expect("loads");
    assert_eq!(trace.events[0].kind, Kind::Kernel);
}

/// Loads `bytes` as `load_file` does, with or without the inflate thread.
fn load_inflating(bytes: &[u8], window: usize, inflate: bool) -> Result<Trace, LoadError> {
    let threads = Threads { inflate };
    load_threaded(
        "t.json",
        bytes,
        &LoadLimits::default(),
        window,
        threads,
        &mut |_| {},
    )
}

/// A trace of `events` kernels, several of the inflate thread's chunks long.
fn many_kernels(events: usize) -> String {
    let event = |i: usize| {
        format!(
            r#"{{"ph": "X", "cat": "kernel", "name": "k{}", "pid": 0, "tid": 7, "ts": {i}.5, "dur": 1, "args": {{"correlation": {i}, "grid": [1, 2, 3]}}}}"#,
            i % 97
        )
    };
    let events: Vec<String> = (0..events).map(event).collect();
    format!(
        r#"{{"schemaVersion": 1, "traceEvents": [{}]}}"#,
        events.join(",\n")
    )
}

#[test]
fn the_inflate_thread_changes_nothing() {
    let text = many_kernels(80_000);
    assert!(text.len() > 10 << 20, "{} bytes", text.len());
    // Two gzip members, split mid-event.
    let mut two_members = gzip(&text.as_bytes()[..text.len() / 3]);
    two_members.extend_from_slice(&gzip(&text.as_bytes()[text.len() / 3..]));
    // A bad event deep in: its index and byte offset must be the same.
    let broken = text.replace(r#""ts": 29008.5, "dur""#, r#""ts": 29008.5 "dur""#);
    for (what, bytes) in [
        ("one member", gzip(text.as_bytes())),
        ("two members", two_members),
        ("a bad event", gzip(broken.as_bytes())),
        ("plain text", text.clone().into_bytes()),
    ] {
        for window in [WINDOW, 4096] {
            let alone = summary(load_inflating(&bytes, window, false));
            let threaded = summary(load_inflating(&bytes, window, true));
            assert_eq!(alone, threaded, "{what}, window {window}");
        }
    }
    let error = load_inflating(&gzip(broken.as_bytes()), WINDOW, true).unwrap_err();
    assert!(
        error.to_string().contains("event 29008"),
        "the bad event is named: {error}"
    );
}

#[test]
fn broken_gzip_is_a_gzip_error_with_or_without_the_inflate_thread() {
    let compressed = gzip(many_kernels(20_000).as_bytes());
    let mut corrupt = compressed.clone();
    corrupt[compressed.len() / 2] ^= 0x55;
    for bytes in [&compressed[..compressed.len() / 2], &corrupt[..]] {
        for inflate in [false, true] {
            let error = load_inflating(bytes, WINDOW, inflate).unwrap_err();
            assert!(
                matches!(error, LoadError::Gzip { .. } | LoadError::Event { .. }),
                "inflate thread {inflate}: {error}"
            );
        }
    }
}

#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
#[test]
fn every_corpus_trace_loads_the_same_with_the_inflate_thread() {
    let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    let mut stack = vec![corpus];
    let mut traces = 0;
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("readable corpus dir") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if !path.to_string_lossy().ends_with(".json.gz") {
                continue;
            }
            let bytes = std::fs::read(&path).expect("readable trace");
            let alone = summary(load_inflating(&bytes, WINDOW, false));
            let threaded = summary(load_inflating(&bytes, WINDOW, true));
            assert!(alone == threaded, "{}", path.display());
            traces += 1;
        }
    }
    assert!(traces >= 10, "found {traces} gzip traces");
}

/// A CPU op or kernel event with the given arguments.
fn with_args(cat: &str, ts: u32, args: &str) -> String {
    format!(
        r#"{{"ph": "X", "cat": "{cat}", "name": "op", "pid": 1, "tid": 1, "ts": {ts}, "dur": 1, "args": {{{args}}}}}"#
    )
}

#[test]
fn equal_argument_rows_are_shared_and_numbered_ones_kept_apart() {
    let dims = r#""Input Dims": [[2, 3]], "Input type": ["float"]"#;
    let events = [
        with_args("cpu_op", 0, dims),
        with_args("cpu_op", 10, dims),
        with_args("cpu_op", 20, &format!(r#"{dims}, "Sequence number": 7"#)),
        with_args("cpu_op", 30, &format!(r#"{dims}, "Sequence number": 7"#)),
        with_args("cpu_op", 40, r#""Input Dims": [[4]]"#),
        with_args(
            "kernel",
            0,
            r#""device": 0, "stream": 7, "grid": [1, 1, 1]"#,
        ),
        with_args(
            "kernel",
            10,
            r#""device": 0, "stream": 7, "grid": [1, 1, 1]"#,
        ),
        with_args(
            "kernel",
            20,
            r#""device": 0, "stream": 8, "grid": [1, 1, 1]"#,
        ),
    ];
    let trace = load(&format!(r#"{{"traceEvents": [{}]}}"#, events.join(", "))).expect("loads");
    let dims_of = |i: usize| {
        let args = trace.op_args(&trace.events[i]).expect("op args");
        (
            args.input_dims.map(|s| trace.strings.get(s).to_string()),
            args.sequence_number,
        )
    };
    assert_eq!(dims_of(0), (Some("[[2, 3]]".into()), None));
    assert_eq!(dims_of(1), dims_of(0));
    assert_eq!(dims_of(2), (Some("[[2, 3]]".into()), Some(7)));
    assert_eq!(dims_of(4), (Some("[[4]]".into()), None));
    // Rows 0 and 1 share; numbered rows (an autograd step's) never do.
    assert_eq!(trace.op_args.len(), 4);
    let stream = |i: usize| trace.gpu_args(&trace.events[i]).and_then(|a| a.stream);
    assert_eq!(
        (stream(5), stream(6), stream(7)),
        (Some(7), Some(7), Some(8))
    );
    assert_eq!(trace.gpu_args.len(), 2);
}

#[test]
fn sharing_remembers_a_bounded_number_of_rows() {
    let distinct = super::super::build::SHARED_ROWS + 10;
    let mut events: Vec<String> = (0..distinct)
        .map(|i| with_args("cpu_op", i as u32, &format!(r#""Input Dims": [[{i}]]"#)))
        .collect();
    // The first row is remembered, the last one (past the bound) is not.
    events.push(with_args("cpu_op", 0, r#""Input Dims": [[0]]"#));
    events.push(with_args(
        "cpu_op",
        0,
        &format!(r#""Input Dims": [[{}]]"#, distinct - 1),
    ));
    let trace = load(&format!(r#"{{"traceEvents": [{}]}}"#, events.join(", "))).expect("loads");
    assert_eq!(trace.op_args.len(), distinct + 1);
    let last = trace.events.last().expect("events");
    let dims = trace
        .op_args(last)
        .and_then(|a| a.input_dims)
        .expect("dims");
    assert_eq!(trace.strings.get(dims), format!("[[{}]]", distinct - 1));
}
