"""Solvers behind one interface: valid solutions, exact optimum on tiny problems, anytime traces."""

import dataclasses

import pytest
from builders import EGRL_OPTIONS, ES_OPTIONS, agent_options

from jaxmmap import Rules, bundled, generate, validate
from jaxmmap.solvers import SOLVERS, InvalidSolution, solve
from jaxmmap.solvers.base import Result
from jaxmmap.solvers.cpsat import upper_bound
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


# Solvers that play the game: the game's optimum (exhaustive) bounds them. The others place
# buffers themselves (any valid offsets and copy intervals) and may pass it; CP-SAT's proven
# bound and the relaxation bound hold for them all.
GAME_SOLVERS = {"random", "greedy", "es", "egrl", "mcts", "exhaustive"}
OPTIONS = {"random": dict(batch=32), "es": dict(ES_OPTIONS, max_generations=3),
           "egrl": dict(EGRL_OPTIONS, max_generations=3),
           "mcts": dict(games=4, num_simulations=8, max_batches=1),
           "muzero": agent_options(max_iterations=40), "muzero-prod": agent_options(max_iterations=40)}


@pytest.mark.parametrize("seed", [0, 1, 2, 4])  # instances where something can be placed
def test_every_solver_is_valid_and_within_the_bounds(seed):
    problem = tiny(seed)
    optimum = solve(problem, "exhaustive", budget_s=60, rules=RULES).solution.ret
    exact = solve(problem, "cpsat", budget_s=60, rules=RULES)
    assert exact.info["proven_optimal"]
    assert exact.solution.ret >= optimum - 1e-9  # the physical optimum contains the game's
    relaxation = upper_bound(problem)
    assert exact.info["bound"] <= relaxation + 1e-9
    assert optimum > 0
    for name in SOLVERS:
        result = solve(problem, name, budget_s=0.3 if name == "random" else 60, seed=seed,
                       rules=RULES, **OPTIONS.get(name, {}))  # solve() validates
        ret = result.solution.ret
        assert ret <= relaxation + 1e-6 and ret <= exact.info["bound"] + 1e-6, name
        if name in GAME_SOLVERS:
            assert ret <= optimum + 1e-5, name
        times = [t for t, _ in result.trace]
        returns = [r for _, r in result.trace]
        assert times == sorted(times) and returns == sorted(returns)  # anytime: only improvements
        assert returns[-1] == pytest.approx(ret)


def test_every_solver_on_the_bundled_instance():
    problem = bundled("tiny")
    rules = RULES  # with the padding of OPTIONS, es and egrl reuse their compiles
    bound = upper_bound(problem)
    returns = {}
    for name in SOLVERS:
        if name == "exhaustive":
            with pytest.raises(ValueError, match="tiny"):
                solve(problem, name, rules=rules)
            continue
        options = {k: v for k, v in OPTIONS.get(name, {}).items() if k != "batch"}
        if name.startswith("muzero"):  # long enough for a game of 127 moves
            options["max_iterations"] = 150
        result = solve(problem, name, budget_s=0 if name == "random" else 20, rules=rules,
                       **options)
        returns[name] = result.solution.ret
        assert 0 < returns[name] <= bound + 1e-6, name
    assert returns["heuristic"] > returns["random"]  # 256 random games


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
