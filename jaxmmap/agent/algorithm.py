"""The one protocol the training loop drives (`loop.fit`), whatever the mode: an `Algorithm`.

    algorithm = expert.algorithm(instance, config, seed=0)          # mode "expert"
    algorithm = train.algorithm(instance, config, seed=0)           # the MuZero family
    state, metrics = algorithm.chunk(algorithm.state, progress, clock)  # one chunk
    algorithm.best_return(state), algorithm.best_game(state)

Both modes build one from their own `init`, `run_chunk` and `best_game`; `loop.fit` knows
nothing else of them (no dispatch on a state's type).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import jax

from jaxmmap.env import game

__all__ = ["Algorithm"]


@dataclasses.dataclass(frozen=True)
class Algorithm:
    """A training algorithm, ready to run on one instance.

    Attributes:
      state: its first state (a pytree; what the checkpoints hold).
      chunk: (state, progress float32[] in [0, 1], clock) -> (state, metrics): one chunk of
        `per_chunk` iterations; metrics are arrays with a leading axis of that length, or None
        when the clock (`core.clock.Clock`) ran out inside the chunk (nothing of it counts).
      per_chunk: iterations per chunk (expert: generations; MuZero family: learner updates).
      best_return: state -> float, the best finished game's return so far (-inf before one).
      best_game: state -> the best finished game (`game.State` with its instance), or None.
    """

    state: Any
    chunk: Callable[[Any, jax.Array, Any], tuple[Any, dict | None]]
    per_chunk: int
    best_return: Callable[[Any], float]
    best_game: Callable[[Any], game.State | None]
