"""The ES and EGRL policy: a linear (optionally tiny-MLP) scorer of the three actions on the
decision features of `jaxmmap.env.observation` (the one featurizer).

The policy scores the actions with `phi @ w + b` (+ an MLP of phi when `hidden > 0`), phi =
`observation.features(state, ctx)`, and masks illegal actions with -1e9. `init_params(greedy=True)`
sets the weights so that the score is the reward feature of Copy and NoCopy and 0 for Drop: the
argmax policy then plays exactly like `rollout.greedy_policy` (the transform of the reward is
monotone and maps 0 to 0), which is a strong start for search.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxmmap.env import game
from jaxmmap.env.observation import (
    ACTION_FEATURES,
    NUM_ACTION_FEATURES,
    NUM_BUFFER_FEATURES,
    NUM_FEATURES,
    Context,
    features,
)

MASKED = -1e9  # the score of an illegal action

Params = dict  # {"w": f32[F, 3], "b": f32[3]} (+ {"w1": f32[F, H], "b1": f32[H], "w2": f32[H, 3]})

# ---------------------------------------------------------------------------- the scorer


def init_params(key: jax.Array, *, hidden: int = 0, greedy: bool = True,
                scale: float = 0.0, plan_weight: float | None = None) -> Params:
    """Parameters of the scorer. `greedy=True`: the argmax policy is the greedy policy (see the
    module docstring); `scale` > 0 adds N(0, scale^2) noise to the linear weights. The MLP's
    output layer starts at zero (so it does not disturb the start), its first layer at
    N(0, 1/F). `plan_weight`: the scorer also reads a plan (an action per buffer, `make_policy`'s
    `plan`) and adds `p[a]` (float32[3], all `plan_weight` at the start) to the action `a` the
    plan names for the current buffer."""
    k1, k2 = jax.random.split(key)
    w = scale * jax.random.normal(k1, (NUM_FEATURES, 3), jnp.float32)
    b = jnp.zeros(3, jnp.float32)
    if greedy:
        reward = NUM_BUFFER_FEATURES + ACTION_FEATURES.index("reward")
        for a in (game.COPY, game.NOCOPY):
            w = w.at[reward + a * NUM_ACTION_FEATURES, a].add(1.0)
        # No bias: Copy and NoCopy see the same reward, and argmax takes the first maximum,
        # which is greedy's tie order (Copy, NoCopy, Drop), negative rewards included.
    params = {"w": w, "b": b}
    if plan_weight is not None:
        params["p"] = jnp.full(3, plan_weight, jnp.float32)
    if hidden > 0:
        params["w1"] = jax.random.normal(k2, (NUM_FEATURES, hidden), jnp.float32) / jnp.sqrt(
            jnp.float32(NUM_FEATURES))
        params["b1"] = jnp.zeros(hidden, jnp.float32)
        params["w2"] = jnp.zeros((hidden, 3), jnp.float32)
    return params


def scores(params: Params, phi: jax.Array, planned: jax.Array | None = None) -> jax.Array:
    """float32[3]: unmasked action scores of features phi (float32[NUM_FEATURES]); with a plan
    weight (`params["p"]`), `planned` (int32[], the plan's action for this buffer, -1: none)
    adds it to the action it names."""
    out = phi @ params["w"] + params["b"]
    if "p" in params and planned is not None:
        out = out + params["p"] * jax.nn.one_hot(planned, 3, dtype=out.dtype)
    if "w1" in params:
        out = out + jnp.tanh(phi @ params["w1"] + params["b1"]) @ params["w2"]
    return out


def masked_logits(params: Params, phi: jax.Array, planned: jax.Array | None = None) -> jax.Array:
    """float32[3]: scores with illegal actions (phi's legal features) set to MASKED."""
    legal = phi_legal(phi)
    return jnp.where(legal, scores(params, phi, planned), MASKED)


def phi_legal(phi: jax.Array) -> jax.Array:
    """bool[..., 3]: the legal mask stored in features phi (float32[..., NUM_FEATURES])."""
    cols = NUM_BUFFER_FEATURES + NUM_ACTION_FEATURES * jnp.arange(3)
    return phi[..., cols] > 0.5


def make_policy(params: Params, ctx: Context, *, sample: bool = False, plan: jax.Array | None = None):
    """A `play.Policy` (key, state) -> int32 action: the argmax of the masked scores, or with
    `sample=True` a draw from their softmax. `plan` (int32[N], an action per buffer of the padded
    instance): read by a scorer with a plan weight (`init_params(plan_weight=...)`)."""

    def policy(key: jax.Array, state: game.State) -> jax.Array:
        planned = None if plan is None else plan[state.board.cursor]
        logits = masked_logits(params, features(state, ctx), planned)
        if sample:
            return jax.random.categorical(key, logits).astype(jnp.int32)
        return jnp.argmax(logits).astype(jnp.int32)

    return policy
