"""Local moves: ruin and recreate, around the heuristic's placer mode.

A move takes some placed work items (tensors, or alias groups whole) out of a solution's
decisions, places the rest again (`plan(decisions=...)`) and grows the plan (the uses left in
slow memory offered to the heuristic's own rules), so it swaps the items taken out for whatever
fits better. It is kept when the return rises. Three kinds of move take turns:

- the cheapest: the placed items with the least estimated benefit per byte-step, a fraction
  (`FRACTIONS`) of them;
- a window: every placed item live in a random window of steps (up to a fifth of the program);
- a random fraction of the placed items.

Taking out one item at a time, the least valuable first, rarely pays: the room one item frees is
seldom where a better one needs it. Larger and localized ruins do: they lift a game solver's
solution past the heuristic's where single removals do not (docs/decisions.md, The placer).

A noisy recreate (`noise` > 0): each move orders the work items by the benefit estimate times
a log-normal factor, `exp(noise * N(0, 1))` per buffer, so the same ruin can be recreated in
another order. With the fixed order the moves soon stop paying (docs/decisions.md, "Accepting
worse moves"). The placer plays them after its plain moves (`placer.place`); `NOISE` was chosen there, on the
training split and selection seeds (docs/solvers.md).

Deterministic: the moves come from a generator seeded with `seed`, so the result depends on the
time only through how many moves fit the deadline.
"""

from __future__ import annotations

import time

import numpy as np

from jaxmmap.core.problem import DROP, Problem, Solution
from jaxmmap.core.rules import Discretized, Rules
from jaxmmap.solvers.heuristic._items import SHARED, sums_like_numpy, work_item_groups
from jaxmmap.solvers.heuristic._plan import plan

__all__ = ["FRACTIONS", "MOVES", "NOISE", "improve", "removal_order"]

#: Local moves tried by default (`place`, the heuristic's final step).
MOVES = 64
#: Fractions of the placed items a "cheapest" or "random" move takes out.
FRACTIONS = (0.05, 0.1, 0.2, 0.4)
#: The placer's noise of the recreate's order (`improve(noise=...)`; the heuristic solver plays
#: without, as XLA's heuristic has no such search).
NOISE = 0.35


def removal_order(problem: Problem, d: Discretized, estimate: np.ndarray,
                  action: np.ndarray) -> list[np.ndarray]:
    """The placed work items (alias groups whole, other tensors whole), least estimated benefit
    per byte-step first (ties: the earlier item)."""
    members, buffers, cuts, area, first = _items(problem, d)
    if not members:
        return []
    placed = (action != DROP)[buffers]
    count = np.add.reduceat(placed.astype(np.int64), cuts)
    kept = np.flatnonzero(count > 0)
    if not kept.size:
        return []
    # each kept item's placed estimates summed as `np.sum` sums them alone, to the last bit (the
    # order that ties are broken in depends on it)
    values = estimate[buffers][placed]
    score = sums_like_numpy(values, np.concatenate([[0], np.cumsum(count[kept])[:-1]]), count[kept])
    order = kept[np.lexsort((first[kept], score / area[kept]))]
    return [members[j] for j in order.tolist()]


def _items(problem: Problem, d: Discretized):
    """(`work_item_groups`' members per item, their concatenation, where each item starts in it,
    area float64[G] (max size x life, at least 1), first buffer int64[G]), once per discretized
    problem (`_items.SHARED`: grouped again each move, they were a tenth of a move at 4,195
    buffers)."""
    shared = SHARED.setdefault(d, {})
    if "removal" not in shared:
        order, items = work_item_groups(problem, d)
        cuts = np.cumsum([0] + [len(m) for m in items[:-1]]).astype(np.int64)
        area = np.array([max(float(problem.size[m].max()) * float(problem.live_end[m].max()
                                                                   - problem.live_start[m].min() + 1), 1.0)
                         for m in items])
        shared["removal"] = (items, order, cuts, area, np.array([int(m[0]) for m in items], np.int64))
    return shared["removal"]


def _ruin(move: int, items: list[np.ndarray], problem: Problem,
          rng: np.random.Generator) -> list[np.ndarray]:
    """The items move number `move` takes out (its kind: `move % 3`, module docstring)."""
    kind = move % 3
    if kind == 0:
        fraction = FRACTIONS[rng.integers(len(FRACTIONS))]
        return items[:max(1, int(fraction * len(items)))]
    if kind == 1:
        steps = problem.num_steps
        a = int(rng.integers(steps))
        b = min(steps - 1, a + int(rng.integers(1, max(2, steps // 5))))
        return [m for m in items if problem.live_start[m].min() <= b and problem.live_end[m].max() >= a]
    fraction = FRACTIONS[rng.integers(len(FRACTIONS) - 1)]
    picked = rng.choice(len(items), max(1, int(fraction * len(items))), replace=False)
    return [items[j] for j in np.sort(picked)]


def improve(problem: Problem, rules: Rules, solution: Solution, *,
            prepared: tuple[Discretized, np.ndarray], deadline: float, moves: int | None = MOVES,
            patience: int | None = None, seed: int = 0, pins: str = "compare", noise: float = 0.0,
            **plan_options) -> tuple[Solution, list[int]]:
    """Tries at most `moves` local moves on `solution` (module docstring; None: no limit) until
    `deadline` (a `time.perf_counter()` value), or until `patience` moves in a row have not paid
    (None: no such stop). Returns the best solution found (`solution` itself when no move pays)
    and [moves kept, moves tried]. `prepared`: `(discretize(problem, rules),
    benefit_estimate(...))`. `noise`: the recreate's order noise (module docstring; 0: the
    heuristic's own order). `pins` and `plan_options` go to `plan` (its grow pass).

    A move starts only while the longest move so far still fits before the deadline: a plan the
    deadline cuts is thrown away, and it ends past the deadline: a placed solution landed after
    its budget."""
    d, estimate = prepared
    rng = np.random.default_rng(seed)
    best, kept, tried, since, longest = solution, 0, 0, 0, 0.0
    while ((moves is None or tried < moves) and (patience is None or since < patience)
           and time.perf_counter() + longest < deadline):
        began = time.perf_counter()
        items = removal_order(problem, d, estimate, best.action)
        if not items:
            break
        ruined = _ruin(tried, items, problem, rng)
        tried += 1
        since += 1
        if not ruined:  # a window where nothing is placed
            continue
        decisions = best.action.copy()
        decisions[np.concatenate(ruined)] = DROP
        order = prepared if not noise else (d, estimate * np.exp(noise * rng.standard_normal(estimate.shape)))
        candidate = plan(problem, rules, pins=pins, prepared=order, deadline=deadline,
                         decisions=decisions, **plan_options).solution
        longest = max(longest, time.perf_counter() - began)
        if candidate.ret > best.ret + 1e-12 and not candidate.metadata.get("stopped_early"):
            best, kept, since = candidate, kept + 1, 0
    return best, [kept, tried]
