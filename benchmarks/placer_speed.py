"""Seconds the placer takes to place a game solution's decisions and grow them, beside one
heuristic plan of the same program measured in the same run (the placer is one plan of its own,
so the ratio should stay near 1 at every size).

    python benchmarks/placer_speed.py                   # 5,000 and 25,000 buffers
    python benchmarks/placer_speed.py --sizes 1000 5000 25000 75000

For each size: a generated program of about that many buffers, a solution of it (the input:
`--input pinning`, the default, is the pinning greedy's, fast at any size; `--input greedy` is the
greedy game's, whose own run takes minutes at 25,000 buffers), then `place(..., moves=0)`
(placing and growing; the local moves are anytime and use whatever budget is left) and
`heuristic.plan` once. Targets (issue 15): under 1 s at 5,000 buffers and under 10 s at 25,000
on the 2-core CPU. Then the local moves: `place(..., moves=--moves)`, its seconds beyond the
placement's, per move tried (each move is a plan of the whole program; the plans of one placement
share what depends on the problem only, so a move should cost less than the cold plan).
"""

from __future__ import annotations

import argparse
import time

from jaxmmap import Rules, generate
from jaxmmap.core.rules import auto_columns
from jaxmmap.solvers import solve
from jaxmmap.solvers.heuristic import plan
from jaxmmap.solvers.placer import place


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5000, 25000])
    parser.add_argument("--input", choices=("pinning", "greedy"), default="pinning")
    parser.add_argument("--moves", type=int, default=16, help="local moves to time (0: none)")
    args = parser.parse_args()
    print("| buffers | input return | placed return | place (s) | one heuristic plan (s) | ratio "
          "| moved return | s a move | move / plan |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for size in args.sizes:
        problem = generate(0, num_instructions=max(8, round(size / 3.0)))
        rules = Rules(columns=auto_columns(problem))
        raw = solve(problem, args.input, budget_s=600, rules=rules, place=False).solution
        t0 = time.perf_counter()
        placed = place(problem, raw, rules=rules, budget_s=600, moves=0)
        t_place = time.perf_counter() - t0
        t0 = time.perf_counter()
        plan(problem, rules)
        t_plan = time.perf_counter() - t0
        moved, per_move = "", ""
        if args.moves:
            t0 = time.perf_counter()
            improved = place(problem, raw, rules=rules, budget_s=600, moves=args.moves)
            tried = (improved.metadata.get("moves") or [0, args.moves])[1]
            per = (time.perf_counter() - t0 - t_place) / max(tried, 1)
            moved, per_move = f"{improved.ret:.6g}", f"{per:.3f} | {per / t_plan:.2f}"
        print(f"| {problem.num_buffers:,} | {raw.ret:.6g} | {placed.ret:.6g} | {t_place:.2f} | "
              f"{t_plan:.2f} | {t_place / t_plan:.2f} | {moved} | {per_move} |", flush=True)


if __name__ == "__main__":
    main()
