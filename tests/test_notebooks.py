"""Every notebook runs top to bottom in a Jupyter kernel (nbclient), with the small settings its
`SMALL` flag selects (`JAXMMAP_NOTEBOOK_SMALL=1`), and writes its results."""

import pathlib

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((pathlib.Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
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
