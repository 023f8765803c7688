"""Problems by name and their summaries: what the command line, `train.py`, the benchmark scripts
and the notebooks share.

A PROBLEM argument is a file (`.json` or `.json.gz`), `bundled:NAME` for an instance shipped with
the package (`bundled("tiny")`), or `suite:NAME` for one of the benchmark suite
(`jaxmmap.core.suite.names()`); `open_problems` also expands suite patterns (`suite:resnet*`).
"""

from __future__ import annotations

import fnmatch
import importlib.resources

import numpy as np

from jaxmmap.core import suite
from jaxmmap.core.files import UserError
from jaxmmap.core.problem import Problem, ProblemError, load_problem
from jaxmmap.core.rules import MAX_COLUMNS, auto_columns, capacity_loss

__all__ = ["all_fast_return", "bundled", "columns_for", "open_problem", "open_problems", "pressure_warning",
           "summarize"]


def bundled(name: str = "tiny") -> Problem:
    """Loads the bundled problem `jaxmmap/data/<name>.json.gz`."""
    res = importlib.resources.files("jaxmmap").joinpath("data").joinpath(f"{name}.json.gz")
    if not res.is_file():
        raise FileNotFoundError(f"no bundled problem {name!r} (jaxmmap/data/{name}.json.gz)")
    with importlib.resources.as_file(res) as path:
        return load_problem(path)


def open_problem(arg: str) -> Problem:
    if arg.startswith("bundled:"):
        try:
            return bundled(arg.split(":", 1)[1])
        except FileNotFoundError as e:
            raise ProblemError(str(e)) from None
    if arg.startswith("suite:"):
        try:
            return suite.load(arg.split(":", 1)[1])
        except KeyError as e:
            raise ProblemError(e.args[0]) from None  # (str() of a KeyError quotes its message)
    return load_problem(arg)


def open_problems(args: list[str]) -> list[Problem]:
    """Problems from PROBLEM arguments; `suite:PATTERN` (fnmatch, e.g. `suite:*@gpu`) expands to
    every matching suite instance, `suite:train` and `suite:held-out` to a split of the suite."""
    out = []
    for arg in args:
        if arg in ("suite:" + split for split in suite.SPLITS):
            out += [suite.load(name) for name in suite.names(arg.split(":", 1)[1])]
        elif arg.startswith("suite:") and any(c in arg for c in "*?["):
            names = fnmatch.filter(suite.names(), arg.split(":", 1)[1])
            if not names:
                raise ProblemError(f"no suite instance matches {arg!r}")
            out += [suite.load(name) for name in names]
        else:
            out.append(open_problem(arg))
    return out


def columns_for(problem: Problem, columns: str | int) -> int:
    """`columns` as a number; "auto" picks the fewest that lose at most 5% to rounding."""
    if str(columns) == "auto":
        return auto_columns(problem)
    try:
        value = int(columns)
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_COLUMNS:
        raise UserError(f"--columns {columns}: give auto or a whole number in [1, {MAX_COLUMNS:,}]")
    return value


def summarize(problem: Problem, columns: int = 256) -> dict:
    """Sizes and pressure of a problem, as `jaxmmap check` prints them."""
    # bytes of live tensors per step, each tensor once (at its first buffer's live range)
    _, first = np.unique(problem.tensor_id, return_index=True)
    change = np.zeros(problem.num_steps + 1)
    np.add.at(change, problem.live_start[first], problem.size[first].astype(np.float64))
    np.add.at(change, problem.live_end[first] + 1, -problem.size[first].astype(np.float64))
    live = np.cumsum(change)[:problem.num_steps] if problem.num_steps else np.zeros(1)
    aliases = problem.alias_id[problem.alias_id >= 0]
    return {
        "name": problem.name, "buffers": problem.num_buffers, "steps": problem.num_steps,
        "tensors": int(first.size), "alias_groups": int(np.unique(aliases).size),
        "aliased_buffers": int(aliases.size),
        "live_out_tensors": int(np.unique(problem.tensor_id[problem.live_out]).size),
        "size_unit": "bytes", "time_unit": problem.metadata.get("time_unit", "problem units"),
        "memory_size": problem.memory_size,
        "peak_live_bytes": int(round(live.max())), "memory_pressure": float(round(live.max()) / problem.memory_size),
        "total_supply": float(problem.supply.sum()), "total_demand": float(problem.demand.sum()),
        "total_benefit": float(problem.benefit.sum()), "all_fast_return": all_fast_return(problem),
        "latency_tables": len(problem.latency_tables),
        "capacity_loss": capacity_loss(problem, columns),
    }


def all_fast_return(problem: Problem) -> float:
    """The return with every buffer in fast memory (no solution can have more): the static
    benefits of the buffers of no latency table, and each table's L(nothing) - L(all)."""
    listed = np.zeros(problem.num_buffers, bool)
    gains = 0.0
    for table in problem.latency_tables:
        listed[np.asarray(table.buffers)] = True
        gains += float(table.latency[0] - table.latency[-1])
    return float(problem.benefit[~listed].sum()) + gains


def pressure_warning(summary: dict, bound: float | None = None) -> str | None:
    """One line when the problem is trivial (`summarize`'s figures): fast memory holds every
    tensor at once, or the LP upper `bound` on the return (when given) reaches the all-fast
    return, so nothing is left to decide. Else None."""
    peak, memory = summary["peak_live_bytes"], summary["memory_size"]
    fix = ("give fast memory as a fraction of the peak (import --memory-fraction 0.3, or"
           " from_jax(..., memory_fraction=0.3))")
    if peak <= memory:
        return (f"{summary['name']}: fast memory ({memory:,} bytes) holds every tensor at once (peak live"
                f" {peak:,} bytes): every solver can put everything in fast memory; {fix}")
    full = summary["all_fast_return"]
    if bound is not None and full > 0 and bound >= full * (1 - 1e-9):
        return (f"{summary['name']}: the LP bound on the return ({bound:.6g}) is the all-fast return: every"
                f" buffer can be in fast memory when it is used, so there is little to decide; {fix}")
    return None
