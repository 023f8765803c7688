"""The docs' examples run: every ```python block of docs/*.md, in order, page by page.

A block may use names its page leaves to the reader (the problem it is about, a function to
import); GIVEN supplies small ones before the page's blocks run, on the bundled `tiny` instance.
Where a block runs for a long time, FAST shortens it: each (pattern, replacement) is applied to
the block's text before it runs (a `budget_s=300` becomes `budget_s=1`), so that a page takes a
few seconds. Nothing else of a block is changed: a block that does not run is a wrong example.
At 1 s, docs/agent.md's `fit` ends before its first chunk on 2 CPU cores (compiling one takes
about 20 s): its call, config and workdir are checked here, the training in tests/test_training.py.
"""

from __future__ import annotations

import contextlib
import io
import pathlib
import re
import shutil

import jax.numpy as jnp
import pytest

import jaxmmap

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
HLO = pathlib.Path(__file__).resolve().parent / "fixtures" / "hlo" / "cond_carry.after_optimizations.txt"

#: The shortening of long runs: (regex, replacement), applied to every block's text.
FAST = [
    (r"budget_s=\d+(\.\d+)?", "budget_s=1"),  # a solver or a training run: 1 s of its budget
]


def _python_blocks(path: pathlib.Path) -> list[str]:
    return [code for lang, code in re.findall(r"```(\w*)\n(.*?)```", path.read_text(), flags=re.S)
            if lang == "python"]


PAGES = sorted(path.name for path in DOCS.glob("*.md") if _python_blocks(path))


def _train_step(state, batch):  # the function a reader brings to `from_jax`
    w = state["w"] - 0.1 * jnp.tanh(batch @ state["w"]).T @ batch
    return {"w": w}, jnp.sum(w)


def _tiny(ns: dict) -> None:
    ns["problem"] = jaxmmap.bundled("tiny")


def _importer(ns: dict) -> None:
    ns.update(train_step=_train_step, state={"w": jnp.zeros((64, 64))}, batch=jnp.ones((32, 64)))
    shutil.copy(HLO, "module.after_optimizations.txt")  # a dump of XLA's, as --xla_dump_to writes


def _simulator(ns: dict) -> None:
    _tiny(ns)
    ns["solution"] = jaxmmap.solvers.solve(ns["problem"], "pinning", budget_s=1).solution


#: What each page leaves to the reader, given (in the test's working folder) before its blocks run.
GIVEN = {
    "agent.md": _tiny,
    "importer.md": _importer,
    "simulator.md": _simulator,
    "solvers.md": _tiny,
}

#: What each page's blocks leave behind, checked after they ran.
CHECK = {
    "agent.md": lambda ns: pathlib.Path("runs/x/run.json").is_file() and ns["outcome"].resumed == (0, 0),
    "importer.md": lambda ns: ns["problem"].num_buffers > 0,
    "simulator.md": lambda ns: ns["timeline"].total > 0,
    "solvers.md": lambda ns: jaxmmap.validate(ns["problem"], ns["result"].solution).ok,
}


def test_every_page_with_python_blocks_is_given_what_it_needs():
    assert set(PAGES) == set(GIVEN) == set(CHECK), "a page with ```python blocks needs GIVEN and CHECK"


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.filterwarnings("ignore:.*holds every tensor at once")  # the importer's small example
def test_the_pages_python_blocks_run_in_order(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    GIVEN[page](namespace)
    for code in _python_blocks(DOCS / page):
        for pattern, replacement in FAST:
            code = re.sub(pattern, replacement, code)
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(code, f"docs/{page}", "exec"), namespace)  # noqa: S102
    assert CHECK[page](namespace)
