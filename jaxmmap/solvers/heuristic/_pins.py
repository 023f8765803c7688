"""What the pinning greedy pins, and in which order: units of tensors that stand or fall together
(alias groups joined by union-find), best estimated benefit per byte-step first. Used by the
heuristic's pinning-first plans and by the `pinning` solver (`solvers/pinning.py`)."""

from __future__ import annotations

import numpy as np

from jaxmmap.core.problem import Problem
from jaxmmap.core.rules import Discretized
from jaxmmap.core.unionfind import components

__all__ = ["pin_order", "unit_steps", "units"]


def units(problem: Problem, d: Discretized) -> list[np.ndarray]:
    """The buffers that stand or fall together: tensors joined by alias groups (union-find over
    dense tensor ids), each unit's buffers in file order, units in order of their first buffer."""
    aliased = problem.alias_id >= 0
    groups = (np.unique(d.tensor[d.group == g]) for g in np.unique(d.group[aliased]))
    root = components(int(d.tensor.max(initial=-1)) + 1, groups)[d.tensor]
    order = np.argsort(root, kind="stable")
    cuts = np.flatnonzero(np.diff(root[order])) + 1
    parts = np.split(order, cuts) if order.size else []
    return sorted(parts, key=lambda m: int(m[0]))


def unit_steps(problem: Problem, members: np.ndarray) -> np.ndarray:
    """The steps a pinned unit occupies: the union of its tensors' live ranges."""
    starts, ends = problem.live_start[members], problem.live_end[members]
    lo, hi = int(starts.min()), int(ends.max())
    if np.all(starts == lo) and np.all(ends == hi):  # one tensor, or tensors of one live range
        return np.arange(lo, hi + 1)
    occupied = np.zeros(hi - lo + 1, bool)
    for a, b in zip(starts.tolist(), ends.tolist()):
        occupied[a - lo:b - lo + 1] = True
    return lo + np.flatnonzero(occupied)


def pin_order(problem: Problem, d: Discretized, estimate: np.ndarray) -> list[np.ndarray]:
    """The pinnable units with a positive estimated benefit, best benefit per byte-step first
    (ties: the earlier unit). `estimate`: float64[N], the benefit of each buffer."""
    first_of = np.full(d.tensor_last.shape[0], -1, np.int64)  # each tensor's first buffer
    for i in range(problem.num_buffers - 1, -1, -1):
        first_of[d.tensor[i]] = i
    scored = []
    for members in units(problem, d):
        if not d.pinnable[first_of[np.unique(d.tensor[members])]].all():
            continue  # a program input or a live-out tensor: it cannot be pinned
        benefit = float(np.sum(estimate[members]))
        if benefit <= 0:
            continue
        area = float(problem.size[members[0]]) * unit_steps(problem, members).size
        scored.append((-benefit / max(area, 1.0), int(members[0]), members))
    scored.sort(key=lambda row: row[:2])
    return [members for _, _, members in scored]
