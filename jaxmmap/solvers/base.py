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
from jaxmmap.env.rollout import advance, drop_first_policy, nth_game, take, to_solution, won_returns


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
    """

    solution: Solution
    trace: tuple[tuple[float, float], ...]
    seconds: float
    info: dict
    raw: Solution | None = None


class Anytime(Clock):
    """The solvers' clock (`core.clock.Clock`: budget, best solution, trace), which also makes
    their `Result`."""

    def result(self, **info) -> Result:
        if self.best is None:
            raise RuntimeError("the solver found no feasible solution within its budget")
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


#: Seconds of work between two looks at the clock while games are played (`play_on_the_clock`).
SLICE_S = 1.0
#: A game still running when the budget ends may go on for 10% of the budget and this many
#: seconds more (within the promise of 1.1x the budget + 10 s: the rest is for the solution's
#: export, validation and placement); then it is ended Drop-first.
GRACE_S = 4.0


@functools.partial(jax.jit, static_argnames=("policy",))
def _advance(states, keys, moves, policy, finish, params=None):
    """`advance` with `policy` (with `params`: `policy(params_i)` is game i's), or with
    `drop_first_policy` where `finish`: one compile for both."""
    def act(game_policy):
        return lambda k, s: jnp.where(finish, drop_first_policy(k, s), game_policy(k, s))

    if params is None:
        return advance(states, keys, act(policy), moves=moves)
    return advance(states, keys, lambda p: act(policy(p)), moves=moves, params=params)


def play_on_the_clock(clock: Anytime, states, keys: jax.Array, policy, *, params=None, finish: bool = True):
    """Plays a batch of games (`rollout.start`, the instance shared) in slices of about
    `SLICE_S` seconds, looking at the clock between slices, so that a budget holds at any
    program size (with `params`, `policy(params_i)` plays game i, as in `rollout.advance`).
    Returns (states, whether every game ended by its own policy). Games still
    running at the deadline (the budget, plus 10% and `GRACE_S` for a game already under way)
    are returned as they are (`finish=False`), or (`finish=True`) the one that got furthest is
    ended with `drop_first_policy`, which keeps what it placed: a valid solution, fast."""
    deadline = 1.1 * clock.budget_s + GRACE_S
    moves = 64  # the first slice also measures the speed of a move (its compile included)
    while True:
        begin = time.perf_counter()
        states, keys = _advance(states, keys, jnp.int32(moves), policy, jnp.bool_(False), params)
        if bool(jnp.all(states.done)) or clock.elapsed() >= deadline:
            break
        rate = moves / max(time.perf_counter() - begin, 1e-6)  # moves per second (the first: with its compile)
        moves = int(max(16, min(rate * SLICE_S, rate * (deadline - clock.elapsed()) + 16, 2 ** 30)))
    if bool(jnp.all(states.done)) or not finish:
        return states, bool(jnp.all(states.done))
    furthest = int(jnp.argmax(jnp.where(states.done & ~states.lost, states.board.cursor + 2 ** 30,
                                        states.board.cursor)))
    own = None if params is None else jax.tree.map(lambda x: x[furthest:furthest + 1], params)
    game, _ = _advance(take(states, furthest), keys[furthest:furthest + 1], jnp.int32(2 ** 30), policy,
                       jnp.bool_(True), own)
    return game, False


def run_batches(clock: Anytime, play_batch, key: jax.Array, *, problem, rules, solver: str,
                batch: int, max_batches: int | None = None) -> int:
    """The host loop of the batch solvers (random, mcts): `play_batch(key)` plays `batch`
    games (a batch of `rollouts`, its instance shared) and the best finished one is offered to
    `clock`, until the clock runs out or after `max_batches` batches. Returns the games played."""
    played = 0
    while True:
        key, sub = jax.random.split(key)
        states = play_batch(sub)
        played += batch
        returns = np.asarray(won_returns(states))
        best = int(np.argmax(returns))
        if np.isfinite(returns[best]):
            clock.offer(to_solution(problem, nth_game(states, best), rules, solver=solver))
        if clock.out_of_time() or (max_batches is not None and played >= max_batches * batch):
            return played


def run_generations(clock: Anytime, generation, search, key: jax.Array, instance, *, problem,
                    rules, solver: str, max_generations: int | None = None,
                    on_improvement=None):
    """The host loop of the generational solvers (es, egrl).

    `generation(search, key, instance) -> (search, best_state, stats)` is one jitted
    generation; `stats["best"]` is its best game's float32 return. The best game is exported
    and offered to `clock` whenever that beats every earlier generation (the exact float64
    return decides in `offer`); `on_improvement(stats)` is called when the clock keeps it.
    Stops when the clock runs out or after `max_generations`.

    Returns (search, stats of the last generation, generations played, first generation's best).
    """

    best_seen, generations, first = -float("inf"), 0, None
    while True:
        key, sub = jax.random.split(key)
        search, state, stats = generation(search, sub, instance)
        generations += 1
        best = float(stats["best"])
        first = best if first is None else first
        if best > best_seen:
            best_seen = best
            if clock.offer(to_solution(problem, state, rules, solver=solver)) and on_improvement:
                on_improvement(stats)
        if clock.out_of_time() or (max_generations is not None and generations >= max_generations):
            return search, stats, generations, first
