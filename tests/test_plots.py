"""The pictures: what a layout's legend, capacity line and highlight show, and that saving a
figure closes it; the comparison's legend fits the picture."""

import numpy as np
import pytest

from jaxmmap.core.io import bundled
from jaxmmap.harness import compare as compare_module
from jaxmmap.harness.compare import Comparison, Run
from jaxmmap.harness.plots import _pyplot, allocations, layout, speedup_bars
from jaxmmap.solvers import solve

plt = _pyplot()  # (headless)


@pytest.fixture(scope="module")
def tiny_solution():
    problem = bundled("tiny")
    return problem, solve(problem, "heuristic", budget_s=5).solution


def _smallest_allocated_tensor(problem, solution) -> int:
    mine = allocations(solution)
    return int(problem.tensor_id[mine][np.argmin(problem.size[mine])])


def test_a_layout_has_a_legend_a_labelled_capacity_and_a_visible_highlight(tiny_solution):
    problem, solution = tiny_solution
    tensor = _smallest_allocated_tensor(problem, solution)  # the hardest to see
    fig = layout(problem, [solution], highlight=tensor)
    ax = fig.axes[0]
    where = allocations(solution) & (problem.tensor_id == tensor)
    rings = [line for line in ax.lines if line.get_marker() == "o"]
    # each of its allocations is marked by a ring at its centre, whatever its size
    assert len(rings) == 1 and len(rings[0].get_xdata()) == int(where.sum())
    x = (solution.alloc_start[where] + solution.alloc_end[where] + 1) / 2
    assert sorted(rings[0].get_xdata()) == pytest.approx(sorted(x))
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend[:2] == ["allocation (a colour per tensor)", "copy running"]
    assert legend[2].startswith("capacity ") and legend[3] == f"tensor {tensor} (highlighted)"
    assert any(t.get_text().startswith("capacity ") for t in ax.texts)  # the line is labelled
    assert "% vs all-slow" in ax.get_title()  # speed-ups in percent
    plt.close(fig)


def test_a_tensor_never_in_fast_memory_is_said_so_not_highlighted_invisibly(tiny_solution):
    problem, solution = tiny_solution
    never = np.setdiff1d(problem.tensor_id, problem.tensor_id[allocations(solution)])
    if never.size == 0:
        pytest.skip("every tensor of this solution is in fast memory")
    fig = layout(problem, [solution], highlight=int(never[0]))
    assert "(never in fast memory here)" in fig._suptitle.get_text()
    assert not [line for line in fig.axes[0].lines if line.get_marker() == "o"]
    assert len(fig.legends[0].get_texts()) == 3  # no highlight entry
    plt.close(fig)


def test_saving_a_figure_closes_it(tiny_solution, tmp_path):
    problem, solution = tiny_solution
    before = plt.get_fignums()
    layout(problem, [solution, solution], path=str(tmp_path / "l.png"))
    speedup_bars({"tiny": {"greedy": 1.0}}, path=str(tmp_path / "b.png"))
    assert plt.get_fignums() == before
    assert (tmp_path / "l.png").stat().st_size > 1000 and (tmp_path / "b.png").stat().st_size > 1000


def test_the_comparison_legend_fits_the_picture(tmp_path, monkeypatch):
    """Eight solvers of long names on one instance: the legend under the panel is wrapped and
    the picture holds all of it (it was cut at the right edge)."""
    names = [f"a-long-solver-name-{k}" for k in range(8)]
    runs = [Run(instance="tiny", solver=n, seed=0, status="ok", ret=1.0 + k, final_ret=1.0 + k, seconds=1.0,
                time_to_best=0.5, trace=((0.1, 0.5), (0.5, 1.0 + k)), info={}) for k, n in enumerate(names)]
    saved = {}
    original = compare_module.save_figure

    def keep(fig, path, **kwargs):  # the figure's legend, measured as saved
        original(fig, path, **kwargs)
        legend = fig.legends[0]
        saved["texts"] = [t.get_text() for t in legend.get_texts()]
        saved["width"] = legend.get_window_extent(fig.canvas.get_renderer()).width * kwargs["dpi"] / fig.dpi

    monkeypatch.setattr(compare_module, "save_figure", keep)
    path = tmp_path / "curves.png"
    Comparison(runs, bounds={"tiny": 10.0}, budget_s=1.0, seeds=1, environment={}).plot(str(path))
    assert saved["texts"] == [*names, "bound"]
    assert plt.imread(str(path)).shape[1] >= 0.98 * saved["width"] > 100  # pixels: the picture holds the legend
