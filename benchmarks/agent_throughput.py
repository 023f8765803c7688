"""Throughput of the agent's parts: self-play, search and the learner, on the current device.

    python benchmarks/agent_throughput.py                                   # quick-start agent
    python benchmarks/agent_throughput.py --config configs/paper.py --instance suite:NAME

Each part is jitted alone and timed over `--repeats` calls after one warm-up (compilation
excluded). Printed:
* self-play: game moves per second of `selfplay.act` (all games, one move each, search included),
  and its ratio to the bare game (the random policy's moves per second, same games, same run);
* search: simulations per second of the mode's search from a batch of positions (the learned
  model's for muzero, the true game's for alphazero/mcts);
* learner: learner steps per second (`learner.update`: batch, Reanalyse, losses, Adam), and the
  same without Reanalyse (the ratio is what Reanalyse costs);
* iteration: whole `run_chunk` iterations per second (self-play + learner, as train.py runs).
"""

from __future__ import annotations

import argparse
import importlib.util
import time

import jax
import jax.numpy as jnp

from jaxmmap import game
from jaxmmap.agent import learner, selfplay, train
from jaxmmap.agent.loop import agent_config
from jaxmmap.agent.networks import make_networks
from jaxmmap.agent.observation import observe
from jaxmmap.cli import columns_for, open_problem
from jaxmmap.instance import make_instance
from jaxmmap.play import random_policy
from jaxmmap.rules import Rules


def timed(fn, *args, repeats: int) -> float:
    """Seconds per call, after a warm-up call (which compiles)."""
    jax.block_until_ready(fn(*args))
    start = time.perf_counter()
    for _ in range(repeats):
        out = fn(*args)
    jax.block_until_ready(out)
    return (time.perf_counter() - start) / repeats


def load_config(path: str):
    spec = importlib.util.spec_from_file_location("config", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.get_config()


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="configs/quickstart.py")
    parser.add_argument("--instance", default=None, help="default: the config's problem")
    parser.add_argument("--mode", default=None, help="override the config's mode")
    parser.add_argument("--games", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    job = load_config(args.config)
    problem = open_problem(args.instance or job.problem)
    rules = Rules(columns=columns_for(problem, job.columns), nocopy_offset=job.nocopy_offset)
    fields = job.agent.to_dict()
    if args.mode:
        fields["mode"] = args.mode
        fields["reanalyse_fraction"] = fields["reanalyse_fraction"] if args.mode == "muzero" else 0.0
    if args.games:
        fields["games"] = args.games
    config = agent_config(**fields)
    instance = make_instance(problem, rules)
    support = train.support_of(instance, config)
    networks = make_networks(config.network)
    print(f"device: {jax.devices()[0].device_kind} ({jax.default_backend()}), {jax.device_count()}"
          f" device(s); {problem.name}: {problem.num_buffers} buffers; mode {config.mode},"
          f" {config.games} games, {config.num_simulations} simulations, batch {config.batch_size}")

    state = train.init(instance, config, seed=0)
    temperature = jnp.float32(1.0)
    act = jax.jit(lambda s, k: selfplay.act(s.learner.params, k, s.actors, instance, config=config,
                                            networks=networks, support=support,
                                            temperature=temperature)[0].states.board.ret)
    sec = timed(act, state, jax.random.key(1), repeats=args.repeats)
    moves = config.games / sec

    def bare(states, key):
        full = jax.vmap(lambda s: s.replace(instance=instance))(states)
        actions = jax.vmap(random_policy)(jax.random.split(key, config.games), full)
        return jax.vmap(game.step)(full, actions).board.ret

    base = config.games / timed(jax.jit(bare), state.actors.states, jax.random.key(2),
                                repeats=args.repeats)
    print(f"self-play  {moves:>12,.0f} game moves/s   ({moves / base:.4f}x the bare game's"
          f" {base:,.0f} moves/s)")

    observation = jax.vmap(observe)(jax.vmap(lambda s: s.replace(instance=instance))(state.actors.states))
    search = jax.jit(lambda s, o, k: selfplay.policy(
        s.learner.params, k, s.actors.states, o, instance, config=config, networks=networks,
        support=support, temperature=temperature)[1])
    if config.mode != "no_search":
        sec = timed(search, state, observation, jax.random.key(3), repeats=args.repeats)
        print(f"search     {config.games * config.num_simulations / sec:>12,.0f} simulations/s"
              f" ({config.games} searches of {config.num_simulations})")

    # Fill the replay with real games, then time the learner on it.
    fill = max(config.horizon, config.min_replay_moves) + 2
    chunk = config.replace(updates_per_chunk=fill)
    state, _ = train.run_chunk(state, instance, config=chunk, support=support)
    if config.learns:
        rates = {}
        for fraction in sorted({config.reanalyse_fraction, 0.0}, reverse=True):
            c = config.replace(reanalyse_fraction=fraction)
            update = jax.jit(lambda s, k, c=c: learner.update(s.learner, s.replay, k, config=c,
                                                              networks=networks, support=support)[1])
            rates[fraction] = 1 / timed(update, state, jax.random.key(4), repeats=args.repeats)
        with_reanalyse = rates[config.reanalyse_fraction]
        print(f"learner    {with_reanalyse:>12,.2f} steps/s        (batch {config.batch_size},"
              f" reanalyse {config.reanalyse_fraction:g}; {with_reanalyse / rates[0.0]:.3f}x the"
              f" {rates[0.0]:,.2f} steps/s without Reanalyse)")

    n = 5
    chunk = config.replace(updates_per_chunk=n)
    step = lambda s: train.run_chunk(s, instance, config=chunk, support=support)[0]  # noqa: E731
    state = step(state)  # compile
    jax.block_until_ready(state)
    start = time.perf_counter()
    for _ in range(args.repeats):
        state = step(state)
    jax.block_until_ready(state)
    rate = n * args.repeats / (time.perf_counter() - start)
    print(f"iteration  {rate:>12,.2f} iterations/s   ({rate * config.moves_per_update * config.games:,.0f}"
          f" game moves/s with learning)")


if __name__ == "__main__":
    main()
