"""The solvers by name (`SOLVERS`), those whose solutions `solve` places (`PLACED`), the game each
plays unless told otherwise (`GAMES`, `rules_for`), and the loader of the solvers that need
heavier libraries (OR-Tools, evosax, the agent), imported on first use."""

from __future__ import annotations

import importlib
from collections.abc import Callable

from jaxmmap.core.problem import Problem
from jaxmmap.core.rules import Rules, auto_columns
from jaxmmap.solvers.exhaustive import exhaustive
from jaxmmap.solvers.heuristic import heuristic
from jaxmmap.solvers.pinning import pinning
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


#: The game each game solver plays unless told otherwise (`Rules.placement`, `Rules.copy_supply`),
#: chosen by measurement (docs/decisions.md, "One game for every solver"): the deferred game for those
#: whose decisions, placed, start above the placement of no decisions on more held-out programs
#: there, and for muzero-prod, whose agent's placed game there was the better start on most of the
#: suite's programs with room. The others play the paper's grid: random (no better there), mcts (no
#: measurement tells) and the generalist, whose shipped network learned the grid
#: (`agent.generalist.trained_rules`).
DEFERRED = {"placement": "deferred", "copy_supply": "early"}
GAMES = {name: DEFERRED for name in ("greedy", "es", "egrl", "muzero", "muzero-prod")}


def rules_for(problem: Problem, solver: str | None = None, **given) -> Rules:
    """The rules `solver` plays `problem` by: the fewest grid columns that lose at most 5% to
    rounding (`auto_columns`), the solver's game (`GAMES`; the paper's grid for a solver not named
    there, or None), then the `Rules` fields `given` (those that are None are left out). A NoCopy
    given the lowest offset (`nocopy_offset="lowest"`, which the deferred game cannot keep) plays
    the grid unless a placement is given too."""
    given = {k: v for k, v in given.items() if v is not None}
    game = {} if given.get("nocopy_offset") == "lowest" else GAMES.get(solver, {})
    return Rules(**{"columns": auto_columns(problem), **game, **given})


def loaded(solver: str) -> Callable:
    """The function of the solver named `solver` (imported, where it is imported on first use)."""
    fn = SOLVERS[solver]
    return fn.load() if hasattr(fn, "load") else fn
