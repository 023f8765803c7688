"""Games per second of the game-playing solvers, beside random search in the same run.

    python benchmarks/solver_throughput.py                                  # CPU defaults
    python benchmarks/solver_throughput.py --budget 20 --instances suite:resnet50_infer@dram_pmem-25

For each instance each solver runs once under the budget (`jaxmmap.solvers.solve`, so every
solution is validated). Printed per solver: games played per second after its first solution
(compilation and the first batch excluded), the time to that first solution (compilation
included), its best return, and both figures as ratios to `random`, the baseline.
"""

from __future__ import annotations

import argparse

import jax

from jaxmmap.core.io import open_problems
from jaxmmap.core.rules import Rules, auto_columns
from jaxmmap.solvers import solve

DEFAULT_INSTANCES = ["suite:resnet18_infer@tpu_v4i-30", "suite:resnet50_infer@dram_pmem-25",
                     "suite:gpt_small_train@dram_pmem-25"]


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--instances", nargs="+", default=DEFAULT_INSTANCES)
    parser.add_argument("--solvers", nargs="+", default=["random", "es", "egrl"])
    parser.add_argument("--budget", type=float, default=30.0, help="seconds per solver")
    args = parser.parse_args()
    print(f"device: {jax.devices()[0].device_kind} ({jax.default_backend()}), budget "
          f"{args.budget:g} s")
    print(f"{'instance':<36} {'solver':<8} {'games/s':>9} {'ratio':>7} {'first (s)':>9} "
          f"{'return':>10} {'ratio':>7}")
    for problem in open_problems(args.instances):
        rules = Rules(columns=auto_columns(problem))
        base = None
        for name in ["random"] + [s for s in args.solvers if s != "random"]:
            result = solve(problem, name, budget_s=args.budget, seed=0, rules=rules)
            first = result.trace[0][0]
            games = result.info.get("games", 1)
            rounds = result.info.get("generations", games / 256)  # random: batches of 256
            later = games - games / max(rounds, 1)  # the games after the first round
            rate = later / max(result.seconds - first, 1e-9) if rounds > 1 else float("nan")
            if base is None:
                base = (rate, result.solution.ret)
            print(f"{problem.name:<36} {name:<8} {rate:>9,.0f} {rate / base[0]:>6.2f}x "
                  f"{first:>9.1f} {result.solution.ret:>10.5g} "
                  f"{result.solution.ret / base[1]:>6.3f}x", flush=True)


if __name__ == "__main__":
    main()
