//! Text made safe for what GitHub renders: trace strings escaped for
//! Markdown (tables, HTML, mentions, issue references, maths), control and
//! bidirectional characters cleaned out, and names reduced to a safe ASCII
//! set for the comment marker and Mermaid labels.

use crate::render::text::escape;

/// Escapes trace text for GitHub Markdown: [`escape`] (tables, HTML,
/// @mentions, line breaks), plus `~` and `$` (strikethrough, maths), a
/// zero-width joiner after `#` before a digit (no issue reference), and
/// control and bidirectional-override characters removed.
pub fn escape_md(text: &str) -> String {
    let escaped = escape(&clean(text));
    let mut out = String::with_capacity(escaped.len() + 8);
    let mut chars = escaped.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '~' | '$' => {
                out.push('\\');
                out.push(c);
            }
            '#' => {
                out.push('#');
                if chars.peek().is_some_and(char::is_ascii_digit) {
                    out.push('\u{200d}');
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// Control characters become spaces (line breaks included, as in a table
/// cell); bidirectional overrides are dropped.
pub(super) fn clean(text: &str) -> String {
    text.chars()
        .filter(|c| !matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'))
        .map(|c| {
            if c.is_control() || c == '\u{2028}' || c == '\u{2029}' {
                ' '
            } else {
                c
            }
        })
        .collect()
}

/// `text` with every character other than ASCII letters, digits and
/// `allowed` replaced by `replacement`.
pub(super) fn only_ascii(text: &str, allowed: &str, replacement: char) -> String {
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
