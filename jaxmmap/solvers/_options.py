"""The solvers' options: parsed from the command line's `KEY=VALUE` strings, and checked against
each solver's declaration (`solvers.spec`) before any work."""

from __future__ import annotations

import json
import math

from jaxmmap.core.files import UserError
from jaxmmap.solvers import spec
from jaxmmap.solvers._registry import SOLVERS, loaded


def solver_options(solver: str) -> list[str]:
    """The names of the options the solver `solver` declares (besides `rules`)."""
    return list(getattr(loaded(solver), "options", {}))


def describe_options(solver: str) -> str:
    """The options of the solver `solver`, one a line: name, the values it takes, its meaning."""
    return spec.describe(loaded(solver))


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
    """Raises `UserError` for an unknown solver, an option it does not declare, a value outside
    its declaration or options that do not go together (`spec.check`), or a budget that is not a
    positive finite number of seconds (a budget must bound the time spent)."""
    if solver not in SOLVERS:
        raise UserError(f"unknown solver {solver!r}; choose one of: {', '.join(SOLVERS)}")
    known = solver_options(solver)
    for key in options:
        if key not in known:
            raise UserError(f"the solver {solver} has no option {key!r}; its options are: "
                            f"{', '.join(known) or 'none'}")
    try:
        spec.check(loaded(solver), options)
    except ValueError as e:
        raise UserError(f"the solver {solver}'s {e}") from None
    if isinstance(budget_s, bool) or not isinstance(budget_s, (int, float)) \
            or not math.isfinite(budget_s) or budget_s <= 0:
        raise UserError(f"the budget must be a positive, finite number of seconds, got {budget_s!r}")
