"""Longer checks, deselected by default: run with `pytest -m slow` (and `-m gpu` on a GPU)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmmap import Rules, generate, make_instance, rollout
from jaxmmap.env import game
from jaxmmap.env.backup import restores_together
from jaxmmap.env.reference import ReferenceGame
from jaxmmap.env.rollout import random_policy


def _replay(instance, actions, backup):
    def move(state, a):
        return game.step(state, a), (game.legal_action_mask(state), state.reward)
    return jax.jit(lambda acts: jax.lax.scan(move, game.init(instance, backup=backup), acts))(actions)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6))
def test_jax_equals_reference_on_larger_instances(seed):
    problem = generate(seed, num_instructions=400, inplace_prob=0.2, loop_prob=0.05,
                       memory_fraction=0.3, latency_tables=seed % 2 == 0)
    rules = Rules(columns=256, nocopy_offset="lowest" if seed % 3 == 0 else "same")
    backup = seed % 2 == 1
    ref = ReferenceGame(problem, rules, backup=backup)
    rng = np.random.default_rng(seed)
    actions, masks = [], []
    while not ref.done:
        mask = ref.legal_actions()
        w = mask * np.array([0.5, 0.4, 0.1])
        actions.append(int(rng.choice(3, p=w / w.sum())))
        masks.append(mask)
        ref.step(actions[-1])
    final, (got_masks, _) = _replay(make_instance(problem, rules), jnp.asarray(actions, jnp.int32), backup)
    np.testing.assert_array_equal(np.asarray(got_masks), np.array(masks))
    n = problem.num_buffers
    np.testing.assert_array_equal(np.asarray(final.board.action)[:n], ref.board.action)
    np.testing.assert_array_equal(np.asarray(final.board.offset)[:n], ref.board.offset)
    np.testing.assert_array_equal(np.asarray(game.remaining_supply(final.board))[: problem.num_steps],
                                  ref.board.supply)
    assert float(final.board.ret) == pytest.approx(ref.board.ret, rel=1e-4, abs=1e-4)


@pytest.mark.gpu
@pytest.mark.skipif(not any(d.platform == "gpu" for d in jax.devices()), reason="no GPU")
def test_gpu_rollouts_equal_cpu_rollouts():
    """The GPU's batched games (restores together, `backup.together`) are the CPU's (one game at
    a time)."""
    problem = generate(1, num_instructions=100, inplace_prob=0.2)
    instance = make_instance(problem, Rules())
    keys = jax.random.split(jax.random.key(0), 64)
    run = jax.vmap(lambda k: rollout(instance, k, random_policy, backup=True))
    on_gpu = jax.jit(run)(keys)
    with jax.default_device(jax.devices("cpu")[0]), restores_together(False):
        on_cpu = jax.jit(run)(jax.device_put(keys, jax.devices("cpu")[0]))
    assert int(np.sum(np.asarray(on_cpu.restores))) > 0
    np.testing.assert_array_equal(np.asarray(on_gpu.board.action), np.asarray(on_cpu.board.action))
    np.testing.assert_allclose(np.asarray(on_gpu.board.ret), np.asarray(on_cpu.board.ret), rtol=1e-5)
