"""The game's number representation, shared by the reference and the JAX game.

Everything the two implementations must agree on *exactly* is computed here, once, from a
`Problem` (docs/game.md, "Memory grid and sizes" and "Supply and demand in ticks"): grid
columns, integer supply/demand ticks, dense tensor and alias-group ids, and where each buffer
sits in a latency table. The validator does not use this module: it checks bytes and floats.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from jaxmmap.core.problem import MAX_COLUMNS, Problem, ProblemError, check_problem

TICK_BUDGET = 2 ** 29
PLACEMENTS = ("grid", "deferred")
COPY_SUPPLY = ("near", "early", "edf")  # total supply in ticks; sums of it and a capped demand fit in int32


@dataclasses.dataclass(frozen=True)
class Rules:
    """How a problem is played.

    Attributes:
      columns: number of grid columns the fast memory is cut into.
      nocopy_offset: "same" (NoCopy keeps the predecessor's offset: the data does not move) or
        "lowest" (the paper's literal rule: the lowest free offset).
      infeasible_penalty: extra penalty (>= 0) when a game is lost; its return is minus this.
      output_nocopy: NoCopy of an output is legal (the paper's Appendix A): the tensor is written
        into fast memory and stays there for its whole live range, with no copy. False plays the
        older game of this project, where an output reaches fast memory only by Copy.
      placement: "grid" (the paper's: each move places its allocation at the lowest free offset
        of the memory grid) or "deferred" (a move only reserves columns in the load profile, the
        columns in use per step; offsets are chosen when the game ends, by a best-fit packer, and
        the last move's reward charges what it could not place). docs/game.md, "Deferred
        placement".
      copy_supply: which steps of a copy interval give their supply first: "near" (the paper's
        reading: the steps nearest the target, the far end gives the rest) or "early" (every copy
        from its first step on, as earliest-deadline-first serves copies decided in order: an
        input's copy then leaves the step next to its target, which the copy of the next input
        may start on, and an output's is as in "near") or "edf" (deferred placement only: as
        "early", and a copy may take over, at its last step, the supply held there by the copy
        that runs on past it, a later deadline, which takes as much from its own later steps, as
        earliest-deadline-first would; docs/game.md, "Copy supply").
    """

    columns: int = 256
    nocopy_offset: str = "same"
    infeasible_penalty: float = 0.0
    output_nocopy: bool = True
    placement: str = "grid"
    copy_supply: str = "near"

    def __post_init__(self):
        if isinstance(self.columns, bool) or not isinstance(self.columns, (int, np.integer)) \
                or not 1 <= self.columns <= MAX_COLUMNS:
            raise ProblemError(f"columns must be a whole number in [1, {MAX_COLUMNS:,}], got {self.columns!r}")
        if self.nocopy_offset not in ("same", "lowest"):
            raise ProblemError(f"nocopy_offset must be 'same' or 'lowest', got {self.nocopy_offset!r}")
        if not self.infeasible_penalty >= 0:
            raise ProblemError("infeasible_penalty must be >= 0")
        if self.placement not in PLACEMENTS:
            raise ProblemError(f"placement must be one of {', '.join(PLACEMENTS)}, got {self.placement!r}")
        if self.copy_supply not in COPY_SUPPLY:
            raise ProblemError(f"copy_supply must be one of {', '.join(COPY_SUPPLY)}, got {self.copy_supply!r}")
        if self.copy_supply == "edf" and self.placement != "deferred":
            raise ProblemError("copy_supply='edf' is a rule of deferred placement: placement must be 'deferred'")
        if self.placement == "deferred" and self.nocopy_offset != "same":
            raise ProblemError("placement='deferred' keeps a NoCopy at its predecessor's offset: "
                               "nocopy_offset must be 'same'")

    def to_json(self) -> dict:
        out = {"columns": self.columns, "nocopy_offset": self.nocopy_offset, "output_nocopy": self.output_nocopy}
        if self.placement != "grid" or self.copy_supply != "near":  # (files of the paper's game stay as they were)
            out.update(placement=self.placement, copy_supply=self.copy_supply)
        return out


@dataclasses.dataclass(frozen=True, eq=False)
class Discretized:
    """A problem in the game's units (NumPy). N buffers, T steps, K latency tables.

    Attributes:
      col_bytes: bytes per grid column.
      usable_columns: columns a placement may use (floor(memory_size / col_bytes) <= columns).
      tick_scale: ticks per unit of supply/demand.
      width: int64[N] columns a buffer occupies.
      supply: int64[T] supply in ticks (rounded down).
      demand: int64[N] demand in ticks (rounded up, capped at TICK_BUDGET + 1).
      copy_from: int64[N] the first step a copy of the buffer's tensor may use: the step after
        the tensor is written, or live_start for a tensor no instruction writes (an input).
      tensor: int64[N] dense tensor ids.
      group: int64[N] dense alias-group ids; a buffer without alias_id is a group of its own.
      table: int64[N] index of the buffer's latency table, -1 if none.
      table_bit: int64[N] the buffer's bit in that table, 0 if none.
      pinnable: bool[N] NoCopy of the buffer may pin its tensor (an output, not live-out, and the
        rules allow it).
      tensor_last: int64[N] per dense tensor id, the index of its last buffer (-1 for ids no
        buffer has).
      gain: float64[K, 256] per latency table, L(nothing) - L(mask): the time saved with the
        buffers of `mask` in fast memory (padded with zeros). Placing buffer b when `mask` is
        placed earns gain[mask | bit(b)] - gain[mask].
    """

    rules: Rules
    col_bytes: int
    usable_columns: int
    tick_scale: float
    width: np.ndarray
    supply: np.ndarray
    demand: np.ndarray
    copy_from: np.ndarray
    tensor: np.ndarray
    group: np.ndarray
    table: np.ndarray
    table_bit: np.ndarray
    gain: np.ndarray
    pinnable: np.ndarray
    tensor_last: np.ndarray


def tick_scale(total_supply: float) -> float:
    """The largest power of two `s` with `s * total_supply <= TICK_BUDGET`."""
    if total_supply <= 2.0 ** -900:  # no supply worth a tick (and no overflow of the scale)
        return 1.0
    k = min(math.floor(math.log2(TICK_BUDGET / total_supply)), 1000)
    while 2.0 ** k * total_supply > TICK_BUDGET:
        k -= 1
    while 2.0 ** (k + 1) * total_supply <= TICK_BUDGET:
        k += 1
    return 2.0 ** k


def discretize(problem: Problem, rules: Rules = Rules()) -> Discretized:
    """The problem in game units. Checks the problem first (`ProblemError` if it breaks a rule of
    the format), so that neither game ever plays an inconsistent problem."""
    check_problem(problem)
    col_bytes = -(-problem.memory_size // rules.columns)
    usable = problem.memory_size // col_bytes
    width = -(-problem.size // col_bytes)
    width = np.minimum(width, rules.columns + 1)  # anything wider than memory is just "too wide"
    scale = tick_scale(float(np.sum(problem.supply)))
    supply = np.floor(problem.supply * scale).astype(np.int64)
    demand = np.minimum(np.ceil(problem.demand * scale), TICK_BUDGET + 1).astype(np.int64)
    _, tensor = np.unique(problem.tensor_id, return_inverse=True)
    n = problem.num_buffers
    tensor = tensor.astype(np.int64).reshape(n)
    # Dense group ids: first the real alias groups, then one singleton per unaliased buffer.
    _, alias_dense = np.unique(problem.alias_id, return_inverse=True)
    has_alias = problem.alias_id >= 0
    offset = 1 if np.any(~has_alias) else 0  # np.unique puts -1 first
    group = np.where(has_alias, alias_dense - offset, 0)
    num_alias = int(group[has_alias].max()) + 1 if np.any(has_alias) else 0
    group[~has_alias] = num_alias + np.arange(int(np.sum(~has_alias)))
    table = np.full(n, -1, np.int64)
    table_bit = np.zeros(n, np.int64)
    gain = np.zeros((len(problem.latency_tables), 256), np.float64)
    for j, t in enumerate(problem.latency_tables):
        table[t.buffers] = j
        table_bit[t.buffers] = np.arange(t.buffers.shape[0])
        gain[j, : t.latency.shape[0]] = t.latency[0] - t.latency
    written = np.zeros(int(tensor.max(initial=-1)) + 1, bool)
    written[tensor[problem.is_output]] = True
    copy_from = problem.live_start + written[tensor]
    pinnable = problem.is_output & ~problem.live_out & rules.output_nocopy
    tensor_last = np.full(n, -1, np.int64)
    np.maximum.at(tensor_last, tensor, np.arange(n))
    return Discretized(rules=rules, col_bytes=int(col_bytes), usable_columns=int(usable),
                       tick_scale=scale, width=width.astype(np.int64), supply=supply,
                       demand=demand, copy_from=copy_from.astype(np.int64), tensor=tensor,
                       group=group.astype(np.int64), table=table, table_bit=table_bit, gain=gain,
                       pinnable=pinnable.astype(bool), tensor_last=tensor_last)


def capacity_loss(problem: Problem, columns: int) -> dict:
    """How much fast memory the grid's rounding costs on `problem` (docs/game.md).

    Returns a dict: `col_bytes`; `unusable_tail`, the fraction of memory past the last whole
    column; `size_rounding`, the fraction of the columns' bytes that buffers leave empty (over the
    buffers that fit, 1 - sum(size) / sum(width * col_bytes)).
    """
    col_bytes = -(-problem.memory_size // columns)
    usable = (problem.memory_size // col_bytes) * col_bytes
    sizes = problem.size[(problem.size > 0) & (problem.size <= usable)].astype(np.float64)
    rounded = np.ceil(sizes / col_bytes) * col_bytes
    return {"columns": columns, "col_bytes": int(col_bytes),
            "unusable_tail": 1.0 - usable / problem.memory_size,
            "size_rounding": float(1.0 - sizes.sum() / rounded.sum()) if sizes.size else 0.0}


def auto_columns(problem: Problem, *, max_loss: float = 0.05, smallest: int = 256,
                 largest: int = 4096) -> int:
    """The fewest grid columns (a power of two in [smallest, largest]) that lose at most
    `max_loss` of the buffers' bytes to rounding (see `capacity_loss`): a finer grid wastes less
    memory but costs more per move."""
    columns = smallest
    while columns < largest and capacity_loss(problem, columns)["size_rounding"] > max_loss:
        columns *= 2
    return columns


def exact_return(problem: Problem, action: np.ndarray, d: Discretized | None = None) -> float:
    """The return of a finished game from its decisions, in float64: the static benefits of the
    placed buffers in no latency table, plus each table's gain for its placed buffers (the
    dynamic rewards of one table add up to that). The JAX game sums its rewards in float32;
    solution files carry this exact value."""
    d = discretize(problem) if d is None else d
    placed = (action == 0) | (action == 1)
    total = float(np.sum(problem.benefit[placed & (d.table < 0)]))
    # each table's placed buffers as a mask of their (distinct) bits, in one pass over the buffers
    tabled = placed & (d.table >= 0)
    mask = np.zeros(d.gain.shape[0], np.int64)
    np.add.at(mask, d.table[tabled], np.left_shift(1, d.table_bit[tabled]))
    for gain in d.gain[np.arange(d.gain.shape[0]), mask].tolist():  # (added in table order, as before)
        total += gain
    return total
