"""How much of a good plan the game can express: the heuristic's decisions, played as a game
trajectory (`heuristic.play_plan`: its action where legal, else its fallback, with the
Drop-backup), and not placed again, as a fraction of the heuristic's own placed return, under
each rule set.

    python benchmarks/expressive.py                      # every suite instance, five generated programs
    python benchmarks/expressive.py --instances suite:resnet18_infer@tpu_v4i-30 --generated

Rule sets: `paper` (the grid, the lowest offset, Rules()), `deferred` (placement="deferred": the
load profile, then the packer) and `deferred-early` (with copy_supply="early"); all on the
instance's `auto` columns. Every game's solution is validated; the heuristic runs once per
instance (`--budget` seconds, its plans and local moves) and its solution is the reference.
Prints one row per instance and the least and geometric-mean fraction per rule set.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from jaxmmap.core import suite  # noqa: E402
from jaxmmap.core.rules import Rules, auto_columns  # noqa: E402
from jaxmmap.core.validator import check_solution  # noqa: E402
from jaxmmap.env.generator import generate  # noqa: E402
from jaxmmap.solvers import solve  # noqa: E402
from jaxmmap.solvers.heuristic import play_plan  # noqa: E402

RULE_SETS = {"paper": {}, "deferred": dict(placement="deferred"),
             "deferred-early": dict(placement="deferred", copy_supply="early")}
#: Generated programs of about 300 to 20,000 buffers: (seed, instructions), seeds no solver tunes on.
GENERATED = ((501, 100), (502, 500), (503, 1500), (504, 3300), (505, 6600))


def _problems(args):
    names = suite.names()
    chosen = [n[len("suite:"):] for n in args.instances] if args.instances else ([] if args.generated else names)
    for name in chosen:
        if name not in names:
            sys.exit(f"error: no suite instance {name}")
    problems = [suite.load(n) for n in chosen]
    if args.generated or not args.instances:
        problems += [generate(seed, num_instructions=k) for seed, k in GENERATED]
    return problems


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", nargs="*", default=[], help="suite:NAME ... (default: every suite instance)")
    parser.add_argument("--generated", action="store_true", help="the five generated programs (default with no --instances)")
    parser.add_argument("--budget", type=float, default=10.0, help="the heuristic's seconds per instance")
    parser.add_argument("--rules", nargs="*", default=list(RULE_SETS), choices=list(RULE_SETS))
    args = parser.parse_args(argv)
    if not args.budget > 0:
        sys.exit("error: --budget must be > 0")
    problems = _problems(args)
    print(f"the heuristic's plan played in the game, as a fraction of its placed return ({args.budget:g} s heuristic)")
    print(f"{'instance':<42} {'buffers':>7} {'heuristic':>11} " + " ".join(f"{r:>15}" for r in args.rules))
    fractions = {r: [] for r in args.rules}
    for problem in problems:
        columns = auto_columns(problem)
        heuristic = solve(problem, "heuristic", budget_s=args.budget, seed=0, rules=Rules(columns=columns)).solution
        row = []
        for name in args.rules:
            rules = Rules(columns=columns, **RULE_SETS[name])
            t0 = time.perf_counter()
            played = play_plan(problem, heuristic.action, rules)
            check_solution(problem, played)
            fraction = played.ret / heuristic.ret if heuristic.ret > 0 else 1.0
            fractions[name].append(fraction)
            row.append(f"{fraction:>8.4f} ({time.perf_counter() - t0:>3.0f}s)")
        print(f"{problem.name:<42} {problem.num_buffers:>7,} {heuristic.ret:>11.5g} " + " ".join(row), flush=True)
    for name in args.rules:
        values = fractions[name]
        gmean = math.exp(sum(math.log(max(v, 1e-12)) for v in values) / len(values))
        held = sum(v >= 0.99 for v in values)
        print(f"{name}: least {min(values):.4f}, geometric mean {gmean:.4f}, at least 0.99 on {held} of {len(values)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
