"""A small learned policy for the MMapGame: decision features computed inside `jit`, and a
linear (optionally tiny-MLP) scorer of the three actions. Shared by the ES and EGRL solvers.

Everything here is pure `jnp` on a `game.State`: no host work, so the policy runs at every move
of thousands of `vmap`ped games. Work that depends only on the instance (the static features of
every buffer, the reward scale) is done once per rollout batch by `context(instance)`; a move
then gathers one row of it and adds the few dynamic features of the current decision.

Features (all float32, roughly O(1); `s` is the instance's reward scale, see `Context`):

Buffer features `x`: float32[NUM_BUFFER_FEATURES], of the current buffer i with target t:

  ====  ===============  =======================================================================
  0     bias             1.
  1     width            width / usable columns, clipped to [0, 2] (> 1: cannot be placed).
  2     value            signed log: sign(v) * log1p(|v| / s) with v the static value of the
                         buffer: its benefit, or for a buffer in a latency table the gain of
                         placing it alone, gain[table, bit].
  3     demand_now       D / (D + A): the copy demand D against A, the supply still left in the
                         buffer's copy window (inputs: steps [copy_from, t-1], outputs:
                         [t+1, live_end]); in [0, 1), 0 when D = 0.
  4     demand_start     the same with the initial supply (how contested the window is at all).
  5     target           t / T (T: the real number of steps).
  6     live_range       (live_end - live_start + 1) / T.
  7     is_output        0/1.
  8     in_table         0/1: the buffer has a latency table (dynamic benefit).
  9     aliased          0/1: its alias group has more than one member.
  10    group_placed     0/1: its alias group already has a placed member (offset forced).
  11    group_dropped    0/1: its alias group was dropped (only Drop is legal).
  12    progress         cursor / N (N: the real number of buffers).
  13    occupancy        used grid columns at step t / usable columns, in [0, 1].
  14    later_uses       u / (u + 2) with u the number of later buffers of the same tensor
                         (what a placement can be reused by, with NoCopy).
  15    next_use_gap     (target of the next buffer of the tensor - t) / T; 1 if none.
  16    step_load        L / (1 + L), L: the widths of all buffers targeting step t / columns.
  17    supply_left      A / A0: the share of the copy window's initial supply still left (1 if
                         the window had none).
  18    pinnable         0/1: NoCopy of this output would pin its tensor (docs/game.md): the rules
                         allow it, the tensor is not live-out and no restore forbade it.
  19    pinned           0/1: the buffer's tensor is pinned, so NoCopy is its only action.
  20    later_value      signed log of the summed static values of the later buffers of the
                         tensor: what keeping it in fast memory (a pin, or Copy then NoCopy)
                         can still earn.
  ====  ===============  =======================================================================

Action features `y`: float32[3, NUM_ACTION_FEATURES], one row per action (Copy, NoCopy, Drop):

  ====  ===============  =======================================================================
  0     legal            0/1 (`game.legal_action_mask`).
  1     reward           sign(r) * log1p(|r| / s), r the immediate reward (`game.action_rewards`).
  2     alloc_steps      log1p(steps of the new allocation) / log1p(T); 0 for none.
  3     copy_steps       log1p(steps of the copy interval) / log1p(T); 0 for no copy.
  4     space_time       width / columns * alloc_steps (the grid area it takes, log-scaled).
  5     top              (offset + width) / columns: how high in memory it lands; 0 for none.
  ====  ===============  =======================================================================

The feature vector is `phi = concat(x, y.ravel())`, float32[NUM_FEATURES]. The policy scores
the actions with `phi @ w + b` (+ an MLP of phi when `hidden > 0`) and masks illegal actions
with -1e9. `init_params(greedy=True)` sets the weights so that the score is the reward feature
of Copy and NoCopy and 0 for Drop, plus tiny biases that break ties Copy > NoCopy > Drop: the
argmax policy then plays exactly like `play.greedy_policy` (the transform of the reward is
monotone and maps 0 to 0), which is a strong start for search.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct

from jaxmmap import game
from jaxmmap.instance import Instance

BUFFER_FEATURES = ("bias", "width", "value", "demand_now", "demand_start", "target", "live_range",
                   "is_output", "in_table", "aliased", "group_placed", "group_dropped",
                   "progress", "occupancy", "later_uses", "next_use_gap", "step_load",
                   "supply_left", "pinnable", "pinned", "later_value")
ACTION_FEATURES = ("legal", "reward", "alloc_steps", "copy_steps", "space_time", "top")
NUM_BUFFER_FEATURES = len(BUFFER_FEATURES)
NUM_ACTION_FEATURES = len(ACTION_FEATURES)
NUM_FEATURES = NUM_BUFFER_FEATURES + 3 * NUM_ACTION_FEATURES
NUM_STATIC = 16  # columns of Context.static (see `context`)
MASKED = -1e9  # the score of an illegal action

Params = dict  # {"w": f32[F, 3], "b": f32[3]} (+ {"w1": f32[F, H], "b1": f32[H], "w2": f32[H, 3]})


@struct.dataclass
class Context:
    """What the features need from the instance, computed once per batch of games (in jit).

    Attributes:
      static: float32[N, NUM_STATIC] per buffer: width, value, demand_start, target, live_range,
        is_output, in_table, aliased, later_uses, next_use_gap, step_load (the features of the
        same names), then the raw demand (ticks), the initial supply of the copy window (ticks),
        the buffer's target (as float), whether it may pin (`Instance.pinnable`) and
        later_value.
      scale: float32[] the reward scale s: the mean |static value| over the real buffers (1 if
        they are all 0). Rewards enter the features as sign(r) * log1p(|r| / s).
      value_after: float32[N] the summed |static value| of the buffers after each one, over the
        instance's total (what is still to be won; the agent's features read it, ES does not).
    """

    static: jax.Array
    scale: jax.Array
    value_after: jax.Array


def _signed_log(v, scale):
    return jnp.sign(v) * jnp.log1p(jnp.abs(v) / scale)


def _window_supply(inst: Instance, prefix: jax.Array) -> jax.Array:
    """int32[N]: supply between the prefix sums over each buffer's copy window."""
    t = inst.target
    last = prefix.shape[0] - 1
    inputs = prefix[t] - prefix[jnp.clip(inst.copy_from, 0, last)]
    outputs = prefix[jnp.clip(inst.live_end + 1, 0, last)] - prefix[jnp.clip(t + 1, 0, last)]
    return jnp.maximum(jnp.where(inst.is_output, outputs, inputs), 0)


def context(inst: Instance) -> Context:
    """The per-instance part of the features (O(N log N), pure jnp)."""
    n = inst.width.shape[0]
    valid = inst.valid
    cols = jnp.maximum(inst.columns, 1).astype(jnp.float32)
    steps = jnp.maximum(inst.num_steps, 1).astype(jnp.float32)
    table = jnp.maximum(inst.table, 0)
    single = inst.gain[table, jnp.left_shift(jnp.int32(1), inst.table_bit)]
    value = jnp.where(inst.table >= 0, single, inst.benefit)
    total = jnp.sum(jnp.where(valid, jnp.abs(value), 0.0))
    mean = total / jnp.maximum(jnp.sum(valid), 1)
    scale = jnp.where(mean > 0, mean, 1.0).astype(jnp.float32)

    prefix = jnp.concatenate([jnp.zeros(1, jnp.int32), jnp.cumsum(inst.supply)])
    avail0 = _window_supply(inst, prefix).astype(jnp.float32)
    demand = inst.demand.astype(jnp.float32)
    demand_start = demand / jnp.maximum(demand + avail0, 1.0)

    group_size = jnp.zeros(n, jnp.int32).at[inst.group].add(valid.astype(jnp.int32))
    # Later buffers of the same tensor: sort by (tensor, index); a buffer's successor in that
    # order is the next use of its tensor, and the last position of its tensor's run counts them.
    order = jnp.argsort(inst.tensor, stable=True)  # by tensor, then buffer index
    sorted_tensor = inst.tensor[order]
    pos = jnp.arange(n)
    last = jax.ops.segment_max(pos, sorted_tensor, num_segments=n)
    later = jnp.zeros(n, jnp.int32).at[order].set(last[sorted_tensor] - pos).astype(jnp.float32)
    cumulative = jnp.cumsum(jnp.where(valid, value, 0.0)[order])
    later_value = jnp.zeros(n, jnp.float32).at[order].set(cumulative[last[sorted_tensor]] - cumulative)
    succ = jnp.concatenate([order[1:], order[-1:]])
    has_next = jnp.concatenate([sorted_tensor[1:] == sorted_tensor[:-1], jnp.zeros(1, bool)])
    gap_sorted = jnp.where(has_next, (inst.target[succ] - inst.target[order]) / steps, 1.0)
    gap = jnp.zeros(n, jnp.float32).at[order].set(gap_sorted)

    load = jnp.zeros(inst.supply.shape[0], jnp.float32).at[inst.target].add(
        jnp.where(valid, inst.width, 0).astype(jnp.float32)) / cols
    step_load = load[inst.target]

    static = jnp.stack([
        jnp.minimum(inst.width / cols, 2.0),
        _signed_log(value, scale),
        demand_start,
        inst.target / steps,
        (inst.live_end - inst.live_start + 1) / steps,
        inst.is_output.astype(jnp.float32),
        (inst.table >= 0).astype(jnp.float32),
        (group_size[inst.group] > 1).astype(jnp.float32),
        later / (later + 2.0),
        gap,
        step_load / (1.0 + step_load),
        demand,
        avail0,
        inst.target.astype(jnp.float32),
        inst.pinnable.astype(jnp.float32),
        _signed_log(later_value, scale),
    ], axis=1).astype(jnp.float32)
    magnitude = jnp.where(valid, jnp.abs(value), 0.0)
    value_after = (total - jnp.cumsum(magnitude)) / jnp.maximum(total, 1e-9)
    return Context(static=jnp.where(valid[:, None], static, 0.0), scale=scale,
                   value_after=value_after.astype(jnp.float32))


def features(state: game.State, ctx: Context) -> jax.Array:
    """float32[NUM_FEATURES]: phi = concat(x, y.ravel()) of the current decision (see module)."""
    inst, board, cand = state.instance, state.board, state.candidates
    n = inst.width.shape[0]
    i = jnp.minimum(board.cursor, n - 1)
    row = ctx.static[i]
    (width, value, demand_start, target, live_range, is_output, in_table, aliased, later_uses,
     next_gap, step_load, demand, avail0, _, pinnable, later_value) = (row[k] for k in range(NUM_STATIC))
    cols = jnp.maximum(inst.columns, 1).astype(jnp.float32)
    log_steps = jnp.log1p(jnp.maximum(inst.num_steps, 1).astype(jnp.float32))
    t = inst.target[i]

    # Supply still left in the copy window (the same closed form as the instance part).
    prefix = board.supply_prefix
    last = prefix.shape[0] - 1
    avail = jnp.where(
        inst.is_output[i],
        prefix[jnp.clip(inst.live_end[i] + 1, 0, last)] - prefix[jnp.clip(t + 1, 0, last)],
        prefix[t] - prefix[jnp.clip(inst.copy_from[i], 0, last)])
    avail = jnp.maximum(avail, 0).astype(jnp.float32)
    demand_now = demand / jnp.maximum(demand + avail, 1.0)
    supply_left = jnp.where(avail0 > 0, avail / jnp.maximum(avail0, 1.0), 1.0)

    status, pin = game.buffer_status(state)
    used = jnp.sum(jax.lax.population_count(game.grid_row(board, t)).astype(jnp.float32))
    occupancy = jnp.minimum(used / cols, 1.0)
    progress = board.cursor / jnp.maximum(inst.num_buffers, 1).astype(jnp.float32)
    x = jnp.stack([
        jnp.float32(1.0), width, value, demand_now, demand_start, target, live_range, is_output,
        in_table, aliased, (status == game.PLACED).astype(jnp.float32),
        (status == game.DROPPED).astype(jnp.float32), progress, occupancy, later_uses, next_gap,
        step_load, supply_left, pinnable * (pin == game.PIN_FREE), (pin == game.PINNED).astype(jnp.float32),
        later_value])

    legal = game.legal_action_mask(state).astype(jnp.float32)
    reward = _signed_log(game.action_rewards(state), ctx.scale)
    alloc = jnp.where(cand.alloc_start >= 0, cand.alloc_end - cand.alloc_start + 1, 0)
    alloc_steps = jnp.log1p(alloc.astype(jnp.float32)) / log_steps
    copy = jnp.where(cand.copy_start >= 0, cand.copy_end - cand.copy_start + 1, 0)
    copy_steps = jnp.log1p(jnp.maximum(copy, 0).astype(jnp.float32)) / log_steps
    space_time = width * alloc_steps
    top = jnp.where(cand.offset >= 0, (cand.offset + inst.width[i]) / cols, 0.0)
    y = jnp.stack([legal, reward, alloc_steps, copy_steps, space_time, top], axis=1)
    return jnp.concatenate([x, y.reshape(-1)]).astype(jnp.float32)


# ---------------------------------------------------------------------------- the scorer


def init_params(key: jax.Array, *, hidden: int = 0, greedy: bool = True,
                scale: float = 0.0) -> Params:
    """Parameters of the scorer. `greedy=True`: the argmax policy is the greedy policy (see the
    module docstring); `scale` > 0 adds N(0, scale^2) noise to the linear weights. The MLP's
    output layer starts at zero (so it does not disturb the start), its first layer at
    N(0, 1/F)."""
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
    if hidden > 0:
        params["w1"] = jax.random.normal(k2, (NUM_FEATURES, hidden), jnp.float32) / jnp.sqrt(
            jnp.float32(NUM_FEATURES))
        params["b1"] = jnp.zeros(hidden, jnp.float32)
        params["w2"] = jnp.zeros((hidden, 3), jnp.float32)
    return params


def scores(params: Params, phi: jax.Array) -> jax.Array:
    """float32[3]: unmasked action scores of features phi (float32[NUM_FEATURES])."""
    out = phi @ params["w"] + params["b"]
    if "w1" in params:
        out = out + jnp.tanh(phi @ params["w1"] + params["b1"]) @ params["w2"]
    return out


def masked_logits(params: Params, phi: jax.Array) -> jax.Array:
    """float32[3]: scores with illegal actions (phi's legal features) set to MASKED."""
    legal = phi_legal(phi)
    return jnp.where(legal, scores(params, phi), MASKED)


def phi_legal(phi: jax.Array) -> jax.Array:
    """bool[..., 3]: the legal mask stored in features phi (float32[..., NUM_FEATURES])."""
    cols = NUM_BUFFER_FEATURES + NUM_ACTION_FEATURES * jnp.arange(3)
    return phi[..., cols] > 0.5


def make_policy(params: Params, ctx: Context, *, sample: bool = False):
    """A `play.Policy` (key, state) -> int32 action: the argmax of the masked scores, or with
    `sample=True` a draw from their softmax."""

    def policy(key: jax.Array, state: game.State) -> jax.Array:
        logits = masked_logits(params, features(state, ctx))
        if sample:
            return jax.random.categorical(key, logits).astype(jnp.int32)
        return jnp.argmax(logits).astype(jnp.int32)

    return policy
