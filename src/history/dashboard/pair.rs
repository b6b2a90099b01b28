//! A cross-platform pair's page: each op's ratio between the platforms over
//! the scheduled comparisons, with its noise band, change mark and the
//! ratio expected without history.

use super::band::band;
use super::html::{Figure, change_text, esc, number, page as shell, points_table, run_cells};
use super::{PairInput, TOP_OPS};

/// The table's columns before the ratios: #, commit, run, time.
const LEADING_COLUMNS: usize = 4;

/// The pair's page.
pub fn page(pair: &PairInput, repository: Option<&str>, footer: &str) -> String {
    let commits: Vec<&str> = pair.runs.iter().map(|r| r.commit.as_str()).collect();
    let mut body = format!("<h1>{}</h1>\n", esc(&pair.name));
    body.push_str(&format!(
        "<p>{} comparisons · the ratio of each op's GPU time on the second platform to the first; the dashed line is the ratio expected without history (roofline) · click a point to open its run (or commit).</p>\n<div class=\"grid\">\n",
        pair.runs.len()
    ));
    for (index, op) in pair.ops.iter().take(TOP_OPS).enumerate() {
        let ratios = &op.ratios[..op.ratios.len().min(pair.runs.len())];
        let op_band = band(
            ratios,
            op.change
                .as_ref()
                .and_then(|c| c.step.as_ref())
                .map(|s| s.index),
        );
        body.push_str(
            &Figure {
                name: &op.op,
                column: LEADING_COLUMNS + index,
                points: ratios.iter().flatten().count(),
                band: &op_band,
                change: op.change.as_ref(),
                expected: op.expected,
                unit: "×",
                note: change_text(op.change.as_ref(), &commits, "×"),
            }
            .html(),
        );
    }
    body.push_str("</div>\n");

    let mut header = String::from(
        "<th scope=\"col\">#</th><th scope=\"col\">commit</th><th scope=\"col\">run</th><th scope=\"col\">time (UTC)</th>",
    );
    for op in pair.ops.iter().take(TOP_OPS) {
        header.push_str(&format!("<th scope=\"col\">{} (×)</th>", esc(&op.op)));
    }
    let mut rows = String::new();
    for (index, run) in pair.runs.iter().enumerate() {
        rows.push_str(&format!(
            "<tr><td>{}</td>{}",
            index + 1,
            run_cells(repository, &run.commit, run.run_url.as_deref(), &run.time)
        ));
        for op in pair.ops.iter().take(TOP_OPS) {
            let value = op
                .ratios
                .get(index)
                .copied()
                .flatten()
                .map(number)
                .unwrap_or_default();
            rows.push_str(&format!("<td>{value}</td>"));
        }
        rows.push_str("</tr>\n");
    }
    body.push_str(&points_table(
        &format!("The {} comparisons as a table", pair.runs.len()),
        &header,
        &rows,
    ));
    shell(&pair.name, "../", true, &body, footer)
}
