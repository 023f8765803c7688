"""The comparison harness: runs, statuses, bound, and the files it writes."""

from __future__ import annotations

import csv
import dataclasses
import json
import math

import numpy as np
import pytest

from jaxmmap import Rules, generate
from jaxmmap.cli import main
from jaxmmap.core.io import bundled
from jaxmmap.harness.compare import Comparison, compare
from jaxmmap.solvers import SOLVERS
from jaxmmap.solvers.base import Refused, Result

RULES = Rules(columns=64)


@pytest.fixture
def fake_solvers(monkeypatch):
    """Solvers that cheat, refuse and crash, beside the real greedy."""

    def cheat(problem, budget_s, seed, *, rules):
        honest = SOLVERS["greedy"](problem, budget_s, seed, rules=rules)
        forged = dataclasses.replace(honest.solution, ret=honest.solution.ret + 1.0)
        return Result(solution=forged, trace=((0.0, forged.ret),), seconds=0.0, info={})

    def refuse(problem, budget_s, seed, *, rules):
        raise Refused("too large for me")

    def crash(problem, budget_s, seed, *, rules):
        raise ValueError("a bug, not a refusal")

    def late(problem, budget_s, seed, *, rules):  # improves only after its budget
        honest = SOLVERS["greedy"](problem, budget_s, seed, rules=rules)
        ret = honest.solution.ret
        return dataclasses.replace(honest, trace=((0.1, ret - 1.0), (budget_s + 5.0, ret)),
                                   seconds=budget_s + 5.0)

    for name, fn in (("cheat", cheat), ("refuse", refuse), ("crash", crash), ("late", late)):
        monkeypatch.setitem(SOLVERS, name, fn)


def test_game_solutions_are_placed_and_shown_beside_their_own(tmp_path):
    problem = generate(2, num_instructions=120, name="g2")
    # (15 s: a cold compile of greedy's game on a busy machine must end within 1.05 x the budget + 3 s,
    # or `solve` writes the placement of no decisions and there is no game to show)
    result = compare([problem], ["greedy", "heuristic"], budget_s=15, rules=RULES, bound=False)
    rows = {r["solver"]: r for r in result.rows()}
    assert rows["greedy"]["mean_return"] > rows["greedy"]["raw_return"]  # the placer grew it
    assert math.isnan(rows["heuristic"]["raw_return"])  # placed physically by itself
    text = result.markdown()
    assert "game's own" in text and f"{rows['greedy']['raw_return']:.5g} grid |" in text  # and its game
    assert rows["greedy"]["played"] == "grid" and rows["heuristic"]["played"] == ""


def test_statuses_rows_and_files(tmp_path, fake_solvers):
    problems = [bundled("tiny"), generate(3, num_instructions=30, name="g3")]
    # place=False: the placer's local moves are anytime, so under 1 s greedy would not be
    # deterministic (test_game_solutions_are_placed_and_shown_beside_their_own covers placing).
    # The greedy games are compiled first (in this process), so that the first one's compile
    # (several seconds on a busy 2-core CPU) does not reach the deadline of a 1 s budget
    # (1.1 x budget + base.GRACE_S) and cut it short.
    for problem in problems:
        SOLVERS["greedy"](problem, 60.0, 0, rules=RULES)
    result = compare(problems, ["greedy", "heuristic", "cheat", "refuse", "crash"], budget_s=1,
                     seeds=2, rules=RULES, place=False)
    assert len(result.runs) == 2 * 5 * 2
    status = {(r.instance, r.solver): r.status for r in result.runs}
    assert status[("tiny", "greedy")] == "ok" and status[("g3", "heuristic")] == "ok"
    assert status[("tiny", "cheat")] == "invalid"  # the validator caught the forged return
    assert status[("tiny", "refuse")] == "skipped" and status[("tiny", "crash")] == "error"

    for r in result.runs:
        bound = result.bounds[r.instance]
        if r.status == "ok":
            assert r.ret <= r.final_ret <= bound + 1e-6
            assert r.trace[-1][1] == pytest.approx(r.final_ret)
            assert 0 <= r.time_to_best <= r.seconds + 1e-6
        else:
            assert math.isnan(r.ret) and r.message

    rows = {(r["instance"], r["solver"]): r for r in result.rows()}
    greedy = rows[("tiny", "greedy")]
    assert greedy["valid"] == 2 and greedy["std_return"] == 0.0  # deterministic
    assert greedy["fraction_of_bound"] == pytest.approx(greedy["mean_return"] /
                                                        result.bounds["tiny"])
    assert rows[("tiny", "cheat")]["invalid"] == 2 and rows[("tiny", "cheat")]["valid"] == 0

    paths = result.save(tmp_path)
    with open(paths["results.csv"]) as f:
        lines = list(csv.DictReader(f))
    assert len(lines) == len(result.runs)
    assert {line["status"] for line in lines} == {"ok", "invalid", "skipped", "error"}
    markdown = open(paths["results.md"]).read()
    for instance in ("tiny", "g3"):
        assert f"## {instance}" in markdown
    assert markdown.count("| heuristic |") == 2 and "2/2" in markdown
    traces = json.load(open(paths["traces.json"]))
    assert len(traces["runs"]) == len(result.runs) and traces["bounds"]["tiny"] > 0
    png = open(paths["curves.png"], "rb").read()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
    solutions = [k for k in paths if k.startswith("solution:")]
    assert len(solutions) == 2 * 2  # greedy and heuristic, per instance (not the cheat)


def test_only_what_is_found_within_the_budget_counts(fake_solvers):
    result = compare([bundled("tiny")], ["late"], budget_s=1, rules=RULES)
    (run,) = result.runs
    assert run.status == "ok" and run.ret == pytest.approx(run.final_ret - 1.0)
    # (the solver's clock starts after `solve`'s set-up: its budget is microseconds short of 1 s)
    assert run.time_to_best == pytest.approx(0.1, abs=1e-3) and run.seconds == pytest.approx(6.0, abs=1e-3)
    (row,) = result.rows()
    assert row["mean_return"] == pytest.approx(run.ret)


def test_bad_arguments():
    with pytest.raises(ValueError, match="unknown solver"):
        compare([bundled("tiny")], ["oracle"], budget_s=1)
    with pytest.raises(ValueError, match="distinct"):
        compare([bundled("tiny"), bundled("tiny")], ["greedy"], budget_s=1)


def test_command_line(tmp_path, capsys):
    out = tmp_path / "cmp"
    code = main(["compare", "--instances", "bundled:tiny", "--solvers", "greedy", "heuristic",
                 "--budget", "1", "--columns", "64", "-o", str(out)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "| heuristic |" in printed and "| greedy |" in printed
    assert (out / "curves.png").stat().st_size > 0
    rows = list(csv.DictReader(open(out / "results.csv")))
    assert [r["solver"] for r in rows] == ["greedy", "heuristic"]
    assert all(np.isfinite(float(r["fraction_of_bound"])) for r in rows)


def test_a_proven_cpsat_bound_tightens_the_instance_bound():
    problem = generate(2, num_instructions=6, inplace_prob=0.3, memory_fraction=0.4,
                       copy_bandwidth=1e6, name="small")
    result = compare([problem], ["greedy", "cpsat"], budget_s=20, rules=Rules(columns=32))
    cp = next(r for r in result.runs if r.solver == "cpsat")
    assert cp.status == "ok" and cp.info["proven_optimal"]
    assert result.bounds["small"] == pytest.approx(
        min(cp.info["relaxation_bound"], max(cp.info["bound"], cp.ret)))
    assert result.bounds["small"] <= cp.info["relaxation_bound"]
    assert all(r.ret <= result.bounds["small"] + 1e-9 for r in result.runs)


def test_saved_results_load_back(tmp_path):
    result = compare([bundled("tiny")], ["greedy", "heuristic"], budget_s=1, rules=RULES)
    result.save(tmp_path, solutions=False)
    loaded = Comparison.load(tmp_path)
    assert loaded.runs == result.runs and loaded.bounds == result.bounds
    assert loaded.markdown() == result.markdown()


def test_results_of_side_by_side_runs_merge_into_one_table(tmp_path, capsys):
    import importlib.util
    import os

    path = os.path.join(os.path.dirname(os.path.dirname(__file__)), "benchmarks",
                        "merge_results.py")
    spec = importlib.util.spec_from_file_location("merge_results", path)
    merge = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(merge)
    fields = ["instance", "solver", "seed", "status", "return", "bound"]
    runs = {"a": [("p", "es", 0, "ok", 2.0, 4.0), ("q", "es", 0, "ok", 3.0, "")],
            "b": [("p", "muzero", 0, "ok", 2.5, ""), ("p", "muzero", 1, "ok", 1.5, ""),
                  ("q", "muzero", 0, "ok", 3.5, ""), ("q", "muzero", 1, "error", "", "")]}
    for folder, rows in runs.items():
        (tmp_path / folder).mkdir()
        with open(tmp_path / folder / "results.csv", "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(fields)
            writer.writerows(rows)
    assert merge.main([str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    # p: the mean of the two seeds ties ES (2.0 >= 2.0), with p's bound; q: 3.5 against 3.0
    assert "| p |  | 4 | 2 (50.0%) | 2 (50.0%) | 1.0000 | yes |" in out
    assert "| q |  | nan | 3 | 3.5 | 1.1667 | yes |" in out
    assert out.strip().endswith("muzero >= es on 2 of 2 instances")
