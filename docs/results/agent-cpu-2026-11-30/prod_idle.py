"""What muzero-prod's unused seconds would add: from each run's written solution (out/*-sSEED.sol.json,
`bash prod_commands.sh`), rounds of the placer's local moves with new seeds (`placer.place`,
`RESTARTS` descents a round, as `muzero`'s placed rounds) for the seconds the run left of its 300,
until a round has the budget's last second or 3 rounds in a row do not pay. Prints each program's
seconds left, rounds, prod's return, the rounds' best and the gain. Every
solution is validated (`place`). Run from the folder that holds out/, one core a process:

    taskset -c 0 python prod_idle.py 0 0 2 & taskset -c 1 python prod_idle.py 0 1 2 & wait   # SEED PART PARTS
"""
import glob
import json
import sys
import time

from jaxmmap.core import suite
from jaxmmap.core.problem import load_solution
from jaxmmap.solvers import rules_for
from jaxmmap.solvers.placer import RESTARTS, place

BUDGET_S, PATIENCE = 300.0, 3

seed, part, parts = (int(a) for a in sys.argv[1:4])
for path in sorted(glob.glob(f"out/*-s{seed}.json"))[part::parts]:
    with open(path) as f:
        run = json.load(f)
    problem = suite.load(run["problem"])
    written = load_solution(path.replace(".json", ".sol.json"))
    rules = rules_for(problem, "muzero-prod")
    left, began = BUDGET_S - run["seconds"], time.perf_counter()
    best, rounds, since = written, 0, 0
    while (rest := left - (time.perf_counter() - began)) > 1.0 and since < PATIENCE:
        placed = place(problem, best, rules=rules, budget_s=rest, seed=seed + 10 * (rounds + 1), restarts=RESTARTS,
                       replan=False)
        rounds, since = rounds + 1, since + 1
        if placed.ret > best.ret:
            best, since = placed, 0
    gain = 100 * (best.ret / written.ret - 1)
    print(f"{run['problem']:36s} left {left:4.0f} s  rounds {rounds}  {written.ret:.6g} -> {best.ret:.6g}"
          f"  ({gain:+.3f}%)", flush=True)
