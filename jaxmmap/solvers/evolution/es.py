"""The MMap-MuZero paper's evolutionary-search baseline: OpenAI-ES (Salimans et al. 2017) over the
weights of a small policy (`jaxmmap.solvers.evolution.policy`).

One generation: evosax's `Open_ES` asks for a population of parameter vectors (mirrored/antithetic
Gaussian perturbations of the mean; a jitted `ask`), every member plays one game with the
deterministic (argmax) policy (Drop-backup on, one batch played in slices of about a second with
the clock looked at between them: `base.play_on_the_clock`), then the fitness (minus the return:
evosax minimises) is centred-rank shaped and the mean moves along the ES gradient with Adam (a
jitted `tell`). The mean itself also plays each generation (one extra game), so the search never
reports less than its starting policy. A generation the budget cuts does not count; if no
generation has finished by then, its furthest game is ended Drop-first, so the run still ends on
time with a valid solution. `make_generation(...).generation` is the three in one function.

Decisions:
* The mean starts at the greedy policy (`policy.init_params(greedy=True)`: the argmax policy of
  the start is exactly `play.greedy_policy`), and the mean plays every generation, so the first
  solution reported (after one generation) is already at least greedy's, which is far above
  random play on every instance of the suite; the perturbations then search policies that
  trade an immediate reward for space, supply or copy-engine time. This is a guarantee for the
  anytime curve more than a speed-up at the end: a random start (`greedy_start=False,
  init_noise=0.1`) reaches the same returns within a minute on small programs (the features make
  even a random linear policy decent), but starts below greedy (docs/decisions.md, Solvers).
* Argmax, not sampled, actions: as in Salimans et al., the perturbation is the exploration, and
  the fitness of a parameter vector is then exact (no evaluation noise): every game of a
  generation is a distinct, reproducible candidate solution.
* Elitist restarts (a departure from Salimans et al.): when no game has beaten the best for
  `patience` generations, the mean restarts at the parameters of the best game so far (and
  Adam's moments are reset). Why: from the greedy start most perturbations lose return, so the
  centred-rank gradient points to where perturbations hurt least, and within a few generations
  the mean drifts onto a plateau where every member plays greedy's game; all fitnesses tie, the
  centred ranks (which break ties by index) only push the mean along a random direction, and the
  search stalls for good (docs/decisions.md, "ES without restarts"). Restarting at the best
  parameters keeps the search moving between better and better basins. With
  `restart_from="start"` the mean goes back to its starting parameters instead (the best game is
  kept), as the agent's stalled search goes back to its first center: a fresh climb from the
  start, with other perturbations, may end in another basin.
* Compilation: the generation function takes the `Instance` as an argument and is cached per
  configuration, so instances padded to the same bucket (`padding=`) share one compile.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import jax
import jax.flatten_util
import jax.numpy as jnp
import optax
from flax import struct

from jaxmmap.core.problem import Problem
from jaxmmap.core.rules import Rules
from jaxmmap.env import observation
from jaxmmap.env.instance import Instance, make_instance
from jaxmmap.env.rollout import generation_games, nth_game, rollouts, start, to_solution, won_returns
from jaxmmap.solvers.base import Anytime, CountedJit, Result, play_on_the_clock, strong_types
from jaxmmap.solvers.evolution import policy
from jaxmmap.solvers.heuristic import plan_policy, plan_start
from jaxmmap.solvers.spec import FROM_HEURISTIC, MAX_GENERATIONS, PADDING, Option, declare


@struct.dataclass
class EsState:
    """The state of the search between generations (D: the number of policy parameters).

    Attributes:
      es: the evosax `Open_ES` state (mean float32[D], Adam state, ...).
      best_params: float32[D] the parameters of the best game so far.
      best_return: float32[] its return (-inf before the first generation).
      stall: int32[] generations since the best return last improved (with
        `restart_from="start"`: since `climb_best` last did).
      restarts: int32[] restarts so far.
      start_params: float32[D] the mean's parameters at the start (`restart_from="start"`).
      climb_best: float32[] the best return since the last restart (-inf before a generation).
    """

    es: Any
    best_params: jax.Array
    best_return: jax.Array
    stall: jax.Array
    restarts: jax.Array
    start_params: jax.Array
    climb_best: jax.Array


class Generation(NamedTuple):
    """One configuration's pure functions (not jitted: `es` jits them).

    `init(key, mean_params) -> EsState`. A generation is `ask(search, key) -> (search, asked)`
    (restarts the mean at the best parameters, or at the start's with `restart_from="start"`, if
    the search has stalled for `patience` generations, and asks for the population:
    `asked.everyone` holds population + 1 parameter vectors, the last the mean's), one game per
    vector (`member_policy`), then
    `tell(search, asked, returns) -> (search, best, stats)` (the strategy and the best updated;
    `best` the index of this generation's best game, `stats` float32[] figures: best,
    mean_policy, median). `generation(search, key, instance) -> (search, best_state, stats)` is the
    three in one function, its games in one `rollouts` batch."""

    strategy: Any
    init: Any
    ask: Any
    tell: Any
    generation: Any


@functools.lru_cache(maxsize=16)
def make_generation(population: int, hidden: int, sigma: float, lr: float, patience: int,
                    plan_weight: float | None = None, restart_from: str = "best") -> Generation:
    """The `Generation` of one configuration (`plan_weight`: the policy reads a plan,
    `policy.init_params`; `restart_from`: "best" or "start", `es`)."""
    from evosax.algorithms import Open_ES  # here: `import jaxmmap` does not need evosax

    if restart_from not in ("best", "start"):
        raise ValueError(f"restart_from must be 'best' or 'start'; got {restart_from!r}")

    template = policy.init_params(jax.random.key(0), hidden=hidden, plan_weight=plan_weight)
    strategy = Open_ES(population_size=population, solution=template,
                       use_antithetic_sampling=True, optimizer=optax.adam(lr),
                       std_schedule=optax.constant_schedule(sigma))
    params = strategy.default_params
    ravel = jax.vmap(lambda p: jax.flatten_util.ravel_pytree(p)[0])

    def init(key: jax.Array, mean) -> EsState:
        state = strategy.init(key, mean, params)
        return strong_types(EsState(es=state, best_params=state.mean,
                                   best_return=jnp.float32(-jnp.inf), stall=jnp.int32(0),
                                   restarts=jnp.int32(0), start_params=state.mean,
                                   climb_best=jnp.float32(-jnp.inf)))

    def ask(search: EsState, key: jax.Array):
        k_ask, k_tell = jax.random.split(key)
        restart = search.stall >= patience
        to = search.start_params if restart_from == "start" else search.best_params
        es_state = jax.lax.cond(
            restart, lambda s: s.replace(mean=to, opt_state=strategy.optimizer.init(to)),
            lambda s: s, search.es)
        members, es_state = strategy.ask(k_ask, es_state, params)
        mean = strategy.get_mean(es_state)
        everyone = jax.tree.map(lambda p, m: jnp.concatenate([p, m[None]]), members, mean)
        asked = {"members": members, "everyone": everyone, "restart": restart, "key": k_ask, "tell": k_tell}
        return search.replace(es=es_state), asked

    def tell(search: EsState, asked: dict, returns: jax.Array):
        fitness = jnp.where(jnp.isfinite(returns[:population]), -returns[:population], jnp.inf)
        es_state, _ = strategy.tell(asked["tell"], asked["members"], fitness, search.es, params)
        best = jnp.argmax(returns)
        better = returns[best] > search.best_return
        climb_best = jnp.where(asked["restart"], -jnp.inf, search.climb_best)
        # (from the start, a climb is stalled when it stops rising, not when it is below the best)
        rose = returns[best] > climb_best if restart_from == "start" else better
        search = EsState(
            es=es_state,
            best_params=jnp.where(better, ravel(asked["everyone"])[best], search.best_params),
            best_return=jnp.maximum(returns[best], search.best_return),
            stall=jnp.where(rose | asked["restart"], 0, search.stall + 1),
            restarts=search.restarts + asked["restart"].astype(jnp.int32), start_params=search.start_params,
            climb_best=jnp.maximum(returns[best], climb_best))
        stats = {"best": returns[best], "mean_policy": returns[population],
                 "median": jnp.median(returns[:population])}
        return strong_types(search), best, stats

    def generation(search: EsState, key: jax.Array, instance: Instance, plan: jax.Array | None = None):
        search, asked = ask(search, key)
        size = population + 1
        states = rollouts(instance, jnp.broadcast_to(asked["key"], (size,)), member_policy, backup=True,
                          params=members_with(asked, instance, plan))
        search, best, stats = tell(search, asked, won_returns(states))
        return search, nth_game(states, best), stats

    return Generation(strategy, init, ask, tell, generation)


def member_policy(member) -> policy.Policy:
    """A member's policy: its parameters with the instance's feature context and, where the
    search starts from a plan, that plan; a member whose `follow` is set plays the plan itself
    (`heuristic.plan_policy`) instead (`members_with`)."""
    weights, ctx, *planned = member
    if not planned:
        return policy.make_policy(weights, ctx)
    plan, follow = planned
    own, replay = policy.make_policy(weights, ctx, plan=plan), plan_policy(plan)
    return lambda key, state: jnp.where(follow, replay(key, state), own(key, state))


def members_with(asked: dict, instance: Instance, plan: jax.Array | None = None,
                 follow: jax.Array | None = None):
    """Every asked parameter vector with the instance's feature context (and `plan`, int32[N],
    when given, with `follow`, bool[population + 1], the members that play the plan itself;
    default none), batched for `rollouts`."""
    size = jax.tree.leaves(asked["everyone"])[0].shape[0]
    shared = (observation.context(instance),) + (() if plan is None else (plan,))
    batched = jax.tree.map(lambda x: jnp.broadcast_to(x, (size, *x.shape)), shared)
    if plan is not None:
        batched += (jnp.zeros(size, bool) if follow is None else follow,)
    return (asked["everyone"], *batched)


@functools.lru_cache(maxsize=16)
def _jitted(population: int, hidden: int, sigma: float, lr: float, patience: int, plan_weight: float | None,
            restart_from: str):
    """(init, ask, tell) of one configuration, `ask` also returning the members' policy
    parameters (`members_with`); both jitted, their compiles counted."""
    g = make_generation(population, hidden, sigma, lr, patience, plan_weight, restart_from)

    def ask(search: EsState, key: jax.Array, instance: Instance, plan: jax.Array | None, follow: jax.Array | None):
        search, asked = g.ask(search, key)
        return search, asked, members_with(asked, instance, plan, follow)

    return g.init, CountedJit(ask), CountedJit(g.tell)


#: ES's population on programs of up to 4,096 buffers; fewer above (`rollout.generation_games`).
POPULATION = 32


def es(problem: Problem, budget_s: float, seed: int, *, rules: Rules = Rules(),
       population: int | None = None, sigma: float = 0.1, lr: float = 0.03, hidden: int = 0,
       patience: int = 10, restart_from: str = "best", greedy_start: bool = True, init_noise: float = 0.0,
       from_heuristic: bool | None = None, plan_weight: float = 1.0, max_generations: int | None = None,
       padding: tuple[int, int, int] | None = None) -> Result:
    """OpenAI-ES over the policy's weights under a wall-clock budget.

    Args:
      population: games per generation besides the mean's (even: mirrored pairs). None: sized
        as the agent's generations, `rollout.generation_games(N, POPULATION)` (docs/decisions.md).
      sigma: standard deviation of the parameter perturbations (the features are O(1), and the
        greedy start has unit weights on the reward features).
      lr, hidden: Adam's learning rate of the mean; the MLP width of the policy (0: linear).
      patience: generations without a better game (elitist restart, module docstring; "start":
        without a rise since the last restart) before the mean restarts; 0 disables it.
      restart_from: where a restart puts the mean: "best" (the best game's parameters) or "start".
      greedy_start: start the mean at the greedy policy (else at zero weights plus `init_noise`).
      init_noise: standard deviation of noise added to the start's linear weights.
      from_heuristic: start from the heuristic's plan (`heuristic.plan_start`, `PLAN_SHARE` of
        the budget): its game is the first generation's mean's game (played apart first on
        programs too large to end a game inside the batch), and the policy reads the plan (one
        weight per action, `plan_weight` at the start) beside the features, so the mean plays
        the plan where the features do not outweigh it and the perturbations search around it.
        None (default): in the deferred game (`Rules.placement`), which keeps 0.99 of the plan's
        return, not in the paper's grid, which keeps 0.92 (`benchmarks/expressive.py`).
      plan_weight: the start's weight of the plan (with `from_heuristic`).
      max_generations: stop after this many generations even if time is left (runs of a seed
        that fit the budget are then identical).
      padding: (buffers, steps, tables) to pad the instance to (default: `instance.bucket`);
        instances of one padding share one compiled generation.

    info: generations, games, traces (compiles of the generation function in this call),
    restarts, first_generation_best, mean_policy_return (the return of the final mean's game).
    """
    clock = Anytime(budget_s)
    population = generation_games(problem.num_buffers, POPULATION) if population is None else population
    n, t, k = padding if padding is not None else (None, None, None)
    instance = make_instance(problem, rules, num_buffers=n, num_steps=t, num_tables=k)
    from_heuristic, plan, replay, ended = plan_start(clock, problem, rules, instance.width.shape[0], "es",
                                                     from_heuristic, games=population + 1)
    if ended is not None:  # (no time left for a generation: the plan's game stands)
        return ended
    weight = float(plan_weight) if from_heuristic else None
    config = (population, hidden, float(sigma), float(lr), patience if patience > 0 else 2 ** 30, weight, restart_from)
    init, ask, tell = _jitted(*config)
    traces = ask.traces + tell.traces
    key_init, key = jax.random.split(jax.random.key(seed))
    begin = policy.init_params(key_init, hidden=hidden, greedy=greedy_start, scale=init_noise, plan_weight=weight)
    search = init(key_init, begin)
    generations, first, stats, best_seen = 0, None, None, -float("inf")
    while max_generations is None or generations < max_generations:
        key, sub = jax.random.split(key)
        # (with `replay`, the first generation's last game, the mean's, plays the plan itself)
        follow = None if plan is None else jnp.arange(population + 1) == jnp.where(replay, population, -1)
        asked_search, asked, members = ask(search, sub, instance, plan, follow)
        keys = jnp.broadcast_to(asked["key"], (population + 1,))  # argmax policies: one key for all
        # the games in slices, the clock looked at between them (a generation can take minutes)
        states, whole = play_on_the_clock(clock, start(instance, population + 1), keys, member_policy,
                                          params=members, finish=clock.best is None,
                                          finish_game=population if replay else None)
        if not whole:  # the budget ended inside the generation: it does not count
            if bool(states.done[0]) and not bool(states.lost[0]) and clock.best is None:
                clock.offer(to_solution(problem, nth_game(states, 0), rules, solver="es"))
            break
        search, best, stats = tell(asked_search, asked, won_returns(states))
        if replay:  # from now on the members read the plan as its game played it
            plan, replay = jnp.where(plan >= 0, states.board.action[population], -1), False
        generations += 1
        value = float(stats["best"])
        first = value if first is None else first
        if value > best_seen:
            best_seen = value
            clock.offer(to_solution(problem, nth_game(states, int(best)), rules, solver="es"))
        if clock.out_of_time():
            break
    return clock.result(generations=generations, games=generations * (population + 1),
                        traces=ask.traces + tell.traces - traces, restarts=int(search.restarts),
                        first_generation_best=first,
                        mean_policy_return=float("nan") if stats is None else float(stats["mean_policy"]),
                        population=population, sigma=sigma, lr=lr, hidden=hidden, from_heuristic=from_heuristic)


def _even_population(options: dict) -> None:
    if (options.get("population") or 2) % 2:  # (mirrored sampling: pairs)
        raise ValueError(f"population must be even (mirrored pairs); got {options['population']}")


declare(es, {
    "population": Option(int, "[2, inf)", "games per generation besides the mean's (even: mirrored pairs; null:"
                         " 32, fewer above 4,096 buffers)", null=True),
    "sigma": Option(float, "(0, inf)", "standard deviation of the parameter perturbations"),
    "lr": Option(float, "(0, inf)", "Adam learning rate of the mean"),
    "hidden": Option(int, "[0, inf)", "MLP width of the policy (0: linear)"),
    "patience": Option(int, "[0, inf)", "generations without a better game (restart_from=start: without a rise"
                       " since the last restart) before the mean restarts (0: never)"),
    "restart_from": Option(str, doc="where a restart puts the mean: the best game's parameters or the start's",
                           choices=("best", "start")),
    "greedy_start": Option(bool, doc="start the mean at the greedy policy (else at zero weights plus init_noise)"),
    "init_noise": Option(float, "[0, inf)", "standard deviation of the noise on the start's linear weights"),
    "from_heuristic": FROM_HEURISTIC,
    "plan_weight": Option(float, "[0, inf)", "the start's weight of the plan (with from_heuristic)"),
    "max_generations": MAX_GENERATIONS,
    "padding": PADDING,
}, check=_even_population)
