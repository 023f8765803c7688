"""The generalist's pretraining (configs/generalist.py): `pretrain(config, workdir, teacher=...)`.

    python train.py --config configs/generalist.py --workdir runs/generalist

The pipeline around `generalist` (the network, its rows, `fit`), `guide` (the intent network)
and `improvement` (the search in the parameters), configured by an ml_collections config:

1. the training programs (`training_programs`: generated ones of several sizes, pressures and
   rules, and the suite's training split) and the teacher's rows of each (the imitation
   teacher's game replayed, `generalist.teacher_rows`, or `generalist.lookahead_rows`);
2. the network fitted on them (WORKDIR/state.msgpack);
3. `config.rounds` rounds of the network's own games, labelled again (`_own_rows`), each fitted in
   its own folder (WORKDIR/own-R/ or WORKDIR/improve-R-POINTS/);
4. the improvement, where `config.network.generations` > 0 (`improvement.improve` on the
   `drawn` and `selection_programs`; WORKDIR/improve.msgpack);
5. the intent network on the teacher's intents (WORKDIR/intent/, WORKDIR/intent.msgpack), with
   the imitation teacher;
6. WORKDIR/summary.json, WORKDIR/params.msgpack and, with `config.ship`, the package's shipped
   weights (`generalist.ship`).

Every program's rows are kept in WORKDIR/rows/ (a file per program, teacher and round), each with
a digest of what made it (`_kept`), and every fit is checkpointed: the same call again resumes, and
a changed config gathers and trains again only what it changes. The imitation teacher is an
argument (`jaxmmap.solvers.agents.teacher`: it plays the heuristic and greedy, and the agent's
layer sits below the solvers'). A mistake in the config is a `UserError` before anything is
written.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable

import jax
import numpy as np
from flax import serialization
from tqdm import tqdm

from jaxmmap.agent import generalist, guide, improvement
from jaxmmap.agent.loop import check_workdir
from jaxmmap.core import suite
from jaxmmap.core.files import UserError, atomic, digest, finite, owned, slug, write_json
from jaxmmap.core.io import columns_for
from jaxmmap.core.rules import Rules
from jaxmmap.env.generator import generate

ROW_KEYS = ("phi", "legal", "action")  # a row: decision features, legal moves, the label
INTENT_KEYS = ("intent_phi", "intent")  # an intent row (`guide.intent_rows`): features, the teacher's intent

# teacher(problem, rules) -> (an action per buffer, its return, its source, the intents)
Teacher = Callable[[object, Rules], tuple]


def pretrain(config, workdir: str, *, teacher: Teacher) -> dict:
    """Pretrains the generalist as `config` (configs/generalist.py) says into `workdir`, resuming
    what a run before left there; returns the summary it writes (WORKDIR/summary.json).
    `teacher` is the imitation teacher (`jaxmmap.solvers.agents.teacher`)."""
    net = network_config(config)
    programs = training_programs(config)
    with owned(check_workdir(workdir)):
        os.makedirs(os.path.join(workdir, "rows"), exist_ok=True)
        data, made = [], []
        for name, problem, rules in tqdm(programs, desc="teacher games", unit="program"):
            rows, about = _teacher_rows(config, net, workdir, name, problem, rules, teacher)
            data.append(rows)
            made.append(about)
        teachers = [(d.get("teacher"), d.get("intents")) for d in data]
        joined = _joined(data)
        print(f"{len(programs)} programs, {len(joined['action']):,} decisions; training {net.steps} steps")
        result = generalist.fit(joined, net, workdir=workdir, log=print)
        summary = {"config": config.to_dict(), "network": dataclasses.asdict(net), "programs": made,
                   "decisions": int(len(joined["action"])), "loss": result["loss"], "accuracy": result["accuracy"]}
        for r in range(1, config.rounds + 1):  # the network's own states, labelled again (config.round_labels)
            result = _round(config, net, workdir, r, result["params"], programs, teachers, data, summary)
        if net.generations > 0:
            print(f"improving: {net.generations} generations of {net.population}, each on {config.drawn} fresh"
                  f" generated programs and {config.replayed} training programs")
            better = improvement.improve(
                result["params"], lambda g: drawn(config, programs, g),
                [generalist.padded(p, r) for _, p, r in selection_programs(config)], net, workdir=workdir, log=print)
            result["params"] = better["params"]
            summary["improvement"] = {k: v for k, v in better.items() if k != "params"}
        intent = _intent(config, net, workdir, data, summary) if config.teacher == "imitation" else None
        write_json(os.path.join(workdir, "summary.json"), finite(summary), indent=2)
        with atomic(os.path.join(workdir, "params.msgpack"), "wb") as f:  # (benchmarks/generalist_games.py --params)
            f.write(serialization.to_bytes(result["params"]))
        if config.ship:
            folder = os.path.normpath(os.path.join(os.path.dirname(generalist.__file__), "..", generalist.SHIPPED))
            generalist.ship(result["params"], net, folder, summary, intent=intent)
            print(f"shipped -> {folder}")
        print(f"loss {result['loss']:.4f}, accuracy {result['accuracy']:.3f} -> {workdir}")
        return summary


def network_config(config) -> generalist.GeneralistConfig:
    """The config's network, its settings checked first (a mistake: `UserError`)."""
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
    return net


def _round(config, net, workdir: str, r: int, params, programs, teachers, data: list, summary: dict) -> dict:
    """Round r: the rows of the network's own games (`_own_rows`) added to `data`, the network
    fitted again on all of them in its own folder; its figures added to `summary`."""
    network = _network_digest(params, net)  # (what a round's rows were made from)
    own = [_own_rows(config, workdir, r, params, net, network, *program, *labels)
           for program, labels in zip(tqdm(programs, desc=f"round {r}: own games", unit="program"), teachers)]
    # (the lookahead's labels that leave the network's own move; DAgger's have no such count)
    better = sum(int(d["better"].sum()) for d in own) if all("better" in d for d in own) else None
    data += own
    joined = _joined(data)
    print(f"round {r}: {sum(len(d['action']) for d in own):,} rows of the network's own games,"
          f" {len(joined['action']):,} in all; training {net.steps} steps")
    os.makedirs(os.path.join(workdir, _round_name(config, r)), exist_ok=True)
    result = generalist.fit(joined, net, workdir=os.path.join(workdir, _round_name(config, r)), log=print)
    summary.setdefault("rounds", []).append({"rows": int(sum(len(d["action"]) for d in own)), "better": better,
                                             "loss": result["loss"], "accuracy": result["accuracy"]})
    return result


def _intent(config, net, workdir: str, data: list, summary: dict):
    """The intent network (`agent.guide`) on the teacher's and rounds' intent rows
    (WORKDIR/intent/, WORKDIR/intent.msgpack); its figures added to `summary`."""
    wanted = _joined(data, INTENT_KEYS)
    print(f"the intent network: {len(wanted['intent']):,} rows; training {net.steps} steps")
    os.makedirs(os.path.join(workdir, "intent"), exist_ok=True)
    fitted = guide.fit(wanted, net, workdir=os.path.join(workdir, "intent"), log=print)
    summary["intent"] = {"rows": int(len(wanted["intent"])), "loss": fitted["loss"], "accuracy": fitted["accuracy"]}
    with atomic(os.path.join(workdir, "intent.msgpack"), "wb") as f:
        f.write(serialization.to_bytes(fitted["params"]))
    return fitted["params"]


def _generated(config, seed: int, i: int):
    """(name, problem, rules) of generated program `seed` with the i-th mix of the config's sizes,
    memory pressures, in-place shares, latency tables and NoCopy rules."""
    problem = generate(seed, num_instructions=config.instructions[i % len(config.instructions)],
                       memory_fraction=config.memory_fractions[i % len(config.memory_fractions)],
                       inplace_prob=config.inplace[(i // 2) % len(config.inplace)], latency_tables=i % 2 == 0)
    lowest = (i // 3) % 2 and _rules(config, problem).placement == "grid"  # (the deferred game keeps "same")
    rules = _rules(config, problem, nocopy_offset="lowest" if lowest else "same", output_nocopy=i % 6 != 5)
    return f"generated-{seed}", problem, rules


def _rules(config, problem, **rules) -> Rules:
    """The rules the config's network learns `problem` under (its columns, placement, copy supply)."""
    return Rules(columns=columns_for(problem, config.columns), **generalist.trained_rules({"config": config}), **rules)


def training_programs(config):
    """(name, problem, rules) of every training program of the generalist (configs/generalist.py)."""
    out = [_generated(config, i, i) for i in range(config.generated)]
    for name in suite.names("train"):
        row = next(r for r in suite.info() if r["name"] == name)
        if row["buffers"] <= config.suite_max_buffers:
            problem = suite.load(name)
            out.append((name, problem, _rules(config, problem)))
    return out


def drawn(config, programs, g: int):
    """The improvement's programs of generation g: `drawn` fresh generated ones (seeds from
    10,000 on: neither the imitation's, the selection's nor the held-out ones) and `replayed`
    of the training programs, in turn."""
    k, m = config.drawn, config.replayed
    fresh = [_generated(config, 10_000 + g * k + j, g * k + j) for j in range(k)]
    again = [programs[(g * m + j) % len(programs)] for j in range(min(m, len(programs)))]
    return [generalist.padded(p, r) for _, p, r in fresh + again]


def selection_programs(config):
    """(name, problem, rules) of the generalist's selection programs: generated seeds that neither
    the imitation nor the held-out measurements use (configs/generalist.py)."""
    out = []
    for seed, count in config.selection:
        problem = generate(seed, num_instructions=count)
        out.append((f"generated-{seed}", problem, _rules(config, problem)))
    return out


def _joined(data: list[dict], keys: tuple = ROW_KEYS) -> dict:
    """The rows of several programs as one set (`keys` of each; those without them left out)."""
    return {k: np.concatenate([d[k] for d in data if keys[-1] in d]) for k in keys}


def _kept(path: str, need: tuple, gather, made_from: str) -> dict:
    """A program's rows kept in a file (WORKDIR/rows/*.npz): the arrays `need` of `path`, with its
    "about" and "better" where it has them; else `gather()`'s rows, written there atomically
    first. A file cut short, without an array now needed, or made from something else than
    `made_from` (a digest of the program, its rules and, for a round, the network: a config
    changed between two runs in one folder makes other programs under the same names) is
    gathered again."""
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


def _teacher_rows(config, net, workdir: str, name: str, problem, rules, teacher: Teacher):
    """(rows, about) of one training program by the config's teacher (`teacher` for the imitation),
    kept in WORKDIR/rows/ (a file per program, teacher and lookahead setting; `_kept`)."""
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
    leaves = jax.tree_util.tree_leaves_with_path(params)
    return digest(repr(net), {jax.tree_util.keystr(k): v for k, v in leaves})


def _round_name(config, r: int) -> str:
    """Round r's name, of its rows' files and its training folder: own-R, or improve-R-POINTS."""
    return f"improve-{r}-{config.lookahead_points}" if config.round_labels == "lookahead" else f"own-{r}"


def _own_rows(config, workdir: str, r: int, params, net, network: str, name: str, problem, rules, actions, intents):
    """Round r's rows of one training program, kept in WORKDIR/rows/ like the teacher's: the
    states of the network's own game labelled by the teacher's `actions` (`generalist.own_rows`)
    and `intents` (`guide.intent_rows`), or with `round_labels="lookahead"` by one step of policy
    improvement over the network's game (`generalist.lookahead_rows` with its parameters)."""
    lookahead = config.round_labels == "lookahead"

    def gather():
        if lookahead:
            return generalist.lookahead_rows(problem, rules, points=config.lookahead_points, seed=net.seed + r,
                                             params=params, config=net)
        return {**generalist.own_rows(params, problem, rules, actions, net),
                **guide.own_intent_rows(params, problem, rules, intents, net)}

    made_from = digest(f"{_program_digest(problem, rules)} {network} {config.round_labels} "
                       f"{config.lookahead_points}", {} if actions is None else {"teacher": actions, "intents": intents})
    return _kept(os.path.join(workdir, "rows", f"{slug(name)}.{_round_name(config, r)}.npz"),
                ROW_KEYS + (() if lookahead else INTENT_KEYS), gather, made_from)
