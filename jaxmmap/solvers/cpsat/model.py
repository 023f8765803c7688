"""CP-SAT on the physical problem: exact for small problems, with the LP bound beside it.

    result = cpsat(problem, budget_s=60, seed=0)   # Result; info: status, bound, proven_optimal
    upper_bound(problem)                           # a proven bound for any size, in seconds

**The model.** The game places buffers one at a time, with fixed copy timings and lowest
offsets; the validator (`jaxmmap.core.validator`) accepts any placement and timing that obeys the
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
  (`jaxmmap.core.rules.tick_scale`: ``2**k`` per unit, about ``2**29`` in all; supply rounded down,
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

"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from ortools.sat.python import cp_model

from jaxmmap.core.files import UserError
from jaxmmap.core.problem import COPY, DROP, NOCOPY, Problem, Solution
from jaxmmap.core.rules import TICK_BUDGET, Rules, tick_scale
from jaxmmap.core.validator import validate
from jaxmmap.solvers.base import Anytime, Refused, Result
from jaxmmap.solvers.cpsat._shared import _alias_groups, _copy_from, _dense, _pin_ok, all_drop
from jaxmmap.solvers.cpsat.bound import upper_bound

__all__ = ["MAX_BUFFERS", "cpsat"]

#: Largest problem (buffers) `cpsat` builds a model for by default.
MAX_BUFFERS = 500

_OBJECTIVE_BITS = 36  # the scaled objective coefficients sum to about 2**36 in magnitude

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
