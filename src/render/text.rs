//! Text helpers every renderer shares: human units, percentages, shortened
//! names, device-name summaries, and the two ways trace text is made safe:
//! [`escape`] for every Markdown document (GitHub renders it) and
//! [`printable`] for every terminal or CI log line. Trace strings are
//! attacker-controlled (a kernel or op name is whatever the profiled code
//! called it), so every renderer sends them through one of these two. They
//! live apart from the renderers so that no renderer has to import another.

pub use crate::analysis::ops::stats::percent;
use crate::echo::{is_bidi_control, is_unsafe};

/// The longest op or kernel-parent name a table shows, in characters: long
/// enough for every name in the real corpus (the longest is 102), short
/// enough that a hostile 100 KB name costs the table layout nothing.
pub const NAME_CHARS: usize = 120;

/// A zero-width joiner: invisible, and it splits what GitHub would otherwise
/// turn into a mention, a reference, a link or an emoji.
const ZWJ: char = '\u{200d}';

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

/// Trace text made safe for a terminal or a CI log: every control, line
/// separator and bidi character becomes a visible escape (`\u{1b}`, `\u{a}`,
/// `\u{202e}`), so the text stays on its line, in its order, and cannot
/// drive the terminal; every `##[` becomes `##\[` and a leading `::` becomes
/// `\::`, so that it cannot start a GitHub Actions workflow command (the
/// runner acts on `::name::` at the start of a line, after blanks, and on
/// the legacy `##[name]` anywhere in one).
pub fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    if text.trim_start().starts_with("::") {
        out.push('\\');
    }
    let mut hashes = 0;
    for c in text.chars() {
        if is_unsafe(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            if c == '[' && hashes >= 2 {
                out.push('\\');
            }
            out.push(c);
        }
        hashes = if c == '#' { hashes + 1 } else { 0 };
    }
    out
}

/// A terminal table cell from trace text: shortened to `max_chars` first
/// (comfy-table's layout costs grow faster than a cell's length, so a
/// 100 KB name took it half a minute), then [`printable`].
pub fn terminal_cell(text: &str, max_chars: usize) -> String {
    printable(&shorten(text, max_chars))
}

/// Escapes trace text for the inside of an HTML element in a Markdown
/// document (`<summary>`), where Markdown is not parsed, so a backslash
/// would show: [`escape`] without its backslashes (entities and the
/// zero-width joiners against mentions, autolinks and emoji stay, which
/// GitHub applies to HTML text too). A `$` becomes `&#36;`: GitHub finds
/// `$…$` maths in the source, inside `<summary>` too.
pub fn escape_html(text: &str) -> String {
    let escaped = escape(text);
    let mut out = String::with_capacity(escaped.len());
    let mut chars = escaped.chars();
    // Every backslash in `escape`'s output starts an escape: drop it, keep
    // the character it escapes.
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('$') => out.push_str("&#36;"),
                Some(next) => out.push(next),
                None => {}
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Escapes trace text for GitHub Markdown, in a table cell or running text:
/// the one escape every Markdown document uses.
///
/// - Structure: `|` and the punctuation of emphasis, links, headings,
///   strikethrough and maths (`*_[]#\~$`) get a backslash; a backtick
///   becomes `'`; line breaks and other control characters become spaces;
///   bidi controls are dropped.
/// - HTML: `<`, `>` and `&` become entities, so no tag or entity survives.
/// - Notifications and links: a zero-width joiner goes after `@` (no
///   mention, no email autolink), after `#` before a digit (no `#123` or
///   `owner/repo#1`), after the `-` of `GH-` before a digit, after the `:`
///   of `://` and after the first `w` of `www.` (no bare-URL autolink), and
///   after the `:` that opens an emoji shortcode (`:name:`, lower-case
///   letters, digits, `_`, `+`, `-`); a leading `::` gets one too, so the
///   text cannot start a workflow command where a line begins with it.
pub fn escape(text: &str) -> String {
    let chars: Vec<char> = text
        .chars()
        .filter(|&c| !is_bidi_control(c))
        .map(|c| if is_unsafe(c) { ' ' } else { c })
        .collect();
    let mut out = String::with_capacity(text.len() + 8);
    let mut at_start = true;
    for (i, &c) in chars.iter().enumerate() {
        let next = chars.get(i + 1).copied();
        match c {
            '|' => out.push_str("\\|"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '`' => out.push('\''),
            '*' | '_' | '[' | ']' | '\\' | '~' | '$' => {
                out.push('\\');
                out.push(c);
            }
            '#' => {
                out.push_str("\\#");
                if next.is_some_and(|n| n.is_ascii_digit()) {
                    out.push(ZWJ);
                }
            }
            '@' => {
                out.push('@');
                out.push(ZWJ);
            }
            ':' => {
                out.push(':');
                let leading = at_start && next == Some(':');
                let url = chars.get(i + 1..i + 3) == Some(&['/', '/']);
                // The run scanned here ends at the next colon, so every
                // character is scanned at most once more: still linear.
                let run = chars[i + 1..]
                    .iter()
                    .take_while(|c| matches!(c, 'a'..='z' | '0'..='9' | '_' | '+' | '-'))
                    .count();
                let shortcode = run > 0 && chars.get(i + 1 + run) == Some(&':');
                if leading || url || shortcode {
                    out.push(ZWJ);
                }
            }
            'w' | 'W' => {
                out.push(c);
                let www = chars.get(i..i + 4).is_some_and(|w| {
                    w[..3].iter().all(|c| c.eq_ignore_ascii_case(&'w')) && w[3] == '.'
                });
                if www {
                    out.push(ZWJ);
                }
            }
            '-' => {
                out.push('-');
                let gh = i >= 2
                    && chars[i - 2].eq_ignore_ascii_case(&'g')
                    && chars[i - 1].eq_ignore_ascii_case(&'h');
                if gh && next.is_some_and(|n| n.is_ascii_digit()) {
                    out.push(ZWJ);
                }
            }
            c => out.push(c),
        }
        at_start = at_start && c.is_whitespace();
    }
    out
}

/// `text` with every character other than ASCII letters, digits and
/// `allowed` replaced by `replacement`: for the comment marker and Mermaid
/// labels, where no escape is trusted.
pub fn only_ascii(text: &str, allowed: &str, replacement: char) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || allowed.contains(c) {
                c
            } else {
                replacement
            }
        })
        .collect()
}

/// Whether `url` is a plain http(s) address a Markdown link can hold as
/// `<url>`: no whitespace, control characters, angle brackets or quotes.
pub fn plain_url(url: &str) -> bool {
    (url.starts_with("https://") || url.starts_with("http://"))
        && !url
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || matches!(c, '<' | '>' | '"' | '\''))
}

/// Shortens a long name for a table, keeping its start; the cost is bounded
/// by `max_chars`, not by the name.
pub fn shorten(name: &str, max_chars: usize) -> String {
    if name.char_indices().nth(max_chars).is_none() {
        return name.to_string();
    }
    let mut short: String = name.chars().take(max_chars.saturating_sub(1)).collect();
    short.push('…');
    short
}

/// Input dims as a terminal shows them: `((1024, 4096), (4096,))` becomes
/// `1024×4096, 4096`; a tensor list or anything else unexpected stays as
/// it is, spaces and all.
pub fn compact_dims(dims: &str) -> String {
    let Some(inner) = dims
        .trim()
        .strip_prefix('(')
        .and_then(|d| d.strip_suffix(')'))
    else {
        return dims.to_string();
    };
    let mut parts = Vec::new();
    let mut rest = inner.trim();
    while !rest.is_empty() {
        let Some(tensor) = rest.strip_prefix('(') else {
            return dims.to_string();
        };
        let Some((sizes, after)) = tensor.split_once(')') else {
            return dims.to_string();
        };
        let sizes: Vec<&str> = sizes
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        if !sizes.iter().all(|s| s.bytes().all(|b| b.is_ascii_digit())) {
            return dims.to_string();
        }
        parts.push(if sizes.is_empty() {
            "()".to_string()
        } else {
            sizes.join("×")
        });
        rest = after.trim_start().trim_start_matches(',').trim_start();
    }
    parts.join(", ")
}

/// "2 × NVIDIA H100" style summary of device names, in order of first
/// appearance.
pub fn summarise_names(names: &[String]) -> String {
    if names.is_empty() {
        return "none recorded".to_string();
    }
    let mut counted: Vec<(&str, usize)> = Vec::new();
    let mut index: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for name in names {
        let slot = *index.entry(name).or_insert_with(|| {
            counted.push((name, 0));
            counted.len() - 1
        });
        counted[slot].1 += 1;
    }
    counted
        .into_iter()
        .map(|(name, count)| {
            if count > 1 {
                format!("{count} × {name}")
            } else {
                name.to_string()
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
        assert_eq!(escape("~~s~~ $x$"), "\\~\\~s\\~\\~ \\$x\\$");
        assert_eq!(escape("a\u{202e}b\u{7}c\nd"), "ab c d");
    }

    #[test]
    fn html_text_has_entities_and_joiners_but_no_backslashes() {
        assert_eq!(escape_html("aten::_softmax"), "aten::_softmax");
        assert_eq!(escape_html("a\\b|*c*"), "a\\b|*c*");
        assert_eq!(escape_html("<b>&"), "&lt;b&gt;&amp;");
        assert_eq!(escape_html("@octocat #12"), "@\u{200d}octocat #\u{200d}12");
        assert_eq!(escape_html("x\u{202e}y\nz"), "xy z");
    }

    #[test]
    fn markdown_escape_breaks_references_links_and_shortcodes() {
        assert_eq!(escape("#12"), "\\#\u{200d}12");
        assert_eq!(escape("owner/repo#1"), "owner/repo\\#\u{200d}1");
        assert_eq!(escape("GH-123 gh-4"), "GH-\u{200d}123 gh-\u{200d}4");
        assert_eq!(escape("GH-x"), "GH-x");
        assert_eq!(
            escape("https://evil.example"),
            "https:\u{200d}//evil.example"
        );
        assert_eq!(
            escape("see www.evil.example"),
            "see w\u{200d}ww.evil.example"
        );
        assert_eq!(escape("WWW.X"), "W\u{200d}WW.X");
        assert_eq!(escape(":rocket: :+1:"), ":\u{200d}rocket: :\u{200d}+1:");
        assert_eq!(escape("at::x::y"), "at::\u{200d}x::y");
        assert_eq!(escape("::add-mask::x"), ":\u{200d}:\u{200d}add-mask::x");
        // What the corpus has: C++ scopes with one `::` and capitals.
        assert_eq!(escape("aten::mm"), "aten::mm");
        assert_eq!(escape("c10::BFloat16"), "c10::BFloat16");
        assert_eq!(escape("Memcpy HtoD"), "Memcpy HtoD");
    }

    #[test]
    fn printable_text_is_one_inert_line() {
        assert_eq!(printable("aten::mm"), "aten::mm");
        assert_eq!(
            printable("a\u{1b}[31mb\u{7}\u{0}\r\nc"),
            "a\\u{1b}[31mb\\u{7}\\u{0}\\u{d}\\u{a}c"
        );
        assert_eq!(printable("\u{9b}x\u{85}"), "\\u{9b}x\\u{85}");
        assert_eq!(
            printable("abc\u{202e}def\u{2066}"),
            "abc\\u{202e}def\\u{2066}"
        );
        assert_eq!(printable("l\u{2028}m"), "l\\u{2028}m");
        assert_eq!(printable("::add-mask::x"), "\\::add-mask::x");
        assert_eq!(printable("  ::error::x"), "\\  ::error::x");
        assert_eq!(printable("k ##[error]x ###[y]"), "k ##\\[error]x ###\\[y]");
        assert_eq!(printable("a::b ::c"), "a::b ::c");
    }

    #[test]
    fn names_are_counted_and_shortened() {
        let names = vec!["A".to_string(), "A".to_string(), "B".to_string()];
        assert_eq!(summarise_names(&names), "2 × A, B");
        assert_eq!(shorten("abcdef", 4), "abc…");
        assert_eq!(shorten("abcd", 4), "abcd");
        assert_eq!(shorten("αβγδε", 4), "αβγ…");
    }

    #[test]
    fn dims_are_compacted_when_they_are_tensors() {
        assert_eq!(
            compact_dims("((1024, 4096), (4096, 4096))"),
            "1024×4096, 4096×4096"
        );
        assert_eq!(compact_dims("((4, 1, 1024), (), ())"), "4×1×1024, (), ()");
        assert_eq!(compact_dims("((4096,), (3,))"), "4096, 3");
        assert_eq!(compact_dims("(((2, 3), (4, 5)),)"), "(((2, 3), (4, 5)),)");
        assert_eq!(compact_dims("((a, b))"), "((a, b))");
        assert_eq!(compact_dims(""), "");
    }
}
