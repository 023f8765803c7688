"""JAX's persistent compilation cache, as the command line and `train.py` switch it on."""

from __future__ import annotations

import os

import jax


def compilation_cache() -> str | None:
    """Turns on JAX's persistent compilation cache, so that a rerun on the same shapes loads its
    programs instead of compiling them again (30-70 s for the agent on a CPU). The directory is
    $JAXMMAP_COMPILATION_CACHE, else ~/.cache/jaxmmap/xla; set the variable to "off" to disable.
    JAX keys every entry by the program, the jax and jaxlib versions, the device and the compile
    options, so an entry of another version is never used (it only takes disk space). Returns
    the directory, or None when disabled."""
    path = os.environ.get("JAXMMAP_COMPILATION_CACHE",
                          os.path.join(os.path.expanduser("~"), ".cache", "jaxmmap", "xla"))
    if path.lower() in ("off", "0", "none", ""):
        return None
    jax.config.update("jax_compilation_cache_dir", path)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 1.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    return path
