"""Budgets: does every solver end within 1.1x its budget plus 10 s, at any size, with a
valid solution, and within 8 GB of memory?

    python benchmarks/budgets.py --budgets 30 120 -o docs/results/budgets.json
    python benchmarks/budgets.py --solvers greedy random --instances suite:gpt_large_train@tpu_v4i
    python benchmarks/budgets.py --solvers muzero --option muzero.pretrained=true

Each run is what a user types, `jaxmmap solve P --solver S --budget B --seed 0` (placer on, no
heuristic baseline), in a fresh process with JAX's persistent compilation cache off, so start-up
and compilation count. The instances are the suite's largest and a generated program of about
50,000 buffers (or those given). Printed per run: wall-clock seconds of the process, the ratio
to the budget, whether the promise held (<= 1.1 x budget + 10 s), the process's peak resident
memory, and the return of the written solution, validated here again, or the error line the
command printed (a run still going a minute past its promise is killed). The JSON is rewritten
atomically after every run, so a long run keeps what it measured.
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from jaxmmap import generate
from jaxmmap.core.files import UserError, check_output, finite, write_json
from jaxmmap.core.io import open_problem
from jaxmmap.core.problem import load_solution, save_problem
from jaxmmap.core.validator import validate
from jaxmmap.solvers import SOLVERS

DEFAULT_SOLVERS = ["random", "greedy", "pinning", "heuristic", "es", "egrl", "mcts", "muzero", "muzero-prod", "generalist"]
MEMORY_GB = 8.0


def promise(budget_s: float) -> float:
    return 1.1 * budget_s + 10.0


def instances(names: list[str] | None, folder: Path):
    """(label, PROBLEM argument, problem) for each instance."""
    if not names:
        path = folder / "generated-50k.json"
        save_problem(generate(50_000, num_instructions=17_000), path)
        names = ["suite:gpt_large_train@tpu_v4i", str(path)]
    for name in names:
        label = "generated 17,000 instructions" if name.endswith("generated-50k.json") else name
        yield label, name, open_problem(name)


def run(argument: str, solver: str, budget: float, out: Path, timeout: float, options: list[str] = ()):
    """Runs one `jaxmmap solve` (`options`: its `--option KEY=VALUE`s); returns (seconds, peak RSS in
    GB, error line or "")."""
    command = [sys.executable, "-m", "jaxmmap", "solve", argument, "--solver", solver, "--budget", f"{budget:g}",
               "--seed", "0", "--baseline-budget", "0", "-o", str(out)]
    command += [arg for option in options for arg in ("--option", option)]
    env = dict(os.environ, JAXMMAP_COMPILATION_CACHE="off")
    errors = out.with_suffix(".stderr")
    t0 = time.perf_counter()
    with open(errors, "w") as err:
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err, env=env)
        timer = threading.Timer(timeout, child.kill)  # a hung run is reported, not waited for
        timer.start()
        _, status, usage = os.wait4(child.pid, 0)  # this child's own peak memory
        timer.cancel()
    seconds = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    lines = [line for line in errors.read_text().splitlines() if line.startswith("error:")]
    note = lines[-1] if lines else ("" if code == 0 else f"exit {code} (killed after {timeout:.0f} s?)")
    return seconds, usage.ru_maxrss / 2 ** 20, note  # ru_maxrss: KiB on Linux


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--budgets", type=float, nargs="+", default=[30.0, 120.0])
    parser.add_argument("--solvers", nargs="+", default=DEFAULT_SOLVERS, choices=sorted(SOLVERS))
    parser.add_argument("--instances", nargs="*", help="PROBLEM arguments (default: the two above)")
    parser.add_argument("--option", action="append", default=[], metavar="SOLVER.KEY=VALUE",
                        help="passed to every run as `jaxmmap solve --option` (a solver's own options)")
    parser.add_argument("-o", "--output", help="JSON file of the rows")
    args = parser.parse_args()
    rows = []
    strays = [o for o in args.option if o.split(".", 1)[0] not in args.solvers or "=" not in o]
    if strays:
        parser.error(f"--option {strays[0]!r}: write SOLVER.KEY=VALUE for a solver in --solvers")
    if not all(math.isfinite(b) and b > 0 for b in args.budgets):
        parser.error(f"--budgets {' '.join(f'{b:g}' for b in args.budgets)}: give positive, finite seconds")
    if args.output:
        try:
            check_output(args.output)
        except UserError as e:
            parser.error(str(e))
    if args.option:
        print("options:", " ".join(args.option))
    print(f"{'instance':34} {'buffers':>8} {'solver':12} {'budget':>7} {'used':>7} {'ratio':>6} {'kept':>5} "
          f"{'peak GB':>8} {'return':>12}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        try:  # (every instance read before the first run)
            todo = list(instances(args.instances, folder))
        except (UserError, ValueError, OSError) as e:
            parser.error(str(e).splitlines()[0])
        for label, argument, problem in todo:
            for budget in args.budgets:
                for solver in args.solvers:
                    out = folder / f"{solver}-{budget:g}.json"
                    own = [o for o in args.option if o.startswith(f"{solver}.")]
                    seconds, peak_gb, note = run(argument, solver, budget, out, timeout=promise(budget) + 60,
                                                 options=[o.split(".", 1)[1] for o in own])
                    ret = float("nan")
                    if not note:
                        solution = load_solution(out)
                        report = validate(problem, solution)
                        ret, note = (solution.ret, "") if report.ok else (float("nan"), "INVALID")
                    row = {"instance": label, "buffers": problem.num_buffers, "solver": solver,
                           "options": own, "budget_s": budget,
                           "seconds": seconds, "ratio": seconds / budget, "kept": seconds <= promise(budget),
                           "peak_gb": peak_gb, "memory_kept": peak_gb <= MEMORY_GB, "return": ret, "note": note}
                    rows.append(row)
                    print(f"{label[:34]:34} {problem.num_buffers:>8,} {solver:12} {budget:>7g} {seconds:>7.1f} "
                          f"{seconds / budget:>6.2f} {'yes' if row['kept'] else 'NO':>5} {peak_gb:>8.2f} "
                          f"{ret:>12.6g} {note}", flush=True)
                    if args.output:
                        write_json(args.output, finite({"rows": rows}), indent=1)
    kept = sum(r["kept"] for r in rows)
    memory = sum(r["memory_kept"] for r in rows)
    errors = sum(bool(r["note"]) for r in rows)
    print(f"promise kept (<= 1.1 x budget + 10 s) in {kept} of {len(rows)} runs; "
          f"peak memory <= {MEMORY_GB:g} GB in {memory} of {len(rows)}; no valid solution in {errors}")


if __name__ == "__main__":
    main()
