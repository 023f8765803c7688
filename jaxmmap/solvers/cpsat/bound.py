"""The LP upper bound on the return of every valid solution (`upper_bound`, `relaxation`).

The LP (`relaxation`), certified through its dual so that solver inexactness cannot make it
invalid:

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

from __future__ import annotations

import math
import time

import numpy as np
import scipy.optimize
import scipy.sparse
from ortools.linear_solver.python import model_builder_helper as mbh

from jaxmmap.core.problem import Problem
from jaxmmap.core.rules import Rules, discretize
from jaxmmap.core.unionfind import components
from jaxmmap.solvers.cpsat._shared import _alias_groups, pin_ok

__all__ = ["HIGHS_NONZEROS", "HULL_BITS", "KNAPSACK_CUTS", "PDLP_ITERATIONS", "relaxation", "upper_bound"]

KNAPSACK_CUTS = 3  # the LP bound's dual-feasible-function memory rows (see `relaxation`)
HULL_BITS = 4  # the LP bound takes the exact hull of latency tables of up to this many buffers
HIGHS_NONZEROS = 400_000  # larger LPs get PDLP_ITERATIONS of PDLP instead of an exact HiGHS solve
PDLP_ITERATIONS = 1000  # about 4 s on gpt_large_train; an iteration count keeps the bound reproducible


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
    value and time). The LP is the module docstring's."""
    start = time.perf_counter()
    p = problem
    n, T = p.num_buffers, p.num_steps
    t = p.target_time.astype(np.int64)
    le = p.live_end.astype(np.int64)
    d = discretize(p, rules)  # dense tensor ids and copy windows as the game has them
    tensor, copy_from = d.tensor, d.copy_from
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
    can_pin = pin_ok(p, d)

    xv, yv, zv = _decision_vars(lp, p, can_copy, can_nocopy, can_pin)

    def placed(i: int) -> list[tuple[int, float]]:
        return [(v, 1.0) for v in (xv[i], yv[i], zv[i]) if v >= 0]

    def starts(idx) -> list[tuple[int, float]]:
        """The Copies and pins of buffers `idx`: what a NoCopy chain may start with."""
        return [(int(v), 1.0) for i in idx for v in (xv[i], zv[i]) if v >= 0]

    # Alias groups: all or nothing. Components: tensors linked by alias groups.
    groups = _alias_groups(p)
    for members in groups:
        first = int(members[0])
        for i in members[1:].tolist():
            lp.row("eq", placed(i) + [(v, -c) for v, c in placed(first)], 0.0)
    component = components(int(tensor.max(initial=-1)) + 1, (tensor[m] for m in groups))[tensor]

    sources, jobs = _sources(p, placed, component, xv, zv, need, copy_from, s_latest, e_earliest)

    _chain_rows(lp, tensor, t, yv, zv, starts, sources, component)

    comp_bytes = np.zeros(int(component.max(initial=-1)) + 1, np.int64)
    comp_bytes[component] = p.size
    segments = _segments(lp, sources, comp_bytes)

    _memory_rows(lp, segments, sources, comp_bytes, int(p.memory_size), T)

    _supply_rows(lp, jobs, prefix, slack, T)

    _table_rows(lp, p.latency_tables, placed)
    built = time.perf_counter() - start
    bound, info = lp.solve(pdlp_iterations)
    info.update(build_seconds=built, seconds=time.perf_counter() - start)
    return bound, info


def _chain_rows(lp: _LP, tensor, t, yv, zv, starts, sources: dict, component) -> None:
    """NoCopy chains, per tensor over its distinct target steps: the rows of the `H_r`
    variables (`relaxation`), and their presence between targets, added to `sources`."""
    n = tensor.shape[0]
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


def _segments(lp: _LP, sources: dict, comp_bytes) -> list[tuple[int, int, int, list]]:
    """Segments of presence per component: (component, first step, end (excl.), terms); a
    segment with one source is that source, one with several gets a variable >= each."""
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
    return segments


def _memory_rows(lp: _LP, segments, sources: dict, comp_bytes, memory_size: int, T: int) -> None:
    """Memory at every step (`relaxation`, Memory)."""
    mem = float(memory_size)
    # Memory at every step, as running sums over the steps (a segment costs two coefficients):
    # the components present fit, sum of size / memory_size <= 1, and so does the sum of any
    # dual-feasible function of those fractions; u_k(x) = floor((k+1) x) / k (x itself if
    # (k+1) x is an integer) for k = 1..KNAPSACK_CUTS (Fekete and Schepers) strengthens the
    # knapsack for large tensors (u_1: at most one tensor larger than half the memory).
    def dff(k: int, size: int) -> float:
        q, r = divmod((k + 1) * size, memory_size)
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


def _supply_rows(lp: _LP, jobs, prefix, slack: float, T: int) -> None:
    """Supply: Hall inequalities on dyadic intervals (`relaxation`, Supply)."""
    total = float(prefix[-1])
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


def _table_rows(lp: _LP, tables, placed) -> None:
    """Latency tables: the convex hull of each small table's placed sets; affine majorants of
    a large one (`relaxation`, Latency tables)."""
    for table in tables:
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


def _decision_vars(lp: _LP, p: Problem, can_copy, can_nocopy, can_pin) -> tuple[np.ndarray, ...]:
    """int64[N] three times: the LP columns x (Copy), y (NoCopy) and z (pin) of each buffer (-1:
    none), worth the buffer's benefit (latency tables count apart), with x + y + z <= 1."""
    n = p.num_buffers
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
    return xv, yv, zv


def _sources(p: Problem, placed, component, xv, zv, need, copy_from, s_latest, e_earliest
             ) -> tuple[dict, list]:
    """Presence sources per component, {component: [(first step, last step, terms)]}, and the
    copy jobs of the supply rows, [(terms, first step, last step, least amount received)]."""
    n, t, le, has_demand = p.num_buffers, p.target_time.astype(np.int64), p.live_end.astype(np.int64), p.demand > 0
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
    return sources, jobs
