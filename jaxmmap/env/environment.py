"""A Jumanji-style environment around the pure game functions (no dependency on jumanji).

Its observation is the one featurizer's (`jaxmmap.env.observation.Observation`)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct

from jaxmmap.core.problem import Problem
from jaxmmap.core.rules import Rules
from jaxmmap.env import game
from jaxmmap.env.instance import Instance, make_instance
from jaxmmap.env.observation import Observation, observe

FIRST, MID, LAST = 0, 1, 2


@struct.dataclass
class TimeStep:
    """step_type: int32[] FIRST, MID or LAST; reward, discount: float32[]; observation."""

    step_type: jax.Array
    reward: jax.Array
    discount: jax.Array
    observation: Observation


class Environment:
    """The MMapGame on one problem, as an RL environment.

    - Observation: `observation.Observation` (the paper's Section 4.3.1 view: buffer rows, a
      128 x 128 window of the memory grid, column profile, supply window, per-action features
      and the legal mask `legal`); the full `game.State` is the environment state.
    - Action: int32 in {0: Copy, 1: NoCopy, 2: Drop}; an illegal action loses the game.
    - Reward: the buffer's benefit (or latency-table delta) for Copy/NoCopy, 0 for Drop; a lost
      game gives minus the return so far (minus the penalty); a Drop-backup restore gives minus
      the return since the backup.
    - Termination: every buffer decided, or the game lost. Discount 0 on the last step.

    `reset` and `step` are pure and can be `jit`-ed and `vmap`-ed.
    """

    def __init__(self, problem: Problem | Instance, rules: Rules = Rules(), *, backup: bool = True):
        self.instance = problem if isinstance(problem, Instance) else make_instance(problem, rules)
        self.backup = backup

    def reset(self, key: jax.Array) -> tuple[game.State, TimeStep]:
        del key  # the game is deterministic; the key is kept for the usual signature
        state = game.init(self.instance, backup=self.backup)
        return state, self._timestep(state, jnp.int32(FIRST))

    def step(self, state: game.State, action: jax.Array) -> tuple[game.State, TimeStep]:
        state = game.step(state, action)
        return state, self._timestep(state, jnp.where(state.done, LAST, MID).astype(jnp.int32))

    @staticmethod
    def observe(state: game.State) -> Observation:
        return observe(state)

    def _timestep(self, state: game.State, step_type) -> TimeStep:
        return TimeStep(step_type=step_type, reward=state.reward,
                        discount=jnp.where(state.done, 0.0, 1.0).astype(jnp.float32),
                        observation=self.observe(state))

    @property
    def num_actions(self) -> int:
        return 3
