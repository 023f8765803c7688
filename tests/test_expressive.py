"""`benchmarks/expressive.py --solutions`: any solution played as a game trajectory, and why the game
changed the decisions it could not play."""

import dataclasses
import importlib.util
import os

import numpy as np
import pytest

from jaxmmap.core.problem import COPY, save_problem, save_solution
from jaxmmap.core.rules import Rules, auto_columns
from jaxmmap.env.generator import generate
from jaxmmap.solvers.heuristic import heuristic, play_plan

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def expressive():
    spec = importlib.util.spec_from_file_location("expressive", os.path.join(ROOT, "benchmarks", "expressive.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def planned():
    # one plan, no local moves: deterministic; the deferred game (near supply) changes 4 of its decisions
    problem = generate(2, num_instructions=30)
    columns = auto_columns(problem)
    solution = heuristic(problem, 30.0, 0, rules=Rules(columns=columns), pins="compare", moves=0).solution
    return problem, solution, Rules(columns=columns, placement="deferred")


def test_every_changed_decision_has_one_cause(expressive, planned):
    problem, solution, rules = planned
    played = play_plan(problem, solution.action, rules)
    changed = int(np.sum(played.action != solution.action))
    causes = expressive.lost_causes(problem, np.asarray(solution.action), np.asarray(played.action), rules)
    assert set(causes) == set(expressive.CAUSES)
    assert changed == sum(causes.values()) == 4
    # a copy whose window the supply refused, and the NoCopy uses that had only that copy to extend
    assert causes["copy window"] == 1 and causes["predecessor"] == 3


def test_solutions_are_replayed_and_an_invalid_one_is_refused(expressive, planned, tmp_path, capsys):
    problem, solution, _ = planned
    save_problem(problem, tmp_path / "p.json.gz")
    save_solution(solution, tmp_path / "s.json")
    expressive.main(["--solutions", f"{tmp_path / 'p.json.gz'}={tmp_path / 's.json'}", "--rules", "deferred"])
    out = capsys.readouterr().out
    assert f"deferred: 4 of {problem.num_buffers} decisions changed" in out
    fraction = float(out.split("\n")[2].split()[3])
    assert fraction == pytest.approx(play_plan(problem, solution.action, Rules(
        columns=auto_columns(problem), placement="deferred")).ret / solution.ret, abs=1e-4)

    bad = dataclasses.replace(solution, action=np.full_like(solution.action, COPY))
    save_solution(bad, tmp_path / "bad.json")
    with pytest.raises(SystemExit, match="^error: .* is not a valid solution"):
        expressive.main(["--solutions", f"{tmp_path / 'p.json.gz'}={tmp_path / 'bad.json'}"])
    with pytest.raises(SystemExit, match="^error: --solutions takes PROBLEM=SOLUTION"):
        expressive.main(["--solutions", "nothing"])
