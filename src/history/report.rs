//! What `tracegate history report` shows: the dashboard's input built from
//! the history's runs, with the change points detection finds in every
//! series (the workload's and its top ops') and, for a workload recorded
//! on two pieces of hardware at the same commits, the per-op ratio between
//! them.

use std::collections::BTreeMap;

use super::changepoint::{ChangeOptions, Detection, detect};
use super::dashboard::{
    ChangeMark, PairInput, PairRun, RatioSeries, SiteInput, Step, TOP_OPS, WorkloadInput,
};
use super::entry::EntryMeta;
use super::ratios::learned_ratio;
use super::series::{op_times_per_step, workload_series};
use crate::gate::snapshot::Snapshot;

/// One series of runs: a workload on one piece of hardware, oldest first.
pub struct RunSeries {
    /// The name its page carries (`bert`, or `bert · MI300X` when the
    /// workload ran on several).
    pub name: String,
    /// The runs with their snapshots.
    pub runs: Vec<(EntryMeta, Snapshot)>,
}

/// Two platforms' runs of one workload at the same commits, oldest first:
/// (baseline platform, candidate platform) per commit.
pub struct PairSeries {
    /// `bert: H100 SXM → MI300X`.
    pub name: String,
    /// The pairs.
    pub pairs: Vec<((EntryMeta, Snapshot), (EntryMeta, Snapshot))>,
}

/// The dashboard's input: every series with its change marks, every pair
/// with its ratio series.
pub fn site_input(
    series: &[RunSeries],
    pairs: &[PairSeries],
    repository_url: Option<String>,
    footer: String,
) -> SiteInput {
    let options = ChangeOptions::default();
    let workloads = series
        .iter()
        .map(|s| {
            let mut input = WorkloadInput::from_runs(&s.name, &s.runs, TOP_OPS);
            let entries: Vec<EntryMeta> = s.runs.iter().map(|(e, _)| e.clone()).collect();
            let values: Vec<f64> = workload_series(&entries)
                .iter()
                .map(|p| p.value_us)
                .collect();
            input.change = Some(mark(&detect(&values, &options)));
            for op in &mut input.ops {
                op.change = Some(mark(&detect(&op.values_us, &options)));
            }
            input
        })
        .collect();
    let pairs = pairs.iter().map(|p| pair_input(p, &options)).collect();
    SiteInput {
        repository_url,
        footer,
        workloads,
        pairs,
    }
}

/// The dashboard's mark of a detection: its label and newest step.
fn mark(detection: &Detection) -> ChangeMark {
    ChangeMark {
        label: detection.label.as_str().to_string(),
        step: detection.steps.last().map(|step| Step {
            index: step.index,
            before: step.before,
            after: step.after,
        }),
    }
}

/// A pair's page: per op (the top ops of the newest candidate-platform
/// run), the time ratio candidate / baseline at each commit, its median as
/// the expected ratio, and its change points.
fn pair_input(pair: &PairSeries, options: &ChangeOptions) -> PairInput {
    let times: Vec<(BTreeMap<String, f64>, BTreeMap<String, f64>)> = pair
        .pairs
        .iter()
        .map(|((_, b), (_, c))| (op_times_per_step(b), op_times_per_step(c)))
        .collect();
    let mut top: Vec<(&String, &f64)> = times
        .last()
        .map(|(_, c)| c.iter().collect())
        .unwrap_or_default();
    top.sort_by(|a, b| b.1.total_cmp(a.1).then_with(|| a.0.cmp(b.0)));
    let ops = top
        .into_iter()
        .take(TOP_OPS)
        .map(|(op, _)| {
            let ratios: Vec<Option<f64>> = times
                .iter()
                .map(|(b, c)| match (b.get(op), c.get(op)) {
                    (Some(&b), Some(&c)) if b > 0.0 => Some(c / b),
                    _ => None,
                })
                .collect();
            let known: Vec<f64> = ratios.iter().flatten().copied().collect();
            let change = (known.len() == ratios.len()).then(|| mark(&detect(&known, options)));
            RatioSeries {
                op: op.clone(),
                expected: learned_ratio(&known).map(|l| l.ratio),
                ratios,
                change,
            }
        })
        .collect();
    PairInput {
        name: pair.name.clone(),
        runs: pair
            .pairs
            .iter()
            .map(|(_, (entry, _))| PairRun {
                commit: entry.commit.clone(),
                time: entry.time.clone(),
                run_url: entry.run_url.clone(),
            })
            .collect(),
        ops,
    }
}
