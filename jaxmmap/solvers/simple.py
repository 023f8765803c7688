"""The simplest baselines: uniformly random legal play and greedy play, on the JAX game.

`random` plays batches of games in parallel (`vmap` of jitted rollouts, Drop-backup on) until
the budget is spent, or a batch cannot end within it, and keeps the best. `greedy` plays a game
for each of `DENSITIES`, one after the other (anytime): at each move the legal placement of the
highest potential reward per column-step it allocates, where that is at least the game's least
density (`rollout.density_policy`), else Drop; and keeps the game of the highest return. It is
deterministic. Both play in slices of about a second and look at the clock between them
(`base.play_on_the_clock`): when the budget ends inside the first game, that game is finished
Drop-first, so that a run of any size ends on time with a valid solution (`info["finished"]`:
greedy's best game ended by its own policy; `games`: the games that ended).
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
#: at which every use's estimated benefit would fill the memory at every step (`least_densities`),
#: in the order greedy plays them. 0 places every use that can pay, in program order; the others
#: leave room for the denser uses that come later. Four, 16x apart at the ends; measured on the
#: tuning programs (the suite's training split, generated seeds 2000-2003:
#: `benchmarks/greedy_starts.py`), not tuned further. 0 first: its game was the best on most of them.
DENSITIES = (0.0, 0.25, 1.0, 4.0)


def least_densities(problem: Problem, rules: Rules) -> np.ndarray:
    """float32[len(DENSITIES)]: greedy's games' least densities on `problem` (`DENSITIES` times the
    sum of every use's positive estimated benefit, `heuristic.benefit_estimate`, over the usable
    columns times the steps)."""
    d = discretize(problem, rules)
    full = float(np.sum(np.maximum(benefit_estimate(problem, d), 0.0))) / (d.usable_columns * d.supply.shape[0])
    return np.asarray(DENSITIES, np.float32) * np.float32(full)


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
        if clock.out_of_time() or not whole and (batch == 1 or clock.elapsed() > budget_s / 2):
            return clock.result(games=played, batch=batch)
        if not whole:  # a batch cut with most of the budget left could not end a game in it (on large
            # programs random games lose often, and each restore replays the game): a quarter of it
            batch = max(1, batch // 4)


def greedy(problem: Problem, budget_s: float, seed: int, *, rules: Rules = Rules()) -> Result:
    del seed  # deterministic
    clock = Anytime(budget_s)
    instance = make_instance(problem, rules)
    finished, played, best, keys = False, 0, None, jax.random.split(jax.random.key(0), 1)
    for i, least in enumerate(least_densities(problem, rules)):
        # one game at a time (one compile: the least density is a parameter): each is offered as it
        # ends, and a budget that ends inside a later game lets it go (a batch of all four, slowed
        # by each game's restores, had been cut before any ended on the largest programs)
        states, whole = play_on_the_clock(clock, start(instance, 1), keys,
                                          density_policy, params=jnp.full(1, least), finish=clock.best is None)
        ret = float(np.asarray(won_returns(states))[0])
        played += int(whole)
        if np.isfinite(ret) and (clock.best is None or ret > clock.best.ret):
            clock.offer(to_solution(problem, nth_game(states, 0), rules, solver="greedy"))
            finished, best = whole, DENSITIES[i]
        if clock.out_of_time() or not whole:
            break
    return clock.result(games=played, finished=finished, density=best)


declare(random_search, {"batch": Option(int, "[1, inf)", "games played at once (fewer on large programs: memory)")})
declare(greedy, {})
