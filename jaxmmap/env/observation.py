"""The one featurizer of a game state, built inside `jit`: what ES, EGRL, the agent and the
`Environment` see.

Two views of one `game.State`:

* `features(state, context(instance))`: float32[NUM_FEATURES], the decision features of the
  current buffer and its three actions (the paper's Table 1, compact), on which the ES and EGRL
  policies (`jaxmmap.solvers.evolution.policy`) score actions; `decision_features` adds what is
  left to win and occupancy and supply profiles (the agent's default feature network);
* `observe(state)`: `Observation`, the paper's Section 4.3.1 observation (buffer rows, a
  128 x 128 window of the memory grid, the column profile, the supply window, per-action and
  global features), for the agent's convolutional network and the `Environment`.

Work that depends only on the instance (the static features of every buffer, the reward scale)
is done once per rollout batch by `context(instance)`; a move then gathers one row of it and
adds the few dynamic features of the current decision.

Everything here is pure `jnp` on a `game.State`: no host work, so it runs at every move of
thousands of `vmap`ped games.

## Decision features

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

The feature vector is `phi = concat(x, y.ravel())`, float32[NUM_FEATURES]; `greedy_scores(phi)`
reads the greedy policy's scores from it (the ES/EGRL scorer is `jaxmmap.solvers.evolution.policy`).

## The observation

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

from jaxmmap.env import game
from jaxmmap.env.instance import Instance

BUFFER_FEATURES = ("bias", "width", "value", "demand_now", "demand_start", "target", "live_range",
                   "is_output", "in_table", "aliased", "group_placed", "group_dropped",
                   "progress", "occupancy", "later_uses", "next_use_gap", "step_load",
                   "supply_left", "pinnable", "pinned", "later_value")
ACTION_FEATURES = ("legal", "reward", "alloc_steps", "copy_steps", "space_time", "top")
NUM_BUFFER_FEATURES = len(BUFFER_FEATURES)
NUM_ACTION_FEATURES = len(ACTION_FEATURES)
NUM_FEATURES = NUM_BUFFER_FEATURES + 3 * NUM_ACTION_FEATURES
NUM_STATIC = 16  # columns of Context.static (see `context`)


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


@jax.jit
def context(inst: Instance) -> Context:
    """The per-instance part of the features (O(N log N), pure jnp; jitted: op by op, each of its
    operations would compile on its own, seconds of a solver's budget)."""
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
    top = jnp.where(cand.level >= 0, (cand.level + inst.width[i]) / cols, 0.0)
    y = jnp.stack([legal, reward, alloc_steps, copy_steps, space_time, top], axis=1)
    return jnp.concatenate([x, y.reshape(-1)]).astype(jnp.float32)


def greedy_scores(phi: jax.Array) -> jax.Array:
    """float32[..., 3]: the greedy policy's action scores read from decision features phi
    (float32[..., F >= NUM_FEATURES]): each action's reward feature for Copy and NoCopy, 0 for
    Drop. Its argmax over the legal actions plays like `rollout.greedy_policy` (the reward's
    transform is monotone and keeps 0 at 0; argmax takes the first maximum, greedy's tie order)."""
    reward = NUM_BUFFER_FEATURES + ACTION_FEATURES.index("reward")
    rewards = phi[..., reward + NUM_ACTION_FEATURES * jnp.arange(2)]
    return jnp.concatenate([rewards, jnp.zeros_like(rewards[..., :1])], axis=-1)


NEXT_BUFFERS = 5
SAME_TENSOR = 4
NUM_BUFFER_ROWS = 1 + NEXT_BUFFERS + SAME_TENSOR
ROW_FEATURES = (
    "valid", "width", "is_output", "target_from_now", "target", "same_tensor", "aliased",
    "same_alias_group", "live_start_from_now", "live_end_from_now", "live_length", "demand",
    "benefit", "in_latency_table", "group_status", "tensor_in_fast_memory", "pinnable", "pinned")
OBSERVED_ACTION_FEATURES = ("legal", "start_from_target", "end_from_target", "offset", "reward")
GLOBAL_FEATURES = ("move", "buffer", "position_in_group", "group_left")
IMAGE = 128
WINDOW_STEPS = 256
SUPPLY_WINDOW = 65
PROFILE_POINTS = 9  # steps sampled around the target time for the decision features' profiles
DECISION_EXTRAS = ("value_left", "moves") + tuple(
    f"{name}{k - PROFILE_POINTS // 2:+d}" for name in ("occupancy", "supply")
    for k in range(PROFILE_POINTS))
NUM_DECISION_FEATURES = NUM_FEATURES + len(DECISION_EXTRAS)


def decision_features(state: game.State, ctx: Context) -> jax.Array:
    """float32[NUM_DECISION_FEATURES]: what the default (feature) network sees of one game.

    The ES policy's features (`jaxmmap.solvers.evolution.policy`, Table 1 of the paper for the current
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
    return jnp.concatenate([features(state, ctx), extras]).astype(jnp.float32)


@struct.dataclass
class Observation:
    """The agent's input for one game (add a leading batch axis for many).

    Attributes:
      buffers: float32[NUM_BUFFER_ROWS, len(ROW_FEATURES)]: rows for the current buffer, the
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
      actions: float32[3, len(OBSERVED_ACTION_FEATURES)]: per action (Copy, NoCopy, Drop) its legality,
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

    image, profile = _grid_views(inst, board, t_cur, window_steps)

    w = game.remaining_supply(board)
    around = _outside_if_negative(t_cur - supply_window // 2 + jnp.arange(supply_window))
    supply = w.at[around].get(mode="fill", fill_value=0) / jnp.maximum(jnp.max(inst.supply), 1)

    legal = game.legal_action_mask(state)
    actions = _action_features(state, legal, t_cur, steps, columns, benefit_scale)

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


def _grid_views(inst, board, t_cur: jax.Array, window_steps: int) -> tuple[jax.Array, jax.Array]:
    """The memory grid around the target time t_cur: the 128 x 128 picture of occupied
    fractions (`Observation.grid`) and the full-resolution column profile at t_cur
    (`Observation.profile`)."""
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
    return image, profile


def _action_features(state: game.State, legal, t_cur, steps, columns, benefit_scale) -> jax.Array:
    """float32[3, len(OBSERVED_ACTION_FEATURES)] (`Observation.actions`)."""
    cand = state.candidates
    has = cand.alloc_start >= 0
    actions = jnp.stack([
        legal,
        jnp.where(has, (cand.alloc_start - t_cur) / steps, 0.0),
        jnp.where(has, (cand.alloc_end - t_cur) / steps, 0.0),
        jnp.where(cand.level >= 0, cand.level / columns, -1.0),
        jnp.where(legal, game.action_rewards(state) / benefit_scale, 0.0),
    ], axis=-1).astype(jnp.float32)
    return actions


def _outside_if_negative(index: jax.Array) -> jax.Array:
    """Negative indices would wrap around (NumPy semantics); make them out of bounds instead,
    so that a gather with mode="fill" fills them."""
    return jnp.where(index >= 0, index, jnp.iinfo(jnp.int32).max)
