"""Shared test setup.

The tests never use JAX's persistent compilation cache. Commands called in-process
(`cli.main`, `train.main`) would otherwise switch it on at ~/.cache/jaxmmap/xla for the rest of the
session, so the tests would write the user's cache, and a long session of compiles then serializes
executables to disk that nothing reads (it aborted CI inside `executable.serialize()`).
`test_cli.py` checks the cache switch itself on a temporary folder.
"""

import os

os.environ["JAXMMAP_COMPILATION_CACHE"] = "off"
