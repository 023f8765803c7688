"""The on-device replay: a ring of the last `rows` moves of every self-play game.

Layout `[rows, games, ...]`: each self-play move of all games writes one row, so the successor of
position (row r, game g) is (r + 1, g) unless the move at r ended g's episode (`done`), and the
K-step unroll and the n-step targets of a sample read the rows after it, with no per-episode
bookkeeping. A row is a `Transition` with a compressed observation: the grid and the profile
(the large parts) as uint8, which is exact for the binary profile and 1/255 for the grid's
occupied fractions, so 20,000 positions (Table 6) take about 0.4 GB.

Sampling picks positions uniformly among those whose `horizon` following rows are written
(`sample`); `targets` turns the rows read by a sample into unrolled targets.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp

from jaxmmap.env.observation import Observation


@chex.dataclass(frozen=True)
class Transition:
    """One move of one game (add leading axes for more).

    Attributes:
      observation: the compressed `Observation` before the move (`compress`).
      action: int32[] the move played.
      reward: float32[] its reward.
      policy: float32[3] the search's action weights (the policy target).
      value: float32[] the search's root value (the bootstrap of n-step targets).
      done: bool[] the move ended the episode (the next row of this game starts a new one).
      valid: bool[] a real move (False while a staggered game waits to start).
    """

    observation: Observation
    action: jax.Array
    reward: jax.Array
    policy: jax.Array
    value: jax.Array
    done: jax.Array
    valid: jax.Array


@chex.dataclass(frozen=True)
class Replay:
    """The ring. R rows, G games.

    Attributes:
      data: `Transition` with leading axes [R, G].
      head: int32[] the physical row the next move writes.
      count: int32[] rows written so far, at most R.
    """

    data: Transition
    head: jax.Array
    count: jax.Array


def compress(observation: Observation) -> Observation:
    """The grid and profile as uint8 (any leading axes)."""
    grid = jnp.round(jnp.clip(observation.grid, 0.0, 1.0) * 255).astype(jnp.uint8)
    return observation.replace(grid=grid, profile=observation.profile.astype(jnp.uint8))


def decompress(observation: Observation) -> Observation:
    """The float32 observation back from `compress`."""
    return observation.replace(grid=observation.grid.astype(jnp.float32) / 255,
                               profile=observation.profile.astype(jnp.float32))


def init(example: Transition, rows: int) -> Replay:
    """An empty ring of `rows` rows shaped like `example` (one row: leading axis [G])."""
    data = jax.tree.map(lambda x: jnp.zeros((rows,) + x.shape, x.dtype), example)
    return Replay(data=data, head=jnp.int32(0), count=jnp.int32(0))


def add(replay: Replay, row: Transition) -> Replay:
    """Writes one move of every game (leading axis [G])."""
    rows = replay.data.action.shape[0]
    data = jax.tree.map(lambda buf, x: buf.at[replay.head].set(x), replay.data, row)
    return Replay(data=data, head=(replay.head + 1) % rows,
                  count=jnp.minimum(replay.count + 1, rows))


def sample(replay: Replay, key: jax.Array, batch: int, horizon: int) -> tuple[jax.Array, jax.Array]:
    """`batch` positions, uniform among the valid ones whose next `horizon` rows are written:
    (logical row int32[batch] (0 = the oldest row), game int32[batch]). The replay must hold more
    than `horizon` rows."""
    rows, games = replay.data.action.shape[:2]
    logical = jnp.arange(rows)
    usable = (logical < replay.count - horizon)[:, None] & _at(replay, logical).valid
    flat = jax.random.choice(key, rows * games, (batch,), p=usable.reshape(-1) / jnp.maximum(usable.sum(), 1))
    return (flat // games).astype(jnp.int32), (flat % games).astype(jnp.int32)


def window(replay: Replay, row: jax.Array, game: jax.Array, length: int,
           observations: bool = True) -> Transition:
    """The `length` rows from logical `row` on, of `game` (no batch axis; vmap it); without
    `observations` the (large) observations are left out (None)."""
    physical = _physical(replay, row + jnp.arange(length))
    data = replay.data if observations else replay.data.replace(observation=None)
    return jax.tree.map(lambda x: x[physical, game], data)


def _physical(replay: Replay, logical: jax.Array) -> jax.Array:
    """The ring rows of logical rows (0 = the oldest written)."""
    return (replay.head - replay.count + logical) % replay.data.action.shape[0]


def _at(replay: Replay, logical: jax.Array) -> Transition:
    return jax.tree.map(lambda x: x[_physical(replay, logical)], replay.data.replace(observation=None))


def n_step_values(rows: Transition, bootstrap: jax.Array, *, unroll: int, td_steps: int,
                  discount: float) -> tuple[jax.Array, jax.Array]:
    """Value targets of the K + 1 unrolled positions of one sample.

    rows: `Transition` fields with a leading axis of K + n + 1 moves (the sample and what
      follows); bootstrap: float32[K + n + 1] the value to bootstrap from at each of them.
    Returns (value targets float32[K + 1], alive bool[K + 1]: the position is in the sample's
    episode). z_k = sum_{i<n} discount^i r_{k+i} + discount^n v_{k+n}, cut at the episode's end
    (a finished episode has no bootstrap); 0 past the end.
    """
    done = rows.done.astype(jnp.int32)
    # ended[p]: an episode boundary lies before row p (counting from the sample's row).
    ended = jnp.concatenate([jnp.zeros(1, jnp.int32), jnp.cumsum(done)[:-1]])

    def target(k):
        i = jnp.arange(td_steps)
        same = ended[k + i] == ended[k]
        rewards = jnp.sum(jnp.where(same, discount ** i * rows.reward[k + i], 0.0))
        tail = ended[k + td_steps] == ended[k]
        return rewards + jnp.where(tail, discount ** td_steps * bootstrap[k + td_steps], 0.0)

    alive = ended[: unroll + 1] == 0
    values = jax.vmap(target)(jnp.arange(unroll + 1))
    return jnp.where(alive, values, 0.0), alive
