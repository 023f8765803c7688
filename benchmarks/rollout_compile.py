"""Compile seconds of the game: one move (`game.step`) and a batch of 16 games to their end with
the Drop-backup (`rollouts`, the program the game solvers run), the instance an argument as the
solvers pass it, in the paper's grid and the deferred game (its packer), with the deferred game's
ratio to the grid's of the same run. A short budget pays these compiles first: on a cold cache they
are most of a 20-second run.

    python benchmarks/rollout_compile.py [--sizes 120 900 3000]
    taskset -c 0 python benchmarks/rollout_compile.py   # one core

The persistent compilation cache is not switched on here (nor by `import jaxmmap`), so every
figure is a compile. The first compile in a process pays some warm-up: the grid, measured
first, pays it.
"""

import argparse
import time

import jax
from env_throughput import problem_of_size

from jaxmmap import Rules, make_instance
from jaxmmap.core.rules import auto_columns
from jaxmmap.env import game
from jaxmmap.env.rollout import random_policy, rollouts


def compile_seconds(fn, *args) -> float:
    began = time.perf_counter()
    jax.jit(fn).lower(*args).compile()
    return time.perf_counter() - began


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[120, 900, 3000])
    args = parser.parse_args()
    print(f"device: {jax.devices()[0].platform}; compile seconds")
    print(f"{'buffers':>8} {'placement':>10} {'step':>7} {'batch 16':>9} {'vs grid':>8}")
    for size in args.sizes:
        problem = problem_of_size(size)
        grid = None
        for placement, supply in (("grid", "near"), ("deferred", "early")):
            rules = Rules(columns=auto_columns(problem), placement=placement, copy_supply=supply)
            instance = make_instance(problem, rules)
            step = compile_seconds(game.step, game.init(instance), 0)
            batch = compile_seconds(lambda inst, keys: rollouts(inst, keys, random_policy, backup=True),
                                    instance, jax.random.split(jax.random.key(0), 16))
            grid = grid or batch
            print(f"{problem.num_buffers:>8} {placement:>10} {step:>6.1f}s {batch:>8.1f}s {batch / grid:>7.2f}x",
                  flush=True)


if __name__ == "__main__":
    main()
