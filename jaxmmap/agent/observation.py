"""What the MMap-MuZero agent sees: features of a `game.State`, built inside `jit`.

Section 4.3.1 of the paper, in fixed shapes (one shape per padded instance, except `profile`,
whose length is the instance's grid width):

* buffer features (Table 1) of the current buffer, the next `NEXT_BUFFERS` buffers and the next
  `SAME_TENSOR` buffers of the same tensor, with two for the pin (NoCopy of an output, see
  docs/game.md): whether the buffer may still pin its tensor, and whether its tensor is pinned
  (then NoCopy is its only action);
* the memory grid in a window of `window_steps` steps around the current target time, kept
  inside the program (a shorter program is stretched over the rows, never padded),
  downsampled to 128 x 128 (the occupied fraction per pixel);
* the full-resolution occupancy of the grid's columns at the target time;
* a window of the remaining copy supply W centred on the target time;
* per action its legality, allocation start and end, offset, and immediate reward (not in the
  paper's list: the one-step reward, which the greedy policy follows, is cheap to compute here
  and spares the network from re-deriving latency-table deltas);
* global features: the move number, the buffer index, the buffer's position in its alias group
  and how many of the group are still undecided.

Every feature is normalized to about [-1, 1] by sizes of the instance (steps, columns, the
largest supply and benefit), so that one network can be trained across instances.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct

from jaxmmap import game
from jaxmmap.solvers import policy as policy_lib

NEXT_BUFFERS = 5
SAME_TENSOR = 4
NUM_BUFFER_ROWS = 1 + NEXT_BUFFERS + SAME_TENSOR
BUFFER_FEATURES = (
    "valid", "width", "is_output", "target_from_now", "target", "same_tensor", "aliased",
    "same_alias_group", "live_start_from_now", "live_end_from_now", "live_length", "demand",
    "benefit", "in_latency_table", "group_status", "tensor_in_fast_memory", "pinnable", "pinned")
ACTION_FEATURES = ("legal", "start_from_target", "end_from_target", "offset", "reward")
GLOBAL_FEATURES = ("move", "buffer", "position_in_group", "group_left")
IMAGE = 128
WINDOW_STEPS = 256
SUPPLY_WINDOW = 65
PROFILE_POINTS = 9  # steps sampled around the target time for the decision features' profiles
DECISION_EXTRAS = ("value_left", "moves") + tuple(
    f"{name}{k - PROFILE_POINTS // 2:+d}" for name in ("occupancy", "supply")
    for k in range(PROFILE_POINTS))
NUM_DECISION_FEATURES = policy_lib.NUM_FEATURES + len(DECISION_EXTRAS)


def decision_features(state: game.State, ctx: policy_lib.Context) -> jax.Array:
    """float32[NUM_DECISION_FEATURES]: what the default (feature) network sees of one game.

    The ES policy's features (`jaxmmap.solvers.policy`, Table 1 of the paper for the current
    buffer and its three actions; the one featurizer of the package), then:
    * value_left: the summed |static value| of the buffers after this one, over the instance's
      total (how much benefit is still to be won);
    * moves: moves played / N (Drop-backup restores make it exceed the buffer index);
    * occupancy and supply profiles: at PROFILE_POINTS steps around the target time t
      (t + k * stride, k = -4..4, stride = max(1, steps // 16)), the occupied share of the
      usable columns and the remaining copy supply over the largest supply of a step; steps
      outside the program read as full and without supply.
    Every feature is normalised by sizes of its own instance, so one network can serve many.
    `ctx` is `policy.context(instance)`, computed once per batch of games.
    """
    inst, board = state.instance, state.board
    n = inst.width.shape[0]
    t_pad = inst.supply.shape[0]
    i = jnp.minimum(board.cursor, n - 1)
    stride = jnp.maximum(inst.num_steps // 16, 1)
    at = inst.target[i] + (jnp.arange(PROFILE_POINTS) - PROFILE_POINTS // 2) * stride
    inside = (at >= 0) & (at < inst.num_steps)
    rows = jnp.clip(at, 0, t_pad - 1)
    grid_rows = jax.vmap(lambda r: game.grid_row(board, r))(rows)
    used = jnp.sum(jax.lax.population_count(grid_rows), axis=-1).astype(jnp.float32)
    occupancy = jnp.where(inside, jnp.minimum(used / jnp.maximum(inst.columns, 1), 1.0), 1.0)
    left = (board.supply_prefix[rows + 1] - board.supply_prefix[rows]).astype(jnp.float32)
    supply = jnp.where(inside, left / jnp.maximum(jnp.max(inst.supply), 1), 0.0)
    extras = jnp.concatenate([
        jnp.stack([ctx.value_after[i],
                   state.moves / jnp.maximum(inst.num_buffers, 1).astype(jnp.float32)]),
        occupancy, supply])
    return jnp.concatenate([policy_lib.features(state, ctx), extras]).astype(jnp.float32)


@struct.dataclass
class Observation:
    """The agent's input for one game (add a leading batch axis for many).

    Attributes:
      buffers: float32[NUM_BUFFER_ROWS, len(BUFFER_FEATURES)]: rows for the current buffer, the
        next NEXT_BUFFERS buffers, then the next SAME_TENSOR buffers of its tensor; rows of
        absent buffers are zero (their `valid` feature too).
      grid: float32[128, 128]: the occupied fraction of each pixel of the memory grid, rows =
        min(`window_steps`, program steps) steps around the target time, kept inside the
        program (earliest at the top; a shorter program is stretched over the rows), columns =
        the grid's columns.
      profile: float32[C]: occupancy of each grid column at the target time, C = 32 * grid words
        (columns past the usable ones count as occupied).
      supply: float32[SUPPLY_WINDOW]: the remaining supply W around the target time, over the
        largest supply of a step (0 outside the program).
      actions: float32[3, len(ACTION_FEATURES)]: per action (Copy, NoCopy, Drop) its legality,
        allocation start and end relative to the target (over the number of steps; 0 if none),
        offset over the usable columns (-1 if none) and immediate reward over the largest
        benefit (0 if illegal).
      globals: float32[len(GLOBAL_FEATURES)]: moves / N, buffer index / N, the buffer's position
        in its alias group / group size, undecided members of the group / group size.
      legal: bool[3] the legal actions.
    """

    buffers: jax.Array
    grid: jax.Array
    profile: jax.Array
    supply: jax.Array
    actions: jax.Array
    globals: jax.Array
    legal: jax.Array


def observe(state: game.State, *, window_steps: int = WINDOW_STEPS,
            supply_window: int = SUPPLY_WINDOW) -> Observation:
    """The observation of one game (no batch axis; `vmap` it over games). `window_steps` must
    be a multiple of 128."""
    if window_steps % IMAGE:
        raise ValueError(f"window_steps must be a multiple of {IMAGE}, got {window_steps}")
    inst, board = state.instance, state.board
    n_pad = inst.width.shape[0]
    idx = jnp.arange(n_pad)
    cur = jnp.minimum(board.cursor, n_pad - 1)
    t_cur = inst.target[cur]
    steps = jnp.maximum(inst.num_steps, 1).astype(jnp.float32)
    n = jnp.maximum(inst.num_buffers, 1).astype(jnp.float32)
    columns = jnp.maximum(inst.columns, 1).astype(jnp.float32)
    valid = inst.valid & (idx < inst.num_buffers)

    # Which buffers: the current one, the next few, the next ones of the same tensor.
    following = cur + 1 + jnp.arange(NEXT_BUFFERS)
    same = valid & (inst.tensor == inst.tensor[cur]) & (idx > cur)
    (same_next,) = jnp.nonzero(same, size=SAME_TENSOR, fill_value=n_pad)
    rows = jnp.concatenate([cur[None], following, same_next])
    present = (rows < n_pad) & valid[jnp.minimum(rows, n_pad - 1)] & ~state.done
    rows = jnp.minimum(rows, n_pad - 1)

    group_size = jnp.zeros(n_pad, jnp.float32).at[inst.group].add(valid.astype(jnp.float32))
    benefit_scale = jnp.maximum(jnp.max(jnp.abs(inst.benefit)), jnp.max(jnp.abs(inst.gain)))
    benefit_scale = jnp.maximum(benefit_scale, 1e-9)
    solo_gain = inst.gain[jnp.maximum(inst.table, 0), jnp.left_shift(1, inst.table_bit)]
    benefit = jnp.where(inst.table >= 0, solo_gain, inst.benefit) / benefit_scale
    mean_supply = jnp.maximum(jnp.sum(inst.supply) / steps, 1.0)
    demand = jnp.log1p(inst.demand / mean_supply) / jnp.log1p(steps)
    status = game.group_status(state)[inst.group]
    pin = game.tensor_pin(state)[inst.tensor]
    per_buffer = jnp.stack([
        jnp.ones(n_pad),
        inst.width / columns,
        inst.is_output,
        (inst.target - t_cur) / steps,
        inst.target / steps,
        inst.tensor == inst.tensor[cur],
        group_size[inst.group] > 1,
        inst.group == inst.group[cur],
        (inst.live_start - t_cur) / steps,
        (inst.live_end - t_cur) / steps,
        (inst.live_end - inst.live_start + 1) / steps,
        demand,
        benefit,
        inst.table >= 0,
        jnp.where(status == game.PLACED, 1.0, jnp.where(status == game.DROPPED, -1.0, 0.0)),
        game.tensor_end(state)[inst.tensor] >= t_cur,
        inst.pinnable & (pin == game.PIN_FREE),
        pin == game.PINNED,
    ], axis=-1).astype(jnp.float32)
    buffers = jnp.where(present[:, None], per_buffer[rows], 0.0)

    # The memory grid around the target: occupied fraction per 32-column word, then pixels.
    # The window spans min(window_steps, program steps) steps kept inside the program: a short
    # program is stretched over the picture's rows (each step repeated), never padded.
    words = inst.grid_words
    span = jnp.clip(inst.num_steps, 1, window_steps)
    first = jnp.clip(t_cur - span // 2, 0, jnp.maximum(inst.num_steps - span, 0))
    window = first + (jnp.arange(window_steps) * span) // window_steps
    rows_of_grid = jax.vmap(lambda r: game.grid_row(board, r))(window)  # (window < T here)
    fraction = jax.lax.population_count(rows_of_grid).astype(jnp.float32) / 32.0
    fraction = jnp.where((window < inst.num_steps)[:, None], fraction, 1.0)
    fraction = fraction.reshape(IMAGE, window_steps // IMAGE, words).mean(axis=1)
    if words >= IMAGE:
        image = fraction.reshape(IMAGE, IMAGE, words // IMAGE).mean(axis=2)
    else:
        image = jnp.repeat(fraction, -(-IMAGE // words), axis=1)[:, :IMAGE]

    # Full resolution at the target time; unusable columns count as occupied.
    bits = (game.grid_row(board, t_cur)[:, None] >> jnp.arange(32, dtype=jnp.uint32)) & jnp.uint32(1)
    profile = bits.reshape(-1).astype(jnp.float32)
    profile = jnp.where(jnp.arange(words * 32) < inst.columns, profile, 1.0)

    w = game.remaining_supply(board)
    around = _outside_if_negative(t_cur - supply_window // 2 + jnp.arange(supply_window))
    supply = w.at[around].get(mode="fill", fill_value=0) / jnp.maximum(jnp.max(inst.supply), 1)

    cand = state.candidates
    legal = game.legal_action_mask(state)
    has = cand.alloc_start >= 0
    actions = jnp.stack([
        legal,
        jnp.where(has, (cand.alloc_start - t_cur) / steps, 0.0),
        jnp.where(has, (cand.alloc_end - t_cur) / steps, 0.0),
        jnp.where(cand.offset >= 0, cand.offset / columns, -1.0),
        jnp.where(legal, game.action_rewards(state) / benefit_scale, 0.0),
    ], axis=-1).astype(jnp.float32)

    g = inst.group[cur]
    in_group = valid & (inst.group == g)
    size = jnp.maximum(group_size[g], 1.0)
    globals_ = jnp.stack([
        state.moves / n,
        board.cursor / n,
        jnp.sum(in_group & (idx < cur)) / size,
        jnp.sum(in_group & (idx >= board.cursor)) / size,
    ]).astype(jnp.float32)
    return Observation(buffers=buffers, grid=image, profile=profile, supply=supply.astype(jnp.float32),
                       actions=actions, globals=globals_, legal=legal)


def _outside_if_negative(index: jax.Array) -> jax.Array:
    """Negative indices would wrap around (NumPy semantics); make them out of bounds instead,
    so that a gather with mode="fill" fills them."""
    return jnp.where(index >= 0, index, jnp.iinfo(jnp.int32).max)
