"""The generalist's improvement after imitation: a search in its parameters, across programs, on
the true game (OpenAI-ES; `configs/generalist.py`'s `network.generations`, off by default: it
gained nothing on programs it was not searched on, docs/decisions.md, "A search in the network's
parameters")."""

from __future__ import annotations

import functools
import os

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import serialization

from jaxmmap.agent.generalist import GeneralistConfig, _restored, policy, untrained
from jaxmmap.core.files import atomic, digest
from jaxmmap.env import observation as obs_lib
from jaxmmap.env.instance import Instance
from jaxmmap.env.rollout import rollouts, won_returns

__all__ = ["improve", "returns"]


@functools.partial(jax.jit, static_argnames=("config",))
def returns(stacked, instance: Instance, *, config: GeneralistConfig) -> jax.Array:
    """float32[P]: the return of the greedy game of each of P parameter sets (`stacked`: a leading
    axis of P), one batch; -inf for a lost game."""
    ctx = obs_lib.context(instance)
    size = jax.tree.leaves(stacked)[0].shape[0]
    states = rollouts(instance, jax.random.split(jax.random.key(0), size), lambda p: policy(p, ctx, config),
                      backup=True, params=stacked)
    return won_returns(states)



def improve(params, draw, selection: list[Instance], config: GeneralistConfig, *, workdir: str | None = None,
            log=print) -> dict:
    """OpenAI-ES (evosax's `Open_ES`, antithetic pairs, Adam) over the network's parameters
    (`config.search`: the correction's last layer, or all), from `params` (the imitation's), for
    `config.generations` generations in all (across resumes). Generation g plays `draw(g)` (a list
    of instances: fresh programs each generation, so that the search cannot fit a fixed set), and a
    member's fitness is the mean over them of log(its greedy game's return / the greedy policy's):
    the game itself, not agreement with a teacher. One batch per program holds the population, the
    mean and the greedy policy. Every `select_every` generations the mean plays the `selection`
    programs (neither trained on nor held out), and the best mean so far by the same measure is
    kept; the start counts, so the result is never worse there than the imitation. The search state
    is written atomically after every generation (WORKDIR/improve.msgpack); a killed run resumes, an
    unreadable file or other imitation parameters start the search over. Returns the kept parameters
    and their scores (geometric means of the ratio to greedy's game on `selection`)."""
    from evosax.algorithms import Open_ES  # here: pretraining without improvement needs no evosax

    size = config.population + 2  # the members, the mean, the greedy policy
    greedy = untrained(params)
    if config.search == "head":
        part = params["params"]["policy"]
        one = lambda h: {**params, "params": {**params["params"], "policy": h}}  # noqa: E731
    elif config.search == "all":
        part, one = params, (lambda p: p)
    else:
        raise ValueError(f"search={config.search!r}: give 'head' or 'all'")
    strategy = Open_ES(population_size=config.population, solution=part, use_antithetic_sampling=True,
                       optimizer=optax.adam(config.es_learning_rate),
                       std_schedule=optax.constant_schedule(config.sigma))
    hyper = strategy.default_params

    def ratios(stacked, instances):  # float64[programs, size - 1]: log(return / greedy's); a lost
        # game (-inf) counts as a return of 1e-12: about log(1e-12 / greedy's), a heavy penalty
        got = np.stack([np.asarray(returns(stacked, i, config=config)) for i in instances])
        return np.log(np.maximum(got[:, :-1], 1e-12) / np.maximum(got[:, -1:], 1e-12))

    def selected(p):  # the mean log-ratio of one parameter set's games on `selection`
        if not selection:
            return 0.0
        stacked = jax.tree.map(lambda x, y: jnp.concatenate([jnp.broadcast_to(x, (size - 1, *x.shape)), y[None]]),
                               p, greedy)
        return float(np.mean(ratios(stacked, selection)[:, 0]))

    key = jax.random.key(config.seed + 2)
    how = repr((config.search, config.population, config.sigma, config.es_learning_rate, config.seed))
    origin = digest(how, {str(i): np.asarray(x, np.float32) for i, x in enumerate(jax.tree.leaves(params))})
    fresh = {"es": strategy.init(key, part, hyper), "generation": 0, "best": params, "score": 0.0, "start": 0.0,
             "origin": ""}  # (origin: the parameters it started from and the search's settings)
    path = None if workdir is None else os.path.join(workdir, "improve.msgpack")
    state = _restored(path, fresh, "the improvement", log)
    if state["origin"] != origin:
        if state is not fresh:
            log("the imitation's parameters or the search's settings changed: the improvement starts over")
        start = selected(params)
        state = {**fresh, "score": start, "start": start, "origin": origin}
    ask = jax.jit(lambda k, s: strategy.ask(k, s, hyper))
    tell = jax.jit(lambda k, m, f, s: strategy.tell(k, m, f, s, hyper))
    everyone = jax.jit(lambda members, es: jax.vmap(one)(jax.tree.map(
        lambda m, c: jnp.concatenate([m, c[None]]), members, strategy.get_mean(es))))
    while int(state["generation"]) < config.generations:
        g = int(state["generation"])
        k_ask, k_tell = jax.random.split(jax.random.fold_in(key, g))
        members, es = ask(k_ask, state["es"])
        stacked = jax.tree.map(lambda x, y: jnp.concatenate([x, y[None]]), everyone(members, es), greedy)
        fitness = ratios(stacked, draw(g)).mean(0)
        es, _ = tell(k_tell, members, -jnp.asarray(fitness[:config.population], jnp.float32), es)
        state = {**state, "es": es, "generation": g + 1}
        line = (f"generation {g + 1}: the mean's games {np.exp(fitness[-1]):.4f}x greedy's, the best"
                f" member's {np.exp(fitness[:-1].max()):.4f}x")
        if (g + 1) % config.select_every == 0 or g + 1 == config.generations:
            mean = one(strategy.get_mean(es))
            score = selected(mean)
            line += f"; selection {np.exp(score):.4f}x (kept {np.exp(max(score, float(state['score']))):.4f}x)"
            if score > float(state["score"]):
                state = {**state, "best": jax.tree.map(jnp.asarray, mean), "score": score}
        if path is not None:
            with atomic(path, "wb") as f:
                f.write(serialization.to_bytes(state))
        log(line)
    return {"params": state["best"], "selection": float(np.exp(float(state["score"]))),
            "selection_at_start": float(np.exp(float(state["start"])))}
