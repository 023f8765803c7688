"""The placer: a solution's decisions, placed with every freedom the validator allows.

The game places by fixed rules (buffer order, the lowest free offset, the latest copy start), so
a game solution's decisions are often worth more than the game's own placement of them. `place`
keeps the decisions (which uses are served from fast memory, by Copy or NoCopy) and places them
again with the heuristic's machinery (`heuristic.plan(decisions=...)`): best-fit offsets, alias
groups at one offset, copy windows chosen near the preferred overlap, the copy engine and the
supply checked exactly (earliest deadline first). Decisions that do not fit are repacked: the
placement is made again with them first (`REPACK_ROUNDS`), and the best kept. Then it grows:
every use still in slow memory is offered to the heuristic's own rules, in its order (benefit per
sqrt(size)). Then,
while the budget lasts and they pay, local moves (`heuristic.improve`, ruin and recreate): take
some placed work items out of the decisions (the least valuable per byte-step, those live in a
window of steps, or a random share), place the rest, grow again, and keep the move when the
return rises. First in the heuristic's order, until `patience` (`heuristic.MOVES`) moves in a
row have not paid; then, from there, in a noisy order (`NOISE`: the benefit estimates that order
the work items, each times a log-normal factor drawn per move), until `NOISY_TIMES` times as
many in a row have not. The noisy moves only ever start from where the plain ones stopped, so
they add to the placer's result and never take from it (docs/solvers.md). On small problems
(`EXACT_BUFFERS`) CP-SAT's placement of the decisions, with them fixed, is one more start.

The contract: the result is validated, and it is never worse than the input (the input is
returned when the placement does not beat it). Deterministic for a given number of moves; a
budget bounds it (a placement still running when it ends stops placing and stays valid).

    placed = jaxmmap.place(problem, solution, budget_s=10)
"""

from __future__ import annotations

import time

import numpy as np

from jaxmmap.core.problem import COPY, DROP, NOCOPY, Problem, Solution
from jaxmmap.core.rules import Rules, auto_columns, discretize
from jaxmmap.core.validator import check_solution, relabelled
from jaxmmap.solvers.cpsat import cpsat
from jaxmmap.solvers.heuristic import MOVES, NOISE, benefit_estimate, improve, plan

__all__ = ["EXACT_BUFFERS", "EXACT_MAX_S", "EXACT_SHARE", "FRESH", "GUIDE_CONFIDENCE", "NOISY_TIMES", "PLACE_RESERVE_S",
           "PLACE_SHARE", "REPACK_ROUNDS", "RESTARTS",
           "guided", "place", "place_nothing"]

#: The share of a game solver's budget kept for the placer by `solvers.solve` (at most
#: `PLACE_RESERVE_S` seconds), and of what the heuristic leaves by `muzero-prod`. Its local moves
#: stop when they stop paying (the plain ones after `heuristic.MOVES` in a row that did not, the
#: noisy ones after `NOISY_TIMES` as many), so a run is deterministic when the budget allows.
#: Chosen by `benchmarks/placer_targets.py` (docs/decisions.md, "A tenth of the budget for the placer"):
#: a game solver's last fifth of its budget rarely adds as much as the moves that lift its solution.
PLACE_SHARE, PLACE_RESERVE_S = 0.3, 60.0


#: Seconds kept, besides the placed solution's check, for its return.
CHECK_SLACK_S = 0.02
#: The least time kept for the placed solution's check, per buffer (about twice what the check
#: takes on the suite's largest programs).
CHECK_S_PER_BUFFER = 4e-5

#: The restarts of the local moves in the solvers' placement (`place(restarts=...)`), each while
#: the budget lasts: a first descent often stops paying long before the budget ends. A count, not
#: "while the budget lasts": a run stays deterministic when its budget allows, and a generous
#: budget on a small program is not spent on descents that all end at the same solution
#: (docs/decisions.md, "Restarts while the budget lasts").
RESTARTS = 3
#: A restart begins only while this many moves of the first descent's mean length still fit.
RESTART_MOVES = 4

#: The solvers' placement (`solvers.solve`) also places no decisions at all and goes on from that
#: where it is higher (`place(fresh=...)`): higher on most programs of the training split and
#: selection seeds (`benchmarks/placer_moves.py`; docs/decisions.md, "Only the game's decisions as the
#: placer's start"). The start is chosen by its placement without moves, so from the decisions the
#: moves sometimes climb higher.
FRESH = True

#: How sure a guide (`place(guide=...)`) must be to overrule the placement of no decisions: a
#: use it gives Drop a probability below 1 minus this is served from fast memory, one it gives
#: Drop more than this is left in slow memory. Of 0.95, 0.8 and 0.6, the one most often above the placement
#: of no decisions on the generalist's selection programs (docs/decisions.md, "A less sure guide").
GUIDE_CONFIDENCE = 0.95

#: On problems of at most this many buffers the solvers' placement (`place(exact=True)`) has one
#: more start: the decisions' best placement and growth that CP-SAT finds with them fixed
#: (`cpsat(decisions=...)`, one worker), in at most `EXACT_SHARE` of the time left and at most
#: `EXACT_MAX_S` seconds. At 115 buffers it proves that optimum in 0.2-2.3 s; at 227, in 12.5 s
#: (docs/solvers.md, The placer). The cap keeps a long budget's time for the moves.
EXACT_BUFFERS = 200
EXACT_SHARE, EXACT_MAX_S = 0.3, 5.0

#: Placements of the decisions tried at most after the first, each with the decisions that did
#: not fit before moved to the front.
REPACK_ROUNDS = 3

#: The noisy moves stop after this many times `patience` moves in a row that did not pay: they
#: pay more rarely than the plain ones, but can go on paying long after them.
NOISY_TIMES = 4


def _placement(problem: Problem, rules: Rules, decisions: np.ndarray, *, prepared, deadline: float,
               grow: bool) -> Solution:
    """The best placement of `decisions` (grown, with `grow`): placed in the heuristic's order,
    then, while some did not fit, again with those first (squeaky-wheel repacking: the items
    that failed get the free room before the ones that took it); and, with `grow`, each decided
    item where the heuristic's order reaches it, grown at once (`plan(interleave=True)`: decisions
    all placed first crowd out the heuristic's own items, which then lose more than the decisions
    win; docs/solvers.md, The placer)."""
    decided = decisions != DROP
    first = np.zeros(problem.num_buffers, bool)
    best = None
    for _ in range(REPACK_ROUNDS + 1):
        placed = plan(problem, rules, pins="compare", prepared=prepared, deadline=deadline,
                      decisions=decisions, grow=grow, first=first).solution
        if best is None or placed.ret > best.ret:
            best = placed
        lost = decided & (placed.action == DROP)
        if not (lost & ~first).any() or time.perf_counter() >= deadline:
            break
        first |= lost
    if grow and decided.any() and time.perf_counter() < deadline:
        placed = plan(problem, rules, pins="compare", prepared=prepared, deadline=deadline,
                      decisions=decisions, interleave=True).solution
        if placed.ret > best.ret:
            best = placed
    return best


def _local_moves(problem: Problem, rules: Rules, origin: Solution, *, moves: int | None,
                 patience: int | None, noise: float, seed: int, **how) -> tuple[Solution, list[int]]:
    """The plain moves, then the noisy ones from where they stopped (module docstring), at most
    `moves` in all. `how`: `prepared` and `deadline`."""
    best, counts = improve(problem, rules, origin, moves=moves, patience=patience, seed=seed, **how)
    left = None if moves is None else moves - counts[1]
    if not noise or left == 0 or time.perf_counter() >= how["deadline"]:
        return best, counts
    noisy = None if patience is None else NOISY_TIMES * patience
    best, more = improve(problem, rules, best, moves=left, patience=noisy, noise=noise,
                         seed=seed + 1, **how)
    return best, [counts[0] + more[0], counts[1] + more[1]]


def _descents(problem: Problem, rules: Rules, origin: Solution, *, restarts: int | None, moves: int | None,
              seed: int, **how) -> tuple[Solution, list[int]]:
    """`_local_moves` from `origin`, then, while the deadline allows and at most `restarts`
    times (None: no limit but the deadline), again from `origin` with other seeds; the best of
    these descents, and the moves of all. `how`: `_local_moves`'s other arguments."""
    began = time.perf_counter()
    best, counts = _local_moves(problem, rules, origin, moves=moves, seed=seed, **how)
    # a descent starts only while a few moves of the first one's mean length fit (each descent's
    # own guard, the longest move so far, starts at zero)
    move_s = (time.perf_counter() - began) / max(counts[1], 1)
    done = 0
    while ((restarts is None or done < restarts) and (moves is None or counts[1] < moves)
           and how["patience"] is not None and time.perf_counter() + RESTART_MOVES * move_s < how["deadline"]):
        done += 1
        # (`_local_moves` seeds its plain moves with a seed and its noisy ones with the next)
        other, more = _local_moves(problem, rules, origin, moves=None if moves is None else moves - counts[1],
                                   seed=seed + 2 * done, **how)
        counts = [counts[0] + more[0], counts[1] + more[1]]
        if other.ret > best.ret:
            best = other
    return best, counts


def _made_under(problem: Problem, solution: Solution) -> Rules:
    """The rules `solution` was made under, else `Rules(columns=auto)`."""
    known = {k: v for k, v in (solution.rules or {}).items() if k in ("columns", "nocopy_offset", "output_nocopy")}
    return Rules(**known) if known else Rules(columns=auto_columns(problem))


def _prepared(problem: Problem, rules: Rules):
    d = discretize(problem, rules)
    return d, benefit_estimate(problem, d)


def _no_decisions(problem: Problem, rules: Rules, *, prepared, deadline: float) -> Solution:
    return _placement(problem, rules, np.full(problem.num_buffers, DROP, np.int32), prepared=prepared,
                      deadline=deadline, grow=True)


def guided(action: np.ndarray, guide: np.ndarray, confidence: float = GUIDE_CONFIDENCE) -> np.ndarray:
    """`action` (a solution's, int[N]) with the uses `guide` (float[N, 3], probabilities of
    Copy, NoCopy, Drop per buffer; NaN: no opinion) confidently disagrees with flipped: Drop
    where it gives Drop more than `confidence`, its likelier of Copy and NoCopy where it gives
    Drop less than 1 - `confidence`."""
    out = np.asarray(action).copy()
    with np.errstate(invalid="ignore"):
        on = (guide[:, 2] < 1 - confidence) & (out == DROP)
        off = (guide[:, 2] > confidence) & (out != DROP)
    out[on] = np.where(guide[on, 0] >= guide[on, 1], COPY, NOCOPY)
    out[off] = DROP
    return out


def place_nothing(problem: Problem, *, rules: Rules, budget_s: float = 10.0) -> Solution:
    """The placement of no decisions, grown: every use offered to the heuristic's rules, about
    the heuristic's plan without its moves; validated. Cheap (under 2 s at 24,000 buffers;
    docs/performance.md, The placer), so `solvers.solve` makes it
    before a game solver runs (`place(fresh=...)`): the floor of its result even where the solver
    leaves the placer no time."""
    if not budget_s > 0:
        raise ValueError(f"budget_s must be > 0, got {budget_s}")
    start = time.perf_counter()
    nothing = _no_decisions(problem, rules, prepared=_prepared(problem, rules), deadline=start + budget_s)
    check_solution(problem, nothing, what="the placement of no decisions")
    return nothing


def _starts(problem: Problem, rules: Rules, solution: Solution, placed: Solution, *, fresh, guide, grow: bool,
            exact: bool, prepared, deadline: float) -> tuple[list[tuple[str, Solution]], Solution | None]:
    """`place`'s starts for the moves, best first: `placed` (the decisions' placement, or the
    input) as "decisions", the placement of no decisions (`fresh`) as "nothing", and that
    placement with `guide` read in (`guided`) as "guide", and with `exact` (on problems of at most
    `EXACT_BUFFERS` buffers) the decisions' placement by CP-SAT as "exact", each where it places
    higher than the input (the decisions always). Returns (the starts, the placement of no decisions or None).
    None of them is made once the deadline has passed."""
    if guide is not None and np.shape(guide) != (problem.num_buffers, 3):
        raise ValueError(f"guide must be float[{problem.num_buffers}, 3], got shape {np.shape(guide)}")
    starts = [("decisions", placed)]
    nothing = fresh if isinstance(fresh, Solution) else None
    if fresh is True and grow and time.perf_counter() < deadline:
        nothing = _no_decisions(problem, rules, prepared=prepared, deadline=deadline)
    if nothing is not None and nothing.ret > solution.ret:
        starts.append(("nothing", nothing))
    if guide is not None and nothing is not None and grow and time.perf_counter() < deadline:
        flips = guided(nothing.action, guide)
        if (flips != nothing.action).any():  # (a guide that agrees throughout: no other start)
            flipped = _placement(problem, rules, flips, prepared=prepared, deadline=deadline, grow=True)
            if flipped.ret > solution.ret:
                starts.append(("guide", flipped))
    if exact and grow and problem.num_buffers <= EXACT_BUFFERS and time.perf_counter() < deadline:
        seconds = min(EXACT_SHARE * (deadline - time.perf_counter()), EXACT_MAX_S)
        found = cpsat(problem, seconds, 0, rules=rules, workers=1, decisions=solution).solution
        if found.ret > solution.ret:
            starts.append(("exact", found))
    # (best first; on a tie the earlier: the decisions before the placement of no decisions)
    return sorted(starts, key=lambda s: -s[1].ret), nothing


def _descend(problem: Problem, rules: Rules, solution: Solution, starts: list[tuple[str, Solution]], *,
             each_start: bool, deadline: float, moves: int | None, **how) -> tuple[str, Solution, list[int]]:
    """`_descents` from each of `starts` (best first; without `each_start` only the highest but
    "exact"), each with an equal share of the time left before `deadline`, the "exact" start last,
    in the time the others leave (their moves stop when they stop paying); returns (the best
    descent's start name, the best descent, the moves of all). `how`: `_descents`' other arguments."""
    counts, best = [0, 0], None
    usual, exact = [s for s in starts if s[0] != "exact"], [s for s in starts if s[0] == "exact"]
    starts = (usual if each_start else usual[:1]) + exact
    for i, (name, candidate) in enumerate(starts):
        # Moves start from the better of the two: a placement that lost decisions it could not
        # fit may still be a worse start than the input itself.
        origin = candidate if candidate.ret >= solution.ret else solution
        sharing = max(sum(s[0] != "exact" for s in starts[i:]), 1)
        share = time.perf_counter() + (deadline - time.perf_counter()) / sharing
        improved, more = _descents(problem, rules, origin, deadline=share,
                                   moves=None if moves is None else moves - counts[1], **how)
        counts = [counts[0] + more[0], counts[1] + more[1]]
        improved = improved if improved is not origin else candidate
        if best is None or improved.ret > best[1].ret:
            best = (name, improved)
    return (*best, counts)


def place(problem: Problem, solution: Solution, *, rules: Rules | None = None,
          budget_s: float = 10.0, grow: bool = True, moves: int | None = None,
          patience: int | None = MOVES, noise: float = NOISE, seed: int = 0,
          replan: bool = True, restarts: int | None = 0, fresh: bool | Solution = False,
          guide: np.ndarray | None = None, exact: bool = False, each_start: bool = False) -> Solution:
    """`solution`'s decisions placed again, grown, improved, and validated; never worse than it.

    Args:
      problem: the problem.
      solution: a valid solution of it (refused with `validator.SolutionRejected` otherwise).
      rules: the grid the placement uses (its columns); default: the rules the solution was made
        under, else `Rules(columns=auto)`.
      budget_s: wall-clock seconds (> 0), the check of the placed solution included: the local
        moves stop twice as long before it as the check of `solution` took (at least
        `CHECK_S_PER_BUFFER` a buffer), and `CHECK_SLACK_S` more (at most half of it).
      grow: after placing the decisions, offer the uses left in slow memory to the heuristic.
      moves: then try at most this many local moves while the budget lasts (0: none; None, the
        default: no limit but the budget and `patience`; module docstring). The result depends
        on the time only through how many moves fit the budget.
      patience: stop the plain moves once this many in a row have not paid (None: no such
        stop), the noisy ones after `NOISY_TIMES` as many. (A fixed number of moves left moves
        that still paid; docs/decisions.md, The placer.)
      noise: the noise of the recreate's order in the moves after the plain ones
        (`heuristic.improve`; 0: no such moves).
      seed: seeds the local moves (their ruins and noise).
      replan: place the decisions again first; False: the moves start from `solution` itself
        (one already placed by the placer or the heuristic: placing it again is work done twice).
      restarts: once the moves stop paying (`patience`) before the deadline, descend again from
        the same start with other seeds, at most this many times (None: while the budget lasts),
        and keep the best descent. Descents from one start end far apart (docs/solvers.md, The
        placer).
        The solvers' placement (`solvers.solve`, `RESTARTS`) descends again this way.
      fresh: also place no decisions at all (with `grow`: the heuristic's rules offered every
        use), and go on from that where it returns more than the decisions' placement and the
        input. A game's decisions can be a worse start than none. A `Solution`: that placement,
        made before (`place_nothing`, under the same rules), taken even when the budget is over.
      guide: with `fresh` and `grow`, a network's probabilities of Copy, NoCopy and Drop per
        buffer (float[N, 3], NaN: no opinion; the generalist's, `agent.guide`): the placement of
        no decisions with the uses it is sure of flipped (`guided`) is one more start (`_starts`).
      exact: with `grow`, on problems of at most `EXACT_BUFFERS` buffers, the decisions' placement
        and growth by CP-SAT (`cpsat(decisions=...)`) is one more start, descended last, beside the highest
        (the heuristic's placement loses decisions that fit; docs/solvers.md, The placer).
      each_start: descend from each start (the decisions', `fresh`'s and `guide`'s), each with an
        equal share of the time left, and keep the best, instead of from the highest start only
        (a higher start does not always descend higher).

    Returns the better of the placed solution and `solution`. A placed one has the solver
    `"<solver>+placed"` and metadata `placed_from` (the input's return), `placed_decisions` (how
    many of the input's placed uses it kept), `moves` ([kept, tried], plain and noisy together),
    `start` ("decisions", "nothing": see `fresh`, or "guide") and `seconds`.
    """
    start = time.perf_counter()
    if not budget_s > 0:
        raise ValueError(f"budget_s must be > 0, got {budget_s}")
    check_solution(problem, solution, what=f"the {solution.solver} solution to place")
    # the placed solution is checked after the deadline: keep twice the input's check for it (its
    # pins check slower), at least `CHECK_S_PER_BUFFER` a buffer (docs/solvers.md: it landed late)
    checking = max(2 * (time.perf_counter() - start), CHECK_S_PER_BUFFER * problem.num_buffers) + CHECK_SLACK_S
    rules = _made_under(problem, solution) if rules is None else rules
    deadline = start + max(budget_s - checking, 0.5 * budget_s)
    late = time.perf_counter() >= deadline  # (no time even for one placement: the input, or `fresh`)
    prepared = None if late else _prepared(problem, rules)
    placed = solution if not replan or late else _placement(problem, rules, solution.action, prepared=prepared,
                                                            deadline=deadline, grow=grow)
    starts, nothing = _starts(problem, rules, solution, placed, fresh=fresh, guide=guide, grow=grow,
                              exact=exact and not late, prepared=prepared, deadline=deadline)
    (begun, placed), counts = starts[0], [0, 0]
    if grow and (moves is None or moves > 0) and not late:
        begun, placed, counts = _descend(problem, rules, solution, starts, each_start=each_start,
                                         restarts=restarts, prepared=prepared, deadline=deadline, moves=moves,
                                         patience=patience, noise=noise, seed=seed)
    if placed.ret <= solution.ret:
        return solution
    kept = int(((placed.action != DROP) & (solution.action != DROP)).sum())
    placed = relabelled(placed, solver=f"{solution.solver}+placed", metadata={
        **placed.metadata, "placed_from": float(solution.ret), "placed_decisions": kept,
        "moves": counts, "start": begun, "seconds": time.perf_counter() - start})
    check_solution(problem, placed, what="the placed solution")  # (a bug if it fails; the placement of
    # no decisions, checked already, is not checked again)
    return placed
