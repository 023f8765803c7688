"""The MMapGame in JAX: a fixed-shape state and pure `init`, `step`, `legal_action_mask`.

The rules are those of `docs/game.md` (and of `jaxmmap.env.reference`, which the tests compare this
module with, step by step). Everything here works on padded fixed shapes, so games `jit` once per
shape and `vmap` over many games and over instances padded to common shapes
(`jaxmmap.env.instance.make_instance(..., num_buffers=..., num_steps=...)`).

How the JAX version computes what the reference walks through, so that a move's memory traffic
follows what it touches rather than the size of the state (see `benchmarks/env_throughput.py`):
* copy intervals: the board keeps prefix sums of the remaining supply `W` (updated in closed
  form by each copy) and binary-searches them instead of a walk;
* free columns: the grid (`jaxmmap.env.grid`) answers "which columns are used in steps [a, b]" from
  block summaries and two blocks of rows, and the lowest free offset comes from bit operations
  on those words;
* a placed alias group's later members are checked against the grid outside the rows the group
  already holds (its own cells fill its columns there); the records answer the rare rest;
* per-buffer decisions are `Records` written once, at the cursor: a group's status, a tensor's
  pin and its NoCopy predecessor are read from the record of their previous buffer, which is
  always below the cursor, so a Drop-backup restore rewinds the cursor and leaves the records;
* the Drop-backup is saved at a clean cut, known from two counters (open groups, open pins);
  the grid saves and restores itself by flipping block planes, the rest is a small `Snapshot`;
* the next buffer's candidate placements are computed once, at the end of each step, and kept in
  the state: they give the legal mask, tell whether the new state is infeasible, and are applied
  by the next step (with what the move needs of the records, so that it reads none it writes).
For many games, `jaxmmap.env.rollout.rollouts` runs one loop over the batch: `vmap` of a per-game loop
would select every game's whole state on every move.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxmmap.core.problem import COPY, DROP, NOCOPY  # the actions, as files write them
from jaxmmap.env import grid as memory
from jaxmmap.env.instance import Instance
from jaxmmap.env.types import (  # noqa: F401 (State and its parts are the game's types)
    _ACTION,
    _DROPPED,
    _FORBIDDEN,
    _PINNED,
    _SOLID,
    DROPPED,
    PIN_FORBIDDEN,
    PIN_FREE,
    PINNED,
    PLACED,
    UNDECIDED,
    Board,
    Candidates,
    Records,
    Snapshot,
    State,
    _snapshot,
    index_dtype,
)

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
    none = jnp.full(n, -1, index_dtype(instance))
    records = Records(bits=jnp.zeros(n, jnp.int8), offset=none, alloc_start=none, alloc_end=none,
                      latest=none, hull_start=none, hull_end=none)
    board = Board(
        cursor=jnp.int32(0), ret=jnp.float32(0),
        supply_prefix=jnp.concatenate([jnp.zeros(1, jnp.int32), jnp.cumsum(instance.supply)]),
        edge=jnp.zeros(-(-t // 32), jnp.uint32), cells=memory.init(t, instance.grid_words),
        table_mask=jnp.zeros(k, jnp.int32), records=records, marks=jnp.zeros(n, jnp.int8),
        open_groups=jnp.int32(0), open_pins=jnp.int32(0))
    candidates = _candidates(instance, board)
    return State(instance=instance, board=board, backup=_snapshot(board) if backup else None,
                 backup_candidates=candidates if backup else None,
                 candidates=candidates, reward=jnp.float32(0),
                 done=instance.num_buffers <= 0, lost=jnp.bool_(False), moves=jnp.int32(0),
                 restores=jnp.int32(0))


def grid_row(board: Board, step) -> jax.Array:
    """uint32[Cw]: the occupied cells of one step (O(Cw); `board.grid` is the whole grid)."""
    return memory.row(board.cells, step)


def remaining_supply(board: Board) -> jax.Array:
    """int32[T]: the remaining copy supply W per step, in ticks."""
    return jnp.diff(board.supply_prefix, axis=-1)


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


def buffer_status(state: State) -> tuple[jax.Array, jax.Array]:
    """The current buffer's alias-group status (UNDECIDED, PLACED, DROPPED) and its tensor's pin
    status (PIN_FREE, PINNED, PIN_FORBIDDEN), as int32[] each; O(1)."""
    inst, board = state.instance, state.board
    i = jnp.minimum(board.cursor, inst.width.shape[0] - 1)
    ctx = _context(inst, board, i)
    return ctx["status"], ctx["pin"]


def group_status(state: State) -> jax.Array:
    """int32[N] per alias-group id: UNDECIDED, PLACED or DROPPED (a group's first decision
    fixes its status)."""
    inst, board = state.instance, state.board
    first = inst.group_first
    decided = (first >= 0) & (first < board.cursor)
    action = board.records.bits[jnp.maximum(first, 0)] & _ACTION
    status = jnp.where(decided, jnp.where(action == DROP, DROPPED, PLACED), UNDECIDED)
    return jnp.where((board.marks & _DROPPED) != 0, DROPPED, status).astype(jnp.int32)


def tensor_pin(state: State) -> jax.Array:
    """int8[N] per tensor id: PIN_FREE, PINNED or PIN_FORBIDDEN."""
    inst, board = state.instance, state.board
    below = jnp.arange(inst.width.shape[0]) < board.cursor
    pins = below & inst.is_output & ((board.records.bits & _ACTION) == NOCOPY)
    pinned = jnp.zeros_like(pins).at[inst.tensor].max(pins)
    return jnp.where((board.marks & _FORBIDDEN) != 0, PIN_FORBIDDEN,
                     jnp.where(pinned, PINNED, PIN_FREE)).astype(jnp.int8)


def copies(state: State) -> tuple[jax.Array, jax.Array]:
    """int32[N] each: the start and end of every decided buffer's copy interval (-1 if none).
    Not recorded: a Copy with demand copies from the start of its allocation to the step before
    its target (an input), or from the step after its target to the end (an output)."""
    inst, board = state.instance, state.board
    copied = (board.action == COPY) & (inst.demand > 0)
    start = jnp.where(inst.is_output, inst.target + 1, board.alloc_start)
    end = jnp.where(inst.is_output, board.alloc_end, inst.target - 1)
    return jnp.where(copied, start, -1), jnp.where(copied, end, -1)


def tensor_end(state: State) -> jax.Array:
    """int32[N] per tensor id: the end of its allocation that ends last so far (-1 if none)."""
    inst, board = state.instance, state.board
    ends = board.alloc_end
    return jnp.full_like(ends, -1).at[inst.tensor].max(ends)


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
        pin_conflict = next_cand.pinned  # (a pinned tensor is never also forbidden)
        drop, forbid = restored & ~pin_conflict, restored & pin_conflict
        marks = board.marks.at[jnp.where(drop, bad_group, n)].set(  # (out of range: no write)
            board.marks[bad_group] | _DROPPED, mode="drop")
        marks = marks.at[jnp.where(forbid, bad_tensor, n)].set(marks[bad_tensor] | _FORBIDDEN, mode="drop")
        board = board.replace(marks=marks)
        # The backup was taken at a clean cut: nothing was open there.
        back = board.replace(cursor=backup.cursor, ret=backup.ret, supply_prefix=backup.supply_prefix,
                             edge=backup.edge, cells=memory.restore(board.cells),
                             table_mask=backup.table_mask,
                             open_groups=jnp.int32(0), open_pins=jnp.int32(0))
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
        save = active & (restored | ((board.open_groups == 0) & (board.open_pins == 0)))
        board, backup, backup_cand = jax.lax.cond(
            save, lambda: (board.replace(cells=memory.save(board.cells)), _snapshot(board), next_cand),
            lambda: (board, backup, backup_cand))
        reward = jnp.where(restored, back.ret - before.ret, reward)
    lost = active & (~legal | (infeasible & ~restored))
    reward = jnp.where(lost, -before.ret - inst.penalty, reward)
    board = board.replace(ret=jnp.where(lost, -inst.penalty, board.ret))
    return State(instance=inst, board=board, backup=backup, backup_candidates=backup_cand,
                 candidates=next_cand, reward=reward, done=state.done | finished | lost,
                 lost=state.lost | lost, moves=state.moves + active.astype(jnp.int32),
                 restores=state.restores + restored.astype(jnp.int32))


# ---------------------------------------------------------------------------- internals


def _context(inst: Instance, board: Board, i) -> dict:
    """What the game knows of buffer i's alias group and tensor, from the records of their
    previous buffers (below the cursor when i is the current buffer): the group's status and
    offset, the tensor's pin status and its latest allocation (the NoCopy predecessor)."""
    rec = board.records
    pg, pt = inst.prev_in_group[i], inst.prev_in_tensor[i]
    g_bits, g_offset = rec.bits[jnp.maximum(pg, 0)], rec.offset[jnp.maximum(pg, 0)]
    g_action = g_bits & _ACTION
    status = jnp.where(pg < 0, UNDECIDED, jnp.where(g_action == DROP, DROPPED, PLACED))
    status = jnp.where((board.marks[inst.group[i]] & _DROPPED) != 0, DROPPED, status)
    pinned = (pt >= 0) & ((rec.bits[jnp.maximum(pt, 0)] & _PINNED) != 0)
    pin = jnp.where((board.marks[inst.tensor[i]] & _FORBIDDEN) != 0, PIN_FORBIDDEN,
                    jnp.where(pinned, PINNED, PIN_FREE))
    latest = jnp.where(pt >= 0, rec.latest[jnp.maximum(pt, 0)], -1)
    j = jnp.maximum(latest, 0)
    has = latest >= 0
    as_int = lambda x: jnp.where(has, x.astype(jnp.int32), -1)  # noqa: E731
    return dict(status=status.astype(jnp.int32), offset=jnp.where(status == PLACED, g_offset, -1).astype(jnp.int32),
                pin=pin.astype(jnp.int32), pinned=pinned, latest=latest.astype(jnp.int32),
                hull_start=jnp.where(pg >= 0, rec.hull_start[jnp.maximum(pg, 0)].astype(jnp.int32), -1),
                hull_end=jnp.where(pg >= 0, rec.hull_end[jnp.maximum(pg, 0)].astype(jnp.int32), -1),
                solid=(pg < 0) | ((g_bits & _SOLID) != 0),
                t_start=as_int(rec.alloc_start[j]), t_end=as_int(rec.alloc_end[j]),
                t_offset=as_int(rec.offset[j]))


def _used(inst: Instance, board: Board, start, end) -> jax.Array:
    """uint32[Cw]: the grid columns used anywhere in steps [start, end], and the unusable tail
    of the memory. Exact when the current alias group has no cells there."""
    c = inst.grid_words * 32
    return memory.used(board.cells, start, end) | _word_masks(inst.columns, c - inst.columns, inst.grid_words)


def _free_of_others(inst: Instance, board: Board, start, end, group, offset, width, on=True) -> jax.Array:
    """bool[R]: whether columns [offset, offset + width) are free of every other alias group's
    allocations during steps [start, end] (the cells of `group` itself may be in use), for R
    rectangles (start, end, offset: int32[R]). One pass over the decided buffers' records (all
    of it depends on `on`, so that XLA cannot move it out of `_when`'s loop)."""
    rec = board.records
    a0, a1, off = (jnp.where(on, x, -1).astype(jnp.int32)[None, :]
                   for x in (rec.alloc_start, rec.alloc_end, rec.offset))
    group = jnp.where(on, group, -1)
    decided = (jnp.arange(inst.width.shape[0]) < jnp.where(on, board.cursor, 0)) & (inst.group != group) & (inst.width > 0)
    s, e, o = start[:, None], end[:, None], offset[:, None]
    clash = decided[None, :] & (a0 >= 0) & (a0 <= e) & (a1 >= s) & (off < o + width) & (off + inst.width[None, :] > o)
    return (offset >= 0) & (offset + width <= inst.columns) & ~jnp.any(clash, axis=1)


def _outside_own_cells(ctx: dict, placed, starts, ends):
    """The spans of steps to check on the grid for two rectangles (starts, ends: int32[2]) of
    buffer i, and whether a rectangle needs `_free_of_others` instead.

    Not placed: the rectangles themselves. Placed: the group's own cells are at its offset and,
    as an alias group has one size (`Problem` checks it), fill the rectangle's columns in the
    rows the group already holds; no other group can be there. So when those rows form one
    interval (`solid`), the rest of the rectangle is at most two spans; with one of them (or
    none) the grid answers exactly. Otherwise (the rows have gaps, or they lie strictly inside
    the rectangle) the records answer."""
    hs, he = ctx["hull_start"], ctx["hull_end"]
    overlap = (hs >= 0) & (starts <= he) & (ends >= hs)
    left_end, right_start = jnp.minimum(ends, hs - 1), jnp.maximum(starts, he + 1)
    has_left, has_right = starts <= left_end, right_start <= ends
    q_start = jnp.where(overlap, jnp.where(has_left, starts, right_start), starts)
    q_end = jnp.where(overlap, jnp.where(has_left, left_end, ends), ends)
    scan = placed & overlap & (~ctx["solid"] | (has_left & has_right))
    spans = jnp.where(placed, jnp.stack([q_start, q_end]), jnp.stack([starts, ends]))
    return spans, scan


def _when(pred, fn, default):
    """fn(True) where `pred`, else `default`; under `vmap`, fn runs only on the steps where some
    game of the batch needs it (a loop of zero or one iterations rather than a select).

    fn takes the loop's flag (True when it runs) and must make its work depend on it: work that
    does not depend on the loop is moved out of it by XLA, and then runs on every step."""
    return jax.lax.while_loop(lambda c: c[0], lambda c: (jnp.bool_(False), fn(c[0])), (pred, default))[1]


def _fits(used, offset, width) -> jax.Array:
    """Whether columns [offset, offset + width) are inside the grid and free of `used`."""
    inside = (offset >= 0) & (offset + width <= used.shape[0] * 32)
    return inside & ~jnp.any(used & _word_masks(offset, width, used.shape[0]))


def _lowest(used, width) -> jax.Array:
    """Lowest offset where `width` free columns start, or -1: P[o + width] == P[o] for the prefix
    count P of used columns, counted on the words (the used bits of the earlier words, then
    those below the column in its own word: a cumsum over C is slow on the CPU)."""
    c = used.shape[0] * 32
    before = jnp.concatenate([jnp.zeros(1, jnp.int32), jnp.cumsum(jax.lax.population_count(used).astype(jnp.int32))])
    column = jnp.arange(c)
    below = jnp.left_shift(jnp.uint32(1), (column % 32).astype(jnp.uint32)) - jnp.uint32(1)
    prefix = before[column // 32] + jax.lax.population_count(jnp.repeat(used, 32) & below).astype(jnp.int32)
    prefix = jnp.concatenate([prefix, before[-1:], jnp.full(c, c + 1, jnp.int32)])
    ahead = jax.lax.dynamic_slice(prefix, (jnp.clip(width, 0, c + 1),), (c,))  # P[o + width]
    ok = (ahead == prefix[:c]) & (column + width <= c)
    return jnp.where(jnp.any(ok), jnp.argmax(ok), -1).astype(jnp.int32)


def _candidates(inst: Instance, board: Board) -> Candidates:
    n, num_steps = inst.width.shape[0], inst.supply.shape[0]
    i = jnp.minimum(board.cursor, n - 1)
    t, width, demand = inst.target[i], inst.width[i], inst.demand[i]
    is_out, g = inst.is_output[i], inst.group[i]
    live_end = inst.live_end[i]
    ctx = _context(inst, board, i)
    status, goff, pin = ctx["status"], ctx["offset"], ctx["pin"]
    placed, dropped = status == PLACED, status == DROPPED
    pinned = pin == PINNED  # a later buffer of a pinned tensor: NoCopy is its only action

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
    edges_free = ~jnp.any(board.edge & _word_masks(c_start, c_end - c_start, board.edge.shape[0]))
    copy_ok = jnp.where(is_out, out_ok, in_ok) & (edges_free | ~has_copy) & ~pinned
    a_start, a_end = jnp.where(is_out, t, s), jnp.where(is_out, e, t)

    # NoCopy: extend the tensor's latest allocation up to the target; for an output, pin the
    # tensor: allocate its whole live range.
    p_start, p_end, p_off = ctx["t_start"], ctx["t_end"], ctx["t_offset"]
    # whether NoCopy has what it builds on: a predecessor, or for an output the right to pin
    nocopy_base = jnp.where(is_out, inst.pinnable[i] & (pin == PIN_FREE), (p_end >= 0) & (p_start <= t))
    covered = ~is_out & (p_end >= t)
    x_start, x_end = jnp.where(is_out, t, p_end + 1), jnp.where(is_out, live_end, t)

    # Offsets. A group that is not placed yet has no cells, so the grid alone tells which columns
    # are free and gives the lowest offset; a placed group's offset is forced, and is checked
    # against the other groups' allocations (the group's own cells may overlap).
    starts, ends = jnp.stack([a_start, x_start]), jnp.stack([a_end, x_end])
    spans, scan = _outside_own_cells(ctx, placed, starts, ends)
    used = jax.vmap(_used, in_axes=(None, None, 0, 0))(inst, board, spans[0], spans[1])
    lowest = jax.vmap(_lowest, in_axes=(0, None))(used, width)
    copy_off = jnp.where(placed, goff, lowest[0])
    x_off = jnp.where((inst.nocopy_lowest | is_out) & ~covered, jnp.where(placed, goff, lowest[1]), p_off)
    offs = jnp.stack([copy_off, x_off])
    on_grid = jax.vmap(_fits, in_axes=(0, 0, None))(used, offs, width)
    of_group = _when(jnp.any(scan), lambda on: _free_of_others(inst, board, starts, ends, g, offs, width, on),
                     jnp.zeros(2, bool))
    fits = jnp.where(scan, of_group, on_grid)
    copy_ok &= fits[0]
    nocopy_ok = nocopy_base & (covered | fits[1]) & (~placed | (x_off == goff))

    none = jnp.int32(-1)
    return Candidates(
        legal=jnp.stack([copy_ok & ~dropped, nocopy_ok & ~dropped, ~placed & ~pinned]),
        offset=jnp.stack([copy_off, x_off, none]).astype(jnp.int32),
        alloc_start=jnp.stack([a_start, jnp.where(covered, none, x_start), none]).astype(jnp.int32),
        alloc_end=jnp.stack([a_end, jnp.where(covered, none, x_end), none]).astype(jnp.int32),
        copy_start=jnp.stack([jnp.where(has_copy, c_start, none), none, none]).astype(jnp.int32),
        copy_end=jnp.stack([jnp.where(has_copy, c_end, none), none, none]).astype(jnp.int32),
        group_placed=placed, pinned=ctx["pinned"], latest=ctx["latest"], latest_end=p_end,
        hull_start=ctx["hull_start"], hull_end=ctx["hull_end"], solid=ctx["solid"])


def _word_masks(offset, width, words: int) -> jax.Array:
    """uint32[words]: bits of the columns [offset, offset + width)."""
    base = jnp.arange(words, dtype=jnp.int32) * 32
    lo = jnp.clip(offset - base, 0, 32)
    hi = jnp.clip(offset + width - base, 0, 32)
    # (a shift by 32 or more gives 0 in XLA, so below(32) is all ones)
    below = lambda n: (jnp.uint32(1) << n.astype(jnp.uint32)) - jnp.uint32(1)  # noqa: E731
    return below(hi) & ~below(lo)


def _apply(inst: Instance, board: Board, cand: Candidates, action, active) -> tuple[Board, jax.Array]:
    """Plays the candidate of `action`; changes nothing where `active` is False."""
    i = jnp.minimum(board.cursor, inst.width.shape[0] - 1)
    placed = action != DROP
    offset, a_start, a_end = cand.offset[action], cand.alloc_start[action], cand.alloc_end[action]
    c_start, c_end = cand.copy_start[action], cand.copy_end[action]  # (not recorded: see `copies`)
    t, width = inst.target[i], inst.width[i]
    copies = active & (c_start >= 0)
    demand = jnp.where(copies, inst.demand[i], 0)
    rec = board.records  # written in place below, and not read: the candidates hold the context

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
    edge = board.edge | jnp.where(copies, _word_masks(c_start, c_end - c_start, board.edge.shape[0]),
                                  jnp.uint32(0))

    cells = memory.fill(board.cells, a_start, a_end, _word_masks(offset, width, inst.grid_words),
                        active & (a_start >= 0))

    newer = (a_start >= 0) & (a_end >= cand.latest_end)
    table, bit = inst.table[i], jnp.left_shift(jnp.int32(1), inst.table_bit[i])
    mask = board.table_mask[jnp.maximum(table, 0)]
    reward = jnp.where(active & placed, _placement_reward(inst, board, i), jnp.float32(0))
    pinned = cand.pinned | (is_out & (action == NOCOPY))
    # The group's allocated rows: their hull, and whether they stay one interval.
    hs, he, allocated = cand.hull_start, cand.hull_end, a_start >= 0
    first = hs < 0
    hull_start = jnp.where(allocated, jnp.where(first, a_start, jnp.minimum(hs, a_start)), hs)
    hull_end = jnp.where(allocated, jnp.where(first, a_end, jnp.maximum(he, a_end)), he)
    solid = jnp.where(allocated, first | (cand.solid & (a_start <= he + 1) & (a_end >= hs - 1)), cand.solid)
    bits = action | jnp.where(pinned, _PINNED, 0) | jnp.where(solid, _SOLID, 0)
    # Clean-cut counters: the group is open while placed with later members, the pin while the
    # tensor has later buffers.
    opened_group = placed & inst.later_in_group[i]
    opened_pin = pinned & inst.later_in_tensor[i]
    step_open = lambda now, was: jnp.where(active, now.astype(jnp.int32) - was.astype(jnp.int32), 0)  # noqa: E731

    at = jnp.where(active, i, inst.width.shape[0])  # out of range: dropped, nothing is written
    put = lambda array, value: array.at[at].set(value.astype(array.dtype), mode="drop")  # noqa: E731
    records = rec.replace(
        bits=put(rec.bits, bits), offset=put(rec.offset, offset),
        alloc_start=put(rec.alloc_start, a_start), alloc_end=put(rec.alloc_end, a_end),
        latest=put(rec.latest, jnp.where(newer, i, cand.latest)),
        hull_start=put(rec.hull_start, hull_start), hull_end=put(rec.hull_end, hull_end))
    return board.replace(
        cursor=board.cursor + active.astype(jnp.int32),
        ret=board.ret + reward,
        supply_prefix=jnp.where(copies, new_prefix, prefix),
        edge=edge,
        cells=cells,
        table_mask=board.table_mask.at[jnp.maximum(table, 0)].set(
            jnp.where(active & placed & (table >= 0), mask | bit, mask)),
        records=records,
        open_groups=board.open_groups + step_open(opened_group, cand.group_placed),
        open_pins=board.open_pins + step_open(opened_pin, cand.pinned),
    ), reward
