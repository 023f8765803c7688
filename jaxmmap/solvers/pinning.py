"""The whole-lifetime pinning greedy: a baseline that never copies.

NoCopy of an output *pins* its tensor (docs/game.md, "NoCopy of an output: pinning"): the
instruction writes it straight into fast memory, where it stays for its whole live range
`[live_start, live_end]` at one offset, with no copy and no supply; every later buffer of the
tensor is then a NoCopy served from the pin. This solver pins greedily:

1. **Units.** What must be pinned together: tensors linked by alias groups (members of a group
   may be different tensors, e.g. an in-place update, and are all placed or all dropped, at one
   offset), found by union-find. A unit is pinnable if every tensor in it is written by an
   output buffer that may pin (`Discretized.pinnable`: the rules allow it and the tensor is not
   live-out); program inputs (no output buffer) can only reach fast memory by Copy, so units
   holding one are dropped.
2. **Order.** Benefit per byte-step: the sum of the estimated benefits of the unit's buffers
   over its size times the steps it occupies (the union of its tensors' live ranges).
   Decision: with latency tables a buffer's benefit is estimated as in the heuristic
   (`heuristic._benefit_estimate`): the better of its gain alone in an empty table and what it
   adds to the table's best completion. Units whose estimate is not positive are dropped.
3. **Placement.** Each unit in turn takes the lowest column offset free over all the steps it
   occupies (the game's placement rule), in the heuristic's own occupancy grid; a unit that does
   not fit is dropped. Zero-size buffers occupy no column and always fit.

The return is recomputed exactly (latency tables included) from the actions. Under
`Rules(output_nocopy=False)` nothing can be pinned and the solution drops every buffer.

This module says what to pin and in which order (`pin_order`); the placement is the heuristic's
(`heuristic.plan(problem, rules, pins="only")`, with its occupancy grid). The heuristic also
makes this plan, and uses the greedy as the first phase of its pinning-first plans, and keeps
the best of its plans; so it returns at least as much as this solver.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from jaxmmap.problem import DROP, NOCOPY, Problem
from jaxmmap.rules import Discretized, Rules
from jaxmmap.solvers.base import Anytime, Result


def units(problem: Problem, d: Discretized) -> list[np.ndarray]:
    """The buffers that stand or fall together: tensors joined by alias groups (union-find over
    dense tensor ids), each unit's buffers in file order, units in order of their first buffer."""
    parent = np.arange(int(d.tensor.max(initial=-1)) + 1)

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = int(parent[x])
        return x

    aliased = problem.alias_id >= 0
    for g in np.unique(d.group[aliased]):
        tensors = np.unique(d.tensor[d.group == g])
        root = find(int(tensors[0]))
        for k in tensors[1:]:
            parent[find(int(k))] = root
    root = np.array([find(int(k)) for k in d.tensor], np.int64)
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


def pinning(problem: Problem, budget_s: float, seed: int, *, rules: Rules = Rules()) -> Result:
    """The pinning greedy (module docstring): deterministic (`seed` is unused) and one pass, so
    it ignores its budget. `info`: `pins_allowed` (False under `Rules(output_nocopy=False)`, with
    a `note`: the solution is then all Drop), `pinned_tensors`, `placed_buffers`."""
    del seed
    from jaxmmap.solvers.heuristic import plan  # (the heuristic imports this module)

    clock = Anytime(budget_s)
    p = plan(problem, rules, pins="only")
    clock.offer(dataclasses.replace(p.solution, solver="pinning"))
    info = {"pins_allowed": bool(rules.output_nocopy),
            "pinned_tensors": int(np.sum(problem.is_output & (p.action == NOCOPY))),
            "placed_buffers": int(np.sum(p.action != DROP))}
    if not rules.output_nocopy:
        info["note"] = "Rules(output_nocopy=False): no output may be pinned, so every buffer is dropped"
    return clock.result(**info)
