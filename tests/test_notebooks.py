"""Every notebook runs top to bottom in a Jupyter kernel (nbclient), with the small settings its
`SMALL` flag selects (`JAXMMAP_NOTEBOOK_SMALL=1`), and writes its results.

Running them takes minutes (the ablations notebook trains several agents: about 5 minutes on 2
cores even when small; the quickstart and the game's notebooks half a minute each), so they run
with `-m slow`; the default run keeps a smoke test of each: its code compiles and every import it
makes resolves."""

import ast
import importlib
import importlib.util
import pathlib

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((pathlib.Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))
SLOW = {"ablations.ipynb", "quickstart.ipynb", "the_game.ipynb"}


@pytest.mark.parametrize("path", [pytest.param(p, marks=pytest.mark.slow) if p.name in SLOW else p
                                  for p in NOTEBOOKS], ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path, tmp_path, monkeypatch):
    monkeypatch.setenv("JAXMMAP_NOTEBOOK_SMALL", "1")  # the kernel inherits the environment
    notebook = nbformat.read(path, as_version=4)
    assert any(c.cell_type == "code" for c in notebook.cells), f"{path.name} has no code"
    NotebookClient(notebook, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    errors = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs
              if o.output_type == "error"]
    assert not errors
    assert list(tmp_path.iterdir()), "the notebook writes its results"


def test_there_are_the_notebooks_the_readme_names():
    assert {p.name for p in NOTEBOOKS} >= {"quickstart.ipynb", "ablations.ipynb", "the_game.ipynb"}


@pytest.mark.parametrize("name", sorted(SLOW))
def test_slow_notebooks_compile_and_their_imports_resolve(name):
    notebook = nbformat.read(NOTEBOOKS[0].parent / name, as_version=4)
    code = [c.source for c in notebook.cells if c.cell_type == "code"]
    assert code
    for k, source in enumerate(code):
        lines = [ln for ln in source.splitlines() if not ln.lstrip().startswith(("!", "%"))]
        tree = ast.parse("\n".join(lines), filename=f"{name} cell {k}")  # a SyntaxError fails here
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                module = importlib.import_module(node.module)
                for alias in node.names:
                    assert hasattr(module, alias.name) or importlib.util.find_spec(
                        f"{node.module}.{alias.name}"), f"{name}: {node.module} has no {alias.name}"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    importlib.import_module(alias.name)
