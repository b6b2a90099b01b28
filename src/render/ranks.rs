//! The rank-set report (`report DIR`): the ranks read, the collectives
//! table and the straggler table, for the terminal and as JSON under
//! `ranks` (docs/REPORT.md, "Rank sets").

use std::fmt::Write;

use super::fit::{NAME_BREAKS, Rule, Wrap};
use super::terminal::{Style, fitted};
use super::text::{human_us, printable};
use crate::analysis::ranks::RankSet;

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

/// A bandwidth cell: GB/s with one decimal, `-` when unknown.
fn gbps(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_string(), |v| format!("{v:.1}"))
}

/// The terminal summary of a rank set read from `dir`.
pub fn terminal(set: &RankSet, dir: &str, style: Style) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}",
        style.heading(&format!(
            "tracegate report: rank set {} ({} ranks)",
            printable(dir),
            set.ranks.len()
        ))
    );
    let ranks: Vec<Vec<String>> = set
        .ranks
        .iter()
        .map(|r| {
            vec![
                r.rank.to_string(),
                printable(&r.source),
                r.comm_kernels.to_string(),
            ]
        })
        .collect();
    let _ = writeln!(out, "\n{}", style.heading("Ranks"));
    let header = ["rank", "trace", "comm kernels"];
    let rules = [Rule::Fixed, Rule::Wrap(PATH), Rule::Fixed];
    let _ = writeln!(out, "{}", fitted(style, &header, ranks, &rules, 2));

    let _ = writeln!(out, "\n{}", style.heading("Collectives"));
    if set.collectives.is_empty() {
        let _ = writeln!(out, "no collective matched on two ranks or more");
    } else {
        let header = [
            "name", "calls", "ranks", "total", "mean", "skew", "data", "algbw", "busbw",
        ];
        let rows = set
            .collectives
            .iter()
            .map(|c| {
                vec![
                    c.collective.name().to_string(),
                    c.count.to_string(),
                    c.group_size.to_string(),
                    human_us(c.total_us),
                    human_us(c.mean_us),
                    human_us(c.mean_skew_us),
                    c.bytes.map_or_else(|| "-".to_string(), human_bytes),
                    gbps(c.algbw_gbps),
                    gbps(c.busbw_gbps),
                ]
            })
            .collect();
        let name = Rule::Wrap(Wrap {
            breaks: NAME_BREAKS,
            ..Wrap::new(6)
        });
        let mut rules = [Rule::Fixed; 9];
        rules[0] = name;
        let _ = writeln!(out, "{}", fitted(style, &header, rows, &rules, 1));
        let _ = writeln!(
            out,
            "skew: mean arrival skew; algbw, busbw: GB/s, as nccl-tests defines them"
        );
    }

    let _ = writeln!(out, "\n{}", style.heading("Stragglers"));
    let header = [
        "rank",
        "collectives",
        "arrived last",
        "others waited",
        "waited",
    ];
    let rows = set
        .stragglers
        .iter()
        .map(|s| {
            vec![
                s.rank.to_string(),
                s.collectives.to_string(),
                s.last.to_string(),
                human_us(s.caused_wait_us),
                human_us(s.waited_us),
            ]
        })
        .collect();
    let _ = writeln!(
        out,
        "{}",
        fitted(style, &header, rows, &[Rule::Fixed; 5], 0)
    );
    if set.unmatched > 0 {
        let _ = writeln!(
            out,
            "\n{} communication kernels ran on one rank only and were not matched",
            set.unmatched
        );
    }
    out
}

/// A trace path's column: wrapped after `/`, at most two lines.
const PATH: Wrap = Wrap {
    lines: 2,
    breaks: &['/', '_', '-', '.'],
    ..Wrap::new(16)
};
