"""The generalist's guide (`agent.guide`): intent rows, the recorded guide, and the placer's reading of it."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmmap import Rules, generate, make_instance, validate
from jaxmmap.agent import generalist, guide
from jaxmmap.core.problem import COPY, DROP, NOCOPY
from jaxmmap.env import observation
from jaxmmap.env.rollout import nth_game, start
from jaxmmap.solvers import solve
from jaxmmap.solvers.heuristic import heuristic, play_plan
from jaxmmap.solvers.placer import GUIDE_CONFIDENCE, guided, place, place_nothing
from jaxmmap.solvers.simple import greedy


def test_the_intent_network_learns_over_all_three_moves():
    """`guide.fit` trains a network of the policy's config on intent rows with every move legal:
    a label the game could not play (Copy where only Drop was legal) is learned all the same."""
    config = generalist.GeneralistConfig(widths=(16,), steps=300, batch_size=64, learning_rate=1e-2, checkpoint_every=1000)
    rng = np.random.default_rng(0)
    phi = (0.1 * rng.normal(size=(256, observation.NUM_DECISION_FEATURES))).astype(np.float32)
    label = np.where(phi[:, 0] > 0, COPY, DROP).astype(np.int32)  # (a rule the features hold)
    out = guide.fit({"intent_phi": phi, "intent": label}, config, log=lambda line: None)
    logits = generalist.network(config).apply(out["params"], phi)[0]
    assert np.mean(np.argmax(np.asarray(logits), -1) == label) > 0.9 and out["accuracy"] > 0.9


def test_intent_rows_label_each_decided_buffer_with_the_teachers_own_decision():
    """The heuristic's plan, as the game plays it, loses uses the game cannot fit; the intent rows
    keep the plan's own decision for each buffer, legal in the game or not."""
    problem, rules = generate(7, num_instructions=60, memory_fraction=0.2), Rules()
    planned = np.asarray(heuristic(problem, 30, 0, rules=rules).solution.action, np.int32)
    played = np.asarray(play_plan(problem, planned, rules).action, np.int32)
    assert ((planned != DROP) & (played == DROP)).any()  # (the game lost some of the plan's uses)
    rows = guide.intent_rows(problem, rules, played, planned)
    instance = make_instance(problem, rules)
    phi, _, _, _, buffer, real = (np.asarray(x) for x in generalist.replayed(
        instance, jnp.asarray(np.pad(played, (0, instance.width.shape[0] - problem.num_buffers),
                                     constant_values=DROP))))
    assert len(rows["intent"]) == real.sum() >= problem.num_buffers
    np.testing.assert_array_equal(rows["intent"], planned[buffer[real]])
    np.testing.assert_array_equal(rows["intent_phi"], phi[real])
    assert set(np.unique(rows["intent"])) <= {COPY, NOCOPY, DROP}


def test_the_guided_game_is_the_networks_game_and_records_its_probabilities():
    problem = generate(5, num_instructions=30, inplace_prob=0.2)
    instance, (params, config, _) = make_instance(problem, Rules()), generalist.load()
    intent = generalist.load_intent()
    assert intent is not None  # (shipped beside the network)
    ctx, n = observation.context(instance), instance.width.shape[0]
    first = nth_game(start(instance, 1), 0)
    state, wish = guide.play(params, intent, ctx, first, guide.no_guide(n), jnp.int32(2 ** 30), jnp.bool_(False),
                             config=config)
    played = generalist.play(params, instance, config=config)
    np.testing.assert_array_equal(np.asarray(state.board.action), np.asarray(played.board.action))
    wish = np.asarray(wish)[:problem.num_buffers]
    np.testing.assert_allclose(wish.sum(1), 1.0, rtol=1e-5)  # every real buffer decided once at least
    # the first buffer's: the intent network's probabilities at the first state
    logits = generalist.network(config).apply(intent, observation.decision_features(first, ctx)[None])[0][0]
    np.testing.assert_allclose(wish[0], np.asarray(jax.nn.softmax(logits)), rtol=1e-4, atol=1e-6)
    # cut after 5 moves, then ended Drop-first: buffers past the cut keep no opinion
    state, wish = guide.play(params, intent, ctx, first, guide.no_guide(n), jnp.int32(5), jnp.bool_(False),
                             config=config)
    state, wish = guide.play(params, intent, ctx, state, wish, jnp.int32(2 ** 30), jnp.bool_(True), config=config)
    assert bool(state.done) and not bool(state.lost)
    wish = np.asarray(wish)
    assert np.isfinite(wish[:5]).all() and np.isnan(wish[5:]).all()
    assert (np.asarray(state.board.action)[5:problem.num_buffers] == DROP).all()


def test_guided_flips_only_the_uses_the_guide_is_sure_of():
    action = np.array([DROP, DROP, COPY, NOCOPY, DROP, COPY])
    sure, unsure = (1 + GUIDE_CONFIDENCE) / 2, 0.5
    g = np.array([[0.99, 0.0, 0.01], [0.0, 0.98, 0.02], [0.0, 0.0, 1.0], [0.1, 0.4, unsure],
                  [np.nan] * 3, [0.0, 0.0, sure]])
    np.testing.assert_array_equal(guided(action, g), [COPY, NOCOPY, DROP, NOCOPY, DROP, DROP])
    np.testing.assert_array_equal(action, [DROP, DROP, COPY, NOCOPY, DROP, COPY])  # (not changed)


@pytest.mark.slow  # (21 s on an empty compilation cache; by default the generalist's guide reaches the placer through
# `solve` in test_generalist.py, test_the_shipped_generalist_loads_and_plays_a_valid_placed_solution)
def test_the_placer_starts_from_a_guide_only_where_it_places_higher():
    """A guide that says "Drop" of everything the placement of no decisions serves is a worse
    start than that placement; one that says what that placement says changes nothing; the
    generalist's own guide, through `solve`, gives a valid written solution."""
    problem, rules = generate(3, num_instructions=60, memory_fraction=0.3), Rules()
    nothing = place_nothing(problem, rules=rules)
    served = nothing.action != DROP
    drop_all = np.where(served[:, None], [[0.0, 0.0, 1.0]], [[np.nan] * 3])
    game = greedy(problem, 30, 0, rules=rules).solution
    worse = place(problem, game, rules=rules, fresh=nothing, guide=drop_all, moves=0)
    assert worse.metadata["start"] != "guide" and worse.ret >= nothing.ret
    with pytest.raises(ValueError, match="guide must be"):
        place(problem, game, rules=rules, fresh=nothing, guide=drop_all[:3], moves=0)
    result = solve(problem, "generalist", budget_s=60, rules=rules)
    assert result.guide is not None and result.guide.shape == (problem.num_buffers, 3)
    assert result.info["placed_start"] in ("decisions", "nothing", "guide", "exact")
    assert validate(problem, result.solution).ok
    # the written solution is never below the placement the guide would start from
    again = place(problem, result.raw, rules=rules, fresh=nothing, guide=result.guide, moves=0)
    assert result.solution.ret >= again.ret - 1e-9


def test_without_a_guide_the_placer_is_unchanged():
    problem, rules = generate(4, num_instructions=40), Rules()
    game = heuristic(problem, 10, 0, rules=rules).solution  # (any valid solution; no game to compile)
    nothing = place_nothing(problem, rules=rules)
    no_opinion = np.full((problem.num_buffers, 3), np.nan)
    a = place(problem, game, rules=rules, fresh=nothing, moves=10)
    b = place(problem, game, rules=rules, fresh=nothing, moves=10, guide=no_opinion)
    np.testing.assert_array_equal(a.action, b.action)
    assert a.ret == b.ret
