//! Text helpers every renderer shares: human units, percentages, shortened
//! names, Markdown escaping and device-name summaries. They live apart from
//! the renderers so that no renderer has to import another one.

pub use crate::analysis::ops::stats::percent;

/// Formats microseconds for people: `812 ns`, `15.2 µs`, `3.41 ms`, `2.10 s`.
pub fn human_us(us: f64) -> String {
    let abs = us.abs();
    if abs < 1.0 {
        format!("{:.0} ns", us * 1000.0)
    } else if abs < 1000.0 {
        format!("{us:.1} µs")
    } else if abs < 1_000_000.0 {
        format!("{:.2} ms", us / 1000.0)
    } else {
        format!("{:.2} s", us / 1_000_000.0)
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_units() {
        assert_eq!(human_us(0.812), "812 ns");
        assert_eq!(human_us(15.24), "15.2 µs");
        assert_eq!(human_us(3410.0), "3.41 ms");
        assert_eq!(human_us(2_100_000.0), "2.10 s");
    }

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
