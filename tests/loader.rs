//! Bad trace files at the command line, each one a fuzz-campaign finding
//! (docs/RELIABILITY.md): a one-line exit-2 error or a counted anomaly, and
//! quickly; and every corpus trace loads the same after a re-save.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tracegate::trace::{self, Kind, LoadCounts, Trace};

use crate::util::{assert_input_error, corpus_dir, corpus_traces, tracegate};

/// What "quickly" means: a watchdog, not a benchmark: a hang fails it, a loaded machine does not
/// (the error's byte offset shows where the input was refused).
const QUICK: Duration = Duration::from_secs(60);

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(name)
}

fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(bytes), &mut out)
        .expect("gzip");
    out
}

/// One gzip member; members concatenated make one valid stream.
fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(bytes).expect("gzip");
    encoder.finish().expect("gzip")
}

/// `head`, then `megabytes` MiB of `fill`, then `tail`, as a gzip file of
/// about one KiB per MiB.
fn bomb(head: &str, fill: u8, megabytes: usize, tail: &str) -> Vec<u8> {
    let member = gzip(&vec![fill; 1 << 20]);
    let mut bytes = gzip(head.as_bytes());
    for _ in 0..megabytes {
        bytes.extend_from_slice(&member);
    }
    bytes.extend_from_slice(&gzip(tail.as_bytes()));
    bytes
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write");
    path
}

#[test]
fn nan_duration_in_baseline_still_fails_the_gate_on_examples() {
    // The candidate's aten::mm is 30% slower. A NaN in one baseline kernel
    // used to poison the baseline's sums, and the gate passed.
    let text = String::from_utf8(gunzip(&std::fs::read(example("baseline.json.gz")).unwrap()))
        .expect("UTF-8");
    let dir = tempfile::tempdir().expect("temp dir");
    for nan in [r#""NaN""#, "NaN", r#""inf""#, "1e400"] {
        let broken = text.replacen(r#""dur": 42.466"#, &format!(r#""dur": {nan}"#), 1);
        assert_ne!(broken, text, "the gemm kernel's duration is in the example");
        let baseline = write(dir.path(), "baseline.json", broken.as_bytes());
        let assert = tracegate()
            .args(["check", "--quiet", "--color", "never", "--baseline"])
            .arg(&baseline)
            .arg("--candidate")
            .arg(example("candidate.json.gz"))
            .assert();
        assert_eq!(assert.get_output().status.code(), Some(1), "dur {nan}");

        let report = tracegate()
            .args(["report", "--format", "json"])
            .arg(&baseline)
            .assert()
            .success();
        let json: serde_json::Value =
            serde_json::from_slice(&report.get_output().stdout).expect("the report is JSON");
        assert_eq!(json["source"]["counts"]["non_finite_times"], 1, "dur {nan}");
        let terminal = tracegate()
            .args(["report", "--color", "never"])
            .arg(&baseline)
            .assert()
            .success();
        let stdout = String::from_utf8_lossy(&terminal.get_output().stdout).into_owned();
        assert!(
            stdout.contains("1 events with a NaN or infinite ts or dur (left out)"),
            "{stdout}"
        );
        assert!(
            !stdout.contains("NaN%") && !stdout.contains(" inf "),
            "{stdout}"
        );
    }
}

#[test]
fn a_1_gb_string_bomb_exits_2_quickly() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = write(
        dir.path(),
        "bomb.json.gz",
        &bomb(
            r#"{"traceEvents": [{"ph": "X", "name": ""#,
            b'a',
            1024,
            r#""}]}"#,
        ),
    );
    let start = Instant::now();
    let label = path.display().to_string();
    assert_input_error(
        tracegate().arg("report").arg(&path).assert(),
        &[&label, "byte 17: event 0 is larger than 67108864 bytes"],
    );
    assert!(start.elapsed() < QUICK, "took {:?}", start.elapsed());
}

#[test]
fn a_300_mb_metadata_zero_bomb_exits_2_quickly() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (head, tail) in [(r#"{"pad": "#, "}"), (r#"{"pad": ""#, r#""}"#)] {
        let path = write(dir.path(), "zeros.json.gz", &bomb(head, b'0', 300, tail));
        let start = Instant::now();
        assert_input_error(
            tracegate()
                .args(["snapshot", "-o"])
                .arg(dir.path().join("out.json.gz"))
                .arg(&path)
                .assert(),
            &["byte 8: the value of `pad` is larger than 67108864 bytes"],
        );
        assert!(start.elapsed() < QUICK, "took {:?}", start.elapsed());
    }
}

#[test]
fn ten_million_element_input_dims_are_dropped_quickly() {
    // 20 MB of shape text used to cost seconds and most of a gigabyte in
    // the later stages; the loader drops shape arguments over 1 MiB.
    let dir = tempfile::tempdir().expect("temp dir");
    let head = r#"{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1, "dur": 5, "args": {"Input Dims": [["#;
    let ones = gzip(&b"1,".repeat(1 << 19));
    let mut bytes = gzip(head.as_bytes());
    for _ in 0..19 {
        bytes.extend_from_slice(&ones);
    }
    bytes.extend_from_slice(&gzip(b"1]]}}]}"));
    let path = write(dir.path(), "dims.json.gz", &bytes);
    let start = Instant::now();
    let report = tracegate()
        .args(["report", "--format", "json"])
        .arg(&path)
        .assert()
        .success();
    assert!(start.elapsed() < QUICK, "took {:?}", start.elapsed());
    let json: serde_json::Value =
        serde_json::from_slice(&report.get_output().stdout).expect("the report is JSON");
    assert_eq!(json["source"]["counts"]["oversized_args"], 1);
    assert_eq!(json["source"]["counts"]["timed"], 1);
}

#[test]
fn max_event_bytes_sets_the_limit() {
    let dir = tempfile::tempdir().expect("temp dir");
    let event = format!(
        r#"{{"ph": "X", "name": "{}", "ts": 1, "dur": 1}}"#,
        "n".repeat(2000)
    );
    let path = write(
        dir.path(),
        "big.json",
        format!(r#"{{"traceEvents": [{event}]}}"#).as_bytes(),
    );
    assert_input_error(
        tracegate()
            .args(["report", "--max-event-bytes", "1KiB"])
            .arg(&path)
            .assert(),
        &["event 0 is larger than 1024 bytes", "--max-event-bytes"],
    );
    tracegate()
        .args(["report", "--max-event-bytes", "4KiB"])
        .arg(&path)
        .assert()
        .success();
}

#[test]
fn dev_zero_is_refused_at_once() {
    let refused = "/dev/zero: is a character device, not a regular file";
    for args in [
        vec!["report", "/dev/zero"],
        vec!["snapshot", "/dev/zero", "-o", "/dev/null"],
        vec![
            "check",
            "--baseline",
            "/dev/zero",
            "--candidate",
            "/dev/zero",
        ],
        vec!["replay", "/dev/zero", "--op", "aten::mm"],
    ] {
        assert_input_error(tracegate().args(&args).timeout(QUICK).assert(), &[refused]);
    }
}

#[cfg(unix)]
#[test]
fn fifo_is_refused_without_blocking() {
    let dir = tempfile::tempdir().expect("temp dir");
    let fifo = dir.path().join("trace.json");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let label = fifo.display().to_string();
    for command in ["report", "check"] {
        let mut cmd = tracegate();
        if command == "report" {
            cmd.arg("report").arg(&fifo);
        } else {
            cmd.args(["check", "--candidate"])
                .arg(&fifo)
                .arg("--baseline")
                .arg(&fifo);
        }
        assert_input_error(
            cmd.timeout(QUICK).assert(),
            &[&label, "is a FIFO (named pipe)", "--allow-special-files"],
        );
    }
}

#[test]
fn duplicate_trace_events_is_an_input_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let event =
        r#"{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 2}"#;
    let path = write(
        dir.path(),
        "twice.json",
        format!(r#"{{"traceEvents": [{event}], "traceEvents": [{event}]}}"#).as_bytes(),
    );
    assert_input_error(
        tracegate().arg("report").arg(&path).assert(),
        &["a second `traceEvents` key"],
    );
}

#[test]
fn newline_and_workflow_command_in_a_key_never_reach_stderr_raw() {
    let dir = tempfile::tempdir().expect("temp dir");
    let injected = r#"x\n::error title=injected::owned\r\n::warning::x"#;
    for (name, text) in [
        (
            "key.json",
            format!(r#"{{"{injected}": tru, "traceEvents": []}}"#),
        ),
        (
            "value.json",
            format!(r#"{{"traceEvents": [{{"ph": "X", "ts": "{injected}", "dur": 1}}]}}"#),
        ),
        (
            "byte.json",
            "{\"traceEvents\": [\n::error title=injected::owned\n]}".into(),
        ),
    ] {
        let path = write(dir.path(), name, text.as_bytes());
        let stderr = assert_input_error(tracegate().arg("report").arg(&path).assert(), &[]);
        let line = stderr.strip_suffix('\n').expect("one line");
        assert!(!line.chars().any(char::is_control), "{line:?}");
    }
}

// ------------------------------------------------------- re-saved corpus

/// How a re-save lays JSON out.
#[derive(Clone, Copy, Debug)]
enum Layout {
    /// No white space (serde_json, `json.dump(separators=(",", ":"))`).
    Compact,
    /// `, ` and `: ` on one line: Python's `json.dump` default.
    Python,
    /// One value per line, indented by two spaces.
    Pretty,
}

/// `json` as another tool would re-save it: white space in `layout`, and
/// each number with a fraction or exponent printed shortest (as Python's
/// `repr` and serde_json print floats). Strings are copied as they are.
fn relayout(json: &[u8], layout: Layout) -> Vec<u8> {
    let mut out = Vec::with_capacity(json.len() + json.len() / 2);
    let mut depth = 0usize;
    let newline = |out: &mut Vec<u8>, depth: usize| {
        out.push(b'\n');
        out.resize(out.len() + 2 * depth, b' ');
    };
    let mut i = 0;
    while i < json.len() {
        let byte = json[i];
        match byte {
            b'"' => {
                let start = i;
                i += 1;
                while json[i] != b'"' {
                    i += if json[i] == b'\\' { 2 } else { 1 };
                }
                out.extend_from_slice(&json[start..=i]);
            }
            b'{' | b'[' => {
                out.push(byte);
                depth += 1;
                if let Layout::Pretty = layout {
                    newline(&mut out, depth);
                }
            }
            b'}' | b']' => {
                depth -= 1;
                if let Layout::Pretty = layout {
                    newline(&mut out, depth);
                }
                out.push(byte);
            }
            b',' => {
                out.push(byte);
                match layout {
                    Layout::Compact => {}
                    Layout::Python => out.push(b' '),
                    Layout::Pretty => newline(&mut out, depth),
                }
            }
            b':' => {
                out.push(byte);
                if !matches!(layout, Layout::Compact) {
                    out.push(b' ');
                }
            }
            byte if byte.is_ascii_whitespace() => {}
            _ => {
                let start = i;
                while i + 1 < json.len() && !b",:]} \n\r\t".contains(&json[i + 1]) {
                    i += 1;
                }
                let token = &json[start..=i];
                let float = token
                    .iter()
                    .any(|b| matches!(b, b'.' | b'e' | b'E'))
                    .then(|| std::str::from_utf8(token).ok()?.parse::<f64>().ok())
                    .flatten()
                    .filter(|v| v.is_finite());
                match float {
                    Some(value) => out.extend_from_slice(format!("{value:?}").as_bytes()),
                    None => out.extend_from_slice(token),
                }
            }
        }
        i += 1;
    }
    out
}

/// One timed event by value: times, name, kind, correlation, index,
/// pid and tid labels, `Input Dims` without white space.
#[derive(Debug, PartialEq)]
struct EventValue(
    f64,
    f64,
    String,
    Kind,
    Option<u64>,
    u32,
    String,
    String,
    String,
);

/// A trace's loaded content by value, independent of interning order and of
/// the raw argument text's white space.
#[derive(Debug, PartialEq)]
struct Loaded {
    counts: LoadCounts,
    events: Vec<EventValue>,
    flows: Vec<(u64, f64, bool, String, String)>,
    metadata_keys: Vec<String>,
}

fn loaded(trace: &Trace) -> Loaded {
    let track = |index: u32| {
        let track = trace.tracks[index as usize];
        (
            trace.track_id_label(track.pid),
            trace.track_id_label(track.tid),
        )
    };
    let dims = |event: &trace::Event| {
        let text = trace
            .op_args(event)
            .and_then(|args| args.input_dims)
            .map_or("", |sym| trace.strings.get(sym));
        text.replace(|c: char| c.is_ascii_whitespace(), "")
    };
    let mut metadata_keys: Vec<String> =
        trace.metadata.fields.iter().map(|f| f.0.clone()).collect();
    metadata_keys.sort();
    Loaded {
        counts: trace.counts.clone(),
        events: trace
            .events
            .iter()
            .map(|e| {
                let (pid, tid) = track(e.track);
                let name = trace.name(e).to_string();
                EventValue(
                    e.ts,
                    e.dur,
                    name,
                    e.kind,
                    e.correlation(),
                    e.index,
                    pid,
                    tid,
                    dims(e),
                )
            })
            .collect(),
        flows: trace
            .flows
            .iter()
            .map(|f| {
                let (pid, tid) = track(f.track);
                (f.id, f.ts, f.is_start, pid, tid)
            })
            .collect(),
        metadata_keys,
    }
}

#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
#[test]
fn every_corpus_trace_loads_the_same_after_a_re_save() {
    // The fuzz finding: hta/trace_diff_control_a100 re-saved by Python's
    // json.dump put `-8`-like numbers across the loader's window end, and
    // failed with "invalid number" at event 75516.
    let corpus = corpus_dir();
    let dir = tempfile::tempdir().expect("temp dir");
    let traces = corpus_traces(&corpus);
    assert!(traces.len() >= 20, "found {} traces", traces.len());
    for path in traces {
        if path.ends_with("execution_details.json") {
            continue;
        }
        let original = trace::load_file(&path, &mut |_| {})
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let expected = loaded(&original);
        let raw = std::fs::read(&path).expect("readable");
        let json = if raw.starts_with(&[0x1f, 0x8b]) {
            gunzip(&raw)
        } else {
            raw
        };
        // Python's layout (the finding) for all; the others too for all
        // but the largest, to keep a debug build's test run short.
        let layouts: &[Layout] = if json.len() < 16 << 20 {
            &[Layout::Python, Layout::Compact, Layout::Pretty]
        } else {
            &[Layout::Python]
        };
        for &layout in layouts {
            let resaved = write(dir.path(), "resaved.json", &relayout(&json, layout));
            let trace = trace::load_file(&resaved, &mut |_| {})
                .unwrap_or_else(|e| panic!("{} as {layout:?}: {e}", path.display()));
            let got = loaded(&trace);
            assert_eq!(
                got.counts,
                expected.counts,
                "{} as {layout:?}",
                path.display()
            );
            if let Some(at) = (0..got.events.len()).find(|&i| got.events[i] != expected.events[i]) {
                panic!(
                    "{} as {layout:?}: event {at}: {:?} != {:?}",
                    path.display(),
                    got.events[at],
                    expected.events[at]
                );
            }
            assert!(got == expected, "{} as {layout:?}", path.display());
        }
    }
}
