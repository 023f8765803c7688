"""The `cpsat` solver: CP-SAT on the model of `model.py` within a budget, warm-started, with the LP
bound beside it.

3. *Warm start*: by default the greedy game is played first and its solution, completed into a
   full assignment by a short CP-SAT solve with its decisions fixed, is CP-SAT's hint and the
   first point of the trace. Without it CP-SAT needs tens of seconds for a first solution on a
   few hundred buffers; with it the search improves on greedy.
4. *Size*: the model grows with flows (copy window x steps) and pairwise NoCopy predecessor
   choices; it builds in about a second for 400 buffers (30k variables), and at 745 buffers
   (110k variables) CP-SAT no longer improves on greedy in a minute. Above ``max_buffers``
   (`MAX_BUFFERS`) `cpsat` refuses, with a ValueError naming the size, like `exhaustive`
   (``max_buffers=None`` forces it). It falls back to all-Drop (always valid) if it has no
   solution at the end of its budget.

``info``: ``status`` ("optimal", "feasible", "unknown"), ``proven_optimal`` (of the model, hence
>= the game's), ``bound`` (a proven upper bound in real units on every solution of the model:
the smaller of ``cpsat_bound`` and ``relaxation_bound``), ``relaxation_bound`` (`upper_bound`
under the same rules: valid for every physical solution, or every one without pins under
``output_nocopy=False``), ``cpsat_bound``, model sizes, the hint's return and whether the model
accepted it, timings.

"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from ortools.sat.python import cp_model

from jaxmmap.core.files import UserError
from jaxmmap.core.problem import Problem, Solution
from jaxmmap.core.rules import Rules
from jaxmmap.core.validator import SolutionRejected, check_solution, recomputed_return
from jaxmmap.solvers.base import Anytime, Refused, Result
from jaxmmap.solvers.cpsat._shared import all_drop
from jaxmmap.solvers.cpsat.bound import upper_bound
from jaxmmap.solvers.cpsat.model import _Model
from jaxmmap.solvers.simple import greedy
from jaxmmap.solvers.spec import Option, declare

__all__ = ["MAX_BUFFERS", "cpsat"]

#: Largest problem (buffers) `cpsat` builds a model for by default.
MAX_BUFFERS = 500


def cpsat(problem: Problem, budget_s: float, seed: int, *, rules: Rules = Rules(),
          workers: int = 2, max_buffers: int | None = MAX_BUFFERS,
          hint: Solution | str | None = "greedy", decisions: Solution | None = None,
          log: bool = False) -> Result:
    """Solves the physical problem with CP-SAT within `budget_s` seconds (module docstring).

    Args:
      rules: ``nocopy_offset`` (``"lowest"`` lets a NoCopy's own allocation move) and
        ``output_nocopy`` (False: no pins, the older game; the model is then exactly the one
        without the pin literals, and ``info["relaxation_bound"]`` the bound without pins).
      workers: CP-SAT search workers (threads).
      max_buffers: refuse (ValueError) problems with more buffers; None: no limit.
      hint: a solution to start from: ``"greedy"`` (the default) plays the greedy game first
        (its time counts), a `Solution`, or None. It is completed into a full assignment of the
        model and given to CP-SAT, and counts as a solution found.
      decisions: the fixed-decisions mode (Python only): every use this solution serves from
        fast memory stays served, by the same action (Copy, or NoCopy: kept or pinned), at any
        offset, allocation and copy interval; the other uses are free. Its optimum is the best
        placement and growth of those decisions, the reference for `placer.place` (which may
        beat it only by dropping decisions, in its local moves). It is also the default hint
        and the fallback; ``info["bound"]`` then bounds the placements of these decisions, and
        ``status`` is "infeasible" if they lie outside the model (decision 1).
      log: print CP-SAT's search log.

    Every solution CP-SAT reports is decoded, checked by the validator and recorded (the
    anytime trace); its return is the validator's recomputed one.
    """
    _check_arguments(problem, max_buffers, hint, decisions)
    clock = Anytime(budget_s)
    lp_bound = upper_bound(problem, rules=rules)
    fallback = all_drop(problem)
    info: dict = {"status": "unknown", "proven_optimal": False, "bound": lp_bound,
                  "relaxation_bound": lp_bound, "cpsat_bound": math.inf}
    allow_move = rules.nocopy_offset == "lowest"

    @_each_once  # (CP-SAT may report its hint again)
    def offer(sol: Solution) -> None:
        # (the return is the validator's: the model's objective is in its own units)
        sol = dataclasses.replace(sol, solver="cpsat", ret=recomputed_return(problem, sol.action))
        try:
            report = check_solution(problem, sol, allow_invalid=True, allow_nocopy_move=allow_move)
        except SolutionRejected as e:  # (arrays that cannot even be simulated)
            report = e.report
        if report.ok:
            clock.offer(sol)
        else:  # never expected: kept for the report rather than returned
            info.setdefault("invalid_solutions", []).append(str(report))

    model = _Model(problem, rules)
    if decisions is not None:
        model.keep(decisions)
        info["decisions_from"] = float(decisions.ret)
        hint = decisions if isinstance(hint, str) else hint
        fallback = dataclasses.replace(decisions, solver="cpsat")  # valid, if outside the model
    info.update(model.stats(), build_seconds=clock.elapsed())
    if isinstance(hint, str):
        # The greedy game costs a compile; not worth it once half the budget is gone.
        skip = clock.elapsed() > 0.5 * budget_s
        info["hint_skipped"] = skip
        hint = None if skip else greedy(problem, 0.0, seed, rules=rules).solution
    if hint is not None and not clock.out_of_time():
        values = model.complete(hint, max(0.25 * (budget_s - clock.elapsed()), 0.1))
        info["hint_return"] = float(hint.ret)
        info["hint_accepted"] = values is not None
        if values is not None:
            model.add_hint(values)
            offer(hint)

    solve_start = clock.elapsed()
    status, cp_bound = _search(model, max(budget_s - clock.elapsed(), 0.05), offer, workers=workers,
                               seed=seed, log=log)
    if status == cp_model.INFEASIBLE and decisions is None:  # all-Drop satisfies the model
        raise RuntimeError("CP-SAT claims the model infeasible, but all-Drop satisfies it")
    if clock.best is None or fallback.ret > clock.best.ret:
        clock.offer(fallback)
    info.update(status={cp_model.OPTIMAL: "optimal", cp_model.FEASIBLE: "feasible",
                        cp_model.INFEASIBLE: "infeasible"}.get(
        status, "unknown"), proven_optimal=status == cp_model.OPTIMAL, cpsat_bound=cp_bound,
        bound=min(cp_bound, lp_bound), solve_seconds=clock.elapsed() - solve_start)
    return clock.result(**info)


def _each_once(offer):
    """`offer` called once per distinct solution: the same arrays are the same solution, checked
    and offered once."""
    seen: set[bytes] = set()

    def once(sol: Solution) -> None:
        content = b"".join(np.ascontiguousarray(getattr(sol, k)).tobytes()
                           for k in ("action", "offset", "alloc_start", "alloc_end", "copy_start", "copy_end"))
        if content not in seen:
            seen.add(content)
            offer(sol)

    return once


def _check_arguments(problem: Problem, max_buffers: int | None, hint, decisions) -> None:
    if max_buffers is not None and problem.num_buffers > max_buffers:
        raise Refused(f"cpsat builds its model for up to {max_buffers} buffers, not "
                      f"{problem.num_buffers} (max_buffers=None to force; upper_bound() "
                      "bounds any size)")
    if decisions is not None and not isinstance(decisions, Solution):
        raise UserError("cpsat's decisions must be a Solution (from Python), got "
                        f"{type(decisions).__name__}")
    if not (hint is None or isinstance(hint, Solution) or hint == "greedy"):
        raise UserError(f"cpsat's hint must be 'greedy', a Solution or None, got {hint!r}")


def _search(model: _Model, seconds: float, offer, *, workers: int, seed: int, log: bool
            ) -> tuple[int, float]:
    """CP-SAT on `model` for `seconds`, every solution it reports decoded and `offer`ed.
    Returns its status and its bound in real units (inf if it found nothing)."""

    class Callback(cp_model.CpSolverSolutionCallback):
        def on_solution_callback(self):
            offer(model.decode(self.value))

    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = seconds
    solver.parameters.num_workers = workers
    solver.parameters.random_seed = seed
    solver.parameters.log_search_progress = log
    status = solver.solve(model.m, Callback())
    if status == cp_model.MODEL_INVALID:
        raise RuntimeError(f"CP-SAT rejects the model: {model.m.validate()}")
    found = status in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    # Scaled coefficients were rounded up, so the scaled optimum bounds the real one; one unit
    # more covers the round-off of the real return's float sum.
    return status, (solver.best_objective_bound + 1.0) / model.obj_scale if found else math.inf


declare(cpsat, {
    "workers": Option(int, "[0, inf)", "CP-SAT search workers (threads; 0: as many as OR-Tools chooses)"),
    "max_buffers": Option(int, "[1, inf)", "refuse problems with more buffers (null: no limit)", null=True),
    "hint": Option(Solution, doc="a solution to start from: greedy plays the greedy game first", choices=("greedy",),
                   null=True),
    "decisions": Option(Solution, doc="the fixed-decisions mode: the uses this solution serves stay served",
                        null=True),
    "log": Option(bool, doc="print CP-SAT's search log"),
})
