"""The Jumanji-style environment wrapper and the jitted rollouts."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmmap import Environment, Rules, generate, make_instance, play, rollout, validate
from jaxmmap.core import suite
from jaxmmap.env import FIRST, LAST, MID, game
from jaxmmap.env.backup import TOGETHER_BELOW, restores_together, together
from jaxmmap.env.instance import stack
from jaxmmap.env.rollout import (
    advance,
    density_policy,
    generation_games,
    greedy_policy,
    placement_densities,
    random_policy,
    rollouts,
    start,
)

RULES = Rules(columns=64)
PAD = dict(num_buffers=256, num_steps=64, num_tables=64)


def test_reset_step_timesteps_and_returns():
    problem = generate(2, num_instructions=25, inplace_prob=0.3)
    env = Environment(make_instance(problem, RULES, **PAD), backup=True)
    state, ts = jax.jit(env.reset)(jax.random.key(0))
    assert int(ts.step_type) == FIRST and ts.observation.legal.shape == (3,)
    step = jax.jit(env.step)
    total, types = 0.0, []
    while not bool(state.done):
        np.testing.assert_array_equal(ts.observation.legal, game.legal_action_mask(state))
        action = jnp.argmax(ts.observation.legal * jnp.array([1, 2, 3]))  # prefer Drop
        state, ts = step(state, action)
        total += float(ts.reward)
        types.append(int(ts.step_type))
    assert types[-1] == LAST and set(types[:-1]) <= {MID} and float(ts.discount) == 0.0
    np.testing.assert_allclose(total, float(state.board.ret), rtol=1e-5, atol=1e-6)
    assert np.all(np.asarray(state.board.action)[: problem.num_buffers] >= 0)


def test_vmapped_rollouts_over_keys():
    problem = generate(6, num_instructions=30, inplace_prob=0.3, memory_fraction=0.3)
    instance = make_instance(problem, RULES, **PAD)
    keys = jax.random.split(jax.random.key(1), 16)
    states = jax.jit(jax.vmap(lambda k: rollout(instance, k, random_policy, backup=True)))(keys)
    assert np.all(np.asarray(states.done)) and not np.any(np.asarray(states.lost))
    returns = np.asarray(states.board.ret)
    assert returns.shape == (16,) and np.unique(returns).size > 1  # the games differ


@pytest.mark.parametrize("max_moves", [None, pytest.param(37, marks=pytest.mark.slow)])  # (-m slow: in slices)
def test_rollouts_play_each_game_as_rollout_does(max_moves):
    problem = generate(6, num_instructions=30, inplace_prob=0.3, memory_fraction=0.3)
    instance = make_instance(problem, RULES, **PAD)
    keys = jax.random.split(jax.random.key(3), 8)
    # (the limit is traced, so that both cases run the same two programs: one compile each)
    limit = jnp.int32(game.move_limit(PAD["num_buffers"]) if max_moves is None else max_moves)
    one = jax.vmap(lambda k, m: rollout(instance, k, random_policy, backup=True, max_moves=m), in_axes=(0, None))
    batch = jax.jit(lambda k, m: rollouts(instance, k, random_policy, backup=True, max_moves=m))(keys, limit)
    expected = jax.jit(one)(keys, limit)
    moves = np.asarray(batch.moves)
    if max_moves is None:
        assert np.unique(moves).size > 1 and np.all(np.asarray(batch.done))  # games of different lengths
    else:
        assert np.all(moves == max_moves) and not np.any(np.asarray(batch.done))  # cut by the limit
    jax.tree.map(np.testing.assert_array_equal, batch.replace(instance=None), expected.replace(instance=None))


def test_rollouts_of_stacked_instances_and_per_game_policies():
    rules = RULES
    problems = [generate(s, num_instructions=20 + 5 * s, inplace_prob=0.3) for s in range(3)]
    instances = stack([make_instance(p, rules, **PAD) for p in problems])
    keys = jax.random.split(jax.random.key(0), 3)
    prefer = jnp.array([0, 1, 2])  # game i prefers action i when legal

    def policy(first):
        return lambda key, state: jnp.where(state.candidates.legal[first], first,
                                            greedy_policy(key, state)).astype(jnp.int32)

    out = jax.jit(lambda inst, k: rollouts(inst, k, policy, backup=True, params=prefer, stacked=True))(instances, keys)
    alone = jax.jit(lambda inst, k, first: rollout(inst, k, policy(first), backup=True))  # (one compile)
    for i in range(3):
        single = alone(make_instance(problems[i], rules, **PAD), keys[i], prefer[i])
        np.testing.assert_array_equal(np.asarray(out.board.action[i]), np.asarray(single.board.action))
        assert float(out.board.ret[i]) == float(single.board.ret)


def test_rollouts_copy_no_game_state_per_move():
    """The loop over moves updates the state in place: no copy or select of a per-buffer record
    array or of the grid's planes inside it (the cost of `vmap(rollout)` before), and none in the
    loops nested in it either: a Drop-backup restore replays its moves on its own game alone
    (`backup.one_game_at_a_time`; under a plain `vmap`, every replayed move of one game selected
    the whole batch's boards: batched play fell 16-85x)."""
    instance = make_instance(generate(6, num_instructions=30, inplace_prob=0.3), RULES, **PAD)
    batch = 4
    run = jax.jit(lambda k: rollouts(instance, jax.random.split(k, batch), random_policy, backup=True))
    with restores_together(False):  # (the CPU's way; an accelerator's is a plain vmap: the test below)
        hlo = run.lower(jax.random.key(0)).compile().as_text()
    loops = hlo.split("ENTRY")[0]  # every computation but the entry: the loops' bodies and what they call
    records, planes = f"[{batch},{PAD['num_buffers']}]", f"[{batch},2,{PAD['num_steps']}"
    copies = [line for line in loops.splitlines()
              if (re.search(r" copy\(", line) and any(s in line.split("=")[1][:40] for s in (records, planes)))
              or (re.search(r" select\(", line) and planes in line.split("=")[1][:40])]
    assert not copies, copies
    assert re.search(r" while\(", loops)  # (the restore's loops are there)


@pytest.mark.parametrize("checkpoints", [0, pytest.param(2, marks=pytest.mark.slow)])  # (-m slow: with checkpoints)
def test_restores_together_play_the_games_restores_one_at_a_time_play(checkpoints):
    """A batch's restores and checkpoints as a plain `vmap` (an accelerator's default,
    `backup.together`) play exactly the games that one game at a time (the CPU's) plays."""
    instance = make_instance(generate(3, num_instructions=40, inplace_prob=0.3), RULES, **PAD)
    keys = jax.random.split(jax.random.key(1), 8)

    def play(on):
        def run(keys):
            with restores_together(on):
                states = start(instance, 8, checkpoints=checkpoints)
                return advance(states, keys, random_policy, moves=10 * PAD["num_buffers"])[0]
        return jax.jit(run)(keys)

    apart, together = play(False), play(True)
    assert int(np.sum(np.asarray(apart.restores))) > 0 and bool(np.all(np.asarray(apart.done)))
    for field in ("action", "offset", "ret"):
        np.testing.assert_array_equal(np.asarray(getattr(together.board, field)),
                                      np.asarray(getattr(apart.board, field)))
    np.testing.assert_array_equal(np.asarray(together.restores), np.asarray(apart.restores))
    if checkpoints:
        np.testing.assert_array_equal(np.asarray(together.checkpoints.valid), np.asarray(apart.checkpoints.valid))


def test_an_accelerator_restores_together_on_small_programs_only(monkeypatch):
    assert not together(300)  # the CPU: one game at a time, at every size
    monkeypatch.setattr(jax, "default_backend", lambda: "gpu")
    assert together(300) and not together(TOGETHER_BELOW)
    with restores_together(False):
        assert not together(300)
        with restores_together():
            assert together(TOGETHER_BELOW)


def test_greedy_takes_a_legal_action_of_the_largest_immediate_reward_at_every_move():
    problem = generate(8, num_instructions=30)
    instance = make_instance(problem, RULES, **PAD)
    state = game.init(instance, backup=True)
    step, key, total = jax.jit(game.step), jax.random.key(0), 0.0
    while not bool(state.done):
        legal = np.asarray(game.legal_action_mask(state))
        rewards = np.where(legal, np.asarray(game.action_rewards(state)), -np.inf)
        action = int(greedy_policy(key, state))
        assert legal[action] and rewards[action] == rewards.max()
        assert action == int(np.argmax(rewards))  # ties: Copy, then NoCopy, then Drop
        state = step(state, action)
        total += float(state.reward)
    whole = jax.jit(lambda k: rollout(instance, k, greedy_policy, backup=True))(key)
    assert float(whole.board.ret) == pytest.approx(float(state.board.ret))
    assert float(state.board.ret) > 0.0
    assert total == pytest.approx(float(state.board.ret), rel=1e-5)


def test_density_greedy_places_the_densest_use_that_can_pay_at_every_move():
    # latency tables: a roofline operand's reward comes only once the table's other operands are
    # placed; its potential (the best reachable gain with it minus without) comes at once
    problem = suite.load("lstm_infer@tpu_v4i-30")
    instance = make_instance(problem, Rules(columns=64, placement="deferred"))
    state = game.init(instance, backup=True)
    step, key, least = jax.jit(game.step), jax.random.key(0), 0.002
    policy, potential = jax.jit(density_policy(jnp.float32(least))), jax.jit(game.placement_potential)
    densities_of = jax.jit(placement_densities)
    early = 0  # moves whose potential is above the immediate reward
    while not bool(state.done):
        i = int(state.board.cursor)
        legal, cand = np.asarray(game.legal_action_mask(state)), state.candidates
        table = int(instance.table[i])
        if table >= 0:
            gain, placed = np.asarray(instance.gain[table], np.float64), int(state.board.table_mask[table])
            bit, masks = 1 << int(instance.table_bit[i]), np.arange(256)
            reach = (masks & placed) == placed
            want = max(gain[reach & (masks & bit != 0)].max() - gain[reach & (masks & bit == 0)].max(),
                       float(game.action_rewards(state)[0]))
            early += want > float(game.action_rewards(state)[0]) + 1e-6
        else:
            want = float(instance.benefit[i])
        assert float(potential(state)) == pytest.approx(want, abs=1e-5)
        room = [int(instance.width[i]) * (int(cand.alloc_end[a]) - int(cand.alloc_start[a]) + 1)
                if int(cand.alloc_start[a]) >= 0 else 0 for a in (0, 1)]
        density = [want / r if r else np.inf for r in room]
        ok = [bool(legal[a]) and want > 0 and density[a] >= least for a in (0, 1)]
        densities, can = densities_of(state)
        np.testing.assert_allclose(np.asarray(densities), density, rtol=1e-5)
        assert [bool(c) and density[a] >= least for a, c in enumerate(np.asarray(can))] == ok
        action = int(policy(key, state))
        if any(ok):
            assert ok[action] and density[action] == max(d for d, o in zip(density, ok) if o)
        else:
            assert action == [a for a in (2, 1, 0) if legal[a]][0]  # Drop first
        state = step(state, action)
    assert early > 0 and float(state.board.ret) > 0.0


@pytest.mark.slow  # (9 s on an empty compilation cache; by default `jaxmmap play` in test_cli.py)
def test_play_returns_validated_best_solution():
    problem = generate(9, num_instructions=30, inplace_prob=0.2)
    solution, summary = play(problem, "random", games=32, rules=RULES)
    instance = make_instance(problem, RULES)
    keys = jax.random.split(jax.random.key(0), 32)  # play's games, replayed one by one
    one = jax.jit(lambda k: rollout(instance, k, random_policy, backup=True))
    games = [one(k) for k in keys]
    returns = np.array([-np.inf if bool(g.lost) else float(g.board.ret) for g in games])
    assert np.unique(returns).size > 1  # the random games differ
    assert summary["best_return"] == pytest.approx(returns.max(), rel=1e-5)
    assert summary["mean_return"] == pytest.approx(np.where(np.isfinite(returns), returns, 0).mean(), rel=1e-5)
    assert validate(problem, solution).ok
    assert solution.ret == pytest.approx(summary["best_return"], rel=1e-5)
    assert solution.solver == "random"


def test_the_searches_play_fewer_games_per_generation_on_large_programs():
    sizes = [127, 1189, 2048, 3277, 11645, 50000]
    assert [generation_games(n, 64) for n in sizes] == [64, 64, 64, 32, 8, 8]  # the agent's expert mode
    assert [generation_games(n, 32) for n in sizes] == [32, 32, 32, 32, 8, 8]  # ES's population
    assert generation_games(3277, 16) == 16
