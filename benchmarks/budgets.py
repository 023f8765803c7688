"""Issue 26's table: does every solver end within 1.1x its budget plus 10 s, at any size, with a
valid solution?

    python benchmarks/budgets.py --budgets 30 120 -o docs/results/budgets.json
    python benchmarks/budgets.py --solvers greedy random --instances suite:gpt_large_train@tpu_v4i

Each solver runs once (seed 0) through `solvers.solve`, as `jaxmmap solve` does (placer on),
on the suite's largest instance and a generated program of about 50,000 buffers (or the
instances given), compilation included, with JAX's persistent compilation cache off. Printed
per run: seconds used, the ratio to the budget, whether the promise held (<= 1.1 x budget +
10 s), the return of the validated solution, or the one-line reason it has none. The JSON is
rewritten atomically after every run, so a long run keeps what it measured.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("JAXMMAP_COMPILATION_CACHE", "off")

from jaxmmap import Rules, generate  # noqa: E402
from jaxmmap.core.files import write_json  # noqa: E402
from jaxmmap.core.io import open_problem  # noqa: E402
from jaxmmap.core.rules import auto_columns  # noqa: E402
from jaxmmap.core.validator import validate  # noqa: E402
from jaxmmap.solvers import SOLVERS, solve  # noqa: E402

DEFAULT_SOLVERS = ["random", "greedy", "pinning", "heuristic", "es", "egrl", "mcts", "muzero", "muzero-prod"]


def promise(budget_s: float) -> float:
    return 1.1 * budget_s + 10.0


def instances(names: list[str] | None):
    if names:
        for name in names:
            yield name, open_problem(name)
        return
    yield "suite:gpt_large_train@tpu_v4i", open_problem("suite:gpt_large_train@tpu_v4i")
    yield "generated 17,000 instructions", generate(50_000, num_instructions=17_000)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--budgets", type=float, nargs="+", default=[30.0, 120.0])
    parser.add_argument("--solvers", nargs="+", default=DEFAULT_SOLVERS, choices=sorted(SOLVERS))
    parser.add_argument("--instances", nargs="*", help="PROBLEM arguments (default: the two above)")
    parser.add_argument("-o", "--output", help="JSON file of the rows")
    args = parser.parse_args()
    rows = []
    print(f"{'instance':34} {'buffers':>8} {'solver':12} {'budget':>7} {'used':>7} {'ratio':>6} {'kept':>5} {'return':>12}")
    for label, problem in instances(args.instances):
        rules = Rules(columns=auto_columns(problem))
        for budget in args.budgets:
            for solver in args.solvers:
                t0 = time.perf_counter()
                try:
                    result = solve(problem, solver, budget_s=budget, seed=0, rules=rules)
                    ok = validate(problem, result.solution).ok
                    ret, note = result.solution.ret, "" if ok else "INVALID"
                except Exception as e:  # noqa: BLE001 - a benchmark reports, it does not stop
                    ret, note = float("nan"), f"{type(e).__name__}: {str(e).splitlines()[0][:80] if str(e) else ''}"
                used = time.perf_counter() - t0
                row = {"instance": label, "buffers": problem.num_buffers, "solver": solver, "budget_s": budget,
                       "seconds": used, "ratio": used / budget, "kept": used <= promise(budget),
                       "return": ret, "note": note}
                rows.append(row)
                print(f"{label[:34]:34} {problem.num_buffers:>8,} {solver:12} {budget:>7g} {used:>7.1f} "
                      f"{used / budget:>6.2f} {'yes' if row['kept'] else 'NO':>5} {ret:>12.6g} {note}", flush=True)
                if args.output:
                    write_json(args.output, {"rows": rows}, indent=1)
    kept = sum(r["kept"] for r in rows)
    print(f"promise kept (<= 1.1 x budget + 10 s) in {kept} of {len(rows)} runs")


if __name__ == "__main__":
    main()
