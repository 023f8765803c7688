"""Steps per second of the jitted, vmapped JAX game beside the reference, in the same run.

    python benchmarks/env_throughput.py                       # CPU defaults
    python benchmarks/env_throughput.py --sizes 300 3000 16000 --batches 1 64 1024 4096

For each instance size (about that many buffers, from the generator) both games play the same
stretch of the game, the first `--moves` moves (or the whole game if shorter) with a random
legal policy and the Drop-backup on:
* the reference (`jaxmmap.reference`, NumPy): one game, moves per second;
* the JAX game: `vmap` over a batch of games of one instance, each a `lax.while_loop` rollout,
  timed after compilation; moves per second summed over the batch (only moves of unfinished
  games count);
and the ratio of the two, and the device memory per game (the state without the shared
instance, with the Drop-backup) beside the instance's own.
"""

from __future__ import annotations

import argparse
import time

import jax
import numpy as np

from jaxmmap import ReferenceGame, Rules, game, generate, make_instance
from jaxmmap.play import random_policy, rollout


def problem_of_size(buffers: int, seed: int = 0):
    """A generated program with about `buffers` buffers (about 2.9 buffers per instruction)."""
    return generate(seed, num_instructions=max(8, round(buffers / 2.9)), inplace_prob=0.1,
                    loop_prob=0.05, memory_fraction=0.5)


def reference_rate(problem, rules, moves: int, seed: int = 0) -> float:
    ref = ReferenceGame(problem, rules, backup=True)
    rng = np.random.default_rng(seed)
    t0, played = time.perf_counter(), 0
    while played < moves and not ref.done:
        ref.step(int(rng.choice(np.flatnonzero(ref.legal_actions()))))
        played += 1
    return played / (time.perf_counter() - t0)


def jax_rate(instance, batch: int, moves: int, repeats: int = 3) -> float:
    def run(key):
        keys = jax.random.split(key, batch)
        states = jax.vmap(lambda k: rollout(instance, k, random_policy, backup=True,
                                            max_moves=moves))(keys)
        return states.moves

    run = jax.jit(run)
    jax.block_until_ready(run(jax.random.key(0)))  # compile
    best = 0.0
    for r in range(repeats):
        t0 = time.perf_counter()
        played = jax.block_until_ready(run(jax.random.key(r + 1)))
        best = max(best, float(np.sum(played)) / (time.perf_counter() - t0))
    return best


def state_bytes(instance) -> tuple[int, int]:
    state = jax.eval_shape(lambda: game.init(instance, backup=True))
    size = lambda tree: sum(x.size * x.dtype.itemsize for x in jax.tree.leaves(tree))  # noqa: E731
    return size(state.replace(instance=None)), size(state.instance)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[300, 3000, 16000])
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 16, 256])
    parser.add_argument("--moves", type=int, default=1000, help="moves played per game, from the start")
    parser.add_argument("--columns", type=int, default=256)
    parser.add_argument("--max-work", type=float, default=3e6,
                        help="skip a batch when batch * buffers exceeds this (CPU memory and time)")
    args = parser.parse_args()
    rules = Rules(columns=args.columns)
    print(f"device: {jax.devices()[0].device_kind} ({jax.default_backend()}), columns {args.columns}")
    print(f"{'buffers':>8} {'steps':>6} {'batch':>6} {'moves/s':>12} {'ref moves/s':>12} {'ratio':>8}"
          f" {'state/game':>11} {'instance':>9}")
    for size in args.sizes:
        problem = problem_of_size(size)
        instance = make_instance(problem, rules)
        ref = reference_rate(problem, rules, args.moves)
        per_game, shared = state_bytes(instance)
        for batch in args.batches:
            if batch * problem.num_buffers > args.max_work:
                continue
            rate = jax_rate(instance, batch, args.moves)
            print(f"{problem.num_buffers:>8} {problem.num_steps:>6} {batch:>6} {rate:>12,.0f}"
                  f" {ref:>12,.0f} {rate / ref:>7.1f}x {per_game / 2**10:>9,.0f}KB"
                  f" {shared / 2**10:>7,.0f}KB", flush=True)


if __name__ == "__main__":
    main()
