"""Solvers of the memory-mapping problem, behind one interface.

    result = jaxmmap.solvers.solve(problem, "random", budget_s=10, seed=0)
    result.solution, result.trace      # the best validated Solution; (seconds, best return) pairs

Every solver is `fn(problem, budget_s, seed, *, rules, **options) -> Result` (`base.Result`);
`solve` runs one by name and checks its solution with the independent validator before returning
it. The solvers that need heavier libraries (OR-Tools, evosax) are imported on first use.
`docs/solvers.md` describes them all.
"""

from __future__ import annotations

import importlib

from jaxmmap.problem import Problem
from jaxmmap.rules import Rules
from jaxmmap.solvers.base import Anytime, Refused, Result
from jaxmmap.solvers.exhaustive import exhaustive
from jaxmmap.solvers.heuristic import heuristic
from jaxmmap.solvers.pinning import pinning
from jaxmmap.solvers.simple import greedy, random_search
from jaxmmap.validator import validate


def _lazy(module: str, name: str):
    """`<module>.<name>` (a module under jaxmmap.solvers unless dotted), imported when first
    called."""
    module = module if "." in module else f"jaxmmap.solvers.{module}"

    def run(problem, budget_s, seed, **options):
        fn = getattr(importlib.import_module(module), name)
        return fn(problem, budget_s, seed, **options)

    run.__name__ = run.__qualname__ = name
    run.__doc__ = f"`{module}.{name}` (imported on first use)."
    return run


SOLVERS = {
    "random": random_search,
    "greedy": greedy,
    "heuristic": heuristic,
    "pinning": pinning,
    "es": _lazy("es", "es"),
    "egrl": _lazy("egrl", "egrl"),
    "mcts": _lazy("jaxmmap.agent.search", "mcts"),
    "muzero": _lazy("jaxmmap.agent.loop", "muzero"),
    "muzero-prod": _lazy("jaxmmap.agent.loop", "prod"),
    "cpsat": _lazy("cpsat", "cpsat"),
    "exhaustive": exhaustive,
}

__all__ = ["SOLVERS", "Anytime", "InvalidSolution", "Refused", "Result", "solve"]


class InvalidSolution(AssertionError):
    """A solver returned a solution the validator rejects (a bug in that solver)."""


def solve(problem: Problem, solver: str, *, budget_s: float = 10.0, seed: int = 0,
          rules: Rules = Rules(), **options) -> Result:
    """Runs the solver `solver` under a wall-clock budget; its solution is validated."""
    if solver not in SOLVERS:
        raise ValueError(f"unknown solver {solver!r}; solvers: {', '.join(SOLVERS)}")
    result = SOLVERS[solver](problem, budget_s, seed, rules=rules, **options)
    report = validate(problem, result.solution, allow_nocopy_move=rules.nocopy_offset == "lowest")
    if not report.ok:
        raise InvalidSolution(f"{solver} returned an invalid solution:\n{report}")
    return result
