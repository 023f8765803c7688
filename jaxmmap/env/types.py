"""The game's state as pytrees (jumanji's `types.py`): `State` and its parts, `Board` (what a move
changes), `Records` (per-buffer decisions), `Snapshot` (the Drop-backup) and `Candidates` (what
each action would do to the current buffer). The rules that change them are `game.py`'s."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct

from jaxmmap.env import grid as memory
from jaxmmap.env.instance import Instance

_ACTION, _PINNED, _SOLID = 3, 4, 8  # `Records.bits`
_DROPPED, _FORBIDDEN = 1, 2  # `Board.marks`
UNDECIDED, PLACED, DROPPED = 0, 1, 2  # group status
PIN_FREE, PINNED, PIN_FORBIDDEN = 0, 1, 2  # tensor pin status


def index_dtype(instance: Instance):
    """The integer type of the per-buffer records: int16 when every index, step and column fits
    (N, T + 1 and C below 2**15), int32 otherwise. Static: it follows from the shapes."""
    n, t = instance.width.shape[0], instance.supply.shape[0]
    return jnp.int16 if max(n, t + 1, instance.grid_words * 32) < 2 ** 15 else jnp.int32


@struct.dataclass
class Records:
    """What was decided for each buffer, in the order of play. N buffers; I is `index_dtype`.

    Entries at indices >= `Board.cursor` are meaningless (a Drop-backup restore leaves them as
    they were, and the next decision of the buffer overwrites them); read them through the
    `Board` properties, which mask them, or below the cursor.

    Attributes:
      bits: int8[N] packed: the action (COPY, NOCOPY or DROP) in bits 0-1; `_PINNED`: the
        buffer's tensor is pinned after this buffer (an output of it was played NoCopy: the
        tensor is only in fast memory, so its later buffers must be NoCopy); `_SOLID`: the rows
        of its alias group's allocations so far form one interval, the hull below.
      offset: I[N] column offset, -1 if dropped.
      alloc_start, alloc_end: I[N] the buffer's own allocation, -1 if none.
      latest: I[N] the buffer, among this one and the earlier buffers of its tensor, whose
        allocation ends last (-1 if none): the tensor's NoCopy predecessor after this buffer.
      hull_start, hull_end: I[N] the hull of the rows allocated to the buffer's alias group so
        far (-1 if none): with `_SOLID` it tells where the group's own cells are.
      copy_end: I[N] under `Rules(placement="deferred")`, the last step of the buffer's copy (-1
        if none), where an input's copy may end before the step before its target; None
        otherwise.
    """

    bits: jax.Array
    offset: jax.Array
    alloc_start: jax.Array
    alloc_end: jax.Array
    latest: jax.Array
    hull_start: jax.Array
    hull_end: jax.Array
    copy_end: jax.Array | None = None


@struct.dataclass
class Board:
    """Everything a move changes. N buffers, T steps, C = 32 * Cw grid columns, K latency tables;
    groups and tensors use dense ids < N.

    A group's or a tensor's state is read from its previous buffer's record
    (`Instance.prev_in_group`, `prev_in_tensor`), which is always below the cursor, so a
    Drop-backup restore needs no per-buffer, per-group or per-tensor copy: it rewinds the cursor,
    restores the `Snapshot` (supply, table masks) and the grid (`jaxmmap.env.grid`, which saves
    and restores itself in O(T/R)), and replays the recorded moves up to the restore point. See
    `group_status`, `tensor_pin` and `tensor_end` for the per-id views.

    Attributes:
      cursor: int32[] index of the buffer to decide.
      ret: float32[] return so far.
      supply_prefix: int32[T+1] prefix sums of the remaining copy supply W, in ticks:
        W[k] = supply_prefix[k+1] - supply_prefix[k] (see `remaining_supply`).
      edge: uint32[ceil(T/32)] bit k % 32 of word k // 32: a copy interval spans steps k and
        k+1 (equation 6).
      cells: the occupied cells, a `jaxmmap.env.grid.Grid` (read it whole as the `grid` property).
      table_mask: int32[K] per latency table, the bits of its buffers already placed.
      records: the per-buffer `Records`.
      marks: int8[N] what Drop-backup restores decided for good: bit `_DROPPED` of a group id,
        the group is dropped; bit `_FORBIDDEN` of a tensor id, pinning the tensor is forbidden.
      open_groups: int32[] placed alias groups with undecided members.
      open_pins: int32[] pinned tensors with undecided buffers. With `open_groups`, 0 at a clean
        cut, where the Drop-backup is saved.
      load: int32[T] under `Rules(placement="deferred")`, the columns the units hold
        per step (the grid stays empty until the packer places the game); None otherwise.
      held: int32[T] under `Rules(copy_supply="edf")`, the ticks of step k's supply taken by the
        copy that spans steps k and k+1 (the one copy whose edge k is), which a copy ending at k
        may take over; None otherwise.
      starts: uint32[ceil((T+1)/32)] under `Rules(copy_supply="edf")`, bit k: a copy of two steps
        or more starts at step k (where two copies' edges meet); None otherwise.
    """

    cursor: jax.Array
    ret: jax.Array
    supply_prefix: jax.Array
    edge: jax.Array
    cells: memory.Grid
    table_mask: jax.Array
    records: Records
    marks: jax.Array
    open_groups: jax.Array
    open_pins: jax.Array
    load: jax.Array | None = None
    held: jax.Array | None = None
    starts: jax.Array | None = None

    def _decided(self, values: jax.Array) -> jax.Array:
        below = jnp.arange(values.shape[-1]) < jnp.asarray(self.cursor)[..., None]
        return jnp.where(below, values.astype(jnp.int32), -1)

    @property
    def grid(self) -> jax.Array:
        """uint32[T, Cw] occupied cells, bit c % 32 of word c // 32 for column c."""
        rows = memory.rows
        for _ in range(jnp.ndim(self.cursor)):  # boards with batch axes
            rows = jax.vmap(rows)
        return rows(self.cells)

    @property
    def action(self) -> jax.Array:
        """int32[N] COPY, NOCOPY, DROP, or -1 while undecided."""
        return self._decided(self.records.bits & _ACTION)

    @property
    def offset(self) -> jax.Array:
        """int32[N] column offset, -1 if dropped or undecided."""
        return self._decided(self.records.offset)

    @property
    def alloc_start(self) -> jax.Array:
        """int32[N] start of the buffer's own allocation, -1 if none."""
        return self._decided(self.records.alloc_start)

    @property
    def alloc_end(self) -> jax.Array:
        """int32[N] end of the buffer's own allocation, -1 if none."""
        return self._decided(self.records.alloc_end)


@struct.dataclass
class Snapshot:
    """The Drop-backup: the parts of the `Board` a restore cannot rebuild from the records (the
    grid saves itself).

    Attributes:
      cursor: int32[]; ret: float32[]; supply_prefix: int32[T+1]; edge: uint32[ceil(T/32)];
      table_mask: int32[K]; load: int32[T], held: int32[T] and starts or None (as in `Board`).
    """

    cursor: jax.Array
    ret: jax.Array
    supply_prefix: jax.Array
    edge: jax.Array
    table_mask: jax.Array
    load: jax.Array | None = None
    held: jax.Array | None = None
    starts: jax.Array | None = None


@struct.dataclass
class Checkpoints:
    """Copies of the board at evenly spaced cursors, so that a Drop-backup restore replays the
    recorded moves from the nearest one below its restore point rather than from the backup. They
    change no move (a restore reaches the same state either way); they trade memory, K copies of
    the grid, for the replay. K slots; slot j holds the board at cursor (j + 1) * `every`, while
    `valid`.

    Attributes:
      every: int32[] the spacing, in buffers.
      valid: bool[K] the slot holds a state of the current game (its cursor is at most the
        board's, and no restore went back below it).
      snapshot: `Snapshot` with a leading K axis.
      open_groups, open_pins: int32[K] the board's counters there.
      rows: uint32[K, T, Cw]; tags, summary: uint32[K, B, Cw] the grid (`grid.copy_out`).
    """

    every: jax.Array
    valid: jax.Array
    snapshot: Snapshot
    open_groups: jax.Array
    open_pins: jax.Array
    rows: jax.Array
    tags: jax.Array
    summary: jax.Array


def _snapshot(board: Board) -> Snapshot:
    return Snapshot(cursor=board.cursor, ret=board.ret, supply_prefix=board.supply_prefix,
                    edge=board.edge, table_mask=board.table_mask, load=board.load, held=board.held,
                    starts=board.starts)


@struct.dataclass
class Candidates:
    """What each action (Copy, NoCopy, Drop) would do to the current buffer.

    Attributes:
      legal: bool[3].
      offset, alloc_start, alloc_end, copy_start, copy_end: int32[3], -1 for none. Under
        deferred placement an offset is a unit (the first buffer of the allocations placed
        together), not a column.
      level: int32[3] the lowest column the allocation would take: its offset on the grid; under
        deferred placement the load profile's peak over the steps it adds (where a memory packed
        from the bottom would put it); -1 for none.
      group_placed: bool[] the buffer's alias group is placed (before the move).
      pinned: bool[] the buffer's tensor is pinned (before the move).
      latest: int32[] the buffer holding the tensor's latest allocation, -1 if none.
      latest_end: int32[] the end of that allocation, -1 if none.
      hull_start, hull_end: int32[] the hull of the rows allocated to its group, -1 if none.
      solid: bool[] those rows form one interval.
      (The last seven are what the move itself needs of the records, so that a move reads no
      record it overwrites.)
      shift, shift_end: int32[] under `Rules(copy_supply="edf")`, the ticks the Copy takes over at
        its last step from the copy that runs on past it, and that copy's last step (from whose
        steps after it takes them instead); None otherwise.
    """

    legal: jax.Array
    offset: jax.Array
    level: jax.Array
    alloc_start: jax.Array
    alloc_end: jax.Array
    copy_start: jax.Array
    copy_end: jax.Array
    group_placed: jax.Array
    pinned: jax.Array
    latest: jax.Array
    latest_end: jax.Array
    hull_start: jax.Array
    hull_end: jax.Array
    solid: jax.Array
    shift: jax.Array | None = None
    shift_end: jax.Array | None = None


@struct.dataclass
class State:
    """A game in progress.

    Attributes:
      instance: the (padded) problem, unchanged by moves.
      board: the current board.
      backup: the Drop-backup (a `Snapshot` of the board at the last clean cut), or None when
        the option is off.
      checkpoints: `Checkpoints` for the backup's restores, or None (none taken).
      candidates: the current buffer's candidate placements (`legal_action_mask` reads them).
      reward: float32[] reward of the last move.
      done: bool[] the game has ended.
      lost: bool[] it ended in an infeasible state.
      moves: int32[] moves played (more than N after Drop-backup restores).
      restores: int32[] Drop-backup restores so far.
    """

    instance: Instance
    board: Board
    backup: Snapshot | None
    checkpoints: Checkpoints | None
    candidates: Candidates
    reward: jax.Array
    done: jax.Array
    lost: jax.Array
    moves: jax.Array
    restores: jax.Array
