"""`solve`: a solver run by name under a budget, its solution validated and, for the solvers that
play the game, placed physically (`placer.place`)."""

from __future__ import annotations

import contextlib
import dataclasses
import time

from jaxmmap.core.clock import Overran, within, without_grace
from jaxmmap.core.problem import Problem
from jaxmmap.core.rules import Rules
from jaxmmap.core.validator import BUG, check_solution, relabelled
from jaxmmap.solvers._options import check_options, solver_options
from jaxmmap.solvers._registry import PLACED, SOLVERS, rules_for
from jaxmmap.solvers.base import Result
from jaxmmap.solvers.placer import FRESH, PLACE_RESERVE_S, PLACE_SHARE, RESTARTS, place_nothing
from jaxmmap.solvers.placer import place as place_solution

#: A placed solver still running at `OVERRUN` times its budget plus `OVERRUN_S` seconds (a compile
#: cannot be cut, and one can take longer than the budget on a busy machine) is left behind, and
#: `solve` returns the placement of no decisions: the budget's promise, 1.1x plus 10 s, holds with
#: the time to check and write it.
OVERRUN, OVERRUN_S = 1.05, 3.0
#: What a solver cut off had found is placed (its decisions, without local moves) where this many
#: times the placement of no decisions' seconds, and `HELD_SLACK_S` more for the checks and the
#: writing, fit before the promise's 1.1x plus 10 s (the decisions' placements cost about 2.5x
#: that placement: 4.95 s against 1.95 s at 24,143 buffers).
HELD_PLACEMENTS, HELD_SLACK_S = 3.0, 3.0


def solve(problem: Problem, solver: str, *, budget_s: float = 10.0, seed: int = 0,
          rules: Rules | None = None, place: bool | None = None, **options) -> Result:
    """Runs the solver `solver` under a wall-clock budget; its solution is validated. An unknown
    solver or option, or a budget that is not positive and finite, raises `UserError`. `rules`
    (default: the solver's own game, `rules_for(problem, solver)`) are the game's; a game solver's
    `info["played"]` names it (`Rules.placement`).

    `place` (default: for the solvers in `PLACED`; False: their game's own solution, a
    `place_share` of theirs 0 unless given): keep `PLACE_SHARE` of the budget (at most
    `PLACE_RESERVE_S`) for `placer.place`, which places the solution's decisions physically
    and grows them, its local moves descending again from the start up to `placer.RESTARTS` times
    while the reserve lasts (a solution the placer made, "<solver>+placed", is not placed again:
    the moves go on from it). With `placer.FRESH` the moves start instead from the placement of
    no decisions where that is higher, or from that with a network's guide read in (`Result.guide`,
    the generalist's; `info["placed_start"]`: "decisions", "nothing" or "guide", or "game" where
    no placement beat the game's own solution; "nothing": the solver's decisions were then worth
    less than none); that placement is made first, before the
    solver runs (`placer.place_nothing`, under 2 s at 24,000 buffers), so that it is the
    floor of the result even where the solver leaves the placer no time, and the games that would
    end it Drop-first end with the solver's budget, not after a grace (`core.clock.without_grace`).
    The better of the placed solution and the solver's own is returned, `Result.raw` is the
    solver's own solution (`info["raw_return"]` its game's return), and the trace is what `solve`
    held, in seconds from its start: the placement of no decisions from when it was made, the
    solver's improvements over it, and the placed solution."""
    check_options(solver, options, budget_s)
    rules = rules_for(problem, solver) if rules is None else rules
    place = solver in PLACED if place is None else place
    if not place and solver in PLACED and "place_share" in solver_options(solver):
        # (a solver that places its best game itself, `muzero`: unplaced, it keeps its game's own)
        options = {"place_share": 0.0, **options}
    start = time.perf_counter()
    reserve = min(PLACE_SHARE * budget_s, PLACE_RESERVE_S) if place else 0.0
    # (a game cut at its deadline, or one that took the placer's time, places lower than this)
    nothing = place_nothing(problem, rules=rules, budget_s=reserve) if place and FRESH else None
    began = time.perf_counter() - start  # (the solver's clock starts here: its trace is shifted by it)
    # (and that placement's seconds tell whether a cut-off solver's game can be placed in time)
    floor = () if nothing is None else ((began, float(nothing.ret)),)  # (held from here on)
    own = max(budget_s - reserve - began, 1e-3)
    with without_grace() if nothing is not None else contextlib.nullcontext():  # (that placement is
        # the first solution the grace of the games is for)
        run = lambda: SOLVERS[solver](problem, own, seed, rules=rules, **options)  # noqa: E731
        if nothing is None:
            result = run()
        else:  # the placement of no decisions is written where the solver overruns its budget
            try:
                result = within(run, OVERRUN * budget_s + OVERRUN_S - (time.perf_counter() - start))
            except Overran as cut:
                return _overran(problem, rules, solver, nothing, cut.best, start, budget_s, floor, began)
    check_solution(problem, result.solution, what=f"the {solver} solver's solution (a bug in that solver)",
                   allow_nocopy_move=rules.nocopy_offset == "lowest", hint=BUG)
    if solver in PLACED:  # (a game solver: the game it played)
        result = dataclasses.replace(result, info={**result.info, "played": rules.placement})
    if not place:
        return result
    left = budget_s - (time.perf_counter() - start)
    # a solution the placer made already (`muzero`'s placed rounds) is not placed again: the moves
    # go on from it
    placed = place_solution(problem, result.solution, rules=rules, budget_s=max(left, 1e-3), seed=seed,
                            restarts=RESTARTS, replan=not result.solution.solver.endswith("+placed"),
                            fresh=FRESH if nothing is None else nothing, guide=result.guide, exact=True)
    seconds = time.perf_counter() - start
    # (the game's own return: a solver that places its game itself, `muzero`, says it as "game")
    info = {**result.info, "raw_return": float(result.info.get("game", result.solution.ret))}
    trace = (*floor, *((t + began, r) for t, r in result.trace))
    if placed is not result.solution:
        trace = (*trace, (seconds, float(placed.ret)))
        info["placed"] = placed.metadata.get("moves")
        info["placed_start"] = placed.metadata.get("start")
    else:  # no placement beat the solver's own solution: its game's, or where the solver placed it
        # itself (`muzero`), the start of that placement
        made = result.solution.solver.endswith("+placed")
        info["placed_start"] = result.solution.metadata.get("start", "game") if made else "game"
    return dataclasses.replace(result, solution=placed, trace=_best_so_far(trace), seconds=seconds, info=info,
                               raw=result.solution)


def _best_so_far(points) -> tuple:
    """The (seconds, return) points, in time order, that beat every earlier one: the trace of what
    `solve` held, the placement of no decisions (made before the solver ran) included."""
    kept, best = [], -float("inf")
    for t, r in sorted(points, key=lambda p: p[0]):
        if r > best:
            kept.append((t, r))
            best = r
    return tuple(kept)


def _overran(problem: Problem, rules: Rules, solver: str, nothing, held, start: float, budget_s: float,
             floor: tuple, nothing_s: float) -> Result:
    """The result of a solver that overran its budget (`OVERRUN`): the best of the best solution
    its clocks held (`held`, checked here), that solution's decisions placed without local moves
    (`placer.place(moves=0)`, where `HELD_PLACEMENTS` times `nothing_s`, the seconds the placement
    of no decisions took, fit in what the promise leaves) and the placement of no decisions
    (checked already), named as the solver's."""
    if held is not None:
        check_solution(problem, held, what=f"the {solver} solver's solution (a bug in that solver)",
                       allow_nocopy_move=rules.nocopy_offset == "lowest", hint=BUG)
    left = 1.1 * budget_s + 10.0 - HELD_SLACK_S - (time.perf_counter() - start)
    if held is None:
        solution, begun = nothing, "nothing"
    elif HELD_PLACEMENTS * nothing_s < left:
        placed = place_solution(problem, held, rules=rules, budget_s=left, moves=0, fresh=nothing)
        solution, begun = (held, "game") if placed is held else (placed, placed.metadata["start"])
    else:
        solution, begun = (held, "game") if held.ret > nothing.ret else (nothing, "nothing")
    solution = relabelled(solution, solver=solver if begun == "game" else f"{solver}+placed",
                          metadata={**nothing.metadata, "start": "nothing"} if solution is nothing else None)
    seconds = time.perf_counter() - start
    kept = {"game": "its best game so far", "nothing": "the placement of no decisions"}.get(
        begun, "its best game so far, placed without local moves")
    info = {"overran": f"the {solver} solver did not end within {OVERRUN:g}x its budget of {budget_s:g} s plus"
                       f" {OVERRUN_S:g} s (a compile cannot be cut): {kept} is written",
            "placed_start": begun, "played": rules.placement}
    if held is not None:
        info["raw_return"] = float(held.ret)
    return Result(solution=solution, trace=_best_so_far((*floor, (seconds, float(solution.ret)))), seconds=seconds,
                  info=info, raw=held)
