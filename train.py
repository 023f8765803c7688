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

Multi-host: start the same command on every host after `jax.distributed.initialize()` (see
docs/agent.md); the games are split over all local devices of each host.
"""

import json
import os
import sys

from absl import app, flags, logging
from ml_collections import config_flags

from jaxmmap import Rules
from jaxmmap.agent.loop import agent_config, check_workdir, keep_best
from jaxmmap.core.files import UserError, digest, finite, owned, write_json
from jaxmmap.core.io import columns_for, open_problem, summarize
from jaxmmap.core.simulator import latency
from jaxmmap.env.compilation_cache import compilation_cache
from jaxmmap.harness.speed import baseline, speed
from jaxmmap.solvers.agents import prod
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
        return _pretrain(config, workdir)
    problem = open_problem(config.problem)  # before the workdir: a mistake leaves nothing behind
    columns = columns_for(problem, config.columns)
    rules = Rules(columns=columns, nocopy_offset=config.nocopy_offset,
                  output_nocopy=config.get("output_nocopy", True))
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
            line += f"; heuristic {heuristic.ret:.6g}; prod {max(best.ret, heuristic.ret):.6g}"
        print(f"{line}; {info.get('iterations', 0)} iterations, {info.get('episodes', 0)} games in"
              f" {result.seconds:.0f} s")
        print(f"written: {best.solver} return {best.ret:.6g}, simulated latency {written['latency']:.6g}"
              f" {written['time_unit']} ({_faster(written)}) -> {solution_path}")


def _generated(config, seed: int, i: int):
    """(name, problem, rules) of generated program `seed` with the i-th mix of the config's sizes,
    memory pressures, in-place shares, latency tables and NoCopy rules."""
    from jaxmmap import generate

    problem = generate(seed, num_instructions=config.instructions[i % len(config.instructions)],
                       memory_fraction=config.memory_fractions[i % len(config.memory_fractions)],
                       inplace_prob=config.inplace[(i // 2) % len(config.inplace)], latency_tables=i % 2 == 0)
    rules = Rules(columns=columns_for(problem, config.columns),
                  nocopy_offset="lowest" if (i // 3) % 2 else "same", output_nocopy=i % 6 != 5)
    return f"generated-{seed}", problem, rules


def _programs(config):
    """(name, problem, rules) of every training program of the generalist (configs/generalist.py)."""
    from jaxmmap.core import suite

    out = [_generated(config, i, i) for i in range(config.generated)]
    for name in suite.names("train"):
        row = next(r for r in suite.info() if r["name"] == name)
        if row["buffers"] <= config.suite_max_buffers:
            problem = suite.load(name)
            out.append((name, problem, Rules(columns=columns_for(problem, config.columns))))
    return out


def _drawn(config, programs, g: int):
    """The improvement's programs of generation g: `drawn` fresh generated ones (seeds from
    10,000 on: neither the imitation's, the selection's nor the held-out ones) and `replayed`
    of the training programs, in turn."""
    from jaxmmap.agent import generalist

    k, m = config.drawn, config.replayed
    fresh = [_generated(config, 10_000 + g * k + j, g * k + j) for j in range(k)]
    again = [programs[(g * m + j) % len(programs)] for j in range(min(m, len(programs)))]
    return [generalist.padded(p, r) for _, p, r in fresh + again]


def _selection(config):
    """(name, problem, rules) of the generalist's selection programs: generated seeds that neither
    the imitation nor the held-out measurements use (configs/generalist.py)."""
    from jaxmmap import generate

    out = []
    for seed, count in config.selection:
        problem = generate(seed, num_instructions=count)
        out.append((f"generated-{seed}", problem, Rules(columns=columns_for(problem, config.columns))))
    return out


ROW_KEYS = ("phi", "legal", "action")  # a row: decision features, legal moves, the label
INTENT_KEYS = ("intent_phi", "intent")  # an intent row (`guide.intent_rows`): features, the teacher's intent


def _joined(data: list[dict], keys: tuple = ROW_KEYS) -> dict:
    """The rows of several programs as one set (`keys` of each; those without them left out)."""
    import numpy as np

    return {k: np.concatenate([d[k] for d in data if keys[-1] in d]) for k in keys}


def _kept(path: str, need: tuple, gather, made_from: str) -> dict:
    """A program's rows kept in a file (WORKDIR/rows/*.npz): the arrays `need` of `path`, with its
    "about" and "better" where it has them; else `gather()`'s rows, written there atomically
    first. A file cut short, without an array now needed, or made from something else than
    `made_from` (a digest of the program, its rules and, for a round, the network: a config
    changed between two runs in one folder makes other programs under the same names) is
    gathered again."""
    import jax
    import numpy as np

    from jaxmmap.core.files import atomic

    extra = ("about", "better")
    try:
        with np.load(path) as f:
            if "made_from" in f and str(f["made_from"]) == made_from:
                return {k: f[k] for k in (*need, *(k for k in extra if k in f))}
            print(f"{path} was made from another program, rules or network: gathered again")
    except (OSError, ValueError, KeyError):  # not gathered yet, or cut short: again
        pass
    rows = {**gather(), "made_from": made_from}
    # every program compiles its own games, and each compiled game holds memory maps: 38 of them
    # ran the process out (vm.max_map_count, 65,530) at the last program
    jax.clear_caches()
    with atomic(path, "wb") as f:
        np.savez(f, **rows)
    return {k: rows[k] for k in rows if k in need or k in extra}


def _teacher_rows(config, net, workdir: str, name: str, problem, rules):
    """(rows, about) of one training program by the config's teacher, kept in WORKDIR/rows/ (a
    file per program, teacher and lookahead setting; `_kept`)."""
    from jaxmmap.agent import generalist, guide
    from jaxmmap.core.files import slug
    from jaxmmap.solvers.agents import teacher

    lookahead = config.teacher == "lookahead"
    suffix = f".lookahead-{config.lookahead_points}-s{net.seed}" if lookahead else ""
    # (the teacher's moves and intents label the rounds' states: rows gathered before them lack them)
    need = ROW_KEYS + (() if lookahead else INTENT_KEYS + (("teacher", "intents") if config.rounds else ()))

    def gather():
        about = {"program": name, "buffers": problem.num_buffers}
        if lookahead:  # (the points drawn with the network's seed, where a program has more decisions)
            rows = generalist.lookahead_rows(problem, rules, points=config.lookahead_points, seed=net.seed)
            about.update(teacher="lookahead", rows=int(len(rows["action"])), better_than_greedy=int(rows["better"].sum()),
                         max_gain=float(rows["gain"].max(initial=1.0)))
        else:
            actions, ret, source, intents = teacher(problem, rules)
            rows = {**generalist.teacher_rows(problem, rules, actions), "teacher": actions, "intents": intents,
                    **guide.intent_rows(problem, rules, actions, intents)}
            about.update(teacher=source, teacher_return=ret, rows=int(len(rows["action"])))
        return {**rows, "about": json.dumps(about)}

    rows = _kept(os.path.join(workdir, "rows", slug(name) + suffix + ".npz"), need, gather, _program_digest(problem, rules))
    return {k: rows[k] for k in need}, json.loads(str(rows["about"]))


def _program_digest(problem, rules) -> str:
    """A digest of a training program and its rules (`_kept`)."""
    return digest(json.dumps(problem.to_json(), sort_keys=True) + repr(rules))


def _network_digest(params, net) -> str:
    """A digest of a network's config and parameters (a round's rows, `_kept`)."""
    import jax

    leaves = jax.tree_util.tree_leaves_with_path(params)
    return digest(repr(net), {jax.tree_util.keystr(k): v for k, v in leaves})


def _round(config, r: int) -> str:
    """Round r's name, of its rows' files and its training folder: own-R, or improve-R-POINTS."""
    return f"improve-{r}-{config.lookahead_points}" if config.round_labels == "lookahead" else f"own-{r}"


def _own_rows(config, workdir: str, r: int, params, net, network: str, name: str, problem, rules, actions, intents):
    """Round r's rows of one training program, kept in WORKDIR/rows/ like the teacher's: the
    states of the network's own game labelled by the teacher's `actions` (`generalist.own_rows`)
    and `intents` (`guide.intent_rows`), or with `round_labels="lookahead"` by one step of policy
    improvement over the network's game (`generalist.lookahead_rows` with its parameters)."""
    from jaxmmap.agent import generalist, guide
    from jaxmmap.core.files import slug

    lookahead = config.round_labels == "lookahead"

    def gather():
        if lookahead:
            return generalist.lookahead_rows(problem, rules, points=config.lookahead_points, seed=net.seed + r,
                                             params=params, config=net)
        return {**generalist.own_rows(params, problem, rules, actions, net),
                **guide.own_intent_rows(params, problem, rules, intents, net)}

    made_from = digest(f"{_program_digest(problem, rules)} {network} {config.round_labels} "
                       f"{config.lookahead_points}", {} if actions is None else {"teacher": actions, "intents": intents})
    return _kept(os.path.join(workdir, "rows", f"{slug(name)}.{_round(config, r)}.npz"),
                 ROW_KEYS + (() if lookahead else INTENT_KEYS), gather, made_from)


def _pretrain(config, workdir):
    """Pretrains the generalist (configs/generalist.py): the teacher's rows of every training
    program (kept in WORKDIR/rows/, `_teacher_rows`), then the network (WORKDIR/state.msgpack)."""
    import dataclasses

    from flax import serialization
    from tqdm import tqdm

    from jaxmmap.agent import generalist, guide, improvement
    from jaxmmap.core.files import atomic

    try:
        net = generalist.GeneralistConfig(**{k: tuple(v) if isinstance(v, list | tuple) else v
                                             for k, v in config.network.to_dict().items()})
    except TypeError as e:
        raise UserError(f"the config's network: {e}") from None
    if config.generated > 100:  # seeds 100-109 select the improvement's parameters; 1000-1004 are held out
        raise UserError(f"--config.generated={config.generated}: at most 100 (the seeds above are kept out of training)")
    if config.round_labels not in ("teacher", "lookahead"):
        raise UserError(f"--config.round_labels={config.round_labels!r}: give teacher or lookahead")
    if config.rounds and config.teacher != "imitation":
        raise UserError(f"--config.rounds={config.rounds}: rounds of the network's own games follow the imitation"
                        " teacher only; add --config.rounds=0")
    if config.teacher not in ("imitation", "lookahead"):
        raise UserError(f"--config.teacher={config.teacher!r}: give imitation or lookahead")
    if config.teacher == "lookahead" and not (isinstance(config.lookahead_points, int) and config.lookahead_points > 0):
        raise UserError(f"--config.lookahead_points={config.lookahead_points!r}: give a positive number")
    programs = _programs(config)
    with owned(check_workdir(workdir)):
        os.makedirs(os.path.join(workdir, "rows"), exist_ok=True)
        data, made = [], []
        for name, problem, rules in tqdm(programs, desc="teacher games", unit="program"):
            rows, about = _teacher_rows(config, net, workdir, name, problem, rules)
            data.append(rows)
            made.append(about)
        teachers = [(d.get("teacher"), d.get("intents")) for d in data]
        joined = _joined(data)
        print(f"{len(programs)} programs, {len(joined['action']):,} decisions; training {net.steps} steps")
        result = generalist.fit(joined, net, workdir=workdir, log=print)
        summary = {"config": config.to_dict(), "network": dataclasses.asdict(net), "programs": made,
                   "decisions": int(len(joined["action"])), "loss": result["loss"], "accuracy": result["accuracy"]}
        for r in range(1, config.rounds + 1):  # the network's own states, labelled again (config.round_labels)
            network = _network_digest(result["params"], net)  # (what a round's rows were made from)
            own = [_own_rows(config, workdir, r, result["params"], net, network, *program, *labels)
                   for program, labels in zip(tqdm(programs, desc=f"round {r}: own games", unit="program"), teachers)]
            # (the lookahead's labels that leave the network's own move; DAgger's have no such count)
            better = sum(int(d["better"].sum()) for d in own) if all("better" in d for d in own) else None
            data += own
            joined = _joined(data)
            print(f"round {r}: {sum(len(d['action']) for d in own):,} rows of the network's own games,"
                  f" {len(joined['action']):,} in all; training {net.steps} steps")
            os.makedirs(os.path.join(workdir, _round(config, r)), exist_ok=True)
            result = generalist.fit(joined, net, workdir=os.path.join(workdir, _round(config, r)), log=print)
            summary.setdefault("rounds", []).append({"rows": int(sum(len(d["action"]) for d in own)), "better": better,
                                                     "loss": result["loss"], "accuracy": result["accuracy"]})
        if net.generations > 0:
            print(f"improving: {net.generations} generations of {net.population}, each on {config.drawn} fresh"
                  f" generated programs and {config.replayed} training programs")
            better = improvement.improve(
                result["params"], lambda g: _drawn(config, programs, g),
                [generalist.padded(p, r) for _, p, r in _selection(config)], net, workdir=workdir, log=print)
            result["params"] = better["params"]
            summary["improvement"] = {k: v for k, v in better.items() if k != "params"}
        intent = None
        if config.teacher == "imitation":  # the intent network (`agent.guide`): the teacher's and rounds' intent rows
            wanted = _joined(data, INTENT_KEYS)
            print(f"the intent network: {len(wanted['intent']):,} rows; training {net.steps} steps")
            os.makedirs(os.path.join(workdir, "intent"), exist_ok=True)
            fitted = guide.fit(wanted, net, workdir=os.path.join(workdir, "intent"), log=print)
            intent = fitted["params"]
            summary["intent"] = {"rows": int(len(wanted["intent"])), "loss": fitted["loss"], "accuracy": fitted["accuracy"]}
            with atomic(os.path.join(workdir, "intent.msgpack"), "wb") as f:
                f.write(serialization.to_bytes(intent))
        write_json(os.path.join(workdir, "summary.json"), finite(summary), indent=2)
        with atomic(os.path.join(workdir, "params.msgpack"), "wb") as f:  # (benchmarks/generalist_games.py --params)
            f.write(serialization.to_bytes(result["params"]))
        if config.ship:
            folder = os.path.join(os.path.dirname(generalist.__file__), "..", generalist.SHIPPED)
            generalist.ship(result["params"], net, os.path.normpath(folder), summary, intent=intent)
            print(f"shipped -> {os.path.normpath(folder)}")
        print(f"loss {result['loss']:.4f}, accuracy {result['accuracy']:.3f} -> {workdir}")


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
