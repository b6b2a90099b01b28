//! The environment a trace records: devices, runtime and driver versions,
//! distributed setup, and whether it ran on CUDA or ROCm.

use std::collections::BTreeSet;

use crate::analysis::gpu_work::GpuWork;
use crate::analysis::profile::Environment;
use crate::trace::{Kind, Trace};

/// Hardware and software from the trace's metadata, the devices that ran
/// GPU work, and the platform (CUDA or ROCm).
pub(super) fn environment(trace: &Trace, gpu: &GpuWork) -> Environment {
    let text = |key: &str| {
        trace.metadata.get(key).map(|v| match v {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        })
    };
    let distributed = trace.metadata.get("distributedInfo");
    let dist_int = |key: &str| {
        distributed
            .and_then(|d| d.get(key))
            .and_then(serde_json::Value::as_i64)
    };
    let active_devices: BTreeSet<i64> = gpu.items.iter().filter_map(|w| w.device).collect();
    let is_rocm = text("hip_runtime_version").is_some()
        || text("roctracer_version").is_some()
        || trace
            .events
            .iter()
            .any(|e| e.kind == Kind::Runtime && trace.name(e).starts_with("hip"));
    let is_cuda = text("cuda_runtime_version").is_some()
        || trace
            .events
            .iter()
            .any(|e| e.kind == Kind::Runtime && trace.name(e).starts_with("cuda"));
    Environment {
        devices: trace.metadata.devices.clone(),
        active_devices: active_devices.into_iter().collect(),
        cuda_runtime_version: text("cuda_runtime_version"),
        cuda_driver_version: text("cuda_driver_version"),
        hip_runtime_version: text("hip_runtime_version"),
        hip_driver_version: text("hip_driver_version"),
        tracer_version: text("roctracer_version").or_else(|| text("cupti_version")),
        rank: dist_int("rank"),
        world_size: dist_int("world_size"),
        distributed_backend: distributed
            .and_then(|d| d.get("backend"))
            .and_then(|b| b.as_str())
            .map(str::to_string),
        trace_schema_version: text("schemaVersion"),
        platform: if is_rocm {
            Some("ROCm".to_string())
        } else if is_cuda {
            Some("CUDA".to_string())
        } else {
            None
        },
    }
}
