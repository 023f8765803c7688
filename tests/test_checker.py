"""One checker: `validator.check_solution` validates a solution once and remembers it, so that on
the path of `solve`, `latency`, the command line and `report` no solution is validated twice."""

from __future__ import annotations

import collections
import dataclasses
import importlib

import numpy as np
import pytest

from jaxmmap import Rules, bundled, latency, save_problem, save_solution
from jaxmmap.cli import main
from jaxmmap.core import validator
from jaxmmap.core.validator import SolutionRejected, check_solution
from jaxmmap.harness.compare import compare
from jaxmmap.harness.report import report
from jaxmmap.solvers import solve

FIELDS = ("action", "offset", "alloc_start", "alloc_end", "copy_start", "copy_end")


@pytest.fixture
def validations(monkeypatch) -> collections.Counter:
    """Counts the validator's runs per solution: its solver and content (the same solver's
    decisions and placement count as one solution, whichever object or file holds them)."""
    seen: collections.Counter = collections.Counter()
    real = validator.validate

    def counting(problem, solution, **kw):
        seen[(problem.name, solution.solver, *(np.asarray(getattr(solution, k)).tobytes() for k in FIELDS))] += 1
        return real(problem, solution, **kw)

    monkeypatch.setattr(validator, "validate", counting)
    return seen


def test_a_checked_solution_is_not_validated_again_unless_it_changed(validations):
    problem = bundled("tiny")
    solution = solve(problem, "greedy", budget_s=2, seed=0, place=False, rules=Rules()).solution
    validations.clear()
    for _ in range(3):
        assert check_solution(problem, solution).ok
        latency(problem, solution)
    assert sum(validations.values()) == 0  # (`solve` checked it)
    copy = dataclasses.replace(solution, ret=solution.ret + 1.0)  # another object: checked anew
    with pytest.raises(SolutionRejected, match="return"):
        latency(problem, copy)
    assert sum(validations.values()) == 1
    placed = int(np.flatnonzero(solution.action != 2)[0])
    solution.action[placed] = 2  # changed in place (a Drop that keeps its offset): checked again, refused
    with pytest.raises(SolutionRejected, match="drop"):
        latency(problem, solution)
    assert sum(validations.values()) == 2


@pytest.mark.parametrize("solver", ["random", "heuristic"])
def test_solve_then_latency_validates_each_solution_once(validations, solver):
    problem = bundled("tiny")
    result = solve(problem, solver, budget_s=3, seed=0)
    latency(problem, result.solution)
    if result.raw is not None:
        latency(problem, result.raw)
    assert validations and max(validations.values()) == 1, validations.values()


def test_the_command_line_validates_each_solution_once(validations, tmp_path, capsys):
    path = str(tmp_path / "tiny.json.gz")
    save_problem(bundled("tiny"), path)
    out = str(tmp_path / "greedy.json")
    assert main(["solve", path, "--solver", "greedy", "--budget", "3", "-o", out]) == 0
    assert validations and max(validations.values()) == 1
    validations.clear()  # (a new command: a new process reads the file again)
    assert main(["latency", path, out]) == 0
    assert validations and max(validations.values()) == 1, validations.values()


def test_cpsat_checks_a_solution_it_reports_again_once(validations, monkeypatch):
    # (CP-SAT may report its hint, already offered, as a solution of its own search)
    module = importlib.import_module("jaxmmap.solvers.cpsat.solve")
    search = module._search

    def reporting_twice(model, seconds, offer, **kw):
        return search(model, seconds, lambda sol: (offer(sol), offer(dataclasses.replace(sol))), **kw)

    monkeypatch.setattr(module, "_search", reporting_twice)
    result = solve(bundled("tiny"), "cpsat", budget_s=2, seed=0, hint=None)
    assert result.trace and max(validations.values()) == 1, validations.values()


def test_a_report_validates_each_solution_once(validations, tmp_path):
    problem = bundled("tiny")
    compare([problem], ["random", "greedy", "heuristic"], budget_s=1, bound=False, rules=Rules()).save(tmp_path / "runs")
    validations.clear()
    report([str(tmp_path / "runs")], str(tmp_path / "report.md"), layouts=True)
    assert validations and max(validations.values()) == 1, validations.values()


@pytest.mark.parametrize("command", ["validate", "latency", "plot"])
def test_a_solution_whose_rules_the_game_cannot_have_is_one_error(tmp_path, capsys, command):
    path = str(tmp_path / "tiny.json.gz")
    problem = bundled("tiny")
    save_problem(problem, path)
    solution = solve(problem, "greedy", budget_s=2, seed=0, place=False, rules=Rules()).solution
    bogus = str(tmp_path / "bogus.json")
    save_solution(dataclasses.replace(solution, rules={**solution.rules, "columns": 10 ** 9}), bogus)
    capsys.readouterr()
    extra = ["-o", str(tmp_path / "layout.png")] if command == "plot" else []
    assert main([command, path, bogus, *extra]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and "rules.columns" in err[0] and "65,536" in err[0], err
    assert not (tmp_path / "layout.png").exists()
