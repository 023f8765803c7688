"""The environment: the game as pure JAX functions over a fixed-shape state.

instance     Instance: a Problem as padded JAX arrays, size buckets, stacking
grid         the game's memory grid (block summaries, two planes for Drop-backup)
types        State and its parts (Board, Records, Snapshot, Checkpoints, Candidates): the game's pytrees
moves        what one move does: the candidate placements of the current buffer, and applying one
backup       the Drop-backup's restore: back to just before the conflict, by replay; checkpoints
game         init, step, legal_action_mask: the rules, jit- and vmap-able
reference    ReferenceGame: the executable specification in plain NumPy
generator    Generator(GeneratorConfig(...))(seed or key), generate(): random programs
observation  the one featurizer: decision features and the agent's Observation
rollout      policies, rollout, rollouts (a batch in one loop), to_solution, play
environment  Environment: a Jumanji-style wrapper (reset, step -> TimeStep)

Imports only `jaxmmap.core`.
"""

from jaxmmap.env.environment import FIRST, LAST, MID, Environment, TimeStep
from jaxmmap.env.observation import Observation

__all__ = ["FIRST", "LAST", "MID", "Environment", "Observation", "TimeStep"]
