"""The on-device replay: ring order, sampling limits, compression and n-step value targets."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmmap.agent import replay
from jaxmmap.env.observation import Observation


def _observation(g, value=0.0):
    return Observation(buffers=jnp.full((g, 2, 3), value), grid=jnp.full((g, 128, 128), value / 10),
                       profile=jnp.ones((g, 32)), supply=jnp.zeros((g, 5)), actions=jnp.zeros((g, 3, 4)),
                       globals=jnp.zeros((g, 4)), legal=jnp.ones((g, 3), bool))


def _row(g, value, valid=True, done=False):
    return replay.Transition(observation=replay.compress(_observation(g, value)),
                             action=jnp.full(g, int(value) % 3, jnp.int32), reward=jnp.full(g, value),
                             policy=jnp.full((g, 3), 1 / 3), value=jnp.full(g, -value),
                             done=jnp.full(g, done), valid=jnp.full(g, valid))


def test_ring_keeps_the_last_rows_in_order_and_windows_read_them():
    ring = replay.init(_row(2, 0.0), rows=5)
    add = jax.jit(replay.add)
    for value in range(1, 8):  # 7 rows into 5: rows 3..7 remain
        ring = add(ring, _row(2, float(value)))
    assert int(ring.count) == 5 and int(ring.head) == 2
    w = replay.window(ring, jnp.int32(0), jnp.int32(1), 5)
    np.testing.assert_array_equal(np.asarray(w.reward), [3, 4, 5, 6, 7])
    np.testing.assert_allclose(np.asarray(w.observation.buffers)[:, 0, 0], [3, 4, 5, 6, 7])
    assert replay.window(ring, jnp.int32(1), jnp.int32(0), 2, False).observation is None


def test_sampling_stays_among_valid_rows_with_a_full_horizon():
    ring = replay.init(_row(4, 0.0), rows=16)
    for value in range(10):
        row = _row(4, float(value))
        row = row.replace(valid=jnp.asarray([True, value >= 3, True, False]))  # a late start
        ring = replay.add(ring, row)
    rows, games = jax.jit(replay.sample, static_argnums=(2, 3))(ring, jax.random.key(0), 4096, 4)
    rows, games = np.asarray(rows), np.asarray(games)
    assert rows.max() == 10 - 4 - 1 and rows.min() == 0  # 10 rows written, 4 more needed
    assert not np.any(games == 3)
    assert not np.any((games == 1) & (rows < 3))
    assert set(games.tolist()) == {0, 1, 2}


def test_compression_is_exact_for_the_profile_and_close_for_the_grid():
    rng = np.random.default_rng(0)
    obs = _observation(3).replace(grid=jnp.asarray(rng.random((3, 128, 128)), jnp.float32),
                                  profile=jnp.asarray(rng.random((3, 64)) < 0.5, jnp.float32))
    small = replay.compress(obs)
    assert small.grid.dtype == jnp.uint8 and small.profile.dtype == jnp.uint8
    back = replay.decompress(small)
    np.testing.assert_array_equal(np.asarray(back.profile), np.asarray(obs.profile))
    assert np.max(np.abs(np.asarray(back.grid) - np.asarray(obs.grid))) <= 0.5 / 255 + 1e-7
    np.testing.assert_array_equal(np.asarray(back.buffers), np.asarray(obs.buffers))


def _reference_values(reward, done, bootstrap, unroll, n, gamma):
    out, alive = [], []
    for k in range(unroll + 1):
        if any(done[:k]):
            out.append(0.0)
            alive.append(False)
            continue
        z, ended = 0.0, False
        for i in range(n):
            z += gamma ** i * reward[k + i]
            if done[k + i]:
                ended = True
                break
        if not ended:
            z += gamma ** n * bootstrap[k + n]
        out.append(z)
        alive.append(True)
    return np.asarray(out), np.asarray(alive)


@pytest.mark.parametrize("done_at", [None, 0, 2, 5, 7])
def test_n_step_values_match_a_plain_loop(done_at):
    unroll, n, gamma = 3, 4, 0.9
    length = unroll + n + 1
    rng = np.random.default_rng(done_at or 0)
    reward = rng.normal(size=length).astype(np.float32)
    bootstrap = rng.normal(size=length).astype(np.float32)
    done = np.zeros(length, bool)
    if done_at is not None:
        done[done_at] = True
    rows = replay.Transition(observation=None, action=jnp.zeros(length, jnp.int32),
                             reward=jnp.asarray(reward), policy=jnp.zeros((length, 3)),
                             value=jnp.zeros(length), done=jnp.asarray(done),
                             valid=jnp.ones(length, bool))
    values, alive = replay.n_step_values(rows, jnp.asarray(bootstrap), unroll=unroll, td_steps=n,
                                         discount=gamma)
    expected, expected_alive = _reference_values(reward, done, bootstrap, unroll, n, gamma)
    np.testing.assert_allclose(np.asarray(values), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(np.asarray(alive), expected_alive)
