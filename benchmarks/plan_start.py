"""ES from the heuristic's plan at a short budget, on a cold compile: the plan's game played in
ES's first batch (its default up to about 3,000 buffers) against the plan's game replayed apart
first (the baseline, one more compile of the game), in the same run. Each run is a process of its
own, so that neither reuses the other's compiles. Prints the generations played, the return and
the ratio of the generations.

    python benchmarks/plan_start.py [--sizes 120 900] [--budget 14]
"""

import argparse
import json
import subprocess
import sys

ONE = r"""
import json, sys, time
sys.path.insert(0, "benchmarks")
from env_throughput import problem_of_size
from jaxmmap import Rules
from jaxmmap.core.rules import auto_columns
import jaxmmap.solvers.heuristic._solver as plan_lib
from jaxmmap.solvers.evolution.es import es
size, budget, apart = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3] == "apart"
if apart:
    plan_lib.held_inside = lambda games, moves_left: False
problem = problem_of_size(size)
rules = Rules(columns=auto_columns(problem), placement="deferred", copy_supply="early")
began = time.perf_counter()
result = es(problem, budget, 0, rules=rules)
print(json.dumps({"buffers": problem.num_buffers, "generations": result.info["generations"],
                  "return": result.solution.ret, "seconds": time.perf_counter() - began}))
"""


def run(size: int, budget: float, how: str) -> dict:
    out = subprocess.run([sys.executable, "-c", ONE, str(size), str(budget), how], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[120, 900])
    parser.add_argument("--budget", type=float, default=14.0, help="ES's budget (a 20-s run keeps 0.7 of it)")
    args = parser.parse_args()
    print(f"ES, deferred game, from the heuristic's plan, {args.budget:g} s, cold compile")
    print(f"{'buffers':>8} {'plan':>9} {'generations':>12} {'return':>10} {'seconds':>8} {'vs apart':>9}")
    for size in args.sizes:
        apart, batch = run(size, args.budget, "apart"), run(size, args.budget, "batch")
        for name, r in (("apart", apart), ("in batch", batch)):
            ratio = r["generations"] / apart["generations"] if apart["generations"] else float("inf")
            print(f"{r['buffers']:>8} {name:>9} {r['generations']:>12} {r['return']:>10.5g} {r['seconds']:>8.1f}"
                  f" {ratio:>8.1f}x")


if __name__ == "__main__":
    main()
