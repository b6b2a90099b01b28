//! Which pull request a run is about, from the workflow's environment and its
//! event JSON (`$GITHUB_EVENT_PATH`).
//!
//! `pull_request` and `pull_request_target` events carry the PR
//! (`pull_request.number`, `pull_request.head.sha`); an `issue_comment` on a
//! PR carries `issue.number` with an `issue.pull_request` object; a
//! `workflow_run` event (the second phase of the fork-safe pattern) carries
//! no usable PR number for forks, only `workflow_run.head_sha`, so the number
//! comes from `--pr` and is checked against that SHA. Push, schedule and
//! manual events have no PR.

use serde_json::Value;

/// What the event JSON says about a pull request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EventFacts {
    /// The PR the event is about, if any.
    pub number: Option<u64>,
    /// The head commit the run built: the PR's head for `pull_request*`
    /// events, `workflow_run.head_sha` for `workflow_run`.
    pub head_sha: Option<String>,
}

/// Reads the facts out of an event payload. Unknown shapes give no PR rather
/// than an error: a `push` payload is valid, it just has no PR.
pub fn facts(event: &Value) -> EventFacts {
    let pull_request = event.get("pull_request").filter(|v| v.is_object());
    let issue = event
        .get("issue")
        .filter(|i| i.get("pull_request").is_some());
    let number = pull_request
        .or(issue)
        .and_then(|p| p.get("number"))
        .and_then(Value::as_u64);
    let head_sha = pull_request
        .and_then(|p| p.pointer("/head/sha"))
        .or_else(|| event.pointer("/workflow_run/head_sha"))
        .and_then(Value::as_str)
        .map(str::to_string);
    EventFacts { number, head_sha }
}

/// A commit SHA as GitHub writes it: 40 (SHA-1) or 64 (SHA-256) hex digits.
pub fn is_sha(text: &str) -> bool {
    matches!(text.len(), 40 | 64) && text.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const SHA: &str = "0123456789abcdef0123456789abcdef01234567";

    #[test]
    fn pull_request_events() {
        let event = json!({"action": "synchronize", "number": 7,
            "pull_request": {"number": 7, "head": {"sha": SHA}}});
        assert_eq!(
            facts(&event),
            EventFacts {
                number: Some(7),
                head_sha: Some(SHA.to_string())
            }
        );
    }

    #[test]
    fn issue_comments_on_pull_requests_only() {
        let on_pr = json!({"issue": {"number": 9, "pull_request": {"url": "x"}}});
        assert_eq!(facts(&on_pr).number, Some(9));
        let on_issue = json!({"issue": {"number": 9}});
        assert_eq!(facts(&on_issue).number, None);
    }

    #[test]
    fn workflow_run_gives_the_sha_not_the_number() {
        let event = json!({"workflow_run": {"head_sha": SHA, "pull_requests": []}});
        assert_eq!(
            facts(&event),
            EventFacts {
                number: None,
                head_sha: Some(SHA.to_string())
            }
        );
    }

    #[test]
    fn push_has_no_pull_request() {
        let event = json!({"ref": "refs/heads/main", "after": SHA, "pull_request": null});
        assert_eq!(facts(&event), EventFacts::default());
    }

    #[test]
    fn shas() {
        assert!(is_sha(SHA));
        assert!(!is_sha("0123"));
        assert!(!is_sha(&"g".repeat(40)));
    }
}
