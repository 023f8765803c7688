"""Values as the networks predict them: the invertible value transform of MuZero (Appendix F of
the MuZero paper) and categorical supports with two-hot targets."""

from __future__ import annotations

import math

import chex
import jax
import jax.numpy as jnp
from flax import struct

VALUE_TRANSFORM_EPS = 0.001



def value_transform(x: chex.Array, eps: float = VALUE_TRANSFORM_EPS) -> chex.Array:
    """h(x) = sign(x) (sqrt(|x| + 1) - 1) + eps x, computed without cancellation near 0."""
    x = jnp.asarray(x, jnp.float32)
    ax = jnp.abs(x)
    return jnp.sign(x) * (ax / (jnp.sqrt(ax + 1.0) + 1.0)) + eps * x


def inverse_value_transform(y: chex.Array, eps: float = VALUE_TRANSFORM_EPS) -> chex.Array:
    """Exact inverse of `value_transform`.

    h^-1(y) = sign(y) (((sqrt(1 + 4 eps (|y| + 1 + eps)) - 1) / (2 eps))^2 - 1), with the inner
    (sqrt(1 + z) - 1) / (2 eps) rewritten as 2 (|y| + 1 + eps) / (sqrt(1 + z) + 1) to avoid cancellation.
    """
    y = jnp.asarray(y, jnp.float32)
    ay = jnp.abs(y)
    a = ay + 1.0 + eps
    t = 2.0 * a / (jnp.sqrt(1.0 + 4.0 * eps * a) + 1.0)  # = sqrt(|x| + 1)
    return jnp.sign(y) * (t - 1.0) * (t + 1.0)


@struct.dataclass
class Support:
    """A uniform categorical support in *transformed* (h) space.

    min, max: float32[] (or floats), the first and last atom (h-space); size: int (static), the number
    of atoms. Only `size` shapes the networks, so `min` and `max` are data: one compiled training
    step serves instances of every return scale.
    """

    min: float
    max: float
    size: int = struct.field(pytree_node=False)

    @property
    def atoms(self) -> jax.Array:
        """f32[size] atom positions in h-space."""
        return jnp.linspace(self.min, self.max, self.size, dtype=jnp.float32)

    @property
    def step(self) -> float:
        return (self.max - self.min) / (self.size - 1)

    @property
    def max_scalar_array(self) -> jax.Array:
        """`max_scalar` traceable (inside jit): the return scale the search normalises Q by."""
        return inverse_value_transform(self.max)

    @property
    def max_scalar(self) -> float:
        """The largest representable scalar (raw return scale): h^-1(max)."""
        return float(inverse_value_transform(self.max))


def support_for(max_abs_return: float, *, bins_per_unit: float = 1.0, min_size: int = 21,
                max_size: int = 601, margin: float = 1.0) -> Support:
    """A symmetric support covering returns in [-margin * max_abs_return, margin * max_abs_return].

    The bound is h(margin * max_abs_return) (in transformed space); the atom spacing is at most
    1 / bins_per_unit in h-space (MuZero's Atari support uses unit spacing over h in [-300, 300]), with at
    least `min_size` and at most `max_size` atoms. The size is odd so that 0 is an atom.
    `max_abs_return` is e.g. the sum of all benefits of the instance (an upper bound of any return and of
    any single reward, including the negative reward of a lost game).
    """
    if not (max_abs_return > 0 and math.isfinite(max_abs_return)):
        raise ValueError(f"max_abs_return must be positive and finite, got {max_abs_return}")
    bound = float(value_transform(margin * float(max_abs_return)))
    half = max(math.ceil(bound * bins_per_unit), (min_size - 1) // 2)
    half = min(half, (max_size - 1) // 2)
    return Support(min=-bound, max=bound, size=2 * half + 1)


def scalar_to_two_hot(x: chex.Array, support: Support) -> chex.Array:
    """f32[...] scalars -> f32[..., support.size] two-hot probabilities of h(x) (clipped to the support)."""
    y = jnp.clip(value_transform(x), support.min, support.max)
    pos = (y - support.min) / support.step
    low = jnp.clip(jnp.floor(pos), 0, support.size - 2)
    frac = pos - low
    low = low.astype(jnp.int32)
    return (jax.nn.one_hot(low, support.size) * (1.0 - frac)[..., None]
            + jax.nn.one_hot(low + 1, support.size) * frac[..., None])


def probs_to_scalar(probs: chex.Array, support: Support) -> chex.Array:
    """f32[..., size] probabilities -> f32[...] scalar: h^-1 of the expected atom."""
    chex.assert_axis_dimension(probs, -1, support.size)
    return inverse_value_transform(jnp.sum(probs * support.atoms, axis=-1))


def logits_to_scalar(logits: chex.Array, support: Support) -> chex.Array:
    """f32[..., size] logits -> f32[...] scalar: h^-1(E_softmax[atom])."""
    return probs_to_scalar(jax.nn.softmax(logits, axis=-1), support)
