"""What every solver returns, and the anytime bookkeeping they share."""

from __future__ import annotations

import dataclasses
import functools
import time

import jax
import jax.numpy as jnp
import numpy as np

from jaxmmap.core.clock import Clock
from jaxmmap.core.problem import Solution
from jaxmmap.env import packer
from jaxmmap.env.rollout import advance, drop_first_policy, take

#: Seconds of work between two looks at the clock while games are played (`in_slices`).
SLICE_S = 1.0
#: A game still running when the budget ends may go on for 10% of the budget and this many
#: seconds more (within the promise of 1.1x the budget + 10 s: the rest is for the solution's
#: export, validation and placement); then it is ended Drop-first.
GRACE_S = 4.0
#: The shortest slice whose rate `in_slices` trusts for what is still to do (`tail`, `end`). A
#: shorter one times the call (its dispatch, copies of the games' states) more than its moves:
#: ES's batch of 9 at 9,028 buffers played 2 moves in 0.16 s, 12 moves a second, and 4,000 a
#: second in slices of a second (docs/decisions.md, Budgets).
TIMED_S = SLICE_S / 4


def in_slices(clock: Clock, advance, carry, done, tail=None, *, deadline_s: float | None = None, end=None):
    """Calls `advance(carry, moves) -> carry` (at most `moves` more moves of every game of a
    batch; `moves` an int32[], one compile for any count) in slices of about `SLICE_S` seconds,
    looking at the clock between them, until `done(carry)` (bool[G]) holds for every game or the
    deadline passes (the budget, plus 10% and `GRACE_S` for games already under way while the
    clock holds no solution yet; once it holds one, the budget itself, so that what follows, the
    placer's share of a run, keeps its time; the budget itself also where the caller ends a game
    itself (`tail`) and the clock has no grace, `Clock.grace`). So a budget holds at any program
    size. Returns (carry, whether every game ended).

    `tail(carry, rate, first)` -> seconds: what the caller will still do once this returns
    unfinished (ending a game Drop-first: its moves left at `rate` moves a second, and a compile,
    which `first`, the first slice's seconds, bounds); the slices stop that much before the
    deadline. `deadline_s` (seconds on `clock`) replaces the default deadline: for work that
    must end with the budget itself. (On large programs ending a game takes many seconds, so it starts before
    the deadline.) `end(carry, rate, within)` -> seconds: what the games' last move costs beyond the
    moves' rate (the deferred game's packer, `packing_s`) where a game is within `within` moves of
    its end (the next slice's most moves; else 0: that move cannot come in it); the slices stop
    that much before the deadline too, so that a batch that cannot end in time is cut before it,
    not inside it. (Applied while every game was far from its end, an estimate from the first
    slices' rate, one slow move, cut batches that had time: docs/decisions.md, Budgets.)"""
    deadline = deadline_s
    if deadline is None:  # (the grace is for a first solution only)
        grace = clock.best is None and (clock.grace or tail is None)
        deadline = 1.1 * clock.budget_s + GRACE_S if grace else clock.budget_s
    # (the first slice also measures its compile: a few moves, as a searched move of a 50,000-buffer
    # game can take half a second; docs/decisions.md, Budgets)
    moves, first, ahead, need, fastest, warmed = 8, None, 0.0, 0.0, 0.0, False
    while True:
        begin = time.perf_counter()
        carry = advance(carry, jnp.int32(moves))
        if bool(jnp.all(done(carry))):  # (waits for the slice: the dispatch is asynchronous)
            return carry, True
        took = max(time.perf_counter() - begin, 1e-6)
        if first is None:  # its rate includes the compile, so it is a floor: the next slice
            # measures a move, within a second at that rate (a fixed 256 moves overran budgets on
            # 50,000-buffer programs)
            first, moves = took, int(max(1, min(256, moves / took * SLICE_S)))
        else:
            rate = moves / took
            if took >= TIMED_S:  # (shorter: the estimates would end large games far too early)
                # (the tail's not on the first such slice after the compile: it runs the compiled loop
                # for the first time, and its one-off costs, 0.3 s for one move of ES's batch at 2,981
                # buffers, estimated a tail of 970 s for a generation that plays in 2 s, and cut it 22 s
                # into 600; `end`'s fastest rate errs slow with it, which only stops earlier)
                ahead = ahead if tail is None or not warmed else tail(carry, rate, first)
                warmed, fastest = True, max(fastest, rate)  # (the last move's cost is hundreds of
                # moves' worth: the fastest rate of a timed slice, or none)
            # (the next slice plays at most twice this one's moves)
            need = ahead + (0.0 if end is None or not fastest else end(carry, fastest, 2 * moves))
            # at most twice the last slice: a move's cost can jump (a game's restores begin, and
            # replay hundreds of moves inside one), and a slice sized by cheap moves overran its budget
            moves = int(max(1, min(2 * moves, rate * SLICE_S, rate * (deadline - need - clock.elapsed()) + 1,
                                   2 ** 30)))
        if clock.elapsed() + need >= deadline:
            return carry, False


class Refused(ValueError):
    """A solver declines an instance it is not made for (e.g. too large for an exact method).
    The comparison harness reports it as skipped; any other error is reported as an error."""


class NoGameError(RuntimeError):
    """A solver finished no game within its budget: the budget is too small, not a bug (the
    command line prints it as one `error:` line)."""


@dataclasses.dataclass(frozen=True)
class Result:
    """A solver's answer.

    Attributes:
      solution: the best solution found (checked by the validator before it is returned).
      trace: (seconds since the start, best return so far) at every improvement: the anytime
        curve of the comparison harness.
      seconds: wall time used.
      info: solver-specific figures (games played, nodes searched, proven optimal...).
      raw: with `solvers.solve(place=True)`, the solver's own solution before the placer (its
        return is `info["raw_return"]`); else None.
      guide: float32[N, 3] or None: a network's probabilities of Copy, NoCopy and Drop per buffer
        (NaN where it has no opinion), which `solvers.solve` hands the placer (`placer.place`);
        the generalist's (`agent.guide`).
    """

    solution: Solution
    trace: tuple[tuple[float, float], ...]
    seconds: float
    info: dict
    raw: Solution | None = None
    guide: np.ndarray | None = None


class Anytime(Clock):
    """The solvers' clock (`core.clock.Clock`: budget, best solution, trace), which also makes
    their `Result`."""

    def result(self, **info) -> Result:
        if self.best is None:
            raise NoGameError("the solver found no feasible solution within its budget; give it more time")
        return Result(solution=self.best, trace=tuple(self.trace), seconds=self.elapsed(), info=info)


class CountedJit:
    """`jax.jit(fn)` that counts its traces (`traces`: one per compile), so that a solver can
    report how often it compiled (and the tests check that a generation compiles once)."""

    def __init__(self, fn, **jit_options):
        self.fn, self.traces = fn, 0
        self._jitted = jax.jit(self._traced, **jit_options)

    def _traced(self, *args, **kwargs):
        self.traces += 1
        return self.fn(*args, **kwargs)

    def __call__(self, *args, **kwargs):
        return self._jitted(*args, **kwargs)


def strong_types(tree):
    """The same pytree without weak types, so that a jitted function fed its own output sees
    one signature (and compiles once)."""
    return jax.tree.map(lambda x: jnp.asarray(x, x.dtype), tree)


@functools.partial(jax.jit, static_argnames=("policy",))
def _advance(states, keys, moves, policy, finish, params=None):
    """`advance` with `policy` (with `params`: `policy(params_i)` is game i's), or with
    `drop_first_policy` where `finish`: one compile for both. (A `cond`, not a `where`: a finish
    does not pay for the policy's moves too.)"""
    def act(game_policy):
        return lambda k, s: jax.lax.cond(finish, drop_first_policy, lambda k, s: game_policy(k, s).astype(jnp.int32),
                                         k, s)

    if params is None:
        return advance(states, keys, act(policy), moves=moves)
    return advance(states, keys, lambda p: act(policy(p)), moves=moves, params=params)


#: Ending the furthest game inside its batch also runs the held games' (masked) steps: below
#: this many of them ((batch - 1) x the moves left) that costs less than compiling the loop for a
#: batch of one (seconds, where a move costs tens of microseconds on a CPU); above it, a large
#: program's batch spends minutes on them (docs/decisions.md, Budgets).
HELD_MOVES = 100_000


def _left(states) -> int:
    """The furthest game's buffers left (of the padded count: an overestimate)."""
    return max(int(states.board.records.bits.shape[-1]) - int(jnp.max(states.board.cursor)), 0)


def held_inside(games: int, moves_left: int) -> bool:
    """Whether a game of a batch of `games`, `moves_left` moves from its end, is ended inside
    its batch, the other games held still (`HELD_MOVES`)."""
    return (games - 1) * moves_left <= HELD_MOVES


def _inside(states) -> bool:
    """Whether `finish_furthest` ends the game inside its batch (see `HELD_MOVES`)."""
    return held_inside(states.done.shape[0], _left(states))


def finish_furthest(states, keys: jax.Array, policy=drop_first_policy, params=None, *, game: int | None = None):
    """The game of a batch (`rollout.start`, instance shared) that got furthest, ended with
    `drop_first_policy`, which keeps what it placed: a valid solution, fast. A batch of one.
    On a small program it is ended inside its batch, the other games held still (marked done),
    so that the batch's compiled loop serves (a new compile would cost more than the moves
    left); otherwise alone, as a batch of one (`HELD_MOVES`). `game`: end that game instead,
    by its own policy (a policy that cannot lose: the plan's, `heuristic.plan_policy`)."""
    furthest = int(jnp.argmax(jnp.where(states.done & ~states.lost, states.board.cursor + 2 ** 30,
                                        states.board.cursor))) if game is None else game
    drop_first = jnp.bool_(game is None)
    if not _inside(states):
        own = None if params is None else jax.tree.map(lambda x: x[furthest:furthest + 1], params)
        ended, _ = _advance(take(states, furthest), keys[furthest:furthest + 1], jnp.int32(2 ** 30), policy,
                            drop_first, own)
        return ended
    held = states.replace(done=states.done | (jnp.arange(states.done.shape[0]) != furthest))
    ended, _ = _advance(held, keys, jnp.int32(2 ** 30), policy, drop_first, params)
    return take(ended, furthest)


#: The moves a second a game ended Drop-first alone plays at least (`moves_left`): it never
#: loses, so it never restores, where a batch's rate counts its restores' replays and can be a few
#: moves a second (a Drop-first move alone takes tens of microseconds on a CPU, about a millisecond
#: on a GPU; docs/decisions.md, Budgets).
ALONE_RATE = 500.0


def moves_left(states, rate: float, first: float, *, compile_again: bool = False) -> float:
    """Seconds to end the furthest of a batch of games Drop-first (`finish_furthest`), for
    `in_slices`'s tail: its buffers left at `rate` moves a second (the batch's rate: at most the
    rate of a game alone; alone, at least `ALONE_RATE`), and where the finish compiles its own
    loop (`compile_again`: its policy is not the batch's; or it is ended alone) the first slice's
    seconds, which its compile dominates."""
    alone = not _inside(states)
    return _left(states) / (max(rate, ALONE_RATE) if alone else rate) + (first if compile_again or alone else 0.0)


#: The moves' worth, per buffer, of a game's last move under deferred placement (`packing_s`):
#: each packing reads and fills every unit's steps, two moves' worth (measured: 8 to 11 at 6,493
#: buffers, a batch of 33 on the 2-core CPU, the six packings run; fewer where one places every unit).
PACK_MOVES = 2 * packer.PACKINGS


def packing_s(instance, rate: float, games: int, states=None, within: int | None = None) -> float:
    """Seconds the last move of a batch of `games` takes beyond `rate` (batch moves a second)
    under deferred placement: its games are packed one at a time (`packer.pack_finished`), each
    about `PACK_MOVES` moves of the batch per buffer. 0 in the paper's grid, where a game of
    the batch is ended inside it (`held_inside`): there packing takes well under a second, and a
    rate slowed by restores would overestimate it; and, given the batch's `states` and `within`
    (moves), where no game still playing is within that many moves of its end."""
    n = int(instance.num_buffers)
    if not instance.deferred or held_inside(games, n):
        return 0.0
    if states is not None and within is not None:
        playing = jnp.where(states.done, -1, states.board.cursor)
        if n - int(jnp.max(playing)) > within:
            return 0.0
    return PACK_MOVES * n / rate


def play_on_the_clock(clock: Anytime, states, keys: jax.Array, policy, *, params=None, finish: bool = True,
                      deadline_s: float | None = None, finish_game: int | None = None):
    """Plays a batch of games (`rollout.start`, the instance shared) in slices (`in_slices`)
    (with `params`, `policy(params_i)` plays game i, as in `rollout.advance`). Returns (states,
    whether every game ended by its own policy). Games still running at the deadline are
    returned as they are (`finish=False`), or (`finish=True`) the one that got furthest is ended
    Drop-first (`finish_furthest`; `finish_game`: that game instead, by its own policy).
    `deadline_s`: see `in_slices`."""
    (states, keys), whole = in_slices(
        clock, lambda carry, moves: _advance(*carry, moves, policy, jnp.bool_(False), params),
        (states, keys), lambda carry: carry[0].done,
        tail=(lambda carry, rate, first: moves_left(carry[0], rate, first)) if finish else None,
        deadline_s=deadline_s,
        end=lambda carry, rate, within: packing_s(carry[0].instance, rate, carry[0].done.shape[0], carry[0], within))
    if whole or not finish or clock.stopped():  # (stopped: its result is dropped, `clock.within`)
        return states, whole
    return finish_furthest(states, keys, policy, params, game=finish_game), False
