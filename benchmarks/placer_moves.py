"""The placer's local moves, variant against variant: how many (a fixed number, or while they
pay, stopped after `patience` in a row that did not) and the recreate's order noise, on
greedy's game, each within the same budget, on programs of the suite's training split and
generated selection seeds (never the held-out split).

    python benchmarks/placer_moves.py --budget 20 --variants 64:_:0 _:64:0 _:64:0.2
    python benchmarks/placer_moves.py --budget 60 --variants _:64:0.35 _:64:0.35:_
    python benchmarks/placer_moves.py --budget 20 --variants _:64:0.35:3 _:64:0.35:3:1

A variant is MOVES:PATIENCE:NOISE[:RESTARTS[:FRESH]] ("_": None; NOISE > 0: the noisy moves after
the plain ones; RESTARTS, default 0: descents again from the start once the moves stop paying;
FRESH, 0 or 1, default 0: go on from the placement of no decisions where it is higher;
`placer.place`). The first is the baseline. Prints, per program,
the placed return, [moves kept, tried] and seconds of each, and each variant's simulated
speed-up over the baseline (every solution validated by `latency`); then, per variant, the
programs where it is higher, equal and lower, and the geometric mean of the speed-ups.
"""

from __future__ import annotations

import argparse
import math
import time

from jaxmmap import generate
from jaxmmap.core import suite
from jaxmmap.core.rules import Rules, auto_columns
from jaxmmap.core.simulator import latency
from jaxmmap.solvers import solve
from jaxmmap.solvers.heuristic import MOVES, NOISE
from jaxmmap.solvers.placer import place

PROGRAMS = ["alexnet_train_b32@tpu_v4i", "resnet50_infer@gpu", "gpt_small_train@tpu_v4i-30",
            "transformer_bf16_infer@tpu_v4i-30", "resnet18_train@gpu", "gpt_medium_train@gpu",
            "transformer_bf16_train@gpu", "gen:100", "gen:101", "gen:102"]


def _variant(text: str) -> tuple[int | None, int | None, float, int | None, bool]:
    moves, patience, noise, restarts, fresh = (text.split(":") + ["0", "0"])[:5]
    return (None if moves == "_" else int(moves), None if patience == "_" else int(patience),
            float(noise), None if restarts == "_" else int(restarts), bool(int(fresh)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=20.0, help="seconds for each placement")
    parser.add_argument("--variants", nargs="+", default=[f"{MOVES}:_:0", f"_:{MOVES}:0",
                                                           f"_:{MOVES}:{NOISE}"],
                        help="MOVES:PATIENCE:NOISE[:RESTARTS[:FRESH]], '_' for None; the first is the baseline")
    parser.add_argument("--programs", nargs="+", default=PROGRAMS,
                        help="suite names, or gen:SEED (a generated program of 1,000 instructions)")
    args = parser.parse_args()
    variants = [_variant(v) for v in args.variants]
    print("| program | buffers | " + " | ".join(f"{v}: return | [kept, tried] | s | speed-up" for v in args.variants) + " |")
    print("|---|---:|" + "---:|---|---:|---:|" * len(variants))
    ratios = [[] for _ in variants]
    for name in args.programs:
        problem = generate(int(name[4:]), num_instructions=1000) if name.startswith("gen:") else suite.load(name)
        rules = Rules(columns=auto_columns(problem))
        game = solve(problem, "greedy", budget_s=300, seed=0, rules=rules, place=False).solution
        cells, totals = [], []
        for k, (moves, patience, noise, restarts, fresh) in enumerate(variants):
            t0 = time.perf_counter()
            placed = place(problem, game, rules=rules, budget_s=args.budget, moves=moves,
                           patience=patience, noise=noise, restarts=restarts, fresh=fresh)
            seconds = time.perf_counter() - t0
            totals.append(latency(problem, placed).total)
            ratios[k].append(totals[0] / totals[k])
            start = "*" if placed.metadata.get("start") == "nothing" else ""  # (*: from no decisions)
            cells.append(f"{placed.ret:.6g}{start} | {placed.metadata.get('moves', [0, 0])} | {seconds:.1f} | "
                         f"{100 * (ratios[k][-1] - 1):+.3f}%")
        print(f"| {name} | {problem.num_buffers:,} | {' | '.join(cells)} |", flush=True)
    for text, r in zip(args.variants, ratios):
        higher = sum(x > 1 + 1e-9 for x in r)
        lower = sum(x < 1 - 1e-9 for x in r)
        mean = math.exp(sum(math.log(x) for x in r) / len(r))
        print(f"{text}: higher on {higher}, equal on {len(r) - higher - lower}, lower on {lower} "
              f"of {len(r)}; geometric mean speed-up {100 * (mean - 1):+.3f}%")


if __name__ == "__main__":
    main()
