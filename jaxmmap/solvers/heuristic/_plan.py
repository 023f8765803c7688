"""The heuristic's plan: a simplified memory-space assignment (the steps are in the package
docstring), and its placer mode (`plan(decisions=...)`), which places another solution's
decisions with the same machinery."""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from jaxmmap.core.problem import COPY, DROP, NOCOPY, Problem, Solution
from jaxmmap.core.rules import Discretized, Rules, discretize, exact_return
from jaxmmap.solvers.heuristic._items import SHARED, ranked_items
from jaxmmap.solvers.heuristic._memory import Memory
from jaxmmap.solvers.heuristic._pins import pin_order, unit_steps

__all__ = ["MAX_OVERLAP", "MIN_OVERLAP", "PIN_MODES", "PREFERRED_OVERLAP", "Plan", "benefit_estimate",
           "plan"]

PREFERRED_OVERLAP = 1.5
MIN_OVERLAP = 0.8
MAX_OVERLAP = 10.0
MAX_START_TRIES = 64  # prefetch starts tried per use, nearest the preferred overlap first
PIN_MODES = ("never", "compare", "first", "first-kept", "only")

@dataclasses.dataclass(frozen=True)
class Plan:
    """The heuristic's decisions and its own placement of them.

    Attributes:
      action: int64[N] planned action per buffer.
      solution: the plan as a physical solution (offsets from its best fit, copy intervals from
        its prefetch picker), valid for the validator.
      order: int64[G] the work items' first buffers in the order they were allocated.
    """

    action: np.ndarray
    solution: Solution
    order: np.ndarray



def _potential(gain: list[float], placed: int, dropped: int, bit: int) -> float:
    """How much the best completion of a latency table gains from including buffer `bit`: the
    best gain over reachable masks (supersets of `placed`, disjoint from `dropped`) with it,
    minus the best without it. Catches buffers that only pay together (a roofline instruction
    stays memory-bound until all its operands are fast), where the gain alone is zero."""
    best_with = best_without = 0.0
    for mask, g in enumerate(gain):  # a plain loop: tables are small, NumPy's overhead is not
        if mask & placed == placed and not mask & dropped:
            if mask & bit:
                best_with = max(best_with, g)
            else:
                best_without = max(best_without, g)
    return best_with - best_without


def _table_rows(problem: Problem, d: Discretized) -> list[list[float]]:
    """Each latency table's gains over its own masks only (2**k of the 256 padded entries)."""
    return [d.gain[j, : 2 ** t.buffers.shape[0]].tolist() for j, t in enumerate(problem.latency_tables)]


def benefit_estimate(problem: Problem, d: Discretized) -> np.ndarray:
    """Static benefit; for a latency-table buffer the better of its gain alone and its
    `_potential` in an empty table."""
    est = problem.benefit.astype(np.float64).copy()
    rows = _table_rows(problem, d)
    for i in np.flatnonzero(d.table >= 0):
        row, bit = rows[d.table[i]], 1 << int(d.table_bit[i])
        est[i] = max(float(row[bit] - row[0]), _potential(row, 0, 0, bit))
    return est


class _Planner:
    """One plan's state (the Solution's arrays, the memory, the latency tables' masks) and its moves."""

    def __init__(self, problem: Problem, d: Discretized, est: np.ndarray, *, pins: str,
                 preferred_overlap: float, min_overlap: float, max_overlap: float,
                 decisions: np.ndarray | None):
        self.problem, self.d, self.est, self.pins, self.decisions = problem, d, est, pins, decisions
        self.preferred_overlap, self.min_overlap, self.max_overlap = preferred_overlap, min_overlap, max_overlap
        self.n, self.T = n, T = problem.num_buffers, problem.num_steps
        self.mem = Memory(d, T)
        self.target, self.is_output = problem.target_time, problem.is_output
        self.live_start, self.live_end = problem.live_start, problem.live_end
        self.aliased = problem.alias_id >= 0
        self.action = np.full(n, DROP, np.int64)
        self.offset = np.full(n, -1, np.int64)
        self.alloc = np.full((n, 2), -1, np.int64)
        self.copy = np.full((n, 2), -1, np.int64)
        self.shared = shared = SHARED.setdefault(d, {})
        if "rows" not in shared:
            shared.update(rows=_table_rows(problem, d), worth={}, lists=tuple(
                x.tolist() for x in (d.table, d.table_bit, d.width, d.demand, problem.benefit.astype(float))))
        self.table, self.table_bit, self.width, self.demand, self.benefit = shared["lists"]
        self.rows = shared["rows"]
        self.worth_seen: dict[tuple[int, int, int, int], float] = shared["worth"]  # (table, placed, left, bit)
        self.starts = shared.setdefault((preferred_overlap, min_overlap, max_overlap), {})
        # `pin_pays` and `can_pin`'s count of a tensor's buffers, per work item (static: asked
        # again in every plan of the placer's moves)
        self.pays = shared.setdefault(("pays", max_overlap), {})
        self.whole = shared.setdefault("whole", {})
        self.table_mask = np.zeros(d.gain.shape[0], np.int64)  # placed buffers per latency table
        self.table_left = np.zeros(d.gain.shape[0], np.int64)  # buffers decided to stay slow
        self.journal: list[int] = []  # committed buffers, in order (for `undo`)
        self.tensor_count = np.bincount(d.tensor, minlength=n)

    def prefetch_starts(self, i: int) -> list[int]:
        """Copy starts for input buffer i, nearest the preferred overlap first (computed once per
        problem and overlaps)."""
        if i not in self.starts:
            self.starts[i] = self._prefetch_starts(i)
        return self.starts[i]

    def _prefetch_starts(self, i: int) -> list[int]:
        t, demand = int(self.target[i]), self.demand[i]
        lo = int(self.d.copy_from[i])
        if t - 1 < lo:
            return []
        s = np.arange(lo, t)
        overlap = (self.mem.elapsed[t] - self.mem.elapsed[s]) / max(demand, 1)
        enough = overlap >= self.min_overlap
        if not enough.any():
            return []
        # The latest start with enough overlap is always a candidate, even when one step is
        # already longer than max_overlap copies (the bound only limits how early to start).
        ok = enough & ((overlap <= self.max_overlap) | (s == s[enough].max()))
        s, overlap = s[ok], overlap[ok]
        order = np.argsort(np.abs(overlap - self.preferred_overlap), kind="stable")
        return [int(x) for x in s[order[:MAX_START_TRIES]]]

    def input_copy(self, i: int, fixed_offset: int | None):
        """(alloc, copy interval, offset) of a prefetch for input buffer i, or None."""
        t, demand, w = int(self.target[i]), self.demand[i], self.width[i]
        if demand == 0:
            starts, zero = [t], True
        else:
            starts, zero = self.prefetch_starts(i), False
        lowest = 0 if zero else min(self.mem.uncovered_from(t - 1), t - 1)  # (`copy_fits` refuses the starts below)
        for s in starts:
            if not zero and (s < lowest or not self.mem.copy_fits(s, t - 1, demand)):
                continue
            if fixed_offset is None:
                off = self.mem.span_fit(s, t, w)
                if off < 0:
                    continue
            else:
                off = fixed_offset
            return (s, t), (None if zero else (s, t - 1)), off
        return None

    def output_copy(self, i: int):
        """(alloc, copy interval) of an output buffer written at its target and copied out (evicted)
        as early as the engine allows, or None."""
        t, demand = int(self.target[i]), self.demand[i]
        if demand == 0:
            return (t, t), None
        for e in range(t + 1, min(self.T - 1, int(self.live_end[i])) + 1):
            if e - 1 >= t + 1 and self.mem.cover[e - 1] >= 0:
                return None  # the interval cannot grow past another copy
            if self.mem.time(t + 1, e) >= demand and self.mem.copy_fits(t + 1, e, demand):
                return (t, e), (t + 1, e)
        return None

    def worth(self, i: int) -> float:
        """What placing buffer i may add, given the plan so far: its marginal gain now, or what
        it adds to the best completion of its latency table."""
        j = self.table[i]
        if j < 0:
            return self.benefit[i]
        key = (j, int(self.table_mask[j]), int(self.table_left[j]), 1 << self.table_bit[i])
        if key not in self.worth_seen:
            row, placed, left, bit = self.rows[j], *key[1:]
            self.worth_seen[key] = max(row[placed | bit] - row[placed], _potential(row, placed, left, bit))
        return self.worth_seen[key]

    def commit(self, i: int, act: int, off: int, al, cp) -> None:
        self.journal.append(i)
        self.action[i], self.offset[i] = act, off
        if self.table[i] >= 0:
            self.table_mask[self.table[i]] |= 1 << self.table_bit[i]
        if al is not None:
            self.alloc[i] = al
            self.mem.take(al[0], al[1], off, self.width[i])
        if cp is not None:
            self.copy[i] = cp
            self.mem.add_copy(cp[0], cp[1], self.demand[i])

    def undo(self, mark: int) -> None:
        """Takes back the commits after the first `mark` (their cells were free, their copies
        the latest)."""
        while len(self.journal) > mark:
            i = self.journal.pop()
            if self.table[i] >= 0:
                self.table_mask[self.table[i]] &= ~(1 << self.table_bit[i])
            if self.alloc[i, 0] >= 0:
                self.mem.release(int(self.alloc[i, 0]), int(self.alloc[i, 1]), int(self.offset[i]), self.width[i])
            if self.copy[i, 0] >= 0:
                self.mem.remove_copy(int(self.copy[i, 0]), int(self.copy[i, 1]), self.demand[i])
            self.action[i], self.offset[i], self.alloc[i], self.copy[i] = DROP, -1, -1, -1

    def keep_gap(self, i: int, last, *, far_ok: bool = False) -> tuple[int, int] | None:
        """The allocation that keeps buffer i's tensor from `last` (start, end, ...) to its use:
        (-1, -1) if the tensor is still there, None if it cannot be kept or, unless `far_ok`,
        if the gap is longer than `max_overlap` copies (XLA evicts then and prefetches again)."""
        t, demand = int(self.target[i]), self.demand[i]
        if last is None or last[0] > t:
            return None
        if last[1] >= t:
            return (-1, -1)  # already there
        gap = (int(last[1]) + 1, t)
        if not far_ok and demand > 0 and self.mem.time(*gap) > self.max_overlap * demand:
            return None
        return gap

    def can_pin(self, i: int, members: np.ndarray) -> bool:
        """Buffer i writes a tensor that may be pinned, and `members` hold all its buffers."""
        if self.pins == "never" or not self.d.pinnable[i]:
            return False
        key = (i, members.tobytes())
        if key not in self.whole:
            k = self.d.tensor[i]
            self.whole[key] = int(np.sum(self.d.tensor[members] == k)) == self.tensor_count[k]
        return self.whole[key]

    def pin_pays(self, members: np.ndarray) -> bool:
        """XLA would keep the tensor that members[0] writes in fast memory all its life: no gap
        between its uses, nor its life after the last one, is longer than `max_overlap` copies."""
        key = members.tobytes()
        if key not in self.pays:
            self.pays[key] = self._pin_pays(members)
        return self.pays[key]

    def _pin_pays(self, members: np.ndarray) -> bool:
        times = self.target[members]
        ends = np.append(times[1:], self.live_end[members[0]])
        demand = np.append(self.d.demand[members[1:]], self.d.demand[members[0]])
        gap = self.mem.elapsed[ends + 1] - self.mem.elapsed[times + 1]
        return bool(((demand == 0) | (gap <= self.max_overlap * demand)).all())

    def pin(self, members: np.ndarray, off: int) -> None:
        """Pins the (whole) tensors of `members` at `off`: each output's allocation is its live
        range, and the later buffers are NoCopy served from it (no allocation of their own)."""
        for i in members:
            i = int(i)
            alloc = (int(self.live_start[i]), int(self.live_end[i])) if self.is_output[i] else None
            self.commit(i, NOCOPY, off, alloc, None)

    def place_tensor(self, members: np.ndarray) -> None:
        """An unaliased tensor: pinned whole if XLA would keep it in fast memory all its life, or
        if that places more than copying it (tried first, then undone), else `copy_tensor`."""
        first = int(members[0])
        if self.is_output[first] and self.can_pin(first, members):
            off = self.mem.span_fit(int(self.live_start[first]), int(self.live_end[first]), self.width[first])
            value = sum(self.worth(int(i)) for i in members)
            if off >= 0 and value > 0:
                mark = len(self.journal)
                if not self.pin_pays(members) and self.copy_tensor(members) >= value:
                    return
                self.undo(mark)
                self.pin(members, off)
                return
        self.copy_tensor(members)

    def copy_tensor(self, members: np.ndarray, decided: np.ndarray | None = None) -> float:
        """Each use of an unaliased tensor keeps, prefetches or leaves independently; returns what
        the placed uses are worth (0 with `decided`). Uses placed already are kept as they are.
        `decided`: the action wanted per member (placer mode: a Drop is left, the others placed
        whatever they are worth, their own action first)."""
        placed = []  # what each placed use is worth when placed

        def place(i: int, act: int, off: int, al, cp) -> None:
            if decided is None:
                placed.append(self.worth(i))
            self.commit(i, act, off, al, cp)

        last = None  # (start, end, offset) of the tensor's allocation with the latest end
        for n_, i in enumerate(members):
            i, t, w = int(i), int(self.target[i]), self.width[i]
            if self.action[i] != DROP:  # placed before (the placer's first pass)
                if self.alloc[i, 0] >= 0 and (last is None or self.alloc[i, 1] >= last[1]):
                    last = (int(self.alloc[i, 0]), int(self.alloc[i, 1]), int(self.offset[i]))
                continue
            if decided is not None:
                if decided[n_] == DROP:
                    continue
            else:
                # An output is also worth what it lets later uses keep without a copy.
                later = sum(max(self.worth(int(j)), 0.0) for j in members[n_ + 1:]) if self.is_output[i] else 0
                if self.worth(i) + later <= 0:
                    continue
            if self.is_output[i]:
                out = self.output_copy(i)
                off = -1 if out is None else self.mem.span_fit(out[0][0], out[0][1], w)
                if out is not None and off >= 0:
                    place(i, COPY, off, out[0], out[1])
                    last = (out[0][0], out[0][1], off)
                continue
            # Keep it in fast memory (a decided NoCopy: however long the gap), else prefetch it.
            keep_first = decided is not None and decided[n_] == NOCOPY
            gap = self.keep_gap(i, last, far_ok=keep_first) if decided is None or keep_first else None
            if gap == (-1, -1):
                place(i, NOCOPY, last[2], None, None)
                continue
            if gap is not None and self.mem.free(gap[0], gap[1], last[2], w):
                place(i, NOCOPY, last[2], gap, None)
                last = (last[0], t, last[2])
                continue
            pre = self.input_copy(i, None)
            if pre is not None:
                place(i, COPY, pre[2], pre[0], pre[1])
                if last is None or t >= last[1]:
                    last = (pre[0][0], t, pre[2])
                continue
            gap = self.keep_gap(i, last, far_ok=True)  # no prefetch fits: keep it after all
            if gap is not None and self.mem.free(gap[0], gap[1], last[2], w):
                place(i, NOCOPY, last[2], gap, None)
                last = (last[0], t, last[2])
        return sum(placed)

    def place_group(self, members: np.ndarray) -> None:
        """An alias group: every member placed, at one offset, or none."""
        reserved = []  # the copies reserved below, taken back before the commits (latest first)
        decided = []  # (buffer, action, alloc, copy)
        last: dict[int, tuple[int, int]] = {}  # tensor -> (start, end)
        for i in members:
            i, k = int(i), int(self.d.tensor[i])
            if self.is_output[i]:
                pinnable = self.can_pin(i, members)
                out = None if pinnable and self.pin_pays(members[self.d.tensor[members] == k]) else self.output_copy(i)
                if out is not None:
                    choice = (i, COPY, out[0], out[1])
                elif pinnable:  # pinned: its later buffers find it there (keep_gap is (-1, -1))
                    choice = (i, NOCOPY, (int(self.live_start[i]), int(self.live_end[i])), None)
                else:
                    break
            else:
                prev = last.get(k)
                gap = self.keep_gap(i, None if prev is None else (*prev, 0))
                if gap == (-1, -1):
                    choice = (i, NOCOPY, None, None)
                elif gap is not None:
                    choice = (i, NOCOPY, gap, None)
                else:
                    pre = self.input_copy(i, fixed_offset=0)  # offset decided below
                    if pre is not None:
                        choice = (i, COPY, pre[0], pre[1])
                    else:  # no prefetch fits: keep it after all, if it is in fast memory
                        gap = self.keep_gap(i, None if prev is None else (*prev, 0), far_ok=True)
                        if gap is None:
                            break
                        choice = (i, NOCOPY, None if gap == (-1, -1) else gap, None)
            if choice[3] is not None:  # reserve the copy so that later members see it
                self.mem.add_copy(choice[3][0], choice[3][1], self.demand[i])
                reserved.append((choice[3][0], choice[3][1], self.demand[i]))
            decided.append(choice)
            if choice[2] is not None and (k not in last or choice[2][1] >= last[k][1]):
                last[k] = (choice[2][0] if choice[1] == COPY or k not in last else last[k][0], choice[2][1])
        for copy in reversed(reserved):
            self.mem.remove_copy(*copy)
        if len(decided) < len(members):
            return
        steps = np.unique(np.concatenate([np.arange(a[0], a[1] + 1) for _, _, a, _ in decided
                                          if a is not None] or [np.zeros(0, np.int64)]))
        off = self.mem.best_fit(steps, self.width[members[0]])
        if off < 0:
            return
        for i, act, al, cp in decided:
            self.commit(i, act, off, al, cp)

    def place_decided(self, members: np.ndarray) -> None:
        """The placer's first pass: the uses `decisions` places, by its actions where possible."""
        want = self.decisions[members]
        if not (want != DROP).any():
            return
        first = int(members[0])
        if self.aliased[first]:
            if (want != DROP).all():
                self.place_group(members)
            return
        if self.is_output[first] and want[0] == NOCOPY and self.can_pin(first, members):
            off = self.mem.span_fit(int(self.live_start[first]), int(self.live_end[first]), self.width[first])
            if off >= 0:
                self.pin(members, off)
                return
        self.copy_tensor(members, want)

    def pin_first(self, deadline: float | None) -> bool:
        """The pinning greedy's pins, at the lowest offsets (pins "first", "first-kept", "only").
        Returns whether the deadline stopped it."""
        problem, d = self.problem, self.d
        for unit in pin_order(problem, d, self.est):
            if deadline is not None and time.perf_counter() > deadline:
                return True
            if self.pins == "first-kept" and not all(self.pin_pays(unit[d.tensor[unit] == k])
                                                     for k in np.unique(d.tensor[unit])):
                continue
            off = self.mem.best_fit(unit_steps(problem, unit), int(d.width[unit[0]]), lowest=True)
            if off >= 0:
                self.pin(unit, off)
        return False

    def run(self, passes: list, deadline: float | None) -> bool:
        """Places the work items of each pass ("plan", "decided", "grow", or "merged": each item
        by its decisions, then grown, in one pass). Returns whether the deadline stopped it."""
        action, d = self.action, self.d
        for kind, work in passes:
            for members in work:
                if deadline is not None and time.perf_counter() > deadline:
                    return True
                if kind == "decided" or (kind == "merged" and (self.decisions[members] != DROP).any()):
                    self.place_decided(members)
                    if kind == "decided":
                        continue
                dropped = action[members] == DROP
                if not dropped.any() or (kind == "plan" and not dropped.all()):
                    continue  # every use placed already (by the decisions, or pinned first)
                if self.aliased[members[0]]:
                    if dropped.all() and sum(self.worth(int(i)) for i in members) > 0:
                        self.place_group(members)
                elif kind in ("grow", "merged") and not dropped.all():
                    self.copy_tensor(members)  # the uses still in slow memory, continuing the placed ones
                else:
                    self.place_tensor(members)
                for i in members[(action[members] == DROP) & (d.table[members] >= 0)]:
                    self.table_left[self.table[i]] |= 1 << self.table_bit[i]
        return False


def plan(problem: Problem, rules: Rules = Rules(), *, pins: str = "compare",
         preferred_overlap: float = PREFERRED_OVERLAP, min_overlap: float = MIN_OVERLAP,
         max_overlap: float = MAX_OVERLAP, prepared: tuple[Discretized, np.ndarray] | None = None,
         deadline: float | None = None, decisions: np.ndarray | None = None, grow: bool = True,
         first: np.ndarray | None = None, interleave: bool = False) -> Plan:
    """Runs the simplified memory-space assignment (see the module docstring).

    `pins`: "never" (no output is pinned: the plan of the older game), "compare" (a tensor is
    pinned where that beats copying it, module docstring), "first" (the pinning greedy's pins
    first, then "compare" for the rest), "first-kept" (as "first", but the greedy pins only
    tensors XLA would keep in fast memory all their life) or "only" (the pinning greedy alone).
    Pins are made only where the rules allow them (`Discretized.pinnable`). `prepared`: the
    problem's `discretize(problem, rules)` and `benefit_estimate`, to share between plans.
    `deadline` (a `time.perf_counter()` value): stop placing work items once it passes; the plan
    is then valid with the items not reached dropped (`metadata["stopped_early"]`), so a budget
    bounds the heuristic on programs of any size (about 20 s a plan at 75,000 buffers).

    `decisions` (int64[N], an action per buffer, e.g. a game's solution): the placer's mode
    (`placer.place`). Work items are taken in the same order, but each places exactly the uses
    `decisions` serves from fast memory, trying its action first (Copy: prefetch or evict, then
    keep; NoCopy: keep or pin, then prefetch), whatever they are estimated to be worth. Then,
    with `grow`, a second pass offers every use still in slow memory to the plan's own rules
    (`pins` applies to this pass only). `first` (bool[N]): the work items holding a `first`
    buffer are placed first in the decided pass (the placer's repacking of decisions that did
    not fit). `interleave` (with `grow`): one pass instead of two, each work item in the plan's
    order placed by its decisions where it has any, then grown, so that the decided items do not
    all take their room before the plan's (the placer's other placement of the decisions)."""
    if pins not in PIN_MODES:
        raise ValueError(f"pins must be one of {', '.join(PIN_MODES)}, got {pins!r}")
    if prepared is None:
        d = discretize(problem, rules)
        prepared = (d, benefit_estimate(problem, d))
    d, est = prepared
    planner = _Planner(problem, d, est, pins=pins, preferred_overlap=preferred_overlap,
                       min_overlap=min_overlap, max_overlap=max_overlap, decisions=decisions)
    shared = planner.shared
    if shared.get("items", (None,))[0] is not est:
        ranked = ranked_items(problem, d, est)
        shared["items"] = (est, ranked, np.concatenate(ranked) if ranked else np.zeros(0, np.int64),
                           np.cumsum([0] + [len(m) for m in ranked[:-1]]))
    _, items, flat, cuts = shared["items"]

    def any_of(mask: np.ndarray) -> list[bool]:  # per item, whether `mask` holds one of its buffers
        return np.logical_or.reduceat(mask[flat], cuts).tolist() if items else []

    stopped = planner.pin_first(deadline) if pins in ("first", "first-kept", "only") else False
    if decisions is not None:
        # (the items whose uses the decisions all leave in slow memory have nothing to place)
        wanted = any_of(decisions != DROP)
        urgent = [False] * len(items) if first is None else any_of(first)
        decided = ([m for m, w, u in zip(items, wanted, urgent) if w and u]
                   + [m for m, w, u in zip(items, wanted, urgent) if w and not u])
        passes = ([("merged", items)] if interleave and grow else
                  [("decided", decided)] + ([("grow", items)] if grow else []))
    else:
        passes = [("plan", items if pins != "only" else [])]
    stopped = stopped or planner.run(passes, deadline)
    action, offset, alloc, copy = planner.action, planner.offset, planner.alloc, planner.copy
    solution = Solution(
        problem=problem.name, solver="heuristic-plan", ret=exact_return(problem, action, d),
        action=action, offset=np.where(offset >= 0, offset * d.col_bytes, -1),
        alloc_start=alloc[:, 0].copy(), alloc_end=alloc[:, 1].copy(),
        copy_start=copy[:, 0].copy(), copy_end=copy[:, 1].copy(), rules=rules.to_json(),
        metadata={"pins": pins, "preferred_overlap": preferred_overlap, "min_overlap": min_overlap,
                  "max_overlap": max_overlap, **({"stopped_early": True} if stopped else {})})
    return Plan(action=action, solution=solution,
                order=np.array([int(m[0]) for m in items], np.int64))
