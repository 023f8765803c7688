"""The MMapGame in JAX: a fixed-shape state and pure `init`, `step`, `legal_action_mask`.

The rules are those of `docs/game.md` (and of `jaxmmap.reference`, which the tests compare this
module with, step by step). Everything here works on padded fixed shapes, so games `jit` once per
shape and `vmap` over many games and over instances padded to common shapes
(`jaxmmap.instance.make_instance(..., num_buffers=..., num_steps=...)`).

How the JAX version computes what the reference walks through:
* copy intervals: the board keeps prefix sums of the remaining supply `W` (updated in closed
  form by each copy, so no step needs a scan) and counts over them instead of a walk;
* free columns: a difference array over the allocations that overlap the interval in time (a
  scatter-add over the N buffers), instead of scanning grid rows;
* NoCopy predecessor: a per-tensor record of the allocation with the latest end;
* the next buffer's candidate placements are computed once, at the end of each step, and kept in
  the state: they give the legal mask, tell whether the new state is infeasible, and are applied
  by the next step.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct

from jaxmmap.instance import Instance

COPY, NOCOPY, DROP = 0, 1, 2
UNDECIDED, PLACED, DROPPED = 0, 1, 2  # group status
PIN_FREE, PINNED, PIN_FORBIDDEN = 0, 1, 2  # tensor pin status


@struct.dataclass
class Board:
    """Everything a move changes (what the Drop-backup saves). N buffers, T steps, C = 32 * Cw
    grid columns, K latency tables; groups and tensors use dense ids < N.

    Attributes:
      cursor: int32[] index of the buffer to decide.
      ret: float32[] return so far.
      supply_prefix: int32[T+1] prefix sums of the remaining copy supply W, in ticks:
        W[k] = supply_prefix[k+1] - supply_prefix[k] (see `remaining_supply`).
      edge: bool[T] edge[k]: a copy interval spans steps k and k+1 (equation 6).
      grid: uint32[T, Cw] occupied cells, bit c % 32 of word c // 32 for column c.
      action: int32[N] COPY, NOCOPY, DROP, or -1 while undecided.
      offset: int32[N] column offset, -1 if dropped or undecided.
      alloc_start, alloc_end: int32[N] the buffer's own allocation, -1 if none.
      copy_start, copy_end: int32[N] the buffer's copy interval, -1 if none.
      group_status: int32[N] UNDECIDED, PLACED or DROPPED per alias group.
      group_offset: int32[N] offset of a placed group, -1 otherwise.
      group_left: int32[N] undecided members per group.
      tensor_start, tensor_end, tensor_offset: int32[N] per tensor, the allocation with the
        latest end so far (-1 if none): the NoCopy predecessor.
      table_mask: int32[K] per latency table, the bits of its buffers already placed.
      tensor_pin: int8[N] per tensor, PIN_FREE, PINNED (its output was played NoCopy: the tensor
        is only in fast memory, so its later buffers must be NoCopy) or PIN_FORBIDDEN (by a
        Drop-backup restore).
    """

    cursor: jax.Array
    ret: jax.Array
    supply_prefix: jax.Array
    edge: jax.Array
    grid: jax.Array
    action: jax.Array
    offset: jax.Array
    alloc_start: jax.Array
    alloc_end: jax.Array
    copy_start: jax.Array
    copy_end: jax.Array
    group_status: jax.Array
    group_offset: jax.Array
    group_left: jax.Array
    tensor_start: jax.Array
    tensor_end: jax.Array
    tensor_offset: jax.Array
    table_mask: jax.Array
    tensor_pin: jax.Array


@struct.dataclass
class Candidates:
    """What each action (Copy, NoCopy, Drop) would do to the current buffer.

    Attributes:
      legal: bool[3].
      offset, alloc_start, alloc_end, copy_start, copy_end: int32[3], -1 for none.
    """

    legal: jax.Array
    offset: jax.Array
    alloc_start: jax.Array
    alloc_end: jax.Array
    copy_start: jax.Array
    copy_end: jax.Array


@struct.dataclass
class State:
    """A game in progress.

    Attributes:
      instance: the (padded) problem, unchanged by moves.
      board: the current board.
      backup: the Drop-backup board, or None when the option is off.
      backup_candidates: the candidates of the backup's buffer, or None.
      candidates: the current buffer's candidate placements (`legal_action_mask` reads them).
      reward: float32[] reward of the last move.
      done: bool[] the game has ended.
      lost: bool[] it ended in an infeasible state.
      moves: int32[] moves played (more than N after Drop-backup restores).
      restores: int32[] Drop-backup restores so far.
    """

    instance: Instance
    board: Board
    backup: Board | None
    backup_candidates: Candidates | None
    candidates: Candidates
    reward: jax.Array
    done: jax.Array
    lost: jax.Array
    moves: jax.Array
    restores: jax.Array


# ---------------------------------------------------------------------------- public API


def move_limit(num_buffers: int, *, backup: bool = True) -> int:
    """The most moves a game of `num_buffers` can take: N without the Drop-backup; with it, each
    restore drops an alias group for good, so at most N * (N + 1). Capped to the int32 range of
    `State.moves` (from 46,341 buffers on; such a game ends long before the cap)."""
    n = int(num_buffers)
    return min(n * (n + 1) if backup else n, 2 ** 31 - 1)


def init(instance: Instance, *, backup: bool = False) -> State:
    """The first state of a game on `instance`; `backup=True` enables the Drop-backup."""
    n, t = instance.width.shape[0], instance.supply.shape[0]
    k = instance.gain.shape[0]
    i32 = lambda shape, v=-1: jnp.full(shape, v, jnp.int32)  # noqa: E731
    board = Board(
        cursor=jnp.int32(0), ret=jnp.float32(0),
        supply_prefix=jnp.concatenate([jnp.zeros(1, jnp.int32), jnp.cumsum(instance.supply)]),
        edge=jnp.zeros(t, bool), grid=jnp.zeros((t, instance.grid_words), jnp.uint32),
        action=i32(n), offset=i32(n), alloc_start=i32(n), alloc_end=i32(n),
        copy_start=i32(n), copy_end=i32(n), group_status=i32(n, UNDECIDED), group_offset=i32(n),
        group_left=jnp.zeros(n, jnp.int32).at[instance.group].add(instance.valid.astype(jnp.int32)),
        tensor_start=i32(n), tensor_end=i32(n), tensor_offset=i32(n), table_mask=i32(k, 0),
        tensor_pin=jnp.full(n, PIN_FREE, jnp.int8))
    candidates = _candidates(instance, board)
    return State(instance=instance, board=board, backup=board if backup else None,
                 backup_candidates=candidates if backup else None,
                 candidates=candidates, reward=jnp.float32(0),
                 done=instance.num_buffers <= 0, lost=jnp.bool_(False), moves=jnp.int32(0),
                 restores=jnp.int32(0))


def remaining_supply(board: Board) -> jax.Array:
    """int32[T]: the remaining copy supply W per step, in ticks."""
    return jnp.diff(board.supply_prefix)


def legal_action_mask(state: State) -> jax.Array:
    """bool[3]: which of Copy, NoCopy, Drop are legal now (all False once the game is done)."""
    return state.candidates.legal & ~state.done


def action_rewards(state: State) -> jax.Array:
    """float32[3]: the immediate reward each action would give now (illegal ones included)."""
    inst, board = state.instance, state.board
    i = jnp.minimum(board.cursor, inst.width.shape[0] - 1)
    placed = _placement_reward(inst, board, i)
    return jnp.stack([placed, placed, jnp.float32(0)])


def _placement_reward(inst: Instance, board: Board, i) -> jax.Array:
    """Reward of placing buffer i (Copy or NoCopy): static benefit or latency-table delta."""
    table = jnp.maximum(inst.table[i], 0)
    mask = board.table_mask[table]
    bit = jnp.left_shift(jnp.int32(1), inst.table_bit[i])
    dynamic = inst.gain[table, mask | bit] - inst.gain[table, mask]
    return jnp.where(inst.table[i] >= 0, dynamic, inst.benefit[i])


def step(state: State, action: jax.Array) -> State:
    """Plays `action` (0 Copy, 1 NoCopy, 2 Drop) on the current buffer.

    An illegal action loses the game, as in the paper (use `legal_action_mask`). A move into an
    infeasible state loses it too, or, with the Drop-backup, returns to the backup. A finished
    game is returned unchanged with reward 0.
    """
    inst, cand, before = state.instance, state.candidates, state.board
    active = ~state.done  # a finished game does not move: every update below is gated by it
    action = jnp.asarray(action, jnp.int32)
    legal = (action >= 0) & (action < 3) & cand.legal[jnp.clip(action, 0, 2)]
    action = jnp.clip(action, 0, 2)
    board, reward = _apply(inst, before, cand, action, active & legal)  # illegal: board unchanged
    finished = board.cursor >= inst.num_buffers
    next_cand = _candidates(inst, board)
    infeasible = active & legal & ~finished & ~jnp.any(next_cand.legal)

    backup, backup_cand, restored = state.backup, state.backup_candidates, jnp.bool_(False)
    if backup is not None:  # return to the backup, with the offending alias group dropped
        restored = infeasible
        n = inst.width.shape[0]
        bad = jnp.minimum(board.cursor, n - 1)
        bad_group, bad_tensor = inst.group[bad], inst.tensor[bad]
        # A use of a pinned tensor that cannot be served: forbid the pin instead.
        pin_conflict = board.tensor_pin[bad_tensor] == PINNED
        status, pin = backup.group_status[bad_group], backup.tensor_pin[bad_tensor]
        back = backup.replace(
            group_status=backup.group_status.at[bad_group].set(jnp.where(pin_conflict, status, DROPPED)),
            tensor_pin=backup.tensor_pin.at[bad_tensor].set(jnp.where(pin_conflict, PIN_FORBIDDEN, pin)))
        # Only its own group's status, or its own tensor's pin, changes the saved candidates of
        # the backup's buffer.
        first = jnp.minimum(backup.cursor, n - 1)
        own = ~pin_conflict & (inst.group[first] == bad_group)
        own_pin = pin_conflict & (inst.tensor[first] == bad_tensor)
        back_cand = backup_cand.replace(
            legal=backup_cand.legal & jnp.stack([~own, ~own & ~own_pin, jnp.bool_(True)]))
        # lax.cond: a real branch for a single game (no copy of the board unless needed); under
        # vmap it becomes a select, as the batch needs.
        board, next_cand = jax.lax.cond(restored, lambda: (back, back_cand), lambda: (board, next_cand))
        save = active & (restored | _clean_cut(inst, board))
        backup, backup_cand = jax.lax.cond(save, lambda: (board, next_cand), lambda: (backup, backup_cand))
        reward = jnp.where(restored, back.ret - before.ret, reward)
    lost = active & (~legal | (infeasible & ~restored))
    reward = jnp.where(lost, -before.ret - inst.penalty, reward)
    board = board.replace(ret=jnp.where(lost, -inst.penalty, board.ret))
    return State(instance=inst, board=board, backup=backup, backup_candidates=backup_cand,
                 candidates=next_cand, reward=reward, done=state.done | finished | lost,
                 lost=state.lost | lost, moves=state.moves + active.astype(jnp.int32),
                 restores=state.restores + restored.astype(jnp.int32))


# ---------------------------------------------------------------------------- internals


def _clean_cut(inst: Instance, board: Board) -> jax.Array:
    """No alias group with a placed member, and no pinned tensor, has undecided members:
    dropping the rest completes the game."""
    open_pins = (board.tensor_pin == PINNED) & (inst.tensor_last >= board.cursor)
    return ~jnp.any((board.group_status == PLACED) & (board.group_left > 0)) & ~jnp.any(open_pins)


def _used_prefix(inst: Instance, board: Board, start, end) -> jax.Array:
    """int32[C+1] prefix count of the grid columns used anywhere in steps [start, end] (and of
    the unusable tail of the memory). Exact when the current alias group has no cells yet."""
    steps = jnp.arange(board.grid.shape[0])
    rows = (steps >= start) & (steps <= end)
    words = jax.lax.reduce(jnp.where(rows[:, None], board.grid, jnp.uint32(0)), jnp.uint32(0),
                           jax.lax.bitwise_or, (0,))
    bits = (words[:, None] >> jnp.arange(32, dtype=jnp.uint32)[None, :]) & jnp.uint32(1)
    used = (bits.reshape(-1) > 0) | (jnp.arange(inst.grid_words * 32) >= inst.columns)
    return jnp.concatenate([jnp.zeros(1, jnp.int32), jnp.cumsum(used.astype(jnp.int32))])


def _free_of_others(inst: Instance, board: Board, start, end, group, offset, width) -> jax.Array:
    """Whether columns [offset, offset + width) are free of every other alias group's
    allocations during steps [start, end] (the cells of `group` itself may be in use)."""
    clash = ((board.alloc_start >= 0) & (board.alloc_start <= end) & (board.alloc_end >= start)
             & (inst.group != group) & (board.offset < offset + width)
             & (board.offset + inst.width > offset) & (inst.width > 0))
    return (offset >= 0) & (offset + width <= inst.columns) & ~jnp.any(clash)


def _fits(prefix, offset, width) -> jax.Array:
    c = prefix.shape[0] - 1
    end = offset + width
    inside = (offset >= 0) & (end <= c)
    return inside & (prefix[jnp.clip(end, 0, c)] == prefix[jnp.clip(offset, 0, c)])


def _lowest(prefix, width) -> jax.Array:
    """Lowest offset where `width` free columns start, or -1."""
    c = prefix.shape[0] - 1
    ok = jax.vmap(_fits, in_axes=(None, 0, None))(prefix, jnp.arange(c), width)
    return jnp.where(jnp.any(ok), jnp.argmax(ok), -1).astype(jnp.int32)


def _candidates(inst: Instance, board: Board) -> Candidates:
    n, num_steps = inst.width.shape[0], inst.supply.shape[0]
    i = jnp.minimum(board.cursor, n - 1)
    t, width, demand = inst.target[i], inst.width[i], inst.demand[i]
    is_out, g, tensor = inst.is_output[i], inst.group[i], inst.tensor[i]
    live_end = inst.live_end[i]
    status, goff = board.group_status[g], board.group_offset[g]
    placed, dropped = status == PLACED, status == DROPPED
    pin = board.tensor_pin[tensor]
    pinned = pin == PINNED  # a later buffer of a pinned tensor: NoCopy is its only action
    steps = jnp.arange(num_steps)

    # Copy interval from prefix sums of the remaining supply (P[k] = W[0] + ... + W[k-1]).
    prefix = board.supply_prefix
    need_in = prefix[t] - demand
    s = jnp.minimum(jnp.sum(prefix <= need_in) - 1, t)  # latest start covering the demand
    j = jnp.sum(prefix < prefix[t + 1] + demand)  # first prefix index reaching it
    e = jnp.maximum(j - 1, t)  # earliest end
    has_copy = demand > 0
    in_ok = (need_in >= 0) & (s >= inst.copy_from[i])  # not before the tensor is written
    out_ok = (j <= num_steps) & (e <= live_end)
    c_start = jnp.where(is_out, t + 1, s)
    c_end = jnp.where(is_out, e, t - 1)
    edges_free = ~jnp.any(board.edge & (steps >= c_start) & (steps < c_end))
    copy_ok = jnp.where(is_out, out_ok, in_ok) & (edges_free | ~has_copy) & ~pinned
    a_start, a_end = jnp.where(is_out, t, s), jnp.where(is_out, e, t)

    # NoCopy: extend the tensor's latest allocation up to the target; for an output, pin the
    # tensor: allocate its whole live range.
    p_start, p_end, p_off = board.tensor_start[tensor], board.tensor_end[tensor], board.tensor_offset[tensor]
    # whether NoCopy has what it builds on: a predecessor, or for an output the right to pin
    nocopy_base = jnp.where(is_out, inst.pinnable[i] & (pin == PIN_FREE), (p_end >= 0) & (p_start <= t))
    covered = ~is_out & (p_end >= t)
    x_start, x_end = jnp.where(is_out, t, p_end + 1), jnp.where(is_out, live_end, t)

    # Offsets. A group that is not placed yet has no cells, so the grid alone tells which columns
    # are free and gives the lowest offset; a placed group's offset is forced, and is checked
    # against the other groups' allocations (the group's own cells may overlap).
    used = jax.vmap(_used_prefix, in_axes=(None, None, 0, 0))(
        inst, board, jnp.stack([a_start, x_start]), jnp.stack([a_end, x_end]))

    def fits(k, start, end, offset):
        return jnp.where(placed, _free_of_others(inst, board, start, end, g, offset, width),
                         _fits(used[k], offset, width))

    copy_off = jnp.where(placed, goff, _lowest(used[0], width))
    copy_ok &= fits(0, a_start, a_end, copy_off)
    x_off = jnp.where((inst.nocopy_lowest | is_out) & ~covered,
                      jnp.where(placed, goff, _lowest(used[1], width)), p_off)
    nocopy_ok = nocopy_base & (covered | fits(1, x_start, x_end, x_off)) & (~placed | (x_off == goff))

    none = jnp.int32(-1)
    return Candidates(
        legal=jnp.stack([copy_ok & ~dropped, nocopy_ok & ~dropped, ~placed & ~pinned]),
        offset=jnp.stack([copy_off, x_off, none]).astype(jnp.int32),
        alloc_start=jnp.stack([a_start, jnp.where(covered, none, x_start), none]).astype(jnp.int32),
        alloc_end=jnp.stack([a_end, jnp.where(covered, none, x_end), none]).astype(jnp.int32),
        copy_start=jnp.stack([jnp.where(has_copy, c_start, none), none, none]).astype(jnp.int32),
        copy_end=jnp.stack([jnp.where(has_copy, c_end, none), none, none]).astype(jnp.int32))


def _word_masks(offset, width, words: int) -> jax.Array:
    """uint32[words]: bits of the columns [offset, offset + width)."""
    base = jnp.arange(words, dtype=jnp.int32) * 32
    lo = jnp.clip(offset - base, 0, 32)
    hi = jnp.clip(offset + width - base, 0, 32)
    below = lambda n: jnp.where(n >= 32, jnp.uint32(0xFFFFFFFF),  # noqa: E731
                                (jnp.uint32(1) << n.astype(jnp.uint32)) - jnp.uint32(1))
    return below(hi) & ~below(lo)


def _apply(inst: Instance, board: Board, cand: Candidates, action, active) -> tuple[Board, jax.Array]:
    """Plays the candidate of `action`; changes nothing where `active` is False."""
    i = jnp.minimum(board.cursor, inst.width.shape[0] - 1)
    placed = action != DROP
    offset, a_start, a_end = cand.offset[action], cand.alloc_start[action], cand.alloc_end[action]
    c_start, c_end = cand.copy_start[action], cand.copy_end[action]
    t, g, tensor, width = inst.target[i], inst.group[i], inst.tensor[i], inst.width[i]
    copies = active & (c_start >= 0)
    demand = jnp.where(copies, inst.demand[i], 0)

    # Supply, in closed form on the prefix sums: the copy takes everything left at its steps but
    # the far end (the start of an input's copy, the end of an output's), which gives the rest.
    # So the prefix is unchanged up to `lo`, flat (nothing left) from there to `hi`, and lowered
    # by the demand after `hi`.
    prefix = board.supply_prefix
    k = jnp.arange(prefix.shape[0])
    is_out = inst.is_output[i]
    lo, hi = jnp.where(is_out, t + 1, c_start), jnp.where(is_out, c_end, t)
    flat = jnp.where(is_out, prefix[jnp.minimum(t + 1, prefix.shape[0] - 1)], prefix[t] - demand)
    new_prefix = jnp.where(k <= lo, prefix, jnp.where(k <= hi, flat, prefix - demand))
    steps = jnp.arange(inst.supply.shape[0])
    edge = board.edge | (copies & (steps >= c_start) & (steps < c_end))

    rows = active & (a_start >= 0) & (steps >= a_start) & (steps <= a_end)
    grid = board.grid | jnp.where(rows[:, None], _word_masks(offset, width, inst.grid_words)[None, :],
                                  jnp.uint32(0))

    newer = active & (a_start >= 0) & (a_end >= board.tensor_end[tensor])
    table, bit = inst.table[i], jnp.left_shift(jnp.int32(1), inst.table_bit[i])
    mask = board.table_mask[jnp.maximum(table, 0)]
    reward = jnp.where(active & placed, _placement_reward(inst, board, i), jnp.float32(0))

    def put(array, index, value):  # array[index] = value, if active
        return array.at[index].set(jnp.where(active, value, array[index]))

    return board.replace(
        cursor=board.cursor + active.astype(jnp.int32),
        ret=board.ret + reward,
        supply_prefix=jnp.where(copies, new_prefix, prefix),
        edge=edge,
        grid=grid,
        action=put(board.action, i, action),
        offset=put(board.offset, i, offset),
        alloc_start=put(board.alloc_start, i, a_start),
        alloc_end=put(board.alloc_end, i, a_end),
        copy_start=put(board.copy_start, i, c_start),
        copy_end=put(board.copy_end, i, c_end),
        group_status=put(board.group_status, g, jnp.where(placed, PLACED, DROPPED)),
        group_offset=put(board.group_offset, g, jnp.where(placed, offset, -1)),
        group_left=put(board.group_left, g, board.group_left[g] - 1),
        tensor_start=put(board.tensor_start, tensor, jnp.where(newer, a_start, board.tensor_start[tensor])),
        tensor_end=put(board.tensor_end, tensor, jnp.where(newer, a_end, board.tensor_end[tensor])),
        tensor_offset=put(board.tensor_offset, tensor, jnp.where(newer, offset, board.tensor_offset[tensor])),
        table_mask=put(board.table_mask, jnp.maximum(table, 0),
                       jnp.where(placed & (table >= 0), mask | bit, mask)),
        tensor_pin=put(board.tensor_pin, tensor,
                       jnp.where(is_out & (action == NOCOPY), jnp.int8(PINNED), board.tensor_pin[tensor])),
    ), reward
