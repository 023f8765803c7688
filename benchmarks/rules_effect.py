"""What the paper's NoCopy of an output (the pin, docs/game.md) is worth: the same solvers on the
same instances under the paper's rules and under the older game without pins.

    python benchmarks/rules_effect.py --budget 10 -o docs/results/rules-cpu-DATE

runs `jaxmmap.harness.compare` twice (every solution validated, the same wall-clock budget per run,
compilation included) and writes OUT/paper/ and OUT/older/ (the usual comparison folders) and
OUT/README.md: per instance, each solver's return under both rule sets, their ratio, and the
upper bound under each (the LP relaxation bound of `jaxmmap.solvers.cpsat`). `--reuse` reads
back folders already written instead of running them again.
"""

from __future__ import annotations

import argparse
import fnmatch
import math
import os
import platform
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from jaxmmap import bundled  # noqa: E402
from jaxmmap.core import suite as benchmarks  # noqa: E402
from jaxmmap.core.rules import Rules, auto_columns  # noqa: E402
from jaxmmap.harness.compare import Comparison, compare  # noqa: E402
from jaxmmap.solvers.cpsat import upper_bound  # noqa: E402

RULE_SETS = {"older": False, "paper": True}  # name -> Rules.output_nocopy


def _problems(patterns: list[str]):
    out = [bundled("tiny")] if "bundled:tiny" in patterns else []
    names = benchmarks.names()
    for pattern in patterns:
        if pattern.startswith("suite:"):
            out += [benchmarks.load(n) for n in fnmatch.filter(names, pattern[len("suite:"):])]
    return out


def _run(problems, solvers, budget, seeds, output_nocopy, directory, reuse, limits, bound_again=False):
    """One comparison folder: every solver on every problem, except that a solver named in
    `limits` runs only on problems of at most that many buffers."""
    if reuse and os.path.exists(os.path.join(directory, "traces.json")):
        result = Comparison.load(directory)
        if bound_again:  # (folders written before compare took the rules' bound)
            result.bounds = {p.name: float(upper_bound(p, rules=Rules(output_nocopy=output_nocopy)))
                             for p in problems}
            result.save(directory)
        return result
    kwargs = dict(budget_s=budget, seeds=seeds,
                  rules=lambda p: Rules(columns=auto_columns(p), output_nocopy=output_nocopy),
                  log=lambda line: print(line, file=sys.stderr, flush=True))
    result = compare(problems, [s for s in solvers if s not in limits], **kwargs)
    for solver, most in limits.items():
        if solver in solvers:
            part = compare([p for p in problems if p.num_buffers <= most], [solver], bound=False, **kwargs)
            result.runs += part.runs
            result.solutions.update(part.solutions)
    result.save(directory)
    return result


def _table(problems, solvers, results: dict[str, Comparison], budget: float, seeds: int, es_max: int) -> str:
    means = {name: {(r["instance"], r["solver"]): r["mean_return"] for r in res.rows()}
             for name, res in results.items()}
    lines = [
        "# The pin (NoCopy of an output): before and after", "",
        f"Budget {budget:g} s of wall time per run (compilation included), {seeds} seed(s);"
        f" {platform.processor() or platform.machine()}, {os.cpu_count()} CPU cores."
        " *older*: `Rules(output_nocopy=False)`, the game before the pin; *paper*: the default"
        " rules (Appendix A). Mean validated return over the seeds; *x*: paper / older. *bound*:"
        " the LP relaxation bound under each rule set. es runs only up to"
        f" {es_max:,} buffers (`--es-max-buffers`): on larger training programs one generation"
        " outlasts a short budget by minutes. Reproduce with"
        f" `python benchmarks/rules_effect.py --budget {budget:g}`.", "",
        "| instance | buffers | " + " | ".join(f"{s} older | {s} paper | x" for s in solvers)
        + " | bound older | bound paper |",
        "|---|---:|" + "---:|---:|---:|" * len(solvers) + "---:|---:|",
    ]
    ratios: dict[str, list[float]] = {s: [] for s in solvers}
    for p in problems:
        cells = [f"`{p.name}`", f"{p.num_buffers:,}"]
        for s in solvers:
            old, new = means["older"].get((p.name, s), math.nan), means["paper"].get((p.name, s), math.nan)
            ratio = new / old if old > 0 and new == new else math.nan
            if ratio == ratio:
                ratios[s].append(ratio)
            cells += [_fmt(old), _fmt(new), f"{ratio:.2f}" if ratio == ratio else ""]
        cells += [_fmt(results[k].bounds.get(p.name, math.nan)) for k in ("older", "paper")]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Geometric mean of paper / older over the instances where both ran:", ""]
    for s in solvers:
        r = ratios[s]
        if not r:
            lines.append(f"- {s}: no instance with a positive return under both rule sets")
            continue
        gm = math.exp(sum(math.log(x) for x in r) / len(r)) if r else math.nan
        lines.append(f"- {s}: {gm:.3f} over {len(r)} instances (min {min(r, default=math.nan):.3f},"
                     f" max {max(r, default=math.nan):.3f})")
    return "\n".join(lines) + "\n"


def _fmt(x: float) -> str:
    return "" if x != x else f"{x:,.4g}"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--instances", nargs="+", default=["bundled:tiny", "suite:*"])
    parser.add_argument("--solvers", nargs="+", default=["heuristic", "greedy", "es", "pinning"])
    parser.add_argument("--budget", type=float, default=10.0)
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--reuse", action="store_true", help="read back comparison folders already written")
    parser.add_argument("--bound-again", action="store_true", help="with --reuse: recompute the bounds")
    parser.add_argument("--es-max-buffers", type=int, default=3000,
                        help="run es only up to this size: one of its generations (vmapped games that all"
                        " play to their end, Drop-backup restores included) can outlast a short budget by"
                        " many minutes on the large training programs")
    args = parser.parse_args()
    problems = sorted(_problems(args.instances), key=lambda p: p.num_buffers)
    if not problems:
        parser.error(f"no instance matches {args.instances}")
    results = {name: _run(problems, args.solvers, args.budget, args.seeds, flag,
                          os.path.join(args.output, name), args.reuse, {"es": args.es_max_buffers},
                          args.bound_again)
               for name, flag in RULE_SETS.items()}
    text = _table(problems, args.solvers, results, args.budget, args.seeds, args.es_max_buffers)
    with open(os.path.join(args.output, "README.md"), "w", encoding="utf-8") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
