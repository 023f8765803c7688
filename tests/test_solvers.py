"""Solvers behind one interface: valid solutions, exact optimum on tiny problems, anytime traces."""

import dataclasses

import pytest

from jaxmmap import Rules, generate, validate
from jaxmmap.solvers import SOLVERS, InvalidSolution, solve
from jaxmmap.solvers.base import Result
from jaxmmap.solvers.exhaustive import exhaustive

RULES = Rules(columns=32)


def tiny(seed, tables=False):
    """Small programs with a fast copy engine, so that placing buffers is possible but contested."""
    return generate(seed, num_instructions=4 + seed % 3, inplace_prob=0.3, memory_fraction=0.4,
                    copy_bandwidth=1e6, latency_tables=tables)


@pytest.mark.parametrize("seed", range(10))
def test_branch_and_bound_equals_brute_force(seed):
    problem = tiny(seed, tables=seed % 2 == 1)
    bounded = exhaustive(problem, 60, 0, rules=RULES)
    brute = exhaustive(problem, 60, 0, rules=RULES, bound=False)
    assert bounded.info["proven_optimal"] and brute.info["proven_optimal"]
    assert bounded.solution.ret == pytest.approx(brute.solution.ret, abs=1e-9)
    assert bounded.info["nodes"] <= brute.info["nodes"]
    assert validate(problem, bounded.solution).ok


@pytest.mark.parametrize("seed", [0, 1, 2, 4])  # instances where something can be placed
def test_no_solver_beats_the_optimum_and_all_are_valid(seed):
    problem = tiny(seed)
    best = solve(problem, "exhaustive", budget_s=60, rules=RULES).solution.ret
    for name in ("greedy", "random"):
        result = solve(problem, name, budget_s=0.3, seed=seed, rules=RULES, **(
            {"batch": 32} if name == "random" else {}))
        assert result.solution.ret <= best + 1e-5, name
        assert result.solution.solver == name
        times = [t for t, _ in result.trace]
        returns = [r for _, r in result.trace]
        assert times == sorted(times) and returns == sorted(returns)  # anytime: only improvements
        assert returns[-1] == pytest.approx(result.solution.ret)
    assert best > 0


def test_budget_stops_the_search_without_claiming_optimality():
    problem = generate(1, num_instructions=8, inplace_prob=0.2, memory_fraction=0.6,
                       copy_bandwidth=1e6)
    assert problem.num_buffers <= 24
    result = exhaustive(problem, 0.0, 0, rules=RULES)
    assert not result.info["proven_optimal"] and result.seconds < 5
    with pytest.raises(ValueError, match="tiny"):
        exhaustive(generate(0, num_instructions=40), 1, 0)


def test_solve_validates_every_solution(monkeypatch):
    problem = tiny(2)

    def cheat(problem, budget_s, seed, *, rules):
        honest = SOLVERS["greedy"](problem, budget_s, seed, rules=rules)
        forged = dataclasses.replace(honest.solution, ret=honest.solution.ret + 1.0)
        return Result(solution=forged, trace=((0.0, forged.ret),), seconds=0.0, info={})

    monkeypatch.setitem(SOLVERS, "cheat", cheat)
    with pytest.raises(InvalidSolution, match="return"):
        solve(problem, "cheat", budget_s=1, rules=RULES)
    with pytest.raises(ValueError, match="unknown solver"):
        solve(problem, "oracle")
