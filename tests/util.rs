//! Helpers shared by the integration tests.

use std::path::{Path, PathBuf};

use assert_cmd::assert::Assert;

/// Where the shared real-trace corpus lies: `../shared/corpus` beside the
/// checkout (`scripts/fetch-corpus` puts it there).
pub fn corpus_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus")
}

/// The corpus, for the tests that need it: those are compiled as ignored
/// without it (build.rs sets `tracegate_corpus` when it is there), so a
/// missing corpus here means it went away after the build.
pub fn corpus_dir() -> PathBuf {
    let dir = corpus_path();
    assert!(
        dir.is_dir(),
        "{} is missing: run scripts/fetch-corpus (CONTRIBUTING.md, \"The test corpus\")",
        dir.display()
    );
    dir
}

/// Every trace file in the corpus (`.json` and `.json.gz`), sorted.
pub fn corpus_traces(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        for entry in std::fs::read_dir(&current).expect("readable corpus dir") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
                if name.ends_with(".json") || name.ends_with(".json.gz") {
                    found.push(path);
                }
            }
        }
    }
    found.sort();
    found
}

/// A parsed CSV: header and rows, with RFC 4180 quoting.
pub struct Csv {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Csv {
    pub fn parse(text: &str) -> Csv {
        let mut records = Vec::new();
        let mut record = Vec::new();
        let mut field = String::new();
        let mut in_quotes = false;
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            match (c, in_quotes) {
                ('"', true) if chars.peek() == Some(&'"') => {
                    field.push('"');
                    chars.next();
                }
                ('"', true) => in_quotes = false,
                ('"', false) if field.is_empty() => in_quotes = true,
                (',', false) => record.push(std::mem::take(&mut field)),
                ('\n', false) => {
                    record.push(std::mem::take(&mut field));
                    records.push(std::mem::take(&mut record));
                }
                ('\r', false) => {}
                (c, _) => field.push(c),
            }
        }
        if !field.is_empty() || !record.is_empty() {
            record.push(field);
            records.push(record);
        }
        let mut records = records.into_iter();
        let header = records.next().unwrap_or_default();
        Csv {
            header,
            rows: records.collect(),
        }
    }

    pub fn read(path: &Path) -> Csv {
        Csv::parse(
            &std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
        )
    }

    pub fn column(&self, name: &str) -> usize {
        self.header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column {name:?} in {:?}", self.header))
    }
}

/// Relative difference, 0 when both are 0.
pub fn relative_difference(a: f64, b: f64) -> f64 {
    let scale = a.abs().max(b.abs());
    if scale == 0.0 {
        0.0
    } else {
        (a - b).abs() / scale
    }
}

/// A gzip JSON file (a snapshot), parsed.
pub fn read_gz_json(path: &Path) -> serde_json::Value {
    let file = std::fs::File::open(path).expect("open");
    serde_json::from_reader(flate2::read::GzDecoder::new(file)).expect("gzip JSON")
}

/// Path of the built binary.
pub fn tracegate() -> assert_cmd::Command {
    assert_cmd::Command::cargo_bin("tracegate").expect("binary built")
}

/// Asserts a usage or input failure: exit code 2, nothing on stdout, one
/// line on stderr starting `error: ` and containing every `needle`, no panic.
pub fn assert_input_error(assert: Assert, needles: &[&str]) -> String {
    let output = assert.get_output();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(2), "stderr: {stderr}");
    assert!(!stderr.contains("panicked"), "panic in stderr: {stderr}");
    assert!(output.stdout.is_empty(), "stdout not empty");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "expected one line, got: {stderr}");
    assert!(lines[0].starts_with("error: "), "{stderr}");
    for needle in needles {
        assert!(lines[0].contains(needle), "{needle:?} not in: {stderr}");
    }
    stderr
}

/// Today, as the binary takes it: `accept` entries expire by it.
pub fn today() -> tracegate::gate::policy::Date {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs();
    tracegate::gate::policy::Date::from_unix_days(
        i64::try_from(seconds / 86_400).expect("a day number"),
    )
}
