"""The learner: batches of unrolled targets from the replay (with Reanalyse), the MuZero losses and
one optimizer step.

Targets of a sample at replay position t (K = unroll steps, n = TD steps), for k = 0..K:
* policy: the search's action weights at t + k (fresh ones from a new search with the current
  parameters for the reanalysed part of the batch);
* value: the n-step return from t + k, bootstrapped with the search's root value stored at
  acting time (with the target network's value for reanalysed samples), cut at the episode's end
  (`replay.n_step_values`);
* reward (k >= 1): the reward of the move at t + k - 1.
Samples from the demonstration (`demonstration_fraction`) read the same targets from its replay,
where the policy is the move played and the stored value the exact return-to-go.
Past the episode's end the policy loss is off, and value and reward targets are 0 (MuZero's
absorbing state); the dynamics are then fed random actions.

Losses: cross-entropies against the search policy and against the two-hot value and reward
targets (`support.scalar_to_two_hot`), the recurrent steps' losses scaled by 1/K and the
gradient into each dynamics step halved (MuZero). `no_search` has no search policy to imitate;
its policy follows the policy gradient of the advantage (n-step return minus the predicted
value, normalized over the batch) plus an entropy bonus: an actor-critic on replayed moves.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import optax

from jaxmmap.agent import replay as replay_lib
from jaxmmap.agent.config import AgentConfig
from jaxmmap.agent.networks import Networks
from jaxmmap.agent.search import learned_search
from jaxmmap.agent.support import Support, logits_to_scalar, scalar_to_two_hot
from jaxmmap.env.observation import Observation


@chex.dataclass(frozen=True)
class Learner:
    """Attributes: params, target_params (same tree), opt_state (optax), steps int32[]."""

    params: chex.ArrayTree
    target_params: chex.ArrayTree
    opt_state: chex.ArrayTree
    steps: jax.Array


@chex.dataclass(frozen=True)
class Batch:
    """Unrolled targets. B samples, K unroll steps.

    Attributes:
      observation: `Observation` (float32) at each sample's position [B].
      action: int32[B, K + 1] the moves played from the position on (random past the end).
      policy: float32[B, K + 1, 3] policy targets. alive: float32[B, K + 1] 1 while the
        position is in the sample's episode (the policy loss's weight).
      value: float32[B, K + 1] value targets. reward: float32[B, K] reward targets of steps 1..K.
    """

    observation: Observation
    action: jax.Array
    policy: jax.Array
    alive: jax.Array
    value: jax.Array
    reward: jax.Array


def optimizer(config: AgentConfig) -> optax.GradientTransformation:
    """Adam with decoupled weight decay (Table 6), optionally after gradient clipping."""
    adam = optax.adamw(config.learning_rate, weight_decay=config.weight_decay)
    if config.max_grad_norm is None:
        return adam
    return optax.chain(optax.clip_by_global_norm(config.max_grad_norm), adam)


def init(params, config: AgentConfig) -> Learner:
    return Learner(params=params, target_params=params, opt_state=optimizer(config).init(params),
                   steps=jnp.int32(0))


def make_batch(learner: Learner, replay: replay_lib.Replay, key: jax.Array, *,
               config: AgentConfig, networks: Networks, support: Support,
               demonstration: replay_lib.Replay | None = None) -> Batch:
    """Samples `batch_size` positions and builds their targets: the first `reanalysed` of them
    get fresh search policies and target-network bootstraps (Reanalyse); the last
    `demonstrated` come from `demonstration` (its moves and exact returns are the targets)."""
    d = config.demonstrated
    if not d:
        return _targets(learner, replay, key, config.batch_size, config.reanalysed, config=config,
                        networks=networks, support=support)
    k_replay, k_demo = jax.random.split(key)
    batch = _targets(learner, replay, k_replay, config.batch_size - d, config.reanalysed,
                     config=config, networks=networks, support=support)
    demo = _targets(learner, demonstration, k_demo, d, 0, config=config, networks=networks,
                    support=support)
    return jax.tree.map(lambda a, b: jnp.concatenate([a, b]), batch, demo)


def _targets(learner: Learner, replay: replay_lib.Replay, key: jax.Array, count: int,
             reanalysed: int, *, config: AgentConfig, networks: Networks, support: Support
             ) -> Batch:
    """`count` samples of `replay`, the first `reanalysed` of them reanalysed."""
    k_sample, k_search, k_random = jax.random.split(key, 3)
    unroll, n = config.unroll, config.td_steps
    row, game_ = replay_lib.sample(replay, k_sample, count, config.horizon)
    rows = jax.vmap(replay_lib.window, (None, 0, 0, None, None))(
        replay, row, game_, config.horizon + 1, False)  # [B, K + n + 1], no observations
    observation = replay_lib.decompress(
        jax.vmap(replay_lib.window, (None, 0, 0, None))(replay, row, game_, 1).observation)
    observation = jax.tree.map(lambda x: x[:, 0], observation)
    policy = rows.policy[:, : unroll + 1]
    bootstrap = rows.value

    r = reanalysed
    if r:
        def observations_at(offset):  # [r, K + 1] observations, from `offset` moves on
            obs = jax.vmap(replay_lib.window, (None, 0, 0, None))(
                replay, row[:r] + offset, game_[:r], unroll + 1).observation
            return replay_lib.decompress(jax.tree.map(lambda x: x.reshape((-1,) + x.shape[2:]), obs))

        out = learned_search(learner.params, k_search, observations_at(0), networks, support,
                             num_simulations=config.num_simulations, gumbel=config.gumbel,
                             discount=config.discount, dirichlet_fraction=0.0,
                             value_scale=support.max_scalar_array)
        fresh = jax.lax.stop_gradient(out.action_weights).reshape(r, unroll + 1, -1)
        policy = policy.at[:r].set(fresh)
        _, _, value = networks.initial_inference(learner.target_params, observations_at(n))
        value = logits_to_scalar(value, support).reshape(r, unroll + 1)
        bootstrap = bootstrap.at[:r, n:].set(value)

    values, alive = jax.vmap(lambda rw, b: replay_lib.n_step_values(
        rw, b, unroll=unroll, td_steps=n, discount=config.discount))(rows, bootstrap)
    random_action = jax.random.randint(k_random, (count, unroll + 1), 0, 3)
    action = jnp.where(alive, rows.action[:, : unroll + 1], random_action)
    reward = jnp.where(alive[:, :unroll], rows.reward[:, :unroll], 0.0)
    return Batch(observation=observation, action=action.astype(jnp.int32),
                 policy=jax.lax.stop_gradient(policy), alive=alive.astype(jnp.float32),
                 value=jax.lax.stop_gradient(values), reward=reward)


def _cross_entropy(logits: jax.Array, target: jax.Array) -> jax.Array:
    return -jnp.sum(target * jax.nn.log_softmax(logits), axis=-1)


def loss(params, batch: Batch, *, config: AgentConfig, networks: Networks, support: Support
         ) -> tuple[jax.Array, dict[str, jax.Array]]:
    """The total loss and its parts (means over the batch)."""
    embedding, policy, value = networks.initial_inference(params, batch.observation)
    value_ce = _cross_entropy(value, scalar_to_two_hot(batch.value[:, 0], support))
    if config.mode == "no_search":
        legal = batch.observation.legal
        logits = jnp.where(legal, policy, -1e9)
        log_p = jax.nn.log_softmax(logits)
        advantage = batch.value[:, 0] - logits_to_scalar(value, support)
        advantage = jax.lax.stop_gradient(advantage / (jnp.std(advantage) + 1e-6))
        taken = jnp.take_along_axis(log_p, batch.action[:, :1], axis=1)[:, 0]
        entropy = -jnp.sum(jnp.exp(log_p) * log_p, axis=-1)
        policy_loss = -advantage * taken - config.entropy_weight * entropy
    else:  # masked like the search's root, so no loss is spent on illegal moves
        masked = jnp.where(batch.observation.legal, policy, -1e9)
        policy_loss = _cross_entropy(masked, batch.policy[:, 0]) * batch.alive[:, 0]
    reward_loss = jnp.zeros_like(value_ce)
    scale = 1.0 / max(config.unroll, 1)
    for k in range(1, config.unroll + 1):
        embedding = _scale_gradient(embedding, 0.5)
        embedding, reward, policy, value = networks.recurrent_inference(
            params, embedding, batch.action[:, k - 1])
        reward_loss += scale * _cross_entropy(reward, scalar_to_two_hot(batch.reward[:, k - 1], support))
        value_ce += scale * _cross_entropy(value, scalar_to_two_hot(batch.value[:, k], support))
        policy_loss += scale * _cross_entropy(policy, batch.policy[:, k]) * batch.alive[:, k]
    parts = {"policy_loss": jnp.mean(policy_loss), "value_loss": jnp.mean(value_ce),
             "reward_loss": jnp.mean(reward_loss)}
    total = parts["policy_loss"] + config.value_loss_weight * parts["value_loss"] + parts["reward_loss"]
    return total, {"loss": total, **parts}


def update(learner: Learner, replay: replay_lib.Replay, key: jax.Array, *, config: AgentConfig,
           networks: Networks, support: Support, demonstration: replay_lib.Replay | None = None
           ) -> tuple[Learner, dict[str, jax.Array]]:
    """One optimizer step on a fresh batch; the target network follows every
    `target_update_interval` steps."""
    batch = make_batch(learner, replay, key, config=config, networks=networks, support=support,
                       demonstration=demonstration)
    grad_fn = jax.value_and_grad(loss, has_aux=True)
    (_, metrics), grads = grad_fn(learner.params, batch, config=config, networks=networks,
                                  support=support)
    updates, opt_state = optimizer(config).update(grads, learner.opt_state, learner.params)
    params = optax.apply_updates(learner.params, updates)
    steps = learner.steps + 1
    sync = steps % config.target_update_interval == 0
    target = jax.tree.map(lambda p, t: jnp.where(sync, p, t), params, learner.target_params)
    metrics["grad_norm"] = jnp.sqrt(sum(jnp.sum(g * g) for g in jax.tree.leaves(grads)))
    metrics["value_target"] = jnp.mean(batch.value[:, 0])
    return Learner(params=params, target_params=target, opt_state=opt_state, steps=steps), metrics


def _scale_gradient(x: jax.Array, scale: float) -> jax.Array:
    return x * scale + jax.lax.stop_gradient(x) * (1 - scale)
