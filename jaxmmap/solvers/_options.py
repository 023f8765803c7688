"""The solvers' options: parsed from the command line's `KEY=VALUE` strings, and checked before
any work."""

from __future__ import annotations

import inspect
import json
import math

from jaxmmap.core.files import UserError
from jaxmmap.solvers._registry import SOLVERS, loaded


def solver_options(solver: str) -> list[str]:
    """The keyword options the solver `solver` takes (besides `rules`): its keyword arguments,
    and the fields of its config where it takes `**options` (`fn.config_fields`)."""
    fn = loaded(solver)
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
    fn = loaded(solver)
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
