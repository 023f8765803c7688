"""Disjoint sets: the one union-find of the package (alias groups join tensors into groups in the
importer and the generator, and into units that stand or fall together in the heuristic and the
LP bound)."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

__all__ = ["UnionFind", "components"]


class UnionFind:
    """Sets over 0..n-1 with path halving. `union` makes the smaller root the root of both, so a
    set's root is its smallest member and results do not depend on the order of the unions."""

    def __init__(self, n: int = 0):
        self.parent = list(range(n))

    def add(self) -> int:
        """A new singleton; returns its id."""
        self.parent.append(len(self.parent))
        return len(self.parent) - 1

    def find(self, x: int) -> int:
        parent = self.parent
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)

    def roots(self) -> np.ndarray:
        """int64[n]: the root (smallest member) of every element's set."""
        return np.asarray([self.find(x) for x in range(len(self.parent))], np.int64)


def components(n: int, groups: Iterable[Iterable[int]]) -> np.ndarray:
    """int64[n]: the smallest member of each element's set, once every group's members are joined."""
    sets = UnionFind(n)
    for members in groups:
        members = [int(m) for m in members]
        for m in members[1:]:
            sets.union(members[0], m)
    return sets.roots()
