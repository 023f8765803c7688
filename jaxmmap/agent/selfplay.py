"""Self-play: `games` games of one instance played in parallel (vmap), one move of all of them per
`act`, with the mode's search at every move (Drop-backup on). A finished game is replaced by a
new one at once, and the best finished game so far is kept on the device.

How each mode picks a move (`AgentConfig.mode`):
* muzero: `mctx.muzero_policy` (or Gumbel) with the learned dynamics from the root's embedding;
* alphazero: the same search over the true game, with the network's priors and values;
* mcts: the search over the true game with flat priors and zero leaf values (no learning);
* no_search: a sample of the network's policy at the action temperature, with no search; its
  "policy target" is that policy itself (the learner ignores it and uses policy gradient).
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np

from jaxmmap.agent import replay as replay_lib
from jaxmmap.agent.config import AgentConfig
from jaxmmap.agent.networks import Networks
from jaxmmap.agent.search import learned_search, network_predict, search, uniform
from jaxmmap.agent.support import Support, logits_to_scalar
from jaxmmap.env import game
from jaxmmap.env.instance import Instance
from jaxmmap.env.observation import observe
from jaxmmap.env.rollout import won_returns


@chex.dataclass(frozen=True)
class Actors:
    """The games in progress and the best game so far. G games.

    Attributes:
      states: `game.State` batched [G], without the instance (`instance=None`).
      delay: int32[G] moves each game still waits before its first move (`stagger`).
      best: `game.State` of one finished, won game (no batch axis, `instance=None`): the best so
        far; meaningful once `best_return` is finite.
      best_return: float32[] its return, -inf before the first won game.
    """

    states: game.State
    delay: jax.Array
    best: game.State
    best_return: jax.Array


@chex.dataclass(frozen=True)
class Played:
    """What one move of all games finished. Attributes: finished int32[] games finished,
    lost int32[] of them lost, return_sum float32[] sum of the returns of the won ones."""

    finished: jax.Array
    lost: jax.Array
    return_sum: jax.Array


def init(instance: Instance, config: AgentConfig) -> Actors:
    """New games; with `stagger`, game g waits g * N / G moves before it starts."""
    start = game.init(instance, backup=True).replace(instance=None)
    g = config.games
    states = jax.tree.map(lambda x: jnp.broadcast_to(x, (g,) + x.shape), start)
    span = instance.num_buffers if config.stagger else 0
    delay = (jnp.arange(g) * span // g).astype(jnp.int32)
    return Actors(states=states, delay=delay, best=start, best_return=jnp.float32(-jnp.inf))


def policy(params, key: jax.Array, states: game.State, observation, instance: Instance, *,
           config: AgentConfig, networks: Networks, support: Support, temperature: jax.Array
           ) -> tuple[jax.Array, jax.Array, jax.Array]:
    """The mode's move for a batch of positions: (action int32[G], policy target float32[G, 3],
    root value float32[G])."""
    common = dict(num_simulations=config.num_simulations, gumbel=config.gumbel,
                  discount=config.discount, dirichlet_fraction=config.dirichlet_fraction,
                  dirichlet_alpha=config.dirichlet_alpha, temperature=temperature,
                  value_scale=support.max_scalar_array)
    if config.mode == "muzero":
        out = learned_search(params, key, observation, networks, support, **common)
    elif config.mode in ("alphazero", "mcts"):
        predict = network_predict(networks, support) if config.mode == "alphazero" else uniform
        out = search(params, key, states, instance, predict=predict, observation=observation,
                     **common)
    else:  # no_search
        _, logits, value = networks.initial_inference(params, observation)
        legal = observation.legal | ~jnp.any(observation.legal, axis=-1, keepdims=True)
        logits = jnp.where(legal, logits, -jnp.inf)
        action = jax.random.categorical(key, logits / jnp.maximum(temperature, 1e-6))
        return action.astype(jnp.int32), jax.nn.softmax(logits), logits_to_scalar(value, support)
    return out.action.astype(jnp.int32), out.action_weights, out.search_tree.summary().value


def act(params, key: jax.Array, actors: Actors, instance: Instance, *, config: AgentConfig,
        networks: Networks, support: Support, temperature: jax.Array
        ) -> tuple[Actors, replay_lib.Transition, Played]:
    """One move of every game: returns the new actors, the move of each game (to the replay) and
    what finished."""
    attach = jax.vmap(lambda s: s.replace(instance=instance))
    states = actors.states
    observation = jax.vmap(observe)(attach(states))
    action, target, value = policy(params, key, states, observation, instance, config=config,
                                   networks=networks, support=support, temperature=temperature)
    stepped = jax.vmap(game.step)(attach(states), action).replace(instance=None)
    waiting = actors.delay > 0
    stepped = _where(waiting, states, stepped)
    done = stepped.done & ~waiting

    returns = won_returns(stepped)
    best_game = jnp.argmax(jnp.where(done, returns, -jnp.inf))
    improved = done[best_game] & (returns[best_game] > actors.best_return)
    best = jax.tree.map(lambda new, old: jnp.where(improved, new[best_game], old), stepped,
                        actors.best)
    best_return = jnp.where(improved, returns[best_game], actors.best_return)

    fresh = game.init(instance, backup=True).replace(instance=None)
    states = _where(done, jax.tree.map(lambda x: jnp.broadcast_to(x, (config.games,) + x.shape),
                                       fresh), stepped)
    row = replay_lib.Transition(
        observation=replay_lib.compress(observation), action=action,
        reward=jnp.where(waiting, 0.0, stepped.reward), policy=target,
        value=value.astype(jnp.float32), done=done, valid=~waiting)
    played = Played(finished=jnp.sum(done, dtype=jnp.int32),
                    lost=jnp.sum(done & stepped.lost, dtype=jnp.int32),
                    return_sum=jnp.sum(jnp.where(done & ~stepped.lost, stepped.board.ret, 0.0)))
    actors = Actors(states=states, delay=jnp.maximum(actors.delay - 1, 0), best=best,
                    best_return=best_return)
    return actors, row, played


def padded_actions(instance: Instance, demonstration) -> jax.Array | None:
    """A demonstration (an action per real buffer) as int32[padded N], Drop for the padding;
    None stays None."""
    if demonstration is None:
        return None
    actions = np.full(instance.width.shape[0], game.DROP, np.int32)
    actions[: len(demonstration)] = demonstration
    return jnp.asarray(actions)


def follow(actions: jax.Array):
    """A game policy (`play.Policy`) that plays `actions[buffer]` when legal, else the first
    legal of Drop, NoCopy, Copy (the move that takes the least)."""
    fallback = jnp.array([game.DROP, game.NOCOPY, game.COPY])

    def policy(key, state: game.State) -> jax.Array:
        del key
        legal = game.legal_action_mask(state)
        wanted = actions[jnp.minimum(state.board.cursor, actions.shape[0] - 1)]
        other = fallback[jnp.argmax(legal[fallback])]
        return jnp.where(legal[wanted], wanted, other).astype(jnp.int32)

    return policy


def demonstration(start: game.State, actions: jax.Array, *, rows: int, discount: float
                  ) -> tuple[game.State, replay_lib.Replay]:
    """The game that plays `actions` (int32[N], a move per buffer: a won game's `board.action`)
    from `start` (a new game with its instance), `rows` moves at most: its last state, and a
    one-game replay of `rows` rows holding it.

    Each buffer gets its move when legal, else `follow`'s fallback. A won game's actions replay
    exactly, one move per buffer; other vectors may lose, or restore (Drop-backup) and need more
    moves than `rows` (`train.init` refuses those). Row k is the k-th move: the policy target is
    the move played (one-hot) and the value the exact discounted return from there on, so n-step
    targets read from it are Monte-Carlo returns. Rows after the last move are padding (`valid`
    False). `rows` must exceed the game's moves (N for a won game's actions, plus `horizon` + 1
    so the last moves can be sampled with their unroll).
    """
    policy = follow(actions)

    def move(state, _):
        observation = observe(state)
        action = policy(None, state)
        stepped = game.step(state, action)
        live = ~state.done
        row = replay_lib.Transition(
            observation=replay_lib.compress(observation), action=action,
            reward=jnp.where(live, stepped.reward, 0.0), policy=jax.nn.one_hot(action, 3) * live,
            value=jnp.float32(0), done=stepped.done & live, valid=live)
        return jax.tree.map(lambda new, old: jnp.where(live, new, old), stepped, state), row

    final, data = jax.lax.scan(move, start, None, length=rows)

    def to_go(later, row):  # discounted returns-to-go, from the last row back
        value = row.reward + discount * jnp.where(row.done, 0.0, later)
        return value, jnp.where(row.valid, value, 0.0)

    _, value = jax.lax.scan(to_go, jnp.float32(0), data, reverse=True)
    data = jax.tree.map(lambda x: x[:, None], data.replace(value=value))  # one game: [rows, 1]
    return final, replay_lib.Replay(data=data, head=jnp.int32(0), count=jnp.int32(rows))


def _where(pick: jax.Array, a, b):
    """Per game (leading axis), `a` where `pick` else `b`."""
    return jax.tree.map(
        lambda x, y: jnp.where(pick.reshape(pick.shape + (1,) * (x.ndim - 1)), x, y), a, b)
