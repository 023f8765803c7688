"""The placer (`solvers.placer.place`): a solution's decisions placed again and grown; valid, never
worse than its input, deterministic, a no-op on an optimum."""

from __future__ import annotations

import numpy as np
import pytest

from jaxmmap import Rules, bundled, generate, validate
from jaxmmap.problem import DROP
from jaxmmap.rules import auto_columns
from jaxmmap.solvers import solve
from jaxmmap.solvers.placer import place
from jaxmmap.validator import SolutionRejected


def _problems():
    return [bundled("tiny"),
            generate(1, num_instructions=60, inplace_prob=0.4, loop_prob=0.2),  # alias groups, loops
            generate(2, num_instructions=40, latency_tables=True, zero_demand_prob=0.2),
            generate(3, num_instructions=50, oversize_prob=0.1, zero_supply_prob=0.2)]


@pytest.mark.parametrize("k", range(4))
@pytest.mark.parametrize("solver", ["greedy", "heuristic"])
def test_the_placed_solution_is_valid_and_never_worse(k, solver):
    problem = _problems()[k]
    rules = Rules(columns=auto_columns(problem))
    raw = solve(problem, solver, budget_s=0.5, seed=k, rules=rules).solution
    placed = place(problem, raw, budget_s=60, max_moves=10)
    assert validate(problem, placed).ok
    assert placed.ret >= raw.ret
    again = place(problem, raw, budget_s=60, max_moves=10)
    np.testing.assert_array_equal(placed.action, again.action)  # deterministic
    np.testing.assert_array_equal(placed.offset, again.offset)


def test_growth_adds_to_game_solutions():
    problem = generate(2, num_instructions=300)
    rules = Rules(columns=auto_columns(problem))
    raw = solve(problem, "greedy", budget_s=1, rules=rules).solution
    grown = place(problem, raw, budget_s=60, moves=False)
    assert grown.ret > raw.ret
    placed = place(problem, raw, budget_s=60, max_moves=20)
    assert placed.ret >= grown.ret
    assert placed.solver == "greedy+placed" and placed.metadata["placed_from"] == raw.ret
    # the decisions the game made stay made (where the placement could keep them)
    kept = (raw.action != DROP) & (placed.action != DROP)
    assert kept.sum() >= 0.9 * (raw.action != DROP).sum()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_placer_is_a_no_op_on_a_proven_optimum(seed):
    problem = generate(seed, num_instructions=4 + seed, memory_fraction=0.4, copy_bandwidth=1e6)
    result = solve(problem, "cpsat", budget_s=30, rules=Rules(columns=32))
    assert result.info["proven_optimal"]
    placed = place(problem, result.solution, budget_s=10)
    assert placed is result.solution  # nothing better exists


def test_an_invalid_input_is_refused():
    problem = bundled("tiny")
    raw = solve(problem, "greedy", budget_s=1).solution
    import dataclasses
    with pytest.raises(SolutionRejected):
        place(problem, dataclasses.replace(raw, ret=raw.ret + 1))
