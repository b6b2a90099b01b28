//! Analyse: a linked trace into a [`Profile`]. Collects the GPU work once,
//! has each table built by the module responsible for it, chooses the
//! hardware efficiency is judged against, and diagnoses the result.

use crate::analysis::anomalies::anomalies;
use crate::analysis::comm::CommKernels;
use crate::analysis::diagnose::{self, ModelledOp, Peaks, Signals, patterns};
use crate::analysis::environment::environment;
use crate::analysis::gpu_work::{GpuWork, Invocations};
use crate::analysis::graph::{self, Capture};
use crate::analysis::hardware::{self, Catalog, ComputeSpec, Hardware};
use crate::analysis::idle::idle_split;
use crate::analysis::kernels::{TotalShare, kernel_summary, short_kernels};
use crate::analysis::op_tables::{categories, ops_by_name, steps, unique_args};
use crate::analysis::perf::ReplayedCall;
use crate::analysis::perf::{self, PerfReport};
use crate::analysis::phase::phases;
use crate::analysis::profile::{
    CategorySummary, Coverage, GraphReplay, HardwareUsed, HistogramBin, KernelSummary, OpSummary,
    Phases, Profile, REPORT_SCHEMA_VERSION, SHORT_KERNEL_US, ShortKernelGroup, Source, StepProfile,
    UniqueArgs,
};
use crate::analysis::sync::sync_summary;
use crate::analysis::timeline::Breakdown;
use crate::trace::Trace;
use crate::trace::link::Tree;

/// Analyses a linked trace.
pub fn analyse(trace: &Trace, tree: &Tree) -> Profile {
    analyse_with(trace, tree, &AnalysisOptions::default())
}

/// What the analysis judges efficiency against.
#[derive(Clone, Debug)]
pub struct AnalysisOptions {
    /// The catalog detection looks GPUs up in.
    pub catalog: Catalog,
    /// Hardware given by the user, overriding detection.
    pub hardware: Option<Hardware>,
    /// Which kernels are collective communication: the built-in rules and
    /// the user's patterns (`--comm-kernel`, the policy's
    /// `communication.kernels`).
    pub comm: CommKernels,
}

impl Default for AnalysisOptions {
    fn default() -> AnalysisOptions {
        AnalysisOptions {
            catalog: hardware::builtin_catalog(),
            hardware: None,
            comm: CommKernels::default(),
        }
    }
}

/// The hardware given on the command line, else the one detected from the
/// trace's `deviceProperties`, with how it was chosen.
fn choose_hardware(trace: &Trace, options: &AnalysisOptions) -> (HardwareUsed, Option<Hardware>) {
    let (how, detail, hardware) = match &options.hardware {
        Some(given) => (
            "given",
            format!("given on the command line: {}", given.name),
            Some(given.clone()),
        ),
        None => {
            let detection = options.catalog.detect(&trace.metadata.devices);
            let found = detection.hardware().cloned();
            (
                if found.is_some() {
                    "detected"
                } else {
                    "unknown"
                },
                detection.to_string(),
                found,
            )
        }
    };
    let used = HardwareUsed {
        name: hardware.as_ref().map(|h| h.name.clone()),
        how: how.to_string(),
        detail,
        hbm_tb_s: hardware.as_ref().map(|h| h.hbm_tb_s),
        memory_gb: hardware.as_ref().map(|h| h.memory_gb),
        source: hardware.as_ref().map(|h| h.source.clone()),
    };
    (used, hardware)
}

/// The modelled rows of the perf table, as the diagnosis reads them.
fn modelled_ops(perf: &PerfReport) -> Vec<ModelledOp> {
    perf.rows
        .iter()
        .filter(|row| row.has_perf_model)
        .filter_map(|row| {
            Some(ModelledOp {
                name: row.name.clone(),
                input_dims: row.input_dims.clone().unwrap_or_default(),
                input_type: row.input_type.clone().unwrap_or_default(),
                family: row.family?.sheet().to_string(),
                count: row.count,
                kernel_time_us: row.kernel_time_us.sum,
                flops: row.gflops? * 1e9,
                bytes: row.data_moved_mb? * 1024.0 * 1024.0,
                compute_spec: row.compute_spec,
            })
        })
        .collect()
}

/// The peaks of a catalog entry for every compute spec it has.
fn peaks_of(hardware: &Hardware) -> Peaks {
    Peaks {
        gpu: hardware.name.clone(),
        hbm_tb_s: hardware.hbm_tb_s,
        tflops: ComputeSpec::ALL
            .iter()
            .filter_map(|&spec| hardware.peak_tflops(spec).map(|peak| (spec, peak)))
            .collect(),
    }
}

/// Analyses a linked trace, judging efficiency against the chosen hardware.
pub fn analyse_with(trace: &Trace, tree: &Tree, options: &AnalysisOptions) -> Profile {
    analyse_with_captures(trace, tree, options, &[])
}

/// Analyses a linked trace whose graph replays are attributed to the ops of
/// a capture trace ([`graph`]), judging efficiency against the chosen
/// hardware.
pub fn analyse_with_capture(
    trace: &Trace,
    tree: &Tree,
    options: &AnalysisOptions,
    capture: Option<Capture<'_>>,
) -> Profile {
    analyse_with_captures(trace, tree, options, capture.as_slice())
}

/// Analyses a linked trace whose graph replays are attributed to the ops of
/// capture traces (a capture folder's, [`graph::wanted`]), each step's
/// replays to the capture its batch size and mode choose ([`graph`]).
pub fn analyse_with_captures(
    trace: &Trace,
    tree: &Tree,
    options: &AnalysisOptions,
    captures: &[Capture<'_>],
) -> Profile {
    // The perf table reads only the trace and its tree: it is built on a
    // second core while the other tables are (a tenth of analysing an
    // event-dense trace, issue 28).
    let ((mut perf, implausible), tables) = rayon::join(
        || perf::perf_report_checked(trace, tree, &options.comm),
        || tables(trace, tree, options, captures),
    );
    perf::add_rows(
        &mut perf,
        perf::replayed_rows(
            trace,
            &tables.gpu,
            &captures.iter().map(|c| c.trace).collect::<Vec<_>>(),
            &tables.replayed_perf_calls,
            &options.comm,
        ),
    );
    let gpu = &tables.gpu;
    let found = anomalies(trace, tree, gpu, implausible, &tables.kernels);
    let mut profile = Profile {
        schema_version: REPORT_SCHEMA_VERSION,
        tracegate_version: env!("CARGO_PKG_VERSION").to_string(),
        source: Source {
            path: trace.source.clone(),
            json_bytes: trace.json_bytes,
            counts: trace.counts.clone(),
        },
        environment: environment(trace, gpu),
        has_gpu_activity: !gpu.items.is_empty(),
        steps: tables.steps,
        ops: tables.ops,
        categories: tables.categories,
        unique_args: tables.unique_args,
        kernels: tables.kernels,
        short_kernels: tables.short_kernels,
        short_kernel_time_us: tables.short_kernel_time_us,
        short_kernel_histogram: tables.short_kernel_histogram,
        anomalies: found,
        idle: idle_split(trace, gpu),
        sync: sync_summary(trace),
        timeline: tables.timeline,
        timeline_all_gpu_work: tables.timeline_all_gpu_work,
        hardware: tables.hardware_used,
        perf,
        diagnosis: None,
        graph_replay: tables.replay,
        coverage: tables.coverage,
        phases: tables.phases,
    };
    let signals = signals_of(&profile);
    let patterns = patterns::detect(trace, tree, &signals);
    let modelled = modelled_ops(&profile.perf);
    profile.diagnosis = Some(diagnose::diagnose(
        &signals,
        &modelled,
        tables.hardware.as_ref().map(peaks_of),
        patterns,
    ));
    profile
}

/// Every table of a profile but the perf table.
struct Tables<'a> {
    gpu: GpuWork<'a>,
    timeline: Breakdown,
    timeline_all_gpu_work: Option<Breakdown>,
    unique_args: Vec<UniqueArgs>,
    ops: Vec<OpSummary>,
    categories: Vec<CategorySummary>,
    steps: Vec<StepProfile>,
    replayed_perf_calls: Vec<ReplayedCall>,
    replay: Option<GraphReplay>,
    coverage: Coverage,
    phases: Option<Phases>,
    kernels: Vec<KernelSummary>,
    short_kernels: Vec<ShortKernelGroup>,
    short_kernel_histogram: Vec<HistogramBin>,
    short_kernel_time_us: f64,
    hardware_used: HardwareUsed,
    hardware: Option<Hardware>,
}

fn tables<'a>(
    trace: &'a Trace,
    tree: &Tree,
    options: &'a AnalysisOptions,
    captures: &[Capture<'_>],
) -> Tables<'a> {
    let gpu = GpuWork::collect(trace, tree, &options.comm);
    let timeline = Breakdown::compute(gpu.linked().map(|w| (w.bucket, w.interval)));
    let timeline_all_gpu_work = (gpu.items.iter().any(|w| !w.linked))
        .then(|| Breakdown::compute(gpu.items.iter().map(|w| (w.bucket, w.interval))));
    let invocations = Invocations::collect(trace, tree, &gpu);
    let mut unique_args = unique_args(trace, tree, &gpu, &invocations);
    let mut ops = ops_by_name(trace, &gpu, &invocations);
    let mut categories = categories(trace, &gpu, &invocations);
    let mut steps = steps(trace, tree, &gpu, &invocations);
    let replayed = graph::analyse(trace, tree, &gpu, captures);
    let phases = phases(trace, tree, &gpu, &replayed.work_names);
    graph::extend_tables(
        replayed.rows,
        &mut unique_args,
        &mut ops,
        &mut categories,
        &mut steps,
    );
    let share = TotalShare::of(&gpu, &timeline);
    let kernels = kernel_summary(trace, tree, &gpu, &share);
    let (short_kernels, short_kernel_histogram, short_kernel_time_us) =
        short_kernels(trace, tree, &gpu, &share);
    let (hardware_used, hardware) = choose_hardware(trace, options);
    Tables {
        gpu,
        timeline,
        timeline_all_gpu_work,
        unique_args,
        ops,
        categories,
        steps,
        replayed_perf_calls: replayed.perf_calls,
        replay: replayed.replay,
        coverage: replayed.coverage,
        phases,
        kernels,
        short_kernels,
        short_kernel_histogram,
        short_kernel_time_us,
        hardware_used,
        hardware,
    }
}

/// The figures of a profile the diagnosis reads besides the modelled ops.
fn signals_of(profile: &Profile) -> Signals {
    Signals {
        timeline: profile.timeline,
        host_wait_us: profile.idle.host_wait_us,
        sync_time_us: profile.sync.time_us,
        host_span_us: profile.sync.host_span_us,
        kernels: profile.kernels.iter().map(|k| k.duration.count).sum(),
        short_kernels: profile.short_kernel_histogram.iter().map(|b| b.count).sum(),
        short_kernel_us: SHORT_KERNEL_US,
    }
}
