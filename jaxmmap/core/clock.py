"""A wall-clock budget and the best solution found within it: what every long-running search
keeps (the solvers' `Anytime` adds their `Result`; the agent's training loop uses it as is)."""

from __future__ import annotations

import contextlib
import contextvars
import time

from jaxmmap.core.problem import Solution

__all__ = ["Clock", "without_grace"]

_GRACE = contextvars.ContextVar("grace", default=True)


@contextlib.contextmanager
def without_grace():
    """The clocks made within it have no grace (`Clock.grace`): a caller that holds a solution
    already (`solvers.solve`: the placement of no decisions) needs the rest of its budget more
    than a search needs its first solution."""
    token = _GRACE.set(False)
    try:
        yield
    finally:
        _GRACE.reset(token)


class Clock:
    """Keeps the best solution and the improvement trace of a search against a wall-clock budget.

    Attributes:
      start: `time.perf_counter()` when the clock was made.
      budget_s: the budget in seconds (may be inf).
      best: the best solution offered so far (None before the first).
      trace: (seconds since the start, return) at every improvement.
      grace: whether games under way may run past the budget for a first solution
        (`rollout.in_slices`); False for clocks made inside `without_grace`.
    """

    def __init__(self, budget_s: float):
        self.start = time.perf_counter()
        self.budget_s = budget_s
        self.best: Solution | None = None
        self.trace: list[tuple[float, float]] = []
        self.grace = _GRACE.get()

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def out_of_time(self) -> bool:
        return self.elapsed() >= self.budget_s

    def offer(self, solution: Solution) -> bool:
        """Records `solution` if it beats the best so far."""
        if self.best is None or solution.ret > self.best.ret:
            self.best = solution
            self.trace.append((self.elapsed(), float(solution.ret)))
            return True
        return False
