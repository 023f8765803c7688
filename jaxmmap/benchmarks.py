"""The benchmark suite bundled with the package (`jaxmmap.core.suite`), under the name the README
uses: `import jaxmmap.benchmarks`, `jaxmmap.benchmarks.load("gpt_large_train@tpu_v4i")`."""

from jaxmmap.core.suite import info, load, names

__all__ = ["info", "load", "names"]
