//! `tracegate history`: recording runs in a history directory (the store is
//! `tracegate::history::store`), listing and showing them as terminal
//! tables, pruning; and where a run's commit, branch, PR and run URL come
//! from when the flags leave them out (GitHub Actions' environment).

use comfy_table::{Cell, CellAlignment};

use tracegate::history::changepoint::{self, ChangeOptions};
use tracegate::history::entry::{EntryMeta, Origin};
use tracegate::history::series::{self, Point};
use tracegate::history::store;
use tracegate::history::window::entry_hardware;
use tracegate::render::fit::{self, Rule, Wrap};
use tracegate::render::text::{human_us, printable};

use super::args::{HistoryAddArgs, HistoryCommand, HistoryListArgs, HistoryShowArgs};
use super::history_store::{open, store_failure};
use super::jobs;
use super::rank_check;
use super::read::{self, ReadOptions};
use super::{Failure, emit, history_report, history_store};

/// Runs a `history` subcommand; `width` is the terminal's.
pub(super) fn history_command(command: &HistoryCommand, width: u16) -> Result<u8, Failure> {
    match command {
        HistoryCommand::Add(args) => add(args),
        HistoryCommand::List(args) => list(args, width),
        HistoryCommand::Show(args) => show(args, width),
        HistoryCommand::Report(args) => history_report::report(args),
        HistoryCommand::Fsck(args) => {
            let store = open(&args.dir)?;
            let (text, code) = if args.repair {
                store.repair().map_err(store_failure)?.summary()
            } else {
                store.scan().map_err(store_failure)?.fsck()
            };
            emit(None, &text).map(|()| code)
        }
        HistoryCommand::Prune(args) => {
            let store = open(&args.dir)?;
            let keep = usize::try_from(args.keep).unwrap_or(usize::MAX);
            let pruned = store.prune(keep).map_err(store_failure)?;
            history_store::warn(&pruned.scan);
            emit(
                None,
                &format!(
                    "kept {} run(s), removed {} (the newest {keep} of each workload kept)\n",
                    pruned.kept.len(),
                    pruned.removed.len()
                ),
            )
            .map(|()| 0)
        }
    }
}

fn add(args: &HistoryAddArgs) -> Result<u8, Failure> {
    let origin = origin(args, &history_store::env_value)?;
    let store = open(&args.dir)?;
    let options = args.hardware.options()?;
    let read = ReadOptions {
        quiet: args.quiet,
        limits: args.load.limits(),
        jobs: args.jobs.jobs(),
        ranks: args.ranks,
        rank_regex: super::ranks::rank_regex_of(&args.rank, args.ranks)?,
    };
    let mut snapshots = jobs::read_all(
        &args.inputs,
        read.jobs,
        read.quiet,
        |p| jobs::file_size(p),
        |input, quiet| {
            let read = read.with_quiet(quiet);
            if read.ranks {
                rank_check::rank_set(input, None, &options, &read)
            } else {
                read::snapshot_of_input(input, None, &options, &read)
            }
        },
    )?;
    let mut text = String::new();
    // Added in input order; the runs before a failed input stay added.
    for _ in &args.inputs {
        let snapshot = snapshots.next().expect("one result per input")?;
        let entry = store
            .add(&snapshot, origin.clone())
            .map_err(store_failure)?;
        text.push_str(&format!(
            "added {} at {} ({}): {}\n",
            printable(&entry.workload),
            printable(&short(&entry.commit)),
            entry.time,
            args.dir.join(&entry.file).display()
        ));
    }
    emit(None, &text).map(|()| 0)
}

/// The run's origin: the flags, else GitHub Actions' environment (read
/// through `env`); no commit at all is an error naming the flag.
fn origin(args: &HistoryAddArgs, env: &dyn Fn(&str) -> Option<String>) -> Result<Origin, Failure> {
    let commit = args
        .commit
        .clone()
        .or_else(|| env("GITHUB_SHA"))
        .ok_or_else(|| {
            Failure::input(
                "history add: no commit known: pass --commit SHA (GitHub Actions sets GITHUB_SHA)",
            )
        })?;
    let branch = args
        .branch
        .clone()
        .or_else(|| env("GITHUB_HEAD_REF"))
        .or_else(|| env("GITHUB_REF_NAME"));
    let pr = args.pr.or_else(|| {
        env("GITHUB_REF")?
            .strip_prefix("refs/pull/")?
            .strip_suffix("/merge")?
            .parse()
            .ok()
    });
    let run_url = args.run_url.clone().or_else(|| {
        Some(format!(
            "{}/{}/actions/runs/{}",
            env("GITHUB_SERVER_URL")?,
            env("GITHUB_REPOSITORY")?,
            env("GITHUB_RUN_ID")?
        ))
    });
    let time = match &args.time {
        Some(text) => store::parse_time(text)
            .map_err(|e| Failure::input(format!("--time: {e}")))?
            .to_rfc3339(),
        None => String::new(),
    };
    Ok(Origin {
        commit,
        branch,
        time,
        pr,
        run_url,
    })
}

/// A commit as a table shows it: its first 7 characters.
fn short(commit: &str) -> String {
    commit.chars().take(7).collect()
}

fn list(args: &HistoryListArgs, width: u16) -> Result<u8, Failure> {
    let (_, entries) = history_store::entries(&args.dir)?;
    let shown: Vec<&EntryMeta> = entries
        .iter()
        .filter(|e| args.workload.as_ref().is_none_or(|w| *w == e.workload))
        .filter(|e| on_branch(e, args.branch.as_deref()))
        .collect();
    if shown.is_empty() {
        return emit(None, &format!("no runs in {} match\n", args.dir.display())).map(|()| 0);
    }
    let header = [
        "time",
        "commit",
        "branch",
        "workload",
        "hardware",
        "computation/step",
    ];
    let rows: Vec<Vec<String>> = shown
        .iter()
        .map(|e| {
            vec![
                e.time.clone(),
                printable(&short(&e.commit)),
                printable(e.branch.as_deref().unwrap_or("—")),
                printable(&e.workload),
                printable(&entry_hardware(e)),
                human_us(e.computation_per_step_us()),
            ]
        })
        .collect();
    let rules = [
        Rule::Fixed,
        Rule::Fixed,
        name(6),
        name(8),
        name(8),
        Rule::Fixed,
    ];
    let text = draw(&header, rows, &rules, &[5], width);
    emit(None, &format!("{text}\n{} run(s)\n", shown.len())).map(|()| 0)
}

fn show(args: &HistoryShowArgs, width: u16) -> Result<u8, Failure> {
    let (store, entries) = history_store::entries(&args.dir)?;
    let runs: Vec<EntryMeta> = entries
        .iter()
        .filter(|e| e.workload == args.workload)
        .filter(|e| on_branch(e, args.branch.as_deref()))
        .cloned()
        .collect();
    if runs.is_empty() {
        let mut known: Vec<&str> = entries.iter().map(|e| e.workload.as_str()).collect();
        known.sort_unstable();
        known.dedup();
        return Err(Failure::input(format!(
            "{}: no runs of workload `{}`{} (workloads: {})",
            args.dir.display(),
            args.workload,
            args.branch
                .as_ref()
                .map_or(String::new(), |b| format!(" on branch `{b}`")),
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            }
        )));
    }
    let (points, what) = match &args.op {
        None => (
            series::workload_series(&runs),
            "computation/step".to_string(),
        ),
        Some(op) => {
            let loaded = runs
                .iter()
                .filter_map(|e| {
                    history_store::load(&store, e)
                        .map(|s| Some((e.clone(), s?)))
                        .transpose()
                })
                .collect::<Result<Vec<_>, Failure>>()?;
            if !loaded
                .iter()
                .any(|(_, s)| series::op_times_per_step(s).contains_key(op))
            {
                return Err(Failure::input(format!(
                    "--op {op}: in none of the {} run(s) of `{}` (an exact op name, as `report` lists it)",
                    runs.len(),
                    args.workload
                )));
            }
            (series::op_series(&loaded, op), format!("{op} /step"))
        }
    };
    let header = ["time", "commit", "branch", "hardware", what.as_str(), "Δ"];
    let rows: Vec<Vec<String>> = runs
        .iter()
        .zip(&points)
        .enumerate()
        .map(|(i, (entry, point))| {
            vec![
                point.time.clone(),
                printable(&short(&point.commit)),
                printable(entry.branch.as_deref().unwrap_or("—")),
                printable(&entry_hardware(entry)),
                human_us(point.value_us),
                // Against the run before on the same hardware.
                change(
                    (0..i)
                        .rev()
                        .find(|&p| entry_hardware(&runs[p]) == entry_hardware(entry))
                        .map(|p| &points[p]),
                    point,
                ),
            ]
        })
        .collect();
    let rules = [
        Rule::Fixed,
        Rule::Fixed,
        name(6),
        name(8),
        Rule::Fixed,
        Rule::Fixed,
    ];
    let text = draw(&header, rows, &rules, &[4, 5], width);
    let changes = change_lines(&runs, &points);
    emit(
        None,
        &format!("{}\n{text}\n{changes}", printable(&args.workload)),
    )
    .map(|()| 0)
}

/// The change points of the series, one line per piece of hardware (a
/// series only compares runs on the same GPU): the label, and the newest
/// step with its commits, levels and change.
fn change_lines(runs: &[EntryMeta], points: &[Point]) -> String {
    let mut keys: Vec<String> = runs.iter().map(entry_hardware).collect();
    keys.dedup();
    keys.sort_unstable();
    keys.dedup();
    let mut text = String::new();
    for key in &keys {
        let series: Vec<Point> = runs
            .iter()
            .zip(points)
            .filter(|(entry, _)| entry_hardware(entry) == *key)
            .map(|(_, point)| point.clone())
            .collect();
        let detection = changepoint::detect_points(&series, &ChangeOptions::default());
        let step = detection.steps.last().map_or(String::new(), |step| {
            let commits = step.commits.as_ref().map_or(String::new(), |c| {
                format!(
                    " between {} and {}",
                    printable(&short(&c.last_before)),
                    printable(&short(&c.first_after))
                )
            });
            format!(
                ": a step at run #{}{commits}, {} → {} ({:+.1}%){}",
                step.index + 1,
                human_us(step.before),
                human_us(step.after),
                step.change_percent,
                if step.confirmed {
                    ""
                } else {
                    ", not yet confirmed"
                },
            )
        });
        let on = if keys.len() > 1 {
            format!(" on {}", printable(key))
        } else {
            String::new()
        };
        text.push_str(&format!(
            "change points{on}: {}{step}\n",
            detection.label.as_str()
        ));
    }
    text
}

/// The change from the run before, `+1.5%`; `—` for the first run or from
/// zero.
fn change(previous: Option<&Point>, point: &Point) -> String {
    match previous {
        Some(previous) if previous.value_us > 0.0 => {
            format!(
                "{:+.1}%",
                (point.value_us / previous.value_us - 1.0) * 100.0
            )
        }
        _ => "—".to_string(),
    }
}

/// A column of names (branch, workload, hardware), wrapped at their
/// boundaries, at least `min` wide.
fn name(min: usize) -> Rule {
    Rule::Wrap(Wrap {
        breaks: fit::NAME_BREAKS,
        ..Wrap::new(min)
    })
}

/// Whether the entry is on `branch` (any entry when `None`).
fn on_branch(entry: &EntryMeta, branch: Option<&str>) -> bool {
    branch.is_none_or(|b| entry.branch.as_deref() == Some(b))
}

/// A table fitted to `width` (wrapped by comfy-table when even the
/// narrowest columns do not fit), `numbers` right-aligned.
fn draw(
    header: &[&str],
    rows: Vec<Vec<String>>,
    rules: &[Rule],
    numbers: &[usize],
    width: u16,
) -> String {
    let (mut table, rows) = match fit::fit(header, &rows, rules, width) {
        Some(fitted) => (fit::table(header, false, None), fitted),
        None => (fit::table(header, false, Some(width)), rows),
    };
    for row in rows {
        table.add_row(row.into_iter().map(Cell::new));
    }
    for &index in numbers {
        if let Some(column) = table.column_mut(index) {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    table.to_string()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::cli::args::{HardwareArgs, JobsArgs, LoadArgs, RankRegexArgs};

    fn args(commit: Option<&str>) -> HistoryAddArgs {
        HistoryAddArgs {
            dir: "h".into(),
            commit: commit.map(str::to_string),
            branch: None,
            pr: None,
            run_url: None,
            time: None,
            inputs: vec!["t.json".into()],
            ranks: false,
            rank: RankRegexArgs { rank_regex: None },
            quiet: true,
            jobs: JobsArgs { jobs: None },
            hardware: HardwareArgs {
                hardware: None,
                hardware_file: None,
            },
            load: LoadArgs {
                max_event_bytes: 1 << 20,
                allow_special_files: false,
            },
        }
    }

    #[test]
    fn the_origin_comes_from_github_actions_unless_given() {
        let vars: BTreeMap<&str, &str> = [
            ("GITHUB_SHA", "0123456789abcdef"),
            ("GITHUB_HEAD_REF", "feature"),
            ("GITHUB_REF_NAME", "12/merge"),
            ("GITHUB_REF", "refs/pull/12/merge"),
            ("GITHUB_SERVER_URL", "https://github.com"),
            ("GITHUB_REPOSITORY", "o/r"),
            ("GITHUB_RUN_ID", "99"),
        ]
        .into_iter()
        .collect();
        let env = |name: &str| vars.get(name).map(|v| v.to_string());
        let Ok(origin) = origin(&args(None), &env) else {
            panic!("an origin")
        };
        assert_eq!(origin.commit, "0123456789abcdef");
        assert_eq!(origin.branch.as_deref(), Some("feature"));
        assert_eq!(origin.pr, Some(12));
        assert_eq!(
            origin.run_url.as_deref(),
            Some("https://github.com/o/r/actions/runs/99")
        );
        assert_eq!(origin.time, "");
        let mut given = args(Some("abc"));
        given.branch = Some("main".to_string());
        given.time = Some("2026-01-01T01:00:00+01:00".to_string());
        let Ok(origin) = super::origin(&given, &env) else {
            panic!("an origin")
        };
        assert_eq!(
            (origin.commit.as_str(), origin.branch.as_deref()),
            ("abc", Some("main"))
        );
        assert_eq!(origin.time, "2026-01-01T00:00:00+00:00");
    }

    #[test]
    fn without_a_commit_the_flag_is_named() {
        let failure = origin(&args(None), &|_| None).err().unwrap();
        assert_eq!(failure.code, 2);
        assert!(failure.message.contains("--commit"), "{}", failure.message);
        let mut bad = args(Some("abc"));
        bad.time = Some("noon".to_string());
        let failure = origin(&bad, &|_| None).err().unwrap();
        assert!(
            failure.message.starts_with("--time: time `noon`"),
            "{}",
            failure.message
        );
    }
}
