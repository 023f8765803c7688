"""The latency simulator against hand-computed timelines, and its agreement with the game's
return on real solutions."""

from __future__ import annotations

import contextlib
import dataclasses
import math
import signal

import jax
import numpy as np
import pytest
from builders import make_problem, make_solution

from jaxmmap import Rules, bundled, generate, make_instance, nth_game, random_policy, rollouts, to_solution, validate
from jaxmmap.core import suite
from jaxmmap.core.problem import COPY, DROP, NOCOPY
from jaxmmap.core.simulator import _Engine, correlation, correlation_of, latency, step_latency
from jaxmmap.solvers import solve

NONE = (-1, -1)
SLOW = {"step_latency": [1.0, 1.0, 1.0]}


def simulate(problem, solution):
    """The simulator on hand-made solutions, which may break rules the validator checks (offsets
    that overlap, copies over the supply): these tests are about timing, not validity."""
    return latency(problem, solution, allow_invalid=True)


def test_all_slow_memory_gives_the_base_latency():
    problem = bundled("tiny")
    drop = make_solution(problem, [(DROP, -1, NONE, NONE)] * problem.num_buffers, ret=0.0)
    timeline = simulate(problem, drop)
    assert timeline.total == pytest.approx(sum(problem.metadata["step_latency"]))
    assert timeline.total == pytest.approx(timeline.all_slow) and timeline.speedup == 0.0  # percent
    assert timeline.stalled == 0 and np.all(np.isnan(timeline.copy_start))


def test_a_prefetch_in_time_saves_its_benefit():
    # step 2 reads a buffer prefetched over steps 0-1 (2 us of time for a 1.5 us copy)
    problem = make_problem([{"t": 2, "demand": 1.5, "benefit": 0.5}], supply=[1, 1, 1],
                           metadata=SLOW)
    solution = make_solution(problem, [(COPY, 0, (0, 2), (0, 1))])
    assert validate(problem, solution).ok
    timeline = simulate(problem, solution)
    np.testing.assert_allclose(timeline.duration, [1, 1, 0.5])
    np.testing.assert_allclose(timeline.start, [0, 1, 2])
    assert timeline.stalled == 0 and timeline.total == pytest.approx(2.5)
    assert (timeline.copy_start[0], timeline.copy_end[0]) == (0, 1.5)
    assert timeline.speedup == pytest.approx(100 * (3 / 2.5 - 1))  # percent: 20% faster than all-slow


def test_a_pinned_output_is_never_written_back():
    # Output at step 0 read at step 2. Copied, its 1.8 us write-back starts when step 0 ends
    # (0.75) and outlasts the program (2.5) by 0.05 us; pinned (NoCopy of the output), nothing
    # is copied and nothing waits.
    buffers = [{"t": 0, "out": True, "tensor": 1, "live": (0, 2), "demand": 1.8, "benefit": 0.25},
               {"t": 2, "tensor": 1, "live": (0, 2), "demand": 1.8, "benefit": 0.25}]
    problem = make_problem(buffers, supply=[1, 1, 1], metadata=SLOW)
    copied = make_solution(problem, [(COPY, 0, (0, 2), (1, 2)), (NOCOPY, 0, NONE, NONE)])
    pinned = make_solution(problem, [(NOCOPY, 0, (0, 2), NONE), (NOCOPY, 0, NONE, NONE)])
    for solution in (copied, pinned):
        assert validate(problem, solution).ok
    slow_copy, pin = simulate(problem, copied), simulate(problem, pinned)
    assert slow_copy.drain == pytest.approx(0.05) and slow_copy.total == pytest.approx(2.55)
    assert pin.stalled == 0 and np.all(np.isnan(pin.copy_start))
    assert pin.total == pytest.approx(2.5)  # the 0.5 us saved, no copy


def test_a_late_prefetch_stalls_its_instruction():
    # the copy interval holds 2 us of supply as planned, but step 1 runs faster (its own buffer
    # is in fast memory) so a 1.8 us copy is not done when step 2 starts
    problem = make_problem([{"t": 1, "benefit": 0.6, "tensor": 1},
                            {"t": 2, "demand": 1.8, "benefit": 0.5, "tensor": 2}],
                           supply=[1, 1, 1], metadata=SLOW)
    solution = make_solution(problem, [(COPY, 0, (1, 1), NONE), (COPY, 1, (0, 2), (0, 1))])
    timeline = simulate(problem, solution)
    np.testing.assert_allclose(timeline.duration, [1, 0.4, 0.5])
    np.testing.assert_allclose(timeline.stall, [0, 0, 1.8 - 1.4])
    assert timeline.total == pytest.approx(1.8 + 0.5)
    # without stalls the total would be the all-slow latency less the return
    assert timeline.total == pytest.approx(timeline.all_slow - solution.ret + timeline.stalled)


def test_the_copy_engine_runs_one_copy_at_a_time():
    # two 1 us prefetches released together at step 0 share one engine: the second ends at 2
    problem = make_problem([{"t": 1, "demand": 1.0, "benefit": 0.0, "tensor": 1},
                            {"t": 2, "demand": 1.0, "benefit": 0.0, "tensor": 2}],
                           supply=[1, 1, 1], metadata=SLOW)
    solution = make_solution(problem, [(COPY, 0, (0, 1), (0, 0)), (COPY, 1, (0, 2), (0, 1))])
    timeline = simulate(problem, solution)
    np.testing.assert_allclose(timeline.copy_start, [0, 1])
    np.testing.assert_allclose(timeline.copy_end, [1, 2])
    assert timeline.stalled == 0 and timeline.total == pytest.approx(3)


def test_an_eviction_must_end_before_the_step_after_its_interval():
    # an output written at step 0 is copied out over step 1 (2.5 us: it ends at 3.5, step 2 waits)
    problem = make_problem([{"t": 0, "out": True, "demand": 2.5, "benefit": 0.0}],
                           supply=[1, 1, 1], metadata=SLOW)
    solution = make_solution(problem, [(COPY, 0, (0, 1), (1, 1))])
    timeline = simulate(problem, solution)
    assert timeline.copy_start[0] == 1 and timeline.copy_end[0] == 3.5
    np.testing.assert_allclose(timeline.stall, [0, 0, 1.5])
    assert timeline.total == pytest.approx(4.5)


def test_latency_tables_give_the_instruction_its_measured_time():
    # step 0's table: nothing fast 4 us, buffer 0 fast 3, buffer 1 fast 2.5, both 1 (not additive)
    tables = [(0, [0, 1], [4.0, 3.0, 2.5, 1.0])]
    problem = make_problem([{"t": 0, "tensor": 1}, {"t": 0, "tensor": 2},
                            {"t": 1, "benefit": 0.25, "tensor": 3}],
                           supply=[0.5, 1], tables=tables)
    np.testing.assert_allclose(step_latency(problem), [4.0, 1.25])  # table L({}); supply + benefit
    rows = {"both": [(COPY, 0, (0, 0), NONE), (COPY, 1, (0, 0), NONE), (DROP, -1, NONE, NONE)],
            "one": [(DROP, -1, NONE, NONE), (COPY, 1, (0, 0), NONE), (COPY, 0, (1, 1), NONE)]}
    both = simulate(problem, make_solution(problem, rows["both"], ret=3.0))
    np.testing.assert_allclose(both.duration, [1.0, 1.25])
    one = simulate(problem, make_solution(problem, rows["one"], ret=1.75))
    np.testing.assert_allclose(one.duration, [2.5, 1.0])


def test_nocopy_reuses_fast_memory_without_a_copy():
    problem = make_problem([{"t": 0, "tensor": 1, "demand": 5.0}, {"t": 2, "tensor": 1, "demand": 5.0}],
                           supply=[1, 1, 1], metadata=SLOW)
    solution = make_solution(problem, [(COPY, 0, (0, 0), NONE), (NOCOPY, 0, (1, 2), NONE)])
    timeline = simulate(problem, solution)
    assert np.all(np.isnan(timeline.copy_start))  # the first has no copy interval: no copy
    assert timeline.total == pytest.approx(3 - 2)


def test_on_real_solutions_the_return_is_the_time_saved_before_stalls():
    problem = bundled("tiny")
    for name in ("greedy", "heuristic"):
        solution = solve(problem, name, budget_s=5, rules=Rules()).solution
        timeline = simulate(problem, solution)
        assert timeline.stalled >= 0
        assert timeline.total == pytest.approx(timeline.duration.sum() + timeline.stalled)
        # the steps save what the return says, unless a step would take less than nothing
        saved = timeline.all_slow - timeline.duration.sum()
        assert saved <= solution.ret + 1e-9 and saved == pytest.approx(solution.ret, rel=1e-2)
        ends = timeline.start + timeline.duration
        assert np.all(timeline.start[1:] >= ends[:-1] - 1e-9)  # one instruction at a time


def test_correlation_of_return_and_speedup():
    problem = make_problem([{"t": 1, "benefit": b, "tensor": i} for i, b in enumerate([0.1, 0.2, 0.3])],
                           supply=[1, 1], metadata={"step_latency": [1.0, 1.0]})
    solutions = []
    for keep in ([0], [1], [0, 1], [0, 1, 2]):
        rows = [(COPY, i, (1, 1), NONE) if i in keep else (DROP, -1, NONE, NONE) for i in range(3)]
        solutions.append(make_solution(problem, rows))
    out = correlation(problem, allow_invalid=True, solutions=solutions)
    assert out["n"] == 4 and out["pearson"] > 0.99 and out["spearman"] == pytest.approx(1.0)
    assert math.isnan(correlation(problem, allow_invalid=True, solutions=solutions[:2])["pearson"])  # too few to say


def test_a_short_copy_runs_inside_a_long_one():
    # The game lets the intervals [0, 2] (a 2.4 us prefetch for step 3) and [1, 1] (a 0.5 us
    # eviction of step 0's output) share step 1's supply. The engine runs the eviction, whose
    # step comes first, inside the prefetch, and nothing stalls (one after the other, step 2
    # would wait 0.9 us).
    problem = make_problem([{"t": 0, "out": True, "demand": 0.5, "benefit": 0.0, "tensor": 1},
                            {"t": 3, "demand": 2.4, "benefit": 0.0, "tensor": 2}],
                           supply=[1, 1, 1, 1], metadata={"step_latency": [1.0] * 4})
    solution = make_solution(problem, [(COPY, 0, (0, 1), (1, 1)), (COPY, 20, (0, 3), (0, 2))])
    assert validate(problem, solution).ok
    timeline = simulate(problem, solution)
    assert timeline.stalled == 0 and timeline.total == pytest.approx(4.0)
    np.testing.assert_allclose(timeline.copy_start, [1.0, 0.0])
    np.testing.assert_allclose(timeline.copy_end, [1.5, 2.9])


def test_copies_planned_within_the_supply_never_stall_when_steps_take_their_supply():
    # with every step as long as its supply (nothing saved), the copies the game planned fit
    problem = bundled("tiny")
    flat = dataclasses.replace(problem, benefit=np.zeros_like(problem.benefit),
                               metadata={**problem.metadata, "step_latency": list(problem.supply)})
    for name in ("greedy", "heuristic"):
        solution = solve(problem, name, budget_s=5, rules=Rules()).solution
        assert simulate(flat, solution).stalled == pytest.approx(0.0, abs=1e-9)


def test_a_remainder_too_small_to_move_the_clock_still_ends_the_copy():
    # suite:resnet50_infer@dram_pmem-25 under its heuristic solution: at t = 33388.12 a copy had
    # 1.92e-12 left, which adds nothing to the clock in float64; the engine looped forever.
    engine = _Engine(np.array([1.0]))
    engine.release(33388.12, 1, 0)
    engine.left[0] = 1.92e-12
    with _deadline(5):
        assert engine.finish(1) == 33388.12
    assert engine.ended[0] == 33388.12 and not engine._waiting(1)


def test_the_heuristic_solution_that_hung_the_simulator():
    problem = suite.load("resnet50_infer@dram_pmem-25")
    solution = solve(problem, "heuristic", budget_s=10, seed=0).solution
    with _deadline(30):
        timeline = latency(problem, solution)
    # its supply is the all-fast time (imported): no stall, and the return is the time saved
    assert timeline.stalled == pytest.approx(0.0, abs=1e-6)
    assert timeline.total == pytest.approx(timeline.all_slow - solution.ret, rel=1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("name", suite.names())
def test_the_simulator_finishes_on_the_heuristic_solution_of_every_suite_instance(name):
    problem = suite.load(name)
    solution = solve(problem, "heuristic", budget_s=20, seed=0).solution
    with _deadline(60):
        timeline = latency(problem, solution)
    assert timeline.total == pytest.approx(timeline.all_slow - solution.ret + timeline.stalled, rel=1e-6)


@contextlib.contextmanager
def _deadline(seconds: int):
    """Raises TimeoutError in the test instead of hanging it (the simulator's failure mode)."""
    def alarm(*_):
        raise TimeoutError(f"still running after {seconds} s")
    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("options", [  # (-m slow: the static and sparse cases; the tables' case covers their path)
    pytest.param({}, marks=pytest.mark.slow), {"latency_tables": True},
    pytest.param({"zero_supply_prob": 0.2, "zero_demand_prob": 0.2, "memory_fraction": 0.3}, marks=pytest.mark.slow),
], ids=["static", "tables", "sparse"])
def test_a_game_valid_solution_of_a_generated_problem_never_stalls(options):
    # Generated problems take a step's supply as its duration with its own buffers fast, a lower
    # bound of its duration under any solution: no copy the game accepts is late, and the
    # simulated latency is exactly the all-slow latency less the return.
    problem = generate(11, num_instructions=40, **options)
    rules = Rules(columns=64)
    instance = make_instance(problem, rules)
    states = rollouts(instance, jax.random.split(jax.random.key(0), 24), random_policy, backup=True)
    solutions = [to_solution(problem, nth_game(states, i), rules) for i in range(24)
                 if bool(states.done[i]) and not bool(states.lost[i])]
    solutions.append(solve(problem, "heuristic", budget_s=5, rules=rules).solution)
    assert len(solutions) >= 10
    for solution in solutions:
        timeline = latency(problem, solution)
        assert timeline.stalled == 0.0
        assert timeline.total == pytest.approx(timeline.all_slow - solution.ret, rel=1e-9, abs=1e-9)
    returns = [s.ret for s in solutions]
    speeds = [latency(problem, s).speedup for s in solutions]
    assert correlation_of(returns, speeds)["spearman"] == pytest.approx(1.0)


def test_benefits_never_promise_more_than_the_roofline_saves():
    problem = generate(3, num_instructions=200)
    slow = step_latency(problem)
    compute = np.asarray(slow) - np.bincount(problem.target_time, weights=problem.benefit,
                                             minlength=problem.num_steps)
    # a step never gets faster than its compute; a compute-bound step's buffers save nothing
    assert np.all(compute > 0) and np.all(problem.supply == pytest.approx(compute))
    assert 0 < np.mean(problem.benefit == 0) < 0.5


def test_the_older_supply_convention_is_named_and_stalls():
    problem = generate(4242, num_instructions=120, supply="all_slow")
    assert problem.metadata["supply"] == "all_slow"
    assert np.all(problem.supply == pytest.approx(step_latency(problem)))
    solution = solve(problem, "heuristic", budget_s=5).solution
    assert latency(problem, solution).stalled > 0
