"""The solvers by name (`SOLVERS`), those whose solutions `solve` places (`PLACED`), and the
loader of the solvers that need heavier libraries (OR-Tools, evosax, the agent), imported on
first use."""

from __future__ import annotations

import importlib
from collections.abc import Callable

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


def loaded(solver: str) -> Callable:
    """The function of the solver named `solver` (imported, where it is imported on first use)."""
    fn = SOLVERS[solver]
    return fn.load() if hasattr(fn, "load") else fn
