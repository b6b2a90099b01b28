//! What a policy may ask for, and a look at its text before the YAML parser
//! sees it.
//!
//! A policy is small and written by hand, so every bound here is far above
//! what a real one needs, and each stops a file from making `policy check`
//! or `check` slow or large: the parser takes time quadratic in the depth
//! of nested flow collections (`[[[[…`), aliases can expand a little text
//! into a lot of values, long lists and patterns multiply the work of
//! matching every op row, and numbers such as `noise.resamples` size the
//! statistics. docs/POLICY.md ("Limits") lists them.
//!
//! [`prescan`] measures the nesting depth and counts aliases with a small
//! scanner that knows YAML's quoting, comments, block scalars, flow
//! collections and line breaks; it errs towards counting more, never less,
//! so that a file it passes cannot reach the parser's slow cases.

/// The largest policy file, bytes.
pub const MAX_POLICY_BYTES: usize = 1 << 20;

/// The deepest nesting of mappings and sequences (block and flow together).
/// The shipped policies nest 5 deep.
pub const MAX_DEPTH: usize = 32;

/// The most aliases (`*name`) in a policy.
pub const MAX_ALIASES: usize = 64;

/// The most entries in any list (`budgets`, `ignore`, `timeline`, …).
pub const MAX_LIST: usize = 1000;

/// The most compiled patterns (regexes, globs, shape patterns; exact names
/// are free) in one list of rules: compiling one can take milliseconds and
/// hold up to [`MAX_REGEX_BYTES`].
pub const MAX_LIST_PATTERNS: usize = 100;

/// The longest `reason` of an accept entry, characters.
pub const MAX_REASON_CHARS: usize = 500;

/// The longest op-name, shape or module pattern, characters.
pub const MAX_PATTERN_CHARS: usize = 1000;

/// The deepest nesting of `{…}` alternatives in a glob.
pub const MAX_GLOB_BRACES: usize = 8;

/// The largest compiled regex (a glob compiles to one), bytes, as the
/// regex crate measures it (`RegexBuilder::size_limit`): room for about ten
/// Unicode classes such as `\w`.
pub const MAX_REGEX_BYTES: usize = 512 << 10;

/// The largest `replay.max_packages`.
pub const MAX_REPLAY_PACKAGES: usize = 1000;

/// Why a policy's text is refused before parsing, and where: the 1-based
/// line and column (none for the file's size).
#[derive(Debug, PartialEq)]
pub(super) struct Breach {
    pub location: Option<(usize, usize)>,
    pub message: String,
}

/// The breach of a text larger than [`MAX_POLICY_BYTES`].
pub(super) fn too_large() -> Breach {
    Breach {
        location: None,
        message: format!(
            "the file is larger than {MAX_POLICY_BYTES} bytes (1 MiB), the limit for a policy"
        ),
    }
}

/// One line of the text: its 1-based number and content (without the break).
struct Line<'a> {
    number: usize,
    text: &'a str,
}

/// The text's lines, split at every break the YAML parser knows: `\n`,
/// `\r\n`, `\r`, NEL, LINE SEPARATOR and PARAGRAPH SEPARATOR (a comment
/// ends at any of them, so the scanner must see them all).
fn lines(text: &str) -> Vec<Line<'_>> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let end = match c {
            '\r' => {
                if let Some(&(_, '\n')) = chars.peek() {
                    chars.next();
                    at + 2
                } else {
                    at + 1
                }
            }
            '\n' | '\u{85}' | '\u{2028}' | '\u{2029}' => at + c.len_utf8(),
            _ => continue,
        };
        lines.push(Line {
            number: lines.len() + 1,
            text: &text[start..at],
        });
        start = end;
    }
    lines.push(Line {
        number: lines.len() + 1,
        text: &text[start..],
    });
    lines
}

/// Checks the size, nesting depth and alias count of a policy's text.
pub(super) fn prescan(text: &str) -> Result<(), Breach> {
    if text.len() > MAX_POLICY_BYTES {
        return Err(too_large());
    }
    let mut scanner = Scanner::default();
    for line in lines(text) {
        scanner.line(&line)?;
    }
    Ok(())
}

/// The scanner's state between lines.
#[derive(Default)]
struct Scanner {
    /// Columns of the open block nodes, outermost first.
    block: Vec<usize>,
    /// Open flow collections (`[`, `{`).
    flow: usize,
    /// In a flow collection: whether the next non-blank character starts
    /// a node (after `[`, `{`, `,` or a `:` indicator).
    flow_node_start: bool,
    /// An open quoted scalar (`'` or `"`) that continues on the next line.
    quote: Option<u8>,
    /// In a block scalar (`|`, `>`): how its lines are indented.
    block_scalar: Option<BlockScalar>,
    aliases: usize,
}

/// The indentation of a block scalar's lines: beyond its parent's column
/// (-1 at the root), and at least the first content line's once seen.
#[derive(Clone, Copy)]
struct BlockScalar {
    parent: isize,
    content: Option<usize>,
}

impl BlockScalar {
    /// Whether a line indented `indent` spaces (`blank` when it holds only
    /// spaces or tabs) is part of the scalar.
    fn holds(&mut self, indent: usize, blank: bool) -> bool {
        if blank {
            return true;
        }
        if indent as isize <= self.parent {
            return false;
        }
        match self.content {
            Some(content) => indent >= content,
            None => {
                self.content = Some(indent);
                true
            }
        }
    }
}

fn is_blank(byte: u8) -> bool {
    byte == b' ' || byte == b'\t'
}

/// The index of the first non-blank byte at or after `at`.
fn skip_blanks(bytes: &[u8], mut at: usize) -> usize {
    while at < bytes.len() && is_blank(bytes[at]) {
        at += 1;
    }
    at
}

/// Whether the byte at `at` is an indicator followed by a blank or the end
/// of the line (`- `, `? `, `: `).
fn indicator(bytes: &[u8], at: usize) -> bool {
    matches!(bytes.get(at), Some(b'-' | b'?' | b':'))
        && bytes.get(at + 1).is_none_or(|&b| is_blank(b))
}

/// The end of the token at `at` (an anchor, tag or alias name): the next
/// blank, flow indicator or the end of the line.
fn token_end(bytes: &[u8], mut at: usize) -> usize {
    while at < bytes.len() && !is_blank(bytes[at]) && !b",[]{}".contains(&bytes[at]) {
        at += 1;
    }
    at
}

/// Where the quoted scalar that `quote` opened closes: the index after the
/// closing quote, or `None` when it goes on past this line.
fn close_quote(bytes: &[u8], mut at: usize, quote: u8) -> Option<usize> {
    while at < bytes.len() {
        match bytes[at] {
            b'\\' if quote == b'"' => at += 2,
            b'\'' if quote == b'\'' && bytes.get(at + 1) == Some(&b'\'') => at += 2,
            b if b == quote => return Some(at + 1),
            _ => at += 1,
        }
    }
    None
}

impl Scanner {
    fn depth(&self) -> usize {
        self.block.len() + self.flow
    }

    fn breach(line: &Line, at: usize, message: String) -> Breach {
        let column = line.text.get(..at).map_or(at, |t| t.chars().count()) + 1;
        Breach {
            location: Some((line.number, column)),
            message,
        }
    }

    fn too_deep(&self, line: &Line, at: usize) -> Result<(), Breach> {
        if self.depth() > MAX_DEPTH {
            return Err(Scanner::breach(
                line,
                at,
                format!(
                    "nested more than {MAX_DEPTH} levels deep (the limit for a policy; \
                     the shipped ones nest 5)"
                ),
            ));
        }
        Ok(())
    }

    fn alias(&mut self, line: &Line, at: usize) -> Result<(), Breach> {
        self.aliases += 1;
        if self.aliases > MAX_ALIASES {
            return Err(Scanner::breach(
                line,
                at,
                format!(
                    "more than {MAX_ALIASES} aliases (`*name`): the limit for a policy, \
                     which bounds how far aliases can expand"
                ),
            ));
        }
        Ok(())
    }

    fn line(&mut self, line: &Line) -> Result<(), Breach> {
        let bytes = line.text.as_bytes();
        if let Some(scalar) = self.block_scalar.as_mut() {
            let indent = bytes.iter().take_while(|&&b| b == b' ').count();
            let blank = bytes[indent..].iter().all(|&b| is_blank(b));
            if scalar.holds(indent, blank) {
                return Ok(());
            }
            self.block_scalar = None;
        }
        if let Some(quote) = self.quote {
            let Some(end) = close_quote(bytes, 0, quote) else {
                return Ok(());
            };
            self.quote = None;
            return if self.flow > 0 {
                self.flow_scan(line, end)
            } else {
                self.after_scalar(line, end)
            };
        }
        if self.flow > 0 {
            return self.flow_scan(line, 0);
        }
        let indent = bytes.iter().take_while(|&&b| b == b' ').count();
        let first = skip_blanks(bytes, indent);
        if first >= bytes.len() || bytes[first] == b'#' {
            return Ok(());
        }
        if indent == 0 && bytes[0] == b'%' {
            return Ok(()); // a directive
        }
        let mut at = first;
        if indent == 0
            && (bytes.starts_with(b"---") || bytes.starts_with(b"..."))
            && bytes.get(3).is_none_or(|&b| is_blank(b))
        {
            // A document marker: what follows starts afresh.
            self.block.clear();
            at = skip_blanks(bytes, 3);
            if at >= bytes.len() || bytes[at] == b'#' {
                return Ok(());
            }
        }
        self.node(line, at, true)
    }

    /// A node starting at `at` in block context; `push` when it opens a
    /// level (not when it follows an anchor or tag on the same node).
    fn node(&mut self, line: &Line, mut at: usize, mut push: bool) -> Result<(), Breach> {
        let bytes = line.text.as_bytes();
        // Whether the node took the place of one at its own column: the
        // collection at that column stays open in the parser.
        let mut sibling = false;
        loop {
            if push {
                sibling = false;
                while self.block.last().is_some_and(|&column| column >= at) {
                    sibling |= self.block.pop() == Some(at);
                }
                self.block.push(at);
                self.too_deep(line, at)?;
            }
            push = true;
            if at >= bytes.len() || bytes[at] == b'#' {
                return Ok(());
            }
            if indicator(bytes, at) {
                at = skip_blanks(bytes, at + 1);
                if at >= bytes.len() || bytes[at] == b'#' {
                    return Ok(());
                }
                continue;
            }
            match bytes[at] {
                b'[' | b'{' => {
                    self.flow = 1;
                    self.flow_node_start = true;
                    self.too_deep(line, at)?;
                    return self.flow_scan(line, at + 1);
                }
                b'"' | b'\'' => {
                    return match close_quote(bytes, at + 1, bytes[at]) {
                        Some(end) => self.after_scalar(line, end),
                        None => {
                            self.quote = Some(bytes[at]);
                            Ok(())
                        }
                    };
                }
                b'|' | b'>' => {
                    // Content is indented beyond the innermost open
                    // collection; where that is the node's own column (a
                    // value on the line below its key), beyond that column.
                    let parent = match (sibling, self.block.len().checked_sub(2)) {
                        (true, _) => self.block.last().map_or(-1, |&c| c as isize),
                        (false, Some(i)) => self.block[i] as isize,
                        (false, None) => -1,
                    };
                    self.block_scalar = Some(BlockScalar {
                        parent,
                        content: None,
                    });
                    return Ok(());
                }
                b'*' => {
                    self.alias(line, at)?;
                    return self.after_scalar(line, token_end(bytes, at + 1));
                }
                b'&' | b'!' => {
                    at = skip_blanks(bytes, token_end(bytes, at + 1));
                    push = false;
                }
                _ => return self.after_plain(line, at),
            }
        }
    }

    /// After a quoted scalar or an alias in block context: a `:` makes it
    /// a key, and a value may follow on the line.
    fn after_scalar(&mut self, line: &Line, at: usize) -> Result<(), Breach> {
        let bytes = line.text.as_bytes();
        let at = skip_blanks(bytes, at);
        if bytes.get(at) == Some(&b':') && bytes.get(at + 1).is_none_or(|&b| is_blank(b)) {
            return self.value(line, at + 1);
        }
        Ok(())
    }

    /// A plain scalar in block context: it is a key when `: ` follows.
    fn after_plain(&mut self, line: &Line, mut at: usize) -> Result<(), Breach> {
        let bytes = line.text.as_bytes();
        while at < bytes.len() {
            if bytes[at] == b'#' && at > 0 && is_blank(bytes[at - 1]) {
                return Ok(());
            }
            if bytes[at] == b':' && bytes.get(at + 1).is_none_or(|&b| is_blank(b)) {
                return self.value(line, at + 1);
            }
            at += 1;
        }
        Ok(())
    }

    /// The value after a key's `:` at `at - 1`.
    fn value(&mut self, line: &Line, at: usize) -> Result<(), Breach> {
        let bytes = line.text.as_bytes();
        let at = skip_blanks(bytes, at);
        if at >= bytes.len() || bytes[at] == b'#' {
            return Ok(());
        }
        self.node(line, at, true)
    }

    /// Inside flow collections, from `at` to the end of the line.
    fn flow_scan(&mut self, line: &Line, mut at: usize) -> Result<(), Breach> {
        let bytes = line.text.as_bytes();
        while at < bytes.len() {
            let byte = bytes[at];
            match byte {
                b' ' | b'\t' => {}
                b'#' if at == 0 || is_blank(bytes[at - 1]) => return Ok(()),
                b'[' | b'{' => {
                    self.flow += 1;
                    self.flow_node_start = true;
                    self.too_deep(line, at)?;
                }
                b']' | b'}' => {
                    self.flow = self.flow.saturating_sub(1);
                    self.flow_node_start = false;
                    if self.flow == 0 {
                        return self.after_scalar(line, at + 1);
                    }
                }
                b',' => self.flow_node_start = true,
                b':' if bytes
                    .get(at + 1)
                    .is_none_or(|&b| is_blank(b) || b",[]{}".contains(&b))
                    || !self.flow_node_start && at > 0 && matches!(bytes[at - 1], b'"' | b'\'') =>
                {
                    self.flow_node_start = true;
                }
                b'?' if self.flow_node_start && bytes.get(at + 1).is_none_or(|&b| is_blank(b)) => {}
                b'"' | b'\'' if self.flow_node_start => {
                    self.flow_node_start = false;
                    match close_quote(bytes, at + 1, byte) {
                        Some(end) => {
                            at = end;
                            continue;
                        }
                        None => {
                            self.quote = Some(byte);
                            return Ok(());
                        }
                    }
                }
                b'*' if self.flow_node_start => {
                    self.alias(line, at)?;
                    self.flow_node_start = false;
                    at = token_end(bytes, at + 1);
                    continue;
                }
                b'&' | b'!' if self.flow_node_start => {
                    at = token_end(bytes, at + 1);
                    continue;
                }
                _ => self.flow_node_start = false,
            }
            at += 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(text: &str) -> Option<Breach> {
        prescan(text).err()
    }

    #[test]
    fn real_policies_pass() {
        for text in [
            super::super::model::DEFAULT_YAML,
            include_str!("../../../policies/strict.yaml"),
            include_str!("../../../policies/cross-platform.yaml"),
        ] {
            assert_eq!(prescan(text), Ok(()));
        }
    }

    #[test]
    fn deep_flow_and_block_nesting_is_refused_where_it_crosses_the_limit() {
        let breach = refused(&format!("version: 1\nx: {}", "[".repeat(100))).unwrap();
        assert_eq!(breach.location, Some((2, 34)));
        assert!(
            breach
                .message
                .starts_with("nested more than 32 levels deep")
        );
        assert!(refused(&format!("x: {}1{}", "{a: ".repeat(40), "}".repeat(40))).is_some());
        assert!(refused(&format!("x:\n{}y\n", "- ".repeat(40))).is_some());
        let indented: String = (0..40)
            .map(|i| format!("{}k{i}:\n", " ".repeat(i)))
            .collect();
        assert!(refused(&indented).is_some());
        // Just inside the limit.
        assert_eq!(prescan(&format!("x: {}", "[".repeat(30))), Ok(()));
    }

    #[test]
    fn brackets_in_text_are_not_nesting() {
        let deep = "[".repeat(100);
        for text in [
            format!("description: \"{deep}\"\n"),
            format!("description: '{deep}'\n"),
            format!("description: it's {deep}\n"),
            format!("# {deep}\nversion: 1\n"),
            format!("version: 1 # {deep}\n"),
            format!("name: aten::{deep}\n"),
            format!("description: |\n  {deep}\n  {deep}\nversion: 1\n"),
            format!("- |\n   {deep}\n- x\n"),
            format!("description: \"first line\n  {deep}\"\nversion: 1\n"),
            format!("x: [\"{deep}\", '{deep}', a]\n"),
            format!("x: [it's, {{\"k\":v}}] # {deep}\n"),
        ] {
            assert_eq!(prescan(&text), Ok(()), "{text}");
        }
    }

    #[test]
    fn every_line_break_ends_a_comment() {
        for brk in ["\n", "\r", "\r\n", "\u{85}", "\u{2028}", "\u{2029}"] {
            let text = format!("x: [ # comment{brk}{}", "[".repeat(50));
            assert!(refused(&text).is_some(), "{brk:?}");
        }
    }

    #[test]
    fn a_block_scalar_ends_where_its_indentation_does() {
        let deep = "[".repeat(50);
        // Less indented than its first line: no longer the scalar.
        assert!(refused(&format!("a: |\n    text\n   {deep}\n")).is_some());
        assert!(refused(&format!("a: >-\n  text\nb: {deep}\n")).is_some());
        assert!(refused(&format!("a: |\n\n  text\n\nb: {deep}\n")).is_some());
    }

    /// Found by `scripts/fuzz policy`: a `|` alone at a key's column is the
    /// key's value, and a line at that column again is not its content
    /// (the parser nests the `? ` keys until its recursion limit).
    #[test]
    fn a_block_scalar_below_its_key_ends_at_the_key_column() {
        let keys = "? ".repeat(200);
        assert!(refused(&format!("hardware:\n|\n{keys}x\n")).is_some());
        assert!(
            serde_yaml::from_str::<serde_yaml::Value>(&format!("hardware:\n|\n{keys}x\n")).is_err()
        );
        // A document that is only a block scalar keeps its column-0 content.
        assert_eq!(prescan(&format!("--- |\n{}\n", "[".repeat(50))), Ok(()));
    }

    #[test]
    fn aliases_are_counted() {
        let aliases = vec!["*a"; 70].join(", ");
        let breach = refused(&format!("a: &a 1\nb: [{aliases}]\n")).unwrap();
        assert_eq!(breach.location, Some((2, 261)));
        assert!(breach.message.starts_with("more than 64 aliases"));
        let block: String = (0..70).map(|_| "- *a\n").collect();
        assert!(refused(&format!("a: &a 1\nb:\n{block}")).is_some());
        // A `*` inside a name or a quoted glob is not an alias.
        let globs: String = (0..70).map(|_| "- name: aten::*mm\n- \"*x\"\n").collect();
        assert_eq!(prescan(&globs), Ok(()));
    }

    #[test]
    fn large_files_are_refused() {
        let text = format!(
            "version: 1\ndescription: {}\n",
            "x".repeat(MAX_POLICY_BYTES)
        );
        let breach = refused(&text).unwrap();
        assert_eq!(breach.location, None);
        assert!(breach.message.contains("1 MiB"));
    }
}
