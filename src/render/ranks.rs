//! The rank-set report (`report DIR`): the ranks read with their GPU and
//! communication time (hidden under computation, exposed), the collectives
//! table with bus bandwidth against the link, and the straggler table, for
//! the terminal, as Markdown, and as JSON under `ranks` (docs/REPORT.md,
//! "Rank sets").

use std::fmt::Write;

use super::fit::{NAME_BREAKS, Rule, Wrap};
use super::terminal::{Style, fitted};
use super::text::{escape, human_us, printable};
use crate::analysis::ranks::{CollectiveRow, CommTime, RankSet, RankSource, StragglerRow};

/// Pretty-printed JSON, `{"ranks": …}`, newline-terminated.
pub fn json(set: &RankSet) -> String {
    let mut text = serde_json::to_string_pretty(&serde_json::json!({ "ranks": set }))
        .expect("a rank set serialises");
    text.push('\n');
    text
}

/// `bytes` for people: `2.00 MiB`.
fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.2} {}", UNITS[unit])
    }
}

/// A figure with one decimal, `-` when unknown.
fn one_decimal(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_string(), |v| format!("{v:.1}"))
}

/// A time cell of a rank's communication split, `-` when unknown.
fn comm_cell(comm: Option<CommTime>, part: fn(CommTime) -> f64) -> String {
    comm.map_or_else(|| "-".to_string(), |c| human_us(part(c)))
}

/// The ranks table's header and cells (both text formats).
const RANK_HEADER: [&str; 7] = [
    "rank",
    "trace",
    "GPU",
    "comm kernels",
    "comm",
    "hidden",
    "exposed",
];

fn rank_cells(r: &RankSource, text: fn(&str) -> String) -> Vec<String> {
    vec![
        r.rank.to_string(),
        text(&r.source),
        r.hardware
            .as_deref()
            .map_or_else(|| "unknown".to_string(), text),
        r.comm_kernels.to_string(),
        comm_cell(r.comm_time, |c| c.total_us),
        comm_cell(r.comm_time, |c| c.overlapped_us),
        comm_cell(r.comm_time, |c| c.exposed_us),
    ]
}

const COLLECTIVE_HEADER: [&str; 10] = [
    "name", "calls", "ranks", "total", "mean", "skew", "data", "algbw", "busbw", "% link",
];

fn collective_cells(c: &CollectiveRow) -> Vec<String> {
    vec![
        c.collective.name().to_string(),
        c.count.to_string(),
        c.group_size.to_string(),
        human_us(c.total_us),
        human_us(c.mean_us),
        human_us(c.mean_skew_us),
        c.bytes.map_or_else(|| "-".to_string(), human_bytes),
        one_decimal(c.algbw_gbps),
        one_decimal(c.busbw_gbps),
        one_decimal(c.busbw_link_pct),
    ]
}

const STRAGGLER_HEADER: [&str; 6] = [
    "rank",
    "collectives",
    "arrived last",
    "arrived first",
    "others waited",
    "waited",
];

fn straggler_cells(s: &StragglerRow) -> Vec<String> {
    vec![
        s.rank.to_string(),
        s.collectives.to_string(),
        s.last.to_string(),
        s.first.to_string(),
        human_us(s.caused_wait_us),
        human_us(s.waited_us),
    ]
}

/// The lines under the collectives table: the units, and which link the
/// percentage is of (or why there is none).
fn collective_notes(set: &RankSet) -> Vec<String> {
    let mut notes = vec![
        "skew: mean arrival skew; algbw, busbw: GB/s, as nccl-tests defines them".to_string(),
        set.link.note.clone(),
    ];
    if let Some(network) = &set.link.network {
        notes.push(format!(
            "a collective that spans nodes is bound by the network instead: {}, {:.1} GB/s per direction per GPU",
            network.name, network.gb_s
        ));
    }
    notes
}

/// The line saying how many kernels went unmatched, when any did.
fn unmatched_note(set: &RankSet) -> Option<String> {
    (set.unmatched > 0).then(|| {
        format!(
            "{} communication kernels ran on one rank only and were not matched",
            set.unmatched
        )
    })
}

/// The terminal summary of a rank set read from `input` (a directory or a
/// glob).
pub fn terminal(set: &RankSet, input: &str, style: Style) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}",
        style.heading(&format!(
            "tracegate report: rank set {} ({} ranks)",
            printable(input),
            set.ranks.len()
        ))
    );
    let ranks: Vec<Vec<String>> = set.ranks.iter().map(|r| rank_cells(r, printable)).collect();
    let _ = writeln!(out, "\n{}", style.heading("Ranks"));
    let mut rules = [Rule::Fixed; 7];
    rules[1] = Rule::Wrap(PATH);
    let _ = writeln!(out, "{}", fitted(style, &RANK_HEADER, ranks, &rules, 1));
    let _ = writeln!(
        out,
        "comm: communication kernels' union; hidden: under computation; exposed: the rest"
    );

    let _ = writeln!(out, "\n{}", style.heading("Collectives"));
    if set.collectives.is_empty() {
        let _ = writeln!(out, "no collective matched on two ranks or more");
    } else {
        let rows = set.collectives.iter().map(collective_cells).collect();
        let name = Rule::Wrap(Wrap {
            breaks: NAME_BREAKS,
            ..Wrap::new(6)
        });
        let mut rules = [Rule::Fixed; 10];
        rules[0] = name;
        let _ = writeln!(
            out,
            "{}",
            fitted(style, &COLLECTIVE_HEADER, rows, &rules, 1)
        );
        for note in collective_notes(set) {
            let _ = writeln!(out, "{}", printable(&note));
        }
    }

    let _ = writeln!(out, "\n{}", style.heading("Stragglers"));
    let rows = set.stragglers.iter().map(straggler_cells).collect();
    let _ = writeln!(
        out,
        "{}",
        fitted(style, &STRAGGLER_HEADER, rows, &[Rule::Fixed; 6], 0)
    );
    if let Some(note) = unmatched_note(set) {
        let _ = writeln!(out, "\n{note}");
    }
    out
}

/// The rank set as Markdown, under a heading naming `input`.
pub fn markdown(set: &RankSet, input: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# tracegate report: rank set `{}` ({} ranks)",
        escape(input).replace('`', "'"),
        set.ranks.len()
    );
    out.push_str("\n## Ranks\n\n");
    let rows = set.ranks.iter().map(|r| rank_cells(r, escape));
    table(
        &mut out,
        &RANK_HEADER,
        "|---:|---|---|---:|---:|---:|---:|",
        rows,
    );
    out.push_str(
        "\ncomm: the communication kernels' union; hidden: under computation; exposed: the rest.\n",
    );
    out.push_str("\n## Collectives\n\n");
    if set.collectives.is_empty() {
        out.push_str("No collective matched on two ranks or more.\n");
    } else {
        let rows = set.collectives.iter().map(collective_cells);
        let align = "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|";
        table(&mut out, &COLLECTIVE_HEADER, align, rows);
        out.push('\n');
        for note in collective_notes(set) {
            let _ = writeln!(out, "{}.  ", escape(&note));
        }
    }
    out.push_str("\n## Stragglers\n\n");
    let rows = set.stragglers.iter().map(straggler_cells);
    table(
        &mut out,
        &STRAGGLER_HEADER,
        "|---:|---:|---:|---:|---:|---:|",
        rows,
    );
    if let Some(note) = unmatched_note(set) {
        let _ = writeln!(out, "\n{note}.");
    }
    out
}

/// A Markdown table: `header`, the alignment row, one line per row (cells
/// already escaped; `|` escaped here).
fn table(out: &mut String, header: &[&str], align: &str, rows: impl Iterator<Item = Vec<String>>) {
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let _ = writeln!(out, "{align}");
    for row in rows {
        let cells: Vec<String> = row.iter().map(|c| c.replace('|', "\\|")).collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
}

/// A trace path's column: wrapped after `/`, at most two lines.
const PATH: Wrap = Wrap {
    lines: 2,
    breaks: &['/', '_', '-', '.'],
    ..Wrap::new(16)
};
