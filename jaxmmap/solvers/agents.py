"""The agent as solvers: the only place where `jaxmmap.solvers` meets `jaxmmap.agent`.

mcts         tree search over the true game at every move, no learning (the paper's MCTS ablation)
muzero       the agent trained for the budget (`AgentConfig`, default mode "expert"), its best game
muzero-prod  the heuristic's plan, then the agent, its best game placed (MMap-MuZero-prod)
"""

from __future__ import annotations

import dataclasses
import time

import jax
import numpy as np

from jaxmmap.agent import search
from jaxmmap.agent.config import AgentConfig
from jaxmmap.agent.expert import default_games
from jaxmmap.agent.loop import agent_config, fit
from jaxmmap.core.problem import Problem
from jaxmmap.core.rules import Rules
from jaxmmap.env.instance import make_instance
from jaxmmap.solvers.base import Anytime, NoGameError, Result, run_batches
from jaxmmap.solvers.heuristic import heuristic, play_plan
from jaxmmap.solvers.placer import PLACE_SHARE, place

__all__ = ["mcts", "muzero", "prod"]


def mcts(problem: Problem, budget_s: float, seed: int, *, rules: Rules = Rules(),
         games: int = 8, num_simulations: int = 16, gumbel: bool = False,
         max_batches: int | None = None) -> Result:
    """A solver: batches of games with tree search over the true game at every move and no
    learning (the paper's MCTS ablation), Dirichlet noise at the root so that the games of a
    batch differ; the best finished game is kept until the budget is spent (or `max_batches`
    batches are played)."""
    clock = Anytime(budget_s)
    instance = make_instance(problem, rules)
    played = run_batches(clock, lambda k: search.play_searched_jit(
        None, k, instance, games=games, num_simulations=num_simulations, gumbel=gumbel),
        jax.random.key(seed), problem=problem, rules=rules, solver="mcts", batch=games,
        max_batches=max_batches)
    return clock.result(games=played, num_simulations=num_simulations)


def muzero(problem: Problem, budget_s: float, seed: int, *, rules: Rules = Rules(),
           max_iterations: int | None = None, padding: tuple[int, int, int] | None = None,
           demonstration: np.ndarray | None = None, progress: bool = False, **options) -> Result:
    """A solver: trains the agent (`AgentConfig(**options)`; its default mode is "expert") for
    the budget and returns its best game. Options are `AgentConfig` fields; `network` may be a
    dict of NetworkConfig fields. `progress` shows a progress bar (on stderr).

    Without a `games` option the expert mode plays `default_games(N)`: 64, fewer on
    programs of more than 2,048 buffers, where a chunk is also one generation (the clock is
    looked at after each) unless `generations_per_chunk` is given.

    Raises `NoGameError` when no game finished within the budget."""
    if options.get("mode", AgentConfig.mode) == "expert" and "games" not in options:
        options["games"] = default_games(problem.num_buffers, AgentConfig.games)
    if problem.num_buffers > 2048 and "generations_per_chunk" not in options:
        # a generation of a large program takes seconds: look at the clock after each one
        # (2,700 buffers, 42 s: 48 s used instead of 62 s with 4 generations a chunk)
        options["generations_per_chunk"] = 1
    config = agent_config(**options)
    mode = config.mode
    outcome = fit(problem, config, rules=rules, seed=seed, budget_s=budget_s,
                  max_iterations=max_iterations, padding=padding, solver="muzero",
                  demonstration=demonstration, progress=progress)
    if outcome.solution is None:
        raise NoGameError(
            f"the agent ({mode} mode) finished no game of {problem.name} within {budget_s:g} s"
            f" ({outcome.seconds:.0f} s used, compilation included); raise the budget")
    info = {"iterations": outcome.history[-1]["iteration"], "episodes": outcome.history[-1]["episodes"],
            "mode": mode}
    return Result(solution=outcome.solution, trace=tuple(outcome.trace), seconds=outcome.seconds,
                  info=info)


def prod(problem: Problem, budget_s: float, seed: int, *, rules: Rules = Rules(), **options
         ) -> Result:
    """MMap-MuZero-prod: the heuristic's plan, then the agent for the rest of the budget, its best
    game placed physically and improved by local moves (`placer.place`, with the last
    `PLACE_SHARE` of the budget; the heuristic's plan instead if no agent game finished); the
    better of the two (the heuristic's seconds count against the budget). With a `demonstration_fraction`, the
    agent also learns from the heuristic's decisions as the game plays them."""
    start = time.perf_counter()
    base = heuristic(problem, budget_s, seed, rules=rules, moves=0)  # its plan; the moves come last
    if options.get("demonstration_fraction"):
        options["demonstration"] = play_plan(problem, base.solution.action, rules).action
    left = budget_s - (time.perf_counter() - start)
    trace = [(base.seconds, base.solution.ret)]
    solution, agent_ret, agent = base.solution, None, None
    if left > 0:
        try:
            agent = muzero(problem, (1 - PLACE_SHARE) * left, seed, rules=rules, **options)
        except NoGameError:  # no agent game finished: the heuristic stands
            agent = None
        if agent is not None:
            agent_ret = agent.solution.ret
            offset = time.perf_counter() - start - agent.seconds
            trace += [(offset + t, r) for t, r in agent.trace if r > trace[-1][1]]
    # Last: the agent's best game placed and improved by local moves (the heuristic's plan, if
    # no agent game finished), with the rest of the budget.
    placed = place(problem, agent.solution if agent is not None else base.solution, rules=rules,
                   budget_s=max(budget_s - (time.perf_counter() - start), 1e-3), seed=seed)
    placed_ret = placed.ret if agent is not None else None
    if placed.ret > trace[-1][1]:
        trace.append((time.perf_counter() - start, placed.ret))
    if placed.ret > solution.ret:
        solution = dataclasses.replace(placed, solver="muzero-prod")
    return Result(solution=solution, trace=tuple(trace), seconds=time.perf_counter() - start,
                  info={"heuristic": base.solution.ret, "agent": agent_ret,
                        "agent_placed": placed_ret})


# The options `solve` accepts besides keyword arguments: AgentConfig's fields (prod passes
# muzero's keyword arguments on too).
muzero.config_fields = tuple(f.name for f in dataclasses.fields(AgentConfig))
prod.config_fields = ("max_iterations", "padding", "demonstration", "progress") + muzero.config_fields
# What `solvers.check_options` checks the agent's options against: AgentConfig's defaults, and
# AgentConfig's own checks (mode, counts, fractions), before any work.
muzero.config_defaults = prod.config_defaults = {f.name: f.default for f in dataclasses.fields(AgentConfig)}
muzero.check_options = prod.check_options = lambda options: agent_config(
    **{k: v for k, v in options.items() if k in muzero.config_fields})
