"""An XLA-style heuristic: a simplified memory-space assignment (MSA).

XLA decides which buffers live in the alternate (fast) memory with a best-fit heap over buffer
intervals sorted by how memory-bound they are. This module follows that design in the game's
units (grid columns, supply ticks). Its result is an action per buffer with the heuristic's own
offsets and copy intervals: a solution of the physical problem that the validator checks, as
XLA's assignment is in the paper (MMap-MuZero-prod takes the better of the agent and XLA). The
same decisions can also be replayed through the JAX game (`mode="game"`), which places them with
the game's own rules; `mode="best"` returns the better of the two.

Plan (`plan`):

1. **Order.** Work items are whole alias groups (all their tensors together, all or nothing, one
   offset) and unaliased tensors. They are sorted by memory-boundedness: estimated benefit per
   sqrt(size) (descending), then size, then live-range length. The benefit of a buffer is its
   static benefit or, in a latency table, the gain of having it alone in fast memory.
2. **Per use, in time order: keep, prefetch or leave.** A use whose tensor is already in fast
   memory is *kept* (NoCopy, extending the previous allocation at its offset) if the gap is short
   enough: XLA's `CanAllocateInAlternateMemoryNoCopy` rule, the elapsed time of the gap at most
   `max_overlap` (10) times the copy time; otherwise the tensor is *evicted* (its allocation
   ends) and the use is *prefetched* again (Copy). A prefetch's start is chosen as XLA's
   cost-analysis prefetch interval picker does: the start whose overlap (elapsed time of the
   copy interval over the copy time) is nearest `preferred_overlap` (1.5), among starts with an
   overlap in `[min_overlap, max_overlap]` = [0.8, 10] (the ratios of XLA's own tests), trying
   the others in order of their distance from the preferred one. An output is placed where it is
   written and copied out (evicted) as early as the copy engine allows. A use that neither fits
   nor earns a positive benefit (given what the plan has placed so far: a latency-table buffer
   earns its marginal gain) is *left* in slow memory (Drop).
3. **Best fit.** Every new allocation goes to the smallest free run of columns that holds it over
   its whole interval (XLA's best-fit heap); an alias group takes one offset free over the union
   of its allocations.
4. **Copy resources.** One copy engine (two copy intervals share at most one step: the game's
   equation 6, i.e. one outstanding copy, shared only at boundary steps) and the per-step supply,
   checked exactly (earliest deadline first) whenever a copy is added, as XLA's asynchronous-copy
   resource is.

Replay (`mode="game"`): the game plays the planned action of each buffer when it is legal, else
the next one in a fixed fallback order (planned Copy: Copy, NoCopy, Drop; NoCopy: NoCopy, Copy,
Drop; Drop: Drop, NoCopy, Copy), with the Drop-backup on. The game's placement rules are greedy
in buffer order (lowest offset; copies take the latest start and consume the supply nearest the
use), so the replay usually returns less than the plan: an alias group's first member may take
an offset its later members find occupied, and a long eviction decided early may consume the
supply a later-decided, earlier-due prefetch needed (the plan checks copies exactly).

Where this departs from XLA:

* Time is the game's logical steps and copy time is the game's supply: the "elapsed time" of a
  range of steps is its copy supply (supply = bandwidth x step duration), so overlap ratios are
  supply sums over demand. A copy also needs its supply to be *available*; overlaps below 1.0
  never fit, so the effective minimum is max(0.8, what the remaining supply allows).
* XLA allows several outstanding asynchronous copies sharing bandwidth; the game has one engine.
* When a use is too far for XLA to keep its tensor in fast memory but no prefetch fits (one
  step between the write and the read already takes more than `max_overlap` copies on fast copy
  engines), the tensor is kept anyway; XLA would serve the use from slow memory.
* XLA retries with smaller allocations, repacks and splits live ranges on failure; here a use
  that does not fit is left in slow memory, and an alias group that does not fit is left whole.
* Latency-table interactions between buffers of one instruction are ignored when ordering.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from jaxmmap import game
from jaxmmap.instance import make_instance
from jaxmmap.play import Policy, rollout, to_solution
from jaxmmap.problem import COPY, DROP, NOCOPY, Problem, Solution
from jaxmmap.rules import Discretized, Rules, discretize, exact_return
from jaxmmap.solvers.base import Anytime, Result

PREFERRED_OVERLAP = 1.5
MIN_OVERLAP = 0.8
MAX_OVERLAP = 10.0
MAX_START_TRIES = 64  # prefetch starts tried per use, nearest the preferred overlap first

# Fallback preference of the replay, per planned action.
_PREFERENCE = np.array([[COPY, NOCOPY, DROP], [NOCOPY, COPY, DROP], [DROP, NOCOPY, COPY]],
                       np.int32)


@dataclasses.dataclass(frozen=True)
class Plan:
    """The heuristic's decisions and its own placement of them.

    Attributes:
      action: int64[N] planned action per buffer.
      solution: the plan as a physical solution (offsets from its best fit, copy intervals from
        its prefetch picker), valid for the validator.
      order: int64[G] the work items' first buffers in the order they were allocated.
    """

    action: np.ndarray
    solution: Solution
    order: np.ndarray


class _Memory:
    """The plan's resources: occupied grid cells, and the copies on the one copy engine.

    Copies are checked exactly, as XLA's asynchronous-copy resource does: a new copy is accepted
    if no copy interval shares two steps with it (equation 6) and earliest-deadline-first can
    still serve every copy of the chain it joins. Because copies of two steps or more never
    share an edge, a step is touched only by one copy ending there, one starting or running
    through it, and any number of one-step copies, so EDF is one pass along the chain.
    """

    def __init__(self, d: Discretized, num_steps: int):
        self.columns = d.usable_columns
        self.occ = np.zeros((num_steps, max(self.columns, 1)), bool)
        self.supply = d.supply.astype(np.int64)
        self.elapsed = np.concatenate([[0], np.cumsum(self.supply)])  # "time" in supply units
        self.cover = np.full(num_steps, -1, np.int64)  # copy covering edge k (steps k, k+1)
        self.start_of = np.full(num_steps, -1, np.int64)  # multi-step copy starting at step k
        self.singles = np.zeros(num_steps, np.int64)  # demand of one-step copies at step k
        self.copies: list[tuple[int, int, int]] = []  # (start, end, demand), multi-step

    def time(self, a: int, b: int) -> int:
        """Elapsed time (supply) of steps [a, b]."""
        return int(self.elapsed[b + 1] - self.elapsed[a]) if b >= a else 0

    def best_fit(self, steps: np.ndarray, width: int) -> int:
        """The start of the smallest free run of >= width columns over `steps`, or -1."""
        if width == 0:
            return 0
        if width > self.columns:
            return -1
        blocked = self.occ[steps].any(axis=0)[: self.columns]
        edges = np.diff(np.concatenate([[1], blocked.astype(np.int8), [1]]))
        starts, ends = np.flatnonzero(edges == -1), np.flatnonzero(edges == 1)
        runs = ends - starts
        ok = runs >= width
        if not ok.any():
            return -1
        return int(starts[ok][np.argmin(runs[ok])])

    def free(self, a: int, b: int, offset: int, width: int) -> bool:
        return not self.occ[a:b + 1, offset:offset + width].any()

    def take(self, a: int, b: int, offset: int, width: int) -> None:
        self.occ[a:b + 1, offset:offset + width] = True

    def copy_fits(self, a: int, b: int, demand: int) -> bool:
        """Can a copy over steps [a, b] with `demand` ticks join the engine's schedule?"""
        if self.time(a, b) < demand or (self.cover[a:b] >= 0).any():
            return False
        lo, hi = a, b
        while lo > 0 and self.cover[lo - 1] >= 0:  # extend over the chain of copies
            lo = self.copies[self.cover[lo - 1]][0]
        while self.cover[hi] >= 0:
            hi = self.copies[self.cover[hi]][1]
        rem, end = 0, -1  # the running multi-step copy: remaining demand, last step
        for k in range(lo, hi + 1):
            single = self.singles[k] + (demand if a == b == k else 0)
            need = single + (rem if end == k else 0)
            avail = int(self.supply[k]) - need
            if avail < 0:
                return False
            if end == k:
                rem, end = 0, -1
            j = self.start_of[k]
            if j >= 0:
                rem, end = self.copies[j][2], self.copies[j][1]
            elif k == a < b:
                rem, end = demand, b
            if end > k:
                rem -= min(rem, avail)
        return True

    def add_copy(self, a: int, b: int, demand: int) -> None:
        if a == b:
            self.singles[a] += demand
            return
        j = len(self.copies)
        self.copies.append((a, b, demand))
        self.cover[a:b] = j
        self.start_of[a] = j

    def snapshot(self):
        return (self.cover.copy(), self.start_of.copy(), self.singles.copy(), len(self.copies))

    def restore(self, snap) -> None:
        self.cover, self.start_of, self.singles = (x.copy() for x in snap[:3])
        del self.copies[snap[3]:]


_MASKS = np.arange(256)


def _potential(gain: np.ndarray, placed: int, dropped: int, bit: int) -> float:
    """How much the best completion of a latency table gains from including buffer `bit`: the
    best gain over reachable masks (supersets of `placed`, disjoint from `dropped`) with it,
    minus the best without it. Catches buffers that only pay together (a roofline instruction
    stays memory-bound until all its operands are fast), where the gain alone is zero."""
    reach = ((_MASKS & placed) == placed) & ((_MASKS & dropped) == 0) & (_MASKS < gain.shape[0])
    has = (_MASKS & bit) != 0
    return float(gain[reach & has].max(initial=0.0) - gain[reach & ~has].max(initial=0.0))


def _benefit_estimate(problem: Problem, d: Discretized) -> np.ndarray:
    """Static benefit; for a latency-table buffer the better of its gain alone and its
    `_potential` in an empty table."""
    est = problem.benefit.astype(np.float64).copy()
    for i in np.flatnonzero(d.table >= 0):
        row, bit = d.gain[d.table[i]], 1 << int(d.table_bit[i])
        est[i] = max(float(row[bit] - row[0]), _potential(row, 0, 0, bit))
    return est


def plan(problem: Problem, rules: Rules = Rules(), *, preferred_overlap: float = PREFERRED_OVERLAP,
         min_overlap: float = MIN_OVERLAP, max_overlap: float = MAX_OVERLAP) -> Plan:
    """Runs the simplified memory-space assignment (see the module docstring)."""
    d = discretize(problem, rules)
    n, T = problem.num_buffers, problem.num_steps
    mem = _Memory(d, T)
    est = _benefit_estimate(problem, d)
    target, is_output = problem.target_time, problem.is_output
    live_start, live_end = problem.live_start, problem.live_end

    action = np.full(n, DROP, np.int64)
    offset = np.full(n, -1, np.int64)
    alloc = np.full((n, 2), -1, np.int64)
    copy = np.full((n, 2), -1, np.int64)

    def prefetch_starts(i: int) -> list[int]:
        """Copy starts for input buffer i, nearest the preferred overlap first."""
        t, demand = int(target[i]), int(d.demand[i])
        lo = int(d.copy_from[i])
        if t - 1 < lo:
            return []
        s = np.arange(lo, t)
        overlap = (mem.elapsed[t] - mem.elapsed[s]) / max(demand, 1)
        enough = overlap >= min_overlap
        if not enough.any():
            return []
        # The latest start with enough overlap is always a candidate, even when one step is
        # already longer than max_overlap copies (the bound only limits how early to start).
        ok = enough & ((overlap <= max_overlap) | (s == s[enough].max()))
        s, overlap = s[ok], overlap[ok]
        order = np.argsort(np.abs(overlap - preferred_overlap), kind="stable")
        return [int(x) for x in s[order[:MAX_START_TRIES]]]

    def input_copy(i: int, fixed_offset: int | None):
        """(alloc, copy interval, offset) of a prefetch for input buffer i, or None."""
        t, demand, w = int(target[i]), int(d.demand[i]), int(d.width[i])
        if demand == 0:
            starts, zero = [t], True
        else:
            starts, zero = prefetch_starts(i), False
        for s in starts:
            if not zero and not mem.copy_fits(s, t - 1, demand):
                continue
            if fixed_offset is None:
                off = mem.best_fit(np.arange(s, t + 1), w)
                if off < 0:
                    continue
            else:
                off = fixed_offset
            return (s, t), (None if zero else (s, t - 1)), off
        return None

    def output_copy(i: int):
        """(alloc, copy interval) of an output buffer written at its target and copied out (evicted)
        as early as the engine allows, or None."""
        t, demand = int(target[i]), int(d.demand[i])
        if demand == 0:
            return (t, t), None
        for e in range(t + 1, min(T - 1, int(live_end[i])) + 1):
            if e - 1 >= t + 1 and mem.cover[e - 1] >= 0:
                return None  # the interval cannot grow past another copy
            if mem.time(t + 1, e) >= demand and mem.copy_fits(t + 1, e, demand):
                return (t, e), (t + 1, e)
        return None

    table_mask = np.zeros(d.gain.shape[0], np.int64)  # placed buffers per latency table
    table_left = np.zeros(d.gain.shape[0], np.int64)  # buffers decided to stay slow

    def worth(i: int) -> float:
        """What placing buffer i may add, given the plan so far: its marginal gain now, or what
        it adds to the best completion of its latency table."""
        j = int(d.table[i])
        if j < 0:
            return float(problem.benefit[i])
        bit, row = 1 << int(d.table_bit[i]), d.gain[j]
        now = float(row[table_mask[j] | bit] - row[table_mask[j]])
        return max(now, _potential(row, int(table_mask[j]), int(table_left[j]), bit))

    def commit(i: int, act: int, off: int, al, cp) -> None:
        action[i], offset[i] = act, off
        if d.table[i] >= 0:
            table_mask[d.table[i]] |= 1 << int(d.table_bit[i])
        if al is not None:
            alloc[i] = al
            mem.take(al[0], al[1], off, int(d.width[i]))
        if cp is not None:
            copy[i] = cp
            mem.add_copy(cp[0], cp[1], int(d.demand[i]))

    def keep_gap(i: int, last, *, far_ok: bool = False) -> tuple[int, int] | None:
        """The allocation that keeps buffer i's tensor from `last` (start, end, ...) to its use:
        (-1, -1) if the tensor is still there, None if it cannot be kept or, unless `far_ok`,
        if the gap is longer than `max_overlap` copies (XLA evicts then and prefetches again)."""
        t, demand = int(target[i]), int(d.demand[i])
        if last is None or last[0] > t:
            return None
        if last[1] >= t:
            return (-1, -1)  # already there
        gap = (int(last[1]) + 1, t)
        if not far_ok and demand > 0 and mem.time(*gap) > max_overlap * demand:
            return None
        return gap

    def place_tensor(members: np.ndarray) -> None:
        """An unaliased tensor: each use keeps, prefetches or leaves independently."""
        last = None  # (start, end, offset) of the tensor's allocation with the latest end
        for n_, i in enumerate(members):
            i, t, w = int(i), int(target[i]), int(d.width[i])
            # An output is also worth what it lets later uses keep without a copy.
            later = sum(max(worth(int(j)), 0.0) for j in members[n_ + 1:]) if is_output[i] else 0
            if worth(i) + later <= 0:
                continue
            if is_output[i]:
                out = output_copy(i)
                off = -1 if out is None else mem.best_fit(np.arange(out[0][0], out[0][1] + 1), w)
                if out is not None and off >= 0:
                    commit(i, COPY, off, out[0], out[1])
                    last = (out[0][0], out[0][1], off)
                continue
            gap = keep_gap(i, last)
            if gap == (-1, -1):
                commit(i, NOCOPY, last[2], None, None)
                continue
            if gap is not None and mem.free(gap[0], gap[1], last[2], w):
                commit(i, NOCOPY, last[2], gap, None)
                last = (last[0], t, last[2])
                continue
            pre = input_copy(i, None)
            if pre is not None:
                commit(i, COPY, pre[2], pre[0], pre[1])
                if last is None or t >= last[1]:
                    last = (pre[0][0], t, pre[2])
                continue
            gap = keep_gap(i, last, far_ok=True)  # no prefetch fits: keep it after all
            if gap is not None and mem.free(gap[0], gap[1], last[2], w):
                commit(i, NOCOPY, last[2], gap, None)
                last = (last[0], t, last[2])

    def place_group(members: np.ndarray) -> None:
        """An alias group: every member placed, at one offset, or none."""
        snap = mem.snapshot()
        decided = []  # (buffer, action, alloc, copy)
        last: dict[int, tuple[int, int]] = {}  # tensor -> (start, end)
        for i in members:
            i, k = int(i), int(d.tensor[i])
            if is_output[i]:
                out = output_copy(i)
                if out is None:
                    break
                choice = (i, COPY, out[0], out[1])
            else:
                prev = last.get(k)
                gap = keep_gap(i, None if prev is None else (*prev, 0))
                if gap == (-1, -1):
                    choice = (i, NOCOPY, None, None)
                elif gap is not None:
                    choice = (i, NOCOPY, gap, None)
                else:
                    pre = input_copy(i, fixed_offset=0)  # offset decided below
                    if pre is not None:
                        choice = (i, COPY, pre[0], pre[1])
                    else:  # no prefetch fits: keep it after all, if it is in fast memory
                        gap = keep_gap(i, None if prev is None else (*prev, 0), far_ok=True)
                        if gap is None:
                            break
                        choice = (i, NOCOPY, None if gap == (-1, -1) else gap, None)
            if choice[3] is not None:  # reserve the copy so that later members see it
                mem.add_copy(choice[3][0], choice[3][1], int(d.demand[i]))
            decided.append(choice)
            if choice[2] is not None and (k not in last or choice[2][1] >= last[k][1]):
                last[k] = (choice[2][0] if choice[1] == COPY else last[k][0], choice[2][1])
        mem.restore(snap)
        if len(decided) < len(members):
            return
        steps = np.unique(np.concatenate([np.arange(a[0], a[1] + 1) for _, _, a, _ in decided
                                          if a is not None] or [np.zeros(0, np.int64)]))
        off = mem.best_fit(steps, int(d.width[members[0]]))
        if off < 0:
            return
        for i, act, al, cp in decided:
            commit(i, act, off, al, cp)

    # Work items: alias groups whole, unaliased tensors whole (their uses decided one by one).
    aliased = problem.alias_id >= 0
    key = np.where(aliased, d.group, -1 - d.tensor)
    items = [np.flatnonzero(key == k) for k in np.unique(key)]
    size = problem.size.astype(np.float64)

    def priority(members: np.ndarray):
        benefit = float(np.sum(est[members]))
        length = int(live_end[members].max() - live_start[members].min() + 1)
        s = float(size[members].max())
        return (-benefit / np.sqrt(max(s, 1.0)), -s, -length, int(members[0]))

    items.sort(key=priority)
    for members in items:
        if aliased[members[0]]:
            if sum(worth(int(i)) for i in members) > 0:
                place_group(members)
        else:
            place_tensor(members)
        for i in members[(action[members] == DROP) & (d.table[members] >= 0)]:
            table_left[d.table[i]] |= 1 << int(d.table_bit[i])

    solution = Solution(
        problem=problem.name, solver="heuristic-plan", ret=exact_return(problem, action, d),
        action=action, offset=np.where(offset >= 0, offset * d.col_bytes, -1),
        alloc_start=alloc[:, 0].copy(), alloc_end=alloc[:, 1].copy(),
        copy_start=copy[:, 0].copy(), copy_end=copy[:, 1].copy(), rules=rules.to_json(),
        metadata={"preferred_overlap": preferred_overlap, "min_overlap": min_overlap,
                  "max_overlap": max_overlap})
    return Plan(action=action, solution=solution,
                order=np.array([int(m[0]) for m in items], np.int64))


def plan_policy(planned: jax.Array) -> Policy:
    """A game policy that plays `planned[cursor]` when legal, else its fallback (module doc)."""
    preference = jnp.asarray(_PREFERENCE)

    def policy(key: jax.Array, state: game.State) -> jax.Array:
        del key
        legal = game.legal_action_mask(state)
        order = preference[planned[state.board.cursor]]
        first = jnp.argmax(legal[order])
        return order[first].astype(jnp.int32)

    return policy


def heuristic(problem: Problem, budget_s: float, seed: int, *, rules: Rules = Rules(),
              mode: str = "plan", preferred_overlap: float = PREFERRED_OVERLAP,
              min_overlap: float = MIN_OVERLAP, max_overlap: float = MAX_OVERLAP) -> Result:
    """The XLA-style heuristic (deterministic: `seed` is unused). `mode`: "plan" (its own
    placement), "game" (its decisions replayed in the game) or "best" (the better of the two).
    `info` has `plan_return`, `game_return` (when replayed), `planned_placed` and `followed`
    (buffers on which the replay could follow the plan)."""
    del seed
    if mode not in ("plan", "game", "best"):
        raise ValueError(f"mode must be 'plan', 'game' or 'best', got {mode!r}")
    clock = Anytime(budget_s)
    p = plan(problem, rules, preferred_overlap=preferred_overlap, min_overlap=min_overlap,
             max_overlap=max_overlap)
    info = {"plan_return": float(p.solution.ret), "planned_placed": int(np.sum(p.action != DROP))}
    if mode in ("plan", "best"):
        clock.offer(dataclasses.replace(p.solution, solver="heuristic"))
    if mode in ("game", "best"):
        solution = replay(problem, p.action, rules)
        info.update(game_return=float(solution.ret),
                    followed=int(np.sum(solution.action == p.action)),
                    restores=int(solution.metadata["restores"]))
        clock.offer(solution)
    return clock.result(**info)


def replay(problem: Problem, planned: np.ndarray, rules: Rules = Rules(), *,
           solver: str = "heuristic") -> Solution:
    """Plays `planned` (an action per buffer) in the JAX game with the fallback order of the
    module docstring and the Drop-backup; returns the finished game's solution."""
    instance = make_instance(problem, rules)
    padded = np.full(instance.width.shape[0], DROP, np.int32)
    padded[: problem.num_buffers] = planned
    state = _replay_game(instance, jnp.asarray(padded))
    return to_solution(problem, state, rules, solver=solver)  # raises if the game was lost


@jax.jit
def _replay_game(instance, planned):
    """One compile per padded shape, shared by every call of `replay`."""
    return rollout(instance, jax.random.key(0), plan_policy(planned), backup=True)
