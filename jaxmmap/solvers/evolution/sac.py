"""EGRL's learner: discrete soft actor-critic (SAC) on the decision features, with the ES/EGRL
scorer (`policy.py`) as the actor and twin MLP critics, and its replay (a ring buffer of
transitions)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import optax
from flax import struct

from jaxmmap.solvers.evolution import policy

__all__ = ["SacLearner", "Transitions", "add_transitions", "mlp", "mlp_init", "step"]


@struct.dataclass
class SacLearner:
    """The SAC learner: actor (a policy.py network), twin critics and their targets, Adam states.

    Attributes:
      actor: policy.Params. critics, targets: tuple of two critic MLP params (dicts).
      actor_opt, critic_opt: optax states. updates: int32[] critic updates so far.
    """

    actor: Any
    critics: Any
    targets: Any
    actor_opt: Any
    critic_opt: Any
    updates: jax.Array


@struct.dataclass
class Transitions:
    """A ring buffer of transitions (C = capacity, F = observation.NUM_FEATURES).

    Attributes:
      phi, next_phi: float32[C, F] features before and after the move.
      action: int32[C]; reward: float32[C] (divided by the reward scale); done: float32[C].
      size, ptr: int32[] filled entries, next write position.
    """

    phi: jax.Array
    next_phi: jax.Array
    action: jax.Array
    reward: jax.Array
    done: jax.Array
    size: jax.Array
    ptr: jax.Array


def add_transitions(replay: Transitions, recorded: jax.Array, data: tuple, capacity: int) -> Transitions:
    """The ring buffer with the recorded transitions added: `data` = (phi, next_phi, action,
    reward, done), each with a leading [games, record] shape, `recorded` bool[games, record]."""
    phis, nexts, actions, rewards, dones = data
    ok = recorded.reshape(-1)
    added = jnp.sum(ok)
    slots = (replay.ptr + jnp.cumsum(ok) - 1) % capacity
    slots = jnp.where(ok, slots, capacity)  # out of range: dropped
    put = lambda a, v: a.at[slots].set(v.reshape((-1,) + a.shape[1:]), mode="drop")  # noqa: E731
    return Transitions(phi=put(replay.phi, phis), next_phi=put(replay.next_phi, nexts),
                       action=put(replay.action, actions), reward=put(replay.reward, rewards),
                       done=put(replay.done, dones), size=jnp.minimum(replay.size + added, capacity),
                       ptr=(replay.ptr + added) % capacity)


def mlp_init(key: jax.Array, sizes: tuple[int, ...]) -> dict:
    params = {}
    for k, (a, b) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):
        key, sub = jax.random.split(key)
        params[f"w{k}"] = jax.random.normal(sub, (a, b), jnp.float32) * jnp.sqrt(2.0 / a)
        params[f"b{k}"] = jnp.zeros(b, jnp.float32)
    last = len(sizes) - 2
    params[f"w{last}"] = params[f"w{last}"] * 0.1
    return params


def mlp(params: dict, x: jax.Array) -> jax.Array:
    layers = len(params) // 2
    for k in range(layers):
        x = x @ params[f"w{k}"] + params[f"b{k}"]
        if k < layers - 1:
            x = jax.nn.relu(x)
    return x


def _masked_softmax(logits, legal):
    z = jnp.where(legal, logits, policy.MASKED)
    logp = jax.nn.log_softmax(z, axis=-1)
    return jnp.where(legal, jnp.exp(logp), 0.0), jnp.where(legal, logp, 0.0)


def step(actor_tx, critic_tx, learner: SacLearner, batch, *, alpha: float, gamma: float, tau: float,
         warmup: int) -> tuple[SacLearner, dict]:
    """One discrete-SAC update of `learner` on `batch` = (phi, next_phi, action, reward, done)
    (float32[B, F] twice, int32[B], float32[B] twice): the twin critics towards the soft
    Bellman target (entropy weight `alpha`, discount `gamma`), the actor after `warmup` critic
    updates, the target critics by Polyak averaging (`tau`)."""
    phi, next_phi, action, reward, done = batch
    legal, next_legal = policy.phi_legal(phi), policy.phi_legal(next_phi)

    # Critic: y = r + gamma (1 - done) sum_a' pi(a'|s') [min_j Q'_j(s', a') - alpha log pi(a'|s')].
    p_next, logp_next = _masked_softmax(policy.scores(learner.actor, next_phi), next_legal)
    q_next = jnp.minimum(mlp(learner.targets[0], next_phi), mlp(learner.targets[1], next_phi))
    v_next = jnp.sum(p_next * (jnp.where(next_legal, q_next, 0.0) - alpha * logp_next), -1)
    y = jax.lax.stop_gradient(reward + gamma * (1.0 - done) * v_next)

    def critic_loss(critics):
        losses = [optax.huber_loss(jnp.take_along_axis(mlp(c, phi), action[:, None], 1)[:, 0], y)
                  for c in critics]
        return jnp.mean(losses[0] + losses[1])

    c_loss, c_grad = jax.value_and_grad(critic_loss)(learner.critics)
    c_upd, critic_opt = critic_tx.update(c_grad, learner.critic_opt, learner.critics)
    critics = optax.apply_updates(learner.critics, c_upd)

    # Actor: minimise sum_a pi(a|s) [alpha log pi(a|s) - min_j Q_j(s, a)] over legal actions.
    q = jax.lax.stop_gradient(jnp.minimum(mlp(critics[0], phi), mlp(critics[1], phi)))

    def actor_loss(actor):
        p, logp = _masked_softmax(policy.scores(actor, phi), legal)
        return jnp.mean(jnp.sum(p * (alpha * logp - jnp.where(legal, q, 0.0)), -1))

    a_loss, a_grad = jax.value_and_grad(actor_loss)(learner.actor)

    def actor_step(_):
        a_upd, opt = actor_tx.update(a_grad, learner.actor_opt, learner.actor)
        return optax.apply_updates(learner.actor, a_upd), opt

    # During the critics' warm-up the actor and its optimizer (Adam's step count) stay as they
    # are, so that its first real steps have a fresh Adam's size.
    actor, actor_opt = jax.lax.cond(learner.updates >= warmup, actor_step,
                                    lambda _: (learner.actor, learner.actor_opt), None)
    targets = jax.tree.map(lambda t, c: (1 - tau) * t + tau * c, learner.targets, critics)
    learner = SacLearner(actor=actor, critics=critics, targets=targets, actor_opt=actor_opt,
                      critic_opt=critic_opt, updates=learner.updates + 1)
    return learner, {"critic_loss": c_loss, "actor_loss": a_loss}
