"""Deferred placement (`Rules(placement="deferred")`) and its copy supplies
(`Rules(copy_supply="early" | "edf")`): the JAX game equals the reference move by move, packing
included; every packed game is a valid solution; batches play the games played one by one."""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from test_game import COLUMNS, OPTION_SETS, _actions, _reference_play, _replay

from jaxmmap.core.problem import COPY, NOCOPY, ProblemError, Solution, load_solution, save_solution
from jaxmmap.core.rules import Rules
from jaxmmap.core.validator import validate
from jaxmmap.env import game, packer
from jaxmmap.env.generator import generate
from jaxmmap.env.instance import make_instance
from jaxmmap.env.packer import best_fit
from jaxmmap.env.reference import PACKING_ORDERS, ReferenceGame, lowest_fit
from jaxmmap.env.reference import best_fit as reference_best_fit
from jaxmmap.env.rollout import greedy_policy, nth_game, random_policy, rollout, rollouts, to_solution

SEEDS_PER_SET = 4


def _cases(edf=False):
    """The random games' programs and rules; `edf`: all with `copy_supply="edf"` (a static rule:
    its games are a batch of their own)."""
    cases = []
    for k, (name, opts) in enumerate(OPTION_SETS.items()):
        for seed in range(SEEDS_PER_SET):
            problem = generate(1000 * k + seed, num_instructions=16 + 4 * (seed % 8), **opts)
            rules = Rules(columns=COLUMNS, placement="deferred", copy_supply="edf" if edf else ("near", "early")[seed % 2],
                          output_nocopy=seed % 4 != 3)
            cases.append((f"{name}-{seed}", problem, rules))
    return cases


# (-m slow: the EDF supply's batch; by default test_edf_keeps_the_copy_that_early_supply_starves plays EDF)
@pytest.fixture(scope="module", params=[(False, False), (True, False), pytest.param((True, True), marks=pytest.mark.slow)],
                ids=["no_backup", "backup", "edf"])
def batch(request):
    backup, edf = request.param
    cases = _cases(edf)
    played = [_reference_play(p, r, backup, seed=i) for i, (_, p, r) in enumerate(cases)]
    final, records = _replay(backup)(*_actions(cases, played))
    return backup, cases, played, jax.device_get(final), jax.device_get(records)


def test_jax_equals_reference_move_by_move(batch):
    backup, cases, played, final, records = batch
    for c, ((name, problem, _), (ref, acts, rec)) in enumerate(zip(cases, played)):
        m, where = len(acts), f"{name} (backup={backup})"
        got = {k: v[c, :m] for k, v in records.items()}
        for key in ("mask", "placement", "cursor", "done", "lost"):
            np.testing.assert_array_equal(got[key], rec[key], err_msg=f"{key}, {where}")
        np.testing.assert_array_equal(got["supply"][:, : problem.num_steps], rec["supply"], err_msg=where)
        np.testing.assert_allclose(got["reward"], rec["reward"], rtol=1e-5, atol=1e-4, err_msg=where)
        np.testing.assert_allclose(got["ret"], rec["ret"], rtol=1e-5, atol=1e-4, err_msg=where)
        n, b = problem.num_buffers, ref.board
        np.testing.assert_array_equal(final.board.action[c, :n], b.action, err_msg=where)
        np.testing.assert_array_equal(final.board.offset[c, :n], b.offset, err_msg=where)
        np.testing.assert_array_equal(final.board.alloc_start[c, :n], b.alloc[:, 0], err_msg=where)
        np.testing.assert_array_equal(final.board.alloc_end[c, :n], b.alloc[:, 1], err_msg=where)
        copies = jax.vmap(game.copies)(final)
        for k in range(2):
            np.testing.assert_array_equal(copies[k][c, :n], b.copy[:, k], err_msg=where)


def test_the_cases_pack_restore_and_drop_what_does_not_fit(batch):
    """The random plays reach the end, some restore, some packings leave units out, and some
    inputs' copies end early."""
    backup, cases, played, _, _ = batch
    packed = [ref.packed for ref, _, _ in played if ref.packed is not None]
    assert len(packed) >= len(cases) // 2
    assert sum(p["unplaced"] > 0 for p in packed) >= 2
    assert "widest" in {p["order"] for p in packed} <= set(PACKING_ORDERS)
    early_ends = sum(int(np.sum(~problem.is_output & (ref.board.copy[:, 1] >= 0)
                                & (ref.board.copy[:, 1] < problem.target_time - 1)))
                     for (_, problem, _), (ref, _, _) in zip(cases, played))
    assert early_ends >= 3  # inputs' copies that met another's and ended before their target's step
    if backup:
        assert sum(ref.restores for ref, _, _ in played) >= 5


def test_every_packed_game_is_a_valid_solution(batch):
    backup, cases, played, _, _ = batch
    for (name, problem, _), (ref, _, _) in zip(cases, played):
        if ref.done and not ref.lost:
            report = validate(problem, ref.solution())
            assert report.ok, (name, report)
            assert ref.solution().ret == pytest.approx(ref.board.ret, rel=1e-9)


def test_best_fit_and_lowest_fit_equal_the_reference():
    rng = np.random.default_rng(0)
    fit = jax.jit(best_fit, static_argnums=2)
    for _ in range(200):
        blocked = rng.random(64) < rng.choice([0.1, 0.4, 0.8])
        width = int(rng.integers(0, 20))
        words = jnp.asarray(np.packbits(blocked.reshape(2, 32)[:, ::-1], axis=1, bitorder="big").view(">u4").ravel()
                            .astype(np.uint32))
        assert int(fit(words, width, False)) == reference_best_fit(blocked, width)
        assert int(fit(words, width, True)) == lowest_fit(blocked, width)
        assert lowest_fit(blocked, width) == next((o for o in range(65 - width) if not blocked[o:o + width].any()), -1)


def test_the_rows_a_unit_with_gaps_holds_equal_the_reference():
    """An alias group whose allocations leave gaps between them holds only their rows: the load's
    peak over the steps a move would add to it (`Candidates.level`) equals the reference's at
    every move where the unit's rows have gaps (read along the group's chain of buffers)."""
    checked, partly = 0, 0
    for seed in (0, 2, 4):  # (programs where such moves come up: few do)
        problem = generate(seed, num_instructions=40, inplace_prob=0.6, loop_prob=0.4, skip_prob=0.6,
                           memory_fraction=0.3, copy_bandwidth=1e6)
        rules = Rules(columns=COLUMNS, placement="deferred")
        ref, state = ReferenceGame(problem, rules, backup=True), game.init(make_instance(problem, rules), backup=True)
        step, rng = jax.jit(game.step), np.random.default_rng(0)
        while not ref.done:
            mask = ref.legal_actions()
            np.testing.assert_array_equal(np.asarray(game.legal_action_mask(state)), mask)
            for a in (COPY, NOCOPY):
                pl = ref.placement(a)
                held = None if pl is None or pl.alloc is None else ref.board.rows.get(pl.offset)
                rows = np.flatnonzero(held) if held is not None else []
                if len(rows) and rows[-1] - rows[0] + 1 != len(rows):  # (the unit's rows have a gap)
                    new = ref._new_rows(pl.alloc, pl.offset)
                    assert int(state.candidates.level[a]) == (int(ref.board.load[new].max()) if new else 0)
                    checked += 1
                    partly += 0 < len(new) < pl.alloc[1] - pl.alloc[0] + 1
            weights = mask * np.array([0.45, 0.4, 0.15])
            a = int(rng.choice(3, p=weights / weights.sum()))
            ref.step(a)
            state = step(state, a)
    assert checked >= 30 and partly >= 15  # (the unit holds some of the move's steps, not all)


def test_greedy_games_validate_and_the_batch_plays_them_one_by_one():
    problem = generate(7, num_instructions=60, memory_fraction=0.3, inplace_prob=0.3, loop_prob=0.2)
    rules = Rules(columns=128, placement="deferred", copy_supply="early")
    instance = make_instance(problem, rules)
    state = jax.jit(lambda k: rollout(instance, k, greedy_policy, backup=True))(jax.random.key(0))
    solution = to_solution(problem, state, rules)
    assert validate(problem, solution).ok
    assert solution.rules["placement"] == "deferred"
    keys = jax.random.split(jax.random.key(1), 8)
    batch = jax.jit(lambda k: rollouts(instance, k, random_policy, backup=True))(keys)
    alone = jax.jit(lambda k: rollout(instance, k, random_policy, backup=True))
    for g in range(8):
        one, mine = alone(keys[g]), nth_game(batch, g)
        chex.assert_trees_all_equal(mine.board.records, one.board.records)
        assert float(mine.board.ret) == float(one.board.ret)
        assert validate(problem, to_solution(problem, mine, rules)).ok


def test_the_deferred_game_keeps_more_of_the_heuristics_plan():
    """The heuristic's plan, replayed with its fallbacks: the load profile and the packer keep
    more of it than the grid's lowest offsets (here 0.97 against 0.91 of its return)."""
    from jaxmmap.solvers import solve

    problem = generate(108, num_instructions=300)
    heuristic = solve(problem, "heuristic", budget_s=5, seed=0, rules=Rules(columns=256)).solution
    kept = {}
    for name, rules in (("paper", Rules(columns=256)), ("deferred", Rules(columns=256, placement="deferred"))):
        ref = ReferenceGame(problem, rules, backup=True)
        order = {0: (0, 1, 2), 1: (1, 0, 2), 2: (2, 1, 0)}
        while not ref.done:
            legal = ref.legal_actions()
            ref.step(next(a for a in order[int(heuristic.action[ref.board.cursor])] if legal[a]))
        assert validate(problem, ref.solution()).ok
        kept[name] = ref.board.ret / heuristic.ret
    assert kept["deferred"] > kept["paper"] + 0.03, kept


def test_rules_are_checked_and_written():
    with pytest.raises(ProblemError, match="placement"):
        Rules(placement="later")
    with pytest.raises(ProblemError, match="copy_supply"):
        Rules(copy_supply="late")
    with pytest.raises(ProblemError, match="edf"):
        Rules(copy_supply="edf")  # (a rule of deferred placement)
    with pytest.raises(ProblemError, match="nocopy_offset"):
        Rules(placement="deferred", nocopy_offset="lowest")
    assert "placement" not in Rules().to_json()  # files of the paper's game stay as they were
    assert Rules(placement="deferred").to_json()["placement"] == "deferred"


def test_a_solution_file_keeps_its_rules(tmp_path):
    problem = generate(3, num_instructions=20)
    rules = Rules(columns=64, placement="deferred", copy_supply="early")
    ref = ReferenceGame(problem, rules, backup=True)
    while not ref.done:
        ref.step(int(np.argmax(ref.legal_actions())))
    path = tmp_path / "s.json"
    save_solution(ref.solution(), str(path))
    again = load_solution(str(path))
    assert isinstance(again, Solution) and again.rules["copy_supply"] == "early"


def test_a_game_ending_below_its_pack_floor_is_lost():
    # The search's shortcut (`game.step`'s `pack_floor`): a game whose return before packing is
    # below the floor ends lost at its last move, unpacked, and one whose packings all end below
    # it is lost too (each but the first stops early); at or below its packed return, or without
    # a floor, it is the game it was. Packing only leaves units out, so on the generated programs
    # (benefits >= 0, latency tables gaining from every member) what it can add is 0.
    problem = generate(7, num_instructions=60, memory_fraction=0.3, inplace_prob=0.3, loop_prob=0.2)
    instance = make_instance(problem, Rules(columns=128, placement="deferred", copy_supply="early"))
    step = jax.jit(game.step)
    init = game.init(instance, backup=True)

    @jax.jit
    def move(state):  # greedy's move, and the return after it before packing
        action = greedy_policy(jax.random.key(0), state)
        return action, state.board.ret + game.action_rewards(state)[action]

    def play(floor):  # greedy's game, and its return after the last move before packing
        state, unpacked = init, None
        while not bool(state.done):
            action, unpacked = move(state)
            state = step(state, action, None if floor is None else jnp.float32(floor))
        return state, float(unpacked)

    plain, unpacked = play(None)
    packed = float(plain.board.ret)
    assert bool(plain.done) and not bool(plain.lost) and packed < unpacked - 0.05  # (the packing left units out)
    for floor in (packed, packed - 1.0, -np.inf):
        same, _ = play(floor)
        chex.assert_trees_all_equal(same.board, plain.board)
    for floor in (packed + 1e-3, unpacked, unpacked + 1e-3):
        cut, _ = play(floor)
        assert bool(cut.done) and bool(cut.lost), floor
    assert float(packer.dropping_gain_bound(instance)) == 0.0
    negative = instance.replace(benefit=instance.benefit.at[3].set(-2.5))
    assert float(packer.dropping_gain_bound(negative)) == pytest.approx(2.5)
    k = int(np.max(np.asarray(instance.table)))
    if k >= 0:  # a table that loses by a member it adds: its span
        row = instance.gain[k].at[1].set(float(instance.gain[k].max()) + 7.0)
        dented = instance.replace(gain=instance.gain.at[k].set(row))
        assert float(packer.dropping_gain_bound(dented)) >= 7.0


@pytest.mark.slow  # (9 s on an empty compilation cache; by default test_a_game_ending_below_its_pack_floor_is_lost)
def test_the_packer_with_a_floor_returns_the_same_packing_above_it():
    # `packer.pack(floor=...)`: the packings after the first stop once what they left out puts
    # them below the floor, and never win; where the packing without a floor is above it (by more
    # than the tie tolerance) it is the same packing, else the return is below the floor.
    problem = generate(11, num_instructions=60, memory_fraction=0.25, inplace_prob=0.3, loop_prob=0.2)
    instance = make_instance(problem, Rules(columns=64, placement="deferred", copy_supply="early"))
    step = jax.jit(game.step)
    pack = jax.jit(packer.pack)
    changed = 0
    for seed in range(4):
        state, key = game.init(instance, backup=True), jax.random.key(seed)
        while not bool(state.done):  # (a floor no game reaches: each ends lost, unpacked)
            key, k = jax.random.split(key)
            state = step(state, random_policy(k, state), jnp.float32(np.inf))
        board = state.board
        plain = pack(instance, board)
        ret = float(plain.ret)
        whole = float(packer._return(instance, packer._placed(board))[0])  # (every unit placed)
        for floor in (ret - 1.0, ret - 1e-3, ret + 1e-3, (ret + whole) / 2, whole + 1.0):
            floor = float(jnp.float32(floor))
            cut = pack(instance, board, jnp.float32(floor))
            if ret >= floor + 2e-5 * abs(ret) + 1e-7:  # (above the packings' tie tolerance)
                chex.assert_trees_all_equal(cut, plain)
            elif ret < floor:
                assert float(cut.ret) < floor
                changed += float(cut.ret) != ret
    assert changed >= 2  # (below the floor, stopped packings and skipped ones change the result)



def test_edf_keeps_the_copy_that_early_supply_starves():
    """`copy_supply="edf"`: the heuristic's plan keeps a copy the early supply refused, by taking
    over, at its last step, supply a copy of a later deadline had taken; the reference does the
    same take-over, and the game validates."""
    from jaxmmap.core.rules import auto_columns
    from jaxmmap.solvers.heuristic import heuristic, play_plan

    problem = generate(2, num_instructions=60)
    columns = auto_columns(problem)
    plan = heuristic(problem, 30.0, 0, rules=Rules(columns=columns), pins="compare", moves=0).solution
    changed, played = {}, {}
    for supply in ("early", "edf"):
        played[supply] = play_plan(problem, plan.action, Rules(columns=columns, placement="deferred", copy_supply=supply))
        assert validate(problem, played[supply]).ok
        changed[supply] = int(np.sum(played[supply].action != plan.action))
    assert changed == {"early": 1, "edf": 0}
    assert played["edf"].ret > played["early"].ret
    ref, taken = ReferenceGame(problem, Rules(columns=columns, placement="deferred", copy_supply="edf")), 0
    for a in played["edf"].action:
        pl = ref.placement(int(a))
        taken += pl.shift is not None and pl.shift[0] > 0
        ref.step(int(a))
    assert taken >= 1 and ref.board.ret == pytest.approx(played["edf"].ret, rel=1e-5)
