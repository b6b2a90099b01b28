//! Publishing the PR comment against a local mock of the GitHub API
//! (wiremock): a small stateful fake that keeps the PR's comments, pages
//! them with `Link` headers and refuses any request without the token; and
//! against hostile servers: raw TCP ones that send their headers and then
//! stall or drip the body, and answers that echo the token or try to start
//! a workflow command in the log.

use std::collections::HashMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::Output;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tempfile::TempDir;
use tracegate::gate::verdict::{
    Counts, Finding, FindingKind, FindingPriority, OpRef, Outcome as Verdict_, Severity, Verdict,
};
use tracegate::publish::github::{
    self, ACTIONS_BOT, CommentMode, CommentOn, Options, Outcome, PublishError, Report, Retry,
};
use tracegate::render::gate::{COMMENT_LIMIT, comment_marker, render_comment};
use wiremock::matchers::{any, method, path};
use wiremock::{Mock, MockBuilder, MockServer, Request, Respond, ResponseTemplate};

const TOKEN: &str = "ghs_s3cr3t-t0ken";
const REPO: &str = "octo/gpu-model";
const PR: u64 = 7;
const SHA: &str = "0123456789abcdef0123456789abcdef01234567";
const ME: &str = "perf-bot";

/// One comment the fake keeps.
#[derive(Clone, Debug)]
struct Stored {
    id: u64,
    author: String,
    body: String,
}

/// What the fake GitHub knows.
struct State {
    comments: Vec<Stored>,
    next_id: u64,
    /// Largest page the fake serves, whatever `per_page` asks.
    page_size: usize,
    /// The answer to `GET /user`: `Ok(login)` or `Err(status)`.
    user: Result<String, u16>,
    /// The server's address, for the `Link` headers.
    base: String,
}

/// A fake of the comment routes: `GET /user`, list/create/update/delete
/// issue comments, `GET /pulls/N`. Answers 401 without the token.
#[derive(Clone)]
struct FakeGitHub(Arc<Mutex<State>>);

impl FakeGitHub {
    fn new() -> FakeGitHub {
        FakeGitHub(Arc::new(Mutex::new(State {
            comments: Vec::new(),
            next_id: 1000,
            page_size: 100,
            user: Ok(ME.to_string()),
            base: String::new(),
        })))
    }

    fn add(&self, author: &str, body: &str) -> u64 {
        let mut state = self.0.lock().unwrap();
        state.next_id += 1;
        let id = state.next_id;
        state.comments.push(Stored {
            id,
            author: author.to_string(),
            body: body.to_string(),
        });
        id
    }

    fn comments(&self) -> Vec<Stored> {
        self.0.lock().unwrap().comments.clone()
    }

    fn comment_json(c: &Stored) -> Value {
        json!({
            "id": c.id,
            "body": c.body,
            "user": {"login": c.author, "type": "User"},
            "html_url": format!("https://github.com/{REPO}/pull/{PR}#issuecomment-{}", c.id),
        })
    }
}

impl Respond for FakeGitHub {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let authorized = request
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            == Some(format!("Bearer {TOKEN}").as_str());
        if !authorized {
            return ResponseTemplate::new(401)
                .set_body_json(json!({"message": "Requires authentication"}));
        }
        let mut state = self.0.lock().unwrap();
        // GitHub Enterprise Server serves the API under /api/v3.
        let full = request.url.path();
        let route = full.strip_prefix("/api/v3").unwrap_or(full).to_string();
        let comments_route = format!("/repos/{REPO}/issues/{PR}/comments");
        let comment_prefix = format!("/repos/{REPO}/issues/comments/");
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        match (request.method.as_str(), route.as_str()) {
            ("GET", "/user") => match &state.user {
                Ok(login) => ResponseTemplate::new(200).set_body_json(json!({"login": login})),
                Err(status) => ResponseTemplate::new(*status)
                    .set_body_json(json!({"message": "Resource not accessible by integration"})),
            },
            ("GET", r) if r == format!("/repos/{REPO}/pulls/{PR}") => ResponseTemplate::new(200)
                .set_body_json(json!({"number": PR, "head": {"sha": SHA}})),
            ("GET", r) if r == comments_route => {
                let query: HashMap<String, String> =
                    request.url.query_pairs().into_owned().collect();
                let per_page = query
                    .get("per_page")
                    .and_then(|p| p.parse().ok())
                    .unwrap_or(30usize)
                    .min(state.page_size);
                let page: usize = query.get("page").and_then(|p| p.parse().ok()).unwrap_or(1);
                let items: Vec<Value> = state
                    .comments
                    .iter()
                    .skip((page - 1) * per_page)
                    .take(per_page)
                    .map(FakeGitHub::comment_json)
                    .collect();
                let mut response = ResponseTemplate::new(200).set_body_json(items);
                if page * per_page < state.comments.len() {
                    let pages = state.comments.len().div_ceil(per_page);
                    let link =
                        |page| format!("{}{route}?per_page={per_page}&page={page}", state.base);
                    let (next, last) = (link(page + 1), link(pages));
                    response = response.insert_header(
                        "link",
                        format!("<{next}>; rel=\"next\", <{last}>; rel=\"last\"").as_str(),
                    );
                }
                response
            }
            ("POST", r) if r == comments_route => {
                let text = body["body"].as_str().unwrap_or("").to_string();
                if text.encode_utf16().count() > COMMENT_LIMIT {
                    return ResponseTemplate::new(422).set_body_json(json!({
                        "message": "Validation Failed",
                        "errors": [{"resource": "IssueComment", "code": "custom", "message": "Body is too long (maximum is 65536 characters)"}]
                    }));
                }
                state.next_id += 1;
                let login = state
                    .user
                    .clone()
                    .unwrap_or_else(|_| ACTIONS_BOT.to_string());
                let stored = Stored {
                    id: state.next_id,
                    author: login,
                    body: text,
                };
                state.comments.push(stored.clone());
                ResponseTemplate::new(201).set_body_json(FakeGitHub::comment_json(&stored))
            }
            (verb @ ("PATCH" | "DELETE"), r) if r.starts_with(&comment_prefix) => {
                let id: u64 = r[comment_prefix.len()..].parse().unwrap_or(0);
                let Some(index) = state.comments.iter().position(|c| c.id == id) else {
                    return ResponseTemplate::new(404)
                        .set_body_json(json!({"message": "Not Found"}));
                };
                if verb == "DELETE" {
                    state.comments.remove(index);
                    return ResponseTemplate::new(204);
                }
                state.comments[index].body = body["body"].as_str().unwrap_or("").to_string();
                ResponseTemplate::new(200)
                    .set_body_json(FakeGitHub::comment_json(&state.comments[index]))
            }
            _ => ResponseTemplate::new(404).set_body_json(json!({"message": "Not Found"})),
        }
    }
}

/// A running fake and the environment of a `pull_request` run against it.
struct Fixture {
    server: MockServer,
    fake: FakeGitHub,
    env: HashMap<String, String>,
    _dir: TempDir,
}

impl Fixture {
    async fn new() -> Fixture {
        Fixture::with_event(
            "pull_request",
            json!({"number": PR, "pull_request": {"number": PR, "head": {"sha": SHA}}}),
        )
        .await
    }

    async fn with_event(name: &str, event: Value) -> Fixture {
        let server = MockServer::start().await;
        let fake = FakeGitHub::new();
        fake.0.lock().unwrap().base = server.uri();
        Mock::given(any())
            .respond_with(fake.clone())
            .mount(&server)
            .await;
        let dir = tempfile::tempdir().unwrap();
        let event_path = dir.path().join("event.json");
        std::fs::write(&event_path, event.to_string()).unwrap();
        let env = HashMap::from([
            ("GITHUB_TOKEN".to_string(), TOKEN.to_string()),
            ("GITHUB_REPOSITORY".to_string(), REPO.to_string()),
            ("GITHUB_EVENT_NAME".to_string(), name.to_string()),
            (
                "GITHUB_EVENT_PATH".to_string(),
                event_path.display().to_string(),
            ),
            ("GITHUB_API_URL".to_string(), server.uri()),
        ]);
        Fixture {
            server,
            fake,
            env,
            _dir: dir,
        }
    }

    async fn publish(&self, options: &Options, verdict: &Verdict) -> Result<Report, PublishError> {
        let body = render_comment(verdict, &options.key, None).unwrap();
        self.publish_body(options, verdict, &body).await
    }

    async fn publish_body(
        &self,
        options: &Options,
        verdict: &Verdict,
        body: &str,
    ) -> Result<Report, PublishError> {
        let env = |name: &str| self.env.get(name).cloned();
        github::publish(&env, options, verdict, body).await
    }

    /// Answers the requests `given` matches with `response` instead of the
    /// fake: `times` times, or always. Earlier overrides answer first.
    async fn answer(
        &self,
        given: MockBuilder,
        response: impl Respond + 'static,
        times: Option<u64>,
    ) {
        let mock = given.respond_with(response).with_priority(1);
        let mock = match times {
            Some(n) => mock.up_to_n_times(n),
            None => mock,
        };
        mock.mount(&self.server).await;
    }

    /// The error publishing a failing verdict ends with.
    async fn error(&self, options: &Options) -> PublishError {
        self.publish(options, &failing()).await.unwrap_err()
    }

    /// The requests the server received, as `METHOD path?query`.
    async fn requests(&self) -> Vec<String> {
        let requests = self.server.received_requests().await.unwrap();
        // No request without the token, ever.
        for r in &requests {
            assert_eq!(
                r.headers.get("authorization").and_then(|v| v.to_str().ok()),
                Some(format!("Bearer {TOKEN}").as_str()),
                "{} {} without the token",
                r.method,
                r.url
            );
        }
        requests
            .iter()
            .map(|r| {
                let query = r.url.query().map(|q| format!("?{q}")).unwrap_or_default();
                format!("{} {}{query}", r.method, r.url.path())
            })
            .collect()
    }
}

/// Fast retries for tests.
fn options() -> Options {
    Options {
        retry: Retry {
            attempts: 3,
            first_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(20),
            max_wait: Duration::from_secs(2),
            timeout: Duration::from_secs(10),
            deadline: Duration::from_secs(60),
        },
        ..Options::default()
    }
}

fn finding(name: &str, severity: Severity) -> Finding {
    Finding {
        rule: "regression".to_string(),
        severity,
        kind: FindingKind::Regression,
        workload: "bert".to_string(),
        op: Some(OpRef {
            name: name.to_string(),
            input_dims: "((512, 768), (768, 768))".to_string(),
            category: "GEMM".to_string(),
            ..OpRef::default()
        }),
        metric: "median kernel time per call".to_string(),
        baseline: Some(100.0),
        candidate: Some(131.0),
        unit: "µs".to_string(),
        delta_percent: Some(31.0),
        interval_percent: Some((25.0, 37.0)),
        expected_ratio: None,
        limit: Some(10.0),
        impact_percent: Some(3.1),
        priority: FindingPriority::High,
        message: format!("{name} is 31% slower per call"),
        path_a: None,
        path_b: None,
        kernel_diff: None,
        replay_package: None,
        accepted: None,
        statistics: Default::default(),
    }
}

fn verdict(findings: Vec<Finding>) -> Verdict {
    let failures = findings
        .iter()
        .filter(|f| f.severity == Severity::Fail)
        .count();
    let warnings = findings
        .iter()
        .filter(|f| f.severity == Severity::Warn)
        .count();
    Verdict {
        schema_version: 1,
        schema_minor: 1,
        tracegate_version: "0.1.0".to_string(),
        outcome: if failures > 0 {
            Verdict_::Fail
        } else {
            Verdict_::Pass
        },
        headline: if failures > 0 {
            format!("❌ {failures} regression(s) fail the gate")
        } else {
            "✅ no regressions".to_string()
        },
        counts: Counts {
            regressions: failures + warnings,
            failures,
            warnings,
            ..Counts::default()
        },
        workloads: Vec::new(),
        findings,
        groups: Vec::new(),
        policy: "built-in default".to_string(),
    }
}

fn failing() -> Verdict {
    verdict(vec![finding("aten::mm", Severity::Fail)])
}

fn clean() -> Verdict {
    verdict(Vec::new())
}

#[tokio::test]
async fn first_run_creates_and_second_run_updates_the_same_comment() {
    let f = Fixture::new().await;
    let first = f.publish(&options(), &failing()).await.unwrap();
    let Outcome::Created { url } = &first.outcome else {
        panic!("{first:?}")
    };
    let comments = f.fake.comments();
    assert_eq!(comments.len(), 1);
    assert!(
        url.ends_with(&format!("#issuecomment-{}", comments[0].id)),
        "{url}"
    );
    assert!(comments[0].body.starts_with(&comment_marker("default")));
    assert!(comments[0].body.contains("aten::mm"));

    // The fix lands: the same comment now says the gate passes.
    let second = f.publish(&options(), &clean()).await.unwrap();
    assert!(
        matches!(second.outcome, Outcome::Updated { .. }),
        "{second:?}"
    );
    let after = f.fake.comments();
    assert_eq!(after.len(), 1);
    assert_eq!(after[0].id, comments[0].id);
    assert!(
        after[0].body.contains("tracegate: pass"),
        "{}",
        after[0].body
    );

    // The same report again: nothing to write.
    let third = f.publish(&options(), &clean()).await.unwrap();
    assert!(
        matches!(third.outcome, Outcome::Unchanged { .. }),
        "{third:?}"
    );

    let requests = f.requests().await;
    let writes: Vec<&String> = requests.iter().filter(|r| !r.starts_with("GET")).collect();
    assert_eq!(
        writes,
        [
            &format!("POST /repos/{REPO}/issues/{PR}/comments"),
            &format!("PATCH /repos/{REPO}/issues/comments/{}", comments[0].id),
        ]
    );
}

#[tokio::test]
async fn finds_ours_on_a_later_page_and_leaves_a_quoting_human_alone() {
    let f = Fixture::new().await;
    f.fake.0.lock().unwrap().page_size = 2;
    let marker = comment_marker("default");
    f.fake.add("alice", "LGTM");
    // A person pasting our comment, marker and all, must never be edited.
    let human = f
        .fake
        .add("alice", &format!("{marker}\n> ## ❌ tracegate: fail\nwhy?"));
    f.fake.add("bob", "ping");
    f.fake.add(ME, "an unrelated comment by the same bot");
    let ours = f
        .fake
        .add(ME, &format!("{marker}\n## ❌ tracegate: fail (old)"));
    f.fake.add("carol", "ok");
    // Another key's comment (a matrix job) stays too.
    let other_key = f
        .fake
        .add(ME, &format!("{}\nother job", comment_marker("linux-h100")));

    let report = f.publish(&options(), &clean()).await.unwrap();
    assert!(
        matches!(report.outcome, Outcome::Updated { .. }),
        "{report:?}"
    );
    let comments = f.fake.comments();
    assert_eq!(comments.len(), 7);
    let body = |id| comments.iter().find(|c| c.id == id).unwrap().body.clone();
    assert!(body(ours).contains("tracegate: pass"));
    assert!(body(human).contains("why?"));
    assert!(body(other_key).contains("other job"));

    // Every page was read, following the Link headers.
    let requests = f.requests().await;
    let lists: Vec<&String> = requests
        .iter()
        .filter(|r| r.contains("/issues/7/comments"))
        .collect();
    assert_eq!(lists.len(), 4, "{requests:?}");
    assert!(lists[3].ends_with("page=4"), "{lists:?}");
}

#[tokio::test]
async fn an_actions_token_without_user_access_is_github_actions_bot() {
    let f = Fixture::new().await;
    f.fake.0.lock().unwrap().user = Err(403);
    let marker = comment_marker("default");
    f.fake.add("alice", &format!("{marker}\nquoted"));
    let ours = f.fake.add(ACTIONS_BOT, &format!("{marker}\nold"));

    let report = f.publish(&options(), &failing()).await.unwrap();
    assert!(
        matches!(report.outcome, Outcome::Updated { .. }),
        "{report:?}"
    );
    // The ordinary Actions run: nothing to say about the identity.
    assert!(report.notes.is_empty(), "{report:?}");
    let comments = f.fake.comments();
    assert!(
        comments
            .iter()
            .find(|c| c.id == ours)
            .unwrap()
            .body
            .contains("aten::mm")
    );
    assert!(comments[0].body.ends_with("quoted"));
}

#[tokio::test]
async fn an_app_token_is_told_to_name_its_author_and_can() {
    const APP: &str = "perf-app[bot]";
    let f = Fixture::new().await;
    f.fake.0.lock().unwrap().user = Err(403);
    let marker = comment_marker("default");
    let apps = f.fake.add(
        APP,
        &format!(
            "{marker}
old"
        ),
    );

    // Unknown author: a new comment, and a note saying how to avoid it.
    let report = f.publish(&options(), &failing()).await.unwrap();
    assert!(
        matches!(report.outcome, Outcome::Created { .. }),
        "{report:?}"
    );
    let notes = report.notes.join("\n");
    assert!(
        notes.contains("403") && notes.contains("--comment-author NAME[bot]"),
        "{notes}"
    );

    // Named: the app's comment is updated, and /user is not asked.
    let f = Fixture::new().await;
    f.fake.0.lock().unwrap().user = Err(403);
    let apps_now = f.fake.add(
        APP,
        &format!(
            "{marker}
old"
        ),
    );
    assert_eq!(apps_now, apps);
    let named = Options {
        author: Some(APP.to_string()),
        ..options()
    };
    let report = f.publish(&named, &failing()).await.unwrap();
    assert!(
        matches!(report.outcome, Outcome::Updated { .. }),
        "{report:?}"
    );
    assert!(report.notes.is_empty(), "{report:?}");
    assert!(f.fake.comments()[0].body.contains("aten::mm"));
    let requests = f.requests().await;
    assert!(
        !requests.iter().any(|r| r.contains("/user")),
        "{requests:?}"
    );
}

#[tokio::test]
async fn a_bad_token_is_explained_and_never_printed() {
    let mut f = Fixture::new().await;
    f.env
        .insert("GITHUB_TOKEN".to_string(), "ghp_wrong".to_string());
    let error = f.error(&options()).await;
    let message = error.to_string();
    assert!(
        matches!(error, PublishError::Unauthorized { .. }),
        "{error:?}"
    );
    assert!(
        message.contains("401") && message.contains("rejected the token"),
        "{message}"
    );
    assert!(!message.contains("ghp_wrong"), "{message}");
    assert!(!format!("{error:?}").contains("ghp_wrong"));
    assert!(f.fake.comments().is_empty());
}

#[tokio::test]
async fn a_rejected_comment_is_explained() {
    let f = Fixture::new().await;
    let comments = path(format!("/repos/{REPO}/issues/{PR}/comments"));
    let invalid = ResponseTemplate::new(422).set_body_json(json!({
        "message": "Validation Failed",
        "errors": [{"resource": "IssueComment", "code": "unprocessable", "field": "data", "message": "Could not resolve to a node"}]
    }));
    f.answer(Mock::given(method("POST")).and(comments), invalid, None)
        .await;
    let error = f.error(&options()).await;
    let message = error.to_string();
    assert!(matches!(error, PublishError::Invalid { .. }), "{error:?}");
    assert!(
        message.contains("422") && message.contains("Could not resolve to a node"),
        "{message}"
    );
    assert!(
        message.contains(&format!("post the comment on {REPO}#{PR}")),
        "{message}"
    );
    // Not retried: a 422 will not go away.
    let posts = f
        .requests()
        .await
        .iter()
        .filter(|r| r.starts_with("POST"))
        .count();
    assert_eq!(posts, 1);
}

#[tokio::test]
async fn a_read_only_fork_token_points_to_the_two_phase_workflow() {
    let f = Fixture::new().await;
    f.answer(
        Mock::given(method("POST")),
        ResponseTemplate::new(403)
            .set_body_json(json!({"message": "Resource not accessible by integration"})),
        None,
    )
    .await;
    let message = f.error(&options()).await.to_string();
    assert!(
        message.contains("403") && message.contains("fork"),
        "{message}"
    );
    assert!(message.contains("docs/GITHUB.md"), "{message}");
}

#[tokio::test]
async fn an_oversized_report_is_trimmed_before_sending() {
    let f = Fixture::new().await;
    let findings: Vec<Finding> = (0..3_000)
        .map(|i| finding(&format!("aten::op_{i}_{}", "x".repeat(40)), Severity::Fail))
        .collect();
    let big = verdict(findings);
    let report = f.publish(&options(), &big).await.unwrap();
    assert!(
        matches!(report.outcome, Outcome::Created { .. }),
        "{report:?}"
    );
    let sent = &f.fake.comments()[0].body;
    assert!(sent.encode_utf16().count() <= COMMENT_LIMIT);
    assert!(sent.encode_utf16().count() > COMMENT_LIMIT / 2);
    assert!(sent.contains("65,536"), "the comment says what it left out");
}

#[tokio::test]
async fn a_body_over_the_limit_is_never_sent() {
    let f = Fixture::new().await;
    let body = format!(
        "{}\n{}",
        comment_marker("default"),
        "x".repeat(COMMENT_LIMIT)
    );
    let error = f
        .publish_body(&options(), &failing(), &body)
        .await
        .unwrap_err();
    assert!(matches!(error, PublishError::TooLong { .. }), "{error:?}");
    assert!(f.requests().await.is_empty());
    // Nor one without our marker (a later run could not find it).
    let error = f
        .publish_body(&options(), &failing(), "hello")
        .await
        .unwrap_err();
    assert!(matches!(error, PublishError::NoMarker { .. }), "{error:?}");
    assert!(f.requests().await.is_empty());
}

#[tokio::test]
async fn nothing_is_posted_on_a_push_event() {
    let f = Fixture::with_event("push", json!({"ref": "refs/heads/main", "after": SHA})).await;
    let report = f.publish(&options(), &failing()).await.unwrap();
    assert_eq!(
        report.outcome,
        Outcome::NoPullRequest {
            event: Some("push".to_string())
        }
    );
    assert!(
        report
            .outcome
            .to_string()
            .contains("`push` run is not about a pull request")
    );
    assert!(f.requests().await.is_empty());

    // Nor anything with --comment-mode off, whatever the event.
    let f = Fixture::new().await;
    let off = Options {
        mode: CommentMode::Off,
        ..options()
    };
    assert_eq!(
        f.publish(&off, &failing()).await.unwrap().outcome,
        Outcome::Off
    );
    assert!(f.requests().await.is_empty());
}

#[tokio::test]
async fn transient_failures_are_retried_with_backoff() {
    let f = Fixture::new().await;
    // /user: a 502, then a 429 asking for a short wait, then the fake.
    f.answer(
        Mock::given(path("/user")),
        ResponseTemplate::new(502).set_body_string("<html>bad gateway</html>"),
        Some(1),
    )
    .await;
    f.answer(
        Mock::given(path("/user")),
        ResponseTemplate::new(429)
            .insert_header("retry-after", "0")
            .set_body_json(json!({"message": "API rate limit exceeded"})),
        Some(1),
    )
    .await;
    // The first POST fails with a 503 after GitHub stored the comment
    // anyway: the retry finds it and updates it rather than posting twice.
    let fake = f.fake.clone();
    f.answer(
        Mock::given(method("POST")),
        move |request: &Request| {
            let body: Value = serde_json::from_slice(&request.body).unwrap();
            fake.add(ME, body["body"].as_str().unwrap());
            ResponseTemplate::new(503)
        },
        Some(1),
    )
    .await;

    let report = f.publish(&options(), &failing()).await.unwrap();
    assert!(
        matches!(report.outcome, Outcome::Created { .. }),
        "{report:?}"
    );
    assert_eq!(f.fake.comments().len(), 1);
    let notes = report.notes.join("\n");
    assert!(
        notes.contains("502") && notes.contains("429") && notes.contains("503"),
        "{notes}"
    );
    let requests = f.requests().await;
    assert_eq!(
        requests.iter().filter(|r| r.starts_with("POST")).count(),
        1,
        "{requests:?}"
    );
    assert_eq!(
        requests.iter().filter(|r| r.starts_with("PATCH")).count(),
        1,
        "{requests:?}"
    );
}

#[tokio::test]
async fn retries_are_bounded() {
    let f = Fixture::new().await;
    f.answer(Mock::given(path("/user")), ResponseTemplate::new(503), None)
        .await;
    let error = f.error(&options()).await;
    assert!(
        matches!(error, PublishError::Unavailable { attempts: 3, .. }),
        "{error:?}"
    );
    assert_eq!(f.requests().await.len(), 3);

    // A wait longer than we accept is not waited for.
    let f = Fixture::new().await;
    f.answer(
        Mock::given(path("/user")),
        ResponseTemplate::new(429).insert_header("retry-after", "3600"),
        None,
    )
    .await;
    let message = f.error(&options()).await.to_string();
    assert!(message.contains("asked to wait 3600s"), "{message}");
    assert_eq!(f.requests().await.len(), 1);
}

// The next three hold the client to what octocrab's typed API would not
// do (src/publish/github/client.rs says why it keeps the raw routes): read
// the rate-limit headers, refuse a next-page link to another host, and
// bound the body it reads (`an_endless_body_is_refused_not_held`).

#[tokio::test]
async fn a_rate_limit_told_only_by_its_headers_is_waited_out() {
    let f = Fixture::new().await;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    // A 403 whose message says nothing of a rate limit: only the headers do.
    f.answer(
        Mock::given(path("/user")),
        ResponseTemplate::new(403)
            .insert_header("x-ratelimit-remaining", "0")
            .insert_header("x-ratelimit-reset", now.to_string().as_str())
            .set_body_json(json!({"message": "Forbidden"})),
        Some(1),
    )
    .await;
    let start = Instant::now();
    let report = f.publish(&options(), &failing()).await.unwrap();
    assert!(
        matches!(report.outcome, Outcome::Created { .. }),
        "{report:?}"
    );
    // It waited for the reset (a second at most past it), not a 10 ms backoff.
    assert!(start.elapsed() >= Duration::from_millis(900));
    let notes = report.notes.join("\n");
    assert!(notes.contains("rate limited (403: Forbidden)"), "{notes}");
    assert_eq!(
        f.requests()
            .await
            .iter()
            .filter(|r| r.as_str() == "GET /user")
            .count(),
        2
    );
}

#[tokio::test]
async fn a_next_page_link_to_another_host_is_not_followed() {
    let f = Fixture::new().await;
    let elsewhere = MockServer::start().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([])))
        .mount(&elsewhere)
        .await;
    {
        let mut state = f.fake.0.lock().unwrap();
        state.page_size = 1;
        state.base = elsewhere.uri();
    }
    f.fake.add("alice", "first");
    f.fake.add("bob", "second");
    let error = f.error(&options()).await;
    let message = error.to_string();
    assert!(
        matches!(error, PublishError::Client { .. })
            && message.contains("next-page link points away from"),
        "{message}"
    );
    // The token never went there, nor did any request.
    assert!(elsewhere.received_requests().await.unwrap().is_empty());
    assert_eq!(f.fake.comments().len(), 2, "nothing posted");
}

#[tokio::test]
async fn comment_on_findings_posts_nothing_when_clean_but_corrects_an_old_comment() {
    let f = Fixture::new().await;
    let on_findings = Options {
        on: CommentOn::Findings,
        ..options()
    };
    let report = f.publish(&on_findings, &clean()).await.unwrap();
    assert_eq!(
        report.outcome,
        Outcome::NotNeeded {
            on: CommentOn::Findings
        }
    );
    assert!(f.fake.comments().is_empty());

    // A warning is a finding; under --comment-on fail it is not.
    let warned = verdict(vec![finding("aten::bmm", Severity::Warn)]);
    let on_fail = Options {
        on: CommentOn::Fail,
        ..options()
    };
    let report = f.publish(&on_fail, &warned).await.unwrap();
    assert!(matches!(report.outcome, Outcome::NotNeeded { .. }));
    let report = f.publish(&on_findings, &warned).await.unwrap();
    assert!(matches!(report.outcome, Outcome::Created { .. }));

    // Fixed: the old comment says so instead of staying stale.
    let report = f.publish(&on_findings, &clean()).await.unwrap();
    assert!(
        matches!(report.outcome, Outcome::Updated { .. }),
        "{report:?}"
    );
    let comments = f.fake.comments();
    assert_eq!(comments.len(), 1);
    assert!(comments[0].body.contains("tracegate: pass"));
}

#[tokio::test]
async fn recreate_posts_anew_and_deletes_the_old_ones() {
    let f = Fixture::new().await;
    let marker = comment_marker("default");
    let old = f.fake.add(ME, &format!("{marker}\nold"));
    let duplicate = f.fake.add(ME, &format!("{marker}\nduplicate"));
    f.fake.add("alice", "thanks");
    let recreate = Options {
        mode: CommentMode::Recreate,
        ..options()
    };
    let report = f.publish(&recreate, &failing()).await.unwrap();
    assert!(
        matches!(report.outcome, Outcome::Recreated { deleted: 2, .. }),
        "{report:?}"
    );
    let comments = f.fake.comments();
    assert_eq!(comments.len(), 2);
    assert!(comments.iter().all(|c| c.id != old && c.id != duplicate));
    assert_eq!(comments[0].body, "thanks");
    assert!(comments[1].body.contains("aten::mm"));
}

#[tokio::test]
async fn a_recreate_whose_post_failed_but_landed_keeps_only_the_new_comment() {
    let f = Fixture::new().await;
    f.fake
        .add(ME, &format!("{}\nold", comment_marker("default")));
    let fake = f.fake.clone();
    let stored_then_503 = move |request: &Request| {
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        fake.add(ME, body["body"].as_str().unwrap());
        ResponseTemplate::new(503)
    };
    f.answer(Mock::given(method("POST")), stored_then_503, Some(1))
        .await;
    let recreate = Options {
        mode: CommentMode::Recreate,
        ..options()
    };
    let report = f.publish(&recreate, &failing()).await.unwrap();
    assert!(
        matches!(report.outcome, Outcome::Recreated { deleted: 1, .. }),
        "{report:?}"
    );
    let comments = f.fake.comments();
    assert_eq!(comments.len(), 1, "{comments:?}");
    assert!(comments[0].body.contains("aten::mm"));
}

#[tokio::test]
async fn update_mode_removes_duplicates() {
    let f = Fixture::new().await;
    let marker = comment_marker("default");
    let first = f.fake.add(ME, &format!("{marker}\nfirst"));
    f.fake.add(ME, &format!("{marker}\nsecond"));
    let report = f.publish(&options(), &failing()).await.unwrap();
    assert!(matches!(report.outcome, Outcome::Updated { .. }));
    assert!(
        report.notes.iter().any(|n| n.contains("duplicate")),
        "{report:?}"
    );
    let comments = f.fake.comments();
    assert_eq!(comments.len(), 1);
    assert_eq!(comments[0].id, first);
}

#[tokio::test]
async fn an_explicit_pr_is_checked_against_the_head_sha() {
    // The second phase of the fork-safe workflow: a workflow_run event, the
    // PR number from the (untrusted) artifact.
    let event = json!({"workflow_run": {"head_sha": SHA, "pull_requests": []}});
    let f = Fixture::with_event("workflow_run", event).await;
    let given = Options {
        pr: Some(PR),
        ..options()
    };
    let report = f.publish(&given, &failing()).await.unwrap();
    assert!(
        matches!(report.outcome, Outcome::Created { .. }),
        "{report:?}"
    );
    let requests = f.requests().await;
    assert_eq!(requests[0], format!("GET /repos/{REPO}/pulls/{PR}"));

    let other = Options {
        head_sha: Some("f".repeat(40)),
        ..given
    };
    let error = f.error(&other).await;
    assert!(
        matches!(error, PublishError::HeadMismatch { .. }),
        "{error:?}"
    );
    assert_eq!(f.fake.comments().len(), 1);

    let bad = Options {
        head_sha: Some("main; rm -rf /".to_string()),
        ..options()
    };
    assert!(matches!(
        f.publish(&bad, &failing()).await.unwrap_err(),
        PublishError::BadSha(_)
    ));
}

#[tokio::test]
async fn the_environment_is_checked_before_anything_is_sent() {
    let mut f = Fixture::new().await;
    f.env.remove("GITHUB_TOKEN");
    let message = f.error(&options()).await.to_string();
    assert!(message.contains("$GITHUB_TOKEN is unset"), "{message}");
    let named = Options {
        token_env: "PERF_BOT_TOKEN".to_string(),
        ..options()
    };
    f.env
        .insert("PERF_BOT_TOKEN".to_string(), "two words".to_string());
    let message = f.error(&named).await.to_string();
    assert!(message.contains("does not hold a token"), "{message}");
    // Secrets often end with a line break: that is no part of the token.
    f.env
        .insert("PERF_BOT_TOKEN".to_string(), format!("{TOKEN}\n"));
    assert!(f.publish(&named, &failing()).await.is_ok());

    f.env
        .insert("GITHUB_REPOSITORY".to_string(), "../../user".to_string());
    let message = f.error(&named).await.to_string();
    assert!(message.contains("OWNER/NAME"), "{message}");
    f.env
        .insert("GITHUB_REPOSITORY".to_string(), REPO.to_string());
    f.env
        .insert("GITHUB_API_URL".to_string(), "ftp://example".to_string());
    let message = f.error(&named).await.to_string();
    assert!(message.contains("not an http"), "{message}");
}

#[tokio::test]
async fn github_enterprise_server_keeps_its_api_path() {
    let mut f = Fixture::new().await;
    let api = format!("{}/api/v3", f.server.uri());
    f.env.insert("GITHUB_API_URL".to_string(), api.clone());
    f.fake.0.lock().unwrap().base = api;
    f.fake.0.lock().unwrap().page_size = 1;
    f.fake.add("alice", "first");
    f.fake.add("bob", "second");
    let report = f.publish(&options(), &failing()).await.unwrap();
    assert!(
        matches!(report.outcome, Outcome::Created { .. }),
        "{report:?}"
    );
    let requests = f.requests().await;
    assert_eq!(requests.len(), 4, "{requests:?}");
    assert!(
        requests
            .iter()
            .all(|r| r.split(' ').nth(1).unwrap().starts_with("/api/v3/")),
        "{requests:?}"
    );
}

#[test]
fn the_artifact_link_is_appended_when_it_fits() {
    let body = render_comment(&failing(), "default", None).unwrap();
    let url = "https://github.com/octo/gpu-model/actions/runs/1/artifacts/2";
    let linked = github::with_artifact_link(&body, url).unwrap();
    assert!(linked.starts_with(&body.trim_end_matches('\n').to_string()));
    assert!(
        linked.contains(&format!("[workflow artifact](<{url}>)")),
        "{linked}"
    );
    assert!(github::with_artifact_link(&body, "javascript:alert(1)").is_err());
    assert!(github::with_artifact_link(&body, "https://x/a b").is_err());
    let full = format!(
        "{}\n{}",
        comment_marker("default"),
        "x".repeat(COMMENT_LIMIT - 30)
    );
    assert_eq!(github::with_artifact_link(&full, url).unwrap(), full);
}

/// The real binary against the fake through `GITHUB_API_URL`:
/// `tracegate comment` posts a `report.json` written earlier.
#[tokio::test]
async fn the_binary_posts_a_report_written_earlier() {
    let f = Fixture::new().await;
    let dir = tempfile::tempdir().unwrap();
    let report = failing_report(&dir);
    let run = |args: &[&str], env: &HashMap<String, String>| run_comment(&report, env, args);
    let url = "https://github.com/octo/gpu-model/actions/runs/1/artifacts/2";
    let first = run(&["--artifact-url", url], &f.env);
    let stderr = String::from_utf8_lossy(&first.stderr);
    // The exit code is the verdict's (a failing report), not the comment's.
    assert_eq!(first.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("posted the pull-request comment"),
        "{stderr}"
    );
    assert!(!stderr.contains(TOKEN) && !String::from_utf8_lossy(&first.stdout).contains(TOKEN));
    let comments = f.fake.comments();
    assert_eq!(comments.len(), 1);
    assert!(comments[0].body.contains(url));

    let second = run(&["--comment-key", "default"], &f.env);
    assert_eq!(second.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&second.stderr).contains("updated the pull-request comment"));
    assert_eq!(f.fake.comments().len(), 1);

    // A comment that cannot be written is a warning, unless required.
    let mut env = f.env.clone();
    env.insert("GITHUB_TOKEN".to_string(), "wrong".to_string());
    let warned = run(&[], &env);
    assert_eq!(warned.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&warned.stderr).contains("401"));
    let required = run(&["--require-comment"], &env);
    assert_eq!(required.status.code(), Some(2));

    // A push event: nothing written, and it says so.
    let push = Fixture::with_event("push", json!({"ref": "refs/heads/main"})).await;
    let pushed = run(&[], &push.env);
    assert_eq!(pushed.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&pushed.stderr).contains("not commenting"));
    assert!(push.requests().await.is_empty());
    assert!(Path::new(&report).exists());
}

/// `report.json` of a failing verdict in `dir`.
fn failing_report(dir: &TempDir) -> std::path::PathBuf {
    let report = dir.path().join("report.json");
    std::fs::write(&report, serde_json::to_string(&failing()).unwrap()).unwrap();
    report
}

/// The real binary: `tracegate comment --report REPORT ARGS` with exactly
/// `env` (and `PATH`).
fn run_comment(report: &Path, env: &HashMap<String, String>, args: &[&str]) -> Output {
    crate::util::tracegate()
        .env_clear()
        .envs(env)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .arg("comment")
        .arg("--report")
        .arg(report)
        .args(args)
        .output()
        .unwrap()
}

/// What a [`stalling_server`] does after its headers.
#[derive(Clone, Copy, Debug)]
enum Stall {
    /// Sends nothing more.
    Silent,
    /// Sends one byte of the body a second, never all of it.
    Drip,
    /// Sends the body as fast as it can, without end.
    Flood,
}

/// A raw HTTP server on 127.0.0.1 (wiremock can only delay the headers):
/// to every request it answers valid `200` headers promising a body of a
/// million bytes (a gigabyte for [`Stall::Flood`]), then stalls as `how`
/// says until the client hangs up.
/// Returns its base URL.
fn stalling_server(how: Stall) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || stall(stream, how));
        }
    });
    url
}

fn stall(mut stream: TcpStream, how: Stall) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return,
        }
    }
    let length = if matches!(how, Stall::Flood) {
        1 << 30
    } else {
        1_000_000
    };
    let headers = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {length}\r\n\r\n["
    );
    if stream.write_all(headers.as_bytes()).is_err() {
        return;
    }
    stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    loop {
        match how {
            Stall::Drip => {
                std::thread::sleep(Duration::from_secs(1));
                if stream
                    .write_all(b" ")
                    .and_then(|()| stream.flush())
                    .is_err()
                {
                    return;
                }
            }
            Stall::Flood => {
                if stream.write_all(&[b' '; 1 << 16]).is_err() {
                    return;
                }
            }
            // Until the client hangs up (a read of 0 bytes).
            Stall::Silent => match stream.read(&mut byte) {
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Ok(n) if n > 0 => {}
                _ => return,
            },
        }
    }
}

/// Options with a `deadline` for the whole step and a `timeout` per request.
fn bounded(timeout: Duration, deadline: Duration) -> Options {
    let mut options = options();
    options.retry.timeout = timeout;
    options.retry.deadline = deadline;
    options
}

#[tokio::test]
async fn a_server_that_stalls_after_its_headers_cannot_hang_the_publish() {
    for how in [Stall::Silent, Stall::Drip] {
        let mut f = Fixture::new().await;
        f.env
            .insert("GITHUB_API_URL".to_string(), stalling_server(how));
        // The deadline of the whole step, under the 30 s of one request.
        let start = Instant::now();
        let error = f
            .error(&bounded(Duration::from_secs(30), Duration::from_secs(2)))
            .await;
        let took = start.elapsed();
        // At least the deadline; the upper bound is a watchdog well under
        // the 30 s one request would take, not a measure of this machine.
        assert!(
            took >= Duration::from_millis(1900) && took < Duration::from_secs(20),
            "{how:?}: {took:?}"
        );
        assert!(
            matches!(error, PublishError::Deadline { .. }),
            "{how:?}: {error:?}"
        );
        let message = error.to_string();
        assert!(
            message.starts_with("read the token's identity (GET /user): gave up after 2s")
                && message.contains("--comment-timeout")
                && message.contains("had not answered in full"),
            "{message}"
        );

        // One request's own limit: each attempt is cut off and retried,
        // then the retries run out long before the deadline.
        let start = Instant::now();
        let error = f
            .error(&bounded(
                Duration::from_millis(400),
                Duration::from_secs(60),
            ))
            .await;
        // A watchdog well under the 60 s deadline.
        assert!(start.elapsed() < Duration::from_secs(30), "{how:?}");
        assert!(
            matches!(error, PublishError::Unavailable { attempts: 3, .. }),
            "{how:?}: {error:?}"
        );
        assert!(
            error
                .to_string()
                .contains("no complete answer (headers and body) within 0.4s"),
            "{error}"
        );
    }
}

#[tokio::test]
async fn an_endless_body_is_refused_not_held() {
    let mut f = Fixture::new().await;
    f.env
        .insert("GITHUB_API_URL".to_string(), stalling_server(Stall::Flood));
    let error = f.error(&options()).await;
    assert!(
        matches!(error, PublishError::Client { .. }) && error.to_string().contains("over 64 MiB"),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_retry_that_would_pass_the_deadline_is_not_waited_for() {
    let f = Fixture::new().await;
    f.answer(
        Mock::given(path("/user")),
        ResponseTemplate::new(503)
            .insert_header("retry-after", "5")
            .set_body_string("down"),
        None,
    )
    .await;
    // GitHub asks for a wait we would accept, but the deadline is nearer.
    let mut slow = bounded(Duration::from_secs(10), Duration::from_secs(1));
    slow.retry.max_wait = Duration::from_secs(60);
    let start = Instant::now();
    let error = f.error(&slow).await;
    // Not the 5 s wait (the message says it was not waited for): a watchdog
    // with room for a loaded machine.
    assert!(start.elapsed() < Duration::from_secs(4));
    let message = error.to_string();
    assert!(
        matches!(error, PublishError::Deadline { .. })
            && message.contains("GitHub answered 503: down; a retry in 5s would come too late"),
        "{message}"
    );
    assert_eq!(f.requests().await.len(), 1);
}

/// No line of `text` can start a workflow command, and it is `lines` lines.
fn assert_safe_lines(text: &str, lines: usize) {
    assert!(!text.contains(TOKEN), "{text}");
    assert_eq!(text.trim_end().lines().count(), lines, "{text}");
    assert!(
        !text
            .chars()
            .any(|c| c.is_control() && c != '\n' || c == '\u{2028}'),
        "{text:?}"
    );
    assert!(
        text.lines().all(|l| !l.trim_start().starts_with("::")),
        "{text}"
    );
    assert!(!text.contains("##["), "{text}");
}

/// An address with the token in it, and a workflow command on a line of its own.
fn hostile_text() -> String {
    format!(
        "https://github.com/{REPO}/pull/{PR}?token={TOKEN}\r\n::set-output name=x::{TOKEN}\u{2028}##[error]y"
    )
}

#[tokio::test]
async fn text_from_github_is_printed_without_the_token_or_commands() {
    // A comment address echoing the token, and a failure whose body does.
    let f = Fixture::new().await;
    f.answer(
        Mock::given(path("/user")),
        ResponseTemplate::new(502).set_body_string(hostile_text()),
        Some(1),
    )
    .await;
    f.answer(
        Mock::given(method("POST")),
        ResponseTemplate::new(201).set_body_json(json!({"id": 1, "html_url": hostile_text()})),
        None,
    )
    .await;
    let report = f.publish(&options(), &failing()).await.unwrap();
    let printed = format!("{}\n{}", report.outcome, report.notes.join("\n"));
    assert_safe_lines(&printed, 2);
    assert!(printed.contains("?token=***"), "{printed}");
    assert!(printed.contains("##\\[error]"), "{printed}");
    assert!(!format!("{report:?}").contains(TOKEN));

    // An error body that echoes it.
    let f = Fixture::new().await;
    let echoed = json!({"message": hostile_text(), "errors": [format!("::error::{TOKEN}")]});
    f.answer(
        Mock::given(method("POST")),
        ResponseTemplate::new(422).set_body_json(echoed),
        None,
    )
    .await;
    let error = f.error(&options()).await;
    assert!(matches!(error, PublishError::Invalid { .. }), "{error:?}");
    assert_safe_lines(&error.to_string(), 1);
    assert!(!format!("{error:?}").contains(TOKEN));
    assert!(error.to_string().contains("?token=***"), "{error}");

    // A body of any length is quoted at a bounded length.
    let f = Fixture::new().await;
    let long = format!("{}{TOKEN}", "x".repeat(100_000));
    f.answer(
        Mock::given(method("POST")),
        ResponseTemplate::new(418).set_body_string(long),
        None,
    )
    .await;
    let message = f.error(&options()).await.to_string();
    assert!(
        message.len() < 1000 && !message.contains(TOKEN),
        "{message}"
    );
}

/// The real binary against a stalling server: `tracegate comment` gives up
/// within `--comment-timeout` with one line, exit 2 under
/// `--require-comment` and the verdict's code (1, a failing report)
/// without.
#[tokio::test]
async fn the_binary_gives_up_on_a_stalled_server_within_its_timeout() {
    let f = Fixture::new().await;
    let dir = tempfile::tempdir().unwrap();
    let report = failing_report(&dir);
    let mut env = f.env.clone();
    env.insert("GITHUB_API_URL".to_string(), stalling_server(Stall::Drip));
    for (args, code, prefix) in [
        (vec!["--require-comment"], 2, "error: could not comment: "),
        (vec![], 1, "warning: could not comment: "),
    ] {
        let start = Instant::now();
        let args = [&args[..], &["--comment-timeout", "2"]].concat();
        let out = run_comment(&report, &env, &args);
        let took = start.elapsed();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{stderr}");
        // A watchdog: a stalled server holds the binary until its timeout.
        assert!(took < Duration::from_secs(30), "{took:?}");
        assert_safe_lines(&stderr, 1);
        assert!(
            stderr.starts_with(prefix) && stderr.contains("gave up after 2s"),
            "{stderr}"
        );
        assert!(out.stdout.is_empty());
    }
}

/// The real binary never prints the token, wherever the API echoes it.
#[tokio::test]
async fn the_binary_never_prints_an_echoed_token() {
    let f = Fixture::new().await;
    let dir = tempfile::tempdir().unwrap();
    let report = failing_report(&dir);
    f.answer(
        Mock::given(method("POST")),
        ResponseTemplate::new(201).set_body_json(json!({"id": 1, "html_url": hostile_text()})),
        Some(1),
    )
    .await;
    let posted = run_comment(&report, &f.env, &[]);
    let stderr = String::from_utf8_lossy(&posted.stderr);
    assert_eq!(posted.status.code(), Some(1), "{stderr}");
    assert_safe_lines(&stderr, 1);
    assert!(
        stderr.contains("posted the pull-request comment"),
        "{stderr}"
    );

    f.answer(
        Mock::given(method("POST")),
        ResponseTemplate::new(500).set_body_string(hostile_text()),
        None,
    )
    .await;
    let failed = run_comment(&report, &f.env, &["--require-comment"]);
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert_eq!(failed.status.code(), Some(2), "{stderr}");
    assert!(
        !stderr.contains(TOKEN) && !String::from_utf8_lossy(&failed.stdout).contains(TOKEN),
        "{stderr}"
    );
    assert!(
        stderr.lines().all(|l| !l.trim_start().starts_with("::")),
        "{stderr}"
    );
}
