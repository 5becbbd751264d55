"""tessel: compile ONNX models for the CPU or an OpenCL device, and run them.

    import numpy as np, tessel
    model = tessel.compile("model.onnx", threads=2)      # or tessel.load("model.tsl")
    out = model.run({"input": np.zeros((1, 3, 224, 224), np.float32)})
    out["logits"]                                        # a numpy array

Errors are exceptions of one line, all subclasses of tessel.Error (a
RuntimeError with .code, a tessel.ErrorCode) and of the builtin exception
Python code expects: a wrong dtype is a TypeError, a wrong shape or name a
ValueError, a missing file a FileNotFoundError. docs/python.md lists every
call and what it raises.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Union

import numpy as np

# libgomp (oneDNN's OpenMP runtime) reads its wait policy once, when it is
# loaded, which importing _tessel does: the CLI's spin count (docs/api.md,
# "Process settings"), unless the user chose a policy or libgomp is loaded
# already (then this changes nothing).
if "OMP_WAIT_POLICY" not in os.environ:
    os.environ.setdefault("GOMP_SPINCOUNT", "100000")

from . import _tessel
from ._tessel import (
    BenchResult,
    CheckReport,
    CheckResult,
    CorruptFileError,
    DeviceInfo,
    Error,
    ErrorCode,
    InternalError,
    InvalidArgumentError,
    MissingFileError,
    NotFoundError,
    PlanBuffer,
    PlanPool,
    Pool,
    ProfileRow,
    ResourceExhaustedError,
    SessionStats,
    ShapeMismatchError,
    TensorInfo,
    TuneResult,
    TypeMismatchError,
    UnsupportedError,
)

__version__: str = _tessel.__version__

__all__ = [
    "__version__",
    "compile",
    "tune",
    "load",
    "deserialize",
    "Model",
    "Session",
    "Plan",
    "InstancePlan",
    "Pool",
    "TensorInfo",
    "PlanPool",
    "PlanBuffer",
    "ProfileRow",
    "SessionStats",
    "BenchResult",
    "TuneResult",
    "DeviceInfo",
    "CheckReport",
    "CheckResult",
    "devices",
    "targets",
    "planner_algorithms",
    "plan_instance",
    "check",
    "read_tensor",
    "Error",
    "ErrorCode",
    "TypeMismatchError",
    "ShapeMismatchError",
    "InvalidArgumentError",
    "NotFoundError",
    "MissingFileError",
    "UnsupportedError",
    "CorruptFileError",
    "ResourceExhaustedError",
    "InternalError",
]

PathLike = Union[str, "os.PathLike[str]"]
Feeds = Mapping[str, Any]

# ---------------------------------------------------------------- options

# Each target's options: name -> the types it accepts.
_TARGET_OPTIONS: Dict[str, Dict[str, tuple]] = {
    "cpu": {"isa": (str,), "threads": (int,), "winograd": (str,)},
    "opencl": {
        "device": (str,),
        "tuning_cache": (str, os.PathLike),
        "tune_online": (bool,),
        "queue_window": (int,),
    },
    "reference": {},
}
_COMPILE_OPTIONS = (
    "input_shapes",
    "fusion",
    "planner",
    "pools",
    "planner_time_limit",
    "max_memory_bytes",
    "progress",
)


def _type_name(value: Any) -> str:
    return type(value).__name__


def _expect(caller: str, name: str, value: Any, types: tuple) -> None:
    # bool is an int to Python; not to an option that counts.
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
        wanted = " or ".join("path" if t is os.PathLike else t.__name__ for t in types)
        raise TypeError(f"{caller}: {name} must be {wanted}, got {_type_name(value)}")


def _path(caller: str, name: str, value: Any) -> str:
    if isinstance(value, (str, bytes, os.PathLike)):
        return os.fsdecode(os.fspath(value))
    raise TypeError(f"{caller}: {name} must be a path (str or os.PathLike), got {_type_name(value)}")


def _target(caller: str, target: Any, options: Dict[str, Any]) -> Any:
    """The target's options object from `target` and the keywords that belong
    to it (taken out of `options`)."""
    _expect(caller, "target", target, (str,))
    name = target
    if target.startswith("opencl:"):  # "opencl:1": the device, named in the target
        name = "opencl"
        options = dict(options, device=options.get("device", target))
    if name not in _TARGET_OPTIONS:
        raise ValueError(
            f"{caller}: unknown target '{target}' (this build has: {', '.join(targets())})"
        )
    allowed = _TARGET_OPTIONS[name]
    result = {"cpu": _tessel.CpuOptions, "opencl": _tessel.OpenClOptions,
              "reference": _tessel.ReferenceOptions}[name]()
    for key in list(options):
        if key in allowed:
            value = options.pop(key)
            _expect(caller, key, value, allowed[key])
            setattr(result, key, os.fspath(value) if key == "tuning_cache" else value)
        elif any(key in o for o in _TARGET_OPTIONS.values()):
            owner = next(t for t, o in _TARGET_OPTIONS.items() if key in o)
            raise TypeError(f"{caller}: {key} is an option of target '{owner}', not '{name}'")
    return result, options


def _pool(caller: str, p: Any) -> Pool:
    if isinstance(p, Pool):
        return p
    if isinstance(p, str):
        return Pool(p)
    if isinstance(p, Mapping):
        unknown = set(p) - {"name", "size_limit_bytes", "read_only"}
        if unknown or "name" not in p:
            raise TypeError(
                f"{caller}: a pool is a dict of name, size_limit_bytes, read_only; got keys "
                f"{', '.join(sorted(map(str, p)))}"
            )
        _expect(caller, "pool name", p["name"], (str,))
        _expect(caller, "size_limit_bytes", p.get("size_limit_bytes", 0), (int,))
        _expect(caller, "read_only", p.get("read_only", False), (bool,))
        return Pool(p["name"], p.get("size_limit_bytes", 0), p.get("read_only", False))
    if isinstance(p, tuple) and p and isinstance(p[0], str):
        return _pool(caller, dict(zip(("name", "size_limit_bytes", "read_only"), p)))
    raise TypeError(f"{caller}: pools must hold tessel.Pool, str, dict or tuple, got {_type_name(p)}")


def _compile_options(caller: str, options: Dict[str, Any]) -> Any:
    result = _tessel.CompileOptions()
    for key, value in options.items():
        if key not in _COMPILE_OPTIONS:
            raise TypeError(f"{caller}: unexpected keyword argument '{key}'")
        if key == "input_shapes":
            if not isinstance(value, Mapping):
                raise TypeError(f"{caller}: input_shapes must be a dict of shapes by input name, "
                                f"got {_type_name(value)}")
            shapes = {}
            for name, shape in value.items():
                _expect(caller, "an input_shapes key", name, (str,))
                if not isinstance(shape, Iterable) or isinstance(shape, str):
                    raise TypeError(f"{caller}: input_shapes['{name}'] must be a sequence of int")
                dims = list(shape)
                for d in dims:
                    _expect(caller, f"input_shapes['{name}'] dimensions", d, (int, np.integer))
                shapes[name] = [int(d) for d in dims]
            result.input_shapes = shapes
        elif key == "fusion":
            _expect(caller, key, value, (bool,))
            result.fusion = value
        elif key == "planner":
            _expect(caller, key, value, (str,))
            result.planner = value
        elif key == "pools":
            if isinstance(value, (str, Mapping)) or not isinstance(value, Iterable):
                raise TypeError(f"{caller}: pools must be a list, got {_type_name(value)}")
            result.pools = [_pool(caller, p) for p in value]
        elif key == "planner_time_limit":
            _expect(caller, key, value, (int, float))
            result.planner_time_limit_seconds = float(value)
        elif key == "max_memory_bytes":
            _expect(caller, key, value, (int,))
            result.max_memory_bytes = value
        elif key == "progress":
            result.set_progress(value)
    return result


# ---------------------------------------------------------------- models


class Plan:
    """The memory plan of a compiled model: its pools and where each buffer
    lives in them."""

    __slots__ = ("_plan",)

    def __init__(self, plan: Any) -> None:
        self._plan = plan

    @property
    def algorithm(self) -> str:
        return self._plan.algorithm

    @property
    def pools(self) -> List[PlanPool]:
        return list(self._plan.pools)

    @property
    def buffers(self) -> List[PlanBuffer]:
        return list(self._plan.buffers)

    @property
    def workspace_bytes(self) -> int:
        """The read-write pools together."""
        return self._plan.workspace_bytes

    @property
    def lower_bound_bytes(self) -> int:
        """No plan of these buffers needs less."""
        return self._plan.lower_bound_bytes

    def svg(self, path: Optional[PathLike] = None) -> str:
        """The workspace drawn as SVG (schedule across, address down); also
        written to `path` when given."""
        return _svg(self._plan.svg_text, path)

    def __repr__(self) -> str:
        return (f"Plan(algorithm='{self.algorithm}', pools={len(self._plan.pools)}, "
                f"buffers={len(self._plan.buffers)}, workspace_bytes={self.workspace_bytes}, "
                f"lower_bound_bytes={self.lower_bound_bytes})")


class InstancePlan:
    """A planning instance (CSV) planned by one algorithm (plan_instance)."""

    __slots__ = ("_plan",)

    def __init__(self, plan: Any) -> None:
        self._plan = plan

    algorithm = property(lambda self: self._plan.algorithm)
    pool_bytes = property(lambda self: self._plan.pool_bytes)
    lower_bound_bytes = property(lambda self: self._plan.lower_bound_bytes)
    buffers = property(lambda self: self._plan.buffers, doc="How many buffers.")
    offsets = property(lambda self: list(self._plan.offsets), doc="By buffer, in the file's order.")

    def svg(self, path: Optional[PathLike] = None) -> str:
        return _svg(self._plan.svg_text, path)

    def __repr__(self) -> str:
        return repr(self._plan)


def _svg(text: str, path: Optional[PathLike]) -> str:
    if path is not None:
        with open(_path("svg()", "path", path), "w", encoding="utf-8") as f:
            f.write(text)
    return text


class Session:
    """A model bound to its target's kernels and memory (Model.session).
    Sessions run concurrently; one session's runs from several threads run
    one after the other."""

    __slots__ = ("_s",)

    def __init__(self, session: Any) -> None:
        self._s = session

    def run(self, feeds: Feeds, outputs: Optional[Dict[str, np.ndarray]] = None
            ) -> Dict[str, np.ndarray]:
        """Runs on `feeds` (one array per input, by name) and returns the
        outputs by name. With `outputs` (arrays by output name, of the
        output's dtype and shape, C-contiguous and writeable), tessel writes
        into them in place and returns those same arrays, and only those."""
        return self._s.run(feeds, outputs)

    @property
    def inputs(self) -> List[TensorInfo]:
        return self._s.inputs

    @property
    def outputs(self) -> List[TensorInfo]:
        return self._s.outputs

    @property
    def description(self) -> str:
        """"cpu isa=avx512 threads=2", "opencl:0 NVIDIA H100 80GB HBM3"."""
        return self._s.describe()

    @property
    def stats(self) -> SessionStats:
        return self._s.stats

    def profile(self) -> List[ProfileRow]:
        """Where the time of the runs so far went, slowest first (a session
        made with profile=True)."""
        return self._s.profile()

    def profile_report(self) -> str:
        return self._s.profile_report()

    def benchmark(self, warmup: int = 5, repeat: int = 50) -> BenchResult:
        """Times `repeat` runs after `warmup`, on zero-filled inputs."""
        _expect("benchmark()", "warmup", warmup, (int,))
        _expect("benchmark()", "repeat", repeat, (int,))
        return self._s.benchmark(warmup, repeat)

    def tune(self, strategy: str = "race", budget_seconds: float = 0, rounds: int = 3,
             repeat: int = 10) -> TuneResult:
        """OpenCL: searches the work-group sizes of the model's launches,
        keeps them for this session and saves them in the tuning cache. The
        session must be made with profile=True (launches are timed by
        events); tessel.tune(model) does that."""
        o = _tessel.TuneOptions()
        _expect("tune()", "strategy", strategy, (str,))
        _expect("tune()", "budget_seconds", budget_seconds, (int, float))
        _expect("tune()", "rounds", rounds, (int,))
        _expect("tune()", "repeat", repeat, (int,))
        o.strategy, o.budget_seconds, o.rounds, o.repeat = strategy, float(budget_seconds), rounds, repeat
        return self._s.tune(o)

    def __repr__(self) -> str:
        return f"<tessel.Session {self.description}>"


class Model:
    """A compiled model (tessel.compile, tessel.load): immutable, shared by
    its sessions and threads."""

    __slots__ = ("_m", "_lock", "_default", "_plan", "__weakref__")

    def __init__(self, model: Any) -> None:
        if not isinstance(model, _tessel.Model):
            raise TypeError("tessel.Model is made by tessel.compile, tessel.load or "
                            "tessel.deserialize")
        self._m = model
        self._lock = threading.Lock()
        self._default: Optional[Session] = None
        self._plan: Optional[Plan] = None

    @property
    def inputs(self) -> List[TensorInfo]:
        return self._m.inputs

    @property
    def outputs(self) -> List[TensorInfo]:
        return self._m.outputs

    @property
    def target(self) -> str:
        """"cpu", "opencl" or "reference"."""
        return self._m.target

    @property
    def target_options(self) -> Dict[str, str]:
        """The options that decided its kernels ({"isa": "avx2", ...})."""
        return self._m.target_options

    @property
    def description(self) -> str:
        """"cpu isa=avx2 winograd=auto"."""
        return self._m.target_description

    @property
    def source(self) -> str:
        """The file it was compiled from."""
        return self._m.source

    @property
    def plan(self) -> Plan:
        if self._plan is None:
            self._plan = Plan(self._m.plan())
        return self._plan

    def summary(self) -> str:
        """The graph as text, each node with its kernel (tessel show)."""
        return self._m.summary()

    def save(self, path: PathLike) -> None:
        """Writes the compiled model (.tsl) atomically."""
        self._m.save(_path("save()", "path", path))

    def serialize(self) -> bytes:
        return self._m.serialize()

    def __reduce__(self) -> Any:
        return (deserialize, (self.serialize(),))

    def session(self, threads: int = 0, profile: bool = False,
                cache_dir: Optional[PathLike] = None,
                note: Optional[Callable[[str], Any]] = None) -> Session:
        """A new session: its own kernels' memory, runs concurrent with other
        sessions'. threads (CPU): 0, the model's; profile: record where the
        time goes; cache_dir (OpenCL): the program cache; note: called with
        one-line notes."""
        _expect("session()", "threads", threads, (int,))
        _expect("session()", "profile", profile, (bool,))
        o = _tessel.SessionOptions()
        o.threads, o.profile = threads, profile
        if cache_dir is not None:
            o.cache_dir = _path("session()", "cache_dir", cache_dir)
        o.set_note(note)
        return Session(self._m.prepare(o))

    def run(self, feeds: Feeds) -> Dict[str, np.ndarray]:
        """Runs a default session (made at the first call) on `feeds`.
        Concurrent calls run one after the other: use a session per thread
        to run in parallel."""
        session = self._default
        if session is None:
            with self._lock:
                if self._default is None:
                    self._default = self.session()
                session = self._default
        return session.run(feeds)

    def __repr__(self) -> str:
        ins = ", ".join(f"{i.name}: {i.type}{list(i.shape)}" for i in self.inputs)
        outs = ", ".join(f"{o.name}: {o.type}{list(o.shape)}" for o in self.outputs)
        return f"<tessel.Model {self.description} ({ins}) -> ({outs})>"


def compile(model: Union[PathLike, bytes], target: str = "cpu", **options: Any) -> Model:
    """Compiles an ONNX model (a path, or the file's bytes) for `target`
    ("cpu", "opencl", "opencl:N", "reference").

    CPU options: isa ("auto", "avx512", "avx2", "generic"), threads (0: one
    per physical core), winograd ("auto", "4x3", "off"). OpenCL options:
    device ("opencl:N" or part of its name), tuning_cache (path), tune_online
    (bool), queue_window (int). For any target: input_shapes ({input:
    shape}), fusion (bool), planner (str), pools (list of tessel.Pool, names,
    dicts or tuples), planner_time_limit (seconds), max_memory_bytes (int),
    progress (a callable taking a line of text)."""
    target_options, rest = _target("compile()", target, dict(options))
    compile_options = _compile_options("compile()", rest)
    if isinstance(model, (bytes, bytearray, memoryview)):
        return Model(_tessel.compile_bytes(bytes(model), target_options, compile_options))
    path = _path("compile()", "model", model)
    return Model(_tessel.compile(path, target_options, compile_options))


def load(path: PathLike) -> Model:
    """Reads a compiled model (.tsl)."""
    return Model(_tessel.load(_path("load()", "path", path)))


def deserialize(data: bytes) -> Model:
    """A model from the bytes Model.serialize made."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"deserialize(): data must be bytes, got {_type_name(data)}")
    return Model(_tessel.deserialize(bytes(data)))


def tune(model: Union[Model, PathLike], strategy: str = "race", budget_seconds: float = 0,
         rounds: int = 3, repeat: int = 10, **options: Any) -> TuneResult:
    """`tessel tune`: searches the OpenCL work-group sizes of a model's
    launches and saves them in the tuning cache, where later sessions find
    them. `model`: a Model compiled for OpenCL, a .tsl, or an ONNX file
    (compiled here for target "opencl" with `options`)."""
    if not isinstance(model, Model):
        path = _path("tune()", "model", model)
        model = load(path) if path.endswith(".tsl") else compile(path, target="opencl", **options)
    elif options:
        raise TypeError(f"tune(): options {sorted(options)} apply to an ONNX file, not a Model")
    return model.session(profile=True).tune(strategy=strategy, budget_seconds=budget_seconds, rounds=rounds,
                                repeat=repeat)


# ---------------------------------------------------------------- tools


def targets() -> List[str]:
    """The targets this build has ("reference", "cpu", "opencl")."""
    return _tessel.targets()


def devices() -> List[DeviceInfo]:
    """The OpenCL devices (empty without OpenCL)."""
    return _tessel.devices()


def planner_algorithms() -> List[str]:
    return _tessel.planner_algorithms()


def plan_instance(csv: PathLike, algorithm: str = "auto", time_limit: float = 0) -> InstancePlan:
    """Plans a planning instance (a CSV of buffers with sizes and lifetimes,
    as tessel plan --instance reads) with `algorithm`."""
    _expect("plan_instance()", "algorithm", algorithm, (str,))
    _expect("plan_instance()", "time_limit", time_limit, (int, float))
    return InstancePlan(_tessel.plan_instance(_path("plan_instance()", "csv", csv), algorithm,
                                              float(time_limit)))


def check(directory: PathLike, target: str = "cpu", rtol: float = 1e-3, atol: float = 1e-4,
          **options: Any) -> CheckReport:
    """tessel check: runs DIR/model.onnx on DIR/test_data_set_N/input_K.pb
    and compares with output_K.pb. `options` are the target's (threads,
    device, ...). The report is true when every output matches."""
    target_options, rest = _target("check()", target, dict(options))
    if rest:
        raise TypeError(f"check(): unexpected keyword argument '{next(iter(rest))}'")
    _expect("check()", "rtol", rtol, (int, float))
    _expect("check()", "atol", atol, (int, float))
    return _tessel.check(_path("check()", "directory", directory), target_options, float(rtol),
                         float(atol))


def read_tensor(path: PathLike) -> np.ndarray:
    """A tensor file of the ONNX test layout (TensorProto, .pb) as an array."""
    return _tessel.read_tensor(_path("read_tensor()", "path", path))
