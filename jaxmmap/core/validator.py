# size: one file on purpose: the independent checker is read and audited alone, and imports
# nothing of the package but problem.py (tests/test_validator.py checks that).
"""An independent validator of solutions: does a solution obey the physics of its problem?

The validator reads only the data containers of `jaxmmap.core.problem` and knows nothing about how
the game chooses copy times or offsets: any feasible placement and copy timing passes, whoever
produced it (the game, a CP-SAT model, a hand-written schedule). It works in bytes and in the
problem's own float units of supply and demand, not in grid columns or ticks.

`validate(problem, solution)` returns a `Report` that lists every violation found (it does not
stop at the first) and the return recomputed from the problem. All intervals are inclusive
steps; a byte range is `[offset, offset + size)`.

Rules and their codes (`Violation.rule`):

* ``problem_name``  the solution names another problem.
* ``length``        a solution array does not have one entry per buffer (nothing else is
                    checked then).
* ``action``        an action is not Copy (0), NoCopy (1) or Drop (2).
* ``drop``          a dropped buffer has an offset, allocation or copy interval (all must be -1).
* ``offset``        a placed buffer has a negative offset or does not fit in memory
                    (``offset + size > memory_size``).
* ``alloc``         a malformed allocation: a Copy without ``alloc_start <= alloc_end`` around its
                    target time, a NoCopy of an output (a *pin*) whose allocation is not its
                    tensor's live range, or another NoCopy with only one end set or
                    ``alloc_start > alloc_end``.
* ``live_range``    an allocation or a copy interval leaves the tensor's live range.
* ``copy_interval`` a Copy's copy interval is missing (demand > 0), malformed, or on the wrong
                    side of the target: an input needs
                    ``alloc_start <= copy_start <= copy_end <= target_time - 1``, an output
                    ``target_time + 1 <= copy_start <= copy_end <= alloc_end``.
* ``copy_early``    an input's copy starts while its tensor is still being written (before the
                    step after the tensor's output buffer).
* ``nocopy_copy``   a NoCopy has a copy interval.
* ``slow_memory``   a pinned tensor (its output buffer is a NoCopy: it is written into fast
                    memory and never copied out, so it never reaches slow memory) is needed in
                    slow memory: a later buffer of it is a Copy (a copy from slow memory) or a
                    Drop (a read from slow memory), or the tensor is ``live_out`` (a result of
                    the program, which must end in slow memory).
* ``nocopy_predecessor``  a NoCopy has no predecessor: with an allocation of its own, no earlier
                    placed buffer of the same tensor has an allocation ending exactly one step
                    before it starts; without one, no earlier placed buffer of the same tensor has
                    an allocation covering its target time.
* ``nocopy_offset`` the predecessor exists but at another byte offset: the data would move
                    without a copy (accepted only with ``validate(..., allow_nocopy_move=True)``,
                    for games played with the paper's "lowest" NoCopy rule).
* ``nocopy_target`` a NoCopy with an allocation of its own and a predecessor, where neither
                    holds the tensor at the target time (predecessor start <= target_time <=
                    own end fails).
* ``alias_mixed``   an alias group has both placed and dropped members.
* ``alias_offset``  the placed members of an alias group are at different offsets.
* ``overlap``       two allocations of different alias groups overlap in time and bytes (two
                    allocations of the same tensor at the same offset hold the same data and may
                    overlap; zero-size buffers overlap nothing). At most `MAX_LISTED` pairs are
                    listed, then one summary violation with ``buffer = -1`` gives the count.
* ``copy_engine``   two copy intervals share two steps or more (one copy engine: equation 6 of
                    the paper); listed like ``overlap``.
* ``copy_supply``   the copies' demands do not fit the supply: checked exactly with
                    earliest-deadline-first, which is optimal for preemptive jobs with release
                    times and deadlines; the copy that misses its end is named.
* ``return``        the declared return differs from the recomputed one.

The recomputed return is the sum of the benefits of the placed (Copy or NoCopy) buffers, except
that a buffer listed in a latency table does not use its benefit: each table instead contributes
``latency[0] - latency[mask]``, with bit i of ``mask`` set iff ``table.buffers[i]`` is placed
(the game's dynamic rewards add up to this).

Buffers whose own fields are malformed (for instance an allocation with ``start > end``) are left
out of the pairwise checks (overlap, copy engine, supply), which would only repeat the error.
"""

from __future__ import annotations

import dataclasses
import hashlib
import heapq
import math
import weakref

import numpy as np

from jaxmmap.core.problem import COPY, DROP, NOCOPY, Problem, Solution, UserError

__all__ = ["MAX_LISTED", "Report", "Violation", "validate"]

#: How many overlapping pairs (of allocations, of copy intervals) are listed one by one.
MAX_LISTED = 100

# Candidate pairs examined at once by the vectorized pair search.
_PAIR_CHUNK = 1 << 21

_ACTION_NAMES = {COPY: "Copy", NOCOPY: "NoCopy", DROP: "Drop"}


@dataclasses.dataclass(frozen=True)
class Violation:
    """One broken rule.

    Attributes:
      rule: a short stable code (see the module docstring).
      buffer: the (first) buffer concerned, -1 if none.
      message: human readable; names the buffers, steps and offsets.
    """

    rule: str
    buffer: int
    message: str

    def __str__(self) -> str:
        return f"{self.rule}: {self.message}"


@dataclasses.dataclass(frozen=True)
class Report:
    """The outcome of `validate`: every violation found, and the recomputed return."""

    violations: tuple[Violation, ...]
    recomputed_return: float

    @property
    def ok(self) -> bool:
        return not self.violations

    def rules(self) -> set[str]:
        """The codes of the broken rules."""
        return {v.rule for v in self.violations}

    def __str__(self) -> str:
        if self.ok:
            return f"valid (return {self.recomputed_return:.10g})"
        return "\n".join(str(v) for v in self.violations)


def validate(problem: Problem, solution: Solution, *, rtol: float = 1e-5,
             allow_nocopy_move: bool = False) -> Report:
    """Checks `solution` against the physics of `problem` and lists every violation.

    Args:
      problem: the problem (assumed to pass `jaxmmap.core.problem.check_problem`).
      solution: the solution to check.
      rtol: relative tolerance of the supply check (a copy is finished when its remaining demand
        is at most ``rtol * demand + 1e-12``) and of the return check.
      allow_nocopy_move: accept a NoCopy whose own allocation is at another offset than its
        predecessor (the paper's "lowest offset" NoCopy, where data moves without a copy). The
        caller decides: what a solution says of itself does not relax a check.
    """
    out: list[Violation] = []
    n = problem.num_buffers

    if solution.problem != problem.name:
        out.append(Violation("problem_name", -1,
                             f"the solution is for problem {solution.problem!r}, "
                             f"not {problem.name!r}"))

    fields = {}
    for name in ("action", "offset", "alloc_start", "alloc_end", "copy_start", "copy_end"):
        arr = np.asarray(getattr(solution, name))
        if arr.shape != (n,):
            out.append(Violation("length", -1,
                                 f"solution field {name} has shape {arr.shape}, expected ({n},)"
                                 " (one entry per buffer)"))
        fields[name] = arr
    if any(v.rule == "length" for v in out):
        return Report(tuple(out), math.nan)
    sol = dataclasses.replace(solution, **{k: v.astype(np.int64) for k, v in fields.items()})

    bad_action = ~np.isin(sol.action, (COPY, NOCOPY, DROP))
    for i in np.flatnonzero(bad_action):
        out.append(Violation("action", int(i),
                             f"buffer {i}: action {sol.action[i]} is not Copy (0), NoCopy (1)"
                             " or Drop (2)"))

    checker = _Checker(problem, sol, allow_nocopy_move, out)
    checker.check_buffers()
    checker.check_alias_groups()
    checker.check_overlaps()
    checker.check_copy_engine()
    checker.check_supply(rtol)

    recomputed, scale = _recompute_return(problem, sol.action)
    declared = float(solution.ret)
    if not (abs(declared - recomputed) <= rtol * scale + 1e-6):
        out.append(Violation("return", -1,
                             f"declared return {declared:.10g} differs from the recomputed "
                             f"{recomputed:.10g}"))
    return Report(tuple(out), recomputed)


#: Violations after which a solution's arrays cannot be simulated or drawn at all (with step
#: times outside the program, also refused even with `allow_invalid`).
UNUSABLE = frozenset({"length", "action"})
SHOWN = 10  # violations listed in a `SolutionRejected` message
#: `check_solution`'s hint for a solution the package made itself: its refusal is a bug.
BUG = "; a bug in jaxmmap: please report it with this message"


class SolutionRejected(UserError):
    """A solution that `validate` rejects, given where a valid one is required (every number the
    package reports about a solution comes from a valid one). `report` holds every violation."""

    def __init__(self, what: str, report: Report, *, hint: str = ""):
        self.report = report
        listed = [f"  {v}" for v in report.violations[:SHOWN]]
        if len(report.violations) > SHOWN:
            listed.append(f"  ... and {len(report.violations) - SHOWN} more (jaxmmap validate lists"
                          " them all)")
        n = len(report.violations)
        super().__init__(f"{what} is not a valid solution ({n} violation{'s' * (n != 1)}){hint}:\n"
                         + "\n".join(listed))


def check_solution(problem: Problem, solution: Solution, *, what: str = "the solution",
                   allow_invalid: bool = False, allow_nocopy_move: bool | None = None,
                   hint: str = "; to see its figures anyway, pass --show-invalid") -> Report:
    """The one check of a solution before anything is reported about it: validates `solution`
    once and remembers the verdict with a fingerprint of its arrays, so that every later check
    of the same `Solution` object, unchanged, against the same `problem` (by `latency`, the
    report, the placer, the command line) reuses it instead of validating again (the
    fingerprint costs a hash of the arrays' bytes, not a validation).

    Raises `SolutionRejected` listing the violations (with `hint` after the count: a solver's
    own result passes ""), unless `allow_invalid` (the caller then marks its output invalid);
    even then a solution whose arrays are unusable (`UNUSABLE`) is refused. `allow_nocopy_move`
    (see `validate`): by default, a NoCopy that moves data is accepted when the solution was
    made under the paper's "lowest" NoCopy rule, the rules it declares (the one relaxation a
    solution's own rules select; `validate` itself never relaxes a check on a solution's word);
    a solver passes the rules it played under."""
    if allow_nocopy_move is None:
        allow_nocopy_move = isinstance(solution.rules, dict) and solution.rules.get("nocopy_offset") == "lowest"
    key = (allow_nocopy_move, _fingerprint(solution))
    kept = _VERDICTS.get(solution)
    if kept is not None and kept[0]() is problem and kept[1] == key:
        report = kept[2]
    else:
        report = validate(problem, solution, allow_nocopy_move=allow_nocopy_move)
        _VERDICTS[solution] = (weakref.ref(problem), key, report)
    if report.ok:
        return report
    if not allow_invalid:
        raise SolutionRejected(what, report, hint=hint)
    steps = problem.num_steps
    if report.rules() & UNUSABLE or any(
            np.any((np.asarray(getattr(solution, k)) < -1) | (np.asarray(getattr(solution, k)) >= steps))
            for k in ("alloc_start", "alloc_end", "copy_start", "copy_end")):
        raise SolutionRejected(what, report, hint="; it cannot be simulated or drawn at all (its"
                               " arrays have the wrong length, or steps outside the program)")
    return report


# (solution -> (problem, (allow_nocopy_move, fingerprint), report)): the verdicts of
# `check_solution`, kept as long as the solution lives; a `Solution` hashes by identity (eq=False)
_VERDICTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_ARRAYS = ("action", "offset", "alloc_start", "alloc_end", "copy_start", "copy_end")


def _fingerprint(solution: Solution) -> bytes:
    """A digest of what `validate` reads of a solution besides its problem: its arrays (their
    bytes, dtype and shape), its return and the problem it names."""
    digest = hashlib.blake2b(f"{solution.problem!r} {float(solution.ret)!r}".encode(), digest_size=16)
    for name in _ARRAYS:
        a = np.ascontiguousarray(getattr(solution, name))
        digest.update(f"{a.dtype.str}{a.shape}".encode())
        digest.update(a.tobytes())
    return digest.digest()


def relabelled(solution: Solution, *, solver: str | None = None, metadata: dict | None = None) -> Solution:
    """`solution` under another solver name or with other metadata, which no check reads: a
    checked solution stays checked (its verdict is carried over, not made again)."""
    changes = {k: v for k, v in (("solver", solver), ("metadata", metadata)) if v is not None}
    out = dataclasses.replace(solution, **changes)
    if solution in _VERDICTS:
        _VERDICTS[out] = _VERDICTS[solution]
    return out


def recomputed_return(problem: Problem, action: np.ndarray) -> float:
    """The return of the decisions `action` (int[N]) as the validator recomputes it."""
    return _recompute_return(problem, np.asarray(action, np.int64))[0]


# ----------------------------------------------------------------------------- internals


def _recompute_return(problem: Problem, action: np.ndarray) -> tuple[float, float]:
    """The return of placing the buffers placed by `action`, and the scale (the sum of the
    magnitudes of its terms) against which a relative tolerance is taken."""
    placed = (action == COPY) | (action == NOCOPY)
    static = np.ones(problem.num_buffers, dtype=bool)
    terms = []
    for table in problem.latency_tables:
        buffers = np.asarray(table.buffers, dtype=np.int64)
        static[buffers] = False
        mask = int(np.sum(placed[buffers].astype(np.int64) << np.arange(buffers.size)))
        terms.append(float(table.latency[0]) - float(table.latency[mask]))
    benefits = np.asarray(problem.benefit, dtype=np.float64)[placed & static]
    total = float(np.sum(benefits)) + math.fsum(terms)
    scale = max(abs(total), float(np.sum(np.abs(benefits))) + sum(abs(t) for t in terms))
    return total, scale


def _intersecting_pairs(start, end, lo, hi, allowed=None):
    """Pairs of intervals that intersect in time (inclusive [start, end]) and in bytes
    (half-open [lo, hi)), in order of the earlier start; `allowed(i, j)` (vectorized) exempts
    pairs. Returns (the first MAX_LISTED pairs as (i, j) with i < j, the total count).

    Sorting by start, the intervals that start within [start_p, end_p] after p are a contiguous
    run of the sorted order; the candidate pairs are generated and filtered in numpy chunks.
    """
    n = start.shape[0]
    if n < 2:
        return [], 0
    order = np.argsort(start, kind="stable")
    s, e = start[order], end[order]
    last = np.searchsorted(s, e, side="right")
    count = np.maximum(last - np.arange(n) - 1, 0)
    cum = np.cumsum(count)
    listed: list[tuple[int, int]] = []
    total = 0
    p0 = 0
    while p0 < n:
        base = int(cum[p0 - 1]) if p0 else 0
        p1 = max(p0 + 1, int(np.searchsorted(cum, base + _PAIR_CHUNK, side="right")))
        c = count[p0:p1]
        k = int(c.sum())
        if k:
            rp = np.repeat(np.arange(p0, p1), c)
            within = np.arange(k) - np.repeat(np.cumsum(c) - c, c)
            i, j = order[rp], order[rp + 1 + within]
            hit = (lo[i] < hi[j]) & (lo[j] < hi[i])
            if allowed is not None:
                hit &= ~allowed(i, j)
            i, j = i[hit], j[hit]
            total += int(i.size)
            room = MAX_LISTED - len(listed)
            if room > 0:
                a, b = np.minimum(i[:room], j[:room]), np.maximum(i[:room], j[:room])
                listed.extend(zip(a.tolist(), b.tolist()))
        p0 = p1
    return listed, total


class _Checker:
    """The checks of `validate`, appending to one list of violations."""

    def __init__(self, problem: Problem, sol: Solution, allow_nocopy_move: bool,
                 out: list[Violation]):
        self.p = problem
        self.s = sol
        self.out = out
        self.lowest = allow_nocopy_move
        # A tensor written by an instruction exists in slow memory only from the step after.
        written = {int(k) for k in problem.tensor_id[problem.is_output]}
        self.copy_from = problem.live_start + np.isin(problem.tensor_id, list(written))
        a = sol.action
        self.copy = a == COPY
        self.nocopy = a == NOCOPY
        self.drop = a == DROP
        self.placed = self.copy | self.nocopy
        # Filled by check_buffers: which allocations and copy intervals are well formed.
        self.has_alloc = np.zeros(problem.num_buffers, dtype=bool)
        self.has_copy = np.zeros(problem.num_buffers, dtype=bool)

    def add(self, rule: str, buffer: int, message: str) -> None:
        self.out.append(Violation(rule, int(buffer), message))

    # --------------------------------------------------------------- per buffer

    def check_buffers(self) -> None:
        p, s = self.p, self.s
        mem = int(p.memory_size)
        for i in np.flatnonzero(self.drop):
            fields = {name: int(getattr(s, name)[i]) for name in
                      ("offset", "alloc_start", "alloc_end", "copy_start", "copy_end")}
            set_ = {k: v for k, v in fields.items() if v != -1}
            if set_:
                desc = ", ".join(f"{k}={v}" for k, v in set_.items())
                self.add("drop", i, f"buffer {i} is dropped but has {desc} (all must be -1)")

        for i in np.flatnonzero(self.placed):
            off, size = int(s.offset[i]), int(p.size[i])
            if off < 0 or off + size > mem:
                self.add("offset", i,
                         f"buffer {i} ({_ACTION_NAMES[int(s.action[i])]}) at offset {off} with "
                         f"size {size} does not fit in memory [0, {mem})")

        for i in np.flatnonzero(self.copy):
            self._check_copy(int(i))
        self._check_nocopies()

    def _live(self, i: int) -> tuple[int, int]:
        return int(self.p.live_start[i]), int(self.p.live_end[i])

    def _check_alloc_in_live_range(self, i: int, a0: int, a1: int) -> None:
        ls, le = self._live(i)
        if a0 < ls or a1 > le:
            self.add("live_range", i,
                     f"buffer {i}: allocation [{a0}, {a1}] leaves the live range [{ls}, {le}]")

    def _check_copy(self, i: int) -> None:
        p, s = self.p, self.s
        t = int(p.target_time[i])
        a0, a1 = int(s.alloc_start[i]), int(s.alloc_end[i])
        c0, c1 = int(s.copy_start[i]), int(s.copy_end[i])
        ls, le = self._live(i)
        if not (0 <= a0 <= t <= a1):
            self.add("alloc", i,
                     f"buffer {i} (Copy, target step {t}): allocation [{a0}, {a1}] is not an "
                     f"interval containing the target step")
        else:
            self.has_alloc[i] = True
            self._check_alloc_in_live_range(i, a0, a1)

        demand = float(p.demand[i])
        if c0 == -1 and c1 == -1:
            if demand > 0:
                self.add("copy_interval", i,
                         f"buffer {i} (Copy) has demand {demand:g} but no copy interval")
            return
        if not (0 <= c0 <= c1):
            self.add("copy_interval", i,
                     f"buffer {i} (Copy): copy interval [{c0}, {c1}] is malformed")
            return
        self.has_copy[i] = True
        if c0 < ls or c1 > le:
            self.add("live_range", i,
                     f"buffer {i}: copy interval [{c0}, {c1}] leaves the live range [{ls}, {le}]")
        if p.is_output[i]:
            if not (t + 1 <= c0 and c1 <= a1):
                self.add("copy_interval", i,
                         f"buffer {i} (output Copy, target step {t}): copy interval [{c0}, {c1}] "
                         f"must lie in [{t + 1}, alloc_end={a1}] (after the write, inside the "
                         "allocation)")
        elif not (a0 <= c0 and c1 <= t - 1):
            self.add("copy_interval", i,
                     f"buffer {i} (input Copy, target step {t}): copy interval [{c0}, {c1}] must "
                     f"lie in [alloc_start={a0}, {t - 1}] (inside the allocation, before the read)")
        elif ls <= c0 < self.copy_from[i]:
            self.add("copy_early", i,
                     f"buffer {i} (input Copy): the copy starts at step {c0}, while its tensor is "
                     f"still being written (it can be copied from step {self.copy_from[i]})")

    def _check_nocopies(self) -> None:
        p = self.p
        # Earlier placed buffers with a well-formed allocation, per tensor (filled in order, so a
        # NoCopy sees only lower indices).
        by_tensor: dict[int, list[int]] = {}
        pinned: dict[int, int] = {}  # tensor -> its pinning output buffer
        for i in range(p.num_buffers):
            tensor = int(p.tensor_id[i])
            if self.nocopy[i] and p.is_output[i]:
                self._check_pin(i)
                pinned[tensor] = i
            elif self.nocopy[i]:
                self._check_nocopy(i, by_tensor.get(tensor, []))
            elif tensor in pinned:
                what = "copied from slow memory (Copy)" if self.copy[i] else "read from slow memory (Drop)"
                self.add("slow_memory", i,
                         f"buffer {i} of tensor {tensor} is {what}, but the tensor is pinned in fast "
                         f"memory by its output buffer {pinned[tensor]} (a NoCopy) and never reaches "
                         "slow memory: every later buffer of it must be a NoCopy")
            if self.has_alloc[i]:
                by_tensor.setdefault(tensor, []).append(i)

    def _check_pin(self, i: int) -> None:
        """A NoCopy of an output: written into fast memory and kept there, with no copy."""
        p, s = self.p, self.s
        t = int(p.target_time[i])
        a0, a1 = int(s.alloc_start[i]), int(s.alloc_end[i])
        c0, c1 = int(s.copy_start[i]), int(s.copy_end[i])
        if c0 != -1 or c1 != -1:
            self.add("nocopy_copy", i,
                     f"buffer {i} (NoCopy) has a copy interval [{c0}, {c1}] (must be -1, -1)")
        if p.live_out[i]:
            self.add("slow_memory", i,
                     f"buffer {i} (NoCopy of an output) pins tensor {int(p.tensor_id[i])} in fast "
                     "memory, but the tensor is live-out (a result of the program) and must end in "
                     "slow memory")
        ls, le = self._live(i)
        if not (0 <= a0 <= t <= a1):
            self.add("alloc", i,
                     f"buffer {i} (NoCopy of an output, target step {t}): allocation [{a0}, {a1}] "
                     "is not an interval containing the target step")
            return
        self.has_alloc[i] = True
        self._check_alloc_in_live_range(i, a0, a1)
        if a1 < le:  # (past live_end is a live_range violation)
            self.add("alloc", i,
                     f"buffer {i} (NoCopy of an output): allocation [{a0}, {a1}] must hold the pinned "
                     f"tensor for its whole live range [{ls}, {le}] (it is in no other memory)")

    def _check_nocopy(self, i: int, earlier: list[int]) -> None:
        p, s = self.p, self.s
        t, off = int(p.target_time[i]), int(s.offset[i])
        a0, a1 = int(s.alloc_start[i]), int(s.alloc_end[i])
        c0, c1 = int(s.copy_start[i]), int(s.copy_end[i])
        tensor = int(p.tensor_id[i])
        if c0 != -1 or c1 != -1:
            self.add("nocopy_copy", i,
                     f"buffer {i} (NoCopy) has a copy interval [{c0}, {c1}] (must be -1, -1)")

        if a0 == -1 and a1 == -1:
            # (b) The data is already in fast memory at the target step.
            covering = [j for j in earlier if s.alloc_start[j] <= t <= s.alloc_end[j]]
            if not covering:
                self.add("nocopy_predecessor", i,
                         f"buffer {i} (NoCopy without an allocation): no earlier placed buffer of "
                         f"tensor {tensor} has an allocation covering its target step {t}")
            elif not any(s.offset[j] == off for j in covering):
                where = ", ".join(f"buffer {j} at offset {s.offset[j]}" for j in covering)
                self.add("nocopy_offset", i,
                         f"buffer {i} (NoCopy without an allocation) is at offset {off}, but "
                         f"tensor {tensor} is at step {t} in {where}")
            return

        if not (0 <= a0 <= a1):
            self.add("alloc", i, f"buffer {i} (NoCopy): allocation [{a0}, {a1}] is malformed")
            return
        self.has_alloc[i] = True
        self._check_alloc_in_live_range(i, a0, a1)
        # (a) The allocation continues an earlier one of the same tensor.
        adjacent = [j for j in earlier if s.alloc_end[j] == a0 - 1]
        if not adjacent:
            self.add("nocopy_predecessor", i,
                     f"buffer {i} (NoCopy, allocation [{a0}, {a1}]): no earlier placed buffer of "
                     f"tensor {tensor} has an allocation ending at step {a0 - 1}")
            return
        same_place = adjacent if self.lowest else [j for j in adjacent if s.offset[j] == off]
        if not same_place:
            where = ", ".join(f"buffer {j} at offset {s.offset[j]}" for j in adjacent)
            self.add("nocopy_offset", i,
                     f"buffer {i} (NoCopy, allocation [{a0}, {a1}]) is at offset {off}, but its "
                     f"predecessor is {where} (the data does not move without a copy)")
            return
        if not any(s.alloc_start[j] <= t <= a1 for j in same_place):
            where = ", ".join(f"buffer {j} [{s.alloc_start[j]}, {s.alloc_end[j]}]"
                              for j in same_place)
            self.add("nocopy_target", i,
                     f"buffer {i} (NoCopy, allocation [{a0}, {a1}]) and its predecessor ({where}) "
                     f"do not hold tensor {tensor} at the target step {t}")

    # --------------------------------------------------------------- alias groups

    def check_alias_groups(self) -> None:
        p, s = self.p, self.s
        members: dict[int, list[int]] = {}
        for i in np.flatnonzero(p.alias_id >= 0):
            members.setdefault(int(p.alias_id[i]), []).append(int(i))
        for group, idx in sorted(members.items()):
            placed = [i for i in idx if self.placed[i]]
            dropped = [i for i in idx if self.drop[i]]
            if placed and dropped:
                self.add("alias_mixed", idx[0],
                         f"alias group {group} has placed members {_short(placed)} and dropped "
                         f"members {_short(dropped)} (all or none must be placed)")
            offsets = sorted({int(s.offset[i]) for i in placed})
            if len(offsets) > 1:
                where = ", ".join(f"buffer {i} at {s.offset[i]}" for i in placed[:10])
                self.add("alias_offset", placed[0],
                         f"alias group {group} is placed at offsets {offsets} ({where}); all "
                         "members must share one offset")

    # --------------------------------------------------------------- pairwise

    def check_overlaps(self) -> None:
        p, s = self.p, self.s
        idx = np.flatnonzero(self.has_alloc & (p.size > 0) & (s.offset >= 0))
        if idx.size < 2:
            return
        lo = s.offset[idx]
        hi = lo + p.size[idx]
        # One group key per alias group; a buffer without one is its own group.
        group = np.where(p.alias_id[idx] >= 0, p.alias_id[idx], -1 - idx)
        tensor = p.tensor_id[idx]

        def allowed(a, b):
            return (group[a] == group[b]) | ((tensor[a] == tensor[b]) & (lo[a] == lo[b]))

        pairs, total = _intersecting_pairs(s.alloc_start[idx], s.alloc_end[idx], lo, hi, allowed)
        for a, b in pairs:
            i, j = sorted((int(idx[a]), int(idx[b])))
            self.add("overlap", i,
                     f"buffers {i} and {j} overlap: {self._rect(i)} and {self._rect(j)}")
        if total > len(pairs):
            self.add("overlap", -1,
                     f"{total} overlapping pairs of allocations in all, {len(pairs)} listed")

    def _rect(self, i: int) -> str:
        s = self.s
        off = int(s.offset[i])
        return (f"steps [{s.alloc_start[i]}, {s.alloc_end[i]}] x bytes "
                f"[{off}, {off + int(self.p.size[i])})")

    def check_copy_engine(self) -> None:
        s = self.s
        # Two copy intervals share two steps iff they share an "edge" (steps k, k+1): the
        # interval [a, b] covers edges a..b-1.
        idx = np.flatnonzero(self.has_copy & (s.copy_end > s.copy_start))
        if idx.size < 2:
            return
        zeros, ones = np.zeros(idx.size, np.int64), np.ones(idx.size, np.int64)
        pairs, total = _intersecting_pairs(s.copy_start[idx], s.copy_end[idx] - 1, zeros, ones)
        for a, b in pairs:
            i, j = sorted((int(idx[a]), int(idx[b])))
            lo = max(s.copy_start[i], s.copy_start[j])
            hi = min(s.copy_end[i], s.copy_end[j])
            self.add("copy_engine", i,
                     f"copy intervals of buffers {i} [{s.copy_start[i]}, {s.copy_end[i]}] and "
                     f"{j} [{s.copy_start[j]}, {s.copy_end[j]}] share steps [{lo}, {hi}] (at most "
                     "one step may be shared)")
        if total > len(pairs):
            self.add("copy_engine", -1,
                     f"{total} pairs of copy intervals share two steps or more, {len(pairs)} "
                     "listed")

    def check_supply(self, rtol: float) -> None:
        """Earliest-deadline-first over the steps: each step's supply goes to the unfinished
        active copies with the earliest copy_end first. A copy still unfinished after its last
        step cannot be served by any schedule."""
        p, s = self.p, self.s
        supply = np.asarray(p.supply, dtype=np.float64)
        T = supply.shape[0]
        idx = np.flatnonzero(self.has_copy & (p.demand > 0))
        if idx.size == 0:
            return
        start = np.clip(s.copy_start[idx], 0, T)
        end = np.clip(s.copy_end[idx], -1, T - 1)
        demand = p.demand[idx].astype(np.float64)
        remaining = demand.copy()
        done_tol = rtol * demand + 1e-12
        order = np.argsort(start, kind="stable")
        heap: list[tuple[int, int]] = []  # (copy_end, position in idx)
        k = 0

        def fail(q: int) -> None:
            i = int(idx[q])
            self.add("copy_supply", i,
                     f"buffer {i}: copy interval [{s.copy_start[i]}, {s.copy_end[i]}] gets only "
                     f"{demand[q] - remaining[q]:.6g} of its demand {demand[q]:.6g}: the supply "
                     "is not enough for the copies that share it (earliest deadline first)")

        t = 0
        while k < order.size or heap:
            if not heap:
                t = max(t, int(start[order[k]]))
            while k < order.size and start[order[k]] <= t:
                q = int(order[k])
                if end[q] < start[q]:  # outside the program: no supply at all
                    fail(q)
                else:
                    heapq.heappush(heap, (int(end[q]), q))
                k += 1
            left = float(supply[t]) if t < T else 0.0
            while heap and left > 0.0:
                q = heap[0][1]
                give = min(remaining[q], left)
                remaining[q] -= give
                left -= give
                if remaining[q] <= done_tol[q]:
                    heapq.heappop(heap)
                else:
                    break
            while heap and heap[0][0] <= t:
                q = heapq.heappop(heap)[1]
                if remaining[q] > done_tol[q]:
                    fail(q)
            t += 1


def _short(items: list[int], limit: int = 10) -> str:
    if len(items) <= limit:
        return str(items)
    return "[" + ", ".join(map(str, items[:limit])) + f", ... ({len(items)} in all)]"
