"""A stand-in `torch` for testing replay.py where PyTorch is not installed.

It implements just what replay.py touches on the CPU path: dtypes, devices,
allocation (empty_strided, randn, randint, as_strided, with storage bounds
checked), a few aten ops whose schemas are spelled the way the JIT's
`str(type)` spells them, and calls that append what they received to the
JSON-lines file named by $STUB_TORCH_LOG.

With $STUB_TORCH_GPU set it also plays a GPU: one stream on a simulated
clock, where each launch costs the host $STUB_LAUNCH_US and each op call
runs $STUB_KERNEL_US on the GPU once the GPU is free, with events (each
taking 2 µs of the GPU's time, as one between kernels does on an H200),
`_sleep` (1000 cycles per µs) and, with $STUB_OP_WAITS set, ops that wait
for the GPU (as `nonzero` does). Replay's timing can then be checked
against a kernel time known in advance.
"""

import builtins
import json
import os
import re

__version__ = "0.0-stub"


GPU = bool(os.environ.get("STUB_TORCH_GPU"))


class version:
    cuda = "13.0-stub" if GPU else None
    hip = None


class _Stream:
    """One simulated stream: the host's clock and when the GPU is next free, in µs."""
    host = 0.0
    gpu_free = 0.0
    launch_us = float(os.environ.get("STUB_LAUNCH_US", "30"))
    kernel_us = float(os.environ.get("STUB_KERNEL_US", "5"))
    op_waits = bool(os.environ.get("STUB_OP_WAITS"))
    EVENT_RECORD_US = 1.0
    EVENT_GPU_US = 2.0
    CYCLES_PER_US = 1000.0

    @classmethod
    def launch(cls, gpu_us, host_us=None):
        cls.host += cls.launch_us if host_us is None else host_us
        cls.gpu_free = max(cls.gpu_free, cls.host) + gpu_us
        return cls.gpu_free

    @classmethod
    def wait(cls, until):
        cls.host = max(cls.host, until)


class dtype:
    def __init__(self, name, itemsize, floating=False, complex_=False):
        self.name = name
        self.itemsize = itemsize
        self.is_floating_point = floating
        self.is_complex = complex_

    def __repr__(self):
        return "torch." + self.name


for _name, _size, _float in [
    ("float64", 8, True), ("float32", 4, True), ("float16", 2, True), ("bfloat16", 2, True),
    ("float8_e4m3fn", 1, True), ("float8_e5m2", 1, True), ("float8_e4m3fnuz", 1, True),
    ("float8_e5m2fnuz", 1, True), ("int64", 8, False), ("int32", 4, False), ("int16", 2, False),
    ("int8", 1, False), ("uint8", 1, False), ("bool", 1, False),
]:
    globals()[_name] = dtype(_name, _size, _float)
strided = "torch.strided"
contiguous_format = "torch.contiguous_format"


class device:
    def __init__(self, text):
        text = str(text)
        if text.split(":")[0] not in ("cpu", "cuda", "meta"):
            raise RuntimeError("Expected one of cpu, cuda device type at start of device string: " + text)
        self.type = text.split(":")[0]
        self.text = text

    def __repr__(self):
        return "device(%r)" % self.text


class cuda:
    @staticmethod
    def is_available():
        return GPU

    @staticmethod
    def synchronize(*_):
        _Stream.wait(_Stream.gpu_free)

    @staticmethod
    def get_device_name(*_):
        return "Stub GPU"

    @staticmethod
    def _sleep(cycles):
        _Stream.launch(cycles / _Stream.CYCLES_PER_US)

    class Event:
        def __init__(self, enable_timing=False):
            self.at = None

        def record(self):
            self.at = _Stream.launch(_Stream.EVENT_GPU_US, _Stream.EVENT_RECORD_US)

        def query(self):
            return self.at <= _Stream.host

        def synchronize(self):
            _Stream.wait(self.at)

        def elapsed_time(self, end):
            return (end.at - self.at) / 1000.0


class backends:
    class cuda:
        class matmul:
            allow_tf32 = False

    class cudnn:
        allow_tf32 = True
        benchmark = False
        deterministic = False


class iinfo:
    def __init__(self, kind):
        self.max = 2 ** (8 * kind.itemsize - (0 if kind.name.startswith("uint") or kind.name == "bool" else 1)) - 1


class Tensor:
    def __init__(self, shape, strides, kind, where, storage=None):
        self.shape = tuple(shape)
        self.strides = tuple(strides)
        self.dtype = kind
        self.device = device(where)
        self.storage = storage if storage is not None else _elements(shape, strides)

    def stride(self):
        return self.strides

    def normal_(self):
        assert self.dtype.is_floating_point, "normal_ on " + repr(self.dtype)
        return self

    def mul_(self, _):
        return self

    def add_(self, _):
        return self

    def abs(self):
        return self

    def to(self, kind):
        return Tensor(self.shape, self.strides, kind, self.device.text, self.storage)

    def view(self, kind):
        return self.to(kind)

    def zero_(self):
        if self.device.type == "cuda":
            _Stream.launch(_Stream.kernel_us)
        return self

    def as_strided(self, shape, strides, offset=0):
        needed = _elements(shape, strides) + offset
        assert needed <= self.storage, "view needs %d elements, storage has %d" % (needed, self.storage)
        return Tensor(shape, strides, self.dtype, self.device.text, self.storage)

    def describe(self):
        return {"shape": list(self.shape), "strides": list(self.strides),
                "dtype": self.dtype.name, "device": self.device.type}


def manual_seed(seed):
    assert isinstance(seed, int), "seed"


def _elements(shape, strides):
    if any(s == 0 for s in shape):
        return 0
    return 1 + sum((s - 1) * abs(t) for s, t in zip(shape, strides))


def _one_dim(count):
    return (int(count),) if not isinstance(count, (tuple, list)) else tuple(count)


def empty_strided(size, stride, dtype=None, device="cpu"):
    return Tensor(size, stride, dtype or float32, str(device))


def empty(*size, dtype=None, device="cpu"):
    shape = _one_dim(size[0] if len(size) == 1 else size)
    return Tensor(shape, (1,) * len(shape), dtype or float32, str(device))


def randn(count, dtype=None, device="cpu"):
    return Tensor(_one_dim(count), (1,), dtype or float32, str(device))


def randint(low, high, size, dtype=None, device="cpu"):
    assert 0 <= low < high, "randint bounds"
    return Tensor(_one_dim(size), (1,), dtype or int64, str(device))


class Argument:
    def __init__(self, text, kwarg_only):
        declaration, _, default = text.partition("=")
        self.type, self.name = declaration.strip().rsplit(" ", 1)
        self.kwarg_only = kwarg_only
        self._default = builtins.bool(default)

    def has_default_value(self):
        return self._default


class Schema:
    def __init__(self, text):
        self.text = text
        inner = text[text.index("(") + 1:text.rindex(") ->")]
        self.arguments = []
        kwarg_only = False
        for piece in re.split(r",\s*(?![^\[]*\])", inner):
            if piece.strip() == "*":
                kwarg_only = True
            elif piece.strip():
                self.arguments.append(Argument(piece.strip(), kwarg_only))

    def __str__(self):
        return self.text


class OpOverload:
    def __init__(self, name, schema):
        self.name = name
        self._schema = Schema(schema)

    def __call__(self, *args, **kwargs):
        def plain(value):
            if isinstance(value, Tensor):
                return value.describe()
            if isinstance(value, list):
                return [plain(v) for v in value]
            if isinstance(value, (dtype, device)):
                return repr(value)
            return value
        record = {"overload": self.name, "args": [plain(a) for a in args],
                  "kwargs": {k: plain(v) for k, v in kwargs.items()},
                  "matmul_allow_tf32": backends.cuda.matmul.allow_tf32,
                  "cudnn_allow_tf32": backends.cudnn.allow_tf32}
        path = os.environ.get("STUB_TORCH_LOG")
        if path:
            with open(path, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(record) + "\n")
        if any(isinstance(a, Tensor) and a.device.type == "meta" for a in args):
            raise NotImplementedError("Could not run '%s' with arguments from the 'Meta' backend." % self.name)
        if GPU:
            done = _Stream.launch(_Stream.kernel_us)
            if _Stream.op_waits:
                _Stream.wait(done)
        return args[0] if args else None


# Schemas as the JIT prints them (str(arg.type): `int[]`, `Tensor?`).
SCHEMAS = [
    "aten::addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
    "aten::addmm.out(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1, Tensor out) -> Tensor",
    "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
    "aten::cat(Tensor[] tensors, int dim=0) -> Tensor",
    "aten::copy_(Tensor self, Tensor src, bool non_blocking=False) -> Tensor",
    "aten::frobnicate.Tensor(Tensor self, Tensor other) -> Tensor",
    "aten::frobnicate.Scalar(Tensor self, Scalar other) -> Tensor",
    "aten::_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor",
    "aten::convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor",
]


class OpPacket:
    def __init__(self):
        self._overloads = {}

    def overloads(self):
        return list(self._overloads)

    def __getattr__(self, name):
        try:
            return self.__dict__["_overloads"][name]
        except KeyError:
            raise AttributeError(name)


class Namespace:
    def __init__(self):
        self.packets = {}

    def __getattr__(self, name):
        try:
            return self.__dict__["packets"][name]
        except KeyError:
            raise AttributeError("'_OpNamespace' 'aten' object has no attribute '%s'" % name)


class ops:
    aten = Namespace()


for _text in SCHEMAS:
    _qualified = _text[len("aten::"):_text.index("(")]
    _op, _, _overload = _qualified.partition(".")
    ops.aten.packets.setdefault(_op, OpPacket())._overloads[_overload or "default"] = OpOverload(_qualified, _text)


class profiler:
    class ProfilerActivity:
        CPU = "CPU"
        CUDA = "CUDA"

    class profile:
        def __init__(self, activities, record_shapes=False):
            assert record_shapes, "replay.py profiles with record_shapes=True"
            self.activities = activities

        def __enter__(self):
            return self

        def __exit__(self, *_):
            return False

        def export_chrome_trace(self, path):
            with open(path, "w", encoding="utf-8") as handle:
                json.dump({"traceEvents": [], "activities": self.activities}, handle)

    class record_function:
        def __init__(self, name):
            assert name.startswith("ProfilerStep#"), name

        def __enter__(self):
            return self

        def __exit__(self, *_):
            return False
