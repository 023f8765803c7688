"""Trains MMap-MuZero (or one of its ablations) on one problem and writes the best solution.

    python train.py --config configs/quickstart.py --workdir runs/quickstart
    python train.py --config configs/paper.py --config.problem=suite:resnet... --workdir runs/p
    python train.py --config configs/quickstart.py --config.agent.mode=alphazero --workdir runs/az

WORKDIR gets metrics.csv / metrics.jsonl / tensorboard/ (one row per chunk), checkpoints/ (orbax;
running the same command again resumes where it stopped, bit for bit), solution.json (the best
game, validated) and summary.json. A progress bar shows the mean and best return and the loss.

Multi-host: start the same command on every host after `jax.distributed.initialize()` (see
docs/agent.md); the games are split over all local devices of each host.
"""

import json
import os

from absl import app, flags, logging
from ml_collections import config_flags

from jaxmmap import Rules, save_solution
from jaxmmap.agent.loop import agent_config, fit
from jaxmmap.cli import columns_for, compilation_cache, open_problem, summarize

_CONFIG = config_flags.DEFINE_config_file("config", "configs/quickstart.py", "Job configuration.")
_WORKDIR = flags.DEFINE_string("workdir", "runs/quickstart", "Where results are written.")
_DISTRIBUTED = flags.DEFINE_bool("distributed", False, "Call jax.distributed.initialize() first.")


def main(argv):
    del argv
    logging.set_verbosity(logging.WARNING)  # orbax logs every checkpoint step at INFO
    if _DISTRIBUTED.value:
        import jax

        jax.distributed.initialize()
    compilation_cache()
    config = _CONFIG.value
    workdir = _WORKDIR.value
    os.makedirs(workdir, exist_ok=True)
    problem = open_problem(config.problem)
    columns = columns_for(problem, config.columns)
    rules = Rules(columns=columns, nocopy_offset=config.nocopy_offset,
                  output_nocopy=config.get("output_nocopy", True))
    agent = agent_config(**config.agent.to_dict())
    print(f"{problem.name}: {problem.num_buffers} buffers, {problem.num_steps} steps;"
          f" mode {agent.mode}, {agent.games} games, {agent.num_simulations} simulations")
    outcome = fit(problem, agent, rules=rules, seed=config.seed, budget_s=config.budget_s,
                  max_iterations=config.training_steps, workdir=workdir,
                  checkpoint_every=config.checkpoint_every, progress=True, solver=agent.mode)
    best = outcome.solution
    heuristic = None
    if config.prod:
        from jaxmmap.solvers.heuristic import heuristic as run_heuristic

        heuristic = run_heuristic(problem, 60.0, config.seed, rules=rules).solution
        if best is None or heuristic.ret > best.ret:
            best = heuristic
    if best is None:
        raise SystemExit("error: no game finished within the budget; raise --config.budget_s")
    save_solution(best, os.path.join(workdir, "solution.json"))
    last = outcome.history[-1] if outcome.history else {}
    summary = {
        "problem": summarize(problem, columns), "config": config.to_dict(),
        "iterations": last.get("iteration"), "episodes": last.get("episodes"),
        "seconds": outcome.seconds,
        "agent_return": None if outcome.solution is None else outcome.solution.ret,
        "heuristic_return": None if heuristic is None else heuristic.ret,
        "best": {"solver": best.solver, "return": best.ret},
    }
    with open(os.path.join(workdir, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2, default=list)
    agent_ret = "none" if outcome.solution is None else f"{outcome.solution.ret:.6g}"
    line = f"agent ({agent.mode}) best return {agent_ret}"
    if heuristic is not None:
        line += f"; heuristic {heuristic.ret:.6g}; prod {max(best.ret, heuristic.ret):.6g}"
    print(f"{line}; {last.get('iteration', 0)} iterations, {last.get('episodes', 0)} games in"
          f" {outcome.seconds:.0f} s -> {os.path.join(workdir, 'solution.json')}")


if __name__ == "__main__":
    app.run(main)
