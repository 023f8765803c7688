"""Solvers behind one interface: valid solutions, exact optimum on tiny problems, anytime traces."""

import dataclasses

import numpy as np
import pytest
from builders import EGRL_OPTIONS, ES_OPTIONS, RULES, agent_options, make_problem, tiny

from jaxmmap import Rules, bundled, generate, validate
from jaxmmap.agent import generalist
from jaxmmap.core.problem import COPY, DROP, NOCOPY, ProblemError
from jaxmmap.core.rules import auto_columns
from jaxmmap.core.validator import SolutionRejected
from jaxmmap.solvers import GAMES, SOLVERS, agents, rules_for, solve
from jaxmmap.solvers.base import Result
from jaxmmap.solvers.cpsat import upper_bound
from jaxmmap.solvers.exhaustive import exhaustive


def pin_friendly(seed):
    """Slower copies and more memory than `tiny`: the optimum pins outputs (NoCopy of an output)
    on seeds 0-3, 5 and 6, and is higher than without pins."""
    return generate(seed, num_instructions=4 + seed % 3, inplace_prob=0.3, memory_fraction=0.7,
                    copy_bandwidth=2e5, latency_tables=seed % 2 == 1)


@pytest.mark.parametrize("family,seed,output_nocopy", [("tiny", s, True) for s in range(10)]
                         + [("pinning", s, True) for s in (0, 2, 3, 5, 6)] + [("pinning", 2, False)])
def test_branch_and_bound_equals_brute_force(family, seed, output_nocopy):
    problem = tiny(seed, tables=seed % 2 == 1) if family == "tiny" else pin_friendly(seed)
    rules = Rules(columns=32, output_nocopy=output_nocopy)
    bounded = exhaustive(problem, 60, 0, rules=rules)
    brute = exhaustive(problem, 60, 0, rules=rules, bound=False)
    assert bounded.info["proven_optimal"] and brute.info["proven_optimal"]
    assert bounded.solution.ret == pytest.approx(brute.solution.ret, abs=1e-9)
    assert bounded.info["nodes"] <= brute.info["nodes"]
    assert validate(problem, bounded.solution).ok
    pinned = (bounded.solution.action == 1) & problem.is_output
    if family == "pinning":  # the new action is searched, and pays; the older rules never pin
        assert pinned.any() == output_nocopy
        older = exhaustive(problem, 60, 0, rules=dataclasses.replace(rules, output_nocopy=False))
        assert (bounded.solution.ret > older.solution.ret + 1e-9) == output_nocopy


# Solvers that play the game: the game's optimum (exhaustive) bounds them. The others place
# buffers themselves (any valid offsets and copy intervals) and may pass it; CP-SAT's proven
# bound and the relaxation bound hold for them all.
GAME_SOLVERS = {"random", "greedy", "es", "egrl", "mcts", "exhaustive"}
OPTIONS = {"random": dict(batch=32), "es": dict(ES_OPTIONS, max_generations=3),
           "egrl": dict(EGRL_OPTIONS, max_generations=3),
           "mcts": dict(games=4, num_simulations=8, max_batches=1),
           "muzero": agent_options(max_iterations=40), "muzero-prod": agent_options(max_iterations=40)}


# Instances where something can be placed; seeds 1, 2 and 4 with -m slow. Seed 0, by default, leaves
# out the searches of learned solvers (their compiles, half the test's time): `mcts` has its own test
# against the game's optimum (tests/test_search.py), `muzero` and `muzero-prod` theirs through
# `solve` (tests/test_learned_solvers.py, `-k prod` here).
SEARCHES = {"mcts", "muzero", "muzero-prod"}


@pytest.mark.parametrize("seed", [0] + [pytest.param(s, marks=pytest.mark.slow) for s in (1, 2, 4)])
def test_every_solver_is_valid_and_within_the_bounds(seed):
    problem = tiny(seed)
    optimum = solve(problem, "exhaustive", budget_s=60, rules=RULES).solution.ret
    exact = solve(problem, "cpsat", budget_s=60, rules=RULES)
    assert exact.info["proven_optimal"]
    assert exact.solution.ret >= optimum - 1e-9  # the physical optimum contains the game's
    relaxation = upper_bound(problem)
    assert exact.info["bound"] <= relaxation + 1e-9
    assert optimum > 0
    for name in (n for n in SOLVERS if seed != 0 or n not in SEARCHES):
        result = solve(problem, name, budget_s=0.3 if name == "random" else 60, seed=seed,
                       rules=RULES, **OPTIONS.get(name, {}))  # solve() validates
        ret = result.solution.ret
        assert ret <= relaxation + 1e-6 and ret <= exact.info["bound"] + 1e-6, name
        if name in GAME_SOLVERS:  # the game's own return (before `solve` placed it)
            assert result.info.get("raw_return", ret) <= optimum + 1e-5, name
            assert ret >= result.info.get("raw_return", ret), name  # the placer never loses
        times = [t for t, _ in result.trace]
        returns = [r for _, r in result.trace]
        assert times == sorted(times) and returns == sorted(returns)  # anytime: only improvements
        assert returns[-1] == pytest.approx(ret)


@pytest.mark.slow  # every solver on a generated instance runs by default (test_every_solver_is_valid...)
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
        # cpsat no longer proves the optimum of tiny with pins: it would use its whole budget
        budget = {"random": 1e-6, "cpsat": 5}.get(name, 20)  # random: one batch
        result = solve(problem, name, budget_s=budget, rules=rules, **options)
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
    with pytest.raises(SolutionRejected, match="cheat solver's solution .a bug in that solver. is not a valid"):
        solve(problem, "cheat", budget_s=1, rules=RULES)
    with pytest.raises(ValueError, match="unknown solver"):
        solve(problem, "oracle")


def test_each_game_solver_plays_its_own_game_unless_told():
    problem = bundled("tiny")
    paper = Rules(columns=auto_columns(problem))
    deferred = dataclasses.replace(paper, placement="deferred", copy_supply="early")
    assert {name for name in SOLVERS if rules_for(problem, name) == deferred} == set(GAMES)
    assert set(GAMES) == {"greedy", "es", "egrl", "muzero", "muzero-prod"}
    assert rules_for(problem, "heuristic") == rules_for(problem) == paper
    # the generalist plays the game its shipped network learned
    learned = generalist.trained_rules(generalist.load()[2])
    assert {k: getattr(rules_for(problem, "generalist"), k) for k in learned} == learned
    # what is given wins; None is not given
    assert rules_for(problem, "es", placement="grid", copy_supply=None) == dataclasses.replace(deferred, placement="grid")
    assert rules_for(problem, "es", columns=64, output_nocopy=False) == dataclasses.replace(
        deferred, columns=64, output_nocopy=False)
    # the deferred game keeps a NoCopy where it was: the lowest offset plays the grid
    assert rules_for(problem, "es", nocopy_offset="lowest") == dataclasses.replace(paper, nocopy_offset="lowest")
    with pytest.raises(ProblemError, match="nocopy_offset must be 'same'"):
        rules_for(problem, "es", nocopy_offset="lowest", placement="deferred")
    # `solve` without rules: the solver's own game, named in its info
    result = solve(problem, "greedy", budget_s=5, place=False)
    assert result.info["played"] == "deferred" and result.solution.rules["placement"] == "deferred"
    assert validate(problem, result.solution).ok
    assert solve(problem, "greedy", budget_s=5, rules=paper, place=False).info["played"] == "grid"
    assert "played" not in solve(problem, "pinning", budget_s=5).info  # (it plays no game)


# ----------------------------------------------------------------------------- the pinning greedy


def _zero_sized(problem):
    """`problem` with its unaliased tensors of odd id made zero-size."""
    aliased = np.isin(problem.tensor_id, problem.tensor_id[problem.alias_id >= 0])
    zero = ~aliased & (problem.tensor_id % 2 == 1)
    return dataclasses.replace(problem, size=np.where(zero, 0, problem.size))


@pytest.mark.parametrize("seed", range(8))
def test_pinning_is_valid_with_alias_groups_tables_and_zero_sizes(seed):
    problem = generate(seed, num_instructions=12 + 3 * seed, inplace_prob=0.4, loop_prob=0.2,
                       memory_fraction=0.6, latency_tables=seed % 2 == 1)
    problem = _zero_sized(problem) if seed % 4 >= 2 else problem
    result = solve(problem, "pinning", budget_s=10, rules=RULES)  # validated
    s = result.solution
    pinned = (s.action == NOCOPY) & problem.is_output
    assert pinned.any() and not np.any(s.action == COPY)
    # Only whole tensors, each allocated over its whole live range by its output.
    assert set(problem.tensor_id[s.action != DROP]) == set(problem.tensor_id[pinned])
    assert np.all(s.alloc_start[pinned] == problem.live_start[pinned])
    assert np.all(s.alloc_end[pinned] == problem.live_end[pinned])
    assert np.all(s.alloc_start[(s.action == NOCOPY) & ~problem.is_output] == -1)
    assert result.info["pinned_tensors"] == int(pinned.sum()) and result.info["pins_allowed"]


def test_pinning_keeps_an_in_place_update_at_one_offset():
    # Tensor 1 is written at step 1 and updated in place at step 3 by tensor 2 (alias group 0),
    # which is read at step 5; tensor 3 is zero-size.
    group = dict(alias=0, size=60)
    problem = make_problem([dict(t=1, out=True, tensor=1, live=(1, 3), **group),
                            dict(t=2, out=True, tensor=3, live=(2, 4), size=0),
                            dict(t=3, tensor=1, live=(1, 3), **group),
                            dict(t=3, out=True, tensor=2, live=(3, 5), **group),
                            dict(t=4, tensor=3, live=(2, 4), size=0),
                            dict(t=5, tensor=2, live=(3, 5), **group)], memory=100)
    s = solve(problem, "pinning", budget_s=10, rules=RULES).solution
    assert list(s.action) == [NOCOPY] * 6 and s.ret == pytest.approx(6.0)
    assert len(set(s.offset[[0, 2, 3, 5]])) == 1
    assert (s.alloc_start[3], s.alloc_end[3]) == (3, 5)


def test_pinning_goes_by_benefit_per_byte_step():
    # Room for one of two tensors over the same steps: the one with less benefit but more per
    # byte-step (2 / (30 * 4) > 3 / (60 * 4)) is pinned.
    problem = make_problem([dict(t=1, out=True, tensor=1, size=60, live=(1, 4), benefit=3.0),
                            dict(t=1, out=True, tensor=2, size=30, live=(1, 4), benefit=2.0)],
                           memory=80)
    s = solve(problem, "pinning", budget_s=10, rules=RULES).solution
    assert list(s.action) == [DROP, NOCOPY] and s.ret == 2.0


def test_pinning_drops_everything_under_the_older_rules():
    problem = bundled("tiny")
    assert solve(problem, "pinning", rules=RULES).solution.ret > 0
    result = solve(problem, "pinning", budget_s=10, rules=Rules(columns=32, output_nocopy=False))
    assert np.all(result.solution.action == DROP) and result.solution.ret == 0.0
    assert not result.info["pins_allowed"] and "output_nocopy" in result.info["note"]


def test_pinning_never_pins_a_live_out_tensor():
    problem = bundled("tiny")  # its program results are live-out
    assert problem.live_out.any()
    s = solve(problem, "pinning", budget_s=10, rules=RULES).solution
    assert not np.any((s.action != DROP) & problem.live_out)
    unmarked = dataclasses.replace(problem, live_out=np.zeros_like(problem.live_out))
    s = solve(unmarked, "pinning", budget_s=10, rules=RULES).solution
    assert np.any((s.action != DROP) & problem.live_out)  # unmarked, some of them are pinned


def test_prod_without_the_heuristic_tells_the_agents_game_and_its_placement():
    """train.py drives `agents.prod`; with config.prod=False the heuristic is left out: the
    agent's best game is told, then that game placed, which is the written solution. (With the
    heuristic, its plan is told first: train.py writes it before the agent starts, which
    tests/test_train_script.py checks on a killed run.)"""
    problem = tiny(0)
    told = []
    result = agents.prod(problem, 60, 0, rules=RULES, heuristic_first=False,
                         on_solution=lambda kind, solution: told.append((kind, solution)),
                         **agent_options(max_iterations=40))
    assert [kind for kind, _ in told] == ["agent", "placed"]
    assert all(validate(problem, solution).ok for _, solution in told)
    found = dict(told)
    assert result.info["agent"] == found["agent"].ret and result.info["agent_placed"] == found["placed"].ret
    assert result.info["iterations"] == 40 and result.info["episodes"] > 0
    assert result.info["heuristic"] is None and result.info["improved"] == "agent"
    # (what compare's table shows of a game solver: its game's own return, the game, the start)
    assert result.info["raw_return"] == found["agent"].ret and result.info["played"] == RULES.placement
    assert result.info["placed_start"] == "decisions"
    # the placer never loses: the last moves start from the placed game
    assert result.solution.ret >= found["placed"].ret >= found["agent"].ret


def test_prod_improves_the_better_of_the_agents_placed_game_and_the_heuristics(monkeypatch):
    """The agent gets `1 - PLACE_SHARE` of what the heuristic leaves; the placer's last moves
    start from the better of the agent's placed game and the heuristic's solution, and, once
    they stop paying with seconds left, from the other (on a tiny program they stop at once)."""
    problem = tiny(0)
    budgets, starts = [], []
    greedy_game = solve(problem, "greedy", budget_s=10, rules=RULES, place=False)
    real_place = agents.place

    def muzero(problem, budget_s, seed, **kwargs):
        budgets.append(budget_s)
        return dataclasses.replace(greedy_game, info={"iterations": 1, "episodes": 1, "resumed": [0, 0], "mode": "expert",
                                                      "restarts": 0})

    def place(problem, solution, **kwargs):
        if kwargs.get("moves") != 0:
            starts.append(solution)
        return real_place(problem, solution, **kwargs)

    monkeypatch.setattr(agents, "muzero", muzero)
    monkeypatch.setattr(agents, "place", place)
    result = agents.prod(problem, 20, 0, rules=RULES)
    assert 0 < budgets[-1] <= 20 * (1 - agents.PLACE_SHARE) + 1e-6
    heuristic_ret, placed_ret = result.info["heuristic"], result.info["agent_placed"]
    assert [s.ret for s in starts[:2]] == sorted([heuristic_ret, placed_ret], reverse=True)
    assert all(s.ret < heuristic_ret for s in starts[2:])  # (the heuristic's plan, before its moves)
    assert result.info["improved"] in ("agent", "heuristic", "plan")
    assert result.info["placed_start"] == ("decisions" if result.info["improved"] == "agent" else "heuristic")
    assert validate(problem, result.solution).ok and result.solution.ret >= max(heuristic_ret, placed_ret)


@pytest.mark.parametrize("left, kept, descended", [
    (60.0, 1, ["game placed", "heuristic's", "plan"]), (60.0, 0, ["game placed", "heuristic's"]),
    (5.0, 1, ["game placed"])])
def test_prod_descends_from_its_other_starts_with_the_seconds_left(monkeypatch, left, kept, descended):
    """Prod's last moves start from the higher of the agent's placed game and the heuristic's
    solution; with `OTHER_START_S` left once they stop paying, also from the other, then from the
    heuristic's plan before its local moves (where those moves kept any), and the highest descent
    is written, named by its start (as on alexnet_train: the agent's placed game the higher start,
    the heuristic's solution a higher optimum, its plan a higher one still)."""
    from types import SimpleNamespace as S
    heuristic, placed = S(ret=10.0, name="heuristic's"), S(ret=11.0, name="game placed")
    optimum = {"heuristic's": 13.0, "game placed": 11.0, "plan": 14.0}  # (the game's moves find nothing)
    order, planned = [], []

    def place(problem, solution, *, moves=None, **kwargs):
        if moves == 0:
            return placed
        order.append(solution.name)
        return S(ret=optimum[solution.name], name=solution.name)

    def plan(problem, rules, *, pins, deadline):
        planned.append(pins)
        return S(solution=S(ret=9.0, name="plan"))

    monkeypatch.setattr(agents, "place", place)
    monkeypatch.setattr(agents, "heuristic_plan", plan)
    base = S(solution=heuristic, info={"moves": [kept, 64], "chosen": "first"})
    best, (start, placed_ret) = agents._place_last(tiny(0), RULES, 0, left, "game", base, lambda *a: None)
    assert order == descended and placed_ret == 11.0
    assert planned == (["first"] if kept and left > agents.OTHER_START_S else [])  # (the plan of its pins)
    written = {1: ("agent", 11.0), 2: ("heuristic", 13.0), 3: ("plan", 14.0)}[len(descended)]
    assert (start, best.ret) == written


def test_unplaced_muzero_keeps_its_games_own_solution(monkeypatch):
    """`solve(place=False)` (`--no-place`): a solver that places its best game itself (`muzero`'s
    `place_share`) is told not to, unless the caller gives a share; placed, it keeps its default."""
    problem = tiny(0)
    game = solve(problem, "greedy", budget_s=10, rules=RULES, place=False)
    told = []

    def muzero(problem, budget_s, seed, **options):
        told.append(options.get("place_share"))
        return game

    muzero.load = SOLVERS["muzero"].load  # (its declared options)
    monkeypatch.setitem(SOLVERS, "muzero", muzero)
    assert solve(problem, "muzero", budget_s=5, rules=RULES, place=False).solution is game.solution
    solve(problem, "muzero", budget_s=5, rules=RULES, place=False, place_share=0.3)
    solve(problem, "muzero", budget_s=2, rules=RULES)
    assert told == [0.0, 0.3, None]


def test_random_plays_a_smaller_batch_after_one_cut_early(monkeypatch):
    """A batch cut with most of the budget left (on large programs random games lose often, and
    each restore replays the game) is followed by a quarter of it, not by the end of the run."""
    from jaxmmap.solvers import simple

    batches, real = [], simple.play_on_the_clock

    def play(clock, states, keys, policy, **kwargs):
        batches.append(int(states.done.shape[0]))
        states, whole = real(clock, states, keys, policy, **kwargs)
        return states, whole and len(batches) == 2  # (the first and third batches as if cut)

    monkeypatch.setattr(simple, "play_on_the_clock", play)
    problem = tiny(0)
    result = simple.random_search(problem, 60, 0, rules=RULES, batch=4)
    assert batches == [4, 1, 1]  # (a single game cut ends the run)
    assert validate(problem, result.solution).ok and result.info["batch"] == 1


def test_greedy_keeps_the_best_of_its_games_one_per_least_density():
    import jax

    from jaxmmap.env.instance import make_instance
    from jaxmmap.env.rollout import density_policy, rollout
    from jaxmmap.solvers.simple import DENSITIES, greedy, least_densities

    problem = generate(2000, num_instructions=40)
    rules = Rules(placement="deferred", copy_supply="early")
    result = greedy(problem, 60, 0, rules=rules)
    assert result.info["finished"] and result.info["games"] == len(DENSITIES)
    instance = make_instance(problem, rules)
    games = jax.jit(jax.vmap(lambda least: rollout(instance, jax.random.key(0), density_policy(least), backup=True)))
    returns = np.asarray(games(least_densities(problem, rules)).board.ret)
    assert len(set(returns.round(5).tolist())) > 1  # the least densities make different games
    assert result.solution.ret == pytest.approx(returns.max(), rel=1e-5)
    assert result.info["density"] == DENSITIES[int(np.argmax(returns))]
    # anytime: each game that beat the ones before it is in the trace, in the order played
    assert len(result.trace) == len(set(np.maximum.accumulate(returns).round(5).tolist()))


def test_greedy_finishes_only_its_first_game_and_lets_a_later_one_cut_by_the_budget_go(monkeypatch):
    """Greedy's games are played one after the other: the first, where the budget ends inside it,
    is ended Drop-first (`finish`); a later one cut by the budget is let go, and the run ends with
    the best game that ended."""
    from jaxmmap.solvers import simple

    calls, real = [], simple.play_on_the_clock

    def play(clock, states, keys, policy, *, params, finish):
        calls.append(finish)
        if len(calls) == 2:  # the second game: the budget ends before its first move
            return states, False
        return real(clock, states, keys, policy, params=params, finish=finish)

    monkeypatch.setattr(simple, "play_on_the_clock", play)
    problem = tiny(0)
    result = simple.greedy(problem, 60, 0, rules=RULES)
    assert calls == [True, False]
    assert result.info["games"] == 1 and result.info["finished"] and result.info["density"] == simple.DENSITIES[0]
    assert validate(problem, result.solution).ok and len(result.trace) == 1
