"""EGRL's genetic operators (`egrl`): tournament selection, single-point crossover and Gaussian
mutation of the neural policies' flat parameters and of the Boltzmann chromosomes' prior logits,
with elitism; and the encoding of a game's actions as prior logits. Pure functions of a key."""

from __future__ import annotations

from typing import TYPE_CHECKING

import jax
import jax.numpy as jnp

if TYPE_CHECKING:
    from jaxmmap.solvers.evolution.egrl import Config


def tournament(key, fitness, count: int, size: int) -> jax.Array:
    """int32[count]: winners of `count` tournaments of `size` entrants drawn with replacement."""
    entrants = jax.random.randint(key, (count, size), 0, fitness.shape[0])
    return jnp.take_along_axis(entrants, jnp.argmax(fitness[entrants], axis=1)[:, None], 1)[:, 0]


def breed_neural(cfg: Config, key, flat, fitness):
    """The next neural slots: elites first (unchanged), then tournament winners, crossed with
    a random elite at a single point of the flat parameters (prob crossover_prob) and mutated
    (prob mutation_prob)."""
    p, d = flat.shape
    elites = max(1, int(round(cfg.elite_frac * p)))
    order = jnp.argsort(-fitness)
    k_sel, k_el, k_cut, k_cx, k_mut, k_mask, k_noise = jax.random.split(key, 7)
    parents = flat[tournament(k_sel, fitness, p - elites, cfg.tournament)]
    partners = flat[order[jax.random.randint(k_el, (p - elites,), 0, elites)]]
    cut = jax.random.randint(k_cut, (p - elites, 1), 0, d)
    cross = jax.random.bernoulli(k_cx, cfg.crossover_prob, (p - elites, 1))
    children = jnp.where(cross & (jnp.arange(d)[None, :] < cut), partners, parents)
    mutate = jax.random.bernoulli(k_mut, cfg.mutation_prob, (p - elites, 1))
    mask = jax.random.bernoulli(k_mask, cfg.mutation_frac, children.shape) & mutate
    children = children + mask * cfg.neural_sigma * jax.random.normal(k_noise, children.shape)
    return jnp.concatenate([flat[order[:elites]], children])


def breed_boltzmann(cfg: Config, key, logits, log_temp, fitness, encoded, neural_fitness,
                     num_buffers):
    """The next Boltzmann slots: elites, then tournament winners crossed at a single buffer
    with an elite chromosome or (prob mix_prob) with the encoded actions of a neural elite,
    then mutated (logits of a random share of buffers, and the log temperature)."""
    p, n, _ = logits.shape
    elites = max(1, int(round(cfg.elite_frac * p)))
    n_elites = max(1, int(round(cfg.elite_frac * encoded.shape[0])))
    order = jnp.argsort(-fitness)
    n_order = jnp.argsort(-neural_fitness)
    ks = jax.random.split(key, 10)
    c = p - elites
    pick = tournament(ks[0], fitness, c, cfg.tournament)
    parents, temps = logits[pick], log_temp[pick]
    partners = logits[order[jax.random.randint(ks[1], (c,), 0, elites)]]
    mixed = encoded[n_order[jax.random.randint(ks[2], (c,), 0, n_elites)]]
    use_mixed = jax.random.bernoulli(ks[3], cfg.mix_prob, (c, 1, 1))
    partners = jnp.where(use_mixed, mixed, partners)
    cut = jax.random.randint(ks[4], (c, 1, 1), 0, jnp.maximum(num_buffers, 1))
    cross = jax.random.bernoulli(ks[5], cfg.crossover_prob, (c, 1, 1))
    children = jnp.where(cross & (jnp.arange(n)[None, :, None] < cut), partners, parents)
    mutate = jax.random.bernoulli(ks[6], cfg.mutation_prob, (c, 1, 1))
    rows = jax.random.bernoulli(ks[7], cfg.mutation_frac, (c, n, 1)) & mutate
    children = children + rows * cfg.boltzmann_sigma * jax.random.normal(ks[8], children.shape)
    temps = temps + mutate[:, 0, 0] * 0.2 * jax.random.normal(ks[9], temps.shape)
    return (jnp.concatenate([logits[order[:elites]], children]),
            jnp.concatenate([log_temp[order[:elites]], temps]))


def encode(cfg: Config, actions: jax.Array) -> jax.Array:
    """float32[..., N, 3]: one-hot prior logits of final board actions int32[..., N]."""
    return cfg.encode_logit * jax.nn.one_hot(jnp.clip(actions, 0, 2), 3)
