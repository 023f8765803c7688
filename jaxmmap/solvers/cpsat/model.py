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
  allocations (`_shared.union_pieces`), at the group's offset. A redundant `Cumulative` (bytes
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
Warm start, size limits and the `info` of a solve: `jaxmmap.solvers.cpsat.solve`.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from ortools.sat.python import cp_model

from jaxmmap.core.problem import COPY, DROP, NOCOPY, Problem, Solution
from jaxmmap.core.rules import Rules, discretize
from jaxmmap.solvers.cpsat._shared import _alias_groups, _placeable, pin_ok, union_pieces

_OBJECTIVE_BITS = 36  # the scaled objective coefficients sum to about 2**36 in magnitude

# ----------------------------------------------------------------------------- CP-SAT


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
        """The model's variables and constraints, group by group (the module docstring)."""
        self.p = p = problem
        self.rules = rules
        self.m = cp_model.CpModel()  # the methods below add the variables and constraints
        n, T, mem = p.num_buffers, p.num_steps, int(p.memory_size)
        self.n, self.T = n, T
        t = p.target_time.astype(np.int64)
        ls, le = p.live_start.astype(np.int64), p.live_end.astype(np.int64)
        size = p.size.astype(np.int64)
        d = discretize(p, rules)  # the game's units: dense tensor ids, copy windows, ticks
        tensor, copy_from = d.tensor, d.copy_from

        # Supply and demand in the game's ticks (docs/game.md), conservative.
        supply, demand = d.supply, d.demand.copy()
        demand[(p.demand > 0) & (demand < 1)] = 1
        prefix = np.concatenate([[0], np.cumsum(supply)])
        has_demand = p.demand > 0
        lo = np.where(p.is_output, t + 1, copy_from)  # copy window [lo, hi]
        hi = np.where(p.is_output, le, t - 1)
        window_supply = np.where(lo <= hi, prefix[np.clip(hi + 1, 0, T)] - prefix[np.clip(lo, 0, T)], 0)
        fits = size <= mem
        can_copy = fits & (~has_demand | ((lo <= hi) & (window_supply >= demand)))

        groups = _alias_groups(p)
        placeable, can_nocopy, can_pin = _placeable(tensor, groups, fits, can_copy, pin_ok(p, d))
        can_copy &= placeable

        self.t, self.ls, self.le, self.size, self.tensor = t, ls, le, size, tensor
        self.lo, self.hi, self.supply, self.demand = lo, hi, supply, demand
        self.groups, self.placeable = groups, placeable
        self.can_copy, self.can_nocopy, self.can_pin, self.has_demand = can_copy, can_nocopy, can_pin, has_demand
        self._add_buffers()
        self._add_pins(tensor)
        self._add_copies()
        self._add_nocopy_predecessors()
        self._add_memory()
        self._add_objective()

    def _add_buffers(self) -> None:
        """Per buffer: its action literals, placed literal, offset (one per alias group) and
        allocation interval."""
        m, n, mem = self.m, self.n, int(self.p.memory_size)
        t, ls, le, size = self.t, self.ls, self.le, self.size
        groups, placeable = self.groups, self.placeable
        can_copy, can_nocopy, can_pin = self.can_copy, self.can_nocopy, self.can_pin
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

        self.group_of, self.group_placed, self.group_offset = group_of, group_placed, group_offset

    def _add_copies(self) -> None:
        """Copies: intervals on the one copy engine, flows within each step's supply."""
        p, m, T = self.p, self.m, self.T
        B, lo, hi, supply, demand = self.B, self.lo, self.hi, self.supply, self.demand
        can_copy, has_demand = self.can_copy, self.has_demand
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


    def _add_nocopy_predecessors(self) -> None:
        """A NoCopy picks an earlier allocation of its tensor: one covering its target (without
        an allocation of its own) or one ending the step before its own starts."""
        m, n, t = self.m, self.n, self.t
        B, tensor, placeable, rules = self.B, self.tensor, self.placeable, self.rules
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


    def _add_memory(self) -> None:
        """NoOverlap2D of allocations x bytes (alias groups as the pieces of their union), and
        a redundant Cumulative."""
        m, n, T, mem, t, size = self.m, self.n, self.T, int(self.p.memory_size), self.t, self.size
        B, groups, placeable = self.B, self.groups, self.placeable
        group_of, group_placed, group_offset = self.group_of, self.group_placed, self.group_offset
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
            for start, length, end, present in union_pieces(m, self.B, members, t, T):
                xs.append(m.new_optional_interval_var(start, length, end, present, f"gx{g}"))
                ys.append(m.new_optional_fixed_size_interval_var(
                    group_offset[g], int(size[members[0]]), present, f"gy{g}"))
                heights.append(int(size[members[0]]))
        if xs:
            m.add_no_overlap_2d(xs, ys)
            m.add_cumulative(xs, heights, mem)
        self.num_boxes = len(xs)


    def _add_objective(self) -> None:
        """The validator's return, scaled to integers and rounded up (module docstring)."""
        p, m, n = self.p, self.m, self.n
        placeable = self.placeable
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
