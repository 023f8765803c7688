"""One table from several `jaxmmap compare` folders: the same instances, solvers run apart.

Compare runs that ran side by side (one solver per core, say) each wrote their own
results.csv. This prints one markdown row per instance. Each row has every solver's mean return
over its seeds, with its share of the instance's bound when a folder holds one. It then counts
the instances where solver A is at least solver B.

    python benchmarks/merge_results.py OUT/es OUT/agent --a muzero --b es   # two `compare` folders
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import sys

import numpy as np

from jaxmmap.core import suite as benchmarks  # noqa: E402


def read(folders: list[str]) -> tuple[dict, dict, list[str]]:
    """(instance, solver) -> the ok returns; instance -> bound; solvers in order seen."""
    returns, bounds, solvers = {}, {}, []
    for folder in folders:
        path = os.path.join(folder, "results.csv")
        if not os.path.exists(path):
            raise SystemExit(f"error: {path}: missing; give folders written by jaxmmap compare -o")
        with open(path, newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                key = (row["instance"], row["solver"])
                returns.setdefault(key, [])
                if row["status"] == "ok":
                    returns[key].append(float(row["return"]))
                if row["bound"]:
                    bounds[row["instance"]] = float(row["bound"])
                if row["solver"] not in solvers:
                    solvers.append(row["solver"])
    return returns, bounds, solvers


def table(returns: dict, bounds: dict, solvers: list[str], a: str, b: str) -> str:
    instances = list(dict.fromkeys(i for i, _ in returns))
    sizes = {row["name"]: row["buffers"] for row in benchmarks.info()}
    lines = ["| instance | buffers | bound | " + " | ".join(solvers) + f" | {a} / {b} | {a} >= {b} |",
             "|---|---:|---:|" + "---:|" * len(solvers) + "---:|:-:|"]
    wins = counted = 0
    for inst in instances:
        bound = bounds.get(inst, math.nan)
        mean = {s: float(np.mean(returns[inst, s])) if returns.get((inst, s)) else math.nan
                for s in solvers}
        cells = []
        for s in solvers:
            v = mean[s]
            share = f" ({100 * v / bound:.1f}%)" if math.isfinite(bound) and bound > 0 else ""
            cells.append("" if math.isnan(v) else f"{v:.5g}{share}")
        ratio, verdict = "", ""
        if math.isfinite(mean.get(a, math.nan)) and math.isfinite(mean.get(b, math.nan)):
            counted += 1
            won = mean[a] >= mean[b] - 1e-9 * abs(mean[b])
            wins += won
            ratio, verdict = f"{mean[a] / mean[b]:.4f}", "yes" if won else "no"
        size = f"{sizes[inst]:,}" if inst in sizes else ""
        lines.append(f"| {inst} | {size} | {bound:.5g} | " + " | ".join(cells) +
                     f" | {ratio} | {verdict} |")
    lines += ["", f"{a} >= {b} on {wins} of {counted} instances"]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+")
    parser.add_argument("--a", default="muzero", help="the solver counted (default: the agent)")
    parser.add_argument("--b", default="es", help="the solver it is counted against")
    args = parser.parse_args(argv)
    returns, bounds, solvers = read(args.folders)
    print(table(returns, bounds, solvers, args.a, args.b))
    return 0


if __name__ == "__main__":
    sys.exit(main())
