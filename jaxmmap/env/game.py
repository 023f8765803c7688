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
  it goes back to just before the conflict by replaying the recorded moves from the backup or
  a checkpoint (`jaxmmap.env.backup`: only `moves.apply` runs, not the search for placements);
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
from jaxmmap.env import backup as backup_lib
from jaxmmap.env import grid as memory
from jaxmmap.env import moves, packer
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
    Checkpoints,
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


def init(instance: Instance, *, backup: bool = False, checkpoints: int = 0) -> State:
    """The first state of a game on `instance`; `backup=True` enables the Drop-backup, and
    `checkpoints=K` (with it) keeps K evenly spaced copies of the board for its restores
    (`types.Checkpoints`: the same moves, less replay, K copies of the grid in memory)."""
    n, t = instance.width.shape[0], instance.supply.shape[0]
    k = instance.gain.shape[0]
    none = jnp.full(n, -1, index_dtype(instance))
    records = Records(bits=jnp.zeros(n, jnp.int8), offset=none, alloc_start=none, alloc_end=none,
                      latest=none, hull_start=none, hull_end=none, copy_end=none if instance.deferred else None)
    board = Board(
        cursor=jnp.int32(0), ret=jnp.float32(0),
        supply_prefix=jnp.concatenate([jnp.zeros(1, jnp.int32), jnp.cumsum(instance.supply)]),
        edge=jnp.zeros(-(-t // 32), jnp.uint32), cells=memory.init(t, instance.grid_words),
        table_mask=jnp.zeros(k, jnp.int32), records=records, marks=jnp.zeros(n, jnp.int8),
        open_groups=jnp.int32(0), open_pins=jnp.int32(0),
        load=jnp.zeros(t, jnp.int32) if instance.deferred else None,
        held=jnp.zeros(t, jnp.int32) if instance.edf else None,
        starts=jnp.zeros(-(-(t + 1) // 32), jnp.uint32) if instance.edf else None)
    candidates = moves.candidates(instance, board)
    return State(instance=instance, board=board, backup=_snapshot(board) if backup else None,
                 checkpoints=backup_lib.no_checkpoints(instance, board, checkpoints) if backup and checkpoints else None,
                 candidates=candidates, reward=jnp.float32(0),
                 done=instance.num_buffers <= 0, lost=jnp.bool_(False), moves=jnp.int32(0),
                 restores=jnp.int32(0))


def grid_row(board: Board, step) -> jax.Array:
    """uint32[Cw]: the occupied cells of one step (O(Cw); `board.grid` is the whole grid). Under
    deferred placement, the step's load as its lowest columns (the grid itself stays empty until
    the packer places the finished game)."""
    row = memory.row(board.cells, step)
    if board.load is None:
        return row
    return moves._word_masks(0, board.load[step], row.shape[-1])


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
    placed = moves.placement_reward(inst, board, i)
    return jnp.stack([placed, placed, jnp.float32(0)])


def placement_potential(state: State) -> jax.Array:
    """float32[]: what placing the current buffer (Copy or NoCopy) can still gain, its reward
    included once the rest of its latency table is placed (`moves.placement_potential`)."""
    inst, board = state.instance, state.board
    return moves.placement_potential(inst, board, jnp.minimum(board.cursor, inst.width.shape[0] - 1))


def buffer_status(state: State) -> tuple[jax.Array, jax.Array]:
    """The current buffer's alias-group status (UNDECIDED, PLACED, DROPPED) and its tensor's pin
    status (PIN_FREE, PINNED, PIN_FORBIDDEN), as int32[] each; O(1)."""
    inst, board = state.instance, state.board
    i = jnp.minimum(board.cursor, inst.width.shape[0] - 1)
    ctx = moves.context(inst, board, i)
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
    A Copy with demand copies from the start of its allocation to the step before its target (an
    input; under deferred placement to its recorded end), or from the step after its target to
    the end (an output)."""
    inst, board = state.instance, state.board
    copied = (board.action == COPY) & (inst.demand > 0)
    start = jnp.where(inst.is_output, inst.target + 1, board.alloc_start)
    ends = inst.target - 1 if board.records.copy_end is None else board._decided(board.records.copy_end)
    end = jnp.where(inst.is_output, board.alloc_end, ends)
    return jnp.where(copied, start, -1), jnp.where(copied, end, -1)


def tensor_end(state: State) -> jax.Array:
    """int32[N] per tensor id: the end of its allocation that ends last so far (-1 if none)."""
    inst, board = state.instance, state.board
    ends = board.alloc_end
    return jnp.full_like(ends, -1).at[inst.tensor].max(ends)


def step(state: State, action: jax.Array, pack_floor: jax.Array | None = None) -> State:
    """Plays `action` (0 Copy, 1 NoCopy, 2 Drop) on the current buffer.

    An illegal action loses the game, as in the paper (use `legal_action_mask`). A move into an
    infeasible state loses it too, or, with the Drop-backup, goes back to just before the
    conflict (docs/game.md). A finished game is returned unchanged with reward 0.

    `pack_floor` (deferred placement; a search's shortcut): a game that ends below it is lost:
    unpacked where its return with every unit placed is below it, else once its packings are
    (each but the first stops as soon as the units it left out put it below: `packer.pack`).
    Packing only leaves units out, so with the floor at what a game must beat, less
    `packer.dropping_gain_bound` and a margin above the packings' tie tolerance, the games it
    loses could not have beaten it; the packer is most of a large game's last move.
    """
    inst, cand, before = state.instance, state.candidates, state.board
    active = ~state.done  # a finished game does not move: every update below is gated by it
    action = jnp.asarray(action, jnp.int32)
    legal = (action >= 0) & (action < 3) & cand.legal[jnp.clip(action, 0, 2)]
    action = jnp.clip(action, 0, 2)
    board, reward = moves.apply(inst, before, cand, action, active & legal)  # illegal: board unchanged
    finished = board.cursor >= inst.num_buffers
    hopeless = jnp.bool_(False)
    if inst.deferred:  # the move that ends the game places it: its reward charges what did not fit
        ends = active & legal & finished
        packed = packer.pack_finished(inst, board, ends, pack_floor)
        if pack_floor is not None:
            hopeless = ends & (packed.ret < pack_floor)
        reward = jnp.where(ends, reward + packed.ret - board.ret, reward)
        board = packed
    next_cand = moves.candidates(inst, board)
    infeasible = active & legal & ~finished & ~jnp.any(next_cand.legal)

    backup, checkpoints, restored, restores = state.backup, state.checkpoints, jnp.bool_(False), jnp.int32(0)
    if backup is not None:  # go back to before the conflict, and drop what caused it
        restored = infeasible
        board, next_cand, restores = backup_lib.rewind(inst, board, next_cand, backup, state.checkpoints, restored)
        checkpoints = backup_lib.checkpoint(board, state.checkpoints, active)
        save = active & (board.open_groups == 0) & (board.open_pins == 0)
        board, backup = jax.lax.cond(
            save, lambda: (board.replace(cells=memory.save(board.cells)), _snapshot(board)),
            lambda: (board, backup))
        reward = jnp.where(restored, board.ret - before.ret, reward)
    lost = active & (~legal | (infeasible & ~restored) | hopeless)
    reward = jnp.where(lost, -before.ret - inst.penalty, reward)
    board = board.replace(ret=jnp.where(lost, -inst.penalty, board.ret))
    return State(instance=inst, board=board, backup=backup, checkpoints=checkpoints,
                 candidates=next_cand, reward=reward, done=state.done | finished | lost,
                 lost=state.lost | lost, moves=state.moves + active.astype(jnp.int32),
                 restores=state.restores + restores)


