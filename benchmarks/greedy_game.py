"""One greedy game (Drop-backup on), compile included, on generated
programs, with and without checkpoints in the same run.

    python benchmarks/greedy_game.py                      # 2,500 and 6,000 instructions
    python benchmarks/greedy_game.py --instructions 17000 --checkpoints 16   # only with 16
    python benchmarks/greedy_game.py --pool all           # JAX's default CPU thread pool
    python benchmarks/greedy_game.py --max-moves 20000    # a GPU: the first 20,000 moves only

Each row is one fresh `jit` of a whole game (JAX's persistent compilation cache off), played to
its end as `jaxmmap play P --policy greedy` plays it: seconds with compile, moves (restores
replay moves), restores, moves per second, the return, and the ratio of time to the same game
with the first count given (by default none: its restores replay from the backup). Both must reach the same return and
the same number of moves: checkpoints change no move. By default the CPU backend runs with a
thread pool of one thread, as `jaxmmap play --games 1` does (`jaxmmap.env.cpu`); `--pool all`
keeps JAX's default pool (a process has one pool: run both to compare). `--max-moves` stops each
game after that many moves (a GPU plays one game a move at a time, a chain of small kernels and a
host round trip each, so a whole large game takes many minutes there): the row then gives the
moves per second of the game's start, and its return is marked partial.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("JAXMMAP_COMPILATION_CACHE", "off")

import jax  # noqa: E402

from jaxmmap import Rules, generate  # noqa: E402
from jaxmmap.core.rules import auto_columns  # noqa: E402
from jaxmmap.env import game  # noqa: E402
from jaxmmap.env.cpu import one_thread  # noqa: E402
from jaxmmap.env.instance import make_instance  # noqa: E402
from jaxmmap.env.rollout import greedy_policy  # noqa: E402


def one_game(instance, checkpoints: int, max_moves: int | None = None):
    def play(key):
        def body(carry):
            state, key = carry
            key, sub = jax.random.split(key)
            return game.step(state, greedy_policy(sub, state)), key
        first = game.init(instance, backup=True, checkpoints=checkpoints)
        limit = max_moves or jax.numpy.iinfo(jax.numpy.int32).max
        return jax.lax.while_loop(lambda c: ~c[0].done & (c[0].moves < limit), body, (first, key))[0]

    t0 = time.perf_counter()
    state = jax.block_until_ready(jax.jit(play)(jax.random.key(0)))
    return time.perf_counter() - t0, state


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--instructions", type=int, nargs="+", default=[2500, 6000])
    parser.add_argument("--checkpoints", type=int, nargs="+", default=[0, 16],
                        help="checkpoint counts to play with; the ratio is to the first")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--pool", choices=("one", "all"), default="one",
                        help="the CPU backend's thread pool: one thread (as `jaxmmap play` has it) or JAX's default")
    parser.add_argument("--max-moves", type=int, help="stop each game after this many moves (partial games)")
    args = parser.parse_args()
    one = args.pool == "one" and one_thread()
    print(f"device: {jax.devices()[0].platform} ({'a thread pool of one' if one else 'the default thread pool'});"
          " one greedy game, compile included")
    print(f"{'buffers':>8} {'steps':>6} {'checkpoints':>11} {'seconds':>8} {'moves':>9} {'restores':>8} "
          f"{'moves/s':>8} {'return':>10} {'vs none':>8}")
    for count in args.instructions:
        problem = generate(args.seed, num_instructions=count)
        instance = make_instance(problem, Rules(columns=auto_columns(problem)))
        base = None
        for k in args.checkpoints:
            seconds, state = one_game(instance, k, args.max_moves)
            ret = f"{float(state.board.ret):10.3f}" if bool(state.done) else f"{'partial':>10}"
            base = base or seconds
            print(f"{problem.num_buffers:8,} {problem.num_steps:6,} {k:11} {seconds:8.1f} {int(state.moves):9,} "
                  f"{int(state.restores):8,} {int(state.moves) / seconds:8,.0f} {ret} "
                  f"{seconds / base:7.2f}x", flush=True)


if __name__ == "__main__":
    main()
