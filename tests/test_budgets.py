"""Budgets inside long work: games played in slices with the clock looked at between them, and
a game the budget cuts ended Drop-first into a valid solution."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmmap import Rules, bundled, generate, make_instance, validate
from jaxmmap.core.clock import Clock, without_grace
from jaxmmap.env import rollout
from jaxmmap.env.rollout import advance, drop_first_policy, greedy_policy, rollouts, start
from jaxmmap.solvers import SOLVERS, _registry, _solve, base, solve
from jaxmmap.solvers.base import Anytime, Refused
from jaxmmap.solvers.heuristic import heuristic
from jaxmmap.solvers.placer import place, place_nothing
from jaxmmap.solvers.simple import greedy, random_search

RULES = Rules(columns=64)


@pytest.fixture(scope="module")
def problem():
    return generate(21, num_instructions=80, memory_fraction=0.3)


def test_a_game_played_in_slices_is_the_game_played_at_once(problem):
    instance = make_instance(problem, RULES)
    keys = jax.random.split(jax.random.key(3), 4)
    whole = rollouts(instance, keys, greedy_policy, backup=True)
    step = jax.jit(lambda s, k: advance(s, k, greedy_policy, moves=jnp.int32(7)))
    states, k = start(instance, 4), keys
    for _ in range(10_000):
        states, k = step(states, k)
        if bool(jnp.all(states.done)):
            break
    for a, b in zip(jax.tree.leaves(states), jax.tree.leaves(whole)):
        np.testing.assert_array_equal(a, b)


def test_drop_first_plays_drop_then_nocopy_then_copy():
    state = start(make_instance(generate(2, num_instructions=10), RULES), 1)
    one = jax.tree.map(lambda x: x[0], state.replace(instance=None)).replace(instance=state.instance)
    for mask, want in (([1, 1, 1], 2), ([1, 1, 0], 1), ([1, 0, 0], 0), ([0, 1, 1], 2)):
        forced = one.replace(candidates=one.candidates.replace(legal=jnp.asarray(mask, bool)))
        assert int(drop_first_policy(None, forced)) == want


@pytest.mark.parametrize("solve", [greedy, lambda *a, **k: random_search(*a, batch=8, **k)], ids=["greedy", "random"])
def test_a_budget_that_ends_inside_a_game_still_returns_a_valid_solution(problem, solve, monkeypatch):
    monkeypatch.setattr(base, "GRACE_S", 0.0)  # the deadline passes right after the first slice
    cut = solve(problem, 1e-9, 0, rules=RULES)
    assert validate(problem, cut.solution).ok
    full = greedy(problem, 60, 0, rules=RULES)
    assert full.info["finished"] and validate(problem, full.solution).ok
    if solve is greedy:
        assert not cut.info["finished"] and cut.solution.ret <= full.solution.ret
    assert cut.solution.metadata["moves"] >= 64  # the first slice, then the Drop-first end


def test_the_furthest_game_ends_the_same_alone_or_inside_its_batch(problem, monkeypatch):
    instance = make_instance(problem, RULES)
    keys = jax.random.split(jax.random.key(5), 4)
    states, keys = advance(start(instance, 4), keys, rollout.random_policy, moves=jnp.int32(9))
    assert not bool(jnp.any(states.done))
    furthest, cursor = int(jnp.argmax(states.board.cursor)), int(jnp.max(states.board.cursor))
    ended = []
    for held_moves in (0, 10 ** 9):  # alone, as a batch of one (a new compile); inside its batch
        monkeypatch.setattr(base, "HELD_MOVES", held_moves)
        assert base._inside(states) == (held_moves > 0)
        game = base.finish_furthest(states, keys)
        assert bool(game.done[0]) and not bool(game.lost[0])
        # the furthest game, its moves kept
        np.testing.assert_array_equal(game.board.records.bits[0, :cursor], states.board.records.bits[furthest, :cursor])
        ended.append(game.replace(instance=None))
    for a, b in zip(*map(jax.tree.leaves, ended)):
        np.testing.assert_array_equal(a, b)


def test_checkpoints_are_kept_for_large_games_within_their_memory():
    """`checkpoints_for`: none on small programs (a replay from the backup is short), up to 16 on
    a large one, and fewer as the batch grows, so that their grid copies stay within bounds."""
    from jaxmmap.env import rollout

    small = make_instance(generate(2, num_instructions=10), RULES)
    assert rollout.checkpoints_for(small, 1) == 0
    large = make_instance(generate(2, num_instructions=10), RULES, num_buffers=4096, num_steps=8192)
    grid = 8192 * large.grid_words * 4
    one, many = rollout.checkpoints_for(large, 1), rollout.checkpoints_for(large, 2 ** 13)
    assert one == min(16, rollout.CHECKPOINT_BYTES // grid) > 0 and many == 0
    assert one * grid <= rollout.CHECKPOINT_BYTES


def test_a_batch_of_games_is_cut_to_what_its_memory_allows():
    """`games_within`: the whole batch on a small program, fewer games as the states grow, never
    none; random play uses it (a batch of 256 games of 50,000 buffers would hold 5.6 GB)."""
    small = make_instance(generate(2, num_instructions=10), RULES)
    large = make_instance(generate(2, num_instructions=10), RULES, num_buffers=4096, num_steps=8192)
    assert rollout.games_within(small, 256) == 256
    cut = rollout.games_within(large, 256, budget=2 ** 24)
    assert 1 <= cut < 256 and rollout.games_within(large, 256, budget=1) == 1
    one = jax.eval_shape(lambda: rollout.start(large, 1, checkpoints=0).replace(instance=None))
    per_game = sum(x.size * x.dtype.itemsize for x in jax.tree.leaves(one))
    assert cut * per_game <= 2 ** 24 < (cut + 1) * per_game
    assert random_search(generate(2, num_instructions=10), 1e-6, 0, rules=RULES).info["batch"] == 256


def test_slices_grow_at_most_twofold_when_a_move_gets_dearer(monkeypatch):
    """A move's cost can jump inside a run (restores begin); the slice after cheap ones must not
    be sized by the cheap rate alone (an expert generation overran a 60 s budget by 20 s so)."""
    import time

    from jaxmmap.core.clock import Clock

    monkeypatch.setattr(base, "GRACE_S", 0.0)
    played = {"moves": 0, "calls": 0}

    def advance(carry, moves):  # a compile on the first call, then 1 ms a move, 30 ms after 40
        played["calls"] += 1
        seconds = 0.3 if played["calls"] == 1 else 0.0
        for _ in range(int(moves)):
            seconds += 0.001 if played["moves"] < 40 else 0.03
            played["moves"] += 1
        time.sleep(seconds)
        return carry

    clock = Clock(1.0)
    _, whole = base.in_slices(clock, advance, None, lambda carry: jnp.zeros(1, bool))
    assert not whole
    assert clock.elapsed() < 1.1 + 1.5  # the deadline, and at most about one slice past it


def test_a_game_ended_alone_is_not_timed_at_its_batchs_rate(problem):
    """The tail of a game ended Drop-first alone (`finish_furthest` outside its batch) takes at
    least `ALONE_RATE` moves a second: a batch's rate counts its restores' replays (random's batch
    of 256 at 3,277 buffers: 1.2 moves a second, a tail of 2,945 s, and its games were given up
    after 14 s of a 120 s budget); inside its batch the finish plays at the batch's rate."""
    instance = make_instance(problem, RULES)
    alone, inside = start(instance, 512), start(instance, 2)  # ((games - 1) x buffers left vs HELD_MOVES)
    assert not base._inside(alone) and base._inside(inside)
    left = base._left(alone)
    assert base.moves_left(alone, 1.0, 5.0) == pytest.approx(left / base.ALONE_RATE + 5.0)
    assert base.moves_left(alone, 1e5, 5.0) == pytest.approx(left / 1e5 + 5.0)
    assert base.moves_left(inside, 1.0, 5.0) == pytest.approx(left / 1.0)
    assert base.moves_left(inside, 1.0, 5.0, compile_again=True) == pytest.approx(left / 1.0 + 5.0)


def test_a_few_moves_after_the_compile_do_not_end_a_game_that_has_time(monkeypatch):
    """The slices right after the compile are a few moves: their rate is the dispatch's, not the
    game's, and the time to end the game Drop-first estimated from it must not stop the slices
    (a 24,143-buffer game that plays in 6 s was ended at its 9th move, 2 s into a 21 s budget)."""
    import time

    from jaxmmap.core.clock import Clock

    played = {"moves": 0, "calls": 0}

    def advance(carry, moves):  # a compile, then 2 ms a call and 2 us a move; 20,000 moves in all
        played["calls"] += 1
        time.sleep((1.0 if played["calls"] == 1 else 0.002) + 2e-6 * int(moves))
        played["moves"] = min(played["moves"] + int(moves), 20_000)
        return carry

    def tail(carry, rate, first):  # ending it Drop-first: its moves left at the measured rate
        return (20_000 - played["moves"]) / rate

    clock = Clock(1.0)  # (the deadline: 1.1 s and GRACE_S; the game needs about 1.1 s)
    _, whole = base.in_slices(clock, advance, None, lambda carry: jnp.asarray([played["moves"] >= 20_000]),
                                 tail=tail)
    assert whole and played["moves"] == 20_000


def test_the_first_run_after_the_compile_does_not_end_a_game_that_has_time(monkeypatch):
    """The slice after the compile runs the compiled loop for the first time: its one-off costs
    are not the game's rate, and the tail estimated from it must not stop the slices (ES's first
    generation at 2,981 buffers: one move in 0.3 s, a tail of 970 s, cut 22 s into 600 s; played
    on, it ended 2 s later). From the next slice on, the tail counts."""
    import time

    from jaxmmap.core.clock import Clock

    monkeypatch.setattr(base, "GRACE_S", 0.0)
    played = {"moves": 0, "calls": 0}

    def advance(carry, moves):  # a compile, a first run of 0.3 s more, then 1 ms a move; 1,000 moves
        played["calls"] += 1
        n = min(int(moves), 1000 - played["moves"])
        played["moves"] += n
        time.sleep((0.3 if played["calls"] <= 2 else 0.0) + 0.001 * n)
        return carry

    asked = []

    def tail(carry, rate, first):  # ending it Drop-first: its moves left at the measured rate
        asked.append(played["calls"])
        return (1000 - played["moves"]) / rate

    clock = Clock(4.0)  # (the game needs about 1.6 s; the first run's rate gives a tail of about 13 s)
    _, whole = base.in_slices(clock, advance, None, lambda carry: jnp.asarray([played["moves"] >= 1000]),
                              tail=tail)
    assert whole and played["moves"] == 1000 and clock.elapsed() < 4.0
    assert asked and asked[0] >= 3  # (asked from the slice after the first run on)


def test_short_slices_that_time_the_call_do_not_end_a_game_that_has_time(monkeypatch):
    """Where a call costs more than its few moves (dispatch, copies of the games' states), the
    short slices after the compile time the call, not the moves, and a tail estimated from them
    must not stop the slices (ES's batch of 9 at 9,028 buffers: 2 moves in 0.16 s, a tail of
    839 s, cut 29 s into 600; played on, 4,000 moves a second). Only slices of `TIMED_S` time it."""
    import time

    from jaxmmap.core.clock import Clock

    monkeypatch.setattr(base, "GRACE_S", 0.0)
    played = {"moves": 0, "calls": 0}

    def advance(carry, moves):  # a compile, then 0.1 s a call and 0.1 ms a move; 20,000 moves
        played["calls"] += 1
        n = min(int(moves), 20_000 - played["moves"])
        played["moves"] += n
        time.sleep((0.3 if played["calls"] == 1 else 0.1) + 1e-4 * n)
        return carry

    def tail(carry, rate, first):  # ending it Drop-first: its moves left at the measured rate
        return (20_000 - played["moves"]) / rate

    clock = Clock(8.0)  # (the game needs about 4 s; a slice of 34 moves, 0.1 s, gives a tail of 59 s)
    _, whole = base.in_slices(clock, advance, None, lambda carry: jnp.asarray([played["moves"] >= 20_000]),
                              tail=tail)
    assert whole and played["moves"] == 20_000 and clock.elapsed() < 8.0


def test_slices_stop_soon_for_a_tail_that_does_not_fit_where_moves_are_dear(monkeypatch):
    """Where a move costs more than a call (a searched move of a large program), the slices stop
    soon after the compile, well before the deadline, where ending the game needs more than is
    left (the tail's estimate from a slice of a quarter second or more)."""
    import time

    from jaxmmap.core.clock import Clock

    monkeypatch.setattr(base, "GRACE_S", 0.0)
    played = {"moves": 0, "calls": 0}

    def advance(carry, moves):  # a compile, then 20 ms a move
        played["calls"] += 1
        time.sleep((0.3 if played["calls"] == 1 else 0.0) + 0.02 * int(moves))
        played["moves"] += int(moves)
        return carry

    def tail(carry, rate, first):  # 20,000 moves left, at 1% of the measured rate's cost: 4 s
        return (20_000 - played["moves"]) / rate / 100

    clock = Clock(2.0)  # (the deadline: 2.2 s; without the tail, about 5 slices up to it)
    _, whole = base.in_slices(clock, advance, None, lambda carry: jnp.zeros(1, bool), tail=tail)
    assert not whole and played["calls"] <= 3 and clock.elapsed() < 2.0


def test_slices_stop_before_a_last_move_that_does_not_fit(monkeypatch):
    """A deferred game's last move packs every game of the batch, hundreds of moves' worth: the
    slices stop before a batch whose last move would end past the deadline (`end`, estimated at
    the fastest rate of a slice of a quarter second or more), and play on to it where it fits."""
    import time

    from jaxmmap.core.clock import Clock

    monkeypatch.setattr(base, "GRACE_S", 0.0)

    def run(budget_s, last_s):
        played = {"moves": 0}

        def advance(carry, moves):  # 1 ms a move; move 1,000 ends the games and takes `last_s`
            n = min(int(moves), 1000 - played["moves"])
            played["moves"] += n
            time.sleep(0.001 * n + (last_s if played["moves"] == 1000 else 0.0))
            return carry

        def end(carry, rate, within):  # what the batch's last move takes: 1,000 moves' worth (1 s)
            return 1000 / rate if 1000 - played["moves"] <= within else 0.0

        clock = Clock(budget_s)
        _, whole = base.in_slices(clock, advance, None, lambda carry: jnp.asarray([played["moves"] >= 1000]),
                                  end=end)
        return whole, clock.elapsed()

    whole, seconds = run(1.5, 1.0)  # moves 1 s, the last move 1 s: past the deadline
    assert not whole and seconds < 1.5
    whole, seconds = run(4.0, 1.0)
    assert whole and seconds < 4.0


def test_a_slow_move_far_from_the_end_does_not_cut_a_batch_that_has_time(monkeypatch):
    """The last move's cost (`end`) counts only where a game could reach its end in the next
    slice: a slow first measured slice (the packing then estimated past the whole budget) far from
    the end no longer cuts a batch that ends well within its budget (ES's first generation at 9,028
    buffers was cut so 38 s into 600 s; played on, it ended in 118 s)."""
    import time

    from jaxmmap.core.clock import Clock

    monkeypatch.setattr(base, "GRACE_S", 0.0)
    played = {"moves": 0, "calls": 0}

    def advance(carry, moves):  # a compile, one slice of 0.3 s, then 1 ms a move; 1,000 moves in all
        played["calls"] += 1
        n = min(int(moves), 1000 - played["moves"])
        played["moves"] += n
        time.sleep(0.3 if played["calls"] <= 2 else 0.001 * n)
        return carry

    asked = []

    def end(carry, rate, within):  # the last move: 1,000 moves' worth at the fastest rate
        asked.append(1000 / rate)
        return 1000 / rate if 1000 - played["moves"] <= within else 0.0

    clock = Clock(4.0)
    _, whole = base.in_slices(clock, advance, None, lambda carry: jnp.asarray([played["moves"] >= 1000]), end=end)
    assert whole and played["moves"] == 1000 and clock.elapsed() < 4.0
    assert asked[0] > 4.0  # (its first estimate, far from the end, was past the budget: counted, it cut)


def test_the_packing_counts_only_where_a_game_still_playing_nears_its_end(problem, monkeypatch):
    """`packing_s` with the batch's states: 0 where every game still playing is more than
    `within` moves from its end, `PACK_MOVES` moves a buffer at the rate where one is within it;
    a game already ended does not count; 0 in the paper's grid."""
    monkeypatch.setattr(base, "HELD_MOVES", 0)  # (else a small program's game is ended inside its batch)
    deferred = make_instance(problem, Rules(columns=64, placement="deferred", copy_supply="early"))
    states, n = start(deferred, 4), problem.num_buffers
    full = base.PACK_MOVES * n / 100.0
    assert base.packing_s(deferred, 100.0, 4) == pytest.approx(full)  # (no states: always counted)
    assert base.packing_s(deferred, 100.0, 4, states, n - 1) == 0.0
    assert base.packing_s(deferred, 100.0, 4, states, n) == pytest.approx(full)
    near = states.replace(board=states.board.replace(cursor=states.board.cursor.at[1].set(n - 5)))
    assert base.packing_s(deferred, 100.0, 4, near, 5) == pytest.approx(full)
    ended = near.replace(done=near.done.at[1].set(True))
    assert base.packing_s(deferred, 100.0, 4, ended, 5) == 0.0
    assert base.packing_s(make_instance(problem, RULES), 100.0, 4, states, n) == 0.0


def test_slices_take_the_grace_only_for_a_first_solution():
    """`in_slices`: past the budget but within its grace, games go on while the clock holds no
    solution, and stop once it holds one (the placer's share comes after the budget). A clock
    made `without_grace` has none where the caller ends the games itself (a `tail`)."""
    clock = types.SimpleNamespace(budget_s=10.0, best=None, elapsed=lambda: 12.0, grace=True)

    def done(carry):
        return jnp.asarray([carry >= 3])

    def tail(carry, rate, first):
        return 0.0

    def slices(**how):
        return base.in_slices(clock, lambda carry, moves: carry + 1, 0, done, **how)

    assert slices() == (3, True) and slices(tail=tail) == (3, True)
    with without_grace():
        clock.grace = Clock(1.0).grace
    assert clock.grace is False and Clock(1.0).grace is True
    assert slices(tail=tail) == (1, False)
    assert slices() == (3, True)  # (no tail: nothing would end the game, the grace stays)
    clock.best = "a solution"
    assert slices() == (1, False)


def test_a_clock_that_saw_no_solution_raises_no_game_error():
    """A solver whose clock was offered nothing says so as `NoGameError` (one `error:` line on the
    command line, and `muzero-prod` keeps the heuristic's solution), not a bare RuntimeError."""
    with pytest.raises(base.NoGameError, match="no feasible solution within its budget"):
        base.Anytime(1.0).result()


def test_a_placed_solver_that_overruns_its_budget_is_left_behind_with_the_placement_of_no_decisions(monkeypatch):
    """A compile cannot be cut: a solver still running at `OVERRUN` times its budget plus
    `OVERRUN_S` is told to stop (its clocks see no time left) and `solve` returns the placement of
    no decisions, within the budget's promise; the solver ends at its next look at the clock."""
    ended = threading.Event()

    def stuck(problem, budget_s, seed, *, rules):  # a compile that outlasts the budget, then a search
        time.sleep(6.0)  # (past 1.05 x 2 s + 3 s)
        clock = Anytime(budget_s)
        assert clock.out_of_time() and clock.stopped()
        ended.set()
        raise RuntimeError("dropped: the caller has gone on")

    monkeypatch.setitem(SOLVERS, "stuck", stuck)
    monkeypatch.setattr(_solve, "PLACED", _registry.PLACED | {"stuck"})
    monkeypatch.setattr(_solve, "check_options", lambda *a: None)
    problem = bundled("tiny")
    began = time.perf_counter()
    result = solve(problem, "stuck", budget_s=2.0)
    seconds = time.perf_counter() - began
    assert _solve.OVERRUN * 2.0 + _solve.OVERRUN_S <= seconds < 1.1 * 2.0 + 10
    assert result.solution.solver == "stuck+placed" and result.info["placed_start"] == "nothing"
    assert "overran" in result.info and validate(problem, result.solution).ok
    assert ended.wait(10)  # (and its error was dropped)


def _found_then_stuck(monkeypatch, held):
    """A solver "found" that offers `held` to a clock of its own, then overruns (a compile)."""
    def found_then_stuck(problem, budget_s, seed, *, rules):
        Anytime(budget_s).offer(held)
        time.sleep(6.0)  # (past 1.05 x 2 s + 3 s)
        raise RuntimeError("dropped: the caller has gone on")

    monkeypatch.setitem(SOLVERS, "found", found_then_stuck)
    monkeypatch.setattr(_solve, "PLACED", _registry.PLACED | {"found"})
    monkeypatch.setattr(_solve, "check_options", lambda *a: None)


def test_an_overrun_places_the_game_the_solvers_clocks_held(monkeypatch):
    """What a solver cut off had found (offered to a clock of its own) is placed without local
    moves where the promise leaves the time (`HELD_PLACEMENTS` times the placement of no
    decisions' seconds): greedy's game here, whose decisions place above both it and that placement."""
    problem = generate(5, num_instructions=30, memory_fraction=0.3)
    held = greedy(problem, 30.0, 0).solution
    expected = place(problem, held, rules=Rules(), moves=0, fresh=place_nothing(problem, rules=Rules()))
    assert expected.metadata["start"] == "decisions" and expected.ret > held.ret  # (what the test needs)
    _found_then_stuck(monkeypatch, held)
    began = time.perf_counter()
    result = solve(problem, "found", budget_s=2.0)
    assert time.perf_counter() - began < 1.1 * 2.0 + 10
    assert result.solution.ret == pytest.approx(expected.ret) and result.solution.solver == "found+placed"
    assert result.info["placed_start"] == "decisions" and result.info["raw_return"] == held.ret
    assert result.raw is held and "placed without local moves" in result.info["overran"]
    assert validate(problem, result.solution).ok


def test_an_overrun_without_the_time_to_place_keeps_the_best_solution_the_solvers_clocks_held(monkeypatch):
    """Where the promise leaves no time to place it, what a solver cut off had found is written
    where it beats the placement of no decisions, as its game."""
    problem = generate(5, num_instructions=30, memory_fraction=0.3)
    held = heuristic(problem, 5.0, 0).solution  # (its plans and moves: above the placement of no decisions here)
    assert held.ret > place_nothing(problem, rules=Rules(), budget_s=5.0).ret
    _found_then_stuck(monkeypatch, held)
    monkeypatch.setattr(_solve, "HELD_PLACEMENTS", float("inf"))
    result = solve(problem, "found", budget_s=2.0)
    assert result.solution.ret == held.ret and result.info["placed_start"] == "game"
    assert result.info["raw_return"] == held.ret and "its best game so far is written" in result.info["overran"]


def test_a_placed_solver_within_its_time_runs_as_before_and_its_mistakes_reach_the_caller(monkeypatch):
    def failing(problem, budget_s, seed, *, rules):
        raise Refused("not made for this instance")

    monkeypatch.setitem(SOLVERS, "failing", failing)
    monkeypatch.setattr(_solve, "PLACED", _registry.PLACED | {"failing"})
    monkeypatch.setattr(_solve, "check_options", lambda *a: None)
    with pytest.raises(Refused, match="not made"):
        solve(bundled("tiny"), "failing", budget_s=2.0)


def test_settle_waits_for_the_work_an_overrun_left_behind():
    """`clock.settle`: the work `within` left running (a compile) is waited for, up to a limit, so
    that a comparison's next run does not share the CPU with it."""
    from jaxmmap.core.clock import Overran, settle, within

    with pytest.raises(Overran):
        within(lambda: time.sleep(1.0), 0.1)
    assert settle(0.05) is False  # (still sleeping)
    began = time.perf_counter()
    assert settle(10.0) is True and time.perf_counter() - began < 2.0
    assert settle(0.0) is True  # (nothing left)


def test_the_program_exits_with_its_own_status_while_an_overrun_compile_runs():
    """`jaxmmap.__main__.entry`: a command whose solver overran leaves a compile running in a
    thread (`within`); the program still exits with the command's status and its output, where
    the interpreter's own exit would abort inside the compiler (status 134)."""
    script = """
import jax, jax.numpy as jnp
import jaxmmap.__main__ as program
from jaxmmap.core.clock import Overran, within

def slow(x):
    for i in range(400):
        x = jnp.sin(x) @ x + i
    return x

def main():
    lowered = jax.jit(slow).lower(jnp.ones((64, 64)))  # (the thread is in the compiler at the exit)
    try:
        within(lowered.compile, 0.2)
    except Overran:
        print("written", flush=True)
    return 3

program.main = main
program.entry()
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (3, "written\n"), done.stderr[-500:]
