//! Text that leaves the publish edge to be printed: whatever GitHub answered
//! (messages, comment addresses, commit SHAs) and every error, made safe for
//! a CI log.
//!
//! The token is replaced by `***` wherever it appears, because an API (or a
//! fake one) may echo it. The text becomes one line of printable characters,
//! bounded in length, that cannot start a GitHub Actions workflow command:
//! the runner acts on `::name::` at the start of a line and on the legacy
//! `##[name]` anywhere in one.

use crate::echo::is_unsafe;

/// The longest text kept from one field.
pub const FIELD_CHARS: usize = 400;

/// `text`, safe to print: the token redacted, control characters (line
/// breaks included), line separators and bidirectional overrides turned into
/// single spaces, a leading `::` and every `##[` escaped with a backslash,
/// at most [`FIELD_CHARS`] characters. Redaction comes first, so that the
/// bound never cuts a token in two and leaves half of it.
pub fn clean(text: &str, token: &str) -> String {
    let redacted = if token.is_empty() {
        text.to_string()
    } else {
        text.replace(token, "***")
    };
    let line = redacted
        .split(|c: char| c.is_whitespace() || is_unsafe(c))
        .filter(|word| !word.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
        .replace("##[", "##\\[");
    let line = if line.starts_with("::") {
        format!("\\{line}")
    } else {
        line
    };
    if line.chars().count() > FIELD_CHARS {
        let mut short: String = line.chars().take(FIELD_CHARS).collect();
        short.push('…');
        short
    } else {
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "ghs_s3cr3t";

    #[test]
    fn the_token_is_redacted_everywhere() {
        assert_eq!(
            clean("https://x/c?t=ghs_s3cr3t&u=ghs_s3cr3t", TOKEN),
            "https://x/c?t=***&u=***"
        );
        assert_eq!(clean("no secret here", ""), "no secret here");
    }

    #[test]
    fn one_line_without_control_characters() {
        let text = "bad\r\n::error::injected\u{1b}[31m red\u{2028}x\u{202E}y\u{85}z\ttab";
        let line = clean(text, TOKEN);
        assert_eq!(line, "bad ::error::injected [31m red x y z tab");
        assert!(!line.chars().any(char::is_control));
    }

    #[test]
    fn workflow_commands_are_escaped() {
        assert_eq!(
            clean("\n  ::set-output name=x::y", TOKEN),
            "\\::set-output name=x::y"
        );
        assert_eq!(
            clean("see ##[set-output name=x;]y and ###[z]", TOKEN),
            "see ##\\[set-output name=x;]y and ###\\[z]"
        );
    }

    #[test]
    fn length_is_bounded_after_redaction() {
        let long = format!("{}{TOKEN}yy", "x".repeat(FIELD_CHARS - 3));
        let line = clean(&long, TOKEN);
        assert_eq!(line.chars().count(), FIELD_CHARS + 1);
        assert!(line.ends_with("***…"), "{line}");
        assert!(!line.contains("ghs_"), "{line}");
    }
}
