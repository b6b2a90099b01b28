//! The publish edge: the rendered comment (`comment.md`) posted to the pull
//! request, as one sticky comment per comment key.
//!
//! [`publish`] works out the pull request from the workflow's environment
//! ([`event`]), finds our previous comment and creates, updates or recreates
//! it. Our comment is the one whose body starts with the hidden marker
//! ([`comment_marker`]) *and* whose author is the token's own identity
//! (`--comment-author`, else `GET /user`; an Actions token may not read it and
//! gets 403, and then the identity is `github-actions[bot]`), so a person
//! quoting the marker is never overwritten. Every page of comments is read.
//!
//! Requests go through the `client` module: each has a time limit covering
//! its whole answer, the step as a whole a deadline ([`Retry`]); transient
//! failures are retried with bounded backoff, other failures become a
//! [`PublishError`] that says in plain words what to do. The token is read
//! from the environment and sent only to the API host; everything returned
//! to the caller (errors, comment addresses, notes) passes through the
//! `redact` module, so the token never appears in it even when the API echoes
//! it, and no text from the API can start a workflow command in the log. A
//! body over GitHub's [`COMMENT_LIMIT`] is never sent. The library never
//! prints: the caller gets a [`Report`] (what was done, and notes) or the
//! error.

mod client;
mod error;
pub mod event;
mod redact;

use std::fmt;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::gate::verdict::{Outcome as VerdictOutcome, Severity, Verdict};
use crate::render::gate::{COMMENT_LIMIT, comment_marker};
use client::{Client, Verb};
pub use client::{DEFAULT_DEADLINE, Retry};
pub use error::{FORK_DOC, PublishError};
use redact::clean;

/// The public GitHub API, when `GITHUB_API_URL` is unset.
pub const DEFAULT_API_URL: &str = "https://api.github.com";

/// The identity of an Actions token (`GITHUB_TOKEN`), which cannot read
/// `GET /user`.
pub const ACTIONS_BOT: &str = "github-actions[bot]";

/// Pages of comments read at most (100 comments each).
const MAX_PAGES: usize = 100;

/// How the comment is kept (`--comment-mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CommentMode {
    /// Edit our earlier comment in place; create one when there is none.
    #[default]
    Update,
    /// Post a new comment (at the bottom of the conversation) and delete
    /// our earlier ones.
    Recreate,
    /// Write nothing to GitHub.
    Off,
}

/// When a new comment is worth posting (`--comment-on`). An earlier comment
/// is always brought up to date, so that a PR whose findings were fixed
/// says so rather than keeping a stale failure.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CommentOn {
    /// On every run.
    #[default]
    Always,
    /// When there is a fail or warn finding.
    Findings,
    /// When the gate fails or is inconclusive (exit 1).
    Fail,
}

impl CommentOn {
    /// Whether `verdict` deserves a comment of its own.
    pub fn wants(self, verdict: &Verdict) -> bool {
        match self {
            CommentOn::Always => true,
            CommentOn::Findings => verdict
                .findings
                .iter()
                .any(|f| matches!(f.severity, Severity::Fail | Severity::Warn)),
            CommentOn::Fail => verdict.outcome != VerdictOutcome::Pass,
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            CommentOn::Always => "always",
            CommentOn::Findings => "findings",
            CommentOn::Fail => "fail",
        }
    }
}

/// What the command line says about publishing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// The environment variable holding the token (`--token-env`).
    pub token_env: String,
    /// The pull request (`--pr`), overriding the event's. A number given
    /// here is checked against the expected head SHA when one is known.
    pub pr: Option<u64>,
    /// The commit the report is for (`--head-sha`); by default the event's
    /// (`workflow_run.head_sha`, or the PR's head).
    pub head_sha: Option<String>,
    /// The comment key (`--comment-key`).
    pub key: String,
    /// `--comment-mode`.
    pub mode: CommentMode,
    /// `--comment-on`.
    pub on: CommentOn,
    /// The login our comments are written by (`--comment-author`), for a
    /// token that cannot read `GET /user` and is not an Actions token (a
    /// GitHub App posts as `NAME[bot]`); by default asked of GitHub.
    pub author: Option<String>,
    /// Retries and time limits.
    pub retry: Retry,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            token_env: "GITHUB_TOKEN".to_string(),
            pr: None,
            head_sha: None,
            key: "default".to_string(),
            mode: CommentMode::Update,
            on: CommentOn::Always,
            author: None,
            retry: Retry::default(),
        }
    }
}

/// What [`publish`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// `--comment-mode off`.
    Off,
    /// The run is not about a pull request (a push, a schedule, a run
    /// outside Actions): nothing was written.
    NoPullRequest {
        /// `GITHUB_EVENT_NAME`, when set.
        event: Option<String>,
    },
    /// `--comment-on` did not ask for a comment and there was no earlier
    /// one to bring up to date.
    NotNeeded {
        /// The `--comment-on` setting.
        on: CommentOn,
    },
    /// A new comment.
    Created {
        /// Its address.
        url: String,
    },
    /// Our earlier comment, edited.
    Updated {
        /// Its address.
        url: String,
    },
    /// Our earlier comment already said exactly this.
    Unchanged {
        /// Its address.
        url: String,
    },
    /// A new comment replacing our earlier ones, which were deleted.
    Recreated {
        /// The new comment's address.
        url: String,
        /// How many were deleted.
        deleted: usize,
    },
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Off => write!(f, "not commenting: --comment-mode off"),
            Outcome::NoPullRequest { event: Some(event) } => write!(
                f,
                "not commenting: this `{event}` run is not about a pull request (the verdict is in the job summary)"
            ),
            Outcome::NoPullRequest { event: None } => write!(
                f,
                "not commenting: no pull request (GITHUB_EVENT_PATH names none; give --pr N)"
            ),
            Outcome::NotNeeded { on } => write!(
                f,
                "not commenting: nothing to report under --comment-on {}, and no earlier comment to update",
                on.as_str()
            ),
            Outcome::Created { url } => write!(f, "posted the pull-request comment: {url}"),
            Outcome::Updated { url } => write!(f, "updated the pull-request comment: {url}"),
            Outcome::Unchanged { url } => {
                write!(f, "the pull-request comment is already up to date: {url}")
            }
            Outcome::Recreated { url, deleted } => write!(
                f,
                "posted a new pull-request comment and deleted {deleted} earlier: {url}"
            ),
        }
    }
}

/// What [`publish`] did, and what it noticed on the way (retries, an
/// identity it could not tell, duplicates removed), one sentence each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// The outcome.
    pub outcome: Outcome,
    /// Notes for the log.
    pub notes: Vec<String>,
}

/// `body` with a last line linking the workflow artifact (replay packages
/// and `report.json`) at `url`. The link is left out when it would take the
/// comment over [`COMMENT_LIMIT`] (the renderer fills the comment up to the
/// limit only when there is a lot to say). A `url` that is not a plain
/// http(s) address is refused.
pub fn with_artifact_link(body: &str, url: &str) -> Result<String, PublishError> {
    if !crate::render::text::plain_url(url) {
        return Err(PublishError::Client {
            action: "link the artifact".to_string(),
            message: format!("`{url}` is not an http(s) URL"),
        });
    }
    let line =
        format!("\n---\n📦 Replay packages and `report.json`: [workflow artifact](<{url}>)\n");
    let mut text = body.trim_end_matches('\n').to_string();
    text.push('\n');
    text.push_str(&line);
    if text.encode_utf16().count() <= COMMENT_LIMIT {
        Ok(text)
    } else {
        Ok(body.to_string())
    }
}

/// The environment, as a lookup (`|name| std::env::var(name).ok()` in the
/// binary; a map in tests).
pub type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// [`publish`] on a runtime of its own, for callers that are not async.
pub fn publish_blocking(
    env: Env<'_>,
    options: &Options,
    verdict: &Verdict,
    body: &str,
) -> Result<Report, PublishError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(PublishError::Runtime)?;
    let result = runtime.block_on(publish(env, options, verdict, body));
    // A name lookup still running on the blocking pool after a timeout must
    // not hold the process: dropping the runtime would wait for it.
    runtime.shutdown_background();
    result
}

/// Publishes `body` (the rendered comment for `verdict`, starting with the
/// marker of `options.key`) to the pull request the environment names.
///
/// Reads `GITHUB_EVENT_NAME`, `GITHUB_EVENT_PATH`, `GITHUB_REPOSITORY`,
/// `GITHUB_API_URL` and the token variable. Writes nothing when the mode is
/// off or the run is not about a pull request. Takes at most
/// [`Retry::deadline`] on the network. Every text in the report or the
/// error is safe to print: the token redacted, one line, no workflow
/// command.
pub async fn publish(
    env: Env<'_>,
    options: &Options,
    verdict: &Verdict,
    body: &str,
) -> Result<Report, PublishError> {
    let token = env(&options.token_env)
        .map(|t| t.trim().to_string())
        .unwrap_or_default();
    match publish_raw(env, options, verdict, body).await {
        Ok(report) => Ok(report.cleaned(&token)),
        Err(error) => Err(error.cleaned(&token)),
    }
}

/// [`publish`], with texts as they came.
async fn publish_raw(
    env: Env<'_>,
    options: &Options,
    verdict: &Verdict,
    body: &str,
) -> Result<Report, PublishError> {
    let done = |outcome| {
        Ok(Report {
            outcome,
            notes: Vec::new(),
        })
    };
    if options.mode == CommentMode::Off {
        return done(Outcome::Off);
    }
    let marker = comment_marker(&options.key);
    if !body.starts_with(&marker) {
        return Err(PublishError::NoMarker { marker });
    }
    let chars = body.encode_utf16().count();
    if chars > COMMENT_LIMIT {
        return Err(PublishError::TooLong {
            chars,
            limit: COMMENT_LIMIT,
        });
    }
    if let Some(sha) = &options.head_sha {
        if !event::is_sha(sha) {
            return Err(PublishError::BadSha(sha.clone()));
        }
    }
    let facts = read_event(env)?;
    let Some(number) = options.pr.or(facts.number) else {
        return done(Outcome::NoPullRequest {
            event: env("GITHUB_EVENT_NAME").filter(|e| !e.is_empty()),
        });
    };
    let repository = repository(env)?;
    let token = env(&options.token_env)
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .ok_or_else(|| PublishError::NoToken {
            env: options.token_env.clone(),
        })?;
    // octocrab panics on a header value it cannot build.
    if !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(PublishError::BadToken {
            env: options.token_env.clone(),
        });
    }
    let api_url = env("GITHUB_API_URL")
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| DEFAULT_API_URL.to_string());
    let client = Client::new(&api_url, token, options.retry.clone())?;
    let pull = Pull {
        client: &client,
        repository: &repository,
        number,
        marker: &marker,
    };
    let mut notes = Vec::new();
    if options.pr.is_some() {
        match options.head_sha.clone().or(facts.head_sha) {
            Some(expected) => pull.verify_head(&expected).await?,
            None => notes.push(format!(
                "--pr {number} was not checked against a head SHA (none given, none in the event)"
            )),
        }
    }
    let (identity, assumed) = match &options.author {
        Some(login) => (login.clone(), false),
        None => match pull.identity().await? {
            Some(login) => (login, false),
            None => (ACTIONS_BOT.to_string(), true),
        },
    };
    let listing = pull.list(&identity).await?;
    // Taking the Actions bot as the author is right on every ordinary
    // Actions run; it is worth a word only when it may be wrong: none of the
    // marked comments is the bot's, and some are someone else's (a GitHub
    // App's token posts as `NAME[bot]`, which we cannot know).
    if assumed && listing.ours.is_empty() && listing.others > 0 {
        notes.push(format!(
            "{} comment(s) on {} start with this key's marker but are not by {ACTIONS_BOT}, taken as our author because the token cannot read its own identity (GET /user: 403); if they are this token's (a GitHub App posts as NAME[bot]), give --comment-author NAME[bot] so that the comment is updated rather than posted anew",
            listing.others,
            pull.label()
        ));
    }
    let ours = listing.ours;
    let outcome = pull
        .act(&ours, &identity, body, options, verdict, &mut notes)
        .await?;
    notes.extend(client.take_notes());
    Ok(Report { outcome, notes })
}

impl Report {
    /// This report with every text made safe to print (`redact`).
    fn cleaned(self, token: &str) -> Report {
        Report {
            outcome: self.outcome.cleaned(token),
            notes: self.notes.iter().map(|n| clean(n, token)).collect(),
        }
    }
}

impl Outcome {
    /// This outcome with its comment address made safe to print.
    fn cleaned(self, token: &str) -> Outcome {
        let c = |url: String| clean(&url, token);
        match self {
            Outcome::NoPullRequest { event } => Outcome::NoPullRequest {
                event: event.map(c),
            },
            Outcome::Created { url } => Outcome::Created { url: c(url) },
            Outcome::Updated { url } => Outcome::Updated { url: c(url) },
            Outcome::Unchanged { url } => Outcome::Unchanged { url: c(url) },
            Outcome::Recreated { url, deleted } => Outcome::Recreated {
                url: c(url),
                deleted,
            },
            outcome @ (Outcome::Off | Outcome::NotNeeded { .. }) => outcome,
        }
    }
}

/// The event's facts, or none when there is no event file.
fn read_event(env: Env<'_>) -> Result<event::EventFacts, PublishError> {
    let Some(path) = env("GITHUB_EVENT_PATH").filter(|p| !p.is_empty()) else {
        return Ok(event::EventFacts::default());
    };
    let error = |message: String| PublishError::Event {
        path: path.clone(),
        message,
    };
    let text = std::fs::read_to_string(&path).map_err(|e| error(e.to_string()))?;
    let json: Value = serde_json::from_str(&text).map_err(|e| error(e.to_string()))?;
    Ok(event::facts(&json))
}

/// `GITHUB_REPOSITORY`, checked to be `OWNER/NAME` (so that it cannot
/// change the shape of a route).
fn repository(env: Env<'_>) -> Result<String, PublishError> {
    let value = env("GITHUB_REPOSITORY").unwrap_or_default();
    let valid_part = |p: &str| {
        !p.is_empty()
            && p != "."
            && p != ".."
            && p.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    };
    match value.split_once('/') {
        Some((owner, name)) if valid_part(owner) && valid_part(name) => Ok(value),
        _ if value.is_empty() => Err(PublishError::BadRepository("is not set".to_string())),
        _ => Err(PublishError::BadRepository(format!("is `{value}`"))),
    }
}

/// A comment as the API lists it (only what we use).
#[derive(Debug, Deserialize)]
struct Comment {
    id: u64,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    user: Option<Login>,
    #[serde(default)]
    html_url: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Login {
    login: String,
}

/// The comments that start with our marker, read from every page.
struct Listing {
    /// Those by our identity, oldest first.
    ours: Vec<Comment>,
    /// How many are by someone else (quotes, or another author of ours we
    /// could not tell).
    others: usize,
}

/// One pull request's conversation, through one client.
struct Pull<'a> {
    client: &'a Client,
    repository: &'a str,
    number: u64,
    marker: &'a str,
}

impl Pull<'_> {
    fn label(&self) -> String {
        format!("{}#{}", self.repository, self.number)
    }

    /// Checks that the PR's head is `expected`.
    async fn verify_head(&self, expected: &str) -> Result<(), PublishError> {
        let action = format!("read pull request {}", self.label());
        let route = format!("/repos/{}/pulls/{}", self.repository, self.number);
        let answer = self
            .client
            .send(Verb::Get, &route, None, &action, true)
            .await?;
        let json: Value = parse(&answer.body, &action)?;
        let actual = json
            .pointer("/head/sha")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        if actual.eq_ignore_ascii_case(expected) {
            Ok(())
        } else {
            Err(PublishError::HeadMismatch {
                number: self.number,
                expected: expected.to_string(),
                actual,
            })
        }
    }

    /// The token's login, or `None` when `/user` answers 403 (an Actions
    /// or app installation token).
    async fn identity(&self) -> Result<Option<String>, PublishError> {
        let action = "read the token's identity (GET /user)";
        match self
            .client
            .send(Verb::Get, "/user", None, action, true)
            .await
        {
            Ok(answer) => {
                let login: Login = parse(&answer.body, action)?;
                Ok(Some(login.login))
            }
            Err(PublishError::Forbidden { .. }) => Ok(None),
            Err(error) => Err(error),
        }
    }

    /// The marked comments, every page read: ours (by `identity`), oldest
    /// first, and how many are someone else's.
    async fn list(&self, identity: &str) -> Result<Listing, PublishError> {
        let action = format!("list the comments of {}", self.label());
        let mut route = Some(format!(
            "/repos/{}/issues/{}/comments?per_page=100",
            self.repository, self.number
        ));
        let mut listing = Listing {
            ours: Vec::new(),
            others: 0,
        };
        let mut pages = 0;
        while let Some(current) = route.take() {
            pages += 1;
            if pages > MAX_PAGES {
                return Err(PublishError::Client {
                    action,
                    message: format!("more than {MAX_PAGES} pages of comments"),
                });
            }
            let answer = self
                .client
                .send(Verb::Get, &current, None, &action, true)
                .await?;
            let page: Vec<Comment> = parse(&answer.body, &action)?;
            for comment in page {
                let marked = comment
                    .body
                    .as_deref()
                    .is_some_and(|b| b.starts_with(self.marker));
                let by_us = comment
                    .user
                    .as_ref()
                    .is_some_and(|u| u.login.eq_ignore_ascii_case(identity));
                match (marked, by_us) {
                    (true, true) => listing.ours.push(comment),
                    (true, false) => listing.others += 1,
                    (false, _) => {}
                }
            }
            route = answer.next;
        }
        listing.ours.sort_by_key(|c| c.id);
        Ok(listing)
    }

    /// Creates, updates or recreates the comment as `--comment-mode` and
    /// `--comment-on` say.
    async fn act(
        &self,
        ours: &[Comment],
        identity: &str,
        body: &str,
        options: &Options,
        verdict: &Verdict,
        notes: &mut Vec<String>,
    ) -> Result<Outcome, PublishError> {
        let on = options.on;
        let wanted = on.wants(verdict);
        let outcome = match (ours.first(), options.mode) {
            (None, _) if !wanted => return Ok(Outcome::NotNeeded { on }),
            (None, _) => Outcome::Created {
                url: self.create(body, identity, ours).await?,
            },
            // A new comment when there is something to say; an earlier one
            // that no longer has is corrected in place rather than reposted.
            (Some(_), CommentMode::Recreate) if wanted => {
                let url = self.create(body, identity, ours).await?;
                for old in ours {
                    self.delete(old.id).await?;
                }
                return Ok(Outcome::Recreated {
                    url,
                    deleted: ours.len(),
                });
            }
            (Some(first), _) if first.body.as_deref() == Some(body) => Outcome::Unchanged {
                url: first.html_url.clone().unwrap_or_default(),
            },
            (Some(first), _) => Outcome::Updated {
                url: self.update(first.id, body).await?,
            },
        };
        if ours.len() > 1 {
            for duplicate in &ours[1..] {
                self.delete(duplicate.id).await?;
            }
            notes.push(format!(
                "deleted {} duplicate tracegate comment(s) with the same key",
                ours.len() - 1
            ));
        }
        Ok(outcome)
    }

    /// Posts the comment. A `POST` is not repeated blindly: after a
    /// transient failure the comment may exist all the same, so before the
    /// next attempt we look for it (one of ours that is not in `earlier`)
    /// and update it if it is there.
    async fn create(
        &self,
        body: &str,
        identity: &str,
        earlier: &[Comment],
    ) -> Result<String, PublishError> {
        let action = format!("post the comment on {}", self.label());
        let route = format!("/repos/{}/issues/{}/comments", self.repository, self.number);
        let payload = json!({ "body": body });
        let mut attempt = 1;
        loop {
            match self
                .client
                .send(Verb::Post, &route, Some(&payload), &action, false)
                .await
            {
                Ok(answer) => return url_of(&answer.body, &action),
                Err(PublishError::Unavailable { reason, .. })
                    if attempt < self.client.attempts() =>
                {
                    self.client.pause(&action, &reason, attempt).await?;
                }
                Err(error) => return Err(error),
            }
            attempt += 1;
            let posted = self
                .list(identity)
                .await?
                .ours
                .into_iter()
                .find(|c| earlier.iter().all(|e| e.id != c.id));
            if let Some(posted) = posted {
                return self.update(posted.id, body).await;
            }
        }
    }

    /// Edits comment `id`; returns its address.
    async fn update(&self, id: u64, body: &str) -> Result<String, PublishError> {
        let action = format!("update comment {id} on {}", self.label());
        let route = format!("/repos/{}/issues/comments/{id}", self.repository);
        let answer = self
            .client
            .send(
                Verb::Patch,
                &route,
                Some(&json!({ "body": body })),
                &action,
                true,
            )
            .await?;
        url_of(&answer.body, &action)
    }

    /// Deletes comment `id`.
    async fn delete(&self, id: u64) -> Result<(), PublishError> {
        let action = format!("delete comment {id} on {}", self.label());
        let route = format!("/repos/{}/issues/comments/{id}", self.repository);
        self.client
            .send(Verb::Delete, &route, None, &action, true)
            .await
            .map(|_| ())
    }
}

/// The `html_url` of a comment in `body`.
fn url_of(body: &str, action: &str) -> Result<String, PublishError> {
    #[derive(Deserialize)]
    struct Posted {
        html_url: String,
    }
    parse::<Posted>(body, action).map(|p| p.html_url)
}

/// Parses an answer's JSON.
fn parse<T: serde::de::DeserializeOwned>(body: &str, action: &str) -> Result<T, PublishError> {
    serde_json::from_str(body).map_err(|e| PublishError::Client {
        action: action.to_string(),
        message: format!("unexpected answer from GitHub: {e}"),
    })
}
