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
* XLA compiles the tests' programs without LLVM's optimizations (`--xla_backend_optimization_level=0`
  added to `$XLA_FLAGS`, for the tests and their subprocesses): most of the tests' time is compiling
  the game's step under new closures on tiny programs, and unoptimized machine code compiles it
  about a quarter faster. Set `JAXMMAP_TEST_XLA_OPT=1` to keep XLA's default.
"""

import gc
import os
import pathlib
import sys
import tempfile

if os.environ.get("JAXMMAP_TEST_XLA_OPT") != "1":  # (read when JAX first uses its CPU backend)
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_backend_optimization_level=0").strip()

import jax  # noqa: E402
import pytest  # noqa: E402

CACHE = os.environ.get("JAXMMAP_TEST_XLA_CACHE", os.path.join(tempfile.gettempdir(), "jaxmmap-tests-xla"))
# In-process commands (`cli.main`, `train.main`) and subprocesses switch the cache on from this.
os.environ["JAXMMAP_COMPILATION_CACHE"] = CACHE
if CACHE.lower() not in ("off", "0", "none", ""):
    jax.config.update("jax_compilation_cache_dir", CACHE)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.2)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
# `benchmarks.suite.workloads` (the zoo of real programs) lives beside the package, not in it.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))


@pytest.fixture(autouse=True, scope="module")
def _free_compiled_programs():
    yield
    jax.clear_caches()
    gc.collect()
