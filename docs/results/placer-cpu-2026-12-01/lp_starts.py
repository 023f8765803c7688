"""The LP relaxation's solution as the placer's start (docs/decisions.md, "The LP's solution as the
placer's start"). For each suite program: the LP of `cpsat.bound.relaxation` solved by HiGHS, its
primal fractions read per buffer (x Copy, y NoCopy, z pin); three starts placed by the placer's own
placement (`placer._placement`, grown): the heuristic's plan, the LP rounded (a use served where
x + y + z >= 0.5, Copy where x >= y + z), and the placement of no decisions with the LP read in as
a guide (`placer.guided`, 95% sure); then each start's descents (`place(replan=False,
restarts=3)`) for BUDGET seconds. Prints `start placed->descended (seconds)` per start.

    python lp_starts.py BUDGET NAME...   (one core: taskset -c 0)
"""
import sys
import time

import numpy as np
import scipy.optimize

from jaxmmap.core import suite
from jaxmmap.core.problem import COPY, DROP, NOCOPY
from jaxmmap.core.rules import Rules, auto_columns
from jaxmmap.solvers import placer
from jaxmmap.solvers.cpsat import bound
from jaxmmap.solvers.heuristic import plan

captured = {}  # the LP's decision columns and its primal solution, caught as `relaxation` runs
_decision_vars, _linprog = bound._decision_vars, scipy.optimize.linprog


def decision_vars(lp, p, *args):
    captured["columns"] = _decision_vars(lp, p, *args)
    return captured["columns"]


def linprog(*args, **kwargs):
    res = _linprog(*args, **kwargs)
    captured["x"] = res.x
    return res


bound._decision_vars, bound.scipy.optimize.linprog = decision_vars, linprog


def main(budget: float, names: list[str]) -> None:
    for name in names:
        p = suite.load(name)
        rules = Rules(columns=auto_columns(p))
        _, info = bound.relaxation(p)
        x = captured["x"]
        cx, cy, cz = (np.where(v >= 0, x[np.maximum(v, 0)], 0.0) for v in captured["columns"])
        total = cx + cy + cz
        prepared, deadline = placer._prepared(p, rules), time.perf_counter() + 300
        heur = plan(p, rules, pins="compare", prepared=prepared, deadline=deadline).solution
        nothing = placer._no_decisions(p, rules, prepared=prepared, deadline=deadline)
        rounded = np.where(total >= 0.5, np.where(cx >= cy + cz, COPY, NOCOPY), DROP).astype(np.int32)
        lp5 = placer._placement(p, rules, rounded, prepared=prepared, deadline=deadline, grow=True)
        guide = np.stack([cx, cy + cz, 1 - total], 1)
        guided = placer._placement(p, rules, placer.guided(nothing.action, guide, 0.95), prepared=prepared,
                                   deadline=deadline, grow=True)
        row = [name, p.num_buffers, f"lp {info.get('lp_value', 0):.5g}"]
        for label, s in (("heur", heur), ("lp5", lp5), ("guided", guided)):
            t = time.perf_counter()
            m = placer.place(p, s, rules=rules, budget_s=budget, replan=False, restarts=3, seed=0)
            row.append(f"{label} {s.ret:.6g}->{m.ret:.6g} ({time.perf_counter() - t:.0f}s)")
        print(" | ".join(map(str, row)), flush=True)


if __name__ == "__main__":
    main(float(sys.argv[1]), sys.argv[2:])
