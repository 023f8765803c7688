"""The agent's observation: shapes, ranges, and agreement with the reference game's board."""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmmap import Rules, generate, make_instance
from jaxmmap.env import game
from jaxmmap.env import observation as obs_module
from jaxmmap.env.observation import (
    GLOBAL_FEATURES,
    IMAGE,
    NUM_BUFFER_ROWS,
    OBSERVED_ACTION_FEATURES,
    ROW_FEATURES,
    SUPPLY_WINDOW,
    observe,
)
from jaxmmap.env.reference import ReferenceGame
from jaxmmap.env.rollout import greedy_policy

PAD = dict(num_buffers=256, num_steps=128, num_tables=64)
F = {name: k for k, name in enumerate(ROW_FEATURES)}


def _play(problem, rules, moves, seed):
    """The same random legal moves in the reference and the JAX game; JAX observations after
    each move, beside the reference board."""
    ref = ReferenceGame(problem, rules, backup=True)
    rng = np.random.default_rng(seed)
    actions = []
    for _ in range(moves):
        if ref.done:
            break
        a = int(rng.choice(np.flatnonzero(ref.legal_actions())))
        ref.step(a)
        actions.append(a)
    instance = make_instance(problem, rules, **PAD)

    @jax.jit
    def run(acts):
        state = game.init(instance, backup=True)
        state = jax.lax.fori_loop(0, acts.shape[0], lambda k, s: game.step(s, acts[k]), state)
        return observe(state), state

    return ref, *run(jnp.asarray(actions, jnp.int32))


@pytest.mark.parametrize("seed,columns", [(0, 64), (1, 256), (2, 512)])
def test_shapes_ranges_and_agreement_with_the_reference(seed, columns):
    problem = generate(seed, num_instructions=40, inplace_prob=0.2, memory_fraction=0.3,
                       latency_tables=seed % 2 == 0)
    rules = Rules(columns=columns)
    ref, obs, state = _play(problem, rules, moves=problem.num_buffers // 2, seed=seed)
    words = -(-columns // 32)
    chex.assert_shape(obs.buffers, (NUM_BUFFER_ROWS, len(ROW_FEATURES)))
    chex.assert_shape(obs.grid, (IMAGE, IMAGE))
    chex.assert_shape(obs.profile, (32 * words,))
    chex.assert_shape(obs.supply, (SUPPLY_WINDOW,))
    chex.assert_shape(obs.actions, (3, len(OBSERVED_ACTION_FEATURES)))
    chex.assert_shape(obs.globals, (len(GLOBAL_FEATURES),))
    for x in (obs.buffers, obs.globals):  # relative times and moves / N can pass 1 a little
        assert np.all(np.isfinite(x)) and np.abs(x).max() < 4
    for x in (obs.grid, obs.profile, obs.supply, obs.actions):
        assert np.all(np.isfinite(x)) and np.abs(x).max() <= 1.0 + 1e-6

    i, d = ref.board.cursor, ref.d
    t = int(problem.target_time[i])
    np.testing.assert_array_equal(np.asarray(obs.legal), ref.legal_actions())
    # The current buffer's row.
    row = np.asarray(obs.buffers[0])
    assert row[F["valid"]] == 1 and row[F["same_tensor"]] == 1
    assert row[F["width"]] == pytest.approx(d.width[i] / d.usable_columns)
    assert row[F["is_output"]] == problem.is_output[i]
    # Occupancy at the target time, at full resolution, from the reference's owner grid.
    occupied = ref.board.owner[t] >= 0
    np.testing.assert_array_equal(np.asarray(obs.profile[: d.usable_columns]), occupied)
    assert np.all(np.asarray(obs.profile[d.usable_columns:]) == 1)
    # The image keeps the occupied fraction of its window: min(WINDOW_STEPS, steps) steps
    # around the target, inside the program, a short program stretched over the rows.
    rows = obs_module.WINDOW_STEPS
    span = min(problem.num_steps, rows)
    first = min(max(t - span // 2, 0), max(problem.num_steps - span, 0))
    steps = first + (np.arange(rows) * span) // rows
    assert steps.min() >= 0 and steps.max() < problem.num_steps  # never outside the program
    window = np.zeros((rows, 32 * words), bool)
    window[:, : d.usable_columns] = ref.board.owner[steps] >= 0
    assert float(np.mean(obs.grid)) == pytest.approx(window.mean(), abs=1e-6)
    # The supply window, centred on the target.
    w = np.zeros(SUPPLY_WINDOW)
    for k in range(SUPPLY_WINDOW):
        step = t - SUPPLY_WINDOW // 2 + k
        if 0 <= step < problem.num_steps:
            w[k] = ref.board.supply[step]
    np.testing.assert_allclose(np.asarray(obs.supply), w / max(d.supply.max(), 1), rtol=1e-6)
    # Rows of the next buffers of the same tensor.
    later = [j for j in range(i + 1, problem.num_buffers) if d.tensor[j] == d.tensor[i]]
    same_rows = np.asarray(obs.buffers[1 + obs_module.NEXT_BUFFERS:])
    assert int(same_rows[:, F["valid"]].sum()) == min(len(later), obs_module.SAME_TENSOR)
    assert np.all(same_rows[: len(later), F["same_tensor"]] == 1)
    assert np.all(same_rows[: len(later), F["target_from_now"]] >= 0)


def test_batched_observations_compile_once():
    problem = generate(3, num_instructions=30)
    instance = make_instance(problem, Rules(columns=64), **PAD)
    states = jax.vmap(lambda _: game.init(instance, backup=True))(jnp.arange(4))

    @jax.jit
    @chex.assert_max_traces(n=1)
    def batch(states):
        return jax.vmap(observe)(states)

    first = batch(states)
    batch(states)
    chex.assert_shape(first.buffers, (4, NUM_BUFFER_ROWS, len(ROW_FEATURES)))
    chex.assert_shape(first.grid, (4, IMAGE, IMAGE))
    assert np.all(np.asarray(first.legal)[:, 2])  # Drop is legal at the start
    with pytest.raises(ValueError, match="multiple"):
        observe(jax.tree.map(lambda x: x[0], states), window_steps=100)


def test_decision_features_extend_the_es_features_with_what_is_left_and_the_profiles():
    problem = generate(3, num_instructions=40, memory_fraction=0.3)
    rules = Rules()
    inst = make_instance(problem, rules)
    ctx = obs_module.context(inst)
    state = game.init(inst, backup=True)
    features = jax.jit(obs_module.decision_features)
    es_features = jax.jit(obs_module.features)
    move = jax.jit(lambda s: game.step(s, greedy_policy(None, s)))
    seen = []
    while not bool(state.done):
        phi = np.asarray(features(state, ctx))
        assert phi.shape == (obs_module.NUM_DECISION_FEATURES,) and np.all(np.isfinite(phi))
        np.testing.assert_allclose(phi[: obs_module.NUM_FEATURES], es_features(state, ctx), atol=1e-6)
        extra = dict(zip(obs_module.DECISION_EXTRAS, phi[obs_module.NUM_FEATURES:]))
        seen.append(extra["value_left"])
        assert 0 <= extra["occupancy+0"] <= 1 and 0 <= extra["supply+0"] <= 1
        used = int(np.sum([bin(int(w)).count("1") for w in np.asarray(state.board.grid[
            int(inst.target[int(state.board.cursor)])])]))
        assert extra["occupancy+0"] == pytest.approx(min(used / int(inst.columns), 1.0))
        state = move(state)
    assert seen[0] < 1 and np.all(np.diff(seen) <= 1e-6) and seen[-1] == pytest.approx(0, abs=1e-6)
