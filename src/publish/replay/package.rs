//! The package file: `replay_ir.json`, `replay.py` and `README.md` under one
//! directory in a `.tar.gz` that is byte-for-byte the same for the same
//! input (sorted entries, mtime 0, uid/gid 0, fixed modes, a gzip header
//! with no name and mtime 0).

use std::fmt::Write as _;
use std::io::Write as _;

use flate2::{Compression, GzBuilder};

use super::ir::{Arg, ArgValue, Comparison, MathSettings, ReplayIr, TensorSpec, ValueSource};
use crate::gate::snapshot::sha256_hex;
use crate::gate::verdict::{EnvironmentSummary, Finding, Verdict};
use crate::render::text::{escape, human_us};

/// The replay script every package carries.
pub const REPLAY_PY: &str = include_str!("replay.py");

/// The files in a package's directory, in archive order.
pub const PACKAGE_FILES: [&str; 3] = ["README.md", "replay.py", "replay_ir.json"];

/// What a package says beyond the call itself: the workload, the finding
/// it was made for and both sides of the comparison.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PackageContext<'a> {
    /// The workload (file stem); the package name starts with it.
    pub workload: String,
    /// The finding, when a check made the package.
    pub finding: Option<&'a Finding>,
    /// Baseline kernel time per call, µs.
    pub baseline_us: Option<f64>,
    /// Candidate kernel time per call, µs.
    pub candidate_us: Option<f64>,
    /// Baseline hardware and software.
    pub baseline_env: Option<EnvironmentSummary>,
    /// Candidate hardware and software.
    pub candidate_env: Option<EnvironmentSummary>,
}

impl<'a> PackageContext<'a> {
    /// A package made on demand (`tracegate replay`): no finding, no sides.
    pub fn on_demand(workload: &str) -> PackageContext<'a> {
        PackageContext {
            workload: workload.to_string(),
            ..PackageContext::default()
        }
    }

    /// The context of `verdict.findings[index]`: its workload, the per-call
    /// figures when the finding measures kernel time per call, and both
    /// sides' environments from the workload's summary.
    pub fn for_finding(verdict: &'a Verdict, index: usize) -> PackageContext<'a> {
        let finding = &verdict.findings[index];
        let per_call = finding.unit == "µs" && finding.metric.ends_with("per call");
        let summary = verdict
            .workloads
            .iter()
            .find(|w| w.name == finding.workload);
        PackageContext {
            workload: finding.workload.clone(),
            finding: Some(finding),
            baseline_us: finding.baseline.filter(|_| per_call),
            candidate_us: finding.candidate.filter(|_| per_call),
            baseline_env: summary.map(|w| w.baseline.clone()),
            candidate_env: summary.map(|w| w.candidate.clone()),
        }
    }
}

/// The package of one call: its file name
/// (`<workload>-<op>-<short hash>.tar.gz`, the hash over the op and its
/// recorded arguments) and its bytes. Pure: the same IR and context give
/// the same name and bytes.
pub fn write_package(ir: &ReplayIr, context: &PackageContext) -> (String, Vec<u8>) {
    let mut ir = ir.clone();
    let has_comparison = context.finding.is_some()
        || context.baseline_us.is_some()
        || context.candidate_us.is_some()
        || context.baseline_env.is_some()
        || context.candidate_env.is_some();
    ir.comparison = has_comparison.then(|| Comparison {
        workload: context.workload.clone(),
        finding: context.finding.cloned(),
        baseline_us: context.baseline_us,
        candidate_us: context.candidate_us,
        baseline_environment: context.baseline_env.clone(),
        candidate_environment: context.candidate_env.clone(),
    });
    let identity = format!(
        "{}\n{}",
        ir.op.name,
        serde_json::to_string(&ir.recorded).expect("JSON values serialise")
    );
    let stem = format!(
        "{}-{}-{}",
        file_safe(&context.workload, 80),
        file_safe(&ir.op.name.replace("::", "_"), 60),
        &sha256_hex(identity.as_bytes())[..8]
    );
    let mut json = serde_json::to_string_pretty(&ir).expect("the IR serialises");
    json.push('\n');
    let files = [
        ("README.md", readme(&ir, context, &stem)),
        ("replay.py", REPLAY_PY.to_string()),
        ("replay_ir.json", json),
    ];
    (format!("{stem}.tar.gz"), tar_gz(&stem, &files))
}

/// Keeps ASCII letters, digits, `.`, `-` and `_`; anything else becomes `_`.
fn file_safe(text: &str, max_chars: usize) -> String {
    let safe: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .take(max_chars)
        .collect();
    let safe = safe.trim_start_matches('.');
    if safe.is_empty() {
        "workload".to_string()
    } else {
        safe.to_string()
    }
}

/// A deterministic `.tar.gz` of `files` under `directory/`.
fn tar_gz(directory: &str, files: &[(&str, String)]) -> Vec<u8> {
    let mut entries: Vec<(String, &[u8], u32)> = files
        .iter()
        .map(|(name, text)| {
            let mode = if name.ends_with(".py") { 0o755 } else { 0o644 };
            (format!("{directory}/{name}"), text.as_bytes(), mode)
        })
        .collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let mut archive = tar::Builder::new(Vec::new());
    let mut append = |path: &str, data: &[u8], mode: u32, kind: tar::EntryType| {
        let mut header = tar::Header::new_ustar();
        header.set_entry_type(kind);
        header.set_size(data.len() as u64);
        header.set_mode(mode);
        header.set_mtime(0);
        header.set_uid(0);
        header.set_gid(0);
        archive
            .append_data(&mut header, path, data)
            .expect("writing a tar to memory cannot fail");
    };
    append(
        &format!("{directory}/"),
        &[],
        0o755,
        tar::EntryType::Directory,
    );
    for (path, data, mode) in &entries {
        append(path, data, *mode, tar::EntryType::Regular);
    }
    let tar = archive
        .into_inner()
        .expect("writing a tar to memory cannot fail");
    let mut encoder = GzBuilder::new()
        .mtime(0)
        .operating_system(255)
        .write(Vec::with_capacity(tar.len() / 4), Compression::best());
    encoder
        .write_all(&tar)
        .expect("writing to memory cannot fail");
    encoder.finish().expect("writing to memory cannot fail")
}

/// A code span of trace text (backticks cannot end it early).
fn code(text: &str) -> String {
    format!("`{}`", text.replace('`', "'").replace(['\n', '\r'], " "))
}

fn tensor_text(t: &TensorSpec) -> String {
    let tuple = |values: &[i64]| {
        let inner: Vec<String> = values.iter().map(i64::to_string).collect();
        if values.len() == 1 {
            format!("({},)", inner[0])
        } else {
            format!("({})", inner.join(", "))
        }
    };
    let mut text = format!("{} {}", t.torch_dtype, tuple(&t.shape));
    if t.strides_recorded {
        let _ = write!(text, ", strides {}", tuple(&t.strides));
    }
    if !t.dtype_recorded {
        text.push_str(" (dtype assumed)");
    }
    if let Some(device) = &t.device {
        let _ = write!(text, " on {device}");
    }
    text
}

fn value_text(value: &ArgValue) -> String {
    match value {
        ArgValue::Tensor(t) => format!("Tensor {}", tensor_text(t)),
        ArgValue::TensorList { tensors } => {
            let members: Vec<String> = tensors.iter().map(tensor_text).collect();
            format!("[{}]", members.join("; "))
        }
        ArgValue::None => "None".to_string(),
        ArgValue::Bool { value } => if *value { "True" } else { "False" }.to_string(),
        ArgValue::Int { value } => value.to_string(),
        ArgValue::Float { text, .. } => text.clone(),
        ArgValue::List { values } => {
            let items: Vec<String> = values.iter().map(|v| v.to_string()).collect();
            format!("[{}]", items.join(", "))
        }
        ArgValue::Str { value } => format!("'{value}'"),
        ArgValue::Device => "the replay's device".to_string(),
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

/// The README's list of the math settings `replay.py` applies.
fn math_section(out: &mut String, math: &MathSettings) {
    let on = |value: bool| if value { "on" } else { "off" };
    let _ = writeln!(
        out,
        "\nMath settings `replay.py` applies before the first call ({}; `--tf32 on|off` \
         overrides both TF32 settings):\n\n\
         - `torch.backends.cuda.matmul.allow_tf32`: {}\n\
         - `torch.backends.cudnn.allow_tf32`: {}\n\
         - `torch.backends.cudnn.benchmark`: {}\n\
         - `torch.backends.cudnn.deterministic`: {}",
        escape(&math.source),
        on(math.matmul_allow_tf32),
        on(math.cudnn_allow_tf32),
        on(math.cudnn_benchmark),
        on(math.cudnn_deterministic)
    );
}

/// The package's README.
fn readme(ir: &ReplayIr, context: &PackageContext, stem: &str) -> String {
    let mut out = String::new();
    let call = match &ir.op.overload {
        Some(overload) => format!("{}.{overload}", ir.op.name),
        None => ir.op.name.clone(),
    };
    let _ = writeln!(
        out,
        "# Replay: {} in {}\n",
        code(&ir.op.name),
        escape(&context.workload)
    );
    let _ = writeln!(
        out,
        "A self-contained reproducer made by tracegate {}: `replay.py` calls {} once more with \
         the arguments the profiler recorded, on random data, and times it. It needs Python 3 \
         and PyTorch, nothing else.\n",
        ir.tracegate_version,
        code(&call)
    );

    out.push_str("## Why this call\n\n");
    match context.finding {
        Some(finding) => why_flagged(&mut out, finding),
        None => {
            let _ = writeln!(
                out,
                "Made on demand with `tracegate replay`{}; no check flagged it.\n",
                match (&ir.origin.trace, ir.origin.event_index) {
                    (Some(trace), Some(index)) => format!(" from {} (event {index})", code(trace)),
                    (Some(trace), None) => format!(" from {}", code(trace)),
                    _ => String::new(),
                }
            );
        }
    }

    out.push_str("## The call\n\n");
    match &ir.op.schema {
        Some(schema) => {
            let _ = writeln!(out, "Schema: {}\n", code(schema));
        }
        None => {
            let _ = writeln!(
                out,
                "tracegate does not know this op's schema: `replay.py` calls the first overload \
                 of `torch.ops.{}.{}` whose schema accepts these arguments.\n",
                ir.op.namespace, ir.op.op
            );
        }
    }
    out.push_str("| # | argument | value | source |\n|---|---|---|---|\n");
    let mut all: Vec<(&Arg, bool)> = ir
        .args
        .iter()
        .map(|a| (a, false))
        .chain(ir.kwargs.iter().map(|a| (a, true)))
        .collect();
    all.sort_by_key(|(a, _)| a.position);
    for (arg, keyword) in all {
        let name = match (&arg.name, &arg.schema_type) {
            (Some(name), Some(ty)) => format!(
                "{} {}{}",
                escape(ty),
                escape(name),
                if keyword { " (keyword)" } else { "" }
            ),
            _ => escape(&arg.recorded_type),
        };
        let source = match arg.source {
            ValueSource::Recorded => "recorded",
            ValueSource::SchemaDefault => "schema default (not recorded)",
            ValueSource::ReplayDevice => "not recorded",
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {source} |",
            arg.position,
            name,
            escape(&value_text(&arg.value))
        );
    }
    let _ = writeln!(
        out,
        "\nThe input tensors take {} of device memory.",
        mib(ir.input_bytes)
    );
    if let Some(path) = &ir.module_path {
        let _ = writeln!(out, "Module: {}.", code(path));
    }
    math_section(&mut out, &ir.math);
    if !ir.notes.is_empty() {
        out.push_str("\nAssumptions, where the trace records nothing:\n\n");
        for note in &ir.notes {
            let _ = writeln!(out, "- {}", escape(note));
        }
    }

    let _ = writeln!(
        out,
        "\n## Run it\n\n\
         ```sh\n\
         tar xzf {stem}.tar.gz && cd {stem}\n\
         python3 replay.py                      # on cuda (CUDA or ROCm) when available, else cpu\n\
         python3 replay.py --iters 500 --warmup 50\n\
         python3 replay.py --cold-l2            # flush the L2 cache before every timed call\n\
         python3 replay.py --tf32 off           # fp32 matmuls and convolutions without TF32\n\
         python3 replay.py --profile            # also write replay_trace.json\n\
         python3 replay.py --dtype-override bfloat16                  # every floating-point input\n\
         python3 replay.py --dtype-override float8_e4m3fn=float8_e4m3fnuz\n\
         python3 replay.py --dry-run            # print the call; needs no PyTorch\n\
         ```\n\n\
         `--profile` writes a PyTorch profiler trace of a few replayed calls (shapes recorded) \
         that `tracegate report replay_trace.json` reads back. `--json FILE` writes the figures. \
         Exit codes: 0 timed; 2 bad usage or an unreadable `replay_ir.json`; 3 the op cannot run \
         on this device or with this PyTorch (the message says why); 4 PyTorch is not installed.\n"
    );

    out.push_str("## What to expect\n\n");
    out.push_str("| source | kernel time per call | calls |\n|---|---|---|\n");
    if let Some(stats) = &ir.kernel_time_us {
        let _ = writeln!(
            out,
            "| this call's trace | median {}, mean {}, min {}, max {} | {} |",
            human_us(stats.median),
            human_us(stats.mean),
            human_us(stats.min),
            human_us(stats.max),
            stats.count
        );
    }
    if let Some(us) = context.baseline_us {
        let _ = writeln!(out, "| baseline (check) | median {} | |", human_us(us));
    }
    if let Some(us) = context.candidate_us {
        let _ = writeln!(out, "| candidate (check) | median {} | |", human_us(us));
    }
    if ir.kernel_time_us.is_none()
        && context.baseline_us.is_none()
        && context.candidate_us.is_none()
    {
        out.push_str("| (not known: the op launched no GPU work of its own) | | |\n");
    }
    out.push_str(
        "\nOn the GPU and software the trace came from, the replay's median should be close to \
         the trace's (on an H200, 0.96–1.26 for 26 calls of 4–225 µs). The trace measures the \
         op's kernels; on a GPU the replay queues its calls while the GPU is held busy, so they \
         run back to back and device events see the GPU's time, not the launch from Python. An \
         op that waits for the GPU (`nonzero`, `item`) cannot be queued: its line says `timing: \
         per call between two events`, and a call shorter than its launch reads as the launch. \
         Back-to-back calls find their inputs in the L2 cache, so memory-bound ops can read lower \
         than in the model: `--cold-l2` removes that, each call then timed alone (about 2 µs of \
         event time in). Random data can change the time of data-dependent kernels (sorting, \
         indexing, sparse paths).\n",
    );
    if !ir.kernels.is_empty() {
        out.push_str("\nKernels one call launched in the trace:\n\n");
        for kernel in &ir.kernels {
            let figures = match (kernel.count, kernel.median_us) {
                (Some(count), Some(median)) => {
                    format!(" — {count} runs, median {}", human_us(median))
                }
                _ => String::new(),
            };
            let _ = writeln!(out, "- {}{figures}", code(&kernel.name));
        }
    }

    out.push_str("\n## Environment\n\n");
    out.push_str(
        "| side | GPUs | hardware | runtime | PyTorch | distributed |\n|---|---|---|---|---|---|\n",
    );
    // When a check made the package, the trace is one of its sides: no
    // row of its own.
    let own = ir.environment.as_ref();
    let shared = [&context.baseline_env, &context.candidate_env]
        .iter()
        .any(|env| env.is_some() && env.as_ref() == own);
    let rows = [
        ("this call's trace", own.filter(|_| !shared)),
        ("baseline", context.baseline_env.as_ref()),
        ("candidate", context.candidate_env.as_ref()),
    ];
    for (side, env) in rows {
        let Some(env) = env else { continue };
        let cell = |v: &Option<String>| v.as_deref().map_or("—".to_string(), escape);
        let _ = writeln!(
            out,
            "| {side} | {} | {} | {} | {} | {} |",
            escape(&env.gpus),
            cell(&env.hardware),
            cell(&env.runtime),
            cell(&env.pytorch),
            cell(&env.distributed)
        );
    }

    let _ = writeln!(
        out,
        "\n## Files\n\n\
         - `replay_ir.json`: the call (replay IR version {}; tracegate's docs/REPLAY.md describes it)\n\
         - `replay.py`: builds the inputs, resolves the overload, warms up and times\n\
         - `README.md`: this file",
        ir.version
    );
    out
}

/// A unit enum's name as `report.json` writes it (`regression`, `high`).
fn serde_name(value: &impl serde::Serialize) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(name)) => name,
        _ => String::new(),
    }
}

fn why_flagged(out: &mut String, finding: &Finding) {
    let _ = writeln!(
        out,
        "**{}** ({} finding, rule {}): {}\n",
        finding.severity.as_str(),
        serde_name(&finding.kind),
        code(&finding.rule),
        escape(&finding.message)
    );
    if let (Some(baseline), Some(candidate)) = (finding.baseline, finding.candidate) {
        let _ = write!(
            out,
            "- {}: baseline {baseline:.3} {unit} → candidate {candidate:.3} {unit}",
            escape(&finding.metric),
            unit = finding.unit
        );
        if let Some(delta) = finding.delta_percent {
            let _ = write!(out, " ({delta:+.1}%");
            if let Some((low, high)) = finding.interval_percent {
                let label = finding.statistics.interval_label();
                let _ = write!(out, "; {label} {low:+.1}% … {high:+.1}%");
            }
            out.push(')');
        }
        out.push('\n');
    }
    if let Some(ratio) = finding.expected_ratio {
        let _ = writeln!(
            out,
            "- expected candidate/baseline ratio from the hardware: {ratio:.2}"
        );
    }
    if let Some(impact) = finding.impact_percent {
        let _ = writeln!(
            out,
            "- impact: {impact:+.2}% of the baseline's total GPU time (priority {})",
            serde_name(&finding.priority)
        );
    }
    if let Some(op) = &finding.op {
        let _ = writeln!(
            out,
            "- op row: {} with dims {}, types {}",
            code(&op.name),
            code(&op.input_dims),
            code(&op.input_type)
        );
    }
    for (label, path) in [("Path A", &finding.path_a), ("Path B", &finding.path_b)] {
        if let Some(text) = path {
            let _ = writeln!(out, "- {label}: {}", escape(text));
        }
    }
    out.push('\n');
}
