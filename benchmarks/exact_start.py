"""The placer's exact start (`placer.EXACT_BUFFERS`), measured: random, greedy, ES and EGRL on small
generated programs, each placed with the start and without it, under the same budget.

    python benchmarks/exact_start.py --seeds 0 1 2 3 4 5 8 --instructions 40 --budget 20 --optimum 120

Per program and solver (seed 0, `solvers.solve`, compilation included, every solution validated):
the written return without the exact start (`EXACT_BUFFERS` set to 0) and with it, their ratio,
and the start the placer took. Per program: whether the four solvers wrote the same return to the
last of the 6 digits printed, without and with it, and with `--optimum S` CP-SAT's optimum of the program in S
seconds (marked "proven" where it proved it): where every solver writes the proven optimum, the
same return is the right one. Ends with the count of runs higher, equal and lower.
"""

from __future__ import annotations

import argparse

from jaxmmap import generate
from jaxmmap.core.clock import settle
from jaxmmap.solvers import placer, solve

SOLVERS = ("random", "greedy", "es", "egrl")


def _run(problem, solver: str, budget: float, exact: bool):
    default = placer.EXACT_BUFFERS
    placer.EXACT_BUFFERS = default if exact else 0
    try:
        result = solve(problem, solver, budget_s=budget, seed=0)
    finally:
        placer.EXACT_BUFFERS = default
    return float(result.solution.ret), result.info.get("placed_start", "game"), result.seconds


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4, 5, 8])
    parser.add_argument("--instructions", type=int, default=40)
    parser.add_argument("--budget", type=float, default=20.0)
    parser.add_argument("--optimum", type=float, default=0.0, help="seconds of CP-SAT for the optimum (0: none)")
    args = parser.parse_args(argv)
    counts = {"higher": 0, "equal": 0, "lower": 0}
    for seed in args.seeds:
        problem = generate(seed, num_instructions=args.instructions)
        line = f"generated seed {seed}, {problem.num_buffers} buffers"
        if args.optimum:
            best = solve(problem, "cpsat", budget_s=args.optimum, seed=0)
            line += f": CP-SAT {best.solution.ret:.6g}{' proven' if best.info['proven_optimal'] else ''}"
        print(line, flush=True)
        written = {False: [], True: []}
        for solver in SOLVERS:
            (before, _, s0), (after, start, s1) = (_run(problem, solver, args.budget, exact) for exact in (False, True))
            written[False].append(before)
            written[True].append(after)
            key = "higher" if after > before else "lower" if after < before else "equal"
            counts[key] += 1
            print(f"  {solver:7s} without {before:.6g} ({s0:.1f} s)  with {after:.6g} ({s1:.1f} s, start {start})"
                  f"  {after / before:.4f}x", flush=True)
        same = {exact: len({f"{r:.6g}" for r in returns}) == 1 for exact, returns in written.items()}
        print(f"  the same return from all four (6 digits): without {same[False]}, with {same[True]}", flush=True)
    print(f"with the exact start: higher {counts['higher']}, equal {counts['equal']}, lower {counts['lower']} "
          f"of {sum(counts.values())} runs")
    settle(120)  # (a run that overran its budget may have left a compile running: let it end)


if __name__ == "__main__":
    main()
