"""Shared test setup.

* The tests share one persistent compilation cache of their own (`$JAXMMAP_TEST_XLA_CACHE`,
  else `jaxmmap-tests-xla` in the temporary folder), never the user's: many tests compile the
  same programs (the game's step for one padded shape, under new `jit` closures), and the
  pytest-xdist workers and the subprocesses (`train.py`) share it. Set the variable to "off"
  to compile everything afresh. `test_cli.py` checks the cache switch itself on a temporary
  folder.
* After each test module, JAX's in-memory caches are cleared. Every compiled CPU program keeps
  its machine code mapped in the process; the whole suite compiles enough of them to pass Linux's
  65,530 memory mappings per process (`vm.max_map_count`), and XLA then aborts in the middle of a
  compile or a serialize (CI died so three times at about 88%). A module's programs are rarely
  reused by the next module, so clearing costs little.
* XLA compiles the tests' programs for compile time, not run time (`CHEAP_COMPILE`, added to
  `$XLA_FLAGS` for the tests and their subprocesses): no LLVM optimizations, and XLA:CPU's older
  elemental emitters instead of its fusion emitters. Most of the tests' time is compiling the
  game's step under new closures on tiny programs; the two flags take a batch of 16 deferred
  games of 122 buffers from 4.6 s of compile to 2.2 s, and the tests on an empty compilation
  cache from 730 s (the first flag alone) to 531 s (docs/performance.md, "The tests"). They are
  for the tests only: the package keeps XLA's defaults, under which a batch of games runs faster
  (docs/decisions.md, "XLA:CPU flags"). XLA aborts on a flag it does not know, so the second is
  added only where a subprocess finds that this XLA accepts it. `JAXMMAP_TEST_XLA_OPT=1` keeps
  XLA's defaults.
"""

import gc
import os
import pathlib
import subprocess
import sys
import tempfile

CHEAP_COMPILE = ("--xla_backend_optimization_level=0", "--xla_cpu_use_fusion_emitters=false")


def _accepted(flags: str) -> bool:
    """Whether this XLA starts its CPU backend under `flags` (it aborts on one it does not know)."""
    env = dict(os.environ, XLA_FLAGS=flags, JAX_PLATFORMS="cpu")
    probe = subprocess.run([sys.executable, "-c", "import jax; jax.devices()"], env=env, capture_output=True)
    return probe.returncode == 0


if os.environ.get("JAXMMAP_TEST_XLA_OPT") != "1":  # (read when JAX first uses its CPU backend)
    # (pytest-xdist's workers inherit the flags the controller set, and probe nothing)
    flags = os.environ.get("XLA_FLAGS", "")
    for flag in CHEAP_COMPILE:  # (the first is years old: not probed)
        if flag.split("=")[0] not in flags and (flag == CHEAP_COMPILE[0] or _accepted(f"{flags} {flag}")):
            flags = f"{flags} {flag}".strip()
    os.environ["XLA_FLAGS"] = flags

import jax  # noqa: E402
import pytest  # noqa: E402

CACHE = os.environ.get("JAXMMAP_TEST_XLA_CACHE", os.path.join(tempfile.gettempdir(), "jaxmmap-tests-xla"))
# In-process commands (`cli.main`, `train.main`) and subprocesses switch the cache on from this.
os.environ["JAXMMAP_COMPILATION_CACHE"] = CACHE
if CACHE.lower() not in ("off", "0", "none", ""):
    jax.config.update("jax_compilation_cache_dir", CACHE)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
# `benchmarks.suite.workloads` (the zoo of real programs) lives beside the package, not in it.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))


@pytest.fixture(autouse=True, scope="module")
def _free_compiled_programs():
    yield
    jax.clear_caches()
    gc.collect()
