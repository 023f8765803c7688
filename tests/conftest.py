"""Shared test setup.

* The tests never use JAX's persistent compilation cache. Commands called in-process
  (`cli.main`, `train.main`) would otherwise switch it on at ~/.cache/jaxmmap/xla for the rest of
  the session, so the tests would write the user's cache. `test_cli.py` checks the cache switch
  itself on a temporary folder.
* After each test module, JAX's in-memory caches are cleared. Every compiled CPU program keeps
  its machine code mapped in the process; the whole suite compiles enough of them to pass Linux's
  65,530 memory mappings per process (`vm.max_map_count`), and XLA then aborts in the middle of a
  compile or a serialize (CI died so three times at about 88%). A module's programs are rarely
  reused by the next module, so clearing costs little.
"""

import gc
import os
import pathlib
import sys

import pytest

os.environ["JAXMMAP_COMPILATION_CACHE"] = "off"
# `benchmarks.suite.workloads` (the zoo of real programs) lives beside the package, not in it.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))


@pytest.fixture(autouse=True, scope="module")
def _free_compiled_programs():
    yield
    import jax

    jax.clear_caches()
    gc.collect()
