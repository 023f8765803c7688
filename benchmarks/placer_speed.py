"""Seconds the placer takes to place a game solution's decisions and grow them, beside one
heuristic plan of the same program measured in the same run (the placer is one plan of its own,
so the ratio should stay near 1 at every size); then the seconds of a local move, against
another commit's in the same run (`--against`).

    python benchmarks/placer_speed.py                   # 5,000 and 25,000 buffers
    python benchmarks/placer_speed.py --sizes 1000 5000 25000 75000
    taskset -c 0 python benchmarks/placer_speed.py --sizes 1000 3000 10000 --moves 100 --against 863b8c7

For each size: a generated program of about that many buffers, a solution of it (the input:
`--input pinning`, the default, is the pinning greedy's, fast at any size; `--input greedy` is the
greedy game's, whose own run takes minutes at 25,000 buffers), then `place(..., moves=0)`
(placing and growing; the local moves are anytime and use whatever budget is left) and
`heuristic.plan` once. Targets: under 1 s at 5,000 buffers and under 10 s at 25,000
on the 2-core CPU. Then the local moves: `place(..., moves=--moves)`, its seconds beyond the
placement's, per move tried (each move is a plan of the whole program; the plans of one placement
share what depends on the problem only, so a move should cost less than the cold plan).

`--against REV`: the same measurements with the package of commit REV (a git worktree of it, in a
subprocess, one after the other on the same machine), and per size the ratio of its seconds a
move to this tree's, and whether the moved solutions are the same to the last bit (a change that
only makes the placer faster must leave them so: its moves depend on nothing but their number).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from jaxmmap import Rules, generate
from jaxmmap.core.rules import auto_columns
from jaxmmap.solvers import solve
from jaxmmap.solvers.heuristic import plan
from jaxmmap.solvers.placer import place


def _digest(solution) -> str:
    h = hashlib.sha256()
    for field in ("action", "offset", "alloc_start", "alloc_end", "copy_start", "copy_end"):
        h.update(np.ascontiguousarray(getattr(solution, field), np.int64).tobytes())
    return h.hexdigest()[:16]


def measure(size: int, source: str, moves: int) -> dict:
    """One size's row: the input, its placement, one plan, and `moves` local moves."""
    problem = generate(0, num_instructions=max(8, round(size / 3.0)))
    rules = Rules(columns=auto_columns(problem))
    raw = solve(problem, source, budget_s=600, rules=rules, place=False).solution
    t0 = time.perf_counter()
    placed = place(problem, raw, rules=rules, budget_s=600, moves=0)
    t_place = time.perf_counter() - t0
    t0 = time.perf_counter()
    plan(problem, rules)
    t_plan = time.perf_counter() - t0
    row = dict(buffers=problem.num_buffers, input=raw.ret, placed=placed.ret, place_s=t_place, plan_s=t_plan)
    if moves:
        t0 = time.perf_counter()
        improved = place(problem, raw, rules=rules, budget_s=600, moves=moves)
        tried = (improved.metadata.get("moves") or [0, moves])[1]
        # (the placement's own time subtracted: on a small program its noise can exceed the moves',
        # so the time a move is floored at a microsecond rather than going to zero or below)
        spent = time.perf_counter() - t0 - t_place
        row.update(moved=improved.ret, move_s=max(spent / max(tried, 1), 1e-6), digest=_digest(improved))
    return row


def _baseline(rev: str, args) -> list[dict]:
    """The rows of commit `rev`: this script, run with that commit's package first on the path."""
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with tempfile.TemporaryDirectory() as scratch:
        tree = os.path.join(scratch, "tree")
        subprocess.run(["git", "-C", repo, "worktree", "add", "--detach", "-q", tree, rev], check=True)
        try:
            out = subprocess.run([sys.executable, os.path.abspath(__file__), "--json", "--input", args.input,
                                  "--moves", str(args.moves), "--sizes", *map(str, args.sizes)],
                                 env={**os.environ, "PYTHONPATH": tree}, check=True, capture_output=True, text=True)
        finally:
            subprocess.run(["git", "-C", repo, "worktree", "remove", "--force", tree], check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5000, 25000])
    parser.add_argument("--input", choices=("pinning", "greedy"), default="pinning")
    parser.add_argument("--moves", type=int, default=16, help="local moves to time (0: none)")
    parser.add_argument("--against", metavar="REV", help="also measure commit REV's package, and print the ratios")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # (`--against`'s subprocess)
    args = parser.parse_args(argv)
    if args.json:
        print(json.dumps([measure(size, args.input, args.moves) for size in args.sizes]))
        return
    base = _baseline(args.against, args) if args.against else None
    against = f" | {args.against}: s a move | speed-up | same result" if base else ""
    print("| buffers | input return | placed return | place (s) | one heuristic plan (s) | ratio "
          f"| moved return | s a move | move / plan{against} |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|" + ("---:|---:|---|" if base else ""))
    speedups = []
    for k, size in enumerate(args.sizes):
        row = measure(size, args.input, args.moves)
        moved = f"{row['moved']:.6g} | {row['move_s']:.4f} | {row['move_s'] / row['plan_s']:.2f}" if args.moves else " | |"
        extra = ""
        if base and args.moves:
            old = base[k]
            speedups.append(old["move_s"] / row["move_s"])
            extra = f" | {old['move_s']:.4f} | {speedups[-1]:.2f}x | {'yes' if old['digest'] == row['digest'] else 'NO'}"
        print(f"| {row['buffers']:,} | {row['input']:.6g} | {row['placed']:.6g} | {row['place_s']:.2f} | "
              f"{row['plan_s']:.2f} | {row['place_s'] / row['plan_s']:.2f} | {moved}{extra} |", flush=True)
    if speedups:
        print(f"local moves {math.exp(sum(map(math.log, speedups)) / len(speedups)):.2f}x as fast as at "
              f"{args.against} (geometric mean over {len(speedups)} sizes)")


if __name__ == "__main__":
    main()
