"""Whether greedy's decisions are a better start for the placer than no decisions at all.

For each program, under the deferred game with the early copy supply on the program's `auto`
columns (the rules of `jaxmmap compare --placement deferred --copy-supply early`), it prints the
placement of no decisions (`placer.place_nothing`, the floor of every game solver's result) and
greedy's decisions placed without local moves, as fractions of that floor:

- `immediate`: the environment's `greedy_policy` (the legal move of the best immediate reward);
  `density`: the `greedy` solver's game (`rollout.density_policy` at its `DENSITIES`, the best);
- `first`: the decisions all placed before the heuristic's other items (`heuristic.plan`);
  `inter`: each placed where the heuristic's order reaches it (`plan(interleave=True)`);
  `placer`: what `placer.place` starts its moves from (the best of its placements, or the game's
  own solution where that is higher).

A start at or above 1 is the solver's own (`info["placed_start"]` `decisions` or `game` in
`compare`); the counts at the end say on how many programs each start is at least, and strictly
above, the floor. Every solution is validated (`place` and `check_solution`).

    python benchmarks/greedy_starts.py                    # the tuning programs
    python benchmarks/greedy_starts.py --split held-out   # the 13 held-out programs
"""

from __future__ import annotations

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import jax  # noqa: E402
import numpy as np  # noqa: E402

from jaxmmap.core import suite  # noqa: E402
from jaxmmap.core.rules import Rules, auto_columns  # noqa: E402
from jaxmmap.core.validator import check_solution  # noqa: E402
from jaxmmap.env.generator import generate  # noqa: E402
from jaxmmap.env.instance import make_instance  # noqa: E402
from jaxmmap.env.rollout import greedy_policy, rollout, to_solution  # noqa: E402
from jaxmmap.solvers import solve  # noqa: E402
from jaxmmap.solvers.heuristic import plan  # noqa: E402
from jaxmmap.solvers.placer import place, place_nothing  # noqa: E402

#: (seed, instructions): the tuning split's generated programs, and the held-out split's (the
#: five of docs/results/heldout-deferred-cpu-2026-11-29).
GENERATED = {"train": ((2000, 40), (2001, 300), (2002, 1000), (2003, 3000)),
             "held-out": ((1000, 40), (1001, 300), (1002, 1000), (1003, 3000), (1004, 8000))}


def split_problems(split: str, max_buffers: int):
    """The suite's programs of `split` ("train": those of at most `max_buffers` buffers; "held-out":
    all), then that split's generated programs (`GENERATED`)."""
    names = [n for n in suite.names(split) if split == "held-out" or suite.load(n).num_buffers <= max_buffers]
    return [suite.load(n) for n in names] + [generate(s, num_instructions=k) for s, k in GENERATED[split]]


def deferred_rules(problem) -> Rules:
    """The game these measurements play: the deferred one, early copy supply, auto columns."""
    return Rules(columns=auto_columns(problem), placement="deferred", copy_supply="early")


def _starts(problem, rules: Rules, solution, floor: float) -> list[float]:
    check_solution(problem, solution, what="a greedy game's solution")
    first = plan(problem, rules, decisions=solution.action).solution
    inter = plan(problem, rules, decisions=solution.action, interleave=True).solution
    placer = place(problem, solution, rules=rules, moves=0, fresh=False, budget_s=600)
    return [s.ret / floor for s in (first, inter, placer)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("train", "held-out"), default="train",
                        help="the tuning programs (the suite's training split, generated seeds 2000-2003) "
                             "or the held-out ones")
    parser.add_argument("--max-buffers", type=int, default=3000, help="the largest training program")
    parser.add_argument("--budget", type=float, default=120.0, help="the greedy solver's seconds a program")
    args = parser.parse_args(argv)
    columns = [f"{g} {p}" for g in ("immediate", "density") for p in ("first", "inter", "placer")]
    print(f"# greedy's starts, placed without moves, / the placement of no decisions ({args.split}; "
          f"{jax.device_count()} {jax.default_backend()}, {os.cpu_count()} cores)")
    print("| program | buffers | floor | " + " | ".join(columns) + " | density | s |")
    print("|---|---:|---:|" + "---:|" * len(columns) + "---:|---:|")
    table = []
    for problem in split_problems(args.split, args.max_buffers):
        began = time.perf_counter()
        rules = deferred_rules(problem)
        floor = place_nothing(problem, rules=rules, budget_s=600).ret
        instance = make_instance(problem, rules)
        state = jax.jit(lambda key, inst=instance: rollout(inst, key, greedy_policy, backup=True))(jax.random.key(0))
        immediate = to_solution(problem, state, rules, solver="greedy-immediate")
        result = solve(problem, "greedy", budget_s=args.budget, rules=rules, place=False)
        if not result.info.get("finished", True):
            print(f"(the density greedy's games on {problem.name} were cut at {args.budget} s)")
        row = _starts(problem, rules, immediate, floor) + _starts(problem, rules, result.solution, floor)
        table.append(row)
        print(f"| {problem.name} | {problem.num_buffers:,} | {floor:.6g} | " + " | ".join(f"{x:.4f}" for x in row)
              + f" | {result.info['density']} | {time.perf_counter() - began:.0f} |", flush=True)
    table = np.asarray(table)
    print("\n| start | at least the floor | above it |\n|---|---:|---:|")
    for j, name in enumerate(columns):
        print(f"| {name} | {int(np.sum(table[:, j] >= 1 - 1e-9))} of {len(table)} "
              f"| {int(np.sum(table[:, j] > 1 + 1e-9))} of {len(table)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
