"""What the CP-SAT model and the LP bound share: all-Drop, copy windows, alias groups, pins."""

from __future__ import annotations

import numpy as np

from jaxmmap.core.problem import DROP, Problem, Solution
from jaxmmap.core.rules import Rules
from jaxmmap.core.validator import validate


def all_drop(problem: Problem, solver: str = "cpsat") -> Solution:
    """Every buffer dropped: always valid; its return is the validator's (0 plus the latency
    tables' ``latency[0] - latency[0] = 0``)."""
    n = problem.num_buffers
    none = np.full(n, -1, np.int64)
    action = np.full(n, DROP, np.int64)
    ret = validate(problem, Solution(problem.name, solver, 0.0, action, none, none, none, none,
                                     none)).recomputed_return
    return Solution(problem=problem.name, solver=solver, ret=ret, action=action, offset=none.copy(),
                    alloc_start=none.copy(), alloc_end=none.copy(), copy_start=none.copy(),
                    copy_end=none.copy(), metadata={"num_buffers": n})


def _copy_from(problem: Problem) -> np.ndarray:
    """The first step a copy of each buffer's tensor may use (the validator's ``copy_early``):
    the step after the tensor is written, or live_start for a program input."""
    written = np.isin(problem.tensor_id, problem.tensor_id[problem.is_output])
    return (problem.live_start + written).astype(np.int64)


def _dense(ids: np.ndarray) -> np.ndarray:
    return np.unique(ids, return_inverse=True)[1].reshape(ids.shape).astype(np.int64)


def _alias_groups(problem: Problem) -> list[np.ndarray]:
    """The members (buffer indices, ascending) of every alias group with alias_id >= 0."""
    ids = problem.alias_id
    return [np.flatnonzero(ids == g) for g in np.unique(ids[ids >= 0])]


def _pin_ok(problem: Problem, rules: Rules) -> np.ndarray:
    """bool[N]: the buffers whose NoCopy may pin their tensor (docs/game.md, "NoCopy of an
    output"): outputs that are not live-out and fit in memory, when the rules allow pins."""
    return problem.is_output & ~problem.live_out & (problem.size <= problem.memory_size) & rules.output_nocopy
