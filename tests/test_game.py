"""The JAX game equals the reference game, move by move, on many generated instances.

The reference plays random legal action sequences (biased towards placing buffers, so that
memory fills up, alias groups conflict and the Drop-backup is exercised); the JAX game replays
the same actions for a whole batch of instances at once (`vmap` over instances padded to one
shape, `lax.scan` over moves), and every observable is compared.
"""

import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmmap.core.rules import Rules
from jaxmmap.core.validator import validate
from jaxmmap.env import game, moves
from jaxmmap.env import grid as memory
from jaxmmap.env.generator import generate
from jaxmmap.env.instance import make_instance, stack
from jaxmmap.env.reference import ReferenceGame
from jaxmmap.env.rollout import greedy_policy, rollout, to_solution

PAD = dict(num_buffers=256, num_steps=64, num_tables=64)  # one compiled shape for every case
COLUMNS = 64
MAX_MOVES = 400

OPTION_SETS = {
    "plain": dict(),
    "aliased": dict(inplace_prob=0.5, loop_prob=0.2),
    "tight": dict(memory_fraction=0.15, inplace_prob=0.3, loop_prob=0.1),
    "loose": dict(memory_fraction=1.5),
    "zero_demand": dict(zero_demand_prob=0.4, inplace_prob=0.2),
    "oversize": dict(oversize_prob=0.2, inplace_prob=0.2),
    "zero_supply": dict(zero_supply_prob=0.4, loop_prob=0.2),
    "tables": dict(latency_tables=True, inplace_prob=0.2),
    "skips": dict(skip_prob=0.8, max_inputs=4, memory_fraction=0.3),
    # alias groups whose rows have gaps (loops read through skips), with copies fast enough to
    # place them: the records' path
    "gaps": dict(inplace_prob=0.6, loop_prob=0.4, skip_prob=0.6, memory_fraction=0.6, copy_bandwidth=4e5),
}
SEEDS_PER_SET = 12


def _cases(backup):
    cases = []
    for k, (name, opts) in enumerate(OPTION_SETS.items()):
        for seed in range(SEEDS_PER_SET):
            nocopy = "lowest" if seed % 3 == 2 else "same"
            problem = generate(1000 * k + seed, num_instructions=16 + 4 * (seed % 8), **opts)
            rules = Rules(columns=COLUMNS, nocopy_offset=nocopy, output_nocopy=seed % 4 != 3)
            cases.append((f"{name}-{seed}", problem, rules))
    return cases


def _reference_play(problem, rules, backup, seed):
    """Plays random legal moves; returns the actions and per-move records."""
    ref = ReferenceGame(problem, rules, backup=backup)
    rng = np.random.default_rng(seed)
    keys = ("mask", "placement", "reward", "cursor", "ret", "supply", "done", "lost")
    actions, rec = [], {k: [] for k in keys}
    while not ref.done and len(actions) < MAX_MOVES:
        mask = ref.legal_actions()
        weights = mask * np.array([0.45, 0.4, 0.15])
        a = int(rng.choice(3, p=weights / weights.sum()))
        rec["mask"].append(mask)
        pl = ref.placement(a)  # the chosen action's offset, allocation and copy interval
        rec["placement"].append([pl.offset, *(pl.alloc or (-1, -1)), *(pl.copy or (-1, -1))])
        rec["reward"].append(ref.step(a))
        rec["cursor"].append(ref.board.cursor)
        rec["ret"].append(ref.board.ret)
        rec["supply"].append(ref.board.supply.copy())
        rec["done"].append(ref.done)
        rec["lost"].append(ref.lost)
        actions.append(a)
    return ref, actions, {k: np.array(v) for k, v in rec.items()}


def _group_check_paths(state):
    """int32[2]: of the current buffer's two rectangles, how many a placed group checks on the
    grid past its own cells, and how many it checks on the records."""
    inst, board = state.instance, state.board
    i = jnp.minimum(board.cursor, inst.width.shape[0] - 1)
    ctx = moves.context(inst, board, i)
    placed = (ctx["status"] == game.PLACED) & ~state.done
    c = state.candidates
    starts, ends = c.alloc_start[:2], c.alloc_end[:2]
    _, scan = moves._outside_own_cells(ctx, placed, starts, ends)
    overlap = (ctx["hull_start"] >= 0) & (starts <= ctx["hull_end"]) & (ends >= ctx["hull_start"])
    return jnp.stack([jnp.sum(placed & overlap & ~scan & (starts >= 0)), jnp.sum(scan)])


@functools.cache
def _replay(backup, checkpoints=0):
    return jax.jit(jax.vmap(_one_game(backup, checkpoints)))


def _one_game(backup, checkpoints=0):
    def one(instance, actions):
        def move(state, a):
            mask, c = game.legal_action_mask(state), state.candidates
            placement = jnp.stack([c.offset[a], c.alloc_start[a], c.alloc_end[a], c.copy_start[a],
                                   c.copy_end[a]])
            paths = _group_check_paths(state)
            state = game.step(state, a)
            out = dict(paths=paths, mask=mask, placement=placement, reward=state.reward,
                       cursor=state.board.cursor, ret=state.board.ret,
                       supply=game.remaining_supply(state.board), done=state.done, lost=state.lost)
            return state, out
        return jax.lax.scan(move, game.init(instance, backup=backup, checkpoints=checkpoints), actions)
    return one


def _actions(cases, played):
    actions = np.full((len(cases), MAX_MOVES), game.DROP, np.int32)
    for row, (_, acts, _) in zip(actions, played):
        row[: len(acts)] = acts
    instances = stack([make_instance(p, r, **PAD) for _, p, r in cases])
    return instances, jnp.asarray(actions)


def _play_batch(backup):
    cases = _cases(backup)
    played = [_reference_play(p, r, backup, seed=i) for i, (_, p, r) in enumerate(cases)]
    final, records = _replay(backup)(*_actions(cases, played))
    return cases, played, jax.device_get(final), jax.device_get(records)


# One worker runs the whole module, so that each `batch` (a reference game per case, replayed) is made once
# (pytest-xdist --dist loadgroup).
pytestmark = pytest.mark.xdist_group("game")


@pytest.fixture(scope="module", params=[False, True], ids=["no_backup", "backup"])
def batch(request):
    return request.param, _play_batch(request.param)


def test_jax_equals_reference_move_by_move(batch):
    backup, (cases, played, final, records) = batch
    for c, ((name, problem, _), (ref, acts, rec)) in enumerate(zip(cases, played)):
        m = len(acts)
        got = {k: v[c, :m] for k, v in records.items()}
        where = f"{name} (backup={backup})"
        np.testing.assert_array_equal(got["mask"], rec["mask"], err_msg=f"legal masks, {where}")
        np.testing.assert_array_equal(got["placement"], rec["placement"],
                                      err_msg=f"offset, allocation and copy of each move, {where}")
        np.testing.assert_array_equal(got["cursor"], rec["cursor"], err_msg=f"cursor, {where}")
        np.testing.assert_array_equal(got["supply"][:, : problem.num_steps], rec["supply"],
                                      err_msg=f"remaining supply W, {where}")
        np.testing.assert_array_equal(got["done"], rec["done"], err_msg=f"done, {where}")
        np.testing.assert_array_equal(got["lost"], rec["lost"], err_msg=f"lost, {where}")
        np.testing.assert_allclose(got["reward"], rec["reward"], rtol=1e-5, atol=1e-4, err_msg=where)
        np.testing.assert_allclose(got["ret"], rec["ret"], rtol=1e-5, atol=1e-4, err_msg=where)
        n = problem.num_buffers
        b = ref.board
        np.testing.assert_array_equal(final.board.action[c, :n], b.action, err_msg=where)
        np.testing.assert_array_equal(final.board.offset[c, :n], b.offset, err_msg=where)
        for k, name_ in enumerate(("alloc_start", "alloc_end")):
            np.testing.assert_array_equal(getattr(final.board, name_)[c, :n], b.alloc[:, k], err_msg=where)
        copies = jax.vmap(game.copies)(final)
        for k in range(2):
            np.testing.assert_array_equal(copies[k][c, :n], b.copy[:, k], err_msg=where)
        assert int(final.restores[c]) == ref.restores


def test_checkpoints_change_no_move(batch):
    """With checkpoints, restores replay from the nearest one below their point instead of the
    backup, and every observable of every move is the same."""
    backup, (cases, played, _, records) = batch
    if not backup:
        pytest.skip("checkpoints serve the Drop-backup")
    final, got = jax.device_get(_replay(True, checkpoints=3)(*_actions(cases, played)))
    for key in ("mask", "placement", "cursor", "supply", "done", "lost"):
        np.testing.assert_array_equal(got[key], records[key], err_msg=key)
    np.testing.assert_allclose(got["ret"], records["ret"], rtol=1e-6, atol=1e-5)
    # some restores went back past a checkpoint (so they replayed from one), and some were kept
    every = np.asarray(final.checkpoints.every)
    kept = [k >= e for (ref, _, _), e in zip(played, every) for k in ref.kept]
    assert sum(kept) >= 5 and np.any(final.checkpoints.valid)


def test_a_game_alone_plays_the_moves_of_the_batch(batch, monkeypatch):
    """A game played alone (or as a batch of one) on a grid wider than `grid.WINDOW` words writes
    its rectangles a window of words at a time (`grid._fill_window`), a batch every game's two
    end blocks whole; with windows of one word, every case played alone makes the batch's moves.
    (With `grid.CHUNKED_FROM` at 0, as on large programs, the grid keeps sub summaries and is
    read in short runs, and the game alone updates the supply's prefix sums only on a copy: `moves._copied`.)"""
    backup, (cases, played, _, records) = batch
    monkeypatch.setattr(memory, "WINDOW", 1)
    monkeypatch.setattr(memory, "CHUNKED_FROM", 0)
    instances, actions = _actions(cases, played)
    alone = jax.jit(_one_game(backup))  # (traced now: with this WINDOW)
    assert instances.grid_words > 1
    for c in range(len(cases)):
        _, got = jax.device_get(alone(jax.tree.map(lambda x, c=c: x[c], instances), actions[c]))
        for key in ("mask", "placement", "cursor", "supply", "done", "lost"):
            np.testing.assert_array_equal(got[key], records[key][c], err_msg=f"{key}, {cases[c][0]}")


def test_cases_cover_the_interesting_situations(batch):
    """The random plays really reach what the comparison is meant to cover."""
    backup, (cases, played, final, records) = batch
    actions = np.concatenate([ref.board.action for ref, _, _ in played])
    assert {0, 1, 2} <= set(actions.tolist())
    masks = np.concatenate([rec["mask"] for _, _, rec in played])
    assert (~masks[:, 0]).sum() > 50 and (~masks[:, 2]).sum() > 20  # Copy and Drop both get refused
    finished = sum(ref.done and not ref.lost for ref, _, _ in played)
    assert finished >= len(cases) // 4
    # Outputs get pinned (NoCopy of an output), the later buffers of pinned tensors lose Copy and
    # Drop, and, under the older rules, no output is ever pinned.
    pins = [(ref.problem.is_output & (ref.board.action == game.NOCOPY)).sum() for ref, _, _ in played]
    assert sum(pins) > 50
    assert all(n == 0 for n, (_, _, rules) in zip(pins, cases) if not rules.output_nocopy)
    assert (masks[:, 1] & ~masks[:, 0] & ~masks[:, 2]).sum() > 20
    # Placed alias groups are checked on the grid past their own cells, and on the records where
    # the grid cannot tell (gaps between their rows).
    paths = np.asarray(records["paths"]).reshape(-1, 2).sum(axis=0)
    assert paths[0] > 20 and paths[1] > 20, paths
    if backup:
        assert sum(ref.restores for ref, _, _ in played) >= 5
        # most restores keep moves played after the backup (they go back to just before the conflict)
        assert sum(k > 0 for ref, _, _ in played for k in ref.kept) >= 10
        assert not any(ref.lost for ref, _, _ in played)
    else:
        assert sum(ref.lost for ref, _, _ in played) >= 5


def test_every_finished_game_gives_a_valid_solution(batch):
    backup, (cases, played, final, records) = batch
    checked = 0
    for c, ((name, problem, rules), (ref, _, _)) in enumerate(zip(cases, played)):
        if not ref.done or ref.lost:
            continue
        state = jax.tree.map(lambda x, c=c: x[c], final)
        for solution in (to_solution(problem, state, rules), ref.solution()):
            report = validate(problem, solution,
                              allow_nocopy_move=rules.nocopy_offset == "lowest")
            assert report.ok, f"{name}: {report}"
            assert report.recomputed_return == pytest.approx(solution.ret, rel=1e-5, abs=1e-4)
        checked += 1
    assert checked >= len(cases) // 4


@pytest.mark.parametrize("backup", [False, True])
def test_a_pin_whose_later_use_cannot_be_served(backup):
    """Tensor 0's use at step 3 shares alias group 1 with buffer 0, which is dropped: once the
    tensor is pinned, that use has no legal action (NoCopy: its group is dropped; Copy and Drop:
    the tensor is not in slow memory). Without the backup the game is lost; with it, the game
    returns to the backup and forbids the pin (docs/game.md)."""
    from builders import make_problem

    problem = make_problem([dict(t=0, tensor=5, alias=1), dict(t=1, out=True, tensor=0, live=(1, 3)),
                            dict(t=3, tensor=0, live=(1, 3), alias=1)], steps=5)
    rules = Rules(columns=COLUMNS)
    ref = ReferenceGame(problem, rules, backup=backup)
    state = game.init(make_instance(problem, rules, **PAD), backup=backup)
    step = jax.jit(game.step)
    for a in (game.DROP, game.NOCOPY):
        np.testing.assert_array_equal(np.asarray(game.legal_action_mask(state)), ref.legal_actions())
        reward = ref.step(a)
        state = step(state, jnp.int32(a))
        assert float(state.reward) == pytest.approx(reward)
    assert (ref.lost, ref.restores) == ((False, 1) if backup else (True, 0))
    assert (bool(state.lost), int(state.restores)) == (ref.lost, ref.restores)
    np.testing.assert_array_equal(np.asarray(game.legal_action_mask(state)), ref.legal_actions())
    if backup:  # back at buffer 1, which may no longer be pinned
        assert ref.board.cursor == int(state.board.cursor) == 1
        assert ref.legal_actions().tolist() == [True, False, True]
        assert ref.board.unpinnable == {0}


def test_a_restore_goes_back_to_just_before_the_conflict_and_further_while_it_must():
    """Buffer 0 pins tensor 0; buffer 1, a use of it, is the first member of alias group 1 and
    can only be NoCopy; buffer 2, group 1's other member, cannot be placed at the group's offset
    (the pin holds those cells): no legal action. The restore drops group 1 and goes back to
    buffer 1, its first member, which then has no legal action either (its group dropped, its
    tensor pinned): a second restore forbids the pin and goes back to buffer 0, which pinned it.
    The backup (a clean cut) was at buffer 0 all along; the JAX game and the reference agree."""
    from builders import make_problem

    problem = make_problem([dict(t=0, out=True, tensor=0, live=(0, 4)),
                            dict(t=1, tensor=0, live=(0, 4), alias=1),
                            dict(t=3, tensor=6, alias=1, live=(3, 3))], steps=5)
    rules = Rules(columns=COLUMNS)
    ref = ReferenceGame(problem, rules, backup=True)
    state = game.init(make_instance(problem, rules, **PAD), backup=True)
    step = jax.jit(game.step)
    for a in (game.NOCOPY, game.NOCOPY):  # the second move leaves buffer 2 without a legal action
        np.testing.assert_array_equal(np.asarray(game.legal_action_mask(state)), ref.legal_actions())
        before = float(state.board.ret)
        reward = ref.step(a)
        state = step(state, jnp.int32(a))
        assert float(state.reward) == pytest.approx(reward)
    assert (ref.restores, ref.kept) == (2, [1, 0])
    assert int(state.restores) == 2 and not bool(state.lost) and not ref.lost
    assert int(state.board.cursor) == ref.board.cursor == 0
    assert reward == pytest.approx(-before)
    assert len(ref.board.dropped_groups) == 1 and ref.board.unpinnable == {0}
    np.testing.assert_array_equal(np.asarray(game.legal_action_mask(state)), ref.legal_actions())
    assert ref.legal_actions().tolist()[1:] == [False, True]


def test_vmapped_padded_games_equal_single_games():
    """A batch of instances of different sizes, padded to one shape, gives the single results."""
    rules = Rules(columns=COLUMNS)
    problems = [generate(s, num_instructions=n, inplace_prob=0.3) for s, n in enumerate((12, 16, 30))]
    key = jax.random.key(0)
    singles = [rollout(make_instance(p, rules), key, greedy_policy, backup=True)  # own shapes
               for p in problems]
    batched = stack([make_instance(p, rules, **PAD) for p in problems])
    out = jax.jit(jax.vmap(lambda inst: rollout(inst, key, greedy_policy, backup=True)))(batched)
    assert np.all(np.asarray(out.done)) and not np.any(np.asarray(out.lost))
    for k, (p, single) in enumerate(zip(problems, singles)):
        n = p.num_buffers
        np.testing.assert_array_equal(out.board.action[k, :n], single.board.action[:n])
        np.testing.assert_array_equal(out.board.offset[k, :n], single.board.offset[:n])
        np.testing.assert_array_equal(out.board.alloc_start[k, :n], single.board.alloc_start[:n])
        np.testing.assert_array_equal(out.board.supply_prefix[k, : p.num_steps + 1],
                                      single.board.supply_prefix[: p.num_steps + 1])
        assert float(out.board.ret[k]) == pytest.approx(float(single.board.ret), rel=1e-6)


def test_illegal_and_out_of_range_actions_lose_the_game():
    instance = make_instance(generate(1, num_instructions=20), Rules(columns=COLUMNS), **PAD)
    state = game.init(instance)
    for action in (3, -1):
        lost = game.step(state, jnp.int32(action))
        assert bool(lost.done) and bool(lost.lost)
    mask = lambda s: np.asarray(game.legal_action_mask(s))  # noqa: E731
    while not (float(state.board.ret) > 0 and not mask(state)[game.NOCOPY]):  # earn, then misplay
        state = game.step(state, jnp.argmax(mask(state)).astype(jnp.int32))
    lost = game.step(state, jnp.int32(game.NOCOPY))
    assert bool(lost.lost) and float(lost.board.ret) == 0.0
    assert int(lost.board.cursor) == int(state.board.cursor)  # the illegal move changed nothing
    np.testing.assert_array_equal(lost.board.supply_prefix, state.board.supply_prefix)
    assert float(lost.reward) == pytest.approx(-float(state.board.ret))
    after = game.step(lost, jnp.int32(game.DROP))  # a finished game does not move
    assert float(after.reward) == 0.0 and int(after.moves) == int(lost.moves)


def test_step_traces_once_per_shape():
    rules = Rules(columns=COLUMNS)

    @jax.jit
    @chex.assert_max_traces(n=1)
    def traced_step(state, action):
        return game.step(state, action)

    for seed in range(3):
        instance = make_instance(generate(seed, num_instructions=20 + seed), rules, **PAD)
        state = game.init(instance)
        for _ in range(5):
            state = traced_step(state, jnp.int32(game.DROP))
    chex.clear_trace_counter()


def test_state_shapes_and_dtypes():
    instance = make_instance(generate(0, num_instructions=20), Rules(columns=COLUMNS), **PAD)
    state = game.init(instance, backup=True)
    n, t = PAD["num_buffers"], PAD["num_steps"]
    chex.assert_shape([state.board.action, state.board.offset, state.board.alloc_start], (n,))
    chex.assert_shape(state.board.grid, (t, COLUMNS // 32))
    chex.assert_type(state.board.grid, jnp.uint32)
    chex.assert_shape(state.board.supply_prefix, (t + 1,))
    chex.assert_shape(game.remaining_supply(state.board), (t,))
    chex.assert_type(state.board.supply_prefix, jnp.int32)
    chex.assert_shape(game.legal_action_mask(state), (3,))
    chex.assert_trees_all_equal_shapes(game._snapshot(state.board), state.backup)
    # Compact records: int8 actions, int16 indices while every index, step and column fits.
    chex.assert_type(state.board.records.bits, jnp.int8)
    chex.assert_type([state.board.records.offset, state.board.records.alloc_start,
                      state.board.records.latest], jnp.int16)
    chex.assert_type([state.board.action, state.board.offset], jnp.int32)  # the masked views


def test_grid_marks_exactly_the_allocations():
    problem = generate(5, num_instructions=30, memory_fraction=0.4)
    rules = Rules(columns=COLUMNS)
    ref = ReferenceGame(problem, rules)
    state = game.init(make_instance(problem, rules, **PAD))
    step = jax.jit(game.step)
    while not ref.done:
        a = int(np.flatnonzero(ref.legal_actions())[0])
        ref.step(a)
        state = step(state, a)
    words = np.asarray(state.board.grid)[: problem.num_steps]
    bits = ((words[:, :, None] >> np.arange(32, dtype=np.uint32)) & 1).reshape(words.shape[0], -1)
    used = ref.board.owner != -1
    np.testing.assert_array_equal(bits[:, : used.shape[1]].astype(bool), used)
    assert used.any()
