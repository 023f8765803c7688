"""The CPU backend's threads, as the command line sizes them for one game at a time.

A single game is a loop of a few hundred tiny kernels a move. XLA's CPU runtime hands kernels
that could run side by side to its thread pool, and on a small CPU the hand-offs between cores
cost more than the kernels: a greedy game runs about 1.5x faster with a pool of one thread, using
half the CPU (`benchmarks/greedy_game.py --pool one` and `--pool all`; docs/decisions.md). A batch of
games gains from the pool (`benchmarks/env_throughput.py`), and so does compilation, so
this is for commands that play one game: `jaxmmap play --games 1`, and the solvers that play one
game (greedy, pinning, heuristic).

JAX sizes the pool from the CPU affinity of the thread that first starts its backend, once per
process; there is no option for it. So `one_thread` starts the backend under the affinity of one
CPU, then gives the calling thread its CPUs back.
"""

from __future__ import annotations

import importlib.util
import os

import jax

ACCELERATOR_PLUGINS = ("jax_cuda12_plugin", "jax_cuda13_plugin", "jax_rocm60_plugin", "libtpu")


def one_thread() -> bool:
    """Starts JAX's CPU backend with a thread pool of one thread, if it can: on Linux, before
    JAX's first computation, and only where the CPU is the device (no accelerator plugin
    installed, or JAX_PLATFORMS=cpu: an accelerator's runtime threads must not start tied to one
    CPU). $JAXMMAP_CPU_THREADS=all keeps the default pool. Returns whether it did."""
    from jax._src import xla_bridge  # (the one way to ask whether the backend has started)

    platforms = (jax.config.jax_platforms or "").lower()
    accelerator = platforms != "cpu" and any(importlib.util.find_spec(p) for p in ACCELERATOR_PLUGINS)
    if (os.environ.get("JAXMMAP_CPU_THREADS", "").lower() == "all" or accelerator
            or not hasattr(os, "sched_setaffinity") or xla_bridge.backends_are_initialized()):
        return False
    cpus = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(cpus)})
    try:
        jax.devices()
    finally:
        os.sched_setaffinity(0, cpus)
    return True
