"""CP-SAT on the physical problem (exact for small problems), and a fast LP upper bound.

    result = cpsat(problem, budget_s=60, seed=0)   # Result; info: status, bound, proven_optimal
    upper_bound(problem)                           # a proven bound for any size, in seconds

**The model.** The game places buffers one at a time, with fixed copy timings and lowest
offsets; the validator (`jaxmmap.validator`) accepts any placement and timing that obeys the
physics. `cpsat` searches that larger physical space. Per buffer: an action (Copy, NoCopy with an
allocation of its own, NoCopy without one, pin, Drop), an allocation interval, a byte offset and
a copy interval. The validator's rules, one constraint group each:

* ``offset``, ``live_range``, ``alloc``: domains (offset in ``[0, memory_size - size]`` bytes,
  allocation inside the live range; a Copy's allocation contains its target step, a NoCopy's own
  one reaches it; a buffer larger than memory is never placed).
* ``copy_interval``, ``copy_early``: an input copy lies in ``[max(alloc_start, copy_from),
  target - 1]``, an output copy in ``[target + 1, alloc_end]``; a Copy has one iff its demand is
  > 0 (as in the game).
* ``nocopy_predecessor``, ``nocopy_offset``, ``nocopy_target``, ``nocopy_copy``: a NoCopy picks one
  earlier (lower index) buffer of its tensor that has an allocation: without an allocation of
  its own, one whose allocation covers the target, at the same offset; with one, one whose
  allocation ends the step before its own starts and starts at or before the target, at the same
  offset (any offset under ``Rules(nocopy_offset="lowest")``, which the validator accepts with
  ``allow_nocopy_move``). A NoCopy has no copy interval.
* ``slow_memory``, pins (docs/game.md, "NoCopy of an output"): an output that is not live-out
  may, when ``rules.output_nocopy``, be a NoCopy that *pins* its tensor: its allocation is the
  whole live range ``[target, live_end]``, with no copy interval and no flow; every later buffer
  of the tensor is then a NoCopy without an allocation of its own, covered by the pin at its
  offset (never a Copy or a Drop). With ``output_nocopy=False`` no pin literal exists and the
  model is the older game's.
* ``alias_mixed``, ``alias_offset``: one placed literal and one offset variable per alias group.
* ``overlap``: `NoOverlap2D` over (allocation steps) x (bytes). Members of one alias group may
  overlap each other, so a group enters as the disjoint pieces of the union of its members'
  allocations (`_Model._group_pieces`), at the group's offset. A redundant `Cumulative` (bytes
  per step <= memory) helps propagation.
* ``copy_engine``: `NoOverlap` of the half-open copy intervals ``[copy_start, copy_end)`` (the
  edges between steps that they cover); a one-step copy covers none and is left out.
* ``copy_supply``: integer flows per (copy, step). Supply and demands are in the game's ticks
  (`jaxmmap.rules.tick_scale`: ``2**k`` per unit, about ``2**29`` in all; supply rounded down,
  demand rounded up). A copy takes flow only from steps inside its copy interval, at least its
  demand in all; a step gives at most its supply. A schedule in these ticks is a real one, so
  every solution passes the validator's earliest-deadline-first check.
* ``return``: the objective is the validator's return: static benefits of the placed buffers in
  no latency table, and per table one literal per mask of its buffers (exactly one true, its
  bits equal to the buffers' placed literals) worth ``latency[0] - latency[mask]``.

**Decisions.**

1. *What the model admits*: the physical solutions whose copies fit the supply in the game's
   ticks and whose allocations of different alias groups never overlap (the validator's
   exemption for two allocations of one tensor at one offset is not used: the game never
   overlaps two groups either), with pins iff ``rules.output_nocopy``. That contains every
   solution of the game played under the same `Rules` (the game schedules copies in the same
   ticks, a column offset is a byte offset, and a game's pin is the model's): CP-SAT's optimum
   and bound are >= the game's optimum (`exhaustive`), which the tests check by completing every
   game of small problems into a model assignment. A physical solution outside the model needs
   copies within a tick (about ``2**-29`` of the total supply) of the supply limit, or two
   groups sharing one copy of a tensor; a finer tick would not remove the second, a coarser one
   would cut off game solutions. `upper_bound` has no such gap: it bounds every solution the
   validator accepts, its tolerances included (every one without pins under
   ``output_nocopy=False``). ``info["bound"]`` is the smaller of the two.
2. *Integer objective*: each coefficient is scaled by ``2**k`` (the magnitudes then sum to about
   ``2**36``) and rounded **up**, so a solution's scaled objective is >= its scaled return and
   CP-SAT's bound, scaled back plus one unit (for the float sum of the real return), bounds the
   real return. The rounding may make CP-SAT prefer a solution worse by at most ``terms * 2**-k``;
   every reported return is the validator's exact recomputation.
3. *Warm start*: by default the greedy game is played first and its solution, completed into a
   full assignment by a short CP-SAT solve with its decisions fixed, is CP-SAT's hint and the
   first point of the trace. Without it CP-SAT needs tens of seconds for a first solution on a
   few hundred buffers; with it the search improves on greedy.
4. *Size*: the model grows with flows (copy window x steps) and pairwise NoCopy predecessor
   choices; it builds in about a second for 400 buffers (30k variables), and at 745 buffers
   (110k variables) CP-SAT no longer improves on greedy in a minute. Above ``max_buffers``
   (`MAX_BUFFERS`) `cpsat` refuses, with a ValueError naming the size, like `exhaustive`
   (``max_buffers=None`` forces it). It falls back to all-Drop (always valid) if it has no
   solution at the end of its budget.

``info``: ``status`` ("optimal", "feasible", "unknown"), ``proven_optimal`` (of the model, hence
>= the game's), ``bound`` (a proven upper bound in real units on every solution of the model:
the smaller of ``cpsat_bound`` and ``relaxation_bound``), ``relaxation_bound`` (`upper_bound`
under the same rules: valid for every physical solution, or every one without pins under
``output_nocopy=False``), ``cpsat_bound``, model sizes, the hint's return and whether the model
accepted it, timings.

**The LP bound.** `upper_bound` / `relaxation`: an LP over fractional Copy/NoCopy/pin decisions
with per-step memory (components of tensors linked by alias groups, present at targets, during
the shortest copies, over pins' live ranges and along NoCopy chains that start with a Copy or a
pin), copy supply (Hall inequalities on dyadic intervals; pins use none), alias groups and
latency tables (exact hull of small tables); certified through its dual, so that solver
inexactness cannot make it invalid. See `relaxation`.
"""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np
import scipy.optimize
import scipy.sparse
from ortools.linear_solver.python import model_builder_helper as mbh
from ortools.sat.python import cp_model

from jaxmmap.files import UserError
from jaxmmap.problem import COPY, DROP, NOCOPY, Problem, Solution
from jaxmmap.rules import TICK_BUDGET, Rules, tick_scale
from jaxmmap.solvers.base import Anytime, Refused, Result
from jaxmmap.validator import validate

__all__ = ["MAX_BUFFERS", "all_drop", "cpsat", "relaxation", "upper_bound"]

#: Largest problem (buffers) `cpsat` builds a model for by default.
MAX_BUFFERS = 500

_OBJECTIVE_BITS = 36  # the scaled objective coefficients sum to about 2**36 in magnitude
KNAPSACK_CUTS = 3  # the LP bound's dual-feasible-function memory rows (see `relaxation`)
HULL_BITS = 4  # the LP bound takes the exact hull of latency tables of up to this many buffers
HIGHS_NONZEROS = 400_000  # larger LPs get PDLP_ITERATIONS of PDLP instead of an exact HiGHS solve
PDLP_ITERATIONS = 1000  # about 4 s on gpt_large_train; an iteration count keeps the bound reproducible


# ----------------------------------------------------------------------------- shared


def all_drop(problem: Problem, solver: str = "cpsat") -> Solution:
    """Every buffer dropped: always valid; its return is the validator's (0 plus the latency
    tables' ``latency[0] - latency[0] = 0``)."""
    n = problem.num_buffers
    none = np.full(n, -1, np.int64)
    action = np.full(n, DROP, np.int64)
    ret = validate(problem, Solution(problem.name, solver, 0.0, action, none, none, none, none,
                                     none)).recomputed_return
    return Solution(problem=problem.name, solver=solver, ret=ret, action=action, offset=none.copy(),
                    alloc_start=none.copy(), alloc_end=none.copy(), copy_start=none.copy(),
                    copy_end=none.copy(), metadata={"num_buffers": n})


def _copy_from(problem: Problem) -> np.ndarray:
    """The first step a copy of each buffer's tensor may use (the validator's ``copy_early``):
    the step after the tensor is written, or live_start for a program input."""
    written = np.isin(problem.tensor_id, problem.tensor_id[problem.is_output])
    return (problem.live_start + written).astype(np.int64)


def _dense(ids: np.ndarray) -> np.ndarray:
    return np.unique(ids, return_inverse=True)[1].reshape(ids.shape).astype(np.int64)


def _alias_groups(problem: Problem) -> list[np.ndarray]:
    """The members (buffer indices, ascending) of every alias group with alias_id >= 0."""
    ids = problem.alias_id
    return [np.flatnonzero(ids == g) for g in np.unique(ids[ids >= 0])]


def _pin_ok(problem: Problem, rules: Rules) -> np.ndarray:
    """bool[N]: the buffers whose NoCopy may pin their tensor (docs/game.md, "NoCopy of an
    output"): outputs that are not live-out and fit in memory, when the rules allow pins."""
    return problem.is_output & ~problem.live_out & (problem.size <= problem.memory_size) & rules.output_nocopy


# ----------------------------------------------------------------------------- CP-SAT


def _placeable(tensor: np.ndarray, groups: list[np.ndarray], fits: np.ndarray, can_copy: np.ndarray,
               pin_ok: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Which buffers can be placed at all, and how: ``(placeable, can_nocopy, can_pin)``.

    A Copy needs a window with enough supply (`can_copy`), a NoCopy an earlier placeable buffer
    of its tensor, a pin (`pin_ok`) every buffer of its tensor placeable (they must all be
    NoCopies served from it); an alias group is placeable only if every member is. From "all
    that fit" down to the greatest consistent set (every valid solution's placed set is
    consistent, so none is cut off)."""
    n = tensor.shape[0]
    placeable = fits.copy()
    while True:
        can_nocopy = np.zeros(n, bool)
        seen: set[int] = set()
        for i in range(n):
            can_nocopy[i] = placeable[i] and int(tensor[i]) in seen
            if placeable[i]:
                seen.add(int(tensor[i]))
        whole = np.ones(int(tensor.max(initial=-1)) + 1, bool)  # every buffer of the tensor placeable
        np.logical_and.at(whole, tensor, placeable)
        can_pin = pin_ok & placeable & whole[tensor]
        new = placeable & (can_copy | can_nocopy | can_pin)
        for members in groups:
            if not new[members].all():
                new[members] = False
        if np.array_equal(new, placeable):
            return placeable, can_nocopy, can_pin
        placeable = new


@dataclasses.dataclass
class _Buffer:
    """The CP-SAT variables of one buffer (None where the buffer cannot take that role)."""

    copy: object = None  # Copy literal
    nocopy_bare: object = None  # NoCopy without an allocation of its own
    nocopy_alloc: object = None  # NoCopy with an allocation of its own
    pin: object = None  # NoCopy of an output: the tensor's whole live range, no copy
    has_alloc: object = None  # Copy, nocopy_alloc or pin
    alloc_start: object = None
    alloc_end: object = None
    offset: object = None  # the offset variable (shared by an alias group)
    copy_start: object = None
    copy_end: object = None


class _Model:
    """The CP-SAT model of one problem (see the module docstring)."""

    def __init__(self, problem: Problem, rules: Rules):
        self.p = p = problem
        self.rules = rules
        self.m = m = cp_model.CpModel()
        n, T, mem = p.num_buffers, p.num_steps, int(p.memory_size)
        self.n, self.T = n, T
        t = p.target_time.astype(np.int64)
        ls, le = p.live_start.astype(np.int64), p.live_end.astype(np.int64)
        size = p.size.astype(np.int64)
        tensor = _dense(p.tensor_id)
        copy_from = _copy_from(p)

        # Supply and demand in the game's ticks (docs/game.md), conservative.
        scale = tick_scale(float(np.sum(p.supply)))
        supply = np.floor(p.supply * scale).astype(np.int64)
        demand = np.minimum(np.ceil(p.demand * scale), TICK_BUDGET + 1).astype(np.int64)
        demand[(p.demand > 0) & (demand < 1)] = 1
        prefix = np.concatenate([[0], np.cumsum(supply)])
        has_demand = p.demand > 0
        lo = np.where(p.is_output, t + 1, copy_from)  # copy window [lo, hi]
        hi = np.where(p.is_output, le, t - 1)
        window_supply = np.where(lo <= hi, prefix[np.clip(hi + 1, 0, T)] - prefix[np.clip(lo, 0, T)], 0)
        fits = size <= mem
        can_copy = fits & (~has_demand | ((lo <= hi) & (window_supply >= demand)))

        groups = _alias_groups(p)
        placeable, can_nocopy, can_pin = _placeable(tensor, groups, fits, can_copy, _pin_ok(p, rules))
        can_copy &= placeable

        # ---------------------------------------------------------- per buffer
        group_of = np.full(n, -1, np.int64)
        for g, members in enumerate(groups):
            group_of[members] = g
        group_placed = [m.new_bool_var(f"group{g}") if placeable[mem_[0]] else None
                        for g, mem_ in enumerate(groups)]
        group_offset = [m.new_int_var(0, max(mem - int(size[mem_[0]]), 0), f"goff{g}")
                        if placeable[mem_[0]] else None for g, mem_ in enumerate(groups)]
        for g, off in enumerate(group_offset):
            if off is not None:
                m.add(off == 0).only_enforce_if(~group_placed[g])  # no symmetry
        B = [_Buffer() for _ in range(n)]
        self.B = B
        self.placed: list = [0] * n  # the placed literal of each buffer (0: never placed)
        for i in range(n):
            if not placeable[i]:
                continue
            b = B[i]
            if can_copy[i]:
                b.copy = m.new_bool_var(f"copy{i}")
            if can_nocopy[i]:
                b.nocopy_bare = m.new_bool_var(f"nb{i}")
                b.nocopy_alloc = m.new_bool_var(f"na{i}")
            if can_pin[i]:
                b.pin = m.new_bool_var(f"pin{i}")
            lits = [x for x in (b.copy, b.nocopy_bare, b.nocopy_alloc, b.pin) if x is not None]
            g = int(group_of[i])
            placed = group_placed[g] if g >= 0 else m.new_bool_var(f"placed{i}")
            m.add(sum(lits) == placed)
            self.placed[i] = placed
            if g >= 0:
                b.offset = group_offset[g]
            else:
                b.offset = m.new_int_var(0, max(mem - int(size[i]), 0), f"off{i}")
                m.add(b.offset == 0).only_enforce_if(~placed)  # no symmetry
            alloc_lits = [x for x in (b.copy, b.nocopy_alloc, b.pin) if x is not None]
            b.has_alloc = m.new_bool_var(f"h{i}")
            m.add(b.has_alloc == sum(alloc_lits))
            b.alloc_start = m.new_int_var(int(ls[i]), int(le[i]), f"a0_{i}")
            b.alloc_end = m.new_int_var(int(t[i]), int(le[i]), f"a1_{i}")
            m.add(b.alloc_start <= b.alloc_end)
            m.add(b.alloc_start == int(t[i])).only_enforce_if(~b.has_alloc)  # no symmetry
            m.add(b.alloc_end == int(t[i])).only_enforce_if(~b.has_alloc)
            if b.copy is not None:
                m.add(b.alloc_start <= int(t[i])).only_enforce_if(b.copy)
        self._add_pins(tensor)

        # ---------------------------------------------------------- copies: engine and supply
        engine = []
        flows_at: list[list] = [[] for _ in range(T)]
        self.num_flows = 0
        for i in np.flatnonzero(can_copy & has_demand):
            b, lo_i, hi_i = B[i], int(lo[i]), int(hi[i])
            b.copy_start = m.new_int_var(lo_i, hi_i, f"c0_{i}")
            b.copy_end = m.new_int_var(lo_i, hi_i, f"c1_{i}")
            m.add(b.copy_start <= b.copy_end)
            if p.is_output[i]:
                m.add(b.copy_end <= b.alloc_end).only_enforce_if(b.copy)
            else:
                m.add(b.alloc_start <= b.copy_start).only_enforce_if(b.copy)
            multi = m.new_bool_var(f"multi{i}")
            m.add_implication(multi, b.copy)
            m.add(b.copy_end >= b.copy_start + 1).only_enforce_if(multi)
            m.add(b.copy_end == b.copy_start).only_enforce_if(~multi)
            length = m.new_int_var(0, hi_i - lo_i, f"clen{i}")
            m.add(length == b.copy_end - b.copy_start)
            engine.append(m.new_optional_interval_var(b.copy_start, length, b.copy_end, multi,
                                                      f"edges{i}"))
            total = []
            for k in range(lo_i, hi_i + 1):
                if supply[k] <= 0:
                    continue
                cap = int(min(supply[k], demand[i]))
                use = m.new_bool_var(f"u{i}_{k}")
                flow = m.new_int_var(0, cap, f"f{i}_{k}")
                m.add_implication(use, b.copy)
                m.add(b.copy_start <= k).only_enforce_if(use)
                m.add(b.copy_end >= k).only_enforce_if(use)
                m.add(flow <= cap * use)
                flows_at[k].append(flow)
                total.append(flow)
                self.num_flows += 1
            m.add(sum(total) >= int(demand[i]) * b.copy)
        if engine:
            m.add_no_overlap(engine)
        for k in range(T):
            if len(flows_at[k]) > 1:  # a single flow is within its step's supply by its domain
                m.add(sum(flows_at[k]) <= int(supply[k]))

        # ---------------------------------------------------------- NoCopy predecessors
        by_tensor: dict[int, list[int]] = {}
        same_offset_required = rules.nocopy_offset == "same"
        for i in range(n):
            b = B[i]
            earlier = by_tensor.get(int(tensor[i]), [])
            if b.nocopy_bare is not None:
                cover, pred = [], []
                for j in earlier:
                    bj = B[j]
                    y = m.new_bool_var(f"cover{i}_{j}")
                    m.add_implication(y, bj.has_alloc)
                    m.add(bj.alloc_start <= int(t[i])).only_enforce_if(y)
                    m.add(bj.alloc_end >= int(t[i])).only_enforce_if(y)
                    if bj.offset is not b.offset:
                        m.add(bj.offset == b.offset).only_enforce_if(y)
                    cover.append(y)
                    z = m.new_bool_var(f"pred{i}_{j}")
                    m.add_implication(z, bj.has_alloc)
                    m.add(bj.alloc_end + 1 == b.alloc_start).only_enforce_if(z)
                    m.add(bj.alloc_start <= int(t[i])).only_enforce_if(z)
                    if same_offset_required and bj.offset is not b.offset:
                        m.add(bj.offset == b.offset).only_enforce_if(z)
                    pred.append(z)
                m.add(sum(cover) == b.nocopy_bare)
                m.add(sum(pred) == b.nocopy_alloc)
            if placeable[i]:
                by_tensor.setdefault(int(tensor[i]), []).append(i)

        # ---------------------------------------------------------- memory
        xs, ys, heights = [], [], []
        for i in range(n):
            if placeable[i] and group_of[i] < 0 and size[i] > 0:
                b = B[i]
                length = m.new_int_var(1, T, f"alen{i}")
                m.add(length == b.alloc_end - b.alloc_start + 1)
                xs.append(m.new_optional_interval_var(b.alloc_start, length, b.alloc_end + 1,
                                                      b.has_alloc, f"x{i}"))
                ys.append(m.new_optional_fixed_size_interval_var(b.offset, int(size[i]), b.has_alloc,
                                                                 f"y{i}"))
                heights.append(int(size[i]))
        for g, members in enumerate(groups):
            if group_placed[g] is None or size[members[0]] == 0:
                continue
            for start, length, end, present in self._group_pieces(members, t):
                xs.append(m.new_optional_interval_var(start, length, end, present, f"gx{g}"))
                ys.append(m.new_optional_fixed_size_interval_var(
                    group_offset[g], int(size[members[0]]), present, f"gy{g}"))
                heights.append(int(size[members[0]]))
        if xs:
            m.add_no_overlap_2d(xs, ys)
            m.add_cumulative(xs, heights, mem)
        self.num_boxes = len(xs)

        # ---------------------------------------------------------- objective
        in_table = np.zeros(n, bool)
        terms: list[tuple[float, object]] = []
        for table in p.latency_tables:
            bufs = np.asarray(table.buffers, np.int64)
            in_table[bufs] = True
            free = [bit for bit, i in enumerate(bufs.tolist()) if placeable[i]]
            gain = float(table.latency[0]) - np.asarray(table.latency, np.float64)
            masks = [0]
            for bit in free:
                masks += [mk | (1 << bit) for mk in masks]
            if not np.any(gain[masks]):
                continue  # the table's buffers change nothing
            lits = {mk: m.new_bool_var(f"mask{mk}") for mk in masks}
            m.add_exactly_one(lits.values())
            for bit in free:
                m.add(sum(lit for mk, lit in lits.items() if mk >> bit & 1)
                      == self.placed[int(bufs[bit])])
            terms += [(float(gain[mk]), lit) for mk, lit in lits.items() if gain[mk] != 0]
        for i in range(n):
            if placeable[i] and not in_table[i] and p.benefit[i] != 0:
                terms.append((float(p.benefit[i]), self.placed[i]))
        magnitude = sum(abs(c) for c, _ in terms)
        exponent = _OBJECTIVE_BITS - math.ceil(math.log2(magnitude)) if magnitude > 0 else 0
        self.obj_scale = math.ldexp(1.0, min(max(exponent, -900), 900))
        m.maximize(sum(math.ceil(c * self.obj_scale) * e for c, e in terms))
        self.num_terms = len(terms)

    def _add_pins(self, tensor: np.ndarray) -> None:
        """A pin (NoCopy of an output) allocates its tensor's whole live range ``[live_start,
        live_end]`` (``live_start`` is the output's target) and has no copy interval and no
        flow. Every later buffer of a pinned tensor is then a NoCopy without an allocation of
        its own (the validator's ``slow_memory`` rule: no Copy, no Drop); its cover is the pin,
        the only allocation of the tensor, so it sits at the pin's offset."""
        p, m = self.p, self.m
        for i, b in enumerate(self.B):
            if b.pin is None:
                continue
            m.add(b.alloc_start == int(p.live_start[i])).only_enforce_if(b.pin)
            m.add(b.alloc_end == int(p.live_end[i])).only_enforce_if(b.pin)
            for j in np.flatnonzero(tensor == tensor[i]).tolist():
                if j > i:  # placeable (`_placeable`), after a placeable buffer: it has nocopy_bare
                    m.add_implication(b.pin, self.B[j].nocopy_bare)

    def _group_pieces(self, members: np.ndarray, t: np.ndarray) -> list[tuple]:
        """Disjoint (start, length, end exclusive, present) time pieces whose union is the union of the
        allocations of an alias group's members (members of a group may overlap each other, so
        they cannot enter `NoOverlap2D` one by one).

        With the distinct target steps ``v_1 < ... < v_r`` of the members: before ``v_1`` the
        union is ``[L_0, v_1)`` with ``L_0`` the earliest allocation start; in ``[v_j,
        v_{j+1})`` it is ``[v_j, R_j]`` (allocations of members targeted at or before ``v_j``
        reach forward to at most ``R_j``, the latest of their ends) joined with ``[L_j,
        v_{j+1})`` (members targeted at or after ``v_{j+1}`` reach back to ``L_j``, the earliest
        of their starts); from ``v_r`` on it is ``[v_r, R_r]``. Each allocation contains its
        member's target, which makes these the exact union. A member without an allocation
        counts as start ``T``, end ``-1``."""
        m, T = self.m, self.T
        targets = np.unique(t[members])
        starts, ends = {}, {}
        for i in members.tolist():
            b = self.B[i]
            s = m.new_int_var(0, T, f"s_eff{i}")
            e = m.new_int_var(-1, T - 1, f"e_eff{i}")
            m.add(s == b.alloc_start).only_enforce_if(b.has_alloc)
            m.add(s == T).only_enforce_if(~b.has_alloc)
            m.add(e == b.alloc_end).only_enforce_if(b.has_alloc)
            m.add(e == -1).only_enforce_if(~b.has_alloc)
            starts.setdefault(int(t[i]), []).append(s)
            ends.setdefault(int(t[i]), []).append(e)

        def agg(fn, items, lo, hi):
            v = m.new_int_var(lo, hi, "")
            (m.add_max_equality if fn == "max" else m.add_min_equality)(v, items)
            return v

        r = len(targets)
        reach_fwd, reach_back = [None] * r, [None] * r  # R_j, L_j (as in the docstring)
        for j, v in enumerate(targets.tolist()):
            items = ends[v] + ([reach_fwd[j - 1]] if j else [])
            reach_fwd[j] = agg("max", items, -1, T - 1)
        for j in range(r - 1, -1, -1):
            items = starts[int(targets[j])] + ([reach_back[j + 1]] if j + 1 < r else [])
            reach_back[j] = agg("min", items, 0, T)
        pieces = []

        def piece(start, end):
            size = m.new_int_var(0, T + 1, "")
            m.add(size == end - start)
            present = m.new_bool_var("")
            m.add(size >= 1).only_enforce_if(present)
            m.add(size == 0).only_enforce_if(~present)
            pieces.append((start, size, end, present))

        v1 = int(targets[0])
        piece(agg("min", [reach_back[0], v1], 0, v1), v1)
        for j in range(r - 1):
            v, w = int(targets[j]), int(targets[j + 1])
            left_end = agg("max", [agg("min", [reach_fwd[j] + 1, w], 0, w), v], v, w)
            piece(v, left_end)
            piece(agg("min", [agg("max", [reach_back[j + 1], left_end], 0, T), w], v, w), w)
        vr = int(targets[-1])
        piece(vr, agg("max", [reach_fwd[-1] + 1, vr], vr, T))
        return pieces

    # ------------------------------------------------------------------ solutions

    def decode(self, value) -> Solution:
        """The solution of an assignment (`value(var)` gives a variable's value)."""
        n = self.n
        action = np.full(n, DROP, np.int64)
        cols = {k: np.full(n, -1, np.int64) for k in
                ("offset", "alloc_start", "alloc_end", "copy_start", "copy_end")}
        for i, b in enumerate(self.B):
            if b.has_alloc is None:
                continue
            if b.copy is not None and value(b.copy):
                action[i] = COPY
                if b.copy_start is not None:
                    cols["copy_start"][i] = value(b.copy_start)
                    cols["copy_end"][i] = value(b.copy_end)
            elif b.nocopy_bare is not None and (value(b.nocopy_bare) or value(b.nocopy_alloc)):
                action[i] = NOCOPY
            elif b.pin is not None and value(b.pin):
                action[i] = NOCOPY
            else:
                continue
            cols["offset"][i] = value(b.offset)
            if value(b.has_alloc):
                cols["alloc_start"][i] = value(b.alloc_start)
                cols["alloc_end"][i] = value(b.alloc_end)
        sol = Solution(problem=self.p.name, solver="cpsat", ret=0.0, action=action,
                       rules=self.rules.to_json(), metadata={"num_buffers": n}, **cols)
        return sol

    def _decisions(self, sol: Solution) -> list[tuple[object, int]]:
        """(variable, value) pairs that pin the model to `sol`'s actions, allocations, offsets and
        copy intervals (the other variables follow from these)."""
        out = []
        for i, b in enumerate(self.B):
            a = int(sol.action[i])
            if b.has_alloc is None:
                if a != DROP:
                    raise ValueError(f"buffer {i} cannot be placed, but the solution places it")
                continue
            has_alloc = a != DROP and sol.alloc_start[i] >= 0
            if b.copy is not None:
                out.append((b.copy, int(a == COPY)))
            elif a == COPY:
                raise ValueError(f"buffer {i} cannot be a Copy, but the solution copies it")
            if b.nocopy_bare is not None:
                out += [(b.nocopy_bare, int(a == NOCOPY and not has_alloc)),
                        (b.nocopy_alloc, int(a == NOCOPY and has_alloc))]
            elif b.pin is not None:
                out.append((b.pin, int(a == NOCOPY)))
            elif a == NOCOPY:
                raise ValueError(f"buffer {i} cannot be a NoCopy, but the solution makes it one")
            out.append((b.has_alloc, int(has_alloc)))
            if has_alloc:
                out += [(b.alloc_start, int(sol.alloc_start[i])), (b.alloc_end, int(sol.alloc_end[i]))]
            if a != DROP:
                out.append((b.offset, int(sol.offset[i])))
            if b.copy_start is not None and a == COPY:
                out += [(b.copy_start, int(sol.copy_start[i])), (b.copy_end, int(sol.copy_end[i]))]
        return out

    def complete(self, sol: Solution, time_limit_s: float) -> list[int] | None:
        """A full assignment of the model's variables that extends `sol` (flows, NoCopy
        predecessors, masks... found by a short CP-SAT solve with `sol`'s decisions fixed), or
        None if `sol` is outside the model or none is found in time."""
        sub = self.m.clone()
        try:
            for var, value in self._decisions(sol):
                sub.add(sub.get_int_var_from_proto_index(var.index) == value)
        except ValueError:
            return None
        solver = cp_model.CpSolver()
        solver.parameters.max_time_in_seconds = max(time_limit_s, 0.01)
        solver.parameters.stop_after_first_solution = True
        solver.parameters.num_workers = 1
        if solver.solve(sub) not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return None
        return list(solver.response_proto.solution)

    def add_hint(self, values: list[int]) -> None:
        """Hints CP-SAT with a full assignment (from `complete`)."""
        for k, value in enumerate(values):
            self.m.add_hint(self.m.get_int_var_from_proto_index(k), value)

    def keep(self, sol: Solution) -> None:
        """Constrains every use that `sol` serves from fast memory to stay served, by the same
        action (a Copy stays a Copy; a NoCopy stays a NoCopy: kept, or pinned for an output);
        the other uses stay free. Offsets, allocations and copy intervals are not fixed."""
        for i, b in enumerate(self.B):
            a = int(sol.action[i])
            if a == DROP:
                continue
            lits = [b.copy] if a == COPY else [b.nocopy_bare, b.nocopy_alloc, b.pin]
            lits = [lit for lit in lits if lit is not None]
            if not lits:
                raise ValueError(f"buffer {i} cannot be a {'Copy' if a == COPY else 'NoCopy'}, "
                                 "but the decisions make it one")
            self.m.add_bool_or(lits)

    def stats(self) -> dict:
        proto = self.m.proto
        return {"variables": len(proto.variables), "constraints": len(proto.constraints),
                "flows": self.num_flows, "boxes": self.num_boxes, "objective_terms": self.num_terms}


def cpsat(problem: Problem, budget_s: float, seed: int, *, rules: Rules = Rules(),
          workers: int = 2, max_buffers: int | None = MAX_BUFFERS,
          hint: Solution | str | None = "greedy", decisions: Solution | None = None,
          log: bool = False) -> Result:
    """Solves the physical problem with CP-SAT within `budget_s` seconds (module docstring).

    Args:
      rules: ``nocopy_offset`` (``"lowest"`` lets a NoCopy's own allocation move) and
        ``output_nocopy`` (False: no pins, the older game; the model is then exactly the one
        without the pin literals, and ``info["relaxation_bound"]`` the bound without pins).
      workers: CP-SAT search workers (threads).
      max_buffers: refuse (ValueError) problems with more buffers; None: no limit.
      hint: a solution to start from: ``"greedy"`` (the default) plays the greedy game first
        (its time counts), a `Solution`, or None. It is completed into a full assignment of the
        model and given to CP-SAT, and counts as a solution found.
      decisions: the fixed-decisions mode (Python only): every use this solution serves from
        fast memory stays served, by the same action (Copy, or NoCopy: kept or pinned), at any
        offset, allocation and copy interval; the other uses are free. Its optimum is the best
        placement and growth of those decisions, the reference for `placer.place` (which may
        beat it only by dropping decisions, in its local moves). It is also the default hint
        and the fallback; ``info["bound"]`` then bounds the placements of these decisions, and
        ``status`` is "infeasible" if they lie outside the model (decision 1).
      log: print CP-SAT's search log.

    Every solution CP-SAT reports is decoded, checked by the validator and recorded (the
    anytime trace); its return is the validator's recomputed one.
    """
    if max_buffers is not None and problem.num_buffers > max_buffers:
        raise Refused(f"cpsat builds its model for up to {max_buffers} buffers, not "
                         f"{problem.num_buffers} (max_buffers=None to force; upper_bound() "
                         "bounds any size)")
    if decisions is not None and not isinstance(decisions, Solution):
        raise UserError("cpsat's decisions must be a Solution (from Python), got "
                        f"{type(decisions).__name__}")
    if not (hint is None or isinstance(hint, Solution) or hint == "greedy"):
        raise UserError(f"cpsat's hint must be 'greedy', a Solution or None, got {hint!r}")
    clock = Anytime(budget_s)
    lp_bound = upper_bound(problem, rules=rules)
    fallback = all_drop(problem)
    info: dict = {"status": "unknown", "proven_optimal": False, "bound": lp_bound,
                  "relaxation_bound": lp_bound, "cpsat_bound": math.inf}
    allow_move = rules.nocopy_offset == "lowest"

    def offer(sol: Solution) -> None:
        report = validate(problem, sol, allow_nocopy_move=allow_move)
        if report.rules() <= {"return"}:  # the return is recomputed here
            clock.offer(dataclasses.replace(sol, solver="cpsat", ret=report.recomputed_return))
        else:  # never expected: kept for the report rather than returned
            info.setdefault("invalid_solutions", []).append(str(report))

    model = _Model(problem, rules)
    if decisions is not None:
        model.keep(decisions)
        info["decisions_from"] = float(decisions.ret)
        hint = decisions if isinstance(hint, str) else hint
        fallback = dataclasses.replace(decisions, solver="cpsat")  # valid, if outside the model
    info.update(model.stats(), build_seconds=clock.elapsed())
    if isinstance(hint, str):
        from jaxmmap.solvers.simple import greedy

        # The greedy game costs a compile; not worth it once half the budget is gone.
        skip = clock.elapsed() > 0.5 * budget_s
        info["hint_skipped"] = skip
        hint = None if skip else greedy(problem, 0.0, seed, rules=rules).solution
    if hint is not None and not clock.out_of_time():
        values = model.complete(hint, max(0.25 * (budget_s - clock.elapsed()), 0.1))
        info["hint_return"] = float(hint.ret)
        info["hint_accepted"] = values is not None
        if values is not None:
            model.add_hint(values)
            offer(hint)

    class Callback(cp_model.CpSolverSolutionCallback):
        def on_solution_callback(self):
            offer(model.decode(self.value))

    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = max(budget_s - clock.elapsed(), 0.05)
    solver.parameters.num_workers = workers
    solver.parameters.random_seed = seed
    solver.parameters.log_search_progress = log
    solve_start = clock.elapsed()
    status = solver.solve(model.m, Callback())
    if status == cp_model.MODEL_INVALID:
        raise RuntimeError(f"CP-SAT rejects the model: {model.m.validate()}")
    if status == cp_model.INFEASIBLE and decisions is None:  # all-Drop satisfies the model
        raise RuntimeError("CP-SAT claims the model infeasible, but all-Drop satisfies it")
    found = status in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    # Scaled coefficients were rounded up, so the scaled optimum bounds the real one; one unit
    # more covers the round-off of the real return's float sum.
    cp_bound = (solver.best_objective_bound + 1.0) / model.obj_scale if found else math.inf
    if clock.best is None or fallback.ret > clock.best.ret:
        clock.offer(fallback)
    info.update(status={cp_model.OPTIMAL: "optimal", cp_model.FEASIBLE: "feasible",
                        cp_model.INFEASIBLE: "infeasible"}.get(
        status, "unknown"), proven_optimal=status == cp_model.OPTIMAL, cpsat_bound=cp_bound,
        bound=min(cp_bound, lp_bound), solve_seconds=clock.elapsed() - solve_start)
    return clock.result(**info)


# ----------------------------------------------------------------------------- LP bound


class _LP:
    """A sparse LP ``max c x  s.t.  A_ub x <= b_ub,  A_eq x = b_eq,  lo <= x <= hi`` built
    column by column and row by row."""

    def __init__(self):
        self.lo: list[float] = []
        self.hi: list[float] = []
        self.c: list[float] = []
        self.rows = {"ub": ([], [], [], []), "eq": ([], [], [], [])}  # row, col, val; rhs

    def var(self, lo: float = 0.0, hi: float = 1.0, obj: float = 0.0) -> int:
        self.lo.append(lo)
        self.hi.append(hi)
        self.c.append(obj)
        return len(self.c) - 1

    def row(self, kind: str, terms, rhs: float) -> None:
        r, cols, vals, b = self.rows[kind]
        k = len(b)
        for col, val in terms:
            r.append(k)
            cols.append(col)
            vals.append(val)
        b.append(rhs)

    def solve(self, pdlp_iterations: int) -> tuple[float, dict]:
        """Solves the LP and returns a *certified* bound: the Lagrangian value of the dual
        values found, ``b_ub.l + b_eq.m + sum_j max(r_j lo_j, r_j hi_j)`` with ``l >= 0`` and
        reduced costs ``r = c - A_ub' l - A_eq' m``, which bounds the LP (hence every solution)
        for any dual values, however inexact the solver's arithmetic or early its stop. Up to
        `HIGHS_NONZEROS` nonzeros HiGHS (simplex, via SciPy) solves it exactly; a larger LP gets
        `pdlp_iterations` of OR-Tools' first-order PDLP (a count, not a time, so that the bound
        does not depend on the machine), whose duals certify a slightly weaker bound."""
        n = len(self.c)
        mats = {}
        for kind, (r, cols, vals, b) in self.rows.items():
            mats[kind] = (scipy.sparse.csr_array((vals, (r, cols)), shape=(len(b), n)),
                          np.asarray(b, np.float64))
        (a_ub, b_ub), (a_eq, b_eq) = mats["ub"], mats["eq"]
        c = np.asarray(self.c, np.float64)
        lo, hi = np.asarray(self.lo, np.float64), np.asarray(self.hi, np.float64)
        nonzeros = a_ub.nnz + a_eq.nnz
        info = {"lp_variables": n, "lp_rows": len(b_ub) + len(b_eq), "lp_nonzeros": nonzeros}
        if nonzeros <= HIGHS_NONZEROS:
            res = scipy.optimize.linprog(-c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq,
                                         bounds=np.stack([lo, hi], axis=1), method="highs")
            info.update(lp_solver="highs", lp_status=res.message)
            if res.status != 0:
                return math.inf, info
            lam, mu = -res.ineqlin.marginals, -res.eqlin.marginals
            info["lp_value"] = -float(res.fun)
        else:
            helper = mbh.ModelBuilderHelper()
            helper.fill_model_from_sparse_data(
                lo, hi, c, np.concatenate([np.full(len(b_ub), -np.inf), b_eq]),
                np.concatenate([b_ub, b_eq]), scipy.sparse.vstack([a_ub, a_eq]).tocsr())
            helper.set_maximize(True)
            solver = mbh.ModelSolverHelper("pdlp")
            solver.set_solver_specific_parameters(
                f"termination_criteria {{ iteration_limit: {int(pdlp_iterations)} }}")
            solver.solve(helper)
            info.update(lp_solver="pdlp", lp_status=str(solver.status()))
            duals = np.asarray(solver.dual_values(), np.float64) if solver.has_response() else None
            if duals is None or duals.shape != (len(b_ub) + len(b_eq),):
                return math.inf, info
            lam, mu = duals[:len(b_ub)], duals[len(b_ub):]
        lam = np.maximum(np.nan_to_num(np.asarray(lam, np.float64)), 0.0)
        mu = np.nan_to_num(np.asarray(mu, np.float64))
        reduced = c - a_ub.T @ lam - a_eq.T @ mu
        terms = np.concatenate([lam * b_ub, mu * b_eq, np.maximum(reduced * lo, reduced * hi)])
        bound = math.fsum(terms)
        # Round-off of the evaluation itself (each term carries a few ulps at most).
        bound += 1e-12 * float(np.sum(np.abs(terms))) + 1e-12
        return bound, info


def upper_bound(problem: Problem, *, rules: Rules = Rules(), pdlp_iterations: int = PDLP_ITERATIONS) -> float:
    """A proven upper bound on the return of every solution the validator accepts (and so of
    every solver's), from an LP relaxation, in seconds for any suite problem (`relaxation`
    gives the argument; `pdlp_iterations` the effort spent on a large LP). Of `rules` only
    ``output_nocopy`` matters: False bounds only the solutions without pins (the older game)."""
    return relaxation(problem, rules=rules, pdlp_iterations=pdlp_iterations)[0]


def relaxation(problem: Problem, *, rules: Rules = Rules(),
               pdlp_iterations: int = PDLP_ITERATIONS) -> tuple[float, dict]:
    """The LP relaxation bound of `upper_bound`, with figures about the LP (its size, solver,
    value and time).

    Fractional variables per buffer, ``x`` (Copy), ``y`` (NoCopy of a buffer that is not an
    output) and ``z`` (NoCopy of an output: a *pin*, docs/game.md) with ``x + y + z <= 1``. Every
    constraint below holds for the 0/1 values of any solution the validator accepts (with its
    tolerances: a copy is taken to receive only ``demand * (1 - 1e-5) - 1e-12``, and supplies
    get a relative slack of 1e-9), so the LP optimum bounds every return; the bound returned is
    the Lagrangian value of the dual solution found (`_LP.solve`), valid whatever the LP solver's
    accuracy.

    * **Memory.** Two allocations that overlap in bytes at one step are of one alias group or
      hold one tensor at one offset (the ``overlap`` rule), and then have the same byte range.
      So tensors linked by alias groups form *components* of one size, and at every step the
      sizes of the components present (an allocation of one of their tensors covers the step)
      sum to at most ``memory_size``, as does any dual-feasible function of the fractions
      ``size / memory_size``: ``u_k(x) = floor((k+1) x) / k`` (``x`` if ``(k+1) x`` is an
      integer), k = 1..`KNAPSACK_CUTS` (Fekete and Schepers; u_1 says that at most one component
      larger than half the memory is present). A component is present: at the target of each
      placed buffer (``x + y + z``); over ``[s, target - 1]`` for an input Copy, ``s`` the
      latest start whose supply can carry its demand (the copy lies in the allocation, before
      the target); over ``[target + 1, e]`` for an output Copy likewise; over its whole live
      range for a pin (the validator's ``alloc`` rule: its allocation is ``[target, live_end]``);
      between two targets of a tensor along a NoCopy chain (below). Presence is a variable per
      segment of steps, >= each source covering it (or the source itself when only one does);
      memory per step is a running sum over steps, so a long segment costs two coefficients,
      not its length.
    * **NoCopy chains.** Every allocation continues, through NoCopy predecessors (adjacent,
      lower index), a contiguous chain that starts with a Copy or a pin (the only placements
      without a predecessor), so a NoCopy at the tensor's target step ``v_r`` (its distinct
      target steps ``v_0 < v_1 < ...``) has the tensor in memory since a Copy or pin (a *start*)
      at an earlier target or at ``v_r`` with a lower index. Chain variables ``H_r`` (a NoCopy at
      ``v_r`` or later relies on a start before ``v_r``): ``y_j <= H_r + (starts of lower index at
      v_r)``, ``H_r <= H_{r-1} + (starts at v_{r-1})``, and ``H_r`` makes the component present
      strictly between ``v_{r-1}`` and ``v_r``. A pin is the tensor's first buffer, so it is a
      start for every later NoCopy; by the ``slow_memory`` rule every later buffer of a pinned
      tensor is a NoCopy: ``z_i <= y_j``.
    * **Supply.** A Copy receives its demand within its window (``[copy_from, target - 1]`` for
      an input, ``[target + 1, live_end]`` for an output), and the copies whose windows lie in a
      step interval receive at most its supply: Hall inequalities on dyadic intervals (lengths
      ``2**j`` at stride ``2**(j-1)``; a copy enters those of the three finest levels that can
      contain its window, and the whole horizon's). Only Copies enter these rows: a pin copies
      nothing (``nocopy_copy``), so a solution with pins uses no more supply than its Copies.
    * **Feasibility**: alias groups all placed or none (equal ``x + y + z``); a buffer larger
      than memory, or a Copy whose window has too little supply, is 0; the first buffer of a
      tensor is no NoCopy unless it is an output that may pin (not ``live_out``, the
      ``slow_memory`` rule; and only if ``rules.output_nocopy``: with False the bound is one on
      the solutions without pins).
    * **Latency tables**: up to `HULL_BITS` placeable buffers, one variable per mask summing to
      1, whose marginals are the buffers' ``x + y + z`` (the convex hull of the table's 0/1 points;
      no assumption of additivity); larger ones get a variable ``g <= max gain`` and ``g <=
      sum_b m_b (x_b + y_b + z_b)``, ``m_b`` the largest marginal gain of buffer ``b`` over all masks
      (``gain(mask)`` telescopes into marginals from ``gain(0) = 0``); exact at 0/1 points for
      roofline tables, ``min(K, sum_b d_b)``.

    Why pins need nothing more: every row above is a property of a valid solution that holds
    with pins too. The memory rows only take a component to be present where a placement
    forces it (a pin forces it over its live range, where its allocation really is); the chain
    rows accept a pin as a start; the supply rows count Copies only; alias, table and objective
    terms count a pin as placed (``x + y + z``).

    Left out: offsets (fragmentation), the copy engine's one-step sharing, and where within its
    window a copy really runs (only the shortest possible presence is charged). LPs up to
    `HIGHS_NONZEROS` nonzeros (every suite problem but gpt_large_train) are solved exactly by
    HiGHS (about 2 s at 250k nonzeros); larger ones get `pdlp_iterations` of PDLP (on
    gpt_large_train, 1000 iterations: about 4 s, 6 s in all, a bound 5% above the exact LP
    value, which HiGHS needs 15-25 s for).
    """
    start = time.perf_counter()
    p = problem
    n, T, mem = p.num_buffers, p.num_steps, float(p.memory_size)
    t = p.target_time.astype(np.int64)
    le = p.live_end.astype(np.int64)
    tensor = _dense(p.tensor_id)
    copy_from = _copy_from(p)
    lp = _LP()

    supply = np.asarray(p.supply, np.float64)
    prefix = np.concatenate([[0.0], np.cumsum(supply)])
    total = float(prefix[-1])
    slack = 1e-9 * total + 1e-12
    need = np.maximum(p.demand * (1.0 - 1e-5) - 1e-12, 0.0) - slack  # the least a copy gets
    has_demand = p.demand > 0
    fits = p.size <= p.memory_size

    # Copy feasibility and the shortest presence of a copy ([s, t] input, [t, e] output).
    lo = np.where(p.is_output, t + 1, copy_from)
    hi = np.where(p.is_output, le, t - 1)
    s_latest = np.searchsorted(prefix, prefix[t] - need, side="right") - 1
    s_latest = np.minimum(s_latest, t - 1)
    e_earliest = np.searchsorted(prefix, prefix[np.minimum(t + 1, T)] + need, side="left") - 1
    e_earliest = np.maximum(e_earliest, t + 1)
    window_ok = np.where(p.is_output, e_earliest <= le, s_latest >= copy_from) & (lo <= hi)
    can_copy = fits & (~has_demand | window_ok)
    first_of_tensor = np.zeros(n, bool)
    first_of_tensor[np.unique(tensor, return_index=True)[1]] = True
    can_nocopy = fits & ~first_of_tensor & ~p.is_output
    can_pin = _pin_ok(p, rules)

    in_table = np.zeros(n, bool)
    for table in p.latency_tables:
        in_table[np.asarray(table.buffers)] = True
    benefit = np.where(in_table, 0.0, p.benefit)
    xv = np.full(n, -1, np.int64)
    yv = np.full(n, -1, np.int64)
    zv = np.full(n, -1, np.int64)
    for i in range(n):
        if can_copy[i]:
            xv[i] = lp.var(obj=float(benefit[i]))
        if can_nocopy[i]:
            yv[i] = lp.var(obj=float(benefit[i]))
        if can_pin[i]:
            zv[i] = lp.var(obj=float(benefit[i]))
        if int(can_copy[i]) + int(can_nocopy[i]) + int(can_pin[i]) > 1:
            lp.row("ub", [(v, 1.0) for v in (xv[i], yv[i], zv[i]) if v >= 0], 1.0)

    def placed(i: int) -> list[tuple[int, float]]:
        return [(v, 1.0) for v in (xv[i], yv[i], zv[i]) if v >= 0]

    def starts(idx) -> list[tuple[int, float]]:
        """The Copies and pins of buffers `idx`: what a NoCopy chain may start with."""
        return [(int(v), 1.0) for i in idx for v in (xv[i], zv[i]) if v >= 0]

    # Alias groups: all or nothing. Components: tensors linked by alias groups.
    parent = list(range(int(tensor.max(initial=-1)) + 1))

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for members in _alias_groups(p):
        first = int(members[0])
        for i in members[1:].tolist():
            lp.row("eq", placed(i) + [(v, -c) for v, c in placed(first)], 0.0)
            parent[find(int(tensor[i]))] = find(int(tensor[first]))
    component = np.asarray([find(k) for k in range(len(parent))], np.int64)[tensor]

    # Presence sources per component: (first step, last step, terms); copy jobs for the
    # supply rows: (terms, first step, last step, least amount received).
    sources: dict[int, list[tuple[int, int, list]]] = {}
    jobs: list[tuple[list, int, int, float]] = []
    for i in range(n):
        terms = placed(i)
        if not terms:
            continue
        c = int(component[i])
        sources.setdefault(c, []).append((int(t[i]), int(t[i]), terms))
        if zv[i] >= 0:  # a pin holds the tensor over its whole live range, from its target
            sources[c].append((int(t[i]), int(le[i]), [(int(zv[i]), 1.0)]))
        if not (xv[i] >= 0 and has_demand[i]):
            continue
        # The copy lies in its window and the allocation holds it, so the buffer is in memory
        # at least over the shortest copy next to the target (the target itself is covered
        # by the placement's source).
        if p.is_output[i]:
            jobs.append(([(int(xv[i]), 1.0)], int(t[i]) + 1, int(le[i]), float(need[i])))
            sources[c].append((int(t[i]) + 1, int(e_earliest[i]), [(int(xv[i]), 1.0)]))
        else:
            jobs.append(([(int(xv[i]), 1.0)], int(copy_from[i]), int(t[i]) - 1, float(need[i])))
            sources[c].append((int(s_latest[i]), int(t[i]) - 1, [(int(xv[i]), 1.0)]))

    # NoCopy chains, per tensor over its distinct target steps.
    order = np.lexsort((np.arange(n), tensor))
    bounds_ = np.flatnonzero(np.diff(tensor[order], prepend=-1, append=-1))
    for a, b in zip(bounds_[:-1], bounds_[1:], strict=True):
        idx = order[a:b]
        steps = np.unique(t[idx])
        chain: list[int] = []
        for r, v in enumerate(steps.tolist()):
            here = idx[t[idx] == v]
            if r:
                h = lp.var()
                prev = idx[t[idx] == steps[r - 1]]
                lp.row("ub", [(h, 1.0)] + ([(chain[-1], -1.0)] if len(chain) else [])
                       + [(v_, -1.0) for v_, _ in starts(prev)], 0.0)
                if v > steps[r - 1] + 1:  # the steps strictly between the two targets
                    sources.setdefault(int(component[idx[0]]), []).append(
                        (int(steps[r - 1]) + 1, v - 1, [(h, 1.0)]))
                chain.append(h)
            for q, j in enumerate(here.tolist()):
                if yv[j] >= 0:
                    lp.row("ub", [(int(yv[j]), 1.0)] + ([(chain[-1], -1.0)] if r else [])
                           + [(v_, -1.0) for v_, _ in starts(here[:q])], 0.0)
        for i in idx[zv[idx] >= 0].tolist():  # a pinned tensor: every later buffer is a NoCopy
            for j in idx[idx > i].tolist():
                lp.row("ub", [(int(zv[i]), 1.0)] + ([(int(yv[j]), -1.0)] if yv[j] >= 0 else []), 0.0)

    # Segments of presence per component (a segment with one source is that source; one with
    # several gets a variable >= each).
    comp_bytes = np.zeros(int(component.max(initial=-1)) + 1, np.int64)
    comp_bytes[component] = p.size
    segments: list[tuple[int, int, int, list]] = []  # component, first step, end (excl.), terms
    for c, srcs in sources.items():
        if comp_bytes[c] <= 0:
            continue
        cuts = np.unique([s for s, _, _ in srcs] + [e + 1 for _, e, _ in srcs])
        covering: dict[int, list] = {}
        for s, e, terms in srcs:
            for k in range(int(np.searchsorted(cuts, s)), int(np.searchsorted(cuts, e + 1))):
                covering.setdefault(k, []).append(terms)
        for k, alternatives in covering.items():
            if len(alternatives) == 1:
                terms = alternatives[0]
            else:
                z = lp.var()
                for alt in alternatives:
                    lp.row("ub", alt + [(z, -1.0)], 0.0)
                terms = [(z, 1.0)]
            segments.append((c, int(cuts[k]), int(cuts[k + 1]), terms))

    # Memory at every step, as running sums over the steps (a segment costs two coefficients):
    # the components present fit, sum of size / memory_size <= 1, and so does the sum of any
    # dual-feasible function of those fractions; u_k(x) = floor((k+1) x) / k (x itself if
    # (k+1) x is an integer) for k = 1..KNAPSACK_CUTS (Fekete and Schepers) strengthens the
    # knapsack for large tensors (u_1: at most one tensor larger than half the memory).
    def dff(k: int, size: int) -> float:
        q, r = divmod((k + 1) * size, int(p.memory_size))
        return size / mem if r == 0 else q / k

    for k in range(KNAPSACK_CUTS + 1):
        weight = {c: (comp_bytes[c] / mem if k == 0 else dff(k, int(comp_bytes[c])))
                  for c in sources if comp_bytes[c] > 0}
        if k and not any(w > comp_bytes[c] / mem for c, w in weight.items()):
            continue  # no stronger than the plain memory row
        delta: list[list] = [[] for _ in range(T + 1)]
        for c, s, e, terms in segments:
            if weight[c] > 0:
                delta[s] += [(v, -weight[c] * a) for v, a in terms]
                delta[e] += [(v, weight[c] * a) for v, a in terms]
        running = [lp.var(0.0, 1.0) for _ in range(T)]
        for step in range(T):
            lp.row("eq", [(running[step], 1.0)] + ([(running[step - 1], -1.0)] if step else [])
                   + delta[step], 0.0)

    # Supply: Hall inequalities on dyadic intervals.
    levels = max(1, math.ceil(math.log2(max(T, 2))))
    hall: dict[tuple[int, int], list] = {}
    unit = max(total, 1e-300)
    for terms, r0, r1, amount in jobs:
        length = r1 - r0 + 1
        first = 0 if length <= 1 else math.ceil(math.log2(length - 1)) + 1
        for j in sorted({*range(first, min(first + 3, levels + 1)), levels}):
            span, stride = 2 ** j, max(1, 2 ** (j - 1))
            for q in range(max(0, -(-(r1 - span + 1) // stride)), r0 // stride + 1):
                hall.setdefault((j, q), []).extend((v, a * max(amount, 0.0) / unit) for v, a in terms)
    for (j, q), terms in hall.items():
        stride = max(1, 2 ** (j - 1))
        a, b = q * stride, min(q * stride + 2 ** j, T)
        lp.row("ub", terms, (prefix[b] - prefix[a] + slack) / unit)

    # Latency tables: the convex hull of each small table's placed sets; affine majorants of
    # a large one.
    for table in p.latency_tables:
        bufs = np.asarray(table.buffers, np.int64).tolist()
        gain = float(table.latency[0]) - np.asarray(table.latency, np.float64)
        free = [bit for bit, i in enumerate(bufs) if placed(i)]
        masks = np.zeros(1, np.int64)
        for bit in free:
            masks = np.concatenate([masks, masks | (1 << bit)])
        if len(free) <= HULL_BITS:
            w = {int(mk): lp.var(obj=float(gain[mk])) for mk in masks}
            lp.row("eq", [(v, 1.0) for v in w.values()], 1.0)
            for bit in free:
                lp.row("eq", [(v, 1.0) for mk, v in w.items() if mk >> bit & 1]
                       + [(v, -c) for v, c in placed(bufs[bit])], 0.0)
            continue
        # gain(m) <= max gain, and gain(m) <= sum over bits of m of the bit's largest marginal
        # gain (telescoping from gain(0) = 0); exact for roofline tables, min(K, sum d_b m_b).
        g = lp.var(float(gain[masks].min()), float(gain[masks].max()), obj=1.0)
        marginal = []
        for bit in free:
            without = masks[(masks >> bit & 1) == 0]
            marginal.append(float(np.max(gain[without | (1 << bit)] - gain[without])))
        lp.row("ub", [(g, 1.0)] + [(v, -c * mg) for bit, mg in zip(free, marginal, strict=True)
                                   for v, c in placed(bufs[bit])], 0.0)
    built = time.perf_counter() - start
    bound, info = lp.solve(pdlp_iterations)
    info.update(build_seconds=built, seconds=time.perf_counter() - start)
    return bound, info
