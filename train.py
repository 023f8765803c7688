"""Trains MMap-MuZero (or one of its ablations) on one problem and writes the best solution.

    python train.py --config configs/quickstart.py --workdir runs/quickstart
    python train.py --config configs/paper.py --config.problem=suite:resnet... --workdir runs/p
    python train.py --config configs/quickstart.py --config.agent.mode=alphazero --workdir runs/az

WORKDIR gets metrics.csv / metrics.jsonl / tensorboard/ (one row per chunk), checkpoints/ (orbax;
running the same command again resumes where it stopped, bit for bit), solution.json (the best
game, validated; it only ever improves, across kills and resumes) and summary.json. A progress
bar shows the mean and best return and the loss. The run is the `muzero-prod` solver
(`jaxmmap.solvers.agents.prod`) with a workdir: the heuristic first, so that solution.json holds
its plan from the start (`config.prod=False` leaves it out), then the agent, then its best game
placed; `config.budget_s` covers all three. A mistake (a missing problem, an unknown config
field, a workdir that is a file or holds another run) is one `error:` line and exit status 2
(flags) or 1, with nothing written.

A config of kind "generalist" (configs/generalist.py) pretrains the generalist instead:
`jaxmmap.agent.pretrain.pretrain` with the imitation teacher `jaxmmap.solvers.agents.teacher`
(WORKDIR/rows/, state.msgpack, params.msgpack, summary.json; the same command resumes).

Multi-host: start the same command on every host after `jax.distributed.initialize()` (see
docs/agent.md); the games are split over all local devices of each host.
"""

import os
import sys

from absl import app, flags, logging
from ml_collections import config_flags

from jaxmmap.agent.loop import agent_config, check_workdir, keep_best
from jaxmmap.agent.pretrain import pretrain
from jaxmmap.core.files import UserError, finite, owned, write_json
from jaxmmap.core.io import columns_for, open_problem, summarize
from jaxmmap.core.simulator import latency
from jaxmmap.env.compilation_cache import compilation_cache
from jaxmmap.harness.speed import baseline, speed
from jaxmmap.solvers import rules_for
from jaxmmap.solvers.agents import prod, teacher
from jaxmmap.solvers.base import NoGameError

_CONFIG = config_flags.DEFINE_config_file("config", "configs/quickstart.py", "Job configuration.")
_WORKDIR = flags.DEFINE_string("workdir", "runs/quickstart", "Where results are written.")
_DISTRIBUTED = flags.DEFINE_bool("distributed", False, "Call jax.distributed.initialize() first.")


def main(argv):
    del argv
    logging.set_verbosity(logging.WARNING)  # orbax logs every checkpoint step at INFO
    try:
        _train()
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(1)


def _train():
    if _DISTRIBUTED.value:
        import jax

        jax.distributed.initialize()
    compilation_cache()
    config = _CONFIG.value
    try:
        config.get("problem")  # (the config file loads on first use)
    except OSError as e:  # ml_collections: no such file, or it failed to load
        detail = " ".join(line.strip() for line in str(e).splitlines()[1:]) or str(e)
        raise UserError(f"--config: cannot load the config file ({detail})") from None
    workdir = _WORKDIR.value
    if config.get("kind") == "generalist":
        pretrain(config, workdir, teacher=teacher)  # the generalist (jaxmmap.agent.pretrain)
        return
    problem = open_problem(config.problem)  # before the workdir: a mistake leaves nothing behind
    columns = columns_for(problem, config.columns)
    rules = rules_for(problem, "muzero-prod", columns=columns, nocopy_offset=config.nocopy_offset,  # (prod's
                      output_nocopy=config.get("output_nocopy", True), placement=config.get("placement"),
                      copy_supply=config.get("copy_supply"))  # own game unless given, as `jaxmmap solve` plays it)
    try:
        agent = agent_config(**config.agent.to_dict())
    except (TypeError, ValueError) as e:
        raise UserError(f"the config's agent: {e}") from None
    for name in ("budget_s", "training_steps", "checkpoint_every"):
        value = config[name]
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not value > 0 \
                or value != value or value == float("inf"):
            raise UserError(f"--config.{name}={value!r}: give a positive, finite number")
    seed = config.get("seed", 0)
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2 ** 32:
        raise UserError(f"--config.seed={seed!r}: give a whole number in [0, 2**32)")
    with owned(check_workdir(workdir)):  # one run per workdir: a second one gets one error line
        solution_path = os.path.join(workdir, "solution.json")
        print(f"{problem.name}: {problem.num_buffers} buffers, {problem.num_steps} steps;"
              f" mode {agent.mode}, {agent.games} games, {agent.num_simulations} simulations")
        found = {}

        def on_solution(kind, solution):
            found[kind] = solution
            if kind == "heuristic":  # first: a kill during training keeps the heuristic's plan
                keep_best(solution_path, solution, problem)

        try:
            result = prod(problem, config.budget_s, config.seed, rules=rules, heuristic_first=config.prod,
                          on_solution=on_solution, max_iterations=config.training_steps, workdir=workdir,
                          checkpoint_every=config.checkpoint_every, progress=True, **config.agent.to_dict())
        except NoGameError:
            raise UserError("no game finished within the budget; raise --config.budget_s") from None
        best = keep_best(solution_path, result.solution, problem)
        heuristic, placed, info = found.get("heuristic"), found.get("placed"), result.info
        # the simulated speed beside every return: the written solution's and the agent's, against
        # the heuristic's (run here for at most 10 s when prod did not run it)
        base = latency(problem, heuristic if heuristic is not None else baseline(problem, best))
        written = speed(problem, best, against=base)
        agent_speed = None if placed is None else speed(problem, placed, against=base)
        summary = {
            "problem": summarize(problem, columns), "config": config.to_dict(),
            "iterations": info.get("iterations"), "episodes": info.get("episodes"),
            "seconds": result.seconds, "agent_return": info["agent"],
            "agent_placed_return": info["agent_placed"], "heuristic_return": info["heuristic"],
            "best": {"solver": best.solver, "return": best.ret},
            "written": written, "agent_placed": agent_speed,
        }
        write_json(os.path.join(workdir, "summary.json"), finite(summary), indent=2)
        agent_ret = "none" if info["agent"] is None else f"{info['agent']:.6g}"
        line = f"agent ({agent.mode}) best return {agent_ret}"
        if placed is not None and placed.ret > info["agent"]:
            line += f", placed {placed.ret:.6g}"
        if agent_speed is not None:
            line += f" ({_faster(agent_speed)})"
        if heuristic is not None:
            line += f"; heuristic {heuristic.ret:.6g}"
        (it0, games0), total = info.get("resumed") or (0, 0), info.get("iterations") or 0
        print(f"{line}; this run: {total - it0:,} iterations, {(info.get('episodes') or 0) - games0:,} games in"
              f" {result.seconds:.0f} s" + (f" (resumed at iteration {it0:,}; {total:,} in all)" if it0 else ""))
        which = "agent's and heuristic's" if heuristic is not None else "agent's"
        print(f"written: {best.solver} return {best.ret:.6g} (the best of the {which} solutions so far, placed),"
              f" simulated latency {written['latency']:.6g} {written['time_unit']} ({_faster(written)}) -> {solution_path}")


def _faster(row: dict) -> str:
    """`1.23% faster than the heuristic, simulated` (or slower)."""
    pct = row["speedup_over_heuristic_percent"]
    return f"{abs(pct):.2f}% {'faster' if pct >= 0 else 'slower'} than the heuristic, simulated"


def _parse_flags(argv):
    """absl's flag parsing, with a mistake as one `error:` line (exit status 2)."""
    try:
        return flags.FLAGS(argv)
    except flags.Error as e:
        message = str(e).strip().splitlines()[0]
    except (AttributeError, KeyError) as e:  # ml_collections: a --config.X that the config lacks
        message = (f"unknown config field in a --config.* override ({e}); the config file lists the"
                   " fields")
    except (OSError, SyntaxError, ImportError) as e:
        message = f"cannot load the config file ({type(e).__name__}: {e})"
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)


if __name__ == "__main__":
    app.run(main, flags_parser=_parse_flags)
