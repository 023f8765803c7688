"""Prod's ablation: the heuristic solver, then the placer's moves on its solution for the rest of
300 s, no agent (one core: `taskset -c 0 python ablation.py INSTANCE...`)."""

import sys
import time

from jaxmmap.core import suite
from jaxmmap.core.rules import Rules, auto_columns
from jaxmmap.core.simulator import latency
from jaxmmap.solvers.heuristic import heuristic
from jaxmmap.solvers.placer import place

for name in sys.argv[1:]:
    problem = suite.load(name)
    rules = Rules(columns=auto_columns(problem))
    t0 = time.perf_counter()
    h = heuristic(problem, 150, 0, rules=rules).solution
    placed = place(problem, h, rules=rules, budget_s=300 - (time.perf_counter() - t0), seed=0)
    speedup = 100 * (latency(problem, h).total / latency(problem, placed).total - 1)
    print(f"{name} heuristic={h.ret:.6g} placed={placed.ret:.6g} speed-up={speedup:+.2f}% "
          f"s={time.perf_counter() - t0:.0f} moves={placed.metadata.get('moves')}", flush=True)
