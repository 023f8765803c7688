"""The XLA-style heuristic: valid plans, XLA's rules on hand-made cases, exact copy checks."""

from __future__ import annotations

import heapq

import numpy as np
import pytest
from builders import make_problem

from jaxmmap import Rules, generate, validate
from jaxmmap.generator import bundled
from jaxmmap.problem import COPY, DROP, NOCOPY
from jaxmmap.rules import discretize
from jaxmmap.solvers import solve
from jaxmmap.solvers.exhaustive import exhaustive
from jaxmmap.solvers.heuristic import _Memory, heuristic, plan, replay

RULES = Rules(columns=32)


@pytest.mark.parametrize("seed", range(12))
def test_plans_are_valid_on_generated_problems(seed):
    problem = generate(seed, num_instructions=30 + 5 * seed, inplace_prob=0.2, loop_prob=0.1,
                       memory_fraction=0.3, latency_tables=seed % 2 == 1)
    result = heuristic(problem, 10, 0, rules=RULES)
    report = validate(problem, result.solution)
    assert report.ok, str(report)
    assert result.solution.ret == pytest.approx(report.recomputed_return)
    assert result.info["planned_placed"] == int(np.sum(result.solution.action != DROP))


def test_game_replay_is_a_game_solution_and_best_takes_the_better():
    problem = bundled("tiny")
    plan_only = heuristic(problem, 10, 0, rules=RULES)
    both = heuristic(problem, 10, 0, rules=RULES, mode="best")
    game = replay(problem, plan(problem, RULES).action, RULES)
    assert validate(problem, game).ok
    assert both.info["game_return"] == pytest.approx(game.ret)
    assert both.solution.ret == pytest.approx(max(game.ret, plan_only.solution.ret))
    assert 0 < both.info["followed"] <= problem.num_buffers
    with pytest.raises(ValueError, match="mode"):
        heuristic(problem, 1, 0, mode="xla")


@pytest.mark.parametrize("seed", [0, 1, 2, 4])
def test_game_replay_never_beats_the_game_optimum(seed):
    problem = generate(seed, num_instructions=4 + seed % 3, inplace_prob=0.3,
                       memory_fraction=0.4, copy_bandwidth=1e6)
    best = exhaustive(problem, 60, 0, rules=RULES).solution.ret
    game = heuristic(problem, 10, 0, rules=RULES, mode="game").solution
    assert validate(problem, game).ok
    assert game.ret <= best + 1e-9


def test_beats_random_on_the_bundled_instance():
    problem = bundled("tiny")
    rules = Rules(columns=64)
    ours = solve(problem, "heuristic", budget_s=10, rules=rules).solution.ret
    rand = solve(problem, "random", budget_s=0, seed=0, rules=rules).solution.ret  # 256 games
    assert ours > rand


# ----------------------------------------------------------------------------- XLA's rules


def _one_weight(gap_supply, *, demand=1.0, benefit=1.0):
    """One weight (a program input) read at steps 2 and 2 + len(gap_supply) + 1."""
    supply = [1.0, 1.0, 1.0] + list(gap_supply) + [1.0]
    second = len(supply) - 1
    return make_problem([dict(t=2, tensor=1, demand=demand, benefit=benefit),
                         dict(t=second, tensor=1, demand=demand, benefit=benefit)],
                        memory=100, supply=supply)


def test_near_uses_keep_the_tensor_and_far_uses_prefetch_again():
    near = plan(_one_weight([1.0] * 4), RULES).solution  # gap of 5 copies <= 10: keep
    assert list(near.action) == [COPY, NOCOPY]
    far = plan(_one_weight([1.0] * 20), RULES).solution  # 21 copies > 10: evict, prefetch
    assert list(far.action) == [COPY, COPY]
    assert validate(_one_weight([1.0] * 20), far).ok


def test_prefetch_starts_at_the_preferred_overlap():
    # Uniform supply 1 per step, demand 2: the preferred overlap 1.5 * 2 = 3 steps of copy.
    problem = make_problem([dict(t=9, demand=2.0)], memory=100, supply=[1.0] * 10)
    solution = plan(problem, RULES).solution
    assert (solution.copy_start[0], solution.copy_end[0]) == (6, 8)
    assert solution.alloc_start[0] == 6
    tight = plan(problem, RULES, preferred_overlap=1.0).solution
    assert (tight.copy_start[0], tight.copy_end[0]) == (7, 8)


def test_more_memory_bound_buffers_go_first():
    # Two inputs at the same step, room for one: benefit per sqrt(size) decides.
    problem = make_problem([dict(t=3, size=60, benefit=4.0), dict(t=3, size=30, benefit=3.0)],
                           memory=80, supply=[1.0] * 5)
    solution = plan(problem, RULES).solution
    assert list(solution.action) == [DROP, COPY]  # 3 / sqrt(30) > 4 / sqrt(60)


def test_best_fit_takes_the_smallest_hole():
    memory = _Memory(discretize(make_problem([dict(t=0)], memory=32, supply=[1.0] * 4),
                                Rules(columns=32)), 4)
    memory.take(0, 3, 0, 4)     # columns 0-3 used: hole 4-9 (6 columns) before the next use
    memory.take(0, 3, 10, 12)   # columns 10-21 used: hole 22-31 (10 columns)
    assert memory.best_fit(np.arange(4), 5) == 4
    assert memory.best_fit(np.arange(4), 7) == 22
    assert memory.best_fit(np.arange(4), 11) == -1


def _edf_feasible(supply, copies):
    """Reference: preemptive earliest-deadline-first over integer supply."""
    jobs = sorted(copies)
    heap, k, left = [], 0, {}
    for t, s in enumerate(supply):
        while k < len(jobs) and jobs[k][0] <= t:
            heapq.heappush(heap, (jobs[k][1], k))
            left[k] = jobs[k][2]
            k += 1
        while heap and s > 0:
            _, q = heap[0]
            give = min(s, left[q])
            left[q] -= give
            s -= give
            if left[q] == 0:
                heapq.heappop(heap)
        if heap and heap[0][0] <= t:
            return False
    return not heap and k == len(jobs)


@pytest.mark.parametrize("seed", range(20))
def test_copy_check_is_exact_edf(seed):
    rng = np.random.default_rng(seed)
    T = 8
    problem = make_problem([dict(t=0)], memory=32, supply=rng.integers(0, 4, T).astype(float))
    d = discretize(problem, RULES)
    memory = _Memory(d, T)
    accepted = []
    for _ in range(12):
        a = int(rng.integers(0, T))
        b = min(T - 1, a + int(rng.integers(0, 3)))
        demand = int(rng.integers(1, 3)) * int(d.supply.max() // 3 + 1)
        if (memory.cover[a:b] >= 0).any():
            continue
        expected = _edf_feasible(d.supply, accepted + [(a, b, demand)])
        assert memory.copy_fits(a, b, demand) == expected
        if expected:
            memory.add_copy(a, b, demand)
            accepted.append((a, b, demand))
