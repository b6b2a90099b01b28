//! Echoing input text in error messages: one line, printable, bounded.
//!
//! Trace, policy and snapshot errors quote what the file says (a misspelt
//! key, a value, a path), and the renderers and the publish edge print trace
//! and server text; all of them decide what is unsafe with [`is_unsafe`]. That text comes from whoever wrote the file, and the
//! message ends up in a terminal or a CI log, where a newline followed by
//! `::error …` would start a GitHub Actions workflow command and an escape
//! sequence would drive the terminal. So echoed text has its control
//! characters, line and paragraph separators and bidirectional overrides
//! written as escapes (`\n`, `\u{1b}`), and long text is cut with `…`.

/// The most characters of one echoed value (a key, a string, a path).
pub const MAX_ECHO_CHARS: usize = 200;

/// The most characters of a whole error message.
pub const MAX_MESSAGE_CHARS: usize = 2000;

/// The most characters of a file name in an error.
pub const MAX_LABEL_CHARS: usize = 1000;

/// The Unicode bidirectional marks, embeddings, overrides and isolates: they
/// make a terminal or a browser show text in another order than it is.
pub fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
    )
}

/// Whether `c` must not reach a log as itself: C0/C1 controls (newlines,
/// escape), Unicode line and paragraph separators, and the bidirectional
/// controls ([`is_bidi_control`]).
pub fn is_unsafe(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') || is_bidi_control(c)
}

/// `text` on one line of printable characters, at most `max` of them (the
/// rest replaced by `…`): unsafe characters as `\n`, `\r`, `\t` or
/// `\u{…}`.
pub fn echo(text: &str, max: usize) -> String {
    let mut out = String::new();
    let mut count = 0;
    for c in text.chars() {
        let piece = match c {
            '\n' => "\\n".to_string(),
            '\r' => "\\r".to_string(),
            '\t' => "\\t".to_string(),
            c if is_unsafe(c) => format!("\\u{{{:x}}}", u32::from(c)),
            c => c.to_string(),
        };
        let width = piece.chars().count();
        if count + width > max {
            out.push('…');
            return out;
        }
        out.push_str(&piece);
        count += width;
    }
    out
}

/// A file name (or other label) for an error: [`echo`] up to
/// [`MAX_LABEL_CHARS`].
pub fn label(text: &str) -> String {
    echo(text, MAX_LABEL_CHARS)
}

/// An error message that quotes input: every part between backticks or
/// double quotes cut to [`MAX_ECHO_CHARS`], then the whole made one safe
/// line of at most [`MAX_MESSAGE_CHARS`]. Serde's messages quote keys and
/// variants in backticks and strings in double quotes, so a megabyte key
/// is cut where it stands and the rest of the message (what was expected)
/// survives.
pub fn message(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find(['`', '"']) {
        let quote = rest[open..].chars().next().unwrap_or('`');
        out.push_str(&rest[..=open]);
        let inside = &rest[open + 1..];
        let close = closing(inside, quote);
        match close {
            Some(end) => {
                out.push_str(&echo(&inside[..end], MAX_ECHO_CHARS));
                out.push(quote);
                rest = &inside[end + 1..];
            }
            None => {
                out.push_str(&echo(inside, MAX_ECHO_CHARS));
                rest = "";
            }
        }
    }
    out.push_str(rest);
    echo(&out, MAX_MESSAGE_CHARS)
}

/// Where the quote opened just before `inside` closes: the next `quote`
/// (a double quote after a backslash is part of the string, as serde's
/// debug form of strings writes it).
fn closing(inside: &str, quote: char) -> Option<usize> {
    let mut escaped = false;
    for (at, c) in inside.char_indices() {
        if quote == '"' && escaped {
            escaped = false;
        } else if quote == '"' && c == '\\' {
            escaped = true;
        } else if c == quote {
            return Some(at);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(echo("a\nb\r\tc", 100), "a\\nb\\r\\tc");
        assert_eq!(echo("\u{1b}[31mred", 100), "\\u{1b}[31mred");
        assert_eq!(
            echo("x\u{2028}y\u{202e}z\u{85}", 100),
            "x\\u{2028}y\\u{202e}z\\u{85}"
        );
        assert_eq!(echo("plain ünïcode ✓", 100), "plain ünïcode ✓");
    }

    #[test]
    fn long_text_is_cut() {
        assert_eq!(echo("abcdef", 3), "abc…");
        assert_eq!(echo("abc", 3), "abc");
        assert_eq!(echo("a\nb", 2), "a…");
    }

    #[test]
    fn messages_cut_each_quoted_part_and_stay_one_line() {
        let key = format!("a\n::error title=injected::{}", "x".repeat(10_000));
        let text = format!("unknown field `{key}`, expected one of `version`, `noise`");
        let line = message(&text);
        assert!(!line.contains('\n'), "{line}");
        assert!(
            line.ends_with(", expected one of `version`, `noise`"),
            "{line}"
        );
        assert!(line.contains("`a\\n::error title=injected::xxx"), "{line}");
        assert!(line.chars().count() < MAX_ECHO_CHARS + 100, "{line}");
        let debug = format!(
            "invalid type: string {:?}, expected a number",
            "q\"\n".repeat(500)
        );
        let line = message(&debug);
        assert!(line.ends_with("…\", expected a number"), "{line}");
        assert_eq!(message("no quotes"), "no quotes");
        assert_eq!(message("unclosed `abc\n"), "unclosed `abc\\n");
    }
}
