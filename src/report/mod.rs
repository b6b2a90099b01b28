//! Render: a [`Profile`](crate::analyse::Profile) as terminal text, JSON,
//! Markdown or TraceLens-compatible CSV. Renderers return strings; the binary
//! decides where they go.

pub mod analysis;
pub mod csv;
pub mod gate;
pub mod github;
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

/// `part` as a percentage of `whole` (0 when `whole` is 0).
pub fn percent(part: f64, whole: f64) -> f64 {
    if whole > 0.0 {
        part / whole * 100.0
    } else {
        0.0
    }
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
