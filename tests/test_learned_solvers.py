"""The learned solvers (ES, EGRL) and their policy: valid solutions, never above the optimum,
anytime traces, determinism, one compile across generations, sane features.

Every instance is padded to one shape (PAD), so each solver configuration compiles once for the
whole file."""

import dataclasses
import time
import types

import chex
import jax
import jax.flatten_util
import jax.numpy as jnp
import numpy as np
import pytest
from builders import EGRL_OPTIONS, ES_OPTIONS, PAD, RULES, tiny

from jaxmmap import bundled, generate, make_instance, validate
from jaxmmap.env import game, observation
from jaxmmap.env import rollout as rollout_lib
from jaxmmap.env.rollout import greedy_policy
from jaxmmap.solvers import agents
from jaxmmap.solvers.evolution import egrl as egrl_module
from jaxmmap.solvers.evolution import es as es_module
from jaxmmap.solvers.evolution import policy
from jaxmmap.solvers.exhaustive import exhaustive
from jaxmmap.solvers.simple import greedy

SOLVERS = {"es": (es_module.es, ES_OPTIONS), "egrl": (egrl_module.egrl, EGRL_OPTIONS)}



def run(name, problem, generations=3, seed=0, budget_s=60.0):
    fn, options = SOLVERS[name]
    return fn(problem, budget_s, seed, rules=RULES, max_generations=generations, **options)


def check_trace(result):
    times = [t for t, _ in result.trace]
    returns = [r for _, r in result.trace]
    assert times == sorted(times) and returns == sorted(returns)  # anytime: only improvements
    assert returns[-1] == pytest.approx(result.solution.ret)


def test_features_shapes_finite_and_greedy_start():
    """Features have the documented shapes and are finite along a game; the greedy start plays
    exactly like the greedy policy; random (linear and MLP) policies never play illegally."""
    problem = bundled("tiny")
    instance = make_instance(problem, RULES, num_buffers=PAD[0], num_steps=PAD[1],
                             num_tables=PAD[2])
    greedy_params = policy.init_params(jax.random.key(0))
    noisy = [policy.init_params(jax.random.key(k), scale=1.0, hidden=h) for k, h in [(1, 0), (2, 8)]]

    @jax.jit
    def play(instance):
        ctx = observation.context(instance)

        def body(state, key):
            phi = observation.features(state, ctx)
            ours = policy.make_policy(greedy_params, ctx)(key, state)
            return game.step(state, ours), (phi, game.legal_action_mask(state), ours,
                                             greedy_policy(key, state), state.done)

        keys = jax.random.split(jax.random.key(0), 2 * PAD[0])  # restores undo moves: room for them
        final, out = jax.lax.scan(body, game.init(instance, backup=True), keys)

        def noisy_game(params, sample):
            def step(state, key):
                a = policy.make_policy(params, ctx, sample=sample)(key, state)
                legal = game.legal_action_mask(state)[a] | state.done
                return game.step(state, a), legal
            return jax.lax.scan(step, game.init(instance, backup=True), keys)

        # (the linear one by its argmax, the MLP sampled: each noisy game is another copy of the
        # game's step to compile)
        others = [noisy_game(p, s) for p, s in zip(noisy, (False, True))]
        return ctx, final, out, others

    ctx, final, (phi, legal, ours, greedy, done), others = play(instance)
    chex.assert_shape(ctx.static, (PAD[0], observation.NUM_STATIC))
    chex.assert_shape(phi, (2 * PAD[0], observation.NUM_FEATURES))
    assert observation.NUM_FEATURES == len(observation.BUFFER_FEATURES) + 3 * len(observation.ACTION_FEATURES)
    assert np.all(np.isfinite(np.asarray(phi))) and np.isfinite(float(ctx.scale))
    live = ~np.asarray(done)
    assert live.sum() == int(final.moves) >= problem.num_buffers + int(final.restores)
    np.testing.assert_array_equal(np.asarray(policy.phi_legal(phi))[live], np.asarray(legal)[live])
    np.testing.assert_array_equal(np.asarray(ours)[live], np.asarray(greedy)[live])
    assert bool(final.done) and not bool(final.lost)
    x = np.asarray(phi)[live]
    assert np.all(x[:, 0] == 1.0)  # bias
    bounded = [observation.BUFFER_FEATURES.index(f) for f in (
        "demand_now", "demand_start", "target", "is_output", "progress", "occupancy", "later_uses",
        "supply_left")]
    assert np.all((x[:, bounded] >= 0) & (x[:, bounded] <= 1))
    for state, legal_moves in others:
        assert np.all(np.asarray(legal_moves)) and not bool(state.lost)
    # The pin's features: only outputs are pinnable, and an output's NoCopy is legal only if it
    # is; a pinned tensor's buffers have neither Copy nor Drop.
    col = {f: observation.BUFFER_FEATURES.index(f) for f in ("is_output", "pinnable", "pinned", "later_value")}
    legal_live = np.asarray(legal)[live]
    pinnable, pinned = x[:, col["pinnable"]], x[:, col["pinned"]]
    assert np.all(pinnable <= x[:, col["is_output"]]) and pinnable.sum() > 0
    assert np.all(legal_live[pinnable == 0][:, 1] <= (x[pinnable == 0][:, col["is_output"]] == 0))
    assert pinned.sum() > 0 and np.all(~legal_live[pinned == 1][:, [0, 2]])
    assert np.all(x[:, col["later_value"]] >= 0) and np.any(x[:, col["later_value"]] > 0)


def test_later_value_sums_the_later_buffers_of_the_tensor():
    from builders import make_problem

    problem = make_problem([dict(t=0, out=True, tensor=0, live=(0, 3), benefit=1.0),
                            dict(t=1, tensor=1, benefit=5.0),
                            dict(t=2, tensor=0, live=(0, 3), benefit=2.0),
                            dict(t=3, tensor=0, live=(0, 3), benefit=4.0)], steps=4)
    ctx = observation.context(make_instance(problem, RULES))
    later_value = np.asarray(ctx.static[:4, observation.NUM_STATIC - 1])
    scale = float(ctx.scale)  # the mean value, 3
    expected = np.log1p(np.array([6.0, 0.0, 4.0, 0.0]) / scale)
    np.testing.assert_allclose(later_value, expected, rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(ctx.static[:4, observation.NUM_STATIC - 2]), [1, 0, 0, 0])


# (-m slow; by default every solver is valid and within the bounds on tiny(0): test_solvers.py, and
# test_bundled_tiny_valid_deterministic_and_compiled_once)
@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2, 4])
def test_valid_and_never_above_the_optimum(seed):
    problem = tiny(seed)
    best = exhaustive(problem, 60, 0, rules=RULES)
    assert best.info["proven_optimal"]
    for name in SOLVERS:
        result = run(name, problem, seed=seed)
        assert validate(problem, result.solution).ok, name
        assert result.solution.solver == name
        assert result.solution.ret <= best.solution.ret + 1e-5, name
        assert result.info["generations"] == 3
        check_trace(result)


def test_bundled_tiny_valid_deterministic_and_compiled_once():
    problem = bundled("tiny")
    for name in SOLVERS:
        first = run(name, problem, generations=4, seed=3)
        again = run(name, problem, generations=4, seed=3)
        assert validate(problem, first.solution).ok, name
        check_trace(first)
        assert first.solution.ret == again.solution.ret, name
        np.testing.assert_array_equal(first.solution.action, again.solution.action)
        np.testing.assert_array_equal(first.solution.offset, again.solution.offset)
        # One compile serves every generation (and, with the shared padding, every instance);
        # ES compiles its ask and its tell (its games are played in slices between them), EGRL
        # its ask, play (the slices) and tell.
        assert first.info["traces"] <= (2 if name == "es" else 3) and again.info["traces"] == 0, name
        assert first.info["games"] == again.info["games"]


def test_es_never_below_its_start_and_mean_plays():
    problem = bundled("tiny")
    result = run("es", problem, generations=6, seed=1)
    assert result.solution.ret >= result.info["first_generation_best"] - 1e-4
    assert result.info["games"] == 6 * (ES_OPTIONS["population"] + 1)
    assert np.isfinite(result.info["mean_policy_return"])


def test_es_sizes_its_population_to_the_program_as_the_agent_sizes_its_generations(monkeypatch):
    problem = bundled("tiny")  # (a generation of 32 games would pass the moves allowed: 8)
    monkeypatch.setattr(rollout_lib, "MOVES_PER_GENERATION", 8 * problem.num_buffers)
    options = {k: v for k, v in ES_OPTIONS.items() if k != "population"}
    result = es_module.es(problem, 60.0, 0, rules=RULES, max_generations=2, **options)
    assert result.info["population"] == 8 and result.info["games"] == 2 * 9


@pytest.mark.parametrize("restart_from", ["best", pytest.param("start", marks=pytest.mark.slow)])  # (-m slow: start)
def test_es_generation_traces_once(restart_from):
    """The generation function, jitted with chex's trace counter, is traced once across
    generations (the state's signature does not change between them)."""
    chex.clear_trace_counter()  # (both modes' `generation` share a name: counted together otherwise)
    g = es_module.make_generation(8, 0, 0.05, 0.03, 2, None, restart_from)
    init, generation = g.init, g.generation
    generation = jax.jit(chex.assert_max_traces(generation, n=1))
    instance = make_instance(tiny(0), RULES, num_buffers=PAD[0], num_steps=PAD[1],
                             num_tables=PAD[2])
    search = init(jax.random.key(0), policy.init_params(jax.random.key(0)))
    for k in range(4):  # includes a restart (patience 2)
        search, state, stats = generation(search, jax.random.key(k), instance)
    assert int(search.es.generation_counter) == 4
    chex.assert_shape(search.best_params, (observation.NUM_FEATURES * 3 + 3,))
    assert bool(jnp.isfinite(stats["best"]))


@pytest.mark.parametrize("restart_from", ["best", "start"])
def test_es_restarts_the_mean_at_the_best_or_at_the_start(restart_from):
    """After `patience` generations without a rise, the mean restarts at the best game's
    parameters, or at the start's; the best game is kept either way. From the start, a climb
    that rises is not stalled even while it is below the best."""
    g = es_module.make_generation(4, 0, 0.1, 0.03, 2, None, restart_from)
    start = policy.init_params(jax.random.key(0))
    search = g.init(jax.random.key(0), start)
    flat = jax.flatten_util.ravel_pytree(start)[0]
    played = []
    for k, value in enumerate([5.0, 4.0, 4.0, 3.0, 4.0]):
        search, asked = g.ask(search, jax.random.key(k))
        played.append((bool(asked["restart"]), np.asarray(search.es.mean), search.es.opt_state))
        if k == 0:  # (generation 0: member 1 is the best, 6)
            member = jax.flatten_util.ravel_pytree(jax.tree.map(lambda x: x[1], asked["everyone"]))[0]
        search, _, _ = g.tell(search, asked, jnp.full(5, value).at[1].add(k == 0))
    assert [r for r, _, _ in played] == [False, False, False, True, False]
    assert float(search.best_return) == 6.0 and int(search.restarts) == 1
    best = np.asarray(search.best_params)
    np.testing.assert_allclose(best, member, rtol=1e-6)
    assert not np.allclose(best, flat)
    target = flat if restart_from == "start" else best
    assert not np.allclose(played[2][1], target)  # (the mean had moved; the restart moved it back)
    np.testing.assert_allclose(played[3][1], target, rtol=1e-6)
    assert all(np.all(np.asarray(x) == 0) for x in jax.tree.leaves(played[3][2]))  # (Adam's moments afresh)
    # (after the restart the climb rose from 3 to 4: below the best, stalled only from the best's view)
    assert int(search.stall) == (0 if restart_from == "start" else 1)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["es", "egrl"])
def test_real_instance_beats_greedy_start(name):
    from jaxmmap.core import suite as benchmarks

    problem = benchmarks.load("resnet18_infer@tpu_v4i-30")
    fn = {"es": es_module.es, "egrl": egrl_module.egrl}[name]
    result = fn(problem, 25.0, 0)
    assert validate(problem, result.solution).ok
    check_trace(result)
    assert result.solution.ret >= greedy(problem, 10.0, 0).solution.ret


@pytest.mark.slow  # (20 s on an empty compilation cache; by default test_game.py's checkpoints change no move,
# and test_solvers.py's prod starts from the heuristic)
def test_prod_starts_from_the_heuristic_where_single_games_keep_checkpoints(monkeypatch):
    """A single game of a large program keeps checkpoints (`rollout.checkpoints_for`); the
    heuristic's game that seeds the search must still match the search's games (it raised a
    pytree structure error on programs of more than 2,048 buffers)."""
    monkeypatch.setattr(rollout_lib, "CHECKPOINT_FROM", 1)
    problem = generate(11, num_instructions=37, inplace_prob=0.2)
    result = agents.prod(problem, 20, 0, from_heuristic=True, max_iterations=1, games=4)
    assert validate(problem, result.solution).ok
    assert result.solution.ret >= result.info["heuristic"]


@pytest.mark.parametrize("pretrained", [False, True])
def test_muzero_on_a_large_program_starts_from_single_games_and_returns_them_if_nothing_beats_them(
        monkeypatch, pretrained):
    """Above `agents.LARGE` buffers a generation can outlast the budget: the expert search then
    starts from `greedy`'s game, and pretrained from the better of it and the shipped network's
    (`generalist`), and returns that start where no game of its own beats it (no chunk here)."""
    monkeypatch.setattr(agents, "LARGE", 1)
    problem = generate(11, num_instructions=37, inplace_prob=0.2)
    result = agents.muzero(problem, 60, 0, max_iterations=0, games=4, pretrained=pretrained, place_share=0.0)
    greedy_game = greedy(problem, 10.0, 0).solution
    starts = ([agents.generalist(problem, 10.0, 0).solution] if pretrained else []) + [greedy_game]
    best = max(starts, key=lambda s: s.ret)  # (the network's on a tie, as `_first_game` takes it)
    assert result.info["start"] == best.solver and result.info["iterations"] == 0
    assert result.solution.solver == "muzero" and validate(problem, result.solution).ok
    np.testing.assert_array_equal(result.solution.action, best.action)
    assert result.solution.ret == pytest.approx(max(s.ret for s in starts))
    check_trace(result)


@pytest.mark.slow  # (13-20 s, its budget; by default
# test_pretrained_muzero_places_its_best_game_with_the_shipped_networks_guide places with a place share of 0.5)
def test_muzero_with_a_place_share_searches_for_the_rest_and_then_places_its_best_game(monkeypatch):
    """`place_share`: the search gets `1 - place_share` of the budget; the rest places its best
    game physically (descending again while it lasts); `info["game"]` keeps the game's return."""
    monkeypatch.setattr(agents, "LARGE", 1)  # (the start is greedy's game: no chunk to play)
    seen, real_fit, real_first = {}, agents.fit, agents._first_game

    def fit(*args, budget_s, **kwargs):
        seen["budget_s"] = budget_s
        return real_fit(*args, budget_s=budget_s, **kwargs)

    def first_game(*args):
        seen["first"] = real_first(*args)
        return seen["first"]

    monkeypatch.setattr(agents, "fit", fit)
    monkeypatch.setattr(agents, "_first_game", first_game)
    problem = generate(11, num_instructions=37, inplace_prob=0.2)
    # (20 s: with the compilation cache empty, greedy's game and the search's set-up compile for
    # more than 8 s on a busy 2-core CPU, and the placed rounds then had no time)
    result = agents.muzero(problem, 20.0, 0, max_iterations=0, games=4, place_share=0.5)
    game = seen["first"].solution  # (the search's start, returned as "muzero": no chunk beat it)
    assert seen["budget_s"] <= 10.0 and result.info["game"] == pytest.approx(game.ret)
    assert validate(problem, result.solution).ok and result.solution.ret > game.ret
    assert result.solution.solver == "muzero+placed" and result.info["place_rounds"] >= 1
    check_trace(result)
    with pytest.raises(ValueError, match="place_share"):
        agents.muzero(problem, 4.0, 0, place_share=1.0)


def test_pretrained_muzero_places_its_best_game_with_the_shipped_networks_guide(monkeypatch):
    """Pretrained, `muzero` on a program below `agents.LARGE` also plays the shipped network's
    game for its guide (`agent.guide`, the `generalist` solver's), which its first placed round
    reads and its result carries (for `solve`'s placer); fresh, or with `guide=False`, none."""
    problem = generate(11, num_instructions=37, inplace_prob=0.2)
    game = dataclasses.replace(greedy(problem, 10.0, 0).solution, solver="muzero")
    monkeypatch.setattr(agents, "fit", lambda *a, **k: types.SimpleNamespace(solution=game, trace=[], history=[],
                                                                                 resumed=(0, 0)))
    seen, real_rounds = [], agents._placed_rounds

    def placed_rounds(*args, guide=None):
        seen.append(guide)
        return real_rounds(*args, guide=guide)

    monkeypatch.setattr(agents, "_placed_rounds", placed_rounds)
    # (the generalist's game first: compiled, it leaves the 3-s runs' time to their placed rounds)
    expected = agents.generalist(problem, 3.0, 0).guide
    results = [agents.muzero(problem, 3.0, 0, pretrained=p, guide=g, place_share=0.5)
               for p, g in ((False, True), (True, True), (True, False))]
    assert seen[0] is None and results[0].guide is None and seen[2] is None and results[2].guide is None
    np.testing.assert_array_equal(seen[1], expected)
    assert results[1].guide is seen[1] and np.isfinite(seen[1]).any()
    for result in results:
        assert result.solution.solver == "muzero+placed" and validate(problem, result.solution).ok


def test_the_placed_rounds_go_on_after_a_round_that_did_not_pay_until_their_patience(monkeypatch):
    """`muzero`'s placed rounds: each from the best so far, with new seeds; they stop after
    `ROUNDS_PATIENCE` rounds in a row that did not pay, not at the first."""
    problem = tiny(0)
    game = greedy(problem, 10.0, 0).solution
    calls = []

    def place(problem, solution, *, seed, replan, fresh, guide, each_start, **kwargs):
        assert each_start == fresh
        calls.append((solution.ret, seed, replan, fresh, guide))
        pays = len(calls) in (1, 3)  # the first and the third round pay
        return dataclasses.replace(solution, ret=solution.ret + 1, solver="x+placed") if pays else solution

    monkeypatch.setattr(agents, "place", place)
    trace, guide = [], np.full((problem.num_buffers, 3), 0.5, np.float32)
    best, rounds = agents._placed_rounds(problem, RULES, 7, game, trace, time.perf_counter(), 600.0, guide=guide)
    assert rounds == 3 + agents.ROUNDS_PATIENCE and best.ret == game.ret + 2
    assert best.solver == f"{game.solver}+placed" and [r for _, r in trace] == [game.ret + 1, game.ret + 2]
    assert [c[2] for c in calls] == [True] + [False] * (rounds - 1)  # placed again the first time only
    # the first round also starts from no decisions and from the guide's flips of them
    assert [c[3] for c in calls] == [agents.ROUND_FRESH] + [False] * (rounds - 1)
    assert calls[0][4] is guide and all(c[4] is None for c in calls[1:])
    assert [c[0] for c in calls[:3]] == [game.ret, game.ret + 1, game.ret + 1]  # from the best so far
    assert len({c[1] for c in calls}) == rounds  # new seeds every round


def test_an_expert_generation_ends_with_its_budget_once_it_has_a_game(monkeypatch):
    """Once it has a best game, the expert search plays a generation in slices that stop at the
    budget itself: the placer's share of a solver's run comes after it (the 10% grace of
    `in_slices` would eat it)."""
    from jaxmmap.agent import expert
    from jaxmmap.agent.loop import agent_config
    from jaxmmap.core.clock import Clock

    seen = {}

    def slices(clock, advance, carry, done, tail=None, *, deadline_s=None):
        seen["deadline_s"] = deadline_s
        return carry, False  # the budget ended inside the generation

    monkeypatch.setattr(expert, "in_slices", slices)
    problem = bundled("tiny")
    instance = make_instance(problem, RULES)
    config = agent_config(games=4)
    fresh = expert.init(instance, config)  # no game yet: the grace may give it its first
    after, metrics = expert.chunk_on_clock(fresh, instance, jnp.float32(0), Clock(12.5), config=config)
    assert seen["deadline_s"] is None
    assert metrics is None and after is fresh  # a generation cut by the budget does not count
    started = expert.init(instance, config, demonstration=greedy(problem, 10, 0, rules=RULES).solution.action)
    expert.chunk_on_clock(started, instance, jnp.float32(0), Clock(12.5), config=config)
    assert seen["deadline_s"] == 12.5


DEFERRED = dataclasses.replace(RULES, placement="deferred", copy_supply="early")


@pytest.mark.slow  # (12 s on an empty compilation cache; by default ES's first generation plays the plan's game:
# test_from_the_heuristic_in_the_deferred_game_never_below_the_plans_game)
def test_a_plan_weight_makes_the_scorer_play_the_plan_where_it_is_legal():
    """The scorer reads the plan's action for the buffer at the cursor: with a large plan weight
    it replays a plan (a finished random game's own actions, each legal in its turn); with a
    zero weight it plays greedy's game."""
    problem = tiny(2)
    instance = make_instance(problem, RULES, num_buffers=PAD[0], num_steps=PAD[1], num_tables=PAD[2])
    ctx, n = observation.context(instance), problem.num_buffers
    play = jax.jit(lambda p, plan: rollout_lib.rollout(instance, jax.random.key(0),
                                                       policy.make_policy(p, ctx, plan=plan)))
    for seed in range(3):
        planned = rollout_lib.rollout(instance, jax.random.key(seed), rollout_lib.random_policy)
        assert bool(planned.done) and not bool(planned.lost)
        plan = planned.board.action
        follow = play(policy.init_params(jax.random.key(0), plan_weight=1e4), plan)
        np.testing.assert_array_equal(np.asarray(follow.board.action)[:n], np.asarray(plan)[:n])
        ignore = play(policy.init_params(jax.random.key(0), plan_weight=0.0), plan)
        greedy_game = rollout_lib.rollout(instance, jax.random.key(0), greedy_policy)
        np.testing.assert_array_equal(np.asarray(ignore.board.action)[:n], np.asarray(greedy_game.board.action)[:n])


@pytest.mark.parametrize("name", ["es", pytest.param("egrl", marks=pytest.mark.slow)])  # (EGRL: 17 s; -m slow)
def test_from_the_heuristic_in_the_deferred_game_never_below_the_plans_game(name):
    """In the deferred game ES and EGRL start from the heuristic's plan by default: its game is
    their first solution, and they return no less; in the paper's grid they do not."""
    from jaxmmap.solvers.heuristic import PLAN_SHARE, heuristic, play_plan

    problem, budget = tiny(4), 8.0
    planned = play_plan(problem, heuristic(problem, PLAN_SHARE * budget, 0, rules=DEFERRED).solution.action, DEFERRED)
    result = run_with(name, problem, DEFERRED, budget)
    assert result.info["from_heuristic"] and validate(problem, result.solution).ok
    # (EGRL's first solution is the plan's game; ES's the best of its first generation, which plays it)
    assert result.trace[0][1] == pytest.approx(planned.ret) if name == "egrl" else result.trace[0][1] >= planned.ret - 1e-6
    assert result.solution.ret >= planned.ret - 1e-6
    check_trace(result)
    assert not run_with(name, problem, RULES, budget).info["from_heuristic"]


@pytest.mark.slow  # (14 s on an empty compilation cache; by default
# test_from_the_heuristic_in_the_deferred_game_never_below_the_plans_game: ES's first generation plays the plan's game)
def test_es_plays_the_plans_game_in_its_first_batch():
    """Where a game of its first batch is ended inside the batch, ES plays the plan's game as its
    mean's game of the first generation (`member_policy`'s `follow`): the same game as the
    replay apart (`play_plan`), move for move, whether the batch plays it to its end or the budget
    cuts the batch and `finish_furthest` ends that game by its own policy."""
    from jaxmmap.solvers.base import Anytime, finish_furthest
    from jaxmmap.solvers.heuristic import heuristic, plan_start, play_plan

    problem = tiny(4)
    instance = make_instance(problem, DEFERRED, num_buffers=PAD[0], num_steps=PAD[1], num_tables=PAD[2])
    replayed = play_plan(problem, heuristic(problem, 2.0, 0, rules=DEFERRED).solution.action, DEFERRED)
    clock = Anytime(8.0)
    on, plan, in_batch, ended = plan_start(clock, problem, DEFERRED, PAD[0], "es", games=5)
    assert on and in_batch and ended is None and clock.best is None  # (nothing replayed)
    g = es_module.make_generation(4, 0, 0.1, 0.03, 10, 1.0)
    search = g.init(jax.random.key(0), policy.init_params(jax.random.key(0), plan_weight=1.0))
    _, asked = g.ask(search, jax.random.key(1))
    members = es_module.members_with(asked, instance, plan, jnp.arange(5) == 4)
    keys = jnp.broadcast_to(asked["key"], (5,))
    whole = rollout_lib.rollouts(instance, keys, es_module.member_policy, backup=True, params=members)
    cut, _ = rollout_lib.advance(rollout_lib.start(instance, 5), keys, es_module.member_policy, moves=3,
                                 params=members)
    ended = finish_furthest(cut, keys, es_module.member_policy, members, game=4)
    for states, i in ((whole, 4), (ended, 0)):
        game_ = rollout_lib.nth_game(states, i)
        np.testing.assert_array_equal(np.asarray(game_.board.action)[:problem.num_buffers], replayed.action)
        assert float(game_.board.ret) == pytest.approx(replayed.ret)


def test_the_agent_starts_from_the_plans_game_in_the_deferred_game(monkeypatch):
    """The expert search's first best game and center (its demonstration) is the heuristic's plan
    as the deferred game plays it, and it is the agent's result where no game of the search beats
    it; on the paper's grid the search starts without it. (The search itself: `fit`, faked.)"""
    from jaxmmap.solvers.heuristic import PLAN_SHARE, heuristic, play_plan

    problem, budget, given = tiny(4), 10.0, []
    planned = play_plan(problem, heuristic(problem, PLAN_SHARE * budget, 0, rules=DEFERRED).solution.action, DEFERRED)

    def fit(problem, config, *, demonstration=None, **kwargs):
        given.append(demonstration)
        return types.SimpleNamespace(solution=None, trace=[], history=[], resumed=(0, 0))

    monkeypatch.setattr(agents, "fit", fit)
    result = agents.muzero(problem, budget, 0, rules=DEFERRED, place_share=0.0)
    np.testing.assert_array_equal(given[0], planned.action)
    assert result.info["start"] == "heuristic-plan" and result.trace[0][1] == pytest.approx(planned.ret)
    assert result.solution.ret == pytest.approx(planned.ret) and validate(problem, result.solution).ok
    with pytest.raises(agents.NoGameError):  # (no game of its own, and no start on the grid)
        agents.muzero(problem, budget, 0, rules=RULES, place_share=0.0)
    assert given[1] is None


def run_with(name, problem, rules, budget_s, generations=2):
    fn, options = SOLVERS[name]
    return fn(problem, budget_s, 0, rules=rules, max_generations=generations, **options)
