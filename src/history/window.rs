//! Which earlier runs a candidate is compared with: the newest runs of the
//! same workload, on the same hardware, on the target branch, its own
//! commit left out (`check --history`'s baseline window).

use super::entry::EntryMeta;

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
/// (`entries` are oldest first, as the store lists them).
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
    let skip = matching.len().saturating_sub(query.size);
    matching[skip..].to_vec()
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
}
