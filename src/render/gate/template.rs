//! Template loading: the embedded `comment.md.j2` and `summary.md.j2` or a
//! user's override, parsed in a minijinja environment that is strict about
//! undefined variables and escapes every printed value for Markdown.

use std::path::Path;

use minijinja::syntax::SyntaxConfig;
use minijinja::value::{StringInput, Value};
use minijinja::{AutoEscape, Environment, Output, State, UndefinedBehavior};

use crate::render::text::{escape, escape_html};

/// The embedded comment template.
pub(super) const COMMENT_TEMPLATE: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/templates/comment.md.j2"
));

/// The embedded summary template.
pub(super) const SUMMARY_TEMPLATE: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/templates/summary.md.j2"
));

/// The comment template's file name in a template directory.
pub(super) const COMMENT_FILE: &str = "comment.md.j2";
/// The summary template's file name in a template directory.
pub(super) const SUMMARY_FILE: &str = "summary.md.j2";
const AUTO_ESCAPE: &str = "markdown";

/// A template that cannot be read or rendered.
#[derive(Debug, thiserror::Error)]
pub enum TemplateError {
    /// The override file exists but cannot be read.
    #[error("{path}: cannot read: {source}")]
    Read {
        /// The template file.
        path: String,
        /// What the OS said.
        source: std::io::Error,
    },
    /// A syntax error, an undefined variable or a failed filter.
    #[error("{path}:{line}: {message}")]
    Render {
        /// The template (the embedded name or the override's path).
        path: String,
        /// Line in the template (0 when unknown).
        line: usize,
        /// What went wrong, naming the undefined variable where there is one.
        message: String,
    },
}

/// A parsed template and its environment.
pub(super) struct Loaded {
    env: Environment<'static>,
    name: String,
}

impl Loaded {
    /// Renders the template with `context`.
    pub(super) fn render(&self, context: Value) -> Result<String, TemplateError> {
        let template = self
            .env
            .get_template(&self.name)
            .map_err(|e| template_error(&self.name, &e))?;
        template
            .render(context)
            .map_err(|e| template_error(&self.name, &e))
    }
}

fn template_error(name: &str, error: &minijinja::Error) -> TemplateError {
    TemplateError::Render {
        path: name.to_string(),
        line: error.line().unwrap_or(0),
        message: match error.detail() {
            Some(detail) => format!("{}: {detail}", error.kind()),
            None => error.kind().to_string(),
        },
    }
}

/// `dir/file` when the directory is given and the file exists there, else
/// the embedded source.
pub(super) fn load_template(
    dir: Option<&Path>,
    file: &str,
    embedded: &'static str,
) -> Result<Loaded, TemplateError> {
    let (name, source) = match dir.map(|d| d.join(file)).filter(|p| p.is_file()) {
        Some(path) => {
            let name = path.display().to_string();
            let source = std::fs::read_to_string(&path).map_err(|source| TemplateError::Read {
                path: name.clone(),
                source,
            })?;
            (name, source)
        }
        None => (file.to_string(), embedded.to_string()),
    };
    let mut env = environment();
    env.add_template_owned(name.clone(), source)
        .map_err(|e| template_error(&name, &e))?;
    Ok(Loaded { env, name })
}

/// The minijinja environment: strict undefined variables, trim/lstrip blocks,
/// trailing newline kept, Markdown auto-escaping, the `md` filter.
fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    // Debug info lets an undefined-variable error name the variable.
    env.set_debug(true);
    env.set_syntax(
        SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .keep_trailing_newline(true)
            .build()
            .expect("the default delimiters are valid"),
    );
    env.set_auto_escape_callback(|_| AutoEscape::Custom(AUTO_ESCAPE.into()));
    env.set_formatter(markdown_formatter);
    env.add_filter("html", |input: StringInput| {
        Value::from_safe_string(if input.is_safe() {
            input.as_str().to_string()
        } else {
            escape_html(input.as_str())
        })
    });
    env.add_filter("md", |input: StringInput| {
        Value::from_safe_string(if input.is_safe() {
            input.as_str().to_string()
        } else {
            escape(input.as_str())
        })
    });
    env
}

fn display(value: &Value) -> String {
    value
        .as_str()
        .map_or_else(|| value.to_string(), str::to_string)
}

/// Prints values escaped for Markdown under the `markdown` auto-escape; safe
/// strings and other modes go to minijinja's own formatter.
fn markdown_formatter(
    out: &mut Output,
    state: &mut State,
    value: &Value,
) -> Result<(), minijinja::Error> {
    let markdown = matches!(state.auto_escape(), AutoEscape::Custom(name) if name == AUTO_ESCAPE);
    if value.is_safe() || !markdown {
        return minijinja::escape_formatter(out, state, value);
    }
    out.write_str(&escape(&display(value)))
        .map_err(minijinja::Error::from)
}
