"""The heuristic solver: the plans of `PLANS` while the budget lasts, the best one improved by
local moves (`_moves.improve`), and the replay of a plan in the game."""

from __future__ import annotations

import dataclasses
import time

import jax
import jax.numpy as jnp
import numpy as np

from jaxmmap.core.problem import COPY, DROP, NOCOPY, Problem, Solution
from jaxmmap.core.rules import Rules, discretize
from jaxmmap.env import game
from jaxmmap.env.instance import make_instance
from jaxmmap.env.rollout import Policy, rollout, to_solution
from jaxmmap.solvers.base import Anytime, Result, held_inside
from jaxmmap.solvers.heuristic._moves import MOVES, improve
from jaxmmap.solvers.heuristic._plan import MAX_OVERLAP, MIN_OVERLAP, PIN_MODES, PREFERRED_OVERLAP, benefit_estimate, plan
from jaxmmap.solvers.spec import Option, declare

__all__ = ["PLANS", "PLAN_SHARE", "heuristic", "plan_policy", "plan_start", "play_plan"]

# The heuristic's plans, in the order it makes them (`plan`'s pin modes): XLA's with pins where
# they pay; the pinning greedy alone (cheap; so the heuristic never returns less than the
# `pinning` solver); the pinning greedy's pins of the tensors XLA would keep, then XLA's for the
# rest; the same with all the greedy's pins; the older game's plan, without pins.
PLANS = ("compare", "only", "first-kept", "first", "never")

#: The share of a game solver's budget its heuristic start takes (`plan_start`; ES's and EGRL's
#: `from_heuristic`).
PLAN_SHARE = 0.25

# Fallback preference of the replay, per planned action; the last row for a planned Copy of an
# output: there NoCopy pins the tensor for its whole life, which holds far more memory than the
# plan's copy did and pushed later planned uses out (the plan, played in the deferred game, kept
# 0.962 of its return on transformer_bf16_train@gpu with NoCopy next, 0.9995 with Drop).
_PREFERENCE = np.array([[COPY, NOCOPY, DROP], [NOCOPY, COPY, DROP], [DROP, NOCOPY, COPY], [COPY, DROP, NOCOPY]],
                       np.int32)



def plan_policy(planned: jax.Array) -> Policy:
    """A game policy that plays `planned[cursor]` when legal, else its fallback (module doc)."""
    preference = jnp.asarray(_PREFERENCE)

    def policy(key: jax.Array, state: game.State) -> jax.Array:
        del key
        legal = game.legal_action_mask(state)
        i = state.board.cursor
        action = planned[i]
        out = state.instance.is_output[jnp.minimum(i, planned.shape[0] - 1)]
        order = preference[jnp.where(out & (action == COPY), 3, action)]
        first = jnp.argmax(legal[order])
        return order[first].astype(jnp.int32)

    return policy


def heuristic(problem: Problem, budget_s: float, seed: int, *, rules: Rules = Rules(),
              mode: str = "plan", pins: str | None = None, preferred_overlap: float = PREFERRED_OVERLAP,
              min_overlap: float = MIN_OVERLAP, max_overlap: float = MAX_OVERLAP,
              moves: int = MOVES) -> Result:
    """The XLA-style heuristic (deterministic: `seed` is unused, and the result depends on the
    time only through how many plans and moves fit the budget). `mode`: "plan" (its own
    placement), "game" (the best plan's decisions replayed in the game) or "best" (the better of
    the two). `pins`: one plan's pin mode (`plan`); None (default) makes the plans of `PLANS` in
    turn while the budget lasts (the first always) and keeps the best. A plan still running when
    the budget ends stops placing (`plan(deadline=...)`; `info["stopped_early"]`), so the
    budget bounds the time on programs of any size. Then, with the time left, at most `moves`
    local moves improve the best plan (`improve`; 0: none). `info` has `plan_returns` (per plan
    made), `chosen`, `plan_return` (the best plan's, before the moves), `moves` ([kept, tried]),
    `planned_placed` (buffers the best plan placed), `placed` (after the moves), `pins` (outputs
    pinned), and with a replay `game_return`, `followed` (buffers on which the replay could
    follow the plan) and `restores`."""
    del seed
    if mode not in ("plan", "game", "best"):
        raise ValueError(f"mode must be 'plan', 'game' or 'best', got {mode!r}")
    clock = Anytime(budget_s)
    d = discretize(problem, rules)
    prepared = (d, benefit_estimate(problem, d))
    if pins is not None:
        modes = [pins]
    else:
        modes = list(PLANS) if (d.pinnable & problem.is_output).any() else ["never"]
    best, returns = None, {}
    deadline = clock.start + budget_s
    for k, pins_mode in enumerate(modes):
        if k >= 1 and clock.out_of_time():
            break
        p = plan(problem, rules, pins=pins_mode, preferred_overlap=preferred_overlap,
                 min_overlap=min_overlap, max_overlap=max_overlap, prepared=prepared,
                 deadline=deadline)
        returns[pins_mode] = float(p.solution.ret)
        if best is None or p.solution.ret > best.solution.ret:
            best = p
    info = {"plan_returns": returns, "chosen": best.solution.metadata["pins"],
            "plan_return": float(best.solution.ret), "planned_placed": int(np.sum(best.action != DROP)),
            "pins": int(np.sum((best.action == NOCOPY) & problem.is_output)),
            "stopped_early": bool(best.solution.metadata.get("stopped_early", False))}
    if mode in ("plan", "best"):
        clock.offer(dataclasses.replace(best.solution, solver="heuristic"))
        improved, info["moves"] = improve(
            problem, rules, best.solution, prepared=prepared, deadline=deadline, moves=moves,
            pins=pins or "compare", preferred_overlap=preferred_overlap, min_overlap=min_overlap,
            max_overlap=max_overlap)
        if improved is not best.solution:
            clock.offer(dataclasses.replace(improved, solver="heuristic"))
        info["placed"] = int(np.sum(improved.action != DROP))
    if mode in ("game", "best"):
        solution = play_plan(problem, best.action, rules)
        info.update(game_return=float(solution.ret),
                    followed=int(np.sum(solution.action == best.action)),
                    restores=int(solution.metadata["restores"]))
        clock.offer(solution)
    return clock.result(**info)


def play_plan(problem: Problem, planned: np.ndarray, rules: Rules = Rules(), *,
           solver: str = "heuristic") -> Solution:
    """Plays `planned` (an action per buffer) in the JAX game with the fallback order of the
    module docstring and the Drop-backup; returns the finished game's solution."""
    instance = make_instance(problem, rules)
    padded = np.full(instance.width.shape[0], DROP, np.int32)
    padded[: problem.num_buffers] = planned
    state = _replay_game(instance, jnp.asarray(padded))
    return to_solution(problem, state, rules, solver=solver)  # raises if the game was lost


def from_plan(rules: Rules, from_heuristic: bool | None) -> bool:
    """Whether a game solver starts from the heuristic's plan: `from_heuristic`, by default
    (None) in the deferred game only, where the plan's game keeps the plan's placed return."""
    return rules.placement == "deferred" if from_heuristic is None else bool(from_heuristic)


def plan_start(clock: Anytime, problem: Problem, rules: Rules, num_buffers: int, solver: str,
               from_heuristic: bool | None = None, *, games: int | None = None):
    """A game solver's start from the heuristic (`from_plan`): the heuristic's solution (its
    plans and local moves within `PLAN_SHARE` of the clock's budget). Returns (on, plan, in_batch,
    ended): whether the solver starts from the plan; the plan (int32[num_buffers], -1 past the
    problem's buffers; None when off or ended); whether the solver plays the plan's game itself;
    and the clock's result with the plan's game, to return on time (else None).

    Where the solver's first batch (`games` games) ends a game inside the batch
    (`base.held_inside`), the plan's game is not played here (`in_batch`): the solver plays it as
    one game of that batch (`plan_policy` on `plan`, the heuristic's actions), so it does not
    compile a game of its own, most of a short budget on a small program (docs/solvers.md). Else
    it is played here (`play_plan`) and offered to `clock` as `solver`'s first solution; `plan` is
    then the actions the game played, and where the time left is under twice the replay's (its
    compile and one game: the solver's first batch compiles and plays games as large), `ended`
    holds that game."""
    if not from_plan(rules, from_heuristic):
        return False, None, False, None
    action = heuristic(problem, PLAN_SHARE * clock.budget_s, 0, rules=rules).solution.action
    padded = lambda a: jnp.full(num_buffers, -1, jnp.int32).at[: problem.num_buffers].set(a)  # noqa: E731
    if games is not None and held_inside(games, num_buffers):
        return True, padded(action), True, None
    began = time.perf_counter()
    first = play_plan(problem, action, rules, solver=solver)
    clock.offer(first)
    replay_s = time.perf_counter() - began
    if clock.budget_s - clock.elapsed() < 2 * replay_s:
        return True, None, False, clock.result(generations=0, games=0, from_heuristic=True)
    return True, padded(first.action), False, None


@jax.jit
def _replay_game(instance, planned):
    """One compile per padded shape, shared by every call of `play_plan`."""
    return rollout(instance, jax.random.key(0), plan_policy(planned), backup=True)


declare(heuristic, {
    "mode": Option(str, doc="plan: its own placement; game: the best plan's decisions replayed in the game; best: the"
                   " better of the two", choices=("plan", "game", "best")),
    "pins": Option(str, doc="one plan's pin mode (null: each of PLANS in turn)", choices=PIN_MODES, null=True),
    "preferred_overlap": Option(float, "[0, inf)", "a prefetch's preferred overlap, in copy times"),
    "min_overlap": Option(float, "[0, inf)", "a prefetch's least overlap, in copy times"),
    "max_overlap": Option(float, "[0, inf)", "a prefetch's most overlap, and the longest gap a kept buffer spans"),
    "moves": Option(int, "[0, inf)", "the most local moves after the plans (0: none; null: no limit)", null=True),
})
