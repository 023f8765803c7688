"""A wall-clock budget and the best solution found within it: what every long-running search
keeps (the solvers' `Anytime` adds their `Result`; the agent's training loop uses it as is)."""

from __future__ import annotations

import contextlib
import contextvars
import math
import threading
import time

from jaxmmap.core.problem import Solution

__all__ = ["Clock", "Overran", "within", "without_grace"]

_GRACE = contextvars.ContextVar("grace", default=True)
_STOP = contextvars.ContextVar("stop", default=None)
_CLOCKS = contextvars.ContextVar("clocks", default=None)  # the clocks a `within` run made


class Overran(Exception):
    """`within`'s work did not end in its time; it was told to stop (`Clock.stopped`). `best`:
    the best solution its clocks held then (None if none)."""

    def __init__(self, message: str, best: Solution | None = None):
        super().__init__(message)
        self.best = best


def within(work, seconds: float):
    """`work()`'s value where it ends within `seconds`; else raises `Overran` at once, and the
    clocks `work` made see no time left from then on (`Clock.elapsed` is inf), so that it ends at
    its next look at the clock. A compile cannot be interrupted: the work goes on in a daemon
    thread until then, and what it returns or raises afterwards is dropped (`Overran.best` keeps
    the best solution its clocks held). Its exceptions within the time are raised here. This is
    how a budget holds when compiles run long: on a busy machine a short budget's compiles alone
    can outlast it (docs/solvers.md, The contract)."""
    stop, out, clocks = threading.Event(), {}, []
    context = contextvars.copy_context()
    context.run(_STOP.set, stop)
    context.run(_CLOCKS.set, clocks)

    def run():
        try:
            out["value"] = context.run(work)
        except BaseException as e:  # noqa: BLE001 - raised in the caller's thread, if in time
            out["error"] = e

    thread = threading.Thread(target=run, name="jaxmmap-solver", daemon=True)
    thread.start()
    try:
        thread.join(max(seconds, 0.0))
    finally:  # (also where the wait itself is interrupted: Ctrl-C)
        if thread.is_alive():
            stop.set()
    if thread.is_alive():
        _LEFT.append(thread)
        held = [c.best for c in list(clocks) if c.best is not None]
        raise Overran(f"the work did not end within {seconds:.1f} s", max(held, key=lambda b: b.ret, default=None))
    if "error" in out:
        raise out["error"]
    return out["value"]


#: The threads of work that overran (`within`), left running until their next look at the clock.
_LEFT: list[threading.Thread] = []


def settle(seconds: float) -> bool:
    """Waits up to `seconds` for the work `within` left behind to end (a compile still running
    takes a CPU from whatever runs next: `harness.compare` waits before its next run). Returns
    whether none is left."""
    deadline = time.monotonic() + seconds
    while _LEFT:
        _LEFT[0].join(max(deadline - time.monotonic(), 0.0))
        if _LEFT[0].is_alive():
            return False
        _LEFT.pop(0)
    return True


def abandoned() -> bool:
    """Whether work that `within` left behind is still running (a compile: the program's exit
    must not wait for it, nor tear it down, `jaxmmap.__main__.entry`)."""
    return any(thread.is_alive() for thread in _LEFT)


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
        (`solvers.base.in_slices`); False for clocks made inside `without_grace`.
    """

    def __init__(self, budget_s: float):
        self.start = time.perf_counter()
        self.budget_s = budget_s
        self.best: Solution | None = None
        self.trace: list[tuple[float, float]] = []
        self.grace = _GRACE.get()
        self._stop = _STOP.get()
        if (made := _CLOCKS.get()) is not None:  # (so that a stopped run's best is not lost)
            made.append(self)

    def elapsed(self) -> float:
        """Seconds since the clock was made; inf once the work was told to stop (`within`)."""
        return math.inf if self.stopped() else time.perf_counter() - self.start

    def stopped(self) -> bool:
        """Whether the work this clock times was told to stop (`within`): no time is left."""
        return self._stop is not None and self._stop.is_set()

    def out_of_time(self) -> bool:
        return self.elapsed() >= self.budget_s

    def offer(self, solution: Solution) -> bool:
        """Records `solution` if it beats the best so far."""
        if self.best is None or solution.ret > self.best.ret:
            self.best = solution
            self.trace.append((self.elapsed(), float(solution.ret)))
            return True
        return False
