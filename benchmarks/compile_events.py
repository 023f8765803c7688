"""Where the tests' time goes to making programs: a pytest plugin that sums JAX's compile
events (`jax.monitoring`'s `/jax/core/compile/*` durations: tracing, lowering to MLIR, XLA's
compile) in each test process, and prints the totals over all of them at the end, with the
functions that took longest to make.

    JAXMMAP_TEST_XLA_CACHE=$(mktemp -d) PYTHONPATH=benchmarks python -m pytest -q -p compile_events

Each process (the pytest-xdist workers included) appends one JSON line of its totals to a file
in the temporary folder when its session ends; the controller sums them in its summary.
"""

from __future__ import annotations

import collections
import json
import os
import tempfile

import jax.monitoring

_TOTALS: collections.Counter = collections.Counter()
_COUNTS: collections.Counter = collections.Counter()
_NAMES: collections.Counter = collections.Counter()  # seconds per function name, all three events
_FILE = os.environ.setdefault("JAXMMAP_COMPILE_EVENTS",
                              os.path.join(tempfile.mkdtemp(prefix="compile-events-"), "events.jsonl"))


def _listen(event: str, duration: float, fun_name: str = "?", **_) -> None:
    if event.startswith("/jax/core/compile/"):
        _TOTALS[event] += duration
        _COUNTS[event] += 1
        _NAMES[fun_name] += duration


jax.monitoring.register_event_duration_secs_listener(_listen)


def pytest_sessionfinish(session) -> None:
    with open(_FILE, "a") as f:
        f.write(json.dumps({"seconds": _TOTALS, "events": _COUNTS, "names": _NAMES}) + "\n")


def pytest_terminal_summary(terminalreporter, config) -> None:
    if hasattr(config, "workerinput"):
        return
    seconds, events, names = collections.Counter(), collections.Counter(), collections.Counter()
    with open(_FILE) as f:
        for row in map(json.loads, f):
            seconds.update(row["seconds"])
            events.update(row["events"])
            names.update(row.get("names", {}))
    terminalreporter.write_line(f"JAX's compile events, all test processes ({_FILE}):")
    for event, total in seconds.most_common():
        terminalreporter.write_line(f"{total:9.1f} s {events[event]:7d} {event}")
    terminalreporter.write_line("the functions that took longest to make (tracing, lowering and compiling):")
    for name, total in names.most_common(25):
        terminalreporter.write_line(f"{total:9.1f} s {name}")
