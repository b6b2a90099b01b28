//! The JSON report: the [`Profile`] serialised as documented in docs/REPORT.md.

use crate::analysis::profile::Profile;

/// Pretty-printed JSON of the profile, newline-terminated.
pub fn render(profile: &Profile) -> String {
    let mut text = serde_json::to_string_pretty(profile).expect("a profile serialises");
    text.push('\n');
    text
}
