"""Table 2's runs of `table2_placed.sh`, each game placed: for every run NAME (NAME.json, the
`jaxmmap solve --json` output, and NAME.sol.json.gz, its solution), the game's own return and its
decisions placed without local moves (`placer.place(moves=0)`, never below the game's own
solution), the simulated speed-up of each over the heuristic, the run's seconds, generations
and restarts; then each solver's means, and the placement of no decisions
(`placer.place_nothing`). Every solution is validated first (an invalid one is refused with the
validator's violations).

    python table2_placed.py PROBLEM NAME [NAME ...]
"""

import json
import sys
from collections import defaultdict

from jaxmmap import validate
from jaxmmap.core.io import open_problem
from jaxmmap.core.problem import load_solution
from jaxmmap.solvers import rules_for
from jaxmmap.solvers.placer import place, place_nothing


def speedup(ret: float, run: dict) -> float:
    """The simulated speed-up over the heuristic, in %, of a solution of return `ret` (`run`: a
    `jaxmmap solve --json` output, its latencies)."""
    return (run["heuristic_latency"] / (run["all_slow"] - ret) - 1) * 100


problem = open_problem(sys.argv[1])
floor = place_nothing(problem, rules=rules_for(problem), budget_s=600).ret
rows, means = [], defaultdict(list)
for name in sys.argv[2:]:
    run = json.load(open(f"{name}.json"))
    solution = load_solution(f"{name}.sol.json.gz")
    report = validate(problem, solution)
    if not report.ok:
        sys.exit(f"error: {name}'s solution is invalid: {report}")
    placed = place(problem, solution, budget_s=600, moves=0).ret
    info = run["info"]
    solver, seed = name.rsplit("-s", 1)
    rows.append(f"| {solver} | {seed} | {solution.ret:.6g} ({speedup(solution.ret, run):+.2f}%) | "
                f"{placed:.6g} ({speedup(placed, run):+.2f}%) | {placed / floor:.4f} | {run['seconds']:.0f} | "
                f"{info.get('iterations', info.get('generations'))} | {info.get('restarts')} |")
    means[solver].append((solution.ret, placed, speedup(solution.ret, run), speedup(placed, run)))
print(f"{sys.argv[1]}: {problem.num_buffers} buffers; the placement of no decisions {floor:.6g}\n")
print("| solver | seed | game's own return | placed | placed / no decisions | s | generations | restarts |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
print("\n".join(rows))
print("\n| solver | runs | mean game return | mean placed | mean placed / no decisions |\n|---|---:|---:|---:|---:|")
for solver, values in means.items():
    game, placed, game_up, placed_up = (sum(column) / len(values) for column in zip(*values))
    print(f"| {solver} | {len(values)} | {game:.6g} ({game_up:+.2f}%) | {placed:.6g} ({placed_up:+.2f}%) "
          f"| {placed / floor:.4f} |")
