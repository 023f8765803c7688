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
   (`heuristic.benefit_estimate`): the better of its gain alone in an empty table and what it
   adds to the table's best completion. Units whose estimate is not positive are dropped.
3. **Placement.** Each unit in turn takes the lowest column offset free over all the steps it
   occupies (the game's placement rule), in the heuristic's own occupancy grid; a unit that does
   not fit is dropped. Zero-size buffers occupy no column and always fit.

The return is recomputed exactly (latency tables included) from the actions. Under
`Rules(output_nocopy=False)` nothing can be pinned and the solution drops every buffer.

The order is the heuristic package's (`heuristic.pin_order`), and so is the placement
(`heuristic.plan(problem, rules, pins="only")`, with its occupancy grid). The heuristic also
makes this plan, uses the greedy as the first phase of its pinning-first plans, and keeps the
best of its plans; so it returns at least as much as this solver.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from jaxmmap.core.problem import DROP, NOCOPY, Problem
from jaxmmap.core.rules import Rules
from jaxmmap.solvers.base import Anytime, Result
from jaxmmap.solvers.heuristic import plan
from jaxmmap.solvers.spec import declare


def pinning(problem: Problem, budget_s: float, seed: int, *, rules: Rules = Rules()) -> Result:
    """The pinning greedy (module docstring): deterministic (`seed` is unused) and one pass, so
    it ignores its budget. `info`: `pins_allowed` (False under `Rules(output_nocopy=False)`, with
    a `note`: the solution is then all Drop), `pinned_tensors`, `placed_buffers`."""
    del seed
    clock = Anytime(budget_s)
    p = plan(problem, rules, pins="only")
    clock.offer(dataclasses.replace(p.solution, solver="pinning"))
    info = {"pins_allowed": bool(rules.output_nocopy),
            "pinned_tensors": int(np.sum(problem.is_output & (p.action == NOCOPY))),
            "placed_buffers": int(np.sum(p.action != DROP))}
    if not rules.output_nocopy:
        info["note"] = "Rules(output_nocopy=False): no output may be pinned, so every buffer is dropped"
    return clock.result(**info)


declare(pinning, {})
