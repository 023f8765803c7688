"""Every notebook's code cells run top to bottom (without Jupyter: the cells are plain Python)."""

import json
import pathlib

import pytest

NOTEBOOKS = sorted((pathlib.Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cells = json.loads(path.read_text())["cells"]
    code = [("".join(c["source"])) for c in cells if c["cell_type"] == "code"]
    assert code, f"{path.name} has no code"
    namespace = {"__name__": "__main__"}
    for k, source in enumerate(code):
        lines = [ln for ln in source.splitlines() if not ln.lstrip().startswith(("!", "%"))]
        exec(compile("\n".join(lines), f"{path.name}[cell {k}]", "exec"), namespace)  # noqa: S102
    assert list(tmp_path.iterdir()), "the notebook writes its results"


def test_there_are_notebooks():
    assert NOTEBOOKS
