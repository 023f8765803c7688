"""Game solutions placed physically, beside the heuristic, on the bundled
instance, the 8 smallest suite instances and 3 generated programs of 300-1,000 buffers.

    python benchmarks/placer_targets.py --budget 30 -o docs/results/placer_targets.json

Per instance, each solver runs once (seed 0) under the same wall-clock budget, compilation
included (`solvers.solve`, which keeps `placer.PLACE_SHARE` of a game solver's budget for the
placer):
- `heuristic`: its best plan's return (*plan*), then after its local moves (*heuristic*);
- `es` and `muzero` (the agent): the game's own return (*raw*) and the placed one (*placed*);
- *ES, placed without moves*: `place(..., moves=0)` of ES's raw solution (placement and growth);
- *CP-SAT, ES's decisions*: `cpsat(decisions=...)`, the best placement and growth of ES's raw
  decisions that CP-SAT finds in the same budget (up to `cpsat.MAX_BUFFERS` buffers; "*" when
  proven optimal): how close placement and growth get, before the moves.

Every return is that of a validated solution. The target: placed ES and placed agent
reach the heuristic plan's return on at least 75% of the instances. The JSON output is rewritten
(atomically) after every instance, so a long run keeps what it measured.
"""

from __future__ import annotations

import argparse
import time

from jaxmmap import Rules, bundled, generate
from jaxmmap.core.files import write_json
from jaxmmap.core.rules import auto_columns
from jaxmmap.core.suite import load, names
from jaxmmap.solvers import solve
from jaxmmap.solvers.base import NoGameError
from jaxmmap.solvers.cpsat import MAX_BUFFERS
from jaxmmap.solvers.placer import place


def instances():
    """The bundled instance, the 8 smallest suite instances, 3 generated ones (366, 594 and 906
    buffers)."""
    suite = sorted(names(), key=lambda name: (load(name).num_buffers, name))[:8]
    yield "bundled:tiny", bundled("tiny")
    for name in suite:
        yield f"suite:{name}", load(name)
    for seed, size in ((1, 120), (3, 200), (2, 300)):
        yield f"generate({seed}, num_instructions={size})", generate(seed, num_instructions=size)


def measure(problem, budget_s: float) -> dict:
    rules = Rules(columns=auto_columns(problem))
    row = {"buffers": problem.num_buffers}
    h = solve(problem, "heuristic", budget_s=budget_s, rules=rules)
    row.update(plan=h.info["plan_return"], heuristic=h.solution.ret, heuristic_moves=h.info["moves"])
    es = solve(problem, "es", budget_s=budget_s, rules=rules)
    row.update(es_raw=es.raw.ret, es_placed=es.solution.ret)
    row["es_placed_no_moves"] = place(problem, es.raw, rules=rules, budget_s=budget_s, moves=0).ret
    try:
        agent = solve(problem, "muzero", budget_s=budget_s, rules=rules)
        row.update(agent_raw=agent.raw.ret, agent_placed=agent.solution.ret)
    except NoGameError:
        row.update(agent_raw=None, agent_placed=None)
    if problem.num_buffers <= MAX_BUFFERS:
        exact = solve(problem, "cpsat", budget_s=budget_s, rules=rules, decisions=es.raw)
        row.update(cpsat_es_decisions=exact.solution.ret, cpsat_proven=exact.info["proven_optimal"])
    return row


def _cell(value, star=False) -> str:
    return "–" if value is None else f"{value:.5g}" + ("*" if star else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=30.0, help="seconds per solver run")
    parser.add_argument("-o", "--output", help="JSON file of the rows (rewritten per instance)")
    args = parser.parse_args()
    rows = {}
    print("| instance (buffers) | plan | heuristic | ES raw | ES placed, no moves | ES placed | "
          "CP-SAT, ES's decisions | agent raw | agent placed |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, problem in instances():
        t0 = time.perf_counter()
        row = rows[name] = measure(problem, args.budget)
        row["seconds"] = time.perf_counter() - t0
        print(f"| {name} ({row['buffers']:,}) | {_cell(row['plan'])} | {_cell(row['heuristic'])} | "
              f"{_cell(row['es_raw'])} | {_cell(row['es_placed_no_moves'])} | {_cell(row['es_placed'])} | "
              f"{_cell(row.get('cpsat_es_decisions'), row.get('cpsat_proven', False))} | "
              f"{_cell(row['agent_raw'])} | {_cell(row['agent_placed'])} |", flush=True)
        if args.output:
            write_json(args.output, {"budget_s": args.budget, "rows": rows})
    for solver in ("es", "agent"):
        reached = sum(r[f"{solver}_placed"] is not None and r[f"{solver}_placed"] >= r["plan"] - 1e-9
                      for r in rows.values())
        beat = sum(r[f"{solver}_placed"] is not None and r[f"{solver}_placed"] >= r["heuristic"] - 1e-9
                   for r in rows.values())
        print(f"{solver} placed >= heuristic plan on {reached}/{len(rows)} "
              f"({100 * reached / len(rows):.0f}%; target 75%); >= heuristic after its moves on "
              f"{beat}/{len(rows)}")


if __name__ == "__main__":
    main()
