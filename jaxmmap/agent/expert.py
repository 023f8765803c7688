"""The expert mode: expert iteration over the true game, the agent's default.

Each generation (one jitted function; `run_chunk` scans `generations_per_chunk` of them):

1. **Search in the true game** (the expert). `games` games play to their end at once (`vmap` of
   a `lax.while_loop` over the jitted game, Drop-backup on). Game 0 is the deterministic
   evaluation game: the network's argmax policy from the first move, played again only once the
   network has learned and EVALUATION_GAP generations have passed (else game 0 explores too).
   Every other game, once a best game exists, restarts from a prefix of the search's *center*
   (with probability `restart_fraction`, at a uniform buffer), then follows the center's move at
   each buffer except with its own deviation rate (log-uniform in [`deviation_min`, `deviation_max`], one
   per game; above REFERENCE_BUFFERS buffers the lower end scales as 1/N, so that the quietest
   games still change only a few moves): a deviation samples the network's policy at the action temperature among the
   legal moves *other* than the center's, mixed with a uniform share (UNIFORM_SHARE). Where the
   center's move is illegal (the game has left its path) the network samples among all legal
   moves. A share of the games (`directed_share`) are *directed* instead: each draws a random
   linear function of the features and plays the argmax of greedy's scores (not the network's
   logits: what the network learns shapes the other games) plus that function plus a bonus for
   the center's move (`expert_games.CENTER_BONUS`), like a member of ES's population around its
   plan, so that its deviations are the decisions whose features lean its way, coherent across
   the program rather than independent. Played one after the other (large programs on a CPU),
   the restarted games start from a fork: the center's moves replayed once, its state copied to
   each game at its prefix. The games that cannot beat the center are cut short
   (`play_search(prune=...)`): one that has played only the center's moves ends past its
   window (it could only replay the center; it counts at the center's return), and in the
   deferred game one that ends below the center's return is lost, unpacked or as soon as its
   packings fall below (the logs count it lost; `mean_return` is the mean of the others).
2. **Two games are kept**: the best of all (what `fit` validates and writes), and the center,
   the best of the search's own games, which also moves to a game of equal return (plateaus are
   walked, not stalled on). The evaluation game counts only for the best, so the network's own
   game cannot pull the search into its basin; only the first center may be the evaluation game
   (the greedy policy's, far better than the first samples on a large program).
3. **Learning** (the apprentice). The first DEVIATIONS deviations of each game are recorded
   (features, the moves a deviation could make, the move made); those of the games that beat
   the center, among the `elites` best of the generation, are the targets of `learner_steps`
   AdamW steps: a cross-entropy over the allowed moves, minus an entropy bonus
   (`networks.PolicyValueNet` over `observation.decision_features`).

Why this design (docs/decisions.md, The agent): a search over the true game is
exact and cheap, and most of the return is won by changing a few moves of a good game, not by
replaying whole new ones. Imitating the elite games' moves instead made the network deviate into
moves that change nothing and its own game the search's center: every seed stalled.

The temperature follows the run's progress (the larger of the budget's and the iterations'
shares), geometrically from `init_temperature` to `final_temperature`, so a 5-minute run and a
day-long one both anneal.
"""

from __future__ import annotations

import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np
import optax

from jaxmmap.agent import generalist, selfplay
from jaxmmap.agent import learner as learner_lib
from jaxmmap.agent.algorithm import Algorithm
from jaxmmap.agent.config import AgentConfig
from jaxmmap.agent.expert_games import DEVIATIONS, Games, duplicate, ended, network, play_search, start_search
from jaxmmap.env import game
from jaxmmap.env import observation as policy_lib
from jaxmmap.env.instance import Instance
from jaxmmap.env.observation import NUM_DECISION_FEATURES
from jaxmmap.env.rollout import rollout, won_returns
from jaxmmap.solvers.base import in_slices

#: A stalled search starts again (`AgentConfig.restart_stall`) after at least this many
#: generations without its center rising.
RESTART_MIN_GENERATIONS = 8

#: Generations at least between two evaluation games: with directed games the network learns in
#: most generations, and at 9,028 buffers its argmax game made as many moves as 9 others.
EVALUATION_GAP = 16

METRICS = ("loss", "policy_loss", "value_loss", "reward_loss", "grad_norm", "value_target")


@chex.dataclass(frozen=True)
class ExpertState:
    """Everything that changes during training in the expert mode.

    Attributes:
      learner: parameters, optimizer state, learner steps (`learner.Learner`; its target
        parameters are unused here).
      best: `game.State` of the best finished, won game (no batch axis, `instance=None`).
      best_return: float32[] its return, -inf before the first won game.
      center, center_return: the game the search explores around and its return: the best of
        the search's own games (ties move it along a plateau); the evaluation games count only
        for `best`, so what the network plays cannot pull the search into its basin.
      evaluated: bool[] the network's argmax game with the current parameters was played: it is
        deterministic, so until the network learns again game 0 explores like the others (at
        9,028 buffers that game, its restores included, made more moves than the 7 others).
      evaluated_at: int32[] the generation of the last evaluation game (-EVALUATION_GAP before
        the first): the next waits EVALUATION_GAP generations, however often the network learns.
      evaluation_return: float32[] the return of the network's argmax game (-inf if lost; the
        last one played: while `evaluated`, the current parameters').
      origin, origin_return: the search's first center (the demonstration's game, else the first
        center found; -inf before) and its return: where a stalled search starts again.
      began, rose: int32[] the generation the current search began (0, or its last restart) and the
        last one its center's return rose in.
      key: uint32[2] the raw PRNG key.
      moves: int32[] generations played.
    """

    learner: learner_lib.Learner
    best: game.State
    best_return: jax.Array
    center: game.State
    center_return: jax.Array
    evaluated: jax.Array
    evaluated_at: jax.Array
    evaluation_return: jax.Array
    origin: game.State
    origin_return: jax.Array
    began: jax.Array
    rose: jax.Array
    key: jax.Array
    moves: jax.Array


def init(instance: Instance, config: AgentConfig, *, seed: int = 0,
         demonstration: np.ndarray | None = None) -> ExpertState:
    """A fresh network (the shipped generalist's with `config.pretrained`) and no best game;
    `demonstration` (an action per buffer) is played and becomes the best game, the one the
    search restarts from."""
    actions = selfplay.padded_actions(instance, demonstration)
    params = None
    if config.pretrained:
        params, shipped, _ = generalist.load()
        if tuple(shipped.widths) != tuple(config.network.decision):
            raise ValueError(f"pretrained: the generalist's widths {shipped.widths} are not the network's"
                             f" {config.network.decision}")
        params = generalist.with_correction(params, shipped.correction)  # its games, as shipped
    state = _init(instance, jax.random.key(seed), actions, params, config=config)
    if demonstration is not None and not np.isfinite(float(state.best_return)):
        raise ValueError("the demonstration does not replay to a won game: give a won game's"
                         " actions (e.g. heuristic.play_plan(...).action)")
    return jax.tree.map(jnp.copy, state)


@functools.partial(jax.jit, static_argnames=("config",))
def _init(instance: Instance, key: jax.Array, demonstration: jax.Array | None, params=None, *,
          config: AgentConfig) -> ExpertState:
    key, k_params = jax.random.split(key)
    if params is None:
        params = network(config).init(k_params, jnp.zeros((1, NUM_DECISION_FEATURES), jnp.float32))
    start = game.init(instance, backup=True)
    best, best_return = start, jnp.float32(-jnp.inf)
    if demonstration is not None:
        # (a single game of a large program keeps checkpoints; the search's games do not)
        best = rollout(instance, key, selfplay.follow(demonstration), backup=True).replace(checkpoints=start.checkpoints)
        best_return = won_returns(best)
    learner = learner_lib.init(params, config)
    best, best_return = best.replace(instance=None), best_return.astype(jnp.float32)
    return ExpertState(learner=learner, best=best, best_return=best_return, center=best,
                       center_return=best_return, evaluated=jnp.bool_(False), evaluated_at=jnp.int32(-EVALUATION_GAP),
                       evaluation_return=jnp.float32(-jnp.inf), origin=best, origin_return=best_return,
                       began=jnp.int32(0), rose=jnp.int32(0), key=jax.random.key_data(key), moves=jnp.int32(0))


def temperature(config: AgentConfig, progress: jax.Array) -> jax.Array:
    """The action temperature at `progress` (0 to 1) of the run: geometric from init to final."""
    p = jnp.clip(progress, 0.0, 1.0)
    return (config.init_temperature * (config.final_temperature / config.init_temperature) ** p
            ).astype(jnp.float32)


def loss(params, batch: dict[str, jax.Array], *, config: AgentConfig):
    """Cross-entropy of the deviations the elite games made, among the moves a deviation could
    make (the legal ones other than the best game's), minus an entropy bonus."""
    logits, _ = network(config).apply(params, batch["features"])
    allowed = batch["allowed"]
    log_p = jax.nn.log_softmax(jnp.where(allowed, logits, -1e9))
    chosen = jnp.take_along_axis(log_p, batch["action"][:, None], axis=1)[:, 0]
    entropy = -jnp.sum(jnp.where(allowed, jnp.exp(log_p) * log_p, 0.0), axis=-1)
    weight = batch["weight"]
    count = jnp.maximum(jnp.sum(weight), 1.0)
    policy_loss = -jnp.sum(weight * chosen) / count
    entropy_bonus = jnp.sum(weight * entropy) / count
    total = policy_loss - config.entropy_weight * entropy_bonus
    zero = jnp.float32(0)
    return total, {"loss": total, "policy_loss": policy_loss, "value_loss": zero,
                   "reward_loss": zero, "value_target": zero}


def learn(learner: learner_lib.Learner, data: dict[str, jax.Array], key: jax.Array, *,
          config: AgentConfig) -> tuple[learner_lib.Learner, dict[str, jax.Array]]:
    """`learner_steps` AdamW steps on minibatches of the recorded deviations (flattened)."""
    flat = jax.tree.map(lambda x: x.reshape((-1,) + x.shape[2:]), data)
    weights = flat["weight"]
    optimizer = learner_lib.optimizer(config)

    def one(learner, key):
        pick = jax.random.choice(key, weights.shape[0], (config.batch_size,),
                                 p=weights / jnp.maximum(jnp.sum(weights), 1e-9))
        batch = jax.tree.map(lambda x: x[pick], flat)
        (_, metrics), grads = jax.value_and_grad(loss, has_aux=True)(learner.params, batch,
                                                                     config=config)
        updates, opt_state = optimizer.update(grads, learner.opt_state, learner.params)
        params = optax.apply_updates(learner.params, updates)
        metrics["grad_norm"] = optax.tree.norm(grads)
        return learner.replace(params=params, opt_state=opt_state, steps=learner.steps + 1), metrics

    learner, metrics = jax.lax.scan(one, learner, jax.random.split(key, config.learner_steps))
    return learner, jax.tree.map(jnp.mean, metrics)


def _keys(state: ExpertState):
    """(next state key, search key, learning key) of the generation."""
    return jax.random.split(jax.random.wrap_key_data(state.key), 3)


def begin(state: ExpertState, instance: Instance, *, config: AgentConfig) -> Games:
    """A generation's games before their first move."""
    evaluate = ~state.evaluated & (state.moves - state.evaluated_at >= EVALUATION_GAP)
    return start_search(_keys(state)[1], instance, state.center_return, config=config, evaluate=evaluate)


def play(state: ExpertState, games: Games, instance: Instance, progress: jax.Array, moves, *,
         config: AgentConfig) -> Games:
    """At most `moves` more moves of the generation's games."""
    return play_search(state.learner.params, games, instance, policy_lib.context(instance), state.center,
                       temperature(config, progress), moves, config=config)


def end(state: ExpertState, games: Games, instance: Instance, progress: jax.Array, *,
        config: AgentConfig) -> tuple[ExpertState, dict[str, jax.Array]]:
    """Once every game ended: keep the best game, learn from the elites."""
    key, _, k_learn = _keys(state)
    temp = temperature(config, progress)
    finals, record = games.states, games.record
    # (a game stopped because it could only replay the center has the center's return; it is
    # never picked, the center is kept)
    copies = duplicate(games, instance)
    returns = jnp.where(copies, state.center_return, won_returns(finals))
    pick = lambda take, i, old: jax.tree.map(  # noqa: E731
        lambda new, o: jnp.where(take, new[i], o), finals, old)
    # The center moves to a search game at least as good (ties included: the search walks
    # plateaus instead of stalling on them); the best is the best of all games.
    # Before the first center, the evaluation game (the greedy policy, at first) may seed it: on
    # a large program the first generation's sampled games are far below it.
    evaluation = ~games.explore[0]  # (game 0 was the network's argmax game)
    explored = jnp.where(jnp.isfinite(state.center_return) & evaluation, returns.at[0].set(-jnp.inf), returns)
    top = jnp.argmax(explored)
    moved = explored[top] >= state.center_return
    center = pick(moved & ~copies[top], top, state.center)
    center_return = jnp.maximum(explored[top], state.center_return)
    first = jnp.argmax(returns)
    improved = returns[first] > state.best_return
    best = pick(improved, first, state.best)
    best_return = jnp.maximum(returns[first], state.best_return)

    # The targets: the deviations of the games that beat the best game so far (the improving
    # moves), among the `elites` best of the generation.
    _, elite = jax.lax.top_k(returns, config.elites)
    chosen = jnp.zeros(config.games, bool).at[elite].set(True) & (returns > state.center_return)
    slots = jnp.arange(DEVIATIONS)[None, :] < record["count"][:, None]
    data = dict(features=record["features"], allowed=record["allowed"], action=record["action"],
                weight=(chosen[:, None] & slots).astype(jnp.float32))
    learner, metrics = state.learner, {name: jnp.float32(0) for name in METRICS}
    learned = jnp.bool_(config.learning_rate > 0) & jnp.any(data["weight"] > 0)
    if config.learning_rate > 0:
        learner, metrics = jax.lax.cond(
            learned, lambda lr: learn(lr, data, k_learn, config=config),
            lambda lr: (lr, {name: jnp.float32(0) for name in METRICS}), learner)
    won = jnp.isfinite(returns)
    metrics = {**metrics, "learned": learned, "finished": jnp.int32(config.games),
               "lost": jnp.sum(~won, dtype=jnp.int32),
               "return_sum": jnp.sum(jnp.where(won, returns, 0.0)),
               "best_return": best_return, "temperature": temp,
               "moves": jnp.sum(finals.moves)}
    evaluation_return = jnp.where(evaluation, returns[0], state.evaluation_return)
    metrics["evaluation_return"] = evaluation_return
    new = ExpertState(learner=learner, best=best, best_return=best_return, center=center,
                      center_return=center_return, evaluated=(state.evaluated | evaluation) & ~learned,
                      evaluated_at=jnp.where(evaluation, state.moves, state.evaluated_at),
                      evaluation_return=evaluation_return, origin=state.origin, origin_return=state.origin_return,
                      began=state.began, rose=jnp.where(center_return > state.center_return, state.moves + 1, state.rose),
                      key=jax.random.key_data(key), moves=state.moves + 1)
    new, restarted = _restart(new, config=config)
    return new, {**metrics, "restarted": restarted}


def _restart(state: ExpertState, *, config: AgentConfig) -> tuple[ExpertState, jax.Array]:
    """The state with its search started again from its first center where it has stalled: its
    center has not risen for `config.restart_stall` times the generations its climb took (at
    least RESTART_MIN_GENERATIONS). Seeds of one program reach optima far apart (muzero-prod's
    two seeds on resnet50_train@tpu_v4i: +4.38% and +2.62%); a search that has stopped climbing
    spends its time better on another climb. The best game, the network and the key go on.
    Returns (the state, whether it started again)."""
    first = ~jnp.isfinite(state.origin_return) & jnp.isfinite(state.center_return)
    # (conditionals over the fields they change, not selects over whole game states every generation)
    origin, origin_return = jax.lax.cond(first, lambda: (state.center, state.center_return),
                                         lambda: (state.origin, state.origin_return))
    climb = jnp.ceil(config.restart_stall * (state.rose - state.began)).astype(jnp.int32)
    again = ((config.restart_stall > 0) & jnp.isfinite(origin_return)
             & (state.moves - state.rose >= jnp.maximum(climb, RESTART_MIN_GENERATIONS)))
    # (only what a restart changes: the learner, the best game and the origin stay as they are)
    center, center_return, began, rose = jax.lax.cond(
        again, lambda: (origin, origin_return, state.moves, state.moves),
        lambda: (state.center, state.center_return, state.began, state.rose))
    return state.replace(origin=origin, origin_return=origin_return, center=center, center_return=center_return,
                         began=began, rose=rose), again




def generation(state: ExpertState, instance: Instance, progress: jax.Array, *,
               config: AgentConfig) -> tuple[ExpertState, dict[str, jax.Array]]:
    """One generation: search, keep the best game, learn from the elites."""
    games = play(state, begin(state, instance, config=config), instance, progress, jnp.int32(2 ** 31 - 1),
                 config=config)
    return end(state, games, instance, progress, config=config)


@functools.partial(jax.jit, static_argnames=("config",), donate_argnums=0)
def run_chunk(state: ExpertState, instance: Instance, progress: jax.Array, *, config: AgentConfig
              ) -> tuple[ExpertState, dict[str, jax.Array]]:
    """`generations_per_chunk` generations in one `lax.scan` (metrics get a leading axis)."""
    step = functools.partial(generation, instance=instance, progress=progress, config=config)
    return jax.lax.scan(lambda s, _: step(s), state, None, length=config.generations_per_chunk)


_begin = jax.jit(begin, static_argnames=("config",))
_play = jax.jit(play, static_argnames=("config",))
_end = jax.jit(end, static_argnames=("config",))


def chunk_on_clock(state: ExpertState, instance: Instance, progress: jax.Array, clock, *, config: AgentConfig):
    """One generation, its games played in slices with `clock` looked at between them
    (`base.in_slices`: a generation of a large program takes minutes): (state, metrics with a
    leading axis of 1), or (state, None) when the budget ends inside it (it does not count).

    Once a best game exists, the slices end with the budget itself, not with its 10% grace (which
    is for a first game): the solvers follow the agent with the placer, whose share of the run is
    what comes after this budget (a generation that ran into the grace left the placer no time,
    and the solver wrote its raw game; docs/decisions.md, Budgets)."""
    games = _begin(state, instance, config=config)
    games, whole = in_slices(clock, lambda g, moves: _play(state, g, instance, progress, moves, config=config),
                             games, lambda g: ended(g, instance),
                             deadline_s=clock.budget_s if np.isfinite(float(state.best_return)) else None)
    if not whole:
        return state, None
    state, metrics = _end(state, games, instance, progress, config=config)
    return state, jax.tree.map(lambda x: x[None], metrics)


def best_game(state: ExpertState, instance: Instance) -> game.State | None:
    """The best finished game so far (with its instance), or None before the first one."""
    if not np.isfinite(float(state.best_return)):
        return None
    return jax.device_get(state.best).replace(instance=instance)


def algorithm(instance: Instance, config: AgentConfig, *, seed: int = 0,
              demonstration: np.ndarray | None = None, devices=None) -> Algorithm:
    """The expert mode as the loop's `Algorithm` (one device: `devices` is not used)."""
    del devices
    return Algorithm(
        state=init(instance, config, seed=seed, demonstration=demonstration),
        # one generation a chunk (large programs): on the clock; several: one scan
        chunk=lambda state, progress, clock: (
            chunk_on_clock(state, instance, progress, clock, config=config) if config.generations_per_chunk == 1
            else run_chunk(state, instance, progress, config=config)),
        per_chunk=config.generations_per_chunk,
        best_return=lambda state: float(state.best_return),
        best_game=lambda state: best_game(state, instance))
