//! The HTML pieces every dashboard page shares: escaping, number and time
//! formatting, file names, the page shell, the commit and run links of a
//! points table, and the chart figure the script draws from that table.

use super::ChangeMark;
use super::band::Segment;
use crate::echo;

/// Escapes text for HTML element content and double-quoted attributes.
/// Control, line-separator and bidi characters from trace text show as
/// `\u{…}`, as in the terminal and the logs (a bidi override would reorder
/// the page's text); newlines and tabs stay, HTML whitespace.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' | '\t' => out.push(c),
            c if echo::is_unsafe(c) => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            _ => out.push(c),
        }
    }
    out
}

/// A value with four significant digits (at most six decimals), no
/// exponent, so that the table stays readable and small and the script can
/// parse it back.
pub fn number(value: f64) -> String {
    if !value.is_finite() {
        return String::new();
    }
    if value == 0.0 {
        return "0".to_string();
    }
    let magnitude = value.abs().log10().floor() as i32;
    let decimals = (3 - magnitude).clamp(0, 6) as usize;
    format!("{value:.decimals$}")
}

/// A time in µs with its unit, in the unit that keeps it readable:
/// `552189` as `552.2 ms`, `1.5e6` as `1.500 s`, `87` as `87.00 µs`.
pub fn duration(us: f64) -> String {
    if !us.is_finite() {
        return String::new();
    }
    let (value, unit) = match us.abs() {
        a if a >= 1e6 => (us / 1e6, "s"),
        a if a >= 1e3 => (us / 1e3, "ms"),
        _ => (us, "µs"),
    };
    format!("{} {unit}", number(value))
}

/// `2026-11-24T09:30:00Z` as `2026-11-24 09:30` (other text as given).
pub fn short_time(time: &str) -> String {
    match (time.get(..10), time.get(11..16)) {
        (Some(day), Some(clock)) if time.as_bytes().get(10) == Some(&b'T') => {
            format!("{day} {clock}")
        }
        _ => time.to_string(),
    }
}

/// A file name from a workload or pair name: lower-case ASCII letters,
/// digits and single dashes, at most 60 characters.
pub fn slug(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    let mut out: String = out.chars().take(60).collect();
    while out.ends_with('-') {
        out.pop();
    }
    if out.is_empty() {
        "page".to_string()
    } else {
        out
    }
}

/// A URL the pages may link to: only `https://` and `http://` ones, so a
/// recorded `javascript:` or relative "URL" never becomes a link.
pub fn web_url(url: &str) -> Option<&str> {
    (url.starts_with("https://") || url.starts_with("http://")).then_some(url)
}

/// A whole page. `root` leads from the page to the site's root (`""` or
/// `"../"`); `charts` pages load uPlot and the dashboard script.
pub fn page(title: &str, root: &str, charts: bool, body: &str, footer: &str) -> String {
    let mut out = String::with_capacity(body.len() + 1024);
    out.push_str("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str(&format!("<title>{}</title>\n", esc(title)));
    if charts {
        out.push_str(&format!(
            "<link rel=\"stylesheet\" href=\"{root}assets/uPlot.min.css\">\n"
        ));
    }
    out.push_str(&format!(
        "<link rel=\"stylesheet\" href=\"{root}assets/dashboard.css\">\n</head>\n<body>\n"
    ));
    out.push_str(&format!(
        "<header><a href=\"{root}index.html\">tracegate history</a></header>\n<main>\n"
    ));
    out.push_str(body);
    out.push_str("</main>\n");
    out.push_str(&format!("<footer>{}</footer>\n", esc(footer)));
    if charts {
        out.push_str(&format!(
            "<script src=\"{root}assets/uPlot.iife.min.js\"></script>\n<script src=\"{root}assets/dashboard.js\"></script>\n"
        ));
    }
    out.push_str("</body>\n</html>\n");
    out
}

/// A change-point label as a badge (`no mark` when the series has none).
pub fn badge(change: Option<&ChangeMark>) -> String {
    match change {
        // The step's own change beside its label, so that a red
        // "regression" never reads as the "vs previous" number next to it.
        Some(mark) => format!(
            "<span class=\"badge {}\">{}{}</span>",
            slug(&mark.label),
            esc(&mark.label.replace('_', " ")),
            mark.step.as_ref().map_or(String::new(), |step| {
                let change = percent(step.before, step.after);
                if change.is_empty() {
                    change
                } else {
                    format!(" {change}")
                }
            })
        ),
        None => "<span class=\"badge\">no mark</span>".to_string(),
    }
}

/// What a change mark says in words: the label, and where the step is with
/// its levels (`unit` after each level, `µs` or `×`).
pub fn change_text(change: Option<&ChangeMark>, commits: &[&str], unit: &str) -> String {
    let Some(mark) = change else {
        return String::new();
    };
    let Some(step) = &mark.step else {
        return String::new();
    };
    let commit = commits.get(step.index).copied().unwrap_or("?");
    let percent = match percent(step.before, step.after) {
        change if change.is_empty() => change,
        change => format!(" ({change})"),
    };
    format!(
        "step at run #{} (commit <code>{}</code>): {}{unit} → {}{unit}{percent}",
        step.index + 1,
        esc(short_commit(commit)),
        number(step.before),
        number(step.after),
    )
}

/// `after` against `before` as a signed percentage (`+4.0%`); empty when
/// `before` is zero.
pub fn percent(before: f64, after: f64) -> String {
    if before == 0.0 {
        return String::new();
    }
    format!("{:+.1}%", (after / before - 1.0) * 100.0)
}

/// The first 8 characters of a commit.
pub fn short_commit(commit: &str) -> &str {
    commit.get(..8).unwrap_or(commit)
}

/// Where a commit's link leads: `{repository}/commit/{sha}`.
pub fn commit_url(repository: Option<&str>, commit: &str) -> Option<String> {
    let repository = web_url(repository?)?;
    Some(format!(
        "{}/commit/{commit}",
        repository.trim_end_matches('/')
    ))
}

/// The commit, run and time cells of one row of a points table.
pub fn run_cells(
    repository: Option<&str>,
    commit: &str,
    run_url: Option<&str>,
    time: &str,
) -> String {
    let short = esc(short_commit(commit));
    let commit_cell = match commit_url(repository, commit) {
        Some(url) => format!(
            "<td class=\"commit\"><a href=\"{}\">{short}</a></td>",
            esc(&url)
        ),
        None => format!("<td class=\"commit\"><code>{short}</code></td>"),
    };
    let run_cell = match run_url.and_then(web_url) {
        Some(url) => format!("<td class=\"run\"><a href=\"{}\">run</a></td>", esc(url)),
        None => "<td class=\"run\"></td>".to_string(),
    };
    format!("{commit_cell}{run_cell}<td>{}</td>", esc(&short_time(time)))
}

/// A chart the script draws from column `column` of the page's points
/// table: `points` values there, the noise band's segments, the change mark
/// and (for ratios) the expected level as a line.
pub struct Figure<'a> {
    /// The series' name, the chart's caption.
    pub name: &'a str,
    /// The column of the points table holding its values.
    pub column: usize,
    /// How many values the column holds (empty cells left out).
    pub points: usize,
    /// The noise band, one segment per level.
    pub band: &'a [Segment],
    /// The series' change mark.
    pub change: Option<&'a ChangeMark>,
    /// A reference level drawn as a dashed line (the roofline ratio).
    pub expected: Option<f64>,
    /// The unit shown on the axis.
    pub unit: &'a str,
    /// What the caption says under the name (the step, in words).
    pub note: String,
}

impl Figure<'_> {
    /// The figure element: caption, the plot's place and the data the
    /// script reads as attributes.
    pub fn html(&self) -> String {
        let band: Vec<String> = self
            .band
            .iter()
            .map(|s| {
                format!(
                    "[{},{},{},{}]",
                    s.start,
                    s.end,
                    number(s.low),
                    number(s.high)
                )
            })
            .collect();
        let mut attributes = format!(
            "data-col=\"{}\" data-points=\"{}\" data-band=\"[{}]\" data-unit=\"{}\" data-name=\"{}\"",
            self.column,
            self.points,
            band.join(","),
            esc(self.unit),
            esc(self.name)
        );
        if let Some(mark) = self.change {
            attributes.push_str(&format!(" data-label=\"{}\"", slug(&mark.label)));
            if let Some(step) = &mark.step {
                attributes.push_str(&format!(" data-step=\"{}\"", step.index));
            }
        }
        if let Some(expected) = self.expected.filter(|e| e.is_finite()) {
            attributes.push_str(&format!(" data-expected=\"{}\"", number(expected)));
        }
        let note = if self.note.is_empty() {
            String::new()
        } else {
            format!("<br><small>{}</small>", self.note)
        };
        format!(
            "<figure class=\"chart\" {attributes}>\n<figcaption><span class=\"name\" title=\"{}\">{}</span> {}{note}</figcaption>\n<div class=\"plot\"></div>\n</figure>\n",
            esc(self.name),
            esc(self.name),
            badge(self.change),
        )
    }
}

/// The points table: a caption, header cells (already HTML) and rows, in a
/// `<details>` so that a long history does not push the charts away.
pub fn points_table(summary: &str, header: &str, rows: &str) -> String {
    format!(
        "<details class=\"points\">\n<summary>{}</summary>\n<div class=\"scroll\">\n<table id=\"points\">\n<thead><tr>{header}</tr></thead>\n<tbody>\n{rows}</tbody>\n</table>\n</div>\n</details>\n",
        esc(summary)
    )
}
