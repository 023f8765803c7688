"""The simulated speed beside every return (`docs/simulator.md`): what a solution's latency is,
and how much faster it runs than the heuristic's, the XLA-style baseline.

    row = speed(problem, solution, against=heuristic_solution)   # or against=None: run it
    row["speedup_over_heuristic_percent"], row["latency"], row["time_unit"]

Everything here simulates validated solutions only (`core.simulator.latency` refuses others).
"""

from __future__ import annotations

from jaxmmap.core.problem import Problem, Solution
from jaxmmap.core.rules import Rules
from jaxmmap.core.simulator import Timeline, latency, speedup
from jaxmmap.solvers.heuristic import heuristic

__all__ = ["BASELINE", "BASELINE_BUDGET_S", "baseline", "latencies", "speed", "speeds", "speedup"]

# `speedup` (percent, `core.simulator.speedup`) is re-exported here, beside the figures it makes.

#: The solver every speed-up is measured against.
BASELINE = "heuristic"
#: Seconds the heuristic gets when it has to be run as the baseline (it usually needs far less,
#: even on the suite's largest programs); `--baseline-budget` on the command line.
BASELINE_BUDGET_S = 10.0


def baseline(problem: Problem, like: Solution | None = None, *, budget_s: float = BASELINE_BUDGET_S,
             seed: int = 0) -> Solution:
    """The heuristic's solution of `problem` within `budget_s`, under the rules `like` was made
    with (default rules without it)."""
    rules = Rules(**like.rules) if like is not None and like.rules else Rules()
    return heuristic(problem, budget_s, seed, rules=rules).solution


def speed(problem: Problem, solution: Solution, *, against: Solution | Timeline | None = None,
          budget_s: float = BASELINE_BUDGET_S) -> dict:
    """The simulated figures of `solution` (validated first): its return, latency, stalls, the
    all-slow latency, and its speed-ups in percent over all-slow memory and over `against` (the
    heuristic's solution or its timeline; None: the heuristic is run for at most `budget_s`,
    and with `budget_s <= 0` not at all: no figures against it)."""
    timeline = latency(problem, solution)
    row = {"return": float(solution.ret), "latency": timeline.total, "stall": timeline.stalled,
           "all_slow": timeline.all_slow, "time_unit": problem.metadata.get("time_unit", "problem units"),
           "speedup_over_all_slow_percent": speedup(timeline.all_slow, timeline.total)}
    if against is None and budget_s <= 0:
        return row
    if against is None:
        against = baseline(problem, solution, budget_s=budget_s)
    base = against if isinstance(against, Timeline) else latency(problem, against)
    return {**row, "heuristic_latency": base.total, "speedup_over_heuristic_percent": speedup(base.total, timeline.total)}


def speeds(problem: Problem, solutions: dict[str, Solution], *, budget_s: float = BASELINE_BUDGET_S
           ) -> dict[str, dict]:
    """`speed` of each solver's solution of one problem, against the heuristic's among them (or,
    if there is none, the heuristic run for at most `budget_s`)."""
    if not solutions:
        return {}
    base = solutions.get(BASELINE) or baseline(problem, next(iter(solutions.values())), budget_s=budget_s)
    timeline = latency(problem, base)
    return {solver: speed(problem, solution, against=timeline) for solver, solution in solutions.items()}


def latencies(problem: Problem, named: list[tuple[str, Solution]], *, allow_invalid: bool = False,
              budget_s: float = BASELINE_BUDGET_S) -> tuple[dict, bool]:
    """What `jaxmmap latency` reports (`--json`), and whether the heuristic was run for it.

    A row per (name, solution): validity, return, simulated latency, stalls, all-slow latency and
    the speed-ups in percent over all-slow memory and over the heuristic. The heuristic's figures
    are those of the first valid heuristic solution among `named`, else of the heuristic run now
    for at most `budget_s` under the first solution's rules (its row comes last, named `BASELINE`);
    with neither (`budget_s <= 0`) no row has a speed-up over it. `allow_invalid`: simulate
    solutions the validator rejects (marked `valid: false`) instead of refusing them."""
    named = list(named)
    timelines = [latency(problem, s, allow_invalid=allow_invalid) for _, s in named]
    base = next((t for (_, s), t in zip(named, timelines) if s.solver == BASELINE and t.valid), None)
    ran = budget_s > 0 and base is None
    if ran:
        named.append((BASELINE, baseline(problem, named[0][1] if named else None, budget_s=budget_s)))
        timelines.append(base := latency(problem, named[-1][1]))
    rows = [{"solution": name, "solver": s.solver, "valid": t.valid, "return": s.ret, "latency": t.total,
             "stall": t.stalled, "all_slow": t.all_slow, "speedup_over_all_slow_percent": t.speedup,
             **({"speedup_over_heuristic_percent": speedup(base.total, t.total)} if base is not None else {})}
            for (name, s), t in zip(named, timelines)]
    return {"problem": problem.name, "time_unit": problem.metadata.get("time_unit", "problem units"),
            "results": rows}, ran
