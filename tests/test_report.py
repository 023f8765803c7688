"""Pictures and reports, produced from real (short) runs and opened: layouts, the `plot`,
`latency` and `report` commands, and a report over a comparison and a training run."""

from __future__ import annotations

import json
import os

import matplotlib.image
import matplotlib.pyplot as plt
import numpy as np
import pytest
from builders import PAD, RULES, expert_config

from jaxmmap import Rules, bundled, generate, load_solution
from jaxmmap.agent.loop import fit
from jaxmmap.cli import main
from jaxmmap.core.simulator import latency
from jaxmmap.harness.compare import Comparison, compare
from jaxmmap.harness.plots import layout, pick_tensor
from jaxmmap.harness.report import read_metrics, report
from jaxmmap.harness.speed import speedup
from jaxmmap.solvers import solve

# One worker runs the whole module, so that its `runs` (a comparison and a training run) are made
# once (pytest-xdist's --dist loadgroup).
pytestmark = pytest.mark.xdist_group("expert")  # its training run is the expert one of builders


def opened(path) -> np.ndarray:
    """The image at `path` (a non-empty PNG)."""
    assert os.path.getsize(path) > 1000
    image = matplotlib.image.imread(path)
    assert image.ndim == 3 and image.shape[0] > 100 and image.shape[1] > 100
    return image


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    problems = [bundled("tiny"), generate(5, num_instructions=20, latency_tables=True, name="g5")]
    result = compare(problems, ["random", "greedy", "heuristic"], budget_s=1, rules=RULES,
                     bound=False)
    result.save(root / "compare")
    problem = generate(1, num_instructions=6, inplace_prob=0.3, memory_fraction=0.4,
                       copy_bandwidth=1e6, name="g1")
    fit(problem, expert_config(), rules=RULES, max_iterations=8, padding=PAD, solver="expert",
        workdir=str(root / "agent"))
    return root, result


def test_saved_results_load_back_with_their_solutions_and_problems(runs):
    root, result = runs
    loaded = Comparison.load(root / "compare")
    assert set(loaded.solutions) == set(result.solutions)
    for key, solution in result.solutions.items():
        np.testing.assert_array_equal(loaded.solutions[key].action, solution.action)
    assert set(loaded.problems) == {"tiny", "g5"}
    assert loaded.problems["g5"].latency_tables


def test_a_report_over_a_comparison_and_a_training_run(runs):
    root, _ = runs
    out = root / "report" / "report.md"
    text = report([str(root / "compare"), str(root / "agent")], str(out))
    assert out.read_text() == text
    folder = out.parent
    # Table 3: one row per solver that is not the baseline (the training run is labelled by
    # its agent mode), with the workloads it improved out of those it ran
    table3 = text.split("## Summary over workloads")[1].split("##")[0]
    for solver, count in (("random", 2), ("greedy", 2), ("expert", 1)):
        row = next(line for line in table3.splitlines() if line.startswith(f"| {solver} |"))
        assert row.rstrip(" |").endswith(f"/{count}")
    per_workload = text.split("## Per workload")[1].split("##")[0]
    for workload, solvers in (("tiny", 3), ("g5", 3), ("g1", 2)):  # g1: the agent + heuristic
        assert sum(line.startswith(f"| {workload} |") for line in per_workload.splitlines()) == solvers
    assert "The heuristic was run here (10 s at most each) for: g1" in text
    rows = {tuple(cell.strip() for cell in line.split("|")[1:3]): line.split("|")
            for line in per_workload.splitlines() if line.startswith("| ")}
    problem = bundled("tiny")
    comparison = Comparison.load(root / "compare")
    lat = {s: latency(problem, comparison.solutions[("tiny", s)]).total for s in ("random", "heuristic")}
    assert float(rows[("tiny", "random")][9]) == pytest.approx(speedup(lat["heuristic"], lat["random"]), abs=0.006)
    assert float(rows[("tiny", "random")][6]) == pytest.approx(lat["random"], rel=1e-5)
    # a game solver's own return and game beside its placed one, and the placer's start; none
    # for the heuristic, which places physically, or for the training run
    run = next(r for r in comparison.runs if (r.instance, r.solver) == ("tiny", "greedy"))
    own, start = (rows[("tiny", "greedy")][k].strip() for k in (4, 5))
    assert start == run.info["placed_start"]  # (a run cut at its budget before its first game has none)
    assert own == (f"{run.info['raw_return']:.6g} grid" if "raw_return" in run.info else "")
    assert [rows[("tiny", "heuristic")][k].strip() for k in (4, 5)] == ["", ""]
    assert [rows[("g1", "expert")][k].strip() for k in (4, 5)] == ["", ""]
    table5 = text.split("(the paper's Table 5)")[1].split("##")[0]
    assert sum(line.startswith("| g1 |") for line in table5.splitlines()) == 1
    for name in ("speedups.png", "correlation.png", "training.png", "curves.png",
                 "layouts/tiny.png", "layouts/g5.png", "layouts/g1.png"):
        assert f"]({name})" in text
        opened(folder / name)
    # the agent's run directory is self-contained: problem, best solution, improvements
    with open(root / "agent" / "improvements.jsonl") as f:
        improvements = [json.loads(line) for line in f]
    assert improvements and improvements[-1]["solution"]["return"] == pytest.approx(
        load_solution(str(root / "agent" / "solution.json")).ret)


def test_the_comparison_table_shows_the_speedup_over_the_heuristic_beside_the_return(runs):
    root, result = runs
    problem = bundled("tiny")
    base = latency(problem, result.solutions[("tiny", "heuristic")]).total
    for solver in ("random", "greedy", "heuristic"):
        row = next(r for r in result.rows() if r["instance"] == "tiny" and r["solver"] == solver)
        mine = latency(problem, result.solutions[("tiny", solver)]).total
        assert row["speedup_over_heuristic_percent"] == pytest.approx(speedup(base, mine))
    table = result.markdown().split("## tiny")[1]
    assert "vs heuristic (%)" in table and "| heuristic |" in table and "| +0.00 |" in table
    loaded = Comparison.load(root / "compare")  # saved in traces.json
    assert [r["speedup_over_heuristic_percent"] for r in loaded.rows()] == pytest.approx(
        [r["speedup_over_heuristic_percent"] for r in result.rows()])


def test_a_run_and_its_resumes_make_one_training_curve(tmp_path):
    rows = "iteration,seconds,best_return\n1,1.0,1\n2,2.5,2\n3,0.5,2\n4,1.5,3\n"
    (tmp_path / "metrics.csv").write_text(rows)
    assert [r["seconds"] for r in read_metrics(str(tmp_path))] == [1.0, 2.5, 3.0, 4.0]


def test_layout_draws_one_panel_per_solution_and_highlights_a_differing_tensor(runs):
    _, result = runs
    problem = bundled("tiny")
    # the greedy game (grid offsets, no placer: it differs from the heuristic's placement on any machine)
    game = solve(problem, "greedy", budget_s=10, place=False, rules=Rules()).solution
    solutions = [game, result.solutions[("tiny", "heuristic")]]
    fig = layout(problem, solutions)
    assert len(fig.axes) == 2
    tensor = pick_tensor(problem, solutions)
    counts = [np.sum((problem.tensor_id == tensor) & (s.alloc_start >= 0)) for s in solutions]
    assert counts[0] != counts[1]
    # one rectangle per allocation, plus one hatched rectangle per copy
    for ax, s in zip(fig.axes, solutions):
        placed = np.sum((s.action != 2) & (s.alloc_start >= 0))
        assert len(ax.patches) == placed + np.sum(s.copy_start >= 0)
    plt.close(fig)


def test_plot_and_latency_commands(runs, tmp_path, capsys):
    root, result = runs
    solutions = [str(root / "compare" / "solutions" / f"tiny.{s}.json.gz") for s in ("random", "heuristic")]
    out = tmp_path / "layout.png"
    assert main(["plot", "bundled:tiny", *solutions, "-o", str(out)]) == 0
    opened(out)
    capsys.readouterr()
    assert main(["latency", "bundled:tiny", *solutions, "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    rows = {r["solver"]: r for r in printed["results"]}
    written = result.solutions[("tiny", "random")]  # ("random", or "random+placed" where the placer's is higher)
    assert rows[written.solver]["latency"] == pytest.approx(latency(bundled("tiny"), written).total)
    assert printed["results"][-1]["speedup_over_heuristic_percent"] == pytest.approx(0.0)
    assert main(["report", str(root / "compare"), "-o", str(tmp_path / "r.md"), "--no-layouts"]) == 0
    assert (tmp_path / "r.md").exists() and not (tmp_path / "layouts").exists()


def test_a_solver_that_two_sources_hold_gets_one_row_each(runs):
    root, _ = runs
    text = report([str(root / "compare"), str(root / "compare")], str(root / "twice" / "r.md"),
                  layouts=False)
    per_workload = text.split("## Per workload")[1].split("##")[0]
    labels = [line.split("|")[2].strip() for line in per_workload.splitlines()
              if line.startswith("| tiny |")]
    assert sorted(labels) == sorted(["random", "greedy", "heuristic", "random (compare)",
                                     "greedy (compare)", "heuristic (compare)"])


def test_a_program_that_takes_no_time_has_an_infinite_speedup():
    assert speedup(2.0, 0.0) == float("inf") and speedup(0.0, 0.0) == 0.0
    assert speedup(3.0, 2.0) == pytest.approx(50.0)
