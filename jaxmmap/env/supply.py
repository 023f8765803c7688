"""The copy supply: the remaining supply's prefix sums after a copy (`copied`), and under
`Rules(copy_supply="edf")` what a copy may take over at its last step from the copy that spans it
(`held_over`, `taken_over`), how late an input's copy may start (`input_start`) and how soon an
output's may end (`edf_window`) for it, and what the move does to the supply (`edf_taken`).
Internals of `jaxmmap.env.moves`; docs/game.md, "Copy supply".
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxmmap.env import grid as memory
from jaxmmap.env.batching import alone_or_batched, maybe
from jaxmmap.env.instance import Instance
from jaxmmap.env.types import Board, Candidates


def input_start(inst: Instance, board: Board, i, need, start):
    """An input's copy (buffer `i`) with what it may take over at its last step, t - 1: the
    supply it still needs of the steps before (`need`: a prefix sum to reach) and its latest start
    (`start` without; the same where it copies nothing)."""
    t, demand, prefix = inst.target[i], inst.demand[i], board.supply_prefix
    need = need + jnp.where(demand > 0, held_over(inst, board, t - 1)[0], 0)
    return need, jnp.where(demand > 0, jnp.minimum(jnp.searchsorted(prefix, need, side="right") - 1, t - 1), start)


def edf_window(inst: Instance, board: Board, i, end, ok, c_start, c_end):
    """An output's copy (buffer `i`, starting at t + 1; `end` the earliest step its own supply
    covers, the number of steps if none) may end sooner, on the first edge after t + 1, where that
    step's take-over completes it (no step before it has an edge to take over, and an end after
    it would cover it). Returns the output's end, whether it is legal (`ok`: with `end`), the
    buffer's copy end (`c_end`: an input's, kept) and (the ticks its copy takes over, the last step
    of the copy it takes them from)."""
    t, demand, prefix, is_out = inst.target[i], inst.demand[i], board.supply_prefix, inst.is_output[i]
    first = _first_bit(board.edge, t + 1, True)
    have = prefix[jnp.minimum(first + 1, inst.supply.shape[0])] - prefix[t + 1]
    sooner = is_out & (first < end) & (have + held_over(inst, board, first)[0] >= demand)
    end = jnp.where(sooner, first, end)
    c_end = jnp.where(is_out, end, c_end)
    return end, sooner & (first <= inst.live_end[i]) | ok, c_end, taken_over(inst, board, demand, c_start, c_end)


def taken_over(inst: Instance, board: Board, demand, c_start, c_end):
    """`Rules(copy_supply="edf")`: what a copy `[c_start, c_end]` of `demand` ticks takes over at
    its last step (what its own steps lack) and the last step of the copy it takes it from."""
    prefix = board.supply_prefix
    own = prefix[jnp.clip(c_end + 1, 0, prefix.shape[0] - 1)] - prefix[jnp.clip(c_start, 0, prefix.shape[0] - 1)]
    return jnp.maximum(demand - own, 0), held_over(inst, board, c_end)[1]


def held_over(inst: Instance, board: Board, k):
    """`Rules(copy_supply="edf")`: what a copy that ends at step `k` may take over there, from
    the copy that spans steps k and k+1 (a later deadline): the ticks that copy took at k, as far
    as the steps after k in its own window have supply left to give it instead. Returns (those
    ticks, int32[]; that copy's last step, or -1 where no copy spans k and k+1)."""
    num_steps = inst.supply.shape[0]
    at = jnp.clip(k, 0, num_steps - 1)
    spans = (k >= 0) & (k < num_steps) & (((board.edge[at // 32] >> (at % 32).astype(jnp.uint32)) & 1) == 1)
    # its last step: its first edge left uncovered, or the next copy's start, whichever is first
    end = jnp.minimum(jnp.minimum(_first_bit(board.edge, at, False), _first_bit(board.starts, at + 1, True)),
                      num_steps - 1)
    prefix = board.supply_prefix
    ticks = jnp.minimum(board.held[at], prefix[end + 1] - prefix[at + 1])
    return jnp.where(spans, ticks, 0), jnp.where(spans, end, -1)


def _first_bit(words, k, value: bool) -> jax.Array:
    """The first index >= k whose bit in `words` (uint32, bit i % 32 of word i // 32) is `value`;
    32 * len(words) if none."""
    n = words.shape[0]
    k = jnp.maximum(k, 0)
    w = words if value else ~words
    index = jnp.arange(n)
    low = jnp.left_shift(jnp.uint32(0xFFFFFFFF), (k % 32).astype(jnp.uint32))
    w = w & jnp.where(index < k // 32, jnp.uint32(0), jnp.where(index == k // 32, low, jnp.uint32(0xFFFFFFFF)))
    some = w != 0
    word = w[jnp.argmax(some)]
    lowest = 31 - jax.lax.clz(word & (~word + jnp.uint32(1))).astype(jnp.int32)
    return jnp.where(jnp.any(some), jnp.argmax(some).astype(jnp.int32) * 32 + lowest, 32 * n)


def edf_taken(board: Board, cand: Candidates, copies, demand, c_start, c_end):
    """`Rules(copy_supply="edf")`: the supply after a copy `[c_start, c_end]` of `demand` ticks
    that takes `cand.shift` of them over at its last step (module `held_over`). It takes the rest
    from its own steps, from its start on; the copy it takes them over from takes as much from its
    steps after `c_end`, from there on. Returns the new (supply_prefix, held, starts); as `copied`,
    a game alone passes over them only when it copies."""
    args = (cand.shift, demand, c_start, c_end, cand.shift_end)
    return (_edf_alone if board.held.shape[0] > memory.CHUNKED_FROM else _edf_many)(
        (board.supply_prefix, board.held, board.starts), args, copies)


def _edf_pass(supply, args):
    prefix, held, starts = supply
    taken, demand, c_start, c_end, shift_end = args
    clip = lambda k: jnp.clip(k, 0, prefix.shape[0] - 1)  # noqa: E731
    flat = prefix[clip(c_start)]
    first = _copy_pass(prefix, c_start, jnp.searchsorted(prefix, flat + demand - taken, side="left") - 1, flat,
                       demand - taken)
    flat = first[clip(c_end + 1)]
    second = _copy_pass(first, c_end + 1, jnp.searchsorted(first, flat + taken, side="left") - 1, flat, taken)
    before, between, after = jnp.diff(prefix), jnp.diff(first), jnp.diff(second)
    k = jnp.arange(held.shape[0])
    # each step's ticks taken by the copy spanning it and the next: this one's before its last
    # step; the other's, less what this one took over, and plus what it took after
    held = held + (jnp.where((k >= c_start) & (k < c_end), before - between, 0)
                   + jnp.where((k > c_end) & (k < shift_end), between - after, 0) - jnp.where(k == c_end, taken, 0))
    bit = jnp.left_shift(jnp.uint32(1), (jnp.maximum(c_start, 0) % 32).astype(jnp.uint32))
    word = jnp.maximum(c_start, 0) // 32
    starts = starts.at[word].set(jnp.where(c_start < c_end, starts[word] | bit, starts[word]))
    return second, held.astype(prefix.dtype), starts


def _edf_alone_one(supply, args, copies):
    return maybe(copies, lambda x: _edf_pass(x, args), supply)


def _edf_many(supply, args, copies):
    return jax.tree.map(lambda new, old: jnp.where(copies, new, old), _edf_pass(supply, args), supply)


_edf_alone = alone_or_batched(_edf_alone_one, _edf_many)


def _copy_pass(prefix, lo, hi, flat, demand) -> jax.Array:
    """The supply's prefix sums after a copy: unchanged up to `lo`, `flat` to `hi`, lowered by
    `demand` after (a pass over T + 1 entries)."""
    k = jnp.arange(prefix.shape[0])
    return jnp.where(k <= lo, prefix, jnp.where(k <= hi, flat, prefix - demand))


def _copied_alone(prefix, lo, hi, flat, demand, copies) -> jax.Array:
    return maybe(copies, lambda p: _copy_pass(p, lo, hi, flat, demand), prefix)


def _copied_many(prefix, lo, hi, flat, demand, copies) -> jax.Array:
    return jnp.where(copies, _copy_pass(prefix, lo, hi, flat, demand), prefix)


#: The prefix sums after the move: a game alone passes over them only when it copies (Drop and
#: NoCopy do not, which saves a fifth of a large program's greedy move); a batch selects, with fixed
#: work. (Programs of at most `grid.CHUNKED_FROM` steps always select: there the pass is short,
#: and the loop costs more than it saves.)
_copied = alone_or_batched(_copied_alone, _copied_many)


def copied(prefix, lo, hi, flat, demand, copies) -> jax.Array:
    """The supply's prefix sums after a copy (`_copy_pass`), where `copies`."""
    return (_copied if prefix.shape[0] > memory.CHUNKED_FROM else _copied_many)(prefix, lo, hi, flat, demand, copies)
