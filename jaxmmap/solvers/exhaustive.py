"""The true optimum of the game for tiny problems: branch and bound over the reference game.

Depth-first over action sequences (Copy, NoCopy, then Drop), without the Drop-backup (a lost
game is worth nothing), pruning a branch when its return so far plus an upper bound of what the
remaining buffers can add cannot beat the best complete game. The bound: the positive static
benefits of the remaining buffers outside latency tables, plus, per latency table, the best gain
any completion of its placed set could reach. With `bound=False` it enumerates every legal
sequence (the brute force that tests the bound).

The moves are the reference game's legal actions under `rules`, so the search covers pins (a
NoCopy of an output, docs/game.md) exactly when ``rules.output_nocopy``. The bound stays valid
with them: it assumes nothing about supply, copies or how a buffer is placed (a pin, or the
NoCopies it forces on its tensor's later buffers, earn the same rewards as any placement), and
any completion's remaining rewards are at most those positive benefits plus each table's best
reachable gain.
"""

from __future__ import annotations

import copy

import numpy as np

from jaxmmap.core.problem import DROP, Problem
from jaxmmap.core.rules import Rules
from jaxmmap.env.reference import ReferenceGame
from jaxmmap.solvers.base import Anytime, Refused, Result
from jaxmmap.solvers.spec import Option, declare

MAX_BUFFERS = 24


def exhaustive(problem: Problem, budget_s: float, seed: int, *, rules: Rules = Rules(),
               bound: bool = True, max_buffers: int = MAX_BUFFERS) -> Result:
    del seed  # deterministic
    if problem.num_buffers > max_buffers:
        raise Refused(f"exhaustive search is for tiny problems ({problem.num_buffers} buffers > "
                         f"{max_buffers})")
    clock = Anytime(budget_s)
    game = ReferenceGame(problem, rules)
    d = game.d
    static = np.where(d.table < 0, np.maximum(problem.benefit, 0.0), 0.0)
    rest_static = np.concatenate([np.cumsum(static[::-1])[::-1], [0.0]])
    best = {"ret": -np.inf}
    nodes = 0
    complete = True

    def table_bound(cursor: int) -> float:
        total = 0.0
        for j in np.unique(d.table[cursor:]):
            if j < 0:
                continue
            members = np.flatnonzero(d.table == j)
            placed = sum(1 << int(d.table_bit[m]) for m in members[members < cursor]
                         if game.board.action[m] != DROP)
            free = sum(1 << int(d.table_bit[m]) for m in members[members >= cursor])
            sub, reach = free, [placed]
            while sub:  # every subset of the undecided members, added to the placed set
                reach.append(placed | sub)
                sub = (sub - 1) & free
            total += max(d.gain[j, m] for m in reach) - d.gain[j, placed]
        return total

    def search() -> None:
        nonlocal nodes, complete
        nodes += 1
        if nodes % 256 == 0 and clock.out_of_time():
            complete = False
            return
        if game.done:
            if not game.lost and game.board.ret > best["ret"]:
                best["ret"] = game.board.ret
                clock.offer(game.solution(solver="exhaustive"))
            return
        cursor = game.board.cursor
        if bound and game.board.ret + rest_static[cursor] + table_bound(cursor) <= best["ret"] + 1e-12:
            return
        legal = game.legal_actions()
        for action in np.flatnonzero(legal):
            saved = copy.deepcopy(game.board)
            game.step(int(action))
            search()
            game.board, game.lost = saved, False
            if not complete:
                return

    search()
    return clock.result(nodes=nodes, proven_optimal=complete)


declare(exhaustive, {
    "bound": Option(bool, doc="prune by the bound (False: brute force)"),
    "max_buffers": Option(int, "[1, inf)", "refuse problems with more buffers"),
})
