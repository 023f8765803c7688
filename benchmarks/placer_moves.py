"""The placer's local moves: a fixed number (`heuristic.MOVES`, the placer's rule before
2026-11-27) against moves while they pay (stopped after `--patience` in a row that did not; the
default now), on greedy's game, each within the same budget, on programs of the suite's
training split and generated selection seeds (never the held-out split).

    python benchmarks/placer_moves.py --budget 20 --patience 64

Prints, per program: the placed return, [moves kept, tried] and seconds of each, and the
simulated speed-up of the second over the first (every solution validated by `latency`).
"""

from __future__ import annotations

import argparse
import time

from jaxmmap import generate
from jaxmmap.core import suite
from jaxmmap.core.rules import Rules, auto_columns
from jaxmmap.core.simulator import latency
from jaxmmap.solvers import solve
from jaxmmap.solvers.heuristic import MOVES
from jaxmmap.solvers.placer import place

PROGRAMS = ["alexnet_train_b32@tpu_v4i", "resnet50_infer@gpu", "gpt_small_train@tpu_v4i-30",
            "transformer_bf16_infer@tpu_v4i-30", "resnet18_train@gpu", "gpt_medium_train@gpu",
            "transformer_bf16_train@gpu", "gen:100", "gen:101", "gen:102"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=20.0, help="seconds for each placement")
    parser.add_argument("--patience", type=int, default=MOVES)
    parser.add_argument("--programs", nargs="+", default=PROGRAMS,
                        help="suite names, or gen:SEED (a generated program of 1,000 instructions)")
    args = parser.parse_args()
    print(f"| program | buffers | {MOVES} moves | [kept, tried] | s | while they pay | [kept, tried] | s "
          "| simulated speed-up |")
    print("|---|---:|---:|---|---:|---:|---|---:|---:|")
    for name in args.programs:
        if name.startswith("gen:"):
            problem = generate(int(name[4:]), num_instructions=1000)
        else:
            problem = suite.load(name)
        rules = Rules(columns=auto_columns(problem))
        game = solve(problem, "greedy", budget_s=300, seed=0, rules=rules, place=False).solution
        cells, totals = [], []
        for moves, patience in ((MOVES, None), (None, args.patience)):
            t0 = time.perf_counter()
            placed = place(problem, game, rules=rules, budget_s=args.budget, moves=moves, patience=patience)
            seconds = time.perf_counter() - t0
            totals.append(latency(problem, placed).total)
            cells.append(f"{placed.ret:.6g} | {placed.metadata.get('moves', [0, 0])} | {seconds:.1f}")
        print(f"| {name} | {problem.num_buffers:,} | {' | '.join(cells)} | "
              f"{100 * (totals[0] / totals[1] - 1):+.3f}% |", flush=True)


if __name__ == "__main__":
    main()
