"""The main job: plays a problem and writes the best validated solution and a summary.

    python train.py --config configs/quickstart.py --workdir runs/quickstart
    python train.py --config configs/quickstart.py --config.games=4096 --workdir runs/big

Writes WORKDIR/solution.json (the best solution, checked by the independent validator) and
WORKDIR/summary.json. Until the MMap-MuZero agent lands (see the issues), the policies are the
simple ones of `jaxmmap.play`.
"""

import json
import os

from absl import app, flags
from ml_collections import config_flags

from jaxmmap import Rules, play, save_solution
from jaxmmap.cli import columns_for, open_problem, summarize

_CONFIG = config_flags.DEFINE_config_file("config", "configs/quickstart.py", "Job configuration.")
_WORKDIR = flags.DEFINE_string("workdir", "runs/quickstart", "Where results are written.")


def main(argv):
    del argv
    config = _CONFIG.value
    os.makedirs(_WORKDIR.value, exist_ok=True)
    problem = open_problem(config.problem)
    columns = columns_for(problem, config.columns)
    rules = Rules(columns=columns, nocopy_offset=config.nocopy_offset)
    results, best = [], None
    for policy in config.policies:
        games = 1 if policy == "greedy" else config.games
        solution, summary = play(problem, policy, seed=config.seed, games=games, rules=rules,
                                 backup=config.backup)
        results.append(summary)
        print(f"{policy:>8}: best return {summary['best_return']:.4f} over {games} games"
              f" ({summary['seconds_with_compile']:.1f} s with compilation)")
        if best is None or solution.ret > best.ret:
            best = solution
    path = os.path.join(_WORKDIR.value, "solution.json")
    save_solution(best, path)
    summary = {"problem": summarize(problem, columns), "config": config.to_dict(),
               "runs": results, "best": {"solver": best.solver, "return": best.ret, "file": path}}
    with open(os.path.join(_WORKDIR.value, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2, default=list)
    print(f"best: {best.solver} with return {best.ret:.4f} (validated) -> {path}")


if __name__ == "__main__":
    app.run(main)
