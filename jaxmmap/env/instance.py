"""Problems as fixed-shape JAX arrays: the `Instance` the JAX game plays.

`make_instance` discretizes a `Problem` (see `jaxmmap.core.rules`) and pads it to a chosen shape so
that instances of different sizes can share one compiled `step` and be stacked for `vmap`.
`bucket` rounds sizes up to a few fixed shapes, so that a test suite or a benchmark compiles once
per bucket rather than once per instance.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxmmap.core.problem import Problem
from jaxmmap.core.rules import Rules, discretize


@struct.dataclass
class Instance:
    """A padded problem in game units. N buffers, T steps, K latency tables (all padded; K >= 1).

    Attributes:
      width: int32[N] columns each buffer occupies.
      is_output: bool[N].
      target: int32[N] target step.
      tensor: int32[N] dense tensor id (< N).
      group: int32[N] dense alias-group id (< N); unaliased buffers have groups of their own.
      live_start, live_end: int32[N] the tensor's live range.
      demand: int32[N] copy demand in ticks.
      copy_from: int32[N] first step a copy of the buffer's tensor may use.
      benefit: float32[N] static benefit.
      table: int32[N] latency table of the buffer, -1 if none.
      table_bit: int32[N] the buffer's bit in its table.
      valid: bool[N] False for padding.
      pinnable: bool[N] NoCopy of the buffer may pin its tensor (see `rules.Discretized`).
      group_first: int32[N] per dense group id, the index of its first buffer (-1 if none).
      prev_in_group, prev_in_tensor: int32[N] the previous buffer of the same alias group, of
        the same tensor (-1 if none): the game reads a group's and a tensor's state there.
      later_in_group, later_in_tensor: bool[N] a later buffer of the same group, tensor exists.
      supply: int32[T] supply in ticks (0 on padded steps).
      gain: float32[K, 256] latency tables as time saved, L(nothing) - L(mask).
      num_buffers, num_steps: int32[] real sizes.
      columns: int32[] usable grid columns.
      nocopy_lowest: bool[] the "lowest" NoCopy offset rule.
      copy_early: bool[] `Rules(copy_supply="early")` or `"edf"`: an input's copy takes its
        supply from its first step on.
      penalty: float32[] infeasible penalty.
      grid_words: (static) uint32 words per grid row, ceil(Rules.columns / 32).
      deferred: (static) `Rules(placement="deferred")`: moves reserve columns in the load
        profile, and the packer places the game when it ends.
      edf: (static) `Rules(copy_supply="edf")`: a copy may take over its last step's supply from
        the copy that runs on past it (`Board.held`).
    """

    width: jax.Array
    is_output: jax.Array
    target: jax.Array
    tensor: jax.Array
    group: jax.Array
    live_start: jax.Array
    live_end: jax.Array
    demand: jax.Array
    copy_from: jax.Array
    benefit: jax.Array
    table: jax.Array
    table_bit: jax.Array
    valid: jax.Array
    pinnable: jax.Array
    group_first: jax.Array
    prev_in_group: jax.Array
    prev_in_tensor: jax.Array
    later_in_group: jax.Array
    later_in_tensor: jax.Array
    supply: jax.Array
    gain: jax.Array
    num_buffers: jax.Array
    num_steps: jax.Array
    columns: jax.Array
    nocopy_lowest: jax.Array
    copy_early: jax.Array
    penalty: jax.Array
    grid_words: int = struct.field(pytree_node=False, default=8)
    deferred: bool = struct.field(pytree_node=False, default=False)
    edf: bool = struct.field(pytree_node=False, default=False)


def bucket(n: int) -> int:
    """The padded size for a real size n: the smallest `m * 2**k >= n` with m in {4, 5, 6, 7}
    and at least 64 (64, 80, 96, 112, 128, 160, ...): at most 25% padding, and few shapes."""
    size = 64
    while size < n:
        k = size.bit_length() - 3  # size = m * 2**k with m in 4..7
        size += 2 ** k
    return size


def _chains(ids: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For buffers with dense ids (< size): each buffer's previous buffer of the same id (-1),
    whether a later one exists, and each id's first buffer (-1)."""
    prev, later = np.full(len(ids), -1, np.int32), np.zeros(len(ids), bool)
    first, last = np.full(size, -1, np.int32), np.full(size, -1, np.int64)
    for i, k in enumerate(ids):
        if last[k] >= 0:
            prev[i], later[last[k]] = last[k], True
        else:
            first[k] = i
        last[k] = i
    return prev, later, first


def make_instance(problem: Problem, rules: Rules = Rules(), *, num_buffers: int | None = None,
                  num_steps: int | None = None, num_tables: int | None = None) -> Instance:
    """Discretizes and pads `problem`. Sizes default to `bucket` of the real ones."""
    d = discretize(problem, rules)
    n, t, k = problem.num_buffers, problem.num_steps, len(problem.latency_tables)
    N = bucket(n) if num_buffers is None else num_buffers
    T = bucket(t) if num_steps is None else num_steps
    K = max(1, k) if num_tables is None else num_tables
    if N < n or T < t or K < max(1, k):
        raise ValueError(f"padding ({N}, {T}, {K}) is smaller than the problem ({n}, {t}, {k})")

    def pad(x, size, fill, dtype):
        out = np.full((size,) + x.shape[1:], fill, dtype)
        out[: x.shape[0]] = x
        return jnp.asarray(out)

    spare = np.arange(n, N)  # padding gets tensor and group ids of its own
    prev_group, later_group, group_first = _chains(d.group, N)
    prev_tensor, later_tensor, _ = _chains(d.tensor, N)
    i32 = np.int32
    return Instance(
        width=pad(d.width, N, 0, i32),
        is_output=pad(problem.is_output, N, False, bool),
        target=pad(problem.target_time, N, 0, i32),
        tensor=pad(np.concatenate([d.tensor, spare]), N, 0, i32),
        group=pad(np.concatenate([d.group, spare]), N, 0, i32),
        live_start=pad(problem.live_start, N, 0, i32),
        live_end=pad(problem.live_end, N, 0, i32),
        demand=pad(d.demand, N, 0, i32),
        copy_from=pad(d.copy_from, N, 0, i32),
        benefit=pad(problem.benefit, N, 0.0, np.float32),
        table=pad(d.table, N, -1, i32),
        table_bit=pad(d.table_bit, N, 0, i32),
        valid=pad(np.ones(n, bool), N, False, bool),
        pinnable=pad(d.pinnable, N, False, bool),
        group_first=pad(np.concatenate([group_first[:n], spare]), N, -1, i32),
        prev_in_group=pad(prev_group, N, -1, i32),
        prev_in_tensor=pad(prev_tensor, N, -1, i32),
        later_in_group=pad(later_group, N, False, bool),
        later_in_tensor=pad(later_tensor, N, False, bool),
        supply=pad(d.supply, T, 0, i32),
        gain=pad(d.gain, K, 0.0, np.float32),
        num_buffers=jnp.int32(n),
        num_steps=jnp.int32(t),
        columns=jnp.int32(d.usable_columns),
        nocopy_lowest=jnp.bool_(rules.nocopy_offset == "lowest"),
        copy_early=jnp.bool_(rules.copy_supply in ("early", "edf")),
        penalty=jnp.float32(rules.infeasible_penalty),
        grid_words=-(-rules.columns // 32),
        deferred=rules.placement == "deferred",
        edf=rules.copy_supply == "edf",
    )


def stack(instances: list[Instance]) -> Instance:
    """Stacks instances of one padded shape along a new leading axis (for `vmap`)."""
    return jax.tree.map(lambda *xs: jnp.stack(xs), *instances)
