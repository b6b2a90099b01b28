//! Makes Kineto (PyTorch profiler) traces for tracegate's examples and benchmarks.
//!
//! ```text
//! cargo run --release --example generate -- transformer --out FILE.json[.gz]
//!     [--seed N] [--steps N] [--layers N] [--mode train|infer]
//!     [--regress OP=FACTOR]... [--swap-kernel OP=NEWNAME]... [--with-stack]
//! cargo run --release --example generate -- repeat --input TRACE --copies N --out FILE.json[.gz]
//! ```
//!
//! `transformer` simulates a small GPT-style model (embedding, pre-norm blocks
//! with flash attention and a GELU MLP, an attention-pooling head) on one H100
//! stream: host call stacks with shapes, `cudaLaunchKernel` calls, `ac2g`
//! flows and kernels whose durations follow from the FLOPs and bytes of each
//! op, with a little seeded jitter. In `train` mode a backward pass (on the
//! autograd thread, paired to the forward by `Sequence number` and `fwdbwd`
//! flows) and a fused AdamW step follow. The same seed gives the same bytes.
//! `--regress aten::mm=1.3` makes the kernels launched by `aten::mm` 1.3×
//! slower; `--swap-kernel OP=NAME` renames the kernels `OP` launches. Neither
//! changes the random draws, so a baseline and a candidate differ only there
//! (and in the timestamps that follow).
//!
//! `repeat` writes a trace N times over into one trace, shifting `ts` by the
//! trace's span each copy and offsetting ids (correlation, flow id, External
//! id, Python id, Sequence number, `ProfilerStep#N`) so that the copies do not
//! collide. The input is read once into memory; the output is streamed.
//!
//! Output is laid out as Kineto writes it (one event per few lines); a name
//! ending in `.gz` is gzip-compressed (deterministically: no file name, no
//! time stamp in the header).

use std::collections::BTreeMap;
use std::env;
use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use flate2::Compression;
use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;
use serde::Serialize;
use serde_json::{Map, Value, json};

const USAGE: &str = "\
usage:
  generate transformer --out FILE.json[.gz] [--seed N] [--steps N] [--layers N]
                       [--mode train|infer] [--regress OP=FACTOR]... [--swap-kernel OP=NEWNAME]...
                       [--with-stack]
  generate repeat --input TRACE --copies N --out FILE.json[.gz]";

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("generate: {message}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &[String]) -> Result<(), String> {
    match args.first().map(String::as_str) {
        Some("transformer") => transformer_command(&args[1..]),
        Some("repeat") => repeat_command(&args[1..]),
        Some("-h" | "--help") => {
            println!("{USAGE}");
            Ok(())
        }
        _ => Err(format!("expected a subcommand\n{USAGE}")),
    }
}

/// `--flag value` pairs; flags given twice keep every value.
fn parse_flags(args: &[String], known: &[&str]) -> Result<BTreeMap<String, Vec<String>>, String> {
    let mut flags: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut iter = args.iter();
    while let Some(flag) = iter.next() {
        if !known.contains(&flag.as_str()) {
            return Err(format!("unknown argument `{flag}`\n{USAGE}"));
        }
        let value = iter
            .next()
            .ok_or_else(|| format!("`{flag}` needs a value"))?;
        flags.entry(flag.clone()).or_default().push(value.clone());
    }
    Ok(flags)
}

fn one<'a>(flags: &'a BTreeMap<String, Vec<String>>, flag: &str) -> Option<&'a str> {
    flags.get(flag).and_then(|v| v.last()).map(String::as_str)
}

fn number<T: std::str::FromStr>(
    flags: &BTreeMap<String, Vec<String>>,
    flag: &str,
    default: T,
) -> Result<T, String> {
    match one(flags, flag) {
        None => Ok(default),
        Some(text) => text
            .parse()
            .map_err(|_| format!("`{flag} {text}`: not a valid number")),
    }
}

fn split_pair(text: &str, flag: &str) -> Result<(String, String), String> {
    // The op name may itself contain `=`-free `::`; split at the last `=` of the
    // op part, i.e. the first `=`.
    let (op, value) = text
        .split_once('=')
        .ok_or_else(|| format!("`{flag} {text}`: expected OP=VALUE"))?;
    if op.is_empty() || value.is_empty() {
        return Err(format!("`{flag} {text}`: expected OP=VALUE"));
    }
    Ok((op.to_string(), value.to_string()))
}

// ---------------------------------------------------------------------------
// Output: Kineto's layout, optionally gzip-compressed.

enum Output {
    Plain(BufWriter<File>),
    Gzip(Box<GzEncoder<BufWriter<File>>>),
}

impl Output {
    fn create(path: &Path) -> Result<Output, String> {
        let file = File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let buffered = BufWriter::with_capacity(1 << 20, file);
        let gzip = path.extension().is_some_and(|ext| ext == "gz");
        Ok(if gzip {
            Output::Gzip(Box::new(GzEncoder::new(buffered, Compression::best())))
        } else {
            Output::Plain(buffered)
        })
    }

    fn finish(self) -> io::Result<()> {
        match self {
            Output::Plain(mut w) => w.flush(),
            Output::Gzip(w) => w.finish()?.flush(),
        }
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Output::Plain(w) => w.write(buf),
            Output::Gzip(w) => w.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Output::Plain(w) => w.write_all(buf),
            Output::Gzip(w) => w.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Output::Plain(w) => w.flush(),
            Output::Gzip(w) => w.flush(),
        }
    }
}

/// serde_json's compact output with Kineto's `", "` and `": "` separators.
struct Spaced;

impl serde_json::ser::Formatter for Spaced {
    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }
}

fn write_value<W: Write>(w: &mut W, value: &Value) -> io::Result<()> {
    let mut serializer = serde_json::Serializer::with_formatter(w, Spaced);
    value.serialize(&mut serializer).map_err(io::Error::other)
}

fn write_key<W: Write>(w: &mut W, key: &str) -> io::Result<()> {
    write_value(w, &Value::String(key.to_string()))?;
    w.write_all(b": ")
}

/// Writes the keys of `event` that are in `keys` (in that order) on one line.
fn write_line<W: Write>(
    w: &mut W,
    event: &Map<String, Value>,
    keys: &[&str],
    first_line: &mut bool,
) -> io::Result<()> {
    let mut first = true;
    for key in keys {
        let Some(value) = event.get(*key) else {
            continue;
        };
        if first {
            w.write_all(if *first_line { b"\n    " } else { b",\n    " })?;
            *first_line = false;
            first = false;
        } else {
            w.write_all(b", ")?;
        }
        write_key(w, key)?;
        write_value(w, value)?;
    }
    Ok(())
}

const LINE_ONE: [&str; 5] = ["ph", "cat", "name", "pid", "tid"];
const LINE_TWO: [&str; 5] = ["ts", "dur", "id", "bp", "s"];

/// One event as Kineto lays it out:
/// ```text
///   {
///     "ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1,
///     "ts": 10.5, "dur": 5,
///     "args": {
///       "External id": 3, "Input Dims": [[2, 3], [3, 4]]
///     }
///   }
/// ```
fn write_event<W: Write>(w: &mut W, event: &Value) -> io::Result<()> {
    let Some(map) = event.as_object() else {
        return write_value(w, event);
    };
    w.write_all(b"  {")?;
    let mut first_line = true;
    write_line(w, map, &LINE_ONE, &mut first_line)?;
    write_line(w, map, &LINE_TWO, &mut first_line)?;
    let rest: Vec<&str> = map
        .keys()
        .map(String::as_str)
        .filter(|k| *k != "args" && !LINE_ONE.contains(k) && !LINE_TWO.contains(k))
        .collect();
    write_line(w, map, &rest, &mut first_line)?;
    if let Some(args) = map.get("args") {
        w.write_all(if first_line { b"\n    " } else { b",\n    " })?;
        write_key(w, "args")?;
        match args.as_object() {
            Some(object) if !object.is_empty() => {
                w.write_all(b"{\n      ")?;
                for (i, (key, value)) in object.iter().enumerate() {
                    if i > 0 {
                        w.write_all(b", ")?;
                    }
                    write_key(w, key)?;
                    write_value(w, value)?;
                }
                w.write_all(b"\n    }")?;
            }
            _ => write_value(w, args)?,
        }
    }
    w.write_all(b"\n  }")
}

/// Writes a whole trace: metadata keys in order, then `traceEvents` from
/// `events` (called once per event until it returns `None`), then `tail` keys.
fn write_trace<W: Write>(
    w: &mut W,
    head: &[(String, Value)],
    events: &mut dyn FnMut() -> Option<Value>,
    tail: &[(String, Value)],
) -> io::Result<u64> {
    w.write_all(b"{")?;
    for (key, value) in head {
        w.write_all(b"\n  ")?;
        write_key(w, key)?;
        write_value(w, value)?;
        w.write_all(b",")?;
    }
    w.write_all(b"\n  \"traceEvents\": [\n")?;
    let mut count = 0u64;
    while let Some(event) = events() {
        if count > 0 {
            w.write_all(b",\n")?;
        }
        write_event(w, &event)?;
        count += 1;
    }
    w.write_all(b"\n  ]")?;
    for (key, value) in tail {
        w.write_all(b",\n  ")?;
        write_key(w, key)?;
        write_value(w, value)?;
    }
    w.write_all(b"\n}\n")?;
    Ok(count)
}

// ---------------------------------------------------------------------------
// transformer

/// xorshift64*: small, fast, and the same everywhere.
struct XorShift(u64);

impl XorShift {
    fn new(seed: u64) -> XorShift {
        // SplitMix64 of the seed, so that nearby seeds diverge at once.
        let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        XorShift((z ^ (z >> 31)) | 1)
    }

    fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// `base` scaled by a factor uniform in [1 - spread, 1 + spread].
    fn jitter(&mut self, base: f64, spread: f64) -> f64 {
        base * (1.0 + spread * (2.0 * self.unit() - 1.0))
    }
}

/// Rounds a time to whole nanoseconds, as Kineto writes them.
fn ns(t: f64) -> f64 {
    (t * 1000.0).round() / 1000.0
}

const HOST_PID: i64 = 4242;
const MAIN_TID: i64 = 4242;
const AUTOGRAD_TID: i64 = 4251;
const GPU_PID: i64 = 0;
const STREAM: i64 = 7;
const BF16: &str = "c10::BFloat16";
const BASE_TS: f64 = 1_734_567_000_000.0;

/// Sizes of the simulated model.
#[derive(Clone, Copy)]
struct Dims {
    batch: u64,
    seq: u64,
    hidden: u64,
    heads: u64,
    ffn: u64,
    vocab: u64,
}

impl Dims {
    fn tokens(&self) -> u64 {
        self.batch * self.seq
    }
    fn head_dim(&self) -> u64 {
        self.hidden / self.heads
    }
}

/// One argument of a CPU op, for `Input Dims`/`Input type`/`Input Strides`/`Concrete Inputs`.
#[derive(Clone)]
enum In {
    /// A contiguous tensor.
    T(Vec<u64>, &'static str),
    /// A tensor with explicit strides.
    Strided(Vec<u64>, Vec<u64>, &'static str),
    /// A scalar or other non-tensor argument: (type, concrete value).
    S(&'static str, String),
    /// An absent optional argument.
    None,
}

/// A non-tensor argument with its type and concrete value.
fn sc(ty: &'static str, value: impl Into<String>) -> In {
    In::S(ty, value.into())
}

fn t(dims: &[u64]) -> In {
    In::T(dims.to_vec(), BF16)
}

/// `[a, b, c]`, as `Concrete Inputs` writes an int list.
fn list(values: &[u64]) -> String {
    let items: Vec<String> = values.iter().map(u64::to_string).collect();
    format!("[{}]", items.join(", "))
}

fn contiguous(dims: &[u64]) -> Vec<u64> {
    let mut strides = vec![1u64; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * dims[i + 1];
    }
    strides
}

fn op_args(inputs: &[In]) -> Map<String, Value> {
    let mut dims = Vec::new();
    let mut types = Vec::new();
    let mut strides = Vec::new();
    let mut concrete = Vec::new();
    for input in inputs {
        let (d, ty, st, c) = match input {
            In::T(d, ty) => (d.clone(), *ty, contiguous(d), ""),
            In::Strided(d, s, ty) => (d.clone(), *ty, s.clone(), ""),
            In::S(ty, c) => (vec![], *ty, vec![], c.as_str()),
            In::None => (vec![], "", vec![], ""),
        };
        dims.push(json!(d));
        types.push(json!(ty));
        strides.push(json!(st));
        concrete.push(json!(c));
    }
    let mut args = Map::new();
    args.insert("Input Dims".into(), Value::Array(dims));
    args.insert("Input type".into(), Value::Array(types));
    args.insert("Input Strides".into(), Value::Array(strides));
    args.insert("Concrete Inputs".into(), Value::Array(concrete));
    args
}

/// A kernel about to be launched.
struct Kernel {
    name: String,
    /// Nominal duration, µs (before jitter and regressions).
    dur: f64,
    grid: [u64; 3],
    block: [u64; 3],
    registers: u64,
    shared: u64,
}

/// An autograd node recorded by the forward pass, replayed backwards.
#[derive(Clone, Copy)]
enum Node {
    /// `aten::t` of a rows×cols weight: TBackward0, no kernels.
    T {
        rows: u64,
        cols: u64,
    },
    /// `aten::addmm` of (m×k)·(k×n) + bias.
    Addmm {
        m: u64,
        k: u64,
        n: u64,
    },
    /// `aten::mm` of (m×k)·(k×n).
    Mm {
        m: u64,
        k: u64,
        n: u64,
    },
    /// `aten::bmm` of b×(m×k)·(k×n).
    Bmm {
        b: u64,
        m: u64,
        k: u64,
        n: u64,
    },
    LayerNorm {
        rows: u64,
        cols: u64,
    },
    Flash,
    Gelu {
        rows: u64,
        cols: u64,
    },
    Add,
    Softmax {
        rows: u64,
        cols: u64,
    },
    Embedding,
    Mean {
        numel: u64,
    },
}

impl Node {
    fn backward_name(self) -> &'static str {
        match self {
            Node::T { .. } => "TBackward0",
            Node::Addmm { .. } => "AddmmBackward0",
            Node::Mm { .. } => "MmBackward0",
            Node::Bmm { .. } => "BmmBackward0",
            Node::LayerNorm { .. } => "NativeLayerNormBackward0",
            Node::Flash => "ScaledDotProductFlashAttentionBackward0",
            Node::Gelu { .. } => "GeluBackward0",
            Node::Add => "AddBackward0",
            Node::Softmax { .. } => "SoftmaxBackward0",
            Node::Embedding => "EmbeddingBackward0",
            Node::Mean { .. } => "MeanBackward0",
        }
    }
}

struct TapeEntry {
    node: Node,
    sequence: u64,
    /// Start of the forward op that made the node (the `fwdbwd` flow's source).
    forward_ts: f64,
}

/// An open host scope.
struct Frame {
    event: usize,
    /// The op's name, when it is a cpu_op (launches inside belong to it).
    op: Option<String>,
    external_id: Option<u64>,
    python_id: Option<u64>,
}

struct Sim {
    rng: XorShift,
    dims: Dims,
    layers: u64,
    train: bool,
    regress: Vec<(String, f64)>,
    swap: Vec<(String, String)>,
    /// Python frames around every op, as `with_stack=True` records them.
    with_stack: bool,
    events: Vec<Value>,
    /// Host clock of the thread being simulated.
    host: f64,
    tid: i64,
    /// When stream 7 is free again.
    gpu_free: f64,
    frames: Vec<Frame>,
    tape: Vec<TapeEntry>,
    grad_mode: bool,
    next_correlation: u64,
    next_external: u64,
    next_sequence: u64,
    next_python: u64,
    next_flow: u64,
    module_counts: BTreeMap<&'static str, u64>,
}

impl Sim {
    fn new(seed: u64, layers: u64, train: bool) -> Sim {
        Sim {
            rng: XorShift::new(seed),
            dims: Dims {
                batch: 4,
                seq: 1024,
                hidden: 1024,
                heads: 16,
                ffn: 4096,
                vocab: 32000,
            },
            layers,
            train,
            regress: Vec::new(),
            swap: Vec::new(),
            with_stack: false,
            events: Vec::new(),
            host: BASE_TS,
            tid: MAIN_TID,
            gpu_free: BASE_TS,
            frames: Vec::new(),
            tape: Vec::new(),
            grad_mode: train,
            next_correlation: 100_000,
            next_external: 1,
            next_sequence: 0,
            next_python: 1,
            next_flow: 1,
            module_counts: BTreeMap::new(),
        }
    }

    /// Advances the host clock by about `us` microseconds.
    fn spend(&mut self, us: f64) {
        self.host += self.rng.jitter(us, 0.25);
    }

    fn push(&mut self, event: Value) -> usize {
        self.events.push(event);
        self.events.len() - 1
    }

    fn host_event(&mut self, cat: &str, name: &str, args: Map<String, Value>) -> usize {
        let ts = ns(self.host);
        self.push(json!({
            "ph": "X", "cat": cat, "name": name, "pid": HOST_PID, "tid": self.tid,
            "ts": ts, "dur": 0, "args": args,
        }))
    }

    fn close(&mut self) {
        let frame = self.frames.pop().expect("an open scope");
        self.spend(1.0);
        let event = &mut self.events[frame.event];
        let ts = event["ts"].as_f64().unwrap_or(0.0);
        event["dur"] = json!(ns(ns(self.host) - ts));
        // Siblings never touch: the next event starts a little later.
        self.spend(0.6);
    }

    fn open_annotation(&mut self, name: &str) {
        let external = self.next_external;
        self.next_external += 1;
        let mut args = Map::new();
        args.insert("External id".into(), json!(external));
        args.insert("Record function id".into(), json!(0));
        let event = self.host_event("user_annotation", name, args);
        self.frames.push(Frame {
            event,
            op: None,
            external_id: Some(external),
            python_id: None,
        });
        self.spend(2.0);
    }

    fn open_python(&mut self, name: &str) {
        let id = self.next_python;
        self.next_python += 1;
        let parent = self.frames.iter().rev().find_map(|f| f.python_id);
        let mut args = Map::new();
        args.insert("Python parent id".into(), json!(parent));
        args.insert("Python id".into(), json!(id));
        args.insert("Python thread".into(), json!(0));
        let event = self.host_event("python_function", name, args);
        self.frames.push(Frame {
            event,
            op: None,
            external_id: None,
            python_id: Some(id),
        });
        self.spend(3.0);
    }

    /// Opens `nn.Module: Class_N`, numbering each class from 0 in call order.
    fn open_module(&mut self, class: &'static str) {
        let count = self.module_counts.entry(class).or_insert(0);
        let name = format!("nn.Module: {class}_{count}");
        *count += 1;
        self.open_python(&name);
    }

    /// With `--with-stack`, the Python frames a module call passes through
    /// before reaching the op (PyTorch 2.x's `nn.Module` call path and the
    /// functional wrapper); returns how many were opened.
    fn open_stack(&mut self, op: &str) -> usize {
        if !self.with_stack {
            return 0;
        }
        let short = op.trim_start_matches("aten::");
        let frames = [
            "torch/nn/modules/module.py(1762): _call_impl".to_string(),
            "torch/nn/modules/module.py(1751): _wrapped_call_impl".to_string(),
            format!(
                "torch/nn/functional.py({}): {short}",
                2000 + short.len() * 7
            ),
            format!("<built-in method {short} of type object at 0x7f3a9c2b4e40>"),
        ];
        for frame in &frames {
            self.open_python(frame);
        }
        frames.len()
    }

    /// Opens a cpu_op; returns its start time.
    fn open_op(&mut self, name: &str, inputs: &[In], sequence: Option<u64>) -> f64 {
        let external = self.next_external;
        self.next_external += 1;
        let mut args = Map::new();
        args.insert("External id".into(), json!(external));
        args.insert("Record function id".into(), json!(0));
        if let Some(sequence) = sequence {
            args.insert("Sequence number".into(), json!(sequence));
            args.insert(
                "Fwd thread id".into(),
                json!(if self.tid == MAIN_TID { 0 } else { 1 }),
            );
        }
        args.extend(op_args(inputs));
        let ts = ns(self.host);
        let event = self.host_event("cpu_op", name, args);
        self.frames.push(Frame {
            event,
            op: Some(name.to_string()),
            external_id: Some(external),
            python_id: None,
        });
        self.spend(4.0);
        ts
    }

    /// A forward op: records the current sequence number when grad mode is
    /// on, and bumps it when the op makes an autograd node.
    fn forward_op(
        &mut self,
        name: &str,
        inputs: &[In],
        node: Option<Node>,
        body: impl FnOnce(&mut Sim),
    ) {
        let sequence = self.grad_mode.then_some(self.next_sequence);
        let frames = self.open_stack(name);
        let ts = self.open_op(name, inputs, sequence);
        body(self);
        self.close();
        for _ in 0..frames {
            self.close();
        }
        if let (Some(node), Some(sequence)) = (node, sequence) {
            self.tape.push(TapeEntry {
                node,
                sequence,
                forward_ts: ts,
            });
            self.next_sequence += 1;
        }
    }

    /// An op that only runs `body` (backward and optimizer ops: no sequence numbers).
    fn plain_op(&mut self, name: &str, inputs: &[In], body: impl FnOnce(&mut Sim)) {
        self.open_op(name, inputs, None);
        body(self);
        self.close();
    }

    fn current_op(&self) -> (Option<&str>, u64) {
        let op = self.frames.iter().rev().find_map(|f| f.op.as_deref());
        let external = self
            .frames
            .iter()
            .rev()
            .find_map(|f| f.external_id)
            .unwrap_or(0);
        (op, external)
    }

    fn runtime_call(&mut self, name: &str, cbid: u64, nominal: f64) -> (f64, f64, u64, u64) {
        let (_, external) = self.current_op();
        let correlation = self.next_correlation;
        self.next_correlation += 1;
        let ts = ns(self.host);
        let dur = ns(self.rng.jitter(nominal, 0.2));
        self.push(json!({
            "ph": "X", "cat": "cuda_runtime", "name": name, "pid": HOST_PID, "tid": self.tid,
            "ts": ts, "dur": dur,
            "args": {"External id": external, "cbid": cbid, "correlation": correlation},
        }));
        (ts, dur, correlation, external)
    }

    /// When the next GPU activity launched at `launch_ts` starts.
    fn gpu_start(&mut self, launch_ts: f64) -> f64 {
        let ready = launch_ts + self.rng.jitter(6.0, 0.3);
        let queued = self.gpu_free + self.rng.jitter(1.2, 0.4);
        ns(ready.max(queued))
    }

    fn flows(&mut self, correlation: u64, launch_ts: f64, gpu_ts: f64) {
        self.push(json!({
            "ph": "s", "id": correlation, "pid": HOST_PID, "tid": self.tid,
            "ts": launch_ts, "cat": "ac2g", "name": "ac2g",
        }));
        self.push(json!({
            "ph": "f", "id": correlation, "pid": GPU_PID, "tid": STREAM,
            "ts": gpu_ts, "cat": "ac2g", "name": "ac2g", "bp": "e",
        }));
    }

    fn launch(&mut self, kernel: Kernel) {
        let (op, _) = self.current_op();
        let op = op.unwrap_or("").to_string();
        let (launch_ts, launch_dur, correlation, external) =
            self.runtime_call("cudaLaunchKernel", 211, 4.5);
        let mut dur = self.rng.jitter(kernel.dur, 0.03);
        for (name, factor) in &self.regress {
            if *name == op {
                dur *= factor;
            }
        }
        let name = self
            .swap
            .iter()
            .find(|(name, _)| *name == op)
            .map_or(kernel.name, |(_, new)| new.clone());
        let ts = self.gpu_start(launch_ts);
        let dur = ns(dur);
        self.gpu_free = ts + dur;
        let threads = (kernel.block[0] * kernel.block[1] * kernel.block[2]) as f64;
        let blocks = (kernel.grid[0] * kernel.grid[1] * kernel.grid[2]) as f64;
        let blocks_per_sm = blocks / 132.0;
        let warps_per_sm = blocks_per_sm * threads / 32.0;
        let occupancy = (warps_per_sm.min(64.0) / 64.0 * 100.0).round();
        self.push(json!({
            "ph": "X", "cat": "kernel", "name": name, "pid": GPU_PID, "tid": STREAM,
            "ts": ts, "dur": dur,
            "args": {
                "External id": external, "queued": 0, "device": 0, "context": 1,
                "stream": STREAM, "correlation": correlation,
                "registers per thread": kernel.registers, "shared memory": kernel.shared,
                "blocks per SM": (blocks_per_sm * 1e6).round() / 1e6,
                "warps per SM": (warps_per_sm * 1e6).round() / 1e6,
                "grid": kernel.grid, "block": kernel.block,
                "est. achieved occupancy %": occupancy,
            },
        }));
        self.flows(correlation, launch_ts, ts);
        self.host = launch_ts + launch_dur;
        self.spend(1.5);
    }

    fn memcpy(&mut self, kind: &str, bytes: u64, gb_per_s: f64) {
        let (op, _) = self.current_op();
        let op = op.unwrap_or("").to_string();
        let (launch_ts, launch_dur, correlation, external) =
            self.runtime_call("cudaMemcpyAsync", 41, 6.0);
        let mut dur = self.rng.jitter(bytes as f64 / (gb_per_s * 1e3) + 1.5, 0.05);
        for (name, factor) in &self.regress {
            if *name == op {
                dur *= factor;
            }
        }
        let ts = self.gpu_start(launch_ts);
        let dur = ns(dur);
        self.gpu_free = ts + dur;
        self.push(json!({
            "ph": "X", "cat": "gpu_memcpy", "name": format!("Memcpy {kind}"),
            "pid": GPU_PID, "tid": STREAM, "ts": ts, "dur": dur,
            "args": {
                "External id": external, "device": 0, "context": 1, "stream": STREAM,
                "correlation": correlation, "bytes": bytes,
                "memory bandwidth (GB/s)": (bytes as f64 / (dur * 1e3) * 1e6).round() / 1e6,
            },
        }));
        self.flows(correlation, launch_ts, ts);
        self.host = launch_ts + launch_dur;
        self.spend(1.0);
    }

    /// `cudaStreamSynchronize`: the host waits for the stream to drain.
    fn synchronize(&mut self) {
        let (_, external) = self.current_op();
        let correlation = self.next_correlation;
        self.next_correlation += 1;
        let ts = ns(self.host);
        let end = (self.host + 2.0).max(self.gpu_free + self.rng.jitter(3.0, 0.3));
        let dur = ns(end - ts);
        self.push(json!({
            "ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize",
            "pid": HOST_PID, "tid": self.tid, "ts": ts, "dur": dur,
            "args": {"External id": external, "cbid": 131, "correlation": correlation},
        }));
        self.host = ts + dur;
        self.spend(1.0);
    }

    // --- kernels -----------------------------------------------------------

    fn gemm_kernel(&self, m: u64, k: u64, n: u64, layout: &str, batch: u64) -> Kernel {
        let flops = 2.0 * (batch * m * n * k) as f64;
        let large = m * n >= 1 << 22;
        let (tile, warpgroups, efficiency) = if large {
            ("128x256x64", "2x1x1", 640e12)
        } else if m * n >= 1 << 18 {
            ("128x128x64", "1x1x1", 520e12)
        } else {
            ("64x64x64", "1x1x1", 180e12)
        };
        let (tm, tn) = if large {
            (128, 256)
        } else if m * n >= 1 << 18 {
            (128, 128)
        } else {
            (64, 64)
        };
        Kernel {
            name: format!(
                "sm90_xmma_gemm_bf16bf16_bf16f32_f32_{layout}_n_tilesize{tile}_warpgroupsize{warpgroups}_execute_segment_k_off_kernel__5x_cublas"
            ),
            dur: flops / efficiency * 1e6 + 2.5,
            grid: [n.div_ceil(tn), m.div_ceil(tm), batch],
            block: [if large { 384 } else { 256 }, 1, 1],
            registers: 168,
            shared: if large { 213_248 } else { 131_072 },
        }
    }

    fn elementwise_kernel(&self, name: &str, numel: u64, bytes: f64) -> Kernel {
        Kernel {
            name: name.to_string(),
            dur: bytes / 2.6e12 * 1e6 + 2.0,
            grid: [numel.div_ceil(512).max(1), 1, 1],
            block: [128, 1, 1],
            registers: 24,
            shared: 0,
        }
    }

    fn reduce_kernel(&self, name: &str, numel: u64, out: u64) -> Kernel {
        Kernel {
            name: name.to_string(),
            dur: numel as f64 * 2.0 / 2.2e12 * 1e6 + 3.0,
            grid: [out.div_ceil(32).max(1), 1, 1],
            block: [32, 16, 1],
            registers: 32,
            shared: 16,
        }
    }

    // --- forward ops -------------------------------------------------------

    /// `aten::t > aten::transpose > aten::as_strided`.
    fn transpose_weight(&mut self, out_features: u64, in_features: u64) {
        let w = [out_features, in_features];
        self.forward_op(
            "aten::t",
            &[t(&w)],
            Some(Node::T {
                rows: out_features,
                cols: in_features,
            }),
            |s| {
                s.plain_op(
                    "aten::transpose",
                    &[t(&w), sc("Scalar", "0"), sc("Scalar", "1")],
                    |s| {
                        s.plain_op(
                            "aten::as_strided",
                            &[
                                t(&w),
                                sc("ScalarList", list(&[in_features, out_features])),
                                sc("ScalarList", list(&[1, in_features])),
                                In::None,
                            ],
                            |_| {},
                        );
                    },
                );
            },
        );
    }

    /// `nn.Linear` on [batch, seq, in]: `aten::linear > aten::t, aten::addmm`
    /// with a bias, `aten::linear > aten::t, aten::matmul > aten::mm` without.
    fn linear(&mut self, in_features: u64, out_features: u64, bias: bool) {
        let d = self.dims;
        let (m, k, n) = (d.tokens(), in_features, out_features);
        let x = [d.batch, d.seq, in_features];
        let w = [out_features, in_features];
        self.open_module("Linear");
        let mut inputs = vec![t(&x), t(&w)];
        inputs.push(if bias { t(&[out_features]) } else { In::None });
        self.forward_op("aten::linear", &inputs, None, |s| {
            s.transpose_weight(out_features, in_features);
            let wt = In::Strided(vec![k, n], vec![1, k], BF16);
            if bias {
                s.forward_op(
                    "aten::addmm",
                    &[
                        t(&[n]),
                        t(&[m, k]),
                        wt,
                        sc("Scalar", "1"),
                        sc("Scalar", "1"),
                    ],
                    Some(Node::Addmm { m, k, n }),
                    |s| {
                        let kernel = s.gemm_kernel(m, k, n, "tn", 1);
                        s.launch(kernel);
                    },
                );
                s.plain_op(
                    "aten::view",
                    &[
                        t(&[m, n]),
                        sc("ScalarList", format!("[{}, {}, -1]", d.batch, d.seq)),
                    ],
                    |_| {},
                );
            } else {
                s.forward_op("aten::matmul", &[t(&x), wt.clone()], None, |s| {
                    s.plain_op(
                        "aten::view",
                        &[t(&x), sc("ScalarList", list(&[m, k]))],
                        |_| {},
                    );
                    s.forward_op(
                        "aten::mm",
                        &[t(&[m, k]), wt],
                        Some(Node::Mm { m, k, n }),
                        |s| {
                            let kernel = s.gemm_kernel(m, k, n, "tn", 1);
                            s.launch(kernel);
                        },
                    );
                    s.plain_op(
                        "aten::_unsafe_view",
                        &[t(&[m, n]), sc("ScalarList", list(&[d.batch, d.seq, n]))],
                        |_| {},
                    );
                });
            }
        });
        self.close();
    }

    fn layer_norm(&mut self) {
        let d = self.dims;
        let x = [d.batch, d.seq, d.hidden];
        let (rows, cols) = (d.tokens(), d.hidden);
        self.open_module("LayerNorm");
        let inputs = [
            t(&x),
            sc("ScalarList", list(&[cols])),
            t(&[cols]),
            t(&[cols]),
            sc("Scalar", "1.0000000000000001e-05"),
            sc("Scalar", "True"),
        ];
        self.forward_op("aten::layer_norm", &inputs, None, |s| {
            s.forward_op(
                "aten::native_layer_norm",
                &inputs[..5],
                Some(Node::LayerNorm { rows, cols }),
                |s| {
                    let mut kernel = s.elementwise_kernel(
                        "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)",
                        rows * cols,
                        (rows * cols * 4) as f64,
                    );
                    kernel.grid = [rows, 1, 1];
                    kernel.block = [32, 4, 1];
                    kernel.registers = 34;
                    kernel.dur += 1.5;
                    s.launch(kernel);
                },
            );
        });
        self.close();
    }

    fn residual_add(&mut self) {
        let d = self.dims;
        let x = [d.batch, d.seq, d.hidden];
        let (rows, cols) = (d.tokens(), d.hidden);
        self.forward_op(
            "aten::add",
            &[t(&x), t(&x), sc("Scalar", "1")],
            Some(Node::Add),
            |s| {
                let kernel = s.elementwise_kernel(
                    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)",
                    rows * cols,
                    (rows * cols * 6) as f64,
                );
                s.launch(kernel);
            },
        );
    }

    fn attention(&mut self) {
        let d = self.dims;
        let (b, h, sq, hd) = (d.batch, d.heads, d.seq, d.head_dim());
        self.open_module("SelfAttention");
        self.linear(d.hidden, 3 * d.hidden, true);
        self.plain_op(
            "aten::view",
            &[
                t(&[b, sq, 3 * d.hidden]),
                sc("ScalarList", list(&[b, sq, 3, h, hd])),
            ],
            |_| {},
        );
        // q, k, v: [b, h, s, d] views into the qkv projection.
        let qkv_strides = vec![sq * 3 * d.hidden, hd, 3 * d.hidden, 1];
        let q = In::Strided(vec![b, h, sq, hd], qkv_strides.clone(), BF16);
        let sdpa_inputs = [
            q.clone(),
            q.clone(),
            q.clone(),
            In::None,
            sc("Scalar", "0."),
            sc("Scalar", "True"),
            In::None,
            sc("Scalar", "False"),
        ];
        self.forward_op("aten::scaled_dot_product_attention", &sdpa_inputs, None, |s| {
            let flash_inputs = [
                q.clone(),
                q.clone(),
                q.clone(),
                sc("Scalar", "0."),
                sc("Scalar", "True"),
                sc("Scalar", "False"),
                In::None,
            ];
            s.forward_op(
                "aten::_scaled_dot_product_flash_attention",
                &flash_inputs,
                Some(Node::Flash),
                |s| {
                    s.plain_op("aten::transpose", &[q.clone(), sc("Scalar", "1"), sc("Scalar", "2")], |_| {});
                    let bshd = In::Strided(
                        vec![b, sq, h, hd],
                        vec![sq * 3 * d.hidden, 3 * d.hidden, hd, 1],
                        BF16,
                    );
                    s.plain_op(
                        "aten::_flash_attention_forward",
                        &[
                            bshd.clone(),
                            bshd.clone(),
                            bshd,
                            In::None,
                            In::None,
                            sc("Scalar", "1024"),
                            sc("Scalar", "1024"),
                            sc("Scalar", "0."),
                            sc("Scalar", "True"),
                            sc("Scalar", "False"),
                            In::None,
                        ],
                        |s| {
                            s.plain_op("aten::empty_like", &[t(&[b, sq, h, hd])], |_| {});
                            s.plain_op("aten::empty", &[sc("ScalarList", list(&[b, h, sq]))], |_| {});
                            // Causal: half the score matrix.
                            let flops = 4.0 * (b * h * sq * sq * hd) as f64 / 2.0;
                            s.launch(Kernel {
                                name: "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)".into(),
                                dur: flops / 380e12 * 1e6 + 4.0,
                                grid: [sq / 128, b, h],
                                block: [128, 1, 1],
                                registers: 255,
                                shared: 49_152,
                            });
                        },
                    );
                },
            );
        });
        self.plain_op(
            "aten::transpose",
            &[
                In::Strided(vec![b, h, sq, hd], contiguous(&[b, sq, h, hd]), BF16),
                sc("Scalar", "1"),
                sc("Scalar", "2"),
            ],
            |_| {},
        );
        self.plain_op(
            "aten::reshape",
            &[
                t(&[b, sq, h, hd]),
                sc("ScalarList", list(&[b, sq, d.hidden])),
            ],
            |_| {},
        );
        self.linear(d.hidden, d.hidden, true);
        self.close();
    }

    fn mlp(&mut self) {
        let d = self.dims;
        self.open_module("MLP");
        self.linear(d.hidden, d.ffn, true);
        self.open_module("GELU");
        let x = [d.batch, d.seq, d.ffn];
        let (rows, cols) = (d.tokens(), d.ffn);
        self.forward_op(
            "aten::gelu",
            &[t(&x), sc("str", "none")],
            Some(Node::Gelu { rows, cols }),
            |s| {
                let kernel = s.elementwise_kernel(
                    "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul>)",
                    rows * cols,
                    (rows * cols * 4) as f64,
                );
                s.launch(kernel);
            },
        );
        self.close();
        self.linear(d.ffn, d.hidden, false);
        self.close();
    }

    fn block(&mut self) {
        self.open_module("TransformerBlock");
        self.layer_norm();
        self.attention();
        self.residual_add();
        self.layer_norm();
        self.mlp();
        self.residual_add();
        self.close();
    }

    fn embedding(&mut self) {
        let d = self.dims;
        self.open_module("Embedding");
        let table = [d.vocab, d.hidden];
        let tokens = In::T(vec![d.batch, d.seq], "long int");
        self.forward_op(
            "aten::embedding",
            &[t(&table), tokens, sc("Scalar", "-1"), sc("Scalar", "False"), sc("Scalar", "False")],
            Some(Node::Embedding),
            |s| {
                s.plain_op("aten::reshape", &[In::T(vec![d.batch, d.seq], "long int"), sc("ScalarList", "[-1]")], |_| {});
                s.plain_op(
                    "aten::index_select",
                    &[t(&table), sc("Scalar", "0"), In::T(vec![d.tokens()], "long int")],
                    |s| {
                        let mut kernel = s.elementwise_kernel(
                            "void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, unsigned int, 2, 2, -2, true>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, at::cuda::detail::TensorInfo<long, unsigned int>, int, int, unsigned int, unsigned int, long)",
                            d.tokens() * d.hidden,
                            (d.tokens() * d.hidden * 4) as f64,
                        );
                        kernel.block = [128, 1, 1];
                        kernel.grid = [1056, 1, 1];
                        s.launch(kernel);
                    },
                );
                s.plain_op("aten::view", &[t(&[d.tokens(), d.hidden]), sc("ScalarList", list(&[d.batch, d.seq, d.hidden]))], |_| {});
            },
        );
        self.close();
    }

    /// Attention pooling head: one learned query attends over the sequence.
    fn pool(&mut self) {
        let d = self.dims;
        let (b, sq, hd) = (d.batch, d.seq, d.hidden);
        self.open_module("AttentionPool");
        self.forward_op(
            "aten::bmm",
            &[
                t(&[b, 1, hd]),
                In::Strided(vec![b, hd, sq], vec![sq * hd, 1, hd], BF16),
            ],
            Some(Node::Bmm {
                b,
                m: 1,
                k: hd,
                n: sq,
            }),
            |s| {
                let kernel = s.gemm_kernel(1, hd, sq, "tn", b);
                s.launch(kernel);
            },
        );
        self.forward_op(
            "aten::_softmax",
            &[t(&[b, 1, sq]), sc("Scalar", "-1"), sc("Scalar", "False")],
            Some(Node::Softmax { rows: b, cols: sq }),
            |s| {
                let mut kernel = s.elementwise_kernel(
                    "void (anonymous namespace)::softmax_warp_forward<c10::BFloat16, c10::BFloat16, float, 10, false, false>(c10::BFloat16*, c10::BFloat16 const*, int, int, int, bool const*, int, bool)",
                    b * sq,
                    (b * sq * 4) as f64,
                );
                kernel.grid = [1, 1, 1];
                kernel.block = [32, 4, 1];
                s.launch(kernel);
            },
        );
        self.forward_op(
            "aten::bmm",
            &[t(&[b, 1, sq]), t(&[b, sq, hd])],
            Some(Node::Bmm {
                b,
                m: 1,
                k: sq,
                n: hd,
            }),
            |s| {
                let kernel = s.gemm_kernel(1, sq, hd, "nn", b);
                s.launch(kernel);
            },
        );
        self.close();
    }

    fn loss(&mut self) {
        let d = self.dims;
        let numel = d.batch * d.hidden;
        self.forward_op(
            "aten::mean",
            &[t(&[d.batch, 1, d.hidden]), In::None, sc("Scalar", "False"), In::None],
            Some(Node::Mean { numel }),
            |s| {
                let kernel = s.reduce_kernel(
                    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::BFloat16, at::native::MeanOps<c10::BFloat16, float, float, c10::BFloat16>, unsigned int, c10::BFloat16, 4, 4> >(at::native::ReduceOp<c10::BFloat16, at::native::MeanOps<c10::BFloat16, float, float, c10::BFloat16>, unsigned int, c10::BFloat16, 4, 4>)",
                    numel,
                    1,
                );
                s.launch(kernel);
            },
        );
    }

    /// `x.to("cuda", non_blocking=True)` of the token ids.
    fn copy_inputs(&mut self) {
        let d = self.dims;
        let tokens = In::T(vec![d.batch, d.seq], "long int");
        self.plain_op(
            "aten::to",
            &[
                tokens.clone(),
                In::None,
                In::None,
                sc("Scalar", "True"),
                sc("Scalar", "False"),
                In::None,
            ],
            |s| {
                s.plain_op(
                    "aten::_to_copy",
                    &[
                        tokens.clone(),
                        sc("Scalar", "4"),
                        sc("Scalar", "0"),
                        sc("Device", ""),
                        In::None,
                        sc("Scalar", "True"),
                        In::None,
                    ],
                    |s| {
                        s.plain_op(
                            "aten::empty_strided",
                            &[
                                sc("ScalarList", list(&[d.batch, d.seq])),
                                sc("ScalarList", list(&[d.seq, 1])),
                                sc("Scalar", "4"),
                            ],
                            |_| {},
                        );
                        s.plain_op(
                            "aten::copy_",
                            &[
                                In::T(vec![d.batch, d.seq], "long int"),
                                tokens,
                                sc("Scalar", "True"),
                            ],
                            |s| s.memcpy("HtoD (Pinned -> Device)", d.tokens() * 8, 24.0),
                        );
                    },
                );
            },
        );
    }

    // --- backward ----------------------------------------------------------

    fn backward_node(&mut self, entry: &TapeEntry) {
        let name = entry.node.backward_name();
        let evaluate = format!("autograd::engine::evaluate_function: {name}");
        let flow = self.next_flow;
        self.next_flow += 1;
        let ts = self.open_op(&evaluate, &[], Some(entry.sequence));
        self.push(json!({
            "ph": "s", "id": flow, "pid": HOST_PID, "tid": MAIN_TID,
            "ts": entry.forward_ts, "cat": "fwdbwd", "name": "fwdbwd",
        }));
        self.push(json!({
            "ph": "f", "id": flow, "pid": HOST_PID, "tid": AUTOGRAD_TID,
            "ts": ts, "cat": "fwdbwd", "name": "fwdbwd", "bp": "e",
        }));
        self.open_op(name, &[], Some(entry.sequence));
        self.backward_kernels(entry.node);
        self.close();
        self.close();
    }

    fn backward_kernels(&mut self, node: Node) {
        match node {
            Node::T { rows, cols } => {
                self.plain_op("aten::t", &[t(&[cols, rows])], |s| {
                    s.plain_op(
                        "aten::transpose",
                        &[t(&[cols, rows]), sc("Scalar", "0"), sc("Scalar", "1")],
                        |_| {},
                    );
                });
            }
            Node::Addmm { m, k, n } | Node::Mm { m, k, n } => {
                // grad_input = grad · W, grad_weight = grad^T · x
                self.plain_op("aten::t", &[t(&[k, n])], |_| {});
                self.plain_op("aten::mm", &[t(&[m, n]), t(&[n, k])], |s| {
                    let kernel = s.gemm_kernel(m, n, k, "nn", 1);
                    s.launch(kernel);
                });
                self.plain_op("aten::t", &[t(&[m, n])], |_| {});
                self.plain_op(
                    "aten::mm",
                    &[In::Strided(vec![n, m], vec![1, n], BF16), t(&[m, k])],
                    |s| {
                        let kernel = s.gemm_kernel(n, m, k, "nt", 1);
                        s.launch(kernel);
                    },
                );
                if matches!(node, Node::Addmm { .. }) {
                    self.plain_op(
                        "aten::sum",
                        &[t(&[m, n]), sc("ScalarList", "[0]"), sc("Scalar", "True"), In::None],
                        |s| {
                            let kernel = s.reduce_kernel(
                                "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::BFloat16, at::native::func_wrapper_t<float, at::native::sum_functor<c10::BFloat16, float, c10::BFloat16>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, c10::BFloat16, 4, 4> >(at::native::ReduceOp<c10::BFloat16, at::native::func_wrapper_t<float, at::native::sum_functor<c10::BFloat16, float, c10::BFloat16>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, c10::BFloat16, 4, 4>)",
                                m * n,
                                n,
                            );
                            s.launch(kernel);
                        },
                    );
                }
            }
            Node::Bmm { b, m, k, n } => {
                self.plain_op("aten::bmm", &[t(&[b, m, n]), t(&[b, n, k])], |s| {
                    let kernel = s.gemm_kernel(m, n, k, "nn", b);
                    s.launch(kernel);
                });
                self.plain_op("aten::bmm", &[t(&[b, k, m]), t(&[b, m, n])], |s| {
                    let kernel = s.gemm_kernel(k, m, n, "nt", b);
                    s.launch(kernel);
                });
            }
            Node::LayerNorm { rows, cols } => {
                let x = [self.dims.batch, self.dims.seq, cols];
                self.plain_op(
                    "aten::native_layer_norm_backward",
                    &[t(&x), t(&x), sc("ScalarList", list(&[cols])), In::T(vec![rows, 1], "float"), In::T(vec![rows, 1], "float"), t(&[cols]), t(&[cols]), sc("GenericList", "[True, True, True]")],
                    |s| {
                        let mut kernel = s.elementwise_kernel(
                            "void at::native::(anonymous namespace)::layer_norm_grad_input_kernel_vectorized<c10::BFloat16, float>(c10::BFloat16 const*, c10::BFloat16 const*, float const*, float const*, c10::BFloat16 const*, c10::BFloat16*, int)",
                            rows * cols,
                            (rows * cols * 6) as f64,
                        );
                        kernel.grid = [rows, 1, 1];
                        kernel.block = [256, 1, 1];
                        s.launch(kernel);
                        let mut kernel = s.reduce_kernel(
                            "void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernelTemplate<c10::BFloat16, float, 32u, 32u, 256u, false, true>(long, long, c10::BFloat16 const*, c10::BFloat16 const*, float const*, float const*, c10::BFloat16*, c10::BFloat16*)",
                            rows * cols * 2,
                            cols,
                        );
                        kernel.block = [32, 32, 1];
                        s.launch(kernel);
                    },
                );
            }
            Node::Flash => {
                let d = self.dims;
                let (b, h, sq, hd) = (d.batch, d.heads, d.seq, d.head_dim());
                let q = t(&[b, h, sq, hd]);
                self.plain_op(
                    "aten::_scaled_dot_product_flash_attention_backward",
                    &[q.clone(), q.clone(), q.clone(), q.clone(), q.clone(), In::T(vec![b, h, sq], "float"), In::None, In::None, sc("Scalar", "1024"), sc("Scalar", "1024"), sc("Scalar", "0."), sc("Scalar", "True"), In::T(vec![2], "long int"), In::T(vec![], "long int"), In::None],
                    |s| {
                        let bshd = t(&[b, sq, h, hd]);
                        s.plain_op(
                            "aten::_flash_attention_backward",
                            &[bshd.clone(), bshd.clone(), bshd.clone(), bshd.clone(), bshd, In::T(vec![b, h, sq], "float"), In::None, In::None, sc("Scalar", "1024"), sc("Scalar", "1024"), sc("Scalar", "0."), sc("Scalar", "True"), In::T(vec![2], "long int"), In::T(vec![], "long int"), In::None],
                            |s| {
                                let traits = "Flash_bwd_kernel_traits<64, 128, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, Flash_kernel_traits<64, 128, 128, 8, cutlass::bfloat16_t> >";
                                s.launch(Kernel {
                                    name: format!("void pytorch_flash::flash_bwd_dot_do_o_kernel<true, {traits}>(pytorch_flash::Flash_bwd_params)"),
                                    dur: (b * h * sq * hd * 6) as f64 / 2.4e12 * 1e6 + 2.5,
                                    grid: [sq / 128, b, h],
                                    block: [256, 1, 1],
                                    registers: 40,
                                    shared: 0,
                                });
                                let flops = 10.0 * (b * h * sq * sq * hd) as f64 / 2.0;
                                s.launch(Kernel {
                                    name: format!("void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<{traits}, false, true, false, false, true, true, false>(pytorch_flash::Flash_bwd_params)"),
                                    dur: flops / 300e12 * 1e6 + 5.0,
                                    grid: [sq / 128, b, h],
                                    block: [256, 1, 1],
                                    registers: 255,
                                    shared: 98_304,
                                });
                                s.launch(Kernel {
                                    name: format!("void pytorch_flash::flash_bwd_convert_dq_kernel<{traits}>(pytorch_flash::Flash_bwd_params, int)"),
                                    dur: (b * h * sq * hd * 6) as f64 / 2.4e12 * 1e6 + 2.0,
                                    grid: [sq / 128, b, h],
                                    block: [256, 1, 1],
                                    registers: 40,
                                    shared: 0,
                                });
                            },
                        );
                    },
                );
            }
            Node::Gelu { rows, cols } => {
                let x = [self.dims.batch, self.dims.seq, cols];
                self.plain_op("aten::gelu_backward", &[t(&x), t(&x), sc("str", "none")], |s| {
                    let kernel = s.elementwise_kernel(
                        "void at::native::vectorized_elementwise_kernel<4, at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16, c10::BFloat16)#1}, std::array<char*, 3ul> >(int, at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16, c10::BFloat16)#1}, std::array<char*, 3ul>)",
                        rows * cols,
                        (rows * cols * 6) as f64,
                    );
                    s.launch(kernel);
                });
            }
            // The gradient flows through unchanged: no kernels.
            Node::Add => {}
            Node::Softmax { rows, cols } => {
                let x = [rows, 1, cols];
                self.plain_op(
                    "aten::_softmax_backward_data",
                    &[t(&x), t(&x), sc("Scalar", "-1"), sc("Scalar", "15")],
                    |s| {
                        let mut kernel = s.elementwise_kernel(
                            "void (anonymous namespace)::softmax_warp_backward<c10::BFloat16, c10::BFloat16, float, 10, false, false>(c10::BFloat16*, c10::BFloat16 const*, c10::BFloat16 const*, int, int, int, bool const*)",
                            rows * cols,
                            (rows * cols * 6) as f64,
                        );
                        kernel.grid = [1, 1, 1];
                        kernel.block = [32, 4, 1];
                        s.launch(kernel);
                    },
                );
            }
            Node::Embedding => {
                let d = self.dims;
                self.plain_op(
                    "aten::embedding_backward",
                    &[t(&[d.batch, d.seq, d.hidden]), In::T(vec![d.batch, d.seq], "long int"), sc("Scalar", "32000"), sc("Scalar", "-1"), sc("Scalar", "False"), sc("Scalar", "False")],
                    |s| {
                        s.plain_op(
                            "aten::embedding_dense_backward",
                            &[t(&[d.batch, d.seq, d.hidden]), In::T(vec![d.batch, d.seq], "long int"), sc("Scalar", "32000"), sc("Scalar", "-1"), sc("Scalar", "False")],
                            |s| {
                                let kernel = s.elementwise_kernel(
                                    "void at::native::(anonymous namespace)::compute_grad_weight<c10::BFloat16, float>(long const*, c10::BFloat16 const*, long const*, long, long, long const*, long, float*)",
                                    d.tokens() * d.hidden,
                                    (d.tokens() * d.hidden * 6) as f64,
                                );
                                s.launch(kernel);
                                let kernel = s.elementwise_kernel(
                                    "void at::native::(anonymous namespace)::sum_and_scatter<c10::BFloat16, float>(long const*, c10::BFloat16*, long, long const*, long const*, float const*, long, long, long)",
                                    d.vocab * d.hidden,
                                    (d.tokens() * d.hidden * 4) as f64,
                                );
                                s.launch(kernel);
                            },
                        );
                    },
                );
            }
            Node::Mean { numel } => {
                self.plain_op(
                    "aten::expand",
                    &[
                        t(&[]),
                        sc("ScalarList", list(&[self.dims.batch, 1, self.dims.hidden])),
                        sc("Scalar", "False"),
                    ],
                    |_| {},
                );
                self.plain_op("aten::div", &[t(&[self.dims.batch, 1, self.dims.hidden]), sc("Scalar", "4096")], |s| {
                    let kernel = s.elementwise_kernel(
                        "void at::native::vectorized_elementwise_kernel<4, at::native::BUnaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::DivFunctor<float> >, std::array<char*, 2ul> >(int, at::native::BUnaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::DivFunctor<float> >, std::array<char*, 2ul>)",
                        numel,
                        (numel * 4) as f64,
                    );
                    s.launch(kernel);
                });
            }
        }
    }

    fn backward(&mut self) {
        // loss.backward(): the seed gradient on the main thread...
        self.plain_op("aten::ones_like", &[t(&[]), In::None, In::None, In::None, In::None, In::None], |s| {
            s.plain_op("aten::empty_like", &[t(&[]), In::None, In::None, In::None, In::None, In::None], |_| {});
            s.plain_op("aten::fill_", &[t(&[]), sc("Scalar", "1")], |s| {
                let kernel = s.elementwise_kernel(
                    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<c10::BFloat16>, std::array<char*, 1ul> >(int, at::native::FillFunctor<c10::BFloat16>, std::array<char*, 1ul>)",
                    1,
                    2.0,
                );
                s.launch(kernel);
            });
        });
        // ...then the autograd engine's device thread, while the main thread waits.
        let main_clock = self.host;
        self.tid = AUTOGRAD_TID;
        self.host = main_clock + self.rng.jitter(12.0, 0.3);
        let tape = std::mem::take(&mut self.tape);
        for entry in tape.iter().rev() {
            self.backward_node(entry);
        }
        self.tid = MAIN_TID;
        self.host += self.rng.jitter(8.0, 0.3);
    }

    fn optimizer_step(&mut self) {
        let d = self.dims;
        let per_layer = 4 * d.hidden * d.hidden + 2 * d.hidden * d.ffn;
        self.open_annotation("Optimizer.step#AdamW.step");
        self.plain_op(
            "aten::_fused_adamw_",
            &[
                sc("TensorList", ""),
                sc("TensorList", ""),
                sc("TensorList", ""),
                sc("TensorList", ""),
                sc("TensorList", ""),
                sc("TensorList", ""),
                sc("Scalar", "0.0003"),
                sc("Scalar", "0.9"),
                sc("Scalar", "0.95"),
                sc("Scalar", "0.1"),
                sc("Scalar", "1e-08"),
                sc("Scalar", "False"),
                sc("Scalar", "False"),
                In::None,
                In::None,
            ],
            |s| {
                for _ in 0..s.layers {
                    // bf16 param + grad, fp32 moments: read and write.
                    let bytes = (per_layer * (2 + 2 + 4 + 4) * 2) as f64;
                    let mut kernel = s.elementwise_kernel(
                        "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::FusedOptimizerTensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<c10::BFloat16, 4, (at::native::ADAM_MODE)1, false>, double*, double, double, double, double, double, double, bool, double*, double*>(at::native::(anonymous namespace)::FusedOptimizerTensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<c10::BFloat16, 4, (at::native::ADAM_MODE)1, false>, double*, double, double, double, double, double, double, bool, double*, double*)",
                        per_layer,
                        bytes,
                    );
                    kernel.grid = [320, 1, 1];
                    kernel.block = [512, 1, 1];
                    kernel.registers = 72;
                    s.launch(kernel);
                }
            },
        );
        self.close();
    }

    fn read_loss(&mut self) {
        self.plain_op("aten::item", &[t(&[])], |s| {
            s.plain_op("aten::_local_scalar_dense", &[t(&[])], |s| {
                s.memcpy("DtoH (Device -> Pinned)", 2, 2.0);
                s.synchronize();
            });
        });
    }

    fn step(&mut self, number: u64) {
        self.module_counts.clear();
        self.grad_mode = self.train;
        self.open_annotation(&format!("ProfilerStep#{number}"));
        if self.train {
            self.open_annotation("Optimizer.zero_grad#AdamW.zero_grad");
            self.spend(20.0);
            self.close();
        }
        self.copy_inputs();
        self.open_python("train.py(52): train_step");
        self.open_module("GPT");
        self.embedding();
        for _ in 0..self.layers {
            self.block();
        }
        self.layer_norm();
        self.pool();
        self.close();
        self.close();
        self.loss();
        if self.train {
            self.grad_mode = false;
            self.backward();
            self.optimizer_step();
        }
        self.read_loss();
        self.spend(30.0);
        self.close();
        self.tape.clear();
        self.spend(60.0);
    }

    fn metadata_events(&self) -> Vec<Value> {
        let ts = ns(BASE_TS - 250.0);
        let mut out = Vec::new();
        let mut meta = |name: &str, pid: i64, tid: i64, args: Value| {
            out.push(
                json!({"name": name, "ph": "M", "ts": ts, "pid": pid, "tid": tid, "args": args}),
            );
        };
        meta("process_name", HOST_PID, 0, json!({"name": "python3"}));
        meta("process_labels", HOST_PID, 0, json!({"labels": "CPU"}));
        meta(
            "process_sort_index",
            HOST_PID,
            0,
            json!({"sort_index": HOST_PID}),
        );
        meta("process_name", GPU_PID, 0, json!({"name": "python3"}));
        meta("process_labels", GPU_PID, 0, json!({"labels": "GPU 0"}));
        meta(
            "process_sort_index",
            GPU_PID,
            0,
            json!({"sort_index": 5_000_000}),
        );
        meta("thread_name", GPU_PID, STREAM, json!({"name": "stream 7 "}));
        meta(
            "thread_sort_index",
            GPU_PID,
            STREAM,
            json!({"sort_index": STREAM}),
        );
        meta(
            "thread_name",
            HOST_PID,
            MAIN_TID,
            json!({"name": "thread 4242 (python3)"}),
        );
        meta(
            "thread_sort_index",
            HOST_PID,
            MAIN_TID,
            json!({"sort_index": MAIN_TID}),
        );
        if self.train {
            meta(
                "thread_name",
                HOST_PID,
                AUTOGRAD_TID,
                json!({"name": "thread 4251 (pt_autograd_0)"}),
            );
            meta(
                "thread_sort_index",
                HOST_PID,
                AUTOGRAD_TID,
                json!({"sort_index": AUTOGRAD_TID}),
            );
        }
        out
    }
}

fn transformer_command(args: &[String]) -> Result<(), String> {
    // `--with-stack` is the one flag without a value.
    let with_stack = args.iter().any(|a| a == "--with-stack");
    let args: Vec<String> = args
        .iter()
        .filter(|a| *a != "--with-stack")
        .cloned()
        .collect();
    let flags = parse_flags(
        &args,
        &[
            "--out",
            "--seed",
            "--steps",
            "--layers",
            "--mode",
            "--regress",
            "--swap-kernel",
        ],
    )?;
    let out = PathBuf::from(one(&flags, "--out").ok_or("transformer: --out FILE is required")?);
    let seed: u64 = number(&flags, "--seed", 1)?;
    let steps: u64 = number(&flags, "--steps", 3)?;
    let layers: u64 = number(&flags, "--layers", 4)?;
    if steps == 0 || layers == 0 {
        return Err("--steps and --layers must be at least 1".into());
    }
    let train = match one(&flags, "--mode").unwrap_or("train") {
        "train" => true,
        "infer" => false,
        other => return Err(format!("--mode {other}: expected train or infer")),
    };
    let mut sim = Sim::new(seed, layers, train);
    sim.with_stack = with_stack;
    for text in flags.get("--regress").into_iter().flatten() {
        let (op, factor) = split_pair(text, "--regress")?;
        let factor: f64 = factor
            .parse()
            .ok()
            .filter(|f: &f64| f.is_finite() && *f > 0.0)
            .ok_or_else(|| format!("--regress {text}: FACTOR must be a positive number"))?;
        sim.regress.push((op, factor));
    }
    for text in flags.get("--swap-kernel").into_iter().flatten() {
        sim.swap.push(split_pair(text, "--swap-kernel")?);
    }

    // A few ms of host activity before the first recorded step.
    sim.spend(150.0);
    let first_step = 2;
    for number in first_step..first_step + steps {
        sim.step(number);
    }
    let span_end = sim.host.max(sim.gpu_free);

    let mut events = sim.metadata_events();
    events.push(json!({
        "ph": "X", "cat": "Trace", "ts": ns(BASE_TS - 100.0), "dur": ns(span_end - BASE_TS + 200.0),
        "pid": "Spans", "tid": "PyTorch Profiler", "name": "PyTorch Profiler (0)",
        "args": {"Op count": 0},
    }));
    events.append(&mut sim.events);

    let head = vec![
        ("schemaVersion".to_string(), json!(1)),
        (
            "deviceProperties".to_string(),
            json!([{
                "id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85_018_279_936u64,
                "computeMajor": 9, "computeMinor": 0,
                "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
                "regsPerBlock": 65536, "regsPerMultiprocessor": 65536, "warpSize": 32,
                "sharedMemPerBlock": 49152, "sharedMemPerMultiprocessor": 233_472,
                "numSms": 132, "sharedMemPerBlockOptin": 232_448,
            }]),
        ),
        ("cupti_version".to_string(), json!(24)),
        ("cuda_runtime_version".to_string(), json!(12040)),
        ("cuda_driver_version".to_string(), json!(12040)),
        (
            "distributedInfo".to_string(),
            json!({"backend": "nccl", "rank": 0, "world_size": 1, "pg_count": 1, "pg_config": [], "nccl_version": "2.21.5"}),
        ),
        ("record_shapes".to_string(), json!(1)),
        ("with_modules".to_string(), json!(1)),
        ("with_stack".to_string(), json!(0)),
        ("profile_memory".to_string(), json!(0)),
        (
            "trace_id".to_string(),
            json!(format!(
                "{:016X}{:016X}",
                XorShift::new(seed).next_u64(),
                seed
            )),
        ),
        ("displayTimeUnit".to_string(), json!("ms")),
        (
            "baseTimeNanoseconds".to_string(),
            json!(1_734_000_000_000_000_000u64),
        ),
    ];
    let tail = vec![(
        "traceName".to_string(),
        json!(format!(
            "tracegate generate transformer --seed {seed} (synthetic)"
        )),
    )];
    let mut output = Output::create(&out)?;
    let mut iter = events.into_iter();
    let count = write_trace(&mut output, &head, &mut || iter.next(), &tail)
        .and_then(|count| output.finish().map(|()| count))
        .map_err(|e| format!("{}: {e}", out.display()))?;
    eprintln!("generate: wrote {} ({count} events)", out.display());
    Ok(())
}

// ---------------------------------------------------------------------------
// repeat

fn read_trace(path: &Path) -> Result<Value, String> {
    let mut bytes = Vec::new();
    File::open(path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut text = Vec::new();
        MultiGzDecoder::new(bytes.as_slice())
            .read_to_end(&mut text)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        bytes = text;
    }
    serde_json::from_slice(&bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// Top-level keys and values, in the order they are written.
type Fields = Vec<(String, Value)>;

/// How one copy's values are moved.
struct Offsets {
    /// Per copy, in ns (a whole number of µs).
    time_ns: i64,
    correlation: u64,
    external: u64,
    python: u64,
    sequence: u64,
    step: u64,
}

fn profiler_step(name: &str) -> Option<u64> {
    name.strip_prefix("ProfilerStep#")?.parse().ok()
}

fn measure(events: &[Value]) -> Result<Offsets, String> {
    let (mut first, mut last) = (f64::INFINITY, f64::NEG_INFINITY);
    let (mut correlation, mut external, mut python, mut sequence) = (0u64, 0u64, 0u64, 0u64);
    let (mut step_min, mut step_max) = (u64::MAX, 0u64);
    let max_of = |value: Option<&Value>, max: &mut u64| {
        if let Some(v) = value.and_then(Value::as_u64) {
            *max = (*max).max(v);
        }
    };
    for event in events {
        if event.get("ph").and_then(Value::as_str) == Some("M") {
            continue;
        }
        if let Some(ts) = event.get("ts").and_then(Value::as_f64) {
            let dur = event.get("dur").and_then(Value::as_f64).unwrap_or(0.0);
            first = first.min(ts);
            last = last.max(ts + dur.max(0.0));
        }
        max_of(event.get("id"), &mut correlation);
        if let Some(args) = event.get("args") {
            max_of(args.get("correlation"), &mut correlation);
            max_of(args.get("External id"), &mut external);
            max_of(args.get("external id"), &mut external);
            max_of(args.get("Python id"), &mut python);
            max_of(args.get("Python parent id"), &mut python);
            max_of(args.get("Sequence number"), &mut sequence);
        }
        if let Some(n) = event
            .get("name")
            .and_then(Value::as_str)
            .and_then(profiler_step)
        {
            step_min = step_min.min(n);
            step_max = step_max.max(n);
        }
    }
    if !first.is_finite() {
        return Err("the input has no timed events".into());
    }
    // The span, rounded up to whole µs, plus a 1 ms gap between copies.
    let span_us = (last - first).ceil() as i64 + 1000;
    Ok(Offsets {
        time_ns: span_us * 1000,
        correlation: correlation + 1,
        external: external + 1,
        python: python + 1,
        sequence: sequence + 1,
        step: if step_min <= step_max {
            step_max - step_min + 1
        } else {
            0
        },
    })
}

fn shift_time(value: &mut Value, copy: i64, offsets: &Offsets) {
    let shift_ns = copy * offsets.time_ns;
    if let Some(v) = value.as_i64() {
        *value = json!(v + shift_ns / 1000);
    } else if let Some(v) = value.as_u64() {
        *value = json!(v + (shift_ns / 1000) as u64);
    } else if let Some(v) = value.as_f64() {
        // Whole nanoseconds, so that the result prints as the input did.
        *value = json!(((v * 1000.0).round() + shift_ns as f64) / 1000.0);
    }
}

fn shift_id(value: Option<&mut Value>, by: u64) {
    if let Some(value) = value {
        if let Some(v) = value.as_u64().and_then(|v| v.checked_add(by)) {
            *value = json!(v);
        }
    }
}

fn shifted(event: &Value, copy: u64, offsets: &Offsets) -> Value {
    let mut event = event.clone();
    if copy == 0 {
        return event;
    }
    let Some(map) = event.as_object_mut() else {
        return event;
    };
    if let Some(ts) = map.get_mut("ts") {
        shift_time(ts, copy as i64, offsets);
    }
    shift_id(map.get_mut("id"), copy * offsets.correlation);
    if let Some(name) = map.get_mut("name") {
        if let Some(n) = name.as_str().and_then(profiler_step) {
            *name = json!(format!("ProfilerStep#{}", n + copy * offsets.step));
        }
    }
    if let Some(args) = map.get_mut("args").and_then(Value::as_object_mut) {
        shift_id(args.get_mut("correlation"), copy * offsets.correlation);
        shift_id(args.get_mut("External id"), copy * offsets.external);
        shift_id(args.get_mut("external id"), copy * offsets.external);
        shift_id(args.get_mut("Python id"), copy * offsets.python);
        shift_id(args.get_mut("Python parent id"), copy * offsets.python);
        shift_id(args.get_mut("Sequence number"), copy * offsets.sequence);
    }
    event
}

fn repeat_command(args: &[String]) -> Result<(), String> {
    let flags = parse_flags(args, &["--input", "--copies", "--out"])?;
    let input = PathBuf::from(one(&flags, "--input").ok_or("repeat: --input TRACE is required")?);
    let out = PathBuf::from(one(&flags, "--out").ok_or("repeat: --out FILE is required")?);
    let copies: u64 = number(&flags, "--copies", 0)?;
    if copies == 0 {
        return Err("repeat: --copies N (at least 1) is required".into());
    }
    let document = read_trace(&input)?;
    let (mut head, events, mut tail): (Fields, Vec<Value>, Fields) = match document {
        Value::Array(events) => (Vec::new(), events, Vec::new()),
        Value::Object(map) => {
            let mut head = Vec::new();
            let mut events = None;
            for (key, value) in map {
                if key == "traceEvents" {
                    match value {
                        Value::Array(list) => events = Some(list),
                        _ => {
                            return Err(format!(
                                "{}: `traceEvents` is not an array",
                                input.display()
                            ));
                        }
                    }
                } else {
                    head.push((key, value));
                }
            }
            let events = events.ok_or_else(|| format!("{}: no `traceEvents`", input.display()))?;
            (head, events, Vec::new())
        }
        _ => return Err(format!("{}: not a JSON trace", input.display())),
    };
    // Kineto writes `traceName` after the events; keep that shape.
    if let Some(i) = head.iter().position(|(k, _)| k == "traceName") {
        tail.push(head.remove(i));
    }
    let offsets = measure(&events)?;
    let mut output = Output::create(&out)?;
    let mut copy = 0u64;
    let mut index = 0usize;
    let mut next = || loop {
        if index == events.len() {
            copy += 1;
            index = 0;
            if copy == copies {
                return None;
            }
        }
        let event = &events[index];
        index += 1;
        // Process and thread names once.
        if copy > 0 && event.get("ph").and_then(Value::as_str) == Some("M") {
            continue;
        }
        return Some(shifted(event, copy, &offsets));
    };
    let count = write_trace(&mut output, &head, &mut next, &tail)
        .and_then(|count| output.finish().map(|()| count))
        .map_err(|e| format!("{}: {e}", out.display()))?;
    eprintln!(
        "generate: wrote {} ({copies} copies, {count} events, {} µs apart)",
        out.display(),
        offsets.time_ns / 1000
    );
    Ok(())
}
