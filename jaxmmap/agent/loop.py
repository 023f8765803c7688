"""The host side of training: chunks of `train.run_chunk`, logs, checkpoints, budgets, and the
agent as solvers (`muzero`, `muzero-prod`).

    outcome = fit(problem, AgentConfig(), budget_s=300, workdir="runs/x")
    outcome.solution                   # the best game found, as a validated Solution

`fit` runs until `max_iterations` (learner iterations: self-play moves + one update each) or the
wall-clock budget, whichever comes first. With a `workdir` it writes
* `metrics.csv` and `metrics.jsonl` (one row per chunk) and TensorBoard events (`tensorboard/`);
* orbax checkpoints of the whole `TrainState` (`checkpoints/`) every `checkpoint_every` chunks
  and at the end; a new `fit` on the same workdir resumes from the latest one and continues the
  same run bit for bit (the chunks are deterministic; rows logged after the checkpoint are
  dropped). A checkpoint that cannot be read is moved to `checkpoints.corrupt/` and the newest
  intact one is used (with a warning on stderr);
* `solution.json`: the best game so far, checked by the independent validator. It only ever
  improves: it is replaced (atomically) only by a better valid solution of the same problem;
  `improvements.jsonl`: every improvement of the agent's (iteration, seconds, solution);
* `problem.json.gz`: the problem, so that `jaxmmap report WORKDIR` needs nothing else, and
  `run.json`: what makes the run (problem, config, rules, seed, padding); resuming with other
  settings is refused, since the checkpoints belong to that run.

A kill at any moment leaves every file whole (`files.py`; a torn last line of a JSON-lines file
is repaired on resume). `docs/promises.md` lists these promises.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import hashlib
import json
import math
import os
import shutil
import sys

import jax
import jax.numpy as jnp
import numpy as np
from tqdm import tqdm

from jaxmmap.agent import expert, train
from jaxmmap.agent.config import AgentConfig
from jaxmmap.agent.networks import NetworkConfig
from jaxmmap.core.clock import Clock
from jaxmmap.core.files import (
    UserError,
    append_jsonl,
    atomic,
    check_folder,
    dumps,
    owned,
    read_jsonl,
    write_json,
    write_text,
)
from jaxmmap.core.problem import Problem, ProblemError, Solution, load_solution, read_json, save_problem, save_solution
from jaxmmap.core.rules import Rules
from jaxmmap.core.validator import BUG, check_solution
from jaxmmap.env.instance import make_instance
from jaxmmap.env.rollout import to_solution


@dataclasses.dataclass
class Outcome:
    """What `fit` returns.

    solution: the best game found (validated), None if no game finished yet.
    history: one dict of metrics per chunk (as in metrics.jsonl).
    state: the final `TrainState` (on the devices).
    seconds: wall-clock seconds of this call, compilation included.
    trace: (seconds, best return) at each improvement of this call.
    resumed: (iteration, games finished) where this call began: (0, 0) unless it resumed a run.
    """

    solution: Solution | None
    history: list[dict]
    state: train.TrainState
    seconds: float
    trace: list[tuple[float, float]]
    resumed: tuple[int, int] = (0, 0)


def summarize_metrics(metrics: dict) -> dict:
    """One chunk's per-iteration metrics as one row of floats."""
    m = jax.device_get(metrics)
    learned = np.asarray(m["learned"], bool)
    finished = int(np.sum(m["finished"]))
    won = finished - int(np.sum(m["lost"]))
    row = {"finished": finished, "lost": int(np.sum(m["lost"])),
           "mean_return": float(np.sum(m["return_sum"]) / won) if won else math.nan,
           "best_return": float(m["best_return"][-1]), "temperature": float(m["temperature"][-1])}
    if "evaluation_return" in m:  # the expert mode's deterministic game of the last generation
        row["evaluation_return"] = float(m["evaluation_return"][-1])
        row["restarts"] = int(np.sum(m["restarted"]))  # (its search started again from its first center)
    for name in train.LEARNER_METRICS:
        row[name] = float(np.mean(m[name][learned])) if learned.any() else math.nan
    return row


#: What a row of metrics.jsonl and of improvements.jsonl must hold (read back on resume).
METRIC_FIELDS = {"iteration": int, "finished": (int, float)}
IMPROVEMENT_FIELDS = {"iteration": int, "seconds": (int, float), "solution": dict}


class _Logs:
    """metrics.csv, metrics.jsonl and TensorBoard events, resumable at an iteration (rows logged
    after it are dropped, from TensorBoard too). NaN (no game won in a chunk) is written as null,
    and read back as NaN."""

    def __init__(self, workdir: str | None, resume_at: int):
        self.workdir, self.rows, self.tb = workdir, [], None
        if workdir is None:
            return
        self.jsonl = os.path.join(workdir, "metrics.jsonl")
        self.csv = os.path.join(workdir, "metrics.csv")
        rows = read_jsonl(self.jsonl, fields=METRIC_FIELDS, values=(int, float, type(None)))
        self.rows = [{k: math.nan if v is None else v for k, v in r.items()} for r in rows if r["iteration"] <= resume_at]
        write_text(self.jsonl, "".join(dumps(_nulls(r)) + "\n" for r in self.rows))
        self._write_csv()
        try:
            from tensorboardX import SummaryWriter
            # events of steps after the checkpoint (a killed run's) are purged
            self.tb = SummaryWriter(os.path.join(workdir, "tensorboard"),
                                    purge_step=resume_at + 1 if resume_at else None)
        except ImportError:  # TensorBoard events are optional
            self.tb = None

    def add(self, row: dict):
        self.rows.append(row)
        if self.workdir is None:
            return
        append_jsonl(self.jsonl, row)
        if set(row) <= set(self.fields):
            with open(self.csv, "a", newline="") as f:
                csv.DictWriter(f, fieldnames=self.fields, restval="").writerow(row)
        else:  # a new column: the whole file again
            self._write_csv()
        self._tensorboard(row)

    def _write_csv(self):
        """metrics.csv from the rows, its columns those of every row (an older run's rows may
        lack some: left empty)."""
        self.fields = list(dict.fromkeys(k for r in self.rows for k in r))
        with atomic(self.csv) as f:
            if self.rows:
                writer = csv.DictWriter(f, fieldnames=self.fields, restval="")
                writer.writeheader()
                writer.writerows(self.rows)

    def _tensorboard(self, row: dict):
        if self.tb is not None:
            for key, value in row.items():
                if key != "iteration" and isinstance(value, int | float) and math.isfinite(value):
                    self.tb.add_scalar(key, value, row["iteration"])
            self.tb.flush()

    def close(self):
        if self.tb is not None:
            self.tb.close()


def _nulls(row: dict) -> dict:
    return {k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in row.items()}


def _checkpoints(workdir: str):
    import orbax.checkpoint as ocp

    return ocp.CheckpointManager(os.path.abspath(os.path.join(workdir, "checkpoints")),
                                 options=ocp.CheckpointManagerOptions(max_to_keep=2))


def _placed_like(fresh: jax.Array, restored: jax.Array) -> jax.Array:
    """`restored` placed as `fresh` is: orbax commits every array to its device, and a fresh
    state's are not, so that a jitted chunk fed the restored state would be traced and compiled
    again (in the tests, a program the persistent compilation cache did not hold)."""
    return restored if fresh.committed else jnp.asarray(np.asarray(restored))


def _restore(workdir: str, state):
    """(manager, state, step): the newest checkpoint that can be read, restored into `state`'s
    shapes (step None: none, `state` unchanged). One that cannot be read is moved to
    checkpoints.corrupt/STEP, with a warning, and the next older one is tried."""
    import orbax.checkpoint as ocp

    root = os.path.join(workdir, "checkpoints")
    abstract = jax.tree.map(ocp.utils.to_shape_dtype_struct, state)
    while True:
        try:
            manager = _checkpoints(workdir)
            steps = sorted(manager.all_steps(), reverse=True)
        except Exception as e:  # noqa: BLE001 - a broken checkpoint folder
            steps, manager, failure = _step_folders(root), None, e
        else:
            if not steps:
                return manager, state, None
            try:
                _verify(workdir, steps[0])
                restored = manager.restore(steps[0], args=ocp.args.StandardRestore(abstract))
                return manager, jax.tree.map(_placed_like, state, restored), steps[0]
            except Exception as e:  # noqa: BLE001 - any unreadable file of the checkpoint
                manager.close()
                failure = e
        if not steps:
            raise UserError(f"{root}: cannot read the checkpoints ({type(failure).__name__}: "
                            f"{_first_line(failure)}); move the folder away to start afresh")
        aside = os.path.join(workdir, "checkpoints.corrupt", str(steps[0]))
        if os.path.exists(aside):
            shutil.rmtree(aside)
        os.makedirs(os.path.dirname(aside), exist_ok=True)
        os.replace(os.path.join(root, str(steps[0])), aside)
        print(f"warning: checkpoint {steps[0]} of {workdir} cannot be read ({type(failure).__name__}:"
              f" {_first_line(failure)}); moved to {aside}; "
              + (f"resuming from checkpoint {steps[1]}" if len(steps) > 1 else "starting afresh"),
              file=sys.stderr, flush=True)


def _step_folders(root: str) -> list[int]:
    return sorted((int(n) for n in os.listdir(root) if n.isdigit()), reverse=True) \
        if os.path.isdir(root) else []


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0][:200] if text else "no message"


def _same_run(workdir: str, identity: dict) -> None:
    """Writes run.json, or checks that a resumed workdir is the same run (its checkpoints and
    logs belong to that run); raises `UserError` naming the first difference."""
    path = os.path.join(workdir, "run.json")
    identity = json.loads(dumps(identity, default=str))
    if os.path.exists(path):
        try:
            old = read_json(path)
        except ProblemError:
            old = None  # a torn file cannot be (atomic writes); rewrite it
        if isinstance(old, dict) and old != identity:
            key = next(k for k in list(identity) + list(old) if old.get(k) != identity.get(k))
            what = f"{key} {_short(old.get(key))}, now {_short(identity.get(key))}"
            raise UserError(f"{workdir} holds another run ({what}); resume with the same settings"
                            " or give a new --workdir")
        if old == identity:
            return
    write_json(path, identity, indent=1)


def _short(value) -> str:
    text = json.dumps(value)
    return text if len(text) <= 80 else text[:77] + "..."


def keep_best(path: str, solution: Solution, problem: Problem) -> Solution:
    """Writes `solution` to `path` (atomically) unless the file already holds a valid solution of
    `problem` that is at least as good; returns the solution the file holds afterwards. So a
    file that long runs rewrite only ever improves, across kills and resumes."""
    if os.path.exists(path):
        try:
            old = load_solution(path)
            check_solution(problem, old)
        except UserError:
            old = None  # not a valid solution of this problem: replace it
        if old is not None and old.ret >= solution.ret:
            return old
    save_solution(solution, path)
    return solution


def _identity(problem: Problem, config: AgentConfig, rules: Rules, seed: int, padding) -> dict:
    digest = hashlib.sha256(dumps(problem.to_json(), sort_keys=True).encode()).hexdigest()[:16]
    return {"problem": problem.name, "problem_sha256": digest, "seed": seed,
            "rules": rules.to_json(), "padding": padding, "config": dataclasses.asdict(config)}


def _open_workdir(workdir: str | None, state, problem: Problem, identity: dict):
    """(the workdir's lock, its checkpoint manager, the state to go on from): the run takes
    its workdir (one run per workdir; the lock is released by the caller) and resumes from its
    newest intact checkpoint. Without a workdir: nothing to hold, no manager, `state`."""
    lock = contextlib.ExitStack()
    if workdir is None:
        return lock, None, state
    lock.enter_context(owned(workdir))
    try:
        _same_run(workdir, identity)
        save_problem(problem, os.path.join(workdir, "problem.json.gz"))
        manager, state, _ = _restore(workdir, state)
    except BaseException:
        lock.close()
        raise
    return lock, manager, state


def check_workdir(workdir: str) -> str:
    """Creates a run's workdir, or raises `UserError` before anything is written: it is a file,
    or so is its `checkpoints` (a run would start over and cut its logs)."""
    check_folder(workdir)
    check_folder(os.path.join(workdir, "checkpoints"), create=False)
    return workdir


def fit(problem: Problem, config: AgentConfig = AgentConfig(), *, rules: Rules = Rules(),
        seed: int = 0, budget_s: float | None = None, max_iterations: int | None = None,
        workdir: str | None = None, checkpoint_every: int = 10, devices=None,
        padding: tuple[int, int, int] | None = None, stop_at: float | None = None,
        progress: bool = False, solver: str = "muzero", demonstration: np.ndarray | None = None,
        schedule_iterations: int | None = None) -> Outcome:
    """Trains (or, in mode mcts, only plays) on `problem` until `max_iterations` iterations or
    `budget_s` seconds; see the module docstring. `devices` (default all local ones) share the
    games; `padding` (buffers, steps, tables) pads the instance (default: `instance.bucket`);
    `stop_at` ends training once a game reaches that return; `demonstration` (an action per
    buffer) seeds the best game and the demonstration (`train.init`): `Outcome.solution` is then
    only a game of the agent's that beats it (None if none does).

    The temperature schedules follow the run's progress: the larger of the share of `budget_s`
    spent in this call and of `schedule_iterations` (default `max_iterations`) done. A run
    stopped and resumed stays bit for bit the same only if every call gets the same
    `schedule_iterations` (train.py passes the total `training_steps`) and no budget ends it."""
    clock = Clock(math.inf if budget_s is None else budget_s)
    if workdir is not None:
        check_workdir(workdir)  # before any work
    instance = make_instance(problem, rules, **_padding(padding))
    family = expert if config.mode == "expert" else train
    algorithm = family.algorithm(instance, config, seed=seed, demonstration=demonstration, devices=devices)
    state, chunk, per_chunk = algorithm.state, algorithm.chunk, algorithm.per_chunk
    lock, manager, state = _open_workdir(workdir, state, problem, _identity(problem, config, rules, seed, padding))
    iteration = int(state.moves) // (1 if config.mode == "expert" else config.moves_per_update)
    logs = _Logs(workdir, iteration)
    bar = _bar(iteration, workdir, config) if progress else None
    best, best_return, chunks = None, -math.inf, 0
    if demonstration is not None or iteration > 0:
        # Only the agent's own games are its best (not the demonstration's), and a resumed run
        # goes on from its checkpoint's best (its improvements up to there are logged).
        best_return = algorithm.best_return(state)
    if workdir is not None:
        improvements = os.path.join(workdir, "improvements.jsonl")
        best = _kept_improvements(improvements, iteration)
    episodes = sum(r["finished"] for r in logs.rows)
    moves, resumed = 0, (iteration, episodes)
    try:
        while ((max_iterations is None or iteration < max_iterations) and not clock.out_of_time()
               and (stop_at is None or best_return < stop_at)):
            horizon = schedule_iterations or max_iterations
            progress = _progress(clock, iteration, horizon)
            state, metrics = chunk(state, np.float32(progress), clock)
            if metrics is None:  # the budget ended inside the chunk
                break
            row = summarize_metrics(metrics)
            iteration += per_chunk
            chunks += 1
            episodes += row["finished"]
            moves += int(np.sum(metrics["moves"]))
            seconds = clock.elapsed()
            row = {"iteration": iteration, "learner_steps": int(state.learner.steps),
                   "episodes": episodes, **row, "seconds": seconds,
                   "game_moves_per_s": moves / seconds}
            logs.add(row)
            if row["best_return"] > best_return:
                best_return = row["best_return"]
                best = _validated(problem, algorithm.best_game(state), rules, solver)
                clock.offer(best)
                if workdir is not None:
                    _keep(workdir, improvements, best, problem, iteration, seconds)
            if manager is not None and chunks % checkpoint_every == 0:
                _save(manager, workdir, iteration, state)
            if bar is not None:  # the bar follows whichever ends the run first: budget or iterations
                _show(bar, _progress(clock, iteration, max_iterations), row, best_return, logs.rows)
        if manager is not None and chunks % checkpoint_every:
            _save(manager, workdir, iteration, state)
    finally:
        if bar is not None:
            bar.close()
        logs.close()
        if manager is not None:
            manager.wait_until_finished()
            manager.close()
        lock.close()
    return Outcome(solution=best, history=logs.rows, state=state, seconds=clock.elapsed(),
                   trace=list(clock.trace), resumed=resumed)


def _progress(clock: Clock, iteration: int, horizon: int | None) -> float:
    """How far the run is, in [0, 1]: the larger of the budget's share spent and of the
    iterations' done."""
    spent = clock.elapsed() / clock.budget_s if math.isfinite(clock.budget_s) else 0.0
    return min(1.0, max(spent, iteration / horizon if horizon else 0.0))


def _bar(iteration: int, workdir: str | None, config: AgentConfig) -> tqdm:
    """A progress bar in percent of the run (budget or iterations, whichever ends it first),
    after a line that says what happens before its first update: a resume, and the compile."""
    if iteration > 0:
        print(f"resuming {workdir} from iteration {iteration:,}", file=sys.stderr, flush=True)
    print(f"compiling the {config.mode} agent's step (tens of seconds the first time; JAX's"
          " compilation cache keeps it for the next run)...", file=sys.stderr, flush=True)
    try:  # a terminal that reports no columns (or no terminal) gets a fixed width, not nothing
        columns = os.get_terminal_size(sys.stderr.fileno()).columns
    except (OSError, ValueError):
        columns = 0
    tty = columns > 0 and sys.stderr.isatty()
    return tqdm(total=100, unit="%", dynamic_ncols=tty, ncols=None if tty else 100,
                mininterval=0.1 if tty else 15.0, file=sys.stderr,
                bar_format="{l_bar}{bar}| {elapsed}<{remaining} {postfix}")


def _show(bar: tqdm, progress: float, row: dict, best_return: float, rows: list[dict]) -> None:
    """The bar at `progress` (of 1) with the chunk's mean return, the best so far and the last
    loss known (a chunk without a learner step has none: the one before stays on the bar)."""
    loss = next((r["loss"] for r in reversed(rows) if _known(r.get("loss"))), None)
    bar.update(round(100 * progress, 1) - bar.n)
    bar.set_postfix_str(f"it={row['iteration']:,} ret={_metric(row['mean_return'], 4)} "
                        f"best={_metric(best_return, 4)} loss={_metric(loss, 3)}", refresh=False)


def _known(x) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)


def _metric(x: float, digits: int) -> str:
    """A metric for the bar: "-" where there is none yet (nan: no game won, no learner step)."""
    return "-" if x is None or not math.isfinite(x) else f"{x:.{digits}g}"


def _kept_improvements(path: str, iteration: int) -> Solution | None:
    """Drops the improvements logged after `iteration` (the checkpoint a run resumes from) and
    returns the last one kept (None at iteration 0 or if there is none)."""
    kept = [r for r in read_jsonl(path, fields=IMPROVEMENT_FIELDS) if r["iteration"] <= iteration]
    write_text(path, "".join(dumps(r) + "\n" for r in kept))
    return Solution.from_json(kept[-1]["solution"]) if kept and iteration > 0 else None


def _validated(problem: Problem, game, rules: Rules, solver: str) -> Solution:
    """The game as a solution, checked by the validator (an invalid one is a bug: raised)."""
    best = to_solution(problem, game, rules, solver=solver)
    check_solution(problem, best, what="the agent's best game (a bug in the game)",
                   allow_nocopy_move=rules.nocopy_offset == "lowest", hint=BUG)
    return best


def _keep(workdir: str, improvements: str, best: Solution, problem: Problem, iteration: int,
          seconds: float) -> None:
    """A new best: solution.json (never worse, atomically) and a line of improvements.jsonl."""
    keep_best(os.path.join(workdir, "solution.json"), best, problem)
    append_jsonl(improvements, {"iteration": iteration, "seconds": seconds, "solution": best.to_json()})


def _padding(padding):
    if padding is None:
        return {}
    return dict(zip(("num_buffers", "num_steps", "num_tables"), padding))


def _save(manager, workdir: str, iteration: int, state):
    """A checkpoint, then the SHA-256 of each of its files (`checkpoints.sha256/STEP.json`),
    checked on restore: a flipped bit makes it corrupt, not a silently different run."""
    import orbax.checkpoint as ocp

    manager.save(iteration, args=ocp.args.StandardSave(state))
    manager.wait_until_finished()  # its files are whole now
    sums = os.path.join(workdir, "checkpoints.sha256")
    os.makedirs(sums, exist_ok=True)
    write_json(os.path.join(sums, f"{iteration}.json"), _checksums(os.path.join(workdir, "checkpoints", str(iteration))))
    kept = {f"{step}.json" for step in _step_folders(os.path.join(workdir, "checkpoints"))}
    for name in set(os.listdir(sums)) - kept:  # those of the checkpoints orbax let go
        os.remove(os.path.join(sums, name))


def _checksums(folder: str) -> dict[str, str]:
    sums = {}
    for where, _, names in os.walk(folder):
        for name in names:
            with open(os.path.join(where, name), "rb") as f:
                sums[os.path.relpath(os.path.join(where, name), folder)] = hashlib.sha256(f.read()).hexdigest()
    return sums


def _verify(workdir: str, step: int) -> None:
    """Raises ValueError when a file of checkpoint `step` differs from its checksum (a checkpoint
    saved without checksums, by an older version or a kill just after orbax wrote it, passes)."""
    path = os.path.join(workdir, "checkpoints.sha256", f"{step}.json")
    if not os.path.exists(path):
        return
    want, have = read_json(path), _checksums(os.path.join(workdir, "checkpoints", str(step)))
    bad = sorted(name for name in want if have.get(name) != want[name])
    if bad:
        raise ValueError(f"checksum mismatch in {', '.join(bad[:3])}")


def agent_config(**fields) -> AgentConfig:
    """`AgentConfig` from plain values (a `network` dict becomes a NetworkConfig; lists become
    tuples), as configs and command lines give them."""
    network = fields.pop("network", None)
    if isinstance(network, dict):
        network = NetworkConfig(**{k: tuple(v) if isinstance(v, list) else v for k, v in network.items()})
    if network is not None:
        fields["network"] = network
    return AgentConfig(**fields)
