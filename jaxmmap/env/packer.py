"""The packer of `Rules(placement="deferred")` (docs/game.md, "Deferred placement"): when the game
ends, each *unit* (a placed alias group, or a tensor's allocations from one Copy or pin on, joined
by NoCopy) is placed at one offset over the steps of its allocations, in six packings of the memory grid:
at the best-fit offset in five orders (widest first, then the longest hull, the earliest, the first
buffer; the order of play; the units the widest-first packing left out first, then the rest as
before; the longest hull first, then the widest, the earliest; the largest hull area, width times
the steps from its first to its last, first, then the earliest), and widest first at the lowest
offset that fits. The best is kept (a higher return, or within a relative 1e-5 more units placed;
ties: the earlier packing; once one has placed every unit, the later ones are skipped). A unit
that fits nowhere is dropped with all its buffers. Internals of
`jaxmmap.env.game.step`; `jaxmmap.env.reference` is the specification, and the tests compare them.

Written here, not taken from a library: it runs inside the jitted game, on the game's own grid.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxmmap.core.problem import DROP
from jaxmmap.env import grid as memory
from jaxmmap.env.backup import one_game_at_a_time
from jaxmmap.env.batching import maybe
from jaxmmap.env.instance import Instance
from jaxmmap.env.moves import _word_masks
from jaxmmap.env.types import _ACTION, Board

#: The packings `pack` tries, in order (the earlier wins a tie).
PACKINGS = 6


def best_fit(used: jax.Array, width, lowest=False) -> jax.Array:
    """The lowest offset of the smallest run of free columns (bits of `used`, uint32[Cw], clear)
    that holds `width` (with `lowest`: of the lowest run that holds it), or -1; 0 for width 0."""
    words = used.shape[0]
    columns = words * 32
    bits = (used[:, None] >> jnp.arange(32, dtype=jnp.uint32)[None, :]) & jnp.uint32(1)
    free = (bits == 0).reshape(columns)
    k = jnp.arange(columns, dtype=jnp.int32)
    next_used = jax.lax.cummin(jnp.where(free, columns, k), reverse=True)
    run = next_used - k  # free columns from k on
    starts = free & jnp.concatenate([jnp.ones(1, bool), ~free[:-1]])
    fits = starts & (run >= width)
    score = jnp.where(fits, jnp.where(lowest, k, run * (columns + 1) + k), jnp.iinfo(jnp.int32).max)
    at = jnp.argmin(score).astype(jnp.int32)
    return jnp.where(width <= 0, 0, jnp.where(jnp.any(fits), at, -1)).astype(jnp.int32)


def _return(inst: Instance, keep: jax.Array) -> tuple[jax.Array, jax.Array]:
    """The return (float32) of the buffers `keep` places, and the latency tables' masks."""
    k = inst.gain.shape[0]
    tabled = keep & (inst.table >= 0)
    masks = jnp.zeros(k, jnp.int32).at[jnp.where(tabled, inst.table, k)].add(
        jnp.left_shift(jnp.int32(1), inst.table_bit), mode="drop")
    static = jnp.sum(jnp.where(keep & (inst.table < 0), inst.benefit, 0.0))
    return static + jnp.sum(inst.gain[jnp.arange(k), masks]), masks


def dropping_gain_bound(inst: Instance) -> jax.Array:
    """float32[]: the most that leaving placed units out can add to a game's return: 0 where no
    buffer's static benefit is negative and every latency table gains from each member it adds
    (the suite's programs); else the negative benefits and the non-monotone tables' spans. So a
    game's packed return is at most its return before packing plus this."""
    k = inst.gain.shape[0]
    bits = jnp.zeros(k, jnp.int32).at[jnp.where(inst.table >= 0, inst.table, k)].max(inst.table_bit + 1, mode="drop")
    masks = jnp.arange(inst.gain.shape[1], dtype=jnp.int32)
    valid = masks[None, :] < jnp.left_shift(1, bits)[:, None]  # [K, M] the masks of the table's members
    monotone = jnp.ones(k, bool)
    for bit in range(max(int(inst.gain.shape[1]).bit_length() - 1, 0)):
        more = masks | (1 << bit)
        monotone &= jnp.all(~valid | (bit >= bits)[:, None] | (inst.gain[:, more] >= inst.gain), axis=1)
    span = jnp.max(jnp.where(valid, inst.gain, -jnp.inf), axis=1) - jnp.min(jnp.where(valid, inst.gain, jnp.inf), axis=1)
    spans = jnp.sum(jnp.where(monotone | (bits == 0), 0.0, span))
    return (jnp.sum(jnp.maximum(-inst.benefit, 0.0)) + spans).astype(jnp.float32)


def _pack_order(inst: Instance, order, count, unit, start, end, has, grid: memory.Grid, lowest=False, above=None):
    """Best fit (with `lowest`: the lowest fit) of the first `count` units of `order`, each over
    the steps of its allocations (buffers with `has`, of `unit`, over [start, end]): (grid, column
    per unit id, -1 where it did not fit, whether it stopped early). With `above` (the return of
    every unit placed, its tables' masks, a floor): it stops as soon as what the units left out
    take from that return puts it below the floor (each unit's allocated buffers counted)."""
    n = inst.width.shape[0]
    ids = jnp.arange(n, dtype=jnp.int32)
    tail = _word_masks(inst.columns, inst.grid_words * 32 - inst.columns, inst.grid_words)
    rank = jnp.zeros(n, jnp.int32).at[order].set(ids)  # each unit's place in `order`
    key = jnp.where(has, rank[jnp.minimum(unit, n - 1)], n)
    allocs = jnp.lexsort((ids, key))  # the allocations, unit by unit in `order`
    first, last = (jnp.searchsorted(key[allocs], ids, side=side).astype(jnp.int32) for side in ("left", "right"))

    def over(k, fn, init):  # fn(allocation's buffer, carry) over the allocations of the k-th unit
        return jax.lax.fori_loop(first[k], last[k], lambda j, c: fn(allocs[j], c), init)

    def body(carry):
        k, grid, column = carry[:3]
        u = order[k]
        width = inst.width[u]
        used = over(k, lambda a, used: used | memory.used(grid, start[a], end[a]), tail)
        at = best_fit(used, width, lowest)
        mask, ok = _word_masks(at, width, inst.grid_words), (at >= 0) & (width > 0)
        grid = over(k, lambda a, grid: memory.fill(grid, start[a], end[a], mask, ok), grid)
        left = carry[3:]
        if above is not None:  # (what leaving the unit out takes: its buffers' benefits, its tables' gains)
            left = jax.lax.cond(at >= 0, lambda c: c, lambda c: over(k, lambda a, c: _left_out(inst, a, *c), c), left)
        return k + 1, grid, column.at[u].set(at), *left

    def cond(carry):
        return (carry[0] < count) & (True if above is None else above[0] - carry[3] >= above[2])

    start_carry = (jnp.int32(0), grid, jnp.full(n, -1, jnp.int32))
    if above is not None:
        start_carry += (jnp.float32(0), above[1])
    k, grid, column, *_ = jax.lax.while_loop(cond, body, start_carry)
    return grid, column, k < count


def _left_out(inst: Instance, a, loss, masks):
    """(loss, masks) once buffer `a` is left out: its static benefit, or what its table loses."""
    t = inst.table[a]
    k = jnp.maximum(t, 0)
    old = masks[k]
    new = jnp.where(t >= 0, old & ~jnp.left_shift(jnp.int32(1), inst.table_bit[a]), old)
    return loss + jnp.where(t >= 0, inst.gain[k, old] - inst.gain[k, new], inst.benefit[a]), masks.at[k].set(new)


def pack(inst: Instance, board: Board, floor: jax.Array | None = None) -> Board:
    """The finished game's board with its units placed (offsets in columns, the grid filled), the
    units that fit nowhere dropped, and its return recomputed. With `floor` (`game.step`'s
    `pack_floor`): where the return with every unit placed is below it, no packing is made and
    the return is -inf; else every packing but the first (whose left-out units order the third)
    stops as soon as the units it left out put it below the floor, and then never wins. The
    result is the same wherever the packed return is at or above the floor by more than the
    packings' tie tolerance (below, it may be another packing's, or -inf)."""
    n = inst.width.shape[0]
    rec = board.records
    ids = jnp.arange(n, dtype=jnp.int32)
    placed = _placed(board)
    unit = jnp.where(placed, rec.offset.astype(jnp.int32), n)
    start, end = rec.alloc_start.astype(jnp.int32), rec.alloc_end.astype(jnp.int32)
    has = placed & (start >= 0)
    at = jnp.where(has, unit, n)
    hull_start = jnp.full(n, 2 ** 30, jnp.int32).at[at].min(start, mode="drop")
    hull_end = jnp.full(n, -1, jnp.int32).at[at].max(end, mode="drop")
    is_unit = placed & (unit == ids)
    count = jnp.sum(is_unit).astype(jnp.int32)
    widest = (ids, hull_start, hull_start - hull_end, -inst.width)  # lexsort: the last key first
    longest = (ids, hull_start, -inst.width, hull_start - hull_end)
    area = inst.width.astype(jnp.float32) * (hull_end - hull_start + 1).astype(jnp.float32)

    above = None if floor is None else _return(inst, placed)  # (every unit placed: the most a packing returns)
    below = False if floor is None else above[0] < floor  # (then no packing is made)

    def packing(order, lowest=False, first=True):
        limit = None if above is None else (*above, jnp.where(first, -jnp.inf, floor))
        grid, column, stopped = _pack_order(inst, order, count, unit, start, end, has, board.cells, lowest, limit)
        keep = placed & (column[jnp.minimum(unit, n - 1)] >= 0)
        ret, masks = _return(inst, keep)
        # (a packing that stopped never wins, not even a tie by the units it placed)
        return (jnp.where(stopped, -jnp.inf, ret), masks, grid, column, keep,
                jnp.where(stopped, -1, jnp.sum(is_unit & (column >= 0))))

    def better(best, other):  # `reference.better_packing`: a higher return, or within 1e-5 more units placed
        tol = 1e-5 * (jnp.abs(best[0]) + jnp.abs(other[0])) + 1e-7
        return (other[0] > best[0] + tol) | ((jnp.abs(other[0] - best[0]) <= tol) & (other[5] > best[5]))

    # the six packings are one loop over their orders (one body to compile, not six); the third
    # order puts first what the first packing left out
    by_width = jnp.lexsort((*widest, ~is_unit))
    orders = jnp.stack([by_width, jnp.lexsort((ids, ~is_unit)), by_width, jnp.lexsort((*longest, ~is_unit)),
                        jnp.lexsort((ids, hull_start, -area, ~is_unit)), by_width])
    lowest = jnp.arange(PACKINGS) == PACKINGS - 1

    def one(k, carry):
        best, left_out = carry

        def packed():
            order = jax.lax.cond(k == 2, lambda: jnp.lexsort((*widest, ~left_out, ~is_unit)), lambda: orders[k])
            other = packing(order, lowest[k], k == 0)
            take = (k == 0) | better(best, other)
            return jax.tree.map(lambda a, b: jnp.where(take, b, a), best, other), jnp.where(k == 0, other[3] < 0,
                                                                                               left_out)

        # once a packing has placed every unit, no later one returns more or places more (and the
        # earlier wins a tie): the rest are skipped, a game alone (a batch's `cond` runs both)
        return jax.lax.cond(((k > 0) & (best[5] == count)) | below, lambda: (best, left_out), packed)

    shapes = jax.eval_shape(packing, by_width)
    empty = jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), shapes)
    best, _ = jax.lax.fori_loop(0, PACKINGS, one, (empty, jnp.zeros(n, bool)))
    ret, masks, grid, column, keep, _ = best
    ret = jnp.where(below, -jnp.inf, ret)
    lost = placed & ~keep
    dtype = rec.offset.dtype
    records = rec.replace(
        bits=jnp.where(lost, (rec.bits & ~_ACTION) | DROP, rec.bits).astype(rec.bits.dtype),
        offset=jnp.where(keep, column[jnp.minimum(unit, n - 1)], jnp.where(lost, -1, rec.offset)).astype(dtype),
        alloc_start=jnp.where(lost, -1, rec.alloc_start).astype(dtype),
        alloc_end=jnp.where(lost, -1, rec.alloc_end).astype(dtype))
    return board.replace(records=records, cells=grid, ret=ret, table_mask=masks)


def pack_finished(inst: Instance, board: Board, on, floor: jax.Array | None = None) -> Board:
    """`pack` (with its `floor`, if any) where `on` (the move that ended the game); under `vmap`,
    only the games that end now pack (`backup.one_game_at_a_time`)."""
    return _pack_finished(board, (inst, floor), on)


@one_game_at_a_time(lambda carry, consts: consts[0].width.shape[-1])
def _pack_finished(board, consts, on):
    inst, floor = consts
    return maybe(on, lambda b: pack(inst, b, floor), board)


def _placed(board: Board) -> jax.Array:
    """bool[N]: the buffers a finished game serves from fast memory."""
    ids = jnp.arange(board.records.bits.shape[-1], dtype=jnp.int32)
    return (ids < board.cursor) & ((board.records.bits & _ACTION).astype(jnp.int32) != DROP)
