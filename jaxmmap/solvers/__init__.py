"""Solvers of the memory-mapping problem, behind one interface.

    result = jaxmmap.solvers.solve(problem, "random", budget_s=10, seed=0)
    result.solution, result.trace      # the best validated Solution; (seconds, best return) pairs

Every solver is `fn(problem, budget_s, seed, *, rules, **options) -> Result` (`base.Result`),
and declares its options, each with its kind and range (`spec.declare`); `check_options` checks
them before any work. `solve` runs one by name and checks its solution with the independent
validator before returning it. Each game solver plays its own game unless told otherwise
(`GAMES`, `rules_for`: the deferred game, or the grid the generalist learned). For the solvers
that play the game (`PLACED`), `solve` then places the solution's decisions physically
(`placer.place`, within the same budget): the result is never worse than the game's, and
`info["raw_return"]` keeps the game's own return. The solvers that need heavier libraries
(OR-Tools, evosax) are imported on first use.
`docs/solvers.md` describes them all.

The package's face; its parts: `_registry` (the solvers by name, loaded on first use),
`_options` (options parsed and checked), `_solve` (run, validate, place).
"""

from jaxmmap.solvers._options import check_options, describe_options, parse_options, solver_options
from jaxmmap.solvers._registry import GAMES, PLACED, SOLVERS, rules_for
from jaxmmap.solvers._solve import solve
from jaxmmap.solvers.base import Anytime, Refused, Result
from jaxmmap.solvers.placer import PLACE_SHARE

__all__ = ["GAMES", "PLACED", "PLACE_SHARE", "SOLVERS", "Anytime", "Refused", "Result", "check_options",
           "describe_options", "parse_options", "rules_for", "solve", "solver_options"]
