"""What the CP-SAT model and the LP bound share: all-Drop, alias groups, pins, placeability, and the
time pieces of an alias group's union."""

from __future__ import annotations

import numpy as np

from jaxmmap.core.problem import DROP, Problem, Solution
from jaxmmap.core.rules import Discretized
from jaxmmap.core.validator import recomputed_return


def all_drop(problem: Problem, solver: str = "cpsat") -> Solution:
    """Every buffer dropped: always valid; its return is the validator's (0 plus the latency
    tables' ``latency[0] - latency[0] = 0``)."""
    n = problem.num_buffers
    none = np.full(n, -1, np.int64)
    action = np.full(n, DROP, np.int64)
    ret = recomputed_return(problem, action)
    return Solution(problem=problem.name, solver=solver, ret=ret, action=action, offset=none.copy(),
                    alloc_start=none.copy(), alloc_end=none.copy(), copy_start=none.copy(),
                    copy_end=none.copy(), metadata={"num_buffers": n})


def _alias_groups(problem: Problem) -> list[np.ndarray]:
    """The members (buffer indices, ascending) of every alias group with alias_id >= 0."""
    ids = problem.alias_id
    return [np.flatnonzero(ids == g) for g in np.unique(ids[ids >= 0])]


def pin_ok(problem: Problem, d: Discretized) -> np.ndarray:
    """bool[N]: the buffers whose NoCopy may pin their tensor (docs/game.md, "NoCopy of an
    output"): the game's `pinnable` ones (outputs, not live-out, when the rules allow pins) that
    fit in memory."""
    return d.pinnable & (problem.size <= problem.memory_size)


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


def union_pieces(m, buffers: list, members: np.ndarray, t: np.ndarray, T: int) -> list[tuple]:
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
    counts as start ``T``, end ``-1``. `m` is the CP-SAT model, `buffers` its `_Buffer`s."""
    targets = np.unique(t[members])
    starts, ends = {}, {}
    for i in members.tolist():
        b = buffers[i]
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
