//! `tracegate history list` and `history show` as terminal tables fitted to
//! a width: the runs, a workload's series with the change from the run
//! before on the same hardware, and its change points per piece of hardware.

use comfy_table::{Cell, CellAlignment};

use crate::history::changepoint::{self, ChangeOptions};
use crate::history::entry::EntryMeta;
use crate::history::series::Point;
use crate::history::window::entry_hardware;

use super::fit::{self, Rule, Wrap};
use super::text::{human_us, printable};

/// A commit as a table shows it: its first 7 characters.
pub fn short(commit: &str) -> String {
    commit.chars().take(7).collect()
}

/// `history list`: the runs `shown`, one row each, and how many.
pub fn list(shown: &[&EntryMeta], width: u16) -> String {
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
    format!("{text}\n{} run(s)\n", shown.len())
}

/// `history show`: `workload`'s `runs` with their `points` (the series of
/// `what`), the change from the run before on the same hardware, and the
/// change points of each piece of hardware's series.
pub fn show(
    workload: &str,
    runs: &[EntryMeta],
    points: &[Point],
    what: &str,
    width: u16,
) -> String {
    let header = ["time", "commit", "branch", "hardware", what, "Δ"];
    let rows: Vec<Vec<String>> = runs
        .iter()
        .zip(points)
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
    let changes = change_lines(runs, points);
    format!("{}\n{text}\n{changes}", printable(workload))
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
