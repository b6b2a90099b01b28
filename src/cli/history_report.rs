//! `tracegate history report`: reads every run of the history's branch
//! with its snapshot, lets the library build the dashboard (change points
//! included), and writes the site's files.

use std::collections::BTreeMap;
use std::fs;

use tracegate::history::dashboard;
use tracegate::history::entry::EntryMeta;
use tracegate::history::report::{PairSeries, RunSeries, site_input};
use tracegate::history::window::{self, PairQuery};

use super::args::HistoryReportArgs;
use super::history_store::{self, env_value, load, open, store_failure};
use super::{Failure, emit};

/// Writes the dashboard of the history at `args.dir` to `args.out`.
pub(super) fn report(args: &HistoryReportArgs) -> Result<u8, Failure> {
    let store = open(&args.dir)?;
    let scan = store.scan().map_err(store_failure)?;
    history_store::warn(&scan);
    let entries: Vec<EntryMeta> = scan
        .entries
        .into_iter()
        .filter(|e| e.branch.as_deref() == Some(args.branch.as_str()))
        .collect();
    // Each workload's series per piece of hardware, in first-seen order.
    let mut by_workload: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for entry in &entries {
        let hardware = window::entry_hardware(entry);
        let known = by_workload.entry(entry.workload.clone()).or_default();
        if !known.contains(&hardware) {
            known.push(hardware);
        }
    }
    let mut series = Vec::new();
    let mut pairs = Vec::new();
    for (workload, hardware) in &by_workload {
        for key in hardware {
            let name = if hardware.len() > 1 {
                format!("{workload} · {key}")
            } else {
                workload.clone()
            };
            let runs = entries
                .iter()
                .filter(|e| e.workload == *workload && window::entry_hardware(e) == *key)
                .filter_map(|e| load(&store, e).map(|s| Some((e.clone(), s?))).transpose())
                .collect::<Result<Vec<_>, Failure>>()?;
            series.push(RunSeries { name, runs });
        }
        // The first hardware recorded is the reference of the others.
        for candidate in hardware.iter().skip(1) {
            let query = PairQuery {
                workload,
                baseline_hardware: &hardware[0],
                candidate_hardware: candidate,
                branch: &args.branch,
                exclude_commit: None,
                size: usize::MAX,
            };
            let chosen = window::pair_window(&entries, &query);
            if chosen.is_empty() {
                continue;
            }
            let mut loaded = Vec::with_capacity(chosen.len());
            for (b, c) in chosen {
                if let (Some(bs), Some(cs)) = (load(&store, b)?, load(&store, c)?) {
                    loaded.push(((b.clone(), bs), (c.clone(), cs)));
                }
            }
            pairs.push(PairSeries {
                name: format!("{workload}: {} → {candidate}", hardware[0]),
                pairs: loaded,
            });
        }
    }
    let repository = args.repository.clone().or_else(|| {
        Some(format!(
            "{}/{}",
            env_value("GITHUB_SERVER_URL")?,
            env_value("GITHUB_REPOSITORY")?
        ))
    });
    let footer = format!(
        "tracegate {} · {} run(s) on `{}`",
        env!("CARGO_PKG_VERSION"),
        entries.len(),
        args.branch
    );
    let input = site_input(&series, &pairs, repository, footer);
    let files = dashboard::site(&input);
    for file in &files {
        let path = args.out.join(&file.path);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(|e| {
                Failure::input(format!(
                    "{}: cannot create directory: {e}",
                    parent.display()
                ))
            })?;
        }
        fs::write(&path, &file.contents)
            .map_err(|e| Failure::input(format!("{}: cannot write: {e}", path.display())))?;
    }
    emit(
        None,
        &format!(
            "wrote {} ({} workload page(s), {} pair page(s)) from {} run(s) on `{}`\n",
            args.out.join("index.html").display(),
            series.len(),
            pairs.len(),
            entries.len(),
            args.branch
        ),
    )
    .map(|()| 0)
}
