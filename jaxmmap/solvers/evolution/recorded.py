"""EGRL's games: one game's rollout that records some of its transitions for the learner's
replay, resumable so that a generation is played in slices on the clock (`egrl`)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct

from jaxmmap.env import game, observation
from jaxmmap.env.instance import Instance
from jaxmmap.solvers.evolution import policy

NEURAL_ARGMAX, NEURAL_SAMPLE, BOLTZMANN = 0, 1, 2  # how a game picks its actions


def recorded_rollout(instance: Instance, ctx: observation.Context, kind, params, logits, log_temp,
                      positions: jax.Array, carry, moves):
    """Plays one game (Drop-backup on) on from `carry` = (state, key, record) for at most `moves`
    more moves, and records the transitions of the moves numbered `positions` (int32[R]): phi,
    next_phi float32[R, F], action int32[R], reward float32[R] (divided by the reward scale),
    done float32[R], recorded bool[R] (False while the game has not reached that move). Returns
    the carry to go on with.

    Only R moves are recorded, by selects on a small carry: recording every move into a
    [moves, F] array made the rollout of a 1189-buffer game three times slower on the CPU."""
    n = instance.width.shape[0]
    limit = game.move_limit(n)
    temp = jnp.exp(log_temp)
    until = carry[0].moves + moves

    def cond(carry):
        return ~carry[0].done & (carry[0].moves < limit) & (carry[0].moves < until)

    def body(carry):
        state, key, (phis, nexts, actions, rewards, dones, recorded) = carry
        key, sub = jax.random.split(key)
        phi = observation.features(state, ctx)
        legal = policy.phi_legal(phi)
        i = jnp.minimum(state.board.cursor, n - 1)
        z = jnp.where(kind == BOLTZMANN, logits[i] / temp, policy.scores(params, phi))
        z = jnp.where(legal, z, policy.MASKED)
        action = jnp.where(kind == NEURAL_ARGMAX, jnp.argmax(z),
                           jax.random.categorical(sub, z)).astype(jnp.int32)
        nxt = game.step(state, action)
        hit = positions == state.moves
        after = positions + 1 == state.moves  # this move's phi is the previous one's next phi
        record = (jnp.where(hit[:, None], phi, phis), jnp.where(after[:, None], phi, nexts),
                  jnp.where(hit, action, actions), jnp.where(hit, nxt.reward / ctx.scale, rewards),
                  jnp.where(hit, nxt.done.astype(jnp.float32), dones), recorded | hit)
        return nxt, key, record

    return jax.lax.while_loop(cond, body, carry)


def empty_record(record: int) -> tuple:
    """`recorded_rollout`'s record before any move, for `record` (R) moves: phi, next_phi
    float32[R, F], action int32[R], reward, done float32[R], recorded bool[R]."""
    f = observation.NUM_FEATURES
    return (jnp.zeros((record, f), jnp.float32), jnp.zeros((record, f), jnp.float32), jnp.zeros(record, jnp.int32),
            jnp.zeros(record, jnp.float32), jnp.zeros(record, jnp.float32), jnp.zeros(record, bool))


@struct.dataclass
class Games:
    """One generation's games while they are played (G games, N buffers, D policy parameters,
    R recorded moves a game, F features).

    Attributes:
      kinds: int32[G] NEURAL_ARGMAX, BOLTZMANN or NEURAL_SAMPLE.
      flat: float32[G, D] the neural games' policy parameters.
      logits: float32[G, N, 3]; log_temp: float32[G] the Boltzmann games' priors.
      positions: int32[G, R] the moves each game records.
      states: `game.State` with a leading G axis, without its instance (shared, passed apart).
      keys: key[G].
      record: the recorded transitions (`recorded_rollout`), each with a leading G axis.
    """

    kinds: jax.Array
    flat: jax.Array
    logits: jax.Array
    log_temp: jax.Array
    positions: jax.Array
    states: game.State
    keys: jax.Array
    record: tuple
