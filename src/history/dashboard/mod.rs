//! The history dashboard: a static, self-contained HTML site (no CDN, so it
//! opens offline, from an Actions artifact or GitHub Pages) with an index of
//! workloads, a page per workload (its GPU time per step with the noise band,
//! change points and environment changes marked, and its top ops) and a page
//! per cross-platform pair. A plain function from its input to the site's
//! files; the binary writes them.
//!
//! Charts are drawn in the browser by uPlot (vendored in `vendor/`, MIT),
//! written once as a shared asset. Each page's points are a plain HTML table
//! (readable without JavaScript, linking every run and commit) and the
//! script draws the charts from that table, so no value is written twice.

mod band;
mod html;
mod pair;
mod workload;

#[cfg(test)]
mod tests;

use std::collections::BTreeSet;

use super::entry::EntryMeta;
use super::series::{op_series, top_ops};
use crate::gate::snapshot::Snapshot;
use html::{esc, page, slug};

pub use band::{Segment, band};

/// Everything the site shows.
#[derive(Clone, Debug, Default)]
pub struct SiteInput {
    /// The repository's web address (`https://github.com/owner/repo`):
    /// commits link to `{repository}/commit/{sha}`; without it they are text.
    pub repository_url: Option<String>,
    /// A line for every page's footer (when and from what the site was made).
    pub footer: String,
    /// The workloads, in the order the index lists them.
    pub workloads: Vec<WorkloadInput>,
    /// The cross-platform pairs.
    pub pairs: Vec<PairInput>,
}

/// One workload's history.
#[derive(Clone, Debug, Default)]
pub struct WorkloadInput {
    /// The workload's name.
    pub workload: String,
    /// Its runs, oldest first; the series is their GPU computation time per
    /// step ([`EntryMeta::computation_per_step_us`]).
    pub runs: Vec<EntryMeta>,
    /// The change mark of that series.
    pub change: Option<ChangeMark>,
    /// The ops charted below it, most GPU time first.
    pub ops: Vec<OpInput>,
}

/// One op's series in a workload.
#[derive(Clone, Debug, Default)]
pub struct OpInput {
    /// The op's name.
    pub name: String,
    /// Its GPU time per step in each run, µs (same order as the runs).
    pub values_us: Vec<f64>,
    /// Its change mark.
    pub change: Option<ChangeMark>,
}

/// What change-point detection said about a series.
#[derive(Clone, Debug, PartialEq)]
pub struct ChangeMark {
    /// `regression`, `improvement`, `suspicious`, `no_change` or
    /// `insufficient_data` (shown as given; known ones get colours).
    pub label: String,
    /// The step, when the label names one.
    pub step: Option<Step>,
}

/// A step in a series.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// The first run after the step (index into the series).
    pub index: usize,
    /// The level before, in the series' unit.
    pub before: f64,
    /// The level after.
    pub after: f64,
}

/// A cross-platform pair's history: the per-op ratio of platform B's time
/// to A's, one value per scheduled comparison.
#[derive(Clone, Debug, Default)]
pub struct PairInput {
    /// The pair's name (`bert-small: H100 → MI300X`).
    pub name: String,
    /// The comparisons, oldest first.
    pub runs: Vec<PairRun>,
    /// The ops, most important first; the page charts the first
    /// [`TOP_OPS`].
    pub ops: Vec<RatioSeries>,
}

/// One comparison of a pair.
#[derive(Clone, Debug, Default)]
pub struct PairRun {
    /// The commit compared.
    pub commit: String,
    /// When, RFC 3339 UTC.
    pub time: String,
    /// The CI run's URL.
    pub run_url: Option<String>,
}

/// One op's ratio over a pair's comparisons.
#[derive(Clone, Debug, Default)]
pub struct RatioSeries {
    /// The op's name.
    pub op: String,
    /// B's time over A's in each comparison; `None` where one side lacks it.
    pub ratios: Vec<Option<f64>>,
    /// The ratio expected without history (the roofline's), drawn as a line.
    pub expected: Option<f64>,
    /// The change mark of the ratio series.
    pub change: Option<ChangeMark>,
}

/// One file of the site.
#[derive(Clone, Debug, PartialEq)]
pub struct SiteFile {
    /// Where it goes, relative to the site's root, `/`-separated.
    pub path: String,
    /// Its text.
    pub contents: String,
}

/// How many ops a workload page charts by default.
pub const TOP_OPS: usize = 10;

impl WorkloadInput {
    /// A workload's input from its runs and their snapshots (oldest first):
    /// the `top` ops of the newest run ([`top_ops`]) with their series, no
    /// change marks (the caller adds what detection found).
    pub fn from_runs(workload: &str, runs: &[(EntryMeta, Snapshot)], top: usize) -> WorkloadInput {
        let ops = top_ops(runs, top)
            .into_iter()
            .map(|name| OpInput {
                values_us: op_series(runs, &name).iter().map(|p| p.value_us).collect(),
                name,
                change: None,
            })
            .collect();
        WorkloadInput {
            workload: workload.to_string(),
            runs: runs.iter().map(|(entry, _)| entry.clone()).collect(),
            change: None,
            ops,
        }
    }
}

/// The site: `index.html`, `workloads/*.html`, `pairs/*.html` and the
/// shared assets under `assets/`.
pub fn site(input: &SiteInput) -> Vec<SiteFile> {
    let repository = input.repository_url.as_deref();
    let mut names = Names::default();
    let mut files = assets();
    let mut workload_rows = String::new();
    for workload in &input.workloads {
        let path = format!("workloads/{}.html", names.unique(&workload.workload));
        workload_rows.push_str(&workload::index_row(workload, &path));
        files.push(SiteFile {
            contents: workload::page(workload, repository, &input.footer),
            path,
        });
    }
    let mut pair_rows = String::new();
    for pair in &input.pairs {
        let path = format!("pairs/{}.html", names.unique(&pair.name));
        pair_rows.push_str(&format!(
            "<tr><td><a href=\"{path}\">{}</a></td><td>{}</td><td>{}</td></tr>\n",
            esc(&pair.name),
            pair.runs.len(),
            pair.ops.len().min(TOP_OPS)
        ));
        files.push(SiteFile {
            contents: pair::page(pair, repository, &input.footer),
            path,
        });
    }
    files.push(SiteFile {
        path: "index.html".to_string(),
        contents: index(input, &workload_rows, &pair_rows),
    });
    files
}

/// The index page: every workload's latest value and label, then the pairs.
fn index(input: &SiteInput, workload_rows: &str, pair_rows: &str) -> String {
    let mut body = String::from("<h1>Performance history</h1>\n");
    body.push_str(&format!(
        "<p>GPU computation time per profiler step of each workload over its recorded runs. The noise band is the median ± {} scaled MADs of each level.</p>\n",
        band::K
    ));
    if input.workloads.is_empty() {
        body.push_str("<p>No workloads recorded.</p>\n");
    } else {
        body.push_str("<table class=\"index\">\n<thead><tr><th scope=\"col\">workload</th><th scope=\"col\">runs</th><th scope=\"col\">latest (per step)</th><th scope=\"col\">vs previous run</th><th scope=\"col\">change point</th><th scope=\"col\">latest commit</th><th scope=\"col\">environment</th></tr></thead>\n<tbody>\n");
        body.push_str(workload_rows);
        body.push_str("</tbody>\n</table>\n");
    }
    if !input.pairs.is_empty() {
        body.push_str("<h2>Cross-platform pairs</h2>\n<table class=\"index\">\n<thead><tr><th scope=\"col\">pair</th><th scope=\"col\">comparisons</th><th scope=\"col\">ops</th></tr></thead>\n<tbody>\n");
        body.push_str(pair_rows);
        body.push_str("</tbody>\n</table>\n");
    }
    page("tracegate history", "", false, &body, &input.footer)
}

/// The shared assets, written once: uPlot (script, style, licence) and the
/// dashboard's own script and style.
fn assets() -> Vec<SiteFile> {
    [
        (
            "assets/uPlot.iife.min.js",
            include_str!("vendor/uPlot.iife.min.js"),
        ),
        ("assets/uPlot.min.css", include_str!("vendor/uPlot.min.css")),
        (
            "assets/uPlot-LICENSE.txt",
            include_str!("vendor/uPlot-LICENSE"),
        ),
        ("assets/dashboard.js", include_str!("dashboard.js")),
        ("assets/dashboard.css", include_str!("dashboard.css")),
    ]
    .into_iter()
    .map(|(path, contents)| SiteFile {
        path: path.to_string(),
        contents: contents.to_string(),
    })
    .collect()
}

/// File names handed out so far: two names with the same slug get `-2`,
/// `-3`, … so that no page overwrites another.
#[derive(Default)]
struct Names(BTreeSet<String>);

impl Names {
    fn unique(&mut self, name: &str) -> String {
        let base = slug(name);
        let mut candidate = base.clone();
        let mut n = 2;
        while !self.0.insert(candidate.clone()) {
            candidate = format!("{base}-{n}");
            n += 1;
        }
        candidate
    }
}
