"""The simplest baselines: uniformly random legal play and greedy play, on the JAX game.

`random` plays batches of games in parallel (`vmap` of jitted rollouts, Drop-backup on) until
the budget is spent, or a batch cannot end within it, and keeps the best. `greedy` plays, in one
batch, a game for each of `DENSITIES`: at each move the legal placement of the highest potential
reward per column-step it allocates, where that is at least the game's density
(`rollout.density_policy`), else Drop; and keeps the game of the highest return. It is
deterministic. Both play in slices of about a second and look at the clock between them
(`base.play_on_the_clock`): when the budget ends inside a game, the game is finished Drop-first,
so that a run of any size ends on time with a valid solution (`info["finished"]`: greedy's games
ended by their own policy; random's `games`: those that ended).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxmmap.core.problem import Problem
from jaxmmap.core.rules import Rules, discretize
from jaxmmap.env.instance import make_instance
from jaxmmap.env.rollout import density_policy, games_within, nth_game, random_policy, start, to_solution, won_returns
from jaxmmap.solvers.base import Anytime, Result, play_on_the_clock
from jaxmmap.solvers.heuristic import benefit_estimate
from jaxmmap.solvers.spec import Option, declare

#: Greedy's games' least densities (potential reward per column-step), as multiples of the density
#: at which every use's estimated benefit would fill the memory at every step. 0 places every use
#: that can pay, in program order; the others leave room for the denser uses that come later.
#: Four, 16x apart at the ends, one batch; measured on the tuning programs (the suite's training
#: split, generated seeds 2000-2003: `benchmarks/greedy_starts.py`), not tuned further.
DENSITIES = (0.0, 0.25, 1.0, 4.0)


def random_search(problem: Problem, budget_s: float, seed: int, *, rules: Rules = Rules(),
                  batch: int = 256) -> Result:
    clock = Anytime(budget_s)
    instance = make_instance(problem, rules)
    batch = games_within(instance, batch)  # (fewer on large programs: memory)
    key, played = jax.random.key(seed), 0
    while True:
        key, sub = jax.random.split(key)
        # once a game has finished, a batch cut by the budget is let go; before, its furthest
        # game is ended (Drop first) so that the run returns a solution
        states, whole = play_on_the_clock(clock, start(instance, batch), jax.random.split(sub, batch),
                                          random_policy, finish=clock.best is None)
        returns = np.asarray(won_returns(states))
        best = int(np.argmax(returns))
        played += int(np.sum(np.isfinite(returns)))
        if np.isfinite(returns[best]):
            clock.offer(to_solution(problem, nth_game(states, best), rules, solver="random"))
        if clock.out_of_time() or not whole:  # (a batch cut short: the next would be too)
            return clock.result(games=played, batch=batch)


def greedy(problem: Problem, budget_s: float, seed: int, *, rules: Rules = Rules()) -> Result:
    del seed  # deterministic
    clock = Anytime(budget_s)
    instance = make_instance(problem, rules)
    d = discretize(problem, rules)
    full = float(np.sum(np.maximum(benefit_estimate(problem, d), 0.0))) / (d.usable_columns * d.supply.shape[0])
    games = games_within(instance, len(DENSITIES))
    densities = jnp.asarray(DENSITIES[:games], jnp.float32) * full
    states, finished = play_on_the_clock(clock, start(instance, games), jax.random.split(jax.random.key(0), games),
                                         density_policy, params=densities)
    returns = np.asarray(won_returns(states))
    best = int(np.argmax(returns))
    if np.isfinite(returns[best]):
        clock.offer(to_solution(problem, nth_game(states, best), rules, solver="greedy"))
    return clock.result(games=int(np.sum(np.isfinite(returns))), finished=finished,
                        density=float(DENSITIES[best]) if np.isfinite(returns[best]) else None)


declare(random_search, {"batch": Option(int, "[1, inf)", "games played at once (fewer on large programs: memory)")})
declare(greedy, {})
