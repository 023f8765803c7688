"""The reference MMapGame: plain Python and NumPy, written to be read.

This is the executable specification of `docs/game.md`. It favours the obvious algorithm over the
fast one (walking the supply vector step by step, an explicit owner grid, a scan over earlier
buffers for the NoCopy predecessor, a deep copy for the Drop-backup), so that the JAX game
(`jaxmmap.env.game`), which computes the same things differently, can be checked against it.
"""

from __future__ import annotations

import copy
import dataclasses

import numpy as np

from jaxmmap.core.problem import COPY, DROP, NOCOPY, Problem, Solution
from jaxmmap.core.rules import Discretized, Rules, discretize, exact_return

UNDECIDED = -1
PACKING_ORDERS = ("widest", "play", "repack", "longest", "area", "widest-lowest")


def best_fit(blocked: np.ndarray, width: int) -> int:
    """The lowest offset of the smallest run of free columns that holds `width`, or -1."""
    if width == 0:
        return 0
    best, at, o, c = None, -1, 0, blocked.shape[0]
    while o < c:
        if blocked[o]:
            o += 1
            continue
        end = o
        while end < c and not blocked[end]:
            end += 1
        if end - o >= width and (best is None or end - o < best):
            best, at = end - o, o
        o = end
    return at


def better_packing(ret, placed: int, other_ret, other_placed: int) -> bool:
    """Whether a packing of return `other_ret` that places `other_placed` units beats one of `ret`
    and `placed`: a higher return, or, within a relative 1e-5 (where float32 sums, the JAX
    game's, and float64 ones may disagree), more units placed."""
    tol = 1e-5 * (abs(ret) + abs(other_ret)) + 1e-7
    return other_ret > ret + tol or (abs(other_ret - ret) <= tol and other_placed > placed)


def lowest_fit(blocked: np.ndarray, width: int) -> int:
    """The lowest offset of a run of free columns that holds `width`, or -1."""
    if width == 0:
        return 0
    free = np.concatenate([[0], np.cumsum(~blocked)])
    fits = np.flatnonzero(free[width:] - free[:-width] == width)
    return int(fits[0]) if fits.size else -1


def pack_units(order, rows: dict, width: dict, num_steps: int, columns: int, fit=best_fit) -> dict:
    """`fit` (best fit) of each unit's rows (bool[T]), in `order`: {unit: column} of those that fit."""
    used = np.zeros((num_steps, columns), bool)
    column = {}
    for u in order:
        o = fit(used[rows[u]].any(axis=0), width[u])
        if o >= 0:
            used[np.ix_(rows[u], np.arange(o, o + width[u]))] = True
            column[u] = o
    return column


@dataclasses.dataclass(frozen=True)
class Placement:
    """What one action would do to the current buffer."""

    offset: int  # column, -1 for Drop
    alloc: tuple[int, int] | None  # inclusive steps of a new allocation
    copy: tuple[int, int] | None  # inclusive steps of the copy
    use: dict[int, int]  # supply ticks taken per step
    shift: tuple[int, int] | None = None  # edf: ticks taken over at its last step, the giver's last step


@dataclasses.dataclass
class _Board:
    """Everything that changes during a game (what the Drop-backup saves and restores)."""

    cursor: int
    ret: float
    supply: np.ndarray  # remaining supply W, ticks per step
    edge: np.ndarray  # edge[k]: a copy spans steps k and k+1
    owner: np.ndarray  # [T, C] alias group owning each grid cell, -1 free
    action: np.ndarray
    offset: np.ndarray
    alloc: np.ndarray  # [N, 2] per buffer its own allocation (start, end), -1 if none
    copy: np.ndarray  # [N, 2] per buffer its copy interval, -1 if none
    dropped_groups: set  # groups forced to Drop by the backup
    unpinnable: set  # tensors the backup forbids to pin
    # Rules(placement="deferred"): `offset` holds a buffer's *unit* (the first buffer of its
    # alias group or NoCopy chain, which the packer places at one offset), `rows` each unit's
    # steps, and `load` the columns reserved per step by the units.
    load: np.ndarray | None = None  # [T]
    rows: dict = dataclasses.field(default_factory=dict)  # unit -> bool[T], the steps it holds
    held: np.ndarray | None = None  # [T] edf: the ticks of step k taken by the copy spanning k and k+1
    starts: np.ndarray | None = None  # [T + 1] edf: a copy of two steps or more starts at k


class ReferenceGame:
    """One game of the MMapGame on one problem.

    `legal_actions()` gives a bool[3] mask for Copy, NoCopy, Drop; `step(action)` plays the
    current buffer and returns the reward; `done` tells whether the game has ended, `lost`
    whether it ended infeasible.
    """

    def __init__(self, problem: Problem, rules: Rules = Rules(), *, backup: bool = False):
        self.problem = problem
        self.rules = rules
        self.d: Discretized = discretize(problem, rules)
        n, T = problem.num_buffers, problem.num_steps
        self.board = _Board(
            cursor=0, ret=0.0, supply=self.d.supply.copy(), edge=np.zeros(T, bool),
            owner=np.full((T, self.d.usable_columns), -1, np.int64),
            action=np.full(n, UNDECIDED, np.int64), offset=np.full(n, -1, np.int64),
            alloc=np.full((n, 2), -1, np.int64), copy=np.full((n, 2), -1, np.int64),
            dropped_groups=set(), unpinnable=set(),
            load=np.zeros(T, np.int64) if rules.placement == "deferred" else None,
            held=np.zeros(T, np.int64) if rules.copy_supply == "edf" else None,
            starts=np.zeros(T + 1, bool) if rules.copy_supply == "edf" else None)
        self.deferred = rules.placement == "deferred"
        self.packed: dict | None = None  # deferred: what the final packing did (see `_pack`)
        self.use_backup = backup
        self.backup = copy.deepcopy(self.board) if backup else None
        self.lost = False
        self.restores = 0
        self.kept = []  # per restore, the moves it kept past the backup

    # ------------------------------------------------------------------ queries

    @property
    def done(self) -> bool:
        return self.lost or self.board.cursor >= self.problem.num_buffers

    def legal_actions(self) -> np.ndarray:
        return np.array([self.placement(a) is not None for a in (COPY, NOCOPY, DROP)])

    def _group_state(self, g: int) -> tuple[bool, bool, int]:
        """(placed, dropped, offset) of alias group g among decided buffers."""
        b = self.board
        members = np.flatnonzero(self.d.group[:b.cursor] == g)
        placed = members[b.action[members] != DROP]
        dropped = g in b.dropped_groups or bool(np.any(b.action[members] == DROP))
        return placed.size > 0, dropped, (int(b.offset[placed[0]]) if placed.size else -1)

    def _blocked(self, start: int, end: int, g: int) -> np.ndarray:
        """bool[C]: columns used by another alias group somewhere in steps [start, end]."""
        rows = self.board.owner[start:end + 1]
        return np.any((rows != -1) & (rows != g), axis=0)

    def _space(self, alloc: tuple[int, int], g: int, width: int, offset: int | None) -> int | None:
        """Where an allocation of buffer group `g` over steps `alloc` goes: at `offset` if given,
        else at the lowest free one; None if it does not fit there. Deferred placement: `offset`
        is a unit, a new one (the current buffer) if None, and the allocation fits when the steps
        it adds to the unit have `width` columns left in the load profile."""
        if self.deferred:
            unit = self.board.cursor if offset is None else offset
            return unit if self._load_fits(alloc, unit, width) else None
        blocked = self._blocked(*alloc, g)
        offset = self._lowest(blocked, width) if offset is None else offset
        return offset if self._fits(blocked, offset, width) else None

    def _new_rows(self, alloc: tuple[int, int], unit: int) -> list[int]:
        """The steps of `alloc` that `unit` does not hold yet."""
        held = self.board.rows.get(unit)
        return [k for k in range(alloc[0], alloc[1] + 1) if held is None or not held[k]]

    def _load_fits(self, alloc: tuple[int, int], unit: int, width: int) -> bool:
        rows = self._new_rows(alloc, unit)
        return width == 0 or not rows or int(self.board.load[rows].max()) + width <= self.d.usable_columns

    def _fits(self, blocked: np.ndarray, offset: int, width: int) -> bool:
        return 0 <= offset and offset + width <= blocked.shape[0] and not blocked[offset:offset + width].any()

    def _lowest(self, blocked: np.ndarray, width: int) -> int:
        for o in range(blocked.shape[0] - width + 1):
            if self._fits(blocked, o, width):
                return o
        return -1

    def _predecessor(self, i: int):
        """The earlier allocation of buffer i's tensor with the latest end (ties: later buffer)."""
        best = None
        for j in np.flatnonzero(self.d.tensor[:i] == self.d.tensor[i]):
            end = self.board.alloc[j, 1]
            if end >= 0 and (best is None or end >= self.board.alloc[best, 1]):
                best = j
        return best

    def _pinned(self, i: int) -> bool:
        """Buffer i's tensor was pinned: its output buffer was played NoCopy."""
        earlier = np.flatnonzero(self.d.tensor[:i] == self.d.tensor[i])
        return any(self.problem.is_output[j] and self.board.action[j] == NOCOPY for j in earlier)

    def placement(self, action: int) -> Placement | None:
        """What `action` would do to the current buffer, or None if it is illegal."""
        b, d, p = self.board, self.d, self.problem
        i = b.cursor
        if self.done:
            return None
        g = int(d.group[i])
        placed, dropped, goff = self._group_state(g)
        pinned = self._pinned(i)  # the tensor is only in fast memory: NoCopy is the only way
        if action == DROP:
            return None if placed or pinned else Placement(-1, None, None, {})
        if dropped:
            return None
        t, width = int(p.target_time[i]), int(d.width[i])

        if action == NOCOPY and p.is_output[i]:  # pin: written into fast memory, kept for life
            if not d.pinnable[i] or int(d.tensor[i]) in b.unpinnable:
                return None
            alloc = (t, int(p.live_end[i]))
            offset = self._space(alloc, g, width, goff if placed else None)
            return None if offset is None else Placement(offset, alloc, None, {})

        if action == COPY and pinned:
            return None
        if action == COPY:
            window = self._copy_window(i)
            if window is None:
                return None
            alloc, copy_iv, use, shift = window
            if copy_iv is not None and b.edge[copy_iv[0]:copy_iv[1]].any():
                return None  # would share two or more steps with another copy
            offset = self._space(alloc, g, width, goff if placed else None)
            return None if offset is None else Placement(offset, alloc, copy_iv, use, shift)

        # NoCopy
        j = self._predecessor(i)
        if j is None or b.alloc[j, 0] > t:
            return None
        pred_end, pred_off = int(b.alloc[j, 1]), int(b.offset[j])
        if pred_end >= t:  # already in fast memory: nothing new to allocate
            offset, alloc = pred_off, None
        else:
            alloc = (pred_end + 1, t)
            if self.rules.nocopy_offset == "same":
                offset = self._space(alloc, g, width, pred_off)
            else:
                offset = self._space(alloc, g, width, goff if placed else None)
            if offset is None:
                return None
        if placed and offset != goff:
            return None
        return Placement(offset, alloc, None, {})

    def _copy_window(self, i: int):
        """The allocation, copy interval and supply used ({step: ticks}) of a Copy of buffer i,
        or None when its window has too little supply: an input's copy ends at t - 1 and
        starts as late as the supply allows (under deferred placement, if that copy would cover
        an edge of another, once more ending at the start of the latest such edge); an output's
        starts at t + 1 and ends as early."""
        b, d, p = self.board, self.d, self.problem
        t = int(p.target_time[i])
        demand, W = int(d.demand[i]), b.supply
        edf = self.rules.copy_supply == "edf"
        use: dict[int, int] = {}
        shift = None
        if demand == 0:
            alloc, copy_iv = (t, t), None
        elif not p.is_output[i]:
            end = t - 1
            over = self._held_over(end)
            k, use = self._latest_start(demand - over[0], end)
            if k < 0 or k < d.copy_from[i]:  # not before the tensor is written
                return None
            met = np.flatnonzero(b.edge[k:end])
            if self.rules.placement == "deferred" and met.size:  # it meets another copy: it ends
                end = k + int(met[-1])  # where the latest copy it meets begins, and starts as late
                over = self._held_over(end)  # as the supply allows (one try)
                k, use = self._latest_start(demand - over[0], end)
                if k < 0 or k < d.copy_from[i]:
                    return None
            if edf:  # its own steps give what they can, from its start on; its last step the rest
                taken = max(demand - int(W[k:end + 1].sum()), 0)
                use, shift = self._early_first(demand - taken, range(k, end + 1)), (taken, over[1])
            elif self.rules.copy_supply == "early":  # the same window, its start gives first
                use = self._early_first(demand, range(k, end + 1))
            alloc, copy_iv = (k, t), (k, end)
        else:  # walk forward from t+1 to the earliest end that covers demand
            left, k = demand, t + 1
            while k < p.num_steps:
                use[k] = int(min(W[k], left))
                left -= use[k]
                if left <= 0:
                    break
                k += 1
            if edf:  # or sooner, at the first edge after it, taking that step over
                edges = np.flatnonzero(b.edge[t + 1:])
                f = t + 1 + int(edges[0]) if edges.size else p.num_steps
                over, have = self._held_over(f), int(W[t + 1:f + 1].sum())
                if f < k and have + over[0] >= demand:
                    k, use = f, self._early_first(have, range(t + 1, f + 1))
                    shift = (demand - have, over[1])
                else:
                    shift = (0, -1)
            if k >= p.num_steps or k > p.live_end[i]:
                return None
            alloc, copy_iv = (t, k), (t + 1, k)
        return alloc, copy_iv, use, shift

    def _held_over(self, k: int) -> tuple[int, int]:
        """edf: what a copy ending at step k may take over there from the copy spanning k and k+1
        (its ticks at k, as far as its later steps have supply left), that copy's last step; (0, -1)."""
        b, T = self.board, self.problem.num_steps
        if self.rules.copy_supply != "edf" or not 0 <= k < T or not b.edge[k]:
            return 0, -1
        free = k + int(np.argmin(np.append(b.edge[k:], False)))  # its first edge left uncovered
        nxt = np.flatnonzero(b.starts[k + 1:free])  # or the next copy's start
        end = min(k + 1 + int(nxt[0]) if nxt.size else free, T - 1)
        return int(min(b.held[k], b.supply[k + 1:end + 1].sum())), end

    def _latest_start(self, demand: int, end: int) -> tuple[int, dict[int, int]]:
        """The latest start (-1: none) of a copy of `demand` ticks that ends at step `end`, walking
        back from it, and the supply it takes ({step: ticks}: its steps give all they have left,
        the start the rest)."""
        use, left, k = {}, demand, end
        while k >= 0:
            use[k] = int(min(self.board.supply[k], left))
            left -= use[k]
            if left <= 0:
                break
            k -= 1
        return k, use

    def _early_first(self, demand: int, steps) -> dict[int, int]:
        """The supply a copy takes, walking `steps` (from its start on) until its demand is met."""
        use, left = {}, demand
        for k in steps:
            use[k] = int(min(self.board.supply[k], left))
            left -= use[k]
            if left <= 0:
                break
        return use

    # ------------------------------------------------------------------ moves

    def _reward(self, i: int) -> float:
        d = self.d
        if d.table[i] < 0:
            return float(self.problem.benefit[i])
        gain = d.gain[d.table[i]]
        before = 0
        for j in np.flatnonzero(d.table[:i] == d.table[i]):  # the table's buffers already placed
            if self.board.action[j] != DROP:
                before |= 1 << int(d.table_bit[j])
        return float(gain[before | (1 << int(d.table_bit[i]))] - gain[before])

    def _apply(self, action: int, pl: Placement) -> float:
        b, i = self.board, self.board.cursor
        reward = 0.0 if action == DROP else self._reward(i)
        b.action[i], b.offset[i] = action, pl.offset
        b.alloc[i] = pl.alloc if pl.alloc is not None else (-1, -1)
        b.copy[i] = pl.copy if pl.copy is not None else (-1, -1)
        for k, u in pl.use.items():
            b.supply[k] -= u
        if pl.shift is not None and pl.copy is not None:  # edf: what spans a step, and what is taken over
            (a, c), (taken, end) = pl.copy, pl.shift
            for k, u in pl.use.items():
                b.held[k] += u if k < c else 0
            b.starts[a] |= a < c
            if taken:
                b.held[c] -= taken
                for k, u in self._early_first(taken, range(c + 1, end + 1)).items():
                    b.supply[k] -= u
                    b.held[k] += u if k < end else 0
        if pl.copy is not None:
            b.edge[pl.copy[0]:pl.copy[1]] = True
        if pl.alloc is not None and self.deferred:
            rows = self._new_rows(pl.alloc, pl.offset)
            b.load[rows] += int(self.d.width[i])
            b.rows.setdefault(pl.offset, np.zeros(self.problem.num_steps, bool))[pl.alloc[0]:pl.alloc[1] + 1] = True
        elif pl.alloc is not None:
            b.owner[pl.alloc[0]:pl.alloc[1] + 1, pl.offset:pl.offset + int(self.d.width[i])] = self.d.group[i]
        b.ret += reward
        b.cursor += 1
        return reward

    def _clean_cut(self) -> bool:
        """No alias group with a placed member, and no pinned tensor, still has undecided
        members."""
        b, d = self.board, self.d
        placed_groups = d.group[:b.cursor][b.action[:b.cursor] != DROP]
        pins = self.problem.is_output[:b.cursor] & (b.action[:b.cursor] == NOCOPY)
        return not (np.isin(placed_groups, d.group[b.cursor:]).any()
                    or np.isin(d.tensor[:b.cursor][pins], d.tensor[b.cursor:]).any())

    def _rewind(self):
        """One restore: mark what took the current buffer's actions away (its tensor's pin, if
        pinned, else its placed alias group) and go back to just before it was made, replaying
        the backup's trajectory up to there."""
        b, d, bad = self.board, self.d, self.board.cursor
        dropped, unpinnable = set(b.dropped_groups), set(b.unpinnable)
        if self._pinned(bad):  # a use of a pinned tensor cannot be served: do not pin it again
            tensor = int(d.tensor[bad])
            unpinnable.add(tensor)
            point = min(j for j in range(bad) if d.tensor[j] == tensor and self.problem.is_output[j]
                        and b.action[j] == NOCOPY)
        else:
            dropped.add(int(d.group[bad]))
            point = int(np.flatnonzero(d.group == d.group[bad])[0])
        start = self.backup.cursor
        actions = b.action[start:max(point, start)].copy()
        self.kept.append(len(actions))
        self.board = copy.deepcopy(self.backup)
        self.board.dropped_groups, self.board.unpinnable = dropped, unpinnable
        for action in actions:
            pl = self.placement(int(action))
            assert pl is not None, "a recorded move is legal again"
            self._apply(int(action), pl)
        self.restores += 1

    def step(self, action: int) -> float:
        """Plays `action` on the current buffer; returns the reward of the move."""
        if self.done:
            return 0.0
        pl = self.placement(action)
        old_ret = self.board.ret
        if pl is None:  # an illegal action loses the game
            self.lost = True
            self.board.ret = -self.rules.infeasible_penalty
            return self.board.ret - old_ret
        reward = self._apply(action, pl)
        if self.deferred and self.done:  # the last move: the packer places the units
            reward += self._pack()
        if self.done or self.legal_actions().any():
            if self.use_backup and self._clean_cut():
                self.backup = copy.deepcopy(self.board)
            return reward
        # Infeasible: the current buffer has no legal action.
        if self.use_backup:
            while not self.legal_actions().any():
                self._rewind()
            if self._clean_cut():
                self.backup = copy.deepcopy(self.board)
            return self.board.ret - old_ret
        self.lost = True
        self.board.ret = -self.rules.infeasible_penalty
        return self.board.ret - old_ret

    # ------------------------------------------------------------------ deferred placement

    def _pack(self) -> float:
        """Places the finished game's units (Rules(placement="deferred")): each unit's steps at
        one offset in six packings (`PACKING_ORDERS`): best fit in five orders (widest first,
        then the longest hull, the earliest; the order of play; the units the widest-first
        packing left out first, then the others as before; the longest hull first, then the
        widest, the earliest; the largest hull area, width times hull steps, first, then the
        earliest) and widest first at the lowest fit, keeping the best (`better_packing`; ties:
        the earlier packing). A unit that fits nowhere is dropped with all its buffers. Returns the change of
        the return."""
        b, d = self.board, self.d
        old = b.ret
        placed = b.action != DROP
        units = sorted(b.rows)
        width = {u: int(d.width[u]) for u in units}
        hull = {u: (int(np.argmax(b.rows[u])), len(b.rows[u]) - 1 - int(np.argmax(b.rows[u][::-1]))) for u in units}
        widest = sorted(units, key=lambda u: (-width[u], hull[u][0] - hull[u][1], hull[u][0], u))
        longest = sorted(units, key=lambda u: (hull[u][0] - hull[u][1], -width[u], hull[u][0], u))
        area = {u: np.float32(width[u]) * np.float32(hull[u][1] - hull[u][0] + 1) for u in units}  # (as the JAX game's)
        by_area = sorted(units, key=lambda u: (-area[u], hull[u][0], u))
        best, first = None, None
        for name, order in zip(PACKING_ORDERS, (widest, units, None, longest, by_area, widest)):
            if order is None:  # repack: what the widest-first packing left out goes first
                order = [u for u in widest if u not in first] + [u for u in widest if u in first]
            fit = lowest_fit if name.endswith("-lowest") else best_fit
            column = pack_units(order, b.rows, width, self.problem.num_steps, d.usable_columns, fit)
            first = column if first is None else first
            keep = placed & np.isin(b.offset, list(column))
            ret = exact_return(self.problem, np.where(keep, b.action, DROP), d)
            if best is None or better_packing(best[0], len(best[2]), ret, len(column)):
                best = (ret, name, column, keep)
        ret, name, column, keep = best
        lost = placed & ~keep
        b.action[lost], b.alloc[lost], b.copy[lost] = DROP, -1, -1
        b.offset = np.array([column[u] if k else -1 for u, k in zip(b.offset.tolist(), keep)], np.int64)
        b.ret = ret
        self.packed = {"order": name, "units": len(units), "unplaced": len(units) - len(column),
                       "decided_return": old}
        return ret - old

    # ------------------------------------------------------------------ export

    def solution(self, solver: str = "reference") -> Solution:
        if self.lost or not self.done:
            raise ValueError("only a finished, feasible game has a solution")
        b, cb = self.board, self.d.col_bytes
        n = self.problem.num_buffers
        return Solution(problem=self.problem.name, solver=solver, ret=b.ret,
                        action=b.action.copy(), offset=np.where(b.offset >= 0, b.offset * cb, -1),
                        alloc_start=b.alloc[:, 0].copy(), alloc_end=b.alloc[:, 1].copy(),
                        copy_start=b.copy[:, 0].copy(), copy_end=b.copy[:, 1].copy(),
                        rules=self.rules.to_json(), metadata={"num_buffers": n})
