//! `cargo bench --bench complexity`: the cost claims that once were
//! wall-clock assertions in `cargo test` (where a loaded machine made them
//! flaky), timed here on made-up traces. Each claim compares the fastest of
//! three runs at two sizes: linear work grows with the size, quadratic work
//! with its square, and the bound sits between them. Prints each ratio and
//! exits 1 when one is beyond its bound. Std only: no benchmark framework.
//!
//! The claims: loading 10× the distinct ops (each with its own name and
//! shape) costs about 10× (interning, not a search per op); analysing 4×
//! the distinct ops costs about 4× (grouping by interned keys); 32× the
//! calls of one 100,000-size argument list cost little more than the list
//! once (argument text is not copied per call); the Markdown report of 16×
//! the distinct op names costs about 16× (no list searched per row).

use std::hint::black_box;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use tracegate::analysis::analyse::analyse;
use tracegate::trace::link::link;
use tracegate::trace::{Trace, load_reader};

/// The fastest of three runs of `f`.
fn fastest(mut f: impl FnMut()) -> Duration {
    (0..3)
        .map(|_| {
            let started = Instant::now();
            f();
            started.elapsed()
        })
        .min()
        .expect("three runs")
}

fn load(json: &str) -> Trace {
    load_reader("synthetic", json.as_bytes(), &mut || {}).expect("a valid trace")
}

/// CPU ops `(name, Input Dims)`, each launching one kernel, 20 µs apart.
fn launches(ops: &[(String, String)]) -> String {
    let mut events = Vec::with_capacity(3 * ops.len());
    for (i, (name, dims)) in ops.iter().enumerate() {
        let (ts, id) = (i as f64 * 20.0, i + 1);
        events.push(format!(
            r#"{{"ph": "X", "cat": "cpu_op", "name": "{name}", "pid": 1, "tid": 1, "ts": {ts}, "dur": 10, "args": {{"Input Dims": {dims}, "Input type": ["float", "float"], "Input Strides": {dims}, "Concrete Inputs": ["", ""]}}}}"#
        ));
        events.push(format!(
            r#"{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": {}, "dur": 2, "args": {{"correlation": {id}}}}}"#,
            ts + 1.0
        ));
        events.push(format!(
            r#"{{"ph": "X", "cat": "kernel", "name": "kernel_{i}", "pid": 0, "tid": 7, "ts": {}, "dur": 3, "args": {{"correlation": {id}, "device": 0, "stream": 7}}}}"#,
            ts + 5.0
        ));
    }
    format!(r#"{{"traceEvents": [{}]}}"#, events.join(",\n"))
}

/// `n` ops, each with its own name and shape.
fn distinct(n: usize, prefix: &str) -> String {
    let ops: Vec<(String, String)> = (0..n)
        .map(|i| (format!("{prefix}{i}"), format!("[[{}, 4]]", i % 97 + 1)))
        .collect();
    launches(&ops)
}

/// `n` calls of `aten::copy_` with two tensors of `len` sizes each.
fn copies(n: usize, len: usize) -> String {
    let tensor = format!("[{}]", vec!["1"; len].join(", "));
    let dims = format!("[{tensor}, {tensor}]");
    launches(&vec![("aten::copy_".to_string(), dims); n])
}

/// A cost claim: `large` took at most `bound` times `small`.
struct Claim {
    what: &'static str,
    small: Duration,
    large: Duration,
    bound: f64,
}

fn main() -> ExitCode {
    let analysed = |json: &str| {
        let trace = load(json);
        let tree = link(&trace);
        move || drop(black_box(analyse(&trace, &tree)))
    };
    let (few_texts, many_texts) = (distinct(10_000, "op"), distinct(100_000, "op"));
    let (few_ops, many_ops) = (distinct(1_000, "aten::op_"), distinct(4_000, "aten::op_"));
    let (few_calls, many_calls) = (copies(2, 100_000), copies(64, 100_000));
    let markdown = |n: usize| {
        let trace = load(&distinct(n, "custom::op_"));
        let profile = analyse(&trace, &link(&trace));
        move || drop(black_box(tracegate::render::markdown::render(&profile, 20)))
    };
    let claims = [
        Claim {
            what: "loading 10× the distinct ops",
            small: fastest(|| drop(black_box(load(&few_texts)))),
            large: fastest(|| drop(black_box(load(&many_texts)))),
            bound: 25.0,
        },
        Claim {
            what: "analysing 4× the distinct ops",
            small: fastest(analysed(&few_ops)),
            large: fastest(analysed(&many_ops)),
            bound: 9.0,
        },
        Claim {
            what: "analysing 32× the calls of one long argument list",
            small: fastest(analysed(&few_calls)),
            large: fastest(analysed(&many_calls)),
            bound: 4.0,
        },
        Claim {
            what: "the Markdown report of 16× the distinct op names",
            small: fastest(markdown(1_000)).max(Duration::from_millis(5)),
            large: fastest(markdown(16_000)),
            bound: 64.0,
        },
    ];
    let mut failed = false;
    for claim in &claims {
        let ratio = claim.large.as_secs_f64() / claim.small.as_secs_f64();
        let verdict = if ratio <= claim.bound {
            "ok"
        } else {
            failed = true;
            "TOO SLOW"
        };
        println!(
            "{:<52} {:>10.2?} → {:>10.2?}  ×{ratio:.1} (bound ×{}) {verdict}",
            claim.what, claim.small, claim.large, claim.bound
        );
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
