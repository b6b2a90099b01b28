//! Requests to the GitHub REST API: octocrab's raw routes (`_get`, `_post`,
//! `_patch`, `_delete`) for the transport, token header and base URI, with
//! the status handling done here so that we see the headers octocrab's typed
//! API hides: `Link` (pagination), `Retry-After` and `x-ratelimit-*`.
//!
//! Every request has a time limit that covers all of it (connecting,
//! sending, the headers and the whole body), so a server that answers its
//! headers and then stalls, or drips the body a byte at a time, cannot hang
//! the run; and the client as a whole has a deadline ([`Retry::deadline`])
//! that bounds every request, page, retry and wait together. A body larger
//! than [`MAX_BODY`] is refused rather than held in memory.
//!
//! Transient failures (connection errors, timeouts, 5xx, 429, a 403 that is
//! a rate limit) are retried with exponential backoff, bounded in attempts,
//! in how long we are willing to wait and by the deadline; the rest become a
//! [`PublishError`] in plain words. The text of those errors is made safe to
//! print (the token redacted) where they leave [`publish`](super::publish).
//!
//! Why not octocrab's typed API (`issues().list_comments()`,
//! `create_comment`, `update_comment`, `delete_comment`, `current().user()`),
//! for any of the calls: its methods read every answer body, success or
//! error, whole and unbounded (`FromResponse`, `map_github_error`), so
//! [`MAX_BODY`] could not be kept: a server that sends a gigabyte would have
//! it held in memory (`tests/github.rs`: `an_endless_body_is_refused_not_held`).
//! Bounding them would take a tower layer, which octocrab only accepts on a
//! client stack built by hand (connector, base URI and auth layers), to save
//! no dependency. Its pagination also follows a `next` link to any host
//! (without the token, but the page read there would be believed); ours
//! refuses it. The deadlines alone could be kept around typed calls.

use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use http_body_util::{BodyExt, LengthLimitError, Limited};
use octocrab::Octocrab;
use serde_json::Value;
use tokio::time::Instant;

use super::error::{PublishError, seconds};

/// The largest answer body read: a page of 100 comments at GitHub's
/// 65,536-character limit is well under it.
const MAX_BODY: usize = 64 << 20;

/// The HTTP method of a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verb {
    Get,
    Post,
    Patch,
    Delete,
}

/// A successful (2xx) answer.
pub struct Answer {
    /// The body, as text (empty for 204).
    pub body: String,
    /// The `rel="next"` link, as a route on the same API host.
    pub next: Option<String>,
}

/// A complete answer of any status: what [`Client::classify`] reads.
struct Raw {
    status: u16,
    /// The `Link` header.
    link: Option<String>,
    /// The wait a rate limit asks for ([`retry_after`]).
    wait: Option<Duration>,
    body: String,
}

/// A failed attempt: retry it, or give up with this error.
enum Failure {
    /// Worth another try, after the wait GitHub asked for (if it did).
    Transient {
        reason: String,
        wait: Option<Duration>,
    },
    /// Final.
    Fatal(PublishError),
}

/// An authenticated client for one API base URL.
pub struct Client {
    octocrab: Octocrab,
    /// `scheme://authority` of the API, for checking pagination links.
    origin: String,
    retry: Retry,
    /// When the publish step must be over ([`Retry::deadline`] from the
    /// client's creation).
    deadline: Instant,
    /// What happened that the user may want to know (retries).
    notes: Mutex<Vec<String>>,
}

impl Client {
    /// A client for `api_url` (e.g. `https://api.github.com`, or
    /// `https://HOST/api/v3` for GitHub Enterprise Server) sending `token`
    /// with every request, within [`Retry::deadline`] from now. Must be called
    /// inside a Tokio runtime.
    pub fn new(api_url: &str, token: String, retry: Retry) -> Result<Client, PublishError> {
        let bad_url = || PublishError::BadApiUrl(api_url.to_string());
        let (scheme, rest) = api_url.split_once("://").ok_or_else(bad_url)?;
        let authority = rest.split('/').next().unwrap_or("");
        if !matches!(scheme, "http" | "https") || authority.is_empty() {
            return Err(bad_url());
        }
        let octocrab = Octocrab::builder()
            .personal_token(token)
            .base_uri(api_url.trim_end_matches('/'))
            .map_err(|_| bad_url())?
            .build()
            .map_err(|e| PublishError::Client {
                action: "set up the HTTP client".to_string(),
                message: e.to_string(),
            })?;
        Ok(Client {
            octocrab,
            origin: format!("{scheme}://{authority}"),
            deadline: Instant::now() + retry.deadline,
            retry,
            notes: Mutex::new(Vec::new()),
        })
    }

    /// The notes gathered so far (retries), emptied.
    pub fn take_notes(&self) -> Vec<String> {
        std::mem::take(&mut *self.notes.lock().expect("notes lock"))
    }

    /// Sends one request to `route` (a path, with query) and returns the
    /// 2xx answer. With `retry`, transient failures are retried as
    /// [`Retry`] allows; without it (a `POST`, which is not idempotent) the
    /// first transient failure is returned as [`PublishError::Unavailable`]
    /// and the caller decides. `action` says what the request is for, in
    /// words, for the error messages.
    pub async fn send(
        &self,
        verb: Verb,
        route: &str,
        body: Option<&Value>,
        action: &str,
        retry: bool,
    ) -> Result<Answer, PublishError> {
        let attempts = if retry { self.attempts() } else { 1 };
        let mut attempt = 1;
        loop {
            let exchange = self.exchange(verb, route, body, action);
            let (reason, wait) = match self.attempt(exchange, action).await {
                Ok(answer) => return Ok(answer),
                Err(Failure::Fatal(error)) => return Err(error),
                Err(Failure::Transient { reason, wait }) => (reason, wait),
            };
            let give_up = |reason: String| PublishError::Unavailable {
                action: action.to_string(),
                attempts: attempt,
                reason,
            };
            if attempt >= attempts {
                return Err(give_up(reason));
            }
            let wait = wait.unwrap_or_else(|| self.retry.backoff(attempt));
            if wait > self.retry.max_wait {
                return Err(give_up(format!(
                    "{reason}; GitHub asked to wait {}s, longer than the {}s we wait",
                    wait.as_secs(),
                    self.retry.max_wait.as_secs()
                )));
            }
            self.note_and_sleep(action, &reason, wait).await?;
            attempt += 1;
        }
    }

    /// Attempts per request, the first included.
    pub fn attempts(&self) -> u32 {
        self.retry.attempts.max(1)
    }

    /// Waits the backoff after failed attempt `attempt` of `action`, for a
    /// caller that retries by itself; an error when the retry would come
    /// after the deadline.
    pub async fn pause(
        &self,
        action: &str,
        reason: &str,
        attempt: u32,
    ) -> Result<(), PublishError> {
        self.note_and_sleep(action, reason, self.retry.backoff(attempt))
            .await
    }

    /// Notes the retry and waits `wait`, unless the deadline comes first:
    /// then gives up at once rather than sleeping into it.
    async fn note_and_sleep(
        &self,
        action: &str,
        reason: &str,
        wait: Duration,
    ) -> Result<(), PublishError> {
        if wait >= self.remaining() {
            return Err(self.out_of_time(
                action,
                format!("{reason}; a retry in {} would come too late", seconds(wait)),
            ));
        }
        self.notes.lock().expect("notes lock").push(format!(
            "{action}: {reason}; retrying in {:.1}s",
            wait.as_secs_f64()
        ));
        tokio::time::sleep(wait).await;
        Ok(())
    }

    /// The time left before the deadline.
    fn remaining(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// The error for `action` when the deadline has come.
    fn out_of_time(&self, action: &str, reason: String) -> PublishError {
        PublishError::Deadline {
            action: action.to_string(),
            limit: self.retry.deadline,
            reason,
        }
    }

    /// One attempt (an [`exchange`](Client::exchange)), classified. It gets
    /// [`Retry::timeout`] for all of it (connection, headers and body), or
    /// less when the deadline is nearer.
    async fn attempt(
        &self,
        exchange: impl Future<Output = Result<Raw, Failure>>,
        action: &str,
    ) -> Result<Answer, Failure> {
        let limit = self.retry.timeout.min(self.remaining());
        if limit.is_zero() {
            return Err(Failure::Fatal(
                self.out_of_time(action, "no time left for the request".to_string()),
            ));
        }
        let raw = match tokio::time::timeout(limit, exchange).await {
            Ok(answer) => answer?,
            Err(_) if limit < self.retry.timeout => {
                return Err(Failure::Fatal(self.out_of_time(
                    action,
                    "GitHub had not answered in full (headers and body)".to_string(),
                )));
            }
            Err(_) => {
                return Err(Failure::Transient {
                    reason: format!(
                        "no complete answer (headers and body) within {}",
                        seconds(limit)
                    ),
                    wait: None,
                });
            }
        };
        self.classify(raw, action)
    }

    /// Sends the request and reads the whole answer.
    async fn exchange(
        &self,
        verb: Verb,
        route: &str,
        body: Option<&Value>,
        action: &str,
    ) -> Result<Raw, Failure> {
        let uri = route.to_string();
        let sent = match verb {
            Verb::Get => self.octocrab._get(uri).await,
            Verb::Post => self.octocrab._post(uri, body).await,
            Verb::Patch => self.octocrab._patch(uri, body).await,
            Verb::Delete => self.octocrab._delete(uri, None::<&()>).await,
        };
        let response = sent.map_err(|e| self.transport_failure(action, &e))?;
        let status = response.status().as_u16();
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let link = header("link");
        let wait = retry_after(
            header("retry-after").as_deref(),
            header("x-ratelimit-remaining").as_deref(),
            header("x-ratelimit-reset").as_deref(),
        );
        let body = response.into_body();
        let bytes = match Limited::new(body, MAX_BODY).collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(error) if error.is::<LengthLimitError>() => {
                return Err(Failure::Fatal(PublishError::Client {
                    action: action.to_string(),
                    message: format!(
                        "GitHub's answer is over {} MiB: not reading it",
                        MAX_BODY >> 20
                    ),
                }));
            }
            Err(error) => {
                return Err(Failure::Transient {
                    reason: format!("the answer was cut off: {error}"),
                    wait: None,
                });
            }
        };
        let text = String::from_utf8(bytes.to_vec()).map_err(|_| {
            Failure::Fatal(PublishError::Client {
                action: action.to_string(),
                message: "GitHub's answer is not UTF-8 text".to_string(),
            })
        })?;
        Ok(Raw {
            status,
            link,
            wait,
            body: text,
        })
    }

    /// A complete answer as the caller's [`Answer`], or the failure its
    /// status says.
    fn classify(&self, raw: Raw, action: &str) -> Result<Answer, Failure> {
        let Raw {
            status,
            link,
            wait,
            body: text,
        } = raw;
        let rate_limited = wait.is_some();
        if (200..300).contains(&status) {
            let next = match link.as_deref().and_then(next_link) {
                Some(url) => Some(self.same_origin_route(&url).ok_or_else(|| {
                    Failure::Fatal(PublishError::Client {
                        action: action.to_string(),
                        message: format!(
                            "the next-page link points away from {}: not following it",
                            self.origin
                        ),
                    })
                })?),
                None => None,
            };
            return Ok(Answer { body: text, next });
        }
        let message = github_message(&text);
        let action = action.to_string();
        Err(match status {
            429 | 500..=599 => Failure::Transient {
                reason: format!("GitHub answered {status}{}", quoted(&message)),
                wait,
            },
            403 if rate_limited || message.to_ascii_lowercase().contains("rate limit") => {
                Failure::Transient {
                    reason: format!("rate limited (403{})", quoted(&message)),
                    wait,
                }
            }
            401 => Failure::Fatal(PublishError::Unauthorized { action, message }),
            403 => Failure::Fatal(PublishError::Forbidden { action, message }),
            404 => Failure::Fatal(PublishError::NotFound { action, message }),
            422 => Failure::Fatal(PublishError::Invalid { action, message }),
            status => Failure::Fatal(PublishError::Status {
                action,
                status,
                message,
            }),
        })
    }

    /// A request that never got an answer: a connection error (transient), or
    /// a request octocrab could not build (final).
    fn transport_failure(&self, action: &str, error: &octocrab::Error) -> Failure {
        let message = error.to_string();
        match error {
            octocrab::Error::Hyper { .. } | octocrab::Error::Service { .. } => Failure::Transient {
                reason: format!("connection failed: {message}"),
                wait: None,
            },
            _ => Failure::Fatal(PublishError::Client {
                action: action.to_string(),
                message,
            }),
        }
    }

    /// `url` as a route (path and query) when it is on our API host; `None`
    /// when it points elsewhere (we never follow it there).
    fn same_origin_route(&self, url: &str) -> Option<String> {
        let rest = url.strip_prefix(&self.origin)?;
        (rest.is_empty() || rest.starts_with('/') || rest.starts_with('?')).then(|| {
            if rest.starts_with('/') {
                rest.to_string()
            } else {
                format!("/{rest}")
            }
        })
    }
}

/// Retries of transient failures (connection errors, timeouts, 5xx, 429
/// and rate-limit 403s), and the time limits that bound them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Retry {
    /// Attempts per request, the first included.
    pub attempts: u32,
    /// The wait before the second attempt; doubled for each further one.
    pub first_delay: Duration,
    /// The longest backoff wait.
    pub max_delay: Duration,
    /// The longest wait we accept when GitHub asks for one (`Retry-After`,
    /// `x-ratelimit-reset`); asked for more, we give up.
    pub max_wait: Duration,
    /// How long one request may take, all of it: connecting, sending, the
    /// headers and the whole body. Past it the attempt counts as a
    /// transient failure.
    pub timeout: Duration,
    /// How long the whole publish step may take: every request, page,
    /// retry and wait (`--comment-timeout`). A request near the end gets
    /// only what is left; a retry that would start after it is not made.
    pub deadline: Duration,
}

impl Default for Retry {
    /// 4 attempts, waiting 1, 2 and 4 s (or up to 60 s when GitHub asks),
    /// 30 s per request, 120 s in all.
    fn default() -> Retry {
        Retry {
            attempts: 4,
            first_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(8),
            max_wait: Duration::from_secs(60),
            timeout: Duration::from_secs(30),
            deadline: DEFAULT_DEADLINE,
        }
    }
}

/// [`Retry::deadline`] by default (`--comment-timeout`).
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(120);

impl Retry {
    /// The wait before attempt `attempt + 1`: the first delay, doubled each
    /// time, at most `max_delay`.
    fn backoff(&self, attempt: u32) -> Duration {
        let factor = 2u32.saturating_pow(attempt.saturating_sub(1));
        self.first_delay.saturating_mul(factor).min(self.max_delay)
    }
}

/// The wait a rate-limited answer asks for: `Retry-After` seconds, else the
/// time until `x-ratelimit-reset` when no requests remain.
fn retry_after(
    retry_after: Option<&str>,
    remaining: Option<&str>,
    reset: Option<&str>,
) -> Option<Duration> {
    if let Some(seconds) = retry_after.and_then(|v| v.trim().parse::<u64>().ok()) {
        return Some(Duration::from_secs(seconds));
    }
    if remaining.map(str::trim) == Some("0") {
        let reset = reset?.trim().parse::<u64>().ok()?;
        let now = SystemTime::now().duration_since(UNIX_EPOCH).ok()?.as_secs();
        return Some(Duration::from_secs(reset.saturating_sub(now) + 1));
    }
    None
}

/// The URL of `rel="next"` in a `Link` header
/// (`<https://…?page=2>; rel="next", <…>; rel="last"`).
pub fn next_link(header: &str) -> Option<String> {
    header.split(',').find_map(|part| {
        let (url, params) = part.split_once(';')?;
        let url = url.trim().strip_prefix('<')?.strip_suffix('>')?;
        params
            .split(';')
            .filter_map(|p| p.trim().strip_prefix("rel="))
            .any(|rel| {
                rel.trim_matches('"')
                    .split_whitespace()
                    .any(|r| r == "next")
            })
            .then(|| url.to_string())
    })
}

/// GitHub's error text: `message`, plus the `errors[]` details; the raw body
/// when it is not GitHub's JSON. Its length is bounded when it is made safe
/// to print (after the token is redacted, so that no half of it is left).
fn github_message(body: &str) -> String {
    match serde_json::from_str::<Value>(body) {
        Ok(json) => {
            let mut text = json
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let details: Vec<String> = json
                .get("errors")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|e| match e {
                    Value::String(s) => Some(s.clone()),
                    e => e
                        .get("message")
                        .or_else(|| e.get("code"))
                        .and_then(Value::as_str)
                        .map(str::to_string),
                })
                .collect();
            if !details.is_empty() {
                text = format!("{text} ({})", details.join("; "));
            }
            text
        }
        Err(_) => body.split_whitespace().collect::<Vec<_>>().join(" "),
    }
}

/// `: message`, or nothing for an empty message.
fn quoted(message: &str) -> String {
    if message.is_empty() {
        String::new()
    } else {
        format!(": {message}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_headers() {
        let header = "<https://api.github.com/repositories/1/issues/2/comments?per_page=100&page=2>; rel=\"next\", \
                      <https://api.github.com/repositories/1/issues/2/comments?per_page=100&page=5>; rel=\"last\"";
        assert_eq!(
            next_link(header).as_deref(),
            Some("https://api.github.com/repositories/1/issues/2/comments?per_page=100&page=2")
        );
        let last_page = "<https://x/c?page=1>; rel=\"first\", <https://x/c?page=4>; rel=\"prev\"";
        assert_eq!(next_link(last_page), None);
        assert_eq!(next_link(""), None);
    }

    #[test]
    fn rate_limit_waits() {
        assert_eq!(
            retry_after(Some("7"), None, None),
            Some(Duration::from_secs(7))
        );
        assert_eq!(retry_after(None, Some("10"), Some("1")), None);
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let wait = retry_after(None, Some("0"), Some(&(now + 30).to_string())).unwrap();
        assert!((30..=32).contains(&wait.as_secs()), "{wait:?}");
        assert_eq!(retry_after(None, None, None), None);
    }

    #[test]
    fn github_messages() {
        let body = r#"{"message":"Validation Failed","errors":[{"resource":"IssueComment","code":"custom","message":"Body is too long"}],"documentation_url":"https://docs.github.com"}"#;
        assert_eq!(github_message(body), "Validation Failed (Body is too long)");
        assert_eq!(
            github_message("<html>\n bad gateway </html>"),
            "<html> bad gateway </html>"
        );
    }

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let retry = Retry {
            first_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(5),
            ..Retry::default()
        };
        let waits: Vec<u64> = (1..=5).map(|a| retry.backoff(a).as_secs()).collect();
        assert_eq!(waits, [1, 2, 4, 5, 5]);
    }
}
