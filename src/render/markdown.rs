//! The Markdown summary: the same facts as the terminal view, as GitHub-
//! flavoured Markdown. Strings from traces are escaped so a kernel name cannot
//! break a table, inject HTML or mention anyone.

use std::fmt::Write;

use super::{analysis, human_us, percent};
use crate::analysis::profile::Profile;

/// Escapes trace text for a Markdown table cell.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '|' => out.push_str("\\|"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '`' => out.push('\''),
            '*' | '_' | '[' | ']' | '#' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            // A zero-width joiner after @ stops GitHub from notifying anyone.
            '@' => out.push_str("@\u{200d}"),
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Shortens a long kernel name for a table, keeping its start.
pub fn shorten(name: &str, max_chars: usize) -> String {
    if name.chars().count() <= max_chars {
        return name.to_string();
    }
    let mut short: String = name.chars().take(max_chars.saturating_sub(1)).collect();
    short.push('…');
    short
}

/// Renders the Markdown summary, listing `top` ops and kernels.
pub fn render(profile: &Profile, top: usize) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# tracegate report: {}\n",
        escape(&file_name(&profile.source.path))
    );
    environment(&mut out, profile);
    if !profile.has_gpu_activity {
        out.push_str("\n**No GPU activity**: the trace records no kernels, copies or sets.\n");
        anomalies(&mut out, profile);
        return out;
    }
    if let Some(diagnosis) = &profile.diagnosis {
        analysis::executive_summary(&mut out, profile, diagnosis, top);
        analysis::recommendations(&mut out, diagnosis, top);
        analysis::detailed(&mut out, diagnosis, top);
    }
    timeline(&mut out, profile);
    steps(&mut out, profile);
    categories(&mut out, profile);
    ops(&mut out, profile, top);
    kernels(&mut out, profile, top);
    analysis::unmodelled(&mut out, profile, top);
    anomalies(&mut out, profile);
    if let Some(diagnosis) = &profile.diagnosis {
        analysis::appendix(&mut out, profile, diagnosis);
    }
    let _ = writeln!(
        out,
        "\n<sub>tracegate {} · report schema {}</sub>",
        profile.tracegate_version, profile.schema_version
    );
    out
}

fn file_name(path: &str) -> String {
    std::path::Path::new(path)
        .file_name()
        .map_or(path.to_string(), |n| n.to_string_lossy().into_owned())
}

fn environment(out: &mut String, profile: &Profile) {
    out.push_str("| | |\n|---|---|\n");
    for (label, value) in super::environment_lines(profile) {
        let _ = writeln!(out, "| {label} | {} |", escape(&value));
    }
    let _ = writeln!(
        out,
        "| Trace | {:.1} MB, {} events |",
        profile.source.json_bytes as f64 / 1e6,
        profile.source.counts.events
    );
}

/// "2 × NVIDIA H100" style summary of device names.
pub fn summarise_names(names: &[String]) -> String {
    if names.is_empty() {
        return "none recorded".to_string();
    }
    let mut counted: Vec<(String, usize)> = Vec::new();
    for name in names {
        match counted.iter_mut().find(|(n, _)| n == name) {
            Some((_, count)) => *count += 1,
            None => counted.push((name.clone(), 1)),
        }
    }
    counted
        .into_iter()
        .map(|(name, count)| {
            if count > 1 {
                format!("{count} × {name}")
            } else {
                name
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn timeline(out: &mut String, profile: &Profile) {
    let t = &profile.timeline;
    out.push_str("\n## GPU timeline\n\n| | time | share |\n|---|---:|---:|\n");
    for (name, us) in t.rows() {
        let _ = writeln!(
            out,
            "| {} | {} | {:.1}% |",
            name.replace('_', " "),
            human_us(us),
            percent(us, t.total_time)
        );
    }
    if let Some(all) = &profile.timeline_all_gpu_work {
        let _ = writeln!(
            out,
            "\nGPU work not linked to any launch is left out above (TraceLens's convention); \
             counting it, busy time is {} of {}.",
            human_us(all.busy_time),
            human_us(all.total_time)
        );
    }
}

fn steps(out: &mut String, profile: &Profile) {
    if profile.steps.len() < 2 {
        return;
    }
    out.push_str(
        "\n## Steps\n\n| step | host | GPU total | GPU busy | idle |\n|---:|---:|---:|---:|---:|\n",
    );
    for step in &profile.steps {
        let t = &step.timeline;
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {:.1}% |",
            step.number,
            human_us(step.host_duration_us),
            human_us(t.total_time),
            human_us(t.busy_time),
            percent(t.idle_time, t.total_time)
        );
    }
}

fn categories(out: &mut String, profile: &Profile) {
    if profile.categories.is_empty() {
        return;
    }
    let total: f64 = profile
        .categories
        .iter()
        .map(|c| c.total_direct_kernel_time_us)
        .sum();
    out.push_str(
        "\n## Op categories\n\n| category | ops | kernel time | share |\n|---|---:|---:|---:|\n",
    );
    for c in &profile.categories {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {:.1}% |",
            c.category,
            c.count,
            human_us(c.total_direct_kernel_time_us),
            percent(c.total_direct_kernel_time_us, total)
        );
    }
}

fn ops(out: &mut String, profile: &Profile, top: usize) {
    if profile.unique_args.is_empty() {
        return;
    }
    let total: f64 = profile.unique_args.iter().map(|r| r.direct.sum).sum();
    let _ = writeln!(
        out,
        "\n## Top ops by kernel time\n\n| op | shapes | dtypes | calls | total | mean | share |\n|---|---|---|---:|---:|---:|---:|"
    );
    for row in profile.unique_args.iter().take(top) {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {:.1}% |",
            escape(&row.name),
            escape(&shorten(&row.input_dims, 60)),
            escape(&shorten(&row.input_type, 40)),
            row.direct.count,
            human_us(row.direct.sum),
            human_us(row.direct.mean),
            percent(row.direct.sum, total)
        );
    }
}

fn kernels(out: &mut String, profile: &Profile, top: usize) {
    if profile.kernels.is_empty() {
        return;
    }
    out.push_str("\n## Top kernels\n\n| kernel | parent op | count | total | mean | share of kernel time |\n|---|---|---:|---:|---:|---:|\n");
    for k in profile.kernels.iter().take(top) {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {:.1}% |",
            escape(&shorten(&k.name, 80)),
            escape(if k.parent_category.is_none() {
                "(unlinked)"
            } else {
                &k.parent_op
            }),
            k.duration.count,
            human_us(k.duration.sum),
            human_us(k.duration.mean),
            k.percent_of_kernel_time
        );
    }
}

fn anomalies(out: &mut String, profile: &Profile) {
    let lines = super::terminal::anomaly_lines(profile);
    if lines.is_empty() {
        return;
    }
    out.push_str("\n## Anomalies\n\n");
    for line in lines {
        let _ = writeln!(out, "- {}", escape(&line));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markdown_html_and_mentions() {
        assert_eq!(escape("a|b"), "a\\|b");
        assert_eq!(escape("<script>"), "&lt;script&gt;");
        assert_eq!(escape("@octocat"), "@\u{200d}octocat");
        assert_eq!(escape("void f<int>(a*)"), "void f&lt;int&gt;(a\\*)");
    }

    #[test]
    fn names_are_counted() {
        let names = vec!["A".to_string(), "A".to_string(), "B".to_string()];
        assert_eq!(summarise_names(&names), "2 × A, B");
        assert_eq!(shorten("abcdef", 4), "abc…");
    }
}
