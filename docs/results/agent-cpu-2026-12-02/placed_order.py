"""Table 2's written games placed: each solution's decisions placed without local moves
(`placer.place(moves=0)`, never below the game's own solution), beside the placement of no
decisions (`placer.place_nothing`), in the order of the placed returns. Every solution is
validated first (an invalid one is refused with the validator's violations).

    python placed_order.py PROBLEM NAME=SOLUTION [NAME=SOLUTION ...]
"""

import sys

from jaxmmap import validate
from jaxmmap.core.io import open_problem
from jaxmmap.core.problem import load_solution
from jaxmmap.solvers import rules_for
from jaxmmap.solvers.placer import place, place_nothing

problem = open_problem(sys.argv[1])
floor = place_nothing(problem, rules=rules_for(problem), budget_s=600).ret
rows = []
for item in sys.argv[2:]:
    name, path = item.split("=", 1)
    solution = load_solution(path)
    report = validate(problem, solution)
    if not report.ok:
        sys.exit(f"error: {name}'s solution {path} is invalid: {report}")
    rows.append((place(problem, solution, budget_s=600, moves=0).ret, name, solution.ret))
print(f"{sys.argv[1]}: no decisions placed {floor:.6g}")
for placed, name, own in sorted(rows, reverse=True):
    print(f"  {name}: placed {placed:.6g} (game's own {own:.6g}; placed over no decisions {placed / floor:.4f})")
