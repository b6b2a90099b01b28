#!/usr/bin/env python3
"""Replay one PyTorch op call recorded in a profiler trace, and time it.

Made by tracegate. Reads replay_ir.json beside this file (the call: op,
arguments, the trace's timings), builds the inputs with torch.empty_strided
on the chosen device, resolves the overload against this PyTorch's own
schemas, warms up, then times many calls, and prints the result next to the
trace's figures. On a GPU (CUDA and ROCm alike) the calls are queued while
the GPU is held busy and timed with device events, so that a call shorter
than its launch from Python reads as the GPU's time, not the launch's; on
the CPU, with perf_counter.

Needs only Python 3 and PyTorch. `--dry-run` needs neither PyTorch nor a GPU.

Exit codes: 0 timed; 2 bad usage or unreadable IR; 3 the op cannot run on
this device or with this PyTorch; 4 PyTorch is not installed.
"""

import argparse
import json
import math
import os
import re
import statistics
import sys
import time

IR_FORMAT = "tracegate-replay-ir"
IR_VERSION = 1

EXIT_USAGE = 2
EXIT_CANNOT_RUN = 3
EXIT_NO_TORCH = 4

# c10::ScalarType numbers (a dtype argument is recorded as its number).
SCALAR_TYPES = {
    0: "uint8", 1: "int8", 2: "int16", 3: "int32", 4: "int64",
    5: "float16", 6: "float32", 7: "float64", 8: "complex32",
    9: "complex64", 10: "complex128", 11: "bool", 15: "bfloat16",
    23: "float8_e5m2", 24: "float8_e4m3fn", 25: "float8_e5m2fnuz",
    26: "float8_e4m3fnuz",
}
LAYOUTS = {0: "strided", 1: "sparse_coo", 2: "sparse_csr"}
MEMORY_FORMATS = {
    0: "contiguous_format", 1: "preserve_format", 2: "channels_last",
    3: "channels_last_3d",
}
FP8_PREFIX = "float8_"


class CannotRun(Exception):
    """The op cannot run here (device, PyTorch version, memory)."""


def fail(code, message):
    print("replay: " + message, file=sys.stderr)
    sys.exit(code)


def load_ir(path):
    try:
        with open(path, encoding="utf-8") as handle:
            ir = json.load(handle)
    except (OSError, ValueError) as error:
        fail(EXIT_USAGE, "cannot read %s: %s" % (path, error))
    if ir.get("format") != IR_FORMAT or ir.get("version") != IR_VERSION:
        fail(EXIT_USAGE, "%s is not a version %d replay IR (format %r, version %r)"
             % (path, IR_VERSION, ir.get("format"), ir.get("version")))
    return ir


def recorded_inputs(ir):
    """Every argument, in the order the profiler recorded them."""
    return sorted(ir["args"] + ir["kwargs"], key=lambda a: a["position"])


def fmt_us(value):
    if value is None:
        return "-"
    return "%.2f" % value


def describe_tensor(spec, dtype_name=None):
    text = "%s%s" % (dtype_name or spec["torch_dtype"], tuple(spec["shape"]))
    if spec.get("strides_recorded"):
        text += " strides %s" % (tuple(spec["strides"]),)
    if spec.get("device"):
        text += " on " + spec["device"]
    return text


def describe_value(arg, overrides=None):
    kind = arg["kind"]
    rename = (lambda s: override_name(s, overrides)) if overrides else (lambda s: s["torch_dtype"])
    if kind == "tensor":
        return "Tensor " + describe_tensor(arg, rename(arg))
    if kind == "tensor_list":
        return "[" + "; ".join(describe_tensor(t, rename(t)) for t in arg["tensors"]) + "]"
    if kind == "float":
        return arg["text"]
    if kind in ("int", "bool", "str"):
        return repr(arg["value"])
    if kind == "list":
        return repr(arg["values"])
    if kind == "device":
        return "<replay device>"
    return "None"


# ----------------------------------------------------------------- dtypes --

def parse_overrides(texts):
    """`--dtype-override bfloat16` (every floating-point input) or FROM=TO."""
    overrides = {}
    for text in texts or []:
        for part in text.split(","):
            part = part.strip()
            if not part:
                continue
            if "=" in part:
                source, target = part.split("=", 1)
                overrides[source.strip().replace("torch.", "")] = target.strip().replace("torch.", "")
            else:
                overrides["*"] = part.replace("torch.", "")
    return overrides


def is_floating_name(name):
    return name.startswith(("float", "bfloat", "complex"))


def override_name(spec, overrides):
    name = spec["torch_dtype"]
    if name in overrides:
        return overrides[name]
    if "*" in overrides and is_floating_name(name):
        return overrides["*"]
    return name


def torch_dtype(torch, name):
    dtype = getattr(torch, name, None)
    if not isinstance(dtype, torch.dtype):
        raise CannotRun("this PyTorch (%s) has no torch.%s" % (torch.__version__, name))
    return dtype


# ------------------------------------------------------------ schema types --

def type_info(arg_type):
    """(base, optional, is_list) of a schema argument type, from either the
    JIT's spelling (Optional[List[int]]) or the schema's (int[]?)."""
    text = str(arg_type).replace(" ", "")
    optional = False
    is_list = False
    while True:
        if text.startswith("Optional[") and text.endswith("]"):
            text, optional = text[9:-1], True
        elif text.endswith("?"):
            text, optional = text[:-1], True
        elif text.startswith("List[") and text.endswith("]"):
            text, is_list = text[5:-1], True
        elif re.fullmatch(r".+\[\d*\]", text):
            text, is_list = re.sub(r"\[\d*\]$", "", text), True
        else:
            break
    text = re.sub(r"\(.*\)$", "", text)
    return text, optional, is_list


INT_TYPES = ("int", "SymInt")
NUMBER_TYPES = ("Scalar", "number", "float", "int", "SymInt", "complex")


def convert(param, item, device):
    """The value (or a tensor maker) for one schema parameter, or raise
    TypeError when the recorded input does not fit it."""
    base, optional, is_list = type_info(param.type)
    kind = item["kind"]
    name = param.name
    if kind == "none":
        if optional or base in ("Generator",):
            return None
        raise TypeError("None for %s" % name)
    if kind == "device":
        if base == "Device":
            return ("device",)
        raise TypeError("device for %s" % name)
    if kind == "tensor":
        if base == "Tensor" and not is_list:
            return ("tensor", item)
        raise TypeError("tensor for %s" % name)
    if kind == "tensor_list":
        if base == "Tensor" and is_list:
            return ("tensor_list", item["tensors"])
        raise TypeError("tensor list for %s" % name)
    if is_list:
        if kind != "list":
            raise TypeError("list expected for %s" % name)
        values = item["values"]
        if base in INT_TYPES and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            return list(values)
        if base == "bool" and all(isinstance(v, bool) for v in values):
            return list(values)
        if base == "float" and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            return [float(v) for v in values]
        raise TypeError("list of %s expected for %s" % (base, name))
    if kind == "list":
        raise TypeError("a list for %s" % name)
    if kind == "str":
        if base == "str":
            return item["value"]
        raise TypeError("str for %s" % name)
    value = float(item["text"]) if kind == "float" else item["value"]
    if base == "bool":
        if isinstance(value, bool):
            return value
        raise TypeError("bool expected for %s" % name)
    if base in INT_TYPES:
        if isinstance(value, int) and not isinstance(value, bool):
            if name in ("dtype", "out_dtype", "input_dtype") and value in SCALAR_TYPES:
                return ("scalar_type", value)
            return value
        raise TypeError("int expected for %s" % name)
    if base == "ScalarType":
        if isinstance(value, int) and not isinstance(value, bool) and value in SCALAR_TYPES:
            return ("scalar_type", value)
        raise TypeError("dtype number expected for %s" % name)
    if base == "Layout":
        if isinstance(value, int) and value in LAYOUTS:
            return ("layout", value)
        raise TypeError("layout number expected for %s" % name)
    if base == "MemoryFormat":
        if isinstance(value, int) and value in MEMORY_FORMATS:
            return ("memory_format", value)
        raise TypeError("memory format number expected for %s" % name)
    if base == "float":
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        raise TypeError("float expected for %s" % name)
    if base in NUMBER_TYPES:
        if isinstance(value, (int, float)):
            return value
        raise TypeError("number expected for %s" % name)
    raise TypeError("unsupported parameter type %s for %s" % (param.type, name))


def bind(schema, items, device):
    """(positional, keyword) plans when the recorded inputs fit the schema."""
    params = list(schema.arguments)
    if len(items) > len(params):
        raise TypeError("%d inputs for %d parameters" % (len(items), len(params)))
    for param in params[len(items):]:
        if not param.has_default_value():
            raise TypeError("no value for %s" % param.name)
    positional, keyword = [], {}
    for param, item in zip(params, items):
        planned = convert(param, item, device)
        if getattr(param, "kwarg_only", False):
            keyword[param.name] = planned
        else:
            positional.append(planned)
    return positional, keyword


def resolve(torch, ir, device):
    """The overload to call and the planned arguments."""
    op = ir["op"]
    namespace = getattr(torch.ops, op["namespace"])
    try:
        packet = getattr(namespace, op["op"])
    except (AttributeError, RuntimeError):
        hint = ""
        if op["namespace"] != "aten":
            hint = " (a custom op: load its library with --import MODULE)"
        raise CannotRun("this PyTorch (%s) has no %s%s" % (torch.__version__, op["name"], hint))
    names = []
    if op.get("overload"):
        names.append(op["overload"])
    names += [n for n in packet.overloads() if n not in names]
    items = recorded_inputs(ir)
    tried = []
    for name in names:
        try:
            overload = getattr(packet, name)
        except (AttributeError, RuntimeError):
            continue
        schema = overload._schema
        try:
            positional, keyword = bind(schema, items, device)
        except TypeError as why:
            tried.append("  %s: %s" % (schema, why))
            continue
        return overload, schema, positional, keyword
    raise CannotRun("no overload of %s in PyTorch %s accepts the recorded arguments:\n%s"
                    % (op["name"], torch.__version__, "\n".join(tried)))


# ----------------------------------------------------------------- inputs --

def storage_elements(shape, strides):
    if any(size == 0 for size in shape):
        return 0
    return 1 + sum((size - 1) * abs(stride) for size, stride in zip(shape, strides))


def random_storage(torch, count, dtype, device, init):
    kind = init.get("kind")
    if kind == "bool" or dtype == torch.bool:
        return torch.randint(0, 2, (count,), device=device).to(torch.bool)
    if dtype.is_floating_point or dtype.is_complex:
        name = str(dtype).replace("torch.", "")
        if name == "float4_e2m1fn_x2":
            return torch.randint(0, 256, (count,), dtype=torch.uint8, device=device).view(dtype)
        if name.startswith(FP8_PREFIX) or getattr(dtype, "itemsize", 2) == 1:
            values = torch.randn(count, dtype=torch.float32, device=device)
            if "e8m0" in name:
                values = values.abs().add_(0.5)
            return values.mul_(0.5).to(dtype)
        base = torch.empty_strided((count,), (1,), dtype=dtype, device=device)
        return base.normal_()
    high = int(init.get("high") or 16)
    info = torch.iinfo(dtype)
    high = max(1, min(high, info.max))
    return torch.randint(0, high, (count,), dtype=dtype, device=device)


def build_tensor(torch, spec, device, overrides):
    dtype = torch_dtype(torch, override_name(spec, overrides))
    target = spec.get("device") or device
    shape, strides = spec["shape"], spec["strides"]
    offset = spec.get("storage_offset") or 0
    count = storage_elements(shape, strides) + offset
    storage = random_storage(torch, max(count, 1), dtype, target, spec.get("init") or {})
    return storage.as_strided(shape, strides, offset)


def materialise(torch, planned, device, overrides):
    if isinstance(planned, list):
        return [materialise(torch, p, device, overrides) for p in planned]
    if not isinstance(planned, tuple):
        return planned
    tag = planned[0]
    if tag == "tensor":
        return build_tensor(torch, planned[1], device, overrides)
    if tag == "tensor_list":
        return [build_tensor(torch, spec, device, overrides) for spec in planned[1]]
    if tag == "device":
        return torch.device(device)
    if tag == "scalar_type":
        return torch_dtype(torch, SCALAR_TYPES[planned[1]])
    if tag == "layout":
        return getattr(torch, LAYOUTS[planned[1]])
    if tag == "memory_format":
        return getattr(torch, MEMORY_FORMATS[planned[1]])
    return planned


# ----------------------------------------------------------------- timing --

def synchronizer(torch, device):
    kind = torch.device(device).type
    if kind == "cuda":
        return torch.cuda.synchronize
    module = getattr(torch, kind, None)
    if module is not None and hasattr(module, "synchronize"):
        return module.synchronize
    return lambda: None


def l2_flusher(torch, device):
    """Overwrites 256 MiB (beyond any GPU's L2) so the next call starts cold."""
    buffer = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.float32, device=device)
    return lambda: buffer.zero_()


# Calls are queued in chunks of about this many, each behind its own hold:
# fewer queued launches than a stream's queue holds, and a short hold each.
CHUNK_CALLS = 100
# A sample's back-to-back calls run at least this long on the GPU, so the
# ~2 µs an event costs between kernels (H200) stays under ~2% of a sample.
SAMPLE_GPU_US = 100.0
# Calls run back to back once to size the samples.
SIZING_CALLS = 10
# The hold's length is read once, on the GPU's clock, from this many cycles.
HOLD_CALIBRATION_CYCLES = 10_000_000
# Tries per chunk, the hold four times longer each time, before falling back.
HOLD_TRIES = 3

TIMING_QUEUED = "GPU time of back-to-back calls queued behind a wait; launch left out"
TIMING_QUEUED_COLD = "GPU time per call queued behind a wait; launch left out, an event's ~2 µs in"
TIMING_LAUNCH = "per call between two events: the host's launch counts"
TIMING_HOST = "host clock, synchronised after each call"


class Timing:
    """Per-call times in µs (one per sample), how they were taken, and how
    many back-to-back calls each sample averages."""

    def __init__(self, times, method, calls_per_sample=1):
        self.times = times
        self.method = method
        self.calls_per_sample = calls_per_sample


def time_calls(torch, call, device, samples, warmup, cold_l2):
    """Times `samples` samples after `warmup` calls."""
    sync = synchronizer(torch, device)
    flush = l2_flusher(torch, device) if cold_l2 else None
    for _ in range(warmup):
        call()
    sync()
    if torch.device(device).type == "cuda":
        queued = queued_times(torch, call, flush, samples)
        if queued is not None:
            return queued
        return Timing(event_times(torch, call, flush, samples), TIMING_LAUNCH)
    times = []
    for _ in range(samples):
        if flush:
            flush()
            sync()
        begin = time.perf_counter()
        call()
        sync()
        times.append((time.perf_counter() - begin) * 1e6)
    return Timing(times, TIMING_HOST)


def event_times(torch, call, flush, iters):
    """Each call between two events, launched as it comes: a call shorter
    than its launch from Python reads as the launch."""
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    for start, end in zip(starts, ends):
        if flush:
            flush()
        start.record()
        call()
        end.record()
    torch.cuda.synchronize()
    return [start.elapsed_time(end) * 1000.0 for start, end in zip(starts, ends)]


def gpu_hold(torch):
    """A function that keeps the GPU busy for a given number of µs, or None
    where this PyTorch has no spin kernel (`torch.cuda._sleep` counts GPU
    clock cycles; its rate is read here on the GPU's own clock)."""
    spin = getattr(torch.cuda, "_sleep", None)
    if spin is None:
        return None
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    spin(1000)
    start.record()
    spin(HOLD_CALIBRATION_CYCLES)
    end.record()
    end.synchronize()
    micros = start.elapsed_time(end) * 1000.0
    if micros <= 0:
        return None
    cycles_per_us = HOLD_CALIBRATION_CYCLES / micros
    return lambda hold_us: spin(int(hold_us * cycles_per_us) + 1)


def launch_pace_us(torch, call, flush, calls):
    """The GPU time per call when calls go as fast as the host launches
    them: the launch's time where it is longer than the call's."""
    first = torch.cuda.Event(enable_timing=True)
    last = torch.cuda.Event(enable_timing=True)
    first.record()
    for _ in range(calls):
        if flush:
            flush()
        call()
    last.record()
    last.synchronize()
    return first.elapsed_time(last) * 1000.0 / calls


def held_samples(torch, call, flush, hold, hold_us, samples, calls_per_sample):
    """Queues `samples` samples of `calls_per_sample` back-to-back calls
    behind a hold of `hold_us`; the time per call of each, or None when the
    GPU ran out of held work before the host had queued them all (the op
    waits for the GPU, or the hold was too short).

    The event that ends a sample starts the next, so a sample holds one
    event's cost, not two. A flush of L2 goes before each sample's start."""
    released = torch.cuda.Event()
    hold(hold_us)
    released.record()
    spans = []
    previous = None
    for _ in range(samples):
        if flush:
            flush()
            previous = None
        if previous is None:
            previous = torch.cuda.Event(enable_timing=True)
            previous.record()
        for _ in range(calls_per_sample):
            call()
        end = torch.cuda.Event(enable_timing=True)
        end.record()
        spans.append((previous, end))
        previous = end
    drained = released.query()
    torch.cuda.synchronize()
    if drained:
        return None
    return [start.elapsed_time(end) * 1000.0 / calls_per_sample for start, end in spans]


def held_with_retries(torch, call, flush, hold, pace, samples, calls_per_sample):
    """`held_samples` with a hold sized at twice the host's pace, four times
    longer on each retry; None when no try kept the GPU held."""
    hold_us = 2.0 * samples * calls_per_sample * pace + 100.0
    for _ in range(HOLD_TRIES):
        times = held_samples(torch, call, flush, hold, hold_us, samples, calls_per_sample)
        if times is not None:
            return times
        hold_us *= 4.0
    return None


def queued_times(torch, call, flush, samples):
    """Times calls with the host's launch left out: each chunk of calls is
    queued while the GPU is held busy, so the GPU then runs them back to
    back and the events see only the GPU's work. A sample is as many
    back-to-back calls as run SAMPLE_GPU_US (one with --cold-l2, whose flush
    must stay outside the timed span). None where this cannot be done here."""
    hold = gpu_hold(torch)
    if hold is None:
        return None
    pace = launch_pace_us(torch, call, flush, SIZING_CALLS)
    calls_per_sample = 1
    if not flush:
        sizing = held_with_retries(torch, call, None, hold, pace, 1, SIZING_CALLS)
        if sizing is None:
            return None
        calls_per_sample = max(1, min(CHUNK_CALLS, math.ceil(SAMPLE_GPU_US / max(sizing[0], 1e-3))))
    per_chunk = max(1, CHUNK_CALLS // calls_per_sample)
    times = []
    for begin in range(0, samples, per_chunk):
        chunk = held_with_retries(torch, call, flush, hold, pace, min(per_chunk, samples - begin), calls_per_sample)
        if chunk is None:
            return None
        times.extend(chunk)
    method = TIMING_QUEUED_COLD if flush else TIMING_QUEUED
    return Timing(times, method, calls_per_sample)


def profile_calls(torch, call, device, path, calls):
    activities = [torch.profiler.ProfilerActivity.CPU]
    if torch.device(device).type == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    sync = synchronizer(torch, device)
    with torch.profiler.profile(activities=activities, record_shapes=True) as prof:
        for step in range(calls):
            with torch.profiler.record_function("ProfilerStep#%d" % step):
                call()
        sync()
    prof.export_chrome_trace(path)


# ------------------------------------------------------------------- main --

def environment_line(env):
    if not env:
        return "-"
    parts = [env.get("gpus") or "unknown GPU"]
    for key in ("runtime", "pytorch"):
        if env.get(key):
            parts.append(("PyTorch " if key == "pytorch" else "") + env[key])
    return ", ".join(parts)


# PyTorch's defaults, for an IR that carries no settings.
DEFAULT_MATH = {
    "matmul_allow_tf32": False, "cudnn_allow_tf32": True,
    "cudnn_benchmark": False, "cudnn_deterministic": False,
    "source": "PyTorch's defaults",
}


def math_settings(ir, tf32):
    """The IR's math settings, with `--tf32 on|off` over both TF32 ones."""
    math = dict(DEFAULT_MATH)
    math.update(ir.get("math") or {})
    if tf32 is not None:
        math["matmul_allow_tf32"] = math["cudnn_allow_tf32"] = tf32 == "on"
        math["source"] = "TF32 from --tf32 %s; %s" % (tf32, math["source"])
    return math


def math_line(math):
    on = lambda value: "on" if value else "off"
    return "math: TF32 matmul %s, cuDNN TF32 %s, cuDNN benchmark %s, deterministic %s (%s)" % (
        on(math["matmul_allow_tf32"]), on(math["cudnn_allow_tf32"]),
        on(math["cudnn_benchmark"]), on(math["cudnn_deterministic"]), math["source"])


def apply_math(torch, math):
    """Sets the math settings on this PyTorch; returns them as it reads them back."""
    matmul, cudnn = torch.backends.cuda.matmul, torch.backends.cudnn
    matmul.allow_tf32 = math["matmul_allow_tf32"]
    cudnn.allow_tf32 = math["cudnn_allow_tf32"]
    cudnn.benchmark = math["cudnn_benchmark"]
    cudnn.deterministic = math["cudnn_deterministic"]
    return dict(math, matmul_allow_tf32=bool(matmul.allow_tf32), cudnn_allow_tf32=bool(cudnn.allow_tf32),
                cudnn_benchmark=bool(cudnn.benchmark), cudnn_deterministic=bool(cudnn.deterministic))


def print_call(ir, overrides):
    op = ir["op"]
    print("op: %s%s" % (op["name"], "." + op["overload"] if op.get("overload") else ""))
    if op.get("schema"):
        print("schema: " + op["schema"])
    for arg in recorded_inputs(ir):
        label = arg.get("name") or "input %d" % arg["position"]
        keyword = " (keyword)" if arg in ir["kwargs"] else ""
        print("  %-18s %s%s" % (label + keyword, describe_value(arg, overrides),
                                "" if arg["source"] == "recorded" else "  [" + arg["source"].replace("_", " ") + "]"))
    for note in ir.get("notes", []):
        print("  note: " + note)
    print("inputs: %.1f MiB" % (ir.get("input_bytes", 0) / 1048576.0))


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description="Replay and time one op call from a profiler trace (made by tracegate).")
    parser.add_argument("--ir", default=os.path.join(here, "replay_ir.json"), help="the replay IR (default: replay_ir.json beside this script)")
    parser.add_argument("--device", help="device to run on (default: cuda when available, else cpu; ROCm builds use cuda too)")
    parser.add_argument("--iters", type=int, default=100,
                        help="timed samples (default 100); on a GPU a sample of a short call is several back-to-back calls")
    parser.add_argument("--warmup", type=int, default=10, help="untimed calls first (default 10)")
    parser.add_argument("--dtype-override", action="append", metavar="DTYPE|FROM=TO",
                        help="replace input dtypes: one dtype for every floating-point input, or FROM=TO pairs (torch names, e.g. float8_e4m3fn=float8_e4m3fnuz); repeatable")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    parser.add_argument("--cold-l2", action="store_true", help="flush the L2 cache before every timed call")
    parser.add_argument("--tf32", choices=("on", "off"),
                        help="allow TF32 for fp32 matmuls and convolutions or not (default: as replay_ir.json's math settings say)")
    parser.add_argument("--profile", nargs="?", const=os.path.join(os.getcwd(), "replay_trace.json"), metavar="PATH",
                        help="also write a torch.profiler trace of a few calls (default replay_trace.json) for `tracegate report`")
    parser.add_argument("--json", metavar="PATH", help="write the figures as JSON")
    parser.add_argument("--import", dest="imports", action="append", default=[], metavar="MODULE",
                        help="import a module first (the library that registers a custom op); repeatable")
    parser.add_argument("--dry-run", action="store_true", help="print the call and exit; needs no PyTorch")
    args = parser.parse_args(argv)
    if args.iters < 1 or args.warmup < 0:
        parser.error("--iters must be at least 1 and --warmup at least 0")

    ir = load_ir(args.ir)
    overrides = parse_overrides(args.dtype_override)
    math = math_settings(ir, args.tf32)
    if args.dry_run:
        print_call(ir, overrides)
        print(math_line(math))
        return 0

    try:
        import torch
    except ImportError:
        fail(EXIT_NO_TORCH, "PyTorch is not installed (pip install torch); --dry-run shows the call without it")
    import importlib
    for module in args.imports:
        try:
            importlib.import_module(module)
        except ImportError as error:
            fail(EXIT_USAGE, "--import %s: %s" % (module, error))

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    try:
        torch.device(device)
    except RuntimeError as error:
        fail(EXIT_USAGE, "--device %s: %s" % (device, error))
    if torch.device(device).type == "cuda":
        if not torch.cuda.is_available():
            fail(EXIT_CANNOT_RUN, "--device %s: no CUDA or ROCm GPU is visible to this PyTorch (%s)" % (device, torch.__version__))
        if getattr(torch.device(device), "index", None) is not None:
            # Events and the default stream belong to the current device.
            torch.cuda.set_device(torch.device(device))
    torch.manual_seed(args.seed)
    math = apply_math(torch, math)

    op_name = ir["op"]["name"]
    try:
        overload, schema, positional, keyword = resolve(torch, ir, device)
        call_args = materialise(torch, positional, device, overrides)
        call_kwargs = {k: materialise(torch, v, device, overrides) for k, v in keyword.items()}

        def call():
            return overload(*call_args, **call_kwargs)

        call()
        synchronizer(torch, device)()
    except CannotRun as why:
        fail(EXIT_CANNOT_RUN, str(why))
    except (RuntimeError, NotImplementedError, TypeError, ValueError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        hint = ""
        if "backend" in first or "not implemented" in first.lower() or "NotImplemented" in type(error).__name__:
            hint = "\nthe op has no kernel for this device here: run it where the trace ran (%s)" % environment_line(ir.get("environment"))
        elif "out of memory" in first.lower():
            hint = "\nthe inputs need %.1f MiB" % (ir.get("input_bytes", 0) / 1048576.0)
        elif "dtype" in first.lower() or "type" in first.lower():
            hint = "\ntry --dtype-override (e.g. --dtype-override float32)"
        fail(EXIT_CANNOT_RUN, "cannot run %s on %s: %s%s" % (op_name, device, first, hint))

    timing = time_calls(torch, call, device, args.iters, args.warmup, args.cold_l2)
    times = timing.times
    mean = statistics.fmean(times)
    median = statistics.median(times)

    name = torch.cuda.get_device_name(torch.device(device)) if torch.device(device).type == "cuda" else device
    runtime = ("HIP " + torch.version.hip) if getattr(torch.version, "hip", None) else (
        ("CUDA " + torch.version.cuda) if torch.version.cuda else "CPU")
    print("replay of %s on %s (%s, PyTorch %s)" % (op_name, name, runtime, torch.__version__))
    print("overload: %s" % schema)
    each = " of %d back-to-back calls each, per call" % timing.calls_per_sample if timing.calls_per_sample > 1 else ""
    print("%d samples%s, after %d warm-up calls%s" % (args.iters, each, args.warmup, ", L2 flushed before each" if args.cold_l2 else ""))
    print("timing: %s" % timing.method)
    print(math_line(math))
    print()
    print("%-34s %12s %12s %10s" % ("", "median µs", "mean µs", "samples"))
    print("%-34s %12s %12s %10d" % ("this replay", fmt_us(median), fmt_us(mean), len(times)))
    traced = ir.get("kernel_time_us")
    if traced:
        print("%-34s %12s %12s %10s" % ("trace (%s)" % environment_line(ir.get("environment")),
                                        fmt_us(traced.get("median")), fmt_us(traced.get("mean")), traced.get("count", "")))
    comparison = ir.get("comparison") or {}
    for side in ("baseline", "candidate"):
        value = comparison.get(side + "_us")
        if value is not None:
            print("%-34s %12s %12s %10s" % ("%s (%s)" % (side, environment_line(comparison.get(side + "_environment"))),
                                            fmt_us(value), "", ""))
    if traced and traced.get("median"):
        print()
        print("replay / trace median: %.2f" % (median / traced["median"]))

    if args.profile:
        profile_calls(torch, call, device, args.profile, min(args.iters, 20))
        print("profiler trace: %s (read it with `tracegate report %s`)" % (args.profile, args.profile))
    if args.json:
        figures = {
            "op": op_name,
            "overload": str(schema),
            "device": name,
            "runtime": runtime,
            "pytorch": torch.__version__,
            "iters": args.iters,
            "warmup": args.warmup,
            "cold_l2": args.cold_l2,
            "timing": timing.method,
            "calls_per_sample": timing.calls_per_sample,
            "math": math,
            "median_us": median,
            "mean_us": mean,
            "min_us": min(times),
            "max_us": max(times),
            "trace_median_us": traced.get("median") if traced else None,
        }
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(figures, handle, indent=2)
            handle.write("\n")
    return 0


if __name__ == "__main__":
    try:
        status = main()
    except BrokenPipeError:
        # `replay.py --dry-run | head`: the reader left; not an error.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        status = 0
    sys.exit(status)
