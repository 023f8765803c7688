"""The whole training computation as pure, jitted functions (the purejaxrl pattern).

    state = init(instance, config, seed=0)
    state, metrics = run_chunk(state, instance, config=config, support=support_of(instance, config))

`run_chunk` is one `lax.scan` of `updates_per_chunk` iterations; an iteration plays
`moves_per_update` moves of all self-play games (`selfplay.act`), writes them to the replay and
takes one learner step (`learner.update`) once the replay holds enough moves. Everything stays on
the device; `metrics` (one entry per iteration) is all the host reads. `jaxmmap.agent.loop` is the
host side: logging, checkpoints, budgets.

Data parallelism: `shard(state, mesh)` lays the self-play games and the replay's game axis over
the mesh axis "games" and replicates the parameters; `run_chunk` then runs SPMD (jit's sharding
propagation) with the same results, up to the order of floating-point sums, on any number of
devices.
"""

from __future__ import annotations

import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from jaxmmap.agent import learner as learner_lib
from jaxmmap.agent import replay as replay_lib
from jaxmmap.agent import selfplay
from jaxmmap.agent.algorithm import Algorithm
from jaxmmap.agent.config import AgentConfig
from jaxmmap.agent.networks import make_networks
from jaxmmap.agent.support import Support, value_transform
from jaxmmap.env import game
from jaxmmap.env.instance import Instance
from jaxmmap.env.observation import observe
from jaxmmap.env.rollout import rollout

LEARNER_METRICS = ("loss", "policy_loss", "value_loss", "reward_loss", "grad_norm", "value_target")


@chex.dataclass(frozen=True)
class TrainState:
    """Everything that changes during training.

    Attributes:
      learner: parameters, target parameters, optimizer state, learner steps.
      actors: the self-play games and the best game so far.
      replay: the on-device replay.
      demonstration: a one-game replay holding the demonstration (`selfplay.demonstration`):
        the best game so far, or the given one; empty (`count` 0) before the first.
      key: uint32[2] the raw PRNG key (raw, so that checkpoints hold plain arrays).
      moves: int32[] self-play moves played (of all games together: one per `act`).
    """

    learner: learner_lib.Learner
    actors: selfplay.Actors
    replay: replay_lib.Replay
    demonstration: replay_lib.Replay
    key: jax.Array
    moves: jax.Array


def support_of(instance: Instance, config: AgentConfig) -> Support:
    """The value and reward support: `config.network.support_size` atoms covering +-h(the sum of
    all benefits and table gains), which bounds every return and every single reward."""
    valid = np.asarray(instance.valid)
    scale = float(np.sum(np.abs(np.asarray(instance.benefit))[valid]))
    scale += float(np.sum(np.max(np.abs(np.asarray(instance.gain)), axis=1)))
    bound = float(value_transform(max(scale, 1e-3)))
    return Support(min=jnp.float32(-bound), max=jnp.float32(bound), size=config.network.support_size)


def init(instance: Instance, config: AgentConfig, *, seed: int = 0,
         demonstration: np.ndarray | None = None) -> TrainState:
    """New games, an empty replay and freshly initialized networks. `demonstration` (an action
    per buffer, e.g. the heuristic's) is played and becomes the best game so far and the
    demonstration that the learner imitates (`demonstration_fraction`) until a better one."""
    actions = selfplay.padded_actions(instance, demonstration)
    state = _init(instance, jax.random.key(seed), actions, config=config)
    if demonstration is not None:
        replayed = not config.demonstrated or bool(state.demonstration.data.done.any())
        if not (np.isfinite(float(state.actors.best_return)) and replayed):
            raise ValueError("the demonstration does not replay to a won game within the "
                             "demonstration replay's rows: give a won game's actions (e.g. "
                             "heuristic.play_plan(...).action)")
    return jax.tree.map(jnp.copy, state)  # one buffer per leaf: `run_chunk` donates them


def demonstration_rows(instance: Instance, config: AgentConfig) -> int:
    """Rows of the demonstration replay: a won game's moves and the last one's horizon (one
    placeholder row when the learner takes no demonstration)."""
    return instance.width.shape[0] + config.horizon + 1 if config.demonstrated else 1


@functools.partial(jax.jit, static_argnames=("config",))
def _init(instance: Instance, key: jax.Array, demonstration: jax.Array | None, *,
          config: AgentConfig) -> TrainState:
    key, k_params = jax.random.split(key)
    actors = selfplay.init(instance, config)
    observation = jax.vmap(observe)(jax.vmap(lambda s: s.replace(instance=instance))(actors.states))
    params = make_networks(config.network).init(k_params, jax.tree.map(lambda x: x[:1], observation))
    g = config.games
    example = replay_lib.Transition(
        observation=replay_lib.compress(observation), action=jnp.zeros(g, jnp.int32),
        reward=jnp.zeros(g), policy=jnp.zeros((g, 3)), value=jnp.zeros(g),
        done=jnp.zeros(g, bool), valid=jnp.zeros(g, bool))
    rows = demonstration_rows(instance, config)
    demo = replay_lib.init(jax.tree.map(lambda x: x[:1], example), rows)
    if demonstration is not None:
        if config.demonstrated:  # the replay's scan plays the game
            played, demo = selfplay.demonstration(game.init(instance, backup=True), demonstration,
                                                  rows=rows, discount=config.discount)
        else:
            played = rollout(instance, key, selfplay.follow(demonstration), backup=True)
        won = played.done & ~played.lost
        actors = actors.replace(best=played.replace(instance=None),
                                best_return=jnp.where(won, played.board.ret, -jnp.inf))
    return TrainState(learner=learner_lib.init(params, config), actors=actors,
                      replay=replay_lib.init(example, config.rows), demonstration=demo,
                      key=jax.random.key_data(key), moves=jnp.int32(0))


def temperature(config: AgentConfig, progress: jax.Array) -> jax.Array:
    """Table 6's action temperature: `init` until `temperature_decay` of the run, then `final`."""
    return jnp.where(progress < config.temperature_decay, config.init_temperature,
                     config.final_temperature).astype(jnp.float32)


def iteration(state: TrainState, instance: Instance, *, config: AgentConfig, support: Support,
              progress: jax.Array) -> tuple[TrainState, dict[str, jax.Array]]:
    """`moves_per_update` self-play moves, then one learner step if the replay is ready."""
    networks = make_networks(config.network)
    key, k_learn, k_moves = jax.random.split(jax.random.wrap_key_data(state.key), 3)
    temp = temperature(config, progress)

    def move(carry, key):
        actors, replay, played = carry
        actors, row, now = selfplay.act(state.learner.params, key, actors, instance, config=config,
                                        networks=networks, support=support, temperature=temp)
        played = jax.tree.map(jnp.add, played, now)
        return (actors, replay_lib.add(replay, row), played), None

    zero = selfplay.Played(finished=jnp.int32(0), lost=jnp.int32(0), return_sum=jnp.float32(0))
    (actors, replay, played), _ = jax.lax.scan(
        move, (state.actors, state.replay, zero), jax.random.split(k_moves, config.moves_per_update))

    demo = state.demonstration
    if config.demonstrated:
        def rebuild(_):
            start = game.init(instance, backup=True)
            return selfplay.demonstration(start, actors.best.board.action,
                                          rows=demo.data.action.shape[0], discount=config.discount)[1]

        improved = actors.best_return > state.actors.best_return
        demo = jax.lax.cond(improved, rebuild, lambda d: d, demo)

    ready = replay.count > max(config.horizon, config.min_replay_moves)
    if config.demonstrated:
        ready &= demo.count > 0
    if config.learns:
        def learn(learner):
            return learner_lib.update(learner, replay, k_learn, config=config, networks=networks,
                                      support=support, demonstration=demo)

        def wait(learner):
            return learner, {name: jnp.float32(0) for name in LEARNER_METRICS}

        learner, learned = jax.lax.cond(ready, learn, wait, state.learner)
    else:
        learner, learned = state.learner, {name: jnp.float32(0) for name in LEARNER_METRICS}
    metrics = {**learned, "learned": ready & config.learns, "finished": played.finished,
               "lost": played.lost, "return_sum": played.return_sum,
               "best_return": actors.best_return, "temperature": temp,
               "moves": jnp.int32(config.games * config.moves_per_update)}
    new = TrainState(learner=learner, actors=actors, replay=replay, demonstration=demo, key=jax.random.key_data(key),
                     moves=state.moves + config.moves_per_update)
    return new, metrics


@functools.partial(jax.jit, static_argnames=("config",), donate_argnums=0)
def run_chunk(state: TrainState, instance: Instance, *, config: AgentConfig, support: Support,
              progress: jax.Array = 0.0) -> tuple[TrainState, dict[str, jax.Array]]:
    """`updates_per_chunk` iterations in one `lax.scan`; metrics have a leading axis of that
    length. One compilation per configuration and padded instance shape (`support` and
    `progress`, the run's share done, are data)."""
    step = functools.partial(iteration, instance=instance, config=config, support=support,
                             progress=jnp.float32(progress))
    return jax.lax.scan(lambda s, _: step(s), state, None, length=config.updates_per_chunk)


def mesh(devices=None) -> Mesh:
    """A one-axis mesh ("games") over `devices` (default: all local devices)."""
    devices = jax.local_devices() if devices is None else devices
    return Mesh(np.asarray(devices), ("games",))


def shardings(state: TrainState, mesh: Mesh) -> TrainState:
    """Where each array of `state` lives: games (and the replay's game axis) split over the
    mesh, everything else replicated."""
    replicated = NamedSharding(mesh, PartitionSpec())
    by_game = NamedSharding(mesh, PartitionSpec("games"))
    by_row_game = NamedSharding(mesh, PartitionSpec(None, "games"))
    every = lambda tree, sharding: jax.tree.map(lambda _: sharding, tree)
    return TrainState(
        learner=every(state.learner, replicated),
        actors=selfplay.Actors(states=every(state.actors.states, by_game), delay=by_game,
                               best=every(state.actors.best, replicated), best_return=replicated),
        replay=replay_lib.Replay(data=every(state.replay.data, by_row_game), head=replicated,
                                 count=replicated),
        demonstration=every(state.demonstration, replicated),
        key=replicated, moves=replicated)


def shard(state: TrainState, mesh: Mesh) -> TrainState:
    """`state` laid out over `mesh` (`games` must be a multiple of its size)."""
    if state.actors.delay.shape[0] % mesh.size:
        raise ValueError(f"games ({state.actors.delay.shape[0]}) must be a multiple of the"
                         f" number of devices ({mesh.size})")
    return jax.device_put(state, shardings(state, mesh))


def best_game(state: TrainState, instance: Instance) -> game.State | None:
    """The best finished game so far (with its instance), or None before the first one."""
    if not np.isfinite(float(state.actors.best_return)):
        return None
    return jax.device_get(state.actors.best).replace(instance=instance)


def algorithm(instance: Instance, config: AgentConfig, *, seed: int = 0,
              demonstration: np.ndarray | None = None, devices=None) -> Algorithm:
    """The MuZero family (muzero, alphazero, mcts, no_search) as the loop's `Algorithm`, its games
    split over `devices` (default: all local ones)."""
    support = support_of(instance, config)
    return Algorithm(
        state=shard(init(instance, config, seed=seed, demonstration=demonstration), mesh(devices)),
        chunk=lambda state, progress, clock: run_chunk(state, instance, config=config, support=support,
                                                       progress=progress),  # (one jitted chunk, off the clock)
        per_chunk=config.updates_per_chunk,
        best_return=lambda state: float(state.actors.best_return),
        best_game=lambda state: best_game(state, instance))
