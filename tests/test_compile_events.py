"""`benchmarks/compile_events.py`, the pytest plugin that sums JAX's compile time over the test
processes (docs/performance.md, "The tests")."""

import importlib.util
import json
import os
import types

import jax
import jax.monitoring
import jax.numpy as jnp

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRACE = "/jax/core/compile/jaxpr_trace_duration"


def test_each_processs_compile_seconds_are_summed_in_the_summary(tmp_path, monkeypatch):
    events = tmp_path / "events.jsonl"
    monkeypatch.setenv("JAXMMAP_COMPILE_EVENTS", str(events))
    spec = importlib.util.spec_from_file_location("compile_events", os.path.join(ROOT, "benchmarks",
                                                                                 "compile_events.py"))
    plugin = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plugin)
    try:
        jax.jit(lambda x: x * 3 + 1)(jnp.arange(5))  # (a new function: traced and lowered here)
    finally:
        jax.monitoring.unregister_event_duration_listener(plugin._listen)
    assert plugin._COUNTS[TRACE] >= 1 and plugin._TOTALS[TRACE] > 0
    plugin.pytest_sessionfinish(None)  # this process's line
    with open(events, "a") as f:  # another worker's
        f.write(json.dumps({"seconds": {TRACE: 100.0}, "events": {TRACE: 7}}) + "\n")
    lines = []
    plugin.pytest_terminal_summary(types.SimpleNamespace(write_line=lines.append), types.SimpleNamespace())
    row = next(line for line in lines if line.endswith(TRACE))
    seconds, count = row.split()[0], int(row.split()[2])
    assert float(seconds) >= 100.0 and count == 7 + plugin._COUNTS[TRACE]
    # a worker writes its line and leaves the summary to the controller
    before = len(lines)
    plugin.pytest_terminal_summary(types.SimpleNamespace(write_line=lines.append),
                                   types.SimpleNamespace(workerinput={}))
    assert len(lines) == before
