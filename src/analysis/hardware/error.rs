//! Why a catalog or a `--hardware` spec could not be used.

/// Why a catalog or a `--hardware` spec could not be used. Each message is one
/// line naming the file (with YAML line:column where there is one), the
/// entry, or the inline key at fault.
#[derive(Debug, thiserror::Error)]
pub enum HardwareError {
    /// A catalog file could not be read.
    #[error("{path}: cannot read: {source}")]
    Io {
        /// The file.
        path: String,
        /// What the OS said.
        source: std::io::Error,
    },
    /// A catalog file is not valid YAML or does not have the expected shape.
    #[error("{file}{}: {message}", location_suffix(*.location))]
    Yaml {
        /// The file (or the label the text was given under).
        file: String,
        /// 1-based line and column, when the parser knows them.
        location: Option<(usize, usize)>,
        /// What the parser said.
        message: String,
    },
    /// A catalog entry parsed but its values are unusable.
    #[error("{file}: GPU `{entry}`: {message}")]
    Invalid {
        /// The file.
        file: String,
        /// The entry's name (or its position when it has none).
        entry: String,
        /// What is wrong.
        message: String,
    },
    /// An inline `--hardware` spec is malformed.
    #[error("hardware spec `{spec}`: {message}")]
    Inline {
        /// The spec as given.
        spec: String,
        /// The key at fault, when one is.
        key: Option<String>,
        /// What is wrong.
        message: String,
    },
    /// A `--hardware NAME` names no catalog entry.
    #[error(
        "unknown GPU `{name}`: {reason}; known: {known}{}",
        did_you_mean(suggestions)
    )]
    UnknownName {
        /// The name as given.
        name: String,
        /// Why it matched nothing (or too much).
        reason: String,
        /// The catalog's canonical names, comma-separated.
        known: String,
        /// The closest canonical names, best first (see
        /// [`crate::analysis::hardware::Catalog::suggestions`]).
        suggestions: Vec<String>,
    },
}

/// `; did you mean `A`, `B` or `C`?`, or nothing without suggestions.
pub(super) fn did_you_mean(suggestions: &[String]) -> String {
    let quoted: Vec<String> = suggestions.iter().map(|s| format!("`{s}`")).collect();
    match quoted.split_last() {
        None => String::new(),
        Some((last, [])) => format!("; did you mean {last}?"),
        Some((last, rest)) => format!("; did you mean {} or {last}?", rest.join(", ")),
    }
}

/// `:LINE:COLUMN` when the location is known.
fn location_suffix(location: Option<(usize, usize)>) -> String {
    match location {
        Some((line, column)) => format!(":{line}:{column}"),
        None => String::new(),
    }
}
