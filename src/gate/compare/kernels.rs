//! Kernel selection: a unified diff of the kernel names two sides of a row
//! launch.

use similar::TextDiff;

/// A unified diff of two kernel-name sequences, `None` when they are equal.
pub fn kernel_diff(baseline: &[String], candidate: &[String]) -> Option<String> {
    if baseline == candidate {
        return None;
    }
    let lines =
        |names: &[String]| -> String { names.iter().map(|name| format!("{name}\n")).collect() };
    let (old, new) = (lines(baseline), lines(candidate));
    let diff = TextDiff::from_lines(&old, &new);
    Some(
        diff.unified_diff()
            .context_radius(3)
            .header("baseline", "candidate")
            .to_string(),
    )
}
