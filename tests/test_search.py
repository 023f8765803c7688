"""Tree search over the true game with mctx: legal moves only, and the optimum on tiny games."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from builders import RULES, tiny

from jaxmmap import generate, make_instance, validate
from jaxmmap.agent import search as search_module
from jaxmmap.env import game
from jaxmmap.solvers import agents
from jaxmmap.solvers.exhaustive import exhaustive


# (-m slow, 14 s on an empty compilation cache; by default test_mcts_is_valid_and_below_the_game_optimum plays whole
# games with the search, and the Gumbel search runs in test_q_scaled_by_the_instance_does_not_blow_up_value_noise)
@pytest.mark.slow
@pytest.mark.parametrize("gumbel", [False, True])
def test_search_picks_legal_actions_along_whole_games(gumbel):
    problem = generate(5, num_instructions=12, inplace_prob=0.3, memory_fraction=0.2)
    instance = make_instance(problem, RULES)

    @jax.jit
    def run(key):
        def body(carry, key):
            states = carry
            out = search_module.search(None, key, states, instance, num_simulations=8,
                                       gumbel=gumbel)
            legal = jax.vmap(lambda s: game.legal_action_mask(s.replace(instance=instance)))(
                states)
            picked = jnp.take_along_axis(legal, out.action[:, None], axis=1)[:, 0]
            weights_ok = jnp.all(jnp.where(legal, True, out.action_weights == 0), axis=1)
            stepped = jax.vmap(lambda s, a: game.step(s.replace(instance=instance), a))(
                states, out.action)
            done = states.done
            return stepped.replace(instance=None), (picked | done, weights_ok | done, done)

        start = jax.vmap(lambda _: game.init(instance, backup=True).replace(instance=None))(
            jnp.arange(4))
        return jax.lax.scan(body, start, jax.random.split(key, 3 * problem.num_buffers))

    final, (picked, weights_ok, done) = run(jax.random.key(0))
    assert np.all(np.asarray(picked)) and np.all(np.asarray(weights_ok))
    assert np.all(np.asarray(final.done)) and not np.any(np.asarray(final.lost))
    assert np.any(~np.asarray(done))  # it did play


@pytest.mark.parametrize("seed", [0] + [pytest.param(s, marks=pytest.mark.slow) for s in (1, 2, 4)])  # -m slow
def test_mcts_is_valid_and_below_the_game_optimum(seed):
    problem = tiny(seed)
    optimum = exhaustive(problem, 60, 0, rules=RULES).solution.ret
    result = agents.mcts(problem, 60, 0, rules=RULES, games=4, num_simulations=32,
                                max_batches=1)
    assert validate(problem, result.solution).ok
    assert result.info["games"] == 4
    assert result.solution.ret <= optimum + 1e-6
    # Without learning, leaves are worth 0, so the search is short-sighted: measured, 32
    # simulations find the optimum of seeds 0 and 4 but not of 1 and 2 (nor do 128).
    if seed in (0, 4):
        assert result.solution.ret == pytest.approx(optimum, abs=1e-6)


@pytest.mark.slow  # by default the muzero mode searches with its networks in test_training.py
@pytest.mark.parametrize("mode", ["alphazero", "muzero"])
def test_learned_modes_search_with_the_networks_and_pick_legal_actions(mode):
    from jaxmmap.agent import networks as nets
    from jaxmmap.agent import support as support_lib
    from jaxmmap.env.observation import observe

    problem = generate(5, num_instructions=12, inplace_prob=0.3, memory_fraction=0.2)
    instance = make_instance(problem, RULES)
    support = support_lib.support_for(float(np.sum(np.abs(problem.benefit))))
    config = nets.NetworkConfig(grid_channels=(4,), profile_channels=(4,), profile_strides=(4,),
                                feature_width=8, torso=(16,), embedding=16, head=(8,),
                                dynamics=(16,), support_size=support.size)
    networks = nets.make_networks(config)
    # Three positions: after 0, 1 and 2 Drops.
    states = jax.vmap(lambda k: jax.lax.fori_loop(
        0, k, lambda _, s: game.step(s, 2), game.init(instance, backup=True)).replace(
            instance=None))(jnp.arange(3))
    full = jax.vmap(lambda s: s.replace(instance=instance))(states)
    assert len(set(np.asarray(full.board.cursor).tolist())) == 3
    params = networks.init(jax.random.key(0), jax.vmap(observe)(full))

    @jax.jit
    def run(params, states, key):
        if mode == "alphazero":
            return search_module.search(params, key, states, instance, num_simulations=8,
                                        predict=search_module.network_predict(networks, support))
        observation = jax.vmap(observe)(jax.vmap(lambda s: s.replace(instance=instance))(states))
        return search_module.learned_search(params, key, observation, networks, support,
                                            num_simulations=8)

    out = run(params, states, jax.random.key(1))
    legal = np.asarray(jax.vmap(game.legal_action_mask)(full))
    assert out.action.shape == (3,) and out.action_weights.shape == (3, 3)
    assert np.all(legal[np.arange(3), np.asarray(out.action)])
    assert np.all(np.asarray(out.action_weights)[~legal] == 0)
    np.testing.assert_allclose(np.asarray(out.action_weights).sum(axis=1), 1.0, rtol=1e-5)


@pytest.mark.parametrize("gumbel", [False, True])
def test_q_scaled_by_the_instance_does_not_blow_up_value_noise(gumbel):
    """One child is better by 0.001 (noise, for a game whose returns are about 10): mctx's
    default min-max over the children makes it the whole bonus, the instance's scale does not."""
    import mctx

    batch = 64

    def step(params, key, action, embedding):
        out = mctx.RecurrentFnOutput(reward=jnp.where(action == 1, 0.001, 0.0),
                                     discount=jnp.zeros(batch), prior_logits=jnp.zeros((batch, 3)),
                                     value=jnp.zeros(batch))
        return out, embedding

    root = mctx.RootFnOutput(prior_logits=jnp.zeros((batch, 3)), value=jnp.zeros(batch),
                             embedding=jnp.zeros(batch))
    invalid = jnp.zeros((batch, 3), bool)
    common = dict(num_simulations=32, gumbel=gumbel, dirichlet_fraction=0.0,
                  dirichlet_alpha=0.3, temperature=1.0)
    raw = search_module._policy(None, jax.random.key(0), root, step, invalid, **common)
    scaled = search_module._policy(None, jax.random.key(0), root, step, invalid,
                                   value_scale=jnp.float32(10.0), **common)
    share = lambda out: float(np.mean(np.asarray(out.action_weights)[:, 1]))  # noqa: E731
    assert share(raw) > 0.6  # the collapse the scale removes
    assert abs(share(scaled) - 1 / 3) < 0.1
