"""The placer: a solution's decisions, placed with every freedom the validator allows.

The game places by fixed rules (buffer order, the lowest free offset, the latest copy start), so
a game solution's decisions are often worth more than the game's own placement of them. `place`
keeps the decisions (which uses are served from fast memory, by Copy or NoCopy) and places them
again with the heuristic's machinery (`heuristic.plan(decisions=...)`): best-fit offsets, alias
groups at one offset, copy windows chosen near the preferred overlap, the copy engine and the
supply checked exactly (earliest deadline first). Then it grows the plan: every use still in slow
memory is offered to the heuristic's own rules, in its order (benefit per sqrt(size)). Then,
while the budget lasts, local moves: take one placed work item (a tensor, or an alias group) out
of the decisions, the least valuable per byte-step first, place the rest and grow again; keep the
move when the return rises, and start over from the new plan.

The contract: the result is validated, and it is never worse than the input (the input is
returned when the placement does not beat it). Deterministic; a budget bounds it (a placement
still running when it ends stops placing and stays valid).

    placed = jaxmmap.place(problem, solution, budget_s=10)
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from jaxmmap.problem import DROP, Problem, Solution
from jaxmmap.rules import Rules, auto_columns, discretize
from jaxmmap.solvers.heuristic import _benefit_estimate, plan
from jaxmmap.validator import check_solution

__all__ = ["place"]


def _removal_order(problem: Problem, d, estimate: np.ndarray, action: np.ndarray) -> list[np.ndarray]:
    """The placed work items (alias groups whole, other tensors whole), least estimated benefit
    per byte-step first: the candidates of a local move."""
    placed = action != DROP
    key = np.where(problem.alias_id >= 0, d.group, -1 - d.tensor)
    order = np.argsort(key, kind="stable")
    items = np.split(order, np.flatnonzero(np.diff(key[order])) + 1) if key.size else []
    scored = []
    for members in items:
        if not placed[members].any():
            continue
        area = float(problem.size[members].max()) * float(
            problem.live_end[members].max() - problem.live_start[members].min() + 1)
        scored.append((float(estimate[members][placed[members]].sum()) / max(area, 1.0),
                       int(members[0]), members))
    scored.sort(key=lambda row: row[:2])
    return [members for _, _, members in scored]


def place(problem: Problem, solution: Solution, *, rules: Rules | None = None,
          budget_s: float = 10.0, grow: bool = True, moves: bool = True,
          max_moves: int | None = None) -> Solution:
    """`solution`'s decisions placed again, grown, and validated; never worse than `solution`.

    Args:
      problem: the problem.
      solution: a valid solution of it (refused with `validator.SolutionRejected` otherwise).
      rules: the grid the placement uses (its columns); default: the rules the solution was made
        under, else `Rules(columns=auto)`.
      budget_s: wall-clock seconds (> 0).
      grow: after placing the decisions, offer the uses left in slow memory to the heuristic.
      moves: then try local moves (module docstring) while the budget lasts.
      max_moves: try at most this many moves. The result depends on the time only through how
        many moves fit the budget: with `max_moves` reached first, it is deterministic.

    Returns the better of the placed solution and `solution`. A placed one has the solver
    `"<solver>+placed"` and metadata `placed_from` (the input's return), `placed_decisions` (how
    many of the input's placed uses the placement kept) and `moves` (local moves kept, tried).
    """
    start = time.perf_counter()
    if not budget_s > 0:
        raise ValueError(f"budget_s must be > 0, got {budget_s}")
    check_solution(problem, solution, what=f"the {solution.solver} solution to place")
    if rules is None:
        known = {k: v for k, v in (solution.rules or {}).items() if k in ("columns", "nocopy_offset",
                                                                           "output_nocopy")}
        rules = Rules(**known) if known else Rules(columns=auto_columns(problem))
    d = discretize(problem, rules)
    prepared = (d, _benefit_estimate(problem, d))
    deadline = start + budget_s

    def attempt(decisions):
        return plan(problem, rules, pins="compare", prepared=prepared, deadline=deadline,
                    decisions=decisions, grow=grow).solution

    placed = attempt(solution.action)
    kept_moves = tried = 0
    if moves and grow:
        improved = True
        while improved and time.perf_counter() < deadline:
            improved = False
            for members in _removal_order(problem, d, prepared[1], placed.action):
                if time.perf_counter() >= deadline or (max_moves is not None and tried >= max_moves):
                    break
                decisions = placed.action.copy()
                decisions[members] = DROP
                tried += 1
                candidate = attempt(decisions)
                if candidate.ret > placed.ret + 1e-12 and not candidate.metadata.get("stopped_early"):
                    placed, improved = candidate, True
                    kept_moves += 1
                    break
    if placed.ret <= solution.ret:
        return solution
    kept = int(((placed.action != DROP) & (solution.action != DROP)).sum())
    placed = dataclasses.replace(placed, solver=f"{solution.solver}+placed", metadata={
        **placed.metadata, "placed_from": float(solution.ret), "placed_decisions": kept,
        "moves": [kept_moves, tried], "seconds": time.perf_counter() - start})
    report = check_solution(problem, placed, what="the placed solution")  # a bug if it fails
    assert report.ok
    return placed
