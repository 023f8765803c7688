"""The benchmark suite: problems made from real JAX programs, bundled with the package.

    jaxmmap.core.suite.names()              # ["alexnet_train_b32@tpu_v4i", ...]
    jaxmmap.core.suite.load("gpt_small_train@gpu")
    jaxmmap.core.suite.info()               # one summary row per instance
    jaxmmap.core.suite.names("train")       # the training split; "held-out": never tuned on

The split is by workload family: the held-out families' programs (every size and hardware
preset) are kept out of all tuning and training (`HELD_OUT_FAMILIES`), so that an evaluation on
them is of programs whose kind the solvers never saw. `suite:train` and `suite:held-out` name
the splits wherever a PROBLEM is taken (`jaxmmap.core.io.open_problems`).

The files are made by `python benchmarks/make_suite.py` (deterministic for a jax version), which
compiles the programs of `benchmarks/suite/workloads.py` on the CPU and imports them with
`jaxmmap.importer` on the hardware presets; `docs/benchmarks.md` lists them.
"""

from __future__ import annotations

import functools
import importlib.resources
import json

from jaxmmap.core.problem import Problem, load_problem

_DIR = "data/suite"


def _root():
    return importlib.resources.files("jaxmmap").joinpath(_DIR)


@functools.cache
def info() -> tuple[dict, ...]:
    """The suite's index: name, workload, hardware and size figures of every instance."""
    index = _root().joinpath("index.json")
    if not index.is_file():
        return ()
    return tuple(json.loads(index.read_text(encoding="utf-8"))["instances"])


#: The workload families of the held-out split (8 of the 25 instances, 376 to 11,645 buffers).
HELD_OUT_FAMILIES = ("wavenet", "mnasnet", "alphatensor", "nmt")
SPLITS = ("train", "held-out")


def names(split: str | None = None) -> list[str]:
    """The instances' names: all of them, or those of one split ("train" or "held-out")."""
    if split is not None and split not in SPLITS:
        raise KeyError(f"no split {split!r}; there are: {', '.join(SPLITS)}")
    return [row["name"] for row in info()
            if split is None or (row["family"] in HELD_OUT_FAMILIES) == (split == "held-out")]


def load(name: str) -> Problem:
    """The bundled instance `name` (see `names()`)."""
    if name not in names():
        raise KeyError(f"no suite instance {name!r}; there are: {', '.join(names())}")
    with importlib.resources.as_file(_root().joinpath(f"{name}.json.gz")) as path:
        return load_problem(path)
