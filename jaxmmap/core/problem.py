"""Problems and solutions: plain NumPy containers, their files, and the loader's checks.

This module knows nothing about how the game is played; the reference game, the JAX game and
the validator all read the same `Problem` and `Solution`. File formats: `docs/formats.md`.
"""

from __future__ import annotations

import dataclasses
import difflib
import gzip
import json
import math
import os
import zlib
from typing import Any

import numpy as np

from jaxmmap.core.files import UserError, write_json

PROBLEM_FORMAT = "jaxmmap.problem/2"
#: Older problem formats still read: version 1 has no `live_out` column (no tensor is marked).
OLD_PROBLEM_FORMATS = ("jaxmmap.problem/1",)
SOLUTION_FORMAT = "jaxmmap.solution/1"
MAX_TABLE_BUFFERS = 8
MAX_BYTES = 2 ** 62  # sizes and memory_size stay far from int64 overflow
#: The largest problem the game can play: its move counters and indices stay in int32, and the
#: grids of a few games fit a machine's memory. Larger files are refused when read.
MAX_BUFFERS = 1_000_000
MAX_FILE_BYTES = 256 * 2 ** 20  # JSON read from a file, unpacked (a 1,000,000-buffer problem: about 90 MiB)
MAX_STEPS = 1_000_000
MAX_COLUMNS = 65_536  # the finest grid (`Rules.columns`): a row of 8 KiB, 8 GiB of grid at 1,000,000 steps

ACTION_NAMES = ("copy", "nocopy", "drop")
COPY, NOCOPY, DROP = 0, 1, 2

_BUFFER_FIELDS = {  # name: (dtype, how one entry is parsed)
    "size": (np.int64, "int"),
    "is_output": (np.bool_, "bool"),
    "target_time": (np.int64, "int"),
    "tensor_id": (np.int64, "int"),
    "alias_id": (np.int64, "int"),
    "live_start": (np.int64, "int"),
    "live_end": (np.int64, "int"),
    "demand": (np.float64, "float"),
    "benefit": (np.float64, "float"),
    "live_out": (np.bool_, "bool"),
}

_SOLUTION_FIELDS = ("action", "offset", "alloc_start", "alloc_end", "copy_start", "copy_end")


class ProblemError(UserError):
    """A problem or solution file (or object) breaks a rule of its format."""


@dataclasses.dataclass(frozen=True)
class LatencyTable:
    """Measured latencies of one instruction (paper, Appendix A).

    Attributes:
      step: the instruction's logical step.
      buffers: int64[k] buffer indices, k <= 8.
      latency: float64[2**k]; entry m is the latency with buffers[i] in fast memory for every
        bit i set in m.
    """

    step: int
    buffers: np.ndarray
    latency: np.ndarray


@dataclasses.dataclass(frozen=True, eq=False)
class Problem:
    """One memory-mapping problem (see `docs/formats.md`). Arrays have one entry per buffer
    (`N`), in game order, except `supply` (one per step, `T`)."""

    name: str
    memory_size: int
    supply: np.ndarray  # float64[T]
    size: np.ndarray  # int64[N] bytes
    is_output: np.ndarray  # bool[N]
    target_time: np.ndarray  # int64[N]
    tensor_id: np.ndarray  # int64[N]
    alias_id: np.ndarray  # int64[N], -1 = none
    live_start: np.ndarray  # int64[N]
    live_end: np.ndarray  # int64[N]
    demand: np.ndarray  # float64[N]
    benefit: np.ndarray  # float64[N]
    latency_tables: tuple[LatencyTable, ...] = ()
    metadata: dict = dataclasses.field(default_factory=dict)
    # bool[N]: the tensor must be in slow memory when its life ends (a result of the program,
    # or a donated buffer), so it cannot stay pinned in fast memory. None: no tensor is.
    live_out: np.ndarray | None = None

    def __post_init__(self):
        if self.live_out is None:
            object.__setattr__(self, "live_out", np.zeros(np.shape(self.size)[:1], np.bool_))

    @property
    def num_buffers(self) -> int:
        return int(self.size.shape[0])

    @property
    def num_steps(self) -> int:
        return int(self.supply.shape[0])

    def __repr__(self) -> str:  # one line, not the arrays
        return (f"Problem({self.name!r}: {self.num_buffers:,} buffers, {np.unique(self.tensor_id).size:,} tensors, "
                f"{self.num_steps:,} steps, memory_size {self.memory_size:,} B, {len(self.latency_tables)} latency tables)")

    def buffer_columns(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name) for name in _BUFFER_FIELDS}

    def to_json(self) -> dict:
        out = {
            "format": PROBLEM_FORMAT,
            "name": self.name,
            "memory_size": int(self.memory_size),
            "supply": [float(x) for x in self.supply],
            "buffers": {k: v.tolist() for k, v in self.buffer_columns().items()},
        }
        if self.latency_tables:
            out["latency_tables"] = [
                {"step": int(t.step), "buffers": t.buffers.tolist(), "latency": t.latency.tolist()}
                for t in self.latency_tables
            ]
        out["metadata"] = self.metadata
        return out

    @classmethod
    def from_json(cls, data: Any) -> Problem:
        return _parse_problem(data)


@dataclasses.dataclass(frozen=True, eq=False)
class Solution:
    """A decision per buffer, with the placement it implies (see `docs/formats.md`).

    `action` is int64[N] with COPY=0, NOCOPY=1, DROP=2; offsets are in bytes; every other array
    is int64[N] with -1 for "none".
    """

    problem: str
    solver: str
    ret: float
    action: np.ndarray
    offset: np.ndarray
    alloc_start: np.ndarray
    alloc_end: np.ndarray
    copy_start: np.ndarray
    copy_end: np.ndarray
    rules: dict = dataclasses.field(default_factory=dict)
    metadata: dict = dataclasses.field(default_factory=dict)

    @property
    def num_buffers(self) -> int:
        return int(self.action.shape[0])

    def __repr__(self) -> str:  # one line, not the arrays
        c, n, d = np.bincount(np.asarray(self.action, np.int64).reshape(-1).clip(0, 3), minlength=4)[:3]
        return f"Solution({self.problem!r} by {self.solver}: return {self.ret:.6g}; Copy {c:,}, NoCopy {n:,}, Drop {d:,})"

    def to_json(self) -> dict:
        cols = {name: getattr(self, name).tolist() for name in _SOLUTION_FIELDS}
        cols["action"] = [ACTION_NAMES[a] for a in self.action]
        return {
            "format": SOLUTION_FORMAT,
            "problem": self.problem,
            "solver": self.solver,
            "return": float(self.ret),
            "rules": self.rules,
            "buffers": cols,
            "metadata": self.metadata,
        }

    @classmethod
    def from_json(cls, data: Any) -> Solution:
        return _parse_solution(data)


# ----------------------------------------------------------------------------- files


def read_json(path: str | os.PathLike) -> Any:
    """A JSON file (gzipped for `.gz`), read as a stream and refused past `MAX_FILE_BYTES`
    unpacked, before they are all in memory (a small gzip can unpack to gigabytes)."""
    path = os.fspath(path)
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise ProblemError(f"{path}: more than {MAX_FILE_BYTES // 2 ** 20:,} MiB of JSON"
                               f"{' once unpacked' if path.endswith('.gz') else ''}; refused")
        return json.loads(data.decode("utf-8"))
    except json.JSONDecodeError as e:
        raise ProblemError(f"{path}: not valid JSON ({e})") from None
    except (OSError, EOFError, UnicodeDecodeError, zlib.error) as e:
        raise ProblemError(f"{path}: cannot read ({e})") from None
    except (ValueError, RecursionError) as e:  # huge integers, absurd nesting
        raise ProblemError(f"{path}: not a usable JSON document ({e})") from None


def load_problem(path: str | os.PathLike) -> Problem:
    """Reads and checks a problem file (`.json` or `.json.gz`). Raises `ProblemError`."""
    return _parse_problem(read_json(path), where=os.fspath(path))


def save_problem(problem: Problem, path: str | os.PathLike) -> None:
    """Writes a checked problem atomically (`.json.gz` is gzipped, byte-for-byte reproducible)."""
    check_problem(problem)
    write_json(path, problem.to_json())


def load_solution(path: str | os.PathLike) -> Solution:
    """Reads a solution file and checks its form (not its validity: see `validate`)."""
    return _parse_solution(read_json(path), where=os.fspath(path))


def save_solution(solution: Solution, path: str | os.PathLike) -> None:
    """Writes a solution atomically."""
    write_json(path, solution.to_json())


# ----------------------------------------------------------------------------- parsing


def _fail(where: str, msg: str) -> None:
    raise ProblemError(f"{where}: {msg}" if where else msg)


def _column(cols: dict, name: str, kind: str, n: int | None, prefix: str) -> np.ndarray:
    if name not in cols:
        raise ProblemError(f"{prefix}{name}: missing")
    values = cols[name]
    if not isinstance(values, list):
        raise ProblemError(f"{prefix}{name}: expected a list, got {type(values).__name__}")
    if n is not None and len(values) != n:
        raise ProblemError(f"{prefix}{name}: has {len(values)} entries, expected {n}")
    for i, v in enumerate(values):
        ok, want = {
            "int": (isinstance(v, int) and not isinstance(v, bool), "an integer"),
            "bool": (isinstance(v, bool), "true or false"),
            "float": (isinstance(v, (int, float)) and not isinstance(v, bool), "a number"),
            "action": (v in ACTION_NAMES, "one of copy, nocopy, drop"),
        }[kind]
        if not ok:
            raise ProblemError(f"{prefix}{name}[{i}]: expected {want}, got {v!r}")
    if kind == "action":
        return np.asarray([ACTION_NAMES.index(v) for v in values], dtype=np.int64)
    dtype = {"int": np.int64, "bool": np.bool_, "float": np.float64}[kind]
    try:
        return np.asarray(values, dtype=dtype).reshape(len(values))
    except OverflowError:
        raise ProblemError(f"{prefix}{name}: an entry is out of range") from None


def _check_keys(obj: dict, known, prefix: str) -> None:
    """Refuses a field the format does not define (a typo would otherwise be dropped silently)."""
    unknown = [k for k in obj if k not in known]
    if unknown:
        k = unknown[0]
        close = difflib.get_close_matches(str(k), list(known), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else f"; the fields are {', '.join(known)}"
        more = f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else ""
        raise ProblemError(f"{prefix}{k}: unknown field{more}{hint} (free-form data goes in metadata)")


def _check_header(data: Any, kind: str, fmt: str, keys: tuple[str, ...], where: str,
                  optional: tuple[str, ...] = ()) -> None:
    if not isinstance(data, dict):
        _fail(where, f"a {kind} must be a JSON object")
    if data.get("format") != fmt:
        _fail(where, f"format: expected {fmt!r}, got {data.get('format')!r}")
    for key in keys:
        if key not in data:
            _fail(where, f"{key}: missing")
    _check_keys(data, ("format",) + keys + optional, f"{where}: " if where else "")


def _parse_problem(data: Any, where: str = "") -> Problem:
    fail = lambda msg: _fail(where, msg)

    version = data.get("format") if isinstance(data, dict) else None
    fmt = version if version in OLD_PROBLEM_FORMATS else PROBLEM_FORMAT
    _check_header(data, "problem", fmt, ("name", "memory_size", "supply", "buffers"), where,
                  ("latency_tables", "metadata"))
    if not isinstance(data["name"], str):
        fail("name: expected a string")
    mem = data["memory_size"]
    if not isinstance(mem, int) or isinstance(mem, bool):
        fail(f"memory_size: expected an integer, got {mem!r}")
    if not isinstance(data["buffers"], dict):
        fail("buffers: expected an object of columns")
    try:
        supply = _column({"supply": data["supply"]}, "supply", "float", None, "")
        cols = data["buffers"]
        known = [k for k in _BUFFER_FIELDS if not (k == "live_out" and fmt in OLD_PROBLEM_FORMATS)]
        _check_keys(cols, known, "buffers.")
        n = len(cols["size"]) if isinstance(cols.get("size"), list) else None
        if n is not None and n > MAX_BUFFERS:
            raise ProblemError(f"buffers: {n:,} buffers, more than the {MAX_BUFFERS:,} the game can"
                               " play; split the program")
        if len(supply) > MAX_STEPS:
            raise ProblemError(f"supply: {len(supply):,} steps, more than the {MAX_STEPS:,} the game"
                               " can play; split the program")
        arrays = {name: _column(cols, name, kind, n, "buffers.")
                  for name, (_, kind) in _BUFFER_FIELDS.items()
                  if not (name == "live_out" and fmt in OLD_PROBLEM_FORMATS)}
        tables = _parse_tables(data.get("latency_tables", []))
    except ProblemError as e:
        fail(str(e))
    metadata = data.get("metadata", {})
    if not isinstance(metadata, dict):
        fail("metadata: expected an object")
    problem = Problem(name=data["name"], memory_size=mem, supply=supply,
                      latency_tables=tables, metadata=metadata, **arrays)
    try:
        check_problem(problem)
    except ProblemError as e:
        fail(str(e))
    return problem


def _parse_tables(raw: Any) -> tuple[LatencyTable, ...]:
    if not isinstance(raw, list):
        raise ProblemError("latency_tables: expected a list")
    tables = []
    for j, t in enumerate(raw):
        p = f"latency_tables[{j}]."
        if not isinstance(t, dict):
            raise ProblemError(f"latency_tables[{j}]: expected an object")
        _check_keys(t, ("step", "buffers", "latency"), p)
        step = t.get("step")
        if not isinstance(step, int) or isinstance(step, bool):
            raise ProblemError(f"{p}step: expected an integer, got {step!r}")
        bufs = _column(t, "buffers", "int", None, p)
        lat = _column(t, "latency", "float", None, p)
        tables.append(LatencyTable(step=step, buffers=bufs, latency=lat))
    return tuple(tables)


def _parse_solution(data: Any, where: str = "") -> Solution:
    fail = lambda msg: _fail(where, msg)

    _check_header(data, "solution", SOLUTION_FORMAT, ("problem", "solver", "return", "buffers"), where,
                  ("rules", "metadata"))
    ret = data["return"]
    if not isinstance(ret, (int, float)) or isinstance(ret, bool) or not math.isfinite(ret):
        fail(f"return: expected a finite number, got {ret!r}")
    for key in ("problem", "solver"):
        if not isinstance(data[key], str):
            fail(f"{key}: expected a string, got {data[key]!r}")
    for key in ("rules", "metadata"):
        if not isinstance(data.get(key, {}), dict):
            fail(f"{key}: expected an object")
    _check_rules(data.get("rules", {}), fail)
    cols = data["buffers"]
    if not isinstance(cols, dict):
        fail("buffers: expected an object of columns")
    try:
        _check_keys(cols, _SOLUTION_FIELDS, "buffers.")
        n = len(cols["action"]) if isinstance(cols.get("action"), list) else None
        arrays = {name: _column(cols, name, "action" if name == "action" else "int", n, "buffers.")
                  for name in _SOLUTION_FIELDS}
    except ProblemError as e:
        fail(str(e))
    return Solution(problem=data["problem"], solver=data["solver"], ret=float(ret),
                    rules=data.get("rules", {}), metadata=data.get("metadata", {}), **arrays)


def _check_rules(rules: dict, fail) -> None:
    """A solution's `rules` (what `Rules.to_json` writes): known keys, values of their kind."""
    one_of = lambda *names: (" or ".join(repr(n) for n in names), lambda v: v in names)  # noqa: E731
    kinds = {"columns": (f"a whole number in [1, {MAX_COLUMNS:,}]", lambda v: type(v) is int and 1 <= v <= MAX_COLUMNS),
             "nocopy_offset": one_of("same", "lowest"), "placement": one_of("grid", "deferred"), "output_nocopy":
             ("true or false", lambda v: isinstance(v, bool)), "copy_supply": one_of("near", "early", "edf"),
             "infeasible_penalty": ("a finite number >= 0", lambda v: type(v) in (int, float) and 0 <= v < math.inf)}
    for key, value in rules.items():
        if key not in kinds:
            near = difflib.get_close_matches(key, kinds, n=1)
            fail(f"rules: unknown field {key!r}" + (f" (did you mean {near[0]!r}?)" if near else "")
                 + f"; the fields are {', '.join(kinds)}")
        if not kinds[key][1](value):
            fail(f"rules.{key}: expected {kinds[key][0]}, got {value!r}")


# ----------------------------------------------------------------------------- checks


def check_problem(p: Problem) -> None:
    """Raises `ProblemError` naming the first broken rule (field and index)."""
    if not 0 < p.memory_size <= MAX_BYTES:
        raise ProblemError(f"memory_size: must be in [1, 2**62], got {p.memory_size}")
    T, N = p.num_steps, p.num_buffers
    if N > MAX_BUFFERS or T > MAX_STEPS:
        raise ProblemError(f"{N:,} buffers and {T:,} steps: the game plays at most {MAX_BUFFERS:,} of"
                           f" each; split the program")
    if T == 0:
        raise ProblemError("supply: the program has no steps")
    bad = np.flatnonzero(~np.isfinite(p.supply) | (p.supply < 0))
    if bad.size:
        raise ProblemError(f"supply[{bad[0]}]: must be finite and >= 0, got {p.supply[bad[0]]}")
    for name, arr in p.buffer_columns().items():
        if arr.shape != (N,):
            raise ProblemError(f"buffers.{name}: has {arr.shape[0]} entries, expected {N}")

    def first(mask, name, msg):
        idx = np.flatnonzero(mask)
        if idx.size:
            i = int(idx[0])
            raise ProblemError(f"buffers.{name}[{i}]: {msg(i)}")

    first((p.size < 0) | (p.size > MAX_BYTES), "size", lambda i: f"must be in [0, 2**62], got {p.size[i]}")
    first((p.target_time < 0) | (p.target_time >= T), "target_time",
          lambda i: f"{p.target_time[i]} is outside the program's steps [0, {T - 1}]")
    first(np.diff(p.target_time, prepend=0) < 0, "target_time",
          lambda i: f"buffers are out of order: {p.target_time[i]} after {p.target_time[i - 1]}"
          " (target_time must be non-decreasing)")
    first(p.tensor_id < 0, "tensor_id", lambda i: f"must be >= 0, got {p.tensor_id[i]}")
    first(p.alias_id < -1, "alias_id", lambda i: f"must be >= -1, got {p.alias_id[i]}")
    first((p.live_start < 0) | (p.live_end >= T) | (p.live_start > p.live_end), "live_start",
          lambda i: f"live range [{p.live_start[i]}, {p.live_end[i]}] is not inside [0, {T - 1}]")
    first((p.live_start > p.target_time) | (p.live_end < p.target_time), "live_start",
          lambda i: f"live range [{p.live_start[i]}, {p.live_end[i]}] does not contain"
          f" target_time {p.target_time[i]}")
    first(~np.isfinite(p.demand) | (p.demand < 0), "demand",
          lambda i: f"must be finite and >= 0, got {p.demand[i]}")
    first(~np.isfinite(p.benefit), "benefit", lambda i: f"must be finite, got {p.benefit[i]}")
    with np.errstate(over="ignore"):  # (after the entries: a NaN is named, not taken for an overflow)
        for name, values in (("supply", p.supply), ("buffers.benefit", np.abs(p.benefit))):
            if not np.isfinite(np.sum(values)):
                raise ProblemError(f"{name}: the total overflows a float64")
    if p.live_out.dtype != np.bool_:
        raise ProblemError(f"buffers.live_out: expected booleans, got {p.live_out.dtype}")

    _check_tensors_and_groups(p)
    _check_tables(p)


def _check_tensors_and_groups(p: Problem) -> None:
    """A tensor: one live range and one size; written (by its output buffer) at most once, at
    the start of its live range, before any read. An alias group: one size."""
    first_of: dict[int, int] = {}
    for i, k in enumerate(p.tensor_id.tolist()):
        j = first_of.setdefault(k, i)
        if (p.live_start[i], p.live_end[i]) != (p.live_start[j], p.live_end[j]):
            raise ProblemError(
                f"buffers.live_start[{i}]: tensor {k} has live range [{p.live_start[i]},"
                f" {p.live_end[i]}] here but [{p.live_start[j]}, {p.live_end[j]}] at buffer {j}")
        if p.size[i] != p.size[j]:
            raise ProblemError(f"buffers.size[{i}]: tensor {k} has size {p.size[i]} here but"
                               f" {p.size[j]} at buffer {j}")
        if p.live_out[i] != p.live_out[j]:
            raise ProblemError(f"buffers.live_out[{i}]: tensor {k} is marked {bool(p.live_out[i])}"
                               f" here but {bool(p.live_out[j])} at buffer {j}; the mark is the tensor's")
        if p.is_output[i] and j != i:
            raise ProblemError(
                f"buffers.is_output[{i}]: tensor {k} is written here after buffer {j} already"
                " used it; a tensor is written at most once, by its first buffer")
        if p.is_output[i] and p.target_time[i] != p.live_start[i]:
            raise ProblemError(
                f"buffers.live_start[{i}]: tensor {k} is written at step {p.target_time[i]}, so its"
                f" live range must start there, not at {p.live_start[i]}")
    group_first: dict[int, int] = {}
    for i, k in enumerate(p.alias_id.tolist()):
        j = group_first.setdefault(k, i) if k >= 0 else i
        if p.size[i] != p.size[j]:
            raise ProblemError(
                f"buffers.size[{i}]: alias group {k} mixes sizes {p.size[j]} (buffer {j}) and"
                f" {p.size[i]}; members of a group share one allocation at one offset and must"
                " have one size")


def _check_tables(p: Problem) -> None:
    """Latency tables: 1 to MAX_TABLE_BUFFERS buffers of one step, 2**k finite latencies, a
    buffer in one table at most."""
    N = p.num_buffers
    in_table: dict[int, int] = {}
    for j, t in enumerate(p.latency_tables):
        pre = f"latency_tables[{j}]"
        k = t.buffers.shape[0]
        if not 1 <= k <= MAX_TABLE_BUFFERS:
            raise ProblemError(f"{pre}.buffers: lists {k} buffers, expected 1 to {MAX_TABLE_BUFFERS}")
        if t.latency.shape != (2 ** k,):
            raise ProblemError(f"{pre}.latency: has {t.latency.shape[0]} entries, expected 2**{k} = {2 ** k}")
        if not np.all(np.isfinite(t.latency)) or np.any(t.latency < 0):
            raise ProblemError(f"{pre}.latency: entries must be finite and >= 0")
        for b in t.buffers.tolist():
            if not 0 <= b < N:
                raise ProblemError(f"{pre}.buffers: buffer index {b} is outside [0, {N - 1}]")
            if p.target_time[b] != t.step:
                raise ProblemError(
                    f"{pre}.buffers: buffer {b} has target_time {p.target_time[b]}, not the table's"
                    f" step {t.step}")
            if b in in_table:
                raise ProblemError(f"{pre}.buffers: buffer {b} is already in latency_tables[{in_table[b]}]")
            in_table[b] = j
