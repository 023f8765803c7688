"""Figure 7 of the paper: the full agent against its ablations, as curves of the best return over
wall time, on one instance.

    python benchmarks/agent_ablations.py --budget 300 --seeds 1 -o docs/results/agent-cpu-DATE/ablations

Each variant is the `muzero` solver (`jaxmmap.solvers.agents.muzero`) with its options, run by the
comparison harness (`jaxmmap.harness.compare`: the same budget, compilation included, every solution
validated, returns as fractions of the LP bound); the runs are relabelled with the variant's
name and written as one comparison folder (results.md, curves.png: the figure, traces.json).

Variants:
* `agent`: the default (the expert mode: search over the true game, the network learning);
* `search, no learning`: the same search with the network frozen at its start (learning rate
  0): the paper's "MCTS without learning" ablation, for this agent;
* `learning, no search`: the network's policy plays alone and learns by policy gradient
  (mode no_search, the paper's "MCTS disabled");
* `muzero (paper)`: the paper's agent, the learned model in the search (mode muzero).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from jaxmmap.core.io import open_problem  # noqa: E402
from jaxmmap.harness.compare import Comparison, compare  # noqa: E402

VARIANTS = {
    "agent": {},
    "search, no learning": {"learning_rate": 0.0},
    "learning, no search": {"mode": "no_search"},
    "muzero (paper)": {"mode": "muzero"},
}


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--instance", default="bundled:tiny")
    parser.add_argument("--budget", type=float, default=300.0)
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    parser.add_argument("--agent-from", default=None, metavar="DIR",
                        help="take the `agent` runs from the muzero runs of this comparison"
                             " folder (same instance and budget) instead of running them")
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args()
    problem = open_problem(args.instance)
    merged: Comparison | None = None
    if args.agent_from:
        merged = Comparison.load(args.agent_from)
        if merged.budget_s != args.budget:
            raise SystemExit(f"error: {args.agent_from} ran {merged.budget_s} s, not {args.budget}")
        merged.runs = [dataclasses.replace(r, solver="agent") for r in merged.runs
                       if r.solver == "muzero" and r.instance == problem.name]
        merged.solutions = {(i, "agent"): s for (i, solver), s in merged.solutions.items()
                            if solver == "muzero" and i == problem.name}
        args.variants = [v for v in args.variants if v != "agent"]
    for name in args.variants:
        part = compare([problem], ["muzero"], budget_s=args.budget, seeds=args.seeds,
                       options={"muzero": VARIANTS[name]}, bound=merged is None,
                       log=lambda line, name=name: print(f"[{name}] {line}", file=sys.stderr,
                                                         flush=True))
        part.runs = [dataclasses.replace(r, solver=name) for r in part.runs]
        part.solutions = {(i, name): s for (i, _), s in part.solutions.items()}
        if merged is None:
            merged = part
        else:
            merged.runs += part.runs
            merged.solutions.update(part.solutions)
    merged.save(args.output)
    print(merged.markdown())


if __name__ == "__main__":
    main()
