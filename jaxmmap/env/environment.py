"""A Jumanji-style environment around the pure game functions (no dependency on jumanji)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct

from jaxmmap.core.problem import Problem
from jaxmmap.core.rules import Rules
from jaxmmap.env import game
from jaxmmap.env.instance import Instance, make_instance

FIRST, MID, LAST = 0, 1, 2


@struct.dataclass
class Observation:
    """What an agent sees (the learned encoder's richer features come from the State itself).

    Attributes:
      action_mask: bool[3] legal actions (Copy, NoCopy, Drop).
      buffer: int32[] index of the buffer to decide.
      offset, alloc_start, alloc_end: int32[3] each action's placement (-1: none).
      supply: int32[T] remaining copy supply W in ticks.
    """

    action_mask: jax.Array
    buffer: jax.Array
    offset: jax.Array
    alloc_start: jax.Array
    alloc_end: jax.Array
    supply: jax.Array


@struct.dataclass
class TimeStep:
    """step_type: int32[] FIRST, MID or LAST; reward, discount: float32[]; observation."""

    step_type: jax.Array
    reward: jax.Array
    discount: jax.Array
    observation: Observation


class Environment:
    """The MMapGame on one problem, as an RL environment.

    - Observation: `Observation` (legal mask, current buffer, the placement of each action,
      remaining supply); the full `game.State` is the environment state.
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
        c = state.candidates
        return Observation(action_mask=game.legal_action_mask(state), buffer=state.board.cursor,
                           offset=c.offset, alloc_start=c.alloc_start, alloc_end=c.alloc_end,
                           supply=game.remaining_supply(state.board))

    def _timestep(self, state: game.State, step_type) -> TimeStep:
        return TimeStep(step_type=step_type, reward=state.reward,
                        discount=jnp.where(state.done, 0.0, 1.0).astype(jnp.float32),
                        observation=self.observe(state))

    @property
    def num_actions(self) -> int:
        return 3
