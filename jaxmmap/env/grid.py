"""The game's memory grid: which cells (step, column) are occupied, with O(T/R) save and restore.

A move reads the columns used anywhere in a span of steps and marks one rectangle (a span of
steps times a run of columns); the Drop-backup saves the grid at a clean cut and restores it.
A plain T x Cw bit grid makes each of these a pass over the whole grid, and under `vmap` a
saved copy means a select of the whole grid on every move. Here:

* Rows are grouped in B blocks of R rows (R a power of two near sqrt(T / 2); the last block is
  padded with rows no step reaches, so that R does not depend on T's factors). A rectangle is
  written into the rows of its first and last block and as a *tag* on each block strictly
  between (a tag holds for every row of its block); each block's *summary* is the OR of its rows
  and its tag, and each *super* summary the OR of G consecutive blocks' summaries. After its R
  rows a block keeps U *sub* summaries, each the OR of S = R / U consecutive rows, so that a
  query reads a fixed few short runs and no loop: in each end block, the S rows around each end
  of its span and the U sub summaries; between them, the G summaries around each end and the
  supers. A batch of games writes with fixed work (the two end blocks whole, every block's tag
  and summary masked: `vmap` of a loop would select every game's grid on every iteration); one
  game on a wide grid writes only the words its rectangle covers (`_fill_window`). A query reads
  O(S + U + G + B / G) rows rather than O(T * Cw) words.
* Block rows (and sub summaries) live on one of two planes. The first write to a block after a
  save goes to the other plane (copy on write of R + U rows), so the saved rows stay where they
  were; a restore flips back the blocks written since the save. Tags and summaries (B x Cw) are
  saved as copies, the supers recomputed from them. Save and restore touch O(B * Cw) words and
  no row.

Everything is a pure function on a fixed-shape `Grid` pytree, `jit`- and `vmap`-able.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct

from jaxmmap.env.batching import alone_or_batched, maybe


@struct.dataclass
class Grid:
    """T steps in B blocks of R rows (B * R >= T: the rows from T on are never written), Cw
    uint32 words per row (bit c % 32 of word c // 32 is column c).

    Attributes:
      planes: uint32[2, B * (R + U), Cw] each block's R rows, then its U sub summaries (the OR of
        S = R / U rows each), on the plane `plane` says.
      plane: int8[B] the plane that holds each block's current rows.
      written: bool[B] the block's rows were written since the last save (the saved rows are on
        the other plane).
      tags: uint32[B, Cw] columns occupied in every row of the block.
      summary: uint32[B, Cw] columns occupied in some row of the block (rows and tag).
      saved_tags, saved_summary: uint32[B, Cw] the tags and summaries at the last save.
      supers: uint32[ceil(B / G), Cw] the OR of the summaries of blocks [G * j, G * j + G).
      steps, block, sub, group: T, R, S and G (static; S = 0: no sub summaries, U = 0, on
        grids of fewer than CHUNKED_FROM steps, which are queried whole).
    """

    planes: jax.Array
    plane: jax.Array
    written: jax.Array
    tags: jax.Array
    summary: jax.Array
    saved_tags: jax.Array
    saved_summary: jax.Array
    supers: jax.Array
    steps: int = struct.field(pytree_node=False, default=0)
    block: int = struct.field(pytree_node=False, default=1)
    sub: int = struct.field(pytree_node=False, default=1)
    group: int = struct.field(pytree_node=False, default=1)


def block_rows(num_steps: int) -> int:
    """R: the power of two with the cheapest move, B = ceil(T / R) summaries and tags + 2R rows
    (a move writes its two end blocks and may tag the blocks between; a save copies the tags
    and summaries). Not a divisor of T: T = 17,000 = 8 x 2,125 would give 2,125 blocks of 8
    rows, and a move would pass over 2 MB of tags and summaries, a third of its time."""
    sizes = [2 ** k for k in range(max(1, num_steps).bit_length())]
    return min(sizes, key=lambda r: (-(-num_steps // r) + 2 * r, r))


def _cheapest_run(n: int) -> int:
    """The power of two q <= n that reads fewest rows as 2 runs of q and one of ceil(n / q)."""
    sizes = [2 ** k for k in range(max(1, n).bit_length())]
    return min(sizes, key=lambda q: (2 * q + -(-n // q), q))


def init(num_steps: int, words: int) -> Grid:
    """An empty grid of `num_steps` rows of `words` words."""
    r = block_rows(num_steps)
    blocks = -(-num_steps // r)
    sub, group = (_cheapest_run(r) if num_steps >= CHUNKED_FROM else 0), _cheapest_run(blocks)
    zeros = jnp.zeros((blocks, words), jnp.uint32)
    return Grid(planes=jnp.zeros((2, blocks * (r + (r // sub if sub else 0)), words), jnp.uint32),
                plane=jnp.zeros(blocks, jnp.int8),
                written=jnp.zeros(blocks, bool), tags=zeros, summary=zeros, saved_tags=zeros,
                saved_summary=zeros, supers=_supers(zeros, group), steps=num_steps, block=r, sub=sub, group=group)


def _supers(summary, group: int) -> jax.Array:
    """uint32[ceil(B / G), Cw]: the OR of each G blocks' summaries."""
    b, words = summary.shape
    padded = jnp.zeros((-(-b // group) * group, words), jnp.uint32).at[:b].set(summary)
    return jax.lax.reduce(padded.reshape(-1, group, words), jnp.uint32(0), jax.lax.bitwise_or, (1,))


def _shape(grid: Grid) -> tuple[int, int, int]:
    """(T, B, R)."""
    return grid.steps, grid.plane.shape[0], grid.block


def _region(grid: Grid) -> int:
    """R + U: a block's rows on a plane, with its sub summaries."""
    return grid.block + (grid.block // grid.sub if grid.sub else 0)


def _block(grid: Grid, k) -> jax.Array:
    """uint32[R + U, Cw]: the current rows of block k (without its tag), then its sub summaries."""
    q = _region(grid)
    start = (grid.plane[k].astype(jnp.int32), k * q, jnp.int32(0))
    return jax.lax.dynamic_slice(grid.planes, start, (1, q, grid.planes.shape[2]))[0]


def _written_rows(grid: Grid, k, lo, hi) -> jax.Array:
    """bool[R + U]: which of block k's rows and sub summaries a rectangle over steps [lo, hi]
    writes (a sub summary when one of its rows is)."""
    r, s = grid.block, grid.sub
    i = jnp.arange(_region(grid))
    step = k * r + i
    sub_lo = k * r + (i - r) * s
    return jnp.where(i < r, (step >= lo) & (step <= hi), (sub_lo <= hi) & (sub_lo + s - 1 >= lo))


def _span(grid: Grid, start, end):
    """The span [start, end] clipped to the grid, whether it is empty, and its end blocks."""
    t, b, r = _shape(grid)
    lo, hi = jnp.maximum(start, 0), jnp.minimum(end, t - 1)
    empty = lo > hi
    return lo, hi, empty, jnp.clip(lo // r, 0, b - 1), jnp.clip(hi // r, 0, b - 1)


#: Rows (or block summaries) a batch's `used` reads at a time, and block tags and summaries a
#: single game's `fill` writes at a time between its end blocks.
CHUNK = 8
#: Grids of fewer steps are queried whole (`_used_blocks`) and keep no sub summaries (never
#: read there, they would only add rows to every fill): there two blocks and the summaries are a
#: few KB, and reading them in runs only adds to the compile and to the move.
CHUNKED_FROM = 2048


def _used_blocks(grid: Grid, start, end) -> jax.Array:
    """`used` with fixed work: the two end blocks' rows whole, every block's summary masked."""
    _, b, r = _shape(grid)
    lo, hi, empty, first, last = _span(grid, start, end)
    k = jnp.arange(b)
    inside = (k > first) & (k < last)
    words = jax.lax.reduce(jnp.where(inside[:, None], grid.summary, jnp.uint32(0)), jnp.uint32(0),
                           jax.lax.bitwise_or, (0,))
    ends = jnp.stack([first, last])  # the same block twice when the span is in one: harmless
    steps = ends[:, None] * r + jnp.arange(r)
    rows = jax.vmap(lambda kb: _block(grid, kb)[:r])(ends) | grid.tags[ends][:, None, :]
    rows = jnp.where(((steps >= lo) & (steps <= hi))[:, :, None], rows, jnp.uint32(0))
    words = words | jax.lax.reduce(rows, jnp.uint32(0), jax.lax.bitwise_or, (0, 1))
    return jnp.where(empty, jnp.uint32(0), words)


def used(grid: Grid, start, end) -> jax.Array:
    """uint32[Cw]: the columns occupied in some step of [start, end] (none if the span is empty):
    the span's rows in its two end blocks, their tags, and the summaries of the blocks between.
    One game (or a batch of one): `_used_runs`, nine short reads and no loop; a batch:
    `_used_chunks`, CHUNK rows at a time (under `vmap` the runs' slices are gathers, and the
    loop reads less). (A grid of fewer than CHUNKED_FROM steps, made without sub summaries:
    whole.)"""
    if not grid.sub:
        return _used_blocks(grid, start, end)
    return _used_alone_or_batched(grid, start, end)


def _used_runs(grid: Grid, start, end) -> jax.Array:
    """`used` in nine short reads: in each end block, the S rows around each end of its part of
    the span and the U sub summaries (those of the whole subs between); between the end blocks,
    the G summaries around each end and the supers (those of the whole groups between): no loop
    and no gathers, for a game alone (`benchmarks/greedy_game.py`)."""
    _, b, r = _shape(grid)
    lo, hi, empty, first, last = _span(grid, start, end)
    q, s, g = _region(grid), grid.sub, grid.group
    plane = grid.plane.astype(jnp.int32)
    parts = []
    for k, a, z in ((first, lo, jnp.minimum(hi, first * r + r - 1)),
                    (last, jnp.maximum(lo, last * r), jnp.where(last > first, hi, -1))):
        a, z = a - k * r, z - k * r  # (inside the block; a > z: nothing)
        parts += [_run(grid.planes, plane[k], k * q, (a // s) * s, s, a, z),
                  _run(grid.planes, plane[k], k * q, (z // s) * s, s, a, z),
                  _run(grid.planes, plane[k], k * q + r, jnp.int32(0), r // s, a // s + 1, z // s - 1)]
    a, z = first + 1, last - 1
    parts += [_run(grid.summary[None], 0, 0, (a // g) * g, g, a, z),
              _run(grid.summary[None], 0, 0, (z // g) * g, g, a, z),
              _run(grid.supers[None], 0, 0, jnp.int32(0), grid.supers.shape[0], a // g + 1, z // g - 1)]
    words = jax.lax.reduce(jnp.concatenate(parts), jnp.uint32(0), jax.lax.bitwise_or, (0,))
    return jnp.where(empty, jnp.uint32(0), words | grid.tags[first] | grid.tags[last])


def _used_chunks(grid: Grid, start, end) -> jax.Array:
    """`used` CHUNK rows (summaries) at a time: the three runs, each read inside its block (its
    array), in one loop (under `vmap` it carries only the accumulator). O(span / CHUNK) reads."""
    _, b, r = _shape(grid)
    lo, hi, empty, first, last = _span(grid, start, end)
    plane = grid.plane.astype(jnp.int32)
    u = _region(grid) - r
    # (array, plane, first step, last step (below the first: none), the bound's first step, its
    # steps, rows a read, the rows before the step's on the plane)
    runs = ((grid.planes, plane[first], lo, jnp.minimum(hi, first * r + r - 1), first * r, r, min(CHUNK, r), first * u),
            (grid.planes, plane[last], jnp.maximum(lo, last * r), jnp.where(last > first, hi, -1), last * r, r,
             min(CHUNK, r), last * u),
            (grid.summary[None], jnp.int32(0), first + 1, last - 1, jnp.int32(0), b, min(CHUNK, b), 0))

    def read(it, acc):
        for x, p, a, z, bound, rows, size, shift in runs:
            at = a + it * size
            s = jnp.maximum(jnp.minimum(at, bound + rows - size), bound)
            chunk = jax.lax.dynamic_slice(x, (p, s + shift, jnp.int32(0)), (1, size, x.shape[2]))[0]
            i = s + jnp.arange(size)
            keep = ((i >= at) & (i <= z))[:, None]
            acc = acc | jax.lax.reduce(jnp.where(keep, chunk, jnp.uint32(0)), jnp.uint32(0), jax.lax.bitwise_or, (0,))
        return it + 1, acc

    def more(c):
        return jnp.any(jnp.stack([a + c[0] * size <= z for _, _, a, z, _, _, size, _ in runs]))

    words = jax.lax.while_loop(more, lambda c: read(*c), (jnp.int32(0), jnp.zeros(grid.planes.shape[2], jnp.uint32)))[1]
    return jnp.where(empty, jnp.uint32(0), words | grid.tags[first] | grid.tags[last])


_used_alone_or_batched = alone_or_batched(_used_runs, _used_chunks)


def _run(x, p, base, at, size: int, keep_lo, keep_hi) -> jax.Array:
    """uint32[size, Cw]: rows base + at .. base + at + size - 1 of x[p] (the start moved back to
    fit, if it must), zero outside rows base + [keep_lo, keep_hi]."""
    s = jnp.clip(base + at, 0, x.shape[1] - size)
    rows = jax.lax.dynamic_slice(x, (p, s, jnp.int32(0)), (1, size, x.shape[2]))[0]
    i = s - base + jnp.arange(size)
    return jnp.where(((i >= keep_lo) & (i <= keep_hi))[:, None], rows, jnp.uint32(0))


#: Words a single game's `fill` writes at a time (`_fill_window`); grids of at most this many
#: words are filled by `_fill_blocks`, which costs less there.
WINDOW = 8


def fill(grid: Grid, start, end, mask, active) -> Grid:
    """Marks the columns of `mask` (uint32[Cw]) occupied in steps [start, end], if `active`. One
    game (or a batch of one) on a grid of more than WINDOW words: `_fill_window`; a batch:
    `_fill_blocks` on every game at once."""
    if grid.planes.shape[2] <= WINDOW:
        return _fill_blocks(grid, start, end, mask, active)
    return _fill_one_game(grid, start, end, mask, active)


def _fill_blocks(grid: Grid, start, end, mask, active) -> Grid:
    """`fill` with fixed work, for batches of games: the two end blocks' rows whole, every
    block's tag and summary masked (a loop's length would differ between games, and under `vmap`
    every iteration would select every game's whole grid)."""
    _, b, r = _shape(grid)
    q = _region(grid)
    lo, hi, empty, first, last = _span(grid, start, end)
    on = active & ~empty
    k = jnp.arange(b)
    inside = (on & (k > first) & (k < last))[:, None]
    tags, summary = grid.tags, grid.summary
    tags = jnp.where(inside, tags | mask, tags)
    summary = jnp.where(inside, summary | mask, summary)
    # The two end blocks (one, when the span is in one block) gain the mask in their rows. The
    # first write since the save goes to the other plane, later ones to the current plane; a
    # block not written gets its own rows back, on its current plane.
    ends = jnp.stack([first, last])
    same = last == first
    write = on & jnp.stack([jnp.bool_(True), ~same])
    rows = jax.vmap(lambda kb: _block(grid, kb))(ends)
    keep = jax.vmap(lambda kb: _written_rows(grid, kb, lo, hi))(ends) & on
    rows = jnp.where(keep[:, :, None], rows | mask, rows)
    target = jnp.where(write & ~grid.written[ends], 1 - grid.plane[ends], grid.plane[ends]).astype(jnp.int32)
    rows = rows.at[1].set(jnp.where(same, rows[0], rows[1]))  # one block: the same write twice
    target = target.at[1].set(jnp.where(same, target[0], target[1]))
    planes = grid.planes
    for e in range(2):
        planes = jax.lax.dynamic_update_slice(planes, rows[e][None], (target[e], ends[e] * q, jnp.int32(0)))
    at = jnp.where(write, ends, b)  # out of range: no write
    plane = grid.plane.at[at].set(target.astype(jnp.int8), mode="drop")
    written = grid.written.at[at].set(True, mode="drop")
    summary = summary.at[at].set(summary[ends] | mask, mode="drop")
    return grid.replace(planes=planes, plane=plane, written=written, tags=tags, summary=summary,
                        supers=_or_supers(grid.supers, grid.group, first, last, mask, on))


def _or_supers(supers, group: int, first, last, mask, on) -> jax.Array:
    """`supers` with `mask` ORed into the supers of blocks first..last, where `on`."""
    j = jnp.arange(supers.shape[0])[:, None]
    return jnp.where(on & (j >= first // group) & (j <= last // group), supers | mask, supers)


def _or_blocks(tags, summary, first, last, mask, w):
    """The tags and summaries of blocks first..last with `mask` (uint32[W]) ORed into their
    words [w, w + W), CHUNK blocks at a time."""
    b = tags.shape[0]
    size = min(CHUNK, b)

    def body(c):
        it, tags, summary = c
        at = first + it * size
        s = jnp.clip(at, 0, b - size)
        k = (s + jnp.arange(size))[:, None]
        inside = (k >= at) & (k <= last)
        out = []
        for x in (tags, summary):
            chunk = jax.lax.dynamic_slice(x, (s, w), (size, mask.shape[0]))
            out.append(jax.lax.dynamic_update_slice(x, jnp.where(inside, chunk | mask, chunk), (s, w)))
        return it + 1, *out

    return jax.lax.while_loop(lambda c: first + c[0] * size <= last, body, (jnp.int32(0), tags, summary))[1:]


def _fill_window(grid: Grid, start, end, mask, active) -> Grid:
    """`fill` of one game on a wide grid: the two end blocks' rows, tags and summaries are
    written only in the words the mask covers, WINDOW words at a time (one window mostly), and a
    first write to a block since the save copies its rows to the other plane first (rare: a
    greedy game of 50,000 buffers saves a few times in 200,000 moves). About 3x faster than
    passing over the end blocks whole at 4,096 columns (`benchmarks/greedy_game.py`)."""
    _, b, r = _shape(grid)
    q = _region(grid)
    words = grid.planes.shape[2]
    win = min(WINDOW, words)
    lo, hi, empty, first, last = _span(grid, start, end)
    nz = mask != 0
    on = active & ~empty & jnp.any(nz)
    w_first = jnp.argmax(nz).astype(jnp.int32)
    w_last = (words - 1 - jnp.argmax(nz[::-1])).astype(jnp.int32)
    ends = jnp.stack([first, last])
    same = last == first
    write = on & jnp.stack([jnp.bool_(True), ~same])
    fresh = write & ~grid.written[ends]
    target = jnp.where(fresh, 1 - grid.plane[ends], grid.plane[ends]).astype(jnp.int32)
    src = grid.plane[ends].astype(jnp.int32)
    rows_to = target.at[1].set(jnp.where(same, target[0], target[1]))  # one block: both writes on its plane
    keep = (jax.vmap(lambda kb: _written_rows(grid, kb, lo, hi))(ends) & on)[:, :, None]  # (every window's)

    # (Both end blocks are read by one gather, before either is written. Slices read one by one
    # are fused by XLA into the writes, and then read the planes as they were before the first
    # write: the planes are copied whole, megabytes a move on large programs.)
    def copy(planes):  # each fresh end block's rows onto its other plane (others onto themselves)
        rows = jax.vmap(lambda p, kb: jax.lax.dynamic_slice(planes, (p, kb * q, jnp.int32(0)), (1, q, words)))(src, ends)
        for e in range(2):
            planes = jax.lax.dynamic_update_slice(planes, rows[e], (jnp.where(fresh[e], target[e], src[e]),
                                                                    ends[e] * q, jnp.int32(0)))
        return planes

    planes = maybe(jnp.any(fresh), copy, grid.planes)

    def window(planes, tags, summary, w):
        """The rectangle's words [w, w + W) written: the end blocks' rows, the tags and summaries."""
        m = jax.lax.dynamic_slice(mask, (w,), (win,))
        slabs = jax.vmap(lambda p, kb: jax.lax.dynamic_slice(planes, (p, kb * q, w), (1, q, win))[0])(rows_to, ends)
        slabs = jnp.where(keep, slabs | m, slabs)
        slabs = slabs.at[1].set(jnp.where(same, slabs[0], slabs[1]))  # one block: the same write twice
        for e in range(2):
            planes = jax.lax.dynamic_update_slice(planes, slabs[e][None], (rows_to[e], ends[e] * q, w))
        sums = jax.vmap(lambda kb: jax.lax.dynamic_slice(summary, (kb, w), (1, win))[0])(ends)
        sums = jnp.where(on, sums | m, sums)
        for e in range(2):
            summary = jax.lax.dynamic_update_slice(summary, sums[e][None], (ends[e], w))
        return planes, tags, summary

    w0 = jnp.minimum(w_first, words - win)
    planes, tags, summary = window(planes, grid.tags, grid.summary, w0)

    def rest(c):  # the mask's other words, and the blocks strictly between the end blocks (its
        # windows start again at the first: ORing a word twice is harmless, and one loop is simpler)
        def body(c):
            it, planes, tags, summary = c
            w = jnp.minimum(w_first + it * win, words - win)
            planes, tags, summary = window(planes, tags, summary, w)
            tags, summary = _or_blocks(tags, summary, first + 1, last - 1, jax.lax.dynamic_slice(mask, (w,), (win,)), w)
            return it + 1, planes, tags, summary

        return jax.lax.while_loop(lambda c: w_first + c[0] * win <= w_last, body, (jnp.int32(0), *c))[1:]

    planes, tags, summary = maybe(on & ((w_last >= w0 + win) | (last - first > 1)), rest, (planes, tags, summary))
    at = jnp.where(write, ends, b)  # out of range: no write
    plane = grid.plane.at[at].set(target.astype(jnp.int8), mode="drop")
    written = grid.written.at[at].set(True, mode="drop")
    return grid.replace(planes=planes, plane=plane, written=written, tags=tags, summary=summary,
                        supers=_or_supers(grid.supers, grid.group, first, last, mask, on))


_fill_one_game = alone_or_batched(_fill_window, _fill_blocks)


def save(grid: Grid) -> Grid:
    """The current grid becomes the saved one."""
    return grid.replace(written=jnp.zeros_like(grid.written), saved_tags=grid.tags,
                        saved_summary=grid.summary)


def restore(grid: Grid) -> Grid:
    """Back to the grid at the last save (which stays saved)."""
    return grid.replace(plane=grid.plane ^ grid.written.astype(jnp.int8),
                        written=jnp.zeros_like(grid.written), tags=grid.saved_tags,
                        summary=grid.saved_summary, supers=_supers(grid.saved_summary, grid.group))


def _current(grid: Grid) -> jax.Array:
    """uint32[B, R + U, Cw]: every block's current rows and sub summaries."""
    _, b, _ = _shape(grid)
    return grid.planes.reshape(2, b, _region(grid), -1)[grid.plane.astype(jnp.int32), jnp.arange(b)]


def copy_out(grid: Grid) -> tuple[jax.Array, jax.Array, jax.Array]:
    """The current grid as plain arrays: rows uint32[B * (R + U), Cw] (without tags, with the sub
    summaries), tags and summary uint32[B, Cw]. O(T * Cw): for checkpoints taken now and then,
    not on every move."""
    return _current(grid).reshape(-1, grid.planes.shape[2]), grid.tags, grid.summary


def copy_in(grid: Grid, rows, tags, summary) -> Grid:
    """The grid of `copy_out`, with the last save kept: every block takes the rows on the plane
    that does not hold its saved rows (as a first write after the save would)."""
    _, b, _ = _shape(grid)
    q = _region(grid)
    target = jnp.where(grid.written, grid.plane, 1 - grid.plane).astype(jnp.int32)
    planes = grid.planes.reshape(2, b, q, -1).at[target, jnp.arange(b)].set(rows.reshape(b, q, -1))
    return grid.replace(planes=planes.reshape(2, b * q, -1), plane=target.astype(jnp.int8),
                        written=jnp.ones_like(grid.written), tags=tags, summary=summary,
                        supers=_supers(summary, grid.group))


def rows(grid: Grid) -> jax.Array:
    """uint32[T, Cw]: the whole grid, row by row."""
    t, b, r = _shape(grid)
    return (_current(grid)[:, :r] | grid.tags[:, None, :]).reshape(b * r, -1)[:t]


def row(grid: Grid, step) -> jax.Array:
    """uint32[Cw]: the row of one step (clipped to the grid)."""
    t, _, r = _shape(grid)
    step = jnp.clip(step, 0, t - 1)
    k = step // r
    start = (grid.plane[k].astype(jnp.int32), k * _region(grid) + step % r, jnp.int32(0))
    return jax.lax.dynamic_slice(grid.planes, start, (1, 1, grid.planes.shape[2]))[0, 0] | grid.tags[k]
