//! The layout stays the architecture (docs/ARCHITECTURE.md): at every folder of
//! `src/`, its entries depend on each other in one direction only; no file
//! carries more than ~800 lines of non-test code without saying why at its
//! top; and the architecture document's table names exactly what the tree
//! holds.
//!
//! Dependencies are read from the source text: `crate::` and `tracegate::`
//! paths (with `use` groups expanded) and `super::` paths. A reference from
//! file A to file B counts at their lowest common folder, between the two
//! entries of that folder that contain A and B; a file using its own folder's
//! `mod.rs` (or the reverse) is one unit and does not count.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

const MAX_LINES: usize = 800;
/// A long file says why in a line of its module doc starting with this.
const LONG_FILE_REASON: &str = "//! Long on purpose:";

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `src/`, relative to it, sorted.
fn source_files() -> Vec<PathBuf> {
    let root = src_dir();
    let mut found = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).expect("readable src dir") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                found.push(path.strip_prefix(&root).expect("under src").to_path_buf());
            }
        }
    }
    found.sort();
    found
}

/// The module path of a file: `analysis/hardware/mod.rs` → `["analysis",
/// "hardware"]`. Files of the binary (`main.rs`, `cli/`) live under `bin`.
fn module_of(file: &Path) -> Vec<String> {
    let mut parts: Vec<String> = file
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    if parts.first().map(String::as_str) == Some("main") {
        parts = vec!["bin".to_string()];
    } else if parts.first().map(String::as_str) == Some("cli") {
        parts.insert(0, "bin".to_string());
    }
    parts
}

/// The source without test code: files named `tests.rs` are all test code,
/// and an inline `#[cfg(test)]` module ends a file's non-test part.
fn non_test_text(file: &Path, text: &str) -> String {
    if file.file_name().is_some_and(|n| n == "tests.rs") {
        return String::new();
    }
    let mut kept = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if line.trim() == "#[cfg(test)]" {
            let next = lines.peek().map(|l| l.trim()).unwrap_or("");
            if next.starts_with("mod ") && next.ends_with('{') {
                break;
            }
            lines.next();
            continue;
        }
        kept.push_str(line);
        kept.push('\n');
    }
    kept
}

/// Expands `a::{b, c::{d, e}}` into `a::b`, `a::c::d`, `a::c::e`.
fn expand_use(tree: &str) -> Vec<String> {
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(open) = tree.find('{') else {
        return vec![tree];
    };
    let prefix = &tree[..open];
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .flat_map(|p| expand_use(&format!("{prefix}{p}")))
        .collect()
}

/// Every path the code names that starts at the crate root or at `super`
/// (comments are not code: doc links do not count).
fn referenced_paths(text: &str) -> Vec<String> {
    let code: Vec<&str> = text
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect();
    let mut paths = Vec::new();
    let mut statement: Option<String> = None;
    for line in &code {
        let trimmed = line.trim_start();
        let opens = ["use ", "pub use ", "pub(crate) use ", "pub(super) use "]
            .iter()
            .find_map(|p| trimmed.strip_prefix(p));
        if let Some(rest) = opens {
            statement = Some(String::new());
            statement.as_mut().expect("just set").push_str(rest);
        } else if let Some(s) = statement.as_mut() {
            s.push_str(trimmed);
        }
        if let Some(s) = statement.take_if(|s| s.contains(';')) {
            paths.extend(expand_use(s.split(';').next().unwrap_or("")));
        }
        for word in line.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')) {
            if ["crate::", "tracegate::", "super::"]
                .iter()
                .any(|p| word.starts_with(p))
            {
                paths.push(word.to_string());
            }
        }
    }
    paths
}

/// Resolves a path named in `from` to the module it points into: the longest
/// prefix that is a known module.
fn resolve(from: &[String], path: &str, modules: &BTreeSet<Vec<String>>) -> Option<Vec<String>> {
    let segments: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    let (mut base, rest): (Vec<String>, &[&str]) = match segments.first()? {
        &"crate" if from.first().map(String::as_str) == Some("bin") => {
            (vec!["bin".to_string()], &segments[1..])
        }
        &"crate" | &"tracegate" => (Vec::new(), &segments[1..]),
        &"super" => {
            // `super` is the parent module, whether the file is `a.rs` or `a/mod.rs`.
            let supers = segments.iter().take_while(|s| **s == "super").count();
            let keep = from.len().saturating_sub(supers);
            (from[..keep].to_vec(), &segments[supers..])
        }
        _ => return None,
    };
    let mut best = modules.contains(&base).then(|| base.clone());
    for segment in rest {
        base.push(segment.to_string());
        if modules.contains(&base) {
            best = Some(base.clone());
        }
    }
    best
}

struct Source {
    module: Vec<String>,
    text: String,
}

fn sources() -> Vec<Source> {
    source_files()
        .into_iter()
        .map(|file| {
            let text = fs::read_to_string(src_dir().join(&file)).expect("readable source");
            let non_test = non_test_text(&file, &text);
            Source {
                module: module_of(&file),
                text: non_test,
            }
        })
        .collect()
}

#[test]
fn folders_depend_on_each_other_in_one_direction() {
    let sources = sources();
    let modules: BTreeSet<Vec<String>> = sources.iter().map(|s| s.module.clone()).collect();
    // folder → (entry → entries it uses)
    let mut graphs: BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    let mut why: BTreeMap<(Vec<String>, String, String), String> = BTreeMap::new();
    for source in &sources {
        let from = &source.module;
        for path in referenced_paths(&source.text) {
            let Some(to) = resolve(from, &path, &modules) else {
                continue;
            };
            let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if common == from.len() || common == to.len() {
                continue; // one contains the other: a folder and its own files
            }
            let folder = from[..common].to_vec();
            let (a, b) = (from[common].clone(), to[common].clone());
            why.entry((folder.clone(), a.clone(), b.clone()))
                .or_insert_with(|| format!("{} uses {path}", from.join("::")));
            graphs
                .entry(folder)
                .or_default()
                .entry(a)
                .or_default()
                .insert(b);
        }
    }
    let mut circles = Vec::new();
    for (folder, graph) in &graphs {
        for (a, uses) in graph {
            for b in uses {
                if a < b && graph.get(b).is_some_and(|back| back.contains(a)) {
                    circles.push(format!(
                        "in src/{}: {a} ↔ {b} ({}; {})",
                        folder.join("/"),
                        why[&(folder.clone(), a.clone(), b.clone())],
                        why[&(folder.clone(), b.clone(), a.clone())],
                    ));
                }
            }
        }
        // Longer circles: any entry that reaches itself.
        for start in graph.keys() {
            let mut seen = BTreeSet::new();
            let mut stack: Vec<&String> = graph[start].iter().collect();
            while let Some(next) = stack.pop() {
                if next == start {
                    circles.push(format!(
                        "in src/{}: a circle through {start}",
                        folder.join("/")
                    ));
                    break;
                }
                if seen.insert(next.clone()) {
                    stack.extend(graph.get(next).into_iter().flatten());
                }
            }
        }
    }
    circles.sort();
    circles.dedup();
    assert!(
        circles.is_empty(),
        "import circles:\n{}",
        circles.join("\n")
    );
}

#[test]
fn long_files_say_why() {
    let mut long = Vec::new();
    for file in source_files() {
        let text = fs::read_to_string(src_dir().join(&file)).expect("readable source");
        let lines = non_test_text(&file, &text).lines().count();
        if lines > MAX_LINES && !text.lines().any(|l| l.starts_with(LONG_FILE_REASON)) {
            long.push(format!(
                "src/{} has {lines} lines of non-test code",
                file.display()
            ));
        }
    }
    assert!(
        long.is_empty(),
        "split these by responsibility, or give the reason in a `{LONG_FILE_REASON}` line:\n{}",
        long.join("\n")
    );
}

/// The most non-test lines `src/cli/` may hold, and the longest function in
/// it: the CLI parses flags, reads the environment, prints, writes files and
/// maps errors to exit codes; the gate's work is the library's (`driver`).
const CLI_MAX_LINES: usize = 1_500;
const CLI_MAX_FUNCTION_LINES: usize = 80;
/// Library modules that decide a verdict: the CLI reaches them only
/// through `driver`.
const CLI_FORBIDDEN: [&str; 4] = [
    "tracegate::history::drift",
    "tracegate::history::window",
    "tracegate::history::ratios",
    "tracegate::gate::collectives",
];

/// The length in lines of every function in `text`, with its first line:
/// from its `fn` line to the closing brace at the same indentation.
fn function_lengths(text: &str) -> Vec<(usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    for (start, line) in lines.iter().enumerate() {
        let code = line.trim_start();
        let code = code
            .strip_prefix("pub(super) ")
            .or(code.strip_prefix("pub "))
            .unwrap_or(code);
        if !code.starts_with("fn ") {
            continue;
        }
        let close = format!("{}}}", &line[..line.len() - line.trim_start().len()]);
        if let Some(end) = lines[start..].iter().position(|l| *l == close) {
            found.push((end + 1, line.trim().to_string()));
        }
    }
    found
}

#[test]
fn the_cli_only_parses_prints_and_writes() {
    let cli: Vec<(PathBuf, String)> = source_files()
        .into_iter()
        .filter(|file| file.starts_with("cli"))
        .map(|file| {
            let text = fs::read_to_string(src_dir().join(&file)).expect("readable source");
            let non_test = non_test_text(&file, &text);
            (file, non_test)
        })
        .collect();
    assert!(cli.len() >= 5, "src/cli/ is where the CLI lives");
    let total: usize = cli.iter().map(|(_, text)| text.lines().count()).sum();
    assert!(
        total <= CLI_MAX_LINES,
        "src/cli/ holds {total} non-test lines (at most {CLI_MAX_LINES}): move the work into the library"
    );
    let mut problems = Vec::new();
    for (file, text) in &cli {
        for (length, first) in function_lengths(text) {
            if length > CLI_MAX_FUNCTION_LINES {
                problems.push(format!(
                    "src/{}: `{first}` is {length} lines",
                    file.display()
                ));
            }
        }
        for path in referenced_paths(text) {
            if let Some(module) = CLI_FORBIDDEN.iter().find(|m| path.starts_with(**m)) {
                problems.push(format!("src/{} uses {module}", file.display()));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn function_lengths_count_from_fn_to_its_brace() {
    let text = "fn a() {\n    x();\n}\n\n    pub(super) fn b(\n        y: u8,\n    ) {\n    }\n";
    let lengths = function_lengths(text);
    assert_eq!(lengths.iter().map(|(n, _)| *n).collect::<Vec<_>>(), [3, 4]);
}

/// Every `src/` path that docs/ARCHITECTURE.md's layout table names.
fn documented_paths() -> BTreeSet<String> {
    let doc =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ARCHITECTURE.md"))
            .expect("docs/ARCHITECTURE.md");
    let mut paths = BTreeSet::new();
    for line in doc.lines().filter(|l| l.starts_with("| `src/")) {
        let cell = line.split('|').nth(1).unwrap_or("");
        for piece in cell.split('`').skip(1).step_by(2) {
            if piece.starts_with("src/") {
                paths.insert(piece.to_string());
            }
        }
    }
    paths
}

#[test]
fn architecture_table_matches_the_tree() {
    let documented = documented_paths();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut problems = Vec::new();
    for path in &documented {
        if !root.join(path).exists() {
            problems.push(format!("the table names {path}, which does not exist"));
        }
    }
    for file in source_files() {
        let file = format!("src/{}", file.display());
        // A file is covered by its own row or by a row for a folder holding it.
        let covered = documented
            .iter()
            .any(|d| *d == file || (d.ends_with('/') && file.starts_with(d.as_str())));
        if !covered {
            problems.push(format!("{file} is in no row of the table"));
        }
    }
    assert!(
        problems.is_empty(),
        "docs/ARCHITECTURE.md's table:\n{}",
        problems.join("\n")
    );
}

#[test]
fn use_groups_expand() {
    assert_eq!(
        expand_use("crate::a::{b, c::{d, e}}"),
        vec!["crate::a::b", "crate::a::c::d", "crate::a::c::e"]
    );
}
