"""MMap-MuZero networks (representation, dynamics, prediction) and categorical value/reward targets.

Architecture (paper Section 4.3.1, Figure 4): the representation encoder embeds each raw feature group
separately (a ResNet over the 128x128 memory-map window, a strided 1-D convolution over the full
resolution memory profile, MLPs over the buffer / supply / action / global features), concatenates the
embeddings and maps them with an MLP to the shared hidden state. Prediction (policy, value), reward and
dynamics are MLPs; policy, value and reward are categorical (paper: "categorical distributions over
actions, values, and rewards").

Everything here is pure: `make_networks(config)` returns `Networks`, whose `init`, `initial_inference`
and `recurrent_inference` take the parameters explicitly, and `root_output` / `make_recurrent_fn` adapt
them to `mctx` (`mctx.RootFnOutput`, `recurrent_fn -> (mctx.RecurrentFnOutput, embedding)`).

Choices the paper does not state (it gives no layer sizes, normalisation or support in Appendix C /
Table 6, which only lists training hyperparameters):

- Hidden-state normalisation: MuZero's per-sample min-max scaling of the embedding to [0, 1]
  (`NetworkConfig.normalize="minmax"`, the default), applied to the output of the representation
  and of the dynamics function; `"layernorm"` is available as an alternative.
- Categorical value and reward: MuZero's invertible transform h(x) = sign(x)(sqrt(|x|+1)-1) + eps x
  (eps = 0.001), then a two-hot projection on a uniform support in *transformed* space. The support
  is symmetric (returns of the MMapGame are >= -(return so far), and a lost game's reward can cancel the
  whole return) and sized from the instance's return scale by `support_for`.
- Residual blocks use LayerNorm (no batch statistics to carry), pre-activation style.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, Literal

import chex
import flax.linen as nn
import jax
import jax.numpy as jnp
import mctx
import numpy as np

from jaxmmap.agent.support import Support, logits_to_scalar
from jaxmmap.env import observation

NUM_ACTIONS = 3

Params = Any


# ----------------------------------------------------------------------------------------------------
# Configuration.
# ----------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class NetworkConfig:
    """Sizes of the MMap-MuZero networks.

    grid_channels: channels of the grid ResNet stages (stem uses the first); each stage downsamples by 2.
    grid_blocks: residual blocks per stage.
    profile_channels: channels of the strided 1-D convolutions over the memory profile (strides
      `profile_strides`); the result is adaptively average-pooled to `profile_bins` positions and also
      globally max-pooled, so any profile length (>= product of strides) uses the same parameters.
    feature_width: width of the MLP embeddings of buffers / supply / actions / globals.
    torso: hidden widths of the MLP from the concatenated features to the embedding.
    embedding: size of the hidden state.
    head: hidden widths of the policy / value / reward MLPs; dynamics: hidden widths of the dynamics MLP.
    support_size: atoms of the value and reward supports (set it from `support_for(...).size`).
    normalize: "minmax" (MuZero's per-sample min-max scaling to [0, 1]) or "layernorm".
    grid: the representation encodes the 128x128 grid window and the profile (the paper's
      ResNet); False: only the feature groups (buffers, supply, actions, globals), about 10x
      cheaper per move on a CPU (`benchmarks/agent_throughput.py`; docs/agent.md, Figures).
    decision: hidden widths of `PolicyValueNet`, the expert mode's network over the decision
      features (`observation.decision_features`).
    """

    grid_channels: tuple[int, ...] = (16, 32, 32)
    grid_blocks: int = 1
    profile_channels: tuple[int, ...] = (16, 32, 32)
    profile_strides: tuple[int, ...] = (4, 4, 2)
    profile_bins: int = 8
    feature_width: int = 64
    torso: tuple[int, ...] = (256,)
    embedding: int = 256
    head: tuple[int, ...] = (128,)
    dynamics: tuple[int, ...] = (256,)
    support_size: int = 61
    normalize: Literal["minmax", "layernorm"] = "minmax"
    grid: bool = True
    decision: tuple[int, ...] = (128, 128)

    @classmethod
    def small(cls) -> NetworkConfig:
        """The agent's default (`AgentConfig().network`): about 96k parameters, sized so that the
        quick start learns within minutes on a 2-core CPU."""
        return cls(grid_channels=(8, 16), grid_blocks=1, profile_channels=(8,), profile_strides=(4,),
                   profile_bins=8, feature_width=32, torso=(128,), embedding=64, head=(64,),
                   dynamics=(128,), support_size=51, grid=False)

    @classmethod
    def paper(cls, support_size: int = 601) -> NetworkConfig:
        """A larger configuration in the spirit of the paper.

        The paper (Section 4.3.1, Figure 4, Appendix C / Table 6) states the architecture (ResNet over a
        128x128 grid, embeddings of the other features, concatenation, MLP; MLP heads; categorical value,
        reward and policy) and the training hyperparameters (batch 512, Adam lr 2e-4, weight decay 1e-4,
        400 simulations, discount 0.9999), but no layer widths, depths, embedding size or support size.
        These follow MuZero's conventions instead: 601-atom support, a deeper/wider ResNet, 512-wide MLPs.
        """
        return cls(grid_channels=(64, 128, 128, 256), grid_blocks=2, profile_channels=(32, 64, 128),
                   profile_strides=(4, 4, 2), profile_bins=16, feature_width=256, torso=(1024, 1024),
                   embedding=512, head=(512, 512), dynamics=(1024, 1024), support_size=support_size)


# ----------------------------------------------------------------------------------------------------
# Modules.
# ----------------------------------------------------------------------------------------------------


def picked(x: jax.Array, axis: int, pick=jnp.argmax) -> jax.Array:
    """`x`'s max (or, with `pick=jnp.argmin`, min) along `axis`, kept as a length-1 axis, read
    back at its index: the same value as `jnp.max`, whose gradient goes to that element. The
    gradient of `jnp.max` instead compares `x` with the max bit for bit and divides by the count of
    equals; where XLA recomputes `x` in the backward pass with other rounding (a fusion compiled
    otherwise: seen on the CPU without LLVM's optimizations, reported on GPUs) the count is 0
    and every gradient of the network is NaN."""
    return jnp.take_along_axis(x, pick(x, axis=axis, keepdims=True), axis=axis)


def normalize_embedding(x: jax.Array, kind: str) -> jax.Array:
    """MuZero's min-max scaling of each hidden state to [0, 1] (eps-guarded)."""
    if kind == "minmax":
        lo, hi = picked(x, -1, jnp.argmin), picked(x, -1)
        return (x - lo) / jnp.where(hi - lo > 1e-5, hi - lo, 1e-5)  # (a select: no equality in its gradient)
    raise ValueError(f"unknown normalization {kind!r}")


class MLP(nn.Module):
    """Dense + ReLU layers (`widths`), then an optional linear output layer of size `out`."""

    widths: Sequence[int]
    out: int | None = None
    layer_norm: bool = True

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        for w in self.widths:
            x = nn.Dense(w)(x)
            if self.layer_norm:
                x = nn.LayerNorm()(x)
            x = nn.relu(x)
        if self.out is not None:
            x = nn.Dense(self.out)(x)
        return x


class Norm(nn.Module):
    """The hidden-state normalization (`minmax` has no parameters; `layernorm` has scale and bias)."""

    kind: str

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        if self.kind == "layernorm":
            return nn.LayerNorm()(x)
        return normalize_embedding(x, self.kind)


class Conv(nn.Module):
    """A convolution with SAME padding over 1 or 2 spatial axes ([B, L, C] or [B, H, W, C]),
    parameters shaped like `nn.Conv`'s (kernel `kernel_size + (C, features)`, bias).

    Why not `nn.Conv`: XLA's CPU backend compiles a convolution (and its gradient) inside a
    `lax.scan` or `lax.cond` to a plain loop nest, about 70x slower than the same convolution
    outside (docs/agent.md, Networks and features), and the training chunk is one scan. On CPU
    this module computes the same convolution as patches times a matrix (a dot, which XLA keeps
    fast everywhere); elsewhere it is `lax.conv_general_dilated`.
    """

    features: int
    kernel_size: Sequence[int]
    strides: Sequence[int] | None = None

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        size = tuple(self.kernel_size)
        strides = tuple(self.strides or (1,) * len(size))
        kernel = self.param("kernel", nn.initializers.lecun_normal(), size + (x.shape[-1], self.features))
        bias = self.param("bias", nn.initializers.zeros, (self.features,))
        if jax.default_backend() != "cpu":
            spatial = "HW"[: len(size)] if len(size) == 2 else "W"
            numbers = (f"N{spatial}C", f"{spatial}IO", f"N{spatial}C")
            return jax.lax.conv_general_dilated(x, kernel, strides, "SAME", dimension_numbers=numbers) + bias
        return _patches(x, size, strides) @ kernel.reshape(-1, self.features) + bias


def _patches(x: jax.Array, size: tuple[int, ...], strides: tuple[int, ...]) -> jax.Array:
    """[B, *spatial, C] -> [B, *out, prod(size) * C]: the SAME-padded windows of a convolution,
    ordered like a flattened (kernel..., C) kernel."""
    pads, outs = [(0, 0)], []
    for n, k, s in zip(x.shape[1:-1], size, strides):
        out = -(-n // s)
        total = max((out - 1) * s + k - n, 0)
        pads.append((total // 2, total - total // 2))
        outs.append(out)
    x = jnp.pad(x, pads + [(0, 0)])
    windows = []
    for offsets in np.ndindex(*size):
        index = tuple(slice(o, o + (m - 1) * s + 1, s) for o, m, s in zip(offsets, outs, strides))
        windows.append(x[(slice(None),) + index])
    return jnp.concatenate(windows, axis=-1)


class ResBlock(nn.Module):
    """Pre-activation residual block: (LN, ReLU, conv3x3) x 2 + skip."""

    channels: int

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        y = Conv(self.channels, (3, 3))(nn.relu(nn.LayerNorm()(x)))
        y = Conv(self.channels, (3, 3))(nn.relu(nn.LayerNorm()(y)))
        return x + y


class GridEncoder(nn.Module):
    """f32[B, H, W] grid -> f32[B, 2 * channels[-1]] (ResNet, global mean + max pooling)."""

    channels: Sequence[int]
    blocks: int

    @nn.compact
    def __call__(self, grid: jax.Array) -> jax.Array:
        x = grid[..., None]
        x = Conv(self.channels[0], (3, 3), strides=(2, 2))(x)  # stem
        for c in self.channels:
            x = Conv(c, (3, 3), strides=(2, 2))(nn.relu(nn.LayerNorm()(x)))  # downsample
            for _ in range(self.blocks):
                x = ResBlock(c)(x)
        x = nn.relu(nn.LayerNorm()(x))
        flat = x.reshape(x.shape[0], -1, x.shape[-1])
        return jnp.concatenate([jnp.mean(x, axis=(1, 2)), picked(flat, 1)[:, 0]], axis=-1)


def adaptive_avg_pool_1d(x: jax.Array, bins: int) -> jax.Array:
    """f32[B, L, C] -> f32[B, bins, C]: mean over the segments [floor(i L / bins), ceil((i+1) L / bins))."""
    length = x.shape[1]
    m = np.zeros((bins, length), np.float32)
    for i in range(bins):
        lo, hi = (i * length) // bins, -((-(i + 1) * length) // bins)
        m[i, lo:hi] = 1.0 / (hi - lo)
    return jnp.einsum("kl,blc->bkc", jnp.asarray(m), x)


class ProfileEncoder(nn.Module):
    """f32[B, C] profile (any C) -> f32[B, (bins + 2) * channels[-1]].

    Strided 1-D convolutions (kernel 2 * stride), then adaptive average pooling to `bins` positions
    (coarse location of the free space) plus global mean and max pooling.
    """

    channels: Sequence[int]
    strides: Sequence[int]
    bins: int

    @nn.compact
    def __call__(self, profile: jax.Array) -> jax.Array:
        x = profile[..., None]
        for c, s in zip(self.channels, self.strides, strict=True):
            x = nn.relu(Conv(c, (2 * s,), strides=(s,))(x))
        pooled = adaptive_avg_pool_1d(x, self.bins).reshape(x.shape[0], -1)
        return jnp.concatenate([pooled, jnp.mean(x, axis=1), picked(x, 1)[:, 0]], axis=-1)


class Representation(nn.Module):
    """Observation (batched) -> f32[B, embedding] normalized hidden state."""

    config: NetworkConfig

    @nn.compact
    def __call__(self, obs: Any) -> jax.Array:
        cfg = self.config
        batch = obs.buffers.shape[0]
        flat = lambda a: jnp.asarray(a, jnp.float32).reshape(batch, -1)
        w = cfg.feature_width
        parts = []
        if cfg.grid:
            parts += [
                GridEncoder(cfg.grid_channels, cfg.grid_blocks, name="grid")(jnp.asarray(obs.grid, jnp.float32)),
                ProfileEncoder(cfg.profile_channels, cfg.profile_strides, cfg.profile_bins, name="profile")(
                    jnp.asarray(obs.profile, jnp.float32))]
        parts += [
            MLP((w,), name="buffers")(flat(obs.buffers)),
            MLP((w,), name="supply")(flat(obs.supply)),
            MLP((w,), name="actions")(flat(obs.actions)),
            MLP((w,), name="globals")(flat(obs.globals)),
        ]
        x = MLP(cfg.torso, cfg.embedding, name="torso")(jnp.concatenate(parts, axis=-1))
        return Norm(cfg.normalize)(x)


class Prediction(nn.Module):
    """f32[B, E] hidden state -> (policy logits f32[B, 3], value logits f32[B, support_size])."""

    config: NetworkConfig

    @nn.compact
    def __call__(self, embedding: jax.Array) -> tuple[jax.Array, jax.Array]:
        cfg = self.config
        policy = MLP(cfg.head, NUM_ACTIONS, name="policy")(embedding)
        value = MLP(cfg.head, cfg.support_size, name="value")(embedding)
        return policy, value


class Dynamics(nn.Module):
    """(f32[B, E] hidden state, int[B] action) -> (next hidden state f32[B, E], reward logits f32[B, S])."""

    config: NetworkConfig

    @nn.compact
    def __call__(self, embedding: jax.Array, action: jax.Array) -> tuple[jax.Array, jax.Array]:
        cfg = self.config
        x = jnp.concatenate([embedding, jax.nn.one_hot(action, NUM_ACTIONS, dtype=embedding.dtype)], axis=-1)
        x = MLP(cfg.dynamics, name="trunk")(x)
        next_embedding = Norm(cfg.normalize)(nn.Dense(cfg.embedding, name="next")(x))
        reward = MLP(cfg.head, cfg.support_size, name="reward")(x)
        return next_embedding, reward


class MuZeroNet(nn.Module):
    """Representation + prediction + dynamics; `__call__` (used by `init`) runs all three."""

    config: NetworkConfig

    def setup(self):
        self.representation = Representation(self.config)
        self.prediction = Prediction(self.config)
        self.dynamics = Dynamics(self.config)

    def initial_inference(self, obs: Any) -> tuple[jax.Array, jax.Array, jax.Array]:
        embedding = self.representation(obs)
        policy, value = self.prediction(embedding)
        return embedding, policy, value

    def recurrent_inference(self, embedding: jax.Array, action: jax.Array
                            ) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
        next_embedding, reward = self.dynamics(embedding, action)
        policy, value = self.prediction(next_embedding)
        return next_embedding, reward, policy, value

    def __call__(self, obs: Any, action: jax.Array):
        embedding, policy, value = self.initial_inference(obs)
        return (embedding, policy, value), self.recurrent_inference(embedding, action)


class PolicyValueNet(nn.Module):
    """The expert mode's network: decision features f32[B, F] (`observation.decision_features`)
    -> (policy logits f32[B, 3], value f32[B]: the return still to come, over the instance's
    reward scale).

    The logits are the greedy policy's scores (`observation.greedy_scores`, read from the
    decision features: the immediate reward of Copy and NoCopy, 0 for Drop) plus a learned
    correction whose last layer starts at zero, so a fresh network samples around the greedy
    policy (a strong start, as for ES) and learning moves it from there.
    """

    widths: Sequence[int]

    @nn.compact
    def __call__(self, phi: jax.Array) -> tuple[jax.Array, jax.Array]:
        greedy = observation.greedy_scores(phi)
        x = MLP(self.widths, name="torso")(phi)
        correction = nn.Dense(NUM_ACTIONS, kernel_init=nn.initializers.zeros, name="policy")(x)
        value = nn.Dense(1, name="value")(x)[..., 0]
        return greedy + correction, value


# ----------------------------------------------------------------------------------------------------
# Pure-function interface and mctx adapters.
# ----------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Networks:
    """Pure functions over explicit parameters.

    init(rng, obs) -> params  (obs batched; any profile length).
    initial_inference(params, obs) -> (embedding f32[B, E], policy_logits f32[B, 3], value_logits f32[B, S]).
    recurrent_inference(params, embedding f32[B, E], action int[B])
      -> (next_embedding f32[B, E], reward_logits f32[B, S], policy_logits f32[B, 3], value_logits f32[B, S]).
    """

    config: NetworkConfig
    init: Callable[[chex.PRNGKey, Any], Params]
    initial_inference: Callable[[Params, Any], tuple[jax.Array, jax.Array, jax.Array]]
    recurrent_inference: Callable[[Params, jax.Array, jax.Array], tuple[jax.Array, jax.Array, jax.Array, jax.Array]]


def make_networks(config: NetworkConfig = NetworkConfig()) -> Networks:
    net = MuZeroNet(config)

    def init(rng: chex.PRNGKey, obs: Any) -> Params:
        batch = obs.buffers.shape[0]
        return net.init(rng, obs, jnp.zeros((batch,), jnp.int32))

    def initial_inference(params: Params, obs: Any):
        return net.apply(params, obs, method=MuZeroNet.initial_inference)

    def recurrent_inference(params: Params, embedding: jax.Array, action: jax.Array):
        return net.apply(params, embedding, action, method=MuZeroNet.recurrent_inference)

    return Networks(config, init, initial_inference, recurrent_inference)


def num_params(params: Params) -> int:
    return sum(int(np.prod(x.shape)) for x in jax.tree_util.tree_leaves(params))


def root_output(networks: Networks, params: Params, obs: Any, support: Support) -> mctx.RootFnOutput:
    """`mctx.RootFnOutput` for a batch of observations (value decoded from the categorical logits)."""
    embedding, policy, value = networks.initial_inference(params, obs)
    return mctx.RootFnOutput(prior_logits=policy, value=logits_to_scalar(value, support), embedding=embedding)


RecurrentFn = Callable[[Params, chex.PRNGKey, jax.Array, jax.Array], tuple[mctx.RecurrentFnOutput, jax.Array]]


def make_recurrent_fn(networks: Networks, support: Support, reward_support: Support | None = None, *,
                      discount: float = 1.0) -> RecurrentFn:
    """The mctx `recurrent_fn(params, rng_key, action, embedding) -> (RecurrentFnOutput, next_embedding)`.

    The discount is `discount` everywhere (the learned model does not predict the game's end). Reward and
    value are decoded from their categorical logits (`reward_support` defaults to `support`).
    """
    reward_support = support if reward_support is None else reward_support

    def recurrent_fn(params: Params, rng_key: chex.PRNGKey, action: jax.Array, embedding: jax.Array):
        del rng_key
        next_embedding, reward, policy, value = networks.recurrent_inference(params, embedding, action)
        out = mctx.RecurrentFnOutput(
            reward=logits_to_scalar(reward, reward_support),
            discount=jnp.full(action.shape, discount, jnp.float32),
            prior_logits=policy,
            value=logits_to_scalar(value, support),
        )
        return out, next_embedding

    return recurrent_fn
