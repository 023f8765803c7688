"""The simplest baselines: uniformly random legal play and greedy play, on the JAX game.

`random` plays batches of games in parallel (`vmap` of jitted rollouts, Drop-backup on) until
the budget is spent, or a batch cannot end within it, and keeps the best; `greedy` plays the
legal action with the best immediate reward (ties: Copy, NoCopy, Drop), which is deterministic,
so one game suffices. Both play in slices of about a second and look at the clock between them
(`base.play_on_the_clock`): when the budget ends inside a game, the game is finished Drop-first,
so that a run of any size ends on time with a valid solution (`info["finished"]`: greedy's game
ended by its own policy; random's `games`: those that ended).
"""

from __future__ import annotations

import jax
import numpy as np

from jaxmmap.core.problem import Problem
from jaxmmap.core.rules import Rules
from jaxmmap.env.instance import make_instance
from jaxmmap.env.rollout import games_within, greedy_policy, nth_game, random_policy, start, to_solution, won_returns
from jaxmmap.solvers.base import Anytime, Result, play_on_the_clock
from jaxmmap.solvers.spec import Option, declare


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
    state, finished = play_on_the_clock(clock, start(instance, 1), jax.random.split(jax.random.key(0), 1),
                                        greedy_policy)
    if bool(state.done[0]) and not bool(state.lost[0]):
        clock.offer(to_solution(problem, nth_game(state, 0), rules, solver="greedy"))
    return clock.result(games=1, finished=finished)


declare(random_search, {"batch": Option(int, "[1, inf)", "games played at once (fewer on large programs: memory)")})
declare(greedy, {})
