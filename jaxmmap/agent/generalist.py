"""The generalist: one decision network pretrained across many programs, played zero-shot.

    python train.py --config configs/generalist.py --workdir runs/generalist   # pretrain
    jaxmmap solve P --solver generalist                                         # play it

Pretraining is imitation of a teacher across programs. For each training program (generated
ones of several sizes, hardware-like memory pressures, latency tables on and off, both NoCopy
rules, and the suite's training split, `suite.names("train")`) the teacher's game is the better,
by return, of the heuristic's decisions as the game plays them (`heuristic.play_plan`) and the
greedy policy's game. That game is replayed move by move, and every real decision (more than one
legal move) gives a row (`teacher_rows`; the teacher is chosen in `solvers.agents.teacher`,
where the agent and the solvers meet): the decision features (`observation.decision_features`, normalised by
the program's own sizes, so that one set of parameters serves every program), the legal moves
and the teacher's move. The network is the expert mode's `PolicyValueNet`: the greedy policy's
scores plus a learned correction (zero at the start), trained by AdamW on the cross-entropy over
the legal moves. Its greedy game then starts where the greedy policy stands and moves toward
the teacher's decisions wherever they generalise.

`config.teacher="lookahead"` of `configs/generalist.py` trains on other rows instead
(`lookahead_rows`: one step of policy improvement over the greedy policy, at decisions of greedy's
own game); off by default, as its network's games were worse than greedy's (docs/decisions.md).

After the imitation, `config.rounds` of `configs/generalist.py` (one by default) go on with the
states the network's own games visit, labelled by the teacher's moves (`own_rows`: DAgger) or by one
step of policy improvement over the network's game (`lookahead_rows` with its parameters). One round
of DAgger raised the imitation's games on the selection programs for every network seed tried;
the lookahead's labels did less (docs/decisions.md, The generalist).

After the imitation, `improve` can search the network's parameters on the game itself
(OpenAI-ES over fresh programs, the best mean kept by selection programs): off by default
(`generations=0`), since it gained nothing on programs it was not searched on (docs/decisions.md).

The rows of each program are gathered once (WORKDIR/rows/, a file per program and teacher); the
parameters and the optimizer state are checkpointed every `checkpoint_every` steps (`state.msgpack`, written
atomically), so a killed run resumes where it stopped. `ship` writes the parameters and the
config that made them into the package (`jaxmmap/data/generalist/`), where `load` finds them.
flax's msgpack serialization is used rather than orbax here: the state is one small pytree of
a few hundred KB, and one file written atomically is simpler to ship inside the package.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.resources
import json
import os

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import serialization

from jaxmmap.agent import selfplay
from jaxmmap.agent.networks import PolicyValueNet
from jaxmmap.core.files import atomic, digest, write_json
from jaxmmap.core.problem import Problem
from jaxmmap.core.rules import Rules
from jaxmmap.env import game
from jaxmmap.env import observation as obs_lib
from jaxmmap.env.instance import Instance, make_instance
from jaxmmap.env.observation import NUM_DECISION_FEATURES, decision_features
from jaxmmap.env.rollout import greedy_policy, rollout, rollouts, won_returns

SHIPPED = "data/generalist"


@dataclasses.dataclass(frozen=True)
class GeneralistConfig:
    """How the generalist is pretrained.

    Attributes:
      widths: hidden widths of the network (`PolicyValueNet`).
      steps: AdamW steps in all (across resumes).
      batch_size: rows per step.
      learning_rate, weight_decay: AdamW's.
      checkpoint_every: steps between checkpoints.
      seed: the parameters' and the batches' seed.
      generations: generations of the improvement after imitation (`improve`; 0: none).
      population: its population (even: antithetic pairs).
      sigma, es_learning_rate: its perturbations' standard deviation and Adam's learning rate.
      select_every: generations between two plays of the mean on the selection programs.
      search: what the improvement searches: "head" (the correction's last layer, 387 numbers:
        the torso the imitation learned stays) or "all" the parameters.
      correction: the share of the learned correction the network's games play with: logits =
        greedy scores + correction x (the network's logits - greedy scores). Training ignores it.
        The shipped 0.5 was chosen of 0.25, 0.5, 0.75 and 1.0 on programs none held out
        (`benchmarks/generalist_correction.py`; docs/decisions.md, "The whole correction").
    """

    widths: tuple[int, ...] = (128, 128)
    steps: int = 3000
    batch_size: int = 1024
    learning_rate: float = 1e-3
    weight_decay: float = 1e-4
    checkpoint_every: int = 500
    seed: int = 0
    generations: int = 0
    population: int = 16
    sigma: float = 0.005
    es_learning_rate: float = 0.003
    select_every: int = 5
    search: str = "head"
    correction: float = 1.0


def network(config: GeneralistConfig) -> PolicyValueNet:
    return PolicyValueNet(config.widths)


def init_params(config: GeneralistConfig):
    return network(config).init(jax.random.key(config.seed), jnp.zeros((1, NUM_DECISION_FEATURES), jnp.float32))


def policy(params, ctx: obs_lib.Context, config: GeneralistConfig, temperature=0.0):
    """The network's game policy, its logits the greedy scores plus `config.correction` of its
    learned correction (`with_correction`): the legal move of the largest logit (its greedy
    game), or with `temperature` > 0 (a float or a traced float32[]: one compile for both) a
    legal move drawn from the softmax of the logits over it."""
    net, played = network(config), with_correction(params, config.correction)

    def act(key, state: game.State) -> jax.Array:
        scores = net.apply(played, decision_features(state, ctx)[None])[0][0]
        logits = jnp.where(game.legal_action_mask(state), scores, -jnp.inf)
        drawn = jax.random.categorical(key, logits / jnp.maximum(temperature, 1e-6))
        return jnp.where(temperature > 0, drawn, jnp.argmax(logits)).astype(jnp.int32)

    return act


@functools.partial(jax.jit, static_argnames=("config",))
def play(params, instance: Instance, *, config: GeneralistConfig) -> game.State:
    """The network's greedy game of `instance` (Drop-backup on), to its end."""
    ctx = obs_lib.context(instance)
    return rollout(instance, jax.random.key(0), policy(params, ctx, config), backup=True)


# ----------------------------------------------------------------------------------------------
# The teacher's rows.
# ----------------------------------------------------------------------------------------------


@jax.jit
def replayed(instance: Instance, actions: jax.Array):
    """Replays `actions` (int32[N], a won game's) and returns, per move (N rows): the decision
    features, the legal moves, the move played, whether the row is a real decision, the buffer
    it decides and whether it decides one (the game has not ended)."""
    ctx = obs_lib.context(instance)

    follow = selfplay.follow(actions)

    def move(state, _):
        legal, action = game.legal_action_mask(state), follow(None, state)
        row = (decision_features(state, ctx), legal, action, ~state.done & (jnp.sum(legal) > 1),
               jnp.minimum(state.board.cursor, actions.shape[0] - 1), ~state.done)
        return game.step(state, action), row

    _, rows = jax.lax.scan(move, game.init(instance, backup=True), None, length=actions.shape[0])
    return rows


def teacher_rows(problem: Problem, rules: Rules, actions: np.ndarray) -> dict[str, np.ndarray]:
    """The rows of the game that plays `actions` (an action per buffer, a won game's: the
    teacher's, `solvers.agents.teacher`), real decisions only."""
    instance = make_instance(problem, rules)
    phi, legal, action, keep, _, _ = (np.asarray(x) for x in replayed(instance, selfplay.padded_actions(instance, actions)))
    return {"phi": phi[keep], "legal": legal[keep], "action": action[keep]}


@functools.partial(jax.jit, static_argnames=("config",))
def _own_rows(params, instance: Instance, labels: jax.Array, *, config: GeneralistConfig):
    """Plays the network's greedy game (Drop-backup on) and keeps, per buffer, the last real
    decision of that game there whose label `labels[buffer]` is legal: (float32[N, F] features,
    bool[N, 3] legal moves, int32[N] the label, -1 where there is no such decision)."""
    ctx, n = obs_lib.context(instance), instance.width.shape[0]
    act, key = policy(params, ctx, config), jax.random.key(0)

    def body(carry):
        state, phi, legal, label = carry
        i, mask = jnp.minimum(state.board.cursor, n - 1), game.legal_action_mask(state)
        keep = (jnp.sum(mask) > 1) & mask[labels[i]]
        phi = phi.at[i].set(jnp.where(keep, decision_features(state, ctx), phi[i]))
        legal = legal.at[i].set(jnp.where(keep, mask, legal[i]))
        label = label.at[i].set(jnp.where(keep, labels[i], label[i]))
        return game.step(state, act(key, state)), phi, legal, label

    start = (game.init(instance, backup=True), jnp.zeros((n, NUM_DECISION_FEATURES), jnp.float32),
             jnp.zeros((n, 3), bool), jnp.full(n, -1, jnp.int32))
    return jax.lax.while_loop(lambda c: ~c[0].done, body, start)[1:]


def own_rows(params, problem: Problem, rules: Rules, actions: np.ndarray, config: GeneralistConfig):
    """Rows of the states the network's own greedy game visits, labelled by the teacher's
    `actions` (an action per buffer; rows where it is illegal are left out): a round of DAgger.
    The imitation's rows are the teacher's states only, and a network that agrees with them on
    94% of the rows still strays, then meets states no row showed it."""
    instance = make_instance(problem, rules)  # (as `teacher_rows` and the solver: the same features)
    phi, legal, label = (np.asarray(x) for x in _own_rows(
        params, instance, selfplay.padded_actions(instance, actions), config=config))
    keep = label >= 0
    return {"phi": phi[keep], "legal": legal[keep], "action": label[keep]}


def _base(instance: Instance, params, config: GeneralistConfig | None):
    """The policy a lookahead improves on: greedy's (`params` None) or the network's game."""
    return greedy_policy if params is None else policy(params, obs_lib.context(instance), config)


@functools.partial(jax.jit, static_argnames=("config",))
def _policy_game(instance: Instance, params=None, config: GeneralistConfig | None = None):
    """int32[N]: the greedy policy's game, or with `params` the network's (Drop-backup on: always
    won), as an action per buffer."""
    state = rollout(instance, jax.random.key(0), _base(instance, params, config), backup=True)
    return jnp.maximum(state.board.action, 0)  # (padding buffers are never decided: Copy, unplayed)


def _deviation(recorded: jax.Array, then):
    """A game policy per point (i, a) (int32[2]): the replay of `recorded` (`selfplay.follow`, as
    `_rows` replays it) for the first i moves, then `a`, then the policy `then` to the end."""
    follow = selfplay.follow(recorded)

    def make(point):
        def act(key, state: game.State) -> jax.Array:
            later = jnp.where(state.moves == point[0], point[1], then(key, state))
            return jnp.where(state.moves < point[0], follow(key, state), later).astype(jnp.int32)
        return act
    return make


@functools.partial(jax.jit, static_argnames=("config",))
def _deviations(instance: Instance, recorded: jax.Array, points: jax.Array, params=None,
                config: GeneralistConfig | None = None) -> jax.Array:
    """float32[P]: the return of each deviation `points[p]` (int32[P, 2]), one batch; -inf if lost."""
    keys = jax.random.split(jax.random.key(0), points.shape[0])
    then = _deviation(recorded, _base(instance, params, config))
    return won_returns(rollouts(instance, keys, then, backup=True, params=points))


def lookahead_rows(problem: Problem, rules: Rules, *, points: int = 128, seed: int = 0, params=None,
                   config: GeneralistConfig | None = None) -> dict[str, np.ndarray]:
    """Rows labelled by one step of policy improvement over the greedy policy, or with `params`
    over the network's own game (`config`'s). That policy's game is replayed from its decisions
    (`replayed`); at up to `points` of the replay's real decisions (all of them on small programs,
    else drawn with `seed`), each legal move is played and the policy plays on to the end, 3 x
    `points` games in one batch. The row's move is the one of the best return:
    the replayed (the policy's own) move unless another returns more by a millionth, or unless the
    replayed move's continuation is lost and another's is not. Learning these is learning where
    leaving the policy pays in the true game, not agreement with a plan. Each row also keeps `better` (bool:
    the label is not the replayed move), `gain` (float32: the label's return over the replayed
    move's, 1 where that is best, inf where that one is lost) and `move` (int32: the replay's move
    number, which is also the buffer)."""
    instance = padded(problem, rules)
    recorded = _policy_game(instance, params, config)
    phi, legal, action, keep, _, _ = (np.asarray(x) for x in replayed(instance, recorded))
    real = np.flatnonzero(keep)
    if len(real) > points:
        real = np.sort(np.random.default_rng(seed).choice(real, points, replace=False))
    if not len(real):
        return {"phi": phi[:0], "legal": legal[:0], "action": action[:0], "better": np.zeros(0, bool),
                "gain": np.zeros(0, np.float32), "move": np.zeros(0, np.int32)}
    chosen = np.resize(real, points)  # (one batch shape for every program of a padded size)
    grid = np.stack([np.repeat(chosen, 3), np.tile(np.arange(3), points)], 1).astype(np.int32)
    got = np.asarray(_deviations(instance, recorded, jnp.asarray(grid), params, config)).reshape(points, 3)[:len(real)]
    rows = np.arange(len(real))
    got = np.where(legal[real], got, -np.inf)
    mine, best = got[rows, action[real]], np.argmax(got, 1)
    top = got[rows, best]
    with np.errstate(invalid="ignore"):
        better = np.isfinite(top) & (~np.isfinite(mine) | (top > mine + 1e-6 * np.abs(mine)))
    label = np.where(better, best, action[real]).astype(action.dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        gain = np.where(~better, 1.0, np.where(np.isfinite(mine) & (mine > 0), top / mine, np.inf))
    return {"phi": phi[real], "legal": legal[real], "action": label, "better": better,
            "gain": gain.astype(np.float32), "move": real.astype(np.int32)}


# ----------------------------------------------------------------------------------------------
# Training.
# ----------------------------------------------------------------------------------------------


def _optimizer(config: GeneralistConfig):
    return optax.adamw(config.learning_rate, weight_decay=config.weight_decay)


def loss(params, phi, legal, action, *, config: GeneralistConfig):
    """Mean cross-entropy of the teacher's moves over the legal moves, and the accuracy of the
    network's greedy choice. (The intent network's rows have every move legal, `guide.fit`.)"""
    logits, _ = network(config).apply(params, phi)
    logits = jnp.where(legal, logits, -1e9)
    ce = optax.softmax_cross_entropy_with_integer_labels(logits, action)
    return jnp.mean(ce), jnp.mean(jnp.argmax(logits, -1) == action)


@functools.partial(jax.jit, static_argnames=("config",))
def train_step(params, opt_state, key, data, *, config: GeneralistConfig):
    index = jax.random.randint(key, (config.batch_size,), 0, data["action"].shape[0])
    batch = jax.tree.map(lambda x: x[index], data)
    (value, accuracy), grads = jax.value_and_grad(loss, has_aux=True)(
        params, batch["phi"], batch["legal"], batch["action"], config=config)
    updates, opt_state = _optimizer(config).update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, value, accuracy


def _restored(path: str | None, state: dict, what: str, log) -> dict:
    """`state` as checkpointed at `path`, or `state` itself where there is none, or where it is cut
    short or not ours (then with a warning: `what` starts over)."""
    if path is None or not os.path.exists(path):
        return state
    try:
        with open(path, "rb") as f:
            return serialization.from_bytes(state, f.read())
    except (ValueError, KeyError, TypeError) as e:
        log(f"warning: the checkpoint {path} cannot be read ({type(e).__name__}); {what} starts over")
        return state


def fit(data: dict[str, np.ndarray], config: GeneralistConfig, *, workdir: str | None = None,
        log=print) -> dict:
    """Trains the network on `data` (the rows of every training program, concatenated) for
    `config.steps` steps in all, resuming from `workdir`'s checkpoint; returns the parameters
    and their loss and accuracy over all of `data`. A checkpoint of other rows or another config
    (a changed config run again in its folder) is not resumed: the training starts over, saying so."""
    params = init_params(config)
    # the rows and what the training reads (more `steps` resume; the games' correction is not read)
    origin = digest(repr([config.widths, config.batch_size, config.learning_rate, config.weight_decay, config.seed]), data)
    fresh = {"params": params, "opt_state": _optimizer(config).init(params), "step": 0, "origin": origin}
    path = None if workdir is None else os.path.join(workdir, "state.msgpack")
    state = _restored(path, fresh, "training", log)
    if state["origin"] != origin:
        log(f"the rows or the config differ from those of the checkpoint {path}: the training starts over")
        state = fresh
    data = jax.tree.map(jnp.asarray, data)
    key = jax.random.key(config.seed + 1)
    while int(state["step"]) < config.steps:
        step = int(state["step"])
        params, opt_state, value, accuracy = train_step(
            state["params"], state["opt_state"], jax.random.fold_in(key, step), data, config=config)
        state = {"params": params, "opt_state": opt_state, "step": step + 1, "origin": origin}
        if path is not None and ((step + 1) % config.checkpoint_every == 0 or step + 1 == config.steps):
            with atomic(path, "wb") as f:
                f.write(serialization.to_bytes(state))
            log(f"step {step + 1}: loss {float(value):.4f}, accuracy {float(accuracy):.3f}")
    value, accuracy = jax.jit(functools.partial(loss, config=config))(
        state["params"], data["phi"], data["legal"], data["action"])  # over all the rows
    return {"params": state["params"], "loss": float(value), "accuracy": float(accuracy)}


# ----------------------------------------------------------------------------------------------
# Padded instances and the correction's share.
# ----------------------------------------------------------------------------------------------


def padded(problem: Problem, rules: Rules) -> Instance:
    """The program's instance padded to powers of two (buffers and steps from 128, latency
    tables from 1), so that the improvement's dozens of programs share a few compiles: on the
    CPU every compiled game holds its own memory maps, and one per program (48 of them) ran the
    process out of them."""
    up = lambda n, low: max(low, 1 << max(0, int(n) - 1).bit_length())  # noqa: E731
    return make_instance(problem, rules, num_buffers=up(problem.num_buffers, 128),
                         num_steps=up(problem.num_steps, 128), num_tables=up(len(problem.latency_tables), 1))


def with_correction(params, share: float):
    """The same network with its correction's last layer times `share`: its plain logits
    (`PolicyValueNet`) are then those of `policy` with `correction=share` (the correction is
    linear in that layer). At 0 its games are the greedy policy's."""
    inner = dict(params["params"])
    inner["policy"] = jax.tree.map(lambda x: x * jnp.asarray(share, x.dtype), inner["policy"])
    return {**params, "params": inner}


def untrained(params):
    """The same network with its correction's last layer at zero: its games are greedy's."""
    return with_correction(params, 0.0)


# ----------------------------------------------------------------------------------------------
# Shipping and loading.
# ----------------------------------------------------------------------------------------------


def ship(params, config: GeneralistConfig, folder: str, about: dict, intent=None) -> None:
    """Writes the parameters, their config ("network") and what made them (`about`: the run's
    config, its programs, its figures) into `folder`; with `intent`, the intent network's
    parameters too (`agent.guide`)."""
    os.makedirs(folder, exist_ok=True)
    with atomic(os.path.join(folder, "params.msgpack"), "wb") as f:
        f.write(serialization.to_bytes(params))
    if intent is not None:
        with atomic(os.path.join(folder, "intent.msgpack"), "wb") as f:
            f.write(serialization.to_bytes(intent))
    write_json(os.path.join(folder, "config.json"), {**about, "network": dataclasses.asdict(config)}, indent=2)


@functools.cache
def load() -> tuple[object, GeneralistConfig, dict]:
    """The shipped network: (parameters, its config, what made it). Raises FileNotFoundError
    when the package holds none."""
    root = importlib.resources.files("jaxmmap").joinpath(SHIPPED)
    about = json.loads(root.joinpath("config.json").read_text(encoding="utf-8"))
    config = GeneralistConfig(**{k: tuple(v) if isinstance(v, list) else v for k, v in about["network"].items()})
    return params_from(root.joinpath("params.msgpack").read_bytes()), config, about


def trained_rules(about: dict) -> dict:
    """The `Rules` options the shipped network learned under (`load`'s third value: its training
    config's placement and copy supply; the paper's grid where it names none)."""
    config = about.get("config", {})
    return {"placement": config.get("placement", "grid"), "copy_supply": config.get("copy_supply", "near")}


@functools.cache
def load_intent():
    """The shipped intent network's parameters (`agent.guide`; the policy network's widths), or
    None when the package holds none."""
    path = importlib.resources.files("jaxmmap").joinpath(SHIPPED).joinpath("intent.msgpack")
    return params_from(path.read_bytes()) if path.is_file() else None


def params_from(data: bytes):
    """Parameters as `ship` and `train.py` write them (msgpack), restored as the nested dict they
    were written from, without initialising a network to read them into (that init costs seconds
    of a short budget)."""
    return jax.tree.map(jnp.asarray, serialization.msgpack_restore(data))
