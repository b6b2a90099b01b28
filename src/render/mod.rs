//! Render: a [`Profile`](crate::analysis::profile::Profile) as terminal text, JSON,
//! Markdown or TraceLens-compatible CSV. Renderers return strings; the binary
//! decides where they go.

pub mod actions;
pub mod analysis;
pub mod csv;
pub mod gate;
pub mod hardware_table;
pub mod json;
pub mod markdown;
pub mod perf_csv;
pub mod terminal;

/// Formats microseconds for people: `812 ns`, `15.2 µs`, `3.41 ms`, `2.10 s`.
pub fn human_us(us: f64) -> String {
    let abs = us.abs();
    if abs < 1.0 {
        format!("{:.0} ns", us * 1000.0)
    } else if abs < 1000.0 {
        format!("{us:.1} µs")
    } else if abs < 1_000_000.0 {
        format!("{:.2} ms", us / 1000.0)
    } else {
        format!("{:.2} s", us / 1_000_000.0)
    }
}

pub use crate::analysis::ops::stats::percent;

/// The environment facts the text renderers lead with, as (label, value):
/// GPUs, and platform and rank where the trace records them.
pub fn environment_lines(
    profile: &crate::analysis::profile::Profile,
) -> Vec<(&'static str, String)> {
    let env = &profile.environment;
    let gpus: Vec<String> = env
        .devices
        .iter()
        .map(|d| {
            if d.name.is_empty() {
                "(unnamed GPU)".to_string()
            } else {
                d.name.clone()
            }
        })
        .collect();
    let mut lines = vec![("GPUs", markdown::summarise_names(&gpus))];
    if let Some(platform) = &env.platform {
        let version = env
            .cuda_runtime_version
            .as_ref()
            .or(env.hip_runtime_version.as_ref());
        let runtime = version
            .map(|v| format!(" (runtime {v})"))
            .unwrap_or_default();
        lines.push(("Platform", format!("{platform}{runtime}")));
    }
    if let (Some(rank), Some(world)) = (env.rank, env.world_size) {
        lines.push(("Rank", format!("{rank} of {world}")));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_units() {
        assert_eq!(human_us(0.812), "812 ns");
        assert_eq!(human_us(15.24), "15.2 µs");
        assert_eq!(human_us(3410.0), "3.41 ms");
        assert_eq!(human_us(2_100_000.0), "2.10 s");
    }
}
