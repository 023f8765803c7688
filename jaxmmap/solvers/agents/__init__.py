"""The agent as solvers: the only place where `jaxmmap.solvers` meets `jaxmmap.agent`.

mcts         tree search over the true game at every move, no learning (the paper's MCTS ablation)
muzero       the agent trained for the budget (`AgentConfig`, default mode "expert"), its best game
muzero-prod  the heuristic's plan, then the agent, its best game placed (MMap-MuZero-prod)
generalist   the pretrained network's greedy game (`agent.generalist`) and its guide (`agent.guide`), zero-shot
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from jaxmmap.agent import generalist as generalist_lib
from jaxmmap.agent import guide as guide_lib
from jaxmmap.agent import search
from jaxmmap.agent.config import AgentConfig
from jaxmmap.agent.loop import agent_config, fit
from jaxmmap.core.problem import Problem
from jaxmmap.core.rules import Rules
from jaxmmap.env import observation
from jaxmmap.env.instance import make_instance
from jaxmmap.env.rollout import generation_games, nth_game, start, to_solution, won_returns
from jaxmmap.solvers.agents._options import AGENT_OPTIONS, COUNT, RUN_OPTIONS
from jaxmmap.solvers.base import (
    ALONE_RATE,
    Anytime,
    NoGameError,
    Result,
    finish_furthest,
    in_slices,
    moves_left,
    play_on_the_clock,
)
from jaxmmap.solvers.heuristic import PLAN_SHARE, from_plan, heuristic, play_plan
from jaxmmap.solvers.heuristic import plan as heuristic_plan
from jaxmmap.solvers.placer import PLACE_SHARE, RESTARTS, place
from jaxmmap.solvers.simple import greedy
from jaxmmap.solvers.spec import FROM_HEURISTIC, Option, check, declare

__all__ = ["generalist", "mcts", "muzero", "prod", "teacher"]


def mcts(problem: Problem, budget_s: float, seed: int, *, rules: Rules = Rules(),
         games: int = 8, num_simulations: int = 16, gumbel: bool = False,
         max_batches: int | None = None) -> Result:
    """A solver: batches of games with tree search over the true game at every move and no
    learning (the paper's MCTS ablation), Dirichlet noise at the root so that the games of a
    batch differ; the best finished game is kept until the budget is spent (or `max_batches`
    batches are played). A batch is played in slices with the clock looked at between them
    (`base.in_slices`); if the budget ends before the first batch does, its furthest game is
    ended Drop-first, so that the run still ends on time with a valid solution."""
    clock = Anytime(budget_s)
    instance = make_instance(problem, rules)
    key, batches = jax.random.key(seed), 0

    def advance(carry, moves):
        return search.advance_searched_jit(None, carry[1], carry[0], instance, moves,
                                           num_simulations=num_simulations, gumbel=gumbel)

    while max_batches is None or batches < max_batches:
        key, sub = jax.random.split(key)
        # (before a first solution, the slices leave time to end the furthest game Drop-first)
        tail = (lambda c, rate, first: moves_left(c[0], rate, first, compile_again=True)) if clock.best is None else None
        (states, _), whole = in_slices(clock, advance, (search.start_searched(instance, games), sub),
                                       lambda carry: carry[0].done, tail=tail)
        states = states.replace(instance=instance)
        if not whole:  # the budget ended inside the batch: only a first solution is taken from it
            if clock.best is None:
                ended = finish_furthest(states, jax.random.split(sub, games))
                clock.offer(to_solution(problem, nth_game(ended, 0), rules, solver="mcts"))
            break
        batches += 1
        returns = np.asarray(won_returns(states))
        if np.isfinite(returns.max()):
            clock.offer(to_solution(problem, nth_game(states, int(np.argmax(returns))), rules, solver="mcts"))
        if clock.out_of_time():
            break
    return clock.result(games=batches * games, num_simulations=num_simulations)


def muzero(problem: Problem, budget_s: float, seed: int, *, rules: Rules = Rules(),
           max_iterations: int | None = None, padding: tuple[int, int, int] | None = None,
           demonstration: np.ndarray | None = None, progress: bool = False, workdir: str | None = None,
           checkpoint_every: int = 10, place_share: float | None = None, guide: bool = True,
           from_heuristic: bool | None = None, **options) -> Result:
    """A solver: trains the agent (`AgentConfig(**options)`; its default mode is "expert") for
    the budget and returns its best game (placed, with `place_share`). Options are
    `AgentConfig` fields; `network` may be a dict of NetworkConfig fields. `progress` shows a
    progress bar (on stderr); `workdir` keeps the run's logs and checkpoints there and resumes
    from them (`agent.loop.fit`; train.py).

    Without a `games` option the expert mode plays `rollout.generation_games(N, 64)`: 64, fewer above 2,048
    buffers, where a chunk is one generation (the clock looked at after each) by default.

    On larger programs the expert mode first plays its start as single games
    (`_first_game`: greedy's game, and with `pretrained` the shipped network's too), its first
    best game and center: a generation there can take longer than the budget, and the solver
    then returns that start instead of no game.

    With `place_share` > 0 (None: `PLACE_ROUNDS_SHARE`) the search stops at `1 - place_share`
    of the budget and the rest places its best game physically and improves it by rounds of the
    placer's local moves (`_placed_rounds`): the written solution is the simulator's, not the
    game's own placement (`info["game"]` keeps the game's return, `info["place_rounds"]` the
    rounds). Their first round descends from each start (`ROUND_FRESH`): the game's placement,
    the placement of no decisions, and with `pretrained` and `guide` that placement with the
    shipped network's guide read in (`agent.guide`; below `LARGE` buffers its game is played for
    the guide alone, within `START_SHARE` of the search's budget); the result carries the guide.

    With `from_heuristic` (None: in the deferred game only, as `es`) the expert mode starts
    instead from the heuristic's plan as the game plays it (`PLAN_SHARE` of the search's budget).

    Raises `NoGameError` when no game finished within the budget."""
    place_share = PLACE_ROUNDS_SHARE if place_share is None else place_share
    check(muzero, {"place_share": place_share})
    large = problem.num_buffers > LARGE
    if options.get("mode", AgentConfig.mode) == "expert" and "games" not in options:
        options["games"] = generation_games(problem.num_buffers, AgentConfig.games)
    if large and "generations_per_chunk" not in options:
        # a generation of a large program takes seconds: look at the clock after each one, or a
        # chunk of several overruns a short budget
        options["generations_per_chunk"] = 1
    config = agent_config(**options)
    mode = config.mode
    began, first, wish = time.perf_counter(), None, None  # (wish: the guide, float32[N, 3], where drawn)
    if from_plan(rules, from_heuristic) and mode == "expert" and demonstration is None:
        plan = heuristic(problem, PLAN_SHARE * (1 - place_share) * budget_s, 0, rules=rules).solution.action
        first = Result(solution=play_plan(problem, plan, rules, solver="heuristic-plan"), trace=(), seconds=0.0, info={})
        demonstration = first.solution.action
        Anytime(budget_s).offer(first.solution)  # (a clock that holds it, for `solve`'s cut-off: `clock.within`)
    elif large and mode == "expert" and demonstration is None:
        first = _first_game(problem, START_SHARE * (1 - place_share) * budget_s, seed, rules, config.pretrained)
        demonstration, wish = first.solution.action, first.guide if guide else None
    if wish is None and config.pretrained and guide and place_share > 0 and not (large and first is not None):
        # (its game's guide only: the search plays its games)
        wish = _network_games(problem, START_SHARE * (1 - place_share) * budget_s, seed, rules,
                              generalist_lib.load()[0], samples=False).guide
    before = time.perf_counter() - began
    outcome = fit(problem, config, rules=rules, seed=seed, budget_s=(1 - place_share) * budget_s - before,
                  max_iterations=max_iterations, padding=padding, solver="muzero",
                  demonstration=demonstration, progress=progress, workdir=workdir,
                  checkpoint_every=checkpoint_every)
    solution, trace = outcome.solution, [(before + t, r) for t, r in outcome.trace]
    if first is not None:
        trace = [(before, first.solution.ret)] + trace
        if solution is None:  # no game of the search beat its start
            solution = dataclasses.replace(first.solution, solver="muzero")
    if solution is None:
        raise NoGameError(
            f"the agent ({mode} mode) finished no game of {problem.name} within {budget_s:g} s"
            f" ({time.perf_counter() - began:.0f} s used, compilation included); raise the budget")
    last = outcome.history[-1] if outcome.history else {"iteration": 0, "episodes": 0}  # (no chunk ended)
    info = {"iterations": last["iteration"], "episodes": last["episodes"], "resumed": list(outcome.resumed), "mode": mode,
            "restarts": sum(row.get("restarts", 0) for row in outcome.history),
            "start": None if first is None else first.solution.solver, "game": float(solution.ret)}
    if place_share > 0:
        solution, rounds = _placed_rounds(problem, rules, seed, solution, trace, began, budget_s, guide=wish)
        info["place_rounds"] = rounds
    return Result(solution=solution, trace=tuple(trace), seconds=time.perf_counter() - began, info=info,
                  guide=wish)


def _placed_rounds(problem: Problem, rules: Rules, seed: int, game, trace: list, began: float, budget_s: float,
                   guide: np.ndarray | None = None):
    """`muzero`'s last part: its best `game` placed, then rounds of the placer's local moves
    (each `placer.RESTARTS + 1` descents from the best so far, new seeds each round) until the
    budget ends or `ROUNDS_PATIENCE` rounds in a row have not paid; each better solution is
    appended to `trace`. With `ROUND_FRESH` the first round descends from each of the game's
    placement, the placement of no decisions, and that with the pretrained network's `guide` read
    in (`placer.place(fresh=..., guide=..., each_start=True)`). Returns the best solution and the
    number of rounds."""
    best, rounds, since = game, 0, 0
    while (left := budget_s - (time.perf_counter() - began)) > ROUND_FLOOR_S and since < ROUNDS_PATIENCE:
        first = rounds == 0
        placed = place(problem, best, rules=rules, budget_s=left, seed=seed + 10 * rounds, restarts=RESTARTS,
                       replan=first, fresh=first and ROUND_FRESH, guide=guide if first else None,
                       each_start=first and ROUND_FRESH)
        rounds, since = rounds + 1, since + 1
        if placed is not best:
            best, since = dataclasses.replace(placed, solver=f"{game.solver}+placed"), 0
            trace.append((time.perf_counter() - began, float(best.ret)))
    return best, rounds


#: `_placed_rounds`' first round also descends from the placement of no decisions (and the guide's).
ROUND_FRESH = True
#: `_placed_rounds` stops after this many rounds in a row that did not pay. (With one, the rounds
#: left much of a long budget unused; docs/decisions.md, The agent.)
ROUNDS_PATIENCE = 3
#: No round starts with less than this many seconds left (the input's check alone takes a
#: fraction of a second on large programs).
ROUND_FLOOR_S = 1.0


#: `muzero`'s default `place_share`: the part of its budget that places its best game and
#: improves it by rounds of the placer's descents. Chosen against none on four programs of the
#: suite's training split (docs/decisions.md, "No `place_share`").
PLACE_ROUNDS_SHARE = 0.5

#: Buffers above which `muzero` plays one generation a chunk and starts from `_first_game`.
LARGE = 2048
#: The most of `muzero`'s budget its first game(s) may take.
START_SHARE = 0.25


def _first_game(problem: Problem, budget_s: float, seed: int, rules: Rules, pretrained: bool) -> Result:
    """The expert search's first best game and center, which its games must beat: `greedy`'s
    game, and with `pretrained` the better of it and the shipped network's own (`generalist`;
    greedy's is then the same compiled game with the correction at zero), each a single game
    on the clock (ended Drop-first if it runs out)."""
    if not pretrained:
        return greedy(problem, budget_s, seed, rules=rules)
    shipped = generalist_lib.load()[0]
    own = _network_games(problem, budget_s / 2, seed, rules, shipped, samples=False)
    plain = _network_games(problem, budget_s / 2, seed, rules, generalist_lib.untrained(shipped), samples=False,
                           solver="greedy")
    return own if own.solution.ret >= plain.solution.ret else plain


#: The most of prod's budget the heuristic may take (it ends in seconds on the suite's programs).
HEURISTIC_SHARE = 0.5


def prod(problem: Problem, budget_s: float, seed: int, *, rules: Rules = Rules(), heuristic_first: bool = True,
         from_heuristic: bool | None = None, on_solution=None, **options) -> Result:
    """MMap-MuZero-prod: the heuristic's solution (its plans improved by its local moves, within
    `HEURISTIC_SHARE` of the budget), then the agent for the rest of the budget but `PLACE_SHARE`
    of it, its best game placed physically (`placer.place`); then the placer's local moves, with
    the rest of the budget, improve the better of that placed game and the heuristic's solution,
    then the other, then the heuristic's plan before its local moves, each where the ones before
    stop paying early (`_place_last`; the heuristic's solution alone if no agent game finished).
    The heuristic's seconds count against the budget; the result is never below the heuristic's.
    With a `demonstration_fraction`, the agent also learns from the heuristic's decisions as the game
    plays them. Options are `muzero`'s.

    `from_heuristic` (None: in the deferred game only, as `muzero`) starts the agent's search from
    the heuristic's decisions (as the game plays them): its first best game and center.

    `heuristic_first=False` leaves the heuristic out: the agent's best game, placed (train.py
    with `config.prod=False`). `on_solution(kind, solution)` is told each solution when it is
    found: "heuristic" (before the agent starts, so that a long run can write it), "agent" (the
    agent's best game) and "placed" (that game placed, before the last moves).
    `info["improved"]` says which start the last local moves improved ("agent", "heuristic" or
    "plan"); as for a game solver (`solve`), `raw_return`, `played` and `placed_start`
    ("decisions" or "heuristic": the heuristic's solution or its plan)."""
    start = time.perf_counter()
    tell = on_solution or (lambda kind, solution: None)
    base, trace = None, []
    if heuristic_first:
        # the heuristic solver's own solution (its plans and local moves), so that prod never
        # writes less than `heuristic` does; it ends in seconds, well inside its share
        base = heuristic(problem, HEURISTIC_SHARE * budget_s, seed, rules=rules)
        tell("heuristic", base.solution)
        trace.append((base.seconds, base.solution.ret))
        if options.get("demonstration_fraction") or from_plan(rules, from_heuristic):
            options["demonstration"] = play_plan(problem, base.solution.action, rules).action
    left = budget_s - (time.perf_counter() - start)
    agent = None
    if left > 0:
        try:
            agent = muzero(problem, max(left * (1 - PLACE_SHARE), 0.0), seed, rules=rules, place_share=0.0,
                           from_heuristic=False, **options)  # (its own: the demonstration above)
        except NoGameError:  # no agent game finished: the heuristic stands, if it ran
            if base is None:
                raise
        if agent is not None:
            tell("agent", agent.solution)
            offset = time.perf_counter() - start - agent.seconds
            trace += [(offset + t, r) for t, r in agent.trace if not trace or r > trace[-1][1]]
    placed, origin = _place_last(problem, rules, seed, budget_s - (time.perf_counter() - start),
                                 None if agent is None else agent.solution, base, tell)
    if not trace or placed.ret > trace[-1][1]:
        trace.append((time.perf_counter() - start, placed.ret))
    solution = placed if base is None or placed.ret > base.solution.ret else base.solution
    if base is not None and solution is placed:
        solution = dataclasses.replace(placed, solver="muzero-prod")
    info = {"heuristic": None if base is None else base.solution.ret,
            "agent": None if agent is None else agent.solution.ret,
            "agent_placed": None if agent is None else origin[1], "improved": origin[0],
            "played": rules.placement, "placed_start": "decisions" if origin[0] == "agent" else "heuristic",
            **({} if agent is None else {"raw_return": agent.solution.ret}),
            **({} if agent is None else {k: agent.info[k]
                                         for k in ("iterations", "episodes", "resumed", "mode", "restarts")})}
    return Result(solution=solution, trace=tuple(trace), seconds=time.perf_counter() - start, info=info)


def _place_last(problem: Problem, rules: Rules, seed: int, left: float, game, base: Result | None, tell):
    """Prod's last step, with `left` seconds: the agent's `game` placed (a plan of its
    decisions, grown; no moves), then the placer's local moves on the better of that and the
    heuristic's solution (`base`); and where those moves stop paying with seconds left
    (`OTHER_START_S`), the moves from the other of the two, then from the heuristic's plan before
    its local moves, the best result kept. Returns the result and (the start improved, "agent",
    "heuristic" or "plan", and the agent's placed return or None)."""
    began = time.perf_counter()
    if game is None:  # (the heuristic's solution is placed by its plan: only the moves)
        return (place(problem, base.solution, rules=rules, budget_s=max(left, 1e-3), seed=seed, replan=False,
                      restarts=RESTARTS),
                ("heuristic", None))
    first = place(problem, game, rules=rules, budget_s=max(left, 1e-3), moves=0, seed=seed)
    tell("placed", first)
    starts = [("agent", first)] + ([] if base is None else [("heuristic", base.solution)])
    starts.sort(key=lambda s: -s[1].ret)  # (on a tie the agent's first)
    if base is not None:  # (made only where its turn comes)
        starts.append(("plan", lambda: _heuristic_plan(problem, rules, base, began + left)))
    best = None
    for name, origin in starts:
        rest = left - (time.perf_counter() - began)
        if best is not None and rest < OTHER_START_S:
            break
        if callable(origin) and (origin := origin()) is None:
            continue
        # (every start is placed already: the heuristic's solution and plan by its plan, the game above)
        better = place(problem, origin, rules=rules, budget_s=max(rest, 1e-3), seed=seed, replan=False,
                       restarts=RESTARTS)
        if best is None or better.ret > best[1].ret:
            best = (name, better)
    return best[1], (best[0], float(first.ret))


def _heuristic_plan(problem: Problem, rules: Rules, base: Result, deadline: float):
    """The heuristic's best plan before its local moves (`base.info`: made again, the same plan),
    or None where those moves kept nothing (the plan is then the heuristic's solution)."""
    if not base.info["moves"][0]:  # ([kept, tried])
        return None
    return heuristic_plan(problem, rules, pins=base.info["chosen"], deadline=deadline).solution


#: Prod descends from its next start (the agent's placed game and the heuristic's solution, the
#: higher first; then the heuristic's plan before its local moves) when the descents from the
#: ones before stop paying with at least this many seconds left. Different starts lead the moves
#: to different optima (alexnet_train: the agent's placed game the higher start, the heuristic's
#: solution the higher optimum, and its plan, lower than both, a higher one still).
OTHER_START_S = 10.0


def generalist(problem: Problem, budget_s: float, seed: int, *, rules: Rules = Rules(),
               samples: bool = False, guide: bool = True) -> Result:
    """A solver: the pretrained network's greedy game (`agent.generalist.load()`, shipped with
    the package), played in slices on the clock like `greedy` (a budget that ends inside the
    game ends it Drop-first); then, with `samples` and while the budget lasts, games drawn from
    the network's policy (temperature 1, the same compiled game), of which the best won game is
    returned. No search in the network's parameters: it was trained once, across programs
    (`train.py --config configs/generalist.py`); untrained, its greedy game is `greedy`'s.
    Its game's compile, not the game, takes most of a short budget (docs/agent.md, What is weak),
    so that at 10 s (7 s for the game, the rest the placer's) the placer has a few seconds.

    With `guide` (on by default) the result carries the greedy game's guide (`agent.guide`: the
    network's probabilities of each buffer's three moves, trained on the heuristic's intents),
    which `solve`'s placer reads as one more start (`placer.place(guide=...)`); docs/agent.md.

    `samples` is off by default: the drawn games' best, placed, was more often lower than higher
    on the suite's training split (a better game is not always a better start for the placer, and
    the draws take its time; docs/decisions.md, "Drawn games after the greedy one")."""
    result = _network_games(problem, budget_s, seed, rules, generalist_lib.load()[0], samples)
    return result if guide else dataclasses.replace(result, guide=None)


def _network_games(problem: Problem, budget_s: float, seed: int, rules: Rules, shipped, samples: bool,
                   solver: str = "generalist") -> Result:
    """`generalist` with the parameters `shipped` (of the shipped network's widths: its compiled
    game serves them), its solutions named `solver`; the greedy game's guide (`agent.guide`) is
    the result's `guide`."""
    clock = Anytime(budget_s)
    _, config, _ = generalist_lib.load()
    instance = make_instance(problem, rules)
    # the parameters and the instance's feature context travel as the game's own arguments, not as
    # constants baked into the compiled loop
    context = observation.context(instance)
    policy = _generalist_policy(config)

    # (inside `solve`, which holds its placement of no decisions, the game has no grace for a first
    # solution, `clock.without_grace`: with it, the game took the placer's time and the written
    # solution was lower; docs/decisions.md, Budgets)
    finished, wish = _guided_game(clock, problem, instance, rules, shipped, context, config, solver)
    games, key = 1, jax.random.key(seed)
    # drawn games stop with the budget itself (not its grace): one still unfinished is dropped
    while samples and finished and not clock.out_of_time():
        own = jax.tree.map(lambda x: jnp.asarray(x)[None], (shipped, context, jnp.float32(1.0)))
        state, _ = play_on_the_clock(clock, start(instance, 1), jax.random.fold_in(key, games)[None], policy,
                                     params=own, finish=False, deadline_s=budget_s)
        if bool(state.done[0]) and not bool(state.lost[0]):
            clock.offer(to_solution(problem, nth_game(state, 0), rules, solver=solver))
        games += 1
    return dataclasses.replace(clock.result(games=games, finished=finished), guide=wish)


def _guided_game(clock: Anytime, problem: Problem, instance, rules: Rules, shipped, context, config, solver: str):
    """The network's greedy game on the clock, in slices (`base.in_slices`), recording its guide
    (`agent.guide.play`), ended Drop-first if the budget ends inside it; the won game is offered to
    `clock`. Returns (whether it ended by its own moves, the guide float32[N, 3], or None where the
    package holds no intent network)."""
    shipped_intent = generalist_lib.load_intent()
    intent = shipped if shipped_intent is None else shipped_intent  # (none: the same game, its guide not returned)

    def advance(carry, moves):
        return guide_lib.play(shipped, intent, context, *carry, moves, jnp.bool_(False), config=config)

    def tail(carry, rate, first):  # (ended Drop-first by the same compiled loop: no compile)
        return (instance.width.shape[0] - int(carry[0].board.cursor)) / max(rate, ALONE_RATE)

    first = (nth_game(start(instance, 1), 0), guide_lib.no_guide(instance.width.shape[0]))
    (state, wish), finished = in_slices(clock, advance, first, lambda carry: carry[0].done, tail=tail)
    if not finished:
        state, wish = guide_lib.play(shipped, intent, context, state, wish, jnp.int32(2 ** 30), jnp.bool_(True),
                                     config=config)
    if bool(state.done) and not bool(state.lost):
        clock.offer(to_solution(problem, state, rules, solver=solver))
    return finished, None if shipped_intent is None else np.asarray(wish, np.float32)[:problem.num_buffers]


@functools.cache
def _generalist_policy(config):
    """The generalist's game policy of (parameters, feature context, temperature): one object
    per config, so that its compiled game serves every game and every call."""
    return lambda p: generalist_lib.policy(p[0], p[1], config, p[2])


def teacher(problem: Problem, rules: Rules, *, budget_s: float = 30.0) -> tuple[np.ndarray, float, str, np.ndarray]:
    """The generalist's teacher on one program: (an action per buffer, its game return, its
    source, the intents), the better won game of the heuristic's decisions as the game plays them
    (`heuristic.play_plan`) and the `greedy` solver's game; the intents are the heuristic's own
    decisions (its plan, placed by its own rules: `agent.guide`), whichever game is better."""
    planned = np.asarray(heuristic(problem, budget_s, 0, rules=rules).solution.action, np.int32)
    played = play_plan(problem, planned, rules)
    best = (np.asarray(played.action, np.int32), float(played.ret), "heuristic")
    # (a greedy game the budget cuts is ended Drop-first: still a won game, of a lower return)
    greedy_game = greedy(problem, budget_s, 0, rules=rules).solution
    if greedy_game.ret > best[1]:
        best = (np.asarray(greedy_game.action, np.int32), float(greedy_game.ret), "greedy")
    return (*best, planned)


def _check_agent(options: dict) -> None:
    """AgentConfig's own checks (mode, replay and horizon, elites, fractions) on its fields among `options`."""
    agent_config(**{k: v for k, v in options.items() if k in AGENT_OPTIONS})


declare(muzero, {
    **RUN_OPTIONS,
    "workdir": Option(str, doc="keep the run's logs and checkpoints there, and resume from them", null=True),
    "checkpoint_every": Option(int, COUNT, "chunks between checkpoints (with workdir)"),
    "from_heuristic": FROM_HEURISTIC,
    "place_share": Option(float, "[0, 1)", "the budget's share that places the best game (null: PLACE_ROUNDS_SHARE)",
                          null=True),
    "guide": Option(bool, doc="read the shipped network's guide into the placement (with pretrained)"),
    **AGENT_OPTIONS,
}, check=_check_agent)
declare(prod, {
    "heuristic_first": Option(bool, doc="the heuristic's solution first (else the agent's alone)"),
    "from_heuristic": FROM_HEURISTIC,
    "on_solution": Option(Callable, doc="told each solution found, (kind, solution)", null=True),
    **RUN_OPTIONS, **AGENT_OPTIONS,
}, check=_check_agent)
declare(mcts, {
    "games": Option(int, COUNT, "games per batch"),
    "num_simulations": Option(int, COUNT, "simulations per search"),
    "gumbel": Option(bool, doc="Gumbel MuZero's search instead of PUCT and noise"),
    "max_batches": Option(int, COUNT, "stop after this many batches", null=True),
})
declare(generalist, {
    "samples": Option(bool, doc="then games drawn from the network's policy while the budget lasts"),
    "guide": Option(bool, doc="the result carries the greedy game's guide for the placer"),
})
