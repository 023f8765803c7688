"""Compile seconds of a 1,000-move rollout with the Drop-backup: one game (`rollout`) and a batch
of 16 (`rollouts`, or `vmap(rollout)` on a version without it), at 315, 3,140 and 16,560 buffers.

    JAXMMAP_COMPILATION_CACHE=off python benchmarks/rollout_compile.py

Run it in a fresh process per version to compare versions (the first compile in a process pays
some warm-up; both sides pay it alike).
"""

import importlib
import time

import jax
from env_throughput import problem_of_size

from jaxmmap import Rules, make_instance

play = importlib.import_module("jaxmmap.env.rollout")


def main():
    print(f"{'buffers':>8} {'one game':>9} {'batch 16':>9}")
    for size in (300, 3000, 16000):
        problem = problem_of_size(size)
        instance = make_instance(problem, Rules(columns=256))
        one = jax.jit(lambda k, inst=instance: play.rollout(inst, k, play.random_policy, backup=True,
                                                                max_moves=1000))
        if hasattr(play, "rollouts"):
            batch = jax.jit(lambda k, inst=instance: play.rollouts(inst, k, play.random_policy, backup=True,
                                                                     max_moves=1000))
        else:
            batch = jax.jit(jax.vmap(lambda k, inst=instance: play.rollout(inst, k, play.random_policy, backup=True,
                                                            max_moves=1000)))
        seconds = []
        for f, arg in ((one, jax.random.key(0)), (batch, jax.random.split(jax.random.key(0), 16))):
            t0 = time.perf_counter()
            f.lower(arg).compile()
            seconds.append(time.perf_counter() - t0)
        print(f"{problem.num_buffers:>8} {seconds[0]:>8.2f}s {seconds[1]:>8.2f}s", flush=True)


if __name__ == "__main__":
    main()
