"""The simulated latency of a program under a solution: what the paper measures, beyond the
reward proxy (`docs/simulator.md`).

    timeline = jaxmmap.latency(problem, solution)
    timeline.total, timeline.stalled, timeline.speedup    # microseconds; percent faster than all-slow

The model, in the problem's time unit (microseconds for imported and generated problems):

* **Instructions** run one at a time, in step order. Step t takes `slow[t]`, its duration with
  every buffer in slow memory, less what the buffers the solution puts in fast memory at t save:
  for the buffers of a latency table, `L({}) - L(fast)` from the table; for the others, their
  static benefits. (Without stalls the total is then `sum(slow) - return`: the game's reward is
  exactly the time saved.) `slow[t]` is `metadata["step_latency"]` where the problem has it (the
  importer and the generator write it), else the supply for a generated problem (its supply is
  that duration), else the table's `L({})` (one table per step), else `supply[t]` plus the
  benefits of the step's buffers (the paper's convention: the supply is the step's time with its
  buffers in fast memory).
* **Copies** run on one copy engine at the copy bandwidth: a copy of buffer b takes `demand[b]`
  of engine time. A prefetch (an input's Copy, interval `[s, t-1]`) may start when step s
  starts; an eviction (an output's Copy, interval `[t+1, e]`) when step t ends. The engine
  works, preemptively, on the released copy whose waiting step comes first (earliest deadline
  first), so a short copy may run inside a long one, as the game lets two copy intervals share
  a step's supply. A pinned output (NoCopy of an output, docs/game.md) is never written back:
  it has no copy at all.
* **Stalls**: step t does not start before its prefetches have finished, nor before the
  evictions whose interval ended at t-1 have (their space may be reused at t). The program ends
  when its last step and its last copy have.

The game plans copies with the supply (the steps' durations with everything fast); the simulator
runs them against the steps' actual durations under the solution, so a solution whose
placements make the steps under a copy faster can stall where the game saw no problem.
"""

from __future__ import annotations

import dataclasses
import heapq
import math
from collections.abc import Sequence

import numpy as np

from jaxmmap.core.problem import COPY, DROP, Problem, ProblemError, Solution
from jaxmmap.core.validator import check_solution

__all__ = ["Timeline", "correlation", "correlation_of", "latency", "speedup", "step_latency"]


def speedup(baseline_latency: float, solution_latency: float) -> float:
    """Percent: how much faster than the baseline, `100 * (baseline / solution - 1)` (+10.0: the
    solution runs 1.1 times as fast; inf for a solution that takes no time). Every speed-up the
    package reports is this one."""
    if solution_latency <= 0:
        return math.inf if baseline_latency > 0 else 0.0
    return 100.0 * (baseline_latency / solution_latency - 1.0)


@dataclasses.dataclass(frozen=True)
class Timeline:
    """The simulated run of one solution. T steps, N buffers; times in the problem's unit.

    Attributes:
      total: when the last step and the last copy have finished.
      all_slow: the total with every buffer in slow memory (no copies, no stalls).
      start, duration, stall: float64[T] each step's start, duration and the wait before it.
      drain: the wait after the last step for the copies still running.
      copy_start, copy_end: float64[N] when each buffer's copy ran (nan: no copy).
      valid: whether the solution passed the validator (False only with `allow_invalid`).
    """

    total: float
    all_slow: float
    start: np.ndarray
    duration: np.ndarray
    stall: np.ndarray
    drain: float
    copy_start: np.ndarray
    copy_end: np.ndarray
    valid: bool = True

    @property
    def speedup(self) -> float:
        """Percent: how much faster than with everything in slow memory (`speedup(all_slow,
        total)`; 0.0 when nothing is in fast memory)."""
        return speedup(self.all_slow, self.total)

    @property
    def stalled(self) -> float:
        """The total time spent waiting for copies (before steps and after the last one):
        `total = sum(duration) + stalled`."""
        return float(np.sum(self.stall)) + self.drain


def step_latency(problem: Problem) -> np.ndarray:
    """float64[T]: each step's duration with every buffer in slow memory (see the module doc)."""
    known = problem.metadata.get("step_latency")
    if known is not None:
        try:
            slow = np.asarray(known, np.float64)
        except (TypeError, ValueError):
            slow = None
        if slow is None or slow.shape != (problem.num_steps,) or not np.all(np.isfinite(slow)) or np.any(slow < 0):
            raise ProblemError(f"{problem.name}: metadata step_latency must be {problem.num_steps} finite"
                               " durations >= 0, one per step (or absent)")
        return slow
    if problem.metadata.get("generator") == "jaxmmap.generator":  # older generated files
        return np.asarray(problem.supply, np.float64).copy()  # its supply is that duration
    slow = problem.supply + np.bincount(problem.target_time, weights=problem.benefit,
                                        minlength=problem.num_steps)
    for table in problem.latency_tables:
        slow[table.step] = table.latency[0]
    return slow


def latency(problem: Problem, solution: Solution, *, allow_invalid: bool = False,
            what: str = "the solution") -> Timeline:
    """Simulates `problem` under `solution`, after validating it: an invalid solution raises
    `validator.SolutionRejected` with its violations (naming it `what`), unless `allow_invalid`
    (the timeline is then marked `valid=False`; arrays that cannot be simulated are refused even
    then)."""
    valid = check_solution(problem, solution, allow_invalid=allow_invalid, what=what).ok
    steps = problem.num_steps
    slow = step_latency(problem)
    fast = np.asarray(solution.action) != DROP
    duration = slow - _savings(problem, fast)
    duration = np.maximum(duration, 0.0)

    # copies as (first step, the step that waits for it, buffer): a prefetch is released when
    # its first step starts, an eviction when its output's step (the one before its first) ends
    prefetches, evictions = [], []
    for b in np.flatnonzero((np.asarray(solution.action) == COPY) & (problem.demand > 0)):
        first, last = int(solution.copy_start[b]), int(solution.copy_end[b])
        if first < 0:
            continue
        if problem.is_output[b]:
            evictions.append((first, last + 1, int(b)))
        else:
            prefetches.append((first, int(problem.target_time[b]), int(b)))
    prefetches.sort()
    evictions.sort()
    engine = _Engine(problem.demand)

    start, stall = np.zeros(steps), np.zeros(steps)
    p = e = 0
    clock = 0.0
    for t in range(steps):
        # the releases known before step t starts: prefetches of earlier steps, evictions of
        # outputs written by earlier steps (at their end, `clock` at the latest)
        while p < len(prefetches) and prefetches[p][0] < t:
            first, waiter, b = prefetches[p]
            engine.release(start[first], waiter, b)
            p += 1
        while e < len(evictions) and evictions[e][0] <= t:
            first, waiter, b = evictions[e]
            engine.release(start[first - 1] + duration[first - 1], waiter, b)
            e += 1
        start[t] = max(clock, engine.finish(t))
        stall[t] = start[t] - clock
        engine.run(start[t])
        clock = start[t] + duration[t]
    for first, waiter, b in prefetches[p:]:  # prefetches over the last step only
        engine.release(start[first], waiter, b)
    total = max(clock, engine.finish(None))
    return Timeline(total=float(total), all_slow=float(np.sum(slow)), start=start,
                    duration=duration, stall=stall, drain=float(total - clock),
                    copy_start=engine.started, copy_end=engine.ended, valid=valid)


class _Engine:
    """One copy engine, preemptive earliest deadline first: at every moment it works on the
    released copy whose waiting step comes first. (The game lets two copy intervals share a step
    and split its supply, so a short copy may run inside a long one; EDF with preemption meets
    every deadline that any schedule meets.)"""

    def __init__(self, demand: np.ndarray):
        self.demand = np.asarray(demand, np.float64)
        self.left = self.demand.copy()
        self.started = np.full(self.demand.shape, np.nan)
        self.ended = np.full(self.demand.shape, np.nan)
        self.time = 0.0
        self.pending: list[tuple[float, int, int]] = []  # (release time, waiter, buffer)
        self.ready: list[tuple[int, int]] = []  # heap of (waiter, buffer)
        self.open: dict[int, int] = {}  # waiter -> its copies not finished yet

    def release(self, at: float, waiter: int, buffer: int) -> None:
        heapq.heappush(self.pending, (at, waiter, buffer))
        self.open[waiter] = self.open.get(waiter, 0) + 1

    def run(self, until: float, waiter: int | None = None) -> None:
        """Works until `until`, or, given `waiter`, until its copies are done (then `time` is
        when the last of them ended)."""
        while True:
            while self.pending and self.pending[0][0] <= self.time:
                _, w, b = heapq.heappop(self.pending)
                heapq.heappush(self.ready, (w, b))
            if waiter is not None and not self._waiting(waiter):
                return
            if self.time >= until:
                return
            if not self.ready:
                if not self.pending:
                    self.time = max(self.time, until) if math.isfinite(until) else self.time
                    return
                self.time = min(self.pending[0][0], until)
                continue
            w, b = self.ready[0]
            if math.isnan(self.started[b]):
                self.started[b] = self.time
            # every pass ends a copy, reaches a release or reaches `until`: a bounded number of
            # events (no tolerance: a remainder too small to move the clock still ends the copy)
            done = self.time + self.left[b]
            stop = min(until, self.pending[0][0] if self.pending else math.inf)
            if done <= stop:
                heapq.heappop(self.ready)
                self.left[b] = 0.0
                self.time = done
                self.ended[b] = done
                self.open[w] -= 1
            else:
                self.left[b] -= stop - self.time
                self.time = stop

    def finish(self, waiter: int | None) -> float:
        """When the copies that step `waiter` waits for are done (all copies, for None): runs
        the engine that far; 0 if there are none."""
        if waiter is None:
            self.run(math.inf)
            return float(np.nanmax(self.ended, initial=0.0))
        if not self._waiting(waiter):
            return 0.0
        self.run(math.inf, waiter)
        return self.time

    def _waiting(self, waiter: int) -> bool:
        return self.open.get(waiter, 0) > 0


def _savings(problem: Problem, fast: np.ndarray) -> np.ndarray:
    """float64[T]: the time the buffers in fast memory save at each step."""
    in_table = np.zeros(problem.num_buffers, bool)
    saved = np.zeros(problem.num_steps)
    for table in problem.latency_tables:
        members = np.asarray(table.buffers)
        in_table[members] = True
        mask = int(np.sum((1 << np.arange(members.size))[fast[members]]))
        saved[table.step] += table.latency[0] - table.latency[mask]
    static = fast & ~in_table
    saved += np.bincount(problem.target_time[static], weights=problem.benefit[static],
                         minlength=problem.num_steps)
    return saved


def correlation(problem: Problem, solutions: Sequence[Solution], *, allow_invalid: bool = False
                ) -> dict[str, float]:
    """How well the return predicts the simulated latency over `solutions` (the paper's Table 5
    and Figure 6): Pearson and Spearman correlations of the return with the speed-up (both
    positive when the reward is a good proxy: a higher return, a faster program), over `n`
    solutions; nan with fewer than 3 or no spread. Every solution is validated (`latency`)."""
    return correlation_of([s.ret for s in solutions],
                          [latency(problem, s, allow_invalid=allow_invalid).speedup for s in solutions])


def correlation_of(returns: Sequence[float], speedups: Sequence[float]) -> dict[str, float]:
    """`correlation` of returns and speedups already simulated."""
    from scipy import stats

    rets, speed = np.asarray(returns, np.float64), np.asarray(speedups, np.float64)
    out = {"n": len(rets), "pearson": math.nan, "spearman": math.nan}
    if len(rets) >= 3 and np.ptp(rets) > 0 and np.ptp(speed) > 0:
        out["pearson"] = float(stats.pearsonr(rets, speed)[0])
        out["spearman"] = float(stats.spearmanr(rets, speed)[0])
    return out
