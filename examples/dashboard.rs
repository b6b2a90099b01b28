//! Builds a history dashboard from snapshots, for trying the dashboard and
//! for `scripts/dashboard-check` (until `tracegate history report` writes
//! one from a history store).
//!
//! ```text
//! cargo run --example dashboard -- --out DIR [--runs N] [--repository URL]
//!     [--pair A B]... SNAPSHOT...
//! ```
//!
//! Every SNAPSHOT (`tracegate snapshot TRACE -o FILE`) becomes a workload of
//! N runs (default 60): jittered copies (±2% per run, ±1% per op, seeded),
//! the top op 15% slower from run 2N/3 on (marked as a regression, with the
//! workload's step), and PyTorch 2.5.1 → 2.6.0 from run N/3 on (an
//! environment change). `--pair A B` adds a cross-platform pair: the per-op
//! ratio B/A of two snapshots over N jittered comparisons, the top op's
//! ratio ×1.3 from run 2N/3 on. Nothing here was measured: the copies are
//! synthetic, only the op mix is the real trace's.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use tracegate::analysis::ops::stats::median;
use tracegate::gate::snapshot::Snapshot;
use tracegate::history::dashboard::{
    ChangeMark, PairInput, PairRun, RatioSeries, SiteInput, Step, TOP_OPS, WorkloadInput, site,
};
use tracegate::history::entry::{EntryMeta, Origin};
use tracegate::history::series::{op_times_per_step, top_ops};

const USAGE: &str =
    "usage: dashboard --out DIR [--runs N] [--repository URL] [--pair A B]... SNAPSHOT...";

/// The top op's slowdown after the step.
const OP_STEP: f64 = 1.15;
/// A pair's top-op ratio change after the step.
const RATIO_STEP: f64 = 1.3;

fn main() -> ExitCode {
    match run(env::args().skip(1).collect()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("dashboard: {message}\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

fn run(args: Vec<String>) -> Result<(), String> {
    let mut out = None;
    let mut runs = 60usize;
    let mut repository = None;
    let mut pairs = Vec::new();
    let mut snapshots = Vec::new();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--out" => out = Some(PathBuf::from(value()?)),
            "--runs" => runs = value()?.parse().map_err(|e| format!("--runs: {e}"))?,
            "--repository" => repository = Some(value()?),
            "--pair" => {
                let a = value()?;
                pairs.push((a, value()?));
            }
            _ => snapshots.push(arg),
        }
    }
    let out = out.ok_or("--out is required")?;
    if runs < 6 {
        return Err("--runs must be at least 6".to_string());
    }
    let workloads = snapshots
        .iter()
        .enumerate()
        .map(|(seed, path)| Ok(workload(&load(path)?, runs, seed as u64)))
        .collect::<Result<Vec<_>, String>>()?;
    let pairs = pairs
        .iter()
        .map(|(a, b)| Ok(pair(&load(a)?, &load(b)?, runs)))
        .collect::<Result<Vec<_>, String>>()?;
    let input = SiteInput {
        repository_url: repository,
        footer: "Synthetic history (jittered copies of real traces' snapshots), made by examples/dashboard.rs".to_string(),
        workloads,
        pairs,
    };
    let mut total = 0;
    for file in site(&input) {
        let path = out.join(&file.path);
        fs::create_dir_all(path.parent().unwrap_or(&out))
            .map_err(|e| format!("{}: {e}", path.display()))?;
        fs::write(&path, &file.contents).map_err(|e| format!("{}: {e}", path.display()))?;
        total += file.contents.len();
    }
    println!("wrote {} ({total} bytes)", out.display());
    Ok(())
}

fn load(path: &str) -> Result<Snapshot, String> {
    Snapshot::load_path(Path::new(path)).map_err(|e| e.to_string())
}

/// 64 seeded random bits (SplitMix64's mixer): the same input gives the
/// same site.
fn mix(seed: u64, a: u64, b: u64) -> u64 {
    let mut z = seed
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(a.wrapping_mul(0xBF58_476D_1CE4_E5B9))
        .wrapping_add(b.wrapping_mul(0x94D0_49BB_1331_11EB))
        .wrapping_add(1);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A seeded uniform draw in [-1, 1).
fn noise(seed: u64, a: u64, b: u64) -> f64 {
    (mix(seed, a, b) >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
}

/// A fake commit SHA for run `index`: 40 hex digits of seeded noise.
fn commit(seed: u64, index: usize) -> String {
    (0..3)
        .map(|part| format!("{:016x}", mix(seed, index as u64, 1000 + part)))
        .collect::<String>()[..40]
        .to_string()
}

fn time(index: usize) -> String {
    format!(
        "2026-{:02}-{:02}T{:02}:30:00Z",
        1 + index / 28 % 12,
        1 + index % 28,
        8 + index % 10
    )
}

/// The workload's mark: a regression at `step` with the levels around it.
fn mark(values: &[f64], step: usize) -> ChangeMark {
    ChangeMark {
        label: "regression".to_string(),
        step: Some(Step {
            index: step,
            before: median(&values[..step]).unwrap_or(0.0),
            after: median(&values[step..]).unwrap_or(0.0),
        }),
    }
}

fn workload(snapshot: &Snapshot, runs: usize, seed: u64) -> WorkloadInput {
    let step = runs * 2 / 3;
    let top = top_ops(
        &[(
            EntryMeta::of_snapshot(snapshot, Origin::default()),
            snapshot.clone(),
        )],
        1,
    );
    let copies: Vec<(EntryMeta, Snapshot)> = (0..runs)
        .map(|i| {
            let mut copy = snapshot.clone();
            let run = 1.0 + 0.02 * noise(seed, i as u64, u64::MAX);
            let mut added = 0.0;
            for (j, op) in copy.ops.iter_mut().enumerate() {
                let slower = if i >= step && top.contains(&op.name) {
                    OP_STEP
                } else {
                    1.0
                };
                let before = op.direct.sum;
                op.direct.sum *= run * slower * (1.0 + 0.01 * noise(seed, i as u64, j as u64));
                added += op.direct.sum - before;
            }
            copy.timeline.computation_time += added;
            let origin = Origin {
                commit: commit(seed, i),
                branch: Some("main".to_string()),
                time: time(i),
                pr: None,
                run_url: Some(format!(
                    "https://github.com/tracegate/tracegate/actions/runs/{}",
                    12_000_000_000 + seed * 1000 + i as u64
                )),
            };
            let mut entry = EntryMeta::of_snapshot(&copy, origin);
            entry.pytorch = Some(if i < runs / 3 { "2.5.1" } else { "2.6.0" }.to_string());
            (entry, copy)
        })
        .collect();
    let mut input = WorkloadInput::from_runs(&snapshot.workload, &copies, TOP_OPS);
    let totals: Vec<f64> = input
        .runs
        .iter()
        .map(EntryMeta::computation_per_step_us)
        .collect();
    input.change = Some(mark(&totals, step));
    for op in &mut input.ops {
        op.change = Some(if top.contains(&op.name) {
            mark(&op.values_us, step)
        } else {
            ChangeMark {
                label: "no_change".to_string(),
                step: None,
            }
        });
    }
    input
}

fn pair(a: &Snapshot, b: &Snapshot, runs: usize) -> PairInput {
    let step = runs * 2 / 3;
    let (a_times, b_times) = (op_times_per_step(a), op_times_per_step(b));
    let mut ops: Vec<(&String, f64)> = a_times
        .iter()
        .filter(|(name, _)| b_times.contains_key(*name))
        .map(|(n, t)| (n, *t))
        .collect();
    ops.sort_by(|x, y| y.1.total_cmp(&x.1));
    let ops: Vec<RatioSeries> = ops
        .into_iter()
        .take(TOP_OPS)
        .enumerate()
        .filter(|(_, (_, a_time))| *a_time > 0.0)
        .map(|(j, (name, a_time))| {
            let ratio = b_times[name] / a_time;
            let ratios: Vec<Option<f64>> = (0..runs)
                .map(|i| {
                    let changed = if j == 0 && i >= step { RATIO_STEP } else { 1.0 };
                    Some(ratio * changed * (1.0 + 0.02 * noise(99, i as u64, j as u64)))
                })
                .collect();
            let change = if j == 0 {
                let present: Vec<f64> = ratios.iter().flatten().copied().collect();
                mark(&present, step)
            } else {
                ChangeMark {
                    label: "no_change".to_string(),
                    step: None,
                }
            };
            RatioSeries {
                op: name.clone(),
                ratios,
                expected: None,
                change: Some(change),
            }
        })
        .collect();
    PairInput {
        name: format!(
            "{}: {} → {}",
            a.workload,
            a.fingerprint.gpus_text(),
            b.fingerprint.gpus_text()
        ),
        runs: (0..runs)
            .map(|i| PairRun {
                commit: commit(99, i),
                time: time(i),
                run_url: Some(format!(
                    "https://github.com/tracegate/tracegate/actions/runs/{}",
                    13_000_000_000 + i as u64
                )),
            })
            .collect(),
        ops,
    }
}
