//! Why a comment could not be published, in words that say what to do.

use std::time::Duration;

use super::redact::clean;

/// Where the fork-safe workflow is explained (for the 403 message).
pub const FORK_DOC: &str = "docs/GITHUB.md#pull-requests-from-forks";

/// Why the comment could not be published.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    /// No token in the environment.
    #[error(
        "no GitHub token: ${env} is unset or empty (in a workflow, pass `{env}: ${{{{ github.token }}}}` in `env:`), or name another variable with --token-env"
    )]
    NoToken {
        /// The variable looked at.
        env: String,
    },
    /// The token holds characters no token has (spaces, non-ASCII).
    #[error(
        "${env} does not hold a token (it has spaces, line breaks or non-ASCII characters inside)"
    )]
    BadToken {
        /// The variable looked at.
        env: String,
    },
    /// `GITHUB_REPOSITORY` is unset or not `OWNER/NAME`.
    #[error("GITHUB_REPOSITORY {0}: it must name the repository as OWNER/NAME")]
    BadRepository(String),
    /// `GITHUB_API_URL` is not an http(s) URL.
    #[error("GITHUB_API_URL `{0}` is not an http:// or https:// URL")]
    BadApiUrl(String),
    /// The event JSON cannot be read.
    #[error("{path}: cannot read the workflow event (GITHUB_EVENT_PATH): {message}")]
    Event {
        /// `GITHUB_EVENT_PATH`.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// `--head-sha` is not a commit SHA.
    #[error("--head-sha `{0}` is not a commit SHA (40 hex digits)")]
    BadSha(String),
    /// The body is over GitHub's limit.
    #[error(
        "the comment is {chars} characters, over GitHub's limit of {limit}: not sent (render it with `report::gate::render_comment`, which leaves detail out to fit)"
    )]
    TooLong {
        /// Its length (UTF-16 code units).
        chars: usize,
        /// [`COMMENT_LIMIT`](crate::render::gate::COMMENT_LIMIT).
        limit: usize,
    },
    /// The body does not start with the marker for this key.
    #[error(
        "the comment does not start with its marker `{marker}`: a later run could not find it to update; not sent"
    )]
    NoMarker {
        /// The expected marker.
        marker: String,
    },
    /// The PR named by `--pr` is not at the commit the report is for.
    #[error(
        "pull request #{number} is at {actual}, not at {expected} which the report is for: it was pushed to since (a newer run will comment), or --pr names the wrong pull request; not commenting"
    )]
    HeadMismatch {
        /// The PR.
        number: u64,
        /// The commit the report is for.
        expected: String,
        /// The PR's head now.
        actual: String,
    },
    /// 401.
    #[error(
        "{action}: GitHub rejected the token (401 Unauthorized{}): it is wrong, expired or revoked; check the secret you pass, or use the workflow's own `${{{{ github.token }}}}`",
        colon(message)
    )]
    Unauthorized {
        /// What we were doing.
        action: String,
        /// GitHub's message.
        message: String,
    },
    /// 403 (not a rate limit).
    #[error(
        "{action}: the token may not do this (403 Forbidden{}). Give the job `permissions: pull-requests: write`. On a pull request from a fork, GitHub hands out a read-only token whatever the workflow asks: use the two-phase workflow ({FORK_DOC}), where a `workflow_run` job posts the report",
        colon(message)
    )]
    Forbidden {
        /// What we were doing.
        action: String,
        /// GitHub's message.
        message: String,
    },
    /// 404.
    #[error(
        "{action}: not found (404{}); check GITHUB_REPOSITORY and the pull-request number. GitHub also answers 404 when the token cannot see a private repository",
        colon(message)
    )]
    NotFound {
        /// What we were doing.
        action: String,
        /// GitHub's message.
        message: String,
    },
    /// 422.
    #[error(
        "{action}: GitHub refused the request as invalid (422 Unprocessable Entity{}); the comment was not written",
        colon(message)
    )]
    Invalid {
        /// What we were doing.
        action: String,
        /// GitHub's message.
        message: String,
    },
    /// Another unexpected status.
    #[error("{action}: GitHub answered {status}{}", colon(message))]
    Status {
        /// What we were doing.
        action: String,
        /// The HTTP status.
        status: u16,
        /// GitHub's message.
        message: String,
    },
    /// Transient failures until the retries ran out.
    #[error("{action}: GitHub is unavailable ({reason}); gave up after {attempts} attempt(s)")]
    Unavailable {
        /// What we were doing.
        action: String,
        /// Attempts made.
        attempts: u32,
        /// The last failure.
        reason: String,
    },
    /// The publish step ran out of its time ([`Retry::deadline`](super::Retry),
    /// `--comment-timeout`).
    #[error(
        "{action}: gave up after {}, the time allowed for publishing the comment (--comment-timeout){}",
        seconds(*limit),
        colon(reason)
    )]
    Deadline {
        /// What we were doing.
        action: String,
        /// The time allowed.
        limit: Duration,
        /// Why time ran out: the request that was unanswered, or the last
        /// failure before a retry that would have come too late.
        reason: String,
    },
    /// The request could not be made, or the answer not understood.
    #[error("{action}: {message}")]
    Client {
        /// What we were doing.
        action: String,
        /// What went wrong.
        message: String,
    },
    /// No async runtime could be started.
    #[error("cannot start the HTTP runtime: {0}")]
    Runtime(std::io::Error),
}

impl PublishError {
    /// This error with every text field made safe to print
    /// ([`clean`]): the token redacted, one bounded line that cannot start a
    /// workflow command. Applied to every error leaving [`publish`](super::publish).
    pub(super) fn cleaned(mut self, token: &str) -> PublishError {
        for text in self.texts() {
            *text = clean(text, token);
        }
        self
    }

    /// Every text field.
    fn texts(&mut self) -> Vec<&mut String> {
        use PublishError as E;
        match self {
            E::NoToken { env } | E::BadToken { env } => vec![env],
            E::BadRepository(text) | E::BadApiUrl(text) | E::BadSha(text) => vec![text],
            E::NoMarker { marker } => vec![marker],
            E::Event { path, message } => vec![path, message],
            E::HeadMismatch {
                expected, actual, ..
            } => vec![expected, actual],
            E::Unauthorized { action, message }
            | E::Forbidden { action, message }
            | E::NotFound { action, message }
            | E::Invalid { action, message }
            | E::Status {
                action, message, ..
            }
            | E::Client { action, message } => vec![action, message],
            E::Unavailable { action, reason, .. } | E::Deadline { action, reason, .. } => {
                vec![action, reason]
            }
            E::TooLong { .. } | E::Runtime(_) => Vec::new(),
        }
    }
}

/// `limit` in seconds, as `2s` or `0.5s`.
pub fn seconds(limit: Duration) -> String {
    format!("{}s", limit.as_secs_f64())
}

fn colon(message: &str) -> String {
    if message.is_empty() {
        String::new()
    } else {
        format!(": {message}")
    }
}
