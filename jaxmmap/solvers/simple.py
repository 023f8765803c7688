"""The simplest baselines: uniformly random legal play and greedy play, on the JAX game.

`random` plays batches of games in parallel (`vmap` of jitted rollouts, Drop-backup on) until
the budget is spent and keeps the best; `greedy` plays the legal action with the best immediate
reward (ties: Copy, NoCopy, Drop), which is deterministic, so one game suffices.
"""

from __future__ import annotations

import jax

from jaxmmap.core.problem import Problem
from jaxmmap.core.rules import Rules
from jaxmmap.env.instance import make_instance
from jaxmmap.env.rollout import greedy_policy, random_policy, rollout, rollouts, to_solution
from jaxmmap.solvers.base import Anytime, Result, run_batches


# Jitted once at module level with the instance as an argument: one compile per padded shape,
# shared by every call (a jit of a fresh closure would compile again on each call).
@jax.jit
def _random_games(instance, keys):
    return rollouts(instance, keys, random_policy, backup=True)


@jax.jit
def _greedy_game(instance):
    return rollout(instance, jax.random.key(0), greedy_policy, backup=True)


def random_search(problem: Problem, budget_s: float, seed: int, *, rules: Rules = Rules(),
                  batch: int = 256) -> Result:
    clock = Anytime(budget_s)
    instance = make_instance(problem, rules)
    games = run_batches(clock, lambda k: _random_games(instance, jax.random.split(k, batch)),
                        jax.random.key(seed), problem=problem, rules=rules, solver="random", batch=batch)
    return clock.result(games=games)


def greedy(problem: Problem, budget_s: float, seed: int, *, rules: Rules = Rules()) -> Result:
    del seed  # deterministic
    clock = Anytime(budget_s)
    instance = make_instance(problem, rules)
    state = _greedy_game(instance)
    if bool(state.done) and not bool(state.lost):
        clock.offer(to_solution(problem, state, rules, solver="greedy"))
    return clock.result(games=1)
