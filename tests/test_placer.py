"""The placer (`solvers.placer.place`): a solution's decisions placed again and grown; valid, never
worse than its input, deterministic, a no-op on an optimum."""

from __future__ import annotations

import dataclasses
import time
import types

import numpy as np
import pytest

from jaxmmap import Rules, bundled, generate, validate
from jaxmmap.core.problem import DROP
from jaxmmap.core.rules import auto_columns
from jaxmmap.core.validator import SolutionRejected
from jaxmmap.solvers import Result, solve
from jaxmmap.solvers.heuristic import plan
from jaxmmap.solvers.placer import place


def _problems():
    return [bundled("tiny"),
            generate(1, num_instructions=60, inplace_prob=0.4, loop_prob=0.2),  # alias groups, loops
            generate(2, num_instructions=40, latency_tables=True, zero_demand_prob=0.2),
            generate(3, num_instructions=50, oversize_prob=0.1, zero_supply_prob=0.2)]


@pytest.mark.parametrize("solver,k", [("greedy", 0), ("greedy", 1), *(pytest.param("greedy", k, marks=pytest.mark.slow)
                                      for k in (2, 3)), *(("heuristic", k) for k in range(4))])
def test_the_placed_solution_is_valid_and_never_worse(solver, k):
    problem = _problems()[k]
    rules = Rules(columns=auto_columns(problem))
    raw = solve(problem, solver, budget_s=0.5, seed=k, rules=rules, place=False).solution
    placed = place(problem, raw, budget_s=60, moves=10)
    assert validate(problem, placed).ok
    assert placed.ret >= raw.ret
    again = place(problem, raw, budget_s=60, moves=10)
    np.testing.assert_array_equal(placed.action, again.action)  # deterministic
    np.testing.assert_array_equal(placed.offset, again.offset)


def test_growth_adds_to_game_solutions():
    problem = generate(2, num_instructions=300)
    rules = Rules(columns=auto_columns(problem))
    raw = solve(problem, "greedy", budget_s=60, rules=rules, place=False).solution  # its whole game
    grown = place(problem, raw, budget_s=60, moves=0)
    assert grown.ret > raw.ret
    assert grown.solver == "greedy+placed" and grown.metadata["placed_from"] == raw.ret
    # without moves: the better of the decisions placed first, which keeps the decisions the game
    # made (where it could), and the decisions placed in the heuristic's order among its own items
    first = plan(problem, rules, decisions=raw.action).solution
    kept = (raw.action != DROP) & (first.action != DROP)
    assert kept.sum() >= 0.9 * (raw.action != DROP).sum()
    mixed = plan(problem, rules, decisions=raw.action, interleave=True).solution
    assert grown.ret >= max(first.ret, mixed.ret) - 1e-9
    placed = place(problem, raw, budget_s=60, moves=20)
    assert placed.ret > grown.ret  # the local moves pay here (20 tried)
    assert placed.metadata["moves"][0] >= 1 and placed.metadata["moves"][1] == 20


def test_decisions_placed_in_the_heuristics_order_do_not_crowd_out_its_own_items():
    # a few of the heuristic's own decisions, all placed before its other items, take the room
    # those needed (0.92 of the placement of no decisions); placed where its order reaches them
    # they cost almost nothing (the placer keeps the better placement: the test above)
    problem = generate(2001, num_instructions=300)
    rules = Rules(placement="deferred", copy_supply="early")
    nothing = plan(problem, rules).solution
    some = np.where(np.random.default_rng(0).random(problem.num_buffers) < 0.05, nothing.action, DROP)
    first = plan(problem, rules, decisions=some).solution
    mixed = plan(problem, rules, decisions=some, interleave=True).solution
    assert first.ret < 0.95 * nothing.ret and mixed.ret > 0.98 * nothing.ret
    assert validate(problem, mixed).ok
    # with no decisions, or all of the plan's, the one pass is the plan itself
    for decisions in (np.full(problem.num_buffers, DROP), nothing.action):
        np.testing.assert_array_equal(plan(problem, rules, decisions=decisions, interleave=True).solution.action,
                                      nothing.action)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_placer_is_a_no_op_on_a_proven_optimum(seed):
    problem = generate(seed, num_instructions=4 + seed, memory_fraction=0.4, copy_bandwidth=1e6)
    result = solve(problem, "cpsat", budget_s=30, rules=Rules(columns=32))
    assert result.info["proven_optimal"]
    placed = place(problem, result.solution, budget_s=10)
    assert placed is result.solution  # nothing better exists


def test_an_invalid_input_is_refused():
    problem = bundled("tiny")
    raw = solve(problem, "greedy", budget_s=1, rules=Rules()).solution
    import dataclasses
    with pytest.raises(SolutionRejected):
        place(problem, dataclasses.replace(raw, ret=raw.ret + 1))


def _zero_size(problem):
    """`problem` with a third of its unaliased tensors made zero-size (no bytes, no demand)."""
    import dataclasses

    tensors = np.unique(problem.tensor_id[problem.alias_id < 0])[::3]
    zero = np.isin(problem.tensor_id, tensors) & (problem.alias_id < 0)
    return dataclasses.replace(problem, size=np.where(zero, 0, problem.size),
                               demand=np.where(zero, 0.0, problem.demand))


def test_zero_size_buffers_and_nocopy_chains_are_placed():
    problem = _zero_size(generate(4, num_instructions=60, inplace_prob=0.3))
    rules = Rules(columns=auto_columns(problem))
    raw = solve(problem, "random", budget_s=1, rules=rules, place=False).solution
    placed = place(problem, raw, rules=rules, budget_s=60, moves=10)
    assert validate(problem, placed).ok and placed.ret >= raw.ret
    zero = problem.size == 0
    assert (placed.action[zero] != DROP).any()  # placed, at no cost
    keeps = (placed.action == 1) & ~problem.is_output  # NoCopy uses served from an earlier one
    assert keeps.any()


@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow)])
def test_fixed_decisions_cpsat_bounds_the_placement_of_those_decisions(seed):
    """CP-SAT with the decisions kept: every decided use stays placed by the same action, and
    its proven optimum is at least what the placer's placement and growth (no moves) reach."""
    problem = generate(seed, num_instructions=10, memory_fraction=0.3, inplace_prob=0.3)
    rules = Rules(columns=64)
    raw = solve(problem, "random", budget_s=0.5, seed=seed, rules=rules, place=False).solution
    exact = solve(problem, "cpsat", budget_s=60, rules=rules, decisions=raw)
    assert exact.info["proven_optimal"]
    kept = exact.solution
    decided = raw.action != DROP
    np.testing.assert_array_equal(kept.action[decided], raw.action[decided])
    assert kept.ret >= raw.ret
    grown = place(problem, raw, rules=rules, budget_s=60, moves=0)
    if (grown.action[decided] == raw.action[decided]).all():  # it kept every decision
        assert grown.ret <= kept.ret + 1e-9
    free = solve(problem, "cpsat", budget_s=60, rules=rules)
    assert kept.ret <= free.info["bound"] + 1e-9


def test_fixed_decisions_from_the_command_line_are_one_clear_error():
    from jaxmmap.core.files import UserError

    with pytest.raises(UserError, match="decisions must be a Solution"):
        solve(bundled("tiny"), "cpsat", budget_s=1, decisions=[1, 2])
    with pytest.raises(UserError, match="hint must be"):
        solve(bundled("tiny"), "cpsat", budget_s=1, hint="nothing")


def test_the_placer_keeps_time_to_check_its_result_within_the_budget(monkeypatch):
    """The placed solution is validated after the local moves' deadline, as the input was first:
    the deadline leaves twice that long and a slack (on a fake clock: each check takes 2 s of a
    10 s budget)."""
    from jaxmmap.solvers import placer

    problem = _problems()[1]
    raw = solve(problem, "greedy", budget_s=0.5, seed=0, rules=Rules(columns=auto_columns(problem)),
                place=False).solution
    now, deadlines = [time.perf_counter()], []
    start = now[0]
    real_check = placer.check_solution

    def slow_check(*args, **kwargs):
        now[0] += 2.0
        return real_check(*args, **kwargs)

    def improve(problem, rules, origin, *, deadline, **kwargs):
        deadlines.append(deadline)
        return origin, [0, 0]

    monkeypatch.setattr(placer, "time", types.SimpleNamespace(perf_counter=lambda: now[0]))
    monkeypatch.setattr(placer, "check_solution", slow_check)
    monkeypatch.setattr(placer, "improve", improve)
    place(problem, raw, budget_s=10)
    # (the plain moves, then the noisy ones)
    assert deadlines and set(deadlines) == {start + 10 - 2 * 2.0 - placer.CHECK_SLACK_S}
    # an input that checks fast (little in fast memory) still leaves time a buffer for the result
    monkeypatch.setattr(placer, "CHECK_S_PER_BUFFER", 4.5 / problem.num_buffers)
    deadlines.clear()
    now[0] = start
    place(problem, raw, budget_s=10)
    assert deadlines and all(d == pytest.approx(start + 10 - 4.5 - placer.CHECK_SLACK_S) for d in deadlines)


def _greedy_start():
    """(problem, rules, greedy's solution, `improve`'s `prepared`) for the tests of `improve`."""
    from jaxmmap.core.rules import discretize
    from jaxmmap.solvers.heuristic import benefit_estimate

    problem = _problems()[1]
    rules = Rules(columns=auto_columns(problem))
    start = solve(problem, "greedy", budget_s=0.5, seed=0, rules=rules, place=False).solution
    d = discretize(problem, rules)
    return problem, rules, start, (d, benefit_estimate(problem, d))


def test_local_moves_go_on_while_they_pay_and_stop_after_patience_fruitless_ones(monkeypatch):
    """`improve` with no move limit stops `patience` moves after the last one that paid (plans
    stubbed: the first 70 moves each raise the return, the rest do not)."""
    from jaxmmap.solvers.heuristic import _moves

    problem, rules, start, prepared = _greedy_start()
    calls = [0]

    def plan(problem, rules, **kwargs):
        calls[0] += 1
        ret = start.ret + min(calls[0], 70)
        return types.SimpleNamespace(solution=dataclasses.replace(start, ret=ret))

    monkeypatch.setattr(_moves, "plan", plan)
    best, (kept, tried) = _moves.improve(problem, rules, start, prepared=prepared,
                                         deadline=time.perf_counter() + 600, moves=None, patience=5)
    assert (kept, best.ret) == (70, start.ret + 70)
    assert tried == calls[0] == 75  # (every move here ruins something, so every move plans)
    calls[0] = 0
    _, (kept, tried) = _moves.improve(problem, rules, start, prepared=prepared,
                                      deadline=time.perf_counter() + 600, moves=64, patience=5)
    assert (kept, tried) == (64, 64)  # a limit still holds


def test_a_local_move_starts_only_while_the_longest_one_still_fits(monkeypatch):
    """On a fake clock where each plan takes 1 s, moves with 2.5 s left: two start, the third
    would end past the deadline (and be thrown away), so it does not start."""
    from jaxmmap.solvers.heuristic import _moves

    problem, rules, start, prepared = _greedy_start()
    now = [0.0]

    def plan(problem, rules, **kwargs):
        now[0] += 1.0
        return types.SimpleNamespace(solution=start)

    monkeypatch.setattr(_moves, "plan", plan)
    monkeypatch.setattr(_moves, "time", types.SimpleNamespace(perf_counter=lambda: now[0]))
    _, (kept, tried) = _moves.improve(problem, rules, start, prepared=prepared, deadline=2.5, moves=None)
    assert (kept, tried) == (0, 2) and now[0] == 2.0  # (ended before the deadline)


def test_noisy_moves_start_where_the_plain_ones_stop_and_only_add(monkeypatch):
    """The placer's moves in the heuristic's order come first; the noisy ones (`noise` > 0)
    start from their result, order the recreate by a perturbed estimate, are deterministic for
    a seed, and stop after `NOISY_TIMES * patience` in a row that did not pay."""
    from jaxmmap.solvers import placer
    from jaxmmap.solvers.heuristic import _moves

    problem = generate(2, num_instructions=300)
    rules = Rules(columns=auto_columns(problem))
    raw = solve(problem, "greedy", budget_s=60, rules=rules, place=False).solution
    plain = place(problem, raw, budget_s=60, patience=8, noise=0.0)
    noisy = place(problem, raw, budget_s=60, patience=8, noise=0.3)
    again = place(problem, raw, budget_s=60, patience=8, noise=0.3)
    assert validate(problem, noisy).ok and noisy.ret >= plain.ret
    np.testing.assert_array_equal(noisy.offset, again.offset)  # deterministic
    assert noisy.metadata["moves"][1] >= plain.metadata["moves"][1] + placer.NOISY_TIMES * 8

    orders = []
    real_plan = _moves.plan

    def plan(problem, rules, *, prepared, **kwargs):
        orders.append(prepared[1])
        return real_plan(problem, rules, prepared=prepared, **kwargs)

    monkeypatch.setattr(_moves, "plan", plan)
    place(problem, raw, budget_s=60, patience=2, noise=0.3)
    plain = [k for k, o in enumerate(orders) if o is orders[0]]
    assert plain == list(range(len(plain))) and len(plain) < len(orders)  # plain first, then noisy
    assert not any(np.array_equal(o, orders[0]) for o in orders[len(plain):])


def test_restarts_descend_again_from_the_start_with_other_seeds_and_keep_the_best(monkeypatch):
    """`restarts=k`: once a descent's moves stop paying, k more descents from the same start,
    each seeded anew; the best is kept (never below the single descent), deterministically."""
    from jaxmmap.solvers import placer

    problem = generate(2, num_instructions=300)
    rules = Rules(columns=auto_columns(problem))
    raw = solve(problem, "greedy", budget_s=60, rules=rules, place=False).solution
    once = place(problem, raw, budget_s=60, patience=4)
    descents = []
    real = placer._local_moves

    def local_moves(problem, rules, origin, *, seed, **kwargs):
        descents.append((origin, seed))
        return real(problem, rules, origin, seed=seed, **kwargs)

    monkeypatch.setattr(placer, "_local_moves", local_moves)
    thrice = place(problem, raw, budget_s=60, patience=4, restarts=2)
    again = place(problem, raw, budget_s=60, patience=4, restarts=2)
    assert validate(problem, thrice).ok and thrice.ret >= once.ret
    np.testing.assert_array_equal(thrice.offset, again.offset)  # deterministic
    assert thrice.metadata["moves"][1] > once.metadata["moves"][1]
    first = descents[:3]
    assert [seed for _, seed in first] == [0, 2, 4] and all(o is first[0][0] for o, _ in first)
    descents.clear()
    place(problem, raw, budget_s=60, patience=None, moves=20, restarts=None)  # no patience: one descent
    assert len(descents) == 1


def test_without_replan_the_moves_start_from_the_solution_itself(monkeypatch):
    """`replan=False` (prod's last moves, from a solution already placed) places nothing again;
    `solve` goes on so from a solver's solution that the placer made (`muzero`'s placed rounds:
    "<solver>+placed"), and places a game anew."""
    from jaxmmap.solvers import SOLVERS, placer

    problem = _problems()[1]
    rules = Rules(columns=auto_columns(problem))
    raw = solve(problem, "greedy", budget_s=0.5, seed=0, rules=rules, place=False).solution
    placed = place(problem, raw, rules=rules, budget_s=60, moves=0)
    replans, budgets, real = [], [], placer.place

    def spy(*args, replan=True, budget_s, **kwargs):
        replans.append(replan)
        budgets.append(budget_s)
        return real(*args, replan=replan, budget_s=budget_s, **kwargs)

    monkeypatch.setattr("jaxmmap.solvers._solve.place_solution", spy)
    for given in (placed, raw):
        answer = Result(solution=given, trace=(), seconds=0.0, info={})
        monkeypatch.setitem(SOLVERS, "greedy", lambda *a, answer=answer, **k: answer)
        assert solve(problem, "greedy", budget_s=0.5, rules=rules, place=True).solution.ret >= given.ret
    assert replans == [False, True] and 0.1 < budgets[1] <= 0.5
    monkeypatch.setattr(placer, "_placement", lambda *a, **k: pytest.fail("placed again"))
    improved = place(problem, placed, rules=rules, budget_s=60, moves=8, replan=False)
    assert validate(problem, improved).ok and improved.ret >= placed.ret


def test_fresh_goes_on_from_no_decisions_where_they_place_higher():
    """`fresh`: the placement of no decisions (grown by the heuristic's rules) is a second start,
    taken where it returns more than the input's decisions placed: a random game's decisions
    place below none at all here, those of the result do not."""
    from jaxmmap.env.rollout import play

    problem = generate(3, num_instructions=100)
    rules = Rules(columns=auto_columns(problem))
    raw, _ = play(problem, "random", seed=0, rules=rules)
    plain = place(problem, raw, budget_s=60, moves=0)
    fresh = place(problem, raw, budget_s=60, moves=0, fresh=True)
    assert plain.metadata["start"] == "decisions" and fresh.metadata["start"] == "nothing"
    assert fresh.ret > plain.ret and validate(problem, fresh).ok
    moved = place(problem, raw, budget_s=60, moves=4, fresh=True)
    assert moved.metadata["start"] == "nothing" and moved.ret >= fresh.ret
    again = place(problem, dataclasses.replace(moved, metadata={}), budget_s=60, moves=0, fresh=True)
    assert again.metadata.get("start", "decisions") == "decisions"  # (none place higher than these)


def test_each_start_descends_from_every_start_and_keeps_the_best(monkeypatch):
    """`each_start`: the moves descend from the decisions' placement and from the placement of no
    decisions alike (best first), not from the higher only; the best descent is kept, never
    below the descent from the higher start alone, and named by its start."""
    from jaxmmap.env.rollout import play
    from jaxmmap.solvers import placer

    problem = generate(3, num_instructions=100)
    rules = Rules(columns=auto_columns(problem))
    raw, _ = play(problem, "random", seed=0, rules=rules)
    single = place(problem, raw, budget_s=60, patience=4, fresh=True)
    origins, real = [], placer._descents

    def descents(problem, rules, origin, **kwargs):
        origins.append(origin.ret)
        return real(problem, rules, origin, **kwargs)

    monkeypatch.setattr(placer, "_descents", descents)
    each = place(problem, raw, budget_s=60, patience=4, fresh=True, each_start=True)
    assert len(origins) == 2 and origins[0] > origins[1]  # (nothing's placement first: it is higher)
    assert validate(problem, each).ok and each.ret >= single.ret
    assert each.metadata["start"] in ("nothing", "decisions") and single.metadata["start"] == "nothing"
    assert each.metadata["moves"][1] > single.metadata["moves"][1]


def test_exact_places_the_decisions_the_heuristic_loses_and_descends_from_them_last(monkeypatch):
    """`exact` (on in `solve`): on a small program CP-SAT's placement and growth of the decisions,
    with them fixed, is one more start. Greedy's decisions here: the heuristic's placement returns
    less than CP-SAT's proven optimum of them, which the exact start reaches, every decision kept;
    with moves, the usual start descends first and the exact one last. Above `EXACT_BUFFERS`,
    no such start."""
    from jaxmmap.env.rollout import play
    from jaxmmap.solvers import SOLVERS, placer
    from jaxmmap.solvers.cpsat import cpsat

    problem = generate(5, num_instructions=40)  # (115 buffers)
    rules = Rules(columns=auto_columns(problem))
    raw, _ = play(problem, "greedy", seed=0, rules=rules)
    optimum = cpsat(problem, 60, 0, rules=rules, workers=1, decisions=raw)
    assert optimum.info["proven_optimal"]
    plain = place(problem, raw, budget_s=60, moves=0)
    exact = place(problem, raw, budget_s=60, moves=0, exact=True)
    assert plain.metadata["start"] == "decisions" and exact.metadata["start"] == "exact"
    assert exact.ret == pytest.approx(optimum.solution.ret) and exact.ret > plain.ret
    decided = raw.action != DROP
    assert validate(problem, exact).ok and (exact.action[decided] == raw.action[decided]).all()
    origins, real, calls = [], placer._descents, []

    def descents(problem, rules, origin, **kwargs):
        origins.append(origin.ret)
        return real(problem, rules, origin, **kwargs)

    monkeypatch.setattr(placer, "_descents", descents)
    moved = place(problem, raw, budget_s=60, patience=4, exact=True)
    assert origins == [pytest.approx(plain.ret), pytest.approx(exact.ret)]  # (the usual start first)
    assert moved.ret >= exact.ret and validate(problem, moved).ok
    monkeypatch.setattr(placer, "EXACT_BUFFERS", problem.num_buffers - 1)
    assert place(problem, raw, budget_s=60, moves=0, exact=True).metadata["start"] == "decisions"
    monkeypatch.setattr("jaxmmap.solvers._solve.place_solution", lambda p, s, **kw: calls.append(kw) or s)
    monkeypatch.setitem(SOLVERS, "greedy", lambda *a, **k: Result(solution=raw, trace=(), seconds=0.0, info={}))
    solve(problem, "greedy", budget_s=1, rules=rules)
    assert calls[0]["exact"] is True


def test_the_placement_of_nothing_is_the_floor_where_the_solver_leaves_no_time(monkeypatch):
    """`solve` places no decisions before the solver runs: a solver that overruns its share
    (the placer then gets no time) still yields that placement, and its games run without the
    grace for a first solution (`core.clock.without_grace`)."""
    import jaxmmap.solvers as solvers
    from jaxmmap.core.clock import Clock
    from jaxmmap.env.rollout import play
    from jaxmmap.solvers.placer import place_nothing

    problem = generate(3, num_instructions=100)
    rules = Rules(columns=auto_columns(problem))
    raw, _ = play(problem, "random", seed=0, rules=rules)
    seen = {}

    def late(problem, budget_s, seed, *, rules):
        seen["grace"], seen["budget"] = Clock(budget_s).grace, budget_s
        time.sleep(1.0)  # past the whole budget
        return Result(solution=raw, trace=((1.0, float(raw.ret)),), seconds=1.0, info={})

    monkeypatch.setitem(solvers.SOLVERS, "random", late)
    floor = place_nothing(problem, rules=rules)
    result = solve(problem, "random", budget_s=0.5, rules=rules)
    assert seen["grace"] is False and seen["budget"] < 0.5 * (1 - solvers.PLACE_SHARE) + 1e-9
    assert result.info["placed_start"] == "nothing" and result.solution.ret >= floor.ret > raw.ret
    assert validate(problem, result.solution).ok and Clock(1.0).grace is True
    # the trace holds that placement from when it was made, within the budget (a comparison counts
    # it there), and no later solution below it
    (t0, r0), returns = result.trace[0], [r for _, r in result.trace]
    assert t0 < 0.5 and r0 > raw.ret and returns == sorted(set(returns))


def test_the_speed_benchmark_moves_as_another_commit_does(capsys):
    """`benchmarks/placer_speed.py --against HEAD`: the same moved solution as the committed package
    (a change that only makes the placer faster leaves it so), and the speed-up printed."""
    import importlib.util
    import os
    import subprocess

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True).returncode:
        pytest.skip("not a git checkout")
    spec = importlib.util.spec_from_file_location("placer_speed", os.path.join(root, "benchmarks", "placer_speed.py"))
    speed = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(speed)
    row = speed.measure(150, "pinning", 4)
    assert row["moved"] >= row["placed"] >= row["input"] and len(row["digest"]) == 16
    speed.main(["--sizes", "150", "--moves", "4", "--against", "HEAD"])
    out = capsys.readouterr().out
    assert "| yes |" in out and "as fast as at HEAD" in out


def test_a_solution_the_solver_placed_itself_says_where_its_placement_started(monkeypatch):
    """A solver that places its game itself (`muzero`: "<solver>+placed") and whose solution no
    placement beats reports the start of its own placement, not "game"."""
    import jaxmmap.solvers as solvers
    from jaxmmap.core.validator import relabelled
    from jaxmmap.solvers import _solve
    from jaxmmap.solvers.placer import place_nothing

    problem = generate(3, num_instructions=100)
    rules = Rules(columns=auto_columns(problem))
    floor = place_nothing(problem, rules=rules)
    own = relabelled(floor, solver="random+placed", metadata={**floor.metadata, "start": "nothing"})

    def placed_itself(problem, budget_s, seed, *, rules):
        return Result(solution=own, trace=((0.1, float(own.ret)),), seconds=0.1, info={})

    monkeypatch.setitem(solvers.SOLVERS, "random", placed_itself)
    monkeypatch.setattr(_solve, "place_solution", lambda problem, solution, **kw: solution)  # (nothing beats it)
    result = solve(problem, "random", budget_s=1.0, rules=rules)
    assert result.solution.ret == own.ret and result.info["placed_start"] == "nothing"
