"""Tests for jaxmmap.agent.networks (small configs, CPU)."""

import dataclasses

import chex
import jax
import jax.numpy as jnp
import mctx
import numpy as np
import pytest
from flax import struct

from jaxmmap.agent import networks as nets
from jaxmmap.agent import support as support_lib

SMALL = nets.NetworkConfig(grid_channels=(4, 8), grid_blocks=1, profile_channels=(4, 8, 8), feature_width=16,
                           torso=(32,), embedding=32, head=(16,), dynamics=(32,), support_size=21)


@struct.dataclass
class FakeObservation:
    """Stand-in for jaxmmap.env.observation.Observation (same fields)."""

    buffers: jax.Array  # f32[B, 10, 16]
    grid: jax.Array  # f32[B, 128, 128]
    profile: jax.Array  # f32[B, C]
    supply: jax.Array  # f32[B, 65]
    actions: jax.Array  # f32[B, 3, 4]
    globals: jax.Array  # f32[B, 4]
    legal: jax.Array  # bool[B, 3]


def make_obs(seed, batch=2, columns=256, legal=None):
    rng = np.random.default_rng(seed)
    if legal is None:
        legal = np.ones((batch, 3), bool)
    f32 = lambda a: jnp.asarray(a, jnp.float32)
    return FakeObservation(
        buffers=f32(rng.normal(size=(batch, 10, 16))),
        grid=f32(rng.random((batch, 128, 128)) < 0.3),
        profile=f32(rng.random((batch, columns)) < 0.5),
        supply=f32(rng.random((batch, 65))),
        actions=f32(rng.random((batch, 3, 4))),
        globals=f32(rng.random((batch, 4))),
        legal=jnp.asarray(legal),
    )


def init_key():
    # The rbg PRNG compiles the parameter initialisation much faster than threefry on CPU.
    return jax.random.key(0, impl="unsafe_rbg")


@pytest.fixture(scope="module")
def setup():
    networks = nets.make_networks(SMALL)
    params = jax.jit(networks.init)(init_key(), make_obs(1))
    return networks, params


def test_shapes_two_profile_lengths_same_params(setup):
    networks, params = setup
    ii = jax.jit(networks.initial_inference)
    ri = jax.jit(networks.recurrent_inference)
    for columns in (256, 1024):
        emb, policy, value = ii(params, make_obs(columns, columns=columns))
        chex.assert_shape(emb, (2, SMALL.embedding))
        chex.assert_shape(policy, (2, 3))
        chex.assert_shape(value, (2, SMALL.support_size))
        chex.assert_tree_all_finite((emb, policy, value))
        # min-max normalized hidden state
        assert float(emb.min()) >= 0.0 and float(emb.max()) <= 1.0 + 1e-6
        nxt, reward, policy2, value2 = ri(params, emb, jnp.array([0, 2]))
        chex.assert_shape(nxt, (2, SMALL.embedding))
        chex.assert_shape([reward, value2], (2, SMALL.support_size))
        chex.assert_shape(policy2, (2, 3))
        chex.assert_tree_all_finite((nxt, reward, policy2, value2))


def test_value_transform_inverse():
    x = jnp.concatenate([jnp.linspace(-1e4, 1e4, 2001), jnp.linspace(-2.0, 2.0, 401), jnp.array([0.0, 1e-6, -1e-6])])
    y = support_lib.value_transform(x)
    np.testing.assert_allclose(support_lib.inverse_value_transform(y), x, rtol=1e-5, atol=1e-5)
    z = jnp.linspace(-100.0, 100.0, 1001)
    np.testing.assert_allclose(support_lib.value_transform(support_lib.inverse_value_transform(z)), z, rtol=1e-5, atol=1e-5)
    # h(x) = sign(x)(sqrt(|x|+1)-1) + eps x, reference in float64
    xs = np.linspace(-50, 50, 101)
    ref = np.sign(xs) * (np.sqrt(np.abs(xs) + 1) - 1) + 0.001 * xs
    np.testing.assert_allclose(support_lib.value_transform(xs), ref, rtol=1e-5, atol=1e-6)


def test_two_hot_round_trip_and_clipping():
    support = support_lib.support_for(100.0)
    assert support.size % 2 == 1 and support.size >= 21
    np.testing.assert_allclose(support.max_scalar, 100.0, rtol=1e-5)
    edge = support.max_scalar
    x = jnp.concatenate([jnp.linspace(-100.0, 100.0, 4001), jnp.array([0.0, edge, -edge, 1e-3, -1e-3])])
    two_hot = jax.jit(support_lib.scalar_to_two_hot, static_argnums=1)(x, support)
    chex.assert_shape(two_hot, (x.shape[0], support.size))
    np.testing.assert_allclose(two_hot.sum(-1), 1.0, atol=1e-6)
    assert int((two_hot > 0).sum(-1).max()) <= 2
    back = support_lib.probs_to_scalar(two_hot, support)
    np.testing.assert_allclose(back, x, rtol=1e-5, atol=1e-4)
    # logits route (log of the two-hot; -inf atoms get zero probability)
    np.testing.assert_allclose(support_lib.logits_to_scalar(jnp.log(two_hot), support), x, rtol=1e-5, atol=1e-4)
    # outside the support: clipped to the edges
    out = support_lib.probs_to_scalar(support_lib.scalar_to_two_hot(jnp.array([1e4, -1e4]), support), support)
    np.testing.assert_allclose(out, [edge, -edge], rtol=1e-5)
    # small-return instance: min_size atoms, still exact
    small = support_lib.support_for(0.5)
    assert small.size == 21
    xs = jnp.linspace(-0.5, 0.5, 101)
    np.testing.assert_allclose(support_lib.probs_to_scalar(support_lib.scalar_to_two_hot(xs, small), small), xs, atol=1e-4)
    # large-return instance: capped at max_size
    assert support_lib.support_for(1e9).size == 601


def test_gradients_reach_every_parameter(setup):
    networks, params = setup
    support = support_lib.Support(-3.0, 3.0, SMALL.support_size)
    obs = make_obs(3, columns=512)

    def loss(p):
        emb, policy, value = networks.initial_inference(p, obs)
        nxt, reward, policy2, value2 = networks.recurrent_inference(p, emb, jnp.array([1, 2]))
        target = support_lib.scalar_to_two_hot(jnp.array([0.7, -1.3]), support)
        ce = lambda logits: -jnp.sum(target * jax.nn.log_softmax(logits), -1).mean()
        pol = lambda logits: -jax.nn.log_softmax(logits)[:, 0].mean()
        return ce(value) + ce(value2) + ce(reward) + pol(policy) + pol(policy2) + jnp.mean(nxt ** 2)

    grads = jax.jit(jax.grad(loss))(params)
    flat = jax.tree_util.tree_flatten_with_path(grads)[0]
    assert len(flat) > 20
    zero = [jax.tree_util.keystr(path) for path, g in flat if not bool(jnp.any(g != 0))]
    assert not zero, f"zero gradients for {zero}"
    chex.assert_tree_all_finite(grads)


def test_mctx_muzero_policy_respects_invalid_actions(setup):
    networks, params = setup
    support = support_lib.Support(-3.0, 3.0, SMALL.support_size)
    recurrent_fn = nets.make_recurrent_fn(networks, support)
    legal = jnp.array([[True, False, True], [False, False, True]])
    obs = make_obs(4, legal=legal)

    @jax.jit
    def search(params, obs, key):
        root = nets.root_output(networks, params, obs, support)
        return mctx.muzero_policy(params, key, root, recurrent_fn, num_simulations=4,
                                  invalid_actions=~obs.legal)

    for seed in range(3):
        out = search(params, obs, jax.random.PRNGKey(seed))
        chex.assert_shape(out.action, (2,))
        chex.assert_shape(out.action_weights, (2, 3))
        assert bool(jnp.all(jnp.take_along_axis(legal, out.action[:, None], 1)))
        np.testing.assert_allclose(jnp.where(legal, 0.0, out.action_weights), 0.0)
        assert int(out.action[1]) == 2


def test_initial_inference_compiles_once(setup):
    networks, params = setup

    @jax.jit
    @chex.assert_max_traces(n=1)
    def ii(params, obs):
        return networks.initial_inference(params, obs)

    for seed in range(3):
        ii(params, make_obs(seed))


def test_configs_and_parameter_counts():
    obs = make_obs(0, batch=1)
    default = nets.make_networks()
    shapes = jax.eval_shape(default.init, init_key(), obs)
    assert nets.num_params(shapes) > 0
    paper = nets.NetworkConfig.paper()
    assert paper.support_size == 601 and paper.embedding > nets.NetworkConfig().embedding
    cfg = dataclasses.replace(SMALL, normalize="layernorm")
    n = nets.make_networks(cfg)
    emb, _, _ = jax.eval_shape(lambda k, o: n.initial_inference(n.init(k, o), o), init_key(), obs)
    chex.assert_shape(emb, (1, SMALL.embedding))


@pytest.mark.parametrize("shape,kernel,strides", [((2, 17, 13, 3), (3, 3), (2, 2)), ((2, 16, 16, 3), (3, 3), (1, 1)),
                                                  ((2, 50, 1), (8,), (4,)), ((2, 33, 2), (4,), (2,))])
def test_conv_as_patches_matches_flax_conv(shape, kernel, strides):
    import flax.linen as nn

    x = jax.random.normal(jax.random.key(0), shape)
    params = nn.Conv(5, kernel, strides=strides).init(jax.random.key(1), x)
    params = jax.tree.map(lambda a: a + 0.1, params)  # a non-zero bias too
    ours = nets.Conv(5, kernel, strides).apply(params, x)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(nn.Conv(5, kernel, strides=strides).apply(params, x)),
                               atol=2e-6)
