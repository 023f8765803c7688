"""Properties of the reference game (the specification) on random programs and random play."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jaxmmap import Rules, generate, validate
from jaxmmap.core.problem import COPY, DROP, NOCOPY
from jaxmmap.env.reference import ReferenceGame

options = st.fixed_dictionaries({
    "num_instructions": st.integers(2, 40),
    "inplace_prob": st.floats(0, 0.6),
    "loop_prob": st.floats(0, 0.3),
    "memory_fraction": st.floats(0.05, 2.0),
    "zero_demand_prob": st.sampled_from([0.0, 0.3]),
    "oversize_prob": st.sampled_from([0.0, 0.2]),
    "zero_supply_prob": st.sampled_from([0.0, 0.3]),
    "latency_tables": st.booleans(),
})


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), opts=options, columns=st.sampled_from([8, 32, 256]),
       nocopy=st.sampled_from(["same", "lowest"]), play_seed=st.integers(0, 100))
def test_finished_games_are_valid_and_backup_never_loses(seed, opts, columns, nocopy, play_seed):
    problem = generate(seed, **opts)
    rules = Rules(columns=columns, nocopy_offset=nocopy)
    game = ReferenceGame(problem, rules, backup=True)
    rng = np.random.default_rng(play_seed)
    total = 0.0
    while not game.done:
        legal = game.legal_actions()
        assert legal.any(), "the Drop-backup never leaves a state without legal actions"
        total += game.step(int(rng.choice(np.flatnonzero(legal))))
    assert not game.lost
    assert np.isclose(total, game.board.ret)
    report = validate(problem, game.solution(), allow_nocopy_move=nocopy == "lowest")
    assert report.ok, str(report)


def test_all_drop_is_always_legal_from_the_start_and_scores_zero():
    problem = generate(3, num_instructions=30, inplace_prob=0.5, loop_prob=0.3)
    game = ReferenceGame(problem, Rules(columns=16))
    while not game.done:
        assert game.legal_actions()[DROP]
        assert game.step(DROP) == 0.0
    assert game.board.ret == 0.0 and validate(problem, game.solution()).ok


def test_copy_interval_is_the_latest_start_and_consumes_supply():
    """A hand-checked case: an input needing 2.5 supply before step 3 with supply 1 per step."""
    from jaxmmap.core.problem import Problem
    problem = Problem(
        name="hand", memory_size=100, supply=np.ones(5), size=np.array([10, 10]),
        is_output=np.array([True, False]), target_time=np.array([0, 4]), tensor_id=np.array([0, 0]),
        alias_id=np.array([-1, -1]), live_start=np.array([0, 0]), live_end=np.array([4, 4]),
        demand=np.array([0.0, 2.5]), benefit=np.array([1.0, 2.0]))
    game = ReferenceGame(problem, Rules(columns=10))
    game.step(DROP)
    place = game.placement(COPY)
    assert place.alloc == (1, 4) and place.copy == (1, 3)  # steps 3, 2 and half of 1
    scale = game.d.tick_scale
    assert place.use == {3: scale, 2: scale, 1: scale // 2}
    assert game.placement(NOCOPY) is None  # the dropped output left no allocation to extend
    game.step(COPY)
    assert game.board.supply.tolist() == [scale, scale // 2, 0, 0, scale]
