"""The expert search's games on one core: batched (`vmap`) against one after the other
(`lax.map`), game moves per second, on programs of several sizes.

    python benchmarks/expert_search.py                  # the sizes of Table 2 and two between
    python benchmarks/expert_search.py --instances suite:nmt_train@gpu --games 8 --repeats 2

For each program: the search's center is greedy's game (as the `muzero` solver starts on large
programs), and one generation's games (`rollout.generation_games(N, 64)`, or `--games`) play around it
to their ends, restarts and deviations as in a run (`expert_games.start_search`, `play_search`; no
learning, which is the same in both). Each way is jitted alone, timed over `--repeats` calls
after a warm-up call (compilation excluded), on the same keys: both play the same games (the
script checks it). Printed: moves per second each way and the ratio of one by one to batched;
the last column is what `expert_games.games_one_by_one` picks on this device.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from jaxmmap.agent import expert, expert_games  # noqa: E402
from jaxmmap.agent.config import AgentConfig  # noqa: E402
from jaxmmap.core.io import open_problems  # noqa: E402
from jaxmmap.core.rules import Rules  # noqa: E402
from jaxmmap.env import observation  # noqa: E402
from jaxmmap.env.instance import make_instance  # noqa: E402
from jaxmmap.env.rollout import generation_games, greedy_policy, rollout  # noqa: E402

INSTANCES = ["suite:alexnet_train_b32@tpu_v4i", "suite:resnet18_train@gpu", "suite:wavenet_train@gpu",
             "suite:gpt_medium_train@gpu", "suite:nmt_train@gpu"]


def timed(fn, *args, repeats: int):
    """(seconds per call after a warm-up call, the last output)."""
    out = jax.block_until_ready(fn(*args))
    start = time.perf_counter()
    for _ in range(repeats):
        out = fn(*args)
    jax.block_until_ready(out)
    return (time.perf_counter() - start) / repeats, out


def measure(problem, games: int, repeats: int) -> dict[bool, float]:
    """Moves per second of one generation's search, batched (False) and one by one (True)."""
    instance = make_instance(problem, Rules())
    config = AgentConfig(games=games)
    greedy = rollout(instance, jax.random.key(0), greedy_policy, backup=True)
    state = expert.init(instance, config, seed=0, demonstration=np.asarray(greedy.board.action)[: problem.num_buffers])
    ctx = observation.context(instance)
    rates, played = {}, {}
    for one_by_one in (False, True):
        search = jax.jit(lambda s, k, one_by_one=one_by_one: expert_games.play_search(
            s.learner.params, expert_games.start_search(k, instance, s.center_return, config=config), instance, ctx,
            s.center, jnp.float32(1.0), jnp.int32(2 ** 31 - 1), config=config, one_by_one=one_by_one).states)
        seconds, states = timed(search, state, jax.random.key(2), repeats=repeats)
        played[one_by_one] = (np.asarray(states.moves), np.asarray(states.board.ret))
        rates[one_by_one] = float(played[one_by_one][0].sum()) / seconds
    if not all(np.array_equal(a, b) for a, b in zip(played[False], played[True])):
        raise SystemExit(f"error: {problem.name}: the two ways played different games")
    return rates


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--instances", nargs="+", default=INSTANCES)
    parser.add_argument("--games", type=int, help="games per generation (default: rollout.generation_games(N, 64))")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    print(f"device: {jax.devices()[0].device_kind} ({jax.default_backend()}); one generation's games around"
          " greedy's game, compilation excluded")
    print(f"{'program':34} {'buffers':>8} {'games':>5} {'batched':>12} {'one by one':>12} {'ratio':>7} {'picked':>10}")
    for problem in open_problems(args.instances):
        games = args.games or generation_games(problem.num_buffers, 64)
        rates = measure(problem, games, args.repeats)
        padded = make_instance(problem, Rules()).width.shape[0]
        picked = "one by one" if expert_games.games_one_by_one(padded) else "batched"
        print(f"{problem.name:34} {problem.num_buffers:>8,} {games:>5} {rates[False]:>12,.0f} {rates[True]:>12,.0f}"
              f" {rates[True] / rates[False]:>6.2f}x {picked:>10}", flush=True)


if __name__ == "__main__":
    main()
