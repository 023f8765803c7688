"""The Jumanji-style environment wrapper and the jitted rollouts."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmmap import Environment, Rules, generate, make_instance, play, rollout
from jaxmmap.env import FIRST, LAST, MID
from jaxmmap.play import greedy_policy, random_policy

RULES = Rules(columns=64)
PAD = dict(num_buffers=256, num_steps=64, num_tables=64)


def test_reset_step_timesteps_and_returns():
    problem = generate(2, num_instructions=25, inplace_prob=0.3)
    env = Environment(make_instance(problem, RULES, **PAD), backup=True)
    state, ts = jax.jit(env.reset)(jax.random.key(0))
    assert int(ts.step_type) == FIRST and ts.observation.action_mask.shape == (3,)
    step = jax.jit(env.step)
    total, types = 0.0, []
    while not bool(state.done):
        action = jnp.argmax(ts.observation.action_mask * jnp.array([1, 2, 3]))  # prefer Drop
        state, ts = step(state, action)
        total += float(ts.reward)
        types.append(int(ts.step_type))
    assert types[-1] == LAST and set(types[:-1]) <= {MID} and float(ts.discount) == 0.0
    np.testing.assert_allclose(total, float(state.board.ret), rtol=1e-5, atol=1e-6)
    assert np.all(np.asarray(state.board.action)[: problem.num_buffers] >= 0)


def test_vmapped_rollouts_over_keys():
    problem = generate(6, num_instructions=30, inplace_prob=0.3, memory_fraction=0.3)
    instance = make_instance(problem, RULES, **PAD)
    keys = jax.random.split(jax.random.key(1), 16)
    states = jax.jit(jax.vmap(lambda k: rollout(instance, k, random_policy, backup=True)))(keys)
    assert np.all(np.asarray(states.done)) and not np.any(np.asarray(states.lost))
    returns = np.asarray(states.board.ret)
    assert returns.shape == (16,) and np.unique(returns).size > 1  # the games differ


def test_greedy_is_deterministic_and_not_worse_than_all_drop():
    problem = generate(8, num_instructions=30)
    instance = make_instance(problem, RULES, **PAD)
    run = jax.jit(lambda k: rollout(instance, k, greedy_policy, backup=True))
    a, b = run(jax.random.key(0)), run(jax.random.key(1))
    assert float(a.board.ret) == float(b.board.ret) > 0.0


def test_play_returns_validated_best_solution():
    problem = generate(9, num_instructions=30, inplace_prob=0.2)
    solution, summary = play(problem, "random", games=32, rules=RULES)
    assert summary["best_return"] >= summary["mean_return"]
    assert solution.ret == pytest.approx(summary["best_return"], rel=1e-5)
    assert solution.solver == "random"
