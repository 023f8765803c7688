"""Training the agent: shapes of batches, legal self-play, the optimum on tiny games, exact resume,
and the same results on 4 devices as on 1.

Every test trains `builders.agent_config()` on problems padded to `PAD`, so `run_chunk` compiles
once per mode in the session.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from builders import PAD, RULES, agent_config, expert_config, greedy_game, tiny
from jax.flatten_util import ravel_pytree

from jaxmmap import generate, load_solution, make_instance, validate
from jaxmmap.agent import expert, expert_games, learner, selfplay, train
from jaxmmap.agent.config import AgentConfig
from jaxmmap.agent.loop import agent_config as config_from_dict
from jaxmmap.agent.loop import fit
from jaxmmap.agent.networks import make_networks
from jaxmmap.core.rules import Rules
from jaxmmap.env import game, observation
from jaxmmap.env.rollout import random_policy, rollout, won_returns
from jaxmmap.solvers.evolution import policy
from jaxmmap.solvers.exhaustive import exhaustive

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))



def padded(problem):
    return make_instance(problem, RULES, num_buffers=PAD[0], num_steps=PAD[1], num_tables=PAD[2])


def _chunks(config, problem, chunks, seed=0):
    instance = padded(problem)
    support = train.support_of(instance, config)
    state = train.init(instance, config, seed=seed)
    metrics = []
    for _ in range(chunks):
        state, m = train.run_chunk(state, instance, config=config, support=support)
        metrics.append(jax.device_get(m))
    return state, jax.tree.map(lambda *x: np.concatenate(x), *metrics), instance, support


@pytest.fixture(scope="module")
def muzero_run():
    config = agent_config()
    return (config,) + _chunks(config, tiny(1), 2)


@pytest.mark.xdist_group("muzero_run")  # one worker makes the fixture once
def test_self_play_fills_the_replay_with_legal_moves_and_keeps_the_best_game(muzero_run):
    config, state, metrics, instance, _ = muzero_run
    data = state.replay.data
    rows = config.rows
    chex.assert_shape(data.action, (rows, config.games))
    chex.assert_shape(data.observation.grid, (rows, config.games, 128, 128))
    assert data.observation.grid.dtype == jnp.uint8
    written = min(int(state.moves), rows)
    valid = np.asarray(data.valid)[:written]
    legal = np.asarray(data.observation.legal)[:written]
    action = np.asarray(data.action)[:written]
    assert valid.any() and not valid.all()  # staggered starts
    assert np.all(np.take_along_axis(legal, action[..., None], axis=-1)[..., 0][valid])
    policy = np.asarray(data.policy)[:written][valid]
    np.testing.assert_allclose(policy.sum(-1), 1.0, rtol=1e-5)
    assert np.all(policy[~legal[valid]] == 0)
    assert metrics["finished"].sum() > 0 and metrics["learned"].any()
    assert np.isfinite(metrics["loss"][metrics["learned"]]).all()
    # the best game is a finished, won game with the best return ever reported
    best = train.best_game(state, instance)
    assert bool(best.done) and not bool(best.lost)
    assert float(best.board.ret) == pytest.approx(float(metrics["best_return"].max()))


@pytest.mark.xdist_group("muzero_run")
def test_a_batch_has_the_unrolled_shapes_and_sane_targets(muzero_run):
    config, state, _, _, support = muzero_run
    networks = make_networks(config.network)
    batch = jax.jit(lambda s, k: learner.make_batch(s.learner, s.replay, k, config=config,
                                                    networks=networks, support=support))(
        state, jax.random.key(3))
    b, k = config.batch_size, config.unroll_steps
    chex.assert_shape(batch.observation.grid, (b, 128, 128))
    chex.assert_shape([batch.action, batch.alive, batch.value], (b, k + 1))
    chex.assert_shape(batch.policy, (b, k + 1, 3))
    chex.assert_shape(batch.reward, (b, k))
    assert batch.observation.grid.dtype == jnp.float32
    np.testing.assert_allclose(np.asarray(batch.policy).sum(-1)[np.asarray(batch.alive) > 0], 1.0,
                               rtol=1e-5)
    assert np.all(np.asarray(batch.alive)[:, 0] == 1)  # a sampled position is in its episode
    # reanalysed and stored policies are both legal at the root
    legal = np.asarray(batch.observation.legal)
    assert np.all(np.asarray(batch.policy)[:, 0][~legal] == 0)
    assert np.all(np.abs(np.asarray(batch.value)) <= support.max_scalar)


@pytest.mark.xdist_group("muzero_run")
def test_a_demonstration_replays_its_game_with_exact_returns(muzero_run):
    config, state, _, instance, _ = muzero_run
    best = state.actors.best
    rows = train.demonstration_rows(instance, config.replace(demonstration_fraction=0.25))
    final, demo = jax.jit(functools.partial(selfplay.demonstration, rows=rows, discount=0.9))(
        game.init(instance, backup=True), best.board.action)
    assert bool(final.done) and float(final.board.ret) == pytest.approx(float(state.actors.best_return))
    chex.assert_shape(demo.data.action, (rows, 1))
    data = jax.tree.map(lambda x: np.asarray(x[:, 0]), demo.data.replace(observation=None))
    n = tiny(1).num_buffers
    assert data.valid[:n].all() and not data.valid[n:].any() and int(demo.count) == rows
    np.testing.assert_array_equal(data.action[:n], np.asarray(best.board.action)[:n])
    assert data.done[n - 1] and not data.done[: n - 1].any()
    np.testing.assert_allclose(data.reward.sum(), float(state.actors.best_return), rtol=1e-5)
    np.testing.assert_array_equal(data.policy[:n], np.eye(3)[data.action[:n]])
    to_go = [sum(0.9 ** i * r for i, r in enumerate(data.reward[k:n])) for k in range(n)]
    np.testing.assert_allclose(data.value[:n], to_go, rtol=1e-5, atol=1e-6)


@pytest.mark.slow  # by default: test_a_demonstration_replays_its_game_with_exact_returns
def test_a_demonstration_seeds_the_best_game_and_its_part_of_every_batch():
    from jaxmmap.solvers.heuristic import heuristic

    problem = tiny(2)
    given = heuristic(problem, 10.0, 0, rules=RULES, mode="game").solution
    config = agent_config(demonstration_fraction=0.25)
    instance = padded(problem)
    support = train.support_of(instance, config)
    state = train.init(instance, config, demonstration=given.action)
    np.testing.assert_allclose(float(state.actors.best_return), given.ret, rtol=1e-5)
    for _ in range(2):
        state, metrics = train.run_chunk(state, instance, config=config, support=support)
    assert metrics["learned"].any() and np.isfinite(np.asarray(metrics["loss"])).all()
    assert float(state.actors.best_return) >= given.ret - 1e-5
    networks = make_networks(config.network)
    batch = learner.make_batch(state.learner, state.replay, jax.random.key(0), config=config,
                               networks=networks, support=support,
                               demonstration=state.demonstration)
    d = config.demonstrated
    chex.assert_shape(batch.policy, (config.batch_size, config.unroll_steps + 1, 3))
    alive = np.asarray(batch.alive)[-d:] > 0
    policy, action = np.asarray(batch.policy)[-d:], np.asarray(batch.action)[-d:]
    np.testing.assert_array_equal(policy[alive], np.eye(3)[action[alive]])  # the moves played
    # the demonstration is the best game so far (rebuilt when the agent beat the given one), and
    # its value targets are its exact returns-to-go (n-step sums of exact values telescope)
    demo = jax.tree.map(lambda x: np.asarray(x[:, 0]), state.demonstration.data.replace(observation=None))
    n = problem.num_buffers
    np.testing.assert_array_equal(demo.action[:n], np.asarray(state.actors.best.board.action)[:n])
    assert demo.reward[:n].sum() == pytest.approx(float(state.actors.best_return), rel=1e-5)
    targets = np.asarray(batch.value)[-d:, 0]
    gaps = np.abs(targets[:, None] - demo.value[None, :n]).min(axis=1)
    np.testing.assert_allclose(gaps, 0.0, atol=1e-4)


@pytest.mark.slow
def test_fit_reports_only_the_agents_own_games_never_the_demonstration():
    from jaxmmap.solvers.heuristic import heuristic

    problem = tiny(2)
    given = heuristic(problem, 10.0, 0, rules=RULES, mode="game").solution
    config = agent_config(demonstration_fraction=0.25)
    outcome = fit(problem, config, rules=RULES, max_iterations=20, padding=PAD,
                  demonstration=given.action)
    assert outcome.history, "fit logs its chunks"
    if outcome.solution is None:  # the agent's games never beat the given one
        assert all(row["best_return"] <= given.ret * (1 + 1e-5) + 1e-6 for row in outcome.history)
    else:
        assert outcome.solution.ret > given.ret and validate(problem, outcome.solution).ok


@pytest.mark.xdist_group("muzero_run")
def test_without_demonstrations_the_demonstration_replay_is_a_placeholder(muzero_run):
    _, state, *_ = muzero_run
    chex.assert_shape(state.demonstration.data.action, (1, 1))


# The default run learns in the muzero mode (`muzero_run`) and the expert mode; the ablations
# are slow.
@pytest.mark.slow
@pytest.mark.parametrize("mode", ["alphazero", "mcts", "no_search"])
def test_every_mode_plays_and_learns(mode):
    config = agent_config(mode=mode)
    state, metrics, instance, _ = _chunks(config, tiny(2), 2)
    assert metrics["finished"].sum() > 0
    assert metrics["learned"].any() == (mode != "mcts")
    assert np.isfinite(metrics["loss"]).all()
    best = train.best_game(state, instance)
    assert best is not None and not bool(best.lost)
    if mode == "mcts":  # no learning: the parameters never move
        before = train.init(instance, config).learner.params
        chex.assert_trees_all_equal(before, state.learner.params)


def _expert(**changes) -> AgentConfig:
    return expert_config(**changes)


@pytest.mark.xdist_group("expert")
def test_the_expert_mode_searches_around_its_best_game_and_learns_from_the_improvements():
    problem = generate(2, num_instructions=30, memory_fraction=0.3)  # room for improvements
    instance = make_instance(problem, RULES)
    config = _expert(generations_per_chunk=1)  # (and `frozen`: the evaluation-game test's configs, compiled once)
    state = expert.init(instance, config, seed=0)
    assert not np.isfinite(float(state.best_return))
    returns, learned = [], []
    for _ in range(8):
        state, metrics = expert.run_chunk(state, instance, jnp.float32(0.5), config=config)
        metrics = jax.device_get(metrics)
        returns += list(metrics["best_return"])
        learned += list(metrics["learned"])
    assert np.all(np.diff(returns) >= 0)  # the best only improves
    assert any(learned) and int(state.learner.steps) == config.learner_steps * sum(learned)
    assert np.isfinite(metrics["evaluation_return"]).all()  # the deterministic game finishes
    assert float(state.center_return) <= float(state.best_return)
    best = expert.best_game(state, instance)
    assert bool(best.done) and not bool(best.lost)
    assert float(best.board.ret) == pytest.approx(float(state.best_return))
    # the network moved away from its start (the greedy policy) only through learning
    fresh = expert.init(instance, config, seed=0).learner.params
    assert not all(np.allclose(a, b) for a, b in zip(jax.tree.leaves(fresh),
                                                    jax.tree.leaves(state.learner.params)))
    frozen = _expert(learning_rate=0.0, generations_per_chunk=1)  # the ablation "search without learning"
    state = expert.init(instance, frozen, seed=0)
    state, metrics = expert.run_chunk(state, instance, jnp.float32(0.5), config=frozen)
    chex.assert_trees_all_equal(fresh, state.learner.params)
    assert not np.asarray(metrics["learned"]).any()


def test_a_search_starts_again_once_its_center_has_stalled_as_long_as_it_climbed():
    problem = generate(2, num_instructions=30, memory_fraction=0.3)
    instance = make_instance(problem, RULES)
    state = expert.init(instance, _expert(), seed=0, demonstration=np.asarray(greedy_game(instance).board.action))
    center = jax.tree.map(lambda x: x + 1 if x.dtype == jnp.int32 else x, state.center)  # (another game)
    state = state.replace(center=center, center_return=state.origin_return + 5, began=jnp.int32(10))
    for stall, rose, moves, again in [(1.0, 30, 49, False), (1.0, 30, 50, True), (0.5, 30, 40, True),
                                      (0.5, 30, 39, False), (1.0, 11, 18, False), (1.0, 11, 19, True),
                                      (0.0, 30, 500, False)]:
        out, restarted = expert._restart(state.replace(rose=jnp.int32(rose), moves=jnp.int32(moves)),
                                         config=_expert(restart_stall=stall))
        assert bool(restarted) == again, (stall, rose, moves)
        expected = state.origin if again else center
        chex.assert_trees_all_equal(out.center, expected)
        assert float(out.center_return) == float(state.origin_return if again else state.center_return)
        assert int(out.began) == (moves if again else 10)
        chex.assert_trees_all_equal(out.best, state.best)
    with pytest.raises(ValueError, match="restart_stall"):
        _expert(restart_stall=-1.0)


@pytest.mark.slow  # (10 s on an empty compilation cache; by default every expert test's first generation takes this
# start, checked only here)
@pytest.mark.xdist_group("expert")
def test_the_expert_search_starts_from_the_evaluation_game_when_it_is_better():
    # On a large program the first generation's sampled games are far below the greedy game;
    # the center must not start from the best of them.
    problem = generate(2, num_instructions=80, memory_fraction=0.3)  # greedy 7.58, samples 7.03
    instance = make_instance(problem, RULES)
    config = _expert(generations_per_chunk=1, init_temperature=50.0, final_temperature=50.0)
    state = expert.init(instance, config, seed=0)
    state, metrics = expert.run_chunk(state, instance, jnp.float32(0.0), config=config)
    assert float(state.center_return) >= float(metrics["evaluation_return"][0])
    assert float(state.center_return) == float(state.best_return)


def test_the_quietest_deviation_rate_changes_a_few_moves_at_any_size():
    config = _expert(deviation_min=0.02, deviation_max=0.6)
    for n, lo in [(40, 0.02), (128, 0.02), (1280, 0.002), (12800, 0.0002)]:
        low, high = expert_games.deviation_range(jnp.int32(n), config)
        assert float(low) == pytest.approx(lo) and float(high) == pytest.approx(0.6)


@pytest.mark.slow  # (31 s; every default expert generation has windowed games: deviation_window 0.5)
@pytest.mark.xdist_group("expert")
def test_windowed_deviations_change_the_center_only_inside_their_window():
    # A windowed game (all of them with deviation_window=1) deviates only in [prefix, prefix +
    # window) and follows the center elsewhere (but where the Drop-backup's restores change its
    # earlier moves): its changes stay local, a ruin and recreate of a stretch of the game.
    problem = generate(3, num_instructions=200, memory_fraction=0.3)
    instance = make_instance(problem, RULES)
    n = problem.num_buffers
    changed = {}
    greedy = greedy_game(instance)
    for windowed in (False, True):
        config = _expert(games=32, deviation_window=float(windowed), restart_fraction=1.0)
        state = expert.init(instance, config, seed=0, demonstration=np.asarray(greedy.board.action)[:n])
        games = expert.begin(state, instance, config=config)
        window = np.asarray(games.window)
        if windowed:
            assert (window >= 1).all() and (window <= n).all() and len(set(window.tolist())) > 4
            low, high = expert_games.deviation_range(instance.num_buffers, config)
            assert (np.asarray(games.rate) >= np.minimum(float(low) * n / window, float(high)) * 0.999).all()
        else:
            assert (window == n).all()
        games = expert.play(state, games, instance, jnp.float32(0.0), jnp.int32(2 ** 31 - 1), config=config)
        center = np.asarray(state.center.board.action)[:n]
        actions = np.asarray(games.states.board.action)[:, :n]
        explore = np.asarray(games.explore)
        assert explore[1:].all()
        changed[windowed] = (actions[explore] != center).sum(axis=1).mean()
    assert changed[True] < 0.5 * changed[False]  # (20.5 and 7.8 moves)


@pytest.mark.slow  # (41 s on an empty compilation cache; by default every expert test plays its generations' games
# batched, and test_budgets.py plays games in slices)
@pytest.mark.xdist_group("expert")
def test_a_generations_games_one_by_one_are_its_batched_games():
    # On a CPU above ONE_BY_ONE_ABOVE padded buffers the games play one after the other
    # (lax.map), the restarted ones from the fork (the center replayed once) rather than
    # replaying their prefixes: the same games, move for move, as the batch (vmap), restores
    # included, whether played at once or in slices.
    problem = generate(3, num_instructions=200, memory_fraction=0.3)
    instance = make_instance(problem, RULES)
    config = _expert(games=8)
    greedy = greedy_game(instance)
    state = expert.init(instance, config, seed=0,
                        demonstration=np.asarray(greedy.board.action)[: problem.num_buffers])
    ctx = observation.context(instance)
    played = [expert_games.play_search(state.learner.params, expert.begin(state, instance, config=config), instance, ctx,
                                 state.center, jnp.float32(1.0), jnp.int32(2 ** 31 - 1), config=config,
                                 one_by_one=one_by_one) for one_by_one in (False, True)]
    games = expert.begin(state, instance, config=config)
    waiting = ~np.asarray(games.ready)
    assert waiting.sum() >= 4 and (np.asarray(games.prefix)[waiting] > 0).all()
    in_slice = jax.jit(lambda games: expert_games.play_search(state.learner.params, games, instance, ctx, state.center,
                                                        jnp.float32(1.0), jnp.int32(37), config=config, one_by_one=True))
    while not bool(jnp.all(expert_games.ended(games, instance))):
        games = in_slice(games)
    played.append(games)
    batched, alone, sliced = played
    assert np.asarray(alone.ready).all() and np.asarray(sliced.ready).all()
    # (the fork went as far as the furthest prefix, not further)
    assert int(alone.fork.board.cursor) == int(np.max(np.asarray(alone.prefix)))
    chex.assert_trees_all_equal(batched.states, alone.states)  # the same games, move for move
    chex.assert_trees_all_equal(alone.states, sliced.states)
    chex.assert_trees_all_equal({k: v for k, v in batched.record.items() if k != "features"},
                                {k: v for k, v in alone.record.items() if k != "features"})
    # (the recorded features may differ in the last bit: XLA fuses them otherwise in a batch)
    chex.assert_trees_all_close(batched.record["features"], alone.record["features"], rtol=1e-6, atol=1e-6)
    assert int(jnp.sum(played[0].states.restores)) > 0  # (restores happened)
    assert expert_games.games_one_by_one(expert_games.ONE_BY_ONE_ABOVE + 1) == (jax.default_backend() == "cpu")
    assert not expert_games.games_one_by_one(expert_games.ONE_BY_ONE_ABOVE)


def _pruning_games(num_instructions):
    """A generation of the expert's games from greedy's plan, played one by one with and without pruning."""
    problem = generate(3, num_instructions=num_instructions, memory_fraction=0.3)
    instance = make_instance(problem, Rules(columns=32, placement="deferred", copy_supply="early"))
    config = _expert(games=16, restart_fraction=1.0)
    greedy = np.asarray(greedy_game(instance).board.action)[:problem.num_buffers]
    state = expert.init(instance, config, seed=0, demonstration=greedy)
    ctx = observation.context(instance)
    games = expert.begin(state, instance, config=config)
    played = {prune: expert_games.play_search(state.learner.params, games, instance, ctx, state.center,
                                              jnp.float32(1.0), 2 ** 31 - 1, config=config, one_by_one=True,
                                              prune=prune)
              for prune in (False, True)}
    return instance, config, greedy, state, ctx, games, played


@pytest.mark.xdist_group("expert")
def test_pruned_games_are_those_that_could_not_beat_the_center():
    # The default run's short form of the next test, one by one: played out, each game the search
    # stopped replays the center's game and each it lost ends below the center; the rest are the
    # same games.
    instance, _, _, state, _, _, played = _pruning_games(40)
    whole, cut = (np.asarray(won_returns(played[prune].states)) for prune in (False, True))
    copies = np.asarray(expert_games.duplicate(played[True], instance))
    pruned = np.isfinite(whole) & ~np.isfinite(cut) & ~copies
    assert pruned.sum() >= 2 and (whole[pruned] < float(state.center_return)).all()
    assert copies.sum() >= 2 and (whole[copies] == float(state.center_return)).all()
    kept = ~pruned & ~copies
    chex.assert_trees_all_equal(*(jax.tree.map(lambda x: np.asarray(x)[kept], played[p].states.board)
                                  for p in (False, True)))


@pytest.mark.slow  # (30 s on an empty compilation cache; by default its short form above, and every expert test
# prunes its games: prune=True)
@pytest.mark.xdist_group("expert")
def test_pruned_games_could_not_have_beaten_the_center():
    # `play_search(prune=True)`, the default: an exploring game that played only the center's
    # moves ends past its window (it could only replay the center); in the deferred game one that
    # ends below the center's return is lost (unpacked, or once its packings are). The others
    # are the same games, batched or one by one; played out, each stopped one is the center's
    # game, each lost one below it. The generation's end is the same: a stopped game counts at
    # the center's return and the center is kept.
    instance, config, greedy, state, ctx, games, played = _pruning_games(80)
    n = greedy.size
    batched = expert_games.play_search(state.learner.params, games, instance, ctx, state.center, jnp.float32(1.0),
                                       2 ** 31 - 1, config=config, one_by_one=False)
    # (a batch: the same cut, the same games; their returns may differ in the last bit, fused otherwise)
    chex.assert_trees_all_equal(batched.states.board.records, played[True].states.board.records)
    chex.assert_trees_all_close(batched.states.board.ret, played[True].states.board.ret, rtol=1e-6)
    chex.assert_trees_all_equal((batched.states.done, batched.states.lost), (played[True].states.done,
                                                                              played[True].states.lost))
    whole, cut = (np.asarray(won_returns(played[prune].states)) for prune in (False, True))
    copies = np.asarray(expert_games.duplicate(played[True], instance))
    assert not np.asarray(expert_games.duplicate(played[False], instance)).any()
    assert np.asarray(expert_games.ended(played[True], instance)).all()
    pruned = np.isfinite(whole) & ~np.isfinite(cut) & ~copies
    assert pruned.sum() >= 2 and (whole[pruned] < float(state.center_return)).all()
    assert copies.sum() >= 2 and (whole[copies] == float(state.center_return)).all()
    assert (np.asarray(played[False].states.board.action)[copies][:, :n] == greedy).all()
    kept = ~pruned & ~copies
    chex.assert_trees_all_equal(*(jax.tree.map(lambda x: np.asarray(x)[kept], played[p].states.board)
                                  for p in (False, True)))
    ends = {prune: expert.end(state, played[prune], instance, jnp.float32(0.0), config=config) for prune in (False, True)}
    (plain, plain_metrics), (cut, cut_metrics) = ends[False], ends[True]
    chex.assert_trees_all_equal((plain.center, plain.center_return, plain.best, plain.best_return, plain.learner),
                                (cut.center, cut.center_return, cut.best, cut.best_return, cut.learner))
    assert bool(plain_metrics["learned"]) == bool(cut_metrics["learned"])


@pytest.mark.xdist_group("expert")
def test_directed_games_are_es_members_around_the_center():
    # The default run's short form of the next test: a batch of directed games, each the game of
    # ES's policy around the center (its plan) with the game's direction added to its weights,
    # move for move (directions large enough that the members differ).
    problem = generate(4, num_instructions=40, memory_fraction=0.3)
    instance = make_instance(problem, RULES)
    n = problem.num_buffers
    plan = jnp.asarray(rollout(instance, jax.random.key(1), random_policy, backup=True).board.action)
    ctx = observation.context(instance)
    config = _expert(games=4, directed_share=1.0, direction_scale=0.1, restart_fraction=0.0, deviation_window=0.0)
    state = expert.init(instance, config, seed=0, demonstration=np.asarray(plan)[:n])
    begun = expert.begin(state, instance, config=config)
    games = expert.play(state, begun, instance, jnp.float32(0.0), jnp.int32(2 ** 31 - 1), config=config)
    explore = np.asarray(begun.explore)
    assert explore[1:].all() and not explore[0]

    @jax.jit
    def es_members(directions):
        def member(direction):
            params = policy.init_params(jax.random.key(0), plan_weight=expert_games.CENTER_BONUS)
            params = {**params, "w": params["w"] + direction[:-1], "b": params["b"] + direction[-1]}
            return rollout(instance, jax.random.key(0), policy.make_policy(params, ctx, plan=plan), backup=True)
        return jax.vmap(member)(directions).board.action

    actions = np.asarray(games.states.board.action)[explore][:, :n]
    assert (actions == np.asarray(es_members(games.direction[explore]))[:, :n]).all()
    assert (actions != np.asarray(plan)[:n]).sum(axis=1).min() > 5  # (members that move off the plan,
    assert len({row.tobytes() for row in actions}) == len(actions)  # each its own way)


@pytest.mark.slow  # (31 s on an empty compilation cache; by default its short form above, and every expert
# test plays directed games: directed_share 0.9)
@pytest.mark.xdist_group("expert")
def test_a_directed_game_is_an_es_member_around_the_center():
    # A directed game plays the argmax of greedy's scores (ES's start), plus its own linear
    # function of ES's features, plus CENTER_BONUS on the center's move: ES's policy with the
    # center as its plan, its weights moved by the game's direction, plays the same game, move
    # for move, whatever the network has learned (a batch, and one by one, where a directed game
    # skips the network), while the evaluation game plays the learned network's argmax, not
    # greedy's. With a large direction the games differ, and each recorded deviation is a move
    # other than the center's.
    problem = generate(3, num_instructions=120, memory_fraction=0.3)
    instance = make_instance(problem, RULES)
    n = problem.num_buffers
    center = rollout(instance, jax.random.key(1), random_policy, backup=True)  # (far from greedy's)
    plan = jnp.asarray(center.board.action)
    ctx = observation.context(instance)

    @jax.jit
    def es_member(direction):
        params = policy.init_params(jax.random.key(0), plan_weight=expert_games.CENTER_BONUS)
        params = {**params, "w": params["w"] + direction[:-1], "b": params["b"] + direction[-1]}
        return rollout(instance, jax.random.key(0), policy.make_policy(params, ctx, plan=plan), backup=True)

    for scale in (1e-6, 1.0):
        config = _expert(games=16, directed_share=1.0, direction_scale=scale, restart_fraction=0.0,
                         deviation_window=0.0)
        state = expert.init(instance, config, seed=0, demonstration=np.asarray(plan)[:n])
        flat, unravel = ravel_pytree(state.learner.params)  # (a network that learned)
        state = state.replace(learner=state.learner.replace(
            params=unravel(flat + 0.3 * jax.random.normal(jax.random.key(5), flat.shape))))
        begun = expert.begin(state, instance, config=config)
        explore = np.asarray(begun.explore)
        assert explore[1:].all() and not explore[0]  # (game 0: the evaluation game)
        assert (np.abs(np.asarray(begun.direction))[explore].max(axis=(1, 2)) > 0).all()
        games = expert.play(state, begun, instance, jnp.float32(0.0), jnp.int32(2 ** 31 - 1), config=config)
        actions = np.asarray(games.states.board.action)[explore][:, :n]
        if scale < 1:
            es = [np.asarray(es_member(d).board.action)[:n] for d in np.asarray(games.direction)[explore]]
            assert (actions == np.stack(es)).all()
            assert (actions != np.asarray(plan)[:n]).sum(axis=1).min() > 5
            evaluation = np.asarray(games.states.board.action)[0, :n]
            assert (evaluation != np.asarray(greedy_game(instance).board.action)[:n]).sum() > 5
            alone = expert_games.play_search(state.learner.params, begun, instance, ctx, state.center, jnp.float32(1.0),
                                             2 ** 31 - 1, config=config, one_by_one=True)
            assert (np.asarray(alone.states.board.action)[explore][:, :n] == actions).all()
            continue
        assert len({row.tobytes() for row in actions}) > len(actions) // 2
        count = np.asarray(games.record["count"])[explore]
        assert (count > 0).all()
        recorded = np.arange(expert_games.DEVIATIONS)[None, :] < count[:, None]
        made = np.take_along_axis(np.asarray(games.record["allowed"])[explore],
                                  np.asarray(games.record["action"])[explore][..., None], axis=2)[..., 0]
        assert made[recorded].all()


@pytest.mark.xdist_group("expert")
@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow), pytest.param(4, marks=pytest.mark.slow)])
def test_the_expert_agent_reaches_the_optimum_of_tiny_games(seed):
    problem = tiny(seed)
    optimum = exhaustive(problem, 60, 0, rules=RULES).solution.ret
    outcome = fit(problem, _expert(), rules=RULES, max_iterations=400, padding=PAD,
                  stop_at=optimum - 1e-6)
    assert validate(problem, outcome.solution).ok
    assert outcome.solution.ret == pytest.approx(optimum, abs=1e-6)


@pytest.mark.xdist_group("expert")
def test_a_stalled_search_starts_again_and_keeps_its_best():
    # A tiny game's search finds its optimum within a few generations and stalls; 8 generations
    # later it starts again from its first center, and again 8 later; the best game stays.
    problem = tiny(0)
    outcome = fit(problem, _expert(), rules=RULES, max_iterations=20, padding=PAD)
    restarts = [row["restarts"] for row in outcome.history]
    assert sum(restarts) >= 2
    assert np.all(np.diff([row["best_return"] for row in outcome.history]) >= 0)
    assert validate(problem, outcome.solution).ok
    assert outcome.solution.ret == pytest.approx(outcome.history[-1]["best_return"], abs=1e-5)


@pytest.mark.xdist_group("expert")
def test_the_expert_mode_resumes_bit_for_bit(tmp_path):
    problem, config = tiny(3), _expert()
    straight = fit(problem, config, rules=RULES, max_iterations=8, padding=PAD,
                   workdir=str(tmp_path / "straight"), checkpoint_every=100)
    fit(problem, config, rules=RULES, max_iterations=4, padding=PAD,
        workdir=str(tmp_path / "resumed"), checkpoint_every=1, schedule_iterations=8)
    resumed = fit(problem, config, rules=RULES, max_iterations=8, padding=PAD,
                  workdir=str(tmp_path / "resumed"))
    chex.assert_trees_all_equal(jax.device_get(straight.state), jax.device_get(resumed.state))


def _quickstart_agent() -> AgentConfig:
    return config_from_dict(**_config_file("quickstart").agent.to_dict())


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 4])
def test_the_muzero_agent_reaches_the_optimum_of_tiny_games(seed):
    problem = tiny(seed)
    optimum = exhaustive(problem, 60, 0, rules=RULES).solution.ret
    muzero = _quickstart_agent().replace(mode="muzero")
    outcome = fit(problem, muzero, rules=RULES, max_iterations=1500, padding=PAD,
                  stop_at=optimum - 1e-6)
    assert validate(problem, outcome.solution).ok
    assert outcome.solution.ret == pytest.approx(optimum, abs=1e-6)


@pytest.mark.slow  # the default run resumes the default (expert) mode bit for bit
def test_resume_from_a_checkpoint_continues_the_same_run_bit_for_bit(tmp_path):
    config = agent_config()
    problem = tiny(3)
    straight = fit(problem, config, rules=RULES, max_iterations=40, padding=PAD,
                   workdir=str(tmp_path / "straight"), checkpoint_every=100)
    first = fit(problem, config, rules=RULES, max_iterations=20, padding=PAD,
                workdir=str(tmp_path / "resumed"), checkpoint_every=1, schedule_iterations=40)
    assert first.history[-1]["iteration"] == 20
    # A kill after a logged chunk but before its checkpoint: that row must not survive.
    with open(tmp_path / "resumed" / "metrics.jsonl", "a") as f:
        f.write(json.dumps({**first.history[-1], "iteration": 30}) + "\n")
    resumed = fit(problem, config, rules=RULES, max_iterations=40, padding=PAD,
                  workdir=str(tmp_path / "resumed"))
    chex.assert_trees_all_equal(jax.device_get(straight.state), jax.device_get(resumed.state))
    drop = ("seconds", "game_moves_per_s")
    rows = lambda h: [{k: v for k, v in r.items() if k not in drop} for r in h]  # noqa: E731
    assert json.dumps(rows(straight.history)) == json.dumps(rows(resumed.history))
    with open(tmp_path / "resumed" / "metrics.csv") as f:
        assert len(f.readlines()) == 1 + 4
    solution = load_solution(str(tmp_path / "resumed" / "solution.json"))
    assert validate(problem, solution).ok
    assert solution.ret == pytest.approx(resumed.solution.ret)


DEVICES_SCRIPT = textwrap.dedent("""
    import json, sys
    import jax, numpy as np
    sys.path.insert(0, "tests")
    from builders import PAD, agent_config
    from jaxmmap import Rules, generate, make_instance
    from jaxmmap.agent import train

    assert jax.device_count() == 4
    problem = generate(1, num_instructions=5, inplace_prob=0.3, memory_fraction=0.4,
                       copy_bandwidth=1e6)
    instance = make_instance(problem, Rules(columns=32), num_buffers=PAD[0], num_steps=PAD[1],
                             num_tables=PAD[2])
    config = agent_config(updates_per_chunk=6)
    support = train.support_of(instance, config)
    out = {}
    for n in (1, 4):
        mesh = train.mesh(jax.devices()[:n])
        state = train.shard(train.init(instance, config, seed=0), mesh)
        state, metrics = train.run_chunk(state, instance, config=config, support=support)
        shards = len(state.replay.data.action.sharding.device_set)
        leaves = [np.asarray(x, np.float64).ravel() for x in jax.tree.leaves(state.learner.params)]
        out[n] = dict(shards=shards, params=np.concatenate(leaves).tolist(),
                      actions=np.asarray(state.replay.data.action).tolist(),
                      loss=np.asarray(metrics["loss"]).tolist())
    print(json.dumps(out))
""")


def test_one_device_mesh_keeps_the_state_on_its_device():
    # The fast smoke of `test_four_devices_give_the_results_of_one` (slow: a subprocess that
    # compiles the chunk for 1 and for 4 devices): the data-parallel layout on one device.
    config = agent_config()
    state = train.init(padded(tiny(1)), config, seed=0)
    sharded = train.shard(state, train.mesh(jax.devices()[:1]))
    assert len(sharded.replay.data.action.sharding.device_set) == 1
    chex.assert_trees_all_equal(jax.device_get(state), jax.device_get(sharded))


@pytest.mark.slow
def test_four_devices_give_the_results_of_one():
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=4",
               JAX_PLATFORMS="cpu")
    run = subprocess.run([sys.executable, "-c", DEVICES_SCRIPT], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    one, four = out["1"], out["4"]
    assert one["shards"] == 1 and four["shards"] == 4
    assert one["actions"] == four["actions"]  # the same games were played
    np.testing.assert_allclose(four["loss"], one["loss"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(four["params"], one["params"], rtol=1e-3, atol=1e-5)


def _config_file(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "configs", f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, ROOT)  # the config files import `configs.quickstart`
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(ROOT)
    return module.get_config()


def test_config_files_match_the_agent_configs():
    agent = lambda name: config_from_dict(**_config_file(name).agent.to_dict())  # noqa: E731
    assert agent("quickstart") == AgentConfig()
    assert agent("paper") == AgentConfig.paper()
    for mode in ("alphazero", "mcts", "no_search"):
        assert agent(mode) == AgentConfig(mode=mode)
    # the game: the paper's in configs/paper.py; the others leave it to muzero-prod (train.py)
    assert (_config_file("paper").placement, _config_file("paper").copy_supply) == ("grid", "near")
    assert (_config_file("quickstart").placement, _config_file("quickstart").copy_supply) == (None, None)


def test_configs_and_the_paper_table():
    paper = AgentConfig.paper()
    assert (paper.discount, paper.num_simulations, paper.batch_size, paper.replay_size) == (
        0.9999, 400, 512, 20_000)
    assert (paper.learning_rate, paper.weight_decay, paper.reanalyse_fraction) == (2e-4, 1e-4, 0.5)
    assert (paper.dirichlet_fraction, paper.dirichlet_alpha) == (0.25, 0.03)
    assert (paper.init_temperature, paper.final_temperature, paper.temperature_decay) == (
        1.0, 0.2, 0.4)  # Table 6: decayed after 400,000 of 1,000,000 steps
    temps = train.temperature(paper, jnp.asarray([0.0, 0.3999, 0.4, 1.0]))
    np.testing.assert_allclose(np.asarray(temps), [1.0, 1.0, 0.2, 0.2])
    quick = AgentConfig()  # the expert mode anneals geometrically over the run
    temps = np.asarray(expert.temperature(quick, jnp.asarray([0.0, 0.5, 1.0, 2.0])))
    np.testing.assert_allclose(temps, [1.0, np.sqrt(0.2), 0.2, 0.2], rtol=1e-6)
    with pytest.raises(ValueError, match="reanalyse"):
        AgentConfig(mode="alphazero", reanalyse_fraction=0.5)
    with pytest.raises(ValueError, match="must exceed"):
        AgentConfig(games=64, replay_size=640, unroll_steps=5, td_steps=10)


@pytest.mark.xdist_group("expert")
def test_the_evaluation_game_is_played_once_for_each_version_of_the_network():
    # The network's argmax game is deterministic: played again with the same parameters it is the
    # same game, so until the network learns again game 0 explores like the others; and however
    # often it learns, the next evaluation waits EVALUATION_GAP generations.
    problem = generate(2, num_instructions=30, memory_fraction=0.3)
    instance = make_instance(problem, RULES)
    gap = expert.EVALUATION_GAP
    # (jitted: eager, `begin` compiles its loops at every call, and this test calls it 72 times)
    begin = jax.jit(expert.begin, static_argnames="config")
    for config in (_expert(learning_rate=0.0, generations_per_chunk=1), _expert(generations_per_chunk=1)):
        state = expert.init(instance, config, seed=0)
        evaluations, learned, last, since = [], [], -gap, False
        for g in range(2 * gap + 4):
            evaluations.append(not bool(begin(state, instance, config=config).explore[0]))
            state, metrics = expert.run_chunk(state, instance, jnp.float32(0.5), config=config)
            learned.append(bool(metrics["learned"][0]))
            assert np.isfinite(metrics["evaluation_return"][0])  # (the last evaluation game's return)
            # the first generation evaluates; a later one once the network learned since the last
            # evaluation and the gap has passed
            assert evaluations[-1] == (g == 0 or (since and g - last >= gap))
            last, since = (g, learned[-1]) if evaluations[-1] else (last, since or learned[-1])
            assert bool(state.evaluated) == (not since)
        if config.learning_rate == 0:
            assert evaluations == [True] + [False] * (2 * gap + 3)
        else:
            assert sum(evaluations) >= 2 and sum(learned) > 2 * sum(evaluations)
