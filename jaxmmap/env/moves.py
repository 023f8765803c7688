"""What one move does: the candidate placements of the current buffer (`candidates`, computed
at the end of each step for the next one) and the move itself (`apply`). Internals of
`jaxmmap.env.game`, which documents how they read and write the board; `jaxmmap.env.backup`
replays recorded moves with `apply`.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxmmap.core.problem import DROP, NOCOPY  # the actions, as files write them
from jaxmmap.env import grid as memory
from jaxmmap.env import supply
from jaxmmap.env.instance import Instance
from jaxmmap.env.types import (
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
)


def placement_reward(inst: Instance, board: Board, i) -> jax.Array:
    """Reward of placing buffer i (Copy or NoCopy): static benefit or latency-table delta."""
    table = jnp.maximum(inst.table[i], 0)
    mask = board.table_mask[table]
    bit = jnp.left_shift(jnp.int32(1), inst.table_bit[i])
    dynamic = inst.gain[table, mask | bit] - inst.gain[table, mask]
    return jnp.where(inst.table[i] >= 0, dynamic, inst.benefit[i])


def placement_potential(inst: Instance, board: Board, i) -> jax.Array:
    """What placing buffer i can still gain: for a latency-table buffer, the best gain of a mask
    its table can still reach (a superset of its placed bits) with i, minus the best without i,
    and at least its immediate reward (a roofline instruction stays memory-bound until all its
    operands are fast, so only the last placed one has an immediate reward; the heuristic's
    `_potential`, optimistic about the table's dropped buffers); else its static benefit."""
    table = jnp.maximum(inst.table[i], 0)
    placed = board.table_mask[table]
    bit = jnp.left_shift(jnp.int32(1), inst.table_bit[i])
    masks = jnp.arange(inst.gain.shape[1], dtype=jnp.int32)
    reach = (masks & placed) == placed
    gain = inst.gain[table]
    with_i = jnp.max(jnp.where(reach & ((masks & bit) != 0), gain, -jnp.inf))
    without = jnp.max(jnp.where(reach & ((masks & bit) == 0), gain, -jnp.inf))
    return jnp.where(inst.table[i] >= 0, jnp.maximum(with_i - without, placement_reward(inst, board, i)),
                     inst.benefit[i])


def context(inst: Instance, board: Board, i) -> dict:
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
    """Lowest offset where `width` free columns start, or -1, on the words (few, fused passes of
    Cw elements: a search over the C columns costs a move several times more on the CPU).

    A run that stays inside a word is found by doubling within each word (for widths up to 32);
    a run that leaves word k starts at its top free bits, `lead[k]` of them, and goes on over the
    free words after it and the low free bits of the first word that is not: `reach[k + 1]`."""
    words = used.shape[0]
    width = jnp.asarray(width, jnp.int32)
    one = jnp.uint32(1)
    # Inside words: run marks the bits that start 2**b free bits of their word.
    run, start, done = ~used, jnp.full(words, 0xFFFFFFFF, jnp.uint32), jnp.uint32(0)
    for b in range(6):
        take = ((width >> b) & 1) == 1
        start = jnp.where(take, start & (run >> done), start)  # (a shift by 32 gives 0)
        done = done + jnp.where(take, jnp.uint32(1 << b), jnp.uint32(0))
        run = run & (run >> (1 << b)) if b < 5 else run
    start = jnp.where(width <= 32, start, jnp.uint32(0))
    inside = jnp.where(start != 0, jax.lax.population_count((start & (~start + one)) - one).astype(jnp.int32), 64)
    # Across words: free bits at the top of each word, at its bottom, and the free run from the
    # bottom of each word on (a sentinel word past the end has none).
    lead = jax.lax.clz(used).astype(jnp.int32)
    low = jax.lax.population_count((used & (~used + one)) - one).astype(jnp.int32)  # 32 for a free word
    index = jnp.arange(words + 1, dtype=jnp.int32)
    full = jnp.concatenate([used == 0, jnp.zeros(1, bool)])
    first_used = jax.lax.cummin(jnp.where(full, words, index), reverse=True)  # first word not free
    reach = 32 * (first_used - index) + jnp.concatenate([low, jnp.zeros(1, jnp.int32)])[first_used]
    across = jnp.where((lead > 0) & (lead + reach[1:] >= width), 32 - lead, 64)
    at = jnp.minimum(inside, across) + 32 * index[:words]
    best = jnp.min(jnp.where(jnp.minimum(inside, across) < 64, at, jnp.iinfo(jnp.int32).max))
    return jnp.where(width <= 0, 0, jnp.where(best < words * 32, best, -1)).astype(jnp.int32)


def candidates(inst: Instance, board: Board) -> Candidates:
    n, num_steps = inst.width.shape[0], inst.supply.shape[0]
    i = jnp.minimum(board.cursor, n - 1)
    t, width, demand = inst.target[i], inst.width[i], inst.demand[i]
    is_out, g, live_end = inst.is_output[i], inst.group[i], inst.live_end[i]
    ctx = context(inst, board, i)
    status, goff, pin = ctx["status"], ctx["offset"], ctx["pin"]
    placed, dropped = status == PLACED, status == DROPPED
    pinned = pin == PINNED  # a later buffer of a pinned tensor: NoCopy is its only action

    # Copy interval from prefix sums of the remaining supply (P[k] = W[0] + ... + W[k-1]).
    prefix = board.supply_prefix
    need_in = prefix[t] - demand
    # (the prefix never decreases: binary searches, O(log T), not passes over it)
    search = lambda x, side: jnp.searchsorted(prefix, x, side=side)  # noqa: E731
    s = jnp.minimum(search(need_in, "right") - 1, t)  # latest start covering the demand
    if inst.edf:  # with what it may take over at its last step, t - 1
        need_in, s = supply.input_start(inst, board, i, need_in, s)
    j = search(prefix[t + 1] + demand, "left")  # first prefix index reaching it
    e = jnp.maximum(j - 1, t)  # earliest end
    has_copy = demand > 0
    in_ok = (need_in >= 0) & (s >= inst.copy_from[i])  # not before the tensor is written
    out_ok = (j <= num_steps) & (e <= live_end)
    c_start = jnp.where(is_out, t + 1, s)
    c_end = jnp.where(is_out, e, t - 1)
    if inst.deferred:  # an input's copy that meets another's edges ends early
        s, c_start, c_end, in_ok = _copy_that_meets(inst, board, i, s, in_ok, c_start, c_end)
    shifts = None  # (edf: an output's copy may end sooner, taking its last step over; what a copy takes over)
    if inst.edf:
        e, out_ok, c_end, shifts = supply.edf_window(inst, board, i, e, out_ok, c_start, c_end)
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

    starts, ends = jnp.stack([a_start, x_start]), jnp.stack([a_end, x_end])
    if inst.deferred:
        # Units, not offsets: a placed group's, the predecessor's (NoCopy), or a new one, the
        # current buffer's; each rectangle must fit the load profile where it grows its unit.
        unit = jnp.where(placed, goff, i)
        copy_off = unit
        x_off = jnp.where(is_out, unit, p_off)
        peak = _load_peak(board, _new_rows(inst, board, i, placed, ctx["hull_start"], ctx["hull_end"], ctx["solid"],
                                           starts, ends))
        room = (width == 0) | (peak + width <= inst.columns)
        copy_ok &= room[0]
        nocopy_ok = nocopy_base & (covered | room[1]) & (~placed | (x_off == goff))
        return _candidates(copy_ok, nocopy_ok, dropped, placed, pinned, copy_off, x_off, peak, a_start, a_end,
                           covered, x_start, x_end, has_copy, c_start, c_end, ctx, p_end,
                           shifts)

    # Offsets. A group that is not placed yet has no cells, so the grid alone tells which columns
    # are free and gives the lowest offset; a placed group's offset is forced, and is checked
    # against the other groups' allocations (the group's own cells may overlap).
    spans, scan = _outside_own_cells(ctx, placed, starts, ends)
    if board.cells.sub:  # (two calls: a `vmap` over the spans would make the runs' slices gathers)
        used = jnp.stack([_used(inst, board, spans[0][k], spans[1][k]) for k in range(2)])
    else:
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
    return _candidates(copy_ok, nocopy_ok, dropped, placed, pinned, copy_off, x_off, offs, a_start, a_end,
                       covered, x_start, x_end, has_copy, c_start, c_end, ctx, p_end)


def _copy_that_meets(inst: Instance, board: Board, i, s, in_ok, c_start, c_end):
    """Under deferred placement, an input's copy `[s, t-1]` that would cover an edge of another
    copy ends instead where the latest such edge begins, and starts as late as the supply allows
    (once: docs/game.md, "Copy windows that meet"); under `edf`, with what it may take over at
    that step. Returns its (start, copy start, copy end, whether the supply and the tensor's life
    allow it)."""
    t, demand, words, prefix = inst.target[i], inst.demand[i], board.edge.shape[0], board.supply_prefix
    met = board.edge & _word_masks(s, t - 1 - s, words)
    last = jnp.max(jnp.where(met != 0, jnp.arange(words) * 32 + 31 - jax.lax.clz(met).astype(jnp.int32), -1))
    over = supply.held_over(inst, board, last)[0] if inst.edf else 0
    need = prefix[jnp.maximum(last, 0) + 1] + over - demand
    start = jnp.minimum(jnp.searchsorted(prefix, need, side="right") - 1, last)
    again = ~inst.is_output[i] & in_ok & (last >= 0)
    in_ok &= ~again | ((need >= 0) & (start >= inst.copy_from[i]))
    pick = lambda new, old: jnp.where(again, new, old)  # noqa: E731
    return pick(start, s), pick(start, c_start), pick(last, c_end), in_ok


def _candidates(copy_ok, nocopy_ok, dropped, placed, pinned, copy_off, x_off, level, a_start, a_end, covered,
                x_start, x_end, has_copy, c_start, c_end, ctx, p_end, shifts=None) -> Candidates:
    """The `Candidates` of the three actions from what `candidates` found (`level`: int32[2],
    Copy's and NoCopy's; `shifts`: (shift, shift_end) under `edf`)."""
    none = jnp.int32(-1)
    return Candidates(
        legal=jnp.stack([copy_ok & ~dropped, nocopy_ok & ~dropped, ~placed & ~pinned]),
        offset=jnp.stack([copy_off, x_off, none]).astype(jnp.int32),
        level=jnp.stack([level[0], level[1], none]).astype(jnp.int32),
        alloc_start=jnp.stack([a_start, jnp.where(covered, none, x_start), none]).astype(jnp.int32),
        alloc_end=jnp.stack([a_end, jnp.where(covered, none, x_end), none]).astype(jnp.int32),
        copy_start=jnp.stack([jnp.where(has_copy, c_start, none), none, none]).astype(jnp.int32),
        copy_end=jnp.stack([jnp.where(has_copy, c_end, none), none, none]).astype(jnp.int32),
        group_placed=placed, pinned=ctx["pinned"], latest=ctx["latest"], latest_end=p_end,
        hull_start=ctx["hull_start"], hull_end=ctx["hull_end"], solid=ctx["solid"],
        **({} if shifts is None else {"shift": shifts[0].astype(jnp.int32), "shift_end": shifts[1].astype(jnp.int32)}))


def _new_rows(inst: Instance, board: Board, i, placed, hull_start, hull_end, solid, starts, ends) -> jax.Array:
    """bool[R, T]: the steps of rectangles (starts, ends: int32[R]) that buffer i's unit does not
    hold yet. A unit other than a placed alias group's holds none of them (a new unit, or a NoCopy
    that goes on from where the tensor's allocation ends). A placed group's unit holds the rows of
    its allocations: its hull when they form one interval (`solid`), else the union of the
    allocations of its buffers below the cursor, read along the group's chain (`prev_in_group`:
    a group's few buffers, rather than a pass over every record; only where some game needs it:
    `_when`)."""
    num_steps = board.load.shape[0]
    k = jnp.arange(num_steps, dtype=jnp.int32)
    rect = (k >= starts[:, None]) & (k <= ends[:, None])
    grow = placed & (hull_start >= 0)

    def held_rows(on):  # the group's buffers below the cursor: i itself if it is, then its chain
        rec = board.records

        def body(carry):
            j, held = carry
            s, e = rec.alloc_start[j].astype(jnp.int32), rec.alloc_end[j].astype(jnp.int32)
            return inst.prev_in_group[j], held | ((s >= 0) & (k >= s) & (k <= e))

        first = jnp.where(i < board.cursor, i, inst.prev_in_group[i])
        return jax.lax.while_loop(lambda c: c[0] >= 0, body, (jnp.where(on, first, -1), jnp.zeros(num_steps, bool)))[1]

    hull = (k >= hull_start) & (k <= hull_end)
    held = jnp.where(solid, hull, _when(grow & ~solid, held_rows, jnp.zeros(num_steps, bool)))
    return rect & ~(grow & held)[None, :]


def _load_peak(board: Board, rows) -> jax.Array:
    """int32[R]: the load profile's peak over each rectangle's `rows` (bool[R, T]; 0 where none)."""
    return jnp.max(jnp.where(rows, board.load[None, :], 0), axis=1)


def _word_masks(offset, width, words: int) -> jax.Array:
    """uint32[words]: bits of the columns [offset, offset + width)."""
    base = jnp.arange(words, dtype=jnp.int32) * 32
    lo = jnp.clip(offset - base, 0, 32)
    hi = jnp.clip(offset + width - base, 0, 32)
    # (a shift by 32 or more gives 0 in XLA, so below(32) is all ones)
    below = lambda n: (jnp.uint32(1) << n.astype(jnp.uint32)) - jnp.uint32(1)  # noqa: E731
    return below(hi) & ~below(lo)


def apply(inst: Instance, board: Board, cand: Candidates, action, active) -> tuple[Board, jax.Array]:
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
    is_out = inst.is_output[i]
    lo, hi = jnp.where(is_out, t + 1, c_start), jnp.where(is_out, c_end, c_end + 1)
    flat = jnp.where(is_out, prefix[jnp.minimum(t + 1, prefix.shape[0] - 1)], prefix[jnp.maximum(c_end + 1, 0)] - demand)
    # Rules(copy_supply="early"): an input's copy takes from its start on, so the prefix is flat
    # from its start to the step that completes its demand (the first prefix index reaching it).
    early = inst.copy_early & ~is_out
    from_start = prefix[jnp.clip(c_start, 0, prefix.shape[0] - 1)]
    hi = jnp.where(early, jnp.searchsorted(prefix, from_start + demand, side="left") - 1, hi)
    flat = jnp.where(early, from_start, flat)
    edge = board.edge | jnp.where(copies, _word_masks(c_start, c_end - c_start, board.edge.shape[0]),
                                  jnp.uint32(0))
    if inst.edf:
        supply_prefix, held, starts = supply.edf_taken(board, cand, copies, demand, c_start, c_end)
    else:
        supply_prefix, held, starts = supply.copied(prefix, lo, hi, flat, demand, copies), None, None

    if inst.deferred:  # the steps the move adds to its unit hold `width` more columns each
        grows = _new_rows(inst, board, i, cand.group_placed, cand.hull_start, cand.hull_end, cand.solid,
                          a_start[None], a_end[None])[0] & active & (a_start >= 0)
        cells, load = board.cells, board.load + jnp.where(grows, width, 0)
    else:
        cells = memory.fill(board.cells, a_start, a_end, _word_masks(offset, width, inst.grid_words),
                            active & (a_start >= 0))
        load = board.load

    newer = (a_start >= 0) & (a_end >= cand.latest_end)
    table, bit = inst.table[i], jnp.left_shift(jnp.int32(1), inst.table_bit[i])
    mask = board.table_mask[jnp.maximum(table, 0)]
    reward = jnp.where(active & placed, placement_reward(inst, board, i), jnp.float32(0))
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
        hull_start=put(rec.hull_start, hull_start), hull_end=put(rec.hull_end, hull_end),
        copy_end=None if rec.copy_end is None else put(rec.copy_end, c_end))
    return board.replace(
        cursor=board.cursor + active.astype(jnp.int32),
        ret=board.ret + reward,
        supply_prefix=supply_prefix, held=held, starts=starts,
        edge=edge,
        cells=cells,
        table_mask=board.table_mask.at[jnp.maximum(table, 0)].set(
            jnp.where(active & placed & (table >= 0), mask | bit, mask)),
        records=records,
        open_groups=board.open_groups + step_open(opened_group, cand.group_placed),
        open_pins=board.open_pins + step_open(opened_pin, cand.pinned),
        load=load,
    ), reward
