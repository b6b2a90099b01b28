//! A workload's page (its GPU time per step, then its top ops, all drawn
//! from one points table) and its row on the index.

use super::band::band;
use super::html::{
    Figure, badge, change_text, duration, esc, number, page as shell, percent, points_table,
    run_cells, short_commit,
};
use super::{OpInput, WorkloadInput};

/// The table's columns before the values: #, commit, run, time, environment.
const LEADING_COLUMNS: usize = 5;

/// The workload's row on the index: latest value, its change from the run
/// before, the label, the latest commit and environment.
pub fn index_row(workload: &WorkloadInput, path: &str) -> String {
    let link = format!("<a href=\"{path}\">{}</a>", esc(&workload.workload));
    let values: Vec<f64> = workload
        .runs
        .iter()
        .map(|r| r.computation_per_step_us())
        .collect();
    let (latest, previous) = match values.as_slice() {
        [.., previous, latest] => (duration(*latest), percent(*previous, *latest)),
        [latest] => (duration(*latest), String::new()),
        [] => (String::new(), String::new()),
    };
    let (commit, environment) = match workload.runs.last() {
        Some(run) => (
            format!("<code>{}</code>", esc(short_commit(&run.commit))),
            esc(&run.environment()),
        ),
        None => (String::new(), String::new()),
    };
    format!(
        "<tr><td>{link}</td><td>{}</td><td class=\"num\">{latest}</td><td class=\"num\">{previous}</td><td>{}</td><td>{commit}</td><td>{environment}</td></tr>\n",
        workload.runs.len(),
        badge(workload.change.as_ref()),
    )
}

/// The workload's page.
pub fn page(workload: &WorkloadInput, repository: Option<&str>, footer: &str) -> String {
    let runs = &workload.runs;
    let commits: Vec<&str> = runs.iter().map(|r| r.commit.as_str()).collect();
    let totals: Vec<Option<f64>> = runs
        .iter()
        .map(|r| Some(r.computation_per_step_us()))
        .collect();
    let mut body = format!("<h1>{}</h1>\n", esc(&workload.workload));
    let environments = runs
        .windows(2)
        .filter(|w| w[0].environment() != w[1].environment())
        .count();
    body.push_str(&format!(
        "<p>{} runs · latest environment: {} · {} environment change{} (dashed grey lines) · click a point to open its run (or commit).</p>\n",
        runs.len(),
        runs.last().map(|r| esc(&r.environment())).unwrap_or_default(),
        environments,
        if environments == 1 { "" } else { "s" },
    ));

    let total_band = band(&totals, step_of(workload.change.as_ref()));
    body.push_str(
        &Figure {
            name: "GPU computation time per step",
            column: LEADING_COLUMNS,
            points: runs.len(),
            band: &total_band,
            change: workload.change.as_ref(),
            expected: None,
            unit: "µs",
            note: change_text(workload.change.as_ref(), &commits, " µs"),
        }
        .html(),
    );
    body.push_str(&points_table(
        &format!("The {} runs as a table", runs.len()),
        &header(&workload.ops),
        &rows(workload, repository),
    ));

    if !workload.ops.is_empty() {
        body.push_str(&format!(
            "<h2>Top {} ops (GPU time per step in the newest run)</h2>\n<div class=\"grid\">\n",
            workload.ops.len()
        ));
        for (index, op) in workload.ops.iter().enumerate() {
            let values: Vec<Option<f64>> = op.values_us.iter().map(|v| Some(*v)).collect();
            let op_band = band(&values, step_of(op.change.as_ref()));
            body.push_str(
                &Figure {
                    name: &op.name,
                    column: LEADING_COLUMNS + 1 + index,
                    points: op.values_us.len().min(runs.len()),
                    band: &op_band,
                    change: op.change.as_ref(),
                    expected: None,
                    unit: "µs",
                    note: change_text(op.change.as_ref(), &commits, " µs"),
                }
                .html(),
            );
        }
        body.push_str("</div>\n");
    }
    shell(&workload.workload, "../", true, &body, footer)
}

/// The first run after a marked step.
fn step_of(change: Option<&super::ChangeMark>) -> Option<usize> {
    change.and_then(|c| c.step.as_ref()).map(|s| s.index)
}

/// The points table's header: run columns, the total, one column per op.
fn header(ops: &[OpInput]) -> String {
    let mut out = String::from(
        "<th scope=\"col\">#</th><th scope=\"col\">commit</th><th scope=\"col\">run</th><th scope=\"col\">time (UTC)</th><th scope=\"col\">environment (when changed)</th><th scope=\"col\">GPU time / step (µs)</th>",
    );
    for op in ops {
        out.push_str(&format!("<th scope=\"col\">{} (µs)</th>", esc(&op.name)));
    }
    out
}

/// One row per run; a run whose environment differs from the run before
/// carries `data-env` and names its environment.
fn rows(workload: &WorkloadInput, repository: Option<&str>) -> String {
    let mut out = String::with_capacity(workload.runs.len() * (200 + 12 * workload.ops.len()));
    let mut previous: Option<String> = None;
    for (index, run) in workload.runs.iter().enumerate() {
        let environment = run.environment();
        let changed = previous.as_ref().is_some_and(|p| *p != environment);
        let shown = if previous.is_none() || changed {
            esc(&environment)
        } else {
            String::new()
        };
        out.push_str(if changed { "<tr data-env>" } else { "<tr>" });
        out.push_str(&format!(
            "<td>{}</td>{}<td>{shown}</td><td>{}</td>",
            index + 1,
            run_cells(repository, &run.commit, run.run_url.as_deref(), &run.time),
            number(run.computation_per_step_us()),
        ));
        for op in &workload.ops {
            let value = op
                .values_us
                .get(index)
                .map(|v| number(*v))
                .unwrap_or_default();
            out.push_str(&format!("<td>{value}</td>"));
        }
        out.push_str("</tr>\n");
        previous = Some(environment);
    }
    out
}
