//! Which earlier runs a candidate is compared with: the newest runs of the
//! same workload, on the same hardware, on the target branch, its own
//! commit left out (`check --history`'s baseline window).

use super::changepoint::{self, ChangeOptions};
use super::entry::EntryMeta;
use super::series::workload_series;

/// What the window is chosen by.
#[derive(Clone, Debug, PartialEq)]
pub struct WindowQuery<'a> {
    /// The workload.
    pub workload: &'a str,
    /// The candidate's [`hardware_key`].
    pub hardware: &'a str,
    /// The target branch (the policy's `history.branch`).
    pub branch: &'a str,
    /// The candidate's commit, left out (a re-run of a recorded commit must
    /// not be its own baseline).
    pub exclude_commit: Option<&'a str>,
    /// The most runs (the policy's `history.window`).
    pub size: usize,
}

/// The key runs are compared within: the catalog hardware, else the GPUs
/// as text.
pub fn hardware_key(hardware: Option<&str>, gpus: &str) -> String {
    hardware.unwrap_or(gpus).to_string()
}

/// An entry's [`hardware_key`].
pub fn entry_hardware(entry: &EntryMeta) -> String {
    hardware_key(entry.hardware.as_deref(), &entry.gpus)
}

/// Whether two commits name the same one: equal, or one an abbreviation
/// (at least 7 characters) of the other.
pub fn same_commit(a: &str, b: &str) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    short == long || (short.len() >= 7 && long.starts_with(short))
}

/// The window: the newest `size` entries matching the query, oldest first
/// (`entries` are oldest first, as the store lists them), all after the
/// last confirmed change point of their computation time per step
/// ([`changepoint`]): a window never mixes runs from both sides of a step.
pub fn baseline_window<'a>(entries: &'a [EntryMeta], query: &WindowQuery) -> Vec<&'a EntryMeta> {
    let matching: Vec<&EntryMeta> = entries
        .iter()
        .filter(|e| e.workload == query.workload)
        .filter(|e| e.branch.as_deref() == Some(query.branch))
        .filter(|e| entry_hardware(e) == query.hardware)
        .filter(|e| {
            query
                .exclude_commit
                .is_none_or(|c| !same_commit(&e.commit, c))
        })
        .collect();
    let owned: Vec<EntryMeta> = matching.iter().map(|e| (*e).clone()).collect();
    let detection = changepoint::detect_points(&workload_series(&owned), &ChangeOptions::default());
    let since = detection
        .steps
        .iter()
        .filter(|step| step.confirmed)
        .map(|step| step.index)
        .max()
        .unwrap_or(0);
    let skip = matching.len().saturating_sub(query.size).max(since);
    matching[skip..].to_vec()
}

/// What a cross-platform pair window is chosen by: the workload recorded
/// on both pieces of hardware at the same commits.
#[derive(Clone, Debug, PartialEq)]
pub struct PairQuery<'a> {
    /// The workload.
    pub workload: &'a str,
    /// The baseline platform's [`hardware_key`].
    pub baseline_hardware: &'a str,
    /// The candidate platform's [`hardware_key`].
    pub candidate_hardware: &'a str,
    /// The branch both were recorded on (the policy's `history.branch`).
    pub branch: &'a str,
    /// Today's commit, left out (its runs are being judged).
    pub exclude_commit: Option<&'a str>,
    /// The most pairs (the policy's `history.window`).
    pub size: usize,
}

/// The earlier comparisons of two platforms: for each commit that has a run
/// on both (the newest run of each when there are several), the pair
/// (baseline platform, candidate platform); the newest `size` commits,
/// oldest first. Learned cross-platform ratios come from these.
pub fn pair_window<'a>(
    entries: &'a [EntryMeta],
    query: &PairQuery,
) -> Vec<(&'a EntryMeta, &'a EntryMeta)> {
    // Every run of the workload on one piece of hardware, oldest first.
    let runs_on = |hardware: &str| {
        let every_run = WindowQuery {
            workload: query.workload,
            hardware,
            branch: query.branch,
            exclude_commit: query.exclude_commit,
            size: usize::MAX,
        };
        baseline_window(entries, &every_run)
    };
    let baselines = runs_on(query.baseline_hardware);
    let mut pairs: Vec<(&EntryMeta, &EntryMeta)> = Vec::new();
    // Oldest first: the last match of a commit is its newest run.
    for candidate in runs_on(query.candidate_hardware) {
        let Some(&baseline) = baselines
            .iter()
            .rev()
            .find(|e| same_commit(&e.commit, &candidate.commit))
        else {
            continue;
        };
        match pairs
            .iter_mut()
            .find(|(_, c)| same_commit(&c.commit, &candidate.commit))
        {
            Some(pair) => *pair = (baseline, candidate),
            None => pairs.push((baseline, candidate)),
        }
    }
    let skip = pairs.len().saturating_sub(query.size);
    pairs.split_off(skip)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(commit: &str, branch: &str, hardware: &str) -> EntryMeta {
        EntryMeta {
            workload: "bert".to_string(),
            commit: commit.to_string(),
            branch: Some(branch.to_string()),
            time: String::new(),
            pr: None,
            run_url: None,
            hardware: Some(hardware.to_string()).filter(|h| !h.is_empty()),
            gpus: "1 × GPU".to_string(),
            runtime: None,
            pytorch: None,
            steps: 1,
            computation_time_us: 1.0,
            busy_time_us: 1.0,
            file: String::new(),
        }
    }

    #[test]
    fn the_window_is_the_newest_matching_runs_without_the_candidate() {
        let entries = vec![
            entry("c1", "main", "H100 SXM"),
            entry("c2", "main", "H100 SXM"),
            entry("c3", "feature", "H100 SXM"),
            entry("c4", "main", "MI300X"),
            entry("c5", "main", "H100 SXM"),
            entry("c6aaaaaaaa", "main", "H100 SXM"),
        ];
        let query = WindowQuery {
            workload: "bert",
            hardware: "H100 SXM",
            branch: "main",
            exclude_commit: Some("c6aaaaa"),
            size: 2,
        };
        let commits: Vec<&str> = baseline_window(&entries, &query)
            .iter()
            .map(|e| e.commit.as_str())
            .collect();
        assert_eq!(commits, ["c2", "c5"]);
        let other = WindowQuery {
            workload: "gpt",
            ..query.clone()
        };
        assert!(baseline_window(&entries, &other).is_empty());
        let unknown = [entry("c1", "main", "")];
        let by_gpus = WindowQuery {
            hardware: "1 × GPU",
            ..query
        };
        assert_eq!(baseline_window(&unknown, &by_gpus).len(), 1);
    }

    #[test]
    fn abbreviated_commits_are_the_same_commit() {
        assert!(same_commit("0123456789", "0123456"));
        assert!(same_commit("abc", "abc"));
        assert!(!same_commit("abc", "abcdef"));
        assert!(!same_commit("0123456", "0123457aa"));
    }

    #[test]
    fn pairs_are_commits_recorded_on_both_platforms_newest_run_each() {
        let entries = vec![
            entry("c1", "main", "H100 SXM"),
            entry("c1", "main", "MI300X"),
            entry("c2", "main", "H100 SXM"),
            entry("c3", "main", "MI300X"),
            entry("c3", "main", "H100 SXM"),
            entry("c3", "main", "MI300X"),
            entry("c4", "pr", "H100 SXM"),
            entry("c4", "pr", "MI300X"),
            entry("c5", "main", "H100 SXM"),
            entry("c5", "main", "MI300X"),
        ];
        let mut query = PairQuery {
            workload: "bert",
            baseline_hardware: "H100 SXM",
            candidate_hardware: "MI300X",
            branch: "main",
            exclude_commit: Some("c5"),
            size: 10,
        };
        let pairs = pair_window(&entries, &query);
        let commits: Vec<(&str, &str)> = pairs
            .iter()
            .map(|(b, c)| (b.commit.as_str(), c.commit.as_str()))
            .collect();
        // c2 has no MI300X run, c4 is another branch, c5 is today's.
        assert_eq!(commits, [("c1", "c1"), ("c3", "c3")]);
        // c3's newest MI300X run is the sixth entry.
        assert!(std::ptr::eq(pairs[1].1, &entries[5]));
        assert!(
            pairs
                .iter()
                .all(|(b, c)| b.hardware.as_deref() == Some("H100 SXM")
                    && c.hardware.as_deref() == Some("MI300X"))
        );
        query.size = 1;
        assert_eq!(pair_window(&entries, &query).len(), 1);
        assert_eq!(pair_window(&entries, &query)[0].0.commit, "c3");
    }
}
