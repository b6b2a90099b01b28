//! What `tracegate policy check` prints: a policy described in a few lines,
//! one per area, in the policy's own terms.

use std::fmt;

use super::model::{EfficiencyRule, Policy, TimelineRule};
use crate::echo;

impl Policy {
    /// A short description, one line per area.
    pub fn summary(&self) -> Summary {
        let noise = &self.noise;
        let mut lines = Vec::new();
        if let Some(description) = &self.description {
            lines.push(description.clone());
        }
        lines.push(format!(
            "hardware: baseline {}, candidate {}, {} peaks{}",
            self.hardware.baseline,
            self.hardware.candidate,
            self.hardware.peak.as_str(),
            match &self.hardware.file {
                Some(file) => format!(" (catalog + {})", file.display()),
                None => String::new(),
            }
        ));
        lines.push(format!(
            "regression: {} above +{}% (whole {}% interval; noise floor {}%), impact ≥ {}% of \
             GPU time, rows ≥ {} µs; improvement: {}",
            self.regression.severity.as_str(),
            number(noise.min_effect_percent),
            number(noise.confidence * 100.0),
            number(noise.noise_floor_percent),
            number(noise.min_impact_percent),
            number(noise.min_time_us),
            self.improvement.severity.as_str(),
        ));
        lines.push(format!(
            "cross-platform: {}{} expected ratio, {}% slack, {}{}",
            if self.cross_platform.enabled {
                ""
            } else {
                "off (sides on different GPUs are an error); "
            },
            self.cross_platform.expected.as_str(),
            number(self.cross_platform.slack_percent),
            self.cross_platform.severity.as_str(),
            match self.cross_platform.rules.len() {
                0 => String::new(),
                n => format!(", {}", plural(n, "ratio rule", "ratio rules")),
            },
        ));
        let timeline: Vec<String> = self.timeline.iter().map(|r| r.to_string()).collect();
        lines.push(format!(
            "timeline: {}",
            if timeline.is_empty() {
                "no gates".to_string()
            } else {
                timeline.join("; ")
            }
        ));
        lines.push(match self.end_to_end.max_regression_percent {
            Some(limit) => format!(
                "end to end: step {} +{}% {}",
                self.end_to_end.metric.as_str(),
                number(limit),
                self.end_to_end.severity.as_str()
            ),
            None => "end to end: off".to_string(),
        });
        let efficiency: Vec<String> = self.efficiency.iter().map(|r| r.to_string()).collect();
        lines.push(format!(
            "efficiency: {}",
            if efficiency.is_empty() {
                "not judged".to_string()
            } else {
                efficiency.join("; ")
            }
        ));
        lines.push(format!(
            "{}, {}",
            plural(self.budgets.len(), "budget", "budgets"),
            plural(self.ignore.len(), "ignore entry", "ignore entries"),
        ));
        lines.push(format!(
            "kernel selection {}, shape changed {}, new ops {} (≥ {}%), missing ops {} (≥ {}%), \
             nothing to compare {}",
            self.kernel_selection.severity.as_str(),
            self.shape_changed.severity.as_str(),
            self.new_ops.severity.as_str(),
            number(self.new_ops.min_share_percent),
            self.missing_ops.severity.as_str(),
            number(self.missing_ops.min_share_percent),
            self.nothing_to_compare.severity.as_str(),
        ));
        lines.push(format!(
            "integrity: rows must hold ≥ {}% of GPU time, else {}; matched rows ≥ {}%, else \
             different workloads (exit 2)",
            number(self.integrity.min_judged_share * 100.0),
            self.integrity.on_inconclusive.as_str(),
            number(self.integrity.min_matched_share * 100.0),
        ));
        let severities: Vec<&str> = self.replay.severities.iter().map(|s| s.as_str()).collect();
        lines.push(format!(
            "replay: {} findings, at most {} packages{}",
            if severities.is_empty() {
                "no".to_string()
            } else {
                severities.join("/")
            },
            self.replay.max_packages,
            if self.replay.only_known_schema {
                ", known schemas only"
            } else {
                ""
            }
        ));
        Summary {
            label: self.label.clone(),
            version: self.version,
            lines,
        }
    }
}

/// `3`, `2.5`: a number without a trailing `.0`, rounded to six decimals
/// (so 0.9 × 100 reads `90`).
fn number(value: f64) -> String {
    format!("{}", (value * 1e6).round() / 1e6)
}

/// `2 budgets`, `1 budget`.
fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// What `tracegate policy check` prints: the file, its version, one line per area.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// The policy's label (its path).
    pub label: String,
    /// Its format version.
    pub version: u32,
    /// One line per area (hardware, regression, timeline, …).
    pub lines: Vec<String>,
}

impl fmt::Display for Summary {
    /// The lines, each escaped and cut ([`echo`]): the description, file
    /// names and hardware names come from files and must not add lines
    /// (or workflow commands) of their own.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{}: valid policy, version {}",
            echo::label(&self.label),
            self.version
        )?;
        for line in &self.lines {
            writeln!(f, "  {}", echo::echo(line, echo::MAX_MESSAGE_CHARS))?;
        }
        Ok(())
    }
}

impl fmt::Display for TimelineRule {
    /// `busy_time +5% fail`, `idle_percent ≤ 30% warn`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.metric.as_str())?;
        if let Some(limit) = self.max_regression_percent {
            write!(f, " +{}%", number(limit))?;
        }
        if let Some(max) = self.max {
            match self.metric.unit() {
                "%" => write!(f, " ≤ {}%", number(max))?,
                unit => write!(f, " ≤ {} {unit}", number(max))?,
            }
        }
        write!(f, " {}", self.severity.as_str())
    }
}

impl fmt::Display for EfficiencyRule {
    /// `GEMM ≥ 40% (rows ≥ 5%) warn`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ≥ {}% (rows ≥ {}%) {}",
            self.category,
            number(self.min_percent),
            number(self.min_share_percent),
            self.severity.as_str()
        )
    }
}
