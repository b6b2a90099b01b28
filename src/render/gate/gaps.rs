//! The cross-platform day-one report: where the candidate platform is
//! behind what its hardware explains. Without learned ratios a
//! cross-platform check has nothing to gate on (real stacks miss the
//! datasheets' ratio by far more than any slack on the same code), so the
//! ops beyond the hardware's ratio are information, listed per workload
//! and ranked by the time they take beyond it (gap × time), each with its
//! measured and expected ratio, how far behind it is, each side's roofline
//! efficiency and its replay package for the kernel team (Path B).

use serde::Serialize;

use super::finding::{NONE, shape_of, times};
use super::group::package_name;
use crate::gate::verdict::{Finding, Verdict};
use crate::render::text::{compact_dims, plain_url, shorten};

/// Rows shown per workload: the largest gaps, not a wall.
pub(super) const GAPS_SHOWN: usize = 5;

/// What the kernel team does with the report.
pub(super) const PATH_B: &str = "Path B, for the kernel team: these ops run further from \
    what the candidate's hardware allows than on the baseline; tune or replace their kernels \
    on the candidate. Each replay package runs the op alone with its recorded shapes \
    (replay.py), to measure a kernel change without the model.";

/// How a comparison's note on learning ratios begins
/// ([`learning_note`](crate::gate::compare::learning_note)).
const LEARNING: &str = "learning: ";

/// One op row of the report, formatted.
#[derive(Clone, Debug, Serialize)]
pub(super) struct GapRow {
    pub(super) op: String,
    /// Its input dims, compact (`8944×1024, 1024×2816`).
    pub(super) shape: String,
    /// Candidate/baseline time ratio measured: `×1.63`.
    pub(super) measured: String,
    /// The ratio the hardware explains: `×0.63`.
    pub(super) expected: String,
    /// Measured over expected: `2.6×`.
    pub(super) behind: String,
    /// Roofline efficiency, baseline → candidate: `52% → 12%`.
    pub(super) efficiency: String,
    /// Time beyond the expected ratio, as a share of the baseline's GPU time.
    pub(super) beyond: String,
    pub(super) replay: String,
    pub(super) replay_url: Option<String>,
}

/// One workload's rows, largest time beyond first.
#[derive(Clone, Debug, Serialize)]
pub(super) struct GapSection {
    pub(super) workload: String,
    /// `H100 SXM → MI300X`.
    pub(super) platforms: String,
    /// The candidate's platform: `MI300X`.
    pub(super) candidate: String,
    pub(super) rows: Vec<GapRow>,
    /// Rows beyond [`GAPS_SHOWN`], left to report.json.
    pub(super) more: usize,
    /// How far the history is from learned ratios ("learning: 1 of 3
    /// paired runs …"), from the workload's notes.
    pub(super) learning: Option<String>,
}

/// The report's sections, one per cross-platform workload with a gap, in
/// the verdict's workload order; replay packages link to `artifact_url`.
pub(super) fn gap_sections(verdict: &Verdict, artifact_url: Option<&str>) -> Vec<GapSection> {
    let url = artifact_url.filter(|u| plain_url(u));
    verdict
        .workloads
        .iter()
        .filter(|w| w.cross_platform)
        .filter_map(|w| {
            let mut gaps: Vec<&Finding> = verdict
                .findings
                .iter()
                .filter(|f| f.workload == w.name && f.is_platform_gap())
                .collect();
            if gaps.is_empty() {
                return None;
            }
            gaps.sort_by(|a, b| beyond(b).total_cmp(&beyond(a)));
            let hardware = |h: &Option<String>| h.clone().unwrap_or_else(|| NONE.to_string());
            let candidate = hardware(&w.candidate.hardware);
            Some(GapSection {
                workload: shorten(&w.name, 100),
                platforms: shorten(
                    &format!("{} → {candidate}", hardware(&w.baseline.hardware)),
                    80,
                ),
                candidate: shorten(&candidate, 40),
                more: gaps.len().saturating_sub(GAPS_SHOWN),
                learning: w
                    .notes
                    .iter()
                    .find_map(|n| n.find(LEARNING).map(|at| shorten(&n[at..], 300))),
                rows: gaps.iter().take(GAPS_SHOWN).map(|f| row(f, url)).collect(),
            })
        })
        .collect()
}

/// The time beyond the expected ratio, %, for ranking.
fn beyond(f: &Finding) -> f64 {
    f.impact_percent.filter(|v| v.is_finite()).unwrap_or(0.0)
}

fn row(f: &Finding, url: Option<&str>) -> GapRow {
    let measured = 1.0 + f.delta_percent.unwrap_or(0.0) / 100.0;
    let expected = f.expected_ratio.unwrap_or(f64::NAN);
    let efficiency = f
        .statistics
        .efficiency_percent
        .map_or(NONE.to_string(), |(b, c)| {
            format!("{} → {}", share(b), share(c))
        });
    // The package's hash names it within the `replay/` folder.
    let replay = f.replay_package.as_deref().map(|path| {
        let file = path.rsplit('/').next().unwrap_or(path);
        match file.rsplit_once('-') {
            Some((_, hash)) => shorten(hash.trim_end_matches(".tar.gz"), 20),
            None => package_name(path),
        }
    });
    GapRow {
        op: shorten(&f.op.as_ref().map_or(String::new(), |o| o.name.clone()), 60),
        shape: shorten(&compact_dims(shape_of(f)), 40),
        measured: times(measured),
        expected: times(expected),
        behind: format!("{:.1}×", measured / expected),
        efficiency,
        beyond: format!("{:+.1}%", beyond(f)),
        replay_url: replay.as_ref().and(url).map(str::to_string),
        replay: replay.unwrap_or_else(|| NONE.to_string()),
    }
}

/// An efficiency, %: one decimal below 10% (a slow kernel's 0.4% is not 0%).
fn share(percent: f64) -> String {
    if percent < 10.0 {
        format!("{percent:.1}%")
    } else {
        format!("{percent:.0}%")
    }
}
