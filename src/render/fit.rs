//! Terminal text that fits a width without breaking a word: prose wrapped at
//! spaces, and tables whose cells are wrapped here, at word or identifier
//! boundaries, before comfy-table lays them out (its own wrapping splits
//! `aten::mm` into `aten::m` and `m`). The width is always a parameter: the
//! binary measures the terminal, the library never does.

use comfy_table::presets::UTF8_BORDERS_ONLY;
use comfy_table::{Attribute, Cell, ContentArrangement, Table};
use unicode_width::UnicodeWidthStr;

use super::text::shorten;

/// Where a name may break besides spaces: after a run of these (`aten::` |
/// `_flash_` | `attention`, `Bert_0/` | `Linear_0`, `llama-` | `3-` | `8b`).
pub const NAME_BREAKS: &[char] = &['_', ':', '/', '.', ',', '-'];

/// Columns in a terminal (an emoji takes two, a combining mark none).
pub fn width_of(text: &str) -> usize {
    UnicodeWidthStr::width(text)
}

/// `text` as a reader sees it: escape sequences (colour) removed, so that
/// coloured output can be measured and compared with plain output.
pub fn visible(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            // An SGR or CSI sequence ends with its first letter.
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// `text` in lines of at most `width` columns, broken after spaces and
/// after a run of `breaks`; a word wider than a line keeps a line of its
/// own (the caller shortens it where it must). A line that would start
/// with `::` starts with `\::`.
pub fn wrap(text: &str, width: usize, breaks: &[char]) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for piece in pieces(text, breaks) {
        let fits = width_of(&line) + width_of(piece.trim_end()) <= width;
        if !line.is_empty() && !fits {
            lines.push(line.trim_end().to_string());
            line.clear();
        }
        if line.is_empty() {
            line.push_str(piece.trim_start());
        } else {
            line.push_str(piece);
        }
    }
    if !line.trim().is_empty() || lines.is_empty() {
        lines.push(line.trim_end().to_string());
    }
    // A new line must not start a GitHub Actions workflow command, as
    // `printable` ensures for the first one.
    for line in &mut lines {
        if line.trim_start().starts_with("::") {
            line.insert(0, '\\');
        }
    }
    lines
}

/// `text` split after each space and after each run of `breaks`, so that
/// joining the pieces gives `text` back.
fn pieces<'a>(text: &'a str, breaks: &[char]) -> Vec<&'a str> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let next = chars.peek().map(|&(_, n)| n);
        let end_of_run = breaks.contains(&c) && next.is_none_or(|n| !breaks.contains(&n));
        let space = c == ' ' && next != Some(' ');
        if end_of_run || space {
            let end = i + c.len_utf8();
            pieces.push(&text[start..end]);
            start = end;
        }
    }
    if start < text.len() {
        pieces.push(&text[start..]);
    }
    pieces
}

/// Prose for the terminal: `text` wrapped to `width` at spaces, the first
/// line after `first`, the others after `rest`, each ending in a newline.
pub fn paragraph(text: &str, width: u16, first: &str, rest: &str) -> String {
    let room = usize::from(width).saturating_sub(width_of(rest)).max(20);
    let first_room = usize::from(width).saturating_sub(width_of(first)).max(20);
    let mut out = String::new();
    let lines = wrap(text, first_room, &[]);
    let (head, tail) = lines.split_first().expect("wrap gives a line");
    out.push_str(first);
    out.push_str(head);
    out.push('\n');
    let tail = tail.join(" ");
    if !tail.is_empty() {
        for line in wrap(&tail, room, &[]) {
            out.push_str(rest);
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

/// How a table column takes its width.
#[derive(Clone, Copy, Debug)]
pub enum Rule {
    /// As wide as its widest cell: numbers and short labels.
    Fixed,
    /// Wrapped at spaces and after a run of `breaks`; a word wider than
    /// the column is shortened with `…`.
    Wrap(Wrap),
}

/// The limits of a wrapped column.
#[derive(Clone, Copy, Debug)]
pub struct Wrap {
    /// The narrowest the column may get (its widest cell, when narrower).
    pub min: usize,
    /// The widest it gets, however much room is left.
    pub max: usize,
    /// The most lines a cell keeps; the last one kept ends in `…`.
    pub lines: usize,
    /// Break characters besides the space.
    pub breaks: &'static [char],
}

impl Wrap {
    /// A column at least `min` wide, unbounded otherwise, breaking at spaces.
    pub const fn new(min: usize) -> Wrap {
        Wrap {
            min,
            max: usize::MAX,
            lines: usize::MAX,
            breaks: &[],
        }
    }

    /// The cell's text in lines of at most `width` columns.
    fn cell(&self, text: &str, width: usize) -> String {
        let mut lines: Vec<String> = text
            .lines()
            .flat_map(|line| wrap(line, width, self.breaks))
            .map(|line| shorten(&line, width))
            .collect();
        if lines.len() > self.lines {
            lines.truncate(self.lines);
            if let Some(last) = lines.last_mut() {
                // Room for " …", cutting at a space where there is one.
                while width_of(last) + 2 > width && !last.is_empty() {
                    match last.trim_end().rfind(' ') {
                        Some(space) if space > 0 => last.truncate(space),
                        _ => {
                            last.pop();
                        }
                    }
                }
                *last = format!("{} …", last.trim_end_matches([',', ' ']));
            }
        }
        lines.join("\n")
    }
}

/// The table's cells wrapped so that the table is at most `width` columns
/// wide (borders and padding included, as [`table`] draws it), or `None`
/// when even the narrowest columns do not fit. Wrapped columns share the
/// room left by the fixed ones, none wider than its widest cell.
pub fn fit(
    header: &[&str],
    rows: &[Vec<String>],
    rules: &[Rule],
    width: u16,
) -> Option<Vec<Vec<String>>> {
    let natural: Vec<usize> = (0..rules.len())
        .map(|i| {
            rows.iter()
                .filter_map(|row| row.get(i))
                .flat_map(|cell| cell.lines())
                .map(width_of)
                .chain(header.get(i).map(|h| width_of(h)))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let min: Vec<usize> = rules
        .iter()
        .zip(&natural)
        .zip(header)
        .map(|((rule, &natural), header)| match rule {
            Rule::Fixed => natural,
            Rule::Wrap(w) => natural.min(w.min.max(width_of(header))),
        })
        .collect();
    let natural: Vec<usize> = rules
        .iter()
        .zip(natural)
        .zip(&min)
        .map(|((rule, natural), &min)| match rule {
            Rule::Fixed => natural,
            Rule::Wrap(w) => natural.min(w.max).max(min),
        })
        .collect();
    // Two borders and one column of padding on each side of a cell.
    let frame = 2 + 2 * rules.len();
    let mut room = usize::from(width).checked_sub(frame + min.iter().sum::<usize>())?;
    let mut widths = min;
    while room > 0 {
        let mut grew = false;
        for (w, &n) in widths.iter_mut().zip(&natural) {
            if room > 0 && *w < n {
                *w += 1;
                room -= 1;
                grew = true;
            }
        }
        if !grew {
            break;
        }
    }
    Some(
        rows.iter()
            .map(|row| {
                row.iter()
                    .zip(rules)
                    .zip(&widths)
                    .map(|((cell, rule), &w)| match rule {
                        Rule::Fixed => cell.clone(),
                        Rule::Wrap(wrap) => wrap.cell(cell, w),
                    })
                    .collect()
            })
            .collect(),
    )
}

/// An empty table as every terminal view draws it: borders only, a header
/// (bold when `color`), styled only when `color` and never measuring the
/// terminal itself. With `wrap_to`, comfy-table wraps cells to that width
/// (for cells [`fit`] could not fit); without, cells keep the lines they
/// were given.
pub fn table(header: &[&str], color: bool, wrap_to: Option<u16>) -> Table {
    let mut table = Table::new();
    table.load_preset(UTF8_BORDERS_ONLY);
    table.force_no_tty();
    if color {
        table.enforce_styling();
    }
    match wrap_to {
        Some(width) => {
            table.set_content_arrangement(ContentArrangement::Dynamic);
            table.set_width(width);
        }
        None => {
            table.set_content_arrangement(ContentArrangement::Disabled);
        }
    }
    table.set_header(header.iter().map(|h| {
        let cell = Cell::new(h);
        if color {
            cell.add_attribute(Attribute::Bold)
        } else {
            cell
        }
    }));
    // Cells are two blanks apart, the preset's blank line between them and
    // one of padding, not three.
    for index in 1..header.len() {
        if let Some(column) = table.column_mut(index - 1) {
            column.set_padding((1, 0));
        }
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_and_names_break_at_their_boundaries() {
        assert_eq!(wrap("one two three", 7, &[]), ["one two", "three"]);
        assert_eq!(wrap("FAIL timeline", 12, &[]), ["FAIL", "timeline"]);
        assert_eq!(
            wrap("aten::_flash_attention_backward", 16, NAME_BREAKS),
            ["aten::_flash_", "attention_", "backward"]
        );
        assert_eq!(wrap("aten::mm", 4, NAME_BREAKS), ["aten::", "mm"]);
        assert_eq!(wrap("", 10, &[]), [""]);
        assert_eq!(wrap("unbreakable", 4, &[]), ["unbreakable"]);
        assert_eq!(wrap("boom ::error::x", 6, &[]), ["boom", "\\::error::x"]);
    }

    #[test]
    fn paragraphs_hang_under_their_prefix() {
        assert_eq!(
            paragraph("a bb ccc dddd eeeee ffffff ggggggg hh", 30, "note: ", "  "),
            "note: a bb ccc dddd eeeee\n  ffffff ggggggg hh\n"
        );
    }

    #[test]
    fn tables_share_the_room_left_by_fixed_columns() {
        let rows = vec![vec![
            "aten::_flash_attention_backward".to_string(),
            "12.5 µs".to_string(),
        ]];
        let name = Wrap {
            breaks: NAME_BREAKS,
            ..Wrap::new(8)
        };
        let rules = [Rule::Wrap(name), Rule::Fixed];
        let fitted = fit(&["op", "time"], &rows, &rules, 30).expect("fits");
        assert_eq!(fitted[0][0], "aten::_flash_\nattention_\nbackward");
        let wide = fit(&["op", "time"], &rows, &rules, 80).expect("fits");
        assert_eq!(wide[0][0], "aten::_flash_attention_backward");
        assert!(fit(&["op", "time"], &rows, &rules, 12).is_none());
        let short = Wrap { lines: 2, ..name };
        let cut = fit(
            &["op", "time"],
            &rows,
            &[Rule::Wrap(short), Rule::Fixed],
            30,
        );
        assert_eq!(cut.expect("fits")[0][0], "aten::_flash_\nattention_ …");
    }
}
