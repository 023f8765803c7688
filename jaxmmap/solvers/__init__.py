"""Solvers of the memory-mapping problem, behind one interface.

    result = jaxmmap.solvers.solve(problem, "random", budget_s=10, seed=0)
    result.solution, result.trace      # the best validated Solution; (seconds, best return) pairs

Every solver is `fn(problem, budget_s, seed, *, rules, **options) -> Result` (`base.Result`);
`solve` runs one by name and checks its solution with the independent validator before returning
it. For the solvers that play the game (`PLACED`), `solve` then places the solution's decisions
physically (`placer.place`, within the same budget): the result is never worse than the game's,
and `info["raw_return"]` keeps the game's own return. The solvers that need heavier libraries
(OR-Tools, evosax) are imported on first use.
`docs/solvers.md` describes them all.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import inspect
import json
import math
import time

from jaxmmap.core.clock import without_grace
from jaxmmap.core.files import UserError
from jaxmmap.core.problem import Problem
from jaxmmap.core.rules import Rules
from jaxmmap.core.validator import validate
from jaxmmap.solvers.base import Anytime, Refused, Result
from jaxmmap.solvers.exhaustive import exhaustive
from jaxmmap.solvers.heuristic import heuristic
from jaxmmap.solvers.pinning import pinning
from jaxmmap.solvers.placer import FRESH, PLACE_RESERVE_S, PLACE_SHARE, RESTARTS, place_nothing
from jaxmmap.solvers.placer import place as place_solution
from jaxmmap.solvers.simple import greedy, random_search


def _lazy(module: str, name: str):
    """`jaxmmap.solvers.<module>.<name>`, imported when first
    called."""
    module = f"jaxmmap.solvers.{module}"

    def load():
        return getattr(importlib.import_module(module), name)

    def run(problem, budget_s, seed, **options):
        return load()(problem, budget_s, seed, **options)

    run.load = load
    run.__name__ = run.__qualname__ = name
    run.__doc__ = f"`{module}.{name}` (imported on first use)."
    return run


SOLVERS = {
    "random": random_search,
    "greedy": greedy,
    "heuristic": heuristic,
    "pinning": pinning,
    "es": _lazy("evolution.es", "es"),
    "egrl": _lazy("evolution.egrl", "egrl"),
    "mcts": _lazy("agents", "mcts"),
    "muzero": _lazy("agents", "muzero"),
    "muzero-prod": _lazy("agents", "prod"),
    "generalist": _lazy("agents", "generalist"),
    "cpsat": _lazy("cpsat", "cpsat"),
    "exhaustive": exhaustive,
}

#: The solvers whose solutions `solve` places by default: those that play the game, whose own
#: placement follows the game's fixed rules (the heuristic, pinning and CP-SAT place physically).
PLACED = frozenset({"random", "greedy", "es", "egrl", "mcts", "muzero", "generalist"})

__all__ = ["PLACED", "SOLVERS", "Anytime", "InvalidSolution", "Refused", "Result", "check_options",
           "solve"]


class InvalidSolution(AssertionError):
    """A solver returned a solution the validator rejects (a bug in that solver)."""


def solver_options(solver: str) -> list[str]:
    """The keyword options the solver `solver` takes (besides `rules`): its keyword arguments,
    and the fields of its config where it takes `**options` (`fn.config_fields`)."""
    fn = SOLVERS[solver]
    fn = fn.load() if hasattr(fn, "load") else fn
    params = inspect.signature(fn).parameters.values()
    return [p.name for p in params if p.kind == p.KEYWORD_ONLY and p.name != "rules"] + \
        list(getattr(fn, "config_fields", ()))


def parse_options(items: list[str], *, per_solver: bool = False) -> dict[str, dict]:
    """`KEY=VALUE` (or `SOLVER.KEY=VALUE` with `per_solver`) strings as {solver: {key: value}}
    (solver "" without `per_solver`); values are JSON (`games=64`, `network={"embedding": 32}`),
    or plain strings when they are not."""
    out: dict[str, dict] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UserError(f"--option {item!r}: write KEY=VALUE" + (" with KEY as SOLVER.KEY (es.population=64)"
                                                                      if per_solver else " (games=64)"))
        if per_solver and "." not in key:
            raise UserError(f"--option {item!r}: name the solver, as SOLVER.KEY=VALUE (es.population=64)")
        solver, key = key.split(".", 1) if per_solver else ("", key)
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            pass
        out.setdefault(solver, {})[key] = value
    return out


def check_options(solver: str, options: dict, budget_s: float) -> None:
    """Raises `UserError` for an unknown solver, an option it does not take or a value of the
    wrong kind (against the option's default, the solver's `choices` and its own
    `check_options`), or a budget that is not a positive finite number of seconds (a budget
    must bound the time spent)."""
    if solver not in SOLVERS:
        raise UserError(f"unknown solver {solver!r}; choose one of: {', '.join(SOLVERS)}")
    known = solver_options(solver)
    for key in options:
        if key not in known:
            raise UserError(f"the solver {solver} has no option {key!r}; its options are: "
                            f"{', '.join(known) or 'none'}")
    fn = SOLVERS[solver]
    fn = fn.load() if hasattr(fn, "load") else fn
    defaults = {p.name: p.default for p in inspect.signature(fn).parameters.values()}
    defaults.update(getattr(fn, "config_defaults", {}))
    for key, value in options.items():
        _check_value(solver, key, value, defaults.get(key), getattr(fn, "choices", {}).get(key))
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if key in getattr(fn, "positive", ()) and value is not None and not (number and value > 0):  # (sizes, spreads)
            raise UserError(f"the solver {solver}'s option {key} takes a number > 0; got {value!r}")
        if key == "padding" and value is not None and not (
                isinstance(value, (list, tuple)) and len(value) == 3
                and all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value)):
            raise UserError(f"the solver {solver}'s option padding takes null or three whole numbers > 0"
                            f" (buffers, steps, latency tables); got {value!r}")
    if hasattr(fn, "check_options"):  # the solver's own checks (the agent's: its AgentConfig)
        try:
            fn.check_options(options)
        except (TypeError, ValueError) as e:
            raise UserError(f"the solver {solver}'s options: {e}") from None
    if isinstance(budget_s, bool) or not isinstance(budget_s, (int, float)) \
            or not math.isfinite(budget_s) or budget_s <= 0:
        raise UserError(f"the budget must be a positive, finite number of seconds, got {budget_s!r}")


def _check_value(solver: str, key: str, value, default, choices) -> None:
    """One option's value against its default's type (a whole number >= 0, a finite number, a
    flag, a string) and the solver's `choices` for it, as `UserError`."""
    if choices is not None:
        if value not in choices:
            raise UserError(f"the solver {solver}'s option {key} is one of "
                            f"{', '.join('null' if c is None else str(c) for c in choices)}; got {value!r}")
        return
    if isinstance(default, bool):
        ok, what = isinstance(value, bool), "true or false"
    elif isinstance(default, int):
        ok, what = isinstance(value, int) and not isinstance(value, bool) and value >= 0, "a whole number >= 0"
    elif isinstance(default, float):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        what = "a finite number"
    elif isinstance(default, str):
        ok, what = isinstance(value, str), "a string"
    else:
        return  # None, a config object or no default: the solver checks it
    if not ok:
        raise UserError(f"the solver {solver}'s option {key} takes {what}; got {value!r}")


def solve(problem: Problem, solver: str, *, budget_s: float = 10.0, seed: int = 0,
          rules: Rules = Rules(), place: bool | None = None, **options) -> Result:
    """Runs the solver `solver` under a wall-clock budget; its solution is validated. An unknown
    solver or option, or a budget that is not positive and finite, raises `UserError`.

    `place` (default: for the solvers in `PLACED`): keep `PLACE_SHARE` of the budget (at most
    `PLACE_RESERVE_S`) for `placer.place`, which places the solution's decisions physically
    and grows them, its local moves descending again from the start up to `placer.RESTARTS` times
    while the reserve lasts (a solution the placer made, "<solver>+placed", is not placed again:
    the moves go on from it). With `placer.FRESH` the moves start instead from the placement of
    no decisions where that is higher, or from that with a network's guide read in (`Result.guide`,
    the generalist's; `info["placed_start"]`: "decisions", "nothing" or "guide", or "game" where
    no placement beat the game's own solution; "nothing": the solver's decisions were then worth
    less than none); that placement is made first, before the
    solver runs (`placer.place_nothing`, 1.4-1.7 s at 24,000 buffers), so that it is the
    floor of the result even where the solver leaves the placer no time, and the games that would
    end it Drop-first end with the solver's budget, not after a grace (`core.clock.without_grace`).
    The better of the placed solution and the solver's own is returned, `Result.raw` is the
    solver's own solution (`info["raw_return"]` its game's return), and the trace ends with the
    placed one."""
    check_options(solver, options, budget_s)
    place = solver in PLACED if place is None else place
    start = time.perf_counter()
    reserve = min(PLACE_SHARE * budget_s, PLACE_RESERVE_S) if place else 0.0
    # (a game cut at its deadline, or one that took the placer's time, places lower than this)
    nothing = place_nothing(problem, rules=rules, budget_s=reserve) if place and FRESH else None
    own = max(budget_s - reserve - (time.perf_counter() - start), 1e-3)
    with without_grace() if nothing is not None else contextlib.nullcontext():  # (that placement is
        # the first solution the grace of the games is for)
        result = SOLVERS[solver](problem, own, seed, rules=rules, **options)
    report = validate(problem, result.solution, allow_nocopy_move=rules.nocopy_offset == "lowest")
    if not report.ok:
        raise InvalidSolution(f"{solver} returned an invalid solution:\n{report}")
    if not place:
        return result
    left = budget_s - (time.perf_counter() - start)
    # a solution the placer made already (`muzero`'s placed rounds) is not placed again: the moves
    # go on from it
    placed = place_solution(problem, result.solution, rules=rules, budget_s=max(left, 1e-3), seed=seed,
                            restarts=RESTARTS, replan=not result.solution.solver.endswith("+placed"),
                            fresh=FRESH if nothing is None else nothing, guide=result.guide)
    seconds = time.perf_counter() - start
    # (the game's own return: a solver that places its game itself, `muzero`, says it as "game")
    info = {**result.info, "raw_return": float(result.info.get("game", result.solution.ret))}
    trace = result.trace
    if placed is not result.solution:
        trace = (*trace, (seconds, float(placed.ret)))
        info["placed"] = placed.metadata.get("moves")
        info["placed_start"] = placed.metadata.get("start")
    else:  # (no placement beat the game's own solution)
        info["placed_start"] = "game"
    return dataclasses.replace(result, solution=placed, trace=trace, seconds=seconds, info=info,
                               raw=result.solution)
