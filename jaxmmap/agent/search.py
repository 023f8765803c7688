"""Monte Carlo tree search over the true game with `mctx` (the paper's "MCTS" ablation, and the
search of the `alphazero` mode once a network gives priors and values).

The tree's embedding is the game itself: a batch of `game.State`s without their `Instance`
(which every node shares, so it is kept out of the tree and re-attached in `recurrent_fn`). A
simulation steps the real, jitted game; illegal actions get prior logits of -inf at every node
(the true mask), and a finished game has discount 0, so the search never plays an illegal move
and values stop at the end of the game.

`predict(params, observation) -> (policy_logits[B, 3], value[B])` supplies priors and leaf
values; `uniform` (flat priors, value 0: returns are then the rewards summed along the path, no
learning at all) is the "MCTS without learning" of the paper's ablation.

`network_predict(networks, support)` makes that `predict` from the learned networks (the
`alphazero` mode: true dynamics, learned priors and values), and `learned_search` is the
`muzero` mode: the learned dynamics from the root's embedding, the true legal mask at the root
only (inside the tree the learned policy must have learned it).

`play_searched(instance, key, ...)` plays whole games with search at every move (`lax.while_loop`,
`vmap` over games), and `mcts` is a solver on that (`jaxmmap solve --solver mcts`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import jax
import jax.numpy as jnp
import mctx

from jaxmmap.agent.networks import make_recurrent_fn, root_output
from jaxmmap.agent.support import logits_to_scalar
from jaxmmap.env import game
from jaxmmap.env.instance import Instance
from jaxmmap.env.observation import Observation, observe

Predict = Callable[[object, Observation], tuple[jax.Array, jax.Array]]


def uniform(params, observation: Observation) -> tuple[jax.Array, jax.Array]:
    """Flat priors and a value of 0 (no learned model)."""
    del params
    batch = observation.legal.shape[0]
    return jnp.zeros((batch, 3), jnp.float32), jnp.zeros((batch,), jnp.float32)


def network_predict(networks, support) -> Predict:
    """`predict` from `jaxmmap.agent.networks`: policy logits and the decoded value."""
    def predict(params, observation: Observation) -> tuple[jax.Array, jax.Array]:
        _, policy, value = networks.initial_inference(params, observation)
        return policy, logits_to_scalar(value, support)

    return predict


def learned_search(params, key: jax.Array, observation: Observation, networks, support, *,
                   num_simulations: int = 16, gumbel: bool = False, discount: float = 1.0,
                   dirichlet_fraction: float = 0.25, dirichlet_alpha: float = 0.3,
                   temperature: float = 1.0, value_scale: jax.Array | None = None
                   ) -> mctx.PolicyOutput:
    """The `muzero` mode: one search per observation (batched) with the learned model
    (`networks.py`); the observation's legal mask applies at the root only."""
    start = root_output(networks, params, observation, support)
    invalid = ~observation.legal
    invalid = invalid & ~jnp.all(invalid, axis=-1, keepdims=True)
    start = start.replace(prior_logits=_masked(start.prior_logits, ~invalid))
    return _policy(params, key, start, make_recurrent_fn(networks, support, discount=discount),
                   invalid, num_simulations=num_simulations, gumbel=gumbel,
                   dirichlet_fraction=dirichlet_fraction, dirichlet_alpha=dirichlet_alpha,
                   temperature=temperature, value_scale=value_scale)


def _masked(logits: jax.Array, legal: jax.Array) -> jax.Array:
    return jnp.where(legal, logits, -jnp.inf)


def root(params, states: game.State, instance: Instance, predict: Predict = uniform, *,
         observation: Observation | None = None) -> mctx.RootFnOutput:
    """The root of a search over a batch of states (`states.instance` is ignored); pass their
    `observation` if it is already computed."""
    states = states.replace(instance=None)
    if observation is None:
        observation = jax.vmap(observe)(jax.vmap(lambda s: s.replace(instance=instance))(states))
    logits, value = predict(params, observation)
    return mctx.RootFnOutput(prior_logits=_masked(logits, observation.legal), value=value,
                             embedding=states)


def recurrent_fn(instance: Instance, predict: Predict = uniform, *, discount: float = 1.0):
    """An mctx `recurrent_fn` that steps the true game of `instance`."""

    def fn(params, key, action, states):
        del key
        full = jax.vmap(lambda s, a: game.step(s.replace(instance=instance), a))(states, action)
        observation = jax.vmap(observe)(full)
        logits, value = predict(params, observation)
        done = full.done
        out = mctx.RecurrentFnOutput(
            reward=full.reward,
            discount=jnp.where(done, 0.0, discount).astype(jnp.float32),
            prior_logits=_masked(logits, observation.legal | done[:, None]),
            value=jnp.where(done, 0.0, value))
        return out, full.replace(instance=None)

    return fn


def search(params, key: jax.Array, states: game.State, instance: Instance, *,
           predict: Predict = uniform, num_simulations: int = 16, gumbel: bool = False,
           discount: float = 1.0, dirichlet_fraction: float = 0.25, dirichlet_alpha: float = 0.3,
           temperature: float = 1.0, observation: Observation | None = None,
           value_scale: jax.Array | None = None) -> mctx.PolicyOutput:
    """One search from each of a batch of states; `action` is legal for every unfinished game."""
    start = root(params, states, instance, predict, observation=observation)
    full = jax.vmap(lambda s: s.replace(instance=instance))(start.embedding)
    invalid = ~jax.vmap(game.legal_action_mask)(full)
    invalid = invalid & ~jnp.all(invalid, axis=-1, keepdims=True)  # finished games: anything
    return _policy(params, key, start, recurrent_fn(instance, predict, discount=discount), invalid,
                   num_simulations=num_simulations, gumbel=gumbel,
                   dirichlet_fraction=dirichlet_fraction, dirichlet_alpha=dirichlet_alpha,
                   temperature=temperature, value_scale=value_scale)


def _policy(params, key, start: mctx.RootFnOutput, step_fn, invalid: jax.Array, *,
            num_simulations: int, gumbel: bool, dirichlet_fraction: float,
            dirichlet_alpha: float, temperature: float, value_scale: jax.Array | None = None
            ) -> mctx.PolicyOutput:
    """mctx's MuZero policy (root Dirichlet noise, visit-count targets) or Gumbel MuZero.

    `value_scale` (the instance's reward scale) normalises Q to [-1, 1] by that fixed scale
    instead of mctx's default min-max over the node's children: with 3 actions the min-max turns
    value noise of 0.001 into the whole exploration bonus, and every self-play game collapsed
    onto one (docs/agent.md, The search modes). None keeps mctx's default."""
    if value_scale is None:
        q_puct, q_gumbel = mctx.qtransform_by_parent_and_siblings, mctx.qtransform_completed_by_mix_value
    else:
        q_puct = functools.partial(mctx.qtransform_by_min_max, min_value=-value_scale,
                                   max_value=value_scale)
        q_gumbel = functools.partial(mctx.qtransform_completed_by_mix_value, rescale_values=False,
                                     value_scale=0.1 / value_scale)
    if gumbel:
        return mctx.gumbel_muzero_policy(params, key, start, step_fn, num_simulations,
                                         invalid_actions=invalid, qtransform=q_gumbel)
    return mctx.muzero_policy(params, key, start, step_fn, num_simulations,
                              invalid_actions=invalid, dirichlet_fraction=dirichlet_fraction,
                              dirichlet_alpha=dirichlet_alpha, temperature=temperature,
                              qtransform=q_puct)


def start_searched(instance: Instance, games: int) -> game.State:
    """The first states of `games` searched games (Drop-backup on), without their instance (as
    `advance_searched` carries them)."""
    return jax.vmap(lambda _: game.init(instance, backup=True).replace(instance=None))(jnp.arange(games))


def advance_searched(params, key: jax.Array, states: game.State, instance: Instance, moves, *,
                     predict: Predict = uniform, num_simulations: int = 16, gumbel: bool = False,
                     sample: bool = False, dirichlet_fraction: float = 0.25,
                     max_moves: int | None = None) -> tuple[game.State, jax.Array]:
    """At most `moves` (int32[]: one compile for any count) more moves of a batch of games with
    a search at every move: the most visited action, or one sampled from the search's action
    weights with `sample`. `states` are without their instance (`start_searched`). Returns the
    states and the key to go on with, so that long games can be played in slices on a clock."""
    n = instance.width.shape[0]
    limit = game.move_limit(n) if max_moves is None else max_moves

    def cond(carry):
        states, _, played = carry
        return jnp.any(~states.done & (states.moves < limit)) & (played < moves)

    def body(carry):
        states, key, played = carry
        key, k_search, k_pick = jax.random.split(key, 3)
        out = search(params, k_search, states, instance, predict=predict,
                     num_simulations=num_simulations, gumbel=gumbel,
                     dirichlet_fraction=dirichlet_fraction)
        if sample:
            logits = jnp.log(jnp.maximum(out.action_weights, 1e-12))
            action = jax.random.categorical(k_pick, logits).astype(jnp.int32)
        else:
            action = jnp.argmax(out.action_weights, axis=-1).astype(jnp.int32)
        stepped = jax.vmap(lambda s, a: game.step(s.replace(instance=instance), a))(
            states, action)
        return stepped.replace(instance=None), key, played + 1

    states, key, _ = jax.lax.while_loop(cond, body, (states, key, jnp.int32(0)))
    return states, key


# One compile per instance shape and configuration, shared by every call of `mcts`.
advance_searched_jit = jax.jit(advance_searched, static_argnames=("predict", "num_simulations", "gumbel", "sample",
                                                                  "dirichlet_fraction", "max_moves"))
