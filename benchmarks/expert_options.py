"""The expert search with other options, on the game's own return: how far it climbs above its
start (greedy's game) within a budget, for each option setting, seed and program.

    python benchmarks/expert_options.py --instances suite:alexnet_train_b32@tpu_v4i \\
        --budget 120 --seeds 0 1 2 --variants deviation_window=0 deviation_window=0.5

Each run is `agent.loop.fit` in the expert mode with the `muzero` solver's games per generation
and one generation a chunk, seeded with greedy's game (its first best game and center, as the
solver starts on large programs), for `--budget` seconds (compile included); its best game is
validated. No placement: this compares searches, not written solutions (`jaxmmap compare` does
that). Printed: per program and seed, each variant's best game return and its gain over greedy's
game; then per variant the geometric mean of best / greedy over all runs and the runs it is the
best of. Tune on the training split and generated seeds only.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys

os.environ.setdefault("JAXMMAP_COMPILATION_CACHE", "off")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from jaxmmap.agent.loop import fit  # noqa: E402
from jaxmmap.core.io import open_problems  # noqa: E402
from jaxmmap.core.rules import Rules  # noqa: E402
from jaxmmap.env.rollout import generation_games  # noqa: E402
from jaxmmap.solvers import agents  # noqa: E402


def variant(text: str) -> dict:
    """'k=v,k2=v2' (JSON values) as options; '_' for none."""
    if text == "_":
        return {}
    return {k: json.loads(v) for k, v in (item.split("=", 1) for item in text.split(","))}


def best_return(problem, options: dict, budget_s: float, seed: int, start) -> float:
    opts = dict(games=generation_games(problem.num_buffers, 64), generations_per_chunk=1, **options)
    outcome = fit(problem, agents.agent_config(**opts), rules=Rules(), seed=seed, budget_s=budget_s,
                  demonstration=start.action)
    return start.ret if outcome.solution is None else outcome.solution.ret  # (validated by fit)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--instances", nargs="+", required=True)
    parser.add_argument("--budget", type=float, default=120.0)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--variants", nargs="+", required=True, help="KEY=VALUE[,KEY=VALUE] or _ (the defaults)")
    args = parser.parse_args()
    logs = {v: [] for v in args.variants}
    for problem in open_problems(args.instances):
        start = agents.greedy(problem, 120.0, 0, rules=Rules()).solution
        for seed in args.seeds:
            got = {v: best_return(problem, variant(v), args.budget, seed, start) for v in args.variants}
            top = max(got.values())
            cells = "  ".join(f"{v}: {r:.4f} ({100 * (r / start.ret - 1):+.2f}%)" for v, r in got.items())
            print(f"{problem.name} ({problem.num_buffers:,} buffers, greedy {start.ret:.4f}) seed {seed}: {cells}",
                  flush=True)
            for v, r in got.items():
                logs[v].append((r / start.ret, r == top))
    for v, rows in logs.items():
        mean = math.exp(sum(math.log(x) for x, _ in rows) / len(rows))
        print(f"{v}: geometric mean best/greedy {mean:.4f}; the best of {sum(b for _, b in rows)} of {len(rows)} runs")


if __name__ == "__main__":
    main()
