"""The heuristic's resources: an occupancy grid of columns x steps, and the one copy engine with
its per-step supply, checked exactly (earliest deadline first)."""

from __future__ import annotations

import bisect

import numpy as np

from jaxmmap.core.rules import Discretized

__all__ = ["BLOCK", "Memory"]

#: Rows of the occupancy grid a block summary covers (`Memory.blocks`).
BLOCK = 64


class Memory:
    """The plan's resources: occupied grid cells, and the copies on the one copy engine.

    Copies are checked exactly, as XLA's asynchronous-copy resource does: a new copy is accepted
    if no copy interval shares two steps with it (equation 6) and earliest-deadline-first can
    still serve every copy of the chain it joins. Because copies of two steps or more never
    share an edge, a step is touched only by one copy ending there, one starting or running
    through it, and any number of one-step copies, so EDF is one pass along the chain.
    """

    def __init__(self, d: Discretized, num_steps: int):
        self.columns = d.usable_columns
        self.occ = np.zeros((num_steps, max(self.columns, 1)), bool)
        # per block of `BLOCK` rows, the columns occupied in any of its rows (`best_fit` reads
        # these over a long span: pins hold a tensor's whole life, thousands of rows)
        self.blocks = np.zeros((-(-num_steps // BLOCK), self.occ.shape[1]), bool)
        self._line = np.ones(self.columns + 2, bool)  # `best_fit`'s scratch: blocked columns, padded
        supply = d.supply.astype(np.int64)
        self.elapsed = np.concatenate([[0], np.cumsum(supply)])  # "time" in supply units (read as arrays)
        # The copy engine's state is read one step at a time, hundreds of thousands of times a
        # plan: Python lists, whose items read several times faster than NumPy's (the placer's
        # moves ran 1.3x faster, benchmarks/placer_speed.py).
        self._supply, self._elapsed = supply.tolist(), self.elapsed.tolist()
        self.cover = [-1] * num_steps  # copy covering edge k (steps k, k+1)
        self.start_of = [-1] * num_steps  # multi-step copy starting at step k
        self.singles = [0] * num_steps  # demand of one-step copies at step k
        self.copies: list[tuple[int, int, int]] = []  # (start, end, demand), multi-step
        # the multi-step copies' starts and ends, sorted by start: their edges never overlap, so
        # whether steps a to b hold an edge of one is one bisection (`_covered`)
        self._starts: list[int] = []
        self._ends: list[int] = []

    def time(self, a: int, b: int) -> int:
        """Elapsed time (supply) of steps [a, b]."""
        return self._elapsed[b + 1] - self._elapsed[a] if b >= a else 0

    def best_fit(self, steps: np.ndarray, width: int, *, lowest: bool = False) -> int:
        """The start of the smallest free run of >= width columns over `steps` (with `lowest`:
        the lowest free offset, the game's rule), or -1."""
        if steps.size and int(steps[-1]) - int(steps[0]) + 1 == steps.size:
            return self.span_fit(int(steps[0]), int(steps[-1]), width, lowest=lowest)
        if width == 0:
            return 0
        if width > self.columns:
            return -1
        np.logical_or.reduce(self.occ[steps, :self.columns], axis=0, out=self._line[1:-1])
        return self._fit(width, lowest)

    def span_fit(self, a: int, b: int, width: int, *, lowest: bool = False) -> int:
        """`best_fit` over the steps a to b (none where b < a)."""
        if width == 0:
            return 0
        if width > self.columns:
            return -1
        line, c = self._line, self.columns
        if b <= a:
            line[1:-1] = self.occ[a, :c] if b == a else False
        elif b - a + 1 < 3 * BLOCK:
            np.logical_or.reduce(self.occ[a:b + 1, :c], axis=0, out=line[1:-1])
        else:  # the rows before the first whole block, the whole blocks' summaries, the rest
            first, end = -(-a // BLOCK), (b + 1) // BLOCK
            np.logical_or.reduce(self.occ[a:first * BLOCK, :c], axis=0, out=line[1:-1])
            line[1:-1] |= np.logical_or.reduce(self.blocks[first:end, :c], axis=0)
            line[1:-1] |= np.logical_or.reduce(self.occ[end * BLOCK:b + 1, :c], axis=0)
        return self._fit(width, lowest)

    def _fit(self, width: int, lowest: bool) -> int:
        """`best_fit` on the blocked columns in `_line`, between two blocked sentinels: the
        changes along it alternate, blocked to free (a run's start) and free to blocked (its end,
        exclusive). (Methods, not NumPy's functions: a call is a few microseconds, and a plan
        makes hundreds of thousands.)"""
        line = self._line
        edges = (line[1:] != line[:-1]).nonzero()[0]
        starts = edges[0::2]
        runs = edges[1::2] - starts
        if not runs.size:
            return -1
        if lowest:
            ok = (runs >= width).nonzero()[0]
            return int(starts[ok[0]]) if ok.size else -1
        fitting = np.where(runs >= width, runs, self.columns + 1)
        j = int(fitting.argmin())
        return int(starts[j]) if fitting[j] <= self.columns else -1

    def free(self, a: int, b: int, offset: int, width: int) -> bool:
        return not self.occ[a:b + 1, offset:offset + width].any()

    def take(self, a: int, b: int, offset: int, width: int) -> None:
        self.occ[a:b + 1, offset:offset + width] = True
        self.blocks[a // BLOCK:b // BLOCK + 1, offset:offset + width] = True

    def release(self, a: int, b: int, offset: int, width: int) -> None:
        """Frees the cells `take(a, b, offset, width)` took."""
        self.occ[a:b + 1, offset:offset + width] = False
        lo, hi = a // BLOCK * BLOCK, min((b // BLOCK + 1) * BLOCK, self.occ.shape[0])
        self.blocks[a // BLOCK:b // BLOCK + 1, offset:offset + width] = np.logical_or.reduceat(
            self.occ[lo:hi, offset:offset + width], np.arange(0, hi - lo, BLOCK), axis=0)

    def _covered(self, a: int, b: int) -> bool:
        """Does a multi-step copy cover an edge k with a <= k < b?"""
        j = bisect.bisect_left(self._starts, b) - 1
        return j >= 0 and self._ends[j] > a

    def uncovered_from(self, b: int) -> int:
        """The lowest a such that no multi-step copy covers an edge k with a <= k < b."""
        j = bisect.bisect_left(self._starts, b) - 1
        return self._ends[j] if j >= 0 else 0

    def copy_fits(self, a: int, b: int, demand: int) -> bool:
        """Can a copy over steps [a, b] with `demand` ticks join the engine's schedule?"""
        if self._elapsed[b + 1] - self._elapsed[a] < demand or (b > a and self._covered(a, b)):
            return False
        cover, copies, singles, supply, start_of = self.cover, self.copies, self.singles, self._supply, self.start_of
        lo, hi = a, b
        while lo > 0 and cover[lo - 1] >= 0:  # extend over the chain of copies
            lo = copies[cover[lo - 1]][0]
        while cover[hi] >= 0:
            hi = copies[cover[hi]][1]
        rem, end = 0, -1  # the running multi-step copy: remaining demand, last step
        for k in range(lo, hi + 1):
            need = singles[k] + (demand if a == b == k else 0) + (rem if end == k else 0)
            avail = supply[k] - need
            if avail < 0:
                return False
            if end == k:
                rem, end = 0, -1
            j = start_of[k]
            if j >= 0:
                rem, end = copies[j][2], copies[j][1]
            elif k == a < b:
                rem, end = demand, b
            if end > k:
                rem -= min(rem, avail)
        return True

    def add_copy(self, a: int, b: int, demand: int) -> None:
        if a == b:
            self.singles[a] += demand
            return
        j = len(self.copies)
        self.copies.append((a, b, demand))
        self.cover[a:b] = [j] * (b - a)
        self.start_of[a] = j
        at = bisect.bisect_left(self._starts, a)
        self._starts.insert(at, a)
        self._ends.insert(at, b)

    def remove_copy(self, a: int, b: int, demand: int) -> None:
        """Undoes the latest `add_copy(a, b, demand)` still in place."""
        if a == b:
            self.singles[a] -= demand
            return
        assert self.copies[-1] == (a, b, demand), "copies are removed in reverse order"
        self.copies.pop()
        self.cover[a:b] = [-1] * (b - a)
        self.start_of[a] = -1
        at = bisect.bisect_left(self._starts, a)
        del self._starts[at], self._ends[at]
