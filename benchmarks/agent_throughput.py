"""Self-play throughput of the agent, in game moves per second, on the current device.

    python benchmarks/agent_throughput.py                       # the bundled instance
    python benchmarks/agent_throughput.py --instance suite:NAME --games 128

Everything is measured in this run, on the same instance and number of games, each part jitted
alone and timed over `--repeats` calls after a warm-up call (compilation excluded):

* `muzero, grid network`: one self-play move of all games (`selfplay.act`: the observation, the
  search with the learned model, the move) with the paper's representation, the ResNet over the
  128x128 grid window (`NetworkConfig.small()` with `grid=True`: the default before the
  feature network). This is the baseline of the ratios.
* `muzero, feature network`: the same with the default representation (`grid=False`).
* `expert (default)`: the default mode's search (`expert_games.start_search`, `play_search`: whole games, the network at
  every move), and one whole generation with learning (`expert.generation`).
* `bare game`: random moves of the same games (the ceiling).

Printed: moves per second and the ratio to the baseline; docs/agent.md keeps the figures.
"""

from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp

from jaxmmap.agent import expert, expert_games, selfplay, train
from jaxmmap.agent.config import AgentConfig
from jaxmmap.agent.networks import NetworkConfig, make_networks
from jaxmmap.core.io import columns_for, open_problem
from jaxmmap.core.rules import Rules
from jaxmmap.env import game, observation
from jaxmmap.env.instance import make_instance
from jaxmmap.env.rollout import random_policy


def timed(fn, *args, repeats: int) -> float:
    """Seconds per call, after a warm-up call (which compiles)."""
    jax.block_until_ready(fn(*args))
    start = time.perf_counter()
    for _ in range(repeats):
        out = fn(*args)
    jax.block_until_ready(out)
    return (time.perf_counter() - start) / repeats


def muzero_moves(instance, config: AgentConfig, repeats: int) -> float:
    """Game moves per second of one `selfplay.act` of all games."""
    support = train.support_of(instance, config)
    networks = make_networks(config.network)
    state = train.init(instance, config, seed=0)
    act = jax.jit(lambda s, k: selfplay.act(
        s.learner.params, k, s.actors, instance, config=config, networks=networks,
        support=support, temperature=jnp.float32(1.0))[0].states.board.ret)
    return config.games / timed(act, state, jax.random.key(1), repeats=repeats)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--instance", default="bundled:tiny")
    parser.add_argument("--games", type=int, default=64)
    parser.add_argument("--simulations", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    problem = open_problem(args.instance)
    rules = Rules(columns=columns_for(problem, "auto"))
    instance = make_instance(problem, rules)
    print(f"device: {jax.devices()[0].device_kind} ({jax.default_backend()}); {problem.name}:"
          f" {problem.num_buffers} buffers; {args.games} games, {args.simulations} simulations")

    common = dict(games=args.games, num_simulations=args.simulations, replay_size=args.games * 128)
    grid = AgentConfig(mode="muzero", network=NetworkConfig.small().__class__(
        **{**NetworkConfig.small().__dict__, "grid": True}), **common)
    features = AgentConfig(mode="muzero", **common)
    base = muzero_moves(instance, grid, args.repeats)
    rows = [("muzero, grid network", base), ("muzero, feature network",
                                              muzero_moves(instance, features, args.repeats))]

    config = AgentConfig(mode="expert", games=args.games)
    state = expert.init(instance, config, seed=0)
    ctx = observation.context(instance)
    search = jax.jit(lambda s, k: expert_games.play_search(
        s.learner.params, expert_games.start_search(k, instance, s.center_return, config=config), instance, ctx,
        s.center, jnp.float32(1.0), jnp.int32(2 ** 31 - 1), config=config).states.moves)
    sec = timed(search, state, jax.random.key(2), repeats=args.repeats)
    moves = float(jnp.sum(search(state, jax.random.key(2))))
    rows.append(("expert (default): search", moves / sec))
    generation = jax.jit(lambda s: expert.generation(s, instance, jnp.float32(0.5), config=config))
    state, metrics = generation(state)  # a best game to search around
    sec = timed(lambda s: generation(s)[1]["moves"], state, repeats=args.repeats)
    rows.append(("expert (default): generation", float(generation(state)[1]["moves"]) / sec))

    start = game.init(instance, backup=True)
    states = jax.tree.map(lambda x: jnp.broadcast_to(x, (args.games,) + x.shape), start)

    def bare(states, key):
        actions = jax.vmap(random_policy)(jax.random.split(key, args.games), states)
        return jax.vmap(game.step)(states, actions).board.ret

    rows.append(("bare game (random moves)",
                 args.games / timed(jax.jit(bare), states, jax.random.key(3), repeats=args.repeats)))
    for name, rate in rows:
        print(f"{name:<32} {rate:>12,.0f} game moves/s   {rate / base:>8.2f}x the grid network")


if __name__ == "__main__":
    main()
