"""The plan's work items: alias groups whole and unaliased tensors whole, grouped once per
problem, and their order (by estimated benefit per square root of size), made again for every
noisy move; and what the plans of one problem share."""

from __future__ import annotations

import weakref

import numpy as np

from jaxmmap.core.problem import Problem
from jaxmmap.core.rules import Discretized

__all__ = ["SHARED", "ranked_items", "sums_like_numpy", "work_item_groups"]

#: What the plans (and local moves) of one discretized problem share, as it depends on nothing a
#: plan changes (at 6,286 buffers a third of a plan's time): the work items grouped; per overlaps,
#: each input's prefetch starts and whether a tensor's pin pays; the latency tables' rows, worths
#: seen, per-buffer numbers as lists (`worth`, `commit`); the work items in order, with their
#: estimate; `removal_order`'s items. Dropped with `d`.
SHARED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def work_item_groups(problem: Problem, d: Discretized) -> tuple[np.ndarray, list[np.ndarray]]:
    """The work items, alias groups whole and unaliased tensors whole, in key order: (the buffers
    sorted by item, each item's members). One stable sort groups them (buffer order kept in
    each): linear-log, where a scan per key was quadratic (minutes at 3 million buffers). Made
    once per discretized problem (`SHARED`)."""
    shared = SHARED.setdefault(d, {})
    if "groups" not in shared:
        key = np.where(problem.alias_id >= 0, d.group, -1 - d.tensor)
        order = np.argsort(key, kind="stable")
        shared["groups"] = (order, np.split(order, np.flatnonzero(np.diff(key[order])) + 1) if key.size else [])
    order, items = shared["groups"]
    return order, list(items)


def sums_like_numpy(values: np.ndarray, starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """float64[G]: the sums of the runs `values[starts[g]:starts[g] + counts[g]]` (counts > 0),
    each equal to the last bit to NumPy's `sum` of that run alone: one by one in order up to 7
    values (a pass per position, over all runs), and NumPy's own sum for the few longer runs,
    which it adds in pairs (`np.add.reduceat` adds otherwise). Sort keys depend on the last bit
    (the order ties are broken in)."""
    total = np.zeros(len(starts))
    for k in range(min(int(counts.max(initial=0)), 7)):
        some = counts > k
        total[some] += values[starts[some] + k]
    for g in np.flatnonzero(counts >= 8):
        total[g] = values[starts[g]:starts[g] + counts[g]].sum()
    return total


def ranked_items(problem: Problem, d: Discretized, est: np.ndarray) -> list[np.ndarray]:
    """`work_item_groups`, their uses decided one by one, by estimated benefit per square root of
    size, then size, then length, then first buffer (the keys of all items at once: the noisy
    moves sort again for every move)."""
    order, items = work_item_groups(problem, d)
    if not items:
        return items
    first = np.cumsum([0] + [m.size for m in items[:-1]])
    count = np.diff(np.append(first, order.size))
    benefit = sums_like_numpy(est[order].astype(np.float64), first, count)
    size = np.maximum.reduceat(problem.size[order].astype(np.float64), first)
    length = np.maximum.reduceat(problem.live_end[order], first) - np.minimum.reduceat(problem.live_start[order], first) + 1
    ranked = np.lexsort((order[first], -length, -size, -benefit / np.sqrt(np.maximum(size, 1.0))))
    return [items[j] for j in ranked]
