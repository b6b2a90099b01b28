//! `cargo bench --bench load [-- TRACE]`: times each stage of the pipeline
//! (load, link, analyse) on one trace, calling the library directly, and
//! prints the best and median of a few iterations with throughput in MB/s of
//! uncompressed JSON. The gzip decompression of the same file is timed too:
//! it is the floor no loader of a `.json.gz` can beat.
//!
//! The trace defaults to the OWLv2 H100 trace of the shared corpus
//! (`../shared/corpus`, 56 MB of JSON, 132k events); set
//! `TRACEGATE_BENCH_TRACE` or pass a path to use another, and
//! `TRACEGATE_BENCH_ITERS` for the number of iterations (default 5). Without
//! the corpus it says so and succeeds. Std only: no benchmark framework.
//!
//! Memory: the peak RSS during each stage and the RSS after it (the last
//! iteration's, from `/proc/self/status`, Linux only), and the loaded
//! model's tables sized by arithmetic (length × element size), to show
//! what dominates peak RSS.

use std::env;
use std::fs::File;
use std::hint::black_box;
use std::io::{self, BufReader, Read};
use std::mem::size_of;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use flate2::read::MultiGzDecoder;

/// Starts a stage's peak RSS at the current RSS (Linux: writing 5 to
/// `/proc/self/clear_refs` resets `VmHWM`); elsewhere does nothing.
fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// (peak RSS during the stage, RSS after it) in bytes, from
/// `/proc/self/status`; zeros where that file does not exist.
fn rss() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| {
                rest.trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<u64>()
                    .ok()
            })
            .map_or(0, |kb| kb * 1024)
    };
    (field("VmHWM:"), field("VmRSS:"))
}

const DEFAULT_TRACE: &str =
    "../shared/corpus/tracelens/h100/google_owlv2-large-patch14-ensemble__1016001.json.gz";

fn main() {
    // `cargo bench` passes `--bench` (and any filter); a bare path picks the trace.
    let positional = env::args().skip(1).find(|a| !a.starts_with('-'));
    let path = positional
        .map(PathBuf::from)
        .or_else(|| env::var_os("TRACEGATE_BENCH_TRACE").map(PathBuf::from))
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(DEFAULT_TRACE));
    if !path.is_file() {
        println!("skipped: corpus not found ({})", path.display());
        return;
    }
    let iterations: usize = env::var("TRACEGATE_BENCH_ITERS")
        .ok()
        .and_then(|n| n.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(5);

    let file_bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let mut gunzip = Vec::new();
    let mut load = Vec::new();
    let mut link = Vec::new();
    let mut analyse = Vec::new();
    let mut json_bytes = 0u64;
    let mut events = 0usize;
    let mut heaps = Vec::new();
    let mut tables = Vec::new();
    for _ in 0..iterations {
        heaps.clear();
        if is_gzip(&path) {
            let start = Instant::now();
            let n = gunzip_to_sink(&path).expect("the trace decompresses");
            gunzip.push(start.elapsed());
            black_box(n);
        }

        reset_peak();
        let start = Instant::now();
        let trace = tracegate::trace::load_file(&path, &mut |_| {}).expect("the trace loads");
        load.push(start.elapsed());
        heaps.push(("trace::load_file", rss()));
        json_bytes = trace.json_bytes;
        events = trace.events.len();
        tables = model_tables(&trace);

        reset_peak();
        let start = Instant::now();
        let tree = tracegate::trace::link::link(&trace);
        link.push(start.elapsed());
        heaps.push(("tree::link", rss()));

        reset_peak();
        let start = Instant::now();
        let profile = tracegate::analysis::analyse::analyse(&trace, &tree);
        analyse.push(start.elapsed());
        heaps.push(("analyse::analyse", rss()));
        black_box(&profile);
    }
    let total: Vec<Duration> = (0..iterations)
        .map(|i| load[i] + link[i] + analyse[i])
        .collect();

    println!(
        "trace: {} ({:.1} MB on disk, {:.1} MB of JSON, {events} timed events), {iterations} iterations",
        path.display(),
        mb(file_bytes),
        mb(json_bytes),
    );
    println!();
    println!("| stage | best | median | MB/s of JSON (best) |");
    println!("|---|---:|---:|---:|");
    let row = |name: &str, times: &[Duration]| {
        if times.is_empty() {
            return;
        }
        let (best, median) = best_and_median(times);
        println!(
            "| {name} | {:.1} ms | {:.1} ms | {:.0} |",
            ms(best),
            ms(median),
            mb(json_bytes) / best.as_secs_f64()
        );
    };
    row("gunzip only (floor)", &gunzip);
    row("trace::load_file", &load);
    row("tree::link", &link);
    row("analyse::analyse", &analyse);
    row("load + link + analyse", &total);

    println!();
    println!("| stage (last iteration) | peak RSS during it | RSS after it | peak / JSON size |");
    println!("|---|---:|---:|---:|");
    for (stage, (peak, live)) in &heaps {
        println!(
            "| {stage} | {:.1} MB | {:.1} MB | {:.3} |",
            mb(*peak),
            mb(*live),
            *peak as f64 / json_bytes.max(1) as f64
        );
    }
    println!();
    println!("| model table | rows | bytes per row | MB (length × size) |");
    println!("|---|---:|---:|---:|");
    for (table, rows, size) in &tables {
        println!(
            "| {table} | {rows} | {size} | {:.1} |",
            mb((rows * size) as u64)
        );
    }
}

/// The loaded model's tables: (name, rows, bytes per row).
fn model_tables(trace: &tracegate::trace::Trace) -> Vec<(&'static str, usize, usize)> {
    use tracegate::trace::{CommArgs, Event, Flow, GpuArgs, LaunchArgs, OpArgs, Track};
    vec![
        ("events", trace.events.len(), size_of::<Event>()),
        ("op_args", trace.op_args.len(), size_of::<OpArgs>()),
        ("gpu_args", trace.gpu_args.len(), size_of::<GpuArgs>()),
        (
            "launch_args",
            trace.launch_args.len(),
            size_of::<LaunchArgs>(),
        ),
        ("comm_args", trace.comm_args.len(), size_of::<CommArgs>()),
        ("flows", trace.flows.len(), size_of::<Flow>()),
        ("tracks", trace.tracks.len(), size_of::<Track>()),
        ("strings (count only)", trace.strings.len(), 0),
    ]
}

fn is_gzip(path: &Path) -> bool {
    let mut magic = [0u8; 2];
    File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok()
        && magic == [0x1f, 0x8b]
}

fn gunzip_to_sink(path: &Path) -> io::Result<u64> {
    let file = BufReader::with_capacity(1 << 20, File::open(path)?);
    io::copy(&mut MultiGzDecoder::new(file), &mut io::sink())
}

fn best_and_median(times: &[Duration]) -> (Duration, Duration) {
    let mut sorted = times.to_vec();
    sorted.sort();
    (sorted[0], sorted[sorted.len() / 2])
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}
