"""The Drop-backup's restore (docs/game.md): go back to just before the conflict, from the backup
or the nearest checkpoint, by replaying the recorded moves; and the checkpoints. Internals of
`jaxmmap.env.game.step`.
"""

from __future__ import annotations

import contextlib

import jax
import jax.numpy as jnp
from jax.custom_batching import custom_vmap

from jaxmmap.core.problem import COPY
from jaxmmap.env import grid as memory
from jaxmmap.env.batching import maybe
from jaxmmap.env.instance import Instance
from jaxmmap.env.moves import apply, candidates, context
from jaxmmap.env.supply import taken_over
from jaxmmap.env.types import (
    _ACTION,
    _DROPPED,
    _FORBIDDEN,
    _PINNED,
    PLACED,
    Board,
    Candidates,
    Checkpoints,
    Snapshot,
    _snapshot,
)


def one_game_at_a_time(buffers):
    """A decorator: `fn(carry, consts, on) -> carry` (the carry unchanged where `on` is False), made cheap
    under `vmap`: the batched version runs `fn` on one game at a time, only on the games where
    `on` holds, reading and writing that game's slice of the carry in place. (`vmap` of a loop
    whose length differs between games would run every game's body and select every game's whole
    carry on each iteration, while any one game is still in it: a restore's replay of hundreds of
    moves, or a checkpoint's copy of the grid, cost the whole batch.) On an accelerator, for
    small programs, the batched version is a plain `vmap` instead (`together`); `buffers(carry,
    consts)` is the program's padded number of buffers."""
    return lambda fn: _one_game_at_a_time(fn, buffers)


def _one_game_at_a_time(fn, buffers):
    wrapped = custom_vmap(fn)

    @wrapped.def_vmap
    def _batched(size, in_batched, carry, consts, on):
        carry_b, consts_b, on_b = in_batched
        if together(buffers(carry, consts)):
            axes = jax.tree.map(lambda b: 0 if b else None, consts_b)
            carry_axes = jax.tree.map(lambda b: 0 if b else None, carry_b)
            out = jax.vmap(fn, in_axes=(carry_axes, axes, 0 if on_b else None))(carry, consts, on)
            return out, jax.tree.map(lambda _: True, out)
        on = on if on_b else jnp.broadcast_to(on, (size,))
        carry = jax.tree.map(lambda x, b: x if b else jnp.broadcast_to(x, (size, *jnp.shape(x))), carry, carry_b)
        ar = jnp.arange(size)
        after = lambda g: jnp.where(jnp.any(on & (ar > g)), jnp.argmax(on & (ar > g)), size)  # noqa: E731

        def body(loop):
            g, carry = loop
            mine = jax.tree.map(lambda x, b: x[g] if b else x, consts, consts_b)
            out = wrapped(jax.tree.map(lambda x: x[g], carry), mine, jnp.bool_(True))  # (an outer vmap: its rule)
            return after(g), jax.tree.map(lambda x, y: x.at[g].set(y), carry, out)

        _, carry = jax.lax.while_loop(lambda loop: loop[0] < size, body, (after(-1), carry))
        return carry, jax.tree.map(lambda _: True, carry)

    return wrapped


_TOGETHER: list[bool | None] = [None]  # None: by the backend (`together`)


#: Padded buffers below which an accelerator's batch restores together (`together`).
TOGETHER_BELOW = 2048


def together(buffers: int) -> bool:
    """Whether a batch's restores and checkpoints on a program of `buffers` (padded) buffers,
    traced now, run as a plain `vmap` (every game's body at once) rather than one game at a
    time: as `restores_together` says, else on an accelerator, below `TOGETHER_BELOW` buffers.
    On a GPU one game at a time is a loop over the batch's restoring games, a few kernel
    launches and host round trips each, the slower on small programs; together, a restore's
    replay runs while any game replays and selects every game's board on each replayed move, the
    slower on large ones. On the CPU, where a batch's games run one after another anyway,
    together is the slower at every size (`benchmarks/env_throughput.py`; docs/decisions.md,
    "Restores as a plain `vmap`")."""
    if _TOGETHER[-1] is not None:
        return _TOGETHER[-1]
    return jax.default_backend() != "cpu" and buffers < TOGETHER_BELOW


@contextlib.contextmanager
def restores_together(on: bool = True):
    """While a batched game is traced under it, its restores and checkpoints run as a plain
    `vmap` (or, with `on=False`, one game at a time), whatever the backend: for batches whose
    games restore together (an expert generation's games share their prefix, and one at a time
    its generation on a large program is much slower; docs/decisions.md). A trace-time switch: a
    jitted function that uses it enters it in its own body, so that every trace of it sees it."""
    _TOGETHER.append(bool(on))
    try:
        yield
    finally:
        _TOGETHER.pop()


def rewind(inst: Instance, board: Board, cand: Candidates, backup: Snapshot, checkpoints, on):
    """The Drop-backup's restore, from a board whose current buffer has no legal action: while
    that is so, mark what took its actions away for good (its tensor's pin, if the tensor is
    pinned, else its placed alias group) and go back to just before it was made (the pinning
    buffer, or the group's first buffer): the backup, or the nearest checkpoint below that
    point, then the recorded moves up to there. Returns the board, its candidates and the number
    of restores (marks) it took; each restore goes back further, and the backup itself always
    has a legal action. Where `on` is False, nothing; under `vmap`, only the games where it is
    True do the work (`one_game_at_a_time`)."""
    records = board.records
    # (the records are what a replay replays, not what it changes: outside the carry, uncopied)
    (board, cand, count) = _rewind((board.replace(records=None), cand, jnp.int32(0)),
                                   (inst, backup, checkpoints, records), on)
    return board.replace(records=records), cand, count


@one_game_at_a_time(lambda carry, consts: consts[0].width.shape[-1])
def _rewind(carry, consts, on):
    inst, backup, checkpoints, records = consts
    n = inst.width.shape[0]
    carry = (carry[0].replace(records=records), *carry[1:])

    def body(carry):
        board, cand, count = carry
        bad = jnp.minimum(board.cursor, n - 1)
        group, tensor, pin = inst.group[bad], inst.tensor[bad], cand.pinned  # (pinned: never forbidden)
        marks = board.marks.at[jnp.where(pin, n, group)].set(board.marks[group] | _DROPPED, mode="drop")
        marks = marks.at[jnp.where(pin, tensor, n)].set(marks[tensor] | _FORBIDDEN, mode="drop")
        below = jnp.arange(n) < board.cursor
        pinned_by = below & (inst.tensor == tensor) & ((board.records.bits & _PINNED) != 0)
        point = jnp.maximum(jnp.where(pin, jnp.argmax(pinned_by), inst.group_first[group]), backup.cursor)
        back = board.replace(cursor=backup.cursor, ret=backup.ret, supply_prefix=backup.supply_prefix,
                             edge=backup.edge, cells=memory.restore(board.cells), table_mask=backup.table_mask,
                             load=backup.load, held=backup.held, starts=backup.starts,
                             marks=marks, open_groups=jnp.int32(0), open_pins=jnp.int32(0))
        if checkpoints is not None:
            back = _from_checkpoint(back, checkpoints, point)
        back = _replay(inst, back, point)
        return back, candidates(inst, back), count + 1

    board, cand, count = jax.lax.while_loop(lambda c: on & ~jnp.any(c[1].legal), body, carry)
    return board.replace(records=None), cand, count


def no_checkpoints(inst: Instance, board: Board, k: int) -> Checkpoints:
    stack = lambda x: jnp.zeros((k, *jnp.shape(x)), jnp.asarray(x).dtype)  # noqa: E731
    rows, tags, summary = memory.copy_out(board.cells)
    return Checkpoints(every=jnp.maximum(1, -(-inst.num_buffers // (k + 1))).astype(jnp.int32),
                       valid=jnp.zeros(k, bool), snapshot=jax.tree.map(stack, _snapshot(board)),
                       open_groups=jnp.zeros(k, jnp.int32), open_pins=jnp.zeros(k, jnp.int32),
                       rows=stack(rows), tags=stack(tags), summary=stack(summary))


def checkpoint(board: Board, checkpoints, active):
    """Forgets the checkpoints above the cursor (a restore went below them) and takes the one
    due at the cursor (under `vmap`, only the games that take one copy their grid:
    `one_game_at_a_time`)."""
    if checkpoints is None:
        return None
    k = checkpoints.valid.shape[0]
    at = (jnp.arange(k) + 1) * checkpoints.every
    checkpoints = checkpoints.replace(valid=checkpoints.valid & (at <= board.cursor))
    slot = jnp.clip(board.cursor // checkpoints.every - 1, 0, k - 1)
    due = active & (at[slot] == board.cursor) & ~checkpoints.valid[slot]
    return _take(checkpoints, board, due)


@one_game_at_a_time(lambda carry, consts: consts.action.shape[-1])
def _take(checkpoints, board, due):
    """The checkpoint due at the board's cursor taken, where `due`."""
    slot = jnp.clip(board.cursor // checkpoints.every - 1, 0, checkpoints.valid.shape[0] - 1)

    def take(c):
        put = lambda stack, x: stack.at[slot].set(x)  # noqa: E731
        rows, tags, summary = memory.copy_out(board.cells)
        return c.replace(
            valid=c.valid.at[slot].set(True), snapshot=jax.tree.map(put, c.snapshot, _snapshot(board)),
            open_groups=put(c.open_groups, board.open_groups), open_pins=put(c.open_pins, board.open_pins),
            rows=put(c.rows, rows), tags=put(c.tags, tags), summary=put(c.summary, summary))

    return maybe(due, take, checkpoints)  # (not a `cond`: the checkpoints are never copied)


def _from_checkpoint(back: Board, checkpoints: Checkpoints, point) -> Board:
    """`back` (the board at the backup) or, if later and at most `point`, the nearest valid
    checkpoint's board."""
    at = (jnp.arange(checkpoints.valid.shape[0]) + 1) * checkpoints.every
    usable = checkpoints.valid & (at <= point) & (at > back.cursor)
    j = jnp.argmax(jnp.where(usable, at, -1))
    snap = jax.tree.map(lambda x: x[j], checkpoints.snapshot)
    there = back.replace(cursor=snap.cursor, ret=snap.ret, supply_prefix=snap.supply_prefix, edge=snap.edge,
                         table_mask=snap.table_mask, load=snap.load, held=snap.held, starts=snap.starts,
                         open_groups=checkpoints.open_groups[j],
                         open_pins=checkpoints.open_pins[j],
                         cells=memory.copy_in(back.cells, checkpoints.rows[j], checkpoints.tags[j],
                                              checkpoints.summary[j]))
    return jax.lax.cond(jnp.any(usable), lambda: there, lambda: back)


def _replay(inst: Instance, board: Board, until) -> Board:
    """Plays the recorded decisions again from the board's cursor up to `until` (excluded): each
    move is the one the records hold, so only `_apply` runs, not the search for placements."""
    def body(board):
        i = board.cursor
        rec, ctx = board.records, context(inst, board, i)
        action = (rec.bits[i] & _ACTION).astype(jnp.int32)
        copied = (action == COPY) & (inst.demand[i] > 0)
        is_out, t = inst.is_output[i], inst.target[i]
        start, end = rec.alloc_start[i].astype(jnp.int32), rec.alloc_end[i].astype(jnp.int32)
        c_start = jnp.where(copied, jnp.where(is_out, t + 1, start), -1)
        ends = t - 1 if rec.copy_end is None else rec.copy_end[i].astype(jnp.int32)  # (deferred: recorded)
        c_end = jnp.where(copied, jnp.where(is_out, end, ends), -1)
        same = lambda x: jnp.full(3, x, jnp.int32)  # noqa: E731 (the recorded move, whatever the action)
        # (edf: what the copy took over, found again on the same board)
        shifts = {} if not inst.edf else dict(zip(("shift", "shift_end"), taken_over(
            inst, board, jnp.where(copied, inst.demand[i], 0), c_start, c_end)))
        cand = Candidates(
            legal=jnp.ones(3, bool), offset=same(rec.offset[i]), level=same(-1), alloc_start=same(start),
            alloc_end=same(end),
            copy_start=same(c_start), copy_end=same(c_end), group_placed=ctx["status"] == PLACED,
            pinned=ctx["pinned"], latest=ctx["latest"], latest_end=ctx["t_end"],
            hull_start=ctx["hull_start"], hull_end=ctx["hull_end"], solid=ctx["solid"], **shifts)
        # (the records below the restore point stay as they are: the move writes what they hold)
        return apply(inst, board, cand, action, jnp.bool_(True))[0].replace(records=rec)

    return jax.lax.while_loop(lambda board: board.cursor < until, body, board)
